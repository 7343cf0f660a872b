/* plan.c -- Mapping -> Plan, the plan's invariant checker and its listing.
 *
 * plan_build emits steps in one global order (layers in topological order;
 * within a layer, its slices in channel order, each followed by its sends),
 * tagging each step with its device; at the end a stable counting sort by
 * device turns that sequence into the per-device lists.  A tensor has a
 * global id (creation order, used for lifetimes) and a local id (per
 * device, what steps and args store).  All buffers are kept between builds
 * (see plan.h), so a build allocates nothing once they have grown.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define MAXDEV PLAT_MAX_DEV /* device sets are 64-bit masks */

/* A box of a layer's output (mapping.h). */
typedef map_box box;

typedef struct {
    int nl, nd;     /* sized for */
    int cap_slices; /* pend capacity in slices */
    box *need;      /* [(nl+1)*nd]: the box of producer p needed on d (slot 0 = input):
                     * the hull of what d's slices read; set only where needers says */
    uint64_t *needers; /* [nl+1]: the devices that need something of producer p (so a
                        * build clears one word per layer, not every box) */
    int *held;      /* [(nl+1)*nd]: global tensor id of p's needed box on d, or -1 */
    box *reads;     /* the box each slice reads of each input, in build order (filled
                     * by the hull pass, read again by the build pass: computed once) */
    int cap_reads;
    int *slice_t;   /* [nslices]: global tensor id of each slice where computed */
    box *comp;      /* [nslices]: the box each slice computes: its own rows, or with
                     * mapping.recompute the hull of them and what its device needs */
    int *pend;      /* [nslices*nd]: message carrying (part of) slice s to device d, or -1 */
    int64_t cap_pend; /* pend's elements (cap_slices times the nd it was sized for) */
    int *in_msg;    /* [nd]: message carrying (part of) the input to d, or -1 */
    /* Build-time tags, parallel to steps/tensors (global order). */
    int *step_dev, *tensor_dev, *tensor_local, *last_use, *order;
    int cap_tag_steps, cap_tag_tensors;
    int *cnt;       /* [nd+1] */
    plan_step *tmp_steps;
    plan_tensor *tmp_tensors;
    int *tfree_cnt; /* [steps+1] */
    int cap_tfree, cap_order, cap_tmp_steps, cap_tmp_tensors;
} scratch;

plan *plan_new(void) { return calloc(1, sizeof(plan)); }

static void scratch_free(scratch *s)
{
    if (!s) return;
    free(s->need);
    free(s->needers);
    free(s->held);
    free(s->reads);
    free(s->slice_t);
    free(s->comp);
    free(s->pend);
    free(s->in_msg);
    free(s->step_dev);
    free(s->tensor_dev);
    free(s->tensor_local);
    free(s->last_use);
    free(s->order);
    free(s->cnt);
    free(s->tmp_steps);
    free(s->tmp_tensors);
    free(s->tfree_cnt);
    free(s);
}

void plan_free(plan *p)
{
    if (!p) return;
    free(p->step0);
    free(p->tensor0);
    free(p->steps);
    free(p->tensors);
    free(p->args);
    free(p->msgs);
    scratch_free(p->scratch);
    free(p);
}

/* Grow *ptr to hold at least want elements of size sz. */
static int grow(void **ptr, int *cap, int want, size_t sz)
{
    if (want <= *cap) return 0;
    int nc = *cap ? *cap : 64;
    while (nc < want) nc *= 2;
    void *np = realloc(*ptr, (size_t)nc * sz);
    if (!np) return -1;
    *ptr = np;
    *cap = nc;
    return 0;
}

static net_shape shape_of(const net *n, int layer)
{
    return layer == NET_INPUT ? n->input : n->layers[layer].out;
}

/* [a0, a0+an) ∩ [b0, b0+bn) into *o0, *on (0 when empty). */
static inline void cap(int a0, int an, int b0, int bn, int *o0, int *on)
{
    int lo = a0 > b0 ? a0 : b0, hi = a0 + an < b0 + bn ? a0 + an : b0 + bn;
    *o0 = lo;
    *on = hi > lo ? hi - lo : 0;
}

/* [a0, a0+an) ∪ [b0, b0+bn), the smallest interval holding both. */
static inline void cup(int a0, int an, int b0, int bn, int *o0, int *on)
{
    int lo = a0 < b0 ? a0 : b0, hi = a0 + an > b0 + bn ? a0 + an : b0 + bn;
    *o0 = lo;
    *on = hi - lo;
}

static inline int box_empty(box x) { return !x.nc || !x.nh || !x.nw; }

static inline int64_t box_floats(box x) { return (int64_t)x.nc * x.nh * x.nw; }

/* a ∩ b; box_empty when they do not meet. */
static inline box intersect(box a, box b)
{
    box o;
    cap(a.c0, a.nc, b.c0, b.nc, &o.c0, &o.nc);
    cap(a.h0, a.nh, b.h0, b.nh, &o.h0, &o.nh);
    cap(a.w0, a.nw, b.w0, b.nw, &o.w0, &o.nw);
    return o;
}

/* The smallest box holding a and b (a when b is empty). */
static inline box hull(box a, box b)
{
    if (box_empty(b)) return a;
    box o;
    cup(a.c0, a.nc, b.c0, b.nc, &o.c0, &o.nc);
    cup(a.h0, a.nh, b.h0, b.nh, &o.h0, &o.nh);
    cup(a.w0, a.nw, b.w0, b.nw, &o.w0, &o.nw);
    return o;
}

static inline box step_box(const plan_step *s) { return (box){s->c0, s->nc, s->h0, s->nh, s->w0, s->nw}; }

static inline int box_eq(box a, box b)
{
    return a.c0 == b.c0 && a.nc == b.nc && a.h0 == b.h0 && a.nh == b.nh && a.w0 == b.w0 &&
           a.nw == b.nw;
}

static inline box tensor_box(const plan_tensor *t) { return (box){t->c0, t->nc, t->h0, t->nh, t->w0, t->nw}; }

static inline box whole_box(net_shape sh) { return (box){0, sh.c, 0, sh.h, 0, sh.w}; }

/* Builder state threaded through the helpers. */
typedef struct {
    plan *p;
    scratch *s;
    const net *n;
    const mapping *m;
    int nd;
    int *dev_ntensors; /* per device counter of local ids */
    int tin;           /* global id of the network input on the source */
    int oom;
} bld;

/* Box x's six fields into a plan tensor, step or message (the public
 * structs spell their box as fields, which every reader of a Plan reads). */
#define BOX_SET(dst, x)                                                                 \
    ((dst)->c0 = (x)->c0, (dst)->nc = (x)->nc, (dst)->h0 = (x)->h0, (dst)->nh = (x)->nh, \
     (dst)->w0 = (x)->w0, (dst)->nw = (x)->nw)

static int add_step(bld *b, int dev, plan_op op, int layer, const box *x, int peer, int msg, int tensor,
                    int arg0, int narg)
{
    plan *p = b->p;
    scratch *s = b->s;
    if (grow((void **)&p->steps, &p->cap_steps, p->nsteps + 1, sizeof *p->steps) ||
        grow((void **)&s->step_dev, &s->cap_tag_steps, p->nsteps + 1, sizeof *s->step_dev)) {
        b->oom = 1;
        return -1;
    }
    plan_step *st = &p->steps[p->nsteps];
    st->op = op;
    st->layer = layer;
    BOX_SET(st, x);
    st->peer = peer;
    st->msg = msg;
    st->tensor = tensor;
    st->arg0 = arg0;
    st->narg = narg;
    st->free0 = 0;
    st->nfree = 0;
    s->step_dev[p->nsteps] = dev;
    return p->nsteps++;
}

static int add_tensor(bld *b, int dev, int layer, const box *x)
{
    plan *p = b->p;
    scratch *s = b->s;
    int cap = s->cap_tag_tensors;
    if (grow((void **)&p->tensors, &p->cap_tensors, p->ntensors + 1, sizeof *p->tensors)) {
        b->oom = 1;
        return -1;
    }
    if (p->ntensors + 1 > cap) {
        int c1 = cap, c2 = cap, c3 = cap;
        if (grow((void **)&s->tensor_dev, &c1, p->ntensors + 1, sizeof(int)) ||
            grow((void **)&s->tensor_local, &c2, p->ntensors + 1, sizeof(int)) ||
            grow((void **)&s->last_use, &c3, p->ntensors + 1, sizeof(int))) {
            b->oom = 1;
            return -1;
        }
        s->cap_tag_tensors = c1;
    }
    plan_tensor *t = &p->tensors[p->ntensors];
    t->layer = layer;
    BOX_SET(t, x);
    t->bytes = box_floats(*x) * 4;
    s->tensor_dev[p->ntensors] = dev;
    s->tensor_local[p->ntensors] = b->dev_ntensors[dev]++;
    s->last_use[p->ntensors] = -1;
    return p->ntensors++;
}

static int add_arg(bld *b, int v)
{
    plan *p = b->p;
    if (grow((void **)&p->args, &p->cap_args, p->nargs + 1, sizeof *p->args)) {
        b->oom = 1;
        return -1;
    }
    p->args[p->nargs] = v;
    return p->nargs++;
}

static int add_msg(bld *b, int from, int to, int layer, const box *x, int step)
{
    plan *p = b->p;
    if (grow((void **)&p->msgs, &p->cap_msgs, p->nmsgs + 1, sizeof *p->msgs)) {
        b->oom = 1;
        return -1;
    }
    plan_msg *g = &p->msgs[p->nmsgs];
    g->from = from;
    g->to = to;
    g->layer = layer;
    BOX_SET(g, x);
    g->bytes = box_floats(*x) * 4;
    g->send_step = step;
    g->recv_step = -1;
    p->bytes_moved += g->bytes;
    return p->nmsgs++;
}

static inline void use(bld *b, int tensor, int step) { b->s->last_use[tensor] = step; }

/* The box of layer q that device d needs: the hull of what its slices read
 * (an empty box when it needs nothing). */
static inline const box *need_box(const bld *b, int q, int d)
{
    static const box none = {0, 0, 0, 0, 0, 0};
    return b->s->needers[q + 1] >> d & 1 ? &b->s->need[(q + 1) * b->nd + d] : &none;
}

/* The devices computing a slice of layer i, as a mask. */
static uint64_t layer_devs(const mapping *m, int i)
{
    uint64_t mask = 0;
    for (int k = m->first[i]; k < m->first[i + 1]; k++) mask |= (uint64_t)1 << m->slices[k].dev;
    return mask;
}

/* Send, from tensor t on dev, the intersection of its own part `have` (the
 * slice's rows, without rows recomputed for its consumers) with what every
 * other device needs of its layer (nothing where they do not meet, nor to
 * a device that recomputes its halo of the layer); pend_row[e] gets the
 * message to e, or -1. */
static void send_all(bld *b, int dev, int t, const box *have, int *pend_row)
{
    const plan_tensor *T = &b->p->tensors[t];
    int layer = T->layer, local = b->s->tensor_local[t];
    uint64_t band_devs = layer >= 0 && b->m->recompute[layer] ? layer_devs(b->m, layer) : 0;
    for (int e = 0; e < b->nd; e++) pend_row[e] = -1;
    /* The other devices that need some of the layer, but those that compute
     * all they need of it themselves, in increasing order. */
    uint64_t to = b->s->needers[layer + 1] & ~((uint64_t)1 << dev) & ~band_devs;
    for (; to; to &= to - 1) {
        int e = __builtin_ctzll(to);
        const box *want = need_box(b, layer, e);
        box x = intersect(*have, *want);
        if (box_empty(x)) continue;
        int st = add_step(b, dev, PLAN_SEND, layer, &x, e, -1, local, 0, 0);
        if (st < 0) return;
        int mg = add_msg(b, dev, e, layer, &x, st);
        if (mg < 0) return;
        b->p->steps[st].msg = mg;
        use(b, t, st);
        pend_row[e] = mg;
    }
}

static int recv_msg(bld *b, int dev, int mg)
{
    plan_msg *g = &b->p->msgs[mg];
    box x = {g->c0, g->nc, g->h0, g->nh, g->w0, g->nw};
    int t = add_tensor(b, dev, g->layer, &x);
    if (t < 0) return -1;
    int st = add_step(b, dev, PLAN_RECV, g->layer, &x, g->from, mg, b->s->tensor_local[t], 0, 0);
    if (st < 0) return -1;
    b->p->msgs[mg].recv_step = st;
    use(b, t, st);
    return t;
}

/* A CONCAT on dev assembling box x of layer q from the n pieces ids[]. */
static int assemble(bld *b, int dev, int q, const box *x, const int *ids, int n)
{
    int t = add_tensor(b, dev, q, x);
    if (t < 0) return -1;
    int a0 = b->p->nargs;
    for (int k = 0; k < n; k++)
        if (add_arg(b, b->s->tensor_local[ids[k]]) < 0) return -1;
    int st = add_step(b, dev, PLAN_CONCAT, q, x, -1, -1, b->s->tensor_local[t], a0, n);
    if (st < 0) return -1;
    for (int k = 0; k < n; k++) use(b, ids[k], st);
    use(b, t, st);
    return t;
}

/* Global id of the box producer q (NET_INPUT allowed) is needed as on dev
 * (need_box), receiving and assembling first if needed: the pieces of q
 * (its slices, or the input) meeting the box, local or received, used as
 * they are when one piece is exactly the box. */
static int get_held(bld *b, int q, int dev)
{
    scratch *s = b->s;
    int nd = b->nd;
    int *slot = &s->held[(q + 1) * nd + dev];
    if (*slot >= 0) return *slot;
    const box *want = need_box(b, q, dev);
    int ids[MAXDEV], np = 0;
    if (q == NET_INPUT) {
        ids[np++] = dev == b->p->source ? b->tin : recv_msg(b, dev, s->in_msg[dev]);
    } else {
        const mapping *m = b->m;
        int f = m->first[q], ns = m->first[q + 1] - f;
        for (int k = 0; k < ns && m->recompute[q]; k++)
            if (m->slices[f + k].dev == dev) { /* it computed all it needs of q */
                int t = s->slice_t[f + k];
                if (box_eq(tensor_box(&b->p->tensors[t]), *want)) return *slot = t;
                return *slot = assemble(b, dev, q, want, &t, 1);
            }
        for (int k = 0; k < ns; k++) {
            const map_slice *sl = &m->slices[f + k];
            box x = intersect(mapping_slice_box(m, b->n, q, sl), *want);
            if (box_empty(x)) continue;
            ids[np] = sl->dev == dev ? s->slice_t[f + k] : recv_msg(b, dev, s->pend[(f + k) * nd + dev]);
            if (ids[np++] < 0) return -1;
        }
    }
    if (np < 1 || ids[0] < 0) return -1;
    if (np == 1 && box_eq(tensor_box(&b->p->tensors[ids[0]]), *want)) return *slot = ids[0];
    return *slot = assemble(b, dev, q, want, ids, np);
}

/* Global id of box `want` of producer q on dev: the held box, or a crop of
 * it when another consumer there needs more. */
static int get_box(bld *b, int q, int dev, const box *want)
{
    int h = get_held(b, q, dev);
    if (h < 0) return -1;
    if (box_eq(tensor_box(&b->p->tensors[h]), *want)) return h;
    return assemble(b, dev, q, want, &h, 1);
}

static int ensure_scratch(plan *p, const net *n, const mapping *m)
{
    scratch *s = p->scratch;
    int nl = n->n, nd = m->ndev, nsl = m->first[nl];
    if (!s) {
        s = p->scratch = calloc(1, sizeof *s);
        if (!s) return -1;
    }
    if (s->nl < nl || s->nd < nd) {
        int L = nl > s->nl ? nl : s->nl, D = nd > s->nd ? nd : s->nd;
        free(s->need);
        free(s->needers);
        free(s->held);
        free(s->in_msg);
        free(s->cnt);
        s->need = malloc((size_t)(L + 1) * D * sizeof *s->need);
        s->needers = malloc((size_t)(L + 1) * sizeof *s->needers);
        s->held = malloc((size_t)(L + 1) * D * sizeof *s->held);
        s->in_msg = malloc((size_t)D * sizeof *s->in_msg);
        s->cnt = malloc((size_t)(D + 1) * sizeof *s->cnt);
        if (!s->need || !s->needers || !s->held || !s->in_msg || !s->cnt) {
            s->nl = s->nd = 0; /* so the next build allocates again, whatever its size */
            return -1;
        }
        s->nl = L;
        s->nd = D;
    }
    /* pend is sized for the device count of its allocation: a plan reused
     * for more devices grows it even when the slice count fits. */
    if (s->cap_slices < nsl || s->cap_pend < (int64_t)s->cap_slices * s->nd) {
        int c = nsl > 2 * s->cap_slices ? nsl : 2 * s->cap_slices;
        free(s->slice_t);
        free(s->comp);
        free(s->pend);
        s->slice_t = malloc((size_t)c * sizeof *s->slice_t);
        s->comp = malloc((size_t)c * sizeof *s->comp);
        s->pend = malloc((size_t)c * s->nd * sizeof *s->pend);
        s->cap_slices = c;
        s->cap_pend = (int64_t)c * s->nd;
        if (!s->slice_t || !s->comp || !s->pend) return -1;
    }
    if (!p->step0 || p->ndev < nd) {
        free(p->step0);
        free(p->tensor0);
        p->step0 = malloc((size_t)(s->nd + 1) * sizeof *p->step0);
        p->tensor0 = malloc((size_t)(s->nd + 1) * sizeof *p->tensor0);
        if (!p->step0 || !p->tensor0) return -1;
    }
    return 0;
}

/* Exchange two growable buffers (pointer and capacity): the reordered copy
 * becomes the plan's array without copying it back. */
static void swap_buffers(void **a, int *ca, void **b, int *cb)
{
    void *t = *a;
    int c = *ca;
    *a = *b, *ca = *cb;
    *b = t, *cb = c;
}

/* Reorder steps and tensors into per-device CSR, renumber tensors to local
 * ids, attach free lists, and remap message step indices. */
static int finish(bld *b, int outg)
{
    plan *p = b->p;
    scratch *s = b->s;
    int nd = b->nd, ns = p->nsteps, nt = p->ntensors;
    /* Free lists: bucket tensors by their last use (global step order). */
    if (grow((void **)&s->tfree_cnt, &s->cap_tfree, ns + 1, sizeof(int))) return -1;
    memset(s->tfree_cnt, 0, (size_t)(ns + 1) * sizeof(int));
    for (int t = 0; t < nt; t++)
        if (t != outg && s->last_use[t] >= 0) s->tfree_cnt[s->last_use[t]]++;
    int base = p->nargs, total = 0;
    for (int i = 0; i < ns; i++) {
        p->steps[i].free0 = base + total;
        p->steps[i].nfree = 0;
        total += s->tfree_cnt[i];
    }
    if (grow((void **)&p->args, &p->cap_args, base + total, sizeof *p->args)) return -1;
    for (int t = 0; t < nt; t++)
        if (t != outg && s->last_use[t] >= 0) {
            plan_step *st = &p->steps[s->last_use[t]];
            p->args[st->free0 + st->nfree++] = s->tensor_local[t];
        }
    p->nargs = base + total;
    /* Counting sort of steps by device (stable). */
    if (grow((void **)&s->order, &s->cap_order, ns > nt ? ns : nt, sizeof(int))) return -1;
    memset(s->cnt, 0, (size_t)(nd + 1) * sizeof(int));
    for (int i = 0; i < ns; i++) s->cnt[s->step_dev[i] + 1]++;
    for (int d = 0; d < nd; d++) s->cnt[d + 1] += s->cnt[d];
    memcpy(p->step0, s->cnt, (size_t)(nd + 1) * sizeof(int));
    for (int i = 0; i < ns; i++) s->order[i] = s->cnt[s->step_dev[i]]++; /* new index of step i */
    if (grow((void **)&s->tmp_steps, &s->cap_tmp_steps, ns, sizeof *s->tmp_steps)) return -1;
    for (int i = 0; i < ns; i++) s->tmp_steps[s->order[i]] = p->steps[i];
    swap_buffers((void **)&p->steps, &p->cap_steps, (void **)&s->tmp_steps, &s->cap_tmp_steps);
    for (int g = 0; g < p->nmsgs; g++) {
        p->msgs[g].send_step = s->order[p->msgs[g].send_step];
        p->msgs[g].recv_step = s->order[p->msgs[g].recv_step];
    }
    /* Tensors by device; local ids were assigned in creation order. */
    memset(s->cnt, 0, (size_t)(nd + 1) * sizeof(int));
    for (int t = 0; t < nt; t++) s->cnt[s->tensor_dev[t] + 1]++;
    for (int d = 0; d < nd; d++) s->cnt[d + 1] += s->cnt[d];
    memcpy(p->tensor0, s->cnt, (size_t)(nd + 1) * sizeof(int));
    if (grow((void **)&s->tmp_tensors, &s->cap_tmp_tensors, nt, sizeof *s->tmp_tensors)) return -1;
    for (int t = 0; t < nt; t++)
        s->tmp_tensors[p->tensor0[s->tensor_dev[t]] + s->tensor_local[t]] = p->tensors[t];
    swap_buffers((void **)&p->tensors, &p->cap_tensors, (void **)&s->tmp_tensors,
                 &s->cap_tmp_tensors);
    return 0;
}

/* The box of input j that a compute step of layer i over box x reads
 * (rows.c: net_rows_in, net_cols_in for a band of rows or columns,
 * net_chans_in for channels). */
static box reads_box(const net *n, int i, int j, const box *xp)
{
    const box x = *xp;
    const net_layer *L = &n->layers[i];
    net_shape in = shape_of(n, L->in[j]);
    int r0 = 0, r1 = in.h, q0 = 0, q1 = in.w, a0 = 0, a1 = in.c;
    /* A step over the whole output reads the whole of every input (no call:
     * this runs for every input of every slice of every genome). */
    if (x.nh != L->out.h) net_rows_in(n, i, j, x.h0, x.h0 + x.nh, &r0, &r1);
    if (x.nw != L->out.w) net_cols_in(n, i, j, x.w0, x.w0 + x.nw, &q0, &q1);
    if (x.nc != L->out.c) net_chans_in(n, i, j, x.c0, x.c0 + x.nc, &a0, &a1);
    return (box){a0, a1 - a0, r0, r1 - r0, q0, q1 - q0};
}

/* Device d needs box x of producer row - 1 (row 0: the input) too. */
static void widen(scratch *s, int nd, int row, int d, const box *x)
{
    if (box_empty(*x)) return;
    box *k = &s->need[row * nd + d];
    uint64_t bit = (uint64_t)1 << d;
    *k = s->needers[row] & bit ? hull(*k, *x) : *x;
    s->needers[row] |= bit;
}

int plan_build(plan *p, const net *n, const mapping *m, int source, char *err)
{
    int nl = n->n, nd = m->ndev;
    if (nd < 1 || nd > MAXDEV || m->nlayers != nl || source < 0 || source >= nd) {
        base_seterr(err, "plan: mapping for %d layers on %d devices (source %d) does not "
                 "fit network %s (%d layers; at most %d devices)", m->nlayers, nd, source,
                 n->name, nl, MAXDEV);
        return -1;
    }
    if (ensure_scratch(p, n, m)) goto oom;
    scratch *s = p->scratch;
    int devn[MAXDEV] = {0};
    bld b = {p, s, n, m, nd, devn, -1, 0};
    p->ndev = nd;
    p->nlayers = nl;
    p->nsteps = p->ntensors = p->nargs = p->nmsgs = 0;
    p->bytes_moved = 0;
    p->source = source;

    /* What each device needs of each output: the hull of the boxes its
     * slices read.  Consumers come after their producers, so walking the
     * layers backwards a layer's needs are complete when its own slices
     * are reached: a slice that recomputes its halo (mapping.recompute)
     * computes the hull of its rows and what its device needs, and reads
     * what that box reads. */
    memset(s->needers, 0, (size_t)(nl + 1) * sizeof *s->needers);
    int nreads = 0;
    for (int i = 0; i < nl; i++) nreads += (m->first[i + 1] - m->first[i]) * n->layers[i].nin;
    if (grow((void **)&s->reads, &s->cap_reads, nreads, sizeof *s->reads)) goto oom;
    int out = nl - 1;
    net_shape os = n->layers[out].out;
    p->out_dev = m->slices[m->first[out]].dev;
    box all_out = whole_box(os), all_in = whole_box(n->input);
    widen(s, nd, out + 1, p->out_dev, &all_out);
    for (int i = nl - 1, pos = nreads; i >= 0; i--) {
        const net_layer *L = &n->layers[i];
        int f = m->first[i], ns = m->first[i + 1] - f;
        pos -= ns * L->nin;
        for (int k = 0; k < ns; k++) {
            const map_slice *sl = &m->slices[f + k];
            box x = mapping_slice_box(m, n, i, sl);
            if (m->recompute[i]) x = hull(x, *need_box(&b, i, sl->dev));
            s->comp[f + k] = x;
            for (int j = 0; j < L->nin; j++) {
                box *r = &s->reads[pos + k * L->nin + j];
                *r = reads_box(n, i, j, &x);
                widen(s, nd, L->in[j] + 1, sl->dev, r);
            }
        }
    }
    box *rd = s->reads;
    memset(s->held, 0xff, (size_t)(nl + 1) * nd * sizeof *s->held); /* all -1 */

    /* The input starts on the source device and is sent where needed. */
    int tin = add_tensor(&b, source, NET_INPUT, &all_in);
    if (tin < 0) goto oom;
    p->input_tensor = s->tensor_local[tin];
    b.tin = tin;
    send_all(&b, source, tin, &all_in, s->in_msg);
    if (b.oom) goto oom;

    for (int i = 0; i < nl; i++) {
        const net_layer *L = &n->layers[i];
        int f = m->first[i], ns = m->first[i + 1] - f;
        for (int k = 0; k < ns; k++) {
            const map_slice *sl = &m->slices[f + k];
            int d = sl->dev, ins[NET_MAX_IN];
            int nin = L->nin;
            if (nin > NET_MAX_IN) {
                base_seterr(err, "plan: layer %s has more than %d inputs", L->name,
                         NET_MAX_IN);
                return -1;
            }
            /* Inputs first (they may emit receives and concats). */
            for (int j = 0; j < nin; j++, rd++)
                if ((ins[j] = get_box(&b, L->in[j], d, rd)) < 0) goto oom;
            int a0 = p->nargs;
            for (int j = 0; j < nin; j++)
                if (add_arg(&b, s->tensor_local[ins[j]]) < 0) goto oom;
            box x = s->comp[f + k], own = mapping_slice_box(m, n, i, sl);
            int t = add_tensor(&b, d, i, &x);
            if (t < 0) goto oom;
            int st = add_step(&b, d, PLAN_COMPUTE, i, &x, -1, -1, s->tensor_local[t], a0, nin);
            if (st < 0) goto oom;
            for (int j = 0; j < nin; j++) use(&b, ins[j], st);
            use(&b, t, st);
            s->slice_t[f + k] = t;
            send_all(&b, d, t, &own, &s->pend[(f + k) * nd]);
            if (b.oom) goto oom;
        }
    }
    int tout = get_box(&b, out, p->out_dev, &all_out);
    if (tout < 0) goto oom;
    p->out_tensor = s->tensor_local[tout];
    if (finish(&b, tout)) goto oom;
    return 0;
oom:
    base_seterr(err, "plan: out of memory");
    return -1;
}

int plan_has_bands(const plan *p, const net *n)
{
    for (int i = 0; i < p->nsteps; i++)
        if (plan_step_band(&p->steps[i], n)) return 1;
    return 0;
}

const char *plan_op_name(plan_op op)
{
    static const char *names[] = {"compute", "send", "recv", "concat"};
    return names[op];
}

/* ---- invariant checker (tests, dse plan --check) ---- */

int plan_check(const plan *p, const net *n, char *err)
{
    int rc = -1, nd = p->ndev;
    int *state = calloc((size_t)p->ntensors + 1, sizeof *state); /* 0 new, 1 alive, 2 freed */
    int *seen_send = calloc((size_t)p->nmsgs + 1, sizeof(int));
    int *seen_recv = calloc((size_t)p->nmsgs + 1, sizeof(int));
    int *pc = calloc((size_t)nd, sizeof(int));
    int *sent = calloc((size_t)p->nmsgs + 1, sizeof(int));
    if (!state || !seen_send || !seen_recv || !pc || !sent) {
        base_seterr(err, "plan check: out of memory");
        goto out;
    }
    /* Static checks per device, in step order. */
    for (int d = 0; d < nd; d++) {
        int *st8 = state + p->tensor0[d];
        int nt = p->tensor0[d + 1] - p->tensor0[d];
        if (d == p->source) st8[p->input_tensor] = 1;
        for (int i = p->step0[d]; i < p->step0[d + 1]; i++) {
            const plan_step *s = &p->steps[i];
            int li = i - p->step0[d];
            if (s->tensor < 0 || s->tensor >= nt) {
                base_seterr(err, "device %d step %d: tensor id %d out of range", d, li, s->tensor);
                goto out;
            }
            const plan_tensor *T = &p->tensors[p->tensor0[d] + s->tensor];
            for (int k = 0; k < s->narg; k++) {
                int a = p->args[s->arg0 + k];
                if (a < 0 || a >= nt || st8[a] != 1) {
                    base_seterr(err, "device %d step %d (%s %s): input tensor %d not "
                             "available", d, li, plan_op_name(s->op),
                             s->layer < 0 ? "input" : n->layers[s->layer].name, a);
                    goto out;
                }
            }
            switch (s->op) {
            case PLAN_COMPUTE: {
                const net_layer *L = &n->layers[s->layer];
                if (s->narg != L->nin) {
                    base_seterr(err, "device %d step %d: compute %s has %d inputs, "
                             "layer has %d", d, li, L->name, s->narg, L->nin);
                    goto out;
                }
                int rband = s->nh != L->out.h, cband = s->nw != L->out.w;
                if (!box_eq(tensor_box(T), step_box(s)) || T->layer != s->layer || s->c0 < 0 ||
                    s->nc < 1 || s->c0 + s->nc > L->out.c || s->h0 < 0 || s->nh < 1 ||
                    s->h0 + s->nh > L->out.h || s->w0 < 0 || s->nw < 1 ||
                    s->w0 + s->nw > L->out.w ||
                    ((rband || cband) && s->nc != L->out.c) ||
                    (rband && !net_layer_rowsplit(n, s->layer)) ||
                    (cband && !net_layer_colsplit(n, s->layer))) {
                    base_seterr(err, "device %d step %d: compute %s output extent "
                             "wrong", d, li, L->name);
                    goto out;
                }
                for (int k = 0; k < s->narg; k++) {
                    const plan_tensor *A = &p->tensors[p->tensor0[d] + p->args[s->arg0 + k]];
                    box sb = step_box(s);
                    if (A->layer != L->in[k] || !box_eq(tensor_box(A), reads_box(n, s->layer, k, &sb))) {
                        base_seterr(err, "device %d step %d: compute %s input %d is "
                                 "not the box its slice reads", d, li, L->name, k);
                        goto out;
                    }
                }
                break;
            }
            case PLAN_CONCAT: {
                /* The pieces' intersections with the box tile it. */
                box want = step_box(s);
                int64_t area = 0;
                int bad = !box_eq(tensor_box(T), want) || T->layer != s->layer;
                for (int k = 0; k < s->narg && !bad; k++) {
                    const plan_tensor *A = &p->tensors[p->tensor0[d] + p->args[s->arg0 + k]];
                    box x = intersect(tensor_box(A), want);
                    bad = A->layer != s->layer || box_empty(x);
                    area += box_floats(x);
                    for (int j = 0; j < k && !bad; j++) {
                        const plan_tensor *B = &p->tensors[p->tensor0[d] + p->args[s->arg0 + j]];
                        box y = intersect(intersect(tensor_box(B), want), x);
                        bad = !box_empty(y);
                    }
                }
                if (bad || area != box_floats(want)) {
                    base_seterr(err, "device %d step %d: concat of %s: its pieces do "
                             "not tile its box", d, li, s->layer < 0 ? "input" : n->layers[s->layer].name);
                    goto out;
                }
                break;
            }
            case PLAN_SEND:
            case PLAN_RECV: {
                if (s->msg < 0 || s->msg >= p->nmsgs) {
                    base_seterr(err, "device %d step %d: bad message id", d, li);
                    goto out;
                }
                const plan_msg *g = &p->msgs[s->msg];
                int is_send = s->op == PLAN_SEND;
                int *seen = is_send ? seen_send : seen_recv;
                box gb = {g->c0, g->nc, g->h0, g->nh, g->w0, g->nw};
                box inside = is_send ? intersect(tensor_box(T), gb) : tensor_box(T);
                if (seen[s->msg]++ || (is_send ? g->from != d || g->to != s->peer
                                               : g->to != d || g->from != s->peer) ||
                    (is_send ? g->send_step : g->recv_step) != i || g->layer != T->layer ||
                    !box_eq(step_box(s), gb) || !box_eq(inside, gb) || g->from == g->to ||
                    g->bytes != box_floats(gb) * 4) {
                    base_seterr(err, "device %d step %d: %s of message %d does not "
                             "match it", d, li, plan_op_name(s->op), s->msg);
                    goto out;
                }
                if (is_send && st8[s->tensor] != 1) {
                    base_seterr(err, "device %d step %d: sends a tensor it does not "
                             "hold", d, li);
                    goto out;
                }
                break;
            }
            }
            if (s->op != PLAN_SEND) {
                if (st8[s->tensor] != 0) {
                    base_seterr(err, "device %d step %d: tensor %d produced twice",
                             d, li, s->tensor);
                    goto out;
                }
                st8[s->tensor] = 1;
            }
            for (int k = 0; k < s->nfree; k++) {
                int a = p->args[s->free0 + k];
                if (a < 0 || a >= nt || st8[a] != 1) {
                    base_seterr(err, "device %d step %d: frees tensor %d that is not "
                             "alive", d, li, a);
                    goto out;
                }
                st8[a] = 2;
            }
        }
    }
    for (int g = 0; g < p->nmsgs; g++)
        if (seen_send[g] != 1 || seen_recv[g] != 1) {
            base_seterr(err, "message %d (%s, %d -> %d) has %d sends and %d receives", g,
                     p->msgs[g].layer < 0 ? "input" : n->layers[p->msgs[g].layer].name,
                     p->msgs[g].from, p->msgs[g].to, seen_send[g], seen_recv[g]);
            goto out;
        }
    /* The output: the whole last layer, alive at the end on out_dev. */
    {
        const plan_tensor *T = plan_tensor_of(p, p->out_dev, p->out_tensor);
        if (T->layer != n->n - 1 || !box_eq(tensor_box(T), whole_box(n->layers[n->n - 1].out)) ||
            state[p->tensor0[p->out_dev] + p->out_tensor] != 1) {
            base_seterr(err, "the network output is not whole and alive on device %d",
                     p->out_dev);
            goto out;
        }
    }
    /* Deadlock freedom: blocking receives, buffered sends. */
    for (int left = p->nsteps; left > 0;) {
        int progress = 0;
        for (int d = 0; d < nd; d++)
            while (p->step0[d] + pc[d] < p->step0[d + 1]) {
                const plan_step *s = &p->steps[p->step0[d] + pc[d]];
                if (s->op == PLAN_RECV && !sent[s->msg]) break;
                if (s->op == PLAN_SEND) sent[s->msg] = 1;
                pc[d]++, left--, progress = 1;
            }
        if (!progress) {
            base_seterr(err, "the plan deadlocks with blocking receives");
            goto out;
        }
    }
    rc = 0;
out:
    free(state);
    free(seen_send);
    free(seen_recv);
    free(pc);
    free(sent);
    return rc;
}

void plan_print(FILE *f, const plan *p, const net *n, const platform *pl)
{
    for (int d = 0; d < p->ndev; d++) {
        int64_t tx = 0, rx = 0;
        int ns = plan_nsteps_dev(p, d);
        const plan_step *st = plan_steps_dev(p, d);
        for (int i = 0; i < ns; i++) {
            if (st[i].op == PLAN_SEND) tx += p->msgs[st[i].msg].bytes;
            if (st[i].op == PLAN_RECV) rx += p->msgs[st[i].msg].bytes;
        }
        fprintf(f, "device %d (%s): %d steps, sends %lld bytes, receives %lld bytes\n", d,
                pl && d < pl->ndev ? pl->dev[d].name : "?", ns, (long long)tx, (long long)rx);
        for (int i = 0; i < ns; i++) {
            const plan_step *s = &st[i];
            const char *lname = s->layer < 0 ? n->input_name : n->layers[s->layer].name;
            fprintf(f, "  %3d %-7s %-22s ch %d..%d", i, plan_op_name(s->op), lname, s->c0,
                    s->c0 + s->nc - 1);
            if (s->nh != shape_of(n, s->layer).h)
                fprintf(f, " rows %d..%d", s->h0, s->h0 + s->nh - 1);
            if (s->nw != shape_of(n, s->layer).w)
                fprintf(f, " cols %d..%d", s->w0, s->w0 + s->nw - 1);
            if (s->op == PLAN_SEND || s->op == PLAN_RECV)
                fprintf(f, "  %s %s  %lld bytes", s->op == PLAN_SEND ? "to" : "from",
                        pl && s->peer < pl->ndev ? pl->dev[s->peer].name : "?",
                        (long long)p->msgs[s->msg].bytes);
            if (s->op == PLAN_COMPUTE) {
                int64_t macs = net_box_macs(n, s->layer, s->c0, s->nc, s->h0, s->nh, s->w0, s->nw);
                if (macs) fprintf(f, "  %lld MACs", (long long)macs);
                else fprintf(f, "  %lld ops", (long long)net_box_ops(n, s->layer, s->c0, s->nc,
                                                                       s->h0, s->nh, s->w0, s->nw));
            }
            if (s->op == PLAN_CONCAT) fprintf(f, "  %d slices", s->narg);
            fputc('\n', f);
        }
    }
    fprintf(f, "output on device %d (%s); %d messages, %lld bytes moved\n", p->out_dev,
            pl && p->out_dev < pl->ndev ? pl->dev[p->out_dev].name : "?", p->nmsgs,
            (long long)p->bytes_moved);
}
