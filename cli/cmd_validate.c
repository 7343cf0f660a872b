/* cmd_validate.c -- `dse validate`: parse, run validate/'s workflow
 * (val_run), print predicted beside measured and the steps the model got
 * most wrong. */
#include "cli.h"
#include "validate.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: dse validate --campaign ID [--db F] [--top best|N] [--bench W,R]\n"
    "                    [--rounds K] [--timeout SEC] [--keep DIR] [--no-reference]\n"
    "                    [--no-beside] [--no-handoff] [--relaunch N]\n"
    "Runs the front's best point per objective (--top best, the default) or N points\n"
    "spread along the front on the campaign's platform through mpirun, then stores\n"
    "predicted vs measured per device, per objective and per Plan step in the database\n"
    "and prints the comparison and the steps with the largest errors.  --rounds K\n"
    "(default 3): every point is run K times, the points in turn in each round, and\n"
    "its median round is kept; points whose predictions differ by less than their\n"
    "rounds' spread are ties when the measured order is checked.  --timeout: the\n"
    "ranks' deadline per point (default: derived from the mapping, docs/runtime.md).\n"
    "--keep DIR keeps each point's mapping and measured trace.  Every round first\n"
    "runs the reference, the whole network on the device the model finds fastest\n"
    "alone: its measured over predicted latency says how far the machine has drifted\n"
    "from its calibration, and each point's latency over the reference's (column\n"
    "\"vs reference\") is what that drift leaves intact (--no-reference: skip it).\n"
    "Where its board has other CPU devices, the reference job then runs the network\n"
    "on all of them at once: its latency then over alone says how much they slow\n"
    "each other now (dse exec --beside; --no-beside: skip it).  Every launch also\n"
    "passes 2 MB between two CPUs of a board (dse exec --handoff; --no-handoff: not):\n"
    "a point's launch it finds slow is run again, at most N times (--relaunch,\n"
    "default 2; 0: never), and a point whose stored run was still a slow launch is\n"
    "named (docs/runtime.md).\n"
    "Exit 1 if any point failed (dead rank, timeout, wrong output).\n";

static volatile sig_atomic_t g_stop;
static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void on_progress(void *ctx, const char *line)
{
    (void)ctx;
    char t[2 * BASE_ERRLEN];
    fprintf(stderr, "validate: %s\n", cli_inert(t, sizeof t, line));
}

/* Whether the measurements ranked the points as the model did. */
static void print_order(const val_report *r)
{
    for (int k = 0; k < COST_NOBJ; k++) {
        int pairs, ties, wrong[8][2];
        int nw = val_order(r, k, &pairs, &ties, wrong, 8);
        if (!pairs) continue;
        printf("%s order: %d of %d pairs as predicted, %d tie%s (predictions closer than the "
               "rounds' spread), %d in the other order", cost_objectives[k].name, pairs - ties - nw,
               pairs, ties, ties == 1 ? "" : "s", nw);
        for (int w = 0; w < nw && w < 8; w++) {
            const val_point *A = &r->pts[wrong[w][0]], *B = &r->pts[wrong[w][1]];
            printf("%s points %d and %d", w ? "," : ":", A->idx, B->idx);
        }
        printf("\n");
    }
}

/* The reference beside its board's other CPUs (val_reference.beside_n):
 * how much they slow each other now; a warning past 10%. */
static void print_beside(const val_reference *R, const char *nm)
{
    if (!R->beside_n) return;
    if (isnan(R->beside_ratio)) {
        printf("beside: the reference with the %d other CPU device%s of its board busy at once: not "
               "measured\n", R->beside_n - 1, R->beside_n == 2 ? "" : "s");
        return;
    }
    printf("beside: the reference with the %d other CPU device%s of its board busy at once: %.3fx "
           "its latency alone (median over the rounds)\n", R->beside_n - 1, R->beside_n == 2 ? "" : "s",
           R->beside_ratio);
    if (R->beside_ratio - 1 > VAL_DRIFT_WARN)
        cli_error("validate", "warning: %s ran %.0f%% slower while the other CPUs of its board ran "
                  "the same network: this board's CPUs slow each other when busy together (a shared "
                  "memory bus -- layers that stream their weights, as large fully connected ones do "
                  "--, other work, or on a VM the host's cores); a mapping pays up to that much where "
                  "its devices compute at once, of which the model charges what the calibration "
                  "measured per layer (its corun factors; docs/runtime.md, \"beside\")", nm,
                  100 * (R->beside_ratio - 1));
}

/* How far the machine has drifted from its calibration (validate.h,
 * val_reference); a warning past 10%. */
static void print_reference(const val_report *r)
{
    const val_reference *R = &r->ref;
    if (R->dev < 0 || !R->nrounds) return;
    char why[BASE_ERRLEN], nm[200];
    cli_inert(nm, sizeof nm, R->name);
    if (isnan(R->meas_ms) || !(R->pred_ms > 0)) {
        printf("reference (the whole network on %s): not measured%s%s\n", nm,
               R->reason[0] ? ": " : "", cli_inert(why, sizeof why, R->reason));
        return;
    }
    double x = R->meas_ms / R->pred_ms;
    printf("reference: the whole network on %s alone, every round before the points: measured "
           "%.4g ms, predicted %.4g ms (measured / predicted %.4g)%s%s\n", nm, R->meas_ms,
           R->pred_ms, x, R->reason[0] ? "; " : "",
           R->reason[0] ? cli_inert(why, sizeof why, R->reason) : "");
    print_beside(R, nm);
    if (fabs(x - 1) <= VAL_DRIFT_WARN) return;
    char d[200], n[200];
    cli_inert(d, sizeof d, R->calib_date[0] ? R->calib_date : "date not given");
    cli_inert(n, sizeof n, r->network);
    const char *more = x > 1 ? "longer" : "less";
    if (!R->calibrated)
        cli_error("validate", "warning: a single-device run takes %.0f%% %s than predicted: the "
                  "model is not calibrated (built-in default coefficients); run dse calibrate",
                  100 * fabs(x - 1), more);
    else if (!R->calib_net)
        cli_error("validate", "warning: a single-device run takes %.0f%% %s than predicted: %s was "
                  "not among the networks calibrated on (the model prices its layers by kind); "
                  "dse calibrate --network %s gives it per-layer times", 100 * fabs(x - 1), more, n, n);
    else
        cli_error("validate", "warning: a single-device run takes %.0f%% %s than predicted: the "
                  "machine is not as it was when calibrated (%s): cores changed speed, other work, "
                  "a board throttled; latency errors of that size in the table are that drift, not the "
                  "mappings (compare \"vs reference\"), and dse calibrate again measures it as "
                  "it is now", 100 * fabs(x - 1), more, d);
}

/* "a, b (n), ...": the indices of the points a count picks (non-zero),
 * each with that count in parentheses when `counts` is set; returns how
 * many. */
static int point_list(const val_report *r, int (*count)(const val_point *), int counts, char *out,
                      size_t len)
{
    int k = 0;
    out[0] = '\0';
    for (int v = 0; v < r->n; v++) {
        int c = count(&r->pts[v]);
        if (!c) continue;
        size_t l = strlen(out);
        if (counts) snprintf(out + l, len - l, "%s%d (%d)", k ? ", " : "", r->pts[v].idx, c);
        else snprintf(out + l, len - l, "%s%d", k ? ", " : "", r->pts[v].idx);
        k++;
    }
    return k;
}

static int relaunches(const val_point *V) { return V->relaunched; }
static int slow_kept(const val_point *V) { return V->slow_launch; }

/* The handoff probes (val_handoff) and the points whose stored run was a
 * slow launch. */
static void print_handoff(const val_report *r)
{
    const val_handoff *H = &r->handoff;
    if (!H->n) return;
    char a[200], b[200];
    printf("handoff: %s <-> %s, 2 MB passed and touched, in each of %d launches: %.4g-%.4g us per pass "
           "(the model's message %.4g us + the same touch of its own data %.4g-%.4g us)",
           cli_inert(a, sizeof a, H->a), cli_inert(b, sizeof b, H->b), H->n, H->hop_min, H->hop_max,
           H->msg_us, H->touch_min, H->touch_max);
    char list[400];
    if (H->relaunched) {
        int k = point_list(r, relaunches, 1, list, sizeof list);
        printf("; %d slow launch%s run again: point%s %s", H->relaunched, H->relaunched == 1 ? "" : "es",
               k > 1 ? "s" : "", list);
    }
    putchar('\n');
    int k = point_list(r, slow_kept, 0, list, sizeof list);
    if (k)
        cli_error("validate", "warning: the stored run of point%s %s was a slow launch (a pass over "
                  "%.1fx what the model prices it at, or a touch over %.1fx the fastest: data passed "
                  "between cores, or the core itself, slower than calibrated): part of %s latency error "
                  "is the machine's, not the model's; run it again", k > 1 ? "s" : "", list,
                  VAL_HANDOFF_SLOW, VAL_TOUCH_SLOW, k > 1 ? "their" : "its");
}

static void print_report(const val_report *r, long long id)
{
    char nm[3][200];
    printf("campaign %lld (%s on %s, %s): predicted vs measured, %d warm-up + %d timed "
           "inferences, %d round%s (points in turn; the median round shown)\n", id,
           cli_inert(nm[0], sizeof nm[0], r->network), cli_inert(nm[1], sizeof nm[1], r->platform),
           cli_inert(nm[2], sizeof nm[2], r->chromosome), r->warmup, r->reps, r->rounds,
           r->rounds == 1 ? "" : "s");
    printf("%-14s %5s", "point", "index");
    for (int k = 0; k < COST_NOBJ; k++) {
        char h[64];
        snprintf(h, sizeof h, "%s %s", cost_objectives[k].name, cost_objectives[k].unit);
        printf(" | %12s %10s", h, "predicted");
    }
    int ref = r->ref.dev >= 0 && !isnan(r->ref.meas_ms);
    printf(" | %7s", "spread");
    if (ref) printf(" | %-22s", "vs reference: m / p");
    printf(" | status\n");
    int unmeasured = 0;
    for (int v = 0; v < r->n; v++) {
        const val_point *V = &r->pts[v];
        printf("%-14s %5d", V->why, V->idx);
        for (int k = 0; k < COST_NOBJ; k++) {
            if (isnan(V->meas[k])) printf(" | %12s", "n/m"), unmeasured = 1;
            else printf(" | %12.4g", V->meas[k]);
            printf(" %10.4g", V->pred[k]);
        }
        char why[BASE_ERRLEN];
        double sp = V->spread[COST_OBJ_LATENCY];
        if (isnan(sp) || V->nrounds < 2) printf(" | %7s", "-");
        else printf(" | %6.1f%%", 100 * (sp - 1));
        if (ref && (isnan(V->rel_meas) || !(V->rel_pred > 0))) printf(" | %-22s", "-");
        else if (ref) printf(" | %6.3f / %6.3f %+5.0f%%", V->rel_meas, V->rel_pred,
                             100 * (V->rel_meas - V->rel_pred) / V->rel_pred);
        printf(" | %s%s%s\n", V->status, V->reason[0] ? ": " : "",
               cli_inert(why, sizeof why, V->reason));
    }
    if (unmeasured)
        printf("(n/m: not measured -- energy needs a sensor named in the platform; memory is "
               "each rank's peak RSS)\n");
    if (r->rounds > 1)
        printf("(spread: the point's slowest round over its fastest, in latency)\n");
    print_reference(r);
    print_handoff(r);
    print_order(r);
    for (int v = 0; v < r->n; v++) {
        const val_point *V = &r->pts[v];
        if (!V->nworst) continue;
        printf("point %d: compute steps the model got most wrong (median measured vs predicted)\n",
               V->idx);
        for (int w = 0; w < V->nworst; w++) {
            const res_step *s = &V->worst[w];
            printf("  %-12s step %4d layer %4d [%d,+%d)  measured %8.3f ms  predicted %8.3f ms  "
                   "(%+.0f%%)\n", V->worst_dev[w], s->step, s->layer, s->c0, s->nc, s->meas_med_ms,
                   s->pred_ms, s->pred_ms > 0 ? 100 * (s->meas_med_ms - s->pred_ms) / s->pred_ms : 0);
        }
    }
}

int cmd_validate(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN] = "";
    int started = cli_start(&a, "validate", argc, argv, "no-reference no-beside no-handoff", help);
    if (started >= 0) return started;
    long id = -1, top = 0;
    double timeout = -1;
    const char *tops = cli_get(&a, "top"), *bench = cli_get(&a, "bench");
    val_options o;
    memset(&o, 0, sizeof o);
    o.db = cli_get(&a, "db");
    o.keep = cli_get(&a, "keep");
    o.no_reference = cli_flag(&a, "no-reference");
    o.no_beside = cli_flag(&a, "no-beside");
    o.no_handoff = cli_flag(&a, "no-handoff");
    long rounds, relaunch;
    if (cli_int(&a, "campaign", -1, 1, 1L << 50, &id) ||
        cli_int(&a, "rounds", 3, 1, VAL_MAX_ROUNDS, &rounds) ||
        cli_int(&a, "relaunch", 2, 0, 10, &relaunch) ||
        cli_double(&a, "timeout", -1, 1, 1e6, &timeout) || cli_finish(&a))
        return EXIT_USAGE;
    if (id < 0) {
        cli_error("validate", "--campaign ID is required");
        return EXIT_USAGE;
    }
    if (tops && strcmp(tops, "best")) {
        char *end;
        top = strtol(tops, &end, 10);
        if (end == tops || *end || top < 1 || top > 1000) {
            cli_error("validate", "--top must be best or a number of points in [1, 1000]");
            return EXIT_USAGE;
        }
    }
    o.rounds = (int)rounds;
    o.relaunch = (int)relaunch;
    o.warmup = 4, o.reps = 20;
    if (bench && cli_bench(bench, &o.warmup, &o.reps)) {
        cli_error("validate", "--bench must be W,R with 0 <= W <= 100000 warm-up and 1 <= R <= "
                  "100000 timed inferences, not \"%s\"", bench);
        return EXIT_USAGE;
    }
    o.campaign = id;
    o.top = (int)top;
    o.timeout_s = timeout;
    o.progress = on_progress;
    o.stop = &g_stop;
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    val_report r;
    int rc = val_run(&o, &r, err);
    if (rc == 2 || (rc == 1 && !r.n)) {
        cli_error("validate", "%s", err);
        val_report_free(&r);
        return rc;
    }
    if (r.warn[0]) cli_error("validate", "warning: %s", r.warn);
    print_report(&r, id);
    if (rc && err[0]) cli_error("validate", "%s", err);
    val_report_free(&r);
    return rc ? EXIT_FAIL : EXIT_OK;
}
