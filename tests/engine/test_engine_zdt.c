/* test_engine_zdt.c -- convergence on ZDT1, 2, 3, 4, 6 with the default
 * real operators (SBX eta 20, p 0.9; polynomial mutation eta 20, 1/n):
 * pop 100, 250 generations, seed 1 (the first seed, not a chosen one).
 * The final front's hypervolume at (1.1, 1.1) must be within 1% of the
 * true front's (5% for ZDT4); the true values are computed here by dense
 * sampling of the analytic fronts with the test's own 2-D hypervolume. */
#include "check.h"
#include "util.h"

#include <stdio.h>

enum { S = 100001 };

static double true_hv(const char *name)
{
    double *p = malloc(2 * S * sizeof *p);
    for (int i = 0; i < S; i++) {
        double t = (double)i / (S - 1), f1 = t, f2;
        if (!strcmp(name, "zdt1") || !strcmp(name, "zdt4")) f2 = 1 - sqrt(t);
        else if (!strcmp(name, "zdt2")) f2 = 1 - t * t;
        else if (!strcmp(name, "zdt3")) f2 = 1 - sqrt(t) - t * sin(10 * M_PI * t);
        else { /* zdt6: sample x1, the front is f2 = 1 - f1^2 */
            f1 = 1 - exp(-4 * t) * pow(sin(6 * M_PI * t), 6);
            f2 = 1 - f1 * f1;
        }
        p[2 * i] = f1;
        p[2 * i + 1] = f2;
    }
    double v = util_hv2(S, p, 1.1, 1.1);
    free(p);
    return v;
}

/* The built-in objective functions agree with the textbook formulas at a
 * random point. */
static void check_definition(const char *name)
{
    char err[BASE_ERRLEN];
    nsga_builtin *b = nsga_builtin_create(name, 1, err);
    const nsga_problem *p = nsga_builtin_problem(b);
    double x[30], f[2], cv = 0;
    unsigned s = 12345;
    for (int j = 0; j < p->nvar; j++) {
        s = s * 1103515245u + 12345u;
        x[j] = p->lo[j] + (p->hi[j] - p->lo[j]) * ((s >> 8) & 0xffff) / 65535.0;
    }
    p->eval_real(p->ctx, 1, x, f, &cv, err);
    int n = p->nvar;
    double sum = 0, g, f1 = x[0], f2;
    for (int j = 1; j < n; j++) sum += x[j];
    if (!strcmp(name, "zdt4")) {
        g = 1 + 10 * (n - 1);
        for (int j = 1; j < n; j++) g += x[j] * x[j] - 10 * cos(4 * M_PI * x[j]);
        f2 = g * (1 - sqrt(f1 / g));
    } else if (!strcmp(name, "zdt6")) {
        g = 1 + 9 * pow(sum / 9, 0.25);
        f1 = 1 - exp(-4 * x[0]) * pow(sin(6 * M_PI * x[0]), 6);
        f2 = g * (1 - pow(f1 / g, 2));
    } else {
        g = 1 + 9 * sum / 29;
        if (!strcmp(name, "zdt1")) f2 = g * (1 - sqrt(f1 / g));
        else if (!strcmp(name, "zdt2")) f2 = g * (1 - pow(f1 / g, 2));
        else f2 = g * (1 - sqrt(f1 / g) - f1 / g * sin(10 * M_PI * f1));
    }
    CHECK(fabs(f[0] - f1) < 1e-12 && fabs(f[1] - f2) < 1e-9, "%s: (%g, %g) vs (%g, %g)", name, f[0],
          f[1], f1, f2);
    CHECK(cv == 0, "%s is unconstrained", name);
    nsga_builtin_free(b);
}

int main(void)
{
    const char *names[] = {"zdt1", "zdt2", "zdt3", "zdt4", "zdt6"};
    CHECK(fabs(true_hv("zdt1") - (0.11 + 0.1 + 2.0 / 3)) < 1e-5, "ZDT1 true hv %.6f vs 0.876667",
          true_hv("zdt1"));
    CHECK(fabs(true_hv("zdt2") - (0.11 + 0.1 + 1.0 / 3)) < 1e-5, "ZDT2 true hv %.6f vs 0.543333",
          true_hv("zdt2"));
    for (int k = 0; k < 5; k++) {
        check_definition(names[k]);
        nsga_builtin *b;
        nsga *e = util_run(names[k], 100, 250, 1, 1, NULL, &b);
        CHECK(e != NULL, "%s ran", names[k]);
        if (!e) continue;
        double front[200];
        int n = util_front(e, front);
        double hv = util_hv2(n, front, 1.1, 1.1), t = true_hv(names[k]);
        double tol = !strcmp(names[k], "zdt4") ? 0.05 : 0.01;
        printf("%s: front %d points, hv %.5f, true %.5f, ratio %.4f (engine stats hv %.5f)\n",
               names[k], n, hv, t, hv / t, nsga_get_stats(e)->hv);
        CHECK(hv >= (1 - tol) * t, "%s: hv %.5f below %.0f%% of %.5f", names[k], hv, 100 * (1 - tol), t);
        CHECK(hv <= t * (1 + 1e-4), "%s: hv %.5f above the true %.5f", names[k], hv, t);
        CHECK(nsga_get_stats(e)->generation == 250, "%s: 250 generations", names[k]);
        nsga_destroy(e);
        nsga_builtin_free(b);
    }
    return check_done("test_engine_zdt");
}
