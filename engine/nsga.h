/* nsga.h -- the NSGA-II engine's whole public API (prefix nsga_).
 *
 * The engine evolves integer genomes (int, 32 bits) or real vectors against
 * a problem that returns M objectives (all minimised) and one constraint
 * violation (>= 0, 0 = feasible).  It knows nothing about CNNs.
 *
 * Invariants the engine keeps:
 *  - Random numbers are drawn only by the engine, in the calling thread,
 *    from one gsl_rng_mt19937 seeded once; what is drawn depends only on
 *    the population (never on the cache, on timing or on threads).  Hence
 *    the same seed and options give a bit-identical run, however the
 *    problem's batch evaluate is parallelised, and a checkpoint restores a
 *    run that continues bit for bit like an uninterrupted one.
 *  - A failed call (bad input, failed evaluation) leaves the engine as it
 *    was before the call; errors come back as a negative nsga_status and a
 *    message in a caller buffer of BASE_ERRLEN bytes (err may be NULL).
 *    The library never prints and never aborts on bad input.
 *
 * Ownership: every pointer passed in (problem bounds, options' seed
 * genomes and reference point) is copied by nsga_create, except
 * problem.ctx and options.on_gen_ctx, which the caller owns and must keep
 * alive while the engine lives.  Every pointer returned by an accessor
 * points into the engine, is read-only, and is valid until the next
 * nsga_init / nsga_step / nsga_run / nsga_restore / nsga_destroy.
 * See docs/engine.md for operators, determinism and the checkpoint format.
 */
#ifndef DSE_NSGA_H
#define DSE_NSGA_H

#include <stddef.h>

#include "base.h"

#define NSGA_MAX_OBJ 16

/* Return codes: 0 ok, negative errors. */
enum nsga_status {
    NSGA_OK = 0,
    NSGA_EINVAL = -1, /* bad problem, options or arguments */
    NSGA_ENOMEM = -2, /* allocation failed */
    NSGA_EEVAL = -3,  /* the evaluate callback failed or returned bad values */
    NSGA_ESTATE = -4, /* call out of order (e.g. step before init) */
    NSGA_ECKPT = -5   /* checkpoint blob malformed or from another setup */
};

/* Why nsga_run stopped (positive return values of nsga_run). */
enum nsga_stop {
    NSGA_STOP_NONE = 0,
    NSGA_STOP_GENS = 1,     /* options.max_gens generations done */
    NSGA_STOP_EVALS = 2,    /* options.max_evals reached */
    NSGA_STOP_TIME = 3,     /* options.max_seconds elapsed */
    NSGA_STOP_STAGNATION = 4, /* hypervolume gain small for stag_gens generations */
    NSGA_STOP_CALLBACK = 5  /* the per-generation callback asked to stop */
};

typedef enum { NSGA_INT = 0, NSGA_REAL = 1 } nsga_kind;

/* Batch evaluation: n individuals, genome i at genomes[i*nvar .. +nvar).
 * Write obj[i*nobj + k] (minimised, finite) and, for constrained problems,
 * cv[i] >= 0 (the engine zero-fills cv before the call).  Return 0, or
 * nonzero after writing a message into err (BASE_ERRLEN bytes).  The
 * buffers belong to the engine and are valid only during the call.  The
 * callback must be a function of the genome alone (the cache relies on it)
 * and may evaluate the batch in parallel (see nsga_eval_parallel). */
typedef int (*nsga_eval_int_fn)(void *ctx, int n, const int *genomes, double *obj, double *cv,
                                char *err);
typedef int (*nsga_eval_real_fn)(void *ctx, int n, const double *genomes, double *obj,
                                 double *cv, char *err);

typedef struct {
    nsga_kind kind;
    int nvar; /* >= 1 */
    int nobj; /* 2 .. NSGA_MAX_OBJ */
    /* NSGA_INT: inclusive bounds ilo[j] <= gene j <= ihi[j]; eval_int. */
    const int *ilo, *ihi;
    nsga_eval_int_fn eval_int;
    /* NSGA_REAL: finite bounds lo[j] <= x_j <= hi[j]; eval_real. */
    const double *lo, *hi;
    nsga_eval_real_fn eval_real;
    void *ctx; /* passed to the callback; owned by the caller */
} nsga_problem;

typedef enum { NSGA_XO_UNIFORM = 0, NSGA_XO_TWOPOINT = 1 } nsga_xover;

/* How survival cuts the last front that does not fit whole:
 * NSGA_TRUNC_ITERATIVE removes the most crowded member one at a time and
 * updates its neighbours' distances (Kukkonen & Deb 2006; spreads the
 * front better); NSGA_TRUNC_ONESHOT keeps the largest distances computed
 * once (Deb et al. 2002, as pagmo does). */
typedef enum { NSGA_TRUNC_ITERATIVE = 0, NSGA_TRUNC_ONESHOT = 1 } nsga_truncation;

/* Polynomial mutation: NSGA_PM_CLAMPED is the textbook form (Deb & Agrawal
 * 1999): x += delta * (hi - lo), delta in [-1, 1] with density ~ (1 -
 * |delta|)^eta, then clamped, so genes reach a bound exactly;
 * NSGA_PM_BOUNDED is the later form of Deb's NSGA-II code (and pagmo),
 * whose step shrinks with the distance to the bound. */
typedef enum { NSGA_PM_CLAMPED = 0, NSGA_PM_BOUNDED = 1 } nsga_pm_form;

/* Statistics of the current population (after nsga_init or a step). */
typedef struct {
    long generation;        /* 0 after nsga_init, +1 per step */
    long long evaluations;  /* individuals passed to the evaluate callback */
    long long cache_hits;   /* offspring answered by the evaluation cache */
    long long redrawn;      /* offspring re-drawn by duplicate elimination */
    double hv;              /* hypervolume of the feasible first front at
                               options.ref; NAN when no ref was given */
    double best[NSGA_MAX_OBJ]; /* per objective, min over feasible members;
                                  NAN when none is feasible */
    int front_size;         /* members of rank 0 */
    int archive_size;       /* members of the archive (see options.archive) */
    int feasible;           /* feasible members */
    double elapsed;         /* seconds spent in init + steps (summed over
                               checkpoints; the only non-deterministic field) */
} nsga_stats;

typedef struct nsga nsga;

/* Per-generation callback of nsga_run: called after nsga_init and after
 * every step with the engine (read it with the accessors below, or
 * checkpoint it) and its statistics.  Return nonzero to stop the run. */
typedef int (*nsga_gen_fn)(const nsga *e, const nsga_stats *s, void *ctx);

typedef struct {
    int pop_size;         /* even, >= 4 (default 100) */
    unsigned long seed;   /* gsl_rng_mt19937 seed (default 1; GSL maps 0 to 4357) */
    double pc;            /* crossover probability per pair (0.9) */
    double pm;            /* per-gene mutation rate; <= 0 means 1/nvar (0) */
    nsga_xover xover;     /* integer crossover (NSGA_XO_UNIFORM) */
    nsga_truncation truncation; /* last-front cut (NSGA_TRUNC_ITERATIVE) */
    double eta_c, eta_m;  /* SBX and polynomial mutation indices (20, 20) */
    nsga_pm_form pm_form; /* polynomial mutation form (NSGA_PM_CLAMPED) */
    int dedup;            /* re-draw offspring equal to a member or to an
                             earlier offspring (0) ... */
    int dedup_retries;    /* ... at most this many times per child (10) */
    int cache;            /* evaluation cache keyed by genome (1) */
    int archive;          /* keep the non-dominated set of every feasible
                             solution evaluated, beside the population (0);
                             costs O(archive size) per offspring for m >= 3 */
    int archive_max;      /* prune the archive to this size by iterative
                             crowding; 0 = unbounded (0) */
    const double *ref;    /* nobj values: reference point for stats.hv and
                             stagnation; NULL = no hypervolume (NULL) */
    int nseeds;           /* initial genomes given by the caller (0) ... */
    const int *seed_int;  /* ... nseeds*nvar genes, NSGA_INT problems */
    const double *seed_real; /* ... or NSGA_REAL problems */
    /* Termination for nsga_run; 0 disables a criterion. */
    long max_gens;        /* total generations (100) */
    long long max_evals;  /* evaluations + cache_hits, i.e. individuals
                             produced, so independent of the cache (0) */
    double max_seconds;   /* stats.elapsed budget (0) */
    int stag_gens;        /* stop after this many consecutive generations ... (0) */
    double stag_tol;      /* ... whose relative hv gain is <= stag_tol (1e-6);
                             needs ref */
    nsga_gen_fn on_gen;   /* optional per-generation callback (NULL) */
    void *on_gen_ctx;     /* owned by the caller */
} nsga_options;

void nsga_options_default(nsga_options *o);

/* Checks problem and options, copies them, seeds the RNG.  Returns NULL
 * with a message on bad input (population < 4 or odd, nvar < 1, nobj
 * outside 2..NSGA_MAX_OBJ, lower > upper, missing callback, seed genome out
 * of bounds, ...) or when out of memory. */
nsga *nsga_create(const nsga_problem *p, const nsga_options *o, char *err);
void nsga_destroy(nsga *e);

/* Fills the population (the seed genomes, then random ones), evaluates it
 * and ranks it: generation 0. */
int nsga_init(nsga *e, char *err);
/* One generation: selection, variation, evaluation, (mu+lambda) survival. */
int nsga_step(nsga *e, char *err);
/* Initialises if needed, then steps until a termination criterion or the
 * callback stops it.  Returns the nsga_stop reason (> 0) or an error (< 0).
 * With no criterion set at all it returns NSGA_EINVAL. */
int nsga_run(nsga *e, char *err);
/* The termination criterion met by the current state (NSGA_STOP_NONE if
 * none); nsga_run uses it before every step. */
int nsga_should_stop(const nsga *e);

/* Accessors; i in [0, pop_size).  Genomes of the other kind return NULL. */
const nsga_stats *nsga_get_stats(const nsga *e);
const nsga_problem *nsga_get_problem(const nsga *e); /* the engine's copy */
int nsga_pop_size(const nsga *e);
const int *nsga_genome_int(const nsga *e, int i);
const double *nsga_genome_real(const nsga *e, int i);
const double *nsga_objectives(const nsga *e, int i); /* nobj values */
double nsga_cv(const nsga *e, int i);
int nsga_rank(const nsga *e, int i);        /* 0 = first front (constrained domination) */
double nsga_crowding(const nsga *e, int i); /* within its front; INFINITY at the ends */

/* The archive: feasible solutions evaluated so far that no other evaluated
 * solution weakly dominates (one per objective vector), in insertion
 * order.  The population's first front holds at most pop_size points; the
 * archive is the campaign's front. */
int nsga_archive_size(const nsga *e);
const int *nsga_archive_genome_int(const nsga *e, int i);
const double *nsga_archive_genome_real(const nsga *e, int i);
const double *nsga_archive_objectives(const nsga *e, int i);

/* Checkpoint: the full state (population with objectives, cv, rank and
 * crowding, archive, counters, stagnation state, RNG state) as a byte blob.  The
 * cache is not saved: restore refills it from the population only, which
 * changes the cache_hits/evaluations split but never the results.
 * nsga_checkpoint returns the blob size, or 0 before nsga_init; it writes
 * nothing if cap is smaller (call it with buf NULL, cap 0 to size). */
size_t nsga_checkpoint(const nsga *e, void *buf, size_t cap);
/* Restores into an engine created with the same problem (kind, sizes,
 * bounds) and the same result-affecting options (pop_size, seed,
 * operators and their forms, truncation, dedup, archive, ref); termination options may differ (e.g. more
 * generations).  NSGA_ECKPT with a message on any mismatch or damage. */
int nsga_restore(nsga *e, const void *buf, size_t len, char *err);

/* --- building blocks, usable on their own ------------------------------ */

/* Non-dominated sorting of n points (obj row-major n*m) under constrained
 * domination (cv NULL = all feasible): rank[i] = 0 for the first front.
 * Infeasible points rank after all feasible fronts, one front per distinct
 * violation value in increasing order.  Identical points share a rank.
 * Return the number of fronts, or NSGA_ENOMEM / NSGA_EINVAL.
 * nsga_sort_deb: Deb et al. 2002, O(m n^2) time, O(n) memory.
 * nsga_sort_fast: Zhang et al. 2015 ENS-BS, with an O(n log n) m = 2 case. */
int nsga_sort_deb(int n, int m, const double *obj, const double *cv, int *rank);
int nsga_sort_fast(int n, int m, const double *obj, const double *cv, int *rank);

/* Crowding distance of every point within its front (rank from a sort). */
int nsga_crowding_distance(int n, int m, const double *obj, const int *rank, double *crowd);

/* Exact hypervolume dominated by n points (row-major n*m, minimisation)
 * and bounded by ref.  Points not strictly better than ref in every
 * objective contribute nothing.  m = 2: O(n log n); m = 3: O(n log n)
 * sweep (Beume et al. 2009) over a treap; m >= 4: slicing down to 3-D.
 * Returns the volume, or a negative value on bad arguments / no memory. */
double nsga_hv(int n, int m, const double *pts, const double *ref);

/* Parallel helper for batch callbacks: runs fn(ctx, i) for i in [0, n)
 * on nthreads POSIX threads (1 = in the calling thread).  fn must write
 * only item i's outputs, so results equal a 1-thread run.  Returns 0, or
 * the nonzero value fn returned for the smallest failing i. */
typedef int (*nsga_item_fn)(void *ctx, int i);
int nsga_eval_parallel(int nthreads, int n, nsga_item_fn fn, void *ctx);

/* The same on a persistent pool of worker threads (no thread creation per
 * batch).  nsga_pool_create returns NULL if threads cannot be started. */
typedef struct nsga_pool nsga_pool;
nsga_pool *nsga_pool_create(int nthreads);
int nsga_pool_run(nsga_pool *pool, int n, nsga_item_fn fn, void *ctx);
void nsga_pool_destroy(nsga_pool *pool);

#endif
