/* test_engine_determinism.c -- the RNG contract: same seed -> byte-identical
 * populations; different seeds differ; 1 vs 4 evaluation threads
 * identical; checkpoint after 10 generations, destroy, restore, 10 more ==
 * 20 uninterrupted (also for an integer problem with dedup, and with the
 * cache off); cache on vs off identical; a failing evaluation leaves the
 * engine unchanged; damaged or foreign checkpoints are refused;
 * nsga_eval_parallel equals a serial loop; termination criteria. */
#include "check.h"
#include "util.h"

#include <stdint.h>

/* Everything the population holds, as one comparable byte string. */
static size_t pop_bytes(const nsga *e, unsigned char *out)
{
    const nsga_problem *p = nsga_get_problem(e);
    size_t k = 0, gb = (size_t)p->nvar * (p->kind == NSGA_INT ? sizeof(int) : sizeof(double));
    for (int i = 0; i < nsga_pop_size(e); i++) {
        const void *g = p->kind == NSGA_INT ? (const void *)nsga_genome_int(e, i) : (const void *)nsga_genome_real(e, i);
        double cv = nsga_cv(e, i), cd = nsga_crowding(e, i);
        int r = nsga_rank(e, i);
        memcpy(out + k, g, gb), k += gb;
        memcpy(out + k, nsga_objectives(e, i), p->nobj * sizeof(double)), k += p->nobj * sizeof(double);
        memcpy(out + k, &cv, 8), k += 8;
        memcpy(out + k, &cd, 8), k += 8;
        memcpy(out + k, &r, 4), k += 4;
    }
    for (int i = 0; i < nsga_archive_size(e); i++) {
        memcpy(out + k, nsga_archive_objectives(e, i), p->nobj * sizeof(double));
        k += p->nobj * sizeof(double);
    }
    return k;
}

static unsigned char A[1 << 22], B[1 << 22];

static nsga *make(nsga_builtin *b, nsga_options *o)
{
    char err[BASE_ERRLEN];
    nsga *e = nsga_create(nsga_builtin_problem(b), o, err);
    if (!e) fprintf(stderr, "create: %s\n", err);
    return e;
}

static int same_run(const char *name, int threads_a, int threads_b, unsigned long sa, unsigned long sb, nsga_options *o)
{
    char err[BASE_ERRLEN];
    nsga_builtin *ba = nsga_builtin_create(name, threads_a, err), *bb = nsga_builtin_create(name, threads_b, err);
    o->seed = sa;
    nsga *ea = make(ba, o);
    o->seed = sb;
    nsga *eb = make(bb, o);
    nsga_run(ea, err), nsga_run(eb, err);
    size_t na = pop_bytes(ea, A), nb = pop_bytes(eb, B);
    int same = na == nb && memcmp(A, B, na) == 0;
    nsga_destroy(ea), nsga_destroy(eb), nsga_builtin_free(ba), nsga_builtin_free(bb);
    return same;
}

/* 20 generations straight vs 10 + checkpoint + destroy + restore + 10 */
static void checkpoint_case(const char *name, nsga_options *o, int threads)
{
    char err[BASE_ERRLEN];
    nsga_builtin *b = nsga_builtin_create(name, threads, err);
    o->max_gens = 20;
    nsga *whole = make(b, o);
    CHECK(nsga_run(whole, err) == NSGA_STOP_GENS, "%s whole run: %s", name, err);
    o->max_gens = 10;
    nsga *half = make(b, o);
    CHECK(nsga_run(half, err) == NSGA_STOP_GENS, "%s first half", name);
    CHECK(nsga_checkpoint(half, NULL, 0) > 0, "checkpoint size");
    size_t len = nsga_checkpoint(half, NULL, 0);
    unsigned char *blob = malloc(len), *blob2 = malloc(len);
    CHECK(nsga_checkpoint(half, blob, len - 1) == len, "too small a buffer: size only");
    CHECK(nsga_checkpoint(half, blob, len) == len, "checkpoint written");
    nsga_checkpoint(half, blob2, len);
    CHECK(memcmp(blob, blob2, len) == 0, "two checkpoints of one state are identical bytes");
    long long produced = nsga_get_stats(half)->evaluations + nsga_get_stats(half)->cache_hits;
    nsga_destroy(half);
    o->max_gens = 20;
    nsga *resumed = make(b, o);
    CHECK(nsga_restore(resumed, blob, len, err) == 0, "%s restore: %s", name, err);
    CHECK(nsga_get_stats(resumed)->generation == 10, "generation restored");
    CHECK(nsga_get_stats(resumed)->evaluations + nsga_get_stats(resumed)->cache_hits == produced, "counters restored");
    CHECK(nsga_run(resumed, err) == NSGA_STOP_GENS, "%s second half: %s", name, err);
    size_t na = pop_bytes(whole, A), nb = pop_bytes(resumed, B);
    CHECK(na == nb && memcmp(A, B, na) == 0, "%s: resumed run differs from the uninterrupted one", name);
    const nsga_stats *s1 = nsga_get_stats(whole), *s2 = nsga_get_stats(resumed);
    CHECK(s1->generation == s2->generation && s1->evaluations + s1->cache_hits == s2->evaluations + s2->cache_hits &&
              s1->redrawn == s2->redrawn && (s1->hv == s2->hv || (isnan(s1->hv) && isnan(s2->hv))),
          "%s: statistics of the resumed run", name);
    /* refusals */
    nsga_options o2 = *o;
    o2.seed = o->seed + 1;
    nsga *other = make(b, &o2);
    CHECK(nsga_restore(other, blob, len, err) == NSGA_ECKPT && strstr(err, "seed"), "other seed refused: %s", err);
    nsga_destroy(other);
    nsga *fresh = make(b, o);
    CHECK(nsga_restore(fresh, blob, len - 9, err) == NSGA_ECKPT, "truncated blob refused");
    blob[len / 2] ^= 1;
    CHECK(nsga_restore(fresh, blob, len, err) == NSGA_ECKPT && strstr(err, "damaged"), "damaged blob refused: %s", err);
    CHECK(nsga_restore(fresh, "garbage!garbage!", 16, err) == NSGA_ECKPT, "garbage refused");
    CHECK(nsga_step(fresh, err) == NSGA_ESTATE, "refused restores leave the engine uninitialised");
    nsga_destroy(fresh);
    free(blob), free(blob2);
    nsga_destroy(whole), nsga_destroy(resumed);
    nsga_builtin_free(b);
}

/* a problem that fails on demand */
typedef struct {
    nsga_builtin *b;
    int calls, fail_at;
} flaky;

static int flaky_eval(void *ctx, int n, const double *g, double *obj, double *cv, char *err)
{
    flaky *f = ctx;
    if (++f->calls == f->fail_at) {
        snprintf(err, BASE_ERRLEN, "simulated remote failure");
        return 1;
    }
    const nsga_problem *p = nsga_builtin_problem(f->b);
    return p->eval_real(p->ctx, n, g, obj, cv, err);
}

static void failure_case(void)
{
    char err[BASE_ERRLEN];
    flaky f = {nsga_builtin_create("zdt1", 1, err), 0, 4};
    nsga_problem p = *nsga_builtin_problem(f.b);
    p.eval_real = flaky_eval;
    p.ctx = &f;
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = 20;
    o.cache = 0;
    nsga *e = nsga_create(&p, &o, err), *ref = nsga_create(&p, &o, err);
    nsga_init(e, err);
    nsga_step(e, err), nsga_step(e, err);
    size_t len = nsga_checkpoint(e, NULL, 0);
    unsigned char *c1 = malloc(len), *c2 = malloc(len);
    nsga_checkpoint(e, c1, len);
    CHECK(nsga_step(e, err) == NSGA_EEVAL && strstr(err, "simulated remote failure"), "failure reported: %s", err);
    nsga_checkpoint(e, c2, len);
    CHECK(memcmp(c1, c2, len) == 0, "a failed step changes nothing");
    CHECK(nsga_step(e, err) == 0 && nsga_get_stats(e)->generation == 3, "retry works");
    f.fail_at = -1;
    nsga_init(ref, err);
    for (int g = 0; g < 3; g++) nsga_step(ref, err);
    size_t na = pop_bytes(e, A), nb = pop_bytes(ref, B);
    CHECK(na == nb && memcmp(A, B, na) == 0, "after the retry the run equals one that never failed");
    free(c1), free(c2);
    nsga_destroy(e), nsga_destroy(ref);
    nsga_builtin_free(f.b);
}

static int square_item(void *ctx, int i)
{
    double *v = ctx;
    double x = i;
    for (int k = 0; k < 200; k++) x = sin(x) + i * 1e-3;
    v[i] = x;
    return i == 777 || i == 901 ? 42 + (i == 901) : 0;
}

static int stop_at_5(const nsga *e, const nsga_stats *s, void *ctx)
{
    (void)e;
    ++*(int *)ctx;
    return s->generation >= 5;
}

int main(void)
{
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = 60;
    o.max_gens = 40;
    CHECK(same_run("zdt1", 1, 1, 7, 7, &o), "same seed, same population");
    CHECK(!same_run("zdt1", 1, 1, 7, 8, &o), "different seeds differ");
    CHECK(same_run("dtlz2", 1, 4, 3, 3, &o), "1 and 4 evaluation threads give the same population");
    o.xover = NSGA_XO_TWOPOINT, o.dedup = 1;
    CHECK(same_run("knapsack", 1, 3, 5, 5, &o), "integer problem: 1 and 3 threads identical");
    nsga_options_default(&o);
    o.pop_size = 40;
    CHECK(same_run("tnk", 1, 2, 9, 9, &o), "constrained problem: same seed, threads");

    /* cache on vs off: same results, fewer evaluations */
    {
        char err[BASE_ERRLEN];
        nsga_builtin *b = nsga_builtin_create("knapsack", 1, err);
        nsga_options_default(&o);
        o.pop_size = 40, o.max_gens = 30;
        nsga *on = make(b, &o);
        o.cache = 0;
        nsga *off = make(b, &o);
        nsga_run(on, err), nsga_run(off, err);
        size_t na = pop_bytes(on, A), nb = pop_bytes(off, B);
        CHECK(na == nb && memcmp(A, B, na) == 0, "cache on and off give the same population");
        const nsga_stats *s1 = nsga_get_stats(on), *s2 = nsga_get_stats(off);
        CHECK(s1->cache_hits > 0 && s2->cache_hits == 0, "hits %lld / %lld", s1->cache_hits, s2->cache_hits);
        CHECK(s1->evaluations + s1->cache_hits == s2->evaluations && s2->evaluations == 40 * 31,
              "evaluations %lld + hits %lld vs %lld", s1->evaluations, s1->cache_hits, s2->evaluations);
        nsga_destroy(on), nsga_destroy(off), nsga_builtin_free(b);
    }

    nsga_options_default(&o);
    o.pop_size = 40;
    o.ref = (double[]){1.1, 1.1};
    checkpoint_case("zdt1", &o, 1);
    o.cache = 0;
    checkpoint_case("zdt3", &o, 2);
    nsga_options_default(&o);
    o.pop_size = 30, o.dedup = 1, o.xover = NSGA_XO_TWOPOINT, o.archive = 1, o.archive_max = 5;
    checkpoint_case("knapsack", &o, 1);
    nsga_options_default(&o);
    o.pop_size = 24, o.archive = 1;
    checkpoint_case("dtlz2", &o, 3);

    failure_case();

    /* the parallel helper */
    static double v1[1000], v4[1000];
    CHECK(nsga_eval_parallel(1, 1000, square_item, v1) == 42, "serial: first failure's code");
    CHECK(nsga_eval_parallel(4, 1000, square_item, v4) == 42, "4 threads: the smallest failing item's code");
    CHECK(memcmp(v1, v4, sizeof v1) == 0, "4 threads write what 1 thread writes");
    nsga_pool *pool = nsga_pool_create(3);
    CHECK(pool != NULL, "pool");
    for (int rep = 0; rep < 20; rep++) {
        memset(v4, 0, sizeof v4);
        nsga_pool_run(pool, 1000, square_item, v4);
        CHECK(memcmp(v1, v4, sizeof v1) == 0, "pool run %d", rep);
    }
    nsga_pool_destroy(pool);

    /* termination */
    {
        char err[BASE_ERRLEN];
        nsga_builtin *b = nsga_builtin_create("zdt1", 1, err);
        int calls = 0;
        nsga_options_default(&o);
        o.pop_size = 20, o.max_gens = 0, o.on_gen = stop_at_5, o.on_gen_ctx = &calls;
        nsga *e = make(b, &o);
        CHECK(nsga_run(e, err) == NSGA_STOP_CALLBACK && nsga_get_stats(e)->generation == 5 && calls == 6,
              "callback stop at generation 5 after %d calls", calls);
        nsga_destroy(e);
        nsga_options_default(&o);
        o.pop_size = 20, o.max_gens = 0, o.max_evals = 200, o.cache = 0;
        e = make(b, &o);
        CHECK(nsga_run(e, err) == NSGA_STOP_EVALS && nsga_get_stats(e)->evaluations == 200, "evaluation budget");
        nsga_destroy(e);
        nsga_options_default(&o);
        o.pop_size = 20, o.max_gens = 0, o.max_seconds = 0.05;
        e = make(b, &o);
        CHECK(nsga_run(e, err) == NSGA_STOP_TIME && nsga_get_stats(e)->elapsed >= 0.05, "time budget");
        nsga_destroy(e);
        nsga_builtin_free(b);
        b = nsga_builtin_create("knapsack", 1, err);
        nsga_options_default(&o);
        o.pop_size = 20, o.max_gens = 100000, o.stag_gens = 10, o.ref = nsga_builtin_ref(b);
        e = make(b, &o);
        CHECK(nsga_run(e, err) == NSGA_STOP_STAGNATION && nsga_get_stats(e)->generation < 100000,
              "stagnation stop at generation %ld", nsga_get_stats(e)->generation);
        nsga_destroy(e);
        nsga_builtin_free(b);
    }
    return check_done("test_engine_determinism");
}
