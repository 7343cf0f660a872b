/* cmd_calibrate.c -- `dse calibrate` (fit the analytical model on the
 * boards, calib/calib.h) and `dse calib-worker` (internal: the measuring
 * ranks it launches under mpirun).
 *
 * Invariant: the coefficients file and the database row appear together
 * at the very end or not at all; bad input is refused before anything is
 * measured (exit 2), a failed, timed-out or interrupted job leaves nothing
 * behind (exit 1).
 */
#include "calib.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
    "usage: dse calibrate --platform P --network N [--network N2 ...] -o COEFFS.json\n"
    "                     [--quick] [--db F] [--reps R] [--timeout SEC] [--hostfile F]\n"
    "                     [--seed S] [--keep DIR]\n"
    "Measures the platform's devices through the MPI runtime (one rank per device,\n"
    "launched with mpirun) and fits the analytical model's coefficients by least\n"
    "squares: per-layer and per-layer-kind compute rates and step overheads (every\n"
    "layer timed alone at channel shares 1, 1/2, 1/3, 1/4), the cost of bands of\n"
    "1/2, 1/4, 1/8 of each layer's rows and of its columns against their share of\n"
    "it, concat copy bandwidth, link latency and bandwidth per link class (ping-pong,\n"
    "1 KB to 64 MB), memory coefficient and bias (runs with one layer on its own\n"
    "device), and power where a sensor exists (else the platform's declared\n"
    "figures).  Writes COEFFS.json with\n"
    "every fit's R^2, stores it with the full fit report in the database (default\n"
    "./dse.db) and prints a summary; fits with R^2 < 0.9 are flagged.\n"
    "  --quick      fewer shares, message sizes and probe layers (minutes, not more)\n"
    "  --reps R     timed runs per median (at least and by default 20), after warm-up\n"
    "  --timeout S  deadline of each launched job (default 3600)\n"
    "  --hostfile F your own mpirun hostfile (default: rank r on device r's board)\n"
    "  --keep DIR   keep the raw measurements and the memory-run mappings in DIR\n";

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig;
}

static void on_progress(void *ctx, const char *line)
{
    (void)ctx;
    char t[2 * BASE_ERRLEN];
    fprintf(stderr, "calibrate: %s\n", cli_inert(t, sizeof t, line));
}

static void print_summary(const calib_result *r, const char *platform, const char *const *nets,
                          int nn, int reps)
{
    char t[512];
    printf("calibration of %s on", cli_inert(t, sizeof t, platform));
    for (int i = 0; i < nn; i++) printf("%s %s", i ? "," : "", cli_inert(t, sizeof t, nets[i]));
    printf(": %.0f s, median of %d timed runs per timing\n", r->seconds, reps);
    printf("%-40s %-18s %14s  %-8s %7s %12s %5s\n", "fit", "parameter", "value", "source", "R^2",
           "rmse", "n");
    for (int i = 0; i < r->nrows; i++) {
        const calib_row *w = &r->rows[i];
        char r2[16] = "-", rmse[24] = "-";
        if (isfinite(w->r2)) snprintf(r2, sizeof r2, "%.4f", w->r2);
        if (isfinite(w->rmse)) snprintf(rmse, sizeof rmse, "%.4g", w->rmse);
        printf("%-40.40s %-18s %14.6g  %-8s %7s %12s %5d%s\n", w->what, w->param, w->value,
               coeffs_source_name(w->source), r2, rmse, w->n,
               w->flagged ? "  << R^2 below 0.9" : "");
    }
    printf("per-layer fits: %d, %d with R^2 below %.1f (listed above)\n", r->nlayer_fits,
           r->nlayer_flagged, CALIB_R2_FLAG);
    for (int a = 0; a < 2; a++)
        if (r->nband_layers[a])
            printf("%s bands: %d layers timed, %d with a band table (their bands cost over 5%% "
                   "more or less than their share of the layer)\n",
                   a ? "column" : "row", r->nband_layers[a], r->nband_tables[a]);
    if (r->ncorun_layers) {
        char nm[200];
        printf("shared memory: %d layers timed beside another device of their board, %d of at "
               "least 20 us over 5%% slower so (corun factors", r->ncorun_layers, r->ncorun_factors);
        if (r->ncorun_factors)
            printf("; the largest %.2f, %s", r->corun_max, cli_inert(nm, sizeof nm, r->corun_layer));
        printf(")\n");
    }
    printf("(rmse: microseconds for times, MB for memory; layers that are never split keep "
           "their measured time exactly)\n");
}

int cmd_calibrate(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "calibrate", argc, argv, "quick", help);
    if (started >= 0) return started;
    calib_options o;
    memset(&o, 0, sizeof o);
    long reps = CALIB_REPS, seed = 1;
    double timeout = 3600;
    o.platform = cli_get(&a, "platform");
    o.nnetworks = cli_getall(&a, "network", o.networks, CALIB_MAX_NETS);
    o.hostfile = cli_get(&a, "hostfile");
    o.keep_dir = cli_get(&a, "keep");
    o.quick = cli_flag(&a, "quick");
    const char *outp = cli_get(&a, "o"), *dbpath = cli_get(&a, "db");
    if (!dbpath) dbpath = "dse.db";
    if (cli_int(&a, "reps", CALIB_REPS, CALIB_REPS, 100000, &reps) ||
        cli_int(&a, "seed", 1, 0, 1L << 40, &seed) ||
        cli_double(&a, "timeout", 3600, 1, 1e7, &timeout) || cli_finish(&a))
        return EXIT_USAGE;
    if (!o.platform || o.nnetworks < 1 || !outp) {
        cli_error("calibrate", "needs --platform, at least one --network and -o COEFFS.json");
        return EXIT_USAGE;
    }
    o.reps = (int)reps;
    o.seed = (uint64_t)seed;
    o.timeout_s = timeout;
    o.stop = &g_stop;
    o.progress = on_progress;

    /* Everything that can be refused is refused before measuring: the
     * inputs (calib_check reads the platform and networks), then the
     * outputs (the coefficients file and the database: usable, and none
     * of the inputs), then an existing database opened once. */
    int rc = calib_check(&o, err);
    if (rc) {
        cli_error("calibrate", "%s", err);
        return rc;
    }
    const char *outs[2] = {outp, dbpath};
    if (cli_outputs("calibrate", outs, 2)) return EXIT_USAGE;
    struct stat st;
    if (stat(dbpath, &st) == 0) {
        res_db *db = res_open(dbpath, RES_OPEN_WRITE, err);
        if (!db) {
            cli_error("calibrate", "%s", err);
            return EXIT_USAGE;
        }
        res_close(db);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    calib_result r;
    rc = calib_run(&o, &r, err);
    if (!rc && g_stop) {
        snprintf(err, sizeof err, "interrupted");
        rc = EXIT_FAIL;
    }
    if (rc) {
        cli_error("calibrate", "%s%s", err, rc == EXIT_FAIL ? "; no coefficients written" : "");
        calib_result_free(&r);
        return rc;
    }

    /* The database row first: if it fails, no file claims a calibration
     * the database does not hold. */
    char nets[1024] = "";
    for (int i = 0; i < o.nnetworks; i++) {
        size_t l = strlen(nets);
        snprintf(nets + l, sizeof nets - l, "%s%s", i ? "," : "", o.networks[i]);
    }
    char *json = coeffs_to_json(r.coeffs);
    res_db *db = json ? res_open(dbpath, RES_OPEN_CREATE, err) : NULL;
    long long id = 0;
    if (!json) snprintf(err, sizeof err, "out of memory");
    if (!db || res_calibration_add(db, o.platform, nets, json, r.report_json, &id, err) ||
        coeffs_save(r.coeffs, outp, err)) {
        cli_error("calibrate", "%s", err);
        res_close(db);
        free(json);
        calib_result_free(&r);
        return EXIT_FAIL;
    }
    res_close(db);
    free(json);
    if (r.warn[0]) cli_error("calibrate", "warning: %s", r.warn);
    print_summary(&r, o.platform, o.networks, o.nnetworks, o.reps);
    char t1[BASE_ERRLEN], t2[BASE_ERRLEN];
    printf("wrote %s; calibration %lld stored in %s\n", cli_inert(t1, sizeof t1, outp), id,
           cli_inert(t2, sizeof t2, dbpath));
    calib_result_free(&r);
    return EXIT_OK;
}

static const char worker_help[] =
    "usage: dse mpirun -np N dse calib-worker --platform P --network N [...] --out RAW.json\n"
    "                  [--reps R] [--seed S] [--quick]\n"
    "Internal: the measuring ranks of dse calibrate (one per device).\n";

int cmd_calib_worker(int argc, char **argv)
{
    cli_args a;
    int started = cli_start(&a, "calib-worker", argc, argv, "quick", worker_help);
    if (started >= 0) return started;
    calib_worker_opts o;
    memset(&o, 0, sizeof o);
    long reps = CALIB_REPS, seed = 1;
    o.platform = cli_get(&a, "platform");
    o.nnetworks = cli_getall(&a, "network", o.networks, CALIB_MAX_NETS);
    o.out = cli_get(&a, "out");
    o.quick = cli_flag(&a, "quick");
    if (cli_int(&a, "reps", CALIB_REPS, 3, 100000, &reps) ||
        cli_int(&a, "seed", 1, 0, 1L << 40, &seed) || cli_finish(&a))
        return EXIT_USAGE;
    if (!o.platform || !o.nnetworks || !o.out) {
        cli_error("calib-worker", "needs --platform, --network and --out");
        return EXIT_USAGE;
    }
    o.reps = (int)reps;
    o.seed = (uint64_t)seed;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char err[BASE_ERRLEN];
    int rc = calib_worker(&o, err);
    if (rank == 0 && rc) cli_error("calib-worker", "%s", err);
    MPI_Finalize();
    return rc;
}
