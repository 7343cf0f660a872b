/* wino.c -- 3x3 stride-1 convolution by Winograd's minimal filtering
 * (Lavin & Gray 2016) in two sizes:
 *   F(2x2, 3x3): 4x4 transform domain, 16 multiplies per 2x2 output tile
 *                and channel pair instead of 36 (2.25x fewer);
 *   F(4x4, 3x3): 6x6 domain (points 0, +-1, +-2), 36 multiplies per 4x4
 *                tile instead of 144 (4x fewer), larger transforms.
 * Either way the products are alpha^2 SGEMMs [nc x C] x [C x tiles], one
 * per point of the alpha x alpha transform domain:
 *
 *   U = G g G^T   (weights, alpha x alpha per channel pair, per call and
 *                 per block of output channels, so that it stays in L2;
 *                 once per group where one block holds the group's part)
 *   V = B^T d B   (alpha x alpha input tile d, zero outside the input)
 *   M_p = U_p V_p (the SGEMMs), Y = A^T M A (the m x m output tile)
 *
 * Invariant: output channel oc reads only weight row oc - c0 (and its
 * bias), and the transforms of one output element are the same whatever
 * the slice, so slices concatenate to the whole layer like the im2col path
 * (kernels.h).  Which path a layer takes depends on its shape only
 * (kern_wino_variant), never on the slice, for the same reason.  F(2x2)'s
 * coefficients are 0, +-1, +-1/2, exact in float; F(4x4)'s G has 1/6 and
 * 1/24, so its results differ from the direct sum by a few more roundings
 * (tests/kernels bounds both against a naive convolution).
 */
#include <string.h>

#include "convalgo.h"
#include "kern_impl.h"
#include "kernels.h"

/* The rule this process's kernels follow: the platform's (kern_set_conv_rule)
 * with the override of kern_set_winograd. */
static convalgo_rule rule = CONVALGO_RULE_DEFAULT;

void kern_set_winograd(int mode) { rule.wino_force = mode == 2 || mode == 4 ? mode : mode ? 0 : -1; }

void kern_set_conv_rule(const convalgo_rule *r)
{
    rule.wino2_max_pairs = r ? r->wino2_max_pairs : 0; /* the override stays */
}

const convalgo_rule *kern_conv_rule(void) { return &rule; }

convalgo kern_conv_algo(const net_layer *L, net_shape x) { return convalgo_pick(L, x, &rule); }

/* Tiles transformed together: the transforms run across tiles so that
 * every inner loop is a contiguous, vectorisable loop. */
#define CHUNK 64

typedef struct variant variant;

typedef struct {
    const variant *v;
    const float *w; /* rows of the group part, 9 * cin_g floats each */
    float *U;       /* [alpha^2][m][cin_g] */
    int m, cin_g;
} wtrans_job;

typedef struct {
    const variant *v;
    const float *in; /* the group's first input channel */
    float *V;        /* [alpha^2][cin_g][nt] */
    int H, W, pt, pl, tx, ty0, nt, cin_g;
} itrans_job;

typedef struct {
    const variant *v;
    const float *M;    /* [alpha^2][m][nt] */
    const float *bias; /* m floats or NULL */
    float *out;        /* the group part's first output channel */
    int m, oh, ow, tx, ty0, nt;
} otrans_job;

/* What a size contributes: the three transforms on one chunk, each across
 * up to 64 channels (weights) or CHUNK tiles (input, output).
 *   wchunk: gi = the 3x3 weights of n channels (gi[3r+c][channel]) -> U
 *           entries at u[p * plane + channel] for every point p;
 *   ichunk: V of tiles x0.. x0+n-1 of tile row ty of input plane src, at
 *           v[p * plane + tile];
 *   ochunk: output tile row ty, tiles x0.., of one output channel o from
 *           mk[p * plane + tile], plus the bias b. */
struct variant {
    int m, alpha; /* output tile m x m, transform domain alpha x alpha */
    void (*wchunk)(float gi[9][64], int n, float *u, size_t plane);
    void (*ichunk)(const itrans_job *j, const float *src, int ty, int x0, int n, float *v, size_t plane);
    void (*ochunk)(const otrans_job *j, const float *mk, size_t plane, float b, float *o, int ty,
                   int x0, int n);
};

/* Store one output tile row (`width` outputs per tile, n tiles) of y into
 * row, writing only what lies inside the output's ow columns. */
static void store_row(float *row, int width, int x0, int n, int ow, float y[][CHUNK])
{
    for (int t = 0; t < n; t++) {
        int ox = width * (x0 + t);
        for (int c = 0; c < width && ox + c < ow; c++) row[ox + c] = y[c][t];
    }
}

/* ---------------- the loops both sizes share ---------------- */

/* U for output rows [k0, k1), 64 input channels at a time, deinterleaved
 * from [c][3][3] first so that every loop of wchunk is contiguous. */
static void wtrans(void *ctx, int k0, int k1)
{
    const wtrans_job *j = ctx;
    size_t plane = (size_t)j->m * j->cin_g;
    for (int k = k0; k < k1; k++)
        for (int c0 = 0; c0 < j->cin_g; c0 += 64) {
            int n = j->cin_g - c0 < 64 ? j->cin_g - c0 : 64;
            const float *g = j->w + ((size_t)k * j->cin_g + c0) * 9;
            float gi[9][64];
            for (int c = 0; c < n; c++)
                for (int i = 0; i < 9; i++) gi[i][c] = g[c * 9 + i];
            j->v->wchunk(gi, n, j->U + (size_t)k * j->cin_g + c0, plane);
        }
}

/* V for input channels [c0, c1) and the band's tiles, CHUNK tiles of a
 * tile row at a time: the transforms run across tiles so that every inner
 * loop is a contiguous, vectorisable loop. */
static void itrans(void *ctx, int c0, int c1)
{
    const itrans_job *j = ctx;
    size_t plane = (size_t)j->cin_g * j->nt;
    for (int c = c0; c < c1; c++) {
        const float *src = j->in + (size_t)c * j->H * j->W;
        for (int t0 = 0; t0 < j->nt; t0 += j->tx)
            for (int x0 = 0; x0 < j->tx; x0 += CHUNK)
                j->v->ichunk(j, src, j->ty0 + t0 / j->tx, x0, j->tx - x0 < CHUNK ? j->tx - x0 : CHUNK,
                             j->V + (size_t)c * j->nt + t0 + x0, plane);
    }
}

/* Y for output channels [k0, k1) of the block and the band's tiles. */
static void otrans(void *ctx, int k0, int k1)
{
    const otrans_job *j = ctx;
    size_t plane = (size_t)j->m * j->nt;
    for (int k = k0; k < k1; k++) {
        float b = j->bias ? j->bias[k] : 0.0f;
        float *o = j->out + (size_t)k * j->oh * j->ow;
        for (int t0 = 0; t0 < j->nt; t0 += j->tx)
            for (int x0 = 0; x0 < j->tx; x0 += CHUNK)
                j->v->ochunk(j, j->M + (size_t)k * j->nt + t0 + x0, plane, b, o, j->ty0 + t0 / j->tx,
                             x0, j->tx - x0 < CHUNK ? j->tx - x0 : CHUNK);
    }
}

/* ---------------- F(2x2, 3x3) ---------------- */

/* U = G g G^T with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. */
static void wchunk2(float gi[9][64], int n, float *u, size_t plane)
{
    float t[4][3][64];
    for (int col = 0; col < 3; col++)
        for (int c = 0; c < n; c++) {
            float g0 = gi[col][c], g1 = gi[3 + col][c], g2 = gi[6 + col][c];
            t[0][col][c] = g0;
            t[1][col][c] = 0.5f * (g0 + g1 + g2);
            t[2][col][c] = 0.5f * (g0 - g1 + g2);
            t[3][col][c] = g2;
        }
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

/* V = B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].  Each
 * of a tile row's four input rows is split into even and odd columns of a
 * zero-padded copy (column ix sits at ix + pl), so that tile t's row is
 * (e[t], o[t], e[t+1], o[t+1]) and d B is four vector operations. */
static void ichunk2(const itrans_job *j, const float *src, int ty, int x0, int n, float *v, size_t plane)
{
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

/* Y = A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], plus the bias. */
static void ochunk2(const otrans_job *j, const float *mk, size_t plane, float b, float *o, int ty,
                    int x0, int n)
{
    int oy = 2 * ty;
    float s[2][4][CHUNK], y[2][CHUNK];
    for (int q = 0; q < 4; q++) {
        const float *m0 = mk + (size_t)q * plane, *m1 = m0 + 4 * plane;
        const float *m2 = m1 + 4 * plane, *m3 = m2 + 4 * plane;
        for (int t = 0; t < n; t++) {
            s[0][q][t] = m0[t] + m1[t] + m2[t];
            s[1][q][t] = m1[t] - m2[t] - m3[t];
        }
    }
    for (int r = 0; r < 2 && oy + r < j->oh; r++) {
        for (int t = 0; t < n; t++) {
            y[0][t] = b + (s[r][0][t] + s[r][1][t] + s[r][2][t]);
            y[1][t] = b + (s[r][1][t] - s[r][2][t] - s[r][3][t]);
        }
        store_row(o + (size_t)(oy + r) * j->ow, 2, x0, n, j->ow, y);
    }
}

/* ---------------- F(4x4, 3x3) ---------------- */

/* G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 *      1/24 -1/12 1/6; 0 0 1]: column vector (g0, g1, g2) -> 6 values. */
#define G6(o, g0, g1, g2)                                   \
    do {                                                    \
        (o)[0] = 0.25f * (g0);                              \
        (o)[1] = -(1.0f / 6) * ((g0) + (g1) + (g2));        \
        (o)[2] = -(1.0f / 6) * ((g0) - (g1) + (g2));        \
        (o)[3] = (1.0f / 24) * (g0) + (1.0f / 12) * (g1) + (1.0f / 6) * (g2); \
        (o)[4] = (1.0f / 24) * (g0) - (1.0f / 12) * (g1) + (1.0f / 6) * (g2); \
        (o)[5] = (g2);                                      \
    } while (0)

static void wchunk4(float gi[9][64], int n, float *u, size_t plane)
{
    float t[6][3][64];
    for (int col = 0; col < 3; col++)
        for (int c = 0; c < n; c++) {
            float o[6];
            G6(o, gi[col][c], gi[3 + col][c], gi[6 + col][c]);
            for (int i = 0; i < 6; i++) t[i][col][c] = o[i];
        }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < n; c++) {
            float o[6];
            G6(o, t[r][0][c], t[r][1][c], t[r][2][c]);
            for (int q = 0; q < 6; q++) u[(size_t)(6 * r + q) * plane + c] = o[q];
        }
}

/* B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
 *        0 2 -1 -2 1 0; 0 4 0 -5 0 1] applied to x0..x5, elementwise over
 * n tiles. */
static void bt6(float out[6][CHUNK], const float *x0, const float *x1, const float *x2,
                const float *x3, const float *x4, const float *x5, int n)
{
    for (int t = 0; t < n; t++) {
        float a = x4[t] - 4.0f * x2[t], b = x3[t] - 4.0f * x1[t];
        float c = x4[t] - x2[t], d = 2.0f * (x3[t] - x1[t]);
        out[0][t] = 4.0f * x0[t] - 5.0f * x2[t] + x4[t];
        out[1][t] = a + b;
        out[2][t] = a - b;
        out[3][t] = c + d;
        out[4][t] = c - d;
        out[5][t] = 4.0f * x1[t] - 5.0f * x3[t] + x5[t];
    }
}

/* V = B^T d B.  Each of a tile row's six input rows is split into the four
 * column phases of a zero-padded copy (column ix sits at ix + pl), so that
 * tile t's row is (p0[t], p1[t], p2[t], p3[t], p0[t+1], p1[t+1]). */
static void ichunk4(const itrans_job *j, const float *src, int ty, int x0, int n, float *v, size_t plane)
{
    float h[6][6][CHUNK]; /* [input row][column of d B][tile] */
    for (int r = 0; r < 6; r++) {
        float p[4][CHUNK + 1];
        int iy = 4 * ty - j->pt + r;
        const float *row = src + (size_t)iy * j->W;
        int inside = iy >= 0 && iy < j->H;
        for (int ph = 0; ph < 4; ph++)
            for (int t = 0; t <= n; t++) {
                int ix = 4 * (x0 + t) - j->pl + ph;
                p[ph][t] = inside && ix >= 0 && ix < j->W ? row[ix] : 0.0f;
            }
        bt6(h[r], p[0], p[1], p[2], p[3], p[0] + 1, p[1] + 1, n);
    }
    for (int q = 0; q < 6; q++) {
        float col[6][CHUNK];
        bt6(col, h[0][q], h[1][q], h[2][q], h[3][q], h[4][q], h[5][q], n);
        for (int pr = 0; pr < 6; pr++) memcpy(v + (size_t)(6 * pr + q) * plane, col[pr], (size_t)n * sizeof(float));
    }
}

/* A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1] applied to
 * m0..m5, elementwise over n tiles. */
static void at4(float out[4][CHUNK], const float *m0, const float *m1, const float *m2,
                const float *m3, const float *m4, const float *m5, int n)
{
    for (int t = 0; t < n; t++) {
        float a = m1[t] + m2[t], b = m1[t] - m2[t], c = m3[t] + m4[t], d = m3[t] - m4[t];
        out[0][t] = m0[t] + a + c;
        out[1][t] = b + 2.0f * d;
        out[2][t] = a + 4.0f * c;
        out[3][t] = b + 8.0f * d + m5[t];
    }
}

/* Y = A^T M A, plus the bias. */
static void ochunk4(const otrans_job *j, const float *mk, size_t plane, float b, float *o, int ty,
                    int x0, int n)
{
    int oy = 4 * ty;
    float s[6][4][CHUNK]; /* [column q][output row][tile] */
    for (int q = 0; q < 6; q++) {
        const float *mp[6];
        for (int pr = 0; pr < 6; pr++) mp[pr] = mk + (size_t)(6 * pr + q) * plane;
        at4(s[q], mp[0], mp[1], mp[2], mp[3], mp[4], mp[5], n);
    }
    for (int r = 0; r < 4 && oy + r < j->oh; r++) {
        float y[4][CHUNK];
        at4(y, s[0][r], s[1][r], s[2][r], s[3][r], s[4][r], s[5][r], n);
        for (int c = 0; c < 4; c++)
            for (int t = 0; t < n; t++) y[c][t] += b;
        store_row(o + (size_t)(oy + r) * j->ow, 4, x0, n, j->ow, y);
    }
}

/* ---------------- choice and driver ---------------- */

static const variant F2 = {2, 4, wchunk2, ichunk2, ochunk2};
static const variant F4 = {4, 6, wchunk4, ichunk4, ochunk4};

void kern_wino(const net_layer *L, net_shape x, convalgo alg, int c0, int nc, const float *in,
               const float *w, float *out, float *ws)
{
    const variant *v = alg == CONVALGO_WINO4 ? &F4 : &F2;
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups, a2 = v->alpha * v->alpha;
    int oh = L->out.h, ow = L->out.w;
    convalgo_wino geo = convalgo_wino_geometry(L, x, nc, v->m);
    int tx = geo.tx, ty = geo.ty, tb = geo.band_tiles, mb = geo.block_rows;
    size_t K = (size_t)cin_g * 9, plane = (size_t)x.h * x.w, ohw = (size_t)oh * ow;
    float *U = ws, *V = U + (size_t)a2 * mb * cin_g, *M = V + (size_t)a2 * cin_g * tb;
    const float *bias = a->bias ? w + (size_t)nc * K : NULL;

    int g0 = c0 / cout_g;
    for (int g = g0; g * cout_g < c0 + nc; g++) {
        int lo = g * cout_g > c0 ? g * cout_g : c0;
        int hi = (g + 1) * cout_g < c0 + nc ? (g + 1) * cout_g : c0 + nc;
        const float *gin = in + (size_t)(g - g0) * cin_g * plane; /* in starts at group g0 */
        /* one block: its U is made once for every band */
        int one_block = hi - lo <= mb;
        if (one_block) {
            wtrans_job wj = {v, w + (size_t)(lo - c0) * K, U, hi - lo, cin_g};
            kern_parallel_for(hi - lo, 4.0 * a2 * (hi - lo) * cin_g, wtrans, &wj);
        }
        for (int t0 = 0; t0 < tx * ty; t0 += tb) {
            int nt = tx * ty - t0 < tb ? tx * ty - t0 : tb, ty0 = t0 / tx;
            itrans_job ij = {v, gin, V, x.h, x.w, a->pt, a->pl, tx, ty0, nt, cin_g};
            kern_parallel_for(cin_g, 3.0 * a2 * cin_g * nt, itrans, &ij);
            /* with several blocks, a block's U is remade per band: bands
             * come then only with large maps, where the transform is a
             * small part of the work */
            for (int b0 = lo; b0 < hi; b0 += mb) {
                int m = hi - b0 < mb ? hi - b0 : mb;
                if (!one_block) {
                    wtrans_job wj = {v, w + (size_t)(b0 - c0) * K, U, m, cin_g};
                    kern_parallel_for(m, 4.0 * a2 * m * cin_g, wtrans, &wj);
                }
                for (int p = 0; p < a2; p++)
                    kern_sgemm(m, nt, cin_g, U + (size_t)p * m * cin_g, cin_g,
                               V + (size_t)p * cin_g * nt, nt, 0, M + (size_t)p * m * nt, nt);
                otrans_job oj = {v, M, bias ? bias + (b0 - c0) : NULL, out + (size_t)(b0 - c0) * ohw,
                                 m, oh, ow, tx, ty0, nt};
                kern_parallel_for(m, 2.5 * a2 * m * nt, otrans, &oj);
            }
        }
    }
}
