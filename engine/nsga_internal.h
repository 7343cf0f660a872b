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

#include <stdint.h>

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

#endif
