/* encode.c -- a mapping back into a genome: the genome of a chromosome
 * whose decoded mapping is closest to a target (mapping_distance), for
 * seeding campaigns with the solvers' mappings (docs/chromosomes.md,
 * "Encoding a mapping").
 *
 * Invariant: the genome written is always within chrom_bounds and the
 * distance returned is that of its decoded mapping (the decoder, repair
 * included, is the judge); 0 means the encoding expresses the target
 * exactly (same channel counts per device and layer).  Deterministic: no
 * randomness; within a descent ties keep the earlier value, between the
 * first two starts the genome built from the target wins (the third,
 * hybrid and spatial only, must be strictly closer).  Not a hot path: it
 * allocates freely.
 */
#include "chrom.h"
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Coordinate descent stops after this many sweeps over the genes. */
#define ENC_MAX_SWEEPS 64

typedef struct {
    const chrom *c;
    const mapping *target;
    mapping *m; /* decode scratch */
    int len;
    int *lo, *hi;
    char err[BASE_ERRLEN];
} enc;

/* Distance of genome g's decoded mapping to the target (2 if it does not
 * decode, which cannot happen within bounds). */
static double dist(enc *e, const int *g)
{
    if (chrom_decode(e->c, g, e->len, e->m, e->err)) return 2;
    return mapping_distance(e->m, e->target, chrom_net(e->c));
}

/* Device computing the most work of the target over the whole network:
 * the single-device genome closest to it. */
static int main_device(const chrom *c, const mapping *t)
{
    const net *n = chrom_net(c);
    int nd = chrom_ndev(c), best = 0;
    double *w = calloc((size_t)nd, sizeof *w);
    if (!w) return 0;
    for (int i = 0; i < n->n; i++)
        for (int k = 0; k < mapping_nslices(t, i); k++) {
            const map_slice *s = &mapping_slices(t, i)[k];
            w[s->dev] += (double)(net_slice_macs(n, i, s->c0, s->nc) + net_slice_ops(n, i, s->c0, s->nc)) + 1e-9;
        }
    for (int d = 1; d < nd; d++)
        if (w[d] > w[best]) best = d;
    free(w);
    return best;
}

/* Naive: every layer has its own genes, so the genome is built layer by
 * layer: an unsplit layer's gene is its device; a split layer's n genes
 * are shared among the target's slices in proportion to their channels
 * (largest remainder), listed in the target's slice order, which the
 * decoder keeps (order of first appearance). */
static void build_naive(const chrom *c, const mapping *t, int *g)
{
    const net *n = chrom_net(c);
    int nd = chrom_ndev(c), mask = chrom_split_mask(c), pos = 0;
    int *w = malloc((size_t)nd * sizeof *w), *share = malloc((size_t)nd * sizeof *share);
    if (!w || !share) {
        free(w), free(share);
        memset(g, 0, (size_t)chrom_length(c) * sizeof *g);
        return;
    }
    for (int i = 0; i < n->n; i++) {
        const map_slice *s = mapping_slices(t, i);
        int k = mapping_nslices(t, i);
        int split = net_split_has(mask, n->layers[i].kind);
        if (!split) {
            int b = 0; /* the slice with most channels (a valid target has one) */
            for (int a = 1; a < k; a++)
                if (s[a].nc > s[b].nc) b = a;
            g[pos++] = s[b].dev;
            continue;
        }
        for (int a = 0; a < k; a++) w[a] = s[a].nc;
        mapping_apportion(nd, k, w, share);
        for (int a = 0; a < k; a++)
            for (int r = 0; r < share[a]; r++) g[pos++] = s[a].dev;
    }
    free(w), free(share);
}

/* One split-point row from the device wanted for each of m positions:
 * every run of equal devices ends at a split point held by its device;
 * a device holds one point per row, so a device's later runs get no point
 * of their own (their positions fall to the next point's device). */
static void row_from(const int *want, int m, int ndev, int *row)
{
    memset(row, 0, (size_t)ndev * sizeof *row);
    for (int j = 0; j < m; j++)
        if ((j == m - 1 || want[j + 1] != want[j]) && !row[want[j]]) row[want[j]] = j + 1;
}

/* Split-point encodings built from the target: vertical, one row over all
 * layers from each layer's main device (its largest slice); hybrid, row 1
 * from each splittable layer's first slice, row r from its r-th slice up
 * to the last layer with r slices, layers with fewer slices filled with
 * their first slice's device (whose shares then merge) or, with `cycle`,
 * with their slices in turn (slice r mod k: shares as even as the rows
 * allow, as a layer in bands over fewer devices than a later layer is cut
 * over wants). */
static void build_points(const chrom *c, const mapping *t, int *g, int cycle)
{
    const net *n = chrom_net(c);
    int nd = chrom_ndev(c), mask = chrom_split_mask(c), L = n->n;
    int *want = malloc((size_t)(L + 1) * sizeof *want), *sl = malloc((size_t)(L + 1) * sizeof *sl);
    memset(g, 0, (size_t)chrom_length(c) * sizeof *g);
    if (!want || !sl) {
        free(want), free(sl);
        return;
    }
    if (chrom_get_kind(c) == CHROM_VERTICAL) {
        for (int i = 0; i < L; i++) {
            const map_slice *s = mapping_slices(t, i);
            int b = 0;
            for (int a = 1; a < mapping_nslices(t, i); a++)
                if (s[a].nc > s[b].nc) b = a;
            want[i] = s[b].dev;
        }
        row_from(want, L, nd, g);
    } else {
        int S = 0;
        for (int i = 0; i < L; i++)
            if (net_split_has(mask, n->layers[i].kind)) sl[S++] = i;
        for (int r = 0; r < chrom_splits(c); r++) {
            int m = 0; /* the last splittable layer with more than r slices */
            for (int j = 0; j < S; j++)
                if (mapping_nslices(t, sl[j]) > r) m = j + 1;
            if (r == 0) m = S;
            for (int j = 0; j < m; j++) {
                const map_slice *s = mapping_slices(t, sl[j]);
                int k = mapping_nslices(t, sl[j]);
                want[j] = s[k > r ? r : cycle ? r % k : 0].dev;
            }
            row_from(want, m, nd, g + (size_t)r * nd);
        }
        if (chrom_get_kind(c) == CHROM_SPATIAL) /* the cut genes: the target's cuts */
            for (int j = 0; j < S; j++) { /* a cut the genes cannot say: channels */
                int cut = t->cut[sl[j]], *gj = &g[(size_t)chrom_splits(c) * nd + j];
                switch (chrom_get_cut_mode(c)) {
                case CHROM_CUTS_ALL: *gj = cut; break;
                case CHROM_CUTS_BANDS: *gj = cut != MAP_CUT_CHANNELS; break;
                case CHROM_CUTS_ROWS: *gj = cut == MAP_CUT_ROWS; break;
                }
            }
    }
    free(want), free(sl);
}

/* Improve g gene by gene: each sweep tries every value of every gene and
 * keeps the best strictly better one; stops at a sweep without gain. */
static double descend(enc *e, int *g, double d)
{
    for (int sweep = 0; sweep < ENC_MAX_SWEEPS && d > 0; sweep++) {
        double d0 = d;
        for (int j = 0; j < e->len && d > 0; j++) {
            int keep = g[j];
            for (int v = e->lo[j]; v <= e->hi[j]; v++) {
                if (v == keep) continue;
                g[j] = v;
                double x = dist(e, g);
                if (x < d) d = x, keep = v;
            }
            g[j] = keep;
        }
        if (!(d < d0)) break;
    }
    return d;
}

double chrom_encode(const chrom *c, const mapping *target, int *genome, char *err)
{
    const net *n = chrom_net(c);
    enc e = {c, target, NULL, chrom_length(c), NULL, NULL, ""};
    if (target->nlayers != n->n || target->ndev != chrom_ndev(c)) {
        base_seterr(err, "encode: mapping for %d layers on %d devices, chromosome for %d x %d",
                 target->nlayers, target->ndev, n->n, chrom_ndev(c));
        return -1;
    }
    int *g = malloc((size_t)e.len * sizeof *g), *built = malloc((size_t)e.len * sizeof *built);
    e.m = mapping_new(n->n, chrom_ndev(c));
    e.lo = malloc((size_t)e.len * sizeof *e.lo);
    e.hi = malloc((size_t)e.len * sizeof *e.hi);
    double best = -1;
    if (!g || !built || !e.m || !e.lo || !e.hi) {
        base_seterr(err, "encode: out of memory");
        goto done;
    }
    chrom_bounds(c, e.lo, e.hi);
    /* Start 1: the closest single-device genome (every encoding has one,
     * except hybrid without splittable layers off device 0). */
    if (chrom_single_device(c, main_device(c, target), genome) &&
        chrom_single_device(c, 0, genome)) {
        base_seterr(err, "encode: the chromosome expresses no single-device mapping");
        goto done;
    }
    best = dist(&e, genome);
    best = descend(&e, genome, best);
    /* Start 2: built from the target (naive: layer by layer, usually
     * exact; split-point encodings: run by run), then improved too. */
    if (chrom_get_kind(c) == CHROM_NAIVE) build_naive(c, target, g);
    else build_points(c, target, g, 0);
    memcpy(built, g, (size_t)e.len * sizeof *g);
    double d = descend(&e, g, dist(&e, g));
    /* On a tie the genome built from the target wins: the distance counts
     * amounts of work only, so a row band and a column band of the same
     * share tie, and the target's own cuts are the ones to keep. */
    if (d <= best) best = d, memcpy(genome, g, (size_t)e.len * sizeof *g);
    /* Start 3 (hybrid, spatial): rows filled with each layer's slices in
     * turn; kept only where strictly closer. */
    if (best > 0 && (chrom_get_kind(c) == CHROM_HYBRID || chrom_get_kind(c) == CHROM_SPATIAL)) {
        build_points(c, target, g, 1);
        if (memcmp(g, built, (size_t)e.len * sizeof *g)) { /* else start 2 again */
            d = descend(&e, g, dist(&e, g));
            if (d < best) best = d, memcpy(genome, g, (size_t)e.len * sizeof *g);
        }
    }
    if (best > 1) {
        base_seterr(err, "encode: %.480s", e.err);
        best = -1;
    }
done:
    free(g), free(built), free(e.lo), free(e.hi);
    mapping_free(e.m);
    return best;
}
