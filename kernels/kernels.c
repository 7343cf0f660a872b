/* kernels.c -- dispatch of one layer slice (kern_run), the elementwise
 * kernels, the whole-network reference run and the timing helper.
 *
 * Invariant: kern_run computes exactly what net.c says the layer is (shape
 * from net_layer.out, slice rules from net_kind_splittable and
 * net_kind_channelwise); the numbers depend only on the layer, the inputs
 * and the slice's weights, never on how the rest of the net is mapped.
 * Semantics where the kinds leave a choice (docs/runtime-kernels.md):
 * LRN and pools follow ONNX/PyTorch, Softmax is over the channels of each
 * pixel (over all C*H*W elements when H = W = 1, which is the only case the
 * zoo has).
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern_impl.h"
#include "kernels.h"
#include "weights.h"

/* ---- elementwise kernels (one call = nc channels of hw floats) ---- */

static void relu(const float *in, float *out, size_t len, double max)
{
    if (max > 0) {
        float m = (float)max;
        for (size_t i = 0; i < len; i++) {
            float v = in[i] > 0.0f ? in[i] : 0.0f;
            out[i] = v < m ? v : m;
        }
    } else {
        for (size_t i = 0; i < len; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    }
}

/* ONNX LRN: y = x / (k + alpha/size * sum of x^2 over channels
 * [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta. */
static void lrn(const float *in, float *out, int C, size_t hw, const net_attr *a)
{
    int before = (a->lrn_size - 1) / 2, after = a->lrn_size - 1 - before;
    float k = (float)a->lrn_k, s = (float)(a->lrn_alpha / a->lrn_size), beta = (float)a->lrn_beta;
    for (int c = 0; c < C; c++) {
        int lo = c - before < 0 ? 0 : c - before, hi = c + after >= C ? C - 1 : c + after;
        float *o = out + (size_t)c * hw;
        memset(o, 0, hw * sizeof *o);
        for (int j = lo; j <= hi; j++) {
            const float *x = in + (size_t)j * hw;
            for (size_t p = 0; p < hw; p++) o[p] += x[p] * x[p];
        }
        const float *x = in + (size_t)c * hw;
        kern_vlrn(x, o, hw, k, s, beta);
    }
}

/* First and one-past-last input index of window o along an axis, clipped
 * to [0, in); *full = the extent clipped only to the padded input
 * [-p0, in + p1), the divisor of count_include_pad (PyTorch's rule: the
 * part of a ceil_mode window beyond the padding never counts). */
static void window(int o, int k, int s, int p0, int p1, int in, int *lo, int *hi, int *full)
{
    int start = o * s - p0, end = start + k;
    int pend = end < in + p1 ? end : in + p1;
    *full = pend - start;
    *lo = start < 0 ? 0 : start;
    *hi = end < in ? end : in;
}

static void pool(const net_layer *L, int nc, net_shape x, const float *in, float *out)
{
    const net_attr *a = &L->a;
    int oh = L->out.h, ow = L->out.w, is_max = L->kind == NET_MAXPOOL;
    for (int c = 0; c < nc; c++) {
        const float *plane = in + (size_t)c * x.h * x.w;
        float *o = out + (size_t)c * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
            int y0, y1, fy;
            window(oy, a->kh, a->sh, a->pt, a->pb, x.h, &y0, &y1, &fy);
            for (int ox = 0; ox < ow; ox++) {
                int x0, x1, fx;
                window(ox, a->kw, a->sw, a->pl, a->pr, x.w, &x0, &x1, &fx);
                float m = -FLT_MAX, sum = 0.0f;
                for (int iy = y0; iy < y1; iy++)
                    for (int ix = x0; ix < x1; ix++) {
                        float v = plane[(size_t)iy * x.w + ix];
                        if (v > m) m = v;
                        sum += v;
                    }
                int cnt = a->count_include_pad ? fy * fx : (y1 - y0) * (x1 - x0);
                /* A window entirely in the padding (impossible when pads are
                 * smaller than the kernel, which net.c enforces) gives 0. */
                if (y1 <= y0 || x1 <= x0) m = 0.0f;
                o[(size_t)oy * ow + ox] = is_max ? m : (cnt > 0 ? sum / (float)cnt : 0.0f);
            }
        }
    }
}

/* MaxPool row by row: every (input row, kernel column) pair of an output
 * row's windows is folded into the output row as one strided pass over
 * the output columns whose window holds that column (no sums, no window
 * arithmetic per output, a loop the vectoriser takes).  Same values as
 * pool() (max is exact; an empty window gives 0 there and here). */
static void maxpool(const net_layer *L, int nc, net_shape x, const float *in, float *out)
{
    const net_attr *a = &L->a;
    int oh = L->out.h, ow = L->out.w, sw = a->sw, f;
    for (int c = 0; c < nc; c++) {
        const float *plane = in + (size_t)c * x.h * x.w;
        for (int oy = 0; oy < oh; oy++) {
            int y0, y1;
            window(oy, a->kh, a->sh, a->pt, a->pb, x.h, &y0, &y1, &f);
            float *o = out + ((size_t)c * oh + oy) * ow;
            for (int ox = 0; ox < ow; ox++) o[ox] = -FLT_MAX;
            for (int iy = y0; iy < y1; iy++)
                for (int kj = 0; kj < a->kw; kj++) {
                    /* output columns ox with 0 <= ox*sw + kj - pl < W */
                    int off = kj - a->pl, lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                    int hi = x.w - 1 - off < 0 ? 0 : (x.w - 1 - off) / sw + 1;
                    if (hi > ow) hi = ow;
                    const float *r = plane + (size_t)iy * x.w + off;
                    for (int ox = lo; ox < hi; ox++) {
                        float v = r[(size_t)ox * sw];
                        o[ox] = v > o[ox] ? v : o[ox];
                    }
                }
            for (int ox = 0; ox < ow; ox++)
                if (o[ox] == -FLT_MAX) { /* empty window (or all -FLT_MAX) */
                    int x0, x1;
                    window(ox, a->kw, a->sw, a->pl, a->pr, x.w, &x0, &x1, &f);
                    if (y1 <= y0 || x1 <= x0) o[ox] = 0.0f;
                }
        }
    }
}

static void gap(const float *in, float *out, int nc, size_t hw)
{
    for (int c = 0; c < nc; c++) {
        double s = 0;
        const float *x = in + (size_t)c * hw;
        for (size_t p = 0; p < hw; p++) s += x[p];
        out[c] = (float)(s / (double)hw);
    }
}

/* y = scale * (x - mean) / sqrt(var + eps) + shift, folded per channel. */
static void batchnorm(const float *in, float *out, int nc, size_t hw, const float *w, double eps)
{
    const float *scale = w, *shift = w + nc, *mean = w + 2 * nc, *var = w + 3 * nc;
    for (int c = 0; c < nc; c++) {
        double m = scale[c] / sqrt((double)var[c] + eps);
        float mul = (float)m, add = (float)(shift[c] - mean[c] * m);
        const float *x = in + (size_t)c * hw;
        float *y = out + (size_t)c * hw;
        for (size_t p = 0; p < hw; p++) y[p] = x[p] * mul + add;
    }
}

/* Softmax over the channels of each pixel (max-subtracted). */
static void softmax(const float *in, float *out, int C, size_t hw)
{
    for (size_t p = 0; p < hw; p++) {
        float m = -FLT_MAX;
        for (int c = 0; c < C; c++)
            if (in[(size_t)c * hw + p] > m) m = in[(size_t)c * hw + p];
        double s = 0;
        for (int c = 0; c < C; c++) {
            float e = expf(in[(size_t)c * hw + p] - m);
            out[(size_t)c * hw + p] = e;
            s += e;
        }
        float inv = (float)(1.0 / s);
        for (int c = 0; c < C; c++) out[(size_t)c * hw + p] *= inv;
    }
}

/* ---- one slice ---- */

size_t kern_workspace_floats(const net *n, int layer, int nc)
{
    const net_layer *L = &n->layers[layer];
    if (L->kind == NET_DECONV) return convalgo_deconv_workspace(L, net_in_shape(n, layer, 0), nc);
    if (L->kind != NET_CONV) return 0;
    return kern_conv_workspace(L, net_in_shape(n, layer, 0), nc);
}

size_t kern_out_floats(const net *n, int layer, int nc)
{
    const net_layer *L = &n->layers[layer];
    return (size_t)nc * L->out.h * L->out.w;
}

/* The kernel of each kind (kinds.def's last column: k_<kernel>): one slice, with the
 * checks of kern_run done.  a->x is input 0's shape, hw the output plane. */
typedef struct {
    const net *n;
    int layer;
    const net_layer *L;
    net_shape x;
    int c0, nc;
    size_t hw;
    const float *const *in;
    const float *w;
    float *out, *ws;
    convalgo alg; /* Conv: the whole layer's algorithm */
    /* A band (kern_run_band): its first output row and column in the whole
     * layer's output, and the first input row and column of the box it
     * reads; 0 for whole layers and channel slices.  Kinds that move
     * positions (Upsample, Bilinear, PixelShuffle) or read the whole map
     * (InstanceNorm, GroupNorm) index the whole layer's geometry with them. */
    int oy, ox, iy, ix;
} kern_args;

static void k_conv(const kern_args *k) { kern_conv(k->L, k->x, k->alg, k->c0, k->nc, k->in[0], k->w, k->out, k->ws); }
static void k_deconv(const kern_args *k)
{
    const net_layer *WL = &k->n->layers[k->layer];
    int band = convalgo_deconv_band_rows(WL, net_in_shape(k->n, k->layer, 0));
    kern_deconv(k->L, k->x, band, k->iy, k->c0, k->nc, k->in[0], k->w, k->out, k->ws);
}
static void k_fc(const kern_args *k) { kern_fc(k->L, k->x, k->nc, k->in[0], k->w, k->out); }
static void k_relu(const kern_args *k) { relu(k->in[0], k->out, (size_t)k->nc * k->hw, k->L->a.relu_max); }
static void k_lrn(const kern_args *k) { lrn(k->in[0], k->out, k->L->out.c, k->hw, &k->L->a); }
static void k_maxpool(const kern_args *k) { maxpool(k->L, k->nc, k->x, k->in[0], k->out); }
static void k_avgpool(const kern_args *k) { pool(k->L, k->nc, k->x, k->in[0], k->out); }
static void k_gap(const kern_args *k) { gap(k->in[0], k->out, k->nc, (size_t)k->x.h * k->x.w); }
static void k_batchnorm(const kern_args *k) { batchnorm(k->in[0], k->out, k->nc, k->hw, k->w, k->L->a.bn_eps); }
static void k_softmax(const kern_args *k) { softmax(k->in[0], k->out, k->L->out.c, k->hw); }

static void k_add(const kern_args *k)
{
    size_t len = (size_t)k->L->out.c * k->hw;
    if (k->out != k->in[0]) memcpy(k->out, k->in[0], len * sizeof *k->out);
    if (k->L->a.add_sub) { /* input 0 minus input 1 (PoolFormer's pool(x) - x) */
        for (size_t i = 0; i < len; i++) k->out[i] -= k->in[1][i];
        return;
    }
    for (int j = 1; j < k->L->nin; j++)
        for (size_t i = 0; i < len; i++) k->out[i] += k->in[j][i];
}

static void k_concat(const kern_args *k)
{
    float *o = k->out;
    for (int j = 0; j < k->L->nin; j++) {
        /* A band's inputs have the band's rows and columns (k->hw). */
        size_t len = (size_t)net_in_shape(k->n, k->layer, j).c * k->hw;
        memcpy(o, k->in[j], len * sizeof *o);
        o += len;
    }
}

/* Sigmoid 1 / (1 + e^-x), HardSigmoid max(0, min(1, alpha x + beta)) and
 * HardSwish x max(0, min(1, x/6 + 1/2)): one pass, in place allowed. */
static void k_sigmoid(const kern_args *k)
{
    size_t len = (size_t)k->nc * k->hw;
    const float *x = k->in[0];
    kern_vsigmoid(x, k->out, len);
}

static void hsig(const float *x, float *y, size_t len, float alpha, float beta, int swish)
{
    for (size_t i = 0; i < len; i++) {
        float v = alpha * x[i] + beta;
        v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        y[i] = swish ? x[i] * v : v;
    }
}

static void k_hardsigmoid(const kern_args *k)
{
    hsig(k->in[0], k->out, (size_t)k->nc * k->hw, (float)k->L->a.hs_alpha, (float)k->L->a.hs_beta, 0);
}

static void k_hardswish(const kern_args *k)
{
    hsig(k->in[0], k->out, (size_t)k->nc * k->hw, 1.0f / 6.0f, 0.5f, 1);
}

/* Mul: elementwise, or each channel by one value (a C x 1 x 1 second input,
 * the squeeze-excitation scale). */
static void k_mul(const kern_args *k)
{
    net_shape z = net_in_shape(k->n, k->layer, 1);
    const float *a = k->in[0], *b = k->in[1];
    if (z.c == 1 && k->L->out.c > 1) { /* a gate per pixel (CBAM's spatial attention) */
        for (int c = 0; c < k->nc; c++) {
            const float *x = a + (size_t)c * k->hw;
            float *y = k->out + (size_t)c * k->hw;
            for (size_t p = 0; p < k->hw; p++) y[p] = x[p] * b[p];
        }
    } else if (z.h == 1 && z.w == 1 && k->hw > 1) {
        for (int c = 0; c < k->nc; c++) {
            float s = b[c];
            const float *x = a + (size_t)c * k->hw;
            float *y = k->out + (size_t)c * k->hw;
            for (size_t p = 0; p < k->hw; p++) y[p] = x[p] * s;
        }
    } else {
        size_t len = (size_t)k->nc * k->hw;
        for (size_t i = 0; i < len; i++) k->out[i] = a[i] * b[i];
    }
}

/* ReduceMean and ReduceMax over any of C, H, W (reduced axes become 1).
 * Over channels alone (the common case), pixels in chunks so that the C
 * planes are read in order; otherwise one output element at a time.  In
 * double (a max is exact either way).  max is a constant at each call:
 * the compiler makes two loops of it. */
#define PIX_CHUNK 256
static inline double reduce_step(double s, double v, int max) { return max ? (v > s ? v : s) : s + v; }

static inline void reduce(const kern_args *k, int max)
{
    const net_attr *a = &k->L->a;
    net_shape x = k->x, y = k->L->out;
    const float *in = k->in[0];
    size_t xhw = (size_t)x.h * x.w;
    if (a->rm_c && !a->rm_h && !a->rm_w) {
        double s[PIX_CHUNK];
        for (size_t p0 = 0; p0 < xhw; p0 += PIX_CHUNK) {
            size_t np = xhw - p0 < PIX_CHUNK ? xhw - p0 : PIX_CHUNK;
            for (size_t p = 0; p < np; p++) s[p] = max ? in[p0 + p] : 0;
            for (int c = max ? 1 : 0; c < x.c; c++) {
                const float *r = in + (size_t)c * xhw + p0;
                for (size_t p = 0; p < np; p++) s[p] = reduce_step(s[p], r[p], max);
            }
            for (size_t p = 0; p < np; p++) k->out[p0 + p] = (float)(max ? s[p] : s[p] / x.c);
        }
        return;
    }
    int nc = a->rm_c ? x.c : 1, nh = a->rm_h ? x.h : 1, nw = a->rm_w ? x.w : 1;
    double inv = max ? 1.0 : 1.0 / ((double)nc * nh * nw);
    for (int co = 0; co < y.c; co++)
        for (int yo = 0; yo < y.h; yo++)
            for (int xo = 0; xo < y.w; xo++) {
                double s = max ? -HUGE_VAL : 0;
                for (int c = a->rm_c ? 0 : co; c < (a->rm_c ? x.c : co + 1); c++)
                    for (int yy = a->rm_h ? 0 : yo; yy < (a->rm_h ? x.h : yo + 1); yy++) {
                        const float *r = in + ((size_t)c * x.h + yy) * x.w;
                        for (int xx = a->rm_w ? 0 : xo; xx < (a->rm_w ? x.w : xo + 1); xx++)
                            s = reduce_step(s, r[xx], max);
                    }
                k->out[((size_t)co * y.h + yo) * y.w + xo] = (float)(s * inv);
            }
}

static void k_reducemean(const kern_args *k) { reduce(k, 0); }
static void k_reducemax(const kern_args *k) { reduce(k, 1); }

/* Slice: channels [start, start + out.c) of the input, and of each of them
 * the rows top + sh r and columns left + sw q: one block of floats when every
 * row and column is kept, one run per row when the columns are
 * contiguous.  A band's attributes are local to its box (net_band_layer). */
static void k_slice(const kern_args *k)
{
    const net_attr *a = &k->L->a;
    int H = k->x.h, W = k->x.w, OH = k->L->out.h, OW = k->L->out.w;
    const float *x = k->in[0] + (size_t)a->start * H * W;
    if (OH == H && OW == W) {
        memcpy(k->out, x, (size_t)k->L->out.c * k->hw * sizeof *k->out);
        return;
    }
    float *y = k->out;
    for (int c = 0; c < k->L->out.c; c++, x += (size_t)H * W)
        for (int r = 0; r < OH; r++, y += OW) {
            const float *src = x + (size_t)(a->sl_top + a->sh * r) * W + a->sl_left;
            if (a->sw == 1) memcpy(y, src, (size_t)OW * sizeof *y);
            else for (int q = 0; q < OW; q++) y[q] = src[(size_t)a->sw * q];
        }
}

/* ChannelShuffle with g groups: the input seen as [g][C/g] planes,
 * transposed to [C/g][g]: output channel j*g + i is input i*(C/g) + j. */
static void k_shuffle(const kern_args *k)
{
    int C = k->L->out.c, g = k->L->a.groups, per = C / g;
    for (int o = 0; o < C; o++)
        memcpy(k->out + (size_t)o * k->hw, k->in[0] + (size_t)((o % g) * per + o / g) * k->hw,
               k->hw * sizeof *k->out);
}

/* BranchSum: output channel c is the sum of input channels k C + c over
 * the K branches (torch.stack(branches, 1).sum(1): SKNet, ResNeSt), added
 * in branch order in float, as PyTorch's sum of K values. */
static void k_branchsum(const kern_args *k)
{
    int C = k->L->out.c, K = k->L->a.groups;
    size_t hw = k->hw, len = (size_t)C * hw;
    memcpy(k->out, k->in[0], len * sizeof *k->out);
    for (int b = 1; b < K; b++) {
        const float *r = k->in[0] + (size_t)b * len;
        for (size_t i = 0; i < len; i++) k->out[i] += r[i];
    }
}

/* BranchSoftmax: the input's channels are [G][K][M] (G groups of K
 * branches of M channels; ResNeSt's radix softmax: x.view(G, K, M)
 * .transpose, softmax over K), the output's [K][G][M]; each output
 * (k, g, m) is the softmax over the K branches of input (g, *, m), per
 * pixel.  The maxima and sums over chunks of pixels on the stack. */
static void k_branchsoftmax(const kern_args *k)
{
    int K = k->L->a.groups, G = k->L->a.card, M = k->L->out.c / (K * G);
    size_t hw = k->hw;
    float mx[PIX_CHUNK];
    double s[PIX_CHUNK];
    for (int g = 0; g < G; g++)
        for (int m = 0; m < M; m++)
            for (size_t p0 = 0; p0 < hw; p0 += PIX_CHUNK) {
                size_t np = hw - p0 < PIX_CHUNK ? hw - p0 : PIX_CHUNK;
                for (size_t p = 0; p < np; p++) mx[p] = -FLT_MAX, s[p] = 0;
                for (int b = 0; b < K; b++) {
                    const float *r = k->in[0] + ((size_t)(g * K + b) * M + m) * hw + p0;
                    for (size_t p = 0; p < np; p++) mx[p] = r[p] > mx[p] ? r[p] : mx[p];
                }
                for (int b = 0; b < K; b++) {
                    const float *r = k->in[0] + ((size_t)(g * K + b) * M + m) * hw + p0;
                    float *o = k->out + ((size_t)(b * G + g) * M + m) * hw + p0;
                    for (size_t p = 0; p < np; p++) s[p] += o[p] = expf(r[p] - mx[p]);
                }
                for (int b = 0; b < K; b++) {
                    float *o = k->out + ((size_t)(b * G + g) * M + m) * hw + p0;
                    for (size_t p = 0; p < np; p++) o[p] *= (float)(1.0 / s[p]);
                }
            }
}

/* LayerNorm over the channels of each pixel: y = (x - mean) / sqrt(var +
 * eps) * scale[c] + shift[c], the variance biased (as PyTorch's), mean and
 * variance in double over chunks of pixels (two passes: no cancellation).
 * In place allowed: a pixel's outputs are written after all its reads. */
static void k_layernorm(const kern_args *k)
{
    int C = k->L->out.c;
    size_t hw = k->hw;
    const float *in = k->in[0], *sc = k->w, *sh = k->w + C;
    double m[PIX_CHUNK], v[PIX_CHUNK];
    for (size_t p0 = 0; p0 < hw; p0 += PIX_CHUNK) {
        size_t np = hw - p0 < PIX_CHUNK ? hw - p0 : PIX_CHUNK;
        for (size_t p = 0; p < np; p++) m[p] = v[p] = 0;
        for (int c = 0; c < C; c++) {
            const float *r = in + (size_t)c * hw + p0;
            for (size_t p = 0; p < np; p++) m[p] += r[p];
        }
        for (size_t p = 0; p < np; p++) m[p] /= C;
        for (int c = 0; c < C; c++) {
            const float *r = in + (size_t)c * hw + p0;
            for (size_t p = 0; p < np; p++) {
                double d = r[p] - m[p];
                v[p] += d * d;
            }
        }
        for (size_t p = 0; p < np; p++) v[p] = 1.0 / sqrt(v[p] / C + k->L->a.bn_eps);
        for (int c = 0; c < C; c++) {
            const float *r = in + (size_t)c * hw + p0;
            float *o = k->out + (size_t)c * hw + p0;
            for (size_t p = 0; p < np; p++) o[p] = (float)((r[p] - m[p]) * v[p]) * sc[c] + sh[c];
        }
    }
}

/* L2Norm: each pixel's channels divided by their L2 norm, at least eps
 * (F.normalize(x, dim=1); SSD's conv4_3, embeddings), the squares summed
 * in double over chunks of pixels.  In place allowed: a pixel's outputs
 * are written after all its reads. */
static void k_l2norm(const kern_args *k)
{
    int C = k->L->out.c;
    size_t hw = k->hw;
    const float *in = k->in[0];
    double s[PIX_CHUNK];
    for (size_t p0 = 0; p0 < hw; p0 += PIX_CHUNK) {
        size_t np = hw - p0 < PIX_CHUNK ? hw - p0 : PIX_CHUNK;
        for (size_t p = 0; p < np; p++) s[p] = 0;
        for (int c = 0; c < C; c++) {
            const float *r = in + (size_t)c * hw + p0;
            for (size_t p = 0; p < np; p++) s[p] += (double)r[p] * r[p];
        }
        for (size_t p = 0; p < np; p++) {
            float n = (float)sqrt(s[p]);
            s[p] = n > k->L->a.bn_eps ? n : k->L->a.bn_eps;
        }
        for (int c = 0; c < C; c++) {
            const float *r = in + (size_t)c * hw + p0;
            float *o = k->out + (size_t)c * hw + p0;
            for (size_t p = 0; p < np; p++) o[p] = r[p] / (float)s[p];
        }
    }
}

/* InstanceNorm and GroupNorm: each group of cg channels normalised by the
 * mean and (biased) variance over all its channels' maps, summed in
 * double, two passes (no cancellation), then each channel scaled and
 * shifted by its own weights (PyTorch's InstanceNorm2d, cg = 1, and
 * GroupNorm).  A slice [c0, c0+nc) receives the input channels of the
 * groups it touches, from group c0 / cg on (net_chans_in: for
 * InstanceNorm, its own channels); a band receives the whole map (its
 * statistics: net_rows_in) and writes its rows and columns (oy, ox). */
static void norm_groups(const kern_args *k, int cg)
{
    size_t hw = (size_t)k->x.h * k->x.w;
    int OH = k->L->out.h, OW = k->L->out.w, W = k->x.w;
    int g0 = k->c0 / cg, c1 = k->c0 + k->nc;
    const float *sc = k->w, *sh = k->w + k->nc;
    for (int g = g0; g * cg < c1; g++) {
        const float *xg = k->in[0] + (size_t)(g - g0) * cg * hw;
        size_t cnt = (size_t)cg * hw;
        double m = 0, v = 0;
        for (size_t p = 0; p < cnt; p++) m += xg[p];
        m /= (double)cnt;
        for (size_t p = 0; p < cnt; p++) {
            double d = xg[p] - m;
            v += d * d;
        }
        double inv = 1.0 / sqrt(v / (double)cnt + k->L->a.bn_eps);
        float mf = (float)m;
        int lo = g * cg > k->c0 ? g * cg : k->c0, hi = (g + 1) * cg < c1 ? (g + 1) * cg : c1;
        for (int c = lo; c < hi; c++) {
            const float *x = k->in[0] + (size_t)(c - g0 * cg) * hw;
            float *y = k->out + (size_t)(c - k->c0) * OH * OW;
            /* centred before scaling: a channel whose mean is far above its
             * spread keeps its digits (x s + (shift - m s) would cancel) */
            float s = (float)(inv * sc[c - k->c0]), b = sh[c - k->c0];
            for (int r = 0; r < OH; r++) { /* the whole layer is the band at 0, 0 */
                const float *xr = x + (size_t)(r + k->oy) * W + k->ox;
                float *yr = y + (size_t)r * OW;
                for (int q = 0; q < OW; q++) yr[q] = (xr[q] - mf) * s + b;
            }
        }
    }
}

static void k_instnorm(const kern_args *k) { norm_groups(k, 1); }
static void k_groupnorm(const kern_args *k) { norm_groups(k, k->L->out.c / k->L->a.groups); }

/* GELU: x/2 (1 + erf(x / sqrt 2)), or with tanh: x/2 (1 + tanh(sqrt(2/pi)
 * (x + 0.044715 x^3))), PyTorch's two forms. */
static void k_gelu(const kern_args *k)
{
    size_t len = (size_t)k->nc * k->hw;
    const float *x = k->in[0];
    if (k->L->a.gelu_tanh) kern_vgelu_tanh(x, k->out, len);
    else kern_vgelu(x, k->out, len);
}

/* Scale: each channel times its own constant (ConvNeXt's layer scale). */
static void k_scale(const kern_args *k)
{
    for (int c = 0; c < k->nc; c++) {
        const float *x = k->in[0] + (size_t)c * k->hw;
        float *y = k->out + (size_t)c * k->hw, s = k->w[c];
        for (size_t p = 0; p < k->hw; p++) y[p] = x[p] * s;
    }
}

/* LeakyReLU, PReLU (one slope per channel), Tanh and ELU: vmath.c's loops
 * (vectorised, their time independent of the data); Clip min(hi, max(lo,
 * x)), selects the vectoriser takes here.  In place allowed. */
static void k_leakyrelu(const kern_args *k)
{
    kern_vleaky(k->in[0], k->out, (size_t)k->nc * k->hw, (float)k->L->a.act_alpha);
}

static void k_prelu(const kern_args *k)
{
    for (int c = 0; c < k->nc; c++)
        kern_vleaky(k->in[0] + (size_t)c * k->hw, k->out + (size_t)c * k->hw, k->hw, k->w[c]);
}

static void k_tanh(const kern_args *k) { kern_vtanh(k->in[0], k->out, (size_t)k->nc * k->hw); }
static void k_softplus(const kern_args *k) { kern_vsoftplus(k->in[0], k->out, (size_t)k->nc * k->hw); }

/* Mish, x tanh(softplus(x)) (YOLOv4), by the Softplus and Tanh loops over
 * chunks on the stack: in place allowed, one pass over memory instead of
 * the three layers torch.onnx writes. */
static void k_mish(const kern_args *k)
{
    size_t len = (size_t)k->nc * k->hw;
    float t[PIX_CHUNK];
    for (size_t i = 0; i < len; i += PIX_CHUNK) {
        size_t n = len - i < PIX_CHUNK ? len - i : PIX_CHUNK;
        kern_vsoftplus(k->in[0] + i, t, n);
        kern_vtanh(t, t, n);
        for (size_t j = 0; j < n; j++) k->out[i + j] = k->in[0][i + j] * t[j];
    }
}

static void k_elu(const kern_args *k)
{
    kern_velu(k->in[0], k->out, (size_t)k->nc * k->hw, (float)k->L->a.act_alpha);
}

static void clip(const float *x, float *y, size_t len, float lo, float hi)
{
    for (size_t i = 0; i < len; i++) {
        float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

static void k_clip(const kern_args *k)
{
    clip(k->in[0], k->out, (size_t)k->nc * k->hw, (float)k->L->a.clip_lo, (float)k->L->a.clip_hi);
}

/* Upsample (nearest, integer factors): output row r, column q of channel c
 * is input row r / sh, column q / sw (of the whole layer: a band's r is
 * r + oy, its box's rows start at iy).  A row equal to the one above is
 * copied. */
static void k_upsample(const kern_args *k)
{
    int sh = k->L->a.up_h, sw = k->L->a.up_w, H = k->x.h, W = k->x.w;
    int OH = k->L->out.h, OW = k->L->out.w;
    for (int c = 0; c < k->nc; c++) {
        const float *x = k->in[0] + (size_t)c * H * W;
        float *y = k->out + (size_t)c * OH * OW;
        for (int r = 0; r < OH; r++) {
            float *row = y + (size_t)r * OW;
            int src = (r + k->oy) / sh;
            if (r > 0 && src == (r - 1 + k->oy) / sh) {
                memcpy(row, row - OW, (size_t)OW * sizeof *row);
                continue;
            }
            const float *xr = x + (size_t)(src - k->iy) * W;
            int j = k->ox % sw, q = k->ox / sw - k->ix;
            for (int o = 0; o < OW; o++) {
                row[o] = xr[q];
                if (++j == sw) j = 0, q++;
            }
        }
    }
}

/* Nearest: output row o (of the whole layer: a band's o is o + oy, its box
 * starts at iy) is input row net_nearest_src(H, OH, o), columns alike; a
 * row equal to the one above is one copy. */
static void k_nearest(const kern_args *k)
{
    int H = k->x.h, W = k->x.w, OH = k->L->out.h, OW = k->L->out.w;
    net_shape whole = net_in_shape(k->n, k->layer, 0);
    const net_layer *WL = &k->n->layers[k->layer];
    for (int c = 0; c < k->nc; c++) {
        const float *x = k->in[0] + (size_t)c * H * W;
        float *y = k->out + (size_t)c * OH * OW;
        for (int r = 0; r < OH; r++) {
            float *row = y + (size_t)r * OW;
            int src = net_nearest_src(whole.h, WL->out.h, r + k->oy);
            if (r > 0 && src == net_nearest_src(whole.h, WL->out.h, r - 1 + k->oy)) {
                memcpy(row, row - OW, (size_t)OW * sizeof *row);
                continue;
            }
            const float *xr = x + (size_t)(src - k->iy) * W;
            for (int q = 0; q < OW; q++) row[q] = xr[net_nearest_src(whole.w, WL->out.w, q + k->ox) - k->ix];
        }
    }
}

/* Bilinear: output index o of an axis reads net_bilinear_src's two inputs
 * and weight (of the whole layer's axis: a band's o is o + oy, its box
 * starts at iy).  Columns in chunks whose coordinates sit on the stack
 * (no allocation in a kernel). */
#define BILIN_CHUNK 256
static void k_bilinear(const kern_args *k)
{
    int H = k->x.h, W = k->x.w, OH = k->L->out.h, OW = k->L->out.w, al = k->L->a.align_corners;
    net_shape whole = net_in_shape(k->n, k->layer, 0);
    const net_layer *WL = &k->n->layers[k->layer];
    int x0[BILIN_CHUNK], x1[BILIN_CHUNK];
    float lx[BILIN_CHUNK];
    for (int q0 = 0; q0 < OW; q0 += BILIN_CHUNK) {
        int nq = OW - q0 < BILIN_CHUNK ? OW - q0 : BILIN_CHUNK;
        for (int q = 0; q < nq; q++) {
            net_bilinear_src(whole.w, WL->out.w, al, q0 + q + k->ox, &x0[q], &x1[q], &lx[q]);
            x0[q] -= k->ix, x1[q] -= k->ix;
        }
        for (int c = 0; c < k->nc; c++) {
            const float *x = k->in[0] + (size_t)c * H * W;
            float *y = k->out + (size_t)c * OH * OW + q0;
            for (int r = 0; r < OH; r++) {
                int y0, y1;
                float v;
                net_bilinear_src(whole.h, WL->out.h, al, r + k->oy, &y0, &y1, &v);
                const float *a = x + (size_t)(y0 - k->iy) * W, *b = x + (size_t)(y1 - k->iy) * W;
                float u = 1.0f - v;
                for (int q = 0; q < nq; q++) {
                    float t = a[x0[q]] + lx[q] * (a[x1[q]] - a[x0[q]]);
                    float d = b[x0[q]] + lx[q] * (b[x1[q]] - b[x0[q]]);
                    y[(size_t)r * OW + q] = u * t + v * d;
                }
            }
        }
    }
}

/* PixelUnshuffle (ONNX SpaceToDepth): output channel c r^2 + i r + j
 * (CRD: PyTorch's pixel_unshuffle) or (i r + j) C + c (DCR: SpaceToDepth's
 * definition), pixel (o, q), is input channel c, pixel (o r + i, q r + j)
 * (of the whole layer: a band's rows start at oy, its box's at iy). */
static void k_pixelunshuffle(const kern_args *k)
{
    int r = k->L->a.up_h, H = k->x.h, W = k->x.w, C = k->x.c;
    int OH = k->L->out.h, OW = k->L->out.w;
    for (int co = 0; co < k->L->out.c; co++) {
        int c = k->L->a.ps_dcr ? co % C : co / (r * r);
        int ij = k->L->a.ps_dcr ? co / C : co % (r * r), i = ij / r, j = ij % r;
        const float *x = k->in[0] + (size_t)c * H * W;
        for (int o = 0; o < OH; o++) {
            const float *src = x + (size_t)((o + k->oy) * r + i - k->iy) * W +
                               ((size_t)k->ox * r + j - k->ix);
            float *y = k->out + ((size_t)co * OH + o) * OW;
            for (int q = 0; q < OW; q++) y[q] = src[(size_t)q * r];
        }
    }
}

/* PixelShuffle (ONNX DepthToSpace): output (c, h r + i, w r + j) is input
 * channel c r^2 + i r + j (CRD: PyTorch's pixel_shuffle) or (i r + j) C' + c
 * (DCR), pixel (h, w) (of the whole layer: a band's rows start at oy, its
 * box's at iy); whole channels only (a slice would scatter). */
static void k_pixelshuffle(const kern_args *k)
{
    int r = k->L->a.up_h, H = k->x.h, W = k->x.w, C = k->L->out.c;
    int OH = k->L->out.h, OW = k->L->out.w;
    int dcr = k->L->a.ps_dcr;
    for (int c = 0; c < C; c++)
        for (int o = 0; o < OH; o++) {
            int h = (o + k->oy) / r - k->iy, i = (o + k->oy) % r;
            float *y = k->out + ((size_t)c * OH + o) * OW;
            /* Phase j: output columns q with (q + ox) % r == j read input
             * channel src(j), columns (q + ox) / r - ix: one strided copy. */
            for (int j = 0; j < r; j++) {
                int q0 = ((j - k->ox) % r + r) % r;
                if (q0 >= OW) continue;
                int src = dcr ? (i * r + j) * C + c : (c * r + i) * r + j;
                const float *x = k->in[0] + ((size_t)src * H + h) * W + (q0 + k->ox) / r - k->ix;
                for (int q = q0, w = 0; q < OW; q += r, w++) y[q] = x[w];
            }
        }
}

/* Pad: zeros around each channel's plane (a ZeroPad2d before a MaxPool,
 * which pads with -inf itself: folding it would change the maximum), or
 * the plane reflected or its edge repeated (net_pad_src).  Only the top
 * and left pads are read (a band's may be negative: it starts inside the
 * map, net_band_layer), so a band indexes its box as the whole layer its
 * map. */
static void k_pad(const kern_args *k)
{
    const net_attr *a = &k->L->a;
    int H = k->x.h, W = k->x.w, OH = k->L->out.h, OW = k->L->out.w;
    int rf = a->pad_reflect, ed = a->pad_edge;
    float v = (float)a->pad_value; /* constant padding's value (0: zeros) */
    /* The columns read straight from the map: [qa, qb). */
    int qa = a->pl < 0 ? 0 : a->pl > OW ? OW : a->pl;
    int qb = a->pl + W < qa ? qa : a->pl + W > OW ? OW : a->pl + W;
    for (int c = 0; c < k->nc; c++) {
        const float *x = k->in[0] + (size_t)c * H * W;
        float *y = k->out + (size_t)c * OH * OW;
        for (int r = 0; r < OH; r++) {
            int s = net_pad_src(r, a->pt, H, rf, ed);
            float *row = y + (size_t)r * OW;
            if (s < 0) {
                if (v == 0.0f) memset(row, 0, (size_t)OW * sizeof *row);
                else for (int q = 0; q < OW; q++) row[q] = v;
                continue;
            }
            const float *src = x + (size_t)s * W;
            for (int q = 0; q < qa; q++) {
                int t = net_pad_src(q, a->pl, W, rf, ed);
                row[q] = t < 0 ? v : src[t];
            }
            if (qb > qa) memcpy(row + qa, src + (qa - a->pl), (size_t)(qb - qa) * sizeof *row);
            for (int q = qb; q < OW; q++) {
                int t = net_pad_src(q, a->pl, W, rf, ed);
                row[q] = t < 0 ? v : src[t];
            }
        }
    }
}

/* Flatten, Dropout: the input's floats (aliased in whole-net runs). */
static void k_copy(const kern_args *k)
{
    if (k->out != k->in[0]) memcpy(k->out, k->in[0], (size_t)k->nc * k->hw * sizeof *k->out);
}

static void (*const kernels[NET_KIND_COUNT])(const kern_args *) = {
#define KIND(id, name, min, max, flags, wl, init, keys, onnx, kernel) [NET_##id] = k_##kernel,
#include "kinds.def"
#undef KIND
};

int kern_run(const net *n, int layer, int c0, int nc, const float *const *inputs,
             const float *weights, float *out, float *workspace, char *err)
{
    if (layer < 0 || layer >= n->n) {
        base_seterr(err, "net %s: no layer %d", n->name, layer);
        return -1;
    }
    const net_layer *L = &n->layers[layer];
    net_shape x = net_in_shape(n, layer, 0);
    if (c0 < 0 || nc < 1 || c0 + nc > L->out.c) {
        base_seterr(err, "layer %s: channels [%d, %d) outside [0, %d)", L->name, c0,
                 c0 + nc, L->out.c);
        return -1;
    }
    if (nc != L->out.c && !net_kind_splittable(L->kind) && !net_kind_channelwise(L->kind)) {
        base_seterr(err, "layer %s: %s computes only whole outputs, not channels [%d, %d)",
                 L->name, net_kind_name(L->kind), c0, c0 + nc);
        return -1;
    }
    if (net_slice_weights(n, layer, c0, nc) > 0 && !weights) {
        base_seterr(err, "layer %s: weights missing", L->name);
        return -1;
    }
    if (kern_workspace_floats(n, layer, nc) > 0 && !workspace) {
        base_seterr(err, "layer %s: workspace missing", L->name);
        return -1;
    }
    kern_args k = {n, layer, L, x, c0, nc, (size_t)L->out.h * L->out.w, inputs, weights,
                   out, workspace, L->kind == NET_CONV ? kern_conv_algo(L, x) : CONVALGO_IM2COL,
                   0, 0, 0, 0};
    kernels[L->kind](&k);
    return 0;
}

size_t kern_workspace_band(const net *n, int layer, int h0, int nh, int w0, int nw)
{
    return convalgo_workspace_band(n, layer, h0, nh, w0, nw, kern_conv_rule());
}

int kern_run_band(const net *n, int layer, int h0, int nh, int w0, int nw,
                  const float *const *inputs, const float *weights, float *out, float *workspace,
                  char *err)
{
    if (layer < 0 || layer >= n->n) {
        base_seterr(err, "net %s: no layer %d", n->name, layer);
        return -1;
    }
    const net_layer *L = &n->layers[layer];
    if (h0 < 0 || nh < 1 || h0 + nh > L->out.h) {
        base_seterr(err, "layer %s: rows [%d, %d) outside [0, %d)", L->name, h0, h0 + nh,
                 L->out.h);
        return -1;
    }
    if (w0 < 0 || nw < 1 || w0 + nw > L->out.w) {
        base_seterr(err, "layer %s: columns [%d, %d) outside [0, %d)", L->name, w0, w0 + nw,
                    L->out.w);
        return -1;
    }
    if ((nh != L->out.h && !net_layer_rowsplit(n, layer)) ||
        (nw != L->out.w && !net_layer_colsplit(n, layer))) {
        base_seterr(err, "layer %s: %s computes only whole outputs, not rows [%d, %d) x "
                    "columns [%d, %d)", L->name, net_kind_name(L->kind), h0, h0 + nh, w0, w0 + nw);
        return -1;
    }
    if (net_slice_weights(n, layer, 0, L->out.c) > 0 && !weights) {
        base_seterr(err, "layer %s: weights missing", L->name);
        return -1;
    }
    if (kern_workspace_band(n, layer, h0, nh, w0, nw) > 0 && !workspace) {
        base_seterr(err, "layer %s: workspace missing", L->name);
        return -1;
    }
    net_layer band;
    net_shape bx;
    int r0, q0;
    net_band_layer(n, layer, h0, h0 + nh, w0, w0 + nw, &band, &bx, &r0, &q0);
    /* The whole layer's algorithm on the band's geometry (convalgo.h). */
    kern_args k = {n, layer, &band, bx, 0, L->out.c, (size_t)nh * nw, inputs, weights,
                   out, workspace,
                   L->kind == NET_CONV ? kern_conv_algo(L, net_in_shape(n, layer, 0)) : CONVALGO_IM2COL,
                   h0, w0, r0, q0};
    kernels[L->kind](&k);
    return 0;
}

/* ---- whole network ---- */

/* Activation buffers are planned once per model (kern_model_new) and kept:
 * a forward pass then never allocates or page-faults.  Walking the layers
 * in order, a layer's output takes the best-fitting free slot; the kinds
 * with NET_KF_INPLACE (ReLU, BatchNorm, Add, LayerNorm, L2Norm...) write
 * in place over their first input when that is its last use; Flatten and Dropout alias their input.  A slot is free
 * again after the last reader of every tensor living in it. */
struct kern_model {
    const net *n;
    float *all;    /* the whole net's weights (weights.h layout) */
    float **w;     /* per layer: its block in all (NULL if it has none) */
    float *ws;     /* workspace, the largest any layer needs */
    size_t nws;
    int *slot;     /* per layer: the slot holding its output */
    int *alias;    /* per layer: 1 if it computes nothing (output = input) */
    float **slots; /* nslots activation buffers */
    int nslots;
};

void kern_model_free(kern_model *m)
{
    if (!m) return;
    free(m->all);
    if (m->slots)
        for (int s = 0; s < m->nslots; s++) free(m->slots[s]);
    free(m->w);
    free(m->ws);
    free(m->slot);
    free(m->alias);
    free(m->slots);
    free(m);
}

static int in_place_kind(net_kind k) { return (net_kind_info(k)->flags & NET_KF_INPLACE) != 0; }

/* Fill m->slot, m->alias and allocate m->slots; -1 when out of memory. */
static int plan_buffers(kern_model *m)
{
    const net *n = m->n;
    int nn = n->n, rc = -1, ns = 0;
    int *root = malloc((size_t)nn * sizeof *root), *dies = malloc((size_t)nn * sizeof *dies);
    int *busy = calloc((size_t)nn, sizeof *busy);
    size_t *cap = calloc((size_t)nn, sizeof *cap);
    m->slot = malloc((size_t)nn * sizeof *m->slot);
    m->alias = calloc((size_t)nn, sizeof *m->alias);
    if (!root || !dies || !busy || !cap || !m->slot || !m->alias) goto out;
    /* root[i]: the layer that wrote the buffer i reads as its output;
     * dies[r]: the last layer reading r's buffer (nn for the output). */
    for (int i = 0; i < nn; i++) {
        const net_layer *L = &n->layers[i];
        m->alias[i] = (net_kind_info(L->kind)->flags & NET_KF_ALIAS) && L->in[0] != NET_INPUT;
        root[i] = m->alias[i] ? root[L->in[0]] : i;
        dies[i] = -1;
    }
    for (int i = 0; i < nn; i++) {
        int last = net_ncons(n, i) ? -1 : nn;
        for (int k = 0; k < net_ncons(n, i); k++)
            if (net_cons(n, i)[k] > last) last = net_cons(n, i)[k];
        if (last > dies[root[i]]) dies[root[i]] = last;
    }
    for (int i = 0; i < nn; i++) {
        const net_layer *L = &n->layers[i];
        int p0 = L->in[0], s = -1;
        if (m->alias[i]) {
            m->slot[i] = m->slot[root[i]];
            continue;
        }
        size_t need = kern_out_floats(n, i, L->out.c);
        if (in_place_kind(L->kind) && p0 != NET_INPUT && dies[root[p0]] == i) {
            s = m->slot[root[p0]];
        } else {
            int fit = -1, big = -1; /* best fit, else grow the largest free */
            for (int k = 0; k < ns; k++) {
                if (busy[k]) continue;
                if (cap[k] >= need && (fit < 0 || cap[k] < cap[fit])) fit = k;
                if (big < 0 || cap[k] > cap[big]) big = k;
            }
            s = fit >= 0 ? fit : big >= 0 ? big : ns++;
            if (cap[s] < need) cap[s] = need;
        }
        m->slot[i] = s;
        busy[s] = 1;
        for (int k = 0; k < L->nin; k++) {
            int p = L->in[k];
            if (p != NET_INPUT && dies[root[p]] == i && m->slot[root[p]] != s) busy[m->slot[root[p]]] = 0;
        }
    }
    m->nslots = ns;
    if (!(m->slots = calloc((size_t)(ns ? ns : 1), sizeof *m->slots))) goto out;
    for (int k = 0; k < ns; k++)
        if (!(m->slots[k] = malloc(cap[k] * sizeof(float)))) goto out;
    rc = 0;
out:
    free(root);
    free(dies);
    free(busy);
    free(cap);
    return rc;
}

kern_model *kern_model_new(const net *n, uint64_t seed, char *err)
{
    kern_model *m = calloc(1, sizeof *m);
    if (!m || !(m->w = calloc((size_t)n->n, sizeof *m->w))) {
        free(m);
        base_seterr(err, "net %s: out of memory", n->name);
        return NULL;
    }
    m->n = n;
    /* One array in the weights file's layout (a whole layer's slice is its
     * whole block), streamed every inference: huge pages. */
    float *whole = NULL;
    if (!(m->all = kern_alloc_streamed((size_t)weights_total(n)))) {
        base_seterr(err, "net %s: out of memory for its weights", n->name);
        kern_model_free(m);
        return NULL;
    }
    if (weights_in_onnx(n) && !(whole = weights_load(n, err))) {
        kern_model_free(m);
        return NULL;
    }
    int64_t off = 0;
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        m->w[i] = L->weights ? m->all + off : NULL;
        if (L->weights && kern_weights_fill(n, whole, i, 0, L->out.c, seed, m->all + off, err)) {
            free(whole);
            kern_model_free(m);
            return NULL;
        }
        off += L->weights;
        size_t ws = kern_workspace_floats(n, i, L->out.c);
        if (ws > m->nws) m->nws = ws;
    }
    free(whole);
    if ((m->nws && !(m->ws = malloc(m->nws * sizeof *m->ws))) || plan_buffers(m)) {
        base_seterr(err, "net %s: out of memory for activations", n->name);
        kern_model_free(m);
        return NULL;
    }
    return m;
}

int kern_model_forward(kern_model *m, const float *input, float *output,
                       double *layer_seconds, char *err)
{
    const net *n = m->n;
    const float *ins[64];
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        const float **in = L->nin <= 64 ? ins : malloc((size_t)L->nin * sizeof *in);
        if (!in) {
            base_seterr(err, "layer %s: out of memory", L->name);
            return -1;
        }
        for (int k = 0; k < L->nin; k++)
            in[k] = L->in[k] == NET_INPUT ? input : m->slots[m->slot[L->in[k]]];
        double t0 = base_now();
        int r = m->alias[i] ? 0 : kern_run(n, i, 0, L->out.c, in, m->w[i], m->slots[m->slot[i]], m->ws, err);
        if (layer_seconds) layer_seconds[i] = base_now() - t0;
        if (in != ins) free(in);
        if (r) return -1;
    }
    memcpy(output, m->slots[m->slot[n->n - 1]],
           (size_t)net_shape_numel(n->layers[n->n - 1].out) * sizeof *output);
    return 0;
}

int kern_forward(const net *n, uint64_t seed, const float *input, float *output, char *err)
{
    kern_model *m = kern_model_new(n, seed, err);
    if (!m) return -1;
    int rc = kern_model_forward(m, input, output, NULL, err);
    kern_model_free(m);
    return rc;
}

/* ---- calibration helper ---- */

double kern_time_slice(const net *n, int layer, int c0, int nc, uint64_t seed, int reps,
                       char *err)
{
    if (layer < 0 || layer >= n->n || c0 < 0 || nc < 1 || c0 + nc > n->layers[layer].out.c ||
        reps < 1) {
        base_seterr(err, "net %s: bad slice to time (layer %d, channels [%d, %d), %d reps)",
                 n->name, layer, c0, c0 + nc, reps);
        return -1;
    }
    const net_layer *L = &n->layers[layer];
    int nin = L->nin;
    double res = -1, *t = malloc((size_t)reps * sizeof *t);
    const float **ins = malloc((size_t)nin * sizeof *ins);
    float **inbuf = calloc((size_t)nin, sizeof *inbuf);
    size_t nw = (size_t)net_slice_weights(n, layer, c0, nc);
    size_t nws = kern_workspace_floats(n, layer, nc);
    float *w = malloc((nw ? nw : 1) * sizeof *w), *ws = malloc((nws ? nws : 1) * sizeof *ws);
    float *out = malloc(kern_out_floats(n, layer, nc) * sizeof *out);
    if (!t || !ins || !inbuf || !w || !ws || !out) goto nomem;
    for (int k = 0; k < nin; k++) {
        net_shape s = net_in_shape(n, layer, k);
        int a0, a1; /* the channels the slice reads (kernels.h) */
        net_chans_in(n, layer, k, c0, c0 + nc, &a0, &a1);
        size_t len = (size_t)(a1 - a0) * s.h * s.w;
        if (!(inbuf[k] = malloc(len * sizeof(float)))) goto nomem;
        /* Inputs of O(1) magnitude, no denormals: a fixed pattern is enough. */
        for (size_t e = 0; e < len; e++) inbuf[k][e] = (float)((e * 2654435761u + k) % 2001) / 1000.0f - 1.0f;
        ins[k] = inbuf[k];
    }
    if (nw) kern_weights_gen(n, layer, c0, nc, seed, w);
    if (kern_run(n, layer, c0, nc, ins, w, out, ws, err)) goto done;
    for (int r = 0; r < reps; r++) {
        double t0 = base_now();
        kern_run(n, layer, c0, nc, ins, w, out, ws, err);
        t[r] = base_now() - t0;
    }
    res = base_median(t, reps);
    goto done;
nomem:
    base_seterr(err, "layer %s: out of memory for timing", L->name);
done:
    for (int k = 0; inbuf && k < nin; k++) free(inbuf[k]);
    free(inbuf);
    free(ins);
    free(t);
    free(w);
    free(ws);
    free(out);
    return res;
}
