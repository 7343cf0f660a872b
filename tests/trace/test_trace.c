/* test_trace.c -- timelines (model/trace.h, docs/traces.md): a trace from
 * `dse exec --trace` (real mpirun, real kernels) and one from `dse eval
 * --trace` of the same mapping name the same steps in the same order on
 * every device, and both are exactly the Plan this test builds itself;
 * the measured timeline keeps causality (no step starts before the one
 * before it ended on its device, no receive ends before its send began,
 * within the stated clock skew); the model's timeline keeps it exactly;
 * the writer and reader round-trip; bad trace files are refused with one
 * line naming them.  No assertion is on a duration's size. */
#include "chrom.h"
#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "plan.h"
#include "platform.h"
#include "trace.h"

#include "check.h"
#include "run.h"
#include "tfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

/* t names exactly the steps of p (built here from the mapping). */
static void equals_plan(const trace_file *t, const plan *p, const char *what)
{
    CHECK(t->nsteps == p->nsteps, "%s: %d steps in the trace, the plan has %d", what, t->nsteps,
          p->nsteps);
    if (t->nsteps != p->nsteps) return;
    int bad = 0;
    for (int i = 0; i < p->nsteps; i++) {
        const trace_step *s = &t->steps[i];
        int d = s->dev;
        if (d < 0 || d >= p->ndev || s->step >= plan_nsteps_dev(p, d)) {
            bad++;
            continue;
        }
        const plan_step *q = &plan_steps_dev(p, d)[s->step];
        bad += p->step0[d] + s->step != i || q->op != s->op || q->layer != s->layer ||
               q->c0 != s->c0 || q->nc != s->nc || q->peer != s->peer || q->msg != s->msg ||
               (q->msg >= 0 ? p->msgs[q->msg].bytes : plan_tensor_of(p, d, q->tensor)->bytes) != s->bytes;
    }
    CHECK(bad == 0, "%s: %d steps differ from the plan", what, bad);
}

/* Causality within tol microseconds: steps of a device one after the
 * other, every receive ends after its send began. */
static void causal(const trace_file *t, const plan *p, double tol, const char *what)
{
    int overlap = 0, early = 0, neg = 0;
    for (int i = 0; i < t->nsteps; i++) {
        const trace_step *s = &t->steps[i];
        neg += !(s->dur_us >= 0) || !(s->med_us >= 0) || !(s->ts_us >= -tol);
        if (i > 0 && t->steps[i - 1].dev == s->dev &&
            s->ts_us < t->steps[i - 1].ts_us + t->steps[i - 1].dur_us - tol)
            overlap++;
    }
    for (int g = 0; g < p->nmsgs && t->nsteps == p->nsteps; g++) {
        const trace_step *snd = &t->steps[p->msgs[g].send_step], *rcv = &t->steps[p->msgs[g].recv_step];
        if (rcv->ts_us + rcv->dur_us < snd->ts_us - tol) early++;
    }
    CHECK(!overlap && !early && !neg,
          "%s: %d overlapping steps, %d receives ending before their send, %d negative times "
          "(tolerance %.2f us)", what, overlap, early, neg, tol);
}

/* One mapping through both interpreters. */
static void both(const char *netname, int nd, const mapping *m, const char *tag)
{
    char err[BASE_ERRLEN], plat[512], map[512], xt[512], et[512], cmd[4096], ebuf[4096];
    net *n = net_zoo(netname, err);
    snprintf(plat, sizeof plat, "%s/plat%d.json", tmpdir, nd);
    write_local_platform(plat, nd, 0);
    platform *pl = platform_load(plat, err);
    snprintf(map, sizeof map, "%s/%s.json", tmpdir, tag);
    snprintf(xt, sizeof xt, "%s/%s-exec.json", tmpdir, tag);
    snprintf(et, sizeof et, "%s/%s-eval.json", tmpdir, tag);
    CHECK(mapping_save(m, n, pl, map, err) == 0, "%s", err);
    snprintf(cmd, sizeof cmd, "%s mpirun -np %d %s exec --network %s --platform %s --mapping %s "
             "--bench 1,3 --trace %s >/dev/null", DSE_BIN, nd, DSE_BIN, netname, plat, map, xt);
    int rc = run_sh_err(cmd, ebuf, sizeof ebuf);
    CHECK(rc == 0, "%s: exec --trace exit %d: %s", tag, rc, ebuf);
    snprintf(cmd, sizeof cmd, "%s eval --network %s --platform %s --mapping %s --trace %s "
             ">/dev/null", DSE_BIN, netname, plat, map, et);
    rc = run_sh_err(cmd, ebuf, sizeof ebuf);
    CHECK(rc == 0, "%s: eval --trace exit %d: %s", tag, rc, ebuf);
    trace_file x, e;
    int xr = trace_load(xt, &x, err);
    CHECK(xr == 0, "%s", err);
    int er = trace_load(et, &e, err);
    CHECK(er == 0, "%s", err);
    plan *p = plan_new();
    CHECK(plan_build(p, n, m, pl->source, err) == 0, "%s", err);
    if (!xr && !er) {
        CHECK(trace_same_steps(&x, &e, err) == 0, "%s: exec and eval traces differ: %s", tag, err);
        equals_plan(&x, p, "exec trace");
        equals_plan(&e, p, "eval trace");
        CHECK(!strcmp(x.source, "measured") && !strcmp(e.source, "predicted"));
        CHECK(x.reps == 3 && x.warmup == 1 && x.inference >= 0 && x.inference < 3);
        CHECK(x.skew_us >= 0 && isfinite(x.skew_us), "stated skew %g us", x.skew_us);
        CHECK(x.latency_us > 0 && e.latency_us > 0);
        causal(&x, p, x.skew_us + 0.01, "exec trace");
        causal(&e, p, 0.002, "eval trace"); /* the file's resolution: 1 ns */
        /* The model's RECV lasts exactly its wait, its output step ends at
         * its latency. */
        double out_end = -1;
        for (int i = 0; i < e.nsteps; i++) {
            const trace_step *s = &e.steps[i];
            if (s->dev == p->out_dev && s->op != PLAN_SEND &&
                plan_steps_dev(p, s->dev)[s->step].tensor == p->out_tensor)
                out_end = s->ts_us + s->dur_us;
        }
        CHECK(fabs(out_end - e.latency_us) <= 0.002, "output ends at %.3f us, latency %.3f us",
              out_end, e.latency_us);
        printf("ok: %s on %d ranks: %d steps, exec and eval traces step for step equal to the "
               "plan; measured %.2f ms (skew <= %.2f us), predicted %.2f ms\n", tag, nd,
               x.nsteps, x.latency_us / 1e3, x.skew_us, e.latency_us / 1e3);
    }
    if (!xr) trace_file_free(&x);
    if (!er) trace_file_free(&e);
    plan_free(p);
    platform_free(pl);
    net_free(n);
}

static void random_mappings(const char *netname, int nd, chrom_kind kind, int splits, int trials,
                            unsigned seed)
{
    char err[BASE_ERRLEN], tag[64];
    net *n = net_zoo(netname, err);
    chrom *c = chrom_new(n, nd, kind, splits, NET_SPLIT_DEFAULT, err);
    CHECK(c, "%s", err);
    int len = chrom_length(c), *lo = malloc(len * sizeof(int)), *hi = malloc(len * sizeof(int));
    int *g = malloc(len * sizeof(int));
    chrom_bounds(c, lo, hi);
    mapping *m = mapping_new(n->n, nd);
    for (int t = 0; t < trials; t++) {
        for (int k = 0; k < len; k++) g[k] = lo[k] + (int)(rand_r(&seed) % (unsigned)(hi[k] - lo[k] + 1));
        CHECK(chrom_decode(c, g, len, m, err) == 0, "%s", err);
        snprintf(tag, sizeof tag, "%s-%s-%d", netname, chrom_kind_name(kind), t);
        both(netname, nd, m, tag);
    }
    free(lo);
    free(hi);
    free(g);
    mapping_free(m);
    chrom_free(c);
    net_free(n);
}

static void expect_bad(const char *name, const char *text, const char *needle)
{
    char path[300], err[BASE_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    trace_file t;
    int rc = trace_load(path, &t, err);
    CHECK(rc == -1 && strstr(err, name) && strstr(err, needle) && !strchr(err, '\n'),
          "%s: rc %d, \"%s\" (expected one line naming the file with \"%s\")", name, rc, err, needle);
}

/* Writer and reader on a model timeline, and bad files. */
static void roundtrip(void)
{
    char err[BASE_ERRLEN], path[300];
    net *n = net_zoo("branchy", err);
    platform *pl = platform_open("local-2", err);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    for (int i = 1; i < n->n; i += 2) m->slices[m->first[i]].dev = 1;
    plan *p = plan_new();
    CHECK(plan_build(p, n, m, pl->source, err) == 0, "%s", err);
    cost_model *cm = cost_new(n, pl, NULL, NULL, err);
    trace_span *sp = calloc((size_t)p->nsteps, sizeof *sp);
    cost_result r;
    CHECK(trace_predict(cm, p, sp, &r, NULL) == 0);
    snprintf(path, sizeof path, "%s/rt.json", tmpdir);
    trace_info ti = {"predicted", n, pl, p, sp, r.latency_ms * 1e-3, 0, 0, 0, 0, NULL};
    CHECK(trace_write(path, &ti, err) == 0, "%s", err);
    trace_file t;
    CHECK(trace_load(path, &t, err) == 0, "%s", err);
    equals_plan(&t, p, "written trace");
    int diff = 0;
    for (int i = 0; i < t.nsteps && t.nsteps == p->nsteps; i++)
        diff += !(fabs(t.steps[i].ts_us - sp[i].t0 * 1e6) <= 6e-4) ||
                !(fabs(t.steps[i].dur_us - (sp[i].t1 - sp[i].t0) * 1e6) <= 1.2e-3);
    CHECK(diff == 0, "%d steps' times changed by more than the nanosecond resolution", diff);
    CHECK(!strcmp(t.network, "branchy") && !strcmp(t.platform, "local-2") && t.ndev == 2 &&
          !strcmp(t.devices[1], pl->dev[1].name));
    trace_file_free(&t);
    printf("ok: writer and reader round-trip %d steps to the nanosecond\n", p->nsteps);

    expect_bad("notjson.json", "{\"traceEvents\": [", "");
    expect_bad("other.json", "{\"traceEvents\": [], \"otherData\": {\"format\": \"x\"}}", "not a dse trace");
    expect_bad("newer.json", "{\"traceEvents\": [], \"otherData\": {\"format\": \"dse-trace\", "
               "\"version\": 9, \"devices\": [\"a\"]}}", "newer");
    const char *head = "{\"otherData\": {\"format\": \"dse-trace\", \"version\": 1, \"devices\": [\"a\"]}, "
                       "\"traceEvents\": [";
    char text[1000];
    snprintf(text, sizeof text, "%s{\"ph\":\"X\",\"tid\":0,\"ts\":0,\"dur\":1,\"args\":{\"step\":0,"
             "\"op\":\"compute\"}},{\"ph\":\"X\",\"tid\":0,\"ts\":1,\"dur\":1,\"args\":{\"step\":2,"
             "\"op\":\"compute\"}}]}", head);
    expect_bad("gap.json", text, "step 1 is missing");
    snprintf(text, sizeof text, "%s{\"ph\":\"X\",\"tid\":0,\"ts\":0,\"dur\":1,\"args\":{\"step\":0,"
             "\"op\":\"compute\"}},{\"ph\":\"X\",\"tid\":0,\"ts\":1,\"dur\":1,\"args\":{\"step\":0,"
             "\"op\":\"compute\"}}]}", head);
    expect_bad("twice.json", text, "appears twice");
    snprintf(text, sizeof text, "%s{\"ph\":\"X\",\"tid\":3,\"ts\":0,\"dur\":1,\"args\":{\"step\":0,"
             "\"op\":\"compute\"}}]}", head);
    expect_bad("tid.json", text, "declared device");
    snprintf(text, sizeof text, "%s{\"ph\":\"X\",\"tid\":0,\"ts\":0,\"dur\":1,\"args\":{\"step\":0,"
             "\"op\":\"fly\"}}]}", head);
    expect_bad("op.json", text, "declared device");
    printf("ok: malformed, foreign, newer, gapped, doubled and misplaced traces refused\n");
    free(sp);
    cost_free(cm);
    plan_free(p);
    mapping_free(m);
    platform_free(pl);
    net_free(n);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dse-test-trace-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd)) return 1;
    roundtrip();
    random_mappings("toy6", 2, CHROM_NAIVE, 0, 2, 1);
    random_mappings("branchy", 3, CHROM_NAIVE, 0, 2, 2);
    random_mappings("alexnet-bvlc", 2, CHROM_HYBRID, 2, 2, 3);
    random_mappings("mobilenetv2", 3, CHROM_HYBRID, 2, 1, 5);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_done("test_trace");
}
