/* bench_engine.c -- wall time (median of 5) and final hypervolume of this
 * engine on ZDT1 (pop 100 x 250 generations) and DTLZ2 with 3 objectives
 * (pop 1000 x 100), each with the archive off (the default, and what
 * pagmo::nsga2 does) and on; then both non-dominated sorts on 2,000 and 20,000
 * random 3-objective points.  Operators as pagmo is run in
 * bench_pagmo.cpp: SBX p 0.9 eta 20, polynomial mutation 1/n eta 20.
 * Hypervolume: the final population's first front at (1.1, ...).
 * Last, DTLZ2 pop 100 x 250 (the test's setting) for seeds 1..10: how far
 * the final first front lies from the unit sphere (worst, mean, points
 * beyond 0.02), the same figures bench_pagmo.cpp prints for pagmo. */
#include "nsga.h"
#include "problems.h"

#include <math.h>
#include <stdio.h>

#include "bench.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void run(const char *name, int pop, int gens, int archive)
{
    double t[5], hv = 0;
    char err[BASE_ERRLEN];
    for (int r = 0; r < 5; r++) {
        nsga_builtin *b = nsga_builtin_create(name, 1, err);
        nsga_options o;
        nsga_options_default(&o);
        o.pop_size = pop;
        o.max_gens = gens;
        o.seed = (unsigned long)r + 1;
        o.archive = archive;
        double t0 = base_now();
        nsga *e = nsga_create(nsga_builtin_problem(b), &o, err);
        if (!e || nsga_run(e, err) < 0) {
            fprintf(stderr, "%s: %s\n", name, err);
            exit(1);
        }
        t[r] = base_now() - t0;
        int m = nsga_builtin_problem(b)->nobj, n = 0;
        double *f = malloc((size_t)pop * m * sizeof *f);
        for (int i = 0; i < pop; i++)
            if (nsga_rank(e, i) == 0) memcpy(f + (size_t)n++ * m, nsga_objectives(e, i), m * sizeof *f);
        hv += nsga_hv(n, m, f, nsga_builtin_ref(b)) / 5;
        free(f);
        nsga_destroy(e);
        nsga_builtin_free(b);
    }
    printf("engine %-6s pop %4d x %3d gens, archive %-3s: median %.3f s, mean final hv %.5f\n", name, pop, gens,
           archive ? "on" : "off", base_median(t, 5), hv);
}

static void sorts(int n)
{
    double *obj = malloc((size_t)n * 3 * sizeof *obj);
    int *r1 = malloc((size_t)n * sizeof *r1), *r2 = malloc((size_t)n * sizeof *r2);
    unsigned s = 12345;
    for (int i = 0; i < 3 * n; i++) {
        s = s * 1664525u + 1013904223u;
        obj[i] = (s >> 8) / 16777216.0;
    }
    double td[5], tf[5];
    int fd = 0, ff = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = base_now();
        fd = nsga_sort_deb(n, 3, obj, NULL, r1);
        td[r] = base_now() - t0;
        t0 = base_now();
        ff = nsga_sort_fast(n, 3, obj, NULL, r2);
        tf[r] = base_now() - t0;
    }
    printf("sort %5d random 3-objective points: deb %.4f s, ens-bs %.4f s (%d fronts, ranks %s)\n", n, base_median(td, 5),
           base_median(tf, 5), ff, fd == ff && !memcmp(r1, r2, (size_t)n * sizeof *r1) ? "identical" : "DIFFER");
    free(obj), free(r1), free(r2);
}

static void sphere(void)
{
    char err[BASE_ERRLEN];
    for (int seed = 1; seed <= 10; seed++) {
        nsga_builtin *b = nsga_builtin_create("dtlz2", 1, err);
        nsga_options o;
        nsga_options_default(&o);
        o.pop_size = 100;
        o.max_gens = 250;
        o.seed = (unsigned long)seed;
        nsga *e = nsga_create(nsga_builtin_problem(b), &o, err);
        if (!e || nsga_run(e, err) < 0) {
            fprintf(stderr, "dtlz2: %s\n", err);
            exit(1);
        }
        double worst = 0, mean = 0;
        int n = 0, far = 0;
        for (int i = 0; i < 100; i++)
            if (nsga_rank(e, i) == 0) {
                const double *f = nsga_objectives(e, i);
                double d = fabs(sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]) - 1);
                worst = d > worst ? d : worst, mean += d, far += d > 0.02, n++;
            }
        printf("engine dtlz2 pop 100 x 250 seed %2d: front %3d, |r - 1| worst %.4f mean %.5f, %2d beyond 0.02\n",
               seed, n, worst, mean / n, far);
        nsga_destroy(e);
        nsga_builtin_free(b);
    }
}

int main(void)
{
    run("zdt1", 100, 250, 0);
    run("zdt1", 100, 250, 1);
    run("dtlz2", 1000, 100, 0);
    run("dtlz2", 1000, 100, 1);
    sorts(2000);
    sorts(20000);
    sphere();
    return 0;
}
