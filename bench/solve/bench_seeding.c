/* bench_seeding.c -- does seeding the first population with the planners'
 * mappings (dse run --init) make NSGA-II converge sooner?  For one network
 * and platform, hybrid chromosome p = 2:
 *
 *  - runs without and with --init, at equal individuals produced, for each
 *    population size and seed: the hypervolume of the population's front
 *    after every generation (the campaign's normalised hypervolume);
 *  - a reference front: the pooled final fronts of runs LONG times longer
 *    (largest population, both kinds, LONG_SEEDS seeds), every other run's
 *    final front, the planners' points, and the exact front when the space
 *    has at most EXHAUST_MAX genomes (dse exhaust's enumeration);
 *  - per run: the individuals needed to reach 99% of the reference
 *    hypervolume, and whether every planner's mapping is weakly dominated
 *    by a point of the final front (the campaign's: the final population's
 *    first front and the seeds, as drive.c selects it).
 *
 * The engine is driven as camp_drive drives it (same options, seeds first,
 * evaluation through camp_eval), without the database.  Hypervolumes do
 * not depend on the machine's speed; run times do (the machine is shared).
 *
 *   bench_seeding NETWORK PLATFORM COEFFS|- OUT_PREFIX [LABEL]
 * Environment: POPS (100,1000), GENS (100), SEEDS (1,2,3), LONG (20),
 * LONG_SEEDS (1), INIT (single,greedy,elim,cluster), EXHAUST_MAX (2e7),
 * THREADS (2).  Writes OUT_PREFIX.conv (per generation, per population and
 * kind: individuals, median hypervolume ratio over seeds) and prints
 * markdown rows on stdout.
 */
#include "bench.h"

#include "campaign.h"
#include "cost.h"
#include "mapping.h"
#include "nsga.h"
#include "solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP 8

static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        v[n++] = atoi(s);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

static const char *env(const char *k, const char *d)
{
    const char *v = getenv(k);
    return v && *v ? v : d;
}

/* A growing set of objective vectors (feasible points). */
typedef struct {
    int n, cap;
    double *o;
} pool;

static void pool_add(pool *p, const double *o)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->o = realloc(p->o, (size_t)p->cap * COST_NOBJ * sizeof *p->o);
    }
    memcpy(p->o + (size_t)p->n * COST_NOBJ, o, COST_NOBJ * sizeof *o);
    p->n++;
}

static int engine_eval(void *ctx, int n, const int *g, double *obj, double *cv, char *err)
{
    char e[BASE_ERRLEN];
    if (camp_eval(ctx, n, g, obj, cv, e)) {
        snprintf(err, BASE_ERRLEN, "%.*s", BASE_ERRLEN - 1, e);
        return -1;
    }
    return 0;
}

typedef struct {
    long gens;
    long long *indiv; /* per generation */
    double *hv;       /* normalised */
    pool front;       /* final feasible first front, and the seeds' feasible points */
} run;

/* One engine run of c as camp_drive does it (seeds: camp_initial_genomes). */
static int run_engine(camp *c, int pop, unsigned long seed, long gens, run *r)
{
    char err[BASE_ERRLEN];
    int nv = camp_nvar(c), ns;
    int *seeds = camp_initial_genomes(c, &ns);
    if (!seeds) {
        fprintf(stderr, "bench_seeding: out of memory\n");
        return -1;
    }
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = pop;
    o.seed = seed;
    o.ref = camp_ref(c);
    o.nseeds = ns;
    o.seed_int = seeds;
    o.max_gens = gens;
    const int *lo, *hi;
    camp_bounds(c, &lo, &hi);
    nsga_problem p = {0};
    p.kind = NSGA_INT;
    p.nvar = nv;
    p.nobj = COST_NOBJ;
    p.ilo = lo;
    p.ihi = hi;
    p.eval_int = engine_eval;
    p.ctx = c;
    nsga *e = nsga_create(&p, &o, err);
    if (!e || nsga_init(e, err)) {
        fprintf(stderr, "bench_seeding: %s\n", err);
        free(seeds);
        return -1;
    }
    const double *ref = camp_ref(c);
    double box = 1;
    for (int k = 0; k < COST_NOBJ; k++) box *= ref[k];
    memset(r, 0, sizeof *r);
    r->gens = gens;
    r->indiv = malloc((size_t)(gens + 1) * sizeof *r->indiv);
    r->hv = malloc((size_t)(gens + 1) * sizeof *r->hv);
    for (long g = 0;; g++) {
        const nsga_stats *st = nsga_get_stats(e);
        r->indiv[g] = st->evaluations + st->cache_hits;
        r->hv[g] = st->hv / box;
        if (g == gens) break;
        if (nsga_step(e, err)) {
            fprintf(stderr, "bench_seeding: %s\n", err);
            nsga_destroy(e);
            free(seeds);
            return -1;
        }
    }
    for (int i = 0; i < pop; i++) /* the feasible first front */
        if (nsga_rank(e, i) == 0 && !(nsga_cv(e, i) > 0)) pool_add(&r->front, nsga_objectives(e, i));
    /* and the seeds, as the campaign's final front has them (drive.c):
     * crowding may drop a seed from a first front larger than the
     * population, and the front a user sees keeps it. */
    double *so = malloc((size_t)ns * COST_NOBJ * sizeof *so), *scv = malloc((size_t)ns * sizeof *scv);
    int erc = !so || !scv ? (snprintf(err, sizeof err, "out of memory"), 1) : camp_eval(c, ns, seeds, so, scv, err);
    for (int i = 0; !erc && i < ns; i++)
        if (!(scv[i] > 0)) pool_add(&r->front, so + (size_t)i * COST_NOBJ);
    free(so), free(scv);
    if (erc) {
        fprintf(stderr, "bench_seeding: %s\n", err);
        nsga_destroy(e);
        free(seeds);
        return -1;
    }
    nsga_destroy(e);
    free(seeds);
    return 0;
}

/* Individuals until the hypervolume reaches frac of href (-1: never). */
static long long reach(const run *r, double href, double frac)
{
    for (long g = 0; g <= r->gens; g++)
        if (r->hv[g] >= frac * href) return r->indiv[g];
    return -1;
}

static int dominated(const pool *f, const double *s)
{
    for (int i = 0; i < f->n; i++) {
        const double *o = f->o + (size_t)i * COST_NOBJ;
        int k = 0;
        while (k < COST_NOBJ && o[k] <= s[k]) k++;
        if (k == COST_NOBJ) return 1;
    }
    return 0;
}

static double median_ll(long long *v, int n, int *never)
{
    double x[64];
    int m = 0;
    *never = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0) (*never)++;
        x[m++] = v[i] < 0 ? INFINITY : (double)v[i];
    }
    return base_median(x, m);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_seeding NETWORK PLATFORM COEFFS|- OUT_PREFIX [LABEL]\n");
        return 2;
    }
    const char *netarg = argv[1], *platarg = argv[2], *coeffs = strcmp(argv[3], "-") ? argv[3] : NULL;
    const char *out = argv[4], *label = argc > 5 ? argv[5] : NULL;
    int pops[MAXP], seeds[MAXP], lseeds[MAXP];
    int npop = parse_list(env("POPS", "100,1000"), pops, MAXP);
    int nseed = parse_list(env("SEEDS", "1,2,3"), seeds, MAXP);
    int nlseed = parse_list(env("LONG_SEEDS", "1"), lseeds, MAXP);
    long gens = atol(env("GENS", "100")), longf = atol(env("LONG", "20"));
    const char *init = env("INIT", "single,greedy,elim,cluster");
    double exmax = atof(env("EXHAUST_MAX", "2e7"));
    int threads = atoi(env("THREADS", "2"));
    char err[BASE_ERRLEN];
    int maxpop = 0;
    for (int i = 0; i < npop; i++)
        if (pops[i] > maxpop) maxpop = pops[i];
    /* the two campaigns: plain and seeded (the seeds are computed here, once) */
    camp_options o = {0};
    o.network = netarg, o.platform = platarg, o.coeffs = coeffs, o.chromosome = "hybrid";
    o.splits = 2, o.split_kinds = "conv,fc", o.pop = maxpop, o.gens = (int)gens, o.seed = 1;
    o.kind = "nsga", o.max_points = (long long)exmax;
    camp *plain = camp_new(&o, threads, NULL, NULL, err);
    o.init = init;
    double t0 = base_now();
    camp *seeded = plain ? camp_new(&o, threads, NULL, NULL, err) : NULL;
    double t_seed = base_now() - t0;
    if (!seeded) {
        fprintf(stderr, "bench_seeding: %s\n", err);
        return 1;
    }
    const char *name = label ? label : camp_network_name(plain);
    /* the planners' points, by the model */
    const camp_seeds *sd = camp_get_seeds(seeded);
    char e2[BASE_ERRLEN];
    net *n = net_open(netarg, e2);
    platform *pl = platform_open(platarg, e2);
    cost_coeffs *co = coeffs ? coeffs_load(coeffs, e2) : NULL;
    cost_model *cm = cost_new(n, pl, co, NULL, e2);
    mapping *m = mapping_new(n->n, pl->ndev);
    double solver_obj[16][COST_NOBJ];
    for (int i = 0; i < sd->n; i++) {
        solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
        solve_result r;
        if (solve_run(sd->method[i], &p, m, &r, e2)) {
            fprintf(stderr, "bench_seeding: %s\n", e2);
            return 1;
        }
        cost_objectives_of(&r.obj, solver_obj[i]);
    }
    pool ref = {0};
    for (int i = 0; i < sd->n; i++) pool_add(&ref, solver_obj[i]);
    /* the runs */
    run *runs = calloc((size_t)npop * nseed * 2, sizeof *runs);
    double t_runs = base_now();
    for (int a = 0; a < npop; a++)
        for (int s = 0; s < nseed; s++)
            for (int k = 0; k < 2; k++) {
                run *r = &runs[(a * nseed + s) * 2 + k];
                if (run_engine(k ? seeded : plain, pops[a], (unsigned long)seeds[s], gens, r)) return 1;
                for (int i = 0; i < r->front.n; i++) pool_add(&ref, r->front.o + (size_t)i * COST_NOBJ);
            }
    t_runs = base_now() - t_runs;
    double t_long = base_now();
    for (int s = 0; s < nlseed; s++)
        for (int k = 0; k < 2; k++) {
            run r;
            if (run_engine(k ? seeded : plain, maxpop, (unsigned long)lseeds[s] + 1000, gens * longf, &r)) return 1;
            for (int i = 0; i < r.front.n; i++) pool_add(&ref, r.front.o + (size_t)i * COST_NOBJ);
            free(r.indiv), free(r.hv), free(r.front.o);
        }
    t_long = base_now() - t_long;
    /* the exact front, when the space is small enough */
    double hv_exact = NAN;
    long long space = camp_space_size(plain, (long long)exmax);
    if (space > 0) {
        char dbp[256];
        snprintf(dbp, sizeof dbp, "%s.exhaust.db", out);
        unlink(dbp);
        res_db *db = res_open(dbp, RES_OPEN_CREATE, err);
        long long id;
        res_point *pts = NULL;
        int np = -1;
        if (db && !res_campaign_new(db, "exhaust", "exhaust", camp_network_name(plain), camp_platform_name(plain),
                                    "hybrid", camp_config(plain), &id, err) &&
            camp_exhaust(plain, db, id, NULL, err) == CAMP_FINISHED)
            np = camp_load_front(db, id, &pts, err);
        if (np < 0) {
            fprintf(stderr, "bench_seeding: exhaust: %s\n", err);
        } else {
            pool ex = {0};
            for (int i = 0; i < np; i++) pool_add(&ex, pts[i].obj), pool_add(&ref, pts[i].obj);
            hv_exact = camp_hv(plain, ex.n, ex.o);
            free(ex.o);
            res_points_free(pts, np);
        }
        res_close(db);
        unlink(dbp);
    }
    double href = camp_hv(plain, ref.n, ref.o);
    /* convergence: per population and kind, the median over seeds of the
     * hypervolume ratio at each generation */
    char path[512];
    snprintf(path, sizeof path, "%s.conv", out);
    FILE *f = fopen(path, "w");
    fprintf(f, "# %s on %s: reference hypervolume %.17g (normalised)\n", name, camp_platform_name(plain), href);
    for (int a = 0; a < npop; a++)
        for (int k = 0; k < 2; k++) {
            fprintf(f, "# pop %d %s: individuals, median hv/ref over %d seeds\n", pops[a], k ? "seeded" : "plain", nseed);
            for (long g = 0; g <= gens; g++) {
                double v[MAXP];
                for (int s = 0; s < nseed; s++) v[s] = runs[(a * nseed + s) * 2 + k].hv[g] / href;
                fprintf(f, "%lld %.6f\n", runs[(a * nseed) * 2 + k].indiv[g], base_median(v, nseed));
            }
            fprintf(f, "\n\n");
        }
    fclose(f);
    /* the table */
    for (int a = 0; a < npop; a++) {
        long long r99[2][MAXP];
        double fin[2][MAXP];
        int dom[2] = {0, 0}, tot = 0;
        for (int k = 0; k < 2; k++)
            for (int s = 0; s < nseed; s++) {
                const run *r = &runs[(a * nseed + s) * 2 + k];
                r99[k][s] = reach(r, href, 0.99);
                fin[k][s] = r->hv[gens] / href;
                for (int i = 0; i < sd->n; i++) dom[k] += dominated(&r->front, solver_obj[i]);
            }
        tot = nseed * sd->n;
        int nv0, nv1;
        double m0 = median_ll(r99[0], nseed, &nv0), m1 = median_ll(r99[1], nseed, &nv1);
        char s0[32], s1[32], ratio[32];
        if (isinf(m0)) snprintf(s0, sizeof s0, "not reached");
        else snprintf(s0, sizeof s0, "%.0f", m0);
        if (isinf(m1)) snprintf(s1, sizeof s1, "not reached");
        else snprintf(s1, sizeof s1, "%.0f", m1);
        if (isinf(m1)) snprintf(ratio, sizeof ratio, "-");
        else if (isinf(m0)) snprintf(ratio, sizeof ratio, "< %.2f", m1 / (double)runs[(a * nseed) * 2].indiv[gens]);
        else snprintf(ratio, sizeof ratio, "%.2f", m1 / m0);
        double med[2][MAXP]; /* base_median sorts: the per-seed figures stay in seed order */
        memcpy(med, fin, sizeof med);
        printf("| %s | %s | %d x %ld | %.4f | %.4f | %s | %s | %s | %d/%d | %d/%d |\n", name, camp_platform_name(plain),
               pops[a], gens, base_median(med[0], nseed), base_median(med[1], nseed), s0, s1, ratio, dom[0], tot,
               dom[1], tot);
        /* per seed, for judging a difference of medians against the spread
         * between seeds (a comment: the table's source keeps it) */
        printf("<!-- %s %s %d x %ld final hv/ref per seed (seeds in order), plain:", name, camp_platform_name(plain), pops[a], gens);
        for (int s = 0; s < nseed; s++) printf(" %.4f", fin[0][s]);
        printf("; seeded:");
        for (int s = 0; s < nseed; s++) printf(" %.4f", fin[1][s]);
        printf(" -->\n");
    }
    printf("<!-- %s %s: reference hv %.6f from %d points; exact front hv ", name, camp_platform_name(plain), href, ref.n);
    if (isnan(hv_exact)) printf("- (space above EXHAUST_MAX)");
    else printf("%.6f (%.4f of the reference, space %lld)", hv_exact, hv_exact / href, space);
    printf("; seed distances:");
    for (int i = 0; i < sd->n; i++) printf(" %s %.4f", sd->method[i], sd->distance[i]);
    printf("; time: seeds %.2f s, runs %.1f s, long runs %.1f s -->\n", t_seed, t_runs, t_long);
    if (!isnan(hv_exact))
        printf("| %s | %s | exact front (dse exhaust, %lld genomes) | %.4f of the reference |\n", name,
               camp_platform_name(plain), space, hv_exact / href);
    fflush(stdout);
    for (int i = 0; i < npop * nseed * 2; i++) free(runs[i].indiv), free(runs[i].hv), free(runs[i].front.o);
    free(runs), free(ref.o);
    mapping_free(m), cost_free(cm), coeffs_free(co), platform_free(pl), net_free(n);
    camp_free(plain), camp_free(seeded);
    return 0;
}
