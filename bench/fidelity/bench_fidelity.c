/* bench_fidelity.c -- how well the calibrated model predicts the runtime:
 * many mappings of one network, each predicted with the cost model and
 * measured with `dse exec --bench` under mpirun (bench/README.md, "Model
 * fidelity").
 *
 * Mappings: every single-device mapping; the best points of the fronts of
 * short campaigns with each chromosome (best per objective, then points
 * spread along the front); random genomes of each chromosome.  Duplicates
 * are dropped.  Output: OUT/NET.csv (one row per mapping, predicted and
 * measured latency and peak memory) and a summary line per objective:
 * MAPE, worst error, Spearman's rho.  Energy is not measurable on a
 * machine without a sensor and is not reported.
 *
 * Invariant: a mapping is measured exactly as `dse validate` would run it
 * (same launcher, same dse exec), predicted exactly as `dse eval` would
 * score it (same Plan, same cost model, same coefficients file).
 */
#include "calib.h"
#include "campaign.h"
#include "chrom.h"
#include "cost.h"
#include "exec.h"
#include "launch.h"
#include "mapping.h"
#include "plan.h"
#include "results.h"

#include <cJSON.h>
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAXMAP 512

typedef struct {
    mapping *m;
    char source[64];
    double pred_lat, pred_mem;
    double meas_lat, meas_mem;
    double foreign; /* share of the machine's CPU other processes took during the kept run */
    int ok;
} point;

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

static int add_point(point *pts, int *n, mapping *m, const char *src, const net *nt)
{
    char err[NET_ERRLEN];
    if (mapping_validate(m, nt, err)) {
        fprintf(stderr, "bench_fidelity: %s: invalid mapping: %s\n", src, err);
        mapping_free(m);
        return 0;
    }
    for (int i = 0; i < *n; i++)
        if (mapping_equal(pts[i].m, m)) {
            mapping_free(m);
            return 0;
        }
    if (*n >= MAXMAP) {
        mapping_free(m);
        return 0;
    }
    memset(&pts[*n], 0, sizeof pts[*n]);
    pts[*n].m = m;
    snprintf(pts[*n].source, sizeof pts[*n].source, "%s", src);
    (*n)++;
    return 1;
}

/* Campaign of one chromosome: its front's best points into pts. */
static int from_campaign(const char *network, const char *platform, const char *coeffs,
                         const char *chromo, int splits, int pop, int gens, int per_front,
                         unsigned long seed, const char *dbpath, const net *nt, point *pts,
                         int *n, int ndev)
{
    char err[CAMP_ERRLEN];
    camp_options o = {0};
    o.network = network;
    o.platform = platform;
    o.coeffs = coeffs;
    o.chromosome = chromo;
    o.splits = splits;
    o.pop = pop;
    o.gens = gens;
    o.seed = seed;
    o.kind = "nsga";
    camp *c = camp_new(&o, 2, NULL, NULL, err);
    if (!c) {
        fprintf(stderr, "bench_fidelity: campaign %s: %s\n", chromo, err);
        return -1;
    }
    res_db *db = res_open(dbpath, RES_OPEN_CREATE, err);
    long long id;
    res_point *fp = NULL;
    int nf = -1, added = 0;
    if (db && !res_campaign_new(db, chromo, "nsga", camp_network_name(c), camp_platform_name(c),
                                chromo, camp_config(c), &id, err) &&
        camp_drive(c, db, id, 0, NULL, err) >= 0)
        nf = camp_load_front(db, id, &fp, err);
    if (nf < 0) fprintf(stderr, "bench_fidelity: campaign %s: %s\n", chromo, err);
    chrom_kind ck;
    chrom_kind_parse(chromo, &ck);
    chrom *ch = nf > 0 ? chrom_new(nt, ndev, ck, splits, NET_SPLIT_DEFAULT, err) : NULL;
    /* Best per objective first, then evenly along the front. */
    int order[64], no = 0;
    for (int k = 0; k < 3 && nf > 0; k++) {
        int b = 0;
        for (int i = 1; i < nf; i++)
            if (fp[i].obj[k] < fp[b].obj[k]) b = i;
        order[no++] = b;
    }
    for (int j = 0; j < per_front && nf > 1 && no < 64; j++) order[no++] = (int)((double)j * (nf - 1) / (per_front > 1 ? per_front - 1 : 1) + 0.5);
    for (int j = 0; ch && j < no && added < per_front; j++) {
        mapping *m = mapping_new(nt->n, ndev);
        char src[64];
        snprintf(src, sizeof src, "front %s%s%.0d #%d", chromo, splits && ck == CHROM_HYBRID ? " p=" : "",
                 ck == CHROM_HYBRID ? splits : 0, order[j]);
        if (chrom_decode(ch, fp[order[j]].genome, fp[order[j]].nvar, m, err)) {
            mapping_free(m);
            continue;
        }
        added += add_point(pts, n, m, src, nt);
    }
    chrom_free(ch);
    if (fp) res_points_free(fp, nf);
    res_close(db);
    camp_free(c);
    return added;
}

static double mean_abs_pct(const point *p, int n, int lat, double *worst)
{
    double s = 0, w = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!p[i].ok) continue;
        double pr = lat ? p[i].pred_lat : p[i].pred_mem, me = lat ? p[i].meas_lat : p[i].meas_mem;
        double e = 100.0 * fabs(pr - me) / me;
        s += e;
        if (e > w) w = e;
        k++;
    }
    *worst = w;
    return k ? s / k : NAN;
}

/* Fraction of this machine's CPU time that was idle over `secs`. */
static double idle_fraction(double secs)
{
    unsigned long long v0[10] = {0}, v1[10] = {0};
    for (int pass = 0; pass < 2; pass++) {
        FILE *f = fopen("/proc/stat", "r");
        unsigned long long *v = pass ? v1 : v0;
        if (!f) return NAN;
        int k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                       &v[4], &v[5], &v[6], &v[7]);
        fclose(f);
        if (k != 8) return NAN;
        if (!pass) {
            struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    unsigned long long tot = 0;
    for (int i = 0; i < 8; i++) tot += v1[i] - v0[i];
    return tot ? (double)(v1[3] + v1[4] - v0[3] - v0[4]) / (double)tot : NAN;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* What the whole machine and our children (the job) used, to tell how much
 * of the CPU other processes took while a job ran. */
typedef struct {
    double wall, busy, mine; /* seconds */
} cpu_mark;

static cpu_mark cpu_mark_now(void)
{
    cpu_mark m = {now_s(), 0, 0};
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                    &v[4], &v[5], &v[6], &v[7]) == 8)
        m.busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
    if (f) fclose(f);
    struct rusage u;
    if (getrusage(RUSAGE_CHILDREN, &u) == 0)
        m.mine = (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
                 u.ru_stime.tv_usec * 1e-6;
    return m;
}

/* Fraction of the machine's CPU capacity used by processes other than our
 * children since m0. */
static double cpu_foreign(const cpu_mark *m0)
{
    cpu_mark m1 = cpu_mark_now();
    double cap = (m1.wall - m0->wall) * (double)sysconf(_SC_NPROCESSORS_ONLN);
    double f = cap > 0 ? ((m1.busy - m0->busy) - (m1.mine - m0->mine)) / cap : 0;
    return f < 0 ? 0 : f;
}

static volatile sig_atomic_t g_stop;

/* Wait (at most max_wait seconds) until other processes leave the cores
 * free: latency measured on a machine busy with other work measures the
 * other work.  Returns the idle fraction seen last. */
static double wait_quiet(double need, double max_wait)
{
    double idle = idle_fraction(0.5);
    for (double waited = 0; !g_stop && waited < max_wait && !(idle >= need); waited += 2.5) {
        sleep(2);
        idle = idle_fraction(0.5);
    }
    return idle;
}
static void on_sig(int s) { g_stop = s; }

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr,
                "usage: bench_fidelity --dse DSE --platform P --network N --coeffs C.json --out DIR\n"
                "         [--campaigns naive,hybrid:2,hybrid:4,vertical] [--pop 32] [--gens 20]\n"
                "         [--per-front 4] [--random 14] [--bench 4,20] [--repeat 1] [--seed 1]\n"
                "         [--timeout 600] [--quiet 0.9] [--max-wait 120] [--max-foreign 0.1]\n"
                "Each mapping is measured until --repeat runs were clean: before a run, wait\n"
                "until the machine is at least --quiet idle; a run during which other processes\n"
                "took more than --max-foreign of the CPU is done again, for at most --max-wait\n"
                "seconds per mapping, after which the least disturbed run is kept.  The CSV's\n"
                "last column is that share of the CPU.\n");
        return 2;
    }
    const char *dse = opt(argc, argv, "--dse", NULL), *plat_arg = opt(argc, argv, "--platform", NULL);
    const char *network = opt(argc, argv, "--network", NULL), *coeffs = opt(argc, argv, "--coeffs", NULL);
    const char *out = opt(argc, argv, "--out", NULL);
    const char *camps = opt(argc, argv, "--campaigns", "naive,hybrid:2,hybrid:4,vertical");
    const char *bench = opt(argc, argv, "--bench", "4,20");
    int pop = atoi(opt(argc, argv, "--pop", "32")), gens = atoi(opt(argc, argv, "--gens", "20"));
    int per_front = atoi(opt(argc, argv, "--per-front", "4"));
    int nrandom = atoi(opt(argc, argv, "--random", "14"));
    int repeat = atoi(opt(argc, argv, "--repeat", "1"));
    unsigned long seed = strtoul(opt(argc, argv, "--seed", "1"), NULL, 10);
    double timeout = atof(opt(argc, argv, "--timeout", "600"));
    double quiet = atof(opt(argc, argv, "--quiet", "0.9"));
    double max_wait = atof(opt(argc, argv, "--max-wait", "120"));
    double max_foreign = atof(opt(argc, argv, "--max-foreign", "0.1"));
    if (!dse || !plat_arg || !network || !coeffs || !out || repeat < 1) {
        fprintf(stderr, "bench_fidelity: --dse, --platform, --network, --coeffs and --out are required\n");
        return 2;
    }
    char err[NET_ERRLEN], warn[NET_ERRLEN];
    mkdir(out, 0777);
    net *nt = net_open(network, err);
    platform *pl = nt ? platform_open(plat_arg, err) : NULL;
    cost_coeffs *co = pl ? coeffs_load(coeffs, err) : NULL;
    cost_model *cm = co ? cost_new(nt, pl, co, warn, err) : NULL;
    if (!cm) {
        fprintf(stderr, "bench_fidelity: %s\n", err);
        return 2;
    }
    if (warn[0]) fprintf(stderr, "bench_fidelity: model: %s\n", warn);
    signal(SIGINT, on_sig);
    int ndev = pl->ndev, n = 0;
    point *pts = calloc(MAXMAP, sizeof *pts);

    /* 1. Single-device mappings. */
    for (int d = 0; d < ndev; d++) {
        mapping *m = mapping_new(nt->n, ndev);
        char src[64];
        mapping_set_single(m, nt, d);
        snprintf(src, sizeof src, "single %s", pl->dev[d].name);
        add_point(pts, &n, m, src, nt);
    }
    /* 2. Campaign fronts. */
    char dbpath[600];
    snprintf(dbpath, sizeof dbpath, "%s/%s-campaigns.db", out, nt->name);
    unlink(dbpath);
    char list[256];
    snprintf(list, sizeof list, "%s", camps);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char kind[32];
        int splits = 2;
        if (sscanf(tok, "%31[a-z]:%d", kind, &splits) < 1) continue;
        if (splits > ndev) continue; /* p <= devices */
        from_campaign(network, plat_arg, coeffs, kind, splits, pop, gens, per_front, seed,
                      dbpath, nt, pts, &n, ndev);
    }
    /* 3. Random genomes, round robin over the chromosomes. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    const char *kinds[] = {"naive", "hybrid", "hybrid", "vertical"};
    const int splits[] = {0, 2, 4, 0};
    for (int r = 0, tries = 0; r < nrandom && tries < 50 * nrandom + 50; tries++) {
        int k = tries % 4;
        if (splits[k] > ndev) continue;
        chrom_kind ck;
        chrom_kind_parse(kinds[k], &ck);
        chrom *ch = chrom_new(nt, ndev, ck, splits[k] ? splits[k] : 1, NET_SPLIT_DEFAULT, err);
        if (!ch) continue;
        int len = chrom_length(ch);
        int *lo = malloc((size_t)len * sizeof *lo), *hi = malloc((size_t)len * sizeof *hi);
        int *g = malloc((size_t)len * sizeof *g);
        chrom_bounds(ch, lo, hi);
        for (int i = 0; i < len; i++) g[i] = lo[i] + (int)gsl_rng_uniform_int(rng, (unsigned long)(hi[i] - lo[i] + 1));
        mapping *m = mapping_new(nt->n, ndev);
        char src[64];
        snprintf(src, sizeof src, "random %s%s", kinds[k], splits[k] == 4 ? " p=4" : splits[k] == 2 ? " p=2" : "");
        if (chrom_decode(ch, g, len, m, err) == 0) r += add_point(pts, &n, m, src, nt);
        else mapping_free(m);
        free(lo);
        free(hi);
        free(g);
        chrom_free(ch);
    }
    gsl_rng_free(rng);

    /* 4. Predict and measure. */
    plan *p = plan_new();
    cost_device *pd = calloc((size_t)ndev, sizeof *pd);
    double (*dm)[4] = calloc((size_t)ndev, sizeof *dm); /* measured busy, wait, finish, rss */
    char csv[600];
    snprintf(csv, sizeof csv, "%s/%s.csv", out, nt->name);
    FILE *f = fopen(csv, "w");
    if (!f) {
        fprintf(stderr, "bench_fidelity: %s: %s\n", csv, strerror(errno));
        return 1;
    }
    fprintf(f, "index,source,pred_latency_ms,meas_latency_ms,pred_memory_mb,meas_memory_mb,foreign\n");
    /* Per device, for diagnosis: where predicted and measured time go. */
    snprintf(csv, sizeof csv, "%s/%s-devices.csv", out, nt->name);
    FILE *fd = fopen(csv, "w");
    if (fd)
        fprintf(fd, "index,device,pred_busy_ms,meas_busy_ms,pred_wait_ms,meas_wait_ms,"
                    "pred_finish_ms,meas_finish_ms,pred_memory_mb,meas_memory_mb\n");
    int nok = 0;
    for (int i = 0; i < n && !g_stop; i++) {
        point *P = &pts[i];
        cost_result cr;
        if (plan_build(p, nt, P->m, pl->source, err) || cost_eval(cm, p, &cr, pd)) {
            fprintf(stderr, "bench_fidelity: %s: cannot predict\n", P->source);
            continue;
        }
        P->pred_lat = cr.latency_ms;
        P->pred_mem = cr.mem_mb;
        char mpath[700];
        snprintf(mpath, sizeof mpath, "%s/%s-mapping-%d.json", out, nt->name, i);
        if (mapping_save(P->m, nt, pl, mpath, err)) {
            fprintf(stderr, "bench_fidelity: %s\n", err);
            continue;
        }
        char np[16], to[32];
        snprintf(np, sizeof np, "%d", ndev);
        snprintf(to, sizeof to, "%g", timeout);
        const char *args[] = {dse, "exec", "--network", network, "--platform", plat_arg,
                              "--mapping", mpath, "--bench", bench, "--json", "--timeout", to};
        const char *av[40];
        double best_lat = INFINITY, best_mem = 0, least_foreign = INFINITY;
        int accepted = 0, failed = 0;
        double t_start = now_s();
        for (int attempt = 0; accepted < repeat && !failed && !g_stop; attempt++) {
            /* Past the waiting budget, keep the least disturbed run. */
            int last_chance = now_s() - t_start > max_wait && P->ok;
            if (last_chance) break;
            wait_quiet(quiet, max_wait - (now_s() - t_start));
            rt_mpirun_argv(ndev, NULL, args, (int)(sizeof args / sizeof *args), av);
            rt_mpirun_env();
            char *txt = NULL, eline[400];
            cpu_mark m0 = cpu_mark_now();
            int jrc = rt_run_job(av, timeout + 60, &g_stop, "dse exec:", &txt, eline, sizeof eline);
            double foreign = cpu_foreign(&m0);
            cJSON *res = jrc == 0 ? cJSON_Parse(txt) : NULL;
            free(txt);
            if (!res) {
                fprintf(stderr, "bench_fidelity: %s: run failed (exit %d): %s\n", P->source, jrc, eline);
                failed = 1;
                break;
            }
            int clean = foreign <= max_foreign;
            const cJSON *ob = cJSON_GetObjectItem(res, "objectives");
            double lat = cJSON_GetObjectItem(ob, "latency_ms")->valuedouble;
            double mem = cJSON_GetObjectItem(ob, "memory_mb")->valuedouble;
            if (!clean) fprintf(stderr, "     (run of %s disturbed: other processes took %.0f%% of the CPU; %s)\n",
                                P->source, 100 * foreign, now_s() - t_start > max_wait ? "keeping the least disturbed" : "again");
            /* Clean runs: the fastest (other processes only ever add time).
             * No clean run yet: the least disturbed one. */
            if (clean ? (accepted == 0 || lat < best_lat) : (!accepted && foreign < least_foreign)) {
                best_lat = lat;
                best_mem = mem;
                P->foreign = foreign;
                least_foreign = foreign;
                const cJSON *devs = cJSON_GetObjectItem(res, "devices");
                for (int d = 0; d < ndev; d++) {
                    const cJSON *jd = cJSON_GetArrayItem(devs, d);
                    if (!jd) continue;
                    dm[d][0] = cJSON_GetObjectItem(jd, "busy_ms")->valuedouble;
                    dm[d][1] = cJSON_GetObjectItem(jd, "wait_ms")->valuedouble;
                    dm[d][2] = cJSON_GetObjectItem(jd, "finish_ms")->valuedouble;
                    dm[d][3] = cJSON_GetObjectItem(jd, "peak_rss_mb")->valuedouble;
                }
            }
            accepted += clean;
            P->ok = 1;
            cJSON_Delete(res);
        }
        if (failed) P->ok = 0;
        for (int d = 0; fd && P->ok && d < ndev; d++)
            if (pd[d].used)
                fprintf(fd, "%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f\n", i, pl->dev[d].name,
                        (pd[d].compute_s + pd[d].concat_s) * 1e3, dm[d][0], pd[d].wait_s * 1e3,
                        dm[d][1], pd[d].finish_s * 1e3, dm[d][2], pd[d].mem_mb, dm[d][3]);
        if (!P->ok) continue;
        P->meas_lat = best_lat;
        P->meas_mem = best_mem;
        nok++;
        fprintf(f, "%d,%s,%.4f,%.4f,%.3f,%.3f,%.3f\n", i, P->source, P->pred_lat, P->meas_lat,
                P->pred_mem, P->meas_mem, P->foreign);
        fflush(f);
        fprintf(stderr, "%3d/%d %-28s latency %9.3f ms predicted %9.3f (%+6.1f%%)   memory %8.1f MB predicted %8.1f (%+6.1f%%)  foreign %.2f\n",
                i + 1, n, P->source, P->meas_lat, P->pred_lat,
                100 * (P->pred_lat - P->meas_lat) / P->meas_lat, P->meas_mem, P->pred_mem,
                100 * (P->pred_mem - P->meas_mem) / P->meas_mem, P->foreign);
    }
    fclose(f);
    if (fd) fclose(fd);

    /* 5. Summary. */
    double *pl_ = calloc((size_t)n + 1, sizeof(double)), *ml = calloc((size_t)n + 1, sizeof(double));
    double *pm = calloc((size_t)n + 1, sizeof(double)), *mm = calloc((size_t)n + 1, sizeof(double));
    int k = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].ok) {
            pl_[k] = pts[i].pred_lat;
            ml[k] = pts[i].meas_lat;
            pm[k] = pts[i].pred_mem;
            mm[k++] = pts[i].meas_mem;
        }
    double wl, wm;
    double mape_l = mean_abs_pct(pts, n, 1, &wl), mape_m = mean_abs_pct(pts, n, 0, &wm);
    double rho_l = calib_spearman(pl_, ml, k), rho_m = calib_spearman(pm, mm, k);
    printf("| %s | %d | %.1f%% | %.1f%% | %.3f | %.1f%% | %.1f%% | %.3f |\n", nt->name, k, mape_l,
           wl, rho_l, mape_m, wm, rho_m);
    char sum[600];
    snprintf(sum, sizeof sum, "%s/%s-summary.json", out, nt->name);
    FILE *s = fopen(sum, "w");
    if (s) {
        fprintf(s, "{\"network\": \"%s\", \"mappings\": %d, \"latency\": {\"mape\": %.4f, \"worst\": %.4f, "
                   "\"spearman\": %.4f}, \"memory\": {\"mape\": %.4f, \"worst\": %.4f, \"spearman\": %.4f}}\n",
                nt->name, k, mape_l, wl, rho_l, mape_m, wm, rho_m);
        fclose(s);
    }
    for (int i = 0; i < n; i++) mapping_free(pts[i].m);
    free(pts);
    free(pl_);
    free(ml);
    free(pm);
    free(mm);
    free(pd);
    free(dm);
    plan_free(p);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    net_free(nt);
    return g_stop ? 1 : 0;
}
