/* cmd_validate.c -- `dse validate`: run a campaign's best front points on
 * the MPI runtime and store predicted against measured (DESIGN sections 8,
 * 9; the thesis' Tables 3, 5, 6).
 *
 * Each point is exported, its prediction recomputed per device from the
 * campaign's stored network, platform and coefficients, and then run as a
 * separate `mpirun` job (dse exec --json) with a deadline enforced both
 * inside the job and by killing it from here.  A point that fails (dead
 * rank, timeout, wrong output) or cannot run here (GPU work) is stored with
 * its reason; the others still run; the exit code says whether any failed.
 */
#include "campaign.h"
#include "cli.h"
#include "jsonutil.h"
#include "cost.h"
#include "exec.h"
#include "launch.h"
#include "mapping.h"
#include "plan.h"
#include "platform.h"
#include "results.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
    "usage: dse validate --campaign ID [--db F] [--top best|N] [--bench W,R]\n"
    "                    [--timeout SEC] [--keep DIR]\n"
    "Runs the front's best point per objective (--top best, the default) or N points\n"
    "spread along the front on the campaign's platform through mpirun, then stores\n"
    "predicted vs measured per device and per objective in the database and prints\n"
    "the comparison.  Exit 1 if any point failed (dead rank, timeout, wrong output).\n";

typedef struct {
    int idx;           /* front index */
    const char *why;   /* "best energy", ... */
    double pred[3];    /* energy J, memory MB, latency ms (whole mapping) */
    double meas[3];    /* NAN = not measured */
    const char *status;
    char reason[NET_ERRLEN];
} vpoint;

/* Write text to dir/name; returns the path in out. */
static int put_file(const char *dir, const char *name, const char *text, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", dir, name);
    FILE *f = fopen(out, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Pick front indices: best per objective (distinct), or n spread evenly
 * over the front (which camp_load_front sorts by latency). */
static int choose(const res_point *p, int n, int top, vpoint *out)
{
    static const char *why[3] = {"best energy", "best memory", "best latency"};
    int k = 0;
    if (top <= 0) {
        for (int o = 0; o < 3; o++) {
            int b = 0;
            for (int i = 1; i < n; i++)
                if (p[i].obj[o] < p[b].obj[o]) b = i;
            int dup = -1;
            for (int j = 0; j < k; j++)
                if (out[j].idx == b) dup = j;
            if (dup >= 0) continue;
            out[k].idx = b;
            out[k++].why = why[o];
        }
        return k;
    }
    if (top > n) top = n;
    for (int j = 0; j < top; j++) {
        out[k].idx = top == 1 ? 0 : (int)((double)j * (n - 1) / (top - 1) + 0.5);
        out[k++].why = "front point";
    }
    return k;
}

int cmd_validate(int argc, char **argv)
{
    cli_args a;
    char err[NET_ERRLEN], warn[NET_ERRLEN];
    if (cli_parse(&a, "validate", argc, argv, "help")) return EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    long id = -1, top = 0;
    double timeout = 300;
    const char *dbpath = cli_get(&a, "db"), *tops = cli_get(&a, "top"), *keep = cli_get(&a, "keep");
    const char *bench = cli_get(&a, "bench");
    if (!dbpath) dbpath = "dse.db";
    if (cli_int(&a, "campaign", -1, 1, 1L << 50, &id) ||
        cli_double(&a, "timeout", 300, 1, 1e6, &timeout) || cli_finish(&a))
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
    int warm = 4, reps = 20;
    if (bench && (sscanf(bench, "%d,%d", &warm, &reps) != 2 || warm < 0 || reps < 1)) {
        cli_error("validate", "--bench must be W,R");
        return EXIT_USAGE;
    }

    res_db *db = res_open(dbpath, RES_OPEN_WRITE, err);
    if (!db) {
        cli_error("validate", "%s", err);
        return EXIT_USAGE;
    }
    res_campaign cm;
    memset(&cm, 0, sizeof cm);
    if (res_campaign_get(db, id, &cm, err)) {
        cli_error("validate", "%s", err);
        res_close(db);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    res_point *pts = NULL;
    int npts = 0;
    camp *c = NULL;
    net *n = NULL;
    platform *pl = NULL;
    cost_coeffs *co = NULL;
    cost_model *cmod = NULL;
    mapping *m = NULL;
    plan *p = NULL;
    cJSON *cfg = cJSON_Parse(cm.config);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", keep ? keep : "/tmp/dse-validate-XXXXXX");
    if (keep ? (mkdir(dir, 0777) && errno != EEXIST) : !mkdtemp(dir)) {
        cli_error("validate", "%s: cannot create: %s", dir, strerror(errno));
        rc = EXIT_FAIL;
        goto out;
    }
    if (!(c = camp_from_config(cm.config, 1, err)) || (npts = camp_load_front(db, id, &pts, err)) < 0) {
        cli_error("validate", "campaign %ld: %s", id, err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (npts == 0) {
        cli_error("validate", "campaign %ld has no feasible front point yet", id);
        rc = EXIT_USAGE;
        goto out;
    }
    /* The campaign's own network, platform and coefficients, as stored. */
    char *nettxt = ju_print(cJSON_GetObjectItem(cfg, "network"), 0);
    char *pltxt = ju_print(cJSON_GetObjectItem(cfg, "platform"), 0);
    const cJSON *jc = cJSON_GetObjectItem(cfg, "coeffs");
    char netpath[600], plpath[600];
    int okfiles = nettxt && pltxt && put_file(dir, "network.json", nettxt, netpath, sizeof netpath) == 0 &&
                  put_file(dir, "platform.json", pltxt, plpath, sizeof plpath) == 0;
    n = okfiles ? net_from_json(nettxt, "stored network", err) : NULL;
    pl = n ? platform_from_json(pltxt, "stored platform", err) : NULL;
    if (pl) {
        if (jc && !cJSON_IsNull(jc)) {
            char *ct = ju_print(jc, 0);
            co = coeffs_from_json(ct, "stored coefficients", err);
            free(ct);
        } else {
            co = coeffs_default(pl);
        }
    }
    free(nettxt);
    free(pltxt);
    if (!co || !(cmod = cost_new(n, pl, co, warn, err))) {
        cli_error("validate", "campaign %ld: %s", id, okfiles ? err : "cannot write its files");
        rc = EXIT_FAIL;
        goto out;
    }
    /* Rank r on device r's board (a generated hostfile) unless all are here. */
    char seqfile[600], remote[256];
    if (rt_placement_file(pl, dir, seqfile, sizeof seqfile, remote, sizeof remote, err)) {
        cli_error("validate", "%s", err);
        rc = EXIT_FAIL;
        goto out;
    }
    vpoint vp[1000];
    int nv = choose(pts, npts, (int)top, vp);
    p = plan_new();
    cost_device *pd = calloc((size_t)pl->ndev, sizeof *pd);
    int any_failed = 0;
    for (int v = 0; v < nv; v++) {
        vpoint *V = &vp[v];
        const res_point *P = &pts[V->idx];
        char pdir[700], mpath[800];
        snprintf(pdir, sizeof pdir, "%s/point-%d", dir, V->idx);
        V->status = "ok";
        V->reason[0] = 0;
        for (int o = 0; o < 3; o++) V->meas[o] = NAN;
        cost_result cr;
        snprintf(mpath, sizeof mpath, "%s/dse-mapping.json", pdir);
        mapping_free(m);
        m = NULL;
        if (camp_export(c, P->genome, pdir, err) || !(m = mapping_load(mpath, n, pl, err)) ||
            plan_build(p, n, m, pl->source, err) || cost_eval(cmod, p, &cr, pd)) {
            V->status = "failed";
            snprintf(V->reason, sizeof V->reason, "%s", err);
            any_failed = 1;
            continue;
        }
        V->pred[0] = cr.energy_j;
        V->pred[1] = cr.mem_mb;
        V->pred[2] = cr.latency_ms;
        /* GPU work cannot run here: the model's prediction is still stored. */
        int gpu = 0;
        for (int d = 0; d < pl->ndev; d++)
            if (pl->dev[d].kind == PLAT_GPU && pd[d].used) gpu = 1;
        cJSON *res = NULL;
        if (gpu) {
            V->status = "unmeasured";
            snprintf(V->reason, sizeof V->reason, "puts work on a GPU device; this runtime has "
                     "no GPU kernels");
        } else {
            char np[16], bw[32], to[32];
            snprintf(np, sizeof np, "%d", pl->ndev);
            snprintf(bw, sizeof bw, "%d,%d", warm, reps);
            snprintf(to, sizeof to, "%g", timeout);
            const char *args[] = {rt_self_exe(), "exec", "--network", netpath, "--platform", plpath,
                                  "--mapping", mpath, "--bench", bw, "--json", "--timeout", to};
            const char *av[40];
            rt_mpirun_argv(pl->ndev, NULL, seqfile[0] ? seqfile : NULL, args,
                           (int)(sizeof args / sizeof args[0]), av);
            rt_mpirun_env();
            char *outtxt = NULL, eline[400];
            fprintf(stderr, "validate: point %d (%s) on %d ranks...\n", V->idx, V->why, pl->ndev);
            int jrc = rt_run_job(av, timeout + 30, NULL, "dse exec:", &outtxt, eline, sizeof eline);
            res = jrc == 0 ? cJSON_Parse(outtxt) : NULL;
            if (jrc == 124) snprintf(V->reason, sizeof V->reason, "timed out after %g s", timeout);
            else if (jrc != 0 && strncmp(eline, "dse exec:", 9) == 0)
                snprintf(V->reason, sizeof V->reason, "%s", eline + 10);
            else if (jrc != 0)
                snprintf(V->reason, sizeof V->reason, "a rank died (mpirun exit %d%s%.100s): %.200s", jrc,
                         remote[0] ? "; ranks on boards " : "", remote, eline);
            else if (!res) snprintf(V->reason, sizeof V->reason, "unreadable output of dse exec");
            if (!res) {
                V->status = "failed";
                any_failed = 1;
            }
            free(outtxt);
        }
        /* Per device rows, then the whole mapping. */
        const cJSON *devs = res ? cJSON_GetObjectItem(res, "devices") : NULL;
        for (int d = 0; d < pl->ndev; d++) {
            if (!pd[d].used) continue;
            res_validation rv = {id, V->idx, pl->dev[d].name,
                                 {pd[d].energy_j, pd[d].mem_mb, pd[d].finish_s * 1e3},
                                 {NAN, NAN, NAN}, V->status, V->reason[0] ? V->reason : NULL};
            const cJSON *jd = devs ? cJSON_GetArrayItem(devs, d) : NULL;
            if (jd) {
                const cJSON *e = cJSON_GetObjectItem(jd, "energy_j");
                rv.meas[0] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
                rv.meas[1] = cJSON_GetObjectItem(jd, "peak_rss_mb")->valuedouble;
                rv.meas[2] = cJSON_GetObjectItem(jd, "finish_ms")->valuedouble;
            }
            if (res_validation_add(db, &rv, err)) {
                cli_error("validate", "%s", err);
                rc = EXIT_FAIL;
            }
        }
        if (res) {
            const cJSON *ob = cJSON_GetObjectItem(res, "objectives");
            const cJSON *e = cJSON_GetObjectItem(ob, "energy_j");
            V->meas[0] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
            V->meas[1] = cJSON_GetObjectItem(ob, "memory_mb")->valuedouble;
            V->meas[2] = cJSON_GetObjectItem(ob, "latency_ms")->valuedouble;
        }
        res_validation whole = {id, V->idx, NULL, {V->pred[0], V->pred[1], V->pred[2]},
                                {V->meas[0], V->meas[1], V->meas[2]}, V->status,
                                V->reason[0] ? V->reason : NULL};
        if (res_validation_add(db, &whole, err)) {
            cli_error("validate", "%s", err);
            rc = EXIT_FAIL;
        }
        cJSON_Delete(res);
    }
    free(pd);
    /* The thesis' table: real vs predicted per objective for each point. */
    printf("campaign %ld (%s on %s, %s): predicted vs measured, %d warm-up + %d timed inferences\n",
           id, cm.network, cm.platform, cm.chromosome, warm, reps);
    printf("%-14s %5s | %10s %10s | %10s %10s | %10s %10s | %s\n", "point", "index", "energy J",
           "predicted", "memory MB", "predicted", "latency ms", "predicted", "status");
    for (int v = 0; v < nv; v++) {
        vpoint *V = &vp[v];
        char e[16];
        if (isnan(V->meas[0])) snprintf(e, sizeof e, "%s", "n/m");
        else snprintf(e, sizeof e, "%.4f", V->meas[0]);
        printf("%-14s %5d | %10s %10.4f | %10.1f %10.1f | %10.2f %10.2f | %s%s%s\n", V->why,
               V->idx, e, V->pred[0], V->meas[1], V->pred[1], V->meas[2], V->pred[2], V->status,
               V->reason[0] ? ": " : "", V->reason);
    }
    printf("(n/m: energy not measured, this machine has no energy sensor named in the platform; "
           "memory measured as each rank's peak RSS)\n");
    if (any_failed) rc = EXIT_FAIL;
out:
    if (!keep && dir[0]) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) {}
    }
    cJSON_Delete(cfg);
    plan_free(p);
    mapping_free(m);
    cost_free(cmod);
    coeffs_free(co);
    platform_free(pl);
    net_free(n);
    if (pts) res_points_free(pts, npts);
    camp_free(c);
    res_campaign_free(&cm);
    res_close(db);
    return rc;
}
