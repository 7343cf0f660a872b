/* campaign.h -- DSE campaigns (DESIGN sections 7, 8): the glue that turns
 * a network, a platform, cost-model coefficients and a chromosome into an
 * NSGA-II problem, and the driver that runs it generation by generation
 * into the results database.  Whole public API, prefix camp_.
 *
 * Invariants:
 *  - A campaign is rebuilt from its stored configuration alone (network,
 *    platform and coefficients are stored as JSON in the database, not
 *    re-read from files), so resuming works even if the files changed and
 *    a resumed campaign ends byte-identical to an uninterrupted one.
 *  - Evaluation of a genome is a pure function of the genome: decode ->
 *    plan -> cost model, with one workspace per worker thread, so results
 *    do not depend on the number of threads.
 *  - Hypervolume is normalised by a reference point fixed at campaign
 *    start (CAMP_REF_FACTOR x the worst single-device mapping per
 *    objective, stored in the configuration): HV is the dominated fraction
 *    of the box [0, ref], comparable across generations, resumes and
 *    campaigns of the same network and platform (exhaust included).
 *
 * Ownership: camp_new_* copy what they need; a camp owns its network,
 * platform, cost model, chromosome, thread pool and workspaces.  Errors
 * come back as one line in err (BASE_ERRLEN bytes); nothing prints except
 * through the caller's progress callback.
 */
#ifndef DSE_CAMPAIGN_H
#define DSE_CAMPAIGN_H

#include <signal.h>

#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "platform.h"
#include "results.h"

#define CAMP_REF_FACTOR 2.0

/* What a user asks for (dse run / dse exhaust options). */
typedef struct {
    const char *network;     /* zoo name or file */
    const char *platform;    /* preset name or file */
    const char *coeffs;      /* coefficients file, NULL = defaults */
    const char *chromosome;  /* naive | hybrid | vertical */
    int splits;              /* hybrid p (default 2) */
    const char *split_kinds; /* "conv,fc" (default), "conv", "fc" */
    int pop, gens;
    double time_budget;      /* seconds, 0 = none */
    unsigned long seed;
    long long max_points;    /* exhaust only */
    const char *kind;        /* "nsga" or "exhaust" */
    const char *init;        /* solvers seeding the first population, "single,elim,..."
                                (dse run --init; docs/solvers.md); NULL = none */
    const char *cuts;        /* spatial: what its cut genes choose, a chrom_cut_mode name
                                (dse run --cuts; NULL = channels,bands); read by camp_new
                                only: camp_get_options gives NULL (the mode is in the
                                configuration's "cuts") */
} camp_options;

/* The genomes --init put into the first population, as stored in the
 * configuration: per solver, the closest genome of the chromosome to its
 * mapping (chrom_encode) and that distance (0 = exact). */
typedef struct {
    int n, nvar;
    char **method;      /* solver names */
    double *distance;   /* mapping_distance of the genome's mapping to the solver's */
    double *latency_ms; /* the solver's mapping's latency by the model */
    int *genomes;       /* n x nvar */
    int *parts;         /* the most parts one layer of the solver's mapping is
                           cut into (counted when solved; 0 when read back from
                           a configuration, which does not store it) */
} camp_seeds;

typedef struct camp camp;

/* Build a campaign from options: loads network, platform and
 * coefficients, checks the chromosome options, evaluates the single-device
 * mappings to fix the reference point, and produces the configuration
 * JSON (camp_config).  warn (may be NULL) receives warnings one line at a
 * time (e.g. coefficients falling back per layer kind).  Returns NULL with
 * err on bad input. */
camp *camp_new(const camp_options *o, int threads, void (*warn)(void *ctx, const char *line),
               void *warn_ctx, char *err);
/* Rebuild from a stored configuration. */
camp *camp_from_config(const char *config, int threads, char *err);
void camp_free(camp *c);

const char *camp_config(const camp *c);         /* JSON, owned by c */
const camp_options *camp_get_options(const camp *c); /* strings owned by c */
const char *camp_network_name(const camp *c);
/* The campaign's own network, platform and coefficients (owned by c), as
 * stored in its configuration: what its predictions were made with. */
const net *camp_net(const camp *c);
const platform *camp_platform(const camp *c);
const cost_coeffs *camp_coeffs(const camp *c);
/* 1 when those came from a coefficients file, 0 for the built-in defaults. */
int camp_coeffs_given(const camp *c);
const char *camp_platform_name(const camp *c);
int camp_nvar(const camp *c);
/* Inclusive gene bounds, camp_nvar entries each (owned by c). */
void camp_bounds(const camp *c, const int **lo, const int **hi);
const double *camp_ref(const camp *c); /* COST_NOBJ values: the hypervolume's reference point */
/* The genomes a campaign puts first into its initial population (the
 * engine's seeds; camp_drive, and bench_seeding, which runs the engine as
 * camp_drive does): the single-device mapping on the platform's fastest
 * device, then each --init genome that equals no earlier one, in order
 * (campaigns stored before this rule: every --init genome, copies too).
 * A copy adds no point to the population, only weight (on 8 Jetson
 * devices all four planners often return the fastest device's mapping:
 * five copies of one genome).  A malloc'd *n x nvar array, or NULL when
 * out of memory. */
int *camp_initial_genomes(const camp *c, int *n);
/* The --init seeds (n = 0 without). */
const camp_seeds *camp_get_seeds(const camp *c);
double camp_log10_space(const camp *c);

/* Evaluate n genomes (row-major) on the campaign's threads: obj n*3, cv n
 * (bytes over memory capacity, 0 = feasible).  Returns 0 or -1. */
int camp_eval(camp *c, int n, const int *genomes, double *obj, double *cv, char *err);
/* Hypervolume of points (n x 3, raw objectives) normalised by the
 * reference point: in [0, 1]. */
double camp_hv(const camp *c, int n, const double *obj);

/* The front of a population: indices of the feasible points of rank 0,
 * one per distinct objective vector (the lowest index), sorted by
 * latency, then energy, then memory.  rank may be NULL (then computed).
 * Writes into idx (n entries); returns the count, -1 out of memory. */
int camp_front_select(int n, const double *obj, const double *cv, const int *rank, int *idx);

/* The front of campaign id: the stored front when the campaign finished,
 * else the front of its last stored population (same selection rule).
 * Points in front order (index = position); count or -1. */
int camp_load_front(res_db *db, long long id, res_point **out, char *err);

/* Decode a genome of the campaign into m (mapping_new(net n, devices)),
 * with the halo choices the campaign's cost model made for it
 * (cost_pick_halos), as it was evaluated: 0, or -1 with err.  It, like
 * camp_picture and camp_export, uses the first worker's cost model: not
 * while the campaign evaluates, nor from two threads at once. */
int camp_decode(const camp *c, const int *genome, mapping *m, char *err);

/* The picture of a genome's mapping for res_plot: shares of each layer's output per
 * layer and device, payload bytes per device pair (from its Plan).  Its
 * arrays are malloc'd: camp_picture_free.  0, or -1 with err. */
int camp_picture(const camp *c, const int *genome, res_mapping_picture *pic, char *err);
void camp_picture_free(res_mapping_picture *pic);

/* Write a genome's mapping as DIR/dse-mapping.json and AutoDiCE's
 * DIR/mapping.json, horizontal.json, autodice-devices.json, all or none
 * (DIR is created if missing; its parent must exist).  Where AutoDiCE
 * cannot express the mapping, only dse-mapping.json is written (AutoDiCE
 * files of an earlier export are removed) and 1 is returned; else 0 (all
 * four written); -1 with err, -2 when the output path cannot be used
 * (mapping_export_dir).  warn (BASE_ERRLEN, may be NULL) says why
 * AutoDiCE's files are missing, or what AutoDiCE would get wrong; "" when
 * nothing. */
int camp_export(const camp *c, const int *genome, const char *dir, char *warn, char *err);

/* ---- running ---- */

typedef struct {
    long gen, gens;          /* generation just stored, target */
    long long evaluations;   /* individuals produced so far */
    long long cache_hits;
    double evals_per_s;      /* this session */
    double hv;               /* normalised */
    double best[COST_NOBJ];  /* NAN = none feasible */
    double wall;             /* campaign seconds, summed over resumes */
    double eta;              /* seconds, NAN unknown */
    int front_size, feasible;
} camp_progress;

typedef struct {
    void (*progress)(void *ctx, const camp_progress *p); /* after each stored generation */
    void *ctx;
    volatile sig_atomic_t *stop; /* nonzero = stop after the current generation */
} camp_hooks;

enum { CAMP_FINISHED = 0, CAMP_INTERRUPTED = 1 };

/* Run (or, resume != 0, continue from its last checkpoint) campaign id of
 * db to the end.  Returns CAMP_FINISHED, CAMP_INTERRUPTED (hooks->stop;
 * status interrupted, resumable) or -1 (status failed, message stored). */
int camp_drive(camp *c, res_db *db, long long id, int resume, const camp_hooks *h, char *err);
/* Enumerate every genome (refusing spaces above max_points), store the
 * exact front as the campaign's front and generation 0. */
int camp_exhaust(camp *c, res_db *db, long long id, const camp_hooks *h, char *err);
/* Number of genomes of the space, or -1 if above limit. */
long long camp_space_size(const camp *c, long long limit);

#endif
