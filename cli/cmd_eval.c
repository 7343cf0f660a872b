/* cmd_eval.c -- `dse eval` (one mapping through the analytical model) and
 * `dse plan` (the per-device steps of one mapping).  Both only load, call
 * model/ and print; the numbers come from cost.h and plan.h. */
#include "cli.h"
#include "jsonutil.h"
#include "cost.h"
#include "mapping.h"
#include "plan.h"
#include "trace.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char eval_help[] =
    "usage: dse eval --network NAME|FILE --platform PRESET|FILE [--coeffs FILE]\n"
    "                (--mapping M.json | --single DEVICE) [--json] [--trace FILE.json]\n"
    "Evaluate one mapping with the analytical model (docs/cost-model.md): the three\n"
    "objectives (max energy per device in J, max peak memory per device in MB with\n"
    "1 MB = 1e6 bytes, latency in ms), the memory-capacity violation, and per device\n"
    "its busy, idle and waiting time, bytes moved, peak memory and energy.\n"
    "  --coeffs FILE    coefficients (docs/coefficients-format.md); without it, built-in\n"
    "                   defaults derived from the platform file\n"
    "  --mapping FILE   a dse-mapping file, or a folder of AutoDiCE's mapping.json\n"
    "                   (+ horizontal.json) (docs/mapping-format.md)\n"
    "  --single DEVICE  every layer on one device (name or index) instead of a file\n"
    "  --trace FILE     also write the model's timeline of every step on every device\n"
    "                   (Chrome trace-event JSON: open it in ui.perfetto.dev; the same\n"
    "                   steps in the same order as dse exec --trace; docs/traces.md)\n";

static const char plan_help[] =
    "usage: dse plan --network NAME|FILE --platform PRESET|FILE\n"
    "                (--mapping M.json | --single DEVICE) [--check]\n"
    "The per-device compute/send/recv/concat steps of a mapping and the bytes moved.\n"
    "  --check   also verify the plan's invariants (plan_check); exit 1 if one fails\n";

/* What both commands load.  Each pointer is owned here; ctx_free releases. */
typedef struct {
    net *n;
    platform *pl;
    mapping *m;
    plan *p;
} ctx;

static void ctx_free(ctx *c)
{
    plan_free(c->p);
    mapping_free(c->m);
    platform_free(c->pl);
    net_free(c->n);
}

/* Load network, platform and mapping and build the plan.  Returns 0 or an
 * exit code after printing one line. */
static int load(const char *cmd, const char *netname, const char *platname, const char *mapfile,
                const char *single, ctx *c)
{
    char err[BASE_ERRLEN];
    memset(c, 0, sizeof *c);
    if (!netname || !platname || (!mapfile && !single)) {
        cli_error(cmd, "--network, --platform and --mapping (or --single) are required");
        return EXIT_USAGE;
    }
    if (mapfile && single) {
        cli_error(cmd, "give either --mapping or --single, not both");
        return EXIT_USAGE;
    }
    if (!(c->n = net_open(netname, err)) || !(c->pl = platform_open(platname, err))) {
        cli_error(cmd, "%s", err);
        return EXIT_USAGE;
    }
    if (mapfile) {
        if (!(c->m = mapping_load(mapfile, c->n, c->pl, err))) {
            cli_error(cmd, "%s", err);
            return EXIT_USAGE;
        }
    } else {
        int dev = platform_find(c->pl, single);
        char *end;
        long k = strtol(single, &end, 10);
        if (dev < 0 && *single && !*end && k >= 0 && k < c->pl->ndev) dev = (int)k;
        if (dev < 0) {
            cli_error(cmd, "--single %s: platform %s has no such device (names or 0..%d)", single,
                      c->pl->name, c->pl->ndev - 1);
            return EXIT_USAGE;
        }
        if (!(c->m = mapping_new(c->n->n, c->pl->ndev))) {
            cli_error(cmd, "out of memory");
            return EXIT_FAIL;
        }
        mapping_set_single(c->m, c->n, dev);
    }
    if (!(c->p = plan_new()) || plan_build(c->p, c->n, c->m, c->pl->source, err)) {
        cli_error(cmd, "%s", c->p ? err : "out of memory");
        return EXIT_FAIL;
    }
    return 0;
}

static void print_text(const ctx *c, const char *coeffs, const cost_result *r, const cost_device *d)
{
    char t[BASE_ERRLEN];
    printf("network %s on platform %s; coefficients: %s\n", c->n->name, c->pl->name,
           coeffs ? cli_inert(t, sizeof t, coeffs) : "built-in defaults");
    double obj[COST_NOBJ];
    cost_objectives_of(r, obj);
    cli_print_objectives(obj);
    printf("  violation  %.0f bytes (%s)\n", r->violation_bytes,
           r->violation_bytes > 0 ? "INFEASIBLE: exceeds memory capacity" : "feasible");
    printf("  moved      %lld bytes in %d messages; output on %s\n", (long long)c->p->bytes_moved,
           c->p->nmsgs, c->pl->dev[c->p->out_dev].name);
    printf("%-14s %-4s %10s %10s %10s %10s %12s %12s %11s %11s %10s %10s %10s\n", "device", "kind",
           "busy_ms", "idle_ms", "wait_ms", "finish_ms", "sent_B", "recv_B", "weights_MB",
           "peak_act_MB", "mem_MB", "capacity", "energy_J");
    int unused = 0;
    for (int i = 0; i < c->pl->ndev; i++) {
        const cost_device *v = &d[i];
        if (!v->used) {
            unused++;
            continue;
        }
        printf("%-14s %-4s %10.4f %10.4f %10.4f %10.4f %12lld %12lld %11.3f %11.3f %10.3f %10.0f "
               "%10.5f\n",
               c->pl->dev[i].name, plat_kind_name(c->pl->dev[i].kind), v->busy_s * 1e3,
               v->idle_s * 1e3, v->wait_s * 1e3, v->finish_s * 1e3, (long long)v->bytes_sent,
               (long long)v->bytes_recv, v->weights_bytes / 1e6, v->peak_act_bytes / 1e6, v->mem_mb,
               c->pl->dev[i].memory_mb, v->energy_j);
    }
    if (unused)
        printf("(%d device%s without steps: not part of the deployment)\n", unused,
               unused == 1 ? "" : "s");
}

static int print_json(const ctx *c, const char *coeffs, const cost_result *r, const cost_device *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "network", c->n->name);
    cJSON_AddStringToObject(o, "platform", c->pl->name);
    if (coeffs)
        cJSON_AddStringToObject(o, "coefficients", coeffs);
    else
        cJSON_AddNullToObject(o, "coefficients");
    double obj[COST_NOBJ];
    cost_objectives_of(r, obj);
    cli_json_objectives(o, obj);
    cJSON_AddNumberToObject(o, "violation_bytes", r->violation_bytes);
    cJSON_AddBoolToObject(o, "feasible", r->violation_bytes <= 0);
    cJSON_AddNumberToObject(o, "bytes_moved", (double)c->p->bytes_moved);
    cJSON_AddNumberToObject(o, "messages", c->p->nmsgs);
    cJSON_AddStringToObject(o, "output_device", c->pl->dev[c->p->out_dev].name);
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int i = 0; i < c->pl->ndev; i++) {
        const cost_device *v = &d[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", c->pl->dev[i].name);
        cJSON_AddStringToObject(e, "kind", plat_kind_name(c->pl->dev[i].kind));
        cJSON_AddBoolToObject(e, "used", v->used);
        cJSON_AddNumberToObject(e, "busy_ms", v->busy_s * 1e3);
        cJSON_AddNumberToObject(e, "compute_ms", v->compute_s * 1e3);
        cJSON_AddNumberToObject(e, "concat_ms", v->concat_s * 1e3);
        cJSON_AddNumberToObject(e, "send_ms", v->send_s * 1e3);
        cJSON_AddNumberToObject(e, "idle_ms", v->idle_s * 1e3);
        cJSON_AddNumberToObject(e, "wait_ms", v->wait_s * 1e3);
        cJSON_AddNumberToObject(e, "finish_ms", v->finish_s * 1e3);
        cJSON_AddNumberToObject(e, "bytes_sent", (double)v->bytes_sent);
        cJSON_AddNumberToObject(e, "bytes_recv", (double)v->bytes_recv);
        cJSON_AddNumberToObject(e, "weights_mb", v->weights_bytes / 1e6);
        cJSON_AddNumberToObject(e, "peak_act_mb", v->peak_act_bytes / 1e6);
        cJSON_AddNumberToObject(e, "workspace_mb", v->workspace_bytes / 1e6);
        cJSON_AddNumberToObject(e, "capacity_mb", c->pl->dev[i].memory_mb);
        /* The device's share of each objective (what dse validate's
         * per-device rows compare): latency is the device's finish time. */
        cost_objectives_dev(v, obj);
        cli_json_objectives(e, obj);
        cJSON_AddItemToArray(devs, e);
    }
    return cli_print_json(o);
}

int cmd_eval(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
    int started = cli_start(&a, "eval", argc, argv, "json", eval_help);
    if (started >= 0) return started;
    const char *netname = cli_get(&a, "network"), *platname = cli_get(&a, "platform");
    const char *mapfile = cli_get(&a, "mapping"), *single = cli_get(&a, "single");
    const char *cfile = cli_get(&a, "coeffs"), *tfile = cli_get(&a, "trace");
    int json = cli_flag(&a, "json");
    if (cli_finish(&a)) return EXIT_USAGE;
    if (a.npos) {
        cli_error("eval", "unexpected argument \"%s\" (see dse eval --help)", a.pos[0]);
        return EXIT_USAGE;
    }
    ctx c;
    cost_coeffs *co = NULL;
    cost_model *m = NULL;
    cost_device *per = NULL;
    trace_span *span = NULL;
    int rc = load("eval", netname, platname, mapfile, single, &c);
    if (rc) goto out;
    if (cfile && !(co = coeffs_load(cfile, err))) {
        cli_error("eval", "%s", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!co)
        cli_error("eval",
                  "no --coeffs: using built-in default coefficients derived from platform "
                  "%s (uncalibrated; see docs/coefficients-format.md)",
                  c.pl->name);
    if (!(m = cost_new(c.n, c.pl, co, warn, err))) {
        cli_error("eval", "%s", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (warn[0]) cli_error("eval", "warning: %s", warn);
    if ((rc = cli_outputs("eval", &tfile, 1))) goto out; /* every input is read */
    per = calloc((size_t)c.pl->ndev, sizeof *per);
    cost_result r;
    if (!per) {
        cli_error("eval", "out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    if (tfile && !(span = calloc((size_t)c.p->nsteps + 1, sizeof *span))) {
        cli_error("eval", "out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    int erc = span ? trace_predict(m, c.p, span, &r, per) : cost_eval(m, c.p, &r, per);
    if (erc) {
        cli_error("eval", "%s", erc == -2 ? "out of memory" : cost_error(m));
        rc = EXIT_FAIL;
        goto out;
    }
    if (span) {
        trace_info ti = {"predicted", c.n, c.pl, c.p, span, r.latency_ms * 1e-3, 0, 0, 0, 0, NULL};
        if (trace_write(tfile, &ti, err)) {
            cli_error("eval", "%s", err);
            rc = EXIT_FAIL;
            goto out;
        }
    }
    if (json) {
        if (print_json(&c, cfile, &r, per)) {
            cli_error("eval", "out of memory");
            rc = EXIT_FAIL;
        }
    } else {
        print_text(&c, cfile, &r, per);
    }
out:
    free(span);
    free(per);
    cost_free(m);
    coeffs_free(co);
    ctx_free(&c);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "plan", argc, argv, "check", plan_help);
    if (started >= 0) return started;
    const char *netname = cli_get(&a, "network"), *platname = cli_get(&a, "platform");
    const char *mapfile = cli_get(&a, "mapping"), *single = cli_get(&a, "single");
    int check = cli_flag(&a, "check");
    if (cli_finish(&a)) return EXIT_USAGE;
    if (a.npos) {
        cli_error("plan", "unexpected argument \"%s\" (see dse plan --help)", a.pos[0]);
        return EXIT_USAGE;
    }
    ctx c;
    int rc = load("plan", netname, platname, mapfile, single, &c);
    if (!rc) {
        plan_print(stdout, c.p, c.n, c.pl);
        if (check) {
            if (plan_check(c.p, c.n, err)) {
                cli_error("plan", "plan check failed: %s", err);
                rc = EXIT_FAIL;
            } else {
                printf("plan check: ok (%d steps, %d messages, no deadlock)\n", c.p->nsteps,
                       c.p->nmsgs);
            }
        }
    }
    ctx_free(&c);
    return rc;
}
