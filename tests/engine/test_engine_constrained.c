/* test_engine_constrained.c -- constrained domination end to end.
 * TNK (two nonlinear constraints), pop 100, 250 generations: every member
 * of the final first front is feasible by the test's own evaluation of
 * the constraints, and the front's hypervolume is close to that of the
 * true front (sampled here from the boundary of the first constraint).
 * A second problem starts with an all-infeasible population (feasible
 * region x + y >= 1.8 in [0,1]^2) and must find it. */
#include "check.h"
#include "util.h"

static double tnk_violation(double x, double y)
{
    double g1 = x * x + y * y - 1 - 0.1 * cos(16 * atan2(x, y)); /* >= 0 */
    double g2 = (x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5);   /* <= 0.5 */
    return (g1 < 0 ? -g1 : 0) + (g2 > 0.5 ? g2 - 0.5 : 0);
}

/* corner problem: minimise (x, y) subject to x + y >= 1.8 */
static int corner_eval(void *ctx, int n, const double *g, double *obj, double *cv, char *err)
{
    (void)ctx, (void)err;
    for (int i = 0; i < n; i++) {
        obj[2 * i] = g[2 * i];
        obj[2 * i + 1] = g[2 * i + 1];
        double s = g[2 * i] + g[2 * i + 1];
        cv[i] = s < 1.8 ? 1.8 - s : 0;
    }
    return 0;
}

int main(void)
{
    nsga_builtin *b;
    nsga *e = util_run("tnk", 100, 250, 1, 1, NULL, &b);
    CHECK(e != NULL, "tnk ran");
    if (e) {
        int bad = 0, n = 0;
        double front[200];
        for (int i = 0; i < nsga_pop_size(e); i++) {
            if (nsga_rank(e, i) != 0) continue;
            const double *x = nsga_genome_real(e, i);
            if (tnk_violation(x[0], x[1]) > 0 || nsga_cv(e, i) > 0) bad++;
            CHECK(fabs(nsga_cv(e, i) - tnk_violation(x[0], x[1])) < 1e-12, "cv %g vs %g", nsga_cv(e, i),
                  tnk_violation(x[0], x[1]));
            front[2 * n] = x[0], front[2 * n + 1] = x[1], n++;
        }
        CHECK(bad == 0, "%d infeasible members in the final front", bad);
        enum { S = 200001 };
        double *tf = malloc(2 * S * sizeof *tf);
        int k = 0;
        for (int i = 0; i < S; i++) { /* r^2 = 1 + 0.1 cos(16 th) on the first constraint's boundary */
            double th = (M_PI / 2) * i / (S - 1), r = sqrt(1 + 0.1 * cos(16 * th));
            double x = r * sin(th), y = r * cos(th);
            if ((x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5) <= 0.5) tf[2 * k] = x, tf[2 * k + 1] = y, k++;
        }
        double t = util_hv2(k, tf, 1.1, 1.1), hv = util_hv2(n, front, 1.1, 1.1);
        printf("tnk: front %d points, all feasible: %s, hv %.5f, true %.5f (%.4f)\n", n, bad ? "no" : "yes", hv, t,
               hv / t);
        CHECK(hv >= 0.98 * t && hv <= t * 1.0001, "tnk hv %.5f vs true %.5f", hv, t);
        CHECK(fabs(nsga_builtin_true_hv(b) - t) < 1e-4, "built-in true hv %.5f vs %.5f", nsga_builtin_true_hv(b), t);
        free(tf);
        nsga_destroy(e);
        nsga_builtin_free(b);
    }

    double lo[2] = {0, 0}, hi[2] = {1, 1}, seeds[4] = {0, 0, 0.1, 0.2};
    nsga_problem p = {.kind = NSGA_REAL, .nvar = 2, .nobj = 2, .lo = lo, .hi = hi, .eval_real = corner_eval};
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = 40;
    o.max_gens = 60;
    o.nseeds = 2;
    o.seed_real = seeds; /* two clearly infeasible seeds */
    char err[BASE_ERRLEN];
    e = nsga_create(&p, &o, err);
    CHECK(e && nsga_init(e, err) == 0, "corner init");
    if (e) {
        CHECK(nsga_genome_real(e, 0)[0] == 0 && nsga_genome_real(e, 1)[1] == 0.2, "seed genomes come first");
        int rank_ok = 1;
        for (int i = 0; i < 40; i++)
            for (int j = 0; j < 40; j++) /* feasible always ranks before infeasible */
                if (nsga_cv(e, i) == 0 && nsga_cv(e, j) > 0 && nsga_rank(e, i) >= nsga_rank(e, j)) rank_ok = 0;
        CHECK(rank_ok, "feasible members rank before infeasible ones");
        CHECK(nsga_run(e, err) == NSGA_STOP_GENS, "corner run: %s", err);
        int feas = 0, on_line = 0;
        for (int i = 0; i < 40; i++) {
            const double *x = nsga_genome_real(e, i);
            feas += nsga_cv(e, i) == 0;
            on_line += nsga_rank(e, i) == 0 && fabs(x[0] + x[1] - 1.8) < 0.01;
        }
        CHECK(feas == 40 && nsga_get_stats(e)->feasible == 40, "all feasible at the end (%d)", feas);
        CHECK(on_line >= 20, "front on the constraint line x + y = 1.8 (%d members)", on_line);
        nsga_destroy(e);
    }
    return check_done("test_engine_constrained");
}
