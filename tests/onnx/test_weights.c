/* test_weights.c -- the weights file API (model/weights.h): offsets are the
 * prefix sums of the layers' weight counts, the generator is a pure
 * function of (seed, layer, element) with the documented ranges, the
 * loader refuses a file of the wrong size, and a JSON network's relative
 * weights path is relative to the JSON file's folder (save and load).
 */
#include "net.h"
#include "weights.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/dse-weights-XXXXXX";

static void offsets_and_generator(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("branchy", err);
    CHECK(n != NULL, "branchy: %s", err);
    if (!n) return;
    /* branchy by hand: stem 3->8 3x3 (216+8), left 8->8 1x1 (64+8),
     * right 8->8 3x3 (576+8), head 16->16 3x3 s2 (2304+16), fc 16->10
     * (160+10): the layer order is the zoo's. */
    int64_t off = 0;
    for (int i = 0; i < n->n; i++) {
        CHECK(weights_offset(n, i) == off, "offset of %s", n->layers[i].name);
        off += n->layers[i].weights;
    }
    CHECK(weights_total(n) == 224 + 72 + 584 + 2320 + 170, "branchy total %lld",
          (long long)weights_total(n));
    float *a = weights_generate_all(n, 1), *b = weights_generate_all(n, 1),
          *c = weights_generate_all(n, 2);
    int64_t total = weights_total(n), differ = 0;
    CHECK(!memcmp(a, b, (size_t)total * sizeof *a), "generator not deterministic");
    for (int64_t k = 0; k < total; k++) differ += a[k] != c[k];
    CHECK(differ > total * 9 / 10, "seeds 1 and 2 give too similar weights (%lld differ)",
          (long long)differ);
    /* Any slice alone equals the same slice of the whole. */
    for (int i = 0; i < n->n; i++) {
        int64_t nw = n->layers[i].weights;
        if (nw < 3) continue;
        float part[8];
        int64_t first = nw / 3, cnt = nw - first < 8 ? nw - first : 8;
        weights_generate(n, i, 1, first, cnt, part);
        CHECK(!memcmp(part, a + weights_offset(n, i) + first, (size_t)cnt * sizeof *part),
              "slice of %s differs", n->layers[i].name);
    }
    /* Ranges (He-uniform): |w| <= sqrt(6/fan_in), and it spreads over that
     * range; |bias| <= 0.01. */
    int stem = net_find(n, "stem");
    float wmax = 0;
    for (int k = 0; k < 216; k++) {
        CHECK(fabsf(a[k]) <= sqrtf(6 / 27.f), "stem weight %d = %g", k, a[k]);
        if (fabsf(a[k]) > wmax) wmax = fabsf(a[k]);
    }
    CHECK(wmax > 0.9f * sqrtf(6 / 27.f), "stem weights reach only %g", wmax);
    for (int k = 216; k < 224; k++) CHECK(fabsf(a[k]) <= 0.01f, "stem bias %d = %g", k, a[k]);
    CHECK(stem == 0, "stem is not layer 0");
    free(a);
    free(b);
    free(c);
    net_free(n);

    /* BatchNorm: scale ~1, var in [1, 1.5). */
    n = net_zoo("resnet50", err);
    int bn = net_find(n, "stem_bn");
    CHECK(bn >= 0 && n->layers[bn].kind == NET_BN, "resnet50 stem_bn");
    if (bn >= 0) {
        float w[256];
        weights_generate(n, bn, 7, 0, 256, w);
        for (int k = 0; k < 64; k++) {
            CHECK(w[k] >= 0.9f && w[k] <= 1.1f, "scale %g", w[k]);
            CHECK(w[192 + k] >= 1.0f && w[192 + k] < 1.5f, "var %g not in [1, 1.5)", w[192 + k]);
            CHECK(fabsf(w[64 + k]) <= 0.1f && fabsf(w[128 + k]) <= 0.1f, "shift/mean too big");
        }
    }
    net_free(n);
}

static void file_and_paths(void)
{
    char err[BASE_ERRLEN], sub[300], json[300], bin[300], other[300];
    net *n = net_zoo("toy6", err);
    float *w = weights_generate_all(n, 3);
    snprintf(sub, sizeof sub, "%s/nets", tmpdir);
    mkdir(sub, 0755);
    snprintf(json, sizeof json, "%s/nets/toy6.json", tmpdir);
    snprintf(bin, sizeof bin, "%s/nets/toy6.bin", tmpdir);
    CHECK(weights_save(n, w, bin, err) == 0, "weights_save: %s", err);
    struct stat st;
    CHECK(stat(bin, &st) == 0 && st.st_size == weights_total(n) * 4, "file size %lld",
          (long long)st.st_size);
    /* Saved from elsewhere, loaded from elsewhere: the path follows the JSON. */
    n->weights_path = strdup(bin);
    CHECK(net_save(n, json, err) == 0, "net_save: %s", err);
    char *text = NULL;
    FILE *f = fopen(json, "r");
    if (f) {
        text = calloc(1, 1 << 16);
        CHECK(fread(text, 1, (1 << 16) - 1, f) > 0, "read back");
        fclose(f);
    }
    CHECK(text && strstr(text, "\"weights\":\t\"toy6.bin\""), "JSON weights path not relative");
    free(text);
    char cwd[1024];
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    CHECK(chdir("/") == 0, "chdir /");
    net *m = net_load(json, err);
    CHECK(m && m->weights_path && !strcmp(m->weights_path, bin), "loaded weights path %s",
          m ? (m->weights_path ? m->weights_path : "(none)") : err);
    float *r = m ? weights_load(m, err) : NULL;
    CHECK(r && !memcmp(r, w, (size_t)weights_total(n) * sizeof *w), "weights differ: %s", err);
    free(r);
    CHECK(chdir(cwd) == 0, "chdir back");
    /* A file one float short is refused, and names the file. */
    snprintf(other, sizeof other, "%s/short.bin", tmpdir);
    f = fopen(other, "wb");
    fwrite(w, sizeof *w, (size_t)weights_total(n) - 1, f);
    fclose(f);
    free(m->weights_path);
    m->weights_path = strdup(other);
    r = weights_load(m, err);
    CHECK(!r && strstr(err, other) && strstr(err, "bytes"), "short file accepted: %s", err);
    free(r);
    free(m->weights_path);
    m->weights_path = NULL;
    CHECK(!weights_load(m, err), "no weights path must fail");
    net_free(m);
    unlink(other);
    unlink(json);
    unlink(bin);
    rmdir(sub);
    free(w);
    net_free(n);

    /* The path rules by themselves. */
    char *p;
    CHECK(!strcmp(p = weights_path_resolve("a/b/net.json", "w.bin"), "a/b/w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_resolve("net.json", "w.bin"), "w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_resolve("a/net.json", "/abs/w.bin"), "/abs/w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_relative("/x/y/net.json", "/x/y/w.bin"), "w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_relative("/x/y/net.json", "/x/z/w.bin"), "../z/w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_relative("/x/y/net.json", "/q/w.bin"), "/q/w.bin"), "%s", p);
    free(p);
    CHECK(!strcmp(p = weights_path_relative("/x/./y/../y/net.json", "/x/y/sub/w.bin"),
                  "sub/w.bin"), "%s", p);
    free(p);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    offsets_and_generator();
    file_and_paths();
    rmdir(tmpdir);
    return check_done("test_weights");
}
