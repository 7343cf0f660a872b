/* refdecode.h -- a second, deliberately naive decoder written from the
 * wording of DESIGN section 5 / docs/chromosomes.md rather than from
 * chrom.c: it allocates freely and uses the "owner of position j is the
 * device with the smallest split point >= j" formulation instead of
 * walking sorted ranges.  Tests compare chrom_decode() against it.
 */
#ifndef DSE_TEST_REFDECODE_H
#define DSE_TEST_REFDECODE_H

#include "tutil.h"

/* Owner of position j (1-based) given split points v[0..n): the device
 * with the smallest value >= j (ties: lowest index), or -1. */
static inline int ref_owner(const int *v, int n, int j)
{
    int best = -1;
    for (int d = 0; d < n; d++)
        if (v[d] >= j && (best < 0 || v[d] < v[best])) best = d;
    return best;
}
/* Device with the largest value (ties: lowest index); 0 if all zero. */
static inline int ref_maxdev(const int *v, int n)
{
    int best = 0;
    for (int d = 1; d < n; d++)
        if (v[d] > v[best]) best = d;
    return best;
}

/* Append the slices of a layer of C channels shared by devices devs[0..k)
 * with integer weights (order = channel order), dropping empty shares. */
static inline void ref_emit(mapping *m, int *pos, int C, int k, const int *devs, const int *w)
{
    int *share = calloc((size_t)k, sizeof *share);
    mapping_apportion(C, k, w, share);
    int c0 = 0;
    for (int a = 0; a < k; a++)
        if (share[a]) {
            m->slices[(*pos)++] = (map_slice){devs[a], c0, share[a]};
            c0 += share[a];
        }
    free(share);
}

/* Merge a list of devices (with repeats) into distinct devices in order of
 * first appearance and their counts; returns how many. */
static inline int ref_merge(const int *list, int len, int *devs, int *w)
{
    int k = 0;
    for (int t = 0; t < len; t++) {
        int a = 0;
        while (a < k && devs[a] != list[t]) a++;
        if (a == k) devs[k] = list[t], w[k++] = 0;
        w[a]++;
    }
    return k;
}

static inline void ref_decode(const net *nt, int ndev, chrom_kind kind, int p, int mask,
                              const int *g, mapping *m)
{
    int L = nt->n, pos = 0;
    int *split = calloc((size_t)L, sizeof *split), S = 0;
    int *sidx = calloc((size_t)L + 1, sizeof *sidx);
    for (int i = 0; i < L; i++) {
        net_kind k = nt->layers[i].kind;
        split[i] = (mask >> k & 1) && net_kind_splittable(k);
        if (split[i]) sidx[S++] = i;
    }
    int *devs = calloc((size_t)ndev * (p + 1) + 1, sizeof *devs);
    int *w = calloc((size_t)ndev * (p + 1) + 1, sizeof *w);
    int *list = calloc((size_t)ndev * (p + 1) + 1, sizeof *list);
    if (kind == CHROM_NAIVE) {
        int gi = 0;
        for (int i = 0; i < L; i++) {
            m->first[i] = pos;
            if (!split[i]) {
                m->slices[pos++] = (map_slice){g[gi++], 0, nt->layers[i].out.c};
                continue;
            }
            int k = ref_merge(g + gi, ndev, devs, w);
            gi += ndev;
            ref_emit(m, &pos, nt->layers[i].out.c, k, devs, w);
        }
    } else if (kind == CHROM_VERTICAL) {
        for (int i = 0; i < L; i++) {
            int d = ref_owner(g, ndev, i + 1);
            if (d < 0) d = ref_maxdev(g, ndev);
            m->first[i] = pos;
            m->slices[pos++] = (map_slice){d, 0, nt->layers[i].out.c};
        }
    } else {
        /* owner[r][j]: device of splittable layer j+1 in row r, or -1.  An
         * all-zero row 1 means the whole network on device 0: no row counts. */
        int *owner = calloc((size_t)p * (S + 1), sizeof *owner), row1 = 0;
        for (int d = 0; d < ndev; d++) row1 |= g[d];
        for (int r = 0; r < p; r++)
            for (int j = 0; j < S; j++) {
                int d = ref_owner(g + r * ndev, ndev, j + 1);
                if (d < 0 && r == 0) d = ref_maxdev(g, ndev);
                if (!row1) d = r == 0 ? 0 : -1;
                owner[r * S + j] = d;
            }
        int j = -1; /* last splittable layer seen */
        for (int i = 0; i < L; i++) {
            m->first[i] = pos;
            if (!split[i]) {
                int d = S == 0 ? 0 : owner[j < 0 ? 0 : j];
                m->slices[pos++] = (map_slice){d, 0, nt->layers[i].out.c};
                continue;
            }
            j++;
            int len = 0;
            for (int r = 0; r < p; r++)
                if (owner[r * S + j] >= 0) list[len++] = owner[r * S + j];
            int k = ref_merge(list, len, devs, w);
            ref_emit(m, &pos, nt->layers[i].out.c, k, devs, w);
        }
        free(owner);
    }
    m->first[L] = pos;
    free(split);
    free(sidx);
    free(devs);
    free(w);
    free(list);
}

#endif
