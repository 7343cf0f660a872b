/* chrom.c -- the genome encodings and their decoders (see chrom.h and
 * docs/chromosomes.md for the rules).
 *
 * Invariant: every genome within chrom_bounds() decodes to a mapping that
 * passes mapping_validate(); the decoders repair, they never reject.  All
 * tables the decoders need are built once in chrom_new(); a decode writes
 * only the caller's mapping and a bounded amount of stack.
 */
#include "chrom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chrom {
    const net *n;    /* borrowed */
    chrom_kind kind;
    int ndev, p, mask;
    int L, S, len;
    int lo, hi;      /* bounds of every gene (spatial: of its p*n split-point genes; its
                        S cut genes are 0..ncut-1) */
    chrom_cut_mode cuts; /* spatial: what a cut gene chooses (chrom.h) */
    int ncut;        /* spatial: values of a cut gene (3 for CHROM_CUTS_ALL, else 2) */
    unsigned char *longcut; /* L: MAP_CUT_COLS if layer i is wider than tall and may be cut
                               by columns, else MAP_CUT_ROWS (CHROM_CUTS_BANDS' band) */
    unsigned char *bandable; /* L: bit MAP_CUT_ROWS (MAP_CUT_COLS) set if layer i may be cut
                                by rows (columns): net_layer_rowsplit, net_layer_colsplit */
    int *split;      /* L: 1 if layer i is of a splittable kind in mask */
    int *sidx;       /* S: layer index of splittable layer j (0-based j) */
    int *gene;       /* L: naive: offset of layer i's first gene */
    int *chan;       /* L: output channels of layer i */
    int *sub;        /* NULL, or ndev * NET_KIND_COUNT: where a slice of kind k on device d
                        goes (d itself when d supports k); see chrom_restrict */
};

static const char *kind_names[] = {"naive", "hybrid", "vertical", "spatial"};

const char *chrom_kind_name(chrom_kind k)
{
    return (k >= CHROM_NAIVE && k <= CHROM_SPATIAL) ? kind_names[k] : "?";
}

int chrom_kind_parse(const char *s, chrom_kind *k)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, kind_names[i]) == 0) {
            *k = (chrom_kind)i;
            return 0;
        }
    return -1;
}

void chrom_free(chrom *c)
{
    if (!c) return;
    free(c->split);
    free(c->sidx);
    free(c->gene);
    free(c->chan);
    free(c->bandable);
    free(c->longcut);
    free(c->sub);
    free(c);
}

chrom *chrom_new(const net *n, int ndev, chrom_kind k, int p, int split_mask, char *err)
{
    if (!n || n->n < 1) {
        base_seterr(err, "chromosome: empty network");
        return NULL;
    }
    if (ndev < 1 || ndev > CHROM_MAX_DEV) {
        base_seterr(err, "chromosome: %d devices, must be 1..%d", ndev, CHROM_MAX_DEV);
        return NULL;
    }
    if (k != CHROM_NAIVE && k != CHROM_HYBRID && k != CHROM_VERTICAL && k != CHROM_SPATIAL) {
        base_seterr(err, "chromosome: unknown kind %d", (int)k);
        return NULL;
    }
    if ((k == CHROM_HYBRID || k == CHROM_SPATIAL) && (p < 1 || p > ndev)) {
        base_seterr(err, "chromosome: %d splits, must be 1..%d (the device count)", p,
                 ndev);
        return NULL;
    }
    if (split_mask < 0) {
        base_seterr(err, "chromosome: bad split mask %d", split_mask);
        return NULL;
    }
    for (int b = 0; b < 31; b++) /* a bit per kind (net_split_bit), in an int */
        if ((split_mask >> b & 1) && (b >= NET_KIND_COUNT || !net_kind_splittable((net_kind)b))) {
            if (b >= NET_KIND_COUNT) base_seterr(err, "chromosome: bad split mask %d", split_mask);
            else base_seterr(err, "chromosome: %s layers cannot be split", net_kind_name((net_kind)b));
            return NULL;
        }
    chrom *c = calloc(1, sizeof *c);
    if (!c) goto oom;
    c->n = n;
    c->kind = k;
    c->ndev = ndev;
    c->p = k == CHROM_HYBRID || k == CHROM_SPATIAL ? p : 0;
    c->mask = split_mask;
    c->L = n->n;
    c->split = calloc((size_t)c->L, sizeof *c->split);
    c->sidx = calloc((size_t)c->L, sizeof *c->sidx);
    c->gene = calloc((size_t)c->L, sizeof *c->gene);
    c->chan = calloc((size_t)c->L, sizeof *c->chan);
    c->bandable = calloc((size_t)c->L, sizeof *c->bandable);
    c->longcut = calloc((size_t)c->L, sizeof *c->longcut);
    if (!c->split || !c->sidx || !c->gene || !c->chan || !c->bandable || !c->longcut) goto oom;
    c->cuts = CHROM_CUTS_BANDS, c->ncut = 2;
    int g = 0;
    for (int i = 0; i < c->L; i++) {
        net_kind kk = n->layers[i].kind;
        c->split[i] = net_split_has(split_mask, kk);
        c->chan[i] = n->layers[i].out.c;
        c->bandable[i] = (unsigned char)(net_layer_rowsplit(n, i) << MAP_CUT_ROWS |
                                         net_layer_colsplit(n, i) << MAP_CUT_COLS);
        /* A band along the longer side: its halos run along the shorter. */
        c->longcut[i] = n->layers[i].out.w > n->layers[i].out.h && net_layer_colsplit(n, i)
                            ? MAP_CUT_COLS
                            : MAP_CUT_ROWS;
        c->gene[i] = g;
        g += c->split[i] ? ndev : 1;
        if (c->split[i]) c->sidx[c->S++] = i;
    }
    switch (k) {
    case CHROM_NAIVE:
        c->len = g;
        c->lo = 0, c->hi = ndev - 1;
        break;
    case CHROM_HYBRID:
        c->len = p * ndev;
        c->lo = 0, c->hi = c->S;
        break;
    case CHROM_VERTICAL:
        c->len = ndev;
        c->lo = 0, c->hi = c->L;
        break;
    case CHROM_SPATIAL:
        c->len = p * ndev + c->S;
        c->lo = 0, c->hi = c->S;
        break;
    }
    return c;
oom:
    chrom_free(c);
    base_seterr(err, "chromosome: out of memory");
    return NULL;
}

void chrom_band_kinds(chrom *c, uint64_t kinds)
{
    for (int i = 0; i < c->L; i++) {
        unsigned k = (unsigned)c->n->layers[i].kind;
        if (k >= 64 || !(kinds >> k & 1)) c->bandable[i] = 0;
    }
}

int chrom_length(const chrom *c) { return c->len; }
chrom_kind chrom_get_kind(const chrom *c) { return c->kind; }
int chrom_ndev(const chrom *c) { return c->ndev; }
int chrom_splits(const chrom *c) { return c->p; }
int chrom_nsplittable(const chrom *c) { return c->S; }
int chrom_split_mask(const chrom *c) { return c->mask; }
const net *chrom_net(const chrom *c) { return c->n; }

static const char *cut_mode_names[] = {"channels,rows", "channels,bands", "channels,rows,columns"};

const char *chrom_cut_mode_name(chrom_cut_mode m)
{
    return m >= CHROM_CUTS_ROWS && m <= CHROM_CUTS_ALL ? cut_mode_names[m] : "?";
}

int chrom_cut_mode_parse(const char *s, chrom_cut_mode *m)
{
    for (int k = CHROM_CUTS_ROWS; k <= CHROM_CUTS_ALL; k++)
        if (s && !strcmp(s, cut_mode_names[k])) {
            *m = (chrom_cut_mode)k;
            return 0;
        }
    return -1;
}

chrom_cut_mode chrom_get_cut_mode(const chrom *c) { return c->cuts; }

int chrom_cut_values(const chrom *c) { return c->kind == CHROM_SPATIAL ? c->ncut : 1; }

int chrom_set_cut_mode(chrom *c, chrom_cut_mode m)
{
    if (c->kind != CHROM_SPATIAL || m < CHROM_CUTS_ROWS || m > CHROM_CUTS_ALL) return -1;
    c->cuts = m;
    c->ncut = m == CHROM_CUTS_ALL ? 3 : 2;
    return 0;
}

/* The cut of splittable layer i whose cut gene is v (map_cut). */
static inline int cut_of(const chrom *c, int i, int v)
{
    if (!v) return MAP_CUT_CHANNELS;
    if (c->cuts == CHROM_CUTS_BANDS) return c->longcut[i];
    return v == 2 ? MAP_CUT_COLS : MAP_CUT_ROWS;
}

void chrom_bounds(const chrom *c, int *lo, int *hi)
{
    for (int i = 0; i < c->len; i++) lo[i] = c->lo, hi[i] = c->hi;
    if (c->kind == CHROM_SPATIAL)
        for (int j = 0; j < c->S; j++) hi[c->p * c->ndev + j] = c->ncut - 1; /* cut genes */
}

double chrom_log10_space(const chrom *c)
{
    if (c->kind == CHROM_SPATIAL) /* (S+1)^(p n) x ncut^S */
        return c->p * c->ndev * log10((double)c->hi - c->lo + 1) + c->S * log10((double)c->ncut);
    return c->len * log10((double)c->hi - c->lo + 1);
}

/* ---- decoding ---- */

/* Emit the slices of layer i shared by k devices (in channel order) with
 * weights w; zero shares (fewer channels than devices) are dropped. */
static inline void emit_shares(const chrom *c, mapping *m, int *pos, int i, int k,
                               const int *devs, const int *w, int *share)
{
    map_slice *s = m->slices;
    if (k == 1) {
        s[(*pos)++] = (map_slice){devs[0], 0, c->chan[i]};
        return;
    }
    mapping_apportion(c->chan[i], k, w, share);
    int c0 = 0;
    for (int a = 0; a < k; a++)
        if (share[a] > 0) {
            s[(*pos)++] = (map_slice){devs[a], c0, share[a]};
            c0 += share[a];
        }
}

/* Emit layer i cut by rows or columns (cut) among k devices (in that
 * order) with weights w; zero shares (fewer rows or columns than devices)
 * are dropped, and a layer left with one band is whole on that device.
 * Returns cut if it is cut so, else 0. */
static inline int emit_band(const chrom *c, mapping *m, int *pos, int i, int cut, int k,
                            const int *devs, const int *w, int *share)
{
    map_slice *s = m->slices;
    int p0 = *pos, r0 = 0;
    mapping_apportion(mapping_cut_total(c->n, i, cut), k, w, share);
    for (int a = 0; a < k; a++)
        if (share[a] > 0) {
            s[(*pos)++] = (map_slice){devs[a], r0, share[a]};
            r0 += share[a];
        }
    if (*pos - p0 == 1) s[p0] = (map_slice){s[p0].dev, 0, c->chan[i]};
    return m->cut[i] = *pos - p0 > 1 ? (unsigned char)cut : MAP_CUT_CHANNELS;
}

static void decode_naive(const chrom *c, const int *g, mapping *m)
{
    int cnt[CHROM_MAX_DEV], devs[CHROM_MAX_DEV], w[CHROM_MAX_DEV], share[CHROM_MAX_DEV];
    const int n = c->ndev;
    for (int d = 0; d < n; d++) cnt[d] = 0;
    int pos = 0;
    for (int i = 0; i < c->L; i++) {
        const int *gi = g + c->gene[i];
        m->first[i] = pos;
        if (!c->split[i]) {
            m->slices[pos++] = (map_slice){gi[0], 0, c->chan[i]};
            continue;
        }
        /* Distinct devices in order of first appearance, with counts
         * (branch-free: random genes defeat the branch predictor). */
        int k = 0;
        for (int t = 0; t < n; t++) {
            int d = gi[t];
            devs[k] = d;
            k += cnt[d]++ == 0;
        }
        for (int a = 0; a < k; a++) w[a] = cnt[devs[a]], cnt[devs[a]] = 0;
        emit_shares(c, m, &pos, i, k, devs, w, share);
    }
    m->first[c->L] = pos;
}

/* Values up to this are ordered by a bucket scan, larger ones (only on
 * networks of thousands of layers) by insertion sort.  A test rebuilds
 * this file with a tiny value to cover the second path. */
#ifndef CHROM_BUCKETS
#define CHROM_BUCKETS 4096
#endif

/* The split points of one row in increasing order: pt[a] is a value and
 * who[a] the device owning the range (pt[a-1], pt[a]]; of several devices
 * holding the same value the lowest index owns the range and the others
 * get nothing.  Returns the number of points.  Values are 0..hi. */
static int split_points(const int *row, int n, int hi, int *pt, int *who)
{
    int k = 0;
    if (hi < CHROM_BUCKETS) {
        int own[CHROM_BUCKETS];
        for (int v = 1; v <= hi; v++) own[v] = -1;
        for (int d = n - 1; d >= 0; d--)
            if (row[d] > 0) own[row[d]] = d; /* lowest index written last */
        for (int v = 1; v <= hi; v++)
            if (own[v] >= 0) pt[k] = v, who[k++] = own[v];
        return k;
    }
    for (int d = 0; d < n; d++) {
        int v = row[d];
        if (v <= 0) continue;
        int b = k;
        while (b > 0 && pt[b - 1] > v) pt[b] = pt[b - 1], who[b] = who[b - 1], b--;
        if (b > 0 && pt[b - 1] == v) { /* a tie: the earlier, lower index keeps it */
            for (; b < k; b++) pt[b] = pt[b + 1], who[b] = who[b + 1];
            continue;
        }
        pt[b] = v, who[b] = d, k++;
    }
    return k;
}

/* Hybrid: one more share of splittable layer i for device d.  The shares
 * accumulate in m's slice array at i*ndev (the room mapping_new() keeps for
 * layer i): entries (dev, nc = count) in order of first appearance, ended
 * by dev = -1 unless all ndev entries are used. */
static inline void add_share(mapping *m, int ndev, int i, int d)
{
    map_slice *b = m->slices + (size_t)i * ndev;
    for (int t = 0; t < ndev; t++) {
        if (b[t].dev == d) {
            b[t].nc++;
            return;
        }
        if (b[t].dev < 0) {
            b[t].dev = d;
            b[t].nc = 1;
            if (t + 1 < ndev) b[t + 1].dev = -1;
            return;
        }
    }
}

/* Hybrid, and spatial when cut is not NULL: splittable layer j with
 * cut[j] = rows (columns) that can be cut so gets its shares as row
 * (column) bands, and so do the layers that follow it up to the next
 * splittable one while they can be cut the same way (the same devices and
 * weights), which chain on their devices without assembly; the first
 * layer after it that cannot and the rest of the run go whole to its
 * row-1 owner, as in hybrid. */
static void decode_hybrid(const chrom *c, const int *g, const int *cut, mapping *m)
{
    int pt[CHROM_MAX_DEV], who[CHROM_MAX_DEV], devs[CHROM_MAX_DEV], w[CHROM_MAX_DEV],
        share[CHROM_MAX_DEV];
    int band = 0; /* the last splittable layer's cut when it is into bands (map_cut):
                     devs, w, kb carry on */
    int kb = 0;
    const int n = c->ndev, S = c->S;
    /* DESIGN section 5: an all-zero row 1 puts everything on one device
     * (device 0), whatever the other rows say. */
    int row1 = 0;
    for (int d = 0; d < n; d++) row1 |= g[d];
    if (!row1) {
        for (int i = 0; i < c->L; i++) {
            m->first[i] = i;
            m->slices[i] = (map_slice){0, 0, c->chan[i]};
        }
        m->first[c->L] = c->L;
        return;
    }
    for (int j = 0; j < S; j++) m->slices[(size_t)c->sidx[j] * n].dev = -1;
    for (int r = 0; r < c->p; r++) {
        int k = split_points(g + r * n, n, S, pt, who), prev = 0;
        for (int a = 0; a < k; a++) {
            for (int j = prev; j < pt[a]; j++) add_share(m, n, c->sidx[j], who[a]);
            prev = pt[a];
        }
        /* Row 1 covers every layer: the tail goes to its largest split
         * point's device.  Other rows cover only up to their largest value. */
        if (r == 0)
            for (int j = prev; j < S; j++) add_share(m, n, c->sidx[j], who[k - 1]);
    }
    /* Compact into CSR.  Layer i's output goes to pos <= i*ndev and its
     * shares are copied out first, so no unread share is overwritten. */
    int owner = S > 0 ? m->slices[(size_t)c->sidx[0] * n].dev : 0, pos = 0;
    for (int i = 0, j = 0; i < c->L; i++) {
        m->first[i] = pos;
        if (!c->split[i]) {
            /* Layer i's band slices end at or before (i+1)*ndev, where the
             * next splittable layer's shares start: nothing unread is hit. */
            if (band && (c->bandable[i] >> band & 1)) {
                band = emit_band(c, m, &pos, i, band, kb, devs, w, share);
                continue;
            }
            band = 0;
            m->slices[pos++] = (map_slice){owner, 0, c->chan[i]};
            continue;
        }
        const map_slice *b = m->slices + (size_t)i * n;
        int k = 0;
        while (k < n && b[k].dev >= 0) devs[k] = b[k].dev, w[k] = b[k].nc, k++;
        owner = devs[0]; /* row 1's device: takes the layers up to the next split */
        kb = k;
        int how = cut ? cut_of(c, i, cut[j]) : MAP_CUT_CHANNELS;
        if (how && k > 1 && (c->bandable[i] >> how & 1))
            band = emit_band(c, m, &pos, i, how, k, devs, w, share);
        else band = 0, emit_shares(c, m, &pos, i, k, devs, w, share);
        j++;
    }
    m->first[c->L] = pos;
}

static void decode_vertical(const chrom *c, const int *g, mapping *m)
{
    int pt[CHROM_MAX_DEV + 1], who[CHROM_MAX_DEV + 1];
    int k = split_points(g, c->ndev, c->L, pt, who), prev = 0, pos = 0;
    /* The tail after the largest split point goes to the device holding
     * it, everything to device 0 when no device has a split point. */
    pt[k] = c->L, who[k] = k ? who[k - 1] : 0;
    for (int a = 0; a <= k; a++) {
        for (int i = prev; i < pt[a]; i++) {
            m->first[i] = pos;
            m->slices[pos++] = (map_slice){who[a], 0, c->chan[i]};
        }
        if (pt[a] > prev) prev = pt[a];
    }
    m->first[c->L] = pos;
}

/* The substitute of device d for kind k: d itself when it supports k;
 * else a device supporting k, preferring d's board (no network hop), then
 * the most cores x frequency (platform_fastest's measure), then the lowest
 * index.  -1 when no device supports k. */
static int substitute(const platform *p, int d, net_kind k)
{
    if (platform_supports(p, d, k)) return d;
    int best = -1;
    for (int e = 0; e < p->ndev; e++) {
        if (!platform_supports(p, e, k)) continue;
        if (best < 0) {
            best = e;
            continue;
        }
        int sb_e = !strcmp(p->dev[e].board, p->dev[d].board);
        int sb_b = !strcmp(p->dev[best].board, p->dev[d].board);
        double r_e = p->dev[e].freq_mhz * p->dev[e].cores;
        double r_b = p->dev[best].freq_mhz * p->dev[best].cores;
        if (sb_e > sb_b || (sb_e == sb_b && r_e > r_b)) best = e;
    }
    return best;
}

int chrom_restrict(chrom *c, const platform *p, char *err)
{
    if (p->ndev != c->ndev) {
        base_seterr(err, "chromosome: %d devices, platform %s has %d", c->ndev, p->name,
                 p->ndev);
        return -1;
    }
    free(c->sub);
    c->sub = NULL;
    if (!platform_restricted(p)) return 0;
    if (platform_check_net(p, c->n, err)) return -1;
    c->sub = malloc((size_t)c->ndev * NET_KIND_COUNT * sizeof *c->sub);
    if (!c->sub) {
        base_seterr(err, "chromosome: out of memory");
        return -1;
    }
    for (int d = 0; d < c->ndev; d++)
        for (int k = 0; k < NET_KIND_COUNT; k++)
            c->sub[d * NET_KIND_COUNT + k] = substitute(p, d, (net_kind)k);
    return 0;
}

/* Move every slice on a device that does not support its layer's kind to
 * that device's substitute.  A substitute already holding a slice of the
 * layer takes the moved channels into its own share: shares stay in order
 * of first appearance and are laid out again from channel 0.  In place: a
 * layer never gains slices, so the write cursor never passes the read one. */
static void repair(const chrom *c, mapping *m)
{
    map_slice *s = m->slices;
    int w = 0, r = m->first[0];
    for (int i = 0; i < c->L; i++) {
        int r1 = m->first[i + 1], w0 = w;
        const int *sub = c->sub + c->n->layers[i].kind;
        m->first[i] = w0;
        for (int t = r; t < r1; t++) {
            int d = sub[s[t].dev * NET_KIND_COUNT], j = w0;
            while (j < w && s[j].dev != d) j++;
            if (j < w) s[j].nc += s[t].nc;
            else s[w++] = (map_slice){d, 0, s[t].nc};
        }
        for (int j = w0, c0 = 0; j < w; j++) s[j].c0 = c0, c0 += s[j].nc;
        if (w - w0 == 1 && m->cut[i]) { /* bands merged into one: the whole layer */
            m->cut[i] = 0;
            s[w0].nc = c->chan[i];
        }
        r = r1;
    }
    m->first[c->L] = w;
}

int chrom_decode(const chrom *c, const int *genome, int len, mapping *m, char *err)
{
    if (len != c->len) {
        base_seterr(err, "%s genome has %d genes, expected %d", chrom_kind_name(c->kind),
                 len, c->len);
        return -1;
    }
    if (m->nlayers != c->L || m->ndev != c->ndev) {
        base_seterr(err, "mapping sized for %d layers x %d devices, expected %d x %d",
                 m->nlayers, m->ndev, c->L, c->ndev);
        return -1;
    }
    for (int i = 0; i < len; i++) {
        /* spatial's cut genes (the last S) choose among ncut cuts */
        int hi = c->kind == CHROM_SPATIAL && i >= len - c->S ? c->ncut - 1 : c->hi;
        if (genome[i] < c->lo || genome[i] > hi) {
            base_seterr(err, "%s genome: gene %d is %d, outside %d..%d",
                     chrom_kind_name(c->kind), i, genome[i], c->lo, hi);
            return -1;
        }
    }
    memset(m->cut, 0, (size_t)c->L); /* channel cuts unless the spatial decoder says rows or columns */
    memset(m->recompute, 0, (size_t)c->L); /* the cost model's halo rule decides (cost_pick_halos) */
    switch (c->kind) {
    case CHROM_NAIVE: decode_naive(c, genome, m); break;
    case CHROM_HYBRID: decode_hybrid(c, genome, NULL, m); break;
    case CHROM_VERTICAL: decode_vertical(c, genome, m); break;
    case CHROM_SPATIAL: decode_hybrid(c, genome, genome + c->p * c->ndev, m); break;
    }
    if (c->sub) repair(c, m);
    return 0;
}

int chrom_single_device(const chrom *c, int dev, int *genome)
{
    if (dev < 0 || dev >= c->ndev) return -1;
    switch (c->kind) {
    case CHROM_NAIVE:
        for (int i = 0; i < c->len; i++) genome[i] = dev;
        return 0;
    case CHROM_HYBRID:
    case CHROM_SPATIAL:
        if (c->S == 0 && dev != 0) return -1;
        memset(genome, 0, (size_t)c->len * sizeof *genome);
        genome[dev] = c->S; /* row 1: dev holds every splittable layer */
        return 0;
    case CHROM_VERTICAL:
        memset(genome, 0, (size_t)c->len * sizeof *genome);
        genome[dev] = c->L;
        return 0;
    }
    return -1;
}

/* ---- dump ---- */

typedef struct {
    char *buf;
    size_t len, used; /* used counts what would have been written */
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->used < b->len ? b->len - b->used : 0;
    int r = vsnprintf(room ? b->buf + b->used : NULL, room, fmt, ap);
    va_end(ap);
    if (r > 0) b->used += (size_t)r;
}

/* Ranges of one split-point row: "dev3: conv1..conv2, dev0: fc6..fc8";
 * positions index splittable layers (split = 1) or all layers; the tail up
 * to fill_to goes to the last point's device. */
static void dump_ranges(const chrom *c, sbuf *b, const int *row, int split, int fill_to)
{
    int pt[CHROM_MAX_DEV], who[CHROM_MAX_DEV];
    int k = split_points(row, c->ndev, split ? c->S : c->L, pt, who), prev = 0;
    if (k && pt[k - 1] < fill_to) pt[k - 1] = fill_to; /* the tail joins the last range */
    else if (!k && fill_to > 0) pt[0] = fill_to, who[0] = 0, k = 1;
    for (int a = 0; a < k; a++) {
        const char *from = c->n->layers[split ? c->sidx[prev] : prev].name;
        const char *to = c->n->layers[split ? c->sidx[pt[a] - 1] : pt[a] - 1].name;
        sb_printf(b, "%sdev%d: %s..%s", prev ? ", " : "", who[a], from, to);
        prev = pt[a];
    }
    if (!prev) sb_printf(b, "(nothing)");
}

int chrom_dump(const chrom *c, const int *genome, char *buf, size_t len)
{
    sbuf b = {buf, len, 0};
    if (len) buf[0] = 0;
    const int n = c->ndev;
    switch (c->kind) {
    case CHROM_NAIVE:
        sb_printf(&b, "naive genome, %d genes (%s on %d devices; gene = device):\n", c->len,
                  c->n->name, n);
        for (int i = 0; i < c->L; i++) {
            const int *gi = genome + c->gene[i];
            sb_printf(&b, "  %-24s", c->n->layers[i].name);
            for (int t = 0; t < (c->split[i] ? n : 1); t++) sb_printf(&b, " %d", gi[t]);
            sb_printf(&b, "\n");
        }
        break;
    case CHROM_HYBRID:
    case CHROM_SPATIAL:
        sb_printf(&b, "%s genome, %d x %d genes%s (%s, %d splittable layers; gene = last "
                  "splittable layer of the device's range in that split, 0 = none):\n",
                  chrom_kind_name(c->kind), c->p, n, c->kind == CHROM_SPATIAL ? " + cuts" : "",
                  c->n->name, c->S);
        for (int r = 0; r < c->p; r++) {
            const int *row = genome + r * n;
            sb_printf(&b, "  split %d:", r + 1);
            for (int d = 0; d < n; d++) sb_printf(&b, " %d", row[d]);
            sb_printf(&b, "   ");
            if (c->S == 0) sb_printf(&b, "(no splittable layer)");
            else dump_ranges(c, &b, row, 1, r == 0 ? c->S : 0);
            sb_printf(&b, "\n");
        }
        if (c->kind == CHROM_SPATIAL) {
            sb_printf(&b, "  cuts (0 = channels, 1 = %s):",
                      c->cuts == CHROM_CUTS_ALL     ? "rows, 2 = columns"
                      : c->cuts == CHROM_CUTS_BANDS ? "bands along the longer side"
                                                    : "rows");
            for (int j = 0; j < c->S; j++) sb_printf(&b, " %d", genome[c->p * n + j]);
            sb_printf(&b, "\n");
        }
        break;
    case CHROM_VERTICAL:
        sb_printf(&b, "vertical genome, %d genes (%s, %d layers; gene = last layer of the "
                  "device's range, 0 = unused):\n ", n, c->n->name, c->L);
        for (int d = 0; d < n; d++) sb_printf(&b, " %d", genome[d]);
        sb_printf(&b, "   ");
        dump_ranges(c, &b, genome, 0, c->L);
        sb_printf(&b, "\n");
        break;
    }
    return (int)b.used;
}
