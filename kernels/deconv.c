/* deconv.c -- ConvTranspose slices (the transposed convolution of U-Nets'
 * and decoders' learned upsampling).
 *
 * Per group the slice touches and per band of input rows
 * (convalgo_deconv_band_rows of the whole layer, model/convalgo.h; a band
 * of output rows or columns, net_band_layer, reads a box of the input and
 * has its pads moved so that the box's rows land where the whole layer's
 * land: its products start where the whole layer's do), one matrix product
 *     col = A (rows (oc, ky, kx) of the slice's part of the group, cin_g
 *              columns: the weight layout w[nc][kh][kw][in_c/groups] makes
 *              it a plain row-major matrix)
 *         x X (the group's cin_g input channels, the band's pixels: rows of
 *              the input tensor itself, no copy)
 * then every column value added into the output pixel it lands on:
 * input (iy, ix) with tap (ky, kx) reaches output (iy sh - pt + ky dh,
 * ix sw - pl + kx dw), dropped outside the output (the pads crop).
 * Output rows and columns no input reaches (output_padding) keep the bias.
 *
 * Invariant (kernels.h's slice equivalence): output channel oc reads only
 * its own weight rows and its group's input channels, the band rows come
 * from the whole layer's shape, and each output element receives its
 * contributions in one order (bands, then taps, then input pixels) on one
 * thread, whatever the slice: a slice equals the whole layer's channels,
 * and a band its rows, bit for bit (but for a BLAS's order of summation
 * on a narrower product).
 */
#include <string.h>

#include "convalgo.h"
#include "kern_impl.h"

/* Input columns [lo, hi) whose tap at offset `off` (kx dw - pl) lands
 * inside [0, ow): 0 <= ix sw + off < ow. */
static void landing_cols(int W, int ow, int sw, int off, int *lo, int *hi)
{
    int l = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int h = ow - 1 - off < 0 ? 0 : (ow - 1 - off) / sw + 1;
    if (h > W) h = W;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

typedef struct {
    const net_attr *a;
    const float *col; /* rows (oc - lo, ky, kx) x n pixels of the band */
    float *out;       /* channel lo's output plane */
    int W, iy0, iy1, oh, ow;
} scatter_job;

/* Output channels [o0, o1) of the band (relative to the group part's
 * first): add their column rows into their planes. */
static void scatter_channels(void *ctx, int o0, int o1)
{
    const scatter_job *j = ctx;
    const net_attr *a = j->a;
    int kk = a->kh * a->kw, n = (j->iy1 - j->iy0) * j->W;
    size_t plane = (size_t)j->oh * j->ow;
    for (int o = o0; o < o1; o++) {
        float *y = j->out + (size_t)o * plane;
        for (int ky = 0; ky < a->kh; ky++)
            for (int kx = 0; kx < a->kw; kx++) {
                const float *c = j->col + ((size_t)o * kk + (size_t)ky * a->kw + kx) * n;
                int off = kx * a->dw - a->pl, lo, hi;
                landing_cols(j->W, j->ow, a->sw, off, &lo, &hi);
                for (int iy = j->iy0; iy < j->iy1; iy++) {
                    int oy = iy * a->sh - a->pt + ky * a->dh;
                    if (oy < 0 || oy >= j->oh) continue;
                    const float *src = c + (size_t)(iy - j->iy0) * j->W;
                    float *row = y + (size_t)oy * j->ow;
                    if (a->sw == 1) {
                        float *d = row + (lo + off);
                        const float *s = src + lo;
                        for (int i = 0; i < hi - lo; i++) d[i] += s[i];
                    } else {
                        for (int ix = lo; ix < hi; ix++) row[ix * a->sw + off] += src[ix];
                    }
                }
            }
    }
}

void kern_deconv(const net_layer *L, net_shape x, int band, int iy0, int c0, int nc,
                 const float *in, const float *w, float *out, float *ws)
{
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups, kk = a->kh * a->kw;
    int K = kk * cin_g, oh = L->out.h, ow = L->out.w;
    size_t ohw = (size_t)oh * ow, plane = (size_t)x.h * x.w;
    for (int k = 0; k < nc; k++) {
        float b = a->bias ? w[(size_t)nc * K + k] : 0.0f;
        float *o = out + (size_t)k * ohw;
        if (b == 0.0f) memset(o, 0, ohw * sizeof *o);
        else for (size_t i = 0; i < ohw; i++) o[i] = b;
    }
    int g0 = c0 / cout_g;
    for (int g = g0; g * cout_g < c0 + nc; g++) {
        int lo = g * cout_g > c0 ? g * cout_g : c0;
        int hi = (g + 1) * cout_g < c0 + nc ? (g + 1) * cout_g : c0 + nc;
        const float *A = w + (size_t)(lo - c0) * K;
        const float *gin = in + (size_t)(g - g0) * cin_g * plane; /* in starts at group g0 */
        /* Products over the whole input's bands [k band, (k+1) band), cut
         * to x's rows (a band's box starts at whole row iy0). */
        for (int b0 = 0; b0 < x.h; b0 = (b0 + iy0) / band * band + band - iy0) {
            int b1 = (b0 + iy0) / band * band + band - iy0;
            if (b1 > x.h) b1 = x.h;
            int nb = (b1 - b0) * x.w;
            kern_sgemm((hi - lo) * kk, nb, cin_g, A, cin_g, gin + (size_t)b0 * x.w, (int)plane, 0,
                       ws, nb);
            scatter_job j = {a, ws, out + (size_t)(lo - c0) * ohw, x.w, b0, b1, oh, ow};
            kern_parallel_for(hi - lo, (double)(hi - lo) * kk * nb, scatter_channels, &j);
        }
    }
}
