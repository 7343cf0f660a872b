/* test_validate.c -- `dse validate` on a real campaign: measured rows are
 * stored per device and per point; a dead rank, a hung rank and a wrong
 * output are each stored as failed with their reason while the other points
 * still run, and the exit code says so; GPU points are stored unmeasured,
 * and so are points a stopped validation (Ctrl-C) never ran;
 * a platform that is not `local-*` runs rank r on device r's board through
 * a generated hostfile (here: this machine by name; a board that does not
 * exist fails every point, naming it). */
#include <math.h>
#include <sqlite3.h>
#include "check.h"
#include "run.h"
#include "jsonutil.h"
#include "trace.h"
#include "validate.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tfile.h"


static char dir[256];

/* A command line through the tests' runner (run.h). */
static int sh(const char *fmt, const char *arg) { return run_shf(fmt, arg); }

static long long scalar(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    } else {
        fprintf(stderr, "sql error: %s: %s\n", sql, sqlite3_errmsg(h));
    }
    sqlite3_close(h);
    return v;
}

static void text(const char *db, const char *sql, char *out, size_t len)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    out[0] = 0;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
}

/* A campaign into dir/NAME.db (its path in db) on a two-device platform
 * NAME (file dir/NAME.json): device 0 a CPU on localhost, device 1 of
 * kind1 on board b1.  0 on success. */
static int campaign(const char *name, const char *b1, const char *kind1, char *db, size_t len)
{
    char plat[300], cmd[2048];
    snprintf(plat, sizeof plat, "%s/%s.json", dir, name);
    snprintf(db, len, "%s/%s.db", dir, name);
    FILE *f = fopen(plat, "w");
    if (!f) return -1;
    fprintf(f, "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"%s\",\"devices\":["
               "{\"name\":\"c0\",\"board\":\"localhost\",\"kind\":\"cpu\",\"freq_mhz\":2000,"
               "\"cores\":1,\"memory_mb\":4096,\"idle_w\":1,\"busy_w\":2},"
               "{\"name\":\"d1\",\"board\":\"%s\",\"kind\":\"%s\",\"freq_mhz\":2000,\"cores\":%d,"
               "\"memory_mb\":4096,\"idle_w\":1,\"busy_w\":2}],"
               "\"links\":{\"same_board\":{\"latency_us\":2,\"bandwidth_mbs\":4000},"
               "\"network\":{\"latency_us\":50,\"bandwidth_mbs\":1000}}}\n",
            name, b1, kind1, strcmp(kind1, "gpu") ? 1 : 384);
    fclose(f);
    snprintf(cmd, sizeof cmd, DSE_BIN " run --network alexnet-bvlc --platform %s --chromosome hybrid "
             "--splits 2 --pop 24 --gens 6 --seed 3 --db %s --quiet >/dev/null", plat, db);
    return sh("%s", cmd);
}

/* Boards: rank r runs where device r is.  Both devices on this machine
 * (one spelt "localhost", one by its host name) in a platform that is not
 * `local-*`: the generated hostfile names this host twice and every point
 * runs; a board that does not exist fails every point, naming it. */
static void boards(void)
{
    char host[256], db[300], keep[300], cmd[2048], buf[600], reason[512];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    snprintf(keep, sizeof keep, "%s/twin-keep", dir);
    CHECK(campaign("twin-test", host, "cpu", db, sizeof db) == 0, "campaign on twin-test failed");
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --rounds 1 --bench 0,2 --keep %s "
             ">/dev/null 2>%s/twin.err", db, keep, dir);
    int rc = sh("%s", cmd);
    long long n = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL");
    long long ok = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND "
                              "status = 'ok' AND meas_latency > 0");
    CHECK(rc == 0 && n >= 1 && ok == n, "twin-test: exit %d, %lld of %lld points measured", rc, ok, n);
    snprintf(buf, sizeof buf, "%s/hosts", keep);
    FILE *f = fopen(buf, "r");
    char l0[300] = "", l1[300] = "";
    CHECK(f && fgets(l0, sizeof l0, f) && fgets(l1, sizeof l1, f), "%s: no two lines", buf);
    if (f) fclose(f);
    l0[strcspn(l0, "\n")] = l1[strcspn(l1, "\n")] = 0;
    CHECK(!strcmp(l0, host) && !strcmp(l1, host), "hostfile lines \"%s\", \"%s\", want \"%s\" twice",
          l0, l1, host);
    printf("ok: twin-test (boards localhost and %s) ran %lld points through the generated hostfile\n",
           host, ok);

    CHECK(campaign("far-test", "jetson-7", "cpu", db, sizeof db) == 0, "campaign on far-test failed");
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --rounds 1 --bench 0,1 --timeout 60 "
             ">/dev/null 2>/dev/null", db);
    rc = sh("%s", cmd);
    n = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL");
    long long failed = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND "
                                  "status = 'failed' AND meas_latency IS NULL");
    text(db, "SELECT reason FROM validations WHERE device IS NULL LIMIT 1", reason, sizeof reason);
    CHECK(rc == 1 && n >= 1 && failed == n && strstr(reason, "jetson-7"),
          "far-test: exit %d, %lld of %lld failed, reason \"%s\"", rc, failed, n, reason);
    printf("ok: far-test (board jetson-7 absent) -> exit 1, reason: %.100s\n", reason);
}

/* --rounds 3: every point runs three times, the points in turn; the run
 * stored is the median-latency round (its trace is kept as
 * measured-trace.json, the other two as round-K-trace.json); the order
 * printed counts ties and inversions as recomputed here from the stored
 * predictions and measurements and the rounds' spread (from the traces,
 * whose latency is the run's median inference: --bench 1,3). */
static void rounds(const char *db)
{
    char keep[300], cmd[2048], path[700], err[BASE_ERRLEN], out[300];
    snprintf(keep, sizeof keep, "%s/rounds-keep", dir);
    snprintf(out, sizeof out, "%s/rounds.txt", dir);
    long long before = scalar(db, "SELECT coalesce(max(id), 0) FROM validations");
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 3 --rounds 3 --bench 1,3 "
             "--keep %s >%s 2>&1", db, keep, out);
    CHECK(sh("%s", cmd) == 0, "validate --rounds 3 failed");
    char q[300];
    snprintf(q, sizeof q, "SELECT count(*) FROM validations WHERE device IS NULL AND id > %lld", before);
    int n = (int)scalar(db, q);
    CHECK(n >= 2 && n <= 3, "%d points validated, want 2 or 3", n);
    int idx[3];
    double pred[3], meas[3], spread[3];
    for (int v = 0; v < n && v < 3; v++) {
        snprintf(q, sizeof q, "SELECT point FROM validations WHERE device IS NULL AND id > %lld "
                 "ORDER BY id LIMIT 1 OFFSET %d", before, v);
        idx[v] = (int)scalar(db, q);
        snprintf(q, sizeof q, "SELECT CAST(round(pred_latency * 1e6) AS INTEGER) FROM validations "
                 "WHERE device IS NULL AND id > %lld AND point = %d", before, idx[v]);
        pred[v] = scalar(db, q) * 1e-6;
        snprintf(q, sizeof q, "SELECT CAST(round(meas_latency * 1e6) AS INTEGER) FROM validations "
                 "WHERE device IS NULL AND id > %lld AND point = %d", before, idx[v]);
        meas[v] = scalar(db, q) * 1e-6;
        /* the three rounds' latencies: the kept median and the two others */
        double lat[3];
        int k = 0;
        trace_file t;
        snprintf(path, sizeof path, "%s/point-%d/measured-trace.json", keep, idx[v]);
        memset(&t, 0, sizeof t);
        CHECK(trace_load(path, &t, err) == 0, "%s", err);
        double med = t.latency_us * 1e-3;
        trace_file_free(&t);
        for (int r = 1; r <= 3; r++) {
            snprintf(path, sizeof path, "%s/point-%d/round-%d-trace.json", keep, idx[v], r);
            memset(&t, 0, sizeof t);
            if (access(path, F_OK) != 0) continue;
            CHECK(trace_load(path, &t, err) == 0, "%s", err);
            if (k < 2) lat[k++] = t.latency_us * 1e-3;
            trace_file_free(&t);
        }
        CHECK(k == 2, "point %d: %d other rounds' traces kept, want 2", idx[v], k);
        lat[2] = med;
        double lo = fmin(lat[0], lat[1]), hi = fmax(lat[0], lat[1]);
        CHECK(med >= lo && med <= hi, "point %d: kept round %.3f ms is not the median of %.3f, %.3f, "
              "%.3f", idx[v], med, lat[0], lat[1], med);
        CHECK(fabs(med - meas[v]) <= 2e-6, "point %d: stored latency %.6f ms is not the kept round's "
              "%.6f ms", idx[v], meas[v], med);
        spread[v] = fmax(hi, med) / fmin(lo, med);
    }
    /* the order line, recomputed */
    int pairs = 0, ties = 0, wrong = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            pairs++;
            double lo = fmin(pred[a], pred[b]), sp = fmax(spread[a], spread[b]) - 1;
            if (fabs(pred[a] - pred[b]) <= lo * sp * (1 + 1e-9) + 2e-6) ties++;
            else wrong += (pred[a] < pred[b]) != (meas[a] < meas[b]);
        }
    char want[200], line[600];
    snprintf(want, sizeof want, "latency order: %d of %d pairs as predicted, %d tie%s (", pairs - ties - wrong,
             pairs, ties, ties == 1 ? "" : "s");
    FILE *f = fopen(out, "r");
    int found = 0;
    while (f && fgets(line, sizeof line, f)) found |= !strncmp(line, want, strlen(want));
    if (f) fclose(f);
    CHECK(found, "%s lacks \"%s\"", out, want);
    printf("ok: 3 rounds of %d points, the median round stored; %s...\n", n, want);
}

/* The stored steps of a point are its traces: the measured one dse exec
 * wrote (kept with --keep) and the predicted one dse eval writes for the
 * same mapping; dse plot's timeline data are those rows. */
static void steps(const char *db)
{
    char keep[300], cmd[2048], path[600], err[BASE_ERRLEN];
    snprintf(keep, sizeof keep, "%s/steps-keep", dir);
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 1 --bench 1,3 --keep %s "
             ">/dev/null 2>&1", db, keep);
    CHECK(sh("%s", cmd) == 0, "validate --keep failed");
    long long vid = scalar(db, "SELECT max(id) FROM validations WHERE device IS NULL");
    char q[200];
    snprintf(q, sizeof q, "SELECT point FROM validations WHERE id = %lld", vid);
    int point = (int)scalar(db, q);
    trace_file meas, pred;
    memset(&meas, 0, sizeof meas), memset(&pred, 0, sizeof pred);
    snprintf(path, sizeof path, "%s/point-%d/measured-trace.json", keep, point);
    CHECK(trace_load(path, &meas, err) == 0, "%s", err);
    snprintf(cmd, sizeof cmd, DSE_BIN " eval --network %s/network.json --platform %s/platform.json "
             "--mapping %s/point-%d/dse-mapping.json --trace %s/pred.json >/dev/null 2>&1", keep, keep,
             keep, point, keep);
    CHECK(sh("%s", cmd) == 0, "dse eval --trace failed");
    snprintf(path, sizeof path, "%s/pred.json", keep);
    CHECK(trace_load(path, &pred, err) == 0, "%s", err);
    sqlite3 *h;
    sqlite3_stmt *s;
    int rows = 0, same = 1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT device, step, op, layer, c0, nc, bytes, pred_start_ms, pred_ms, "
                           "meas_start_ms, meas_ms, meas_med_ms FROM validation_steps WHERE "
                           "validation = ? ORDER BY device, step", -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, vid);
        while (sqlite3_step(s) == SQLITE_ROW) {
            int k = rows++;
            if (k >= meas.nsteps || k >= pred.nsteps) { same = 0; break; }
            const trace_step *m = &meas.steps[k], *e = &pred.steps[k];
            int ok = sqlite3_column_int(s, 0) == m->dev && sqlite3_column_int(s, 1) == m->step &&
                     !strcmp((const char *)sqlite3_column_text(s, 2), plan_op_name(m->op)) &&
                     sqlite3_column_int(s, 3) == m->layer && sqlite3_column_int(s, 4) == m->c0 &&
                     sqlite3_column_int(s, 5) == m->nc && sqlite3_column_int64(s, 6) == m->bytes &&
                     sqlite3_column_double(s, 9) == m->ts_us * 1e-3 &&
                     sqlite3_column_double(s, 10) == m->dur_us * 1e-3 &&
                     sqlite3_column_double(s, 11) == m->med_us * 1e-3 &&
                     /* the predicted trace's times are written to the nanosecond */
                     fabs(sqlite3_column_double(s, 7) - e->ts_us * 1e-3) <= 1e-6 &&
                     fabs(sqlite3_column_double(s, 8) - e->dur_us * 1e-3) <= 1e-6;
            if (!ok) {
                CHECK(0, "step row %d (device %d step %d) differs from the traces", k, m->dev, m->step);
                same = 0;
            }
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(h);
    CHECK(rows > 0 && rows == meas.nsteps && rows == pred.nsteps && same,
          "%d stored steps, traces have %d measured and %d predicted", rows, meas.nsteps, pred.nsteps);
    printf("ok: the %d stored steps of point %d equal its measured and predicted traces\n", rows, point);
    /* The timeline plot's data are the stored rows. */
    snprintf(cmd, sizeof cmd, DSE_BIN " plot --campaign 1 --db %s -o %s/steps-plots >/dev/null", db, dir);
    CHECK(sh("%s", cmd) == 0, "dse plot failed");
    snprintf(path, sizeof path, "%s/steps-plots/timeline-1-%d.png", dir, point);
    FILE *f = fopen(path, "rb");
    unsigned char sig[8] = {0};
    CHECK(f && fread(sig, 1, 8, f) == 8 && !memcmp(sig, "\x89PNG", 4), "%s is not a PNG", path);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/steps-plots/timeline-1-%d.dat", dir, point);
    f = fopen(path, "r");
    char line[512];
    int k = 0, good = 1;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        int dv, st;
        double ps, pe;
        if (sscanf(line, "%d %d %*s %*d %*d %*d %*d %lf %lf", &dv, &st, &ps, &pe) != 4 || k >= meas.nsteps) {
            good = 0;
            break;
        }
        snprintf(q, sizeof q, "SELECT CAST(pred_start_ms * 1e9 AS INTEGER) FROM validation_steps "
                 "WHERE validation = %lld AND device = %d AND step = %d", vid, dv, st);
        good &= scalar(db, q) == (long long)(ps * 1e9);
        k++;
    }
    if (f) fclose(f);
    CHECK(good && k == rows, "timeline data: %d rows, %d stored", k, rows);
    printf("ok: timeline-1-%d.png drawn from exactly the stored steps\n", point);
    trace_file_free(&meas);
    trace_file_free(&pred);
}

/* GPU work: the model scores it, the runtime cannot run it here; such
 * points are stored unmeasured with their prediction, the others run. */
static void gpu(void)
{
    char db[300], cmd[2048];
    CHECK(campaign("gpu-test", "localhost", "gpu", db, sizeof db) == 0, "campaign on gpu-test failed");
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 6 --rounds 1 --bench 0,1 "
             ">/dev/null 2>/dev/null", db);
    int rc = sh("%s", cmd);
    long long n = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL");
    long long un = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND "
                              "status = 'unmeasured' AND reason LIKE '%GPU%' AND "
                              "meas_latency IS NULL AND pred_latency > 0");
    long long ok = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND "
                              "status = 'ok' AND meas_latency > 0");
    CHECK(rc == 0 && un >= 1 && un + ok == n, "gpu-test: exit %d, %lld unmeasured + %lld ok of %lld",
          rc, un, ok, n);
    printf("ok: gpu-test: %lld points with GPU work stored unmeasured, %lld measured, exit 0\n", un, ok);
}

/* Stopped before anything ran (the stop flag Ctrl-C sets, already set):
 * every chosen point is stored predicted and unmeasured, saying why, none
 * as ok, and the run reports "interrupted" with exit status 1. */
static void stopped(const char *db)
{
    volatile sig_atomic_t stop = 1;
    long long before = scalar(db, "SELECT COALESCE(MAX(id), 0) FROM validations");
    val_options o = {0};
    o.db = db, o.campaign = 1, o.rounds = 2, o.warmup = 0, o.reps = 1, o.stop = &stop;
    val_report r;
    char err[BASE_ERRLEN] = "";
    memset(&r, 0, sizeof r);
    int rc = val_run(&o, &r, err);
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM validations WHERE id > %lld AND device IS NULL", before);
    long long n = scalar(db, sql);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM validations WHERE id > %lld AND device IS NULL AND "
             "status = 'unmeasured' AND reason = 'interrupted before it was measured' AND meas_latency IS NULL AND "
             "pred_latency > 0", before);
    long long un = scalar(db, sql);
    CHECK(rc == 1 && strstr(err, "interrupted") && r.n >= 1 && n == r.n && un == n,
          "stopped validation: exit %d (%s), %d points, %lld stored, %lld unmeasured", rc, err, r.n, n, un);
    for (int v = 0; v < r.n; v++) CHECK(strcmp(r.pts[v].status, "ok"), "point %d reported ok", r.pts[v].idx);
    val_report_free(&r);
    printf("ok: a stopped validation stored its %lld points unmeasured\n", un);
}

/* A platform `name` of two CPU devices c0, c1 on this host (c0 stating CPU
 * architecture arch0 unless it is NULL) joined by a same_board link of
 * latency lat_us and bandwidth bw_mbs, coefficients of this machine's
 * architecture that state nothing else (the model then reads the
 * platform's figures), and a toy6 campaign on them (`dse run` options
 * run) into DIR/name.db, returned in db. */
static void two_cpus(const char *name, const char *arch0, double lat_us, double bw_mbs, const char *run,
                     char *db, size_t dblen)
{
    char plat[300], co[300], cmd[2048];
    snprintf(plat, sizeof plat, "%s/%s.json", dir, name);
    snprintf(co, sizeof co, "%s/%s-coeffs.json", dir, name);
    snprintf(db, dblen, "%s/%s.db", dir, name);
    struct utsname un;
    CHECK(uname(&un) == 0);
    char a0[80] = "";
    if (arch0) snprintf(a0, sizeof a0, "\"arch\":\"%s\",", arch0);
    FILE *f = fopen(plat, "w");
    fprintf(f, "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"%s\",\"devices\":["
               "{\"name\":\"c0\",\"board\":\"localhost\",%s\"freq_mhz\":2000,"
               "\"cores\":1,\"memory_mb\":4096,\"idle_w\":1,\"busy_w\":2},"
               "{\"name\":\"c1\",\"board\":\"localhost\",\"freq_mhz\":2000,\"cores\":1,"
               "\"memory_mb\":4096,\"idle_w\":1,\"busy_w\":2}],"
               "\"links\":{\"same_board\":{\"latency_us\":%g,\"bandwidth_mbs\":%g}}}\n", name, a0, lat_us, bw_mbs);
    fclose(f);
    f = fopen(co, "w");
    fprintf(f, "{\"format\":\"dse-coefficients\",\"version\":2,\"platforms\":[\"%s\"],"
               "\"board\":\"here\",\"date\":\"-\",\"arch\":\"%s\",\"networks\":[\"toy6\"],"
               "\"devices\":{\"cpu\":{}}}\n", name, un.machine);
    fclose(f);
    snprintf(cmd, sizeof cmd, DSE_BIN " run --network toy6 --platform %s --coeffs %s %s --db %s --quiet "
             ">/dev/null 2>&1", plat, co, run, db);
    CHECK(sh("%s", cmd) == 0, "campaign on %s failed", name);
}

/* Coefficients measured on this machine's CPU architecture, a device that
 * states another: validate says so in one warning line, and runs. */
static void arch(void)
{
    char db[300], err[300], cmd[2048];
    struct utsname un;
    CHECK(uname(&un) == 0);
    const char *other = strcmp(un.machine, "aarch64") ? "aarch64" : "x86_64";
    snprintf(err, sizeof err, "%s/arch.err", dir);
    two_cpus("arch-test", other, 2, 4000, "--chromosome hybrid --pop 8 --gens 2 --seed 3", db, sizeof db);
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --rounds 1 --bench 0,1 >/dev/null 2>%s", db, err);
    int rc = sh("%s", cmd);
    char *e = tfile_read(err, NULL), want[200];
    snprintf(want, sizeof want, "dse validate: warning: coefficients measured on %s used for 1 %s "
             "device (c0)", un.machine, other);
    CHECK(rc == 0 && e && strstr(e, want), "arch-test: exit %d, stderr: %s", rc, e ? e : "?");
    free(e);
    printf("ok: arch-test: %s\n", want);
}

/* The slow-launch rule by hand: a pass over 1.5x (message + touch) is slow
 * only for a run that passed data; a touch over 1.3x the fastest is slow
 * for any run; missing probes are never slow; val_judge_launch lowers the
 * fastest touch before judging. */
static void launch_rule(void)
{
    CHECK(!val_launch_slow(1000, 40, 0, 200, 40), "a dear pass without data passed is not slow");
    CHECK(val_launch_slow(1000, 40, 1, 200, 40), "1000 us > 1.5 x (200 + 40) is slow");
    CHECK(!val_launch_slow(359, 40, 1, 200, 40), "359 us <= 1.5 x 240 is not slow");
    CHECK(val_launch_slow(361, 40, 1, 200, 40), "361 us > 1.5 x 240 is slow");
    CHECK(val_launch_slow(250, 53, 0, 200, 40) && !val_launch_slow(250, 52, 0, 200, 40),
          "a touch over 1.3 x 40 = 52 us is slow, at 52 it is not");
    CHECK(!val_launch_slow(NAN, NAN, 1, 200, 40), "no probe: not slow");
    rt_result r;
    memset(&r, 0, sizeof r);
    r.ndev = 2;
    double tmin = INFINITY;
    r.handoff.a = -1;
    CHECK(!val_judge_launch(&r, 200, &tmin) && isinf(tmin), "no pair probed: not slow, fastest unchanged");
    r.handoff.a = 0, r.handoff.b = 1, r.handoff.hop_us = 1000, r.handoff.touch_us = 40;
    CHECK(!rt_moved_data(&r) && !val_judge_launch(&r, 200, &tmin) && tmin == 40,
          "no bytes sent: not slow by its pass; the fastest touch is now its 40 us (%g)", tmin);
    r.dev[1].bytes_sent = 602112;
    CHECK(rt_moved_data(&r) && val_judge_launch(&r, 200, &tmin), "bytes sent: slow by its pass");
    r.handoff.hop_us = 250, r.handoff.touch_us = 60;
    CHECK(val_judge_launch(&r, 200, &tmin) && tmin == 40, "a touch of 60 us after one of 40: slow");
    r.handoff.touch_us = 30;
    CHECK(!val_judge_launch(&r, 200, &tmin) && tmin == 30, "a faster touch lowers the fastest first");
    printf("ok: the slow-launch rule, by hand\n");
}

/* --relaunch: a platform whose declared link passes 2 MB in 0.2 us, so that
 * the model prices the probe's message at nothing and every launch of a
 * point that passes data is slow by val_launch_slow (a real pass copies 2
 * MB and touches it: over twice a touch, past 1.5x).  Each such point's
 * launch is then run again exactly --relaunch times; the handoff line
 * counts them, as many "again" lines say so, and --relaunch 0 runs none.
 * A point that passes no data can be relaunched only by a slow touch (the
 * machine's), so the count is bounded by the points, not fixed. */
static void relaunch(void)
{
    char db[300], out[300], cmd[2048];
    snprintf(out, sizeof out, "%s/fastlink.txt", dir);
    two_cpus("fastlink", NULL, 0, 1e7, "--chromosome naive --pop 16 --gens 3 --seed 5", db, sizeof db);
    for (int n = 2; n >= 0; n -= 2) {
        snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 3 --rounds 1 --bench 0,1 "
                 "--no-reference --relaunch %d >%s 2>&1", db, n, out);
        int rc = sh("%s", cmd);
        char *t = tfile_read(out, NULL);
        CHECK(rc == 0 && t, "fastlink: validate --relaunch %d exit %d:\n%s", n, rc, t ? t : "");
        if (!t) return;
        /* points of this run that passed data: their stored steps send */
        char sql[300];
        snprintf(sql, sizeof sql, "SELECT COUNT(DISTINCT validation) FROM validation_steps WHERE op = 'send' "
                 "AND validation IN (SELECT id FROM validations WHERE device IS NULL ORDER BY id DESC LIMIT %lld)",
                 scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL") / (n ? 1 : 2));
        long long moving = scalar(db, sql);
        long long points = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL") / (n ? 1 : 2);
        const char *h = strstr(t, "\nhandoff: ");
        int said = 0, again = 0;
        const char *r = h ? strstr(h, " slow launch") : NULL;
        if (r && h && r < strchr(h + 1, '\n')) {
            const char *q = r;
            while (q > h && q[-1] >= '0' && q[-1] <= '9') q--;
            said = atoi(q);
        }
        for (const char *q = t; (q = strstr(q, "a slow launch (data passed")); q++) again++;
        CHECK(h != NULL, "fastlink: no handoff line:\n%s", t);
        CHECK(said == again, "fastlink --relaunch %d: the handoff line says %d launches run again, %d "
              "progress lines:\n%s", n, said, again, t);
        CHECK(said <= n * points, "fastlink --relaunch %d: %d launches run again, %lld points:\n%s", n, said,
              points, t);
        /* Every kept launch slow by its pass (its pass over 1.5x the message
         * plus the slowest touch): then every earlier one was too, so each
         * point that passes data ran exactly n more times.  A build whose
         * touch loop is instrumented (ASan: 40x slower, the MPI copy is not)
         * can keep a pass under that: then only the counts above hold. */
        int k = 0;
        double h0 = 0, h1 = 0, msg = 0, t0 = 0, t1 = 0;
        if (h)
            sscanf(h, "\nhandoff: c0 <-> c1, 2 MB passed and touched, in each of %d launches: %lf-%lf us per "
                      "pass (the model's message %lf us + the same touch of its own data %lf-%lf us)",
                   &k, &h0, &h1, &msg, &t0, &t1);
        int all_slow = k > 0 && h0 > VAL_HANDOFF_SLOW * (msg + t1);
        if (all_slow)
            CHECK(said >= n * moving, "fastlink --relaunch %d: %d launches run again, %lld of %lld points "
                  "pass data, every kept pass slow (%g us > 1.5 x (%g + %g)):\n%s", n, said, moving, points,
                  h0, msg, t1, t);
        printf("ok: --relaunch %d: %d slow launches run again (%lld of %lld points pass data; passes %g-%g us "
               "against 1.5 x (%g + %g): %s)\n", n, said, moving, points, h0, h1, msg, t1,
               all_slow ? "every one slow, each relaunched exactly so" : "not all slow: counts only");
        free(t);
    }
}

/* The reference (validate.h, val_reference): out is `dse validate`'s
 * output (stdout and stderr) for campaign 1 of db (alexnet-bvlc on local-2
 * with the built-in default coefficients).  Its device is the one `dse
 * eval --single` predicts fastest, its predicted latency is that one's,
 * its ratio is measured over predicted; every ok point's "vs reference"
 * predicted value is the point's predicted latency over the reference's
 * (both as printed); a ratio past 10% says the model is not calibrated.
 * Nothing here depends on how fast the machine is. */
/* The handoff line of `dse validate`'s output t: its two devices (local-2:
 * rank0 and rank1), launches probed (want; -1: any), the ranges in order and
 * the model's message positive.  Whether a launch was slow is the machine's
 * business: not checked. */
static void handoff_line(const char *t, int want)
{
    const char *l = strstr(t, "\nhandoff: ");
    int n = 0;
    double h0 = 0, h1 = 0, msg = 0, t0 = 0, t1 = 0;
    CHECK(l && sscanf(l, "\nhandoff: rank0 <-> rank1, 2 MB passed and touched, in each of %d launches: "
                         "%lf-%lf us per pass (the model's message %lf us + the same touch of its own "
                         "data %lf-%lf us)", &n, &h0, &h1, &msg, &t0, &t1) == 6,
          "no handoff line in:\n%s", t);
    CHECK((want < 0 ? n >= 1 : n == want) && h0 > 0 && h0 <= h1 && msg > 0 && t0 > 0 && t0 <= t1,
          "handoff line: %d launches (want %d), pass %g-%g us, message %g us, touch %g-%g us", n, want, h0,
          h1, msg, t0, t1);
}

static void reference(const char *db, const char *out)
{
    char *t = tfile_read(out, NULL);
    CHECK(t != NULL, "%s unreadable", out);
    if (!t) return;
    const char *l = strstr(t, "\nreference: the whole network on ");
    char name[64] = "";
    double meas = 0, pred = 0, ratio = 0;
    CHECK(l && sscanf(l, "\nreference: the whole network on %63s alone, every round before the "
                         "points: measured %lf ms, predicted %lf ms (measured / predicted %lf)",
                      name, &meas, &pred, &ratio) == 4,
          "no reference line in:\n%s", t);
    /* local-2's two ranks share a board: the reference ran beside the other
     * too (dse exec --beside), and the ratio of its latency then over alone
     * is printed (its size is the machine's, not checked) */
    const char *bl = strstr(t, "\nbeside: the reference with the 1 other CPU device of its board busy at once: ");
    double bratio = 0;
    CHECK(bl && sscanf(strchr(bl, ':') + 1, " the reference with the 1 other CPU device of its board busy "
                                            "at once: %lfx", &bratio) == 1 && bratio > 0,
          "no beside line in:\n%s", t);
    handoff_line(t, -1);
    double best = -1;
    char bestname[64] = "";
    for (int d = 0; d < 2; d++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, DSE_BIN " eval --network alexnet-bvlc --platform local-2 --single %d", d);
        run_result r;
        run_sh(&r, cmd);
        const char *x = r.out ? strstr(r.out, "\n  latency") : NULL;
        double lat = -1;
        /* "  latency    227.861 ms" (dse eval's summary) */
        if (x) sscanf(x + strlen("\n  latency"), "%lf", &lat);
        CHECK(lat > 0, "dse eval --single %d: no latency in:\n%s", d, r.out ? r.out : "");
        if (lat > 0 && (best < 0 || lat < best)) best = lat, snprintf(bestname, sizeof bestname, "rank%d", d);
        run_free(&r);
    }
    CHECK(!strcmp(name, bestname), "reference on %s, the model's fastest single device is %s", name,
          bestname);
    /* printed with 4 significant digits each */
    CHECK(fabs(pred - best) <= 5e-4 * best, "reference predicted %g ms, dse eval --single %g", pred, best);
    CHECK(meas > 0 && fabs(ratio - meas / pred) <= 2e-3 * ratio, "reference ratio %g, %g / %g", ratio,
          meas, pred);
    /* past 10% by more than the printed ratio's rounding (dse validate
     * compares the unrounded one) */
    if (fabs(ratio - 1) > 0.10 + 1e-3)
        CHECK(strstr(t, "dse validate: warning: a single-device run takes") &&
                  strstr(t, "the model is not calibrated (built-in default coefficients)"),
              "ratio %g without the uncalibrated warning:\n%s", ratio, t);
    /* The table: columns found by their headings. */
    const char *h = strstr(t, "point          index |");
    int lat_col = -1, ref_col = -1, st_col = -1, nc = 0;
    if (h) {
        char head[600];
        snprintf(head, sizeof head, "%.*s", (int)strcspn(h, "\n"), h);
        for (char *c = strtok(head, "|"); c; c = strtok(NULL, "|"), nc++) {
            if (strstr(c, "latency")) lat_col = nc;
            if (strstr(c, "vs reference")) ref_col = nc;
            if (strstr(c, "status")) st_col = nc;
        }
    }
    CHECK(lat_col > 0 && ref_col > 0 && st_col > ref_col, "table heading without latency, reference or "
          "status columns:\n%s", t);
    int rows = 0;
    for (const char *r = strstr(t, "\nbest "); r && st_col > 0; r = strstr(r + 1, "\nbest ")) {
        char line[600];
        size_t n = strcspn(r + 1, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), r + 1);
        char *col[12];
        int k = 0;
        for (char *c = strtok(line, "|"); c && k < 12; c = strtok(NULL, "|")) col[k++] = c;
        if (k <= st_col) continue;
        while (*col[st_col] == ' ') col[st_col]++;
        if (strncmp(col[st_col], "ok", 2)) continue;
        double pm = 0, pp = 0, rm = 0, rp = 0, e = 0;
        CHECK(sscanf(col[lat_col], "%lf %lf", &pm, &pp) == 2 &&
                  sscanf(col[ref_col], "%lf / %lf %lf%%", &rm, &rp, &e) == 3,
              "row \"%s\": no latency or reference columns", r + 1);
        CHECK(fabs(rp - pp / pred) <= 1e-3 + 2e-3 * rp, "row %s: predicted vs reference %g, want %g / %g",
              col[0], rp, pp, pred);
        CHECK(rm > 0 && fabs(e - 100 * (rm - rp) / rp) <= 1 + 0.01 * fabs(e),
              "row %s: error %g%%, measured %g / predicted %g relative", col[0], e, rm, rp);
        rows++;
    }
    CHECK(rows >= 1, "no ok point row with a reference column in:\n%s", t);
    printf("ok: reference on %s: measured %.4g ms, predicted %.4g ms (= dse eval --single); %d "
           "rows relative to it\n", name, meas, pred, rows);
    free(t);
    /* --no-reference: no reference run, line or column. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 1 --rounds 1 --bench 0,1 "
             "--no-reference >%s/noref.txt 2>&1", db, dir);
    CHECK(sh("%s", cmd) == 0, "validate --no-reference failed");
    char path[600];
    snprintf(path, sizeof path, "%s/noref.txt", dir);
    t = tfile_read(path, NULL);
    CHECK(t && !strstr(t, "reference") && !strstr(t, "beside"),
          "--no-reference still mentions a reference:\n%s", t ? t : "");
    if (t) handoff_line(t, 1); /* one point, one round, no reference: one launch probed */
    free(t);
    /* --no-beside: the reference alone */
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --top 1 --rounds 1 --bench 0,1 "
             "--no-beside --no-handoff >%s/nobeside.txt 2>&1", db, dir);
    CHECK(sh("%s", cmd) == 0, "validate --no-beside failed");
    snprintf(path, sizeof path, "%s/nobeside.txt", dir);
    t = tfile_read(path, NULL);
    CHECK(t && strstr(t, "\nreference: the whole network on ") && !strstr(t, "beside") && !strstr(t, "handoff"),
          "--no-beside --no-handoff: a beside or handoff line, or no reference:\n%s", t ? t : "");
    free(t);
    printf("ok: --no-reference runs no reference; --no-beside the reference alone, --no-handoff no "
           "probe; beside ratio %.3g\n", bratio);
}

int main(void)
{
    char db[300], cmd[2048], buf[1024];
    snprintf(dir, sizeof dir, "/tmp/dse-test-validate-%d", (int)getpid());
    sh("mkdir -p %s", dir);
    snprintf(db, sizeof db, "%s/v.db", dir);
    /* A campaign on two local ranks whose front spreads work over both. */
    snprintf(cmd, sizeof cmd, DSE_BIN " run --network alexnet-bvlc --platform local-2 "
             "--chromosome hybrid --splits 2 --pop 24 --gens 6 --seed 3 --db %s --quiet >/dev/null", db);
    CHECK(sh("%s", cmd) == 0, "campaign failed");

    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s --rounds 2 --bench 1,3 >%s/out.txt 2>&1",
             db, dir);
    int rc = sh("%s", cmd);
    CHECK(rc == 0, "validate exit %d", rc);
    long long points = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL");
    long long bad = scalar(db, "SELECT COUNT(*) FROM validations WHERE status != 'ok'");
    CHECK(points >= 1 && points <= 3, "1 to 3 best points stored, got %lld", points);
    CHECK(bad == 0, "all points ok, %lld not", bad);
    /* Measured latency and memory are real numbers; energy is not measured here. */
    long long meas = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND "
                                "meas_latency > 0 AND meas_memory > 0 AND meas_energy IS NULL");
    CHECK(meas == points, "measured latency/memory for every point (%lld of %lld)", meas, points);
    long long devrows = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NOT NULL");
    CHECK(devrows >= points, "per-device rows stored (%lld)", devrows);
    printf("ok: %lld points validated, %lld per-device rows\n", points, devrows);
    snprintf(buf, sizeof buf, "%s/out.txt", dir);
    reference(db, buf);
    {
        /* on a copy: the rows below are compared with this database's */
        char copy[300];
        snprintf(copy, sizeof copy, "%s/stopped.db", dir);
        CHECK(run_shf("cp %s %s", db, copy) == 0);
        stopped(copy);
    }

    /* dse plot draws predicted vs measured from exactly those rows. */
    snprintf(cmd, sizeof cmd, DSE_BIN " plot --campaign 1 --db %s -o %s/plots >/dev/null", db, dir);
    CHECK(sh("%s", cmd) == 0, "dse plot failed");
    snprintf(buf, sizeof buf, "%s/plots/validation-1.png", dir);
    FILE *png = fopen(buf, "rb");
    unsigned char sig[8] = {0};
    CHECK(png && fread(sig, 1, 8, png) == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8),
          "%s is not a PNG", buf);
    if (png) fclose(png);
    snprintf(buf, sizeof buf, "%s/plots/validation-1.dat", dir);
    FILE *dat = fopen(buf, "r");
    char line[512];
    int rows = 0;
    while (dat && fgets(line, sizeof line, dat)) {
        int pt;
        double pe, me, pm, mm, pl, ml;
        if (line[0] == '#' || sscanf(line, "%d %lf %lf %lf %lf %lf %lf", &pt, &pe, &me, &pm, &mm,
                                     &pl, &ml) != 7)
            continue;
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT CAST(ROUND(meas_latency * 1e6) AS INTEGER) FROM validations "
                 "WHERE campaign = 1 AND device IS NULL AND point = %d ORDER BY id DESC LIMIT 1", pt);
        CHECK(scalar(db, sql) == (long long)llround(ml * 1e6), "plotted latency of point %d is "
              "not the stored one", pt);
        rows++;
    }
    if (dat) fclose(dat);
    CHECK(rows == points, "%d plotted points, %lld validated", rows, points);
    printf("ok: dse plot drew predicted vs measured for %d points from the database\n", rows);

    /* Injected faults: every point fails with its reason, exit 1. */
    const char *faults[3][2] = {{"abort@1", "rank died"}, {"stall@1", "timed out"}, {"corrupt@1", "mismatch"}};
    for (int f = 0; f < 3; f++) {
        snprintf(cmd, sizeof cmd, "sqlite3 %s \"DELETE FROM validations\"", db);
        sh("%s", cmd);
        /* Only the stall needs a short deadline; the others must not race
         * one (a slow machine or a sanitizer build checks more slowly). */
        snprintf(cmd, sizeof cmd, "DSE_FAULT=%s " DSE_BIN " validate --campaign 1 --db %s --rounds 1 --bench 0,1 "
                 "--timeout %d >/dev/null 2>&1", faults[f][0], db, f == 1 ? 3 : 600);
        rc = sh("%s", cmd);
        long long nfail = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL AND status='failed'");
        long long nall = scalar(db, "SELECT COUNT(*) FROM validations WHERE device IS NULL");
        char reason[512];
        text(db, "SELECT reason FROM validations WHERE device IS NULL AND status='failed' LIMIT 1", reason,
             sizeof reason);
        /* A point whose mapping leaves rank 1 without steps is unaffected by the fault. */
        CHECK(rc == 1 && nfail >= 1 && nall == points,
              "%s: exit %d, %lld of %lld points failed", faults[f][0], rc, nfail, nall);
        CHECK(strstr(reason, faults[f][1]) != NULL, "%s: reason \"%s\" lacks \"%s\"", faults[f][0],
              reason, faults[f][1]);
        printf("ok: DSE_FAULT=%s -> exit %d, reason: %.80s\n", faults[f][0], rc, reason);
    }

    /* Unknown campaign, missing database: exit 2, nothing created. */
    /* (stderr kept: a sanitizer's own failure at exit would show there) */
    char elog[700];
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 99 --db %s 2>%s/unknown.err", db, dir);
    snprintf(elog, sizeof elog, "%s/unknown.err", dir);
    int urc = sh("%s", cmd);
    char *etxt = ju_read_file(elog, buf);
    CHECK(urc == 2, "unknown campaign must exit 2, got %d: %.300s", urc, etxt ? etxt : "");
    free(etxt);
    snprintf(cmd, sizeof cmd, DSE_BIN " validate --campaign 1 --db %s/none.db 2>%s/none.err", dir, dir);
    snprintf(elog, sizeof elog, "%s/none.err", dir);
    int mrc = sh("%s", cmd);
    etxt = ju_read_file(elog, buf);
    CHECK(mrc == 2, "missing database must exit 2, got %d: %.300s", mrc, etxt ? etxt : "");
    free(etxt);
    snprintf(buf, sizeof buf, "%s/none.db", dir);
    CHECK(access(buf, F_OK) != 0, "missing database must not be created");
    steps(db);
    rounds(db);
    boards();
    gpu();
    launch_rule();
    arch();
    relaunch();
    sh("rm -rf %s", dir);
    return check_done("test_validate");
}
