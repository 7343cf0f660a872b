/* cmd_solve.c -- `dse solve`: one mapping from a planner (docs/solvers.md).
 * Parses, loads, calls solve_run, prints the model's objectives and the
 * solver's own account, writes the mapping; the work is in solve/. */
#include "cli.h"
#include "cost.h"
#include "jsonutil.h"
#include "mapping.h"
#include "solve.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char solve_help[] =
    "usage: dse solve --method M --network N --platform P [--coeffs C] [--split-kinds K]\n"
    "                 [--beam B] [--json] [-o MAPPING.json]\n"
    "One mapping from a planner, scored by the analytical model (docs/solvers.md):\n"
    "  --method M        single, greedy, elim, cluster, subgraph or memory\n"
    "  --network N       zoo name or network file (JSON or ONNX)\n"
    "  --platform P      platform preset or file\n"
    "  --coeffs C        coefficients file (default: built-in defaults)\n"
    "  --split-kinds K   kinds elim and memory may cut by channels: conv,fc (default),\n"
    "                    conv or fc\n"
    "  --beam B          elim: beam width when the reduced graph is too large to enumerate\n"
    "                    (default 64)\n"
    "  --json            one JSON record on stdout\n"
    "  -o FILE           write the mapping (dse-mapping format: dse eval, plan, exec read it)\n";

static void print_text(const solve_result *r, const net *n, const platform *pl, const char *cfile,
                       const char *outp)
{
    printf("%s on %s / %s (coefficients: %s): solved in %.6f s\n", r->method, n->name, pl->name,
           cfile ? cfile : "built-in defaults", r->seconds);
    printf("  %s\n", r->detail);
    double obj[COST_NOBJ];
    cost_objectives_of(&r->obj, obj);
    cli_print_objectives(obj);
    printf("  violation  %.0f bytes (%s)\n", r->obj.violation_bytes,
           r->obj.violation_bytes > 0 ? "INFEASIBLE: exceeds memory capacity" : "feasible");
    if (!isnan(r->estimate_ms))
        printf("  estimate   %.6g ms  (the solver's own); simulated / estimate = %.4f\n",
               r->estimate_ms, r->obj.latency_ms / r->estimate_ms);
    if (outp) printf("mapping written to %s\n", outp);
}

static int print_json(const solve_result *r, const net *n, const platform *pl, const char *cfile,
                      const char *outp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", r->method);
    cJSON_AddStringToObject(o, "network", n->name);
    cJSON_AddStringToObject(o, "platform", pl->name);
    if (cfile) cJSON_AddStringToObject(o, "coeffs", cfile);
    else cJSON_AddNullToObject(o, "coeffs");
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    double obj[COST_NOBJ];
    cost_objectives_of(&r->obj, obj);
    cli_json_objectives(o, obj);
    cJSON_AddNumberToObject(o, "violation_bytes", r->obj.violation_bytes);
    if (isnan(r->estimate_ms)) cJSON_AddNullToObject(o, "estimate_ms");
    else cJSON_AddNumberToObject(o, "estimate_ms", r->estimate_ms);
    cJSON_AddStringToObject(o, "detail", r->detail);
    cJSON *st = cJSON_AddObjectToObject(o, "stats");
    for (int i = 0; i < r->nstat; i++) cJSON_AddNumberToObject(st, r->stat[i].key, r->stat[i].value);
    if (outp) cJSON_AddStringToObject(o, "mapping", outp);
    else cJSON_AddNullToObject(o, "mapping");
    return cli_print_json(o);
}

int cmd_solve(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
    int started = cli_start(&a, "solve", argc, argv, "json", solve_help);
    if (started >= 0) return started;
    const char *method = cli_get(&a, "method"), *netname = cli_get(&a, "network");
    const char *platname = cli_get(&a, "platform"), *cfile = cli_get(&a, "coeffs");
    const char *kinds = cli_get(&a, "split-kinds"), *outp = cli_get(&a, "o");
    int json = cli_flag(&a, "json");
    long beam;
    if (cli_int(&a, "beam", SOLVE_BEAM, 1, 100000, &beam) || cli_finish(&a)) return EXIT_USAGE;
    if (a.npos) {
        cli_error("solve", "unexpected argument \"%s\" (see dse solve --help)", a.pos[0]);
        return EXIT_USAGE;
    }
    if (!method || !netname || !platname) {
        cli_error("solve", "--method, --network and --platform are required (see dse solve --help)");
        return EXIT_USAGE;
    }
    if (!solve_find(method)) {
        int nm;
        const solve_method *ms = solve_methods(&nm);
        char list[200] = "";
        for (int i = 0; i < nm; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ms[i].name);
        cli_error("solve", "unknown --method \"%s\" (%s)", method, list);
        return EXIT_USAGE;
    }
    int mask = net_split_mask_parse(kinds ? kinds : "conv,fc");
    if (mask < 0) {
        cli_error("solve", "bad --split-kinds \"%s\" (conv,fc, conv or fc)", kinds);
        return EXIT_USAGE;
    }
    int rc = EXIT_USAGE;
    net *n = NULL;
    platform *pl = NULL;
    cost_coeffs *co = NULL;
    cost_model *cm = NULL;
    mapping *m = NULL;
    if (!(n = net_open(netname, err)) || !(pl = platform_open(platname, err)) ||
        (cfile && !(co = coeffs_load(cfile, err))) || !(cm = cost_new(n, pl, co, warn, err))) {
        cli_error("solve", "%s", err);
        goto out;
    }
    /* -o is checked once every input is read, before any work (exit 2) */
    if ((rc = cli_outputs("solve", &outp, 1))) goto out;
    rc = EXIT_USAGE;
    if (!co)
        cli_error("solve", "no --coeffs: using built-in default coefficients derived from platform "
                  "%s (uncalibrated; see docs/coefficients-format.md)", pl->name);
    if (warn[0]) cli_error("solve", "warning: %s", warn);
    if (!(m = mapping_new(n->n, pl->ndev))) {
        cli_error("solve", "out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    solve_problem p = {n, pl, cm, mask, (int)beam};
    solve_result r;
    int src = solve_run(method, &p, m, &r, err);
    if (src) {
        cli_error("solve", "%s", err);
        rc = src == -2 ? EXIT_FAIL : EXIT_USAGE;
        goto out;
    }
    if (outp && mapping_save(m, n, pl, outp, err)) {
        cli_error("solve", "%s", err);
        rc = EXIT_FAIL;
        goto out;
    }
    rc = EXIT_OK;
    if (json) {
        if (print_json(&r, n, pl, cfile, outp)) {
            cli_error("solve", "out of memory");
            rc = EXIT_FAIL;
        }
    } else {
        print_text(&r, n, pl, cfile, outp);
    }
out:
    mapping_free(m);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    net_free(n);
    return rc;
}
