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
 * --pair runs, right before every run of a mapping, the single-device
 * mapping of each device the mapping computes on (its references): a
 * virtual machine's cores change speed by a third within a minute, each
 * on its own (other guests on the host; bench/README.md), which no model
 * predicts, while the ratio of runs a few seconds apart hardly sees it.
 * A mapping's reference latency is the mean of its references weighted by
 * the predicted compute time on each device, measured and predicted
 * alike; the CSV then also has each mapping's measured and predicted
 * latency relative to it, and the summary their errors (single-device
 * mappings, 1 by construction, left out).
 *
 * --handoff N runs dse exec's handoff probe in every launch and judges the
 * launch by dse validate's rule (val_launch_slow): a launch in which data
 * passed between two cores of a board cost far more than the model's
 * message (on the VM this was built on, some launches; bench/README.md,
 * "Split mappings slower in some launches") is run again, at most N more
 * times, and the first fast one kept (else the least disturbed slow one).
 * The CSV then says which kept runs were slow, and the summary gives the
 * figures over the mappings whose kept run was fast beside those over all.
 *
 * Invariant: a mapping is measured exactly as `dse validate` would run it
 * (same launcher, same dse exec), predicted exactly as `dse eval` would
 * score it (same Plan, same cost model, same coefficients file).
 */
#include "calib.h"
#include "campaign.h"
#include "chrom.h"
#include "cost.h"
#include "runtime.h"
#include "mapping.h"
#include "plan.h"
#include "results.h"
#include "validate.h"

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

#define MAXROUNDS 16
#define MAXDEV 64

/* One measured run of a mapping: objectives, per device (busy, wait,
 * finish, peak RSS), and the share of the CPU other processes took. */
typedef struct {
    double lat, mem, foreign;
    double dev[MAXDEV][4];
    double hop_us, touch_us; /* --handoff: the launch's probe (NAN: none) */
    int moves;               /* the run passed data between devices (rt_moved_data) */
    int slow;                /* --handoff: slow when it ran (the fastest touch then) */
} run_result;

/* --handoff: the probe's judge.  retries < 0: no probe. */
typedef struct {
    int retries;        /* slow launches run again at most this many times */
    double msg_us;      /* the model's price of the probe's message */
    double touch_min;   /* the fastest touch of every launch so far */
    int launches, slow; /* launches probed, and found slow when they ran */
} probe;

/* Run R judged again at the end, against the fastest touch of every launch
 * (as dse validate judges its stored runs): a launch judged while few had
 * run saw a slower "fastest" touch. */
static int slow_at_end(const run_result *R, const probe *pr)
{
    return pr->retries >= 0 && R->hop_us > 0 && R->touch_us > 0 &&
           val_launch_slow(R->hop_us, R->touch_us, R->moves, pr->msg_us, pr->touch_min);
}

typedef struct {
    mapping *m;
    char source[64];
    char mpath[700];
    int pred_ok, failed, nruns;
    double pred_lat, pred_mem;
    cost_device pd[MAXDEV];
    run_result runs[MAXROUNDS];
    int single;            /* a single-device mapping: 1 + its device, else 0 */
    double w[MAXDEV];      /* with --pair: share of the predicted compute time per device */
    double ref[MAXROUNDS]; /* with --pair: the weighted reference latency beside each run */
    double pred_ref, ref_lat, meas_ratio;
    double meas_lat, meas_mem;
    double foreign; /* share of the machine's CPU other processes took during the kept run */
    /* --pair --handoff, per round: a reference beside the run was slow by
     * its pass (which the fastest touch does not change), and the largest
     * touch of those references (judged at the end) */
    int ref_pass_slow[MAXROUNDS];
    double ref_touch_max[MAXROUNDS];
    int slow;       /* --handoff: the kept run, or a reference beside one of its runs, was a
                       slow launch (judged at the end: slow_at_end) */
    int ok;
} point;

/* Is point i among those counted (fast_only: none of its launches slow)? */
static int counted(const point *p, int fast_only) { return p->ok && !(fast_only && p->slow); }

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

static int add_point(point *pts, int *n, mapping *m, const char *src, const net *nt)
{
    char err[BASE_ERRLEN];
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
    char err[BASE_ERRLEN];
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
    /* Best per objective first, then evenly along the front. */
    int order[64], no = 0;
    for (int k = 0; k < 3 && nf > 0; k++) {
        int b = 0;
        for (int i = 1; i < nf; i++)
            if (fp[i].obj[k] < fp[b].obj[k]) b = i;
        order[no++] = b;
    }
    for (int j = 0; j < per_front && nf > 1 && no < 64; j++) order[no++] = (int)((double)j * (nf - 1) / (per_front > 1 ? per_front - 1 : 1) + 0.5);
    for (int j = 0; nf > 0 && j < no && added < per_front; j++) {
        mapping *m = mapping_new(nt->n, ndev);
        char src[64];
        snprintf(src, sizeof src, "front %s%s%.0d #%d", chromo, splits && ck == CHROM_HYBRID ? " p=" : "",
                 ck == CHROM_HYBRID ? splits : 0, order[j]);
        if (camp_decode(c, fp[order[j]].genome, m, err)) { /* with its halo choices */
            mapping_free(m);
            continue;
        }
        added += add_point(pts, n, m, src, nt);
    }
    if (fp) res_points_free(fp, nf);
    res_close(db);
    camp_free(c);
    return added;
}

/* Errors of the latencies relative to the references, over the measured
 * points that are not single-device mappings. */
static double ratio_mape(const point *p, int n, int fast_only, double *worst)
{
    double s = 0, w = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!counted(&p[i], fast_only) || p[i].single) continue;
        double pr = p[i].pred_lat / p[i].pred_ref, e = 100.0 * fabs(pr - p[i].meas_ratio) / p[i].meas_ratio;
        s += e;
        if (e > w) w = e;
        k++;
    }
    *worst = w;
    return k ? s / k : NAN;
}

/* Mean absolute percentage error of latency (lat) or memory over the
 * measured points (fast_only: whose kept run was not a slow launch); *worst
 * the largest, *within10 how many were within +-10%. */
static double mean_abs_pct(const point *p, int n, int lat, int fast_only, double *worst, int *within10)
{
    double s = 0, w = 0;
    int k = 0, in = 0;
    for (int i = 0; i < n; i++) {
        if (!counted(&p[i], fast_only)) continue;
        double pr = lat ? p[i].pred_lat : p[i].pred_mem, me = lat ? p[i].meas_lat : p[i].meas_mem;
        double e = 100.0 * fabs(pr - me) / me;
        s += e;
        if (e > w) w = e;
        in += e <= 10;
        k++;
    }
    *worst = w;
    if (within10) *within10 = in;
    return k ? s / k : NAN;
}

/* "key": v in JSON, null when v is not a number (a figure over no mappings,
 * or without --pair); a comma after it when more follows. */
static void jnum(FILE *f, const char *key, double v, int more)
{
    if (isfinite(v)) fprintf(f, "\"%s\": %.4f%s", key, v, more ? ", " : "");
    else fprintf(f, "\"%s\": null%s", key, more ? ", " : "");
}

/* The summary's figures over the measured points (fast_only: those whose
 * kept run was a fast launch). */
typedef struct {
    int k, within10;                    /* mappings; latency within +-10% */
    double mape_l, worst_l, rho_l;      /* latency */
    double mape_m, worst_m, rho_m;      /* peak memory */
    int kr;                             /* --pair: mappings relative to their references */
    double mape_r, worst_r, rho_r;
} summary;

static void summarise(const point *pts, int n, int fast_only, int pair, summary *o)
{
    double *a = calloc((size_t)n + 1, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
    double *c = calloc((size_t)n + 1, sizeof *c), *d = calloc((size_t)n + 1, sizeof *d);
    memset(o, 0, sizeof *o);
    o->mape_l = o->worst_l = o->rho_l = o->mape_m = o->worst_m = o->rho_m = NAN;
    o->mape_r = o->worst_r = o->rho_r = NAN;
    if (!a || !b || !c || !d) { /* out of memory: every figure NAN */
        free(a), free(b), free(c), free(d);
        return;
    }
    for (int i = 0; i < n; i++)
        if (counted(&pts[i], fast_only)) {
            a[o->k] = pts[i].pred_lat, b[o->k] = pts[i].meas_lat;
            c[o->k] = pts[i].pred_mem, d[o->k++] = pts[i].meas_mem;
        }
    o->mape_l = mean_abs_pct(pts, n, 1, fast_only, &o->worst_l, &o->within10);
    o->mape_m = mean_abs_pct(pts, n, 0, fast_only, &o->worst_m, NULL);
    o->rho_l = calib_spearman(a, b, o->k);
    o->rho_m = calib_spearman(c, d, o->k);
    if (pair) { /* single-device mappings (1 by construction) left out */
        for (int i = 0; i < n; i++)
            if (counted(&pts[i], fast_only) && !pts[i].single)
                a[o->kr] = pts[i].pred_lat / pts[i].pred_ref, b[o->kr++] = pts[i].meas_ratio;
        o->mape_r = ratio_mape(pts, n, fast_only, &o->worst_r);
        o->rho_r = calib_spearman(a, b, o->kr);
    }
    free(a);
    free(b);
    free(c);
    free(d);
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

/* What the whole machine and our children (the job) used, to tell how much
 * of the CPU other processes took while a job ran. */
typedef struct {
    double wall, busy, mine; /* seconds */
} cpu_mark;

static cpu_mark cpu_mark_now(void)
{
    cpu_mark m = {base_now(), 0, 0};
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

/* One clean run of a mapping: before it, wait until the machine is quiet;
 * a run during which other processes took more than max_foreign of the
 * CPU is done again, for at most max_wait seconds, after which the least
 * disturbed run is kept.  With a probe (pr->retries >= 0) a slow launch
 * is done again too, at most pr->retries times, and a fast run is kept
 * before any slow one.  0, or -1 if the job failed. */
static int measure(const char *dse, const char *network, const char *plat_file, const char *mpath,
                   const char *bench, double timeout, const platform *pl, double quiet,
                   double max_wait, double max_foreign, probe *pr, const char *what, run_result *out)
{
    int ndev = pl->ndev;
    int warm = 4, reps = 20;
    if (sscanf(bench, "%d,%d", &warm, &reps) != 2) return -1;
    double t_start = base_now();
    int have = 0;
    memset(out, 0, sizeof *out);
    out->foreign = INFINITY;
    int slow_left = pr->retries, retry_slow = 0;
    while (!g_stop) {
        /* max_wait bounds the retries of disturbed runs; a slow launch's
         * retries are bounded by their count alone */
        if (have && !retry_slow && base_now() - t_start > max_wait) break;
        retry_slow = 0;
        wait_quiet(quiet, max_wait - (base_now() - t_start));
        char e[BASE_ERRLEN];
        rt_result r;
        rt_measure_opts mo = {dse, network, plat_file, mpath, -1, pl, NULL, NULL, NULL, warm, reps,
                              timeout, 1, NULL, 0, &g_stop, 0, pr->retries >= 0};
        cpu_mark m0 = cpu_mark_now();
        int jrc = rt_measure(&mo, &r, e);
        double foreign = cpu_foreign(&m0);
        if (jrc) {
            fprintf(stderr, "bench_fidelity: %s: run failed: %s\n", what, e);
            return -1;
        }
        double hop = NAN, tch = NAN;
        int slow = 0;
        if (pr->retries >= 0 && r.handoff.a >= 0 && r.handoff.hop_us > 0 && r.handoff.touch_us > 0) {
            hop = r.handoff.hop_us, tch = r.handoff.touch_us;
            slow = val_judge_launch(&r, pr->msg_us, &pr->touch_min);
            pr->launches++;
            pr->slow += slow;
        }
        if (!have || slow < out->slow || (slow == out->slow && foreign < out->foreign)) {
            double obj[COST_NOBJ];
            rt_objectives(&r, obj);
            out->lat = obj[COST_OBJ_LATENCY];
            out->mem = obj[COST_OBJ_MEMORY];
            out->foreign = foreign;
            out->hop_us = hop, out->touch_us = tch, out->slow = slow, out->moves = rt_moved_data(&r);
            for (int d = 0; d < ndev && d < MAXDEV && d < r.ndev; d++) {
                out->dev[d][0] = r.dev[d].busy_ms;
                out->dev[d][1] = r.dev[d].wait_ms;
                out->dev[d][2] = r.dev[d].finish_ms;
                out->dev[d][3] = r.dev[d].peak_rss_mb;
            }
            have = 1;
        }
        if (foreign > max_foreign) {
            fprintf(stderr, "     (run of %s disturbed: other processes took %.0f%% of the CPU; %s)\n", what,
                    100 * foreign, base_now() - t_start > max_wait ? "keeping the least disturbed" : "again");
            continue;
        }
        if (!slow) break;
        fprintf(stderr, "     (run of %s a slow launch: handoff %.0f us per pass, touch %.0f us; %s)\n", what,
                hop, tch, slow_left > 0 ? "again" : "no more tries: keeping the best run so far");
        if (slow_left-- <= 0) break;
        retry_slow = 1;
    }
    return have ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr,
                "usage: bench_fidelity --dse DSE --platform P --network N --coeffs C.json --out DIR\n"
                "         [--campaigns naive,hybrid:2,hybrid:4,vertical] [--pop 32] [--gens 20]\n"
                "         [--per-front 4] [--random 14] [--bench 4,20] [--rounds 1] [--seed 1]\n"
                "         [--timeout 600] [--quiet 0.9] [--max-wait 120] [--max-foreign 0.1]\n"
                "         [--pair] [--handoff N]\n"
                "The mappings are measured --rounds times, round after round over the whole\n"
                "list; each mapping's figure is its median run.  A run: wait until the machine\n"
                "is at least --quiet idle; a run during which other processes took more than\n"
                "--max-foreign of the CPU is done again, for at most --max-wait seconds, after\n"
                "which the least disturbed run is kept.  The CSV's last column is that share.\n"
                "--pair: before every run of a mapping, the single-device mappings of the\n"
                "devices it computes on are run, and its latency is also reported relative to\n"
                "theirs (weighted by its predicted compute time per device; the median over\n"
                "the rounds): the model's ratios, which cores whose speed drifts do not blur.\n"
                "--handoff N: every launch runs dse exec's handoff probe; a launch dse validate\n"
                "would call slow (data passed between two cores of a board far dearer than the\n"
                "model's message) is run again, at most N more times; the CSV says which kept\n"
                "runs were slow, and the summary adds the figures over the fast ones.\n");
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
    int rounds = atoi(opt(argc, argv, "--rounds", "1"));
    unsigned long seed = strtoul(opt(argc, argv, "--seed", "1"), NULL, 10);
    double timeout = atof(opt(argc, argv, "--timeout", "600"));
    double quiet = atof(opt(argc, argv, "--quiet", "0.9"));
    double max_wait = atof(opt(argc, argv, "--max-wait", "120"));
    double max_foreign = atof(opt(argc, argv, "--max-foreign", "0.1"));
    int pair = 0;
    for (int i = 1; i < argc; i++) pair |= !strcmp(argv[i], "--pair");
    const char *ho = opt(argc, argv, "--handoff", NULL);
    char *hend = NULL;
    long hn = ho ? strtol(ho, &hend, 10) : -1;
    probe pr = {(int)hn, NAN, INFINITY, 0, 0};
    if (ho && (hend == ho || *hend || hn < 0 || hn > 100)) {
        fprintf(stderr, "bench_fidelity: --handoff takes the number of repeats of a slow launch (0 to 100), not \"%s\"\n", ho);
        return 2;
    }
    if (!dse || !plat_arg || !network || !coeffs || !out || rounds < 1 || rounds > MAXROUNDS) {
        fprintf(stderr, "bench_fidelity: --dse, --platform, --network, --coeffs and --out are required\n");
        return 2;
    }
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
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
    if (pr.retries >= 0) {
        int a, b;
        if (!platform_cpu_pair(pl, &a, &b)) {
            fprintf(stderr, "bench_fidelity: --handoff: no board of %s has two CPU devices; no probe\n", plat_arg);
            pr.retries = -1;
        } else
            pr.msg_us = cost_message_s(cm, a, b, RT_HANDOFF_BYTES) * 1e6;
    }
    signal(SIGINT, on_sig);
    int ndev = pl->ndev, n = 0;
    if (ndev > MAXDEV) {
        fprintf(stderr, "bench_fidelity: at most %d devices\n", MAXDEV);
        return 2;
    }
    point *pts = calloc(MAXMAP, sizeof *pts);

    /* 1. Single-device mappings. */
    for (int d = 0; d < ndev; d++) {
        mapping *m = mapping_new(nt->n, ndev);
        char src[64];
        mapping_set_single(m, nt, d);
        snprintf(src, sizeof src, "single %s", pl->dev[d].name);
        if (add_point(pts, &n, m, src, nt)) pts[n - 1].single = 1 + d;
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
    char csv[600];
    snprintf(csv, sizeof csv, "%s/%s.csv", out, nt->name);
    FILE *f = fopen(csv, "w");
    if (!f) {
        fprintf(stderr, "bench_fidelity: %s: %s\n", csv, strerror(errno));
        return 1;
    }
    fprintf(f, "index,source,pred_latency_ms,meas_latency_ms,pred_memory_mb,meas_memory_mb,foreign%s%s\n",
            pair ? ",ref_latency_ms,meas_ratio,pred_ratio" : "", pr.retries >= 0 ? ",hop_us,touch_us,slow_launch,reference_slow" : "");
    /* Per device, for diagnosis: where predicted and measured time go. */
    snprintf(csv, sizeof csv, "%s/%s-devices.csv", out, nt->name);
    FILE *fd = fopen(csv, "w");
    if (fd)
        fprintf(fd, "index,device,pred_busy_ms,meas_busy_ms,pred_wait_ms,meas_wait_ms,"
                    "pred_finish_ms,meas_finish_ms,pred_memory_mb,meas_memory_mb\n");
    /* Predictions and mapping files first. */
    for (int i = 0; i < n; i++) {
        point *P = &pts[i];
        cost_result cr;
        P->pred_ok = 0;
        if (plan_build(p, nt, P->m, pl->source, err) || cost_eval(cm, p, &cr, P->pd)) {
            fprintf(stderr, "bench_fidelity: %s: cannot predict\n", P->source);
            continue;
        }
        P->pred_lat = cr.latency_ms;
        P->pred_mem = cr.mem_mb;
        snprintf(P->mpath, sizeof P->mpath, "%s/%s-mapping-%d.json", out, nt->name, i);
        if (mapping_save(P->m, nt, pl, P->mpath, err)) {
            fprintf(stderr, "bench_fidelity: %s\n", err);
            continue;
        }
        P->pred_ok = 1;
    }
    /* Measurements in rounds over the whole list: a machine whose speed
     * drifts over minutes (other virtual machines on the host) then
     * shifts every mapping alike, and each mapping's figure is the median
     * over the rounds. */
    int single_of[MAXDEV]; /* the point of each device's single-device mapping */
    for (int d = 0; d < ndev; d++) single_of[d] = -1;
    for (int i = 0; i < n; i++)
        if (pts[i].single && pts[i].pred_ok) single_of[pts[i].single - 1] = i;
    for (int i = 0; pair && i < n; i++) {
        point *P = &pts[i];
        double tot = 0;
        for (int d = 0; d < ndev; d++) tot += P->pd[d].used ? P->pd[d].compute_s + P->pd[d].concat_s : 0;
        for (int d = 0; d < ndev && P->pred_ok; d++) {
            P->w[d] = P->pd[d].used && tot > 0 ? (P->pd[d].compute_s + P->pd[d].concat_s) / tot : 0;
            if (P->w[d] > 0 && single_of[d] < 0) {
                fprintf(stderr, "bench_fidelity: --pair: no single-device mapping of %s\n", pl->dev[d].name);
                return 1;
            }
            if (P->w[d] > 0) P->pred_ref += P->w[d] * pts[single_of[d]].pred_lat;
        }
    }
    double *refs = calloc((size_t)n * rounds * (ndev + 1) + 1, sizeof *refs); /* every reference run */
    int nrefs = 0;
    for (int round = 0; round < rounds && !g_stop; round++) {
        for (int i = 0; i < n && !g_stop; i++) {
            point *P = &pts[i];
            if (!P->pred_ok || P->failed) continue;
            run_result R;
            double ref = NAN;
            int pass_slow = 0;
            double touch_max = 0;
            if (pair && !P->single) {
                ref = 0;
                for (int d = 0; d < ndev && !isnan(ref); d++) {
                    if (P->w[d] <= 0) continue;
                    const point *S = &pts[single_of[d]];
                    if (measure(dse, network, plat_arg, S->mpath, bench, timeout, pl, quiet,
                                max_wait, max_foreign, &pr, S->source, &R))
                        ref = NAN;
                    else {
                        ref += P->w[d] * (refs[nrefs++] = R.lat);
                        /* the pass criterion alone: no fastest touch to beat */
                        pass_slow |= R.hop_us > 0 && val_launch_slow(R.hop_us, R.touch_us, R.moves, pr.msg_us, INFINITY);
                        if (R.touch_us > touch_max) touch_max = R.touch_us;
                    }
                }
                if (isnan(ref)) {
                    P->failed = 1;
                    continue;
                }
            }
            if (measure(dse, network, plat_arg, P->mpath, bench, timeout, pl, quiet, max_wait,
                        max_foreign, &pr, P->source, &R)) {
                P->failed = 1;
                continue;
            }
            if (pair && P->single) ref = refs[nrefs++] = R.lat;
            P->ref[P->nruns] = ref;
            P->ref_pass_slow[P->nruns] = pass_slow;
            P->ref_touch_max[P->nruns] = touch_max;
            P->runs[P->nruns++] = R;
            fprintf(stderr, "%3d/%d round %d %-26s latency %9.3f ms predicted %9.3f (%+6.1f%%)   memory %8.1f MB predicted %8.1f (%+6.1f%%)  foreign %.2f%s\n",
                    i + 1, n, round + 1, P->source, R.lat, P->pred_lat,
                    100 * (P->pred_lat - R.lat) / R.lat, R.mem, P->pred_mem,
                    100 * (P->pred_mem - R.mem) / R.mem, R.foreign, R.slow ? "  SLOW LAUNCH" : "");
        }
    }
    int nok = 0;
    for (int i = 0; i < n; i++) {
        point *P = &pts[i];
        if (P->failed || !P->nruns) continue;
        /* The run with the median latency (the lower middle one). */
        int order[MAXROUNDS];
        for (int r = 0; r < P->nruns; r++) order[r] = r;
        for (int r = 1; r < P->nruns; r++)
            for (int q = r; q > 0 && P->runs[order[q]].lat < P->runs[order[q - 1]].lat; q--) {
                int t = order[q];
                order[q] = order[q - 1];
                order[q - 1] = t;
            }
        const run_result *M = &P->runs[order[(P->nruns - 1) / 2]];
        P->ok = 1;
        P->meas_lat = M->lat;
        P->meas_mem = M->mem;
        P->foreign = M->foreign;
        /* Slow: the kept run, or a reference beside any of its runs (the
         * ratio is the median over the rounds), judged at the end. */
        int ref_slow = 0;
        for (int r = 0; r < P->nruns; r++)
            ref_slow |= P->ref_pass_slow[r] ||
                        (P->ref_touch_max[r] > 0 && val_launch_slow(0, P->ref_touch_max[r], 0, pr.msg_us, pr.touch_min));
        P->slow = slow_at_end(M, &pr) || ref_slow;
        nok++;
        fprintf(f, "%d,%s,%.4f,%.4f,%.3f,%.3f,%.3f", i, P->source, P->pred_lat, P->meas_lat,
                P->pred_mem, P->meas_mem, P->foreign);
        if (pair) {
            double ra[MAXROUNDS], rr[MAXROUNDS];
            for (int r = 0; r < P->nruns; r++) ra[r] = P->runs[r].lat / P->ref[r], rr[r] = P->ref[r];
            P->meas_ratio = base_median(ra, P->nruns);
            P->ref_lat = base_median(rr, P->nruns);
            fprintf(f, ",%.4f,%.5f,%.5f", P->ref_lat, P->meas_ratio, P->pred_lat / P->pred_ref);
        }
        if (pr.retries >= 0) fprintf(f, ",%.1f,%.1f,%d,%d", M->hop_us, M->touch_us, slow_at_end(M, &pr), ref_slow);
        fputc('\n', f);
        for (int d = 0; fd && d < ndev; d++)
            if (P->pd[d].used)
                fprintf(fd, "%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f\n", i, pl->dev[d].name,
                        (P->pd[d].compute_s + P->pd[d].concat_s) * 1e3, M->dev[d][0],
                        P->pd[d].wait_s * 1e3, M->dev[d][1], P->pd[d].finish_s * 1e3, M->dev[d][2],
                        P->pd[d].mem_mb, M->dev[d][3]);
    }
    (void)nok;
    fclose(f);
    if (fd) fclose(fd);

    /* 5. Summary: over every measured mapping, and with --handoff over
     * those whose kept run was a fast launch. */
    summary all, fast;
    summarise(pts, n, 0, pair, &all);
    printf("| %s | %d | %.1f%% | %.1f%% | %.3f | %.1f%% | %.1f%% | %.3f |\n", nt->name, all.k, all.mape_l,
           all.worst_l, all.rho_l, all.mape_m, all.worst_m, all.rho_m);
    double spread = NAN;
    if (pair) {
        double lo = INFINITY, hi = 0;
        for (int r = 0; r < nrefs; r++) lo = fmin(lo, refs[r]), hi = fmax(hi, refs[r]);
        spread = nrefs ? hi / lo : NAN;
        printf("relative to the single-device runs beside them (%d mappings; %d reference runs, "
               "slowest/fastest %.2f): latency MAPE %.1f%%, worst %.1f%%, Spearman %.3f\n", all.kr,
               nrefs, spread, all.mape_r, all.worst_r, all.rho_r);
    }
    if (pr.retries >= 0) {
        summarise(pts, n, 1, pair, &fast);
        printf("handoff probe: %d launches, %d slow (model's 2 MB message %.0f us, fastest touch %.0f us); "
               "%d of %d mappings kept a fast launch: latency MAPE %.1f%%, worst %.1f%%, Spearman %.3f, "
               "%d within +-10%% (all mappings: %d of %d)", pr.launches, pr.slow, pr.msg_us, pr.touch_min,
               fast.k, all.k, fast.mape_l, fast.worst_l, fast.rho_l, fast.within10, all.within10, all.k);
        if (pair) printf("; relative MAPE %.1f%%, Spearman %.3f", fast.mape_r, fast.rho_r);
        putchar('\n');
    }
    char sum[600];
    snprintf(sum, sizeof sum, "%s/%s-summary.json", out, nt->name);
    FILE *s = fopen(sum, "w");
    if (s) {
        fprintf(s, "{\"network\": \"%s\", \"mappings\": %d, \"latency\": {", nt->name, all.k);
        jnum(s, "mape", all.mape_l, 1), jnum(s, "worst", all.worst_l, 1), jnum(s, "spearman", all.rho_l, 1);
        fprintf(s, "\"within10\": %d}, \"memory\": {", all.within10);
        jnum(s, "mape", all.mape_m, 1), jnum(s, "worst", all.worst_m, 1), jnum(s, "spearman", all.rho_m, 0);
        fputc('}', s);
        if (pair) {
            fprintf(s, ", \"relative\": {\"mappings\": %d, \"reference_runs\": %d, ", all.kr, nrefs);
            jnum(s, "reference_spread", spread, 1), jnum(s, "mape", all.mape_r, 1);
            jnum(s, "worst", all.worst_r, 1), jnum(s, "spearman", all.rho_r, 0);
            fputc('}', s);
        }
        if (pr.retries >= 0) {
            fprintf(s, ", \"handoff\": {\"launches\": %d, \"slow\": %d, ", pr.launches, pr.slow);
            jnum(s, "message_us", pr.msg_us, 1);
            fprintf(s, "\"fast_mappings\": %d, \"within10\": %d, ", fast.k, fast.within10);
            jnum(s, "mape", fast.mape_l, 1), jnum(s, "worst", fast.worst_l, 1), jnum(s, "spearman", fast.rho_l, 1);
            jnum(s, "relative_mape", fast.mape_r, 1), jnum(s, "relative_spearman", fast.rho_r, 0);
            fputc('}', s);
        }
        fputs("}\n", s);
        fclose(s);
    }
    free(refs);
    for (int i = 0; i < n; i++) mapping_free(pts[i].m);
    free(pts);
    plan_free(p);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    net_free(nt);
    return g_stop ? 1 : 0;
}
