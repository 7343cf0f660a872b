/* fit.c -- least-squares lines (GSL), medians, MAPE, Spearman's rho, and
 * the work unit and channel shares calibration uses.
 *
 * Invariant: a fit either fills every field of calib_fit from the same
 * weights it minimised with, or fails with err; statistics never divide
 * by zero (a zero measurement is skipped by the percentage errors).
 */
#include "calib.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_data(const double *x, const double *y, int n, int relative, char *err)
{
    if (n < 1) {
        base_seterr(err, "fit: no points");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i]) || (relative && y[i] == 0)) {
            base_seterr(err, "fit: point %d (%g, %g) is not usable", i, x[i], y[i]);
            return -1;
        }
    return 0;
}

/* Quality figures of y ~ a + b x under weights w. */
static void quality(const double *x, const double *y, const double *w, int n, calib_fit *f)
{
    double sw = 0, swy = 0, ss = 0, st = 0, sq = 0, mr = 0;
    for (int i = 0; i < n; i++) {
        sw += w[i];
        swy += w[i] * y[i];
    }
    double ybar = swy / sw;
    for (int i = 0; i < n; i++) {
        double r = y[i] - (f->a + f->b * x[i]);
        ss += w[i] * r * r;
        st += w[i] * (y[i] - ybar) * (y[i] - ybar);
        sq += r * r;
        if (y[i] != 0 && fabs(r / y[i]) > mr) mr = fabs(r / y[i]);
    }
    f->r2 = st > 0 ? 1.0 - ss / st : (ss == 0 ? 1.0 : 0.0);
    f->rmse = sqrt(sq / n);
    f->max_rel = mr;
    f->n = n;
}

static double *weights(const double *y, int n, int relative)
{
    double *w = malloc((size_t)n * sizeof *w);
    if (!w) return NULL;
    for (int i = 0; i < n; i++) w[i] = relative ? 1.0 / (y[i] * y[i]) : 1.0;
    return w;
}

int calib_fit_line(const double *x, const double *y, int n, int relative, calib_fit *f, char *err)
{
    memset(f, 0, sizeof *f);
    if (check_data(x, y, n, relative, err)) return -1;
    if (n < 2) {
        base_seterr(err, "fit: a line needs at least 2 points, got %d", n);
        return -1;
    }
    int spread = 0;
    for (int i = 1; i < n; i++) spread |= x[i] != x[0];
    if (!spread) {
        base_seterr(err, "fit: all %d points have the same x (%g)", n, x[0]);
        return -1;
    }
    double *w = weights(y, n, relative);
    if (!w) {
        base_seterr(err, "fit: out of memory");
        return -1;
    }
    double c00, c01, c11, chisq;
    gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, &f->a, &f->b, &c00, &c01, &c11, &chisq);
    quality(x, y, w, n, f);
    free(w);
    return 0;
}

int calib_fit_origin(const double *x, const double *y, int n, int relative, calib_fit *f,
                     char *err)
{
    memset(f, 0, sizeof *f);
    if (check_data(x, y, n, relative, err)) return -1;
    double *w = weights(y, n, relative);
    if (!w) {
        base_seterr(err, "fit: out of memory");
        return -1;
    }
    double c11, chisq;
    gsl_fit_wmul(x, 1, w, 1, y, 1, (size_t)n, &f->b, &c11, &chisq);
    f->a = 0;
    if (!isfinite(f->b)) {
        free(w);
        base_seterr(err, "fit: all x are 0");
        return -1;
    }
    quality(x, y, w, n, f);
    free(w);
    return 0;
}

typedef struct {
    double x, y;
} xy;

static int by_x(const void *a, const void *b)
{
    double u = ((const xy *)a)->x, v = ((const xy *)b)->x;
    return (u > v) - (u < v);
}

/* Groups of p[0..n) (sorted by x) under factor f: the index of each
 * one's first point in start[], their count returned. */
static int groups(const xy *p, int n, double f, int *start)
{
    int g = 0;
    for (int i = 0; i < n; i++)
        if (g == 0 || p[i].x > p[start[g - 1]].x * f) start[g++] = i;
    return g;
}

int calib_fit_curve(const double *x, const double *y, int n, coeffs_curve *cv, char *err)
{
    memset(cv, 0, sizeof *cv);
    cv->r2 = NAN;
    if (check_data(x, y, n, 1, err)) return -1;
    for (int i = 0; i < n; i++)
        if (!(x[i] > 0) || !(y[i] > 0)) {
            base_seterr(err, "fit: point %d (%g, %g): a curve needs positive work and time", i,
                        x[i], y[i]);
            return -1;
        }
    xy *p = malloc((size_t)n * sizeof *p);
    int *start = malloc(((size_t)n + 1) * sizeof *start);
    double *v = malloc((size_t)n * sizeof *v), *wt = malloc((size_t)n * sizeof *wt);
    if (!p || !start || !v || !wt) {
        free(p), free(start), free(v), free(wt);
        base_seterr(err, "fit: out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) p[i] = (xy){x[i], y[i]};
    qsort(p, (size_t)n, sizeof *p, by_x);
    double f = CALIB_CURVE_BIN;
    int g = groups(p, n, f, start);
    while (g > COEFFS_CURVE_MAX) {
        f *= CALIB_CURVE_BIN;
        g = groups(p, n, f, start);
    }
    start[g] = n;
    if (g >= CALIB_CLASS_MIN_SIZES) {
        /* each group's medians */
        for (int k = 0; k < g; k++) {
            int m = start[k + 1] - start[k];
            for (int i = 0; i < m; i++) v[i] = p[start[k] + i].x;
            cv->work[k] = base_median(v, m);
            for (int i = 0; i < m; i++) v[i] = p[start[k] + i].y;
            cv->us[k] = base_median(v, m) * 1e6;
            wt[k] = m;
        }
        /* pool adjacent violators: blocks [lo, hi) with one value */
        int nb = 0;
        int *lo = start; /* reuse: block starts (start[] is no longer needed) */
        double *bv = v;  /* block values */
        for (int k = 0; k < g; k++) {
            lo[nb] = k;
            bv[nb] = cv->us[k];
            double bw = wt[k];
            nb++;
            while (nb > 1 && bv[nb - 2] > bv[nb - 1]) {
                double w0 = 0;
                for (int j = lo[nb - 2]; j < lo[nb - 1]; j++) w0 += wt[j];
                bv[nb - 2] = (bv[nb - 2] * w0 + bv[nb - 1] * bw) / (w0 + bw);
                bw += w0;
                nb--;
            }
        }
        lo[nb] = g;
        for (int b = 0; b < nb; b++)
            for (int k = lo[b]; k < lo[b + 1]; k++) cv->us[k] = bv[b];
        cv->n = g;
        /* quality on every sample, relative residuals (as the line's) */
        double sw = 0, swy = 0, ss = 0, st = 0;
        for (int i = 0; i < n; i++) {
            double w = 1.0 / (y[i] * y[i]);
            sw += w;
            swy += w * y[i];
        }
        for (int i = 0; i < n; i++) {
            double w = 1.0 / (y[i] * y[i]), t, e;
            coeffs_curve_at(cv, x[i], &t, &e); /* x > 0, cv->n >= 3: defined */
            ss += w * (y[i] - t) * (y[i] - t);
            st += w * (y[i] - swy / sw) * (y[i] - swy / sw);
        }
        cv->r2 = st > 0 ? 1.0 - ss / st : (ss == 0 ? 1.0 : 0.0);
    }
    free(p), free(start), free(v), free(wt);
    return 0;
}

/* The start of a link's fits: f cleared, the data checked, and *cut the
 * least size that decides the rate (the largest / 64, at least the
 * second largest size); -1 with err when unusable or of one size. */
static int large_sizes(const double *x, const double *y, int n, calib_fit *f, double *cut, char *err)
{
    memset(f, 0, sizeof *f);
    if (check_data(x, y, n, 0, err)) return -1;
    double xmax = x[0], x2 = -INFINITY; /* largest, second largest size */
    for (int i = 1; i < n; i++) xmax = fmax(xmax, x[i]);
    for (int i = 0; i < n; i++)
        if (x[i] < xmax) x2 = fmax(x2, x[i]);
    if (!(x2 > -INFINITY)) {
        base_seterr(err, "fit: all %d points have the same size (%g)", n, xmax);
        return -1;
    }
    *cut = fmin(xmax / 64, x2);
    return 0;
}

int calib_fit_link(const double *x, const double *y, int n, calib_fit *f, char *err)
{
    double cut, xmin = x[0];
    if (large_sizes(x, y, n, f, &cut, err)) return -1;
    for (int i = 1; i < n; i++) xmin = fmin(xmin, x[i]);
    double *lx = malloc((size_t)n * sizeof *lx), *ly = malloc((size_t)n * sizeof *ly);
    double *w = malloc((size_t)n * sizeof *w);
    if (!lx || !ly || !w) {
        free(lx), free(ly), free(w);
        base_seterr(err, "fit: out of memory");
        return -1;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (x[i] >= cut) lx[m] = x[i], ly[m] = y[i], w[m++] = 1.0;
    double a, c00, c01, c11, chisq;
    gsl_fit_wlinear(lx, 1, w, 1, ly, 1, (size_t)m, &a, &f->b, &c00, &c01, &c11, &chisq);
    int rc = 0;
    if (!(f->b > 0) || !isfinite(f->b)) {
        base_seterr(err, "fit: time does not grow with size over the %d largest sizes", m);
        rc = -1;
    } else {
        /* The smallest size's time (the median of its samples, one point
         * per size) less its transfer at the fitted rate. */
        double ys = INFINITY;
        for (int i = 0; i < n; i++)
            if (x[i] == xmin) ys = fmin(ys, y[i]);
        f->a = ys - f->b * xmin > 0 ? ys - f->b * xmin : ys;
        quality(lx, ly, w, m, f);
    }
    free(lx), free(ly), free(w);
    return rc;
}

/* qsort: points by size, then time (calib_fit_rate's thinning). */
static int cmp_point(const void *p, const void *q)
{
    const double *a = p, *b = q;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1];
}

int calib_fit_rate(const double *x, const double *y, int n, calib_fit *f, char *err)
{
    double cut;
    if (large_sizes(x, y, n, f, &cut, err)) return -1;
    int m = 0;
    for (int i = 0; i < n; i++) m += x[i] >= cut;
    /* Every stride-th of the large points in order of size (then time),
     * at most CALIB_RATE_MAX: every size keeps its share (pairs grow as
     * the square). */
    int stride = (m + CALIB_RATE_MAX - 1) / CALIB_RATE_MAX, k = (m + stride - 1) / stride;
    double *pt = malloc(2 * (size_t)m * sizeof *pt), *lx = malloc((size_t)k * sizeof *lx),
           *ly = malloc((size_t)k * sizeof *ly), *w = malloc((size_t)k * sizeof *w);
    size_t np = 0, cap = (size_t)k * (size_t)(k - 1) / 2 + (size_t)k;
    double *sl = malloc(cap * sizeof *sl);
    if (!pt || !lx || !ly || !w || !sl) {
        free(pt), free(lx), free(ly), free(w), free(sl);
        base_seterr(err, "fit: out of memory");
        return -1;
    }
    for (int i = 0, j = 0; i < n; i++)
        if (x[i] >= cut) pt[2 * j] = x[i], pt[2 * j + 1] = y[i], j++;
    qsort(pt, (size_t)m, 2 * sizeof *pt, cmp_point);
    for (int i = 0; i < k; i++) lx[i] = pt[2 * i * stride], ly[i] = pt[2 * i * stride + 1], w[i] = 1.0;
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++)
            if (lx[b] != lx[a]) sl[np++] = (ly[b] - ly[a]) / (lx[b] - lx[a]);
    int rc = 0;
    f->b = np ? base_median(sl, (int)np) : NAN;
    if (!(f->b > 0) || !isfinite(f->b)) {
        base_seterr(err, "fit: time does not grow with size over the %d largest points", k);
        rc = -1;
    } else {
        for (int i = 0; i < k; i++) sl[i] = ly[i] - f->b * lx[i];
        f->a = base_median(sl, k);
        quality(lx, ly, w, k, f);
    }
    free(pt), free(lx), free(ly), free(w), free(sl);
    return rc;
}

double calib_mape(const double *pred, const double *meas, int n)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (meas[i] != 0 && isfinite(pred[i]) && isfinite(meas[i])) {
            s += fabs(pred[i] - meas[i]) / fabs(meas[i]);
            k++;
        }
    return k ? 100.0 * s / k : NAN;
}

double calib_max_ape(const double *pred, const double *meas, int n)
{
    double m = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (meas[i] != 0 && isfinite(pred[i]) && isfinite(meas[i])) {
            double e = fabs(pred[i] - meas[i]) / fabs(meas[i]);
            if (e > m) m = e;
            k++;
        }
    return k ? 100.0 * m : NAN;
}

typedef struct {
    double v;
    int i;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return (x->v > y->v) - (x->v < y->v);
}

/* Average ranks (1-based) of v into r. */
static int ranks(const double *v, int n, double *r)
{
    ranked *t = malloc((size_t)n * sizeof *t);
    if (!t) return -1;
    for (int i = 0; i < n; i++) t[i] = (ranked){v[i], i};
    qsort(t, (size_t)n, sizeof *t, cmp_ranked);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && t[j + 1].v == t[i].v) j++;
        double avg = 0.5 * (i + j) + 1.0;
        for (int k = i; k <= j; k++) r[t[k].i] = avg;
        i = j + 1;
    }
    free(t);
    return 0;
}

double calib_spearman(const double *x, const double *y, int n)
{
    if (n < 2) return NAN;
    double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
    double res = NAN;
    if (rx && ry && ranks(x, n, rx) == 0 && ranks(y, n, ry) == 0) {
        /* Pearson correlation of the ranks (exact with ties). */
        double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
        for (int i = 0; i < n; i++) {
            mx += rx[i];
            my += ry[i];
        }
        mx /= n;
        my /= n;
        for (int i = 0; i < n; i++) {
            sxy += (rx[i] - mx) * (ry[i] - my);
            sxx += (rx[i] - mx) * (rx[i] - mx);
            syy += (ry[i] - my) * (ry[i] - my);
        }
        if (sxx > 0 && syy > 0) res = sxy / sqrt(sxx * syy);
    }
    free(rx);
    free(ry);
    return res;
}

int64_t calib_work(const net *n, int layer, int c0, int nc)
{
    const net_layer *L = &n->layers[layer];
    /* cost.c's rule: MACs when the layer has them (or has no ops either). */
    if (L->macs > 0 || L->ops == 0) return net_slice_macs(n, layer, c0, nc);
    return net_slice_ops(n, layer, c0, nc);
}

int calib_share_channels(int out_c, int k)
{
    /* mapping_apportion gives the first of k equal shares ceil-or-floor
     * channels; the floor is what most shares get. */
    int c = out_c / k;
    return c < 1 ? 1 : c;
}

int calib_link_rep(const platform *pl, int a, int b)
{
    int n = pl->ndev;
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    const plat_link *L = platform_link(pl, a, b);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const plat_link *M = platform_link(pl, i, j);
            if (pl->link_cls[i * n + j] == pl->link_cls[a * n + b] &&
                M->latency_us == L->latency_us && M->bandwidth_mbs == L->bandwidth_mbs)
                return i * n + j;
        }
    return a * n + b;
}
