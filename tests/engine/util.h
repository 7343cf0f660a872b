/* util.h -- helpers shared by the engine tests, written independently of
 * the engine so that expected values never come from the code under test:
 * a plain 2-D hypervolume (qsort + staircase sweep) and a runner for the
 * built-in problems. */
#ifndef ENGINE_UTIL_H
#define ENGINE_UTIL_H

#include "nsga.h"
#include "problems.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int util_cmp2(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Area dominated by the points (x, y pairs) and bounded by (rx, ry). */
static inline double util_hv2(int n, const double *pts, double rx, double ry)
{
    double *p = malloc((size_t)(n ? n : 1) * 2 * sizeof *p);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (pts[2 * i] < rx && pts[2 * i + 1] < ry) {
            p[2 * k] = pts[2 * i];
            p[2 * k + 1] = pts[2 * i + 1];
            k++;
        }
    qsort(p, (size_t)k, 2 * sizeof *p, util_cmp2);
    double area = 0, top = ry;
    for (int i = 0; i < k; i++)
        if (p[2 * i + 1] < top) {
            area += (rx - p[2 * i]) * (top - p[2 * i + 1]);
            top = p[2 * i + 1];
        }
    free(p);
    return area;
}

static int util_cmpz(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[2] > y[2]) - (x[2] < y[2]);
}

/* Volume dominated by 3-D points and bounded by ref: slabs between
 * consecutive z values, each the 2-D area of the points below it.
 * O(n^2 log n); independent of the engine's treap sweep. */
static inline double util_hv3(int n, const double *pts, const double *ref)
{
    double *p = malloc((size_t)(n ? n : 1) * 3 * sizeof *p), *q = malloc((size_t)(n ? n : 1) * 2 * sizeof *q);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (pts[3 * i] < ref[0] && pts[3 * i + 1] < ref[1] && pts[3 * i + 2] < ref[2]) {
            memcpy(p + 3 * k, pts + 3 * i, 3 * sizeof *p);
            k++;
        }
    qsort(p, (size_t)k, 3 * sizeof *p, util_cmpz);
    double vol = 0;
    for (int i = 0; i < k; i++) {
        double z1 = i + 1 < k ? p[3 * (i + 1) + 2] : ref[2];
        if (z1 <= p[3 * i + 2]) continue;
        for (int j = 0; j <= i; j++) q[2 * j] = p[3 * j], q[2 * j + 1] = p[3 * j + 1];
        vol += util_hv2(i + 1, q, ref[0], ref[1]) * (z1 - p[3 * i + 2]);
    }
    free(p);
    free(q);
    return vol;
}

/* Runs a built-in problem; returns the engine (caller destroys it and the
 * problem *bp) or NULL after printing the error. */
static inline nsga *util_run(const char *name, int pop, long gens, unsigned long seed, int threads,
                             nsga_options *opt_inout, nsga_builtin **bp)
{
    char err[BASE_ERRLEN];
    nsga_builtin *b = nsga_builtin_create(name, threads, err);
    if (!b) {
        fprintf(stderr, "%s: %s\n", name, err);
        return NULL;
    }
    nsga_options o;
    if (opt_inout) o = *opt_inout;
    else nsga_options_default(&o);
    o.pop_size = pop;
    o.max_gens = gens;
    o.seed = seed;
    if (!o.ref) o.ref = nsga_builtin_ref(b);
    nsga *e = nsga_create(nsga_builtin_problem(b), &o, err);
    if (!e) {
        fprintf(stderr, "%s: %s\n", name, err);
        nsga_builtin_free(b);
        return NULL;
    }
    int rc = nsga_run(e, err);
    if (rc < 0) {
        fprintf(stderr, "%s: run failed: %s\n", name, err);
        nsga_destroy(e);
        nsga_builtin_free(b);
        return NULL;
    }
    *bp = b;
    return e;
}

/* Objectives of the feasible first front, row-major; returns the count. */
static inline int util_front(const nsga *e, double *out)
{
    int n = nsga_pop_size(e), m = nsga_get_problem(e)->nobj, k = 0;
    for (int i = 0; i < n; i++)
        if (nsga_rank(e, i) == 0 && nsga_cv(e, i) == 0) {
            memcpy(out + (size_t)k * m, nsga_objectives(e, i), (size_t)m * sizeof *out);
            k++;
        }
    return k;
}

/* Objectives of the archive (the non-dominated feasible solutions of the
 * whole run); returns the count.  out must hold archive_size * m. */
static inline int util_archive(const nsga *e, double *out)
{
    int n = nsga_archive_size(e), m = nsga_get_problem(e)->nobj;
    for (int i = 0; i < n; i++) memcpy(out + (size_t)i * m, nsga_archive_objectives(e, i), (size_t)m * sizeof *out);
    return n;
}

#endif
