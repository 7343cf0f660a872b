/* test_campaign_cli.c -- campaigns through the real `dse` program:
 * identical results on 1 and 2 threads, two processes writing one
 * database at once, the seeded single-device mapping, what run prints,
 * front (text, CSV, JSON) against the database, export re-evaluated
 * independently, list, progress and --quiet, exhaust against NSGA-II,
 * the halo choices of a spatial campaign and of an older configuration,
 * and every bad-input case (exit 2, one line, nothing written). */
#include "cutil.h"
#include "bandkinds.h"
#include "campaign_internal.h" /* CAMP_BANDS_1: the kinds older campaigns cut */

#include "chrom.h"
#include "cost.h"
#include "mapping.h"
#include "plan.h"
#include "platform.h"

#include <cJSON.h>

#define THREE DSE_SOURCE_DIR "/tests/campaign/three.json"

static const char *small[] = {"--network", "resnet50", "--platform", "jetson-nx-8-cpugpu",
                              "--chromosome", "hybrid", "--splits", "2", "--pop", "40",
                              "--gens", "20", NULL};

/* dse run with the small campaign plus extra args; returns exit status. */
static int run_small(const char *out, const char *err, const char *db, const char *seed,
                     const char *const *extra)
{
    const char *args[64];
    int n = 0;
    args[n++] = "run";
    for (const char *const *p = small; *p; p++) args[n++] = *p;
    args[n++] = "--seed";
    args[n++] = seed;
    args[n++] = "--db";
    args[n++] = db;
    for (const char *const *p = extra; p && *p; p++) args[n++] = *p;
    args[n] = NULL;
    return dse_wait(dse_start(out, err, args));
}

static const char *camp_rows =
    "SELECT gen, idx, genome, energy, memory, latency, violation, rank, crowding FROM"
    " individuals WHERE campaign = (SELECT id FROM campaigns WHERE name = '%s') ORDER BY gen, idx";

static int same_campaign(const char *db1, const char *n1, const char *db2, const char *n2)
{
    char q1[512], q2[512];
    snprintf(q1, sizeof q1, camp_rows, n1);
    snprintf(q2, sizeof q2, camp_rows, n2);
    sqlite3 *a = db_open(db1), *b = db_open(db2);
    char *x = db_dump(a, q1), *y = db_dump(b, q2);
    int same = strlen(x) > 100 && !strcmp(x, y);
    free(x), free(y);
    sqlite3_close(a), sqlite3_close(b);
    return same;
}

static void test_threads_and_concurrency(void)
{
    const char *one[] = {"--threads", "1", "--name", "t1", "--quiet", NULL};
    const char *two[] = {"--threads", "2", "--name", "t2", "--quiet", NULL};
    CHECK(run_small(NULL, NULL, tpath("t1.db"), "5", one) == 0);
    CHECK(run_small(NULL, NULL, tpath("t2.db"), "5", two) == 0);
    CHECK(same_campaign(tpath("t1.db"), "t1", tpath("t2.db"), "t2"));
    CHECK(same_rows(tpath("t1.db"), tpath("t2.db"),
                    "SELECT idx, genome, energy, memory, latency FROM front ORDER BY idx"));

    /* two processes, one new database, at the same time */
    const char *db = tpath("shared.db");
    const char *a[64], *b[64];
    int n = 0;
    a[n] = b[n] = "run", n++;
    for (const char *const *p = small; *p; p++, n++) a[n] = b[n] = *p;
    const char *tail_a[] = {"--seed", "5", "--db", db, "--name", "A", "--quiet", NULL};
    const char *tail_b[] = {"--seed", "6", "--db", db, "--name", "B", "--quiet", NULL};
    for (int k = 0; k < 8; k++) a[n + k] = tail_a[k], b[n + k] = tail_b[k];
    pid_t pa = dse_start(NULL, tpath("A.err"), a), pb = dse_start(NULL, tpath("B.err"), b);
    CHECK(dse_wait(pa) == 0);
    CHECK(dse_wait(pb) == 0);
    sqlite3 *h = db_open(db);
    CHECK(h && db_int(h, "SELECT count(*) FROM campaigns WHERE status = 'finished'") == 2);
    CHECK(db_int(h, "SELECT count(*) FROM individuals") == 2 * 21 * 40);
    char *ic = db_text(h, "PRAGMA integrity_check");
    CHECK(ic && !strcmp(ic, "ok"));
    free(ic);
    sqlite3_close(h);
    /* and each equals its campaign run alone */
    CHECK(same_campaign(db, "A", tpath("t1.db"), "t1"));
}

/* Independent re-evaluation of a mapping file with the model's API. */
static int eval_mapping(const mapping *m, const net *nt, const platform *pl, double obj[3])
{
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
    cost_model *cm = cost_new(nt, pl, NULL, warn, err);
    plan *p = plan_new();
    cost_result r;
    int rc = -1;
    if (cm && p && plan_build(p, nt, m, pl->source, err) == 0 && cost_eval(cm, p, &r, NULL) == 0) {
        obj[0] = r.energy_j, obj[1] = r.mem_mb, obj[2] = r.latency_ms;
        rc = 0;
    }
    cost_free(cm);
    plan_free(p);
    return rc;
}

/* Run `dse ARGS` (printf-formatted) with folder dir on a tmpfs of the
 * given size, in a mount namespace of its own (unshare, util-linux; the
 * mount vanishes with it): a real full disk.  What the folder holds
 * afterwards is listed into ls_out.  Returns dse's exit code, 99 when no
 * tmpfs could be mounted (not root, no namespaces). */
static int full_disk_run(const char *dir, const char *size, const char *ls_out, const char *err_out,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int full_disk_run(const char *dir, const char *size, const char *ls_out, const char *err_out,
                         const char *fmt, ...)
{
    char args[2000], cmd[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd,
             "unshare -m sh -c 'mount -t tmpfs -o size=%s dse-full %s 2>/dev/null || exit 99; "
             "%s %s >/dev/null 2>%s; rc=$?; ls -A %s >%s; exit $rc' 2>/dev/null",
             size, dir, DSE_BIN, args, err_out, dir, ls_out);
    return run_sh(NULL, cmd);
}

static void test_outputs(void)
{
    const char *db = tpath("t1.db"); /* campaign 1 "t1" from above */
    char err[BASE_ERRLEN];
    sqlite3 *h = db_open(db);
    if (!h) {
        CHECK(0);
        return;
    }
    /* the initial population starts with the fastest device's single-device mapping */
    net *nt = net_open("resnet50", err);
    platform *pl = platform_open("jetson-nx-8-cpugpu", err);
    chrom *ch = nt && pl ? chrom_new(nt, pl->ndev, CHROM_HYBRID, 2, NET_SPLIT_DEFAULT, err) : NULL;
    CHECK(ch != NULL);
    if (ch) {
        int g[256];
        CHECK(chrom_single_device(ch, platform_fastest(pl), g) == 0);
        char want[2048] = "";
        for (int j = 0; j < chrom_length(ch); j++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", j ? " " : "", g[j]);
        char *got = db_text(h, "SELECT genome FROM individuals WHERE campaign=1 AND gen=0 AND idx=0");
        CHECK(got && !strcmp(got, want));
        free(got);
        /* never worse than not partitioning: a front point weakly dominates it */
        CHECK(db_int(h, "SELECT count(*) FROM front f, individuals s WHERE s.campaign=1 AND s.gen=0"
                        " AND s.idx=0 AND f.campaign=1 AND f.energy<=s.energy AND"
                        " f.memory<=s.memory AND f.latency<=s.latency") >= 1);
        /* the seeded genome's stored objectives are the model's */
        mapping *m = mapping_new(nt->n, pl->ndev);
        double o[3];
        CHECK(m && chrom_decode(ch, g, chrom_length(ch), m, err) == 0 && eval_mapping(m, nt, pl, o) == 0);
        CHECK(o[2] == db_real(h, "SELECT latency FROM individuals WHERE campaign=1 AND gen=0 AND idx=0"));
        mapping_free(m);
    }
    /* what `dse run` printed: id first, best per objective = min over the front */
    {
        const char *q[] = {"--threads", "2", "--name", "p", NULL};
        CHECK(run_small(tpath("p.out"), tpath("p.err"), tpath("p.db"), "5", q) == 0);
        char *out = tfile_read(tpath("p.out"), NULL);
        CHECK(out && !strncmp(out, "campaign 1\n", 11));
        sqlite3 *hp = db_open(tpath("p.db"));
        static const char *col[3] = {"energy", "memory", "latency"};
        for (int k = 0; k < 3 && out; k++) {
            char key[32], sql[128];
            snprintf(key, sizeof key, "best %s", col[k]);
            snprintf(sql, sizeof sql, "SELECT min(%s) FROM front WHERE campaign = 1", col[k]);
            char *l = strstr(out, key);
            CHECK(l != NULL);
            double v = l ? strtod(l + strlen(key), NULL) : NAN, w = db_real(hp, sql);
            CHECK(fabs(v - w) <= 1e-5 * fabs(w));
        }
        free(out);
        sqlite3_close(hp);
        /* progress: plain lines on a non-terminal, first and last generation */
        CHECK(contains(tpath("p.err"), "gen 0/20") && contains(tpath("p.err"), "gen 20/20"));
        CHECK(contains(tpath("p.err"), "eval/s") && contains(tpath("p.err"), "hv "));
        /* --quiet: nothing at all on stderr */
        const char *qq[] = {"--quiet", NULL};
        CHECK(run_small(NULL, tpath("q.err"), tpath("q.db"), "5", qq) == 0);
        char *e = tfile_read(tpath("q.err"), NULL);
        CHECK(e && e[0] == 0);
        free(e);
    }
    /* front --csv: every number exactly the database's */
    CHECK(dse_run(tpath("f.csv"), NULL, "front", "--campaign", "1", "--db", db, "--csv", NULL) == 0);
    {
        char *csv = tfile_read(tpath("f.csv"), NULL);
        sqlite3_stmt *s;
        sqlite3_prepare_v2(h, "SELECT idx, energy, memory, latency, genome FROM front WHERE campaign=1"
                              " ORDER BY idx", -1, &s, NULL);
        char *line = csv ? strchr(csv, '\n') : NULL; /* skip the header */
        int rows = 0;
        while (line && sqlite3_step(s) == SQLITE_ROW) {
            line++;
            char *end;
            CHECK(strtol(line, &end, 10) == sqlite3_column_int(s, 0));
            for (int k = 1; k <= 3; k++) CHECK(strtod(end + 1, &end) == sqlite3_column_double(s, k));
            strtod(end + 1, &end); /* violation */
            strtol(end + 1, &end, 10); /* generation */
            size_t gl = strcspn(end + 1, "\n");
            CHECK(strlen((const char *)sqlite3_column_text(s, 4)) == gl &&
                  !strncmp(end + 1, (const char *)sqlite3_column_text(s, 4), gl));
            line = strchr(line, '\n');
            rows++;
        }
        sqlite3_finalize(s);
        CHECK(rows > 0 && rows == db_int(h, "SELECT count(*) FROM front WHERE campaign=1"));
        CHECK(file_lines(tpath("f.csv")) == rows + 1);
        free(csv);
    }
    CHECK(dse_run(tpath("f.json"), NULL, "front", "--campaign", "1", "--db", db, "--json", NULL) == 0);
    {
        char *t = tfile_read(tpath("f.json"), NULL);
        cJSON *j = cJSON_Parse(t);
        cJSON *pts = cJSON_GetObjectItem(j, "points");
        CHECK(cJSON_GetArraySize(pts) == db_int(h, "SELECT count(*) FROM front WHERE campaign=1"));
        cJSON *p0 = cJSON_GetArrayItem(pts, 0);
        CHECK(cJSON_GetObjectItem(p0, "latency_ms") &&
              cJSON_GetObjectItem(p0, "latency_ms")->valuedouble ==
                  db_real(h, "SELECT latency FROM front WHERE campaign=1 AND idx=0"));
        cJSON_Delete(j);
        free(t);
    }
    /* export best-latency: both formats load back to the same mapping,
     * and the model re-evaluates it to the stored objectives */
    const char *dir = tpath("exp");
    CHECK(dse_run(NULL, NULL, "export", "--campaign", "1", "--db", db, "--point", "best-latency",
                  "-o", dir, NULL) == 0);
    if (nt && pl) {
        char p1[600], p2[600], p3[600];
        snprintf(p1, sizeof p1, "%s/dse-mapping.json", dir);
        snprintf(p2, sizeof p2, "%s/mapping.json", dir);
        snprintf(p3, sizeof p3, "%s/horizontal.json", dir);
        mapping *m1 = mapping_load(p1, nt, pl, err);
        mapping *m2 = mapping_import_autodice(p2, p3, NULL, nt, pl, err);
        mapping *m3 = mapping_load(dir, nt, pl, err); /* the folder, as --mapping takes it */
        CHECK(m1 && m2 && mapping_equal(m1, m2));
        CHECK(m3 && mapping_equal(m1, m3));
        mapping_free(m3);
        double o[3];
        CHECK(m1 && eval_mapping(m1, nt, pl, o) == 0);
        long long bi = db_int(h, "SELECT idx FROM front WHERE campaign=1 ORDER BY latency, idx LIMIT 1");
        char sql[160];
        static const char *col[3] = {"energy", "memory", "latency"};
        for (int k = 0; k < 3; k++) {
            snprintf(sql, sizeof sql, "SELECT %s FROM front WHERE campaign=1 AND idx=%lld", col[k], bi);
            CHECK(o[k] == db_real(h, sql));
        }
        mapping_free(m1);
        mapping_free(m2);
    }
    CHECK(dse_run(NULL, tpath("x.err"), "export", "--campaign", "1", "--db", db, "--point", "9999",
                  "-o", tpath("exp2"), NULL) == 2);
    CHECK(file_lines(tpath("x.err")) == 1 && !file_exists(tpath("exp2")));
    /* Issue 15: an output that cannot be used (a folder where a file must
     * go) is exit 2 with nothing written; a write failing midway (EFBIG
     * under a file-size limit, as a full disk) is exit 1 with nothing
     * left. */
    {
        const char *d3 = tpath("exp3");
        char hz[600], p1[600], p2[600];
        mkdir(d3, 0755);
        snprintf(hz, sizeof hz, "%s/horizontal.json", d3);
        mkdir(hz, 0755);
        snprintf(p1, sizeof p1, "%s/dse-mapping.json", d3);
        snprintf(p2, sizeof p2, "%s/mapping.json", d3);
        CHECK(dse_run(NULL, tpath("x3.err"), "export", "--campaign", "1", "--db", db, "--point",
                      "best-latency", "-o", d3, NULL) == 2);
        CHECK(file_lines(tpath("x3.err")) == 1 && contains(tpath("x3.err"), "horizontal.json"));
        CHECK(!file_exists(p1) && !file_exists(p2), "export left files beside a refused one");
        const char *full = tpath("full");
        mkdir(full, 0755);
        int rc = full_disk_run(full, "4k", tpath("x4.ls"), tpath("x4.err"), "export --campaign 1 "
                               "--db %s --point best-latency -o %s/exp", db, full);
        if (rc == 99) {
            fprintf(stderr, "cannot mount a tmpfs in a mount namespace here: full-disk case skipped\n");
        } else {
            CHECK(rc == 1, "export on a full disk: exit %d", rc);
            CHECK(file_lines(tpath("x4.err")) == 1 && contains(tpath("x4.err"), "No space left"));
            char *ls = tfile_read(tpath("x4.ls"), NULL);
            CHECK(ls && !ls[0], "export on a full disk left: %s", ls ? ls : "?");
            free(ls);
        }
    }
    CHECK(dse_run(NULL, tpath("x2.err"), "front", "--campaign", "7", "--db", db, NULL) == 2);
    CHECK(contains(tpath("x2.err"), "no campaign 7"));
    /* list */
    CHECK(dse_run(tpath("l.out"), NULL, "list", "--db", db, NULL) == 0);
    CHECK(contains(tpath("l.out"), "finished") && contains(tpath("l.out"), "20/20") &&
          contains(tpath("l.out"), "t1"));
    chrom_free(ch);
    net_free(nt);
    platform_free(pl);
    sqlite3_close(h);
}

static void test_exhaust(void)
{
    const char *db = tpath("ex.db");
    /* toy6: 2 splittable layers of 6, 3 devices: naive length 2*3 + 4 = 10, 3^10 genomes */
    CHECK(dse_run(NULL, tpath("ex1.err"), "exhaust", "--network", "toy6", "--platform", THREE,
                  "--chromosome", "naive", "--max-points", "59048", "--db", db, NULL) == 2);
    CHECK(file_lines(tpath("ex1.err")) == 1 && contains(tpath("ex1.err"), "max-points"));
    CHECK(!file_exists(db));
    CHECK(dse_run(tpath("ex.out"), NULL, "exhaust", "--network", "toy6", "--platform", THREE,
                  "--chromosome", "naive", "--max-points", "59049", "--db", db, "--quiet", NULL) == 0);
    /* 100 generations: since the kernels' workspace counts in memory, the
     * front has memory plateaus that 50 reached for 4 seeds of 6 only */
    CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", THREE, "--chromosome",
                  "naive", "--pop", "100", "--gens", "100", "--seed", "1", "--db", db, "--quiet",
                  NULL) == 0);
    sqlite3 *h = db_open(db);
    if (!h) {
        CHECK(0);
        return;
    }
    char *k = db_text(h, "SELECT kind FROM campaigns WHERE id = 1");
    CHECK(k && !strcmp(k, "exhaust"));
    free(k);
    CHECK(db_int(h, "SELECT evaluations FROM generations WHERE campaign = 1") == 59049);
    /* the exact front: no point dominates another ... */
    CHECK(db_int(h, "SELECT count(*) FROM front a, front b WHERE a.campaign=1 AND b.campaign=1"
                    " AND a.idx<>b.idx AND b.energy<=a.energy AND b.memory<=a.memory"
                    " AND b.latency<=a.latency") == 0);
    CHECK(db_int(h, "SELECT count(*) FROM front WHERE campaign=1") > 3);
    /* ... and it weakly dominates every mapping NSGA-II ever evaluated */
    CHECK(db_int(h, "SELECT count(*) FROM individuals i WHERE i.campaign=2 AND i.violation=0 AND"
                    " NOT EXISTS (SELECT 1 FROM front f WHERE f.campaign=1 AND f.energy<=i.energy"
                    " AND f.memory<=i.memory AND f.latency<=i.latency)") == 0);
    /* same reference point, so the hypervolumes compare: >= 99% */
    CHECK(db_int(h, "SELECT count(DISTINCT json_extract(config, '$.ref')) FROM campaigns") == 1);
    double hx = db_real(h, "SELECT hypervolume FROM generations WHERE campaign=1");
    double hr = db_real(h, "SELECT hypervolume FROM generations WHERE campaign=2 AND gen=100");
    fprintf(stderr, "exhaust hv %.6f, NSGA-II (pop 100, 100 gens) hv %.6f = %.2f%%\n", hx, hr,
            100 * hr / hx);
    CHECK(hx > 0 && hr >= 0.99 * hx && hr <= hx * (1 + 1e-12));
    sqlite3_close(h);
}

/* ---- halo choices (docs/spatial.md, "Recompute or fetch") ---- */

static double jget(const char *path, const char *key)
{
    char *t = tfile_read(path, NULL);
    cJSON *o = t ? cJSON_Parse(t) : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(o);
    free(t);
    return x;
}

/* A spatial campaign on two boards joined by a slow link (100 ms a
 * message), where recomputing halos pays: its configuration says the cost
 * model chooses; its exported points carry the choices, and `dse eval` of
 * each exported mapping gives exactly the objectives the campaign stored
 * for it.  A configuration without "halos" (stored before the choice
 * existed) exports every halo fetched; an unknown one is refused. */
static void test_halos(void)
{
    const char *db = tpath("halo.db"), *plat = tpath("slow.json");
    FILE *f = fopen(plat, "w");
    if (!f) {
        CHECK(0);
        return;
    }
    fprintf(f, "{\"format\": \"dse-platform\", \"name\": \"slow-2\", \"devices\": ["
               "{\"name\": \"a\", \"board\": \"ba\", \"kind\": \"cpu\", \"cores\": 1, \"freq_mhz\": 1000,"
               " \"memory_mb\": 4000, \"busy_w\": 5, \"idle_w\": 1},"
               "{\"name\": \"b\", \"board\": \"bb\", \"kind\": \"cpu\", \"cores\": 1, \"freq_mhz\": 1000,"
               " \"memory_mb\": 4000, \"busy_w\": 5, \"idle_w\": 1}],"
               " \"links\": {\"network\": {\"latency_us\": 100000, \"bandwidth_mbs\": 100}}}\n");
    fclose(f);
    CHECK(dse_run(NULL, NULL, "run", "--network", "alexnet-bvlc", "--platform", plat, "--chromosome",
                  "spatial", "--cuts", "channels,rows,columns", "--pop", "24", "--gens", "8", "--seed",
                  "4", "--db", db, "--quiet", NULL) == 0);
    sqlite3 *h = db_open(db);
    if (!h) {
        CHECK(0);
        return;
    }
    CHECK(db_int(h, "SELECT json_extract(config, '$.halos') = 'cost-1' FROM campaigns WHERE id = 1") == 1);
    int n = (int)db_int(h, "SELECT count(*) FROM front WHERE campaign = 1"), withrc = 0;
    CHECK(n > 1, "%d front points", n);
    for (int k = 0; k < n; k++) {
        char pt[16], dir[32], q[200];
        snprintf(pt, sizeof pt, "%d", k);
        snprintf(dir, sizeof dir, "hx%d", k);
        CHECK(dse_run(NULL, NULL, "export", "--db", db, "--campaign", "1", "--point", pt, "-o",
                      tpath(dir), NULL) == 0);
        snprintf(dir, sizeof dir, "hx%d/dse-mapping.json", k);
        const char *map = tpath(dir);
        snprintf(dir, sizeof dir, "hx%d/eval.json", k);
        const char *js = tpath(dir);
        withrc += contains(map, "\"recompute\"");
        CHECK(dse_run(js, NULL, "eval", "--network", "alexnet-bvlc", "--platform", plat, "--mapping",
                      map, "--json", NULL) == 0);
        static const char *col[3] = {"latency", "energy", "memory"};
        static const char *key[3] = {"latency_ms", "energy_j", "mem_mb"};
        for (int o = 0; o < 3; o++) {
            snprintf(q, sizeof q, "SELECT %s FROM front WHERE campaign = 1 AND idx = %d", col[o], k);
            double stored = db_real(h, q), ev = jget(js, key[o]);
            CHECK(fabs(stored - ev) <= 1e-9 * fabs(stored), "point %d %s: stored %.12g, dse eval %.12g",
                  k, col[o], stored, ev);
        }
    }
    CHECK(withrc > 0, "no front point of %d recomputes a halo on a 100 ms link", n);
    /* dse plot --point: each layer's shares of its output (channels, rows
     * or columns, as it is cut) sum to 1 over the devices (the first
     * points that cut some layer into bands; gnuplot is slow under ASan). */
    int plotted = 0, badsum = 0, tried = 0;
    for (int k = 0; k < n && tried < 3; k++) {
        char q[160];
        snprintf(q, sizeof q, "SELECT genome FROM front WHERE campaign = 1 AND idx = %d", k);
        char *g0 = db_text(h, q);
        int banded = 0, j = 0;
        for (char *s = g0, *e; s && *s; s = e, j++) {
            long v = strtol(s, &e, 10);
            if (e == s) break;
            banded |= j >= 4 && v > 0;
        }
        free(g0);
        if (!banded) continue;
        tried++;
        char pt[16], dir[32], dat[64];
        snprintf(pt, sizeof pt, "%d", k);
        snprintf(dir, sizeof dir, "hp%d", k);
        if (dse_run(NULL, NULL, "plot", "--db", db, "--campaign", "1", "--point", pt, "-o", tpath(dir),
                    NULL) != 0)
            continue;
        snprintf(dat, sizeof dat, "hp%d/mapping-1-%d.dat", k, k);
        FILE *g = fopen(tpath(dat), "r");
        if (!g) continue;
        double sum[64] = {0};
        char line[256];
        int l, d, nl = 0;
        double v;
        while (fgets(line, sizeof line, g))
            if (sscanf(line, "%d %d %lf", &l, &d, &v) == 3 && l >= 0 && l < 64) {
                sum[l] += v;
                if (l + 1 > nl) nl = l + 1;
            }
        fclose(g);
        for (int j = 0; j < nl; j++) badsum += fabs(sum[j] - 1) > 1e-9;
        plotted += nl == 24; /* alexnet-bvlc's layers */
    }
    CHECK(tried > 0 && plotted == tried && badsum == 0,
          "%d of %d points plotted, %d layer shares not summing to 1", plotted, tried, badsum);
    /* The configuration as stored before the choice existed. */
    sqlite3 *wr = NULL;
    CHECK(sqlite3_open_v2(db, &wr, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_remove(config, '$.halos')", 0, 0, 0) == 0);
    int still = 0;
    for (int k = 0; k < n; k++) {
        char pt[16], dir[32];
        snprintf(pt, sizeof pt, "%d", k);
        snprintf(dir, sizeof dir, "hf%d", k);
        CHECK(dse_run(NULL, NULL, "export", "--db", db, "--campaign", "1", "--point", pt, "-o",
                      tpath(dir), NULL) == 0);
        snprintf(dir, sizeof dir, "hf%d/dse-mapping.json", k);
        const char *map = tpath(dir);
        still += contains(map, "\"recompute\"");
    }
    CHECK(still == 0, "%d points recompute under a configuration without \"halos\"", still);
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_set(config, '$.halos', 'always')", 0, 0,
                       0) == 0);
    CHECK(dse_run(NULL, tpath("hbad.err"), "export", "--db", db, "--campaign", "1", "--point", "0",
                  "-o", tpath("hbad"), NULL) != 0);
    CHECK(file_lines(tpath("hbad.err")) == 1 && contains(tpath("hbad.err"), "halos"));
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_set(config, '$.halos', 'cost-1')", 0, 0,
                       0) == 0);
    /* Cut genes: spatial campaigns store their mode ("cuts", here
     * channels,rows,columns: genes 0..2); a mode this dse does not know is
     * refused in one line; a configuration without it (stored before column
     * cuts) reads its cut genes as channels,rows, 0..1, so a genome with a
     * column gene does not decode there (alexnet-bvlc, p = 2 on 2 devices:
     * 4 split-point genes, then 8 cut genes). */
    CHECK(db_int(h, "SELECT json_extract(config, '$.cuts') = 'channels,rows,columns' FROM campaigns "
                    "WHERE id = 1") == 1);
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_set(config, '$.cuts', 'sideways')", 0,
                       0, 0) == 0);
    CHECK(dse_run(NULL, tpath("cbad.err"), "export", "--db", db, "--campaign", "1", "--point", "0",
                  "-o", tpath("cbad"), NULL) != 0);
    CHECK(file_lines(tpath("cbad.err")) == 1 && contains(tpath("cbad.err"), "\"cuts\""));
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_remove(config, '$.cuts')", 0, 0, 0) == 0);
    int colpts = 0, refused = 0;
    for (int k = 0; k < n; k++) {
        char q[160], pt[16], dir[32], ef[32];
        snprintf(q, sizeof q, "SELECT genome FROM front WHERE campaign = 1 AND idx = %d", k);
        char *g = db_text(h, q);
        int gene[64], ng = 0, col = 0;
        for (char *s = g; s && ng < 64 && *s;) {
            char *e;
            long v = strtol(s, &e, 10);
            if (e == s) break;
            gene[ng++] = (int)v, s = e;
        }
        for (int j = 4; j < ng; j++) col |= gene[j] == 2;
        free(g);
        CHECK(ng == 12, "point %d: %d genes", k, ng);
        snprintf(pt, sizeof pt, "%d", k);
        snprintf(dir, sizeof dir, "hl%d", k);
        snprintf(ef, sizeof ef, "hl%d.err", k);
        int rc = dse_run(NULL, tpath(ef), "export", "--db", db, "--campaign", "1", "--point", pt, "-o",
                         tpath(dir), NULL);
        colpts += col;
        refused += rc != 0;
        CHECK((rc != 0) == col, "point %d: column gene %d, export under the old bounds exit %d", k, col, rc);
        if (rc) CHECK(file_lines(tpath(ef)) == 1 && contains(tpath(ef), "outside 0..1"));
    }
    CHECK(colpts > 0 && colpts < n, "%d of %d points have a column gene: the old bounds test needs both",
          colpts, n);
    sqlite3_close(wr);
    sqlite3_close(h);
    printf("ok: halo choices: %d of %d front points recompute on a slow link, each exported mapping "
           "evaluates to its stored objectives; an older configuration fetches; a bad one is "
           "refused; cut genes 0..2 under channels,rows,columns, and 0..1 for a configuration "
           "without \"cuts\" (%d of %d points cut by columns refused there)\n", withrc, n, refused,
           colpts);
}

/* Layers of mapping file `map` whose kind (in net n) is not one of
 * CAMP_BANDS_1's (the kinds cut into bands before 2026-11-29) and that
 * the file cuts into bands of rows or columns. */
static int new_kind_bands(const char *map, const net *n)
{
    char *t = tfile_read(map, NULL);
    cJSON *o = t ? cJSON_Parse(t) : NULL;
    free(t);
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(o, "layers"), *L;
    int count = 0;
    cJSON_ArrayForEach(L, ls) {
        if (!cJSON_IsObject(L)) continue; /* a device name, or channel slices */
        int i = net_find(n, L->string);
        count += i >= 0 && !(CAMP_BANDS_1 >> n->layers[i].kind & 1);
    }
    cJSON_Delete(o);
    return count;
}

/* Layers of net n of kinds outside CAMP_BANDS_1 that mapping m cuts into
 * bands of rows or columns. */
static int new_kind_bands_of(const mapping *m, const net *n)
{
    int count = 0;
    for (int i = 0; i < n->n; i++)
        count += m->cut[i] != MAP_CUT_CHANNELS && !(CAMP_BANDS_1 >> n->layers[i].kind & 1);
    return count;
}

/* The kinds cut into bands are named in a spatial campaign's
 * configuration ("bands": "kinds-2"): on the network of every kind that
 * moves rows (tests/bandkinds.h) the campaign's genomes decode to bands
 * of some of them; a configuration without the name (stored before they
 * could be) decodes the same genomes with the older kinds alone (none of
 * those layers in bands), and one naming another set is refused in one
 * line.  Every genome of every generation is decoded from the stored
 * configuration (camp_from_config, as `dse export` and resume do), and
 * `dse export` of every front point writes what that decode says. */
static void test_band_kinds(void)
{
    char err[BASE_ERRLEN];
    const char *db = tpath("bk.db"), *nf = tpath("bandkinds.json");
    net *n = bandkinds_net(err);
    CHECK(n && !net_save(n, nf, err), "%s", err);
    if (!n) return;
    CHECK(dse_run(NULL, NULL, "run", "--network", nf, "--platform", "local-4", "--chromosome",
                  "spatial", "--cuts", "channels,rows", "--pop", "24", "--gens", "10", "--seed", "3",
                  "--db", db, "--quiet", NULL) == 0);
    sqlite3 *h = db_open(db);
    if (!h) {
        CHECK(0);
        net_free(n);
        return;
    }
    CHECK(db_int(h, "SELECT json_extract(config, '$.bands') = 'kinds-2' FROM campaigns WHERE id = 1") == 1);
    int np = (int)db_int(h, "SELECT count(*) FROM front WHERE campaign = 1");
    long decoded[2] = {0, 0}, banded[2] = {0, 0}, exported[2] = {0, 0}, differ = 0;
    sqlite3 *wr = NULL;
    CHECK(sqlite3_open_v2(db, &wr, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_remove(config, '$.bands')", 0, 0,
                               0) == 0);
        char *config = db_text(h, "SELECT config FROM campaigns WHERE id = 1");
        camp *c = config ? camp_from_config(config, 1, err) : NULL;
        free(config);
        CHECK(c, "%s", err);
        if (!c) break;
        mapping *m = mapping_new(n->n, camp_platform(c)->ndev);
        int nv = camp_nvar(c), *g = malloc((size_t)nv * sizeof *g);
        sqlite3_stmt *st = NULL;
        CHECK(m && g && sqlite3_prepare_v2(h, "SELECT genome, 0 FROM individuals WHERE campaign = 1 UNION ALL "
                                         "SELECT genome, idx + 1 FROM front WHERE campaign = 1",
                                         -1, &st, NULL) == SQLITE_OK);
        while (m && g && st && sqlite3_step(st) == SQLITE_ROW) {
            const char *s = (const char *)sqlite3_column_text(st, 0);
            int j = 0, point = sqlite3_column_int(st, 1) - 1;
            for (char *e; s && *s && j < nv; j++, s = e) {
                g[j] = (int)strtol(s, &e, 10);
                if (e == s) break;
            }
            if (j != nv || camp_decode(c, g, m, err)) {
                CHECK(0, "genome %d of %d values: %s", j, nv, err);
                continue;
            }
            int b = new_kind_bands_of(m, n);
            if (point < 0) {
                decoded[pass]++;
                banded[pass] += b;
                continue;
            }
            char pt[16], dir[40];
            snprintf(pt, sizeof pt, "%d", point);
            snprintf(dir, sizeof dir, "bk%d-%d", pass, point);
            CHECK(dse_run(NULL, NULL, "export", "--db", db, "--campaign", "1", "--point", pt, "-o",
                          tpath(dir), NULL) == 0);
            snprintf(dir, sizeof dir, "bk%d-%d/dse-mapping.json", pass, point);
            int x = new_kind_bands(tpath(dir), n);
            exported[pass] += x;
            differ += x != b;
        }
        sqlite3_finalize(st);
        free(g);
        mapping_free(m);
        camp_free(c);
    }
    CHECK(decoded[0] > 200 && decoded[1] == decoded[0] && banded[0] > 0 && banded[1] == 0 && differ == 0,
          "%ld genomes: %ld bands of the new kinds, %ld under a configuration without \"bands\"; %d "
          "front points exported: %ld differ from their decode", decoded[0], banded[0], banded[1], np,
          differ);
    CHECK(sqlite3_exec(wr, "UPDATE campaigns SET config = json_set(config, '$.bands', 'kinds-9')", 0, 0,
                       0) == 0);
    CHECK(dse_run(NULL, tpath("bkbad.err"), "export", "--db", db, "--campaign", "1", "--point", "0",
                  "-o", tpath("bkbad"), NULL) != 0);
    CHECK(file_lines(tpath("bkbad.err")) == 1 && contains(tpath("bkbad.err"), "\"bands\""));
    sqlite3_close(wr);
    sqlite3_close(h);
    net_free(n);
    printf("ok: band kinds: %ld genomes of every generation decode to %ld bands of the newer kinds "
           "from the stored configuration, none under one stored before them; %d front points "
           "exported as decoded (%ld such bands); an unknown set is refused\n", decoded[0], banded[0],
           np, exported[0]);
}

/* dse run --cuts channels,rows: a spatial campaign keeping to row cuts
 * stores that mode and its genomes' cut genes are 0..1 (alexnet-bvlc on
 * local-2: 4 split-point genes, 8 cut genes); without --cuts it stores
 * channels,bands; --cuts with another chromosome, or another value, is
 * refused in one line. */
static void test_cuts(void)
{
    const char *db = tpath("cuts.db");
    CHECK(dse_run(NULL, NULL, "run", "--network", "alexnet-bvlc", "--platform", "local-2",
                  "--chromosome", "spatial", "--cuts", "channels,rows", "--pop", "16", "--gens", "6",
                  "--seed", "3", "--db", db, "--quiet", NULL) == 0);
    sqlite3 *h = db_open(db);
    if (!h) {
        CHECK(0);
        return;
    }
    CHECK(db_int(h, "SELECT json_extract(config, '$.cuts') = 'channels,rows' FROM campaigns WHERE id = 1")
          == 1);
    int n = (int)db_int(h, "SELECT count(*) FROM individuals WHERE campaign = 1"), rows = 0, bad = 0;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(h, "SELECT genome FROM individuals WHERE campaign = 1", -1, &st, NULL) ==
          SQLITE_OK);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        for (int j = 0; s && *s; j++) {
            char *e;
            long v = strtol(s, &e, 10);
            if (e == s) break;
            if (j >= 4) rows += v == 1, bad += v < 0 || v > 1;
            s = e;
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    CHECK(n > 16 && bad == 0 && rows > 0, "%d genomes: %d cut genes outside 0..1, %d rows", n, bad, rows);
    CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", "local-2", "--chromosome",
                  "spatial", "--pop", "4", "--gens", "1", "--db", db, "--quiet", NULL) == 0);
    h = db_open(db);
    CHECK(h && db_int(h, "SELECT json_extract(config, '$.cuts') = 'channels,bands' FROM campaigns "
                         "WHERE id = 2") == 1);
    if (h) sqlite3_close(h);
    CHECK(dse_run(NULL, tpath("cuts1.err"), "run", "--network", "toy6", "--platform", "local-2",
                  "--chromosome", "hybrid", "--cuts", "channels,rows", "--pop", "4", "--gens", "1",
                  "--db", tpath("cuts1.db"), NULL) == 2);
    CHECK(file_lines(tpath("cuts1.err")) == 1 && contains(tpath("cuts1.err"), "spatial"));
    CHECK(dse_run(NULL, tpath("cuts2.err"), "run", "--network", "toy6", "--platform", "local-2",
                  "--chromosome", "spatial", "--cuts", "rows", "--pop", "4", "--gens", "1",
                  "--db", tpath("cuts2.db"), NULL) == 2);
    CHECK(file_lines(tpath("cuts2.err")) == 1 && contains(tpath("cuts2.err"), "--cuts"));
    printf("ok: --cuts channels,rows: %d genomes, cut genes 0..1 (%d rows), stored so; default "
           "channels,bands; refused with hybrid or another value\n", n, rows);
}

/* ---- bad input: exit 2, exactly one line, nothing written ---- */

static int bad(const char *tag, const char *db, const char *needle, ...)
{
    const char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, needle);
    const char *s;
    while ((s = va_arg(ap, const char *)) && n < 60) args[n++] = s;
    va_end(ap);
    args[n++] = "--db";
    args[n++] = db;
    args[n] = NULL;
    char ef[64];
    snprintf(ef, sizeof ef, "%s.err", tag);
    int rc = dse_wait(dse_start(NULL, tpath(ef), args));
    char *e = tfile_read(tpath(ef), NULL);
    int ok = rc == 2 && file_lines(tpath(ef)) == 1 && e && strstr(e, needle);
    if (!ok) fprintf(stderr, "%s: exit %d, stderr: %s", tag, rc, e ? e : "");
    free(e);
    return ok;
}

static void test_bad_input(void)
{
    const char *db = tpath("bad.db");
    CHECK(bad("net", db, "nosuchnet", "run", "--network", "nosuchnet", "--platform", "local-4", NULL));
    CHECK(bad("chrom", db, "chromosome", "run", "--network", "toy6", "--platform", "local-4",
              "--chromosome", "diagonal", NULL));
    CHECK(bad("splits", db, "--splits 5", "run", "--network", "toy6", "--platform", "local-4",
              "--chromosome", "hybrid", "--splits", "5", NULL));
    CHECK(bad("splits0", db, "--splits 0", "run", "--network", "toy6", "--platform", "local-4",
              "--chromosome", "hybrid", "--splits", "0", NULL));
    CHECK(bad("pop", db, "--pop", "run", "--network", "toy6", "--platform", "local-4", "--pop", "7", NULL));
    CHECK(!file_exists(db));
    /* Issue 15: meaningless values refused; --pop too large for the
     * database's folder refused before anything is stored. */
    CHECK(bad("gensneg", db, "--gens", "run", "--network", "toy6", "--platform", "local-4",
              "--pop", "4", "--gens", "-1", NULL));
    CHECK(bad("budgetneg", db, "--time-budget", "run", "--network", "toy6", "--platform",
              "local-4", "--pop", "4", "--gens", "1", "--time-budget", "-3", NULL));
    CHECK(bad("budgetnan", db, "--time-budget", "run", "--network", "toy6", "--platform",
              "local-4", "--pop", "4", "--gens", "1", "--time-budget", "soon", NULL));
    /* Integers past their type's range are refused, not clamped to it
     * (--campaign 2^66 was campaign 9223372036854775807). */
    CHECK(bad("idwrap", db, "--campaign", "front", "--campaign", "99999999999999999999", NULL));
    CHECK(bad("plotwrap", db, "--campaign", "plot", "--campaign", "1,99999999999999999999", "-o",
              tpath("pw"), NULL));
    CHECK(bad("pointwrap", db, "--point", "export", "--campaign", "1", "--point",
              "99999999999999999999", "-o", tpath("xw"), NULL));
    CHECK(bad("popwrap", db, "--pop", "run", "--network", "toy6", "--platform", "local-4",
              "--pop", "18446744073709551620", NULL));
    CHECK(bad("hugepop", db, "free", "run", "--network", "toy6", "--platform", "local-4",
              "--pop", "1000000", "--gens", "100000000", NULL));
    CHECK(!file_exists(db));
    /* --gens 0: the initial population only (was: no end). */
    {
        const char *g0 = tpath("g0.db");
        CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", "local-4", "--pop", "4",
                      "--gens", "0", "--db", g0, "--quiet", NULL) == 0);
        sqlite3 *h = db_open(g0);
        CHECK(h && db_int(h, "SELECT count(*) FROM generations") == 1 &&
              db_int(h, "SELECT max(gen) FROM individuals") == 0 &&
              db_int(h, "SELECT count(*) FROM campaigns WHERE status = 'finished'") == 1);
        sqlite3_close(h);
    }
    /* --time-budget: stops within a generation of it; 100000 generations
     * of toy6 take minutes, so a campaign that ignored the budget would
     * end with all of them (no timing is asserted). */
    {
        const char *tb = tpath("tb.db");
        CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", "local-4", "--pop", "8",
                      "--gens", "100000", "--time-budget", "1", "--db", tb, "--quiet", NULL) == 0);
        sqlite3 *h = db_open(tb);
        long long done = h ? db_int(h, "SELECT gens_done FROM campaigns") : -1;
        CHECK(done >= 0 && done < 100000, "--time-budget 1 ran %lld generations", done);
        CHECK(h && db_int(h, "SELECT count(*) FROM campaigns WHERE status = 'finished'") == 1);
        sqlite3_close(h);
    }
    /* a file that is not a dse database is left as it was */
    const char *txt = tpath("notes.db");
    FILE *f = fopen(txt, "w");
    fputs("my notes, not a database\n", f);
    fclose(f);
    CHECK(bad("notdb", txt, "not a dse results database", "run", "--network", "toy6", "--platform",
              "local-4", "--pop", "4", "--gens", "1", NULL));
    char *t = tfile_read(txt, NULL);
    CHECK(t && !strcmp(t, "my notes, not a database\n"));
    free(t);
    CHECK(!file_exists(tpath("notes.db-wal")));
    /* a missing folder */
    CHECK(bad("nodir", tpath("nodir/x.db"), "does not exist", "run", "--network", "toy6",
              "--platform", "local-4", NULL));
    CHECK(!file_exists(tpath("nodir")));
    /* a missing database for the readers */
    CHECK(bad("nodb", tpath("none.db"), "no such results database", "list", NULL));
    CHECK(!file_exists(tpath("none.db")));
    /* read-only database and folder: root ignores permission bits, so drop
     * the capabilities that let it (setpriv, util-linux) */
    static const char *const drop[] = {"/usr/bin/setpriv",
                                       "--bounding-set=-dac_override,-dac_read_search,-fowner", "--",
                                       NULL};
    if (access(drop[0], X_OK) == 0) {
        const char *ro = tpath("ro.db");
        CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", "local-4", "--pop", "4",
                      "--gens", "1", "--db", ro, "--quiet", NULL) == 0);
        chmod(ro, 0444);
        char *before = tfile_read(ro, NULL);
        struct stat st0, st1;
        stat(ro, &st0);
        exec_prefix = drop;
        CHECK(bad("ro", ro, "read-only", "run", "--network", "toy6", "--platform", "local-4",
                  "--pop", "4", "--gens", "1", NULL));
        const char *rodir = tpath("rodir");
        mkdir(rodir, 0555);
        chmod(rodir, 0555);
        CHECK(bad("rodir", tpath("rodir/x.db"), "not writable", "run", "--network", "toy6",
                  "--platform", "local-4", "--pop", "4", "--gens", "1", NULL));
        exec_prefix = NULL;
        stat(ro, &st1);
        char *after = tfile_read(ro, NULL);
        CHECK(before && after && st0.st_size == st1.st_size &&
              !memcmp(before, after, (size_t)st0.st_size));
        CHECK(!file_exists(tpath("rodir/x.db")));
        free(before), free(after);
        chmod(rodir, 0755);
        chmod(ro, 0644);
    } else {
        fprintf(stderr, "setpriv missing: read-only cases skipped\n");
    }
    /* coefficients of another network and platform: a warning naming what
     * falls back, and the campaign runs (and stores the coefficients) */
    {
        cost_coeffs *c = coeffs_new();
        coeffs_set_info(c, "other board", "2024-01-01", NULL);
        coeffs_add_platform(c, "some-other-platform");
        coeffs_add_network(c, "vgg16");
        coeffs_rates *r = coeffs_layer_rates(c, PLAT_CPU, "vgg16", "conv1_1");
        r->per_cycle = coeffs_given(4.0, COEFFS_MEASURED);
        char err[BASE_ERRLEN];
        CHECK(coeffs_save(c, tpath("other.json"), err) == 0);
        coeffs_free(c);
        const char *cdb = tpath("coeffs.db");
        CHECK(dse_run(NULL, tpath("co.err"), "run", "--network", "toy6", "--platform", "local-4",
                      "--coeffs", tpath("other.json"), "--pop", "4", "--gens", "1", "--db", cdb,
                      "--quiet", NULL) == 0);
        CHECK(contains(tpath("co.err"), "warning") && contains(tpath("co.err"), "toy6"));
        sqlite3 *h = db_open(cdb);
        char *s = h ? db_text(h, "SELECT json_extract(config, '$.coeffs.networks[0]') FROM campaigns") : NULL;
        CHECK(s && !strcmp(s, "vgg16"));
        free(s);
        sqlite3_close(h);
    }
}

/* Reading commands leave nothing beside the database: no -wal or -shm
 * file (SQLite removes them only for a connection that could write, the
 * last to close), and the database's bytes unchanged. */
static void test_readers_leave_nothing(void)
{
    const char *db = tpath("rd.db");
    CHECK(dse_run(NULL, NULL, "run", "--network", "toy6", "--platform", "local-2", "--pop", "4", "--gens", "2",
                  "--quiet", "--db", db, NULL) == 0);
    size_t n0 = 0, n1 = 0;
    char *before = tfile_read(db, &n0), wal[512], shm[512];
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(shm, sizeof shm, "%s-shm", db);
    CHECK(before && !file_exists(wal) && !file_exists(shm), "dse run left its -wal or -shm");
    static const char *const cmds[][8] = {{"list", NULL},
                                          {"front", "--campaign", "1", NULL},
                                          {"front", "--campaign", "1", "--json", NULL},
                                          {"export", "--campaign", "1", "--point", "0", "-o", NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *a[16] = {0};
        int k = 0;
        for (int j = 0; cmds[i][j]; j++) a[k++] = cmds[i][j];
        if (!strcmp(cmds[i][0], "export")) a[k++] = tpath("rd-export");
        a[k++] = "--db", a[k++] = db, a[k] = NULL;
        CHECK(dse_run(tpath("rd.out"), NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]) == 0,
              "dse %s", cmds[i][0]);
        CHECK(!file_exists(wal) && !file_exists(shm), "dse %s left the database's -wal or -shm", cmds[i][0]);
    }
    char *after = tfile_read(db, &n1);
    CHECK(after && n1 == n0 && !memcmp(before, after, n0), "reading commands changed the database");
    free(before), free(after);
}

int main(void)
{
    mk_tdir("campaign");
    test_threads_and_concurrency();
    test_outputs();
    test_exhaust();
    test_halos();
    test_cuts();
    test_band_kinds();
    test_bad_input();
    test_readers_leave_nothing();
    rm_tdir();
    printf("%s\n", check_failures ? "FAILED" : "ok");
    return check_failures != 0;
}
