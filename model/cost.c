/* cost.c -- the analytical model: evaluates a Plan as a schedule
 * (docs/cost-model.md states every rule; cost.h summarises them).
 *
 * cost_new resolves every coefficient once (layer entry, then the
 * network's "*" entry, then the layer's class, then the device kind, then
 * the built-in defaults) into flat per-(layer, device kind) and per-device
 * arrays, and per device pair the link figures; cost_eval is then one pass
 * over the plan's steps with no allocation unless the plan is larger than
 * any seen before.
 *
 * Devices that share a board's memory (docs/cost-model.md) and layers
 * whose calibration measured a corun factor take a second pass: the
 * first gives the schedule, from which each compute step's overlap with
 * the other devices of its board gives its slowdown (corun_scale); the
 * second runs with those durations and is the result.
 *
 * The pass is a discrete-event simulation without an event queue: each
 * device advances through its steps until it reaches a RECV whose SEND has
 * not been simulated yet, and a SEND wakes its receiver.  Every quantity a
 * step depends on (its device's clock, the arrival time of its message,
 * the sender's outgoing channel, which sends in step order) is final when
 * the step is simulated, so the result does not depend on which device is
 * advanced first.
 */
#include "cost.h"
#include "convalgo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV PLAT_MAX_DEV

/* ---- classes ---- */

/* The classes beyond the layer kinds: name and the algorithms they cost. */
static const struct {
    int cls;
    const char *name;
} conv_classes[] = {{COST_CLASS_CONV_WINOGRAD, "ConvWinograd"},
                    {COST_CLASS_CONV_POINTWISE, "ConvPointwise"},
                    {COST_CLASS_CONV_DIRECT, "ConvDirect"}};

int cost_class(const net *n, int layer, const convalgo_rule *r)
{
    /* The runtime's algorithm, by the one rule both share (convalgo.h). */
    switch (convalgo_of(n, layer, r)) {
    case CONVALGO_WINO2:
    case CONVALGO_WINO4: return COST_CLASS_CONV_WINOGRAD;
    case CONVALGO_POINTWISE: return COST_CLASS_CONV_POINTWISE;
    case CONVALGO_DIRECT: return COST_CLASS_CONV_DIRECT;
    case CONVALGO_GEMV: return NET_FC; /* the same product as FC's */
    case CONVALGO_IM2COL: return NET_CONV;
    default: return n->layers[layer].kind; /* not a Conv */
    }
}

int cost_class_base(int cls)
{
    return cls >= NET_KIND_COUNT || cls == NET_DECONV ? NET_CONV
           : cls == NET_GROUPNORM                     ? NET_INSTNORM
           : cls == NET_SHUFFLEDOWN                   ? NET_SHUFFLEUP
           : cls == NET_NEAREST                       ? NET_UPSAMPLE
           : cls == NET_L2NORM                        ? NET_LAYERNORM
           : cls == NET_BSUM                          ? NET_ADD
           : cls == NET_BSOFTMAX                      ? NET_SOFTMAX
           : cls == NET_MISH                          ? NET_SOFTPLUS
                                                      : -1;
}

const char *cost_class_name(int cls)
{
    for (size_t i = 0; i < sizeof conv_classes / sizeof *conv_classes; i++)
        if (conv_classes[i].cls == cls) return conv_classes[i].name;
    return net_kind_name((net_kind)cls);
}

int cost_class_parse(const char *s, int *cls)
{
    for (size_t i = 0; i < sizeof conv_classes / sizeof *conv_classes; i++)
        if (!strcmp(s, conv_classes[i].name)) {
            *cls = conv_classes[i].cls;
            return 0;
        }
    net_kind k;
    if (net_kind_parse(s, &k)) return -1;
    *cls = (int)k;
    return 0;
}

/* ---- the model ---- */

/* Per (layer, device kind).  Work and weights of a slice are linear in its
 * channel count (net.c counts them per output channel), so they are kept
 * per channel here; layers for which net.c says otherwise take the slow
 * path through net_slice_*. */
/* A layer's measured bands along one axis (coeffs_band): n points of
 * units[i] rows (columns) that took ratio[i] times their share. */
typedef struct {
    int n;
    int units[COEFFS_BAND_MAX];
    double ratio[COEFFS_BAND_MAX];
} lk_band;

typedef struct {
    double cyc_pc; /* cycles*cores per output channel: work per channel / per_cycle */
    double ovh_s;  /* fixed cost of a compute step */
    double busy_w; /* < 0: the device's busy power */
    double wcoef;  /* memory coefficient of the layer's weights */
    double cyc;    /* cycles*cores per work unit: 1 / per_cycle (slow path) */
    /* The layer's measured bands of rows [0] and of columns [1]
     * (coeffs_band; n 0: a band costs its share of the work), and its
     * whole work (MACs or ops). */
    lk_band band[2];
    double work;
    double corun1; /* the layer's corun factor - 1 (coeffs_rates.corun; 0: none) */
} lk_coef;

typedef struct {
    int kind;
    double inv_rate; /* 1 / (frequency in Hz * cores) */
    double send_ovh_s, concat_ovh_s, copy_spb;
    double cscale; /* per_device compute_scale (1 when absent) */
    double spread2; /* coeffs_device.step_spread squared (0 when absent) */
    double busy_w, idle_w;
    double act_coef, bias_bytes, cap_bytes;
} dev_coef;

typedef struct {
    int pc, blocked, ndef;
    int packs; /* messages packed by this device whose send is in flight (a list through
                  cost_model.packnext, -1 ends it): their buffers are live until reaped */
    double t, compute, concat, send, wait, ebusy;
    double fvar; /* the variance of t its own compute steps added since it last
                  * met another device's clock (clock_max) */
    double live, peak, wraw, wmem, ws;
    double txfree[LINK_CLASS_COUNT];
    int64_t tx, rx;
} dev_state;

struct cost_model {
    const net *n;
    const platform *pl;
    int nl, nd;
    lk_coef *lk;             /* [nl * 2]: layer, device kind */
    unsigned char *use_macs; /* [nl]: work is MACs (Conv, FC), else ops */
    unsigned char *linear;   /* [nl]: work and weights are per-channel counts x nc */
    double *wraw_pc;         /* [nl]: float32 weight bytes per output channel */
    double *ws_full;         /* [nl]: workspace bytes of the whole layer (convalgo.h) */
    dev_coef *dv;            /* [nd] */
    double *lat_s, *spb;     /* [nd * nd]: link latency, seconds per byte */
    double *pick_s;          /* [nd * nd]: a late receiver's pickup (coeffs_link.pickup_us) */
    double *pspb;            /* [nd * nd]: seconds per byte of a receiver's pull
                              * (coeffs_link.pull_bandwidth_mbs, else spb) */
    unsigned char *lcls;     /* [nd * nd]: link class */
    int board[MAXDEV];       /* per device: the first device on its board */
    int contend;             /* some board has 2+ devices and some layer a corun factor */
    int cols_by_rows;        /* a file older than COEFFS_VERSION_COLBAND: column bands
                              * read the row table (band_dur) */
    /* Scratch reused by cost_eval. */
    int cap_msgs, cap_tensors;
    double *arrival; /* per message */
    double *hdr;     /* per message: its header's arrival (send start + latency) */
    double *mvar;    /* per message: its sender's dev_state.fvar when sending it */
    unsigned char *sent;
    double *sdone; /* per tensor (global index): arrival of its last send so far */
    int *deferred; /* per tensor slot: device d's frees waiting on sends, at tensor0[d] */
    int *packnext; /* per message: the next in its sender's dev_state.packs list */
    dev_state st[MAXDEV];
    int stack[MAXDEV];
    double *sched0, *sched1; /* cost_schedule: per global step, start and end; else NULL */
    double *cmul;            /* the second pass: per global step, its compute's factor; else NULL */
    double *c_t0, *c_t1, *c_mul; /* corun_scale's scratch, per global step */
    int cap_c;
    /* Scratch of cost_pick_halos, [nl * nd]: per band of a layer, the time
     * fetching its halo cost in the current round's plan and the rows it
     * would compute instead. */
    double *h_saved;
    int *h_lo, *h_hi;
    uint64_t *h_from;     /* [(nl + 1) * nd]: senders of a message of producer q to d */
    double *h_t0, *h_t1;  /* the schedule of the current round's plan, per step */
    int cap_h_steps;
    char err[BASE_ERRLEN];
};

void cost_free(cost_model *m)
{
    if (!m) return;
    free(m->lk);
    free(m->use_macs);
    free(m->linear);
    free(m->wraw_pc);
    free(m->ws_full);
    free(m->dv);
    free(m->lat_s);
    free(m->spb);
    free(m->pick_s);
    free(m->pspb);
    free(m->lcls);
    free(m->h_saved);
    free(m->h_lo);
    free(m->h_hi);
    free(m->h_from);
    free(m->h_t0);
    free(m->h_t1);
    free(m->arrival);
    free(m->hdr);
    free(m->mvar);
    free(m->sent);
    free(m->packnext);
    free(m->sdone);
    free(m->deferred);
    free(m->c_t0);
    free(m->c_t1);
    free(m->c_mul);
    free(m);
}

const char *cost_error(const cost_model *m) { return m->err; }

/* First set value among up to five candidates (NULLs skipped). */
static const coeffs_value *pick(const coeffs_value *a, const coeffs_value *b, const coeffs_value *c,
                                const coeffs_value *d, const coeffs_value *e)
{
    const coeffs_value *v[5] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++)
        if (v[i] && coeffs_isset(v[i])) return v[i];
    return NULL;
}

/* Append "; " + text to the warning line (truncating quietly). */
static void warn_add(char *warn, const char *text)
{
    size_t len = strlen(warn), tl = strlen(text);
    if (len && len + 2 < BASE_ERRLEN) {
        memcpy(warn + len, "; ", 2);
        len += 2;
    }
    if (len + tl >= BASE_ERRLEN) tl = BASE_ERRLEN - 1 - len;
    memcpy(warn + len, text, tl);
    warn[len + tl] = 0;
}

static int name_in(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static void names_join(char *buf, size_t len, char *const *names, int n)
{
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", i ? ", " : "", names[i]);
    }
}

static void lk_band_set(lk_band *b, const coeffs_band *t)
{
    b->n = t->n;
    memcpy(b->units, t->rows, sizeof b->units);
    memcpy(b->ratio, t->ratio, sizeof b->ratio);
}

cost_model *cost_new(const net *n, const platform *pl, const cost_coeffs *c, char *warn, char *err)
{
    char scratch[BASE_ERRLEN];
    if (!warn) warn = scratch; /* callers that do not want warnings pass NULL */
    char tmp[BASE_ERRLEN];
    warn[0] = 0;
    if (pl->ndev > MAXDEV) {
        base_seterr(err, "cost model: platform %s has %d devices, at most %d supported",
                 pl->name, pl->ndev, MAXDEV);
        return NULL;
    }
    cost_coeffs *def = coeffs_default(pl);
    cost_model *m = calloc(1, sizeof *m);
    if (!def || !m) goto oom;
    if (!c) c = def;
    int nl = n->n, nd = pl->ndev;
    m->cols_by_rows = c->version < COEFFS_VERSION_COLBAND;
    m->n = n;
    m->pl = pl;
    m->nl = nl;
    m->nd = nd;
    m->lk = calloc((size_t)nl * 2, sizeof *m->lk);
    m->use_macs = calloc((size_t)nl, 1);
    m->linear = calloc((size_t)nl, 1);
    m->wraw_pc = calloc((size_t)nl, sizeof *m->wraw_pc);
    m->ws_full = calloc((size_t)nl, sizeof *m->ws_full);
    m->dv = calloc((size_t)nd, sizeof *m->dv);
    m->lat_s = malloc((size_t)nd * nd * sizeof *m->lat_s);
    m->spb = malloc((size_t)nd * nd * sizeof *m->spb);
    m->pick_s = malloc((size_t)nd * nd * sizeof *m->pick_s);
    m->pspb = malloc((size_t)nd * nd * sizeof *m->pspb);
    m->lcls = malloc((size_t)nd * nd);
    m->h_saved = malloc(((size_t)nl * nd + 1) * sizeof *m->h_saved);
    m->h_lo = malloc(((size_t)nl * nd + 1) * sizeof *m->h_lo);
    m->h_hi = malloc(((size_t)nl * nd + 1) * sizeof *m->h_hi);
    m->h_from = malloc(((size_t)nl + 1) * nd * sizeof *m->h_from);
    if (!m->h_saved || !m->h_lo || !m->h_hi || !m->h_from) goto oom;
    if (!m->lk || !m->use_macs || !m->linear || !m->wraw_pc || !m->ws_full || !m->dv || !m->lat_s || !m->spb || !m->pick_s ||
        !m->pspb || !m->lcls)
        goto oom;

    int kind_used[2] = {0, 0};
    double kind_fc[2] = {0, 0}; /* frequency * cores of each kind's first device */
    for (int d = 0; d < nd; d++) {
        int k = pl->dev[d].kind;
        if (!kind_used[k])
            kind_fc[k] = pl->dev[d].freq_mhz * 1e6 * (pl->dev[d].cores > 0 ? pl->dev[d].cores : 1);
        kind_used[k] = 1;
    }
    if (c != def && c->nplatforms && !name_in(c->platforms, c->nplatforms, pl->name)) {
        char names[300];
        names_join(names, sizeof names, c->platforms, c->nplatforms);
        snprintf(tmp, sizeof tmp, "coefficients fitted for platform %s, not %s", names, pl->name);
        warn_add(warn, tmp);
    }
    if (c != def && coeffs_arch_warning(c, pl, tmp)) warn_add(warn, tmp);
    if (c != def && !name_in(c->networks, c->nnetworks, n->name)) {
        char names[300];
        names_join(names, sizeof names, c->networks, c->nnetworks);
        snprintf(tmp, sizeof tmp,
                 "coefficients calibrated on network%s %s, not %s: its %d "
                 "layers use per-kind coefficients",
                 c->nnetworks == 1 ? "" : "s", c->nnetworks ? names : "(none)", n->name, nl);
        warn_add(warn, tmp);
    }

    for (int i = 0; i < nl; i++) {
        int C = n->layers[i].out.c, um = n->layers[i].macs > 0 || n->layers[i].ops == 0;
        int64_t (*work)(const net *, int, int, int) = um ? net_slice_macs : net_slice_ops;
        int64_t w1 = work(n, i, 0, 1), g1 = net_slice_weights(n, i, 0, 1);
        m->use_macs[i] = (unsigned char)um;
        m->linear[i] = work(n, i, 0, C) == w1 * C && net_slice_weights(n, i, 0, C) == g1 * C &&
                       (C < 2 || (work(n, i, 1, C - 1) == w1 * (C - 1) &&
                                  net_slice_weights(n, i, 1, C - 1) == g1 * (C - 1)));
        m->wraw_pc[i] = 4.0 * (double)g1;
        m->ws_full[i] = 4.0 * (double)convalgo_workspace_of(n, i, C, &pl->kernels);
    }
    for (int k = 0; k < 2; k++) {
        if (!kind_used[k]) continue;
        const coeffs_device *D = &c->dev[k], *F = &def->dev[k];
        if (!D->present) {
            snprintf(tmp, sizeof tmp,
                     "coefficients have no %s section: built-in defaults for %s "
                     "devices",
                     plat_kind_name((plat_kind)k), plat_kind_name((plat_kind)k));
            warn_add(warn, tmp);
            D = F;
        }
        int ndefaulted = 0;
        char dkinds[200] = "";
        const coeffs_rates *wr = D == F ? NULL : coeffs_find_layer(c, (plat_kind)k, n->name, "*");
        for (int i = 0; i < nl; i++) {
            const net_layer *L = &n->layers[i];
            int cls = cost_class(n, i, &pl->kernels);
            const coeffs_rates *lr =
                D == F ? NULL : coeffs_find_layer(c, (plat_kind)k, n->name, L->name);
            const coeffs_rates *kr = &D->cls[cls];
            /* An algorithm's class and ConvTranspose fall back on the
             * file's "Conv" (cost_class_base). */
            const coeffs_rates *cr = cost_class_base(cls) >= 0 ? &D->cls[cost_class_base(cls)] : NULL;
            const coeffs_value *pc = pick(lr ? &lr->per_cycle : NULL, wr ? &wr->per_cycle : NULL,
                                          &kr->per_cycle, cr ? &cr->per_cycle : NULL, NULL);
            /* A file before version 4 rated GlobalAveragePool per element
             * written; its work is now the elements read, H*W times more
             * (the file's rates only: the built-in defaults, D == F, are
             * this version's). */
            double per_work = 1.0;
            if (pc && D != F && c->version < COEFFS_VERSION_GAP_READS && L->kind == NET_GAP) {
                net_shape x = net_in_shape(n, i, 0);
                per_work = (double)x.h * x.w;
            }
            if (!pc) {
                pc = &F->cls[cls].per_cycle;
                if (D != F) {
                    ndefaulted++;
                    if (!strstr(dkinds, cost_class_name(cls)) && strlen(dkinds) < 150) {
                        size_t l = strlen(dkinds);
                        snprintf(dkinds + l, sizeof dkinds - l, "%s%s", l ? ", " : "",
                                 cost_class_name(cls));
                    }
                }
            }
            const coeffs_value *ov =
                pick(lr ? &lr->overhead_us : NULL, wr ? &wr->overhead_us : NULL, &kr->overhead_us,
                     cr ? &cr->overhead_us : NULL, &D->overhead_us);
            if (!ov) ov = &F->overhead_us;
            const coeffs_value *bw = pick(lr ? &lr->busy_w : NULL, wr ? &wr->busy_w : NULL,
                                          &kr->busy_w, cr ? &cr->busy_w : NULL, NULL);
            const coeffs_value *wc =
                pick(&D->mem_weights[L->kind], &D->mem_coefficient, NULL, NULL, NULL);
            lk_coef *e = &m->lk[i * 2 + k];
            e->cyc = 1.0 / (pc->value * per_work);
            e->ovh_s = ov->value * 1e-6;
            /* Priced by its class (no entry of its own sets per_cycle or
             * overhead_us): the class's curve where the file has one, else,
             * for a convolution algorithm's class without a per_cycle of its
             * own, Conv's (as its line falls back on Conv's), as the
             * tangent at the layer's whole work (coeffs_curve); the curve's
             * times are the first device of the kind's, whose frequency *
             * cores turns seconds per work unit into cycles. */
            int own = (lr && (coeffs_isset(&lr->per_cycle) || coeffs_isset(&lr->overhead_us))) ||
                      (wr && (coeffs_isset(&wr->per_cycle) || coeffs_isset(&wr->overhead_us)));
            const coeffs_curve *cv = D == F || own        ? NULL
                                     : D->curve[cls].n    ? &D->curve[cls]
                                     : cr && !coeffs_isset(&kr->per_cycle) ? &D->curve[cost_class_base(cls)]
                                                          : NULL;
            double whole = (double)(m->use_macs[i] ? net_slice_macs(n, i, 0, L->out.c)
                                                   : net_slice_ops(n, i, 0, L->out.c));
            double t, pw;
            if (cv && (net_kind_info(L->kind)->flags & NET_KF_ALIAS)) {
                /* An alias computes nothing (its output is its input's
                 * floats), so its time does not grow with its size: the
                 * curve's first point, flat.  Extrapolated, the curve
                 * charged toy6's Flatten 2.8 us for a 0.2 us step. */
                e->cyc = 0;
                e->ovh_s = cv->us[0] * 1e-6;
            } else if (cv && kind_fc[k] > 0 && coeffs_curve_at(cv, whole, &t, &pw) == 0) {
                e->cyc = pw * t / whole * kind_fc[k];
                e->ovh_s = (1 - pw) * t;
            }
            e->cyc_pc = e->cyc * (double)(m->use_macs[i] ? net_slice_macs(n, i, 0, 1)
                                                         : net_slice_ops(n, i, 0, 1));
            e->busy_w = bw ? bw->value : -1.0;
            e->wcoef = wc ? wc->value : 1.0;
            e->work = whole;
            /* The layer's corun factor (a network read at another input
             * size keeps it: how much a layer streams past the caches
             * changes with its size, so this is approximate there). */
            e->corun1 = lr && coeffs_isset(&lr->corun) ? lr->corun.value - 1 : 0;
            if (e->corun1 > 0 && nd > 1) m->contend |= 1;
            /* Bands measured on this layer as it is now (a network read at
             * another input size has other rows or columns: its table does
             * not apply). */
            e->band[0].n = e->band[1].n = 0;
            if (lr && lr->band.n && lr->band.height == L->out.h && net_layer_rowsplit(n, i))
                lk_band_set(&e->band[0], &lr->band);
            if (lr && lr->cband.n && lr->cband.height == L->out.w && net_layer_colsplit(n, i))
                lk_band_set(&e->band[1], &lr->cband);
        }
        if (ndefaulted) {
            snprintf(tmp, sizeof tmp, "%d layers (%s) have no %s rate: built-in defaults",
                     ndefaulted, dkinds, plat_kind_name((plat_kind)k));
            warn_add(warn, tmp);
        }
    }
    /* Devices that share a board share its memory (corun_scale): the
     * platform's own rule, its same_board link class. */
    int shared = 0;
    for (int d = 0; d < nd; d++) {
        m->board[d] = d;
        for (int e = 0; e < d && m->board[d] == d; e++)
            if (platform_same_board(pl, e, d)) m->board[d] = e, shared = 1;
    }
    m->contend &= shared;
    for (int d = 0; d < nd; d++) {
        const plat_device *P = &pl->dev[d];
        const coeffs_device *D = c->dev[P->kind].present ? &c->dev[P->kind] : &def->dev[P->kind];
        const coeffs_device *F = &def->dev[P->kind];
        dev_coef *v = &m->dv[d];
        const coeffs_value *x;
        v->kind = P->kind;
        v->inv_rate = 1.0 / (P->freq_mhz * 1e6 * (P->cores > 0 ? P->cores : 1));
        v->cscale = 1.0;
        for (int i = 0; i < c->nper; i++)
            if (!strcmp(c->per[i].name, P->name) && coeffs_isset(&c->per[i].compute_scale))
                v->cscale = c->per[i].compute_scale.value;
        x = pick(&D->send_overhead_us, &F->send_overhead_us, NULL, NULL, NULL);
        v->send_ovh_s = x->value * 1e-6;
        x = pick(&D->overhead_us, &F->overhead_us, NULL, NULL, NULL);
        v->concat_ovh_s = x->value * 1e-6;
        x = pick(&D->copy_bandwidth_mbs, &F->copy_bandwidth_mbs, NULL, NULL, NULL);
        v->copy_spb = 1.0 / (x->value * 1e6);
        x = pick(&D->step_spread, NULL, NULL, NULL, NULL);
        v->spread2 = x ? x->value * x->value : 0;
        x = pick(&D->busy_w, NULL, NULL, NULL, NULL);
        v->busy_w = x ? x->value : P->busy_w;
        x = pick(&D->idle_w, NULL, NULL, NULL, NULL);
        v->idle_w = x ? x->value : P->idle_w;
        x = pick(&D->mem_coefficient, NULL, NULL, NULL, NULL);
        v->act_coef = x ? x->value : 1.0;
        x = pick(&D->mem_bias_mb, NULL, NULL, NULL, NULL);
        v->bias_bytes = x ? x->value * 1e6 : 0.0;
        v->cap_bytes = P->memory_mb * 1e6;
    }
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) {
            int ab = a * nd + b;
            link_class lc = pl->link_cls[ab];
            const plat_link *L = &pl->link[ab];
            const coeffs_link *C = &c->link[lc], *P = NULL;
            /* A pair's own coefficients, then its class's, then the platform's figures. */
            for (int i = 0; i < c->npairs && a != b && !P; i++) {
                const coeffs_pair *q = &c->pairs[i];
                int qa = platform_find(pl, q->a), qb = platform_find(pl, q->b);
                if ((qa == a && qb == b) || (qa == b && qb == a)) P = &q->l;
            }
            const coeffs_value *lat = pick(P ? &P->latency_us : NULL, &C->latency_us, NULL, NULL, NULL);
            const coeffs_value *bw = pick(P ? &P->bandwidth_mbs : NULL, &C->bandwidth_mbs, NULL, NULL, NULL);
            const coeffs_value *pu = pick(P ? &P->pickup_us : NULL, &C->pickup_us, NULL, NULL, NULL);
            const coeffs_value *pb =
                pick(P ? &P->pull_bandwidth_mbs : NULL, &C->pull_bandwidth_mbs, NULL, NULL, NULL);
            m->lat_s[ab] = (lat ? lat->value : L->latency_us) * 1e-6;
            m->spb[ab] = 1.0 / ((bw ? bw->value : L->bandwidth_mbs) * 1e6);
            m->pick_s[ab] = (pu ? pu->value : 0.0) * 1e-6; /* absent: none */
            m->pspb[ab] = pb ? 1.0 / (pb->value * 1e6) : m->spb[ab];
            m->lcls[ab] = (unsigned char)lc;
        }
    coeffs_free(def);
    return m;
oom:
    base_seterr(err, "cost model: out of memory");
    coeffs_free(def);
    cost_free(m);
    return NULL;
}

/* ---- evaluation ---- */

static int ensure_scratch(cost_model *m, const plan *p)
{
    if (p->nmsgs > m->cap_msgs) {
        int c = p->nmsgs > 2 * m->cap_msgs ? p->nmsgs : 2 * m->cap_msgs;
        free(m->arrival);
        free(m->hdr);
        free(m->mvar);
        free(m->sent);
        free(m->packnext);
        m->arrival = malloc((size_t)c * sizeof *m->arrival);
        m->hdr = malloc((size_t)c * sizeof *m->hdr);
        m->mvar = malloc((size_t)c * sizeof *m->mvar);
        m->sent = malloc((size_t)c);
        m->packnext = malloc((size_t)c * sizeof *m->packnext);
        m->cap_msgs = m->arrival && m->hdr && m->mvar && m->sent && m->packnext ? c : 0;
        if (!m->cap_msgs) return -1;
    }
    if (p->ntensors > m->cap_tensors) {
        int c = p->ntensors > 2 * m->cap_tensors ? p->ntensors : 2 * m->cap_tensors;
        free(m->sdone);
        free(m->deferred);
        m->sdone = malloc((size_t)c * sizeof *m->sdone);
        m->deferred = malloc((size_t)c * sizeof *m->deferred);
        m->cap_tensors = m->sdone && m->deferred ? c : 0;
        if (!m->cap_tensors) return -1;
    }
    return 0;
}

/* Duration of the COMPUTE of channels [c0, c0+nc) of layer l on device d
 * (eq. 4.7): overhead + work / (frequency * cores * per_cycle). */
static inline double compute_dur(const cost_model *m, int l, int d, int c0, int nc)
{
    const dev_coef *v = &m->dv[d];
    const lk_coef *e = &m->lk[l * 2 + v->kind];
    if (m->linear[l]) return v->cscale * (e->ovh_s + nc * e->cyc_pc * v->inv_rate);
    int64_t work = m->use_macs[l] ? net_slice_macs(m->n, l, c0, nc) : net_slice_ops(m->n, l, c0, nc);
    return v->cscale * (e->ovh_s + (double)work * e->cyc * v->inv_rate);
}

/* The share of the whole layer's time a band of nx of its X rows (or
 * columns) takes, from the layer's measured bands along that axis (b:
 * units[i] took units[i] / X * ratio[i] of it): linear in nx between the
 * points and (X, 1), the points made non-increasing towards thinner bands
 * (a band never costs more than a wider one: noise, or a table that says
 * so, would make recomputing a halo look cheaper than not), and below the
 * last point proportional to nx (its ratio held).  nx need not be whole
 * (a file older than version 8 prices a band of columns at the rows of
 * the same share of the layer). */
static double band_share(const lk_band *b, int X, double nx)
{
    int r1 = X;
    double f1 = 1.0;
    for (int i = 0; i < b->n; i++) {
        int r0 = b->units[i];
        double f0 = b->ratio[i] * r0 / X;
        if (f0 > f1) f0 = f1;
        if (nx >= r0) return f0 + (f1 - f0) * (nx - r0) / (double)(r1 - r0);
        r1 = r0, f1 = f0;
    }
    return f1 * nx / r1;
}

/* Duration of the COMPUTE of rows [h0, h0+nh) x columns [w0, w0+nw) (all
 * channels) of layer l on device d: the same per-work rate, on the band's
 * work; where the layer's bands along the cut axis were measured (dse
 * calibrate), the whole layer's time times the band's share of it
 * (band_share; a box cut along both axes, the product of the two shares,
 * an axis without a table at its share of the work).  A file older than
 * version 8 timed no column bands: a band of columns reads its row table
 * at the rows of the same share of the layer (docs/spatial.md). */
static inline double band_dur(const cost_model *m, int l, int d, int h0, int nh, int w0, int nw)
{
    const dev_coef *v = &m->dv[d];
    const lk_coef *e = &m->lk[l * 2 + v->kind];
    const net_layer *L = &m->n->layers[l];
    int H = L->out.h, W = L->out.w;
    const lk_band *rb = &e->band[0], *cb = &e->band[1];
    if (m->cols_by_rows && rb->n && nh > 0 && nw > 0) {
        double whole = e->ovh_s + e->work * e->cyc * v->inv_rate;
        if (nh >= H && nw >= W) return v->cscale * whole;
        double rows = nw >= W ? (double)nh : (double)nh * nw / W;
        return v->cscale * whole * band_share(rb, H, rows);
    }
    int tr = rb->n && nh < H, tc = cb->n && nw < W; /* a measured axis that is cut */
    if ((tr || tc) && nh > 0 && nw > 0) {
        double whole = e->ovh_s + e->work * e->cyc * v->inv_rate;
        double fr = nh >= H ? 1.0 : tr ? band_share(rb, H, nh) : (double)nh / H;
        double fc = nw >= W ? 1.0 : tc ? band_share(cb, W, nw) : (double)nw / W;
        return v->cscale * whole * fr * fc;
    }
    int64_t work = m->use_macs[l] ? net_box_macs(m->n, l, 0, L->out.c, h0, nh, w0, nw)
                                  : net_box_ops(m->n, l, 0, L->out.c, h0, nh, w0, nw);
    return v->cscale * (e->ovh_s + (double)work * e->cyc * v->inv_rate);
}

double cost_compute_s(const cost_model *m, int layer, int dev, int c0, int nc)
{
    return compute_dur(m, layer, dev, c0, nc);
}

double cost_concat_s(const cost_model *m, int dev, double bytes)
{
    return m->dv[dev].concat_ovh_s + bytes * m->dv[dev].copy_spb;
}

/* Seconds per byte of a message from a to b as its receiver meets it: it
 * is there neither before the link moved it nor before the receiver
 * pulled it (the schedule's RECV takes the later of the two). */
static double msg_spb(const cost_model *m, int ab)
{
    return m->pspb[ab] > m->spb[ab] ? m->pspb[ab] : m->spb[ab];
}

double cost_message_s(const cost_model *m, int from, int to, double bytes)
{
    int ab = from * m->nd + to;
    return m->dv[from].send_ovh_s + bytes * msg_spb(m, ab) + m->lat_s[ab];
}

double cost_band_s(const cost_model *m, int layer, int dev, int h0, int nh, int w0, int nw)
{
    return band_dur(m, layer, dev, h0, nh, w0, nw);
}

/* The floats of box b within rows [r0, r1) (cols: columns [r0, r1)). */
static double strip_floats(map_box b, int cols, int r0, int r1)
{
    int lo = cols ? b.w0 : b.h0, hi = lo + (cols ? b.nw : b.nh);
    if (r0 > lo) lo = r0;
    if (r1 < hi) hi = r1;
    if (hi <= lo) return 0;
    return (double)b.nc * (hi - lo) * (cols ? b.nh : b.nw);
}

/* What moving rows [r0, r1) (cols: columns) of producer q to device d
 * costs, the devices holding them sending them (the extra input a band
 * that recomputes its halo reads): nothing from d itself (the input on
 * the source); bytes / rate (cost_message_s's) inside a message the current plan
 * already has from that device, or when q is cut into bands with a band
 * on d (its halo message grows, or, if q is judged to recompute in a
 * later round or already does, d computes them: priced as moved all the
 * same, an estimate); a whole message (cost_message_s) else. */
static double extra_input_s(const cost_model *m, const mapping *mp, int source, int q, int d,
                            int cols, int r0, int r1)
{
    if (r1 <= r0) return 0;
    const net *n = m->n;
    int nd = m->nd;
    uint64_t had = m->h_from[(size_t)(q + 1) * nd + d];
    if (q == NET_INPUT) {
        if (d == source) return 0;
        net_shape sh = n->input;
        double b = 4.0 * strip_floats((map_box){0, sh.c, 0, sh.h, 0, sh.w}, cols, r0, r1);
        return had >> source & 1 ? b * msg_spb(m, source * nd + d) : cost_message_s(m, source, d, b);
    }
    int chain = 0;
    for (int k = mp->first[q]; k < mp->first[q + 1] && mp->cut[q]; k++) chain |= mp->slices[k].dev == d;
    double t = 0;
    for (int k = mp->first[q]; k < mp->first[q + 1]; k++) {
        const map_slice *sl = &mp->slices[k];
        if (sl->dev == d) continue;
        double by = 4.0 * strip_floats(mapping_slice_box(mp, n, q, sl), cols, r0, r1);
        if (by <= 0) continue;
        t += chain || had >> sl->dev & 1 ? by * msg_spb(m, sl->dev * nd + d)
                                         : cost_message_s(m, sl->dev, d, by);
    }
    return t;
}

/* Grow the schedule scratch to p's steps: 0, or -1. */
static int halo_sched_room(cost_model *m, const plan *p)
{
    if (p->nsteps <= m->cap_h_steps) return 0;
    int c = p->nsteps * 2;
    double *a = realloc(m->h_t0, (size_t)c * sizeof *a);
    if (a) m->h_t0 = a;
    double *b = realloc(m->h_t1, (size_t)c * sizeof *b);
    if (b) m->h_t1 = b;
    if (!a || !b) return -1;
    m->cap_h_steps = c;
    return 0;
}

/* One round of the rule on plan p of mp (scheduled into h_t0, h_t1):
 * flags the layers cut by rows or columns, not flagged yet, whose bands' extra
 * compute and extra input take less time, summed over their devices, than
 * their halo cost them there (the receives' waits and pickups, the
 * senders' SEND steps with their packing, and the assemblies of that
 * layer on its band devices).  Returns how many it
 * flagged; *best gets the one that gained most, if any. */
static int halo_round(cost_model *m, mapping *mp, const plan *p, int source, int *best,
                      double *best_gain)
{
    const net *n = m->n;
    int nl = m->nl, nd = m->nd, flagged = 0;
    for (int x = 0; x < nl * nd; x++) m->h_saved[x] = 0, m->h_lo[x] = -1; /* -1: no band */
    memset(m->h_from, 0, (size_t)(nl + 1) * nd * sizeof *m->h_from);
    for (int i = 0; i < nl; i++)
        for (int k = mp->first[i]; k < mp->first[i + 1] && mp->cut[i]; k++) {
            int x = i * nd + mp->slices[k].dev;
            m->h_lo[x] = mp->slices[k].c0;
            m->h_hi[x] = mp->slices[k].c0 + mp->slices[k].nc;
        }
    for (int g = 0; g < p->nmsgs; g++) {
        const plan_msg *ms = &p->msgs[g];
        m->h_from[(size_t)(ms->layer + 1) * nd + ms->to] |= (uint64_t)1 << ms->from;
        int x = ms->layer * nd + ms->to;
        /* A device without a band of the layer fetches it either way. */
        if (ms->layer < 0 || m->h_lo[x] < 0) continue;
        /* Its receive, and its sender's SEND (the send overhead, and the
         * packing of a box that is no run of floats there: a halo over
         * several channels is packed, plan_send_offset). */
        m->h_saved[x] += m->h_t1[ms->recv_step] - m->h_t0[ms->recv_step] +
                         m->h_t1[ms->send_step] - m->h_t0[ms->send_step];
        /* The band's axis: rows, or columns for a layer cut by columns. */
        int cols = mp->cut[ms->layer] == MAP_CUT_COLS;
        int lo = cols ? ms->w0 : ms->h0, hi = lo + (cols ? ms->nw : ms->nh);
        if (lo < m->h_lo[x]) m->h_lo[x] = lo;
        if (hi > m->h_hi[x]) m->h_hi[x] = hi;
    }
    for (int d = 0; d < nd; d++)
        for (int i = p->step0[d]; i < p->step0[d + 1]; i++) {
            const plan_step *st = &p->steps[i];
            /* An assembly of pieces; a crop of one tensor stays. */
            if (st->op != PLAN_CONCAT || st->layer < 0 || st->narg < 2) continue;
            int x = st->layer * nd + d;
            if (m->h_lo[x] >= 0) m->h_saved[x] += m->h_t1[i] - m->h_t0[i];
        }
    for (int i = 0; i + 1 < nl; i++) {
        if (!mp->cut[i] || mp->recompute[i]) continue;
        const net_layer *L = &n->layers[i];
        double saved = 0, extra = 0;
        int halo = 0, cols = mp->cut[i] == MAP_CUT_COLS;
        for (int k = mp->first[i]; k < mp->first[i + 1]; k++) {
            const map_slice *sl = &mp->slices[k];
            int x = i * nd + sl->dev, o0 = sl->c0, o1 = sl->c0 + sl->nc;
            int h0 = m->h_lo[x], h1 = m->h_hi[x];
            if (h0 == o0 && h1 == o1) continue; /* it fetched no rows of its own layer */
            halo = 1;
            saved += m->h_saved[x];
            if (cols)
                extra += band_dur(m, i, sl->dev, 0, L->out.h, h0, h1 - h0) -
                         band_dur(m, i, sl->dev, 0, L->out.h, o0, o1 - o0);
            else
                extra += band_dur(m, i, sl->dev, h0, h1 - h0, 0, L->out.w) -
                         band_dur(m, i, sl->dev, o0, o1 - o0, 0, L->out.w);
            for (int j = 0; j < L->nin; j++) {
                int a0, a1, b0, b1;
                if (cols) {
                    net_cols_in(n, i, j, o0, o1, &a0, &a1);
                    net_cols_in(n, i, j, h0, h1, &b0, &b1);
                } else {
                    net_rows_in(n, i, j, o0, o1, &a0, &a1);
                    net_rows_in(n, i, j, h0, h1, &b0, &b1);
                }
                extra += extra_input_s(m, mp, source, L->in[j], sl->dev, cols, b0, a0) +
                         extra_input_s(m, mp, source, L->in[j], sl->dev, cols, a1, b1);
            }
        }
        if (halo && extra < saved) {
            mp->recompute[i] = 1, flagged++;
            if (saved - extra > *best_gain) *best_gain = saved - extra, *best = i;
        }
    }
    return flagged;
}

/* Evaluate p into *r: 0, or -1 with err. */
static int halo_eval(cost_model *m, const plan *p, cost_result *r, char *err)
{
    if (!cost_eval(m, p, r, NULL)) return 0;
    base_seterr(err, "%s", m->err);
    return -1;
}

int cost_pick_halos(cost_model *m, mapping *mp, plan *p, int source, cost_result *res, char *err)
{
    const net *n = m->n;
    int nl = m->nl, any = 0;
    cost_result scratch, fetch_r, r;
    if (!res) res = &scratch;
    memset(mp->recompute, 0, (size_t)mp->nlayers);
    if (plan_build(p, n, mp, source, err)) return -1;
    for (int i = 0; i + 1 < nl && !any; i++) any = mp->cut[i];
    if (!any) return halo_eval(m, p, res, err);
    /* Rounds: judge every layer on the current plan, rebuild with the
     * layers flagged, judge again (a halo a recomputing consumer moved to
     * its producer is judged there), at most HALO_ROUNDS times. */
    enum { HALO_ROUNDS = 3 };
    int best = -1, settled = 0; /* settled: p is the plan of the flags, r its result */
    double best_gain = 0;
    any = 0;
    for (int round = 0; round < HALO_ROUNDS; round++) {
        if (round && plan_build(p, n, mp, source, err)) return -1;
        if (halo_sched_room(m, p)) {
            base_seterr(err, "cost model: out of memory");
            return -1;
        }
        if (cost_schedule(m, p, &r, NULL, m->h_t0, m->h_t1)) {
            base_seterr(err, "%s", m->err);
            return -1;
        }
        if (!round) fetch_r = r;
        int k = halo_round(m, mp, p, source, &best, &best_gain);
        if (!k) {
            settled = 1;
            break;
        }
        any += k;
    }
    if (!any) { /* p is the plan that fetches */
        *res = fetch_r;
        return 0;
    }
    /* Each layer was judged alone; together their halos grow (a band that
     * recomputes reads more rows of a producer that recomputes too).  So
     * the choices are kept only if the model's latency of their Plan is
     * below the plan that fetches, with no more memory above the devices'
     * capacity (a feasible mapping stays feasible); else the one layer
     * that gained most alone (in the round that judged it), under the same
     * test; else none. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (any == 1) break; /* that was the best one alone */
            memset(mp->recompute, 0, (size_t)mp->nlayers);
            mp->recompute[best] = 1, any = 1, settled = 0;
        }
        if (!settled && (plan_build(p, n, mp, source, err) || halo_eval(m, p, &r, err))) return -1;
        if (r.latency_ms < fetch_r.latency_ms && r.violation_bytes <= fetch_r.violation_bytes) {
            *res = r;
            return any;
        }
    }
    memset(mp->recompute, 0, (size_t)mp->nlayers);
    if (plan_build(p, n, mp, source, err)) return -1;
    *res = fetch_r;
    return 0;
}

/* The step that ends at the later of two clocks: the receiver's own
 * (mean x, *vx the variance its own compute steps added since it last met
 * another clock) and the message's (mean y, variance vy, its sender's).
 * Steps vary from inference to inference (coeffs_device.step_spread), and
 * the later of two varying clocks is later on average than the later of
 * their means: taken as independent normals, E[max] by Clark's formula
 * (C. E. Clark, "The greatest of a finite set of random variables",
 * Operations Research 9(2), 1961): y + (x - y) P + theta phi(a), theta^2 =
 * vx + vy, a = (x - y) / theta, P = Phi(a) the chance the receiver's clock
 * is the later one.  What the receiver's clock keeps of its own variance
 * afterwards: P vx (it took the message's clock with chance 1 - P, and
 * from then shares the sender's).  Without variances: the plain maximum,
 * to the last bit. */
#define CLOCK_FAR 8.5
static double clock_max(double x, double *vx, double y, double vy)
{
    double th2 = *vx + vy;
    if (!(th2 > 0)) return x > y ? x : y;
    double th = sqrt(th2), a = (x - y) / th;
    /* Beyond 8.5 standard deviations P is 0 or 1 and phi below 1e-15 to
     * double precision: the later side, without erfc and exp (most of a
     * schedule's meetings, and a third of cost_eval's time with them). */
    if (a > CLOCK_FAR) return x;
    if (a < -CLOCK_FAR) {
        *vx = 0;
        return y;
    }
    double P = 0.5 * erfc(-a * 0.70710678118654752), phi = 0.39894228040143268 * exp(-0.5 * a * a);
    *vx *= P;
    /* Never below the later mean (rounding where P is 1 and phi 0). */
    double e = y + (x - y) * P + th * phi, mx = x > y ? x : y;
    return e > mx ? e : mx;
}

/* Advance device d until it blocks on a message not yet sent or runs out
 * of steps.  Wakes receivers; sets *latency when it completes the output. */
static void run_device(cost_model *m, const plan *p, int d, int *sp, double *latency)
{
    const net *n = m->n;
    dev_state *s = &m->st[d];
    const dev_coef *v = &m->dv[d];
    const plan_step *steps = plan_steps_dev(p, d);
    const plan_tensor *T = p->tensors + p->tensor0[d];
    int base = p->tensor0[d], ns = plan_nsteps_dev(p, d), nd = m->nd;
    int *def = m->deferred + base;
    double t = s->t;
    for (; s->pc < ns; s->pc++) {
        const plan_step *st = &steps[s->pc];
        double te;
        switch (st->op) {
        case PLAN_COMPUTE: {
            int l = st->layer;
            const lk_coef *e = &m->lk[l * 2 + v->kind];
            int band = plan_step_band(st, n);
            double dur = band ? band_dur(m, l, d, st->h0, st->nh, st->w0, st->nw)
                              : compute_dur(m, l, d, st->c0, st->nc);
            if (m->cmul) dur *= m->cmul[p->step0[d] + s->pc];
            double w = m->linear[l] ? st->nc * m->wraw_pc[l]
                                    : 4.0 * (double)net_slice_weights(n, l, st->c0, st->nc);
            te = t + dur;
            s->fvar += v->spread2 * dur * dur;
            s->compute += dur;
            s->ebusy += dur * (e->busy_w >= 0 ? e->busy_w : v->busy_w);
            /* One workspace per device, the largest its steps need (a
             * band's: its own geometry under the layer's algorithm). */
            if (band) {
                double ws = 4.0 * (double)convalgo_workspace_band(n, l, st->h0, st->nh, st->w0,
                                                                   st->nw, &m->pl->kernels);
                if (ws > s->ws) s->ws = ws;
            } else if (m->ws_full[l] > s->ws) {
                double ws = st->nc == n->layers[l].out.c
                                ? m->ws_full[l]
                                : 4.0 * (double)convalgo_workspace_of(n, l, st->nc, &m->pl->kernels);
                if (ws > s->ws) s->ws = ws;
            }
            s->wraw += w;
            s->wmem += w * e->wcoef;
            s->live += (double)T[st->tensor].bytes;
            if (s->live > s->peak) s->peak = s->live;
            break;
        }
        case PLAN_CONCAT: {
            double bytes = (double)T[st->tensor].bytes;
            double dur = cost_concat_s(m, d, bytes);
            te = t + dur;
            s->concat += dur;
            s->ebusy += dur * v->busy_w;
            s->live += bytes;
            if (s->live > s->peak) s->peak = s->live;
            break;
        }
        case PLAN_SEND: {
            int g = st->msg, ab = d * nd + st->peer, lc = m->lcls[ab];
            double xfer = (double)p->msgs[g].bytes * m->spb[ab]; /* the box sent */
            double dur = v->send_ovh_s;
            int packed = plan_send_offset(p, d, st) < 0;
            if (packed) { /* packed first, into a buffer of its own */
                double bytes = (double)p->msgs[g].bytes;
                dur += cost_concat_s(m, d, bytes);
                s->live += bytes;
                if (s->live > s->peak) s->peak = s->live;
                m->packnext[g] = s->packs;
                s->packs = g;
            }
            te = t + dur;
            s->send += dur;
            s->ebusy += dur * v->busy_w;
            /* One outgoing channel per link class: sends queue behind earlier ones. */
            double start = te > s->txfree[lc] ? te : s->txfree[lc];
            s->txfree[lc] = start + xfer;
            double arr = start + xfer + m->lat_s[ab];
            m->arrival[g] = arr;
            m->hdr[g] = start + m->lat_s[ab];
            m->mvar[g] = s->fvar;
            m->sent[g] = 1;
            /* A packed send holds its pack (packs above), not the tensor. */
            if (!packed && arr > m->sdone[base + st->tensor]) m->sdone[base + st->tensor] = arr;
            if (m->st[st->peer].blocked == g) {
                m->st[st->peer].blocked = -1;
                m->stack[(*sp)++] = st->peer;
            }
            break;
        }
        case PLAN_RECV:
        default:
            if (!m->sent[st->msg]) {
                s->blocked = st->msg;
                s->t = t;
                return;
            }
            {
                /* Open MPI (no progress thread) moves a payload only inside the
                 * receiver's MPI calls (shared memory: the receiver pulls it with
                 * CMA), once its header is there: a receiver reaching its RECV
                 * after the message was sent still spends the pickup there,
                 * and either pulls the bytes at the pull rate (a message fresh
                 * on its sender into a cold buffer, as calibrated) from then
                 * or from the header's arrival (docs/cost-model.md). */
                const plan_msg *G = &p->msgs[st->msg];
                int fd = G->from * nd + d;
                double bytes = (double)G->bytes, own = t + m->pick_s[fd] + bytes * m->pspb[fd];
                double msg = m->arrival[st->msg];
                /* A pull no slower than the link ends by the arrival when
                 * started at the header (the schedule of a file without a
                 * pull rate, to the last bit). */
                if (m->pspb[fd] > m->spb[fd]) {
                    double h = m->hdr[st->msg] + bytes * m->pspb[fd];
                    if (h > msg) msg = h;
                }
                te = clock_max(own, &s->fvar, msg, m->mvar[st->msg]);
            }
            s->wait += te - t;
            break;
        }
        if (m->sched0) {
            m->sched0[p->step0[d] + s->pc] = t;
            m->sched1[p->step0[d] + s->pc] = te;
        }
        t = te;
        if (st->op != PLAN_SEND && d == p->out_dev && st->tensor == p->out_tensor) *latency = te;
        for (int k = 0; k < st->nfree; k++) {
            int id = p->args[st->free0 + k];
            if (m->sdone[base + id] > te)
                def[s->ndef++] = id;
            else
                s->live -= (double)T[id].bytes;
        }
        /* The runtime tests its sends after every step but a SEND. */
        if (st->op != PLAN_SEND) {
            for (int k = 0; k < s->ndef;) {
                if (m->sdone[base + def[k]] <= te) {
                    s->live -= (double)T[def[k]].bytes;
                    def[k] = def[--s->ndef];
                } else {
                    k++;
                }
            }
            for (int *g = &s->packs; *g >= 0;) {
                if (m->arrival[*g] <= te) {
                    s->live -= (double)p->msgs[*g].bytes;
                    *g = m->packnext[*g];
                } else {
                    g = &m->packnext[*g];
                }
            }
        }
    }
    s->t = t;
}

/* One pass of the simulation over plan p (state in m->st); the latency
 * into *latency.  0, or -1 with m->err. */
static int simulate(cost_model *m, const plan *p, double *latency)
{
    int nd = m->nd;
    memset(m->st, 0, (size_t)nd * sizeof *m->st);
    for (int d = 0; d < nd; d++) m->st[d].blocked = -1, m->st[d].packs = -1;
    if (p->nmsgs) memset(m->sent, 0, (size_t)p->nmsgs);
    for (int t = 0; t < p->ntensors; t++) m->sdone[t] = 0;
    /* Receive buffers exist from the start (every MPI_Irecv is posted then);
     * the network input is on the source from the start. */
    for (int g = 0; g < p->nmsgs; g++) {
        const plan_msg *G = &p->msgs[g];
        m->st[G->to].live += (double)G->bytes;
        m->st[G->to].rx += G->bytes;
        m->st[G->from].tx += G->bytes;
    }
    m->st[p->source].live += (double)plan_tensor_of(p, p->source, p->input_tensor)->bytes;
    int sp = 0;
    for (int d = nd - 1; d >= 0; d--) {
        m->st[d].peak = m->st[d].live;
        m->stack[sp++] = d;
    }
    *latency = -1;
    while (sp > 0) {
        int d = m->stack[--sp];
        run_device(m, p, d, &sp, latency);
    }
    for (int d = 0; d < nd; d++)
        if (m->st[d].pc < plan_nsteps_dev(p, d)) {
            base_seterr(m->err,
                     "cost model: the plan deadlocks (device %d waits for "
                     "message %d)",
                     d, m->st[d].blocked);
            return -1;
        }
    if (*latency < 0) {
        base_seterr(m->err, "cost model: the plan never completes the network output");
        return -1;
    }
    return 0;
}

/* Devices that share a board slow each other's memory-bound steps
 * (docs/cost-model.md, "Devices that share a board's memory"): from the
 * first pass's schedule (t0, t1), each compute step s of a device gets
 * the factor 1 + sum over the compute steps s' of the other devices of
 * its board of overlap(s, s') / duration(s) x min(corun(s) - 1,
 * corun(s') - 1), into mul (1 elsewhere).  Returns whether any factor
 * differs from 1. */
static int corun_scale(const cost_model *m, const plan *p, const double *t0, const double *t1,
                       double *mul)
{
    int nd = m->nd, any = 0;
    for (int g = 0; g < p->nsteps; g++) mul[g] = 1;
    for (int a = 0; a < nd; a++) {
        const plan_step *sa = plan_steps_dev(p, a);
        int na = plan_nsteps_dev(p, a), ga = p->step0[a];
        const dev_coef *va = &m->dv[a];
        for (int b = 0; b < nd; b++) {
            if (b == a || m->board[b] != m->board[a] || !plan_nsteps_dev(p, b)) continue;
            const plan_step *sb = plan_steps_dev(p, b);
            int nb = plan_nsteps_dev(p, b), gb = p->step0[b], j = 0;
            const dev_coef *vb = &m->dv[b];
            /* Both devices' steps are in time order: one sweep. */
            for (int i = 0; i < na; i++) {
                if (sa[i].op != PLAN_COMPUTE) continue;
                double ka = m->lk[sa[i].layer * 2 + va->kind].corun1, s0 = t0[ga + i], s1 = t1[ga + i];
                if (!(ka > 0) || !(s1 > s0)) continue;
                while (j < nb && t1[gb + j] <= s0) j++;
                double extra = 0;
                for (int k = j; k < nb && t0[gb + k] < s1; k++) {
                    if (sb[k].op != PLAN_COMPUTE) continue;
                    double kb = m->lk[sb[k].layer * 2 + vb->kind].corun1;
                    double lo = t0[gb + k] > s0 ? t0[gb + k] : s0, hi = t1[gb + k] < s1 ? t1[gb + k] : s1;
                    if (kb > 0 && hi > lo) extra += (hi - lo) * (ka < kb ? ka : kb);
                }
                if (extra > 0) {
                    mul[ga + i] += extra / (s1 - s0);
                    any = 1;
                }
            }
        }
    }
    return any;
}

static int ensure_corun(cost_model *m, const plan *p)
{
    if (p->nsteps <= m->cap_c) return 0;
    int c = p->nsteps > 2 * m->cap_c ? p->nsteps : 2 * m->cap_c;
    free(m->c_t0);
    free(m->c_t1);
    free(m->c_mul);
    m->c_t0 = malloc((size_t)c * sizeof *m->c_t0);
    m->c_t1 = malloc((size_t)c * sizeof *m->c_t1);
    m->c_mul = malloc((size_t)c * sizeof *m->c_mul);
    m->cap_c = m->c_t0 && m->c_t1 && m->c_mul ? c : 0;
    return m->cap_c ? 0 : -1;
}

int cost_eval(cost_model *m, const plan *p, cost_result *r, cost_device *per_dev)
{
    int nd = m->nd;
    if (p->ndev != nd || p->nlayers != m->nl) {
        base_seterr(m->err,
                 "cost model: plan for %d layers on %d devices, model for "
                 "%s (%d layers) on %s (%d devices)",
                 p->nlayers, p->ndev, m->n->name, m->nl, m->pl->name, nd);
        return -1;
    }
    if (ensure_scratch(m, p)) {
        base_seterr(m->err, "cost model: out of memory");
        return -1;
    }
    double latency;
    /* Two devices of one board at work, and corun factors: pass 1 gives the
     * schedule the factors need (into the caller's schedule arrays where it
     * gave some), pass 2 the result; where no compute step overlaps one
     * with a factor, pass 1 is the result. */
    int two = 0;
    for (int d = 0; m->contend && d < nd && !two; d++)
        for (int e = 0; e < d && !two && plan_nsteps_dev(p, d); e++)
            two = plan_nsteps_dev(p, e) && m->board[e] == m->board[d];
    if (!two) {
        if (simulate(m, p, &latency)) return -1;
    } else {
        if (ensure_corun(m, p)) {
            base_seterr(m->err, "cost model: out of memory");
            return -1;
        }
        double *s0 = m->sched0, *s1 = m->sched1;
        if (!s0) m->sched0 = m->c_t0, m->sched1 = m->c_t1;
        int rc = simulate(m, p, &latency);
        const double *t0 = m->sched0, *t1 = m->sched1;
        m->sched0 = s0, m->sched1 = s1;
        if (rc) return -1;
        if (corun_scale(m, p, t0, t1, m->c_mul)) {
            m->cmul = m->c_mul;
            rc = simulate(m, p, &latency);
            m->cmul = NULL;
            if (rc) return -1;
        }
    }
    cost_result res = {0, 0, latency * 1e3, 0, 0};
    int64_t moved = 0; /* summed exactly, divided once */
    for (int d = 0; d < nd; d++) {
        const dev_state *s = &m->st[d];
        const dev_coef *v = &m->dv[d];
        cost_device o;
        memset(&o, 0, sizeof o);
        if (plan_nsteps_dev(p, d) > 0) {
            o.used = 1;
            o.compute_s = s->compute;
            o.concat_s = s->concat;
            o.send_s = s->send;
            o.busy_s = s->compute + s->concat + s->send;
            o.wait_s = s->wait;
            o.idle_s = latency > o.busy_s ? latency - o.busy_s : 0;
            o.finish_s = s->t;
            o.bytes_sent = s->tx;
            o.bytes_recv = s->rx;
            o.weights_bytes = s->wraw;
            o.peak_act_bytes = s->peak;
            o.workspace_bytes = s->ws;
            double bytes = s->wmem + v->act_coef * (s->peak + s->ws) + v->bias_bytes;
            o.mem_mb = bytes / 1e6;
            o.energy_j = s->ebusy + o.idle_s * v->idle_w;
            if (bytes > v->cap_bytes) res.violation_bytes += bytes - v->cap_bytes;
            if (o.energy_j > res.energy_j) res.energy_j = o.energy_j;
            if (o.mem_mb > res.mem_mb) res.mem_mb = o.mem_mb;
            moved += s->tx;
        }
        if (per_dev) per_dev[d] = o;
    }
    res.comm_mb = (double)moved / 1e6;
    *r = res;
    return 0;
}

int cost_schedule(cost_model *m, const plan *p, cost_result *r, cost_device *per_dev, double *t0,
                  double *t1)
{
    m->sched0 = t0;
    m->sched1 = t1;
    int rc = cost_eval(m, p, r, per_dev);
    m->sched0 = m->sched1 = NULL;
    return rc;
}
