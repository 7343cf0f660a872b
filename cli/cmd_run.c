/* cmd_run.c -- campaigns on the command line: `dse run`, `resume`, `list`,
 * `front`, `export` and `exhaust` (DESIGN sections 7, 8, 11).
 *
 * Invariant: bad input is found before the database is opened for
 * writing, so a refused command leaves nothing on disk; only the first
 * line of stdout of run/exhaust/resume is machine-read ("campaign ID").
 * The work itself is in campaign.c; this file parses, prints, and turns
 * Ctrl-C into "stop after this generation".
 */
#include "campaign.h"
#include "cli.h"
#include "mapping.h"
#include "results.h"

#include <cJSON.h>
#include <math.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define DEFAULT_DB "dse.db"

static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig)
{
    (void)sig;
    stop_flag = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

/* ---- progress on stderr ---- */

typedef struct {
    const char *cmd;
    int quiet, tty;
    double last; /* time of the last plain line */
    int shown;   /* a \r line is on screen */
} progress_ctx;

static void fmt_eta(char *b, size_t n, double s)
{
    if (!isfinite(s) || s < 0) snprintf(b, n, "?");
    else if (s < 3600) snprintf(b, n, "%d:%02d", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
}

static void on_progress(void *ctx, const camp_progress *p)
{
    progress_ctx *pc = ctx;
    if (pc->quiet) return;
    char eta[32], best[256];
    fmt_eta(eta, sizeof eta, p->eta);
    cli_objectives(best, sizeof best, p->best, "  ", "%.4g");
    char line[480];
    if (p->gens > 0)
        snprintf(line, sizeof line, "gen %ld/%ld  %.0f eval/s  hv %.4f  best %s  front %d  ETA %s",
                 p->gen, p->gens, p->evals_per_s, p->hv, best, p->front_size, eta);
    else /* exhaust */
        snprintf(line, sizeof line, "%lld genomes  %.0f eval/s  hv %.4f  best %s  front %d  ETA %s",
                 p->evaluations, p->evals_per_s, p->hv, best, p->front_size, eta);
    if (pc->tty) {
        fprintf(stderr, "\r%s\033[K", line);
        pc->shown = 1;
    } else {
        /* plain lines: about every 5 s, and the first and last generation */
        double now = base_now();
        if (p->gen == 0 || p->gen == p->gens || now - pc->last >= 5) {
            fprintf(stderr, "%s\n", line);
            pc->last = now;
        }
    }
    fflush(stderr);
}

static void progress_end(progress_ctx *pc)
{
    if (pc->shown) fputc('\n', stderr);
    pc->shown = 0;
}

static void on_warn(void *ctx, const char *line)
{
    cli_error((const char *)ctx, "warning: %s", line);
}

static long default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : n;
}

/* ---- printing the outcome ---- */

/* Front index of the best point for objective k (ties: lowest index). */
static int best_of(const res_point *p, int n, int k)
{
    int b = -1;
    for (int i = 0; i < n; i++)
        if (b < 0 || p[i].obj[k] < p[b].obj[k]) b = i;
    return b;
}

static void print_best(res_db *db, long long id)
{
    char err[BASE_ERRLEN];
    res_point *pts;
    int n = camp_load_front(db, id, &pts, err);
    if (n < 0) {
        cli_error("front", "%s", err);
        return;
    }
    res_gen *gs;
    int ng = res_generations(db, id, &gs, err);
    if (ng > 0)
        printf("front: %d points, hypervolume %.6f (normalised), %lld evaluations\n", n,
               gs[ng - 1].hv, gs[ng - 1].evaluations);
    free(gs);
    if (n == 0) printf("no feasible mapping found\n");
    for (int k = 0; k < COST_NOBJ && n > 0; k++) {
        int b = best_of(pts, n, k);
        char all[256];
        cli_objectives(all, sizeof all, pts[b].obj, ", ", "%.6g");
        printf("best %-8s %12.6g %-2s  (%s)  front point %d\n", cost_objectives[k].name,
               pts[b].obj[k], cost_objectives[k].unit, all, b);
    }
    res_points_free(pts, n);
}

/* ---- run, exhaust, resume ---- */

static const char run_help[] =
    "usage: dse run --network N --platform P [--coeffs C] --chromosome naive|hybrid|vertical|spatial\n"
    "               [--splits P] [--split-kinds conv,fc] [--cuts C] --pop N --gens G\n"
    "               [--time-budget S] --seed S [--init M,...] [--db F] [--name X] [--threads T]\n"
    "               [--quiet]\n"
    "A DSE campaign: NSGA-II over the chromosome's genomes, every mapping evaluated with the\n"
    "analytical model (energy J, memory MB, latency ms), every generation stored in the\n"
    "results database.  Prints `campaign ID` first, the best point per objective at the end.\n"
    "  --network N       zoo name or network file\n"
    "  --platform P      platform preset or file\n"
    "  --coeffs C        coefficients file (default: built-in defaults)\n"
    "  --chromosome K    naive, hybrid (default), vertical or spatial (docs/chromosomes.md)\n"
    "  --splits P        hybrid and spatial: horizontal splits per layer, 1..devices (default 2)\n"
    "  --split-kinds K   layer kinds that may be split: conv,fc (default), conv or fc\n"
    "  --cuts C          spatial: what its cut genes choose: channels,bands (default: channels or\n"
    "                    bands along the layer's longer side), channels,rows, or\n"
    "                    channels,rows,columns (docs/chromosomes.md)\n"
    "  --pop N           population, even, >= 4 (default 100)\n"
    "  --gens G          generations after the initial population (default 100)\n"
    "  --time-budget S   also stop after S seconds of search (0 = none)\n"
    "  --seed S          random seed, 0..4294967295 (default 1)\n"
    "  --init M,...      also seed the first population with these solvers' mappings\n"
    "                    (single, greedy, elim, cluster, subgraph, memory: docs/solvers.md), each\n"
    "                    as the chromosome's closest genome; prints each one's distance\n"
    "  --db F            results database (default ./dse.db, created if missing)\n"
    "  --name X          campaign name (default: network/platform/chromosome)\n"
    "  --threads T       evaluation threads (default: all cores); results do not depend on it\n"
    "  --quiet           no progress on stderr\n"
    "Ctrl-C stops after the current generation; `dse resume` continues the campaign.\n";

static const char exhaust_help[] =
    "usage: dse exhaust --network N --platform P [--coeffs C] --chromosome K [--splits P]\n"
    "                   [--split-kinds K] [--cuts C] --max-points N [--db F] [--name X] [--threads T]\n"
    "                   [--quiet]\n"
    "Evaluates every genome of a small search space and stores its exact Pareto front as a\n"
    "campaign of kind exhaust.  Refuses (exit 2) a space larger than --max-points\n"
    "(default 1000000).  run's --pop, --gens, --seed, --time-budget and --init are accepted\n"
    "and ignored.\n";

typedef struct {
    progress_ctx pc;
    long threads;
} session;

/* Drive (or exhaust) campaign id to its end; prints and maps to exit codes. */
static int drive(camp *c, res_db *db, long long id, int resume, session *s)
{
    char err[BASE_ERRLEN];
    camp_hooks h = {on_progress, &s->pc, &stop_flag};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int rc = strcmp(camp_get_options(c)->kind, "exhaust") == 0
                 ? camp_exhaust(c, db, id, &h, err)
                 : camp_drive(c, db, id, resume, &h, err);
    sigaction(SIGINT, &old, NULL);
    progress_end(&s->pc);
    if (rc < 0) {
        cli_error(s->pc.cmd, "campaign %lld failed: %s", id, err);
        return EXIT_FAIL;
    }
    if (rc == CAMP_INTERRUPTED) {
        cli_error(s->pc.cmd, "interrupted; campaign %lld is resumable: dse resume --campaign %lld "
                  "--db %s", id, id, res_path(db));
        return EXIT_FAIL;
    }
    print_best(db, id);
    return EXIT_OK;
}

/* Every individual of every generation is stored: a row of about 60
 * bytes plus its genome's text (2.5 bytes a gene, measured on alexnet-bvlc
 * and densenet121 campaigns), and SQLite's index on it.  Refuse what the
 * database's folder cannot hold; say so when it is large. */
static int check_size(const char *cmd, const char *dbpath, int nvar, long pop, long gens)
{
    double row = 60 + 2.5 * nvar + 24, bytes = row * (double)pop * (double)(gens + 1);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", dbpath);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    else snprintf(dir, sizeof dir, ".");
    struct statvfs fs;
    if (statvfs(dir, &fs) == 0 && bytes > (double)fs.f_bavail * (double)fs.f_frsize) {
        cli_error(cmd, "--pop %ld x %ld generations would store about %.1f GB in %s, more than its "
                  "folder's free %.1f GB; lower --pop or --gens", pop, gens + 1, bytes / 1e9,
                  dbpath, (double)fs.f_bavail * (double)fs.f_frsize / 1e9);
        return -1;
    }
    if (bytes > 1e9)
        cli_error(cmd, "note: --pop %ld x %ld generations will store about %.1f GB in %s", pop,
                  gens + 1, bytes / 1e9, dbpath);
    return 0;
}

static int start(int argc, char **argv, const char *cmd, const char *help, int exhaust)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, cmd, argc, argv, "quiet", help);
    if (started >= 0) return started;
    camp_options o = {0};
    long splits, pop, gens, seed, threads;
    double budget, maxp;
    o.network = cli_get(&a, "network");
    o.platform = cli_get(&a, "platform");
    o.coeffs = cli_get(&a, "coeffs");
    o.chromosome = cli_get(&a, "chromosome");
    o.split_kinds = cli_get(&a, "split-kinds");
    o.init = cli_get(&a, "init");
    o.kind = exhaust ? "exhaust" : "nsga";
    o.cuts = cli_get(&a, "cuts");
    const char *dbpath = cli_get(&a, "db"), *name = cli_get(&a, "name");
    session s = {{cmd, cli_flag(&a, "quiet"), isatty(2), 0, 0}, 1};
    if (cli_int(&a, "splits", 2, -1000000, 1000000, &splits) ||
        cli_int(&a, "threads", default_threads(), 1, 256, &threads) ||
        cli_int(&a, "seed", 1, 0, 4294967295L, &seed))
        return EXIT_USAGE;
    if (exhaust) {
        /* run's search options are accepted (scripts share option lists) and unused */
        cli_get(&a, "pop"), cli_get(&a, "gens"), cli_get(&a, "time-budget");
        pop = 4, gens = 0, budget = 0;
        if (cli_double(&a, "max-points", 1e6, 1, 9e15, &maxp)) return EXIT_USAGE;
        o.max_points = (long long)maxp;
    } else if (cli_int(&a, "pop", 100, 4, 1000000, &pop) ||
               cli_int(&a, "gens", 100, 0, 100000000, &gens) ||
               cli_double(&a, "time-budget", 0, 0, 1e9, &budget)) {
        return EXIT_USAGE;
    }
    if (cli_finish(&a)) return EXIT_USAGE;
    if (a.npos) {
        cli_error(cmd, "unexpected argument \"%s\" (see dse %s --help)", a.pos[0], cmd);
        return EXIT_USAGE;
    }

    if (!o.network || !o.platform) {
        cli_error(cmd, "--network and --platform are required (see dse %s --help)", cmd);
        return EXIT_USAGE;
    }
    if (name && (!base_name_ok(name) || strlen(name) > 200)) {
        /* A name reaches terminals and plot scripts (docs/security.md). */
        cli_error(cmd, "--name must be 1 to 200 bytes of UTF-8 text without control characters");
        return EXIT_USAGE;
    }
    o.splits = (int)splits;
    o.pop = (int)pop;
    o.gens = (int)gens;
    o.time_budget = budget;
    o.seed = (unsigned long)seed;
    s.threads = threads;
    /* Everything about the input is checked here, before the database. */
    camp *c = camp_new(&o, (int)threads, on_warn, (void *)cmd, err);
    if (!c) {
        cli_error(cmd, "%s", err);
        return EXIT_USAGE;
    }
    if (exhaust && camp_space_size(c, o.max_points) < 0) {
        cli_error(cmd, "the %s space of %s on %s has 10^%.2f genomes, more than --max-points %lld",
                  camp_get_options(c)->chromosome, camp_network_name(c), camp_platform_name(c),
                  camp_log10_space(c), o.max_points);
        camp_free(c);
        return EXIT_USAGE;
    }
    if (!dbpath) dbpath = DEFAULT_DB;
    /* The database is an output: a file (or absent) in a writable folder,
     * none of the network, platform or coefficients files just read. */
    if (cli_outputs(cmd, &dbpath, 1)) {
        camp_free(c);
        return EXIT_USAGE;
    }
    if (!exhaust && check_size(cmd, dbpath, camp_nvar(c), o.pop, o.gens)) {
        camp_free(c);
        return EXIT_USAGE;
    }
    res_db *db = res_open(dbpath, RES_OPEN_CREATE, err);
    if (!db) {
        cli_error(cmd, "%s", err);
        camp_free(c);
        return EXIT_USAGE;
    }
    char defname[256];
    snprintf(defname, sizeof defname, "%s/%s/%s%s", camp_network_name(c), camp_platform_name(c),
             camp_get_options(c)->chromosome, exhaust ? "/exhaust" : "");
    long long id;
    if (res_campaign_new(db, name ? name : defname, o.kind, camp_network_name(c),
                         camp_platform_name(c), camp_get_options(c)->chromosome, camp_config(c),
                         &id, err)) {
        cli_error(cmd, "%s", err);
        res_close(db);
        camp_free(c);
        return EXIT_FAIL;
    }
    printf("campaign %lld\n", id);
    const camp_seeds *sd = camp_get_seeds(c);
    const char *chname = camp_get_options(c)->chromosome;
    int by_rows = chname && (!strcmp(chname, "hybrid") || !strcmp(chname, "spatial"));
    for (int i = 0; i < sd->n; i++) {
        printf("seed %-8s distance %.4f%s (share of the work its genome places differently; "
               "its mapping's latency %.6g ms",
               sd->method[i], sd->distance[i], sd->distance[i] == 0 ? " exact" : "", sd->latency_ms[i]);
        /* a hybrid or spatial genome gives a layer at most --splits parts:
         * say what would let it express more of the solver's mapping */
        if (by_rows && sd->distance[i] > 0 && sd->parts[i] > camp_get_options(c)->splits)
            printf("; it cuts a layer into %d parts, more than --splits %d allows", sd->parts[i],
                   camp_get_options(c)->splits);
        printf(")\n");
    }
    fflush(stdout);
    int rc = drive(c, db, id, 0, &s);
    res_close(db);
    camp_free(c);
    return rc;
}

int cmd_run(int argc, char **argv) { return start(argc, argv, "run", run_help, 0); }
int cmd_exhaust(int argc, char **argv) { return start(argc, argv, "exhaust", exhaust_help, 1); }

static int campaign_id(cli_args *a, long long *id)
{
    const char *v = cli_get(a, "campaign");
    if (!v) {
        cli_error(a->cmd, "--campaign ID is required");
        return -1;
    }
    if (cli_llong(v, 1, LLONG_MAX, id)) {
        cli_error(a->cmd, "--campaign must be a campaign id (see dse list), not \"%s\"", v);
        return -1;
    }
    return 0;
}

static const char resume_help[] =
    "usage: dse resume --campaign ID [--db F] [--threads T] [--quiet]\n"
    "Continue an interrupted (or killed) campaign from its last stored generation.  The\n"
    "campaign is rebuilt from the configuration stored in the database; it ends exactly\n"
    "as an uninterrupted run with the same seed would have.\n";

int cmd_resume(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    long long id;
    long threads;
    int started = cli_start(&a, "resume", argc, argv, "quiet", resume_help);
    if (started >= 0) return started;
    const char *dbpath = cli_get(&a, "db");
    session s = {{"resume", cli_flag(&a, "quiet"), isatty(2), 0, 0}, 1};
    if (campaign_id(&a, &id) || cli_int(&a, "threads", default_threads(), 1, 256, &threads) ||
        cli_finish(&a))
        return EXIT_USAGE;
    res_db *db = res_open(dbpath ? dbpath : DEFAULT_DB, RES_OPEN_WRITE, err);
    if (!db) {
        cli_error("resume", "%s", err);
        return EXIT_USAGE;
    }
    res_campaign cm;
    if (res_campaign_get(db, id, &cm, err)) {
        cli_error("resume", "%s", err);
        res_close(db);
        return EXIT_USAGE;
    }
    int rc = EXIT_USAGE;
    if (!strcmp(cm.status, "finished")) {
        cli_error("resume", "campaign %lld is finished: nothing to resume", id);
        goto out;
    }
    camp *c = camp_from_config(cm.config, (int)threads, err);
    if (!c) {
        cli_error("resume", "campaign %lld: %s", id, err);
        goto out;
    }
    /* Claim it in one atomic step: of two resumes started together, one
     * runs and the other is told who does. */
    res_campaign now;
    int claimed = res_campaign_claim(db, id, "interrupted failed", &now, err);
    if (claimed != 1) {
        char host[256];
        if (claimed < 0) cli_error("resume", "%s", err), rc = EXIT_FAIL;
        else if (!strcmp(now.status, "running"))
            cli_error("resume", "campaign %lld is running (process %ld on %s)", id, now.pid,
                      cli_inert(host, sizeof host, now.host ? now.host : "?"));
        else cli_error("resume", "campaign %lld is %s: nothing to resume", id, now.status);
        if (claimed >= 0) res_campaign_free(&now);
        camp_free(c);
        goto out;
    }
    res_campaign_free(&now);
    printf("campaign %lld\n", id);
    fflush(stdout);
    rc = drive(c, db, id, 1, &s);
    camp_free(c);
out:
    res_campaign_free(&cm);
    res_close(db);
    return rc;
}

/* ---- list ---- */

static const char list_help[] =
    "usage: dse list [--db F]\n"
    "Campaigns of a results database with their status, generations done and evaluations.\n";

int cmd_list(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "list", argc, argv, "", list_help);
    if (started >= 0) return started;
    const char *dbpath = cli_get(&a, "db");
    if (cli_finish(&a)) return EXIT_USAGE;
    res_db *db = res_open(dbpath ? dbpath : DEFAULT_DB, RES_OPEN_READ, err);
    if (!db) {
        cli_error("list", "%s", err);
        return EXIT_USAGE;
    }
    res_campaign *v;
    int n = res_campaign_list(db, &v, err);
    if (n < 0) {
        cli_error("list", "%s", err);
        res_close(db);
        return EXIT_FAIL;
    }
    printf("%-5s %-11s %-8s %-12s %-18s %-10s %11s %12s  %-20s %s\n", "id", "status", "kind",
           "network", "platform", "chromosome", "generations", "evaluations", "created", "name");
    for (int i = 0; i < n; i++) {
        cJSON *cfg = cJSON_Parse(v[i].config);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(cfg, "gens");
        char gens[32];
        if (!strcmp(v[i].kind, "exhaust")) snprintf(gens, sizeof gens, "-");
        else snprintf(gens, sizeof gens, "%ld/%d", v[i].gens_done < 0 ? 0 : v[i].gens_done,
                      cJSON_IsNumber(g) ? g->valueint : 0);
        /* Every string of a database is untrusted: inert on the terminal. */
        char t[7][512];
        printf("%-5lld %-11s %-8s %-12s %-18s %-10s %11s %12lld  %-20s %s\n", v[i].id,
               cli_inert(t[0], sizeof t[0], v[i].status), cli_inert(t[1], sizeof t[1], v[i].kind),
               cli_inert(t[2], sizeof t[2], v[i].network ? v[i].network : "-"),
               cli_inert(t[3], sizeof t[3], v[i].platform ? v[i].platform : "-"),
               v[i].chromosome ? cli_inert(t[4], sizeof t[4], v[i].chromosome) : "-", gens,
               v[i].evaluations, v[i].created ? cli_inert(t[6], sizeof t[6], v[i].created) : "-",
               cli_inert(t[5], sizeof t[5], v[i].name));
        cJSON_Delete(cfg);
    }
    res_campaign_list_free(v, n);
    res_close(db);
    return EXIT_OK;
}

/* ---- front ---- */

static const char front_help[] =
    "usage: dse front --campaign ID [--db F] [--csv | --json]\n"
    "The Pareto front of a campaign (feasible, non-dominated, one point per distinct\n"
    "objective vector), sorted by latency, then energy, then memory.  For a campaign that\n"
    "did not finish, the front of its last stored generation.  CSV and JSON print every\n"
    "number with 17 significant digits (exact).\n";

static void print_genome(FILE *f, const res_point *p, const char *sep)
{
    for (int j = 0; j < p->nvar; j++) fprintf(f, "%s%d", j ? sep : "", p->genome[j]);
}

int cmd_front(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    long long id;
    int started = cli_start(&a, "front", argc, argv, "csv json", front_help);
    if (started >= 0) return started;
    const char *dbpath = cli_get(&a, "db");
    int csv = cli_flag(&a, "csv"), json = cli_flag(&a, "json");
    if (campaign_id(&a, &id) || cli_finish(&a)) return EXIT_USAGE;
    if (csv && json) {
        cli_error("front", "--csv and --json exclude each other");
        return EXIT_USAGE;
    }
    res_db *db = res_open(dbpath ? dbpath : DEFAULT_DB, RES_OPEN_READ, err);
    if (!db) {
        cli_error("front", "%s", err);
        return EXIT_USAGE;
    }
    res_campaign cm;
    if (res_campaign_get(db, id, &cm, err)) {
        cli_error("front", "%s", err);
        res_close(db);
        return EXIT_USAGE;
    }
    res_point *p;
    int n = camp_load_front(db, id, &p, err);
    if (n < 0) {
        cli_error("front", "%s", err);
        res_campaign_free(&cm);
        res_close(db);
        return EXIT_FAIL;
    }
    if (csv) {
        printf("index,");
        for (int k = 0; k < COST_NOBJ; k++) printf("%s,", cost_objectives[k].key);
        printf("violation_bytes,generation,genome\n");
        for (int i = 0; i < n; i++) {
            printf("%d,", i);
            for (int k = 0; k < COST_NOBJ; k++) printf("%.17g,", p[i].obj[k]);
            printf("%.17g,%ld,", p[i].cv, p[i].src_gen);
            print_genome(stdout, &p[i], " ");
            putchar('\n');
        }
    } else if (json) {
        /* The status comes from the database: a JSON string made by cJSON. */
        cJSON *st = cJSON_CreateString(cm.status ? cm.status : "");
        char *sts = st ? cJSON_PrintUnformatted(st) : NULL;
        printf("{\"campaign\": %lld, \"status\": %s, \"points\": [", id, sts ? sts : "null");
        free(sts);
        cJSON_Delete(st);
        for (int i = 0; i < n; i++) {
            printf("%s\n  {\"index\": %d, ", i ? "," : "", i);
            for (int k = 0; k < COST_NOBJ; k++) printf("\"%s\": %.17g, ", cost_objectives[k].key, p[i].obj[k]);
            printf("\"violation_bytes\": %.17g, \"genome\": [", p[i].cv);
            print_genome(stdout, &p[i], ", ");
            printf("]}");
        }
        printf("\n]}\n");
    } else {
        char nm[512];
        char sn[64];
        printf("campaign %lld (%s, %s): %d front points\n", id, cli_inert(nm, sizeof nm, cm.name),
               cli_inert(sn, sizeof sn, cm.status), n);
        printf("%-6s", "index");
        for (int k = 0; k < COST_NOBJ; k++) {
            char h[64];
            snprintf(h, sizeof h, "%s_%s", cost_objectives[k].name, cost_objectives[k].unit);
            printf(" %14s", h);
        }
        printf("  %s\n", "genome");
        for (int i = 0; i < n; i++) {
            printf("%-6d", i);
            for (int k = 0; k < COST_NOBJ; k++) printf(" %14.6g", p[i].obj[k]);
            printf("  ");
            print_genome(stdout, &p[i], " ");
            putchar('\n');
        }
    }
    res_points_free(p, n);
    res_campaign_free(&cm);
    res_close(db);
    return EXIT_OK;
}

/* ---- export ---- */

static const char export_help[] =
    "usage: dse export --campaign ID --point best-latency|best-energy|best-memory|INDEX\n"
    "                  -o DIR [--db F]\n"
    "       dse export --network N --platform P --mapping M.json|FOLDER -o DIR\n"
    "Writes one front point's mapping as DIR/dse-mapping.json (dse's format) and as\n"
    "AutoDiCE's DIR/mapping.json + DIR/horizontal.json, with DIR/autodice-devices.json\n"
    "(our device names -> AutoDiCE's keys).  Where AutoDiCE cannot express the mapping\n"
    "(or would run it wrongly), one line on stderr says so; the exit code stays 0.\n"
    "INDEX is a front index (dse front).  With --mapping, converts a mapping (ours, or a\n"
    "folder of AutoDiCE's files) into both formats.  docs/mapping-format.md\n";

/* What an export wrote: one stdout line, and AutoDiCE's limits as one
 * line on stderr (the exit code stays 0: docs/mapping-format.md). */
static void export_report(const char *dir, int ex, const char *warn)
{
    char t[4 * 4200 + 16]; /* the folder as the user gave it, inert on the terminal */
    cli_inert(t, sizeof t, dir);
    if (ex == 1)
        printf("wrote %s/dse-mapping.json\n", t);
    else
        printf("wrote %s/dse-mapping.json, %s/mapping.json, %s/horizontal.json, "
               "%s/autodice-devices.json\n", t, t, t, t);
    if (warn[0]) cli_error("export", "%s", warn);
}

/* dse export --network N --platform P --mapping M -o DIR. */
static int export_mapping(cli_args *a, const char *mapfile, const char *dir)
{
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
    const char *nn = cli_get(a, "network"), *pp = cli_get(a, "platform");
    if (cli_finish(a)) return EXIT_USAGE;
    if (!nn || !pp || !dir) {
        cli_error("export", "--mapping needs --network, --platform and -o DIR");
        return EXIT_USAGE;
    }
    net *n = net_open(nn, err);
    platform *p = n ? platform_open(pp, err) : NULL;
    mapping *m = p ? mapping_load(mapfile, n, p, err) : NULL;
    int rc = EXIT_USAGE;
    if (!m) {
        cli_error("export", "%s", err);
    } else {
        int ex = mapping_export_dir(m, n, p, dir, warn, err);
        if (ex < 0) {
            cli_error("export", "%s", err);
            rc = ex == -2 ? EXIT_USAGE : EXIT_FAIL; /* an unusable path is bad usage */
        } else {
            export_report(dir, ex, warn);
            rc = EXIT_OK;
        }
    }
    mapping_free(m);
    platform_free(p);
    net_free(n);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    long long id;
    int started = cli_start(&a, "export", argc, argv, "", export_help);
    if (started >= 0) return started;
    const char *dbpath = cli_get(&a, "db"), *point = cli_get(&a, "point"), *dir = cli_get(&a, "o");
    const char *mapfile = cli_get(&a, "mapping");
    if (mapfile && !cli_get(&a, "campaign")) return export_mapping(&a, mapfile, dir);
    if (campaign_id(&a, &id) || cli_finish(&a)) return EXIT_USAGE;
    if (!point || !dir) {
        cli_error("export", "--point and -o DIR are required");
        return EXIT_USAGE;
    }
    int which = -1; /* objective, or -1 for an index */
    long index = -1;
    for (int k = 0; k < COST_NOBJ; k++)
        if (!strncmp(point, "best-", 5) && !strcmp(point + 5, cost_objectives[k].name)) which = k;
    if (which < 0) {
        long long x;
        if (cli_llong(point, 0, 1000000000, &x)) {
            cli_error("export",
                      "--point must be best-latency, best-energy, best-memory or a front index, "
                      "not \"%s\"",
                      point);
            return EXIT_USAGE;
        }
        index = (long)x;
    }
    res_db *db = res_open(dbpath ? dbpath : DEFAULT_DB, RES_OPEN_READ, err);
    if (!db) {
        cli_error("export", "%s", err);
        return EXIT_USAGE;
    }
    int rc = EXIT_USAGE;
    res_campaign cm;
    res_point *p = NULL;
    int n = 0;
    camp *c = NULL;
    if (res_campaign_get(db, id, &cm, err)) {
        cli_error("export", "%s", err);
        res_close(db);
        return EXIT_USAGE;
    }
    if ((n = camp_load_front(db, id, &p, err)) < 0) {
        cli_error("export", "%s", err);
        rc = EXIT_FAIL;
        goto out;
    }
    if (n == 0) {
        cli_error("export", "campaign %lld has no feasible front point", id);
        goto out;
    }
    int k = which >= 0 ? best_of(p, n, which) : (int)index;
    if (k >= n) {
        cli_error("export", "--point %ld: campaign %lld's front has points 0..%d", index, id, n - 1);
        goto out;
    }
    if (!(c = camp_from_config(cm.config, 1, err))) {
        cli_error("export", "campaign %lld: %s", id, err);
        goto out;
    }
    if (p[k].nvar != camp_nvar(c)) {
        cli_error("export", "campaign %lld: stored genome has %d genes, the chromosome %d", id,
                  p[k].nvar, camp_nvar(c));
        goto out;
    }
    char warn[BASE_ERRLEN];
    int ex = camp_export(c, p[k].genome, dir, warn, err);
    if (ex < 0) {
        cli_error("export", "%s", err);
        rc = ex == -2 ? EXIT_USAGE : EXIT_FAIL; /* an unusable path is bad usage */
        goto out;
    }
    char all[256];
    cli_objectives(all, sizeof all, p[k].obj, ", ", "%.6g");
    printf("front point %d of campaign %lld (%s)\n", k, id, all);
    export_report(dir, ex, warn);
    rc = EXIT_OK;
out:
    camp_free(c);
    res_points_free(p, n);
    res_campaign_free(&cm);
    res_close(db);
    return rc;
}
