/* problems.h -- built-in test problems for the NSGA-II engine (`dse
 * optimize`, tests, benchmarks): ZDT1..ZDT6, DTLZ2 (3 objectives), a
 * bi-objective 0/1 knapsack and TNK (constrained).  Each comes with the
 * reference point at which its hypervolume is reported and, where the
 * Pareto front is known, that front's hypervolume.
 *
 * Ownership: nsga_builtin_create allocates everything the problem needs
 * (bounds, instance data, thread pool); nsga_builtin_problem returns a
 * pointer into it, valid until nsga_builtin_free.
 */
#ifndef DSE_PROBLEMS_H
#define DSE_PROBLEMS_H

#include "nsga.h"

typedef struct nsga_builtin nsga_builtin;

int nsga_builtin_count(void);
const char *nsga_builtin_name(int i);     /* "zdt1", ..., NULL out of range */
const char *nsga_builtin_describe(int i); /* one line */

/* nthreads >= 1: the batch evaluate spreads individuals over a thread pool
 * (results identical for any count).  NULL + message for an unknown name. */
nsga_builtin *nsga_builtin_create(const char *name, int nthreads, char *err);
void nsga_builtin_free(nsga_builtin *b);
const char *nsga_builtin_id(const nsga_builtin *b);
const char *nsga_builtin_describe_of(const nsga_builtin *b);
const nsga_problem *nsga_builtin_problem(const nsga_builtin *b);
/* Reference point for the hypervolume (nobj values):
 *   zdt1-4, zdt6, tnk: (1.1, 1.1); dtlz2: (1.1, 1.1, 1.1);
 *   zdt5: (32, 11) (f1 = 1 + ones in the first 30 bits is in [1, 31]);
 *   knapsack: (0, 0) -- the objectives are the negated profits, so the
 *   empty knapsack is the reference and every profitable feasible load
 *   dominates it. */
const double *nsga_builtin_ref(const nsga_builtin *b);
/* Hypervolume of the true Pareto front at the reference point, computed
 * on first call (analytic, dense sampling of the front, or for knapsack
 * exhaustive enumeration of the 2^22 loads); NAN if unknown. */
double nsga_builtin_true_hv(nsga_builtin *b);

#endif
