/* nsga.c -- the NSGA-II engine (Deb, Pratap, Agarwal, Meyarivan 2002):
 * state, variation operators, evaluation cache, (mu+lambda) survival,
 * statistics, termination.  Its checkpoints are in checkpoint.c, its
 * thread pool in pool.c, sorting in nsga_sort.c, hypervolume in hv.c.
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


int nsga_fail(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int nsga_fail(char *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vseterr(err, fmt, ap);
    va_end(ap);
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

uint64_t nsga_hash_bytes(const unsigned char *p, size_t n)
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

static unsigned char *rec_at(const cache_t *c, size_t r) { return c->recs + r * c->rec_size; }

int nsga_cache_reserve(cache_t *c, size_t extra)
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
long nsga_cache_find(const cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes,
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
void nsga_cache_add(cache_t *c, uint64_t h, const unsigned char *g, size_t gbytes, size_t goff,
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


/* ---- argument checks ------------------------------------------------------------- */

static int check_problem(const nsga_problem *p, char *err)
{
    if (!p) return nsga_fail(err, NSGA_EINVAL, "no problem given");
    if (p->kind != NSGA_INT && p->kind != NSGA_REAL)
        return nsga_fail(err, NSGA_EINVAL, "problem kind must be NSGA_INT or NSGA_REAL");
    if (p->nvar < 1) return nsga_fail(err, NSGA_EINVAL, "problem has %d variables; needs at least 1", p->nvar);
    if (p->nobj < 2 || p->nobj > NSGA_MAX_OBJ)
        return nsga_fail(err, NSGA_EINVAL, "problem has %d objectives; needs 2 to %d", p->nobj, NSGA_MAX_OBJ);
    if (p->kind == NSGA_INT) {
        if (!p->ilo || !p->ihi) return nsga_fail(err, NSGA_EINVAL, "integer problem without bounds");
        if (!p->eval_int) return nsga_fail(err, NSGA_EINVAL, "integer problem without eval_int");
        for (int j = 0; j < p->nvar; j++)
            if (p->ilo[j] > p->ihi[j])
                return nsga_fail(err, NSGA_EINVAL, "variable %d: lower bound %d > upper bound %d", j,
                            p->ilo[j], p->ihi[j]);
    } else {
        if (!p->lo || !p->hi) return nsga_fail(err, NSGA_EINVAL, "real problem without bounds");
        if (!p->eval_real) return nsga_fail(err, NSGA_EINVAL, "real problem without eval_real");
        for (int j = 0; j < p->nvar; j++) {
            if (!isfinite(p->lo[j]) || !isfinite(p->hi[j]))
                return nsga_fail(err, NSGA_EINVAL, "variable %d: bounds must be finite", j);
            if (p->lo[j] > p->hi[j])
                return nsga_fail(err, NSGA_EINVAL, "variable %d: lower bound %g > upper bound %g", j,
                            p->lo[j], p->hi[j]);
        }
    }
    return 0;
}

static int check_options(const nsga_problem *p, const nsga_options *o, char *err)
{
    if (!o) return nsga_fail(err, NSGA_EINVAL, "no options given");
    if (o->pop_size < 4 || o->pop_size % 2 || o->pop_size > MAX_POP)
        return nsga_fail(err, NSGA_EINVAL, "population %d: must be even and in [4, %d]", o->pop_size,
                    MAX_POP);
    if (!(o->pc >= 0 && o->pc <= 1)) return nsga_fail(err, NSGA_EINVAL, "crossover probability %g not in [0, 1]", o->pc);
    if (!(o->pm <= 1)) return nsga_fail(err, NSGA_EINVAL, "mutation rate %g above 1", o->pm);
    if (!(o->eta_c >= 0 && o->eta_c < 1e6) || !(o->eta_m >= 0 && o->eta_m < 1e6))
        return nsga_fail(err, NSGA_EINVAL, "distribution indices must be in [0, 1e6)");
    if (o->xover != NSGA_XO_UNIFORM && o->xover != NSGA_XO_TWOPOINT)
        return nsga_fail(err, NSGA_EINVAL, "unknown crossover %d", (int)o->xover);
    if (o->pm_form != NSGA_PM_CLAMPED && o->pm_form != NSGA_PM_BOUNDED)
        return nsga_fail(err, NSGA_EINVAL, "unknown polynomial mutation form %d", (int)o->pm_form);
    if (o->truncation != NSGA_TRUNC_ITERATIVE && o->truncation != NSGA_TRUNC_ONESHOT)
        return nsga_fail(err, NSGA_EINVAL, "unknown truncation %d", (int)o->truncation);
    if (o->archive_max < 0) return nsga_fail(err, NSGA_EINVAL, "archive_max must be >= 0");
    if (o->archive_max > MAX_POP) return nsga_fail(err, NSGA_EINVAL, "archive_max above %d", MAX_POP);
    if (o->dedup_retries < 0) return nsga_fail(err, NSGA_EINVAL, "dedup_retries must be >= 0");
    if (o->max_gens < 0 || o->max_evals < 0 || !(o->max_seconds >= 0) || o->stag_gens < 0 ||
        !(o->stag_tol >= 0))
        return nsga_fail(err, NSGA_EINVAL, "termination criteria must be >= 0");
    if (o->ref)
        for (int k = 0; k < p->nobj; k++)
            if (!isfinite(o->ref[k])) return nsga_fail(err, NSGA_EINVAL, "reference point must be finite");
    if (o->stag_gens > 0 && !o->ref)
        return nsga_fail(err, NSGA_EINVAL, "stagnation criterion needs a reference point (options.ref)");
    if (o->nseeds < 0 || o->nseeds > o->pop_size)
        return nsga_fail(err, NSGA_EINVAL, "%d seed genomes for a population of %d", o->nseeds, o->pop_size);
    if (o->nseeds == 0) return 0;
    if (p->kind == NSGA_INT) {
        if (!o->seed_int) return nsga_fail(err, NSGA_EINVAL, "integer problem: seed genomes go in seed_int");
        for (int s = 0; s < o->nseeds; s++)
            for (int j = 0; j < p->nvar; j++) {
                int v = o->seed_int[(size_t)s * p->nvar + j];
                if (v < p->ilo[j] || v > p->ihi[j])
                    return nsga_fail(err, NSGA_EINVAL, "seed genome %d, gene %d: %d outside [%d, %d]", s, j,
                                v, p->ilo[j], p->ihi[j]);
            }
    } else {
        if (!o->seed_real) return nsga_fail(err, NSGA_EINVAL, "real problem: seed genomes go in seed_real");
        for (int s = 0; s < o->nseeds; s++)
            for (int j = 0; j < p->nvar; j++) {
                double v = o->seed_real[(size_t)s * p->nvar + j];
                if (!(v >= p->lo[j] && v <= p->hi[j]))
                    return nsga_fail(err, NSGA_EINVAL, "seed genome %d, gene %d: %g outside [%g, %g]", s, j,
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
        nsga_fail(err, NSGA_ENOMEM, "out of memory");
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
        nsga_fail(err, NSGA_ENOMEM, "out of memory");
        return NULL;
    }
    e->cache.rec_size = (8 + 8 * ((size_t)m + 1) + e->gbytes + 7) & ~(size_t)7;
    e->rng = gsl_rng_alloc(gsl_rng_mt19937);
    e->rng_saved = gsl_rng_alloc(gsl_rng_mt19937);
    if (!e->rng || !e->rng_saved) {
        nsga_destroy(e);
        nsga_fail(err, NSGA_ENOMEM, "out of memory");
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
            uint64_t h = nsga_hash_bytes(g, e->gbytes);
            if (!set_has(e, h, g, NULL)) set_add(e, i, h, g);
        }
    }
    for (int i = N; i < 2 * N; i += 2) {
        make_pair(e, G(e, e->g, i), G(e, e->g, i + 1));
        if (!e->opt.dedup) continue;
        for (int c = i; c < i + 2; c++) {
            unsigned char *g = G(e, e->g, c);
            uint64_t h = nsga_hash_bytes(g, e->gbytes);
            for (int t = 0; t < e->opt.dedup_retries && set_has(e, h, g, NULL); t++) {
                make_pair(e, e->pair, e->pair + e->gbytes);
                memcpy(g, e->pair, e->gbytes);
                h = nsga_hash_bytes(g, e->gbytes);
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
    char msg[BASE_ERRLEN] = "";
    memset(cv, 0, (size_t)n * sizeof *cv);
    int rc = e->prob.kind == NSGA_INT
                 ? e->prob.eval_int(e->prob.ctx, n, (const int *)g, obj, cv, msg)
                 : e->prob.eval_real(e->prob.ctx, n, (const double *)g, obj, cv, msg);
    msg[BASE_ERRLEN - 1] = 0;
    if (rc) return nsga_fail(err, NSGA_EEVAL, "evaluate failed: %s", msg[0] ? msg : "(no message)");
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < e->m; k++)
            if (!isfinite(obj[(size_t)i * e->m + k]))
                return nsga_fail(err, NSGA_EEVAL, "evaluate returned objective %d = %g for individual %d of %d",
                            k, obj[(size_t)i * e->m + k], i, n);
        if (!(cv[i] >= 0) || !isfinite(cv[i]))
            return nsga_fail(err, NSGA_EEVAL, "evaluate returned constraint violation %g for individual %d of %d",
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
    if (nsga_cache_reserve(c, (size_t)n)) return nsga_fail(err, NSGA_ENOMEM, "out of memory (evaluation cache)");
    set_clear(e);
    int nb = 0, nhit = 0;
    for (int j = 0; j < n; j++) {
        const unsigned char *g = G(e, e->g, first + j);
        uint64_t h = nsga_hash_bytes(g, e->gbytes);
        long r = nsga_cache_find(c, h, g, e->gbytes, goff);
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
        nsga_cache_add(c, e->bh[b], G(e, e->bg, b), e->gbytes, goff, e->bobj + (size_t)b * m, m, e->bcv[b]);
    *evals = nb;
    *hits = nhit;
    return 0;
}

/* ---- archive ------------------------------------------------------------------------------ */

/* Room for `extra` more members, so that adding can never fail. */
int nsga_archive_reserve(nsga *e, int extra)
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

void nsga_compute_stats(nsga *e)
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
    if (!e) return nsga_fail(err, NSGA_EINVAL, "no engine");
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
    if (nsga_archive_reserve(e, N)) {
        gsl_rng_memcpy(e->rng, e->rng_saved);
        return nsga_fail(err, NSGA_ENOMEM, "out of memory (archive)");
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
    nsga_compute_stats(e);
    e->prev_hv = e->st.hv;
    e->st.elapsed = base_now() - t0;
    return 0;
}

int nsga_step(nsga *e, char *err)
{
    if (!e) return nsga_fail(err, NSGA_EINVAL, "no engine");
    if (!e->inited) return nsga_fail(err, NSGA_ESTATE, "nsga_step before nsga_init or nsga_restore");
    double t0 = base_now();
    gsl_rng_memcpy(e->rng_saved, e->rng);
    if (nsga_archive_reserve(e, e->N)) return nsga_fail(err, NSGA_ENOMEM, "out of memory (archive)");
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
    nsga_compute_stats(e);
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
    if (!e) return nsga_fail(err, NSGA_EINVAL, "no engine");
    const nsga_options *o = &e->opt;
    if (!o->max_gens && !o->max_evals && !(o->max_seconds > 0) && !o->stag_gens && !o->on_gen)
        return nsga_fail(err, NSGA_EINVAL, "no termination criterion (generations, evaluations, time, "
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
