/* checkpoint.c -- nsga_checkpoint / nsga_restore (nsga.h): the engine's
 * whole state as bytes and back, so that a campaign resumed from a
 * checkpoint continues exactly as the uninterrupted run would have.
 * Invariant: restore(checkpoint(e)) gives an engine whose every future
 * step is bit-identical to e's; a blob that does not fit the engine
 * (another problem, options, reference point, or a cut blob) is refused
 * and leaves the engine untouched. */
#include "nsga.h"
#include "nsga_internal.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
/* One fixed-size field; zero once the buffer ran out (r->bad says so). */
static void get(rbuf *r, void *v, size_t n)
{
    const unsigned char *q = take(r, n);
    if (q) memcpy(v, q, n);
    else memset(v, 0, n);
}
static uint32_t get_u32(rbuf *r) { uint32_t v; get(r, &v, sizeof v); return v; }
static uint64_t get_u64(rbuf *r) { uint64_t v; get(r, &v, sizeof v); return v; }
static double get_f64(rbuf *r) { double v; get(r, &v, sizeof v); return v; }

#define CK_EXPECT(cond, ...)                                     \
    do {                                                         \
        if (r.bad) return nsga_fail(err, NSGA_ECKPT, "checkpoint truncated"); \
        if (!(cond)) return nsga_fail(err, NSGA_ECKPT, __VA_ARGS__); \
    } while (0)

int nsga_restore(nsga *e, const void *buf, size_t len, char *err)
{
    if (!e || (!buf && len)) return nsga_fail(err, NSGA_EINVAL, "no engine or buffer");
    int N = e->N, nv = e->nv, m = e->m;
    if (len < 16 || memcmp(buf, CKPT_MAGIC, 8) != 0) return nsga_fail(err, NSGA_ECKPT, "not an engine checkpoint");
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
    if (e->opt.cache && nsga_cache_reserve(&e->cache, (size_t)N))
        return nsga_fail(err, NSGA_ENOMEM, "out of memory (evaluation cache)");
    if (nsga_archive_reserve(e, (int)ar_n - e->ar_n + N)) return nsga_fail(err, NSGA_ENOMEM, "out of memory (archive)");
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
    nsga_compute_stats(e);
    if (e->opt.cache) { /* refill from the population: results never depend on it */
        size_t goff = 8 + 8 * ((size_t)m + 1);
        for (int i = 0; i < N; i++) {
            const unsigned char *gi = G(e, e->g, i);
            uint64_t hh = nsga_hash_bytes(gi, e->gbytes);
            if (nsga_cache_find(&e->cache, hh, gi, e->gbytes, goff) < 0)
                nsga_cache_add(&e->cache, hh, gi, e->gbytes, goff, e->obj + (size_t)i * m, m, e->cv[i]);
        }
    }
    return 0;
}

