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
 *    campaigns into one file at the same time.
 *
 * Objectives are always three, in this order: energy (J), memory (MB),
 * latency (ms); RES_NOBJ of them.  Genomes are stored as text, the genes
 * in order separated by single spaces ("0 3 1 2").
 *
 * Ownership: a res_db owns its SQLite handle and prepared statements.
 * Structures returned by the readers own their strings and arrays and are
 * released by the matching res_*_free.  Pointers in the res_pop handed to
 * the writers are borrowed for the duration of the call.  Every function
 * that can fail returns 0 (or a count) on success and -1 with one line in
 * err (RES_ERRLEN bytes), naming the file; nothing is printed.
 */
#ifndef DSE_RESULTS_H
#define DSE_RESULTS_H

#include <stddef.h>

#include "base.h"

#define RES_ERRLEN BASE_ERRLEN
#define RES_NOBJ 3
#define RES_SCHEMA_VERSION 1

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

/* ---- generations ---- */

typedef struct {
    long gen;
    long long evaluations; /* cumulative model evaluations (cache hits excluded) */
    long long cache_hits;  /* cumulative offspring answered by the engine's cache */
    double hv;             /* normalised hypervolume, NAN = unknown */
    double best[RES_NOBJ]; /* best feasible value per objective, NAN = none feasible */
    int front_size;
    int feasible;
    double wall;           /* seconds since the campaign started (summed over resumes) */
} res_gen;

/* A population (or front) handed to a writer; rank and crowd may be NULL. */
typedef struct {
    int n, nvar;
    const int *genomes;  /* n * nvar */
    const double *obj;   /* n * RES_NOBJ */
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
    double obj[RES_NOBJ];
    double cv;
    int rank;             /* -1 when not stored (front) */
    double crowd;
    long src_gen;         /* front: generation and index it came from */
    int src_idx;
} res_point;

/* Store the final front and set the campaign's status, in one transaction
 * (replacing any front stored before).  src_gen / src_idx may be NULL. */
int res_finish(res_db *db, long long id, const res_pop *front, long src_gen, const int *src_idx,
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
    long long campaign;
    int point;            /* front index */
    const char *device;   /* device name, NULL = the whole mapping */
    double pred[RES_NOBJ], meas[RES_NOBJ]; /* NAN = not measured */
    const char *status;   /* "ok", "failed", "unmeasured" */
    const char *reason;   /* may be NULL */
} res_validation;

int res_validation_add(res_db *db, const res_validation *v, char *err);
/* The whole-mapping validation rows of a campaign (device NULL), latest
 * run of each point, in point order; count or -1.  Each row's strings are
 * malloc'd: release the array with res_validations_free. */
int res_validations(res_db *db, long long campaign, res_validation **out, char *err);
void res_validations_free(res_validation *v, int n);
/* Store a coefficients file (JSON text) and its fit report (JSON, may be NULL). */
int res_calibration_add(res_db *db, const char *platform, const char *network,
                        const char *coeffs, const char *report, long long *id, char *err);

/* ---- raw access for tools and tests ---- */
/* The underlying sqlite3 handle (type-erased, so this header needs no
 * sqlite3.h); owned by db. */
void *res_sqlite(res_db *db);

#endif
