/* solve.h -- planners that compute one mapping directly, without search
 * (issue 20; docs/solvers.md): the whole public API of the solve module,
 * prefix solve_.
 *
 *   single    the best single-device mapping (lowest simulated latency)
 *   greedy    list scheduling: each layer, in topological order, to the
 *             device where it finishes first
 *   elim      Jia et al. (seed 001, section 5): node and edge elimination
 *             on the additive cost of eq. 1, then enumeration (or a beam)
 *   cluster   Ramiel (seed 002, section III): critical-path linear
 *             clustering, its cluster merging, then merging down to the
 *             device count
 *   subgraph  seed 004: maximal connected convex subgraphs of the layers
 *             an accelerator supports, post-pruned, offloaded when the
 *             model says it pays
 *   memory    the lowest peak memory per device: bands of rows or columns
 *             before a boundary, channel cuts after, the channel shares
 *             balanced against each device's peak (memory.c)
 *
 * Every method but memory (which minimises peak memory per device)
 * minimises latency by its own estimate; every method honours the
 * platform's "supports" lists (no layer lands on a device that does not
 * support its kind), and returns a mapping that passes mapping_validate;
 * solve_run then evaluates it with the calibrated model (plan + schedule
 * simulation), so all methods are compared on the same objectives.  A
 * method is one file and one row of the table in solve.c.
 *
 * The building blocks (the additive cost, elimination on any pairwise cost
 * graph, linear clustering, convex subgraphs) work on plain graphs so the
 * tests can check them against brute force and hand-worked examples.
 *
 * Ownership: a solve_problem borrows everything it points to.  Errors go
 * to char err[BASE_ERRLEN] as one line; nothing here prints.
 */
#ifndef DSE_SOLVE_H
#define DSE_SOLVE_H

#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "platform.h"

typedef struct {
    const net *n;
    const platform *pl;
    cost_model *cost; /* cost_new(n, pl, coefficients): one per thread */
    int split_mask;   /* kinds that may be split (elim); NET_SPLIT_DEFAULT */
    int beam;         /* elim's fallback beam width; 0 = SOLVE_BEAM */
} solve_problem;

#define SOLVE_BEAM 64
/* elim enumerates the reduced graph when its strategies number at most this. */
#define SOLVE_ENUM_LIMIT 1000000LL
#define SOLVE_MAX_STATS 10

/* What a solver reports besides its mapping. */
typedef struct {
    const char *method;  /* the table's name */
    double seconds;      /* wall time of the solver itself (not of the evaluation) */
    cost_result obj;     /* the model's objectives of the mapping */
    double estimate_ms;  /* the solver's own latency estimate (elim: the additive
                            optimum; greedy and cluster: their schedules); NAN if none */
    char detail[400];    /* one line: how it was found */
    int nstat;           /* named figures, for --json and the benchmark */
    struct {
        const char *key;
        double value;
    } stat[SOLVE_MAX_STATS];
} solve_result;

typedef int (*solve_fn)(const solve_problem *p, mapping *out, solve_result *r, char *err);

typedef struct {
    const char *name;
    solve_fn fn;
    const char *summary;
} solve_method;

/* The methods, in table order; *count receives their number. */
const solve_method *solve_methods(int *count);
const solve_method *solve_find(const char *name); /* NULL if unknown */

/* Run method `name` on p: out (mapping_new(n->n, pl->ndev)) receives the
 * mapping, r what is known about it (objectives by plan + schedule
 * simulation).  Returns 0; -1 with err for bad input (unknown method, a
 * platform that cannot run the network or that the method does not apply
 * to); -2 with err when memory ran out. */
int solve_run(const char *name, const solve_problem *p, mapping *out, solve_result *r, char *err);

/* The methods themselves (what solve_run calls; r->obj is filled by
 * solve_run, not by them). */
int solve_single(const solve_problem *p, mapping *out, solve_result *r, char *err);
int solve_greedy(const solve_problem *p, mapping *out, solve_result *r, char *err);
int solve_elim(const solve_problem *p, mapping *out, solve_result *r, char *err);
int solve_cluster(const solve_problem *p, mapping *out, solve_result *r, char *err);
int solve_subgraph(const solve_problem *p, mapping *out, solve_result *r, char *err);
int solve_memory(const solve_problem *p, mapping *out, solve_result *r, char *err);

/* ---- the additive cost (seed 001 eq. 1, docs/solvers.md) ----
 * Seconds: the sum over layers of t_c (the slowest slice's compute) and
 * over distinct producer -> consumer edges of t_x (the messages the plan
 * sends for that edge, serialised per receiver and per sender, the larger
 * of the two, plus the receiver's concat of a split tensor), plus moving
 * the network input from the source and concatenating a split output.
 * Any mapping of p's net and platform. */
double solve_additive_s(const solve_problem *p, const mapping *m);

/* ---- node and edge elimination on a pairwise cost graph ----
 * Nodes 0..n-1 in topological order, node i with ncfg[i] configurations
 * and unary[i][c]; edge e from ea[e] to eb[e] (ea < eb) with
 * pair[e][ca * ncfg[eb] + cb].  Minimises sum of unary + pair. */
typedef struct {
    int n;
    const int *ncfg;
    double *const *unary;
    int nedge;
    const int *ea, *eb;
    double *const *pair;
} solve_egraph;

typedef struct {
    int node_elims, edge_elims;
    int nodes_left, edges_left; /* K and the edges of the reduced graph */
    double strategies_left;     /* product of the configurations left */
    int enumerated;             /* 1: the reduced graph was enumerated (optimal) */
    int beam;                   /* else: the beam width used, then local search */
    double cost;                /* of the strategy returned, on the original graph */
} solve_elim_info;

/* Eliminate until no rule applies, enumerate the K nodes left when their
 * strategies number at most enum_limit (else a beam of width beam along the
 * topological order, then single-node improvements), undo the
 * eliminations.  cfg receives n configurations.  0, or -1 (err). */
int solve_eliminate(const solve_egraph *g, long long enum_limit, int beam, int *cfg,
                    solve_elim_info *info, char *err);

/* ---- weighted DAGs (cluster, subgraph) ----
 * Nodes 0..n-1 in topological order; node i's distinct predecessors are
 * pred[first[i] .. first[i+1]) (each < i) with edge weights ew[] at the
 * same positions (may be NULL when unused); node weights w (may be NULL). */
typedef struct {
    int n;
    const int *first, *pred;
    const double *w, *ew;
} solve_dag;

/* Ramiel's distance pass: dte[i] = w[i] + max over successors s of
 * (ew(i, s) + dte[s]).  0, or -1 out of memory. */
int solve_distance_to_end(const solve_dag *g, double *dte);
/* Ramiel algorithm 1 (recursive critical-path linear clustering): cluster
 * labels 0, 1, ... in order of creation; returns the count (-1 no memory). */
int solve_lc(const solve_dag *g, int *cluster);
/* Ramiel algorithms 2 and 3: merge clusters whose spans (distance_to_end
 * of entry and exit) do not overlap, to a fixed point.  Relabels cluster
 * 0..m-1 (in order of the merged list); returns m (-1 no memory). */
int solve_lc_merge(const solve_dag *g, int k, int *cluster);
/* Schedule length of a clustering: each cluster one processor running its
 * nodes in topological order, edges between clusters cost ew. */
double solve_cluster_length(const solve_dag *g, const int *cluster);
/* Merge k clusters down to at most target: each time the pair whose union
 * gives the shortest schedule length (ties: the first pair in label
 * order).  Relabels; returns the count (-1 no memory). */
int solve_merge_to(const solve_dag *g, int k, int target, int *cluster);

/* Seed 004: maximal connected convex subgraphs of the nodes with ok[i]:
 * label[i] = subgraph 0.. (in order of their first node) or -1.  Convex:
 * no path between two of its nodes leaves it.  Returns the count. */
int solve_convex_subgraphs(const solve_dag *g, const unsigned char *ok, int *label);
/* Seed 004's post-pruning: split every subgraph into pieces with one
 * input operator and one output operator each (the only nodes with
 * predecessors, resp. successors, outside the piece), convex and
 * connected.  piece[i] = piece 0.. or -1 where label[i] < 0.  Returns the
 * count. */
int solve_prune(const solve_dag *g, const int *label, int *piece);

#endif
