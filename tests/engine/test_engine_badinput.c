/* test_engine_badinput.c -- every bad problem, option and call gets a
 * clear error return with a message, never an abort. */
#include "check.h"
#include "util.h"

static int ok_eval(void *ctx, int n, const double *g, double *obj, double *cv, char *err)
{
    (void)ctx, (void)err, (void)cv;
    for (int i = 0; i < n; i++) obj[2 * i] = g[2 * i], obj[2 * i + 1] = 1 - g[2 * i];
    return 0;
}

static int nan_eval(void *ctx, int n, const double *g, double *obj, double *cv, char *err)
{
    ok_eval(ctx, n, g, obj, cv, err);
    obj[1] = NAN;
    return 0;
}

static int negcv_eval(void *ctx, int n, const double *g, double *obj, double *cv, char *err)
{
    ok_eval(ctx, n, g, obj, cv, err);
    cv[0] = -1;
    return 0;
}

static int int_eval(void *ctx, int n, const int *g, double *obj, double *cv, char *err)
{
    (void)ctx, (void)err, (void)cv;
    for (int i = 0; i < n; i++) obj[2 * i] = g[2 * i], obj[2 * i + 1] = -g[2 * i + 1];
    return 0;
}

static char err[BASE_ERRLEN];

/* creation must fail with a message naming `word` */
static void refuse(const nsga_problem *p, const nsga_options *o, const char *word, const char *what)
{
    err[0] = 0;
    nsga *e = nsga_create(p, o, err);
    CHECK(e == NULL, "%s accepted", what);
    CHECK(err[0] && strstr(err, word), "%s: message \"%s\" lacks \"%s\"", what, err, word);
    nsga_destroy(e);
}

int main(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 1};
    int ilo[2] = {0, 0}, ihi[2] = {3, 3};
    nsga_problem p = {.kind = NSGA_REAL, .nvar = 2, .nobj = 2, .lo = lo, .hi = hi, .eval_real = ok_eval};
    nsga_problem q = {.kind = NSGA_INT, .nvar = 2, .nobj = 2, .ilo = ilo, .ihi = ihi, .eval_int = int_eval};
    nsga_options o, t;
    nsga_options_default(&o);
    o.pop_size = 8;

    nsga *e = nsga_create(&p, &o, err);
    CHECK(e != NULL, "valid real problem: %s", err);
    nsga_destroy(e);
    e = nsga_create(&q, &o, err);
    CHECK(e != NULL, "valid integer problem: %s", err);
    nsga_destroy(e);

    t = o, t.pop_size = 3;
    refuse(&p, &t, "population", "population 3");
    t = o, t.pop_size = 2;
    refuse(&p, &t, "population", "population 2");
    t = o, t.pop_size = 7;
    refuse(&p, &t, "even", "odd population");
    t = o, t.pop_size = 0;
    refuse(&p, &t, "population", "population 0");
    t = o, t.pop_size = -4;
    refuse(&p, &t, "population", "negative population");
    t = o, t.pc = 1.5;
    refuse(&p, &t, "crossover", "crossover probability 1.5");
    t = o, t.eta_c = NAN;
    refuse(&p, &t, "indices", "NaN distribution index");
    t = o, t.xover = 9;
    refuse(&p, &t, "crossover", "unknown crossover");
    t = o, t.stag_gens = 5;
    refuse(&p, &t, "reference", "stagnation without a reference point");
    t = o, t.max_gens = -1;
    refuse(&p, &t, "termination", "negative generations");
    t = o, t.ref = (double[]){1, INFINITY};
    refuse(&p, &t, "reference", "infinite reference point");
    refuse(NULL, &o, "problem", "no problem");
    refuse(&p, NULL, "options", "no options");

    nsga_problem b = p;
    double badhi[2] = {1, -1};
    b.hi = badhi;
    refuse(&b, &o, "lower bound", "real lower > upper");
    b = p, b.hi = (double[]){1, INFINITY};
    refuse(&b, &o, "finite", "infinite bound");
    nsga_problem bi = q;
    int badihi[2] = {3, -2};
    bi.ihi = badihi;
    refuse(&bi, &o, "lower bound", "integer lower > upper");
    b = p, b.nvar = 0;
    refuse(&b, &o, "variables", "zero variables");
    b = p, b.nobj = 1;
    refuse(&b, &o, "objectives", "one objective");
    b = p, b.nobj = NSGA_MAX_OBJ + 1;
    refuse(&b, &o, "objectives", "too many objectives");
    b = p, b.eval_real = NULL;
    refuse(&b, &o, "eval_real", "missing callback");
    b = p, b.lo = NULL;
    refuse(&b, &o, "bounds", "missing bounds");
    b = p, b.kind = 7;
    refuse(&b, &o, "kind", "unknown kind");

    /* seed genomes */
    t = o, t.nseeds = 1, t.seed_real = (double[]){0.5, 1.5};
    refuse(&p, &t, "seed genome 0, gene 1", "real seed out of bounds");
    t = o, t.nseeds = 2, t.seed_int = (int[]){0, 3, 4, 0};
    refuse(&q, &t, "seed genome 1, gene 0", "integer seed out of bounds");
    t = o, t.nseeds = 1, t.seed_real = (double[]){NAN, 0};
    refuse(&p, &t, "seed genome", "NaN seed");
    t = o, t.nseeds = 9, t.seed_real = (double[18]){0};
    refuse(&p, &t, "seed genomes", "more seeds than members");
    t = o, t.nseeds = 1;
    refuse(&q, &t, "seed_int", "seeds in the wrong array");

    /* calls out of order, bad callback output */
    e = nsga_create(&p, &o, err);
    CHECK(nsga_step(e, err) == NSGA_ESTATE && strstr(err, "init"), "step before init: %s", err);
    CHECK(nsga_checkpoint(e, NULL, 0) == 0, "no checkpoint before init");
    CHECK(nsga_genome_real(e, 0) == NULL && nsga_rank(e, 0) == -1, "no members before init");
    nsga_destroy(e);
    t = o, t.max_gens = 0;
    e = nsga_create(&p, &t, err);
    CHECK(nsga_run(e, err) == NSGA_EINVAL && strstr(err, "termination"), "run without a criterion: %s", err);
    nsga_destroy(e);
    b = p, b.eval_real = nan_eval;
    e = nsga_create(&b, &o, err);
    CHECK(nsga_init(e, err) == NSGA_EEVAL && strstr(err, "objective 1"), "NaN objective: %s", err);
    nsga_destroy(e);
    b = p, b.eval_real = negcv_eval;
    e = nsga_create(&b, &o, err);
    CHECK(nsga_init(e, err) == NSGA_EEVAL && strstr(err, "violation"), "negative violation: %s", err);
    nsga_destroy(e);
    e = nsga_create(&p, &o, err);
    nsga_init(e, err);
    CHECK(nsga_genome_real(e, 8) == NULL && nsga_genome_real(e, -1) == NULL && nsga_genome_int(e, 0) == NULL &&
              isnan(nsga_cv(e, 99)),
          "accessors refuse bad indices and the wrong genome kind");
    nsga_problem other = p;
    other.nvar = 2, other.hi = (double[]){1, 2};
    nsga *f = nsga_create(&other, &o, err);
    size_t len = nsga_checkpoint(e, NULL, 0);
    unsigned char *blob = malloc(len);
    nsga_checkpoint(e, blob, len);
    CHECK(nsga_restore(f, blob, len, err) == NSGA_ECKPT && strstr(err, "bounds"), "other bounds: %s", err);
    nsga_destroy(f);
    f = nsga_create(&q, &o, err);
    CHECK(nsga_restore(f, blob, len, err) == NSGA_ECKPT && strstr(err, "kind"), "other kind: %s", err);
    nsga_destroy(f);
    free(blob);
    nsga_destroy(e);

    CHECK(nsga_builtin_create("zdt9", 1, err) == NULL && strstr(err, "zdt9"), "unknown built-in: %s", err);
    CHECK(nsga_builtin_create("zdt1", 0, err) == NULL && strstr(err, "thread"), "zero threads: %s", err);
    return check_done("test_engine_badinput");
}
