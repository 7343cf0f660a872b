/* results.h -- the results database: one SQLite file holding campaigns,
 * their configuration, every generation's statistics and population, the
 * final Pareto front, engine checkpoints, validations and calibrations
 * (DESIGN section 8; the schema is documented in docs/results-schema.md so
 * users can query it with sqlite3).  Whole public API, prefix res_.
 *
 * Invariants:
 *  - A file is only ever used if it is a dse database of a schema version
 *    this build understands (PRAGMA application_id and user_version); any
 *    other file is refused with an error and left untouched.
 *  - Writing a generation (statistics, population, checkpoint and the
 *    campaign's progress counters) is ONE transaction: after a crash the
 *    database holds whole generations only, and the checkpoint always
 *    belongs to the last stored generation.  A resumed campaign continues
 *    from there.
 *  - The file is in WAL mode with a busy timeout and every write takes the
 *    write lock up front (BEGIN IMMEDIATE), so several processes may write
 *    campaigns into one file at the same time.  No wait is unbounded: a
 *    lock held longer than RES_LOCK_WAIT_S fails with a line naming the
 *    process that holds it.
 *  - The objectives are those of model/objectives.def (COST_NOBJ of them,
 *    in its order); their columns are made from that table, and a database
 *    made before an objective existed gains its columns when opened for
 *    writing.
 *
 * Genomes are stored as text, the genes in order separated by single
 * spaces ("0 3 1 2").
 *
 * Plots (res_plot_*) are drawn by gnuplot from data files written here;
 * every output is written completely or not at all (temporary names,
 * renamed when whole), and every string that reaches a gnuplot script is
 * made inert first (docs/security.md).
 *
 * Ownership: a res_db owns its SQLite handle and prepared statements.
 * Structures returned by the readers own their strings and arrays and are
 * released by the matching res_*_free.  Pointers in the res_pop handed to
 * the writers are borrowed for the duration of the call.  Every function
 * that can fail returns 0 (or a count) on success and -1 with one line in
 * err (BASE_ERRLEN bytes), naming the file; nothing is printed.
 */
#ifndef DSE_RESULTS_H
#define DSE_RESULTS_H

#include <stddef.h>

#include "base.h"
#include "cost.h"

#define RES_SCHEMA_VERSION 2
/* Longest wait for a lock held by another process (seconds); the
 * environment variable DSE_LOCK_WAIT overrides it (tests). */
#define RES_LOCK_WAIT_S 30

typedef struct res_db res_db;

enum { RES_OPEN_READ = 0,   /* existing database, read only */
       RES_OPEN_WRITE = 1,  /* existing database, read and write */
       RES_OPEN_CREATE = 2  /* read and write, created when missing */ };

/* Open (or create) a results database.  Fails with a clear line when the
 * file is missing (READ/WRITE modes), its folder is missing or not
 * writable, the file is read-only (WRITE/CREATE), or it is not a dse
 * database or has a newer schema.  On failure nothing is created. */
res_db *res_open(const char *path, int mode, char *err);
void res_close(res_db *db);
const char *res_path(const res_db *db);

/* ---- campaigns ---- */

typedef struct {
    long long id;
    char *name;
    char *kind;        /* "nsga" or "exhaust" */
    char *status;      /* "running", "finished", "interrupted", "failed" */
    char *created;     /* ISO 8601 UTC */
    char *updated;
    char *network;     /* network name, for listings */
    char *platform;    /* platform name, for listings */
    char *chromosome;  /* chromosome kind, for listings */
    char *config;      /* the full configuration, JSON (see docs/campaigns.md) */
    char *message;     /* why it failed, or NULL */
    long gens_done;    /* last stored generation, -1 when none */
    long long evaluations; /* model evaluations so far */
    long pid;          /* process that last ran it */
    char *host;
} res_campaign;

/* A new campaign in status running.  Writes its id into *id. */
int res_campaign_new(res_db *db, const char *name, const char *kind, const char *network,
                     const char *platform, const char *chromosome, const char *config,
                     long long *id, char *err);
/* Read one campaign; -1 with "no campaign ID in FILE" when unknown. */
int res_campaign_get(res_db *db, long long id, res_campaign *c, char *err);
/* All campaigns in id order into *out (count returned, -1 on error). */
int res_campaign_list(res_db *db, res_campaign **out, char *err);
void res_campaign_free(res_campaign *c);          /* the fields of one */
void res_campaign_list_free(res_campaign *c, int n);
/* Set status (and message, may be NULL), the updated time, this process's
 * pid and host. */
int res_campaign_set_status(res_db *db, long long id, const char *status, const char *message,
                            char *err);
/* Claim a campaign for this process in one atomic step: its status becomes
 * running with this pid and host only if it is one of `from` (a space-
 * separated list of statuses, e.g. "interrupted failed"), or running under
 * a pid of this host that no longer exists (crashed).  Returns 1 claimed,
 * 0 not claimable (*c then holds the campaign as read, for the message),
 * -1 on error.  c may be NULL. */
int res_campaign_claim(res_db *db, long long id, const char *from, res_campaign *c, char *err);

/* ---- generations ---- */

typedef struct {
    long gen;
    long long evaluations; /* cumulative model evaluations (cache hits excluded) */
    long long cache_hits;  /* cumulative offspring answered by the engine's cache */
    double hv;             /* normalised hypervolume, NAN = unknown */
    double best[COST_NOBJ]; /* best feasible value per objective, NAN = none feasible */
    int front_size;
    int feasible;
    double wall;           /* seconds since the campaign started (summed over resumes) */
} res_gen;

/* A population (or front) handed to a writer; rank and crowd may be NULL. */
typedef struct {
    int n, nvar;
    const int *genomes;  /* n * nvar */
    const double *obj;   /* n * COST_NOBJ */
    const double *cv;    /* n; NULL = all 0 */
    const int *rank;
    const double *crowd;
} res_pop;

/* One transaction: the generation's statistics, its population, the
 * checkpoint blob (replacing the previous one; blob may be NULL) and the
 * campaign's gens_done / evaluations / updated.  Any stored generation
 * >= g->gen of the campaign is replaced. */
int res_generation_write(res_db *db, long long id, const res_gen *g, const res_pop *pop,
                         const void *ckpt, size_t ckpt_len, char *err);
/* Generations of a campaign in order; count returned (-1 on error); free(). */
int res_generations(res_db *db, long long id, res_gen **out, char *err);
/* The latest checkpoint: *gen = its generation and *blob (malloc, caller
 * frees) of *len bytes; returns 1 if found, 0 if none, -1 on error. */
int res_checkpoint_get(res_db *db, long long id, long *gen, void **blob, size_t *len, char *err);
/* Delete the generations (and their individuals) after gen, e.g. before a
 * resume from an older checkpoint.  gen = -1 deletes all. */
int res_truncate(res_db *db, long long id, long gen, char *err);

/* ---- individuals and the front ---- */

typedef struct {
    int idx;              /* index in its population / front */
    int nvar;
    int *genome;          /* nvar genes (owned by the array of points) */
    double obj[COST_NOBJ];
    double cv;
    int rank;             /* -1 when not stored (front) */
    double crowd;
    long src_gen;         /* front: generation and index it came from */
    int src_idx;
} res_point;

/* Store the final front and set the campaign's status, in one transaction
 * (replacing any front stored before).  src_gen[i] / src_idx[i]: the
 * generation and index point i came from; either may be NULL (0 / none). */
int res_finish(res_db *db, long long id, const res_pop *front, const long *src_gen, const int *src_idx,
               const char *status, char *err);
/* The stored front in index order; count returned, -1 on error. */
int res_front(res_db *db, long long id, res_point **out, char *err);
/* Population of generation gen (gen = -1: the last stored one). */
int res_population(res_db *db, long long id, long gen, res_point **out, char *err);
void res_points_free(res_point *p, int n);

/* Genome text <-> genes.  res_genome_parse returns the number of genes
 * read (at most max), -1 on a malformed string. */
char *res_genome_text(const int *g, int nvar); /* malloc, caller frees */
int res_genome_parse(const char *s, int *out, int max);

/* ---- validations and calibrations (filled by dse validate / calibrate) ---- */

typedef struct {
    long long id;         /* its row (set by res_validation_add and the reader) */
    long long campaign;
    int point;            /* front index */
    const char *device;   /* device name, NULL = the whole mapping */
    double pred[COST_NOBJ], meas[COST_NOBJ]; /* values; NAN = not measured */
    const char *status;   /* "ok", "failed", "unmeasured" */
    const char *reason;   /* may be NULL */
} res_validation;

/* One Plan step of a validated mapping, predicted beside measured
 * (docs/results-schema.md, table validation_steps).  Times are ms from
 * the inference's start; measured ones are those of the traced (median)
 * inference, NAN when not measured. */
typedef struct {
    int device;           /* device index */
    int step;             /* index in the device's step list */
    const char *op;       /* "compute", "send", "recv", "concat" */
    int layer, c0, nc;    /* layer index (-1 = the network input), channels */
    long long bytes;
    double pred_start_ms, pred_ms;
    double meas_start_ms, meas_ms;
    double meas_med_ms;   /* median duration over the timed inferences */
} res_step;

/* Store a validation row and (steps may be NULL, n 0) its steps, in one
 * transaction; v->id is not read; *id (may be NULL) gets the new row's. */
int res_validation_add(res_db *db, const res_validation *v, const res_step *steps, int nsteps,
                       long long *id, char *err);
/* The whole-mapping validation rows of a campaign (device NULL), latest
 * run of each point, in point order; count or -1.  Each row's strings are
 * malloc'd: release the array with res_validations_free. */
int res_validations(res_db *db, long long campaign, res_validation **out, char *err);
void res_validations_free(res_validation *v, int n);
/* The steps of validation row id, device by device in step order; count
 * or -1; release with res_steps_free. */
int res_validation_steps(res_db *db, long long id, res_step **out, char *err);
void res_steps_free(res_step *s, int n);
/* Store a coefficients file (JSON text) and its fit report (JSON, may be NULL). */
int res_calibration_add(res_db *db, const char *platform, const char *network,
                        const char *coeffs, const char *report, long long *id, char *err);

/* ---- plots (gnuplot; results/plot.c) ---- */

/* What dse plot draws for campaigns o->ids of db into folder o->dir
 * (created if missing; its parent must exist): the front (2-D projections
 * of every pair of objectives and 3-D views coloured by the others, each
 * point labelled with its index), convergence and hypervolume, predicted
 * vs measured and the Gantt charts of validated points.  point >= 0
 * (with one campaign): also the picture of that front point's mapping,
 * drawn from the mapping given (layers x devices, shares of each layer's output, bytes).
 * The data files and scripts are written first, with every number exact,
 * so a user can re-plot by hand.  Returns 0, -1 with err (bad usage: a
 * campaign or point that does not exist, an unusable folder), or -2
 * (gnuplot missing or failing, a write failing midway: nothing half-
 * written is left).  out receives the written PNG paths, one per line
 * (malloc'd, may be NULL). */
typedef struct {
    int ndev;                 /* the mapping's devices */
    const char *const *dev;   /* their names */
    int nlayers;
    const char *const *layer; /* layer names */
    const double *share;      /* nlayers x ndev: share of the layer's output (channels, rows or columns, as it is cut) */
    const long long *bytes;   /* ndev x ndev: payload bytes sent from row to column */
} res_mapping_picture;
typedef struct {
    const long long *ids;     /* campaigns */
    int n;
    const char *dir;
    int point;                /* >= 0: the mapping picture of this front point of ids[0] */
    const res_mapping_picture *pic;
    /* The front of a campaign as the caller lists it (campaign/'s
     * camp_load_front: the stored front, or the last population's); NULL:
     * res_front. */
    int (*load_front)(res_db *db, long long id, res_point **out, char *err);
} res_plot_opts;
int res_plot(res_db *db, const res_plot_opts *o, char **out, char *err);

/* ---- raw access for tools and tests ---- */
/* The underlying sqlite3 handle (type-erased, so this header needs no
 * sqlite3.h); owned by db. */
void *res_sqlite(res_db *db);

#endif
