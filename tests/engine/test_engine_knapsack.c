/* test_engine_knapsack.c -- the built-in bi-objective 0/1 knapsack
 * (Zitzler-Thiele, 22 items, 2 knapsacks, integer genome): the exact
 * Pareto front is found here by evaluating all 2^22 loads through the
 * problem's own batch callback; the engine (pop 100, 200 generations,
 * integer operators with duplicate elimination: uniform and two-point
 * crossover, random-reset mutation) must reach >= 99% of the exact front's
 * hypervolume at the reference (0, 0) (objectives are negated profits).
 * Without duplicate elimination the population fills with copies in a
 * space this small (half the offspring are cache hits) and ends between
 * 98.7% and 99.4% depending on the seed: printed, not checked. */
#include "check.h"
#include "util.h"

enum { BATCH = 4096 };

int main(void)
{
    char err[BASE_ERRLEN];
    nsga_builtin *b = nsga_builtin_create("knapsack", 1, err);
    const nsga_problem *p = nsga_builtin_problem(b);
    int nv = p->nvar;
    CHECK(p->kind == NSGA_INT && nv >= 20 && nv <= 24 && p->nobj == 2, "knapsack: %d 0/1 items, 2 objectives", nv);
    for (int j = 0; j < nv; j++) CHECK(p->ilo[j] == 0 && p->ihi[j] == 1, "gene %d is 0/1", j);

    /* exhaustive: best[-f1] = max(-f2) over feasible loads (profits are integers) */
    int *g = malloc((size_t)BATCH * nv * sizeof *g), maxp = 0;
    double *obj = malloc(2 * BATCH * sizeof *obj), *cv = malloc(BATCH * sizeof *cv);
    int *best = calloc(100000, sizeof *best);
    for (int i = 0; i < 100000; i++) best[i] = -1;
    long long nfeas = 0;
    for (long base = 0; base < (1L << nv); base += BATCH) {
        for (int k = 0; k < BATCH; k++)
            for (int j = 0; j < nv; j++) g[(size_t)k * nv + j] = (int)(((base + k) >> j) & 1);
        for (int k = 0; k < BATCH; k++) cv[k] = 0;
        p->eval_int(p->ctx, BATCH, g, obj, cv, err);
        for (int k = 0; k < BATCH; k++) {
            if (cv[k] > 0) continue;
            nfeas++;
            int a = (int)-obj[2 * k], c = (int)-obj[2 * k + 1];
            if (a < 0 || a >= 100000 || -obj[2 * k] != a) continue;
            if (c > best[a]) best[a] = c;
            if (a > maxp) maxp = a;
        }
    }
    double *pts = malloc((size_t)(maxp + 1) * 2 * sizeof *pts);
    int np = 0;
    for (int a = 0; a <= maxp; a++)
        if (best[a] >= 0) pts[2 * np] = -a, pts[2 * np + 1] = -best[a], np++;
    double exact = util_hv2(np, pts, 0, 0);
    int nfront = 0;
    for (int i = 0, top = -1; i < np; i++) { /* count the exact front: increasing -f1 means decreasing a */
        int a = -(int)pts[2 * (np - 1 - i)], c = -(int)pts[2 * (np - 1 - i) + 1];
        (void)a;
        if (c > top) nfront++, top = c;
    }
    printf("knapsack: %lld feasible loads of %ld, exact front %d points, hv %.1f\n", nfeas, 1L << nv, nfront, exact);
    CHECK(nfeas > 0 && exact > 0, "exact front found");
    CHECK(fabs(nsga_builtin_true_hv(b) - exact) < 1e-6 * exact, "built-in true hv %.1f vs %.1f",
          nsga_builtin_true_hv(b), exact);
    nsga_builtin_free(b);

    /* uniform crossover; uniform + duplicate elimination; two-point + dedup */
    for (int v = 0; v < 3; v++) {
        int xo = v == 2;
        nsga_options o;
        nsga_options_default(&o);
        o.xover = xo ? NSGA_XO_TWOPOINT : NSGA_XO_UNIFORM;
        o.dedup = v > 0;
        o.archive = 1;
        nsga *e = util_run("knapsack", 100, 200, 1, 1, &o, &b);
        CHECK(e != NULL, "knapsack ran");
        if (!e) continue;
        double front[200], arch[2 * 4096];
        int n = util_front(e, front), na = nsga_archive_size(e);
        double hv = util_hv2(n, front, 0, 0);
        if (na > 4096) na = 4096;
        util_archive(e, arch);
        double ahv = util_hv2(na, arch, 0, 0);
        printf("knapsack %s crossover%s: population front %d points hv %.1f (%.4f), archive %d hv %.4f, "
               "evaluations %lld, cache hits %lld\n",
               xo ? "two-point" : "uniform", o.dedup ? " + dedup" : "", n, hv, hv / exact, na, ahv / exact, nsga_get_stats(e)->evaluations,
               nsga_get_stats(e)->cache_hits);
        if (o.dedup) CHECK(hv >= 0.99 * exact, "population front hv %.1f below 99%% of %.1f", hv, exact);
        CHECK(ahv >= hv && ahv <= exact * (1 + 1e-12), "archive hv %.1f between %.1f and %.1f", ahv, hv, exact);
        for (int i = 0; i < nsga_pop_size(e); i++) {
            const int *x = nsga_genome_int(e, i);
            for (int j = 0; j < nv; j++) CHECK(x[j] == 0 || x[j] == 1, "gene %d = %d", j, x[j]);
        }
        if (!o.dedup) CHECK(nsga_get_stats(e)->cache_hits > 0, "a 0/1 problem repeats genomes; the cache answers them");
        else CHECK(nsga_get_stats(e)->redrawn > 0, "duplicates were re-drawn");
        nsga_destroy(e);
        nsga_builtin_free(b);
    }
    free(g), free(obj), free(cv), free(best), free(pts);
    return check_done("test_engine_knapsack");
}
