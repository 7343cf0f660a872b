/* solve_impl.h -- what the solver files share (private to solve/): the
 * device ranking, per-layer allowed devices, the transfer estimate of the
 * additive cost, the network as a solve_dag, and evaluating a mapping. */
#ifndef DSE_SOLVE_IMPL_H
#define DSE_SOLVE_IMPL_H

#include "solve.h"

#include <stdint.h>

typedef struct {
    const solve_problem *p;
    int L, D;
    int *rank;       /* D: devices fastest first (whole-network compute time alone; ties: index) */
    double *speed_s; /* D: that time */
    int *allowed;    /* L x D: devices supporting layer l's kind, fastest first */
    int *nallowed;   /* L */
} solve_ctx;

int sctx_init(solve_ctx *c, const solve_problem *p, char *err);
void sctx_free(solve_ctx *c);
static inline const int *sctx_allowed(const solve_ctx *c, int l) { return c->allowed + (size_t)l * c->D; }

/* Bytes of channels nc of layer l's output (l = NET_INPUT: the input). */
double solve_bytes(const net *n, int l, int nc);
/* t_c: the slowest slice of layer l computing slices s[0..k). */
double solve_tc(const solve_problem *p, int l, const map_slice *s, int k);
/* t_x: moving the output of producer q (NET_INPUT: the input, held by the
 * source), held as slices s[0..k), to every device of rdev[0..nr), as the
 * plan does (docs/solvers.md). */
double solve_tx(const solve_problem *p, int q, const map_slice *s, int k, const int *rdev, int nr);

/* The network as a DAG of distinct producer edges (the input excluded);
 * w and ew left NULL.  Arrays owned by the struct: sdag_free. */
int sdag_of_net(const net *n, solve_dag *g);
void sdag_free(solve_dag *g);

/* Plan + schedule simulation of m: 0, or -1 with err.  _dev also fills
 * per_dev (pl->ndev entries, or NULL). */
int solve_eval(const solve_problem *p, const mapping *m, cost_result *r, char *err);
int solve_eval_dev(const solve_problem *p, const mapping *m, cost_result *r, cost_device *per_dev,
                   char *err);

/* Append a named figure to r->stat. */
void solve_stat(solve_result *r, const char *key, double value);

#endif
