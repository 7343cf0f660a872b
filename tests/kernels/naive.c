/* naive.c -- plain-loop reference layers for the runtime tests (naive.h).
 * Written from the definitions, deliberately slow and obvious: one output
 * element at a time, double accumulators, explicit padding tests.
 */
#include "naive.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


uint64_t trng_next(uint64_t *s)
{
    /* xorshift64* */
    uint64_t x = *s ? *s : 88172645463325252ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

int trng_int(uint64_t *s, int lo, int hi) { return lo + (int)(trng_next(s) % (uint64_t)(hi - lo + 1)); }

float trng_float(uint64_t *s) { return (float)((double)(trng_next(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

void trng_fill(uint64_t *s, float *x, size_t len)
{
    for (size_t i = 0; i < len; i++) x[i] = trng_float(s);
}

double cmp_tol(const float *a, const float *b, size_t len, double rtol, double atol, size_t *worst)
{
    double bad = -INFINITY;
    for (size_t i = 0; i < len; i++) {
        double d = fabs((double)a[i] - (double)b[i]) - (atol + rtol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i])) d = INFINITY;
        if (d > bad) {
            bad = d;
            if (worst) *worst = i;
        }
    }
    return bad;
}

static float at(const float *x, net_shape s, int c, int y, int xx)
{
    return x[((size_t)c * s.h + y) * s.w + xx];
}

void naive_layer(const net *n, int li, const float *const *inputs, const float *w, float *out)
{
    const net_layer *L = &n->layers[li];
    const net_attr *a = &L->a;
    net_shape xs = net_in_shape(n, li, 0), ys = L->out;
    const float *x = inputs[0];
    switch (L->kind) {
    case NET_CONV: {
        int cin_g = xs.c / a->groups, cout_g = a->out_c / a->groups;
        int K = cin_g * a->kh * a->kw;
        for (int oc = 0; oc < ys.c; oc++)
            for (int oy = 0; oy < ys.h; oy++)
                for (int ox = 0; ox < ys.w; ox++) {
                    double s = a->bias ? w[(size_t)ys.c * K + oc] : 0.0;
                    int g = oc / cout_g;
                    for (int ic = 0; ic < cin_g; ic++)
                        for (int ki = 0; ki < a->kh; ki++)
                            for (int kj = 0; kj < a->kw; kj++) {
                                int iy = oy * a->sh - a->pt + ki * a->dh;
                                int ix = ox * a->sw - a->pl + kj * a->dw;
                                if (iy < 0 || iy >= xs.h || ix < 0 || ix >= xs.w) continue;
                                s += (double)w[(size_t)oc * K + ((size_t)ic * a->kh + ki) * a->kw + kj] *
                                     at(x, xs, g * cin_g + ic, iy, ix);
                            }
                    out[((size_t)oc * ys.h + oy) * ys.w + ox] = (float)s;
                }
        break;
    }
    case NET_DECONV: { /* gathered, in double: the input pixels whose taps land here */
        int cin_g = xs.c / a->groups, cout_g = a->out_c / a->groups, kk = a->kh * a->kw;
        int K = cin_g * kk;
        for (int oc = 0; oc < ys.c; oc++)
            for (int oy = 0; oy < ys.h; oy++)
                for (int ox = 0; ox < ys.w; ox++) {
                    double s = a->bias ? w[(size_t)ys.c * K + oc] : 0.0;
                    int g = oc / cout_g;
                    for (int ki = 0; ki < a->kh; ki++)
                        for (int kj = 0; kj < a->kw; kj++) {
                            int ty = oy + a->pt - ki * a->dh, tx = ox + a->pl - kj * a->dw;
                            if (ty < 0 || tx < 0 || ty % a->sh || tx % a->sw) continue;
                            int iy = ty / a->sh, ix = tx / a->sw;
                            if (iy >= xs.h || ix >= xs.w) continue;
                            for (int ic = 0; ic < cin_g; ic++)
                                s += (double)w[(size_t)oc * K + (size_t)(ki * a->kw + kj) * cin_g + ic] *
                                     at(x, xs, g * cin_g + ic, iy, ix);
                        }
                    out[((size_t)oc * ys.h + oy) * ys.w + ox] = (float)s;
                }
        break;
    }
    case NET_FC: {
        size_t nin = (size_t)net_shape_numel(xs);
        for (int o = 0; o < ys.c; o++) {
            double s = a->bias ? w[(size_t)ys.c * nin + o] : 0.0;
            for (size_t i = 0; i < nin; i++) s += (double)w[o * nin + i] * x[i];
            out[o] = (float)s;
        }
        break;
    }
    case NET_RELU:
        for (int64_t i = 0; i < net_shape_numel(ys); i++) {
            double v = x[i] < 0 ? 0 : x[i];
            if (a->relu_max > 0 && v > a->relu_max) v = a->relu_max;
            out[i] = (float)v;
        }
        break;
    case NET_LRN: {
        /* ONNX: square_sum over [c - floor((size-1)/2), c + ceil((size-1)/2)] */
        int lo_off = (int)floor((a->lrn_size - 1) / 2.0), hi_off = (int)ceil((a->lrn_size - 1) / 2.0);
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    double sq = 0;
                    for (int j = c - lo_off; j <= c + hi_off; j++)
                        if (j >= 0 && j < xs.c) sq += (double)at(x, xs, j, y, xx) * at(x, xs, j, y, xx);
                    out[((size_t)c * ys.h + y) * ys.w + xx] =
                        (float)(at(x, xs, c, y, xx) / pow(a->lrn_k + a->lrn_alpha / a->lrn_size * sq, a->lrn_beta));
                }
        break;
    }
    case NET_MAXPOOL:
    case NET_AVGPOOL:
        for (int c = 0; c < ys.c; c++)
            for (int oy = 0; oy < ys.h; oy++)
                for (int ox = 0; ox < ys.w; ox++) {
                    double m = -INFINITY, s = 0;
                    int cnt_valid = 0, cnt_pad = 0;
                    for (int ki = 0; ki < a->kh; ki++)
                        for (int kj = 0; kj < a->kw; kj++) {
                            int iy = oy * a->sh - a->pt + ki, ix = ox * a->sw - a->pl + kj;
                            /* inside the padded input [-p, in + p) */
                            if (iy < xs.h + a->pb && ix < xs.w + a->pr) cnt_pad++;
                            if (iy < 0 || iy >= xs.h || ix < 0 || ix >= xs.w) continue;
                            double v = at(x, xs, c, iy, ix);
                            if (v > m) m = v;
                            s += v;
                            cnt_valid++;
                        }
                    double r = L->kind == NET_MAXPOOL ? m : s / (a->count_include_pad ? cnt_pad : cnt_valid);
                    out[((size_t)c * ys.h + oy) * ys.w + ox] = (float)r;
                }
        break;
    case NET_GAP:
        for (int c = 0; c < xs.c; c++) {
            double s = 0;
            for (int y = 0; y < xs.h; y++)
                for (int xx = 0; xx < xs.w; xx++) s += at(x, xs, c, y, xx);
            out[c] = (float)(s / (xs.h * xs.w));
        }
        break;
    case NET_BN: {
        const float *sc = w, *sh = w + xs.c, *mu = w + 2 * xs.c, *var = w + 3 * xs.c;
        for (int c = 0; c < xs.c; c++)
            for (int p = 0; p < xs.h * xs.w; p++) {
                size_t i = (size_t)c * xs.h * xs.w + p;
                out[i] = (float)((x[i] - (double)mu[c]) / sqrt((double)var[c] + a->bn_eps) * sc[c] + sh[c]);
            }
        break;
    }
    case NET_ADD:
        for (int64_t i = 0; i < net_shape_numel(ys); i++) {
            double s = 0;
            for (int k = 0; k < L->nin; k++) s += L->a.add_sub && k == 1 ? -inputs[k][i] : inputs[k][i];
            out[i] = (float)s;
        }
        break;
    case NET_CONCAT: {
        int c0 = 0;
        for (int k = 0; k < L->nin; k++) {
            net_shape s = net_in_shape(n, li, k);
            for (int c = 0; c < s.c; c++)
                for (int p = 0; p < s.h * s.w; p++)
                    out[(size_t)(c0 + c) * ys.h * ys.w + p] = inputs[k][(size_t)c * s.h * s.w + p];
            c0 += s.c;
        }
        break;
    }
    case NET_FLATTEN:
    case NET_DROPOUT:
        for (int64_t i = 0; i < net_shape_numel(ys); i++) out[i] = x[i];
        break;
    case NET_SOFTMAX:
        /* per pixel over channels */
        for (int p = 0; p < ys.h * ys.w; p++) {
            double m = -INFINITY, s = 0;
            for (int c = 0; c < ys.c; c++) m = fmax(m, x[(size_t)c * ys.h * ys.w + p]);
            for (int c = 0; c < ys.c; c++) s += exp(x[(size_t)c * ys.h * ys.w + p] - m);
            for (int c = 0; c < ys.c; c++)
                out[(size_t)c * ys.h * ys.w + p] = (float)(exp(x[(size_t)c * ys.h * ys.w + p] - m) / s);
        }
        break;
    case NET_SIGMOID:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) out[i] = (float)(1 / (1 + exp(-(double)x[i])));
        break;
    case NET_HSIGMOID:
    case NET_HSWISH: {
        int swish = L->kind == NET_HSWISH;
        double al = swish ? 1 / 6.0 : a->hs_alpha, be = swish ? 0.5 : a->hs_beta;
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) {
            double v = fmin(1, fmax(0, al * x[i] + be));
            out[i] = (float)(swish ? x[i] * v : v);
        }
        break;
    }
    case NET_MUL: { /* by a tensor of the same shape, a C x 1 x 1 one or a 1 x H x W one */
        net_shape zs = net_in_shape(n, li, 1);
        size_t hw = (size_t)ys.h * ys.w;
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) {
            size_t j = zs.c == 1 && ys.c > 1 ? i % hw : zs.h * zs.w == 1 ? i / hw : i;
            out[i] = (float)((double)x[i] * inputs[1][j]);
        }
        break;
    }
    case NET_REDUCEMAX: {
        int nc = a->rm_c ? xs.c : 1, nh = a->rm_h ? xs.h : 1, nw = a->rm_w ? xs.w : 1;
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    float m = -INFINITY;
                    for (int i = 0; i < nc; i++)
                        for (int j = 0; j < nh; j++)
                            for (int q = 0; q < nw; q++)
                                m = fmaxf(m, at(x, xs, a->rm_c ? i : c, a->rm_h ? j : y, a->rm_w ? q : xx));
                    out[((size_t)c * ys.h + y) * ys.w + xx] = m;
                }
        break;
    }
    case NET_REDUCEMEAN: {
        int nc = a->rm_c ? xs.c : 1, nh = a->rm_h ? xs.h : 1, nw = a->rm_w ? xs.w : 1;
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    double s = 0;
                    for (int i = 0; i < nc; i++)
                        for (int j = 0; j < nh; j++)
                            for (int q = 0; q < nw; q++)
                                s += at(x, xs, a->rm_c ? i : c, a->rm_h ? j : y, a->rm_w ? q : xx);
                    out[((size_t)c * ys.h + y) * ys.w + xx] = (float)(s / ((double)nc * nh * nw));
                }
        break;
    }
    case NET_SLICE:
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++)
                    out[((size_t)c * ys.h + y) * ys.w + xx] =
                        at(x, xs, a->start + c, a->sl_top + a->sh * y, a->sl_left + a->sw * xx);
        break;
    case NET_SHUFFLE: {
        /* PyTorch: x.view(g, C/g, H, W).transpose(0, 1).reshape(C, H, W) */
        int g = a->groups, per = xs.c / g;
        for (int i = 0; i < g; i++)
            for (int j = 0; j < per; j++)
                for (int p = 0; p < xs.h * xs.w; p++)
                    out[(size_t)(j * g + i) * xs.h * xs.w + p] = x[(size_t)(i * per + j) * xs.h * xs.w + p];
        break;
    }
    case NET_BSUM: { /* x.view(K, C, H, W).sum(0), in double */
        size_t len = (size_t)ys.c * ys.h * ys.w;
        for (size_t i = 0; i < len; i++) {
            double s = 0;
            for (int b = 0; b < a->groups; b++) s += x[b * len + i];
            out[i] = (float)s;
        }
        break;
    }
    case NET_BSOFTMAX: { /* x.view(G, K, M, H W).transpose(0, 1).softmax(0), in double */
        int K = a->groups, G = a->card, M = xs.c / (K * G);
        size_t hw = (size_t)xs.h * xs.w;
        for (int g = 0; g < G; g++)
            for (int m = 0; m < M; m++)
                for (size_t p = 0; p < hw; p++) {
                    double mx = -INFINITY, s = 0;
                    for (int b = 0; b < K; b++) mx = fmax(mx, x[((size_t)(g * K + b) * M + m) * hw + p]);
                    for (int b = 0; b < K; b++) s += exp(x[((size_t)(g * K + b) * M + m) * hw + p] - mx);
                    for (int b = 0; b < K; b++)
                        out[((size_t)(b * G + g) * M + m) * hw + p] =
                            (float)(exp(x[((size_t)(g * K + b) * M + m) * hw + p] - mx) / s);
                }
        break;
    }
    case NET_LAYERNORM:
        for (int p = 0; p < xs.h * xs.w; p++) {
            double m = 0, v = 0;
            size_t hw = (size_t)xs.h * xs.w;
            for (int c = 0; c < xs.c; c++) m += x[c * hw + p];
            m /= xs.c;
            for (int c = 0; c < xs.c; c++) v += (x[c * hw + p] - m) * (x[c * hw + p] - m);
            v /= xs.c;
            for (int c = 0; c < xs.c; c++)
                out[c * hw + p] = (float)((x[c * hw + p] - m) / sqrt(v + a->bn_eps) * w[c] + w[xs.c + c]);
        }
        break;
    case NET_L2NORM: /* F.normalize: x / max(||x over channels||, eps), in double */
        for (int p = 0; p < xs.h * xs.w; p++) {
            double s = 0;
            size_t hw = (size_t)xs.h * xs.w;
            for (int c = 0; c < xs.c; c++) s += (double)x[c * hw + p] * x[c * hw + p];
            double d = fmax(sqrt(s), a->bn_eps);
            for (int c = 0; c < xs.c; c++) out[c * hw + p] = (float)(x[c * hw + p] / d);
        }
        break;
    case NET_GELU:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) {
            double v = x[i];
            out[i] = (float)(a->gelu_tanh ? 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)))
                                          : 0.5 * v * (1 + erf(v / sqrt(2.0))));
        }
        break;
    case NET_SCALE: {
        size_t hw = (size_t)xs.h * xs.w;
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) out[i] = (float)((double)x[i] * w[i / hw]);
        break;
    }
    case NET_LEAKYRELU:
    case NET_PRELU: {
        size_t hw = (size_t)xs.h * xs.w;
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) {
            double al = L->kind == NET_PRELU ? w[i / hw] : a->act_alpha;
            out[i] = (float)(x[i] < 0 ? al * x[i] : x[i]);
        }
        break;
    }
    case NET_SOFTPLUS:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++)
            out[i] = (float)(x[i] > 0 ? x[i] + log1p(exp(-(double)x[i])) : log1p(exp((double)x[i])));
        break;
    case NET_TANH:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) out[i] = (float)tanh((double)x[i]);
        break;
    case NET_MISH: /* x tanh(log(1 + e^x)), in double */
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++) {
            double v = x[i], sp = v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
            out[i] = (float)(v * tanh(sp));
        }
        break;
    case NET_ELU:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++)
            out[i] = (float)(x[i] > 0 ? x[i] : a->act_alpha * expm1((double)x[i]));
        break;
    case NET_CLIP:
        for (size_t i = 0; i < (size_t)net_shape_numel(ys); i++)
            out[i] = (float)fmin(a->clip_hi, fmax(a->clip_lo, x[i]));
        break;
    case NET_BILINEAR: /* PyTorch's F.interpolate(mode="bilinear"), in double */
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    double sy, sx;
                    if (a->align_corners) {
                        sy = ys.h > 1 ? (double)y * (xs.h - 1) / (ys.h - 1) : 0;
                        sx = ys.w > 1 ? (double)xx * (xs.w - 1) / (ys.w - 1) : 0;
                    } else {
                        sy = fmax(0, (y + 0.5) * xs.h / ys.h - 0.5);
                        sx = fmax(0, (xx + 0.5) * xs.w / ys.w - 0.5);
                    }
                    int y0 = (int)fmin(floor(sy), xs.h - 1), x0 = (int)fmin(floor(sx), xs.w - 1);
                    int y1 = y0 + 1 < xs.h ? y0 + 1 : y0, x1 = x0 + 1 < xs.w ? x0 + 1 : x0;
                    double ly = sy - y0, lx = sx - x0;
                    out[((size_t)c * ys.h + y) * ys.w + xx] =
                        (float)((1 - ly) * ((1 - lx) * at(x, xs, c, y0, x0) + lx * at(x, xs, c, y0, x1)) +
                                ly * ((1 - lx) * at(x, xs, c, y1, x0) + lx * at(x, xs, c, y1, x1)));
                }
        break;
    case NET_PAD:
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    int r = y - a->pt, q = xx - a->pl;
                    if (a->pad_reflect) { /* mirror about the edge, ONNX's reflect */
                        r = r < 0 ? -r : r >= xs.h ? 2 * xs.h - 2 - r : r;
                        q = q < 0 ? -q : q >= xs.w ? 2 * xs.w - 2 - q : q;
                    } else if (a->pad_edge) {
                        r = r < 0 ? 0 : r >= xs.h ? xs.h - 1 : r;
                        q = q < 0 ? 0 : q >= xs.w ? xs.w - 1 : q;
                    }
                    out[((size_t)c * ys.h + y) * ys.w + xx] =
                        r >= 0 && r < xs.h && q >= 0 && q < xs.w ? at(x, xs, c, r, q) : 0.0f;
                }
        break;
    case NET_SHUFFLEUP: { /* output (c, y, x) reads the input channel of its place in the r x r block */
        int r = a->up_h;
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    int i = y % r, j = xx % r;
                    int src = a->ps_dcr ? (i * r + j) * ys.c + c : c * r * r + i * r + j;
                    out[((size_t)c * ys.h + y) * ys.w + xx] = at(x, xs, src, y / r, xx / r);
                }
        break;
    }
    case NET_SHUFFLEDOWN: { /* output channel of place (i, j) in the r x r block of input (c, y r + i, x r + j) */
        int r = a->up_h;
        for (int c = 0; c < xs.c; c++)
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++) {
                    int dst = a->ps_dcr ? (i * r + j) * xs.c + c : c * r * r + i * r + j;
                    for (int y = 0; y < ys.h; y++)
                        for (int xx = 0; xx < ys.w; xx++)
                            out[((size_t)dst * ys.h + y) * ys.w + xx] = at(x, xs, c, y * r + i, xx * r + j);
                }
        break;
    }
    case NET_INSTNORM: { /* in double: (x - mean) / sqrt(var + eps) * scale + shift per channel */
        size_t hw = (size_t)xs.h * xs.w;
        for (int c = 0; c < ys.c; c++) {
            double m = 0, v = 0;
            for (size_t p = 0; p < hw; p++) m += x[c * hw + p];
            m /= (double)hw;
            for (size_t p = 0; p < hw; p++) v += (x[c * hw + p] - m) * (x[c * hw + p] - m);
            v /= (double)hw;
            for (size_t p = 0; p < hw; p++)
                out[c * hw + p] = (float)((x[c * hw + p] - m) / sqrt(v + a->bn_eps) * w[c] + w[ys.c + c]);
        }
        break;
    }
    case NET_GROUPNORM: { /* in double: each group's mean and variance over its channels' maps */
        size_t hw = (size_t)xs.h * xs.w, cg = (size_t)(ys.c / a->groups);
        for (int g = 0; g < a->groups; g++) {
            const float *xg = x + g * cg * hw;
            double m = 0, v = 0;
            for (size_t p = 0; p < cg * hw; p++) m += xg[p];
            m /= (double)(cg * hw);
            for (size_t p = 0; p < cg * hw; p++) v += (xg[p] - m) * (xg[p] - m);
            v /= (double)(cg * hw);
            for (size_t c = g * cg; c < (g + 1) * cg; c++)
                for (size_t p = 0; p < hw; p++)
                    out[c * hw + p] = (float)((x[c * hw + p] - m) / sqrt(v + a->bn_eps) * w[c] + w[ys.c + c]);
        }
        break;
    }
    case NET_NEAREST: { /* PyTorch's upsample_nearest2d: floorf(o * (float)(in / out)), clamped */
        float sy = (float)xs.h / (float)ys.h, sx = (float)xs.w / (float)ys.w;
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++) {
                    int r = xs.h == ys.h ? y : (int)fminf(floorf((float)y * sy), (float)(xs.h - 1));
                    int q = xs.w == ys.w ? xx : (int)fminf(floorf((float)xx * sx), (float)(xs.w - 1));
                    out[((size_t)c * ys.h + y) * ys.w + xx] = at(x, xs, c, r, q);
                }
        break;
    }
    case NET_UPSAMPLE: /* nearest: output (r, q) reads input (r / sh, q / sw) */
        for (int c = 0; c < ys.c; c++)
            for (int y = 0; y < ys.h; y++)
                for (int xx = 0; xx < ys.w; xx++)
                    out[((size_t)c * ys.h + y) * ys.w + xx] = at(x, xs, c, y / a->up_h, xx / a->up_w);
        break;
    default:
        abort();
    }
}

void naive_forward(const net *n, float *const *w, const float *input, float *output)
{
    float **buf = calloc((size_t)n->n, sizeof *buf);
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        const float **in = malloc((size_t)L->nin * sizeof *in);
        for (int k = 0; k < L->nin; k++) in[k] = L->in[k] == NET_INPUT ? input : buf[L->in[k]];
        buf[i] = malloc((size_t)net_shape_numel(L->out) * sizeof(float));
        naive_layer(n, i, in, w[i], buf[i]);
        free(in);
    }
    memcpy(output, buf[n->n - 1], (size_t)net_shape_numel(n->layers[n->n - 1].out) * sizeof(float));
    for (int i = 0; i < n->n; i++) free(buf[i]);
    free(buf);
}

void slice_inputs(const net *n, int li, int c0, int nc, const float *const *full, const float **view)
{
    for (int k = 0; k < n->layers[li].nin; k++) {
        net_shape s = net_in_shape(n, li, k);
        int a0, a1;
        net_chans_in(n, li, k, c0, c0 + nc, &a0, &a1);
        view[k] = full[k] + (size_t)a0 * s.h * s.w;
    }
}
