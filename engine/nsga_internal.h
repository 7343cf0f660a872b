/* nsga_internal.h -- what the engine's own files share and nobody else
 * uses: preallocated workspaces for sorting, crowding and hypervolume, so
 * that a generation allocates nothing.  The public, allocating versions of
 * these functions are declared in nsga.h.
 *
 * Invariant: a workspace initialised for capacity `cap` serves any call
 * with n <= cap and never allocates again.
 */
#ifndef DSE_NSGA_INTERNAL_H
#define DSE_NSGA_INTERNAL_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>

#include "nsga.h"

/* Sorting / crowding workspace for up to cap points. */
typedef struct {
    int cap, mcap;
    int *idx, *tmp, *prev, *tail, *order, *start;
    double *key;
    /* iterative truncation (mcap objectives at most) */
    int *links, *ver, *hidx, *hver;
    double *cd, *hkey;
} nsga_sortws;

/* cap points, mcap objectives at most (mcap only matters for truncation). */
int nsga_sortws_init(nsga_sortws *w, int cap, int mcap); /* 0 or NSGA_ENOMEM */
void nsga_sortws_free(nsga_sortws *w);

/* Stable merge sort of the n indices in a[] by key[a[i]*stride]. */
void nsga_msort_by(int *a, int *tmp, int n, const double *key, int stride);

/* Both sorts as in nsga.h (no argument checks); return the front count. */
int nsga_sort_fast_ws(nsga_sortws *w, int n, int m, const double *obj, const double *cv, int *rank);
int nsga_sort_deb_ws(nsga_sortws *w, int n, int m, const double *obj, const double *cv, int *rank);

/* Crowding distance of the cnt points members[] (one front), written to
 * crowd[members[i]]; members[] is left untouched. */
void nsga_crowding_set(nsga_sortws *w, int cnt, const int *members, int m, const double *obj,
                       double *crowd);
/* Keeps `keep` of the cnt points members[] (one front) by removing, one at
 * a time, the point of smallest crowding distance and updating its
 * neighbours' distances (Kukkonen & Deb 2006); ties go to the earlier
 * member.  The survivors end in members[0..keep) in their original order. */
void nsga_truncate_crowding(nsga_sortws *w, int cnt, int *members, int keep, int m,
                            const double *obj);
/* Crowding of all n points, per front; nfronts from the sort. */
void nsga_crowding_all(nsga_sortws *w, int n, int m, const double *obj, const int *rank,
                       int nfronts, double *crowd);

/* Hypervolume workspace for up to cap points (2-D and 3-D need nothing
 * else; m >= 4 allocates per call, outside the engine's hot path). */
typedef struct {
    int cap;
    int *idx, *tmp;
    double *key, *pts;
    struct hv_node *nodes;
    int *stack;
} nsga_hvws;

int nsga_hvws_init(nsga_hvws *w, int cap);
void nsga_hvws_free(nsga_hvws *w);
/* pts row-major n*m; returns the volume (>= 0) or < 0 on no memory. */
double nsga_hv_ws(nsga_hvws *w, int n, int m, const double *pts, const double *ref);

/* ---- the engine's state, shared by nsga.c and checkpoint.c ---- */

/* The evaluation cache (nsga.c): records in one growing arena,
 * [u64 hash][m objectives][cv][genome]; open addressing over record
 * numbers + 1 (0 = empty), load <= 1/2. */
typedef struct {
    size_t rec_size, nrec, caprec, tcap;
    unsigned char *recs;
    uint32_t *table;
} cache_t;

enum { MAX_POP = 1 << 24 };
struct nsga {
    nsga_problem prob; /* bounds point to the copies below */
    nsga_options opt;  /* ref and seeds point to the copies below */
    int *ilo, *ihi;
    double *lo, *hi, *ref, *seeds_real;
    int *seeds_int;
    int N, nv, m;
    size_t gbytes;  /* bytes of one genome */
    double pm;      /* effective per-gene mutation rate */
    gsl_rng *rng, *rng_saved;

    /* population (slots 0..N-1) and offspring (N..2N-1); *2 = other buffer */
    unsigned char *g, *g2;
    double *obj, *obj2, *cv, *cv2, *crowd, *crowd2;
    int *rank, *rank2;
    unsigned char *pair; /* two genomes: scratch for duplicate re-draws */

    /* evaluation batch (misses of the cache) */
    unsigned char *bg;
    double *bobj, *bcv;
    uint64_t *bh;
    long *res;

    /* genome set for duplicate elimination and in-batch duplicates */
    int *set;
    uint64_t *set_h;
    const unsigned char **set_g;
    size_t set_cap;

    nsga_sortws sw;
    nsga_hvws hw;
    double *hvbuf, *negc;
    int *fcount, *mem;
    int *perm, perm_pos; /* tournament contestants; reset every generation */
    unsigned char *sel;
    cache_t cache;

    /* archive of non-dominated feasible solutions (options.archive) */
    int ar_n, ar_cap;
    unsigned char *ar_g;
    double *ar_obj;
    nsga_sortws aw; /* pruning workspace when archive_max > 0 */
    int *ar_mem;

    int inited;
    nsga_stats st;
    double prev_hv;
    int stag_count;
};

/* Genome i of a buffer of e's genomes. */
static inline unsigned char *G(const nsga *e, unsigned char *buf, int i) { return buf + (size_t)i * e->gbytes; }

int nsga_fail(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
uint64_t nsga_hash_bytes(const unsigned char *p, size_t n);
int nsga_cache_reserve(cache_t *c, size_t extra);
long nsga_cache_find(const cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes, size_t goff);
void nsga_cache_add(cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes, size_t goff,
                    const double *obj, int m, double cv);
int nsga_archive_reserve(nsga *e, int extra);
void nsga_compute_stats(nsga *e);

#endif
