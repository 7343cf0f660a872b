/* test_calib_cli.c -- `dse calibrate` end to end through mpirun:
 *  - bad input (unknown layer kind, remote board without a hostfile, a
 *    board the hostfile does not list, a GPU device, an -o folder that does
 *    not exist, a database that is not one): exit 2, one line on stderr
 *    naming the cause, nothing written;
 *  - a dead rank, a hung rank past --timeout, Ctrl-C: exit 1 naming the
 *    cause, no coefficients file, no rank left running;
 *  - a real --quick calibration on toy6 and branchy: the file loads, has a
 *    per-layer entry for every layer and a fallback for every layer kind,
 *    sane link figures, a memory bias that matches the peak RSS of an idle
 *    rank measured here independently, band tables that equal the kept raw
 *    band timings' ratios, pull runs whose mappings are the networks in
 *    halves and whose waiting receives, recomputed from the kept traces,
 *    are the report's and give the pull rate, and the database holds it
 *    with its fit report.
 */
#include "calib.h"
#include "cost.h"
#include "runtime.h"
#include "results.h"
#include "run.h"
#include "tcheck.h"
#include "tfile.h"

#include <cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

static char dir[256];

static char *path(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(path(name), "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The file's text, or "" when it cannot be read (callers search it). */
static char *slurp(const char *p)
{
    char *s = tfile_read(p, NULL);
    return s ? s : calloc(1, 1);
}

static int lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n') n++;
    return n;
}

/* Run `env ENV dse ARGS` (shell words), stderr into err.txt.  Returns the
 * exit code; *errtxt is the whole stderr (caller frees). */
static int dse(const char *env, const char *args, double timeout, char **errtxt)
{
    char cmd[4096], *out, line[256];
    snprintf(cmd, sizeof cmd, "exec env %s %s %s 2>%s", env ? env : "", DSE_BIN, args, path("err.txt"));
    const char *av[] = {"sh", "-c", cmd, NULL};
    int rc = rt_run_job(av, timeout, NULL, NULL, &out, NULL, line, sizeof line);
    free(out);
    *errtxt = slurp(path("err.txt"));
    return rc;
}

/* Processes whose command line mentions s (other than this one). */
static int procs_with(const char *s)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        long pid = atol(e->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        char p[64], buf[8192];
        snprintf(p, sizeof p, "/proc/%ld/cmdline", pid);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < k; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[k] = 0;
        if (strstr(buf, s)) n++;
    }
    if (d) closedir(d);
    return n;
}

static int wait_gone(const char *s, double secs)
{
    for (double t = 0; t < secs; t += 0.1) {
        if (!procs_with(s)) return 1;
        sleep_s(0.1);
    }
    return !procs_with(s);
}

static const char *dev_json(const char *name, const char *board, const char *kind)
{
    static char buf[4][400];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 400, "{\"name\": \"%s\", \"board\": \"%s\", \"kind\": \"%s\", \"freq_mhz\": 2000, "
             "\"cores\": 1, \"memory_mb\": 4096, \"idle_w\": 5, \"busy_w\": 15}", name, board, kind);
    return b;
}

static void platform_file(const char *name, const char *d0, const char *d1)
{
    char t[2000];
    snprintf(t, sizeof t, "{\"format\": \"dse-platform\", \"version\": 1, \"name\": \"local-test\", "
             "\"devices\": [%s, %s], \"links\": {\"same_board\": {\"latency_us\": 2, "
             "\"bandwidth_mbs\": 4000}, \"network\": {\"latency_us\": 50, \"bandwidth_mbs\": 1000}}}",
             d0, d1);
    put(name, t);
}

static void bad(const char *what, const char *env, const char *args, int want, const char *needle)
{
    char *e;
    int rc = dse(env, args, 120, &e);
    CHECK(rc == want, "%s: exit %d, want %d; stderr: %s", what, rc, want, e);
    CHECK(strstr(e, needle) != NULL, "%s: stderr does not mention \"%s\": %s", what, needle, e);
    if (want == 2) CHECK(lines(e) == 1, "%s: %d lines on stderr: %s", what, lines(e), e);
    CHECK(!file_exists(path("out.json")), "%s: a coefficients file was written", what);
    free(e);
}

static void test_bad_input(void)
{
    char args[2048];
    platform_file("plat.json", dev_json("r0", "localhost", "cpu"), dev_json("r1", "localhost", "cpu"));
    put("badnet.json", "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"odd\", "
                       "\"input\": {\"name\": \"data\", \"shape\": [3, 8, 8]}, \"layers\": ["
                       "{\"name\": \"up\", \"kind\": \"Deconvolution\", \"inputs\": [\"data\"]}]}");
    snprintf(args, sizeof args, "calibrate --platform %s --network %s -o %s --db %s", path("plat.json"),
             path("badnet.json"), path("out.json"), path("c.db"));
    bad("unknown layer kind", NULL, args, 2, "Deconvolution");

    platform_file("remote.json", dev_json("r0", "localhost", "cpu"), dev_json("j1", "jetson-7", "cpu"));
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 -o %s --db %s", path("remote.json"),
             path("out.json"), path("c.db"));
    /* rank 1 is sent to board jetson-7 (rt_placement_file), which does not
     * exist here: the launch fails at once, naming the board */
    bad("remote board", NULL, args, 1, "jetson-7");
    put("hosts", "localhost slots=2\nother-board slots=1\n");
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 -o %s --db %s --hostfile %s",
             path("remote.json"), path("out.json"), path("c.db"), path("hosts"));
    bad("board missing from the hostfile", NULL, args, 2, "not listed");

    platform_file("gpu.json", dev_json("r0", "localhost", "cpu"), dev_json("g1", "localhost", "gpu"));
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 -o %s --db %s", path("gpu.json"),
             path("out.json"), path("c.db"));
    bad("GPU device", NULL, args, 2, "GPU");

    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 -o %s/missing/out.json --db %s",
             path("plat.json"), dir, path("c.db"));
    bad("missing output folder", NULL, args, 2, "missing");

    put("notadb", "hello, I am not a database\n");
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 -o %s --db %s", path("plat.json"),
             path("out.json"), path("notadb"));
    bad("not a database", NULL, args, 2, "notadb");

    snprintf(args, sizeof args, "calibrate --platform %s -o %s", path("plat.json"), path("out.json"));
    bad("no network", NULL, args, 2, "network");

    /* two networks of one name (a file named like a zoo network): their
     * layers' coefficients would share keys */
    put("twin.json", "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"toy6\", "
                     "\"input\": {\"name\": \"data\", \"shape\": [3, 8, 8]}, \"layers\": ["
                     "{\"name\": \"r\", \"kind\": \"ReLU\", \"inputs\": [\"data\"]}]}");
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 --network %s -o %s --db %s",
             path("plat.json"), path("twin.json"), path("out.json"), path("c.db"));
    bad("two networks of one name", NULL, args, 2, "both named toy6");
    CHECK(!file_exists(path("c.db")), "a database was created by refused commands");
}

static void test_failures(void)
{
    char args[2048], *e;
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 --quick -o %s --db %s",
             path("plat.json"), path("out.json"), path("c.db"));
    /* A rank that dies. */
    bad("dead rank", "DSE_FAULT=abort@1", args, 1, "rank");
    CHECK(wait_gone(path("plat.json"), 10), "ranks left running after a dead rank");

    /* A rank that hangs: the job deadline kills it. */
    char targs[2100];
    snprintf(targs, sizeof targs, "%s --timeout 5", args);
    time_t t0 = time(NULL);
    int rc = dse("DSE_FAULT=stall@1", targs, 120, &e);
    CHECK(rc == 1 && strstr(e, "timed out"), "hung rank: exit %d: %s", rc, e);
    CHECK(time(NULL) - t0 < 60, "hung rank took %ld s", (long)(time(NULL) - t0));
    CHECK(!file_exists(path("out.json")), "hung rank: file written");
    CHECK(wait_gone(path("plat.json"), 10), "ranks left running after a timeout");
    free(e);

    /* Ctrl-C while the worker measures. */
    const char *cargs[] = {"calibrate", "--platform", path("plat.json"), "--network", "alexnet-bvlc",
                           "-o", path("out.json"), "--db", path("c.db"), NULL};
    pid_t pid = run_dse_start(NULL, NULL, path("int.txt"), cargs);
    int seen = 0;
    for (int i = 0; i < 600 && !seen; i++) {
        sleep_s(0.1);
        seen = procs_with("calib-worker") && procs_with(path("plat.json")) > 1;
    }
    CHECK(seen, "the worker never started");
    sleep_s(0.5);
    kill(pid, SIGINT);
    int st = run_wait(pid);
    e = slurp(path("int.txt"));
    CHECK(st == 1, "Ctrl-C: status %d", st);
    CHECK(strstr(e, "interrupted") != NULL, "Ctrl-C: stderr %s", e);
    CHECK(!file_exists(path("out.json")), "Ctrl-C: file written");
    CHECK(wait_gone(path("plat.json"), 10), "ranks left running after Ctrl-C");
    CHECK(!file_exists(path("c.db")), "a database was created by failed calibrations");
    free(e);
}

/* Peak RSS of an idle rank (rank 1 of a single-device run on rank 0),
 * through dse exec. */
static double idle_rank_rss(void)
{
    char cmd[2048], *out, line[256];
    snprintf(cmd, sizeof cmd, "%s mpirun -np 2 %s exec --network toy6 --platform %s --single 0 --json",
             DSE_BIN, DSE_BIN, path("plat.json"));
    const char *av[] = {"sh", "-c", cmd, NULL};
    int rc = rt_run_job(av, 120, NULL, NULL, &out, NULL, line, sizeof line);
    cJSON *j = rc == 0 ? cJSON_Parse(out) : NULL;
    double v = NAN;
    const cJSON *d = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "devices"), 1) : NULL;
    if (d) v = cJSON_GetObjectItem(d, "peak_rss_mb")->valuedouble;
    cJSON_Delete(j);
    free(out);
    return v;
}

/* A per-class fit over layers of fewer than CALIB_CLASS_MIN_SIZES
 * different sizes has no fixed cost (its line goes through the origin);
 * counted from the report's own points. */
static void class_intercepts(const cJSON *fits)
{
    int classes = 0, origin = 0;
    for (int cls = 0; cls < COST_NCLASS; cls++) {
        char what[96];
        snprintf(what, sizeof what, "%s on cpu", cost_class_name(cls));
        for (const cJSON *f = fits ? fits->child : NULL; f; f = f->next) {
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "what")), what)) continue;
            double xs[256];
            int nx = 0;
            for (const cJSON *q = cJSON_GetObjectItem(f, "points")->child; q && nx < 256; q = q->next) {
                double x = cJSON_GetObjectItem(q, "x")->valuedouble;
                int seen = 0;
                for (int j = 0; j < nx && !seen; j++) seen = xs[j] == x;
                if (!seen) xs[nx++] = x;
            }
            double a = cJSON_GetObjectItem(f, "intercept")->valuedouble;
            classes++;
            if (nx < CALIB_CLASS_MIN_SIZES) {
                origin++;
                CHECK(a == 0, "%s: %d sizes, yet an intercept of %g s", what, nx, a);
            }
        }
    }
    CHECK(classes == COST_NCLASS, "%d per-class fits on cpu, want %d", classes, COST_NCLASS);
    printf("per-class fits: %d, %d through the origin (fewer than %d sizes)\n", classes, origin,
           CALIB_CLASS_MIN_SIZES);
}

/* Each class's curve in the coefficients lies within its samples (the
 * report's points of the class's line: medians and pooled medians cannot
 * leave the range), spans groups 1.5x apart (3 at least), and is the one
 * the report lists as "CLASS on cpu (curve)". */
static void class_curves(const cJSON *fits, const cost_coeffs *c)
{
    int ncurves = 0;
    for (int cls = 0; cls < COST_NCLASS; cls++) {
        const coeffs_curve *cv = &c->dev[PLAT_CPU].curve[cls];
        char what[96], wc[120];
        snprintf(what, sizeof what, "%s on cpu", cost_class_name(cls));
        snprintf(wc, sizeof wc, "%s (curve)", what);
        const cJSON *line = NULL, *curve = NULL;
        for (const cJSON *f = fits ? fits->child : NULL; f; f = f->next) {
            const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(f, "what"));
            if (!strcmp(w, what)) line = f;
            if (!strcmp(w, wc)) curve = f;
        }
        CHECK(!!curve == (cv->n > 0), "%s: curve in the file %d points, in the report %s", what,
              cv->n, curve ? "yes" : "no");
        if (!cv->n || !line) continue;
        ncurves++;
        double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
        for (const cJSON *q = cJSON_GetObjectItem(line, "points")->child; q; q = q->next) {
            double x = cJSON_GetObjectItem(q, "x")->valuedouble, y = cJSON_GetObjectItem(q, "y")->valuedouble;
            x0 = fmin(x0, x), x1 = fmax(x1, x), y0 = fmin(y0, y * 1e6), y1 = fmax(y1, y * 1e6);
        }
        CHECK(cv->n >= CALIB_CLASS_MIN_SIZES && x1 > CALIB_CURVE_BIN * CALIB_CURVE_BIN * x0,
              "%s: %d points over works %g..%g", what, cv->n, x0, x1);
        CHECK(cv->work[0] >= x0 && cv->work[cv->n - 1] <= x1 && cv->us[0] >= y0 * (1 - 1e-12) &&
                  cv->us[cv->n - 1] <= y1 * (1 + 1e-12),
              "%s: curve (%g..%g, %g..%g us) outside its samples (%g..%g, %g..%g us)", what,
              cv->work[0], cv->work[cv->n - 1], cv->us[0], cv->us[cv->n - 1], x0, x1, y0, y1);
        const cJSON *w = cJSON_GetObjectItem(curve, "work");
        CHECK(cJSON_GetArraySize(w) == cv->n &&
                  cJSON_GetArrayItem(w, cv->n - 1)->valuedouble == cv->work[cv->n - 1],
              "%s: report and file curves differ", what);
    }
    CHECK(ncurves >= 5, "%d class curves", ncurves);
    printf("class curves: %d\n", ncurves);
}

/* The raw measurements test_success kept (--keep), parsed, or NULL (a
 * failed check). */
static cJSON *raw_kept(void)
{
    char *txt = slurp(path("keep/raw.json"));
    cJSON *raw = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    CHECK(raw != NULL, "no raw measurements kept");
    return raw;
}

/* A trace event's args name this step op ("send", "recv", ...). */
static int op_is(const cJSON *args, const char *op)
{
    const char *s = args ? cJSON_GetStringValue(cJSON_GetObjectItem(args, "op")) : NULL;
    return s && !strcmp(s, op);
}

/* Receives that waited in a kept trace of a pull run: bytes and seconds
 * from the send's start to the receive's end, appended at b[*n], t[*n]. */
static void trace_waits(const char *file, double *b, double *t, int *n, int cap)
{
    char *txt = slurp(path(file));
    cJSON *tr = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    CHECK(tr != NULL, "no trace %s kept", file);
    const cJSON *ev = tr ? cJSON_GetObjectItem(tr, "traceEvents") : NULL;
    for (const cJSON *r = ev ? ev->child : NULL; r; r = r->next) {
        const cJSON *ra = cJSON_GetObjectItem(r, "args");
        if (!op_is(ra, "recv")) continue;
        for (const cJSON *s = ev->child; s; s = s->next) {
            const cJSON *sa = cJSON_GetObjectItem(s, "args");
            if (!op_is(sa, "send") ||
                cJSON_GetObjectItem(sa, "msg")->valueint != cJSON_GetObjectItem(ra, "msg")->valueint ||
                cJSON_GetObjectItem(s, "tid")->valueint != cJSON_GetObjectItem(ra, "peer_index")->valueint)
                continue;
            double ts = cJSON_GetObjectItem(s, "ts")->valuedouble, tr0 = cJSON_GetObjectItem(r, "ts")->valuedouble;
            if (tr0 < ts && *n < cap) {
                b[*n] = cJSON_GetObjectItem(ra, "bytes")->valuedouble;
                t[(*n)++] = (tr0 + cJSON_GetObjectItem(r, "dur")->valuedouble - ts) * 1e-6;
            }
        }
    }
    cJSON_Delete(tr);
}

/* The pull runs: each calibrated network split in halves between r0 and
 * r1 (every layer with channels to halve: two slices, the first half on
 * r0), traced in three launches; the receives that waited, recomputed here from the kept
 * traces, are the report's; the pull rate is their calib_fit_rate when
 * the report says it fitted (at least 4), else the exchanges' (xrate,
 * over xn sizes; 0: none). */
static void check_pull_runs(const cJSON *rep, const coeffs_link *L, double xrate, int xn)
{
    char err[BASE_ERRLEN];
    static const char *const nets[] = {"toy6", "branchy"};
    for (int k = 0; k < 2; k++) {
        char f[64];
        snprintf(f, sizeof f, "keep/pull-0-1-%d.json", k);
        net *n = net_zoo(nets[k], err);
        platform *pl = platform_load(path("plat.json"), err);
        mapping *m = n && pl ? mapping_load(path(f), n, pl, err) : NULL;
        CHECK(m != NULL, "pull run mapping %s: %s", f, err);
        for (int i = 0; m && i < n->n; i++) {
            int c = n->layers[i].out.c, two = c >= 2 && net_kind_splittable(n->layers[i].kind);
            const map_slice *s = mapping_slices(m, i);
            CHECK(mapping_nslices(m, i) == 1 + two && s[0].dev == 0 && s[0].c0 == 0 &&
                      s[0].nc == (two ? c / 2 : c) &&
                      (!two || (s[1].dev == 1 && s[1].c0 == c / 2 && s[1].nc == c - c / 2)),
                  "%s: layer %s not in halves", f, n->layers[i].name);
        }
        mapping_free(m);
        platform_free(pl);
        net_free(n);
    }
    double b[1024], t[1024];
    int nw = 0;
    for (int k = 0; k < 2; k++) /* network, then launch (three of each) */
        for (int l = 0; l < 3; l++) {
            char f[64];
            snprintf(f, sizeof f, "keep/pull-0-1-%d-%d-trace.json", k, l);
            trace_waits(f, b, t, &nw, 1024);
        }
    const cJSON *runs = cJSON_GetObjectItem(rep, "pull_runs"), *r0 = cJSON_GetArrayItem(runs, 0);
    const cJSON *rb = cJSON_GetObjectItem(r0, "bytes"), *rs = cJSON_GetObjectItem(r0, "seconds");
    CHECK(cJSON_GetArraySize(runs) == 1 && cJSON_GetArraySize(rb) == nw && cJSON_GetArraySize(rs) == nw,
          "pull runs: %d in the report with %d receives, the traces have %d that waited",
          cJSON_GetArraySize(runs), cJSON_GetArraySize(rb), nw);
    /* Both lists follow the trace files' order: their sums agree. */
    double sb = 0, st = 0, rsb = 0, rst = 0;
    for (int i = 0; i < nw && i < cJSON_GetArraySize(rb); i++) {
        sb += b[i], st += t[i];
        rsb += cJSON_GetArrayItem(rb, i)->valuedouble, rst += cJSON_GetArrayItem(rs, i)->valuedouble;
    }
    CHECK(sb == rsb && fabs(st - rst) <= 1e-9 * (1 + st), "pull run receives: %g B %g s, report %g B %g s",
          sb, st, rsb, rst);
    int fitted = cJSON_IsTrue(cJSON_GetObjectItem(r0, "fitted"));
    calib_fit f;
    int ok = nw >= 4 && !calib_fit_rate(b, t, nw, &f, err);
    CHECK(fitted == ok, "pull run fitted %d, recomputed %d", fitted, ok);
    if (ok)
        CHECK(L->pull_bandwidth_mbs.source == COEFFS_FITTED && L->pull_bandwidth_mbs.n == f.n &&
                  fabs(L->pull_bandwidth_mbs.value - 1.0 / (f.b * 1e6)) <= 1e-6 * L->pull_bandwidth_mbs.value,
              "pull rate %g MB/s from %d, the traces give %g from %d", L->pull_bandwidth_mbs.value,
              L->pull_bandwidth_mbs.n, 1.0 / (f.b * 1e6), f.n);
    else if (xrate > 0)
        CHECK(L->pull_bandwidth_mbs.n == xn && fabs(L->pull_bandwidth_mbs.value - xrate) <= 1e-6 * xrate,
              "pull rate %g MB/s, the exchanges give %g", L->pull_bandwidth_mbs.value, xrate);
    else
        CHECK(!coeffs_isset(&L->pull_bandwidth_mbs), "a pull rate without a fit");
    if (!ok) fprintf(stderr, "note: the pull runs gave %d waiting receives and no fit\n", nw);
}

/* The bands (calib_worker's band passes, calibrate.c's fit_bands): every
 * row-splittable layer of the calibrated networks timed as a middle band
 * of 1/2, 1/4 and 1/8 of its rows, every column-splittable one as a middle
 * band of 1/2, 1/4 and 1/8 of its columns (thinner than a row or column,
 * or as thin as the band before: none); a layer's band table along each
 * axis (coeffs_rates.band, .cband) holds exactly the raw times' ratios to
 * their share of the same layer timed whole, recomputed here, and is kept
 * exactly when one of them differs from 1 by over 5%. */
static void check_bands(const char *const *nets, int nnets, const cost_coeffs *c)
{
    char err[BASE_ERRLEN];
    cJSON *raw = raw_kept();
    if (!raw) return;
    const cJSON *bands = cJSON_GetObjectItem(raw, "bands"), *comp = cJSON_GetObjectItem(raw, "compute");
    int seen = 0, tables = 0, seen_ax[2] = {0, 0};
    static const char *const axis[2] = {"rows", "columns"}, *const extent[2] = {"height", "width"},
                             *const start[2] = {"h0", "w0"};
    for (int k = 0; k < nnets; k++) {
        net *n = net_zoo(nets[k], err);
        for (int i = 0; n && i < n->n; i++) {
            const net_layer *L = &n->layers[i];
            double whole = 0;
            for (const cJSON *e = comp ? comp->child : NULL; e; e = e->next)
                if (!strcmp(cJSON_GetObjectItem(e, "network")->valuestring, nets[k]) &&
                    !strcmp(cJSON_GetObjectItem(e, "layer")->valuestring, L->name) &&
                    cJSON_GetObjectItem(e, "share")->valueint == 1)
                    whole = cJSON_GetObjectItem(e, "seconds")->valuedouble;
            for (int ax = 0; ax < 2; ax++) {
                int X = ax ? L->out.w : L->out.h;
                int cut = ax ? net_layer_colsplit(n, i) : net_layer_rowsplit(n, i);
                int want[3], nw = 0;
                for (int p = 2; p <= 8 && cut; p *= 2)
                    if (X / p >= 1 && (!nw || want[nw - 1] != X / p)) want[nw++] = X / p;
                int got = 0, differs = 0;
                double ratio[3] = {0};
                for (const cJSON *e = bands ? bands->child : NULL; e; e = e->next) {
                    const cJSON *a = cJSON_GetObjectItem(e, "axis");
                    if (strcmp(cJSON_GetObjectItem(e, "network")->valuestring, nets[k]) ||
                        strcmp(cJSON_GetObjectItem(e, "layer")->valuestring, L->name) ||
                        !cJSON_IsString(a) || strcmp(a->valuestring, axis[ax]))
                        continue;
                    int nx = cJSON_GetObjectItem(e, axis[ax])->valueint;
                    CHECK(got < nw && nx == want[got] &&
                              cJSON_GetObjectItem(e, start[ax])->valueint == (X - nx) / 2 &&
                              cJSON_GetObjectItem(e, extent[ax])->valueint == X,
                          "%s/%s: band %d of %d %s (want %d)", nets[k], L->name, got, nx, axis[ax],
                          got < nw ? want[got] : -1);
                    if (got < 3) {
                        ratio[got] = cJSON_GetObjectItem(e, "seconds")->valuedouble / (whole * nx / X);
                        differs |= fabs(ratio[got] - 1) > 0.05;
                    }
                    got++;
                }
                CHECK(got == nw, "%s/%s: %d bands of %s timed, want %d", nets[k], L->name, got, axis[ax], nw);
                seen += got;
                seen_ax[ax] += got;
                const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, nets[k], L->name);
                const coeffs_band *b = r ? (ax ? &r->cband : &r->band) : NULL;
                CHECK((b && b->n) == differs, "%s/%s: %s band table %s, ratios differ from 1: %d", nets[k],
                      L->name, axis[ax], b && b->n ? "kept" : "absent", differs);
                if (b && b->n) {
                    tables++;
                    CHECK(b->n == got && b->height == X, "%s/%s: %d points", nets[k], L->name, b->n);
                    for (int j = 0; j < b->n && j < 3; j++)
                        CHECK(b->rows[j] == want[j] && fabs(b->ratio[j] - ratio[j]) <= 1e-9 * ratio[j],
                              "%s/%s: point %d: %d %s ratio %g, raw gives %g", nets[k], L->name, j,
                              b->rows[j], axis[ax], b->ratio[j], ratio[j]);
                }
            }
        }
        net_free(n);
    }
    CHECK(seen_ax[0] > 10 && seen_ax[1] > 10, "%d row bands, %d column bands timed", seen_ax[0], seen_ax[1]);
    CHECK(seen > 10, "%d bands timed", seen);
    printf("bands: %d timed (%d of rows, %d of columns), %d tables\n", seen, seen_ax[0], seen_ax[1], tables);
    cJSON_Delete(raw);
}

/* Devices that share a board's memory (calib_worker's phase 1c,
 * calibrate.c's fit_corun): both ranks of the test platform are on
 * localhost, so every layer of the calibrated networks has one "corun"
 * record (rank 0, beside rank 1) with its median alone and beside; a layer
 * keeps a corun factor exactly when, recomputed here from those, it took
 * at least 20 us alone and over 5% longer beside, and the factor is that
 * ratio (at most 10). */
static void check_corun(const char *const *nets, int nnets, const cost_coeffs *c)
{
    char err[BASE_ERRLEN];
    cJSON *raw = raw_kept();
    if (!raw) return;
    const cJSON *co = cJSON_GetObjectItem(raw, "corun");
    int seen = 0, kept = 0;
    for (int k = 0; k < nnets; k++) {
        net *n = net_zoo(nets[k], err);
        for (int i = 0; n && i < n->n; i++) {
            const char *ln = n->layers[i].name;
            int got = 0;
            double alone = 0, beside = 0;
            for (const cJSON *e = co ? co->child : NULL; e; e = e->next)
                if (!strcmp(cJSON_GetObjectItem(e, "network")->valuestring, nets[k]) &&
                    !strcmp(cJSON_GetObjectItem(e, "layer")->valuestring, ln)) {
                    got++;
                    alone = cJSON_GetObjectItem(e, "alone")->valuedouble;
                    beside = cJSON_GetObjectItem(e, "seconds")->valuedouble;
                    CHECK(cJSON_GetObjectItem(e, "rank")->valueint == 0 &&
                              cJSON_GetObjectItem(e, "beside")->valueint == 1,
                          "%s/%s: timed on rank %d beside %d", nets[k], ln,
                          cJSON_GetObjectItem(e, "rank")->valueint, cJSON_GetObjectItem(e, "beside")->valueint);
                }
            CHECK(got == 1 && alone > 0 && beside > 0, "%s/%s: %d corun records (alone %g, beside %g)",
                  nets[k], ln, got, alone, beside);
            seen += got;
            double f = alone > 0 ? beside / alone : 0;
            int want = alone >= 20e-6 && f > 1.05;
            const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, nets[k], ln);
            int has = r && coeffs_isset(&r->corun);
            CHECK(has == want, "%s/%s: corun factor %s; alone %g s, ratio %g", nets[k], ln,
                  has ? "kept" : "absent", alone, f);
            if (has && want)
                CHECK(fabs(r->corun.value - (f < 10 ? f : 10)) <= 1e-9 * f, "%s/%s: factor %g, raw %g",
                      nets[k], ln, r->corun.value, f);
            kept += has;
        }
        net_free(n);
    }
    CHECK(seen > 10, "%d layers timed beside each other", seen);
    printf("corun: %d layers timed beside each other, %d factors kept\n", seen, kept);
    cJSON_Delete(raw);
}

static void test_success(void)
{
    char args[2048], *e, err[BASE_ERRLEN];
    snprintf(args, sizeof args,
             "calibrate --platform %s --network toy6 --network branchy --quick -o %s --db %s --keep %s",
             path("plat.json"), path("out.json"), path("c.db"), path("keep"));
    int rc = dse(NULL, args, 600, &e);
    CHECK(rc == 0, "calibrate: exit %d: %s", rc, e);
    free(e);
    cost_coeffs *c = coeffs_load(path("out.json"), err);
    CHECK(c != NULL, "coefficients: %s", err);
    if (!c) return;
    CHECK(c->nnetworks == 2 && !strcmp(c->networks[0], "toy6") && !strcmp(c->networks[1], "branchy"),
          "networks");
    CHECK(c->nplatforms == 1 && !strcmp(c->platforms[0], "local-test"), "platform");
    const coeffs_device *D = &c->dev[PLAT_CPU];
    CHECK(D->present && !c->dev[PLAT_GPU].present, "device sections");
    struct utsname un;
    CHECK(uname(&un) == 0 && c->arch && !strcmp(c->arch, un.machine),
          "coefficients record arch %s, this machine is %s", c->arch ? c->arch : "(none)", un.machine);
    const char *nets[] = {"toy6", "branchy"};
    for (int k = 0; k < 2; k++) {
        net *n = net_zoo(nets[k], err);
        for (int i = 0; n && i < n->n; i++) {
            const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, nets[k], n->layers[i].name);
            CHECK(r && coeffs_isset(&r->per_cycle) && coeffs_isset(&r->overhead_us),
                  "no per-layer entry for %s/%s", nets[k], n->layers[i].name);
            if (r && net_kind_splittable(n->layers[i].kind) && n->layers[i].out.c >= 4)
                CHECK(r->per_cycle.source == COEFFS_FITTED && r->per_cycle.n >= 3 && isfinite(r->per_cycle.r2),
                      "%s/%s: splittable layer not fitted over its shares", nets[k], n->layers[i].name);
        }
        net_free(n);
    }
    check_bands(nets, 2, c);
    check_corun(nets, 2, c);
    for (int cls = 0; cls < COST_NCLASS; cls++)
        CHECK(D->cls[cls].per_cycle.source == COEFFS_FITTED && D->cls[cls].per_cycle.value > 0,
              "no fitted fallback for %s", cost_class_name(cls));
    const coeffs_link *L = &c->link[LINK_SAME_BOARD];
    CHECK(L->bandwidth_mbs.source == COEFFS_FITTED && L->bandwidth_mbs.value > 100 &&
              L->bandwidth_mbs.value < 1e6, "same_board bandwidth %g MB/s", L->bandwidth_mbs.value);
    CHECK(L->latency_us.value >= 0 && L->latency_us.value < 1000, "latency %g us", L->latency_us.value);
    CHECK(!coeffs_isset(&c->link[LINK_NETWORK].latency_us), "network link fitted without a pair");
    /* A late receiver's pickup, timed at every ping-pong size (--quick: 1 KB
     * to 16 MB by factors of 4). */
    CHECK(L->pickup_us.source == COEFFS_MEASURED && L->pickup_us.n >= 1 && L->pickup_us.n <= 8 &&
              L->pickup_us.value >= 0 &&
              isfinite(L->pickup_us.value), "pickup %g us from %d sizes", L->pickup_us.value,
          L->pickup_us.n);
    /* The pull rate, fitted over the large sizes (256 KB to 16 MB) of the
     * exchanges timed at every size, or left out when their times do not
     * grow with size (a machine busy enough to preempt most samples: CI's
     * sanitizer run beside other tests once did), and the pickup: the
     * median over the sizes whose bytes at the pull rate (the ping-pong's
     * without one) take at most half their late time (all sizes if none)
     * of each late time less those bytes' time, recomputed here from the
     * kept samples.  Whether the fit succeeds is the machine's; what it
     * gives when it does, and the rule, are checked. */
    cJSON *raw = raw_kept();
    double xb[16], xs[16];
    int nx = 0;
    for (const cJSON *e = raw ? cJSON_GetObjectItem(raw, "links")->child : NULL; e && nx < 16; e = e->next) {
        const cJSON *x = cJSON_GetObjectItem(e, "exchange_seconds");
        if (x && x->valuedouble > 0)
            xb[nx] = cJSON_GetObjectItem(e, "bytes")->valuedouble, xs[nx++] = x->valuedouble;
    }
    calib_fit xf;
    int pulled = nx >= 2 && !calib_fit_link(xb, xs, nx, &xf, err);
    if (!pulled) fprintf(stderr, "note: no pull rate fitted (exchange times did not grow with size)\n");
    double rate = pulled ? 1.0 / (xf.b * 1e6) : L->bandwidth_mbs.value;
    double pull_xrate = pulled ? rate : 0;
    int pull_xn = pulled ? xf.n : 0;
    double res[16];
    int nres = 0, nxch = 0, nlate = 0;
    for (int all = 0; all < 2 && !nres; all++)
        for (const cJSON *e = raw ? cJSON_GetObjectItem(raw, "links")->child : NULL; e && nres < 16;
             e = e->next) {
            const cJSON *late = cJSON_GetObjectItem(e, "late_seconds"),
                        *x = cJSON_GetObjectItem(e, "exchange_seconds");
            if (!all) nxch += x && x->valuedouble > 0, nlate += late && late->valuedouble > 0;
            if (!late) continue;
            double moved = cJSON_GetObjectItem(e, "bytes")->valuedouble / (rate * 1e6);
            if (!all && moved > 0.5 * late->valuedouble) continue;
            res[nres++] = late->valuedouble > moved ? late->valuedouble - moved : 0;
        }
    for (int i = 0; i < nres; i++) /* sort: the median of 8 is the mean of the middle two */
        for (int j = i + 1; j < nres; j++)
            if (res[j] < res[i]) {
                double t = res[i];
                res[i] = res[j], res[j] = t;
            }
    double med = nres ? (nres % 2 ? res[nres / 2] : 0.5 * (res[nres / 2 - 1] + res[nres / 2])) : -1;
    CHECK(nxch == 8 && nlate == 8, "%d exchange and %d late times kept, want one per size (8)", nxch, nlate);
    CHECK(nres >= 1 && L->pickup_us.n == nres && fabs(med * 1e6 - L->pickup_us.value) <= 1e-6 * (1 + L->pickup_us.value),
          "pickup %g us, the kept late times give %g us (%d sizes)", L->pickup_us.value, med * 1e6, nres);
    /* The step spread: the median over the whole-layer timings of at
     * least 100 us (all of them if none) of each one's spread, recomputed
     * from the kept samples, at most 1 (a busy machine's); every timing
     * has one, not negative (a short layer's may exceed 1). */
    double sp[4096];
    int nsp = 0, nrec = 0, nbad = 0;
    for (int all = 0; all < 2 && !nsp; all++)
        for (const cJSON *e = raw ? cJSON_GetObjectItem(raw, "compute")->child : NULL; e && nsp < 4096;
             e = e->next) {
            const cJSON *x = cJSON_GetObjectItem(e, "spread");
            if (!all) nrec++, nbad += !x || !(x->valuedouble >= 0 && isfinite(x->valuedouble));
            if (!x || cJSON_GetObjectItem(e, "share")->valuedouble != 1 ||
                !(cJSON_GetObjectItem(e, "seconds")->valuedouble > 0))
                continue;
            if (!all && cJSON_GetObjectItem(e, "seconds")->valuedouble < 100e-6) continue;
            sp[nsp++] = x->valuedouble;
        }
    for (int i = 0; i < nsp; i++)
        for (int j = i + 1; j < nsp; j++)
            if (sp[j] < sp[i]) {
                double t = sp[i];
                sp[i] = sp[j], sp[j] = t;
            }
    double spm = nsp ? (nsp % 2 ? sp[nsp / 2] : 0.5 * (sp[nsp / 2 - 1] + sp[nsp / 2])) : -1;
    if (spm > COEFFS_SPREAD_MAX) spm = COEFFS_SPREAD_MAX;
    CHECK(nrec > 0 && nbad == 0, "%d of %d compute timings without a spread, or a negative one", nbad, nrec);
    CHECK(D->step_spread.source == COEFFS_MEASURED && D->step_spread.n == nsp &&
              D->step_spread.value == spm,
          "step spread %g from %d timings, the kept samples give %g from %d", D->step_spread.value,
          D->step_spread.n, spm, nsp);
    cJSON_Delete(raw);
    /* A per-device factor for each CPU device, r0 and r1, from three rounds
     * of whole passes; how fast the cores are is the machine's, so only a
     * wide bound. */
    CHECK(c->nper == 2, "per_device: %d entries, want 2", c->nper);
    for (int i = 0; i < c->nper && i < 2; i++)
        CHECK(!strcmp(c->per[i].name, i ? "r1" : "r0") &&
                  c->per[i].compute_scale.source == COEFFS_MEASURED && c->per[i].compute_scale.n == 3 &&
                  c->per[i].compute_scale.value > 0.1 && c->per[i].compute_scale.value < 10,
              "per_device %d: %s %g from %d rounds", i, c->per[i].name, c->per[i].compute_scale.value,
              c->per[i].compute_scale.n);
    CHECK(coeffs_isset(&D->copy_bandwidth_mbs) && D->copy_bandwidth_mbs.value > 100, "copy bandwidth");
    CHECK(D->busy_w.source == COEFFS_DECLARED && D->busy_w.value == 15 && D->idle_w.value == 5,
          "powers not the declared ones");
    /* The bias is the baseline of a rank: compare with an idle rank. */
    double idle = idle_rank_rss();
    CHECK(isfinite(idle) && coeffs_isset(&D->mem_bias_mb) && fabs(D->mem_bias_mb.value - idle) < 0.3 * idle,
          "memory bias %g MB, idle rank %g MB", D->mem_bias_mb.value, idle);

    /* The database row and its report. */
    res_db *db = res_open(path("c.db"), RES_OPEN_READ, err);
    CHECK(db != NULL, "%s", err);
    if (db) {
        sqlite3_stmt *st;
        sqlite3 *h = res_sqlite(db);
        if (sqlite3_prepare_v2(h, "SELECT network, coeffs, report FROM calibrations", -1, &st, NULL) == SQLITE_OK) {
            int rows = 0;
            while (sqlite3_step(st) == SQLITE_ROW) {
                rows++;
                CHECK(!strcmp((const char *)sqlite3_column_text(st, 0), "toy6,branchy"), "network column");
                cost_coeffs *c2 = coeffs_from_json((const char *)sqlite3_column_text(st, 1), "db", err);
                CHECK(c2 != NULL, "stored coefficients: %s", err);
                cJSON *rep = cJSON_Parse((const char *)sqlite3_column_text(st, 2));
                const cJSON *fits = cJSON_GetObjectItem(rep, "fits");
                if (c2) class_curves(fits, c2);
                coeffs_free(c2);
                CHECK(cJSON_GetArraySize(fits) > 10, "report has %d fits", cJSON_GetArraySize(fits));
                const cJSON *f0 = cJSON_GetArrayItem(fits, 0);
                CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(f0, "points")) >= 2 &&
                          cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "points"), 0), "residual"),
                      "fit without points and residuals");
                CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "memory_runs")) >= 4, "memory runs");
                check_pull_runs(rep, L, pull_xrate, pull_xn);
                class_intercepts(fits);
                cJSON_Delete(rep);
            }
            CHECK(rows == 1, "%d calibration rows", rows);
            sqlite3_finalize(st);
        }
        res_close(db);
    }
    coeffs_free(c);
}

/* A power sensor file (milliwatts, as a Jetson INA3221 rail): the worker
 * reads it idle and busy; a constant 7500 gives 7.5 W for both.  Device r0
 * states another CPU architecture than this machine's: the coefficients
 * still record the measuring one, and calibrate warns in one line. */
static void test_sensor(void)
{
    char args[2048], *e, err[BASE_ERRLEN], d0[600], d1[600], want[200];
    struct utsname un;
    CHECK(uname(&un) == 0);
    const char *other = strcmp(un.machine, "aarch64") ? "aarch64" : "x86_64";
    put("power_mw", "7500\n");
    snprintf(d0, sizeof d0, "{\"name\": \"r0\", \"board\": \"localhost\", \"kind\": \"cpu\", "
             "\"freq_mhz\": 2000, \"cores\": 1, \"memory_mb\": 4096, \"idle_w\": 5, \"busy_w\": 15, "
             "\"arch\": \"%s\", \"energy_sensor\": \"%s\"}", other, path("power_mw"));
    snprintf(d1, sizeof d1, "%s", dev_json("r1", "localhost", "cpu"));
    platform_file("sensor.json", d0, d1);
    snprintf(args, sizeof args, "calibrate --platform %s --network toy6 --quick -o %s --db %s",
             path("sensor.json"), path("sensor-out.json"), path("s.db"));
    int rc = dse(NULL, args, 600, &e);
    CHECK(rc == 0, "calibrate with a sensor: exit %d: %s", rc, e);
    snprintf(want, sizeof want, "warning: coefficients measured on %s used for 1 %s device (r0)",
             un.machine, other);
    CHECK(strstr(e, want) != NULL, "stderr lacks \"%s\": %s", want, e);
    free(e);
    cost_coeffs *c = coeffs_load(path("sensor-out.json"), err);
    CHECK(c != NULL, "%s", err);
    if (!c) return;
    CHECK(c->arch && !strcmp(c->arch, un.machine), "arch %s", c->arch ? c->arch : "(none)");
    const coeffs_device *D = &c->dev[PLAT_CPU];
    CHECK(D->busy_w.source == COEFFS_MEASURED && NEAR(D->busy_w.value, 7.5, 1e-9) &&
              D->idle_w.source == COEFFS_MEASURED && NEAR(D->idle_w.value, 7.5, 1e-9),
          "sensor powers: busy %g (%s) idle %g (%s)", D->busy_w.value,
          coeffs_source_name(D->busy_w.source), D->idle_w.value, coeffs_source_name(D->idle_w.source));
    coeffs_free(c);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dse-test-calib-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    test_bad_input();
    test_failures();
    test_success();
    test_sensor();
    if (!check_failures) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) {}
    } else {
        fprintf(stderr, "%d check(s) failed (files kept in %s)\n", check_failures, dir);
    }
    return check_failures ? 1 : 0;
}
