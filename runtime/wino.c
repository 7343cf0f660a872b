/* wino.c -- 3x3 stride-1 convolution by Winograd's minimal filtering
 * F(2x2, 3x3) (Lavin & Gray 2016): each 2x2 output tile costs 16
 * multiplies per (input, output) channel pair instead of 36, done as 16
 * SGEMMs [nc x C] x [C x tiles], one per point of the 4x4 transform domain.
 *
 *   U = G g G^T   (weights, 4x4 per channel pair, computed per call)
 *   V = B^T d B   (4x4 input tile d, zero outside the input)
 *   M_p = U_p V_p (the SGEMMs), Y = A^T M A (the 2x2 output tile)
 *
 * Invariant: output channel oc reads only weight row oc - c0 (and its
 * bias), and the transforms of one output element are the same whatever
 * the slice, so slices concatenate to the whole layer like the im2col path
 * (kernels.h).  Whether a layer takes this path depends on its shape only
 * (kern_wino_applies), never on the slice, for the same reason.  The
 * transforms' coefficients are 0, +-1 and +-1/2, exact in float; results
 * differ from the direct sum by float rounding only (tests/runtime).
 */
#include <cblas.h>
#include <string.h>

#include "kern_impl.h"
#include "kernels.h"

/* Tiles per band: V is 16 x C x tiles, M 16 x nc x tiles; about 2 Mi floats
 * of V keeps the SGEMMs' N in the hundreds while bounding the scratch. */
#define WINO_BAND_FLOATS (2 * 1024 * 1024)

static int wino_on = 1;

void kern_set_winograd(int on) { wino_on = on != 0; }

int kern_wino_applies(const net_layer *L, net_shape x)
{
    if (!wino_on) return 0;
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    /* Few channels or a small map (14x14 and below): the transforms, the
     * SGEMMs' short N and the 16 repacks of U eat the saving (measured on
     * vgg16 and resnet50, bench/README.md). */
    return a->kh == 3 && a->kw == 3 && a->sh == 1 && a->sw == 1 && a->dh == 1 && a->dw == 1 &&
           cin_g >= 16 && cout_g >= 16 && L->out.h * L->out.w >= 400;
}

static int band_tiles(int cin_g, int tx, int ty)
{
    long rows = WINO_BAND_FLOATS / (16L * cin_g * tx);
    if (rows < 1) rows = 1;
    return (int)(rows > ty ? ty : rows) * tx;
}

/* Scratch: U for min(nc, cout_g) rows, V and M for one band. */
size_t kern_wino_workspace(const net_layer *L, net_shape x, int nc)
{
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    int m = nc < cout_g ? nc : cout_g;
    int tx = (L->out.w + 1) / 2, ty = (L->out.h + 1) / 2, tb = band_tiles(cin_g, tx, ty);
    return 16 * ((size_t)m * cin_g + (size_t)cin_g * tb + (size_t)m * tb);
}

typedef struct {
    const float *w; /* rows of the group part, 9 * cin_g floats each */
    float *U;       /* [16][m][cin_g] */
    int m, cin_g;
} wtrans_job;

/* U = G g G^T with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], for
 * output rows [k0, k1), across input channels (deinterleaved from the
 * [c][3][3] rows first so that every loop is contiguous). */
static void weight_transform(void *ctx, int k0, int k1)
{
    const wtrans_job *j = ctx;
    size_t plane = (size_t)j->m * j->cin_g;
    for (int k = k0; k < k1; k++)
        for (int c0 = 0; c0 < j->cin_g; c0 += 64) {
            int n = j->cin_g - c0 < 64 ? j->cin_g - c0 : 64;
            const float *g = j->w + ((size_t)k * j->cin_g + c0) * 9;
            float gi[9][64], t[4][3][64];
            for (int c = 0; c < n; c++)
                for (int i = 0; i < 9; i++) gi[i][c] = g[c * 9 + i];
            for (int col = 0; col < 3; col++)
                for (int c = 0; c < n; c++) {
                    float g0 = gi[col][c], g1 = gi[3 + col][c], g2 = gi[6 + col][c];
                    t[0][col][c] = g0;
                    t[1][col][c] = 0.5f * (g0 + g1 + g2);
                    t[2][col][c] = 0.5f * (g0 - g1 + g2);
                    t[3][col][c] = g2;
                }
            float *u = j->U + (size_t)k * j->cin_g + c0;
            for (int r = 0; r < 4; r++) {
                float *u0 = u + (size_t)(4 * r) * plane, *u1 = u0 + plane, *u2 = u1 + plane, *u3 = u2 + plane;
                for (int c = 0; c < n; c++) {
                    u0[c] = t[r][0][c];
                    u1[c] = 0.5f * (t[r][0][c] + t[r][1][c] + t[r][2][c]);
                    u2[c] = 0.5f * (t[r][0][c] - t[r][1][c] + t[r][2][c]);
                    u3[c] = t[r][2][c];
                }
            }
        }
}

/* Tiles transformed together: the transforms run across tiles so that
 * every inner loop is a contiguous, vectorisable loop. */
#define CHUNK 64

typedef struct {
    const float *in; /* the group's first input channel */
    float *V;        /* [16][cin_g][nt] */
    int H, W, pt, pl, tx, ty0, nt, cin_g;
} itrans_job;

/* V = B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], for
 * input channels [c0, c1) and the band's tiles.  For each tile row, each
 * of its four input rows is split into even and odd columns of a zero-
 * padded copy (column ix sits at ix + pl), so that tile t's row is
 * (e[t], o[t], e[t+1], o[t+1]) and d B is four vector operations. */
static void input_transform(void *ctx, int c0, int c1)
{
    const itrans_job *j = ctx;
    size_t plane = (size_t)j->cin_g * j->nt;
    for (int c = c0; c < c1; c++) {
        const float *src = j->in + (size_t)c * j->H * j->W;
        for (int t0 = 0; t0 < j->nt; t0 += j->tx) {
            int ty = j->ty0 + t0 / j->tx;
            for (int x0 = 0; x0 < j->tx; x0 += CHUNK) {
                int n = j->tx - x0 < CHUNK ? j->tx - x0 : CHUNK;
                float h[4][4][CHUNK]; /* [input row][column of d B][tile] */
                for (int r = 0; r < 4; r++) {
                    float e[CHUNK + 1], o[CHUNK + 1];
                    int iy = 2 * ty - j->pt + r;
                    const float *row = src + (size_t)iy * j->W;
                    int inside = iy >= 0 && iy < j->H;
                    for (int t = 0; t <= n; t++) {
                        int ix = 2 * (x0 + t) - j->pl;
                        e[t] = inside && ix >= 0 && ix < j->W ? row[ix] : 0.0f;
                        o[t] = inside && ix + 1 >= 0 && ix + 1 < j->W ? row[ix + 1] : 0.0f;
                    }
                    for (int t = 0; t < n; t++) {
                        h[r][0][t] = e[t] - e[t + 1];
                        h[r][1][t] = o[t] + e[t + 1];
                        h[r][2][t] = e[t + 1] - o[t];
                        h[r][3][t] = o[t] - o[t + 1];
                    }
                }
                float *v = j->V + (size_t)c * j->nt + t0 + x0;
                for (int q = 0; q < 4; q++) {
                    float *v0 = v + (size_t)q * plane, *v1 = v0 + 4 * plane;
                    float *v2 = v1 + 4 * plane, *v3 = v2 + 4 * plane;
                    for (int t = 0; t < n; t++) {
                        v0[t] = h[0][q][t] - h[2][q][t];
                        v1[t] = h[1][q][t] + h[2][q][t];
                        v2[t] = h[2][q][t] - h[1][q][t];
                        v3[t] = h[1][q][t] - h[3][q][t];
                    }
                }
            }
        }
    }
}

typedef struct {
    const float *M; /* [16][m][nt] */
    const float *bias; /* m floats or NULL */
    float *out;     /* the group part's first output channel */
    int m, oh, ow, tx, ty0, nt;
} otrans_job;

/* Y = A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], plus the bias, across the
 * tiles of a tile row; edge tiles write only what lies in the output. */
static void output_transform(void *ctx, int k0, int k1)
{
    const otrans_job *j = ctx;
    size_t plane = (size_t)j->m * j->nt;
    for (int k = k0; k < k1; k++) {
        float b = j->bias ? j->bias[k] : 0.0f;
        float *o = j->out + (size_t)k * j->oh * j->ow;
        for (int t0 = 0; t0 < j->nt; t0 += j->tx) {
            int oy = 2 * (j->ty0 + t0 / j->tx);
            for (int x0 = 0; x0 < j->tx; x0 += CHUNK) {
                int n = j->tx - x0 < CHUNK ? j->tx - x0 : CHUNK;
                const float *mk = j->M + (size_t)k * j->nt + t0 + x0;
                float s[2][4][CHUNK], y[2][2][CHUNK];
                for (int q = 0; q < 4; q++) {
                    const float *m0 = mk + (size_t)q * plane, *m1 = m0 + 4 * plane;
                    const float *m2 = m1 + 4 * plane, *m3 = m2 + 4 * plane;
                    for (int t = 0; t < n; t++) {
                        s[0][q][t] = m0[t] + m1[t] + m2[t];
                        s[1][q][t] = m1[t] - m2[t] - m3[t];
                    }
                }
                for (int r = 0; r < 2; r++)
                    for (int t = 0; t < n; t++) {
                        y[r][0][t] = b + (s[r][0][t] + s[r][1][t] + s[r][2][t]);
                        y[r][1][t] = b + (s[r][1][t] - s[r][2][t] - s[r][3][t]);
                    }
                for (int r = 0; r < 2 && oy + r < j->oh; r++) {
                    float *row = o + (size_t)(oy + r) * j->ow + 2 * x0;
                    int full = 2 * (x0 + n) <= j->ow ? n : n - 1; /* odd width: last tile half */
                    for (int t = 0; t < full; t++) {
                        row[2 * t] = y[r][0][t];
                        row[2 * t + 1] = y[r][1][t];
                    }
                    if (full < n) row[2 * full] = y[r][0][full];
                }
            }
        }
    }
}

void kern_wino(const net_layer *L, net_shape x, int c0, int nc, const float *in, const float *w,
               float *out, float *ws)
{
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    int oh = L->out.h, ow = L->out.w, tx = (ow + 1) / 2, ty = (oh + 1) / 2;
    int tb = band_tiles(cin_g, tx, ty), mmax = nc < cout_g ? nc : cout_g;
    size_t K = (size_t)cin_g * 9, plane = (size_t)x.h * x.w, ohw = (size_t)oh * ow;
    float *U = ws, *V = U + 16 * (size_t)mmax * cin_g, *M = V + 16 * (size_t)cin_g * tb;
    const float *bias = a->bias ? w + (size_t)nc * K : NULL;

    for (int g = c0 / cout_g; g * cout_g < c0 + nc; g++) {
        int lo = g * cout_g > c0 ? g * cout_g : c0;
        int hi = (g + 1) * cout_g < c0 + nc ? (g + 1) * cout_g : c0 + nc, m = hi - lo;
        const float *gin = in + (size_t)g * cin_g * plane;
        wtrans_job wj = {w + (size_t)(lo - c0) * K, U, m, cin_g};
        kern_parallel_for(m, 64.0 * m * cin_g, weight_transform, &wj);
        for (int t0 = 0; t0 < tx * ty; t0 += tb) {
            int nt = tx * ty - t0 < tb ? tx * ty - t0 : tb, ty0 = t0 / tx;
            itrans_job ij = {gin, V, x.h, x.w, a->pt, a->pl, tx, ty0, nt, cin_g};
            kern_parallel_for(cin_g, 48.0 * cin_g * nt, input_transform, &ij);
            for (int p = 0; p < 16; p++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nt, cin_g, 1.0f,
                            U + (size_t)p * m * cin_g, cin_g, V + (size_t)p * cin_g * nt, nt, 0.0f,
                            M + (size_t)p * m * nt, nt);
            otrans_job oj = {M, bias ? bias + (lo - c0) : NULL, out + (size_t)(lo - c0) * ohw,
                             m, oh, ow, tx, ty0, nt};
            kern_parallel_for(m, 40.0 * m * nt, output_transform, &oj);
        }
    }
}
