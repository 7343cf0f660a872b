/* test_kern_weights.c -- where a slice's weights come from (kern_weights_slice):
 * generated, read from a raw weights file (only the slice's ranges), or
 * cut from a whole array (kern_weights_from) -- all three give the same
 * numbers, which are the matching rows/entries of the layer's block in the
 * layout of model/weights.h; a file of the wrong size is refused with its
 * name in the message; a whole-net run from the file equals the generated
 * run.  Also the documented input generator, recomputed here from the
 * formula in docs/runtime-kernels.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "naive.h"
#include "weights.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void check_input_formula(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("toy6", err);
    size_t len = (size_t)net_shape_numel(n->input);
    float *x = malloc(len * sizeof *x);
    kern_input_gen(n, 42, x);
    double mean = 0;
    int bad = 0;
    for (size_t e = 0; e < len; e++) {
        uint64_t h = mix(mix(42) + (e + 1) * 0x9E3779B97F4A7C15ULL);
        float want = (float)((double)(2 * (h >> 40) + 1) / 16777216.0 - 1.0);
        if (x[e] != want) bad++;
        mean += x[e];
    }
    CHECK(bad == 0, "%d input elements differ from the documented formula", bad);
    CHECK(fabs(mean / len) < 0.05, "input mean %g", mean / len);
    free(x);
    net_free(n);
}

static void check_net(const char *name)
{
    char err[BASE_ERRLEN], dir[] = "/tmp/dse-weights-XXXXXX", path[64];
    net *n = net_zoo(name, err);
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/w.bin", dir);
    float *all = weights_generate_all(n, 9);
    CHECK(weights_save(n, all, path, err) == 0, "%s", err);

    /* Generated slices (seed 9) == slices cut from the whole array. */
    uint64_t rng = 5;
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        if (!L->weights) continue;
        int c0 = trng_int(&rng, 0, L->out.c - 1), nc = trng_int(&rng, 1, L->out.c - c0);
        size_t len = (size_t)net_slice_weights(n, i, c0, nc), glen, flen;
        float *cut = malloc(len * sizeof *cut), *gen, *file;
        kern_weights_from(n, all, i, c0, nc, cut);
        CHECK(kern_weights_slice(n, i, c0, nc, 9, &gen, &glen, err) == 0, "%s", err);
        n->weights_path = path;
        CHECK(kern_weights_slice(n, i, c0, nc, 12345, &file, &flen, err) == 0, "%s", err);
        n->weights_path = NULL;
        CHECK(glen == len && flen == len, "%s: lengths %zu %zu %zu", L->name, glen, flen, len);
        CHECK(memcmp(gen, cut, len * sizeof *cut) == 0, "%s [%d,+%d): generated != cut", L->name, c0, nc);
        CHECK(memcmp(file, cut, len * sizeof *cut) == 0, "%s [%d,+%d): file != cut", L->name, c0, nc);
        /* Independently: entry k of the slice's first row is element
         * (c0 * K + k) of the block (Conv/FC), scale c0 is element c0 (BN). */
        int64_t off = weights_offset(n, i);
        if (L->kind == NET_BN) {
            CHECK(cut[0] == all[off + c0] && cut[nc] == all[off + L->out.c + c0] &&
                      cut[3 * nc] == all[off + 3 * L->out.c + c0], "%s: BN layout", L->name);
        } else {
            int64_t K = L->weights / L->out.c - (L->a.bias ? 1 : 0);
            CHECK(cut[1] == all[off + c0 * K + 1], "%s: row layout", L->name);
            if (L->a.bias) CHECK(cut[(size_t)nc * K] == all[off + L->out.c * K + c0], "%s: bias layout", L->name);
        }
        free(cut), free(gen), free(file);
    }

    /* Whole net from the file == generated with the file's seed. */
    size_t xl = (size_t)net_shape_numel(n->input), yl = (size_t)net_shape_numel(n->layers[n->n - 1].out);
    float *x = malloc(xl * sizeof *x), *y1 = malloc(yl * sizeof *y1), *y2 = malloc(yl * sizeof *y2);
    kern_input_gen(n, 1, x);
    CHECK(kern_forward(n, 9, x, y1, err) == 0, "%s", err);
    n->weights_path = path;
    CHECK(kern_forward(n, 777, x, y2, err) == 0, "%s", err);
    CHECK(memcmp(y1, y2, yl * sizeof *y1) == 0, "%s: run from the file differs", name);

    /* A truncated file is refused, naming it; nothing is returned. */
    CHECK(truncate(path, 100) == 0, "truncate");
    float *w = (float *)1;
    size_t nw = 1;
    int li = 0;
    while (!n->layers[li].weights) li++;
    CHECK(kern_weights_slice(n, li, 0, 1, 1, &w, &nw, err) == -1 && !w && nw == 0, "truncated file accepted");
    CHECK(strstr(err, path) != NULL, "error does not name the file: %s", err);
    CHECK(kern_model_new(n, 1, err) == NULL && strstr(err, path), "model from a truncated file: %s", err);
    n->weights_path = NULL;
    remove(path);
    rmdir(dir);
    free(all), free(x), free(y1), free(y2);
    net_free(n);
}

int main(void)
{
    check_input_formula();
    check_net("toy6");
    check_net("branchy");
    check_net("mobilenetv2"); /* BN layers, depthwise, 1x1 */
    printf("test_kern_weights: %d failures\n", check_failures);
    return check_failures ? 1 : 0;
}
