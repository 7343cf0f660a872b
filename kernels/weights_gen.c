/* weights_gen.c -- the weights of a slice, and the generated network input.
 *
 * Weights come from model/weights.h, the one place that defines the
 * weights layout, the weights file and the deterministic generator.  This
 * file only cuts a slice out of a layer's block: a Conv/FC slice is rows
 * [c0, c0+nc) of W plus bias[c0..c0+nc), a BatchNorm slice the same
 * channels of each of its four vectors.  Invariant: a slice is exactly the
 * matching part of the whole layer's weights, whichever slice is asked
 * (weights_generate is a pure function of (seed, layer, element)).
 *
 * The input generator (docs/runtime-kernels.md): element e of the NCHW
 * input is U(-1, 1) from the top 24 bits of mix(mix(seed) + (e + 1) * G),
 * with mix = the splitmix64 finaliser and G = 0x9E3779B97F4A7C15.
 */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernels.h"
#include "weights.h"

#define GOLDEN 0x9E3779B97F4A7C15ULL

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void kern_input_gen(const net *n, uint64_t seed, float *x)
{
    uint64_t k = mix(seed);
    int64_t len = net_shape_numel(n->input);
    for (int64_t e = 0; e < len; e++) {
        uint64_t h = mix(k + ((uint64_t)e + 1) * GOLDEN);
        x[e] = (float)((double)(2 * (h >> 40) + 1) / 16777216.0 - 1.0);
    }
}

/* The parts of layer `layer`'s block that make up slice [c0, c0+nc): up
 * to four (first element in the block, count) ranges, laid end to end in
 * the slice.  Returns the number of ranges. */
static int slice_ranges(const net *n, int layer, int c0, int nc, int64_t first[4], int64_t count[4])
{
    const net_layer *L = &n->layers[layer];
    int64_t C = L->out.c;
    int wl = net_kind_info(L->kind)->wlayout;
    if (wl == NET_W_ROWS) {
        int64_t K = L->weights / C - (L->a.bias ? 1 : 0);
        first[0] = c0 * K, count[0] = nc * K;
        if (!L->a.bias) return 1;
        first[1] = C * K + c0, count[1] = nc;
        return 2;
    }
    for (int q = 0; q < net_wvecs(wl); q++) first[q] = q * C + c0, count[q] = nc;
    return net_wvecs(wl);
}

void kern_weights_gen(const net *n, int layer, int c0, int nc, uint64_t seed, float *w)
{
    int64_t first[4], count[4];
    int k = slice_ranges(n, layer, c0, nc, first, count);
    for (int r = 0; r < k; r++) {
        weights_generate(n, layer, seed, first[r], count[r], w);
        w += count[r];
    }
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* The ranges read straight from a raw weights file (layout of weights.h),
 * so a rank reads only its slice, not the whole net's weights. */
static int read_raw(const net *n, int layer, int c0, int nc, float *w, char *err)
{
    const char *path = n->weights_path;
    int64_t first[4], count[4], base = weights_offset(n, layer);
    int k = slice_ranges(n, layer, c0, nc, first, count), rc = -1;
    FILE *f = base_open_input(path, -1, NULL, err);
    if (!f) return -1;
    if (fseeko(f, 0, SEEK_END) != 0 || ftello(f) != (off_t)weights_total(n) * 4) {
        base_seterr(err, "%s: weights file has %lld bytes, network %s needs %lld", path,
                 (long long)ftello(f), n->name, (long long)weights_total(n) * 4);
        goto out;
    }
    for (int r = 0; r < k; r++) {
        if (fseeko(f, (off_t)(base + first[r]) * 4, SEEK_SET) != 0 ||
            fread(w, sizeof *w, (size_t)count[r], f) != (size_t)count[r]) {
            base_seterr(err, "%s: layer %s: short read", path, n->layers[layer].name);
            goto out;
        }
        if (!host_is_le())
            for (int64_t i = 0; i < count[r]; i++) {
                uint8_t *b = (uint8_t *)&w[i], t;
                t = b[0], b[0] = b[3], b[3] = t;
                t = b[1], b[1] = b[2], b[2] = t;
            }
        w += count[r];
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

int kern_weights_from(const net *n, const float *all, int layer, int c0, int nc, float *w)
{
    int64_t first[4], count[4], base = weights_offset(n, layer);
    int k = slice_ranges(n, layer, c0, nc, first, count);
    for (int r = 0; r < k; r++) {
        memcpy(w, all + base + first[r], (size_t)count[r] * sizeof *w);
        w += count[r];
    }
    return 0;
}

float *kern_alloc_streamed(size_t nfloats)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    float *w = malloc((nfloats ? nfloats : 1) * sizeof *w);
    if (!w) return NULL;
    uintptr_t lo = ((uintptr_t)w + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)(w + nfloats)) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only */
    return w;
}

static int check_slice(const net *n, int layer, int c0, int nc, char *err)
{
    if (layer < 0 || layer >= n->n || c0 < 0 || nc < 1 || c0 + nc > n->layers[layer].out.c) {
        base_seterr(err, "net %s: layer %d: channels [%d, %d) outside the layer", n->name,
                 layer, c0, c0 + nc);
        return -1;
    }
    return 0;
}

int kern_weights_fill(const net *n, const float *all, int layer, int c0, int nc, uint64_t seed,
                      float *w, char *err)
{
    if (check_slice(n, layer, c0, nc, err)) return -1;
    if (all) return kern_weights_from(n, all, layer, c0, nc, w);
    if (!n->weights_path) {
        kern_weights_gen(n, layer, c0, nc, seed, w);
        return 0;
    }
    if (!weights_in_onnx(n)) return read_raw(n, layer, c0, nc, w, err);
    /* Initializers inside an ONNX file: only weights.h can read them, whole. */
    float *whole = weights_load(n, err);
    if (!whole) return -1;
    kern_weights_from(n, whole, layer, c0, nc, w);
    free(whole);
    return 0;
}

int kern_weights_slice(const net *n, int layer, int c0, int nc, uint64_t seed,
                       float **w_out, size_t *nfloats, char *err)
{
    *w_out = NULL;
    *nfloats = 0;
    if (check_slice(n, layer, c0, nc, err)) return -1;
    size_t len = (size_t)net_slice_weights(n, layer, c0, nc);
    if (len == 0) return 0;
    float *w = malloc(len * sizeof *w);
    if (!w) {
        base_seterr(err, "layer %s: out of memory for %zu weights", n->layers[layer].name, len);
        return -1;
    }
    if (kern_weights_fill(n, NULL, layer, c0, nc, seed, w, err)) {
        free(w);
        return -1;
    }
    *w_out = w;
    *nfloats = len;
    return 0;
}
