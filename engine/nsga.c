/* nsga.c -- the NSGA-II engine (Deb, Pratap, Agarwal, Meyarivan 2002):
 * state, variation operators, evaluation cache, (mu+lambda) survival,
 * statistics, termination, checkpoints, and the parallel-evaluation
 * helpers.
 *
 * Invariants:
 *  - The population lives in the first N slots of arrays of 2N slots; a
 *    generation writes its N offspring to slots N..2N-1, then survival
 *    compacts the best N into the other buffer set and swaps.  Every buffer
 *    is allocated by nsga_create; a generation allocates nothing except
 *    amortised growth of the evaluation cache.
 *  - Random numbers are drawn only in selection, variation and the random
 *    part of the initial population, in a fixed order that depends on the
 *    population alone.  Evaluation, the cache and threads draw nothing.
 *  - A call that fails restores the RNG and commits nothing, so the engine
 *    is exactly as before the call.
 */
#include "nsga.h"
#include "nsga_internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof(int) == 4, "integer genes are 32-bit ints");
_Static_assert(sizeof(double) == 8, "objectives are IEEE doubles");

enum { MAX_POP = 1 << 24 };

static int fail(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, NSGA_ERRLEN, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- genome hashing --------------------------------------------------------- */

static inline uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = (h ^ fmix64(v)) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t v = 0;
        memcpy(&v, p + i, n - i);
        h = (h ^ fmix64(v)) * 0x100000001b3ULL;
    }
    return fmix64(h);
}

/* ---- evaluation cache: genome -> (objectives, cv) --------------------------------
 * Records in one growing arena: [u64 hash][m objectives][cv][genome].
 * Open addressing over record numbers + 1 (0 = empty), load <= 1/2. */
typedef struct {
    size_t rec_size, nrec, caprec, tcap;
    unsigned char *recs;
    uint32_t *table;
} cache_t;

static unsigned char *rec_at(const cache_t *c, size_t r) { return c->recs + r * c->rec_size; }

static int cache_reserve(cache_t *c, size_t extra)
{
    size_t need = c->nrec + extra;
    if (need >= UINT32_MAX / 2) return NSGA_ENOMEM;
    if (need > c->caprec) {
        size_t cap = c->caprec ? c->caprec : 1024;
        while (cap < need) cap *= 2;
        unsigned char *r = realloc(c->recs, cap * c->rec_size);
        if (!r) return NSGA_ENOMEM;
        c->recs = r;
        c->caprec = cap;
    }
    if (need * 2 > c->tcap) {
        size_t tcap = c->tcap ? c->tcap : 2048;
        while (need * 2 > tcap) tcap *= 2;
        uint32_t *t = calloc(tcap, sizeof *t);
        if (!t) return NSGA_ENOMEM;
        for (size_t r = 0; r < c->nrec; r++) {
            uint64_t h;
            memcpy(&h, rec_at(c, r), 8);
            size_t i = (size_t)h & (tcap - 1);
            while (t[i]) i = (i + 1) & (tcap - 1);
            t[i] = (uint32_t)(r + 1);
        }
        free(c->table);
        c->table = t;
        c->tcap = tcap;
    }
    return 0;
}

/* Record number holding genome g (hash h), or -1. */
static long cache_find(const cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes,
                       size_t goff)
{
    if (!c->tcap) return -1;
    for (size_t i = (size_t)h & (c->tcap - 1); c->table[i]; i = (i + 1) & (c->tcap - 1)) {
        size_t r = c->table[i] - 1;
        const unsigned char *rec = rec_at(c, r);
        uint64_t rh;
        memcpy(&rh, rec, 8);
        if (rh == h && memcmp(rec + goff, g, gbytes) == 0) return (long)r;
    }
    return -1;
}

/* Appends a record; room was reserved. */
static void cache_add(cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes, size_t goff,
                      const double *obj, int m, double cv)
{
    unsigned char *rec = rec_at(c, c->nrec);
    memcpy(rec, &h, 8);
    memcpy(rec + 8, obj, (size_t)m * sizeof *obj);
    memcpy(rec + 8 + (size_t)m * 8, &cv, 8);
    memcpy(rec + goff, g, gbytes);
    size_t i = (size_t)h & (c->tcap - 1);
    while (c->table[i]) i = (i + 1) & (c->tcap - 1);
    c->table[i] = (uint32_t)(++c->nrec);
}

/* ---- the engine ------------------------------------------------------------------ */

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

void nsga_options_default(nsga_options *o)
{
    memset(o, 0, sizeof *o);
    o->pop_size = 100;
    o->seed = 1;
    o->pc = 0.9;
    o->pm = 0;
    o->xover = NSGA_XO_UNIFORM;
    o->eta_c = 20;
    o->eta_m = 20;
    o->dedup = 0;
    o->dedup_retries = 10;
    o->cache = 1;
    o->max_gens = 100;
    o->stag_tol = 1e-6;
}

static unsigned char *G(const nsga *e, unsigned char *buf, int i) { return buf + (size_t)i * e->gbytes; }

/* ---- argument checks ------------------------------------------------------------- */

static int check_problem(const nsga_problem *p, char *err)
{
    if (!p) return fail(err, NSGA_EINVAL, "no problem given");
    if (p->kind != NSGA_INT && p->kind != NSGA_REAL)
        return fail(err, NSGA_EINVAL, "problem kind must be NSGA_INT or NSGA_REAL");
    if (p->nvar < 1) return fail(err, NSGA_EINVAL, "problem has %d variables; needs at least 1", p->nvar);
    if (p->nobj < 2 || p->nobj > NSGA_MAX_OBJ)
        return fail(err, NSGA_EINVAL, "problem has %d objectives; needs 2 to %d", p->nobj, NSGA_MAX_OBJ);
    if (p->kind == NSGA_INT) {
        if (!p->ilo || !p->ihi) return fail(err, NSGA_EINVAL, "integer problem without bounds");
        if (!p->eval_int) return fail(err, NSGA_EINVAL, "integer problem without eval_int");
        for (int j = 0; j < p->nvar; j++)
            if (p->ilo[j] > p->ihi[j])
                return fail(err, NSGA_EINVAL, "variable %d: lower bound %d > upper bound %d", j,
                            p->ilo[j], p->ihi[j]);
    } else {
        if (!p->lo || !p->hi) return fail(err, NSGA_EINVAL, "real problem without bounds");
        if (!p->eval_real) return fail(err, NSGA_EINVAL, "real problem without eval_real");
        for (int j = 0; j < p->nvar; j++) {
            if (!isfinite(p->lo[j]) || !isfinite(p->hi[j]))
                return fail(err, NSGA_EINVAL, "variable %d: bounds must be finite", j);
            if (p->lo[j] > p->hi[j])
                return fail(err, NSGA_EINVAL, "variable %d: lower bound %g > upper bound %g", j,
                            p->lo[j], p->hi[j]);
        }
    }
    return 0;
}

static int check_options(const nsga_problem *p, const nsga_options *o, char *err)
{
    if (!o) return fail(err, NSGA_EINVAL, "no options given");
    if (o->pop_size < 4 || o->pop_size % 2 || o->pop_size > MAX_POP)
        return fail(err, NSGA_EINVAL, "population %d: must be even and in [4, %d]", o->pop_size,
                    MAX_POP);
    if (!(o->pc >= 0 && o->pc <= 1)) return fail(err, NSGA_EINVAL, "crossover probability %g not in [0, 1]", o->pc);
    if (!(o->pm <= 1)) return fail(err, NSGA_EINVAL, "mutation rate %g above 1", o->pm);
    if (!(o->eta_c >= 0 && o->eta_c < 1e6) || !(o->eta_m >= 0 && o->eta_m < 1e6))
        return fail(err, NSGA_EINVAL, "distribution indices must be in [0, 1e6)");
    if (o->xover != NSGA_XO_UNIFORM && o->xover != NSGA_XO_TWOPOINT)
        return fail(err, NSGA_EINVAL, "unknown crossover %d", (int)o->xover);
    if (o->pm_form != NSGA_PM_CLAMPED && o->pm_form != NSGA_PM_BOUNDED)
        return fail(err, NSGA_EINVAL, "unknown polynomial mutation form %d", (int)o->pm_form);
    if (o->truncation != NSGA_TRUNC_ITERATIVE && o->truncation != NSGA_TRUNC_ONESHOT)
        return fail(err, NSGA_EINVAL, "unknown truncation %d", (int)o->truncation);
    if (o->archive_max < 0) return fail(err, NSGA_EINVAL, "archive_max must be >= 0");
    if (o->archive_max > MAX_POP) return fail(err, NSGA_EINVAL, "archive_max above %d", MAX_POP);
    if (o->dedup_retries < 0) return fail(err, NSGA_EINVAL, "dedup_retries must be >= 0");
    if (o->max_gens < 0 || o->max_evals < 0 || !(o->max_seconds >= 0) || o->stag_gens < 0 ||
        !(o->stag_tol >= 0))
        return fail(err, NSGA_EINVAL, "termination criteria must be >= 0");
    if (o->ref)
        for (int k = 0; k < p->nobj; k++)
            if (!isfinite(o->ref[k])) return fail(err, NSGA_EINVAL, "reference point must be finite");
    if (o->stag_gens > 0 && !o->ref)
        return fail(err, NSGA_EINVAL, "stagnation criterion needs a reference point (options.ref)");
    if (o->nseeds < 0 || o->nseeds > o->pop_size)
        return fail(err, NSGA_EINVAL, "%d seed genomes for a population of %d", o->nseeds, o->pop_size);
    if (o->nseeds == 0) return 0;
    if (p->kind == NSGA_INT) {
        if (!o->seed_int) return fail(err, NSGA_EINVAL, "integer problem: seed genomes go in seed_int");
        for (int s = 0; s < o->nseeds; s++)
            for (int j = 0; j < p->nvar; j++) {
                int v = o->seed_int[(size_t)s * p->nvar + j];
                if (v < p->ilo[j] || v > p->ihi[j])
                    return fail(err, NSGA_EINVAL, "seed genome %d, gene %d: %d outside [%d, %d]", s, j,
                                v, p->ilo[j], p->ihi[j]);
            }
    } else {
        if (!o->seed_real) return fail(err, NSGA_EINVAL, "real problem: seed genomes go in seed_real");
        for (int s = 0; s < o->nseeds; s++)
            for (int j = 0; j < p->nvar; j++) {
                double v = o->seed_real[(size_t)s * p->nvar + j];
                if (!(v >= p->lo[j] && v <= p->hi[j]))
                    return fail(err, NSGA_EINVAL, "seed genome %d, gene %d: %g outside [%g, %g]", s, j,
                                v, p->lo[j], p->hi[j]);
            }
    }
    return 0;
}

/* ---- create / destroy -------------------------------------------------------------- */

static void *dup_mem(const void *src, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (d && n) memcpy(d, src, n);
    return d;
}

nsga *nsga_create(const nsga_problem *p, const nsga_options *o, char *err)
{
    if (check_problem(p, err) || check_options(p, o, err)) return NULL;
    nsga *e = calloc(1, sizeof *e);
    if (!e) {
        fail(err, NSGA_ENOMEM, "out of memory");
        return NULL;
    }
    e->prob = *p;
    e->opt = *o;
    int N = o->pop_size, nv = p->nvar, m = p->nobj;
    size_t N2 = 2 * (size_t)N;
    e->N = N;
    e->nv = nv;
    e->m = m;
    e->gbytes = (size_t)nv * (p->kind == NSGA_INT ? sizeof(int) : sizeof(double));
    e->pm = o->pm > 0 ? o->pm : 1.0 / nv;
    int ok = 1;
    if (p->kind == NSGA_INT) {
        ok &= !!(e->ilo = dup_mem(p->ilo, nv * sizeof(int)));
        ok &= !!(e->ihi = dup_mem(p->ihi, nv * sizeof(int)));
        e->prob.ilo = e->ilo;
        e->prob.ihi = e->ihi;
        e->prob.lo = e->prob.hi = NULL;
        e->prob.eval_real = NULL;
        if (o->nseeds) ok &= !!(e->seeds_int = dup_mem(o->seed_int, (size_t)o->nseeds * nv * sizeof(int)));
    } else {
        ok &= !!(e->lo = dup_mem(p->lo, nv * sizeof(double)));
        ok &= !!(e->hi = dup_mem(p->hi, nv * sizeof(double)));
        e->prob.lo = e->lo;
        e->prob.hi = e->hi;
        e->prob.ilo = e->prob.ihi = NULL;
        e->prob.eval_int = NULL;
        if (o->nseeds)
            ok &= !!(e->seeds_real = dup_mem(o->seed_real, (size_t)o->nseeds * nv * sizeof(double)));
    }
    if (o->ref) ok &= !!(e->ref = dup_mem(o->ref, m * sizeof(double)));
    e->opt.ref = e->ref;
    e->opt.seed_int = e->seeds_int;
    e->opt.seed_real = e->seeds_real;

    e->set_cap = 16;
    while (e->set_cap < 4 * N2) e->set_cap *= 2;
    ok &= !!(e->g = malloc(N2 * e->gbytes)) & !!(e->g2 = malloc(N2 * e->gbytes));
    ok &= !!(e->obj = malloc(N2 * m * sizeof(double))) & !!(e->obj2 = malloc(N2 * m * sizeof(double)));
    ok &= !!(e->cv = malloc(N2 * sizeof(double))) & !!(e->cv2 = malloc(N2 * sizeof(double)));
    ok &= !!(e->crowd = malloc(N2 * sizeof(double))) & !!(e->crowd2 = malloc(N2 * sizeof(double)));
    ok &= !!(e->rank = malloc(N2 * sizeof(int))) & !!(e->rank2 = malloc(N2 * sizeof(int)));
    ok &= !!(e->pair = malloc(2 * e->gbytes));
    ok &= !!(e->bg = malloc((size_t)N * e->gbytes));
    ok &= !!(e->bobj = malloc((size_t)N * m * sizeof(double))) & !!(e->bcv = malloc(N * sizeof(double)));
    ok &= !!(e->bh = malloc(N * sizeof(uint64_t))) & !!(e->res = malloc(N * sizeof(long)));
    ok &= !!(e->set = malloc(e->set_cap * sizeof(int)));
    ok &= !!(e->set_h = malloc(N2 * sizeof(uint64_t)));
    ok &= !!(e->set_g = malloc(N2 * sizeof(*e->set_g)));
    ok &= !!(e->hvbuf = malloc((size_t)N * m * sizeof(double)));
    ok &= !!(e->negc = malloc(N2 * sizeof(double)));
    ok &= !!(e->fcount = malloc((N2 + 1) * sizeof(int))) & !!(e->mem = malloc(N2 * sizeof(int)));
    ok &= !!(e->sel = malloc(N2));
    ok &= !!(e->perm = malloc(N * sizeof(int)));
    if (o->archive && o->archive_max > 0) {
        ok &= !!(e->ar_mem = malloc(((size_t)o->archive_max + N) * sizeof(int)));
        ok &= ok && !nsga_sortws_init(&e->aw, o->archive_max + N, m);
    }
    if (!ok || nsga_sortws_init(&e->sw, (int)N2, m) || nsga_hvws_init(&e->hw, N)) {
        nsga_destroy(e);
        fail(err, NSGA_ENOMEM, "out of memory");
        return NULL;
    }
    e->cache.rec_size = (8 + 8 * ((size_t)m + 1) + e->gbytes + 7) & ~(size_t)7;
    e->rng = gsl_rng_alloc(gsl_rng_mt19937);
    e->rng_saved = gsl_rng_alloc(gsl_rng_mt19937);
    if (!e->rng || !e->rng_saved) {
        nsga_destroy(e);
        fail(err, NSGA_ENOMEM, "out of memory");
        return NULL;
    }
    /* Zero the state first: the struct has padding that gsl_rng_set leaves
     * alone, and checkpoints copy the state bytes verbatim. */
    memset(gsl_rng_state(e->rng), 0, gsl_rng_size(e->rng));
    memset(gsl_rng_state(e->rng_saved), 0, gsl_rng_size(e->rng_saved));
    gsl_rng_set(e->rng, o->seed);
    e->st.hv = NAN;
    return e;
}

void nsga_destroy(nsga *e)
{
    if (!e) return;
    free(e->ilo), free(e->ihi), free(e->lo), free(e->hi), free(e->ref);
    free(e->seeds_int), free(e->seeds_real);
    free(e->g), free(e->g2), free(e->obj), free(e->obj2), free(e->cv), free(e->cv2);
    free(e->crowd), free(e->crowd2), free(e->rank), free(e->rank2), free(e->pair);
    free(e->bg), free(e->bobj), free(e->bcv), free(e->bh), free(e->res);
    free(e->set), free(e->set_h), free(e->set_g);
    free(e->hvbuf), free(e->negc), free(e->fcount), free(e->mem), free(e->sel), free(e->perm);
    free(e->cache.recs), free(e->cache.table);
    free(e->ar_g), free(e->ar_obj), free(e->ar_mem);
    nsga_sortws_free(&e->aw);
    nsga_sortws_free(&e->sw);
    nsga_hvws_free(&e->hw);
    if (e->rng) gsl_rng_free(e->rng);
    if (e->rng_saved) gsl_rng_free(e->rng_saved);
    free(e);
}

/* ---- random numbers ------------------------------------------------------------------ */

/* Uniform integer in [0, n), n <= 2^32, by rejection on 32-bit draws (not
 * gsl_rng_uniform_int, whose range error would call GSL's abort handler). */
static uint64_t rng_below(gsl_rng *r, uint64_t n)
{
    if (n <= 1) return 0;
    if (n > 0xffffffffULL) return gsl_rng_get(r);
    uint64_t limit = (0x100000000ULL / n) * n, v;
    do v = gsl_rng_get(r);
    while (v >= limit);
    return v % n;
}

static double rng_u01(gsl_rng *r) { return gsl_rng_uniform(r); }

/* ---- genome set (duplicate elimination, in-batch duplicates) ----------------------- */

static void set_clear(nsga *e) { memset(e->set, 0, e->set_cap * sizeof *e->set); }

/* Is genome g (hash h) in the set? */
static int set_has(const nsga *e, uint64_t h, const unsigned char *g, int *which)
{
    for (size_t i = (size_t)h & (e->set_cap - 1); e->set[i]; i = (i + 1) & (e->set_cap - 1)) {
        int k = e->set[i] - 1;
        if (e->set_h[k] == h && memcmp(e->set_g[k], g, e->gbytes) == 0) {
            if (which) *which = k;
            return 1;
        }
    }
    return 0;
}

/* Adds entry k (< 2N) standing for genome g; g must stay put while used. */
static void set_add(nsga *e, int k, uint64_t h, const unsigned char *g)
{
    e->set_h[k] = h;
    e->set_g[k] = g;
    size_t i = (size_t)h & (e->set_cap - 1);
    while (e->set[i]) i = (i + 1) & (e->set_cap - 1);
    e->set[i] = k + 1;
}

/* ---- variation --------------------------------------------------------------------------- */

/* Binary tournament on (rank, crowding) between two distinct members.
 * Contestants are drawn in pairs from a random permutation of the
 * population, reshuffled when used up (Deb's scheme: every member enters
 * the same number of tournaments, so none is lost by sampling chance). */
static int tournament(nsga *e)
{
    if (e->perm_pos + 2 > e->N) {
        for (int i = 0; i < e->N; i++) e->perm[i] = i;
        for (int i = e->N - 1; i > 0; i--) {
            int j = (int)rng_below(e->rng, (uint64_t)i + 1), t = e->perm[i];
            e->perm[i] = e->perm[j];
            e->perm[j] = t;
        }
        e->perm_pos = 0;
    }
    int a = e->perm[e->perm_pos], b = e->perm[e->perm_pos + 1];
    e->perm_pos += 2;
    if (e->rank[a] != e->rank[b]) return e->rank[a] < e->rank[b] ? a : b;
    return e->crowd[b] > e->crowd[a] ? b : a;
}

static void int_mutate(nsga *e, int *c)
{
    for (int j = 0; j < e->nv; j++) {
        if (!(rng_u01(e->rng) < e->pm)) continue;
        /* reset to a different value of the range, so the rate is the
         * rate of actual change (for 0/1 genes: a flip) */
        uint64_t span = (uint64_t)((int64_t)e->ihi[j] - e->ilo[j]);
        if (span == 0) continue;
        int64_t v = (int64_t)e->ilo[j] + (int64_t)rng_below(e->rng, span);
        if (v >= c[j]) v++;
        c[j] = (int)v;
    }
}

static void int_pair(nsga *e, const int *p1, const int *p2, int *c1, int *c2)
{
    int nv = e->nv;
    memcpy(c1, p1, e->gbytes);
    memcpy(c2, p2, e->gbytes);
    if (rng_u01(e->rng) < e->opt.pc) {
        if (e->opt.xover == NSGA_XO_UNIFORM) {
            for (int j = 0; j < nv; j++)
                if (rng_u01(e->rng) < 0.5) {
                    c1[j] = p2[j];
                    c2[j] = p1[j];
                }
        } else {
            int a = (int)rng_below(e->rng, (uint64_t)nv + 1), b = (int)rng_below(e->rng, (uint64_t)nv + 1);
            if (a > b) {
                int t = a;
                a = b;
                b = t;
            }
            for (int j = a; j < b; j++) {
                c1[j] = p2[j];
                c2[j] = p1[j];
            }
        }
    }
    int_mutate(e, c1);
    int_mutate(e, c2);
}

/* SBX with bounds, as in Deb's reference code (and pagmo). */
static void sbx(nsga *e, const double *p1, const double *p2, double *c1, double *c2)
{
    const double eta = e->opt.eta_c;
    memcpy(c1, p1, e->gbytes);
    memcpy(c2, p2, e->gbytes);
    if (!(rng_u01(e->rng) < e->opt.pc)) return;
    for (int j = 0; j < e->nv; j++) {
        if (!(rng_u01(e->rng) < 0.5)) continue;
        if (!(p1[j] != p2[j])) continue; /* any gap: genes converging to 0 keep shrinking */
        double y1 = fmin(p1[j], p2[j]), y2 = fmax(p1[j], p2[j]);
        double yl = e->lo[j], yu = e->hi[j], u = rng_u01(e->rng), d = y2 - y1;
        double beta = 1.0 + 2.0 * (y1 - yl) / d;
        double alpha = 2.0 - pow(beta, -(eta + 1.0));
        double bq = u <= 1.0 / alpha ? pow(u * alpha, 1.0 / (eta + 1.0))
                                     : pow(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0));
        double a = 0.5 * ((y1 + y2) - bq * d);
        beta = 1.0 + 2.0 * (yu - y2) / d;
        alpha = 2.0 - pow(beta, -(eta + 1.0));
        bq = u <= 1.0 / alpha ? pow(u * alpha, 1.0 / (eta + 1.0))
                              : pow(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0));
        double b = 0.5 * ((y1 + y2) + bq * d);
        a = fmin(fmax(a, yl), yu);
        b = fmin(fmax(b, yl), yu);
        if (rng_u01(e->rng) < 0.5) {
            c1[j] = b;
            c2[j] = a;
        } else {
            c1[j] = a;
            c2[j] = b;
        }
    }
}

/* Polynomial mutation, either form (see nsga_pm_form).  The clamped form
 * converges much faster where optima sit on a bound (ZDT6 reaches its
 * front in 250 generations instead of ~600); the bounded form never puts
 * mass on the bound itself. */
static void poly_mutate(nsga *e, double *x)
{
    const double eta = e->opt.eta_m, mpow = 1.0 / (eta + 1.0);
    const int clamped = e->opt.pm_form == NSGA_PM_CLAMPED;
    for (int j = 0; j < e->nv; j++) {
        if (!(rng_u01(e->rng) < e->pm)) continue;
        double yl = e->lo[j], yu = e->hi[j], y = x[j], u = rng_u01(e->rng);
        if (!(yu > yl)) continue;
        double d1 = (y - yl) / (yu - yl), d2 = (yu - y) / (yu - yl), dq;
        if (clamped) {
            dq = u < 0.5 ? pow(2.0 * u, mpow) - 1.0 : 1.0 - pow(2.0 * (1.0 - u), mpow);
        } else if (u <= 0.5) {
            double v = 2.0 * u + (1.0 - 2.0 * u) * pow(1.0 - d1, eta + 1.0);
            dq = pow(v, mpow) - 1.0;
        } else {
            double v = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * pow(1.0 - d2, eta + 1.0);
            dq = 1.0 - pow(v, mpow);
        }
        y += dq * (yu - yl);
        x[j] = fmin(fmax(y, yl), yu);
    }
}

/* Two children from two tournament winners. */
static void make_pair(nsga *e, unsigned char *c1, unsigned char *c2)
{
    int a = tournament(e), b = tournament(e);
    if (e->prob.kind == NSGA_INT) {
        int_pair(e, (const int *)G(e, e->g, a), (const int *)G(e, e->g, b), (int *)c1, (int *)c2);
    } else {
        sbx(e, (const double *)G(e, e->g, a), (const double *)G(e, e->g, b), (double *)c1,
            (double *)c2);
        poly_mutate(e, (double *)c1);
        poly_mutate(e, (double *)c2);
    }
}

/* Writes N offspring into slots N..2N-1; returns the number re-drawn. */
static long long make_offspring(nsga *e)
{
    int N = e->N;
    long long redrawn = 0;
    e->perm_pos = N; /* a fresh permutation per generation: no state to checkpoint */
    if (e->opt.dedup) {
        set_clear(e);
        for (int i = 0; i < N; i++) {
            unsigned char *g = G(e, e->g, i);
            uint64_t h = hash_bytes(g, e->gbytes);
            if (!set_has(e, h, g, NULL)) set_add(e, i, h, g);
        }
    }
    for (int i = N; i < 2 * N; i += 2) {
        make_pair(e, G(e, e->g, i), G(e, e->g, i + 1));
        if (!e->opt.dedup) continue;
        for (int c = i; c < i + 2; c++) {
            unsigned char *g = G(e, e->g, c);
            uint64_t h = hash_bytes(g, e->gbytes);
            for (int t = 0; t < e->opt.dedup_retries && set_has(e, h, g, NULL); t++) {
                make_pair(e, e->pair, e->pair + e->gbytes);
                memcpy(g, e->pair, e->gbytes);
                h = hash_bytes(g, e->gbytes);
                redrawn++;
            }
            if (!set_has(e, h, g, NULL)) set_add(e, c, h, g);
        }
    }
    return redrawn;
}

/* ---- evaluation ------------------------------------------------------------------------- */

static int call_eval(nsga *e, int n, const unsigned char *g, double *obj, double *cv, char *err)
{
    char msg[NSGA_ERRLEN] = "";
    memset(cv, 0, (size_t)n * sizeof *cv);
    int rc = e->prob.kind == NSGA_INT
                 ? e->prob.eval_int(e->prob.ctx, n, (const int *)g, obj, cv, msg)
                 : e->prob.eval_real(e->prob.ctx, n, (const double *)g, obj, cv, msg);
    msg[NSGA_ERRLEN - 1] = 0;
    if (rc) return fail(err, NSGA_EEVAL, "evaluate failed: %s", msg[0] ? msg : "(no message)");
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < e->m; k++)
            if (!isfinite(obj[(size_t)i * e->m + k]))
                return fail(err, NSGA_EEVAL, "evaluate returned objective %d = %g for individual %d of %d",
                            k, obj[(size_t)i * e->m + k], i, n);
        if (!(cv[i] >= 0) || !isfinite(cv[i]))
            return fail(err, NSGA_EEVAL, "evaluate returned constraint violation %g for individual %d of %d",
                        cv[i], i, n);
    }
    return 0;
}

/* Objectives and cv of slots first..first+n-1.  Cache hits (and genomes
 * repeated inside the batch) are copied, the rest go to the callback in
 * one batch.  On failure nothing is committed; on success *evals and *hits
 * get the counts. */
static int evaluate(nsga *e, int first, int n, long long *evals, long long *hits, char *err)
{
    int m = e->m;
    if (!e->opt.cache) {
        int rc = call_eval(e, n, G(e, e->g, first), e->obj + (size_t)first * m, e->cv + first, err);
        if (rc) return rc;
        *evals = n;
        *hits = 0;
        return 0;
    }
    cache_t *c = &e->cache;
    size_t goff = 8 + 8 * ((size_t)m + 1);
    if (cache_reserve(c, (size_t)n)) return fail(err, NSGA_ENOMEM, "out of memory (evaluation cache)");
    set_clear(e);
    int nb = 0, nhit = 0;
    for (int j = 0; j < n; j++) {
        const unsigned char *g = G(e, e->g, first + j);
        uint64_t h = hash_bytes(g, e->gbytes);
        long r = cache_find(c, h, g, e->gbytes, goff);
        int b;
        if (r >= 0) {
            e->res[j] = r;
            nhit++;
        } else if (set_has(e, h, g, &b)) {
            e->res[j] = -1 - b;
            nhit++;
        } else {
            unsigned char *bg = G(e, e->bg, nb);
            memcpy(bg, g, e->gbytes);
            e->bh[nb] = h;
            set_add(e, nb, h, bg);
            e->res[j] = -1 - nb++;
        }
    }
    if (nb) {
        int rc = call_eval(e, nb, e->bg, e->bobj, e->bcv, err);
        if (rc) return rc;
    }
    for (int j = 0; j < n; j++) {
        double *o = e->obj + (size_t)(first + j) * m;
        if (e->res[j] >= 0) {
            const unsigned char *rec = rec_at(c, (size_t)e->res[j]);
            memcpy(o, rec + 8, (size_t)m * sizeof *o);
            memcpy(&e->cv[first + j], rec + 8 + 8 * (size_t)m, 8);
        } else {
            long b = -1 - e->res[j];
            memcpy(o, e->bobj + (size_t)b * m, (size_t)m * sizeof *o);
            e->cv[first + j] = e->bcv[b];
        }
    }
    for (int b = 0; b < nb; b++)
        cache_add(c, e->bh[b], G(e, e->bg, b), e->gbytes, goff, e->bobj + (size_t)b * m, m, e->bcv[b]);
    *evals = nb;
    *hits = nhit;
    return 0;
}

/* ---- archive ------------------------------------------------------------------------------ */

/* Room for `extra` more members, so that adding can never fail. */
static int archive_reserve(nsga *e, int extra)
{
    if (!e->opt.archive) return 0;
    long need = (long)e->ar_n + extra;
    if (need <= e->ar_cap) return 0;
    if (need > MAX_POP * 4L) return NSGA_ENOMEM;
    int cap = e->ar_cap ? e->ar_cap : 256;
    while (cap < need) cap *= 2;
    unsigned char *g = realloc(e->ar_g, (size_t)cap * e->gbytes);
    if (g) e->ar_g = g;
    double *o = realloc(e->ar_obj, (size_t)cap * e->m * sizeof *o);
    if (o) e->ar_obj = o;
    if (!g || !o) return NSGA_ENOMEM;
    e->ar_cap = cap;
    return 0;
}

/* Adds a feasible solution unless a member weakly dominates it; drops the
 * members it dominates.  One pass suffices: if a member weakly dominates
 * f, f dominates no member (the members are mutually non-dominated), so a
 * rejection always comes before any removal. */
static void archive_add(nsga *e, const unsigned char *g, const double *f)
{
    int m = e->m, j = 0;
    for (int i = 0; i < e->ar_n; i++) {
        const double *a = e->ar_obj + (size_t)i * m;
        int a_le = 1, f_le = 1;
        for (int k = 0; k < m; k++) {
            if (a[k] > f[k]) a_le = 0;
            if (f[k] > a[k]) f_le = 0;
        }
        if (a_le) return;
        if (f_le) continue; /* dominated by f: dropped */
        if (j != i) {
            memcpy(e->ar_g + (size_t)j * e->gbytes, e->ar_g + (size_t)i * e->gbytes, e->gbytes);
            memcpy(e->ar_obj + (size_t)j * m, a, (size_t)m * sizeof *a);
        }
        j++;
    }
    memcpy(e->ar_g + (size_t)j * e->gbytes, g, e->gbytes);
    memcpy(e->ar_obj + (size_t)j * m, f, (size_t)m * sizeof *f);
    e->ar_n = j + 1;
}

/* Adds slots first..first+n-1, then prunes to archive_max if set. */
static void archive_update(nsga *e, int first, int n)
{
    if (!e->opt.archive) return;
    for (int i = first; i < first + n; i++)
        if (!(e->cv[i] > 0)) archive_add(e, G(e, e->g, i), e->obj + (size_t)i * e->m);
    int keep = e->opt.archive_max;
    if (keep <= 0 || e->ar_n <= keep) return;
    for (int i = 0; i < e->ar_n; i++) e->ar_mem[i] = i;
    nsga_truncate_crowding(&e->aw, e->ar_n, e->ar_mem, keep, e->m, e->ar_obj);
    for (int j = 0; j < keep; j++) { /* survivors in order, so j <= ar_mem[j] */
        int i = e->ar_mem[j];
        if (i == j) continue;
        memcpy(e->ar_g + (size_t)j * e->gbytes, e->ar_g + (size_t)i * e->gbytes, e->gbytes);
        memcpy(e->ar_obj + (size_t)j * e->m, e->ar_obj + (size_t)i * e->m, (size_t)e->m * sizeof(double));
    }
    e->ar_n = keep;
}

/* ---- ranking, survival, statistics ----------------------------------------------------- */

static void copy_slot(nsga *e, int dst, int src)
{
    int m = e->m;
    memcpy(G(e, e->g2, dst), G(e, e->g, src), e->gbytes);
    memcpy(e->obj2 + (size_t)dst * m, e->obj + (size_t)src * m, (size_t)m * sizeof(double));
    e->cv2[dst] = e->cv[src];
    e->rank2[dst] = e->rank[src];
}

static void swap_buffers(nsga *e)
{
    unsigned char *g = e->g;
    e->g = e->g2, e->g2 = g;
    double *d = e->obj;
    e->obj = e->obj2, e->obj2 = d;
    d = e->cv, e->cv = e->cv2, e->cv2 = d;
    d = e->crowd, e->crowd = e->crowd2, e->crowd2 = d;
    int *r = e->rank;
    e->rank = e->rank2, e->rank2 = r;
}

/* (mu + lambda): whole fronts of the 2N while they fit, the last front cut
 * by crowding distance (iteratively, or largest first with ties by slot).
 * Survivors keep their slot order; crowding is then recomputed within the
 * new fronts. */
static void survive(nsga *e)
{
    int N = e->N, N2 = 2 * N, m = e->m;
    int nf = nsga_sort_fast_ws(&e->sw, N2, m, e->obj, e->cv, e->rank);
    for (int r = 0; r <= nf; r++) e->fcount[r] = 0;
    for (int i = 0; i < N2; i++) e->fcount[e->rank[i]]++;
    int take = 0, L = 0;
    while (L < nf && take + e->fcount[L] <= N) take += e->fcount[L++];
    for (int i = 0; i < N2; i++) e->sel[i] = e->rank[i] < L;
    if (take < N) {
        int cnt = 0;
        for (int i = 0; i < N2; i++)
            if (e->rank[i] == L) e->mem[cnt++] = i;
        if (e->opt.truncation == NSGA_TRUNC_ITERATIVE) {
            nsga_truncate_crowding(&e->sw, cnt, e->mem, N - take, m, e->obj);
        } else {
            nsga_crowding_set(&e->sw, cnt, e->mem, m, e->obj, e->crowd);
            for (int k = 0; k < cnt; k++) e->negc[e->mem[k]] = -e->crowd[e->mem[k]];
            nsga_msort_by(e->mem, e->sw.tmp, cnt, e->negc, 1);
        }
        for (int k = 0; k < N - take; k++) e->sel[e->mem[k]] = 1;
    }
    int j = 0;
    for (int i = 0; i < N2; i++)
        if (e->sel[i]) copy_slot(e, j++, i);
    swap_buffers(e);
    nsga_crowding_all(&e->sw, N, m, e->obj, e->rank, take < N ? L + 1 : L, e->crowd);
}

static void rank_population(nsga *e)
{
    int nf = nsga_sort_fast_ws(&e->sw, e->N, e->m, e->obj, e->cv, e->rank);
    nsga_crowding_all(&e->sw, e->N, e->m, e->obj, e->rank, nf, e->crowd);
}

static void compute_stats(nsga *e)
{
    int m = e->m, nfront = 0, feas = 0, nhv = 0;
    for (int k = 0; k < m; k++) e->st.best[k] = NAN;
    for (int k = m; k < NSGA_MAX_OBJ; k++) e->st.best[k] = NAN;
    for (int i = 0; i < e->N; i++) {
        const double *o = e->obj + (size_t)i * m;
        if (e->rank[i] == 0) nfront++;
        if (e->cv[i] > 0) continue;
        feas++;
        for (int k = 0; k < m; k++)
            if (!(o[k] >= e->st.best[k])) e->st.best[k] = o[k]; /* NAN compares false */
        if (e->rank[i] == 0) memcpy(e->hvbuf + (size_t)nhv++ * m, o, (size_t)m * sizeof *o);
    }
    e->st.front_size = nfront;
    e->st.archive_size = e->ar_n;
    e->st.feasible = feas;
    e->st.hv = e->ref ? nsga_hv_ws(&e->hw, nhv, m, e->hvbuf, e->ref) : NAN;
}

/* ---- init / step / run ---------------------------------------------------------------- */

int nsga_init(nsga *e, char *err)
{
    if (!e) return fail(err, NSGA_EINVAL, "no engine");
    double t0 = base_now();
    int N = e->N, nv = e->nv;
    gsl_rng_memcpy(e->rng_saved, e->rng);
    for (int i = 0; i < N; i++) {
        unsigned char *g = G(e, e->g, i);
        if (i < e->opt.nseeds) {
            memcpy(g, e->prob.kind == NSGA_INT ? (const void *)(e->seeds_int + (size_t)i * nv)
                                               : (const void *)(e->seeds_real + (size_t)i * nv),
                   e->gbytes);
        } else if (e->prob.kind == NSGA_INT) {
            int *x = (int *)g;
            for (int j = 0; j < nv; j++)
                x[j] = (int)((int64_t)e->ilo[j] +
                             (int64_t)rng_below(e->rng, (uint64_t)((int64_t)e->ihi[j] - e->ilo[j]) + 1));
        } else {
            double *x = (double *)g;
            for (int j = 0; j < nv; j++) x[j] = e->lo[j] + (e->hi[j] - e->lo[j]) * rng_u01(e->rng);
        }
    }
    long long evals, hits;
    if (archive_reserve(e, N)) {
        gsl_rng_memcpy(e->rng, e->rng_saved);
        return fail(err, NSGA_ENOMEM, "out of memory (archive)");
    }
    int rc = evaluate(e, 0, N, &evals, &hits, err);
    if (rc) {
        gsl_rng_memcpy(e->rng, e->rng_saved);
        return rc;
    }
    e->ar_n = 0;
    archive_update(e, 0, N);
    rank_population(e);
    e->inited = 1;
    e->st.generation = 0;
    e->st.evaluations = evals;
    e->st.cache_hits = hits;
    e->st.redrawn = 0;
    e->stag_count = 0;
    compute_stats(e);
    e->prev_hv = e->st.hv;
    e->st.elapsed = base_now() - t0;
    return 0;
}

int nsga_step(nsga *e, char *err)
{
    if (!e) return fail(err, NSGA_EINVAL, "no engine");
    if (!e->inited) return fail(err, NSGA_ESTATE, "nsga_step before nsga_init or nsga_restore");
    double t0 = base_now();
    gsl_rng_memcpy(e->rng_saved, e->rng);
    if (archive_reserve(e, e->N)) return fail(err, NSGA_ENOMEM, "out of memory (archive)");
    long long redrawn = make_offspring(e), evals, hits;
    int rc = evaluate(e, e->N, e->N, &evals, &hits, err);
    if (rc) {
        gsl_rng_memcpy(e->rng, e->rng_saved);
        return rc;
    }
    archive_update(e, e->N, e->N);
    survive(e);
    e->st.generation++;
    e->st.evaluations += evals;
    e->st.cache_hits += hits;
    e->st.redrawn += redrawn;
    compute_stats(e);
    if (e->ref) {
        /* relative gain; NSGA-II is not monotone in hv, so a loss counts as
         * no gain */
        if (e->st.hv - e->prev_hv <= e->opt.stag_tol * fabs(e->prev_hv)) e->stag_count++;
        else e->stag_count = 0;
        e->prev_hv = e->st.hv;
    }
    e->st.elapsed += base_now() - t0;
    return 0;
}

int nsga_should_stop(const nsga *e)
{
    const nsga_options *o = &e->opt;
    if (!e->inited) return NSGA_STOP_NONE;
    if (o->max_gens > 0 && e->st.generation >= o->max_gens) return NSGA_STOP_GENS;
    if (o->max_evals > 0 && e->st.evaluations + e->st.cache_hits >= o->max_evals) return NSGA_STOP_EVALS;
    if (o->max_seconds > 0 && e->st.elapsed >= o->max_seconds) return NSGA_STOP_TIME;
    if (o->stag_gens > 0 && e->stag_count >= o->stag_gens) return NSGA_STOP_STAGNATION;
    return NSGA_STOP_NONE;
}

int nsga_run(nsga *e, char *err)
{
    if (!e) return fail(err, NSGA_EINVAL, "no engine");
    const nsga_options *o = &e->opt;
    if (!o->max_gens && !o->max_evals && !(o->max_seconds > 0) && !o->stag_gens && !o->on_gen)
        return fail(err, NSGA_EINVAL, "no termination criterion (generations, evaluations, time, "
                                      "stagnation or callback)");
    if (!e->inited) {
        int rc = nsga_init(e, err);
        if (rc) return rc;
        if (o->on_gen && o->on_gen(e, &e->st, o->on_gen_ctx)) return NSGA_STOP_CALLBACK;
    }
    for (;;) {
        int s = nsga_should_stop(e);
        if (s) return s;
        int rc = nsga_step(e, err);
        if (rc) return rc;
        if (o->on_gen && o->on_gen(e, &e->st, o->on_gen_ctx)) return NSGA_STOP_CALLBACK;
    }
}

/* ---- accessors -------------------------------------------------------------------------- */

const nsga_stats *nsga_get_stats(const nsga *e) { return e ? &e->st : NULL; }
const nsga_problem *nsga_get_problem(const nsga *e) { return e ? &e->prob : NULL; }
int nsga_pop_size(const nsga *e) { return e ? e->N : 0; }

static int valid_i(const nsga *e, int i) { return e && e->inited && i >= 0 && i < e->N; }

const int *nsga_genome_int(const nsga *e, int i)
{
    return valid_i(e, i) && e->prob.kind == NSGA_INT ? (const int *)G(e, e->g, i) : NULL;
}

const double *nsga_genome_real(const nsga *e, int i)
{
    return valid_i(e, i) && e->prob.kind == NSGA_REAL ? (const double *)G(e, e->g, i) : NULL;
}

const double *nsga_objectives(const nsga *e, int i)
{
    return valid_i(e, i) ? e->obj + (size_t)i * e->m : NULL;
}

double nsga_cv(const nsga *e, int i) { return valid_i(e, i) ? e->cv[i] : NAN; }
int nsga_rank(const nsga *e, int i) { return valid_i(e, i) ? e->rank[i] : -1; }
double nsga_crowding(const nsga *e, int i) { return valid_i(e, i) ? e->crowd[i] : NAN; }

int nsga_archive_size(const nsga *e) { return e && e->inited ? e->ar_n : 0; }

static int valid_a(const nsga *e, int i) { return e && e->inited && i >= 0 && i < e->ar_n; }

const int *nsga_archive_genome_int(const nsga *e, int i)
{
    return valid_a(e, i) && e->prob.kind == NSGA_INT ? (const int *)(e->ar_g + (size_t)i * e->gbytes) : NULL;
}

const double *nsga_archive_genome_real(const nsga *e, int i)
{
    return valid_a(e, i) && e->prob.kind == NSGA_REAL ? (const double *)(e->ar_g + (size_t)i * e->gbytes)
                                                      : NULL;
}

const double *nsga_archive_objectives(const nsga *e, int i)
{
    return valid_a(e, i) ? e->ar_obj + (size_t)i * e->m : NULL;
}

/* ---- checkpoint ----------------------------------------------------------------------------
 * Layout (native byte order, checked by a byte-order mark; see docs/engine.md):
 *   "NSGACKPT" u32 version u32 0x01020304
 *   u32 kind nvar nobj pop xover truncation pm_form dedup dedup_retries
 *       archive archive_max has_ref
 *   u64 seed   f64 pc pm eta_c eta_m   f64 ref[nobj] (if has_ref)
 *   bounds: nvar x (lo, hi) as i32 (integer) or f64 (real)
 *   i64 generation evaluations cache_hits redrawn   f64 elapsed prev_hv
 *   i32 stag_count   u32 rng_size   rng state bytes (gsl mt19937)
 *   genomes pop*nvar (i32 or f64)  obj pop*nobj f64  cv pop f64
 *   rank pop i32  crowding pop f64
 *   u32 archive_n  archive genomes  archive obj archive_n*nobj f64
 *   u64 FNV-1a hash of everything before it
 */
enum { CKPT_VERSION = 1 };
static const char CKPT_MAGIC[8] = {'N', 'S', 'G', 'A', 'C', 'K', 'P', 'T'};

typedef struct {
    unsigned char *p;
    size_t cap, len;
} wbuf;

static void put(wbuf *w, const void *src, size_t n)
{
    if (w->p && w->len + n <= w->cap) memcpy(w->p + w->len, src, n);
    w->len += n;
}
static void put_u32(wbuf *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(wbuf *w, uint64_t v) { put(w, &v, 8); }
static void put_f64(wbuf *w, double v) { put(w, &v, 8); }

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void write_state(const nsga *e, wbuf *w)
{
    int N = e->N, nv = e->nv, m = e->m;
    put(w, CKPT_MAGIC, 8);
    put_u32(w, CKPT_VERSION);
    put_u32(w, 0x01020304);
    put_u32(w, (uint32_t)e->prob.kind);
    put_u32(w, (uint32_t)nv);
    put_u32(w, (uint32_t)m);
    put_u32(w, (uint32_t)N);
    put_u32(w, (uint32_t)e->opt.xover);
    put_u32(w, (uint32_t)e->opt.truncation);
    put_u32(w, (uint32_t)e->opt.pm_form);
    put_u32(w, (uint32_t)!!e->opt.dedup);
    put_u32(w, (uint32_t)e->opt.dedup_retries);
    put_u32(w, (uint32_t)!!e->opt.archive);
    put_u32(w, (uint32_t)e->opt.archive_max);
    put_u32(w, e->ref != NULL);
    put_u64(w, (uint64_t)e->opt.seed);
    put_f64(w, e->opt.pc);
    put_f64(w, e->pm);
    put_f64(w, e->opt.eta_c);
    put_f64(w, e->opt.eta_m);
    if (e->ref) put(w, e->ref, (size_t)m * 8);
    for (int j = 0; j < nv; j++) {
        if (e->prob.kind == NSGA_INT) {
            put(w, &e->ilo[j], 4);
            put(w, &e->ihi[j], 4);
        } else {
            put_f64(w, e->lo[j]);
            put_f64(w, e->hi[j]);
        }
    }
    put_u64(w, (uint64_t)e->st.generation);
    put_u64(w, (uint64_t)e->st.evaluations);
    put_u64(w, (uint64_t)e->st.cache_hits);
    put_u64(w, (uint64_t)e->st.redrawn);
    put_f64(w, e->st.elapsed);
    put_f64(w, e->prev_hv);
    put_u32(w, (uint32_t)e->stag_count);
    put_u32(w, (uint32_t)gsl_rng_size(e->rng));
    put(w, gsl_rng_state(e->rng), gsl_rng_size(e->rng));
    put(w, e->g, (size_t)N * e->gbytes);
    put(w, e->obj, (size_t)N * m * 8);
    put(w, e->cv, (size_t)N * 8);
    put(w, e->rank, (size_t)N * 4);
    put(w, e->crowd, (size_t)N * 8);
    put_u32(w, (uint32_t)e->ar_n);
    if (e->ar_n) {
        put(w, e->ar_g, (size_t)e->ar_n * e->gbytes);
        put(w, e->ar_obj, (size_t)e->ar_n * m * 8);
    }
}

size_t nsga_checkpoint(const nsga *e, void *buf, size_t cap)
{
    if (!e || !e->inited) return 0;
    wbuf w = {buf, cap, 0};
    write_state(e, &w);
    size_t total = w.len + 8;
    if (buf && total <= cap) {
        uint64_t h = fnv1a(buf, w.len);
        memcpy((unsigned char *)buf + w.len, &h, 8);
    }
    return total;
}

typedef struct {
    const unsigned char *p;
    size_t len, pos;
    int bad;
} rbuf;

static const unsigned char *take(rbuf *r, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = r->p + r->pos;
    r->pos += n;
    return q;
}
static uint32_t get_u32(rbuf *r)
{
    uint32_t v = 0;
    const unsigned char *q = take(r, 4);
    if (q) memcpy(&v, q, 4);
    return v;
}
static uint64_t get_u64(rbuf *r)
{
    uint64_t v = 0;
    const unsigned char *q = take(r, 8);
    if (q) memcpy(&v, q, 8);
    return v;
}
static double get_f64(rbuf *r)
{
    double v = 0;
    const unsigned char *q = take(r, 8);
    if (q) memcpy(&v, q, 8);
    return v;
}

#define CK_EXPECT(cond, ...)                                     \
    do {                                                         \
        if (r.bad) return fail(err, NSGA_ECKPT, "checkpoint truncated"); \
        if (!(cond)) return fail(err, NSGA_ECKPT, __VA_ARGS__); \
    } while (0)

int nsga_restore(nsga *e, const void *buf, size_t len, char *err)
{
    if (!e || (!buf && len)) return fail(err, NSGA_EINVAL, "no engine or buffer");
    int N = e->N, nv = e->nv, m = e->m;
    if (len < 16 || memcmp(buf, CKPT_MAGIC, 8) != 0) return fail(err, NSGA_ECKPT, "not an engine checkpoint");
    uint64_t h;
    memcpy(&h, (const unsigned char *)buf + len - 8, 8);
    rbuf r = {buf, len - 8, 8, 0};
    uint32_t version = get_u32(&r), bom = get_u32(&r);
    CK_EXPECT(bom == 0x01020304, "checkpoint written on a machine of another byte order");
    CK_EXPECT(version == CKPT_VERSION, "checkpoint version %u, this engine reads %d", version, CKPT_VERSION);
    CK_EXPECT(fnv1a(buf, len - 8) == h, "checkpoint damaged (checksum mismatch)");
    uint32_t kind = get_u32(&r), cnv = get_u32(&r), cm = get_u32(&r), cN = get_u32(&r);
    CK_EXPECT(kind == (uint32_t)e->prob.kind, "checkpoint is for a problem of another kind");
    CK_EXPECT(cnv == (uint32_t)nv && cm == (uint32_t)m,
              "checkpoint has %u variables and %u objectives, the problem %d and %d", cnv, cm, nv, m);
    CK_EXPECT(cN == (uint32_t)N, "checkpoint has population %u, the options %d", cN, N);
    uint32_t xo = get_u32(&r), tr = get_u32(&r), pf = get_u32(&r), dd = get_u32(&r), ddr = get_u32(&r), arc = get_u32(&r),
             arm = get_u32(&r), has_ref = get_u32(&r);
    uint64_t seed = get_u64(&r);
    double pc = get_f64(&r), pm = get_f64(&r), ec = get_f64(&r), em = get_f64(&r);
    CK_EXPECT(seed == (uint64_t)e->opt.seed, "checkpoint seed %llu, the options %lu",
              (unsigned long long)seed, e->opt.seed);
    CK_EXPECT(xo == (uint32_t)e->opt.xover && tr == (uint32_t)e->opt.truncation &&
                  pf == (uint32_t)e->opt.pm_form && dd == (uint32_t)!!e->opt.dedup &&
                  ddr == (uint32_t)e->opt.dedup_retries && pc == e->opt.pc && pm == e->pm &&
                  ec == e->opt.eta_c && em == e->opt.eta_m,
              "checkpoint made with other operator options (crossover, mutation, dedup)");
    CK_EXPECT(arc == (uint32_t)!!e->opt.archive && arm == (uint32_t)e->opt.archive_max,
              "checkpoint made with other archive options");
    CK_EXPECT(has_ref == (e->ref != NULL), "checkpoint and options disagree on the reference point");
    if (has_ref) {
        const unsigned char *q = take(&r, (size_t)m * 8);
        CK_EXPECT(memcmp(q, e->ref, (size_t)m * 8) == 0, "checkpoint made with another reference point");
    }
    for (int j = 0; j < nv; j++) {
        int same;
        if (e->prob.kind == NSGA_INT) {
            const unsigned char *q = take(&r, 8);
            same = q && memcmp(q, &e->ilo[j], 4) == 0 && memcmp(q + 4, &e->ihi[j], 4) == 0;
        } else {
            double lo = get_f64(&r), hi = get_f64(&r);
            same = lo == e->lo[j] && hi == e->hi[j];
        }
        CK_EXPECT(same, "checkpoint made with other bounds (variable %d)", j);
    }
    nsga_stats st = e->st;
    st.generation = (long)get_u64(&r);
    st.evaluations = (long long)get_u64(&r);
    st.cache_hits = (long long)get_u64(&r);
    st.redrawn = (long long)get_u64(&r);
    st.elapsed = get_f64(&r);
    double prev_hv = get_f64(&r);
    int stag = (int)get_u32(&r);
    uint32_t rsize = get_u32(&r);
    CK_EXPECT(rsize == gsl_rng_size(e->rng), "checkpoint RNG state has %u bytes, expected %zu", rsize,
              gsl_rng_size(e->rng));
    const unsigned char *rstate = take(&r, rsize);
    const unsigned char *g = take(&r, (size_t)N * e->gbytes);
    const unsigned char *obj = take(&r, (size_t)N * m * 8), *cv = take(&r, (size_t)N * 8);
    const unsigned char *rank = take(&r, (size_t)N * 4), *crowd = take(&r, (size_t)N * 8);
    uint32_t ar_n = get_u32(&r);
    CK_EXPECT(e->opt.archive || ar_n == 0, "checkpoint has an archive, the options none");
    CK_EXPECT(ar_n <= (uint32_t)MAX_POP * 4 && (!e->opt.archive_max || ar_n <= (uint32_t)e->opt.archive_max),
              "checkpoint archive of %u members is too large", ar_n);
    const unsigned char *ar_g = take(&r, (size_t)ar_n * e->gbytes);
    const unsigned char *ar_obj = take(&r, (size_t)ar_n * m * 8);
    CK_EXPECT(r.pos == r.len, "checkpoint has %zu unexpected trailing bytes", r.len - r.pos);
    CK_EXPECT(st.generation >= 0 && st.evaluations >= 0 && st.cache_hits >= 0 && stag >= 0,
              "checkpoint counters out of range");
    /* Values must be what the engine could have produced. */
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < nv; j++) {
            int ok;
            if (e->prob.kind == NSGA_INT) {
                int v;
                memcpy(&v, g + ((size_t)i * nv + j) * 4, 4);
                ok = v >= e->ilo[j] && v <= e->ihi[j];
            } else {
                double v;
                memcpy(&v, g + ((size_t)i * nv + j) * 8, 8);
                ok = v >= e->lo[j] && v <= e->hi[j];
            }
            CK_EXPECT(ok, "checkpoint genome %d, gene %d out of bounds", i, j);
        }
        double c, d;
        int rk;
        memcpy(&c, cv + (size_t)i * 8, 8);
        memcpy(&d, crowd + (size_t)i * 8, 8);
        memcpy(&rk, rank + (size_t)i * 4, 4);
        CK_EXPECT(c >= 0 && isfinite(c) && d >= 0 && rk >= 0 && rk < N,
                  "checkpoint member %d has a bad violation, crowding or rank", i);
        for (int k = 0; k < m; k++) {
            double v;
            memcpy(&v, obj + ((size_t)i * m + k) * 8, 8);
            CK_EXPECT(isfinite(v), "checkpoint member %d has a non-finite objective", i);
        }
    }
    for (uint32_t i = 0; i < ar_n; i++)
        for (int k = 0; k < m; k++) {
            double v;
            memcpy(&v, ar_obj + ((size_t)i * m + k) * 8, 8);
            CK_EXPECT(isfinite(v), "checkpoint archive member %u has a non-finite objective", i);
        }
    if (e->opt.cache && cache_reserve(&e->cache, (size_t)N))
        return fail(err, NSGA_ENOMEM, "out of memory (evaluation cache)");
    if (archive_reserve(e, (int)ar_n - e->ar_n + N)) return fail(err, NSGA_ENOMEM, "out of memory (archive)");
    /* commit */
    memcpy(gsl_rng_state(e->rng), rstate, rsize);
    memcpy(e->g, g, (size_t)N * e->gbytes);
    memcpy(e->obj, obj, (size_t)N * m * 8);
    memcpy(e->cv, cv, (size_t)N * 8);
    memcpy(e->rank, rank, (size_t)N * 4);
    memcpy(e->crowd, crowd, (size_t)N * 8);
    e->ar_n = (int)ar_n;
    if (ar_n) {
        memcpy(e->ar_g, ar_g, (size_t)ar_n * e->gbytes);
        memcpy(e->ar_obj, ar_obj, (size_t)ar_n * m * 8);
    }
    e->st = st;
    e->prev_hv = prev_hv;
    e->stag_count = stag;
    e->inited = 1;
    compute_stats(e);
    if (e->opt.cache) { /* refill from the population: results never depend on it */
        size_t goff = 8 + 8 * ((size_t)m + 1);
        for (int i = 0; i < N; i++) {
            const unsigned char *gi = G(e, e->g, i);
            uint64_t hh = hash_bytes(gi, e->gbytes);
            if (cache_find(&e->cache, hh, gi, e->gbytes, goff) < 0)
                cache_add(&e->cache, hh, gi, e->gbytes, goff, e->obj + (size_t)i * m, m, e->cv[i]);
        }
    }
    return 0;
}

/* ---- parallel evaluation helpers -------------------------------------------------------
 * Items are claimed in chunks from an atomic counter; which thread runs an
 * item never matters because fn(ctx, i) writes only item i's outputs. */

struct nsga_pool {
    int nthreads; /* workers including the caller */
    int nstarted;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    unsigned long job;
    int quit, busy;
    /* current job */
    nsga_item_fn fn;
    void *ctx;
    int n, chunk;
    atomic_int next;
    int err_i, err_rc;
};

static void run_items(nsga_pool *p)
{
    for (;;) {
        int b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n) return;
        int e = b + p->chunk < p->n ? b + p->chunk : p->n;
        for (int i = b; i < e; i++) {
            int rc = p->fn(p->ctx, i);
            if (rc) {
                pthread_mutex_lock(&p->mu);
                if (i < p->err_i) {
                    p->err_i = i;
                    p->err_rc = rc;
                }
                pthread_mutex_unlock(&p->mu);
            }
        }
    }
}

static void *worker(void *arg)
{
    nsga_pool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->job == seen) pthread_cond_wait(&p->work, &p->mu);
        if (p->quit) break;
        seen = p->job;
        pthread_mutex_unlock(&p->mu);
        run_items(p);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

nsga_pool *nsga_pool_create(int nthreads)
{
    nsga_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nthreads = nthreads < 1 ? 1 : nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (p->nthreads > 1) {
        p->th = malloc((size_t)(p->nthreads - 1) * sizeof *p->th);
        if (!p->th) {
            nsga_pool_destroy(p);
            return NULL;
        }
        for (int t = 0; t < p->nthreads - 1; t++) {
            if (pthread_create(&p->th[t], NULL, worker, p)) {
                nsga_pool_destroy(p);
                return NULL;
            }
            p->nstarted++;
        }
    }
    return p;
}

int nsga_pool_run(nsga_pool *p, int n, nsga_item_fn fn, void *ctx)
{
    if (!p || !fn || n <= 0) return 0;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->err_i = n;
    p->err_rc = 0;
    int parts = 4 * p->nthreads;
    p->chunk = n / parts > 0 ? n / parts : 1;
    atomic_store(&p->next, 0);
    if (p->nstarted > 0 && n > 1) {
        pthread_mutex_lock(&p->mu);
        p->busy = p->nstarted;
        p->job++;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        run_items(p);
        pthread_mutex_lock(&p->mu);
        while (p->busy > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    } else {
        run_items(p);
    }
    return p->err_rc;
}

void nsga_pool_destroy(nsga_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int t = 0; t < p->nstarted; t++) pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}

int nsga_eval_parallel(int nthreads, int n, nsga_item_fn fn, void *ctx)
{
    if (!fn || n <= 0) return 0;
    nsga_pool *p = nsga_pool_create(nthreads > n ? n : nthreads);
    if (!p) { /* no threads: the same results in this thread */
        for (int i = 0; i < n; i++) {
            int rc = fn(ctx, i);
            if (rc) return rc;
        }
        return 0;
    }
    int rc = nsga_pool_run(p, n, fn, ctx);
    nsga_pool_destroy(p);
    return rc;
}
