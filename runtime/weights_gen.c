/* weights_gen.c -- deterministic weights and inputs, and weight slices.
 *
 * Invariant: every number is a pure function of (seed, layer index, output
 * channel, parameter kind, element index), never of the slice that was
 * asked for, so a rank generating only channels [c0, c0+nc) gets exactly
 * the rows the single-device run uses.  The generator is documented in
 * docs/runtime-kernels.md; changing it changes every reference output.
 *
 *   key(seed, layer, channel, kind) =
 *       mix(mix(mix(seed) ^ (layer + 1)) ^ (channel << 8 | kind))
 *   u(key, e) = uniform in (-1, 1) from the top 24 bits of
 *               mix(key + (e + 1) * 0x9E3779B97F4A7C15)
 * with mix = the splitmix64 finaliser.  The network input is layer -1,
 * channel 0, kind KIND_INPUT, element = flat NCHW index.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

enum { KIND_W, KIND_BIAS, KIND_BN_SCALE, KIND_BN_SHIFT, KIND_BN_MEAN, KIND_BN_VAR, KIND_INPUT };

#define GOLDEN 0x9E3779B97F4A7C15ULL

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t key(uint64_t seed, int layer, int channel, int kind)
{
    uint64_t k = mix(mix(seed) ^ (uint64_t)(int64_t)(layer + 1));
    return mix(k ^ ((uint64_t)(unsigned)channel << 8 | (uint64_t)kind));
}

/* Uniform in (-1, 1), symmetric: (2m + 1) / 2^24 - 1 for m in [0, 2^24). */
static float u(uint64_t k, uint64_t e)
{
    uint64_t h = mix(k + (e + 1) * GOLDEN);
    return (float)((double)(2 * (h >> 40) + 1) / 16777216.0 - 1.0);
}

void kern_input_gen(const net *n, uint64_t seed, float *x)
{
    uint64_t k = key(seed, -1, 0, KIND_INPUT);
    int64_t len = net_shape_numel(n->input);
    for (int64_t e = 0; e < len; e++) x[e] = u(k, (uint64_t)e);
}

/* He-uniform: variance 2 / fan_in keeps ReLU activations O(1) with depth. */
static void gen_rows(uint64_t seed, int layer, int c0, int nc, int64_t fan_in, float *w)
{
    float scale = (float)sqrt(6.0 / (double)fan_in);
    for (int k = 0; k < nc; k++) {
        uint64_t kk = key(seed, layer, c0 + k, KIND_W);
        float *row = w + (size_t)k * (size_t)fan_in;
        for (int64_t e = 0; e < fan_in; e++) row[e] = scale * u(kk, (uint64_t)e);
    }
}

/* One value per channel: centre + half_width * u. */
static void gen_vec(uint64_t seed, int layer, int c0, int nc, int kind, float centre,
                    float half_width, float *v)
{
    for (int k = 0; k < nc; k++) v[k] = centre + half_width * u(key(seed, layer, c0 + k, kind), 0);
}

void kern_weights_gen(const net *n, int layer, int c0, int nc, uint64_t seed, float *w)
{
    const net_layer *L = &n->layers[layer];
    net_shape x = net_in_shape(n, layer, 0);
    int64_t fan_in;
    switch (L->kind) {
    case NET_CONV:
    case NET_FC:
        fan_in = L->kind == NET_CONV ? (int64_t)(x.c / L->a.groups) * L->a.kh * L->a.kw
                                     : net_shape_numel(x);
        gen_rows(seed, layer, c0, nc, fan_in, w);
        if (L->a.bias) gen_vec(seed, layer, c0, nc, KIND_BIAS, 0.0f, 0.1f, w + (size_t)nc * fan_in);
        break;
    case NET_BN:
        gen_vec(seed, layer, c0, nc, KIND_BN_SCALE, 1.0f, 0.2f, w);
        gen_vec(seed, layer, c0, nc, KIND_BN_SHIFT, 0.0f, 0.1f, w + nc);
        gen_vec(seed, layer, c0, nc, KIND_BN_MEAN, 0.0f, 0.1f, w + 2 * (size_t)nc);
        gen_vec(seed, layer, c0, nc, KIND_BN_VAR, 1.0f, 0.5f, w + 3 * (size_t)nc);
        break;
    default:
        break;
    }
}

int kern_weights_slice(const net *n, int layer, int c0, int nc, uint64_t seed,
                       float **w_out, size_t *nfloats, char *err)
{
    *w_out = NULL;
    *nfloats = 0;
    if (layer < 0 || layer >= n->n || c0 < 0 || nc < 1 || c0 + nc > n->layers[layer].out.c) {
        snprintf(err, NET_ERRLEN, "layer %d: channels [%d, %d) outside the layer", layer, c0,
                 c0 + nc);
        return -1;
    }
    const net_layer *L = &n->layers[layer];
    size_t len = (size_t)net_slice_weights(n, layer, c0, nc);
    if (len == 0) return 0;
    if (n->weights_path) {
        /* Real weights are read by the model's weights loader once it exists;
         * generating instead would silently compute something else. */
        snprintf(err, NET_ERRLEN, "%s: layer %s: reading weight files is not supported yet",
                 n->weights_path, L->name);
        return -1;
    }
    float *w = malloc(len * sizeof *w);
    if (!w) {
        snprintf(err, NET_ERRLEN, "layer %s: out of memory for %zu weights", L->name, len);
        return -1;
    }
    kern_weights_gen(n, layer, c0, nc, seed, w);
    *w_out = w;
    *nfloats = len;
    return 0;
}
