/* test_calib_fit.c -- the fit and statistics helpers against numbers worked
 * out by hand or by closed-form formulas written here independently of
 * GSL; the work unit and channel shares against the layer formulas; the
 * probe networks hold every layer kind and both conv classes. */
#include "calib.h"
#include "tcheck.h"

/* Weighted least squares by the normal equations (independent of GSL). */
static void wls(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
        sxx += w[i] * x[i] * x[i];
        sxy += w[i] * x[i] * y[i];
    }
    double d = sw * sxx - sx * sx;
    *b = (sw * sxy - sx * sy) / d;
    *a = (sy - *b * sx) / sw;
}

static void test_line(void)
{
    char err[BASE_ERRLEN];
    calib_fit f;
    /* By hand: xbar 2.5, ybar 6.125, Sxx 5, Sxy 10.75 -> b 2.15, a 0.75;
     * residuals 0.1 -0.05 -0.2 0.15: SSres 0.075, SStot 23.1875. */
    double x[] = {1, 2, 3, 4}, y[] = {3, 5, 7, 9.5};
    CHECK(calib_fit_line(x, y, 4, 0, &f, err) == 0, "fit: %s", err);
    CHECK(NEAR(f.b, 2.15, 1e-12) && NEAR(f.a, 0.75, 1e-12), "a %g b %g", f.a, f.b);
    CHECK(NEAR(f.r2, 1 - 0.075 / 23.1875, 1e-12), "r2 %.12g", f.r2);
    CHECK(NEAR(f.rmse, sqrt(0.075 / 4), 1e-12), "rmse %g", f.rmse);
    CHECK(NEAR(f.max_rel, 0.1 / 3, 1e-12), "max_rel %g", f.max_rel); /* |0.1| / 3 at x = 1 */
    CHECK(f.n == 4, "n %d", f.n);

    /* Exact data: any weighting recovers it. */
    double y2[] = {5, 8, 11, 14};
    CHECK(calib_fit_line(x, y2, 4, 1, &f, err) == 0 && NEAR(f.a, 2, 1e-12) && NEAR(f.b, 3, 1e-12) &&
              NEAR(f.r2, 1, 1e-12) && f.rmse < 1e-12,
          "exact relative fit: a %g b %g r2 %g", f.a, f.b, f.r2);

    /* Relative weights 1/y^2 against the normal equations. */
    double x3[] = {1e3, 1e4, 1e5, 1e6, 1e7}, y3[] = {12e-6, 40e-6, 0.31e-3, 2.9e-3, 31e-3};
    double w3[5], a, b;
    for (int i = 0; i < 5; i++) w3[i] = 1 / (y3[i] * y3[i]);
    wls(x3, y3, w3, 5, &a, &b);
    CHECK(calib_fit_line(x3, y3, 5, 1, &f, err) == 0, "fit: %s", err);
    CHECK(NEAR(f.a, a, 1e-9 * fabs(a) + 1e-15) && NEAR(f.b, b, 1e-9 * fabs(b)),
          "relative fit a %g (want %g) b %g (want %g)", f.a, a, f.b, b);
    /* It is not the unweighted fit: the small points matter. */
    double w1[5] = {1, 1, 1, 1, 1}, a1, b1;
    wls(x3, y3, w1, 5, &a1, &b1);
    CHECK(fabs(a1 - a) > 1e-6, "relative and plain fits coincide (a %g %g)", a, a1);

    /* Through the origin: b = sum w x y / sum w x^2. */
    double num = 0, den = 0;
    for (int i = 0; i < 5; i++) {
        num += w3[i] * x3[i] * y3[i];
        den += w3[i] * x3[i] * x3[i];
    }
    CHECK(calib_fit_origin(x3, y3, 5, 1, &f, err) == 0 && f.a == 0 && NEAR(f.b, num / den, 1e-12 * num / den),
          "origin b %g want %g", f.b, num / den);

    /* Refusals. */
    double xs[] = {2, 2, 2};
    CHECK(calib_fit_line(xs, y, 3, 0, &f, err) == -1 && strstr(err, "same x"), "no spread: %s", err);
    CHECK(calib_fit_line(x, y, 1, 0, &f, err) == -1, "one point accepted");
    double yz[] = {1, 0, 2, 3};
    CHECK(calib_fit_line(x, yz, 4, 1, &f, err) == -1, "zero y with relative weights accepted");
    double yn[] = {1, NAN, 2, 3};
    CHECK(calib_fit_line(x, yn, 4, 0, &f, err) == -1, "NaN accepted");
}

static void test_stats(void)
{
    double v[] = {3, 1, 2};
    CHECK(base_median(v, 3) == 2, "median of 3");
    double v4[] = {4, 1, 3, 2};
    CHECK(base_median(v4, 4) == 2.5, "median of 4");
    CHECK(base_median(v, 0) == 0, "median of none");

    double p[] = {110, 90}, m[] = {100, 100};
    CHECK(NEAR(calib_mape(p, m, 2), 10, 1e-12) && NEAR(calib_max_ape(p, m, 2), 10, 1e-12), "mape 10");
    double p2[] = {120, 100}, m2[] = {100, 200};
    CHECK(NEAR(calib_mape(p2, m2, 2), 35, 1e-12) && NEAR(calib_max_ape(p2, m2, 2), 50, 1e-12),
          "mape 35 / max 50: %g %g", calib_mape(p2, m2, 2), calib_max_ape(p2, m2, 2));

    /* Spearman by hand: ranks of y (5,6,7,8,7) are 1,2,3.5,5,3.5 ->
     * rho = 8 / sqrt(10 * 9.5). */
    double x[] = {1, 2, 3, 4, 5}, y[] = {5, 6, 7, 8, 7};
    CHECK(NEAR(calib_spearman(x, y, 5), 8 / sqrt(95.0), 1e-12), "rho %g", calib_spearman(x, y, 5));
    double up[] = {1, 10, 100, 1000, 1e4}, down[] = {9, 7, 5, 3, 1}, flat[] = {2, 2, 2, 2, 2};
    CHECK(NEAR(calib_spearman(x, up, 5), 1, 1e-12), "monotone");
    CHECK(NEAR(calib_spearman(x, down, 5), -1, 1e-12), "reversed");
    CHECK(isnan(calib_spearman(x, flat, 5)), "constant side");
    CHECK(isnan(calib_spearman(x, y, 1)), "one point");
}

static void test_work(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("alexnet-bvlc", err);
    CHECK(n != NULL, "%s", err);
    if (!n) return;
    int c1 = net_find(n, "conv1"), r1 = net_find(n, "relu1"), f6 = net_find(n, "fc6");
    /* conv1: 48 of 96 channels x 3*11*11 x 55*55 outputs. */
    CHECK(calib_work(n, c1, 0, 48) == 48LL * 363 * 3025, "conv1 half: %lld", (long long)calib_work(n, c1, 0, 48));
    /* relu1: one op per output element, 96 x 55 x 55. */
    CHECK(calib_work(n, r1, 0, 96) == 96LL * 55 * 55, "relu1: %lld", (long long)calib_work(n, r1, 0, 96));
    /* fc6: 1024 of 4096 outputs x 9216 inputs. */
    CHECK(calib_work(n, f6, 0, 1024) == 1024LL * 9216, "fc6 quarter");
    CHECK(calib_share_channels(96, 3) == 32 && calib_share_channels(1000, 3) == 333 &&
              calib_share_channels(2, 4) == 1 && calib_share_channels(4096, 1) == 4096,
          "shares");
    net_free(n);
}

static void test_probes(void)
{
    char err[BASE_ERRLEN];
    CHECK(calib_probe_count() >= 2, "probes");
    int quick_wino = 0;
    for (int i = 0; i < calib_probe_count(); i++) {
        net *n = calib_probe_net(i, err);
        CHECK(n != NULL, "probe %d: %s", i, err);
        if (!n) continue;
        int have[COST_NCLASS] = {0}, dw = 0, pw = 0;
        for (int l = 0; l < n->n; l++) {
            const net_layer *L = &n->layers[l];
            have[L->kind] = 1;
            have[cost_class(n, l, NULL)] = 1;
            dw |= L->kind == NET_CONV && L->a.groups > 1;
            pw |= L->kind == NET_CONV && L->a.kh == 1;
            CHECK(calib_work(n, l, 0, L->out.c) > 0, "probe %d layer %s has no work", i, L->name);
        }
        /* every class, but Winograd only where the rule allows it (>= 16
         * channels: the tiny probe's 8 go through im2col, as toy6's do) */
        int wino_ok = n->input.c >= 16;
        for (int k = 0; k < COST_NCLASS; k++)
            CHECK(have[k] || (k == COST_CLASS_CONV_WINOGRAD && !wino_ok), "probe %s lacks %s",
                  n->name, cost_class_name(k));
        if (i < CALIB_PROBES_QUICK) quick_wino += have[COST_CLASS_CONV_WINOGRAD];
        CHECK(dw && pw, "probe %s lacks a depthwise or a pointwise conv", n->name);
        CHECK(!strncmp(n->name, "calib-probe", 11), "probe name %s", n->name);
        net_free(n);
    }
    CHECK(quick_wino >= 2, "--quick probes: %d with a Winograd layer, want 2 sizes", quick_wino);
    CHECK(calib_probe_net(calib_probe_count(), err) == NULL, "probe out of range accepted");
}

/* calib_fit_link: the rate from the large sizes, the latency from the
 * smallest (hand-worked data; then a real shaped link). */
static void test_link(void)
{
    char err[BASE_ERRLEN];
    calib_fit f;
    double x[8], y[8];
    /* An affine link (50 us, 100 MB/s): recovered exactly. */
    for (int i = 0; i < 8; i++) x[i] = 1024.0 * (1 << (2 * i)), y[i] = 50e-6 + x[i] * 1e-8;
    CHECK(calib_fit_link(x, y, 8, &f, err) == 0, "affine: %s", err);
    CHECK(NEAR(f.b, 1e-8, 1e-20) && NEAR(f.a, 50e-6, 1e-15), "affine: a %g b %g", f.a, f.b);
    CHECK(f.n == 4, "affine: the 4 sizes >= 16 MB / 64 decide the rate, got %d", f.n);

    /* A shaped link (tbf: 12.5 MB/s, a 64 KiB bucket, 10 us): a message
     * of x bytes takes 10 us + max(0, x - 65536) / rate.  Sizes from
     * 256 KiB up lie on the line of slope 1/rate; the smallest (1 KiB)
     * passes in 10 us, less than its transfer at the rate, so that is the
     * latency. */
    for (int i = 0; i < 8; i++) y[i] = 10e-6 + fmax(0, x[i] - 65536) * 8e-8;
    CHECK(calib_fit_link(x, y, 8, &f, err) == 0, "bucket: %s", err);
    CHECK(NEAR(f.b, 8e-8, 1e-19) && NEAR(f.a, 10e-6, 1e-15), "bucket: a %g b %g", f.a, f.b);
    /* The relative fit over every size, which calibration used before,
     * is the defect: it makes the link more than 10x too fast. */
    CHECK(calib_fit_line(x, y, 8, 1, &f, err) == 0 && f.b < 8e-9, "relative fit: b %g", f.b);

    /* A real ping-pong across emulated boards (b0 -> b2 of emu-3-mixed,
     * 100 Mbit/s, measured 25 Nov 2026): the rate is the unweighted slope
     * of the four sizes from 256 KiB (normal equations here), 11.9 MB/s;
     * 1 KiB took 12.4 us, less than its 86 us at that rate (the bucket),
     * so that is the latency. */
    double mx[] = {1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};
    double my[] = {1.24385e-05, 1.398899e-05, 2.35645e-05, 0.0012163705,
                   0.0168466085, 0.0827835145, 0.349883863, 1.401202081};
    double w[4] = {1, 1, 1, 1}, a, b;
    wls(mx + 4, my + 4, w, 4, &a, &b);
    CHECK(calib_fit_link(mx, my, 8, &f, err) == 0, "measured: %s", err);
    CHECK(NEAR(f.b, b, 1e-12 * b), "measured: b %g, by hand %g", f.b, b);
    CHECK(1 / b > 11.5e6 && 1 / b < 12.5e6, "measured: %g MB/s for 100 Mbit/s", 1 / b / 1e6);
    CHECK(my[0] < b * 1024 && f.a == my[0], "measured: latency %g", f.a);

    /* Unusable: one size only; time falling with size. */
    double same[] = {4096, 4096, 4096}, t[] = {1, 2, 3}, down[] = {3, 2, 1};
    CHECK(calib_fit_link(same, t, 3, &f, err) == -1 && strstr(err, "same size"), "one size: %s", err);
    CHECK(calib_fit_link(x, down, 3, &f, err) == -1 && strstr(err, "does not grow"), "falling: %s", err);
}

/* calib_fit_rate: the median of pairwise slopes and of the residuals,
 * worked by hand; one wild point among many moves least squares, not it;
 * a thinned sample when over CALIB_RATE_MAX points. */
static void test_rate(void)
{
    char err[BASE_ERRLEN];
    calib_fit f;
    /* Slopes: (1,2) 2, (1,3) 0.5, (1,4) 4/3, (2,3) -1, (2,4) 1, (3,4) 3;
     * median (1 + 4/3) / 2 = 7/6.  Residuals y - 7/6 x: -1/6, 2/3, -3/2,
     * 1/3; median (-1/6 + 1/3) / 2 = 1/12. */
    double x[] = {1, 2, 3, 4}, y[] = {1, 3, 2, 5};
    CHECK(calib_fit_rate(x, y, 4, &f, err) == 0, "hand: %s", err);
    CHECK(NEAR(f.b, 7.0 / 6, 1e-15) && NEAR(f.a, 1.0 / 12, 1e-15) && f.n == 4, "hand: a %g b %g n %d",
          f.a, f.b, f.n);
    /* Messages of 1-4 MB at 5 GB/s and 100 us latency, and one 4 MB
     * receive a poll delayed by 2 ms: exact, where least squares over the
     * same points (calib_fit_link) is 45% slow (2.76 GB/s). */
    double bx[13], by[13];
    for (int i = 0; i < 12; i++) bx[i] = 1e6 * (1 + i % 4), by[i] = 100e-6 + bx[i] / 5e9;
    bx[12] = 4e6, by[12] = 100e-6 + 4e6 / 5e9 + 2e-3;
    CHECK(calib_fit_rate(bx, by, 13, &f, err) == 0 && NEAR(f.b, 1 / 5e9, 1e-22) && NEAR(f.a, 100e-6, 1e-15),
          "outlier: a %g b %g (%s)", f.a, f.b, err);
    CHECK(calib_fit_link(bx, by, 13, &f, err) == 0 && 1 / f.b < 0.8 * 5e9, "least squares: %g B/s",
          1 / f.b);
    /* Thinned: 2 * CALIB_RATE_MAX + 1 points on a line keep its slope,
     * and n says how many were used. */
    enum { N = 2 * CALIB_RATE_MAX + 1 };
    static double lx[N], ly[N];
    for (int i = 0; i < N; i++) lx[i] = 1e5 * (1 + i % 7), ly[i] = 3e-5 + lx[i] * 2e-10;
    CHECK(calib_fit_rate(lx, ly, N, &f, err) == 0 && NEAR(f.b, 2e-10, 1e-22) && f.n == 667,
          "thinned: b %g n %d", f.b, f.n);
    /* Unusable: one size; time falling with size. */
    double same[] = {4096, 4096, 4096}, t[] = {1, 2, 3}, down[] = {3, 2, 1};
    CHECK(calib_fit_rate(same, t, 3, &f, err) == -1 && strstr(err, "same size"), "one size: %s", err);
    CHECK(calib_fit_rate(x, down, 3, &f, err) == -1 && strstr(err, "does not grow"), "falling: %s", err);
}

/* The class curve: groups, medians and pooling worked by hand; the
 * tangent's power between, below and beyond the points; a power law
 * sampled is its own curve (R^2 1); fewer than 3 groups give none. */
static void test_curve(void)
{
    char err[BASE_ERRLEN];
    coeffs_curve cv;
    /* groups under factor 1.5: {100, 110, 120}, {1000}, {10000},
     * {1e5, 1.2e5, 1.4e5}; medians (110, 12), (1000, 40), (10000, 30),
     * (1.2e5, 250) us; 40 > 30 pooled (weights 1 and 1): 35, 35. */
    double x[] = {120, 1e5, 100, 1000, 1.4e5, 10000, 110, 1.2e5};
    double y[] = {12e-6, 200e-6, 10e-6, 40e-6, 250e-6, 30e-6, 14e-6, 260e-6};
    CHECK(calib_fit_curve(x, y, 8, &cv, err) == 0, "%s", err);
    double ww[] = {110, 1000, 10000, 1.2e5}, wu[] = {12, 35, 35, 250};
    CHECK(cv.n == 4, "%d points, want 4", cv.n);
    for (int i = 0; i < 4 && cv.n == 4; i++)
        CHECK(cv.work[i] == ww[i] && fabs(cv.us[i] - wu[i]) < 1e-9, "point %d: (%g, %g) want (%g, %g)",
              i, cv.work[i], cv.us[i], ww[i], wu[i]);
    double t, pw;
    struct {
        double w, w0, u0, e;
    } at[] = {
        {500, 110, 12, log(35.0 / 12) / log(1000.0 / 110)},       /* between */
        {10, 110, 12, log(35.0 / 12) / log(1000.0 / 110)},        /* below: first segment */
        {5000, 1000, 35, 0},                                      /* flat */
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        CHECK(coeffs_curve_at(&cv, at[i].w, &t, &pw) == 0);
        double want = at[i].u0 * 1e-6 * pow(at[i].w / at[i].w0, at[i].e);
        CHECK(fabs(t - want) <= 1e-12 * want && fabs(pw - at[i].e) < 1e-12,
              "at %g: %g s power %g, want %g s power %g", at[i].w, t, pw, want, at[i].e);
    }
    /* beyond the last point: its tangent line, the last segment's power
     * e: T = 250 us (1 - e + e w / 1.2e5), local power e w / 1.2e5 / (T / 250 us) */
    {
        double e = log(250.0 / 35) / log(1.2e5 / 10000), r = 1e6 / 1.2e5;
        double want = 250e-6 * (1 - e + e * r);
        CHECK(coeffs_curve_at(&cv, 1e6, &t, &pw) == 0 && fabs(t - want) <= 1e-12 * want &&
                  fabs(pw - e * r / (1 - e + e * r)) < 1e-12,
              "beyond: %g s power %g, want %g s", t, pw, want);
        /* flat at the end: the last rising segment's power (3, clamped to 1) */
        coeffs_curve fl = {.n = 3, .work = {1, 2, 4}, .us = {1, 8, 8}, .r2 = NAN};
        CHECK(coeffs_curve_at(&fl, 8, &t, &pw) == 0 && fabs(t - 16e-6) < 1e-18 && pw == 1,
              "flat end: %g s power %g", t, pw);
    }
    /* a super-linear segment: the curve through its points, the charged
     * line's power held at 1 (no negative fixed cost) */
    coeffs_curve sl = {.n = 3, .work = {1, 2, 4}, .us = {1, 8, 16}, .r2 = NAN};
    CHECK(coeffs_curve_at(&sl, 1.5, &t, &pw) == 0 && pw == 1 && fabs(t - 3.375e-6) < 1e-18,
          "super-linear: %g s power %g, want 1.5^3 us power 1", t, pw);
    /* no curve for work or times that are not positive */
    double nx[] = {1, 10, 0}, ny[] = {1e-6, 2e-6, 3e-6};
    CHECK(calib_fit_curve(nx, ny, 3, &cv, err) == -1 && strstr(err, "positive"), "work 0: %s", err);
    CHECK(coeffs_curve_at(&sl, 0, &t, &pw) == -1, "work 0 has no tangent");
    /* y = 3e-7 x^0.6 on 20 works 2x apart: each its own group, R^2 1 */
    double px[20], py[20];
    for (int i = 0; i < 20; i++) px[i] = 100.0 * pow(2, i), py[i] = 3e-7 * pow(px[i], 0.6);
    CHECK(calib_fit_curve(px, py, 20, &cv, err) == 0 && cv.n == 20 && fabs(cv.r2 - 1) < 1e-9,
          "power law: %d points, R^2 %g", cv.n, cv.r2);
    /* 40 works 1.6x apart: the factor widens until at most 32 groups */
    double qx[40], qy[40];
    for (int i = 0; i < 40; i++) qx[i] = pow(1.6, i), qy[i] = 1e-6 * (1 + i);
    CHECK(calib_fit_curve(qx, qy, 40, &cv, err) == 0 && cv.n >= 3 && cv.n <= COEFFS_CURVE_MAX,
          "40 works: %d points", cv.n);
    /* two sizes: no curve */
    double tx[] = {100, 100, 1000}, ty[] = {1e-6, 2e-6, 3e-6};
    CHECK(calib_fit_curve(tx, ty, 3, &cv, err) == 0 && cv.n == 0, "two sizes: %d points", cv.n);
}

int main(void)
{
    test_curve();
    test_line();
    test_link();
    test_rate();
    test_stats();
    test_work();
    test_probes();
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
