/* cmd_exec.c -- `dse exec` (one rank per device, under mpirun) and
 * `dse mpirun` (the one launcher tests, scripts and `dse validate` share). */
#include "cli.h"
#include "jsonutil.h"
#include "exec.h"
#include "launch.h"

#include <cJSON.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char exec_help[] =
    "usage: dse mpirun -np N dse exec --network N --platform P --mapping M.json\n"
    "         [--input IN.f32] [--output OUT.f32] [--bench W,R] [--seed S]\n"
    "         [--timeout SEC] [--no-check] [--json] [--trace FILE.json]\n"
    "       (or --single DEV instead of --mapping: the whole network on one device)\n"
    "Runs the mapping's plan with real kernels, rank r = device r.  --bench W,R:\n"
    "W warm-up and R timed inferences (default 1,3: latencies are warm; --bench 0,1\n"
    "times one cold first inference, and the record then says \"latency_kind\": \"cold\").\n"
    "The first output is checked against the single-device run (1e-4 relative).\n"
    "--trace FILE: the start and end of every step on every rank, on a clock common to\n"
    "all ranks, for the timed inference of median latency (Chrome trace-event JSON:\n"
    "open it in ui.perfetto.dev; compare with dse eval --trace; docs/traces.md).\n";

/* Latencies after a warm-up are warm; without one, the first inference
 * pays page faults, weight streaming from cold memory, MPI connection
 * set-up: a cold figure nobody should compare with a prediction. */
static const char *latency_kind(int warm) { return warm > 0 ? "warm" : "cold"; }

static void print_text(const rt_result *r, int warm, int reps)
{
    printf("latency (%s: %d warm-up, %d timed): median %.3f ms (min %.3f, max %.3f), output on "
           "%s\n", latency_kind(warm), warm, reps, r->lat_med_ms, r->lat_min_ms, r->lat_max_ms,
           r->dev[r->out_dev].name);
    printf("%-14s %6s %10s %10s %10s %12s %12s %10s %10s\n", "device", "steps", "busy ms",
           "wait ms", "finish ms", "sent B", "recv B", "peak MB", "energy J");
    for (int d = 0; d < r->ndev; d++) {
        const rt_device *D = &r->dev[d];
        char e[32];
        if (D->energy_measured) snprintf(e, sizeof e, "%.4f", D->energy_j);
        else snprintf(e, sizeof e, "not measured");
        printf("%-14s %6d %10.3f %10.3f %10.3f %12lld %12lld %10.1f %10s\n", D->name, D->nsteps,
               D->busy_ms, D->wait_ms, D->finish_ms, (long long)D->bytes_sent,
               (long long)D->bytes_recv, D->peak_rss_mb, e);
    }
    if (r->checked)
        printf("check: output equals the single-device run (max relative error %.2g, max "
               "absolute %.2g)\n", r->max_rel_err, r->max_abs_err);
}

static void print_json(const rt_result *r, int warm, int reps)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "warmup", warm);
    cJSON_AddNumberToObject(o, "reps", reps);
    cJSON_AddStringToObject(o, "latency_kind", latency_kind(warm));
    cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
    cJSON_AddNumberToObject(l, "median", r->lat_med_ms);
    cJSON_AddNumberToObject(l, "min", r->lat_min_ms);
    cJSON_AddNumberToObject(l, "max", r->lat_max_ms);
    cJSON_AddStringToObject(o, "output_device", r->dev[r->out_dev].name);
    cJSON *c = cJSON_AddObjectToObject(o, "check");
    cJSON_AddBoolToObject(c, "done", r->checked);
    cJSON_AddBoolToObject(c, "ok", r->checked && r->check_ok);
    cJSON_AddNumberToObject(c, "max_rel_err", r->max_rel_err);
    cJSON_AddNumberToObject(c, "max_abs_err", r->max_abs_err);
    cJSON *ds = cJSON_AddArrayToObject(o, "devices");
    double emax = 0, mmax = 0;
    int all_e = 1;
    for (int d = 0; d < r->ndev; d++) {
        const rt_device *D = &r->dev[d];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", D->name);
        cJSON_AddNumberToObject(j, "rank", d);
        cJSON_AddNumberToObject(j, "steps", D->nsteps);
        cJSON_AddNumberToObject(j, "busy_ms", D->busy_ms);
        cJSON_AddNumberToObject(j, "wait_ms", D->wait_ms);
        cJSON_AddNumberToObject(j, "finish_ms", D->finish_ms);
        cJSON_AddNumberToObject(j, "bytes_sent", (double)D->bytes_sent);
        cJSON_AddNumberToObject(j, "bytes_recv", (double)D->bytes_recv);
        cJSON_AddNumberToObject(j, "peak_rss_mb", D->peak_rss_mb);
        if (D->energy_measured) cJSON_AddNumberToObject(j, "energy_j", D->energy_j);
        else cJSON_AddNullToObject(j, "energy_j");
        cJSON_AddItemToArray(ds, j);
        if (D->nsteps) {
            if (D->peak_rss_mb > mmax) mmax = D->peak_rss_mb;
            if (D->energy_measured && D->energy_j > emax) emax = D->energy_j;
            if (!D->energy_measured) all_e = 0;
        }
    }
    cJSON *ob = cJSON_AddObjectToObject(o, "objectives");
    if (all_e) cJSON_AddNumberToObject(ob, "energy_j", emax);
    else cJSON_AddNullToObject(ob, "energy_j");
    cJSON_AddNumberToObject(ob, "memory_mb", mmax);
    cJSON_AddNumberToObject(ob, "latency_ms", r->lat_med_ms);
    char *t = ju_print(o, 1);
    puts(t);
    free(t);
    cJSON_Delete(o);
}

int cmd_exec(int argc, char **argv)
{
    cli_args a;
    rt_options o;
    memset(&o, 0, sizeof o);
    if (cli_parse(&a, "exec", argc, argv, "json help no-check")) return EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        fputs(exec_help, stdout);
        return EXIT_OK;
    }
    long single = -1, seed = 1;
    double timeout = 0;
    int json = cli_flag(&a, "json");
    o.network = cli_get(&a, "network");
    o.platform = cli_get(&a, "platform");
    o.mapping = cli_get(&a, "mapping");
    o.input = cli_get(&a, "input");
    o.output = cli_get(&a, "output");
    o.trace = cli_get(&a, "trace");
    o.check = !cli_flag(&a, "no-check");
    const char *bench = cli_get(&a, "bench");
    if (cli_int(&a, "single", -1, 0, 63, &single) || cli_int(&a, "seed", 1, 0, 1L << 40, &seed) ||
        cli_double(&a, "timeout", 0, 0, 1e6, &timeout) || cli_finish(&a))
        return EXIT_USAGE;
    o.single_dev = (int)single;
    o.seed = (uint64_t)seed;
    o.timeout_s = timeout;
    o.warmup = 1; /* warm by default: see latency_kind */
    o.reps = 3;
    if (bench && (sscanf(bench, "%d,%d", &o.warmup, &o.reps) != 2 || o.warmup < 0 || o.reps < 1)) {
        cli_error("exec", "--bench must be W,R with W >= 0 warm-up and R >= 1 timed inferences");
        return EXIT_USAGE;
    }
    if (!o.network || !o.platform || (!o.mapping && single < 0) || (o.mapping && single >= 0)) {
        cli_error("exec", "needs --network, --platform and either --mapping or --single");
        return EXIT_USAGE;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rt_result r;
    char err[NET_ERRLEN];
    int rc = rt_exec(&o, &r, err);
    if (rank == 0) {
        if (rc) cli_error("exec", "%s", err);
        else if (json) print_json(&r, o.warmup, o.reps);
        else print_text(&r, o.warmup, o.reps);
        fflush(stdout);
    }
    MPI_Finalize();
    return rc;
}

static const char mpirun_help[] =
    "usage: dse mpirun -np N [--hostfile F] PROGRAM [ARGS...]\n"
    "Runs mpirun with what Open MPI needs on this machine (root allowed,\n"
    "--oversubscribe); tests, scripts and dse validate launch through it.\n";

int cmd_mpirun(int argc, char **argv)
{
    int np = 0, i = 1;
    const char *hostfile = NULL;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-np") || !strcmp(argv[i], "-n")) {
            if (i + 1 >= argc || (np = atoi(argv[++i])) < 1) break;
        } else if (!strcmp(argv[i], "--hostfile")) {
            if (i + 1 >= argc) break;
            hostfile = argv[++i];
        } else if (!strcmp(argv[i], "--help")) {
            fputs(mpirun_help, stdout);
            return EXIT_OK;
        } else {
            break;
        }
    }
    if (np < 1 || i >= argc) {
        fputs(mpirun_help, stderr);
        return EXIT_USAGE;
    }
    const char **av = calloc((size_t)(argc - i) + 16, sizeof *av);
    /* A bare "dse" means this very program. */
    if (!strcmp(argv[i], "dse")) argv[i] = (char *)rt_self_exe();
    rt_mpirun_argv(np, hostfile, NULL, (const char *const *)argv + i, argc - i, av);
    rt_mpirun_env();
    execvp(av[0], (char *const *)av);
    cli_error("mpirun", "cannot run mpirun: install openmpi-bin (scripts/bootstrap)");
    free(av);
    return EXIT_FAIL;
}
