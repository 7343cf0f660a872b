/* memory.c -- the smallest peak memory per device (docs/solvers.md,
 * "memory"): what a user whose boards are short of memory runs first, and
 * the other direction of seed 000 and DeepThings (spatial cuts shrink the
 * activations a device holds).
 *
 * The layers before a boundary K (in the network's topological order) are
 * cut into bands over the first B devices that support them (rows, or
 * columns where the map is wider than tall: the spatial chromosome's
 * "bands" rule), so no device holds a whole early feature map, and only B
 * devices hold copies of those layers' weights; from K on, the layers that
 * may be cut by channels (--split-kinds) are, over every device that
 * supports them, so their weights are shared out instead of copied into
 * every band; the other layers that can be cut into bands still are (they
 * have no weights), and what can be cut neither way stays whole on the
 * allowed device with the smallest channel share (the fewest weights).
 * The channel shares start even over every device, and again even over
 * the devices that hold none of the layers before K (start_shares); from
 * each start, which devices hold how much of the channel-cut weights is
 * balanced against what else each device holds: the device with the
 * highest peak gives channels of every channel-cut layer to the one with
 * the lowest, half their gap's worth of weights; a move that does not
 * lower the peak is undone and halved (MEM_ROUNDS at most).  K runs over
 * the boundaries where the map's size changes (and 0 and the end: channel
 * cuts only, bands only), B from D down to 1 (1: those layers whole); the
 * lowest peak wins, then the lowest latency, then the largest B and the
 * smallest K.  Peaks and latencies are the
 * model's (plan + schedule simulation, cost_eval), so what is chosen is
 * what `dse eval` reports.
 *
 * Invariant: every mapping built here passes mapping_validate (slices in
 * order, contiguous, non-empty, on devices that support the layer), and
 * the result depends only on the problem (no randomness).
 */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Units of a device's share of the channel-cut layers (weights of
 * mapping_apportion): fine enough to balance to a channel on 8 devices. */
#define MEM_UNITS 4096
/* Rebalancing rounds per boundary. */
#define MEM_ROUNDS 24

typedef struct {
    const solve_problem *p;
    solve_ctx c;
    int L, D;
    int *devs;        /* L x D: each layer's allowed devices in index order */
    int *axis;        /* L: band_axis */
    int *wts, *sizes, *cdevs; /* D: scratch */
    cost_device *per; /* D */
} mem_state;

/* Layer i's band axis: columns where its map is wider than tall and it can
 * be cut so, else rows where it can, else -1. */
static int band_axis(const net *n, int i)
{
    int r = mapping_cut_allowed(n, i, MAP_CUT_ROWS), c = mapping_cut_allowed(n, i, MAP_CUT_COLS);
    if (c && (n->layers[i].out.w > n->layers[i].out.h || !r)) return MAP_CUT_COLS;
    return r ? MAP_CUT_ROWS : -1;
}

/* May layer i be cut by channels here (a kind --split-kinds allows)? */
static int chan_ok(const solve_problem *p, int i)
{
    net_kind k = p->n->layers[i].kind;
    return net_split_has(p->split_mask, k) && p->n->layers[i].out.c >= 2;
}

/* Layer l's allowed devices in index order (fixed for the run: built once
 * from sctx's fastest-first lists). */
static const int *layer_devs(const mem_state *s, int l) { return s->devs + (size_t)l * s->D; }

static void devs_init(mem_state *s)
{
    for (int l = 0; l < s->L; l++) {
        int k = s->c.nallowed[l], *d = s->devs + (size_t)l * s->D;
        memcpy(d, sctx_allowed(&s->c, l), (size_t)k * sizeof *d);
        for (int a = 1; a < k; a++) /* insertion sort: k <= 64 */
            for (int b = a; b > 0 && d[b - 1] > d[b]; b--) {
                int t = d[b];
                d[b] = d[b - 1];
                d[b - 1] = t;
            }
        s->axis[l] = band_axis(s->p->n, l);
    }
}

/* Is layer l cut by channels under boundary K (the one rule build and the
 * balancing share)? */
static int chan_cut(const mem_state *s, int l, int K)
{
    return s->c.nallowed[l] > 1 && chan_ok(s->p, l) && (l >= K || s->axis[l] < 0);
}

/* Layer l cut along `cut` over devices devs[0..k) in proportion to wts
 * (an empty share gets no slice), appended at slice position *pos. */
static void cut_layer(mem_state *s, mapping *m, int l, int cut, const int *devs, int k, int *pos)
{
    int total = mapping_cut_total(s->p->n, l, cut), at = 0;
    mapping_apportion(total, k, s->wts, s->sizes);
    m->first[l] = *pos;
    m->cut[l] = (unsigned char)cut;
    m->recompute[l] = 0;
    for (int a = 0; a < k; a++) {
        if (!s->sizes[a]) continue;
        m->slices[(*pos)++] = (map_slice){devs[a], at, s->sizes[a]};
        at += s->sizes[a];
    }
}

/* The mapping of boundary K, bands over (at most) B devices and channel
 * shares w (D entries, MEM_UNITS in all, over every device); returns the
 * number of layers cut into bands. With `apart` (start_shares' second
 * start) the layers from K on that stay whole go to a device with a share
 * where one may take them, not onto the devices holding the early maps. */
static int build(mem_state *s, mapping *m, int K, int B, const int *w, int apart)
{
    const net *n = s->p->n;
    int pos = 0, nbands = 0;
    for (int l = 0; l < s->L; l++) {
        const int *devs = layer_devs(s, l);
        int k = s->c.nallowed[l], ax = s->axis[l];
        if (chan_cut(s, l, K)) {
            /* Only the devices with a share: mapping_apportion gives every
             * weight it is passed a channel where it can, a zero too. */
            int kc = 0;
            for (int a = 0; a < k; a++)
                if (w[devs[a]] > 0) s->wts[kc] = w[devs[a]], s->cdevs[kc++] = devs[a];
            if (kc > 0) {
                cut_layer(s, m, l, MAP_CUT_CHANNELS, s->cdevs, kc, &pos);
                continue;
            }
        }
        if (k > 1 && B > 1 && ax >= 0) {
            int kb = k < B ? k : B; /* the first B of its devices */
            for (int a = 0; a < kb; a++) s->wts[a] = 1;
            cut_layer(s, m, l, ax, devs, kb, &pos);
            nbands++;
            continue;
        }
        /* Whole: on the allowed device with the smallest channel share
         * (the fewest weights), the lowest index on a tie. */
        int best = devs[0];
        for (int a = 1; a < k; a++)
            if (w[devs[a]] < w[best]) best = devs[a];
        if (apart && l >= K) { /* the smallest non-zero share */
            int b2 = -1;
            for (int a = 0; a < k; a++)
                if (w[devs[a]] > 0 && (b2 < 0 || w[devs[a]] < w[b2])) b2 = devs[a];
            if (b2 >= 0) best = b2;
        }
        m->first[l] = pos;
        m->cut[l] = MAP_CUT_CHANNELS;
        m->recompute[l] = 0;
        m->slices[pos++] = (map_slice){best, 0, n->layers[l].out.c};
    }
    m->first[s->L] = pos;
    return nbands;
}

/* Is (mem, lat) better than the best so far? */
static int better(const cost_result *a, const cost_result *best)
{
    if (a->mem_mb != best->mem_mb) return a->mem_mb < best->mem_mb;
    return a->latency_ms < best->latency_ms;
}

/* The layers cut by channels under K: the devices some of them may use
 * (chan_dev[D]), and their float32 weight bytes per unit of share: what
 * moving one unit between two devices moves where both may take every such
 * layer (elsewhere less: the halving of an overshooting move corrects it). */
static double chan_layers(const mem_state *s, int K, unsigned char *chan_dev)
{
    const net *n = s->p->n;
    double bytes = 0;
    memset(chan_dev, 0, (size_t)s->D);
    for (int l = 0; l < s->L; l++) {
        if (!chan_cut(s, l, K)) continue;
        bytes += 4.0 * (double)net_slice_weights(n, l, 0, n->layers[l].out.c);
        for (int a = 0; a < s->c.nallowed[l]; a++) chan_dev[layer_devs(s, l)[a]] = 1;
    }
    return bytes / MEM_UNITS;
}

/* The channel shares a boundary's balancing starts from (w, D entries,
 * MEM_UNITS in all). Start 0: even over every device. Start 1: none on the
 * devices that hold the layers before K (their bands or whole layers, as
 * start 0 builds them), even over the devices channel cuts may use besides:
 * the early maps and the late weights then sit on different devices, which
 * the halving moves of the balancing rarely reach from an even start (vgg16
 * on 8 devices: pool4 and before on one device, the rest shared by the
 * other seven). Returns 1 where start 1 is the same as start 0 or empty. */
static int start_shares(mem_state *s, mapping *m, int K, int B, int start, const unsigned char *chan_dev, int *w)
{
    int D = s->D, rest = 0;
    /* The remainder to the last devices: the first then hold the smallest
     * shares, so whole layers go to device 0 (the lowest index), which
     * start 1 then finds among the early devices. */
    for (int d = 0; d < D; d++) w[d] = MEM_UNITS / D + (d >= D - MEM_UNITS % D);
    if (!start) return 0;
    if (K == 0) return 1;
    build(s, m, K, B, w, 0);
    int *early = s->sizes; /* scratch: D entries */
    memset(early, 0, (size_t)D * sizeof *early);
    for (int l = 0; l < K; l++)
        for (int i = m->first[l]; i < m->first[l + 1]; i++) early[m->slices[i].dev] = 1;
    for (int d = 0; d < D; d++) rest += chan_dev[d] && !early[d];
    if (!rest) return 1;
    for (int d = 0, k = 0; d < D; d++)
        if (chan_dev[d] && !early[d]) w[d] = MEM_UNITS / rest + (k++ < MEM_UNITS % rest);
        else w[d] = 0;
    return 0;
}

int solve_memory(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    mem_state s = {.p = p};
    if (sctx_init(&s.c, p, err)) return -1;
    const net *n = p->n;
    int L = s.L = s.c.L, D = s.D = s.c.D, rc = -1;
    s.devs = malloc((size_t)L * D * sizeof *s.devs);
    s.axis = malloc((size_t)L * sizeof *s.axis);
    s.wts = malloc((size_t)D * sizeof *s.wts);
    s.sizes = malloc((size_t)D * sizeof *s.sizes);
    s.cdevs = malloc((size_t)D * sizeof *s.cdevs);
    s.per = calloc((size_t)D, sizeof *s.per);
    int *w = malloc((size_t)D * sizeof *w), *bestw = malloc((size_t)D * sizeof *bestw);
    int *kw = malloc((size_t)D * sizeof *kw);
    cost_device *kper = calloc((size_t)D, sizeof *kper);
    unsigned char *chan_dev = malloc((size_t)D);
    int *cand = malloc((size_t)(L + 2) * sizeof *cand);
    mapping *m = mapping_new(L, D);
    if (!s.devs || !s.axis || !s.wts || !s.sizes || !s.cdevs || !s.per || !w || !bestw || !kw || !kper || !chan_dev || !cand || !m) {
        base_seterr(err, "out of memory");
        goto done;
    }
    devs_init(&s);
    /* Boundaries: 0, every layer whose map differs in size from the layer
     * before it, and L. */
    int nc = 0;
    cand[nc++] = 0;
    for (int l = 1; l < L; l++) {
        net_shape a = n->layers[l - 1].out, b = n->layers[l].out;
        if ((int64_t)a.h * a.w != (int64_t)b.h * b.w) cand[nc++] = l;
    }
    cand[nc++] = L;
    cost_result best = {.mem_mb = INFINITY, .latency_ms = INFINITY};
    int bestK = -1, bestB = 0, bestNB = 0, evals = 0;
    /* The lowest peaks among the candidates with and without bands (what
     * spatial cuts add, for the record). */
    double spatial_mb = INFINITY, plain_mb = INFINITY;
    for (int B = D; B >= 1; B--)
    for (int ci = 0; ci < nc; ci++)
    for (int start = 0; start < 2; start++) {
        int K = cand[ci];
        double unit = chan_layers(&s, K, chan_dev), damp = 1;
        if (start_shares(&s, m, K, B, start, chan_dev, w)) continue;
        cost_result kbest = {.mem_mb = INFINITY, .latency_ms = INFINITY};
        for (int round = 0; round < MEM_ROUNDS; round++) {
            cost_result cr;
            int nb = build(&s, m, K, B, w, start);
            if (solve_eval_dev(p, m, &cr, s.per, err)) goto done;
            evals++;
            double *side = nb ? &spatial_mb : &plain_mb;
            if (cr.mem_mb < *side) *side = cr.mem_mb;
            if (better(&cr, &best)) {
                best = cr, bestK = K, bestB = B, bestNB = nb;
                memcpy(bestw, w, (size_t)D * sizeof *w);
                mapping_copy(out, m);
            }
            if (better(&cr, &kbest)) {
                kbest = cr;
                memcpy(kw, w, (size_t)D * sizeof *w);
                memcpy(kper, s.per, (size_t)D * sizeof *kper);
            } else {
                /* The move overshot or did not pay: back to the best
                 * shares of this boundary, half the move. */
                memcpy(w, kw, (size_t)D * sizeof *w);
                if ((damp /= 2) < 1.0 / 32) break;
            }
            if (!(unit > 0)) break; /* no channel-cut weights to balance with */
            /* From the device with the highest peak to the one with the
             * lowest, half their gap in weights (times damp). */
            /* Among the devices that hold (hi) or may hold (lo) channel
             * cuts: a device no channel-cut layer may use gains nothing. */
            int hi = -1, lo = -1;
            for (int d = 0; d < D; d++) {
                if (!chan_dev[d]) continue;
                if (w[d] > 0 && (hi < 0 || kper[d].mem_mb > kper[hi].mem_mb)) hi = d;
                if (lo < 0 || kper[d].mem_mb < kper[lo].mem_mb) lo = d;
            }
            if (hi < 0 || lo < 0 || hi == lo) break;
            double gap = (kper[hi].mem_mb - kper[lo].mem_mb) * 1e6 / 2;
            int move = (int)fmin(damp * gap / unit, (double)w[hi]);
            if (move < 1) break;
            w[hi] -= move;
            w[lo] += move;
        }
    }
    if (bestK < 0) {
        base_seterr(err, "memory: no mapping could be evaluated");
        goto done;
    }
    int lo = D ? bestw[0] : 0, hi = lo;
    for (int d = 1; d < D; d++) lo = bestw[d] < lo ? bestw[d] : lo, hi = bestw[d] > hi ? bestw[d] : hi;
    char with[32] = "none", without[32] = "none";
    if (isfinite(spatial_mb)) snprintf(with, sizeof with, "%.6g MB", spatial_mb);
    if (isfinite(plain_mb)) snprintf(without, sizeof without, "%.6g MB", plain_mb);
    /* What comes before the boundary: bands on B devices, or (B = 1) the
     * layers whole. */
    char before[160];
    const char *kname = bestK < L ? n->layers[bestK].name : "the end";
    if (bestK > 0 && bestB == 1)
        snprintf(before, sizeof before, "whole layers before layer %d of %d (%.60s), channel cuts after",
                 bestK, L, kname);
    else if (bestK > 0)
        snprintf(before, sizeof before, "bands on %d devices before layer %d of %d (%.60s), channel cuts "
                 "after", bestB, bestK, L, kname);
    else
        snprintf(before, sizeof before, "channel cuts from the first layer (%d layers without weights in "
                 "bands)", bestNB);
    snprintf(r->detail, sizeof r->detail,
             "%s; channel shares %.3f to %.3f of the cut layers; peak %.6g MB "
             "per device (%d mappings evaluated; lowest with bands %s, without %s)",
             before, (double)lo / MEM_UNITS, (double)hi / MEM_UNITS, best.mem_mb, evals, with, without);
    solve_stat(r, "boundary", bestK);
    solve_stat(r, "band_devices", bestB);
    if (isfinite(spatial_mb)) solve_stat(r, "memory_mb_with_bands", spatial_mb);
    if (isfinite(plain_mb)) solve_stat(r, "memory_mb_without_bands", plain_mb);
    solve_stat(r, "evaluated", evals);
    rc = 0;
done:
    mapping_free(m);
    free(s.devs), free(s.axis), free(s.wts), free(s.sizes), free(s.cdevs), free(s.per), free(w), free(bestw), free(kw), free(kper),
        free(chan_dev), free(cand);
    sctx_free(&s.c);
    return rc;
}
