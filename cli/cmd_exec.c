/* cmd_exec.c -- `dse exec` (one rank per device, under mpirun) and
 * `dse mpirun` (the one launcher tests, scripts and `dse validate` share). */
#include "cli.h"
#include "jsonutil.h"
#include "runtime.h"

#include <cJSON.h>
#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

static const char exec_help[] =
    "usage: dse mpirun -np N dse exec --network N --platform P --mapping M.json\n"
    "         [--input IN.f32] [--output OUT.f32] [--bench W,R] [--seed S]\n"
    "         [--timeout SEC] [--no-check] [--json] [--trace FILE.json] [--handoff]\n"
    "       (or --single DEV [--beside] instead of --mapping: the whole network on one device;\n"
    "       --mapping also takes a folder of AutoDiCE's files: docs/mapping-format.md)\n"
    "--timeout SEC: a rank running longer aborts the job (0: wait forever; default:\n"
    "derived from the mapping, docs/runtime.md, at least 600 s).\n"
    "Runs the mapping's plan with real kernels, rank r = device r.  --bench W,R:\n"
    "W warm-up and R timed inferences (default 1,3: latencies are warm; --bench 0,1\n"
    "times one cold first inference, and the record then says \"latency_kind\": \"cold\").\n"
    "The first output is checked against the single-device run (1e-4 relative).\n"
    "--trace FILE: the start and end of every step on every rank, on a clock common to\n"
    "all ranks, for the timed inference of median latency (Chrome trace-event JSON:\n"
    "open it in ui.perfetto.dev; compare with dse eval --trace; docs/traces.md).\n"
    "--beside (with --single DEV): then every CPU device of DEV's board runs the whole\n"
    "network at the same time, and DEV's latency then is printed beside its latency\n"
    "alone: how much the board's CPUs slow each other when all are busy (both runs\n"
    "keep the input on DEV; docs/runtime.md).\n"
    "--handoff: after the timed inferences, the first two CPU devices of one board\n"
    "pass a 2 MB buffer back and forth, each touching it on receipt: the time per\n"
    "pass against the same touch of its own data says what reading data the other\n"
    "core wrote costs in this launch (docs/runtime.md).\n";

static void print_text(const rt_result *r, int warm, int reps)
{
    printf("latency (%s: %d warm-up, %d timed): median %.3f ms (min %.3f, max %.3f), output on "
           "%s\n", warm > 0 ? "warm" : "cold", warm, reps, r->lat_med_ms, r->lat_min_ms, r->lat_max_ms,
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
    if (r->handoff.a < 0)
        printf("handoff: no board with two CPU devices: not measured\n");
    else if (r->handoff.b > r->handoff.a)
        printf("handoff: %s <-> %s, %d bytes: %.1f us per pass, touched on receipt (the same touch of "
               "its own data: %.1f us; %.2fx)\n", r->dev[r->handoff.a].name, r->dev[r->handoff.b].name,
               RT_HANDOFF_BYTES, r->handoff.hop_us, r->handoff.touch_us, r->handoff.hop_us / r->handoff.touch_us);
    if (r->beside.n == 1)
        printf("beside: no other CPU device on %s's board: nothing to run beside it\n",
               r->dev[r->out_dev].name);
    else if (r->beside.n > 1)
        printf("beside: with all %d CPU devices of its board running the network at once, %s's "
               "latency: median %.3f ms (min %.3f, max %.3f), %.3fx alone\n", r->beside.n,
               r->dev[r->out_dev].name, r->beside.med_ms, r->beside.min_ms, r->beside.max_ms,
               r->beside.med_ms / r->lat_med_ms);
}

int cmd_exec(int argc, char **argv)
{
    cli_args a;
    rt_options o;
    memset(&o, 0, sizeof o);
    int started = cli_start(&a, "exec", argc, argv, "json no-check beside handoff", exec_help);
    if (started >= 0) return started;
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
    o.beside = cli_flag(&a, "beside");
    o.handoff = cli_flag(&a, "handoff");
    const char *bench = cli_get(&a, "bench");
    if (cli_int(&a, "single", -1, 0, 63, &single) || cli_int(&a, "seed", 1, 0, 1L << 40, &seed) ||
        cli_double(&a, "timeout", -1, 0, 1e6, &timeout) || cli_finish(&a))
        return EXIT_USAGE;
    o.single_dev = (int)single;
    o.seed = (uint64_t)seed;
    o.timeout_s = timeout;
    o.warmup = 1; /* warm by default: see latency_kind */
    o.reps = 3;
    if (bench && cli_bench(bench, &o.warmup, &o.reps)) {
        cli_error("exec", "--bench must be W,R with 0 <= W <= 100000 warm-up and 1 <= R <= 100000 "
                  "timed inferences, not \"%s\"", bench);
        return EXIT_USAGE;
    }
    if (!o.network || !o.platform || (!o.mapping && single < 0) || (o.mapping && single >= 0)) {
        cli_error("exec", "needs --network, --platform and either --mapping or --single");
        return EXIT_USAGE;
    }
    if (o.beside && (o.mapping || o.trace)) {
        cli_error("exec", "--beside goes with --single (not --mapping) and without --trace");
        return EXIT_USAGE;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rt_result r;
    char err[BASE_ERRLEN];
    int rc = rt_exec(&o, &r, err);
    if (rank == 0) {
        if (rc) cli_error("exec", "%s", err);
        else if (json) {
            char *t = rt_record_json(&r);
            if (t) puts(t);
            else cli_error("exec", "out of memory"), rc = EXIT_FAIL;
            free(t);
        } else {
            print_text(&r, o.warmup, o.reps);
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return rc;
}

static volatile sig_atomic_t g_stop;
static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* What a finished mpirun job tells the user: the dse lines of its stderr
 * and its exit code when a dse program failed; one line naming the rank
 * when a rank died (docs/exit-codes.md: 1). */
static int mpirun_outcome(int rc, const char *etext, const char *eline)
{
    if (rc == RT_JOB_NOSTART || rc == 127) {
        cli_error("mpirun", "cannot run mpirun: install openmpi-bin (scripts/bootstrap)");
        return EXIT_FAIL;
    }
    if (rc == RT_JOB_INTERRUPTED) {
        cli_error("mpirun", "interrupted; the job was stopped");
        return 130;
    }
    /* The ranks' own lines ("dse exec: ...") and anything else they said,
     * but not Open MPI's banners of a failed job. */
    int dse_line = 0;
    for (const char *l = etext; *l;) {
        size_t len = strcspn(l, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        int mine = !strncmp(line, "dse ", 4);
        /* Open MPI's banners and a dying rank's backtrace ("[host:pid] ..."). */
        int mpi = !mine && (!strncmp(line, "----", 4) || strstr(line, "mpirun") ||
                            strstr(line, "MPI_") || strstr(line, "Primary job") ||
                            strstr(line, "ORTE") || strstr(line, "terminated") ||
                            strstr(line, "exit code") || line[0] == '[' ||
                            (len > 1 && line[0] == ' '));
        dse_line |= mine;
        if ((rc == 0 || !mpi) && len) fprintf(stderr, "%.*s\n", (int)len, l);
        l += len + (l[len] == '\n');
    }
    if (rc == 0 || (dse_line && (rc == 1 || rc == 2))) return rc;
    char how[128];
    int dead = rt_dead_rank(etext, how, sizeof how);
    if (dead >= 0) cli_error("mpirun", "rank %d died: %s", dead, how);
    else cli_error("mpirun", "the job failed (mpirun exit %d): %s", rc, eline[0] ? eline : "no message");
    return EXIT_FAIL;
}

/* The placement of `--platform P` among the program's arguments when P is
 * emulated (scripts/emulate-boards): seqfile gets its hostfile, in a fresh
 * tmpdir.  0 (seqfile[0] = 0 for any other platform or none), or -1 after
 * one line on stderr. */
static int emulated_placement(int nargs, char **args, char *tmpdir, int *made, char *seqfile,
                              size_t len)
{
    const char *name = NULL;
    for (int k = 0; k + 1 < nargs; k++)
        if (!strcmp(args[k], "--platform")) name = args[k + 1];
    if (!name) return 0;
    char err[BASE_ERRLEN], remote[512];
    platform *pl = platform_open(name, err);
    if (!pl) return 0; /* the program says what is wrong with it */
    int rc = 0;
    if (pl->emulated) {
        if (!mkdtemp(tmpdir)) {
            cli_error("mpirun", "%s: cannot make a folder: %s", tmpdir, strerror(errno));
            rc = -1;
        } else {
            *made = 1;
            if (rt_placement_file(pl, tmpdir, seqfile, len, remote, sizeof remote, err)) {
                cli_error("mpirun", "%s", err);
                rc = -1;
            }
        }
    }
    platform_free(pl);
    return rc;
}

static const char mpirun_help[] =
    "usage: dse mpirun -np N [--hostfile F] PROGRAM [ARGS...]\n"
    "Runs mpirun with what Open MPI needs on this machine (root allowed,\n"
    "--oversubscribe); tests, scripts and dse validate launch through it.\n"
    "When ARGS name an emulated platform (--platform P with an \"emulate\"\n"
    "section, docs/emulated-boards.md), rank r runs on device r's board.\n";

int cmd_mpirun(int argc, char **argv)
{
    int np = 0, i = 1;
    const char *hostfile = NULL;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-np") || !strcmp(argv[i], "-n")) {
            long long v;
            if (i + 1 >= argc || cli_llong(argv[++i], 1, 65536, &v)) break;
            np = (int)v;
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
    if (!av) return EXIT_FAIL;
    /* A bare "dse" means this very program. */
    if (!strcmp(argv[i], "dse")) argv[i] = (char *)rt_self_exe();
    /* An emulated platform's boards are reached as dse validate reaches
     * them: rank r on device r's board, with the emulation's launch
     * settings (rt_placement_file). */
    char tmpdir[] = "/tmp/dse-mpirun-XXXXXX", seqfile[600] = "";
    int made_tmp = 0;
    if (!hostfile && emulated_placement(argc - i, argv + i, tmpdir, &made_tmp, seqfile,
                                        sizeof seqfile)) {
        free(av);
        if (seqfile[0]) remove(seqfile);
        if (made_tmp) rmdir(tmpdir); /* nothing of ours is left behind */
        return EXIT_USAGE;
    }
    rt_mpirun_argv(np, hostfile, seqfile[0] ? seqfile : NULL, (const char *const *)argv + i,
                   argc - i, av);
    rt_mpirun_env();
    /* mpirun runs as a job of its own (stdout passed through): a rank that
     * dies becomes one line and exit 1 instead of mpirun's own report;
     * Ctrl-C ends the whole job. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char *etext = NULL, eline[BASE_ERRLEN];
    int rc = rt_run_job(av, 0, &g_stop, "dse ", NULL, &etext, eline, sizeof eline);
    free(av);
    rc = mpirun_outcome(rc, etext ? etext : "", eline);
    free(etext);
    if (seqfile[0]) remove(seqfile);
    if (made_tmp) rmdir(tmpdir);
    return rc;
}
