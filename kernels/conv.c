/* conv.c -- Conv and FC slices on top of CBLAS.
 *
 * Conv: the algorithm is model/convalgo.h's rule (the one the cost model
 * charges), applied per group touched by the slice [c0, c0+nc):
 *  - WINO2 / WINO4: Winograd (wino.c);
 *  - DIRECT (groups with one input channel each: depthwise, or a depth
 *    multiplier): a direct loop per output channel;
 *  - GEMV (one output pixel): its input column (the input itself when
 *    the kernel reads just that pixel, else gathered into the workspace)
 *    times the slice's weights, one SGEMV as FC;
 *  - POINTWISE (1x1, stride 1, no padding): one SGEMM straight on the
 *    input, which is already the (in_c/groups) x (H*W) matrix;
 *  - IM2COL: im2col into the workspace, a band of output rows at a time
 *    (convalgo_im2col_band_rows, so the scratch stays cache-sized), and
 *    one SGEMM per band.
 * The output rows of the slice are first set to the bias (or zero) and the
 * SGEMMs accumulate with beta = 1.  Output channel oc only ever reads weight
 * row oc - c0 and its group's input channels, so a slice computes exactly
 * the rows of the whole layer (the slice-equivalence invariant of kernels.h).
 * FC: y = W x + b with SGEMV on the slice's rows.
 */
#include <cblas.h>
#include <string.h>

#include "convalgo.h"
#include "kern_impl.h"

size_t kern_conv_workspace(const net_layer *L, net_shape x, int nc)
{
    return convalgo_workspace(L, x, nc, kern_conv_algo(L, x));
}

/* Output columns [lo, hi) of a kernel column with input offset xoff read
 * inside [0, W): ox*sw + xoff in [0, W). */
static void valid_cols(int W, int ow, int sw, int xoff, int *lo, int *hi)
{
    int l = xoff >= 0 ? 0 : (-xoff + sw - 1) / sw;
    int h = W - 1 - xoff < 0 ? 0 : (W - 1 - xoff) / sw + 1;
    if (l > ow) l = ow;
    if (h > ow) h = ow;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

typedef struct {
    const float *in; /* the group's first input channel */
    int H, W, kh, kw, sh, sw, dh, dw, pt, pl;
    int oy0, oy1, ow;
    float *col; /* K x nb, row-major */
} im2col_job;

/* Rows [r0, r1) of the column matrix; row r = (channel, ki, kj). */
static void im2col_rows(void *ctx, int r0, int r1)
{
    const im2col_job *j = ctx;
    int nb = (j->oy1 - j->oy0) * j->ow, kk = j->kh * j->kw;
    for (int r = r0; r < r1; r++) {
        int c = r / kk, ki = r % kk / j->kw, kj = r % j->kw;
        int xoff = kj * j->dw - j->pl, lo, hi;
        valid_cols(j->W, j->ow, j->sw, xoff, &lo, &hi);
        const float *plane = j->in + (size_t)c * j->H * j->W;
        float *dst = j->col + (size_t)r * nb;
        for (int oy = j->oy0; oy < j->oy1; oy++, dst += j->ow) {
            int iy = oy * j->sh - j->pt + ki * j->dh;
            if (iy < 0 || iy >= j->H) {
                memset(dst, 0, (size_t)j->ow * sizeof *dst);
                continue;
            }
            const float *src = plane + (size_t)iy * j->W + xoff;
            if (lo > 0) memset(dst, 0, (size_t)lo * sizeof *dst);
            if (j->sw == 1) {
                memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *dst);
            } else {
                for (int ox = lo; ox < hi; ox++) dst[ox] = src[ox * j->sw];
            }
            if (hi < j->ow) memset(dst + hi, 0, (size_t)(j->ow - hi) * sizeof *dst);
        }
    }
}

typedef struct {
    const float *in; /* the input channels the slice reads: from group c0 / cout_g on */
    const float *w;  /* slice weights, K floats per output channel */
    float *out;      /* slice output */
    int c0, cout_g, H, W, oh, ow;
    const net_attr *a;
} direct_job;

/* Output channels [c0 + k0, c0 + k1) of a conv with one input channel per
 * group: output channel oc reads input channel oc / cout_g. */
static void direct_channels(void *ctx, int k0, int k1)
{
    const direct_job *j = ctx;
    const net_attr *a = j->a;
    int g0 = j->c0 / j->cout_g;
    /* A kernel column's valid output columns depend on the column only:
     * found once here, not per row and channel (two divisions each, most
     * of the time of a 5x5 kernel on a 7x7 map). */
    enum { KW_MAX = 32 };
    int lo_of[KW_MAX], hi_of[KW_MAX], hoisted = a->kw <= KW_MAX;
    for (int kj = 0; hoisted && kj < a->kw; kj++)
        valid_cols(j->W, j->ow, a->sw, kj * a->dw - a->pl, &lo_of[kj], &hi_of[kj]);
    for (int k = k0; k < k1; k++) {
        int oc = j->c0 + k;
        const float *plane = j->in + (size_t)(oc / j->cout_g - g0) * j->H * j->W;
        const float *wk = j->w + (size_t)k * a->kh * a->kw;
        float *o = j->out + (size_t)k * j->oh * j->ow;
        for (int oy = 0; oy < j->oh; oy++) {
            float *orow = o + (size_t)oy * j->ow;
            for (int ki = 0; ki < a->kh; ki++) {
                int iy = oy * a->sh - a->pt + ki * a->dh;
                if (iy < 0 || iy >= j->H) continue;
                const float *irow = plane + (size_t)iy * j->W;
                for (int kj = 0; kj < a->kw; kj++) {
                    float wv = wk[ki * a->kw + kj];
                    int xoff = kj * a->dw - a->pl, lo, hi;
                    if (hoisted) lo = lo_of[kj], hi = hi_of[kj];
                    else valid_cols(j->W, j->ow, a->sw, xoff, &lo, &hi);
                    const float *src = irow + xoff;
                    if (a->sw == 1)
                        for (int ox = lo; ox < hi; ox++) orow[ox] += wv * src[ox];
                    else
                        for (int ox = lo; ox < hi; ox++) orow[ox] += wv * src[ox * a->sw];
                }
            }
        }
    }
}

void kern_conv(const net_layer *L, net_shape x, convalgo alg, int c0, int nc, const float *in,
               const float *w, float *out, float *ws)
{
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    int K = cin_g * a->kh * a->kw, oh = L->out.h, ow = L->out.w;
    size_t ohw = (size_t)oh * ow, plane = (size_t)x.h * x.w;

    if (alg == CONVALGO_WINO2 || alg == CONVALGO_WINO4) {
        kern_wino(L, x, alg, c0, nc, in, w, out, ws);
        return;
    }
    for (int k = 0; k < nc; k++) {
        float b = a->bias ? w[(size_t)nc * K + k] : 0.0f;
        float *o = out + (size_t)k * ohw;
        if (b == 0.0f) memset(o, 0, ohw * sizeof *o);
        else for (size_t i = 0; i < ohw; i++) o[i] = b;
    }
    if (alg == CONVALGO_DIRECT) {
        direct_job j = {in, w, out, c0, cout_g, x.h, x.w, oh, ow, a};
        kern_parallel_for(nc, (double)nc * ohw * K, direct_channels, &j);
        return;
    }
    int band = convalgo_im2col_band_rows(K, cout_g, oh, ow), g0 = c0 / cout_g;
    for (int g = g0; g * cout_g < c0 + nc; g++) {
        int lo = g * cout_g > c0 ? g * cout_g : c0;
        int hi = (g + 1) * cout_g < c0 + nc ? (g + 1) * cout_g : c0 + nc;
        const float *A = w + (size_t)(lo - c0) * K;
        const float *gin = in + (size_t)(g - g0) * cin_g * plane; /* in starts at group g0 */
        float *C = out + (size_t)(lo - c0) * ohw;
        if (alg == CONVALGO_POINTWISE) {
            kern_sgemm(hi - lo, (int)ohw, K, A, K, gin, (int)ohw, 1, C, (int)ohw);
            continue;
        }
        if (alg == CONVALGO_GEMV) { /* one output pixel: its column times the weights */
            const float *col = gin;
            if (convalgo_gemv_gathers(L, x)) { /* gather it (ws: K floats) */
                im2col_job j = {gin, x.h, x.w, a->kh, a->kw, a->sh, a->sw, a->dh, a->dw,
                                a->pt, a->pl, 0, 1, 1, ws};
                im2col_rows(&j, 0, K);
                col = ws;
            }
            cblas_sgemv(CblasRowMajor, CblasNoTrans, hi - lo, K, 1.0f, A, K, col, 1, 1.0f, C, 1);
            continue;
        }
        for (int oy0 = 0; oy0 < oh; oy0 += band) {
            int oy1 = oy0 + band < oh ? oy0 + band : oh, nb = (oy1 - oy0) * ow;
            im2col_job j = {gin, x.h, x.w, a->kh, a->kw, a->sh, a->sw, a->dh, a->dw,
                            a->pt, a->pl, oy0, oy1, ow, ws};
            kern_parallel_for(K, (double)K * nb, im2col_rows, &j);
            kern_sgemm(hi - lo, nb, K, A, K, ws, nb, 1, C + (size_t)oy0 * ow, (int)ohw);
        }
    }
}

void kern_fc(const net_layer *L, net_shape x, int nc, const float *in, const float *w,
             float *out)
{
    int nin = (int)net_shape_numel(x);
    for (int k = 0; k < nc; k++) out[k] = L->a.bias ? w[(size_t)nc * nin + k] : 0.0f;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, nc, nin, 1.0f, w, nin, in, 1, 1.0f, out, 1);
}
