/* test_results.c -- the results database: schema identity, round trips of
 * every table the campaigns write (validation steps included), one-
 * transaction generations, refusal of foreign files, two processes writing
 * one file at the same time, migration from schema version 1, bounded lock
 * waits naming the holder, the atomic claim of a campaign, and reading a
 * database in a read-only folder (a read-only bind mount, when this runs
 * as root: SQLite cannot make the -shm file there; writing is refused). */
#include "results.h"

#include <math.h>
#include "check.h"
#include "dbq.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


static char dir[256];

static void path(char *buf, const char *name) { snprintf(buf, 512, "%s/%s", dir, name); }

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* A deterministic population: genome j of individual i is (i*7 + j*3 + g) % 5. */
static void make_pop(int n, int nvar, long g, int *gen, double *obj, double *cv, int *rank,
                     double *crowd)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < nvar; j++) gen[i * nvar + j] = (int)((i * 7 + j * 3 + g) % 5);
        obj[3 * i] = 0.1 * i + g;
        obj[3 * i + 1] = 1000.0 / (i + 1);
        obj[3 * i + 2] = i == 3 ? NAN : 3.25 * i;
        cv[i] = i % 4 == 0 ? 12.5 : 0;
        rank[i] = i % 3;
        crowd[i] = i == 0 ? INFINITY : 0.5 * i;
    }
}

static void test_roundtrip(void)
{
    char p[512], err[BASE_ERRLEN];
    path(p, "a.db");
    res_db *db = res_open(p, RES_OPEN_CREATE, err);
    CHECK(db);
    if (!db) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    sqlite3 *h = res_sqlite(db);
    CHECK(db_int(h, "PRAGMA application_id") == 0x44534531);
    CHECK(db_int(h, "PRAGMA user_version") == RES_SCHEMA_VERSION);
    {
        sqlite3_stmt *s;
        sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &s, NULL);
        CHECK(sqlite3_step(s) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(s, 0), "wal"));
        sqlite3_finalize(s);
    }
    long long id = 0, id2 = 0;
    CHECK(res_campaign_new(db, "first", "nsga", "toy6", "local-2", "naive", "{\"a\":1}", &id, err) == 0);
    CHECK(res_campaign_new(db, "second", "exhaust", "toy6", "local-2", "hybrid", "{}", &id2, err) == 0);
    CHECK(id > 0 && id2 == id + 1);

    enum { N = 10, NV = 6 };
    int gen[N * NV], rank[N];
    double obj[N * 3], cv[N], crowd[N];
    for (long g = 0; g < 3; g++) {
        make_pop(N, NV, g, gen, obj, cv, rank, crowd);
        res_pop pop = {N, NV, gen, obj, cv, rank, crowd};
        res_gen st = {g, 100 * (g + 1), 7 * g, 0.5 + 0.1 * g, {1.0 * g, 2.0, NAN}, 4, 7, 0.25 * g};
        char blob[16];
        memset(blob, (int)g + 1, sizeof blob);
        CHECK(res_generation_write(db, id, &st, &pop, blob, sizeof blob, err) == 0);
    }
    /* A write for an unknown campaign changes nothing (one transaction). */
    {
        res_pop pop = {N, NV, gen, obj, cv, rank, crowd};
        res_gen st = {5, 1, 0, 0, {0, 0, 0}, 0, 0, 0};
        CHECK(res_generation_write(db, 9999, &st, &pop, "x", 1, err) == -1);
        CHECK(strstr(err, "no campaign 9999") != NULL);
        CHECK(db_int(h, "SELECT count(*) FROM individuals WHERE campaign = 9999") == 0);
        CHECK(db_int(h, "SELECT count(*) FROM generations WHERE campaign = 9999") == 0);
        CHECK(db_int(h, "SELECT count(*) FROM checkpoints WHERE campaign = 9999") == 0);
    }
    CHECK(db_int(h, "SELECT count(*) FROM individuals") == 3 * N);
    CHECK(db_int(h, "SELECT count(*) FROM checkpoints") == 1);

    res_campaign c;
    CHECK(res_campaign_get(db, id, &c, err) == 0);
    CHECK(!strcmp(c.name, "first") && !strcmp(c.kind, "nsga") && !strcmp(c.status, "running"));
    CHECK(!strcmp(c.config, "{\"a\":1}") && !strcmp(c.network, "toy6"));
    CHECK(c.gens_done == 2 && c.evaluations == 300 && c.pid == (long)getpid());
    CHECK(strlen(c.created) == 20 && c.created[10] == 'T');
    res_campaign_free(&c);
    CHECK(res_campaign_get(db, 4242, &c, err) == -1 && strstr(err, "no campaign 4242"));

    res_gen *gs;
    int ng = res_generations(db, id, &gs, err);
    CHECK(ng == 3);
    for (int g = 0; g < ng; g++) {
        CHECK(gs[g].gen == g && gs[g].evaluations == 100 * (g + 1) && gs[g].cache_hits == 7 * g);
        CHECK(fabs(gs[g].hv - (0.5 + 0.1 * g)) < 1e-15 && isnan(gs[g].best[2]));
        CHECK(gs[g].best[0] == 1.0 * g && gs[g].front_size == 4 && gs[g].feasible == 7);
    }
    free(gs);

    long cg = -1;
    void *blob;
    size_t len;
    CHECK(res_checkpoint_get(db, id, &cg, &blob, &len, err) == 1);
    CHECK(cg == 2 && len == 16 && ((unsigned char *)blob)[0] == 3 && ((unsigned char *)blob)[15] == 3);
    free(blob);
    CHECK(res_checkpoint_get(db, id2, &cg, &blob, &len, err) == 0);

    res_point *pts;
    int np = res_population(db, id, -1, &pts, err);
    make_pop(N, NV, 2, gen, obj, cv, rank, crowd);
    CHECK(np == N);
    for (int i = 0; i < np; i++) {
        CHECK(pts[i].idx == i && pts[i].nvar == NV && pts[i].src_gen == 2);
        CHECK(!memcmp(pts[i].genome, gen + i * NV, sizeof(int) * NV));
        for (int k = 0; k < 3; k++)
            CHECK(isnan(obj[3 * i + k]) ? isnan(pts[i].obj[k]) : pts[i].obj[k] == obj[3 * i + k]);
        CHECK(pts[i].cv == cv[i] && pts[i].rank == rank[i] && pts[i].crowd == crowd[i]);
    }
    res_points_free(pts, np);
    np = res_population(db, id, 0, &pts, err);
    CHECK(np == N && pts[1].obj[0] == 0.1);
    res_points_free(pts, np);

    /* Genome text is what users query: "0 3 1 ...". */
    {
        sqlite3_stmt *s;
        sqlite3_prepare_v2(h, "SELECT genome FROM individuals WHERE campaign=1 AND gen=0 AND idx=1",
                           -1, &s, NULL);
        CHECK(sqlite3_step(s) == SQLITE_ROW);
        CHECK(!strcmp((const char *)sqlite3_column_text(s, 0), "2 0 3 1 4 2"));
        sqlite3_finalize(s);
    }

    /* Front and status in one go. */
    int fsrc[2] = {4, 1};
    long fgen[2] = {0, 2}; /* a seed from the initial population, a point of generation 2 */
    res_pop fr = {2, NV, gen, obj, NULL, NULL, NULL};
    CHECK(res_finish(db, id, &fr, fgen, fsrc, "finished", err) == 0);
    np = res_front(db, id, &pts, err);
    CHECK(np == 2 && pts[1].src_idx == 1 && pts[0].src_idx == 4 && pts[1].src_gen == 2 &&
          pts[0].src_gen == 0);
    CHECK(np == 2 && !memcmp(pts[1].genome, gen + NV, sizeof(int) * NV) && pts[1].cv == 0);
    res_points_free(pts, np);
    CHECK(res_campaign_get(db, id, &c, err) == 0 && !strcmp(c.status, "finished"));
    res_campaign_free(&c);

    res_campaign *list;
    int nl = res_campaign_list(db, &list, err);
    CHECK(nl == 2 && list[1].id == id2 && !strcmp(list[1].kind, "exhaust") && list[1].gens_done == -1);
    res_campaign_list_free(list, nl);

    CHECK(res_truncate(db, id, 0, err) == 0);
    CHECK(db_int(h, "SELECT count(*) FROM individuals") == N);
    CHECK(db_int(h, "SELECT max(gen) FROM generations") == 0);

    res_validation v = {0, id, 0, "rank0", {1, 2, 3}, {1.5, NAN, 2.5}, "ok", NULL};
    long long vid = 0;
    CHECK(res_validation_add(db, &v, NULL, 0, &vid, err) == 0 && vid == 1);
    CHECK(db_int(h, "SELECT count(*) FROM validations WHERE meas_memory IS NULL AND device='rank0'") == 1);
    /* A whole-mapping row with its steps, read back exactly. */
    res_step st[3] = {{0, 0, "compute", 2, 0, 16, 0, 0.0, 1.25, 0.0, 1.5, 1.4},
                      {0, 1, "send", 2, 0, 16, 4096, 1.25, 0.01, 1.5, NAN, NAN},
                      {1, 0, "recv", 2, 0, 16, 4096, 0.0, 1.3, 0.0, 1.6, 1.55}};
    res_validation w = {0, id, 3, NULL, {1, 2, 3}, {1.5, 2.5, 3.5}, "ok", NULL};
    CHECK(res_validation_add(db, &w, st, 3, &vid, err) == 0 && vid == 2, "%s", err);
    res_validation *vs;
    int nv = res_validations(db, id, &vs, err);
    CHECK(nv == 1 && vs[0].id == 2 && vs[0].point == 3 && vs[0].meas[2] == 3.5);
    if (nv > 0) res_validations_free(vs, nv);
    res_step *rs;
    int ns = res_validation_steps(db, 2, &rs, err);
    CHECK(ns == 3, "%d steps: %s", ns, err);
    for (int i = 0; i < ns && i < 3; i++)
        CHECK(rs[i].device == st[i].device && rs[i].step == st[i].step && !strcmp(rs[i].op, st[i].op) &&
              rs[i].bytes == st[i].bytes && rs[i].pred_ms == st[i].pred_ms &&
              (rs[i].meas_ms == st[i].meas_ms || (isnan(rs[i].meas_ms) && isnan(st[i].meas_ms))));
    if (ns > 0) res_steps_free(rs, ns);
    long long cid;
    CHECK(res_calibration_add(db, "local-2", "toy6", "{}", NULL, &cid, err) == 0 && cid == 1);
    CHECK(res_campaign_set_status(db, 777, "failed", "x", err) == -1);
    res_close(db);

    /* Reopening for reading sees the same. */
    db = res_open(p, RES_OPEN_READ, err);
    CHECK(db != NULL);
    if (!db) fprintf(stderr, "%s\n", err);
    if (db) {
        CHECK(res_campaign_get(db, id2, &c, err) == 0);
        res_campaign_free(&c);
        res_close(db);
    }
}

static void test_genome_text(void)
{
    int g[5] = {0, -3, 12, 2147483647, 7}, out[8];
    char *t = res_genome_text(g, 5);
    CHECK(t && !strcmp(t, "0 -3 12 2147483647 7"));
    CHECK(res_genome_parse(t, out, 8) == 5 && !memcmp(out, g, sizeof g));
    CHECK(res_genome_parse(t, out, 4) == -1);
    CHECK(res_genome_parse("1 x 2", out, 8) == -1);
    CHECK(res_genome_parse("1 2x", out, 8) == -1);
    CHECK(res_genome_parse("", out, 8) == 0);
    free(t);
}

static void test_refusals(void)
{
    char p[512], err[BASE_ERRLEN];
    /* A text file. */
    path(p, "notes.txt");
    const char *text = "not a database at all, just some text long enough to look like a header\n";
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    CHECK(res_open(p, RES_OPEN_CREATE, err) == NULL && strstr(err, "not a dse results database"));
    struct stat st;
    stat(p, &st);
    CHECK(st.st_size == (off_t)strlen(text));
    /* An SQLite file of someone else. */
    path(p, "other.db");
    sqlite3 *h;
    sqlite3_open(p, &h);
    sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(res_open(p, RES_OPEN_WRITE, err) == NULL && strstr(err, "other tables"));
    sqlite3_open(p, &h);
    CHECK(db_int(h, "SELECT count(*) FROM sqlite_master") == 1);
    sqlite3_close(h);
    /* A newer schema. */
    path(p, "new.db");
    res_db *db = res_open(p, RES_OPEN_CREATE, err);
    CHECK(db != NULL);
    res_close(db);
    sqlite3_open(p, &h);
    sqlite3_exec(h, "PRAGMA user_version=99", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(res_open(p, RES_OPEN_READ, err) == NULL && strstr(err, "newer"));
    /* Missing file, missing folder: nothing is created. */
    path(p, "missing.db");
    CHECK(res_open(p, RES_OPEN_READ, err) == NULL && strstr(err, "no such results database"));
    CHECK(res_open(p, RES_OPEN_WRITE, err) == NULL && !exists(p));
    path(p, "nodir/x.db");
    CHECK(res_open(p, RES_OPEN_CREATE, err) == NULL && strstr(err, "does not exist"));
    CHECK(res_open("/proc/dse-test.db", RES_OPEN_CREATE, err) == NULL);
    CHECK(!exists("/proc/dse-test.db"));
}

/* The schema of version 1 (docs/results-schema.md of that version), as
 * databases written before validation steps hold it. */
static const char *v1_schema =
    "CREATE TABLE campaigns(id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('running','finished','interrupted','failed')),"
    " created TEXT NOT NULL, updated TEXT NOT NULL, network TEXT, platform TEXT, chromosome TEXT,"
    " config TEXT NOT NULL, message TEXT, gens_done INTEGER NOT NULL DEFAULT -1,"
    " evaluations INTEGER NOT NULL DEFAULT 0, pid INTEGER, host TEXT);"
    "CREATE TABLE generations(campaign INTEGER NOT NULL, gen INTEGER NOT NULL, evaluations"
    " INTEGER, cache_hits INTEGER, hypervolume REAL, best_energy REAL, best_memory REAL,"
    " best_latency REAL, front_size INTEGER, feasible INTEGER, wall_time REAL,"
    " PRIMARY KEY (campaign, gen)) WITHOUT ROWID;"
    "CREATE TABLE individuals(campaign INTEGER NOT NULL, gen INTEGER NOT NULL, idx INTEGER NOT"
    " NULL, genome TEXT NOT NULL, energy REAL, memory REAL, latency REAL, violation REAL,"
    " rank INTEGER, crowding REAL, PRIMARY KEY (campaign, gen, idx)) WITHOUT ROWID;"
    "CREATE TABLE front(campaign INTEGER NOT NULL, idx INTEGER NOT NULL, genome TEXT NOT NULL,"
    " energy REAL, memory REAL, latency REAL, violation REAL, src_gen INTEGER, src_idx INTEGER,"
    " PRIMARY KEY (campaign, idx)) WITHOUT ROWID;"
    "CREATE TABLE checkpoints(campaign INTEGER PRIMARY KEY, gen INTEGER NOT NULL, state BLOB NOT NULL);"
    "CREATE TABLE validations(id INTEGER PRIMARY KEY, campaign INTEGER NOT NULL, point INTEGER"
    " NOT NULL, device TEXT, pred_energy REAL, meas_energy REAL, pred_memory REAL, meas_memory"
    " REAL, pred_latency REAL, meas_latency REAL, status TEXT NOT NULL, reason TEXT, created"
    " TEXT NOT NULL);"
    "CREATE TABLE calibrations(id INTEGER PRIMARY KEY, created TEXT NOT NULL, platform TEXT,"
    " network TEXT, coeffs TEXT NOT NULL, report TEXT);"
    "INSERT INTO campaigns VALUES (1, 'old', 'nsga', 'finished', 't', 't', 'n', 'p', 'c', '{}',"
    " NULL, 0, 10, 1, 'h');"
    "INSERT INTO front VALUES (1, 0, '0 1', 1.5, 2.5, 3.5, 0, 0, 0);"
    "INSERT INTO validations VALUES (1, 1, 0, NULL, 1, NULL, 2, 2.2, 3, 3.3, 'ok', NULL, 't');"
    "PRAGMA application_id=1146307889; PRAGMA user_version=1;";

/* A version-1 database: read as it is, migrated to version 2 when opened
 * for writing, its rows kept. */
static void test_migration(void)
{
    char p[512], err[BASE_ERRLEN];
    path(p, "v1.db");
    sqlite3 *h;
    sqlite3_open(p, &h);
    CHECK(sqlite3_exec(h, v1_schema, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    res_db *db = res_open(p, RES_OPEN_READ, err);
    CHECK(db != NULL, "%s", err);
    if (db) {
        res_validation *v;
        int n = res_validations(db, 1, &v, err);
        CHECK(n == 1 && v[0].meas[1] == 2.2 && isnan(v[0].meas[0]));
        if (n > 0) res_validations_free(v, n);
        res_step *st;
        CHECK(res_validation_steps(db, 1, &st, err) == 0); /* no table: no steps */
        res_close(db);
    }
    sqlite3_open(p, &h);
    CHECK(db_int(h, "PRAGMA user_version") == 1); /* a reader changes nothing */
    sqlite3_close(h);
    db = res_open(p, RES_OPEN_WRITE, err);
    CHECK(db != NULL, "%s", err);
    if (!db) return;
    h = res_sqlite(db);
    CHECK(db_int(h, "PRAGMA user_version") == RES_SCHEMA_VERSION);
    CHECK(db_int(h, "SELECT count(*) FROM sqlite_master WHERE name='validation_steps'") == 1);
    res_point *pt;
    int n = res_front(db, 1, &pt, err);
    CHECK(n == 1 && pt[0].obj[2] == 3.5 && pt[0].nvar == 2);
    if (n > 0) res_points_free(pt, n);
    res_close(db);
}

/* A lock held by another process is waited on for a bounded time, and the
 * failure names the holder. */
static void test_lock_bounded(void)
{
    char p[512], err[BASE_ERRLEN];
    path(p, "locked.db");
    res_db *db = res_open(p, RES_OPEN_CREATE, err);
    CHECK(db != NULL);
    res_close(db);
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    pid_t holder = fork();
    if (holder == 0) {
        int fd = open(p, O_RDONLY);
        flock(fd, LOCK_EX);
        if (write(pipefd[1], "x", 1) != 1) _exit(1);
        sleep(30);
        _exit(0);
    }
    char c;
    CHECK(read(pipefd[0], &c, 1) == 1);
    setenv("DSE_LOCK_WAIT", "1", 1);
    double t0 = base_now();
    db = res_open(p, RES_OPEN_WRITE, err);
    double dt = base_now() - t0;
    unsetenv("DSE_LOCK_WAIT");
    char want[64];
    snprintf(want, sizeof want, "process %ld", (long)holder);
    CHECK(db == NULL && strstr(err, "locked by") && strstr(err, want), "%s", db ? "opened" : err);
    CHECK(dt >= 0.9 && dt < 20, "waited %.2f s", dt);
    res_close(db);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    close(pipefd[0]), close(pipefd[1]);
}

/* Two processes claiming one campaign at the same moment: one wins. */
static void test_claim(void)
{
    char p[512], err[BASE_ERRLEN];
    path(p, "claim.db");
    res_db *db = res_open(p, RES_OPEN_CREATE, err);
    long long id;
    CHECK(db && res_campaign_new(db, "c", "nsga", "n", "p", "c", "{}", &id, err) == 0);
    CHECK(res_campaign_set_status(db, id, "interrupted", NULL, err) == 0);
    res_close(db);
    setenv("DSE_FAULT", "claim-pause", 1);
    /* Each claimant reports through res_pipe and stays alive until the
     * parent closes go_pipe: a winner that had exited would leave a
     * "running" campaign of a dead process, which may be claimed again. */
    int res_pipe[2], go_pipe[2];
    CHECK(pipe(res_pipe) == 0 && pipe(go_pipe) == 0);
    pid_t pid[2];
    for (int w = 0; w < 2; w++)
        if ((pid[w] = fork()) == 0) {
            close(go_pipe[1]);
            char e[BASE_ERRLEN];
            res_db *d = res_open(p, RES_OPEN_WRITE, e);
            int r = d ? res_campaign_claim(d, id, "interrupted failed", NULL, e) : -1;
            res_close(d);
            char c = (char)(r == 1 ? 'w' : r == 0 ? 'l' : 'e');
            if (write(res_pipe[1], &c, 1) != 1) _exit(3);
            if (read(go_pipe[0], &c, 1) < 0) {}
            _exit(0);
        }
    unsetenv("DSE_FAULT");
    close(go_pipe[0]);
    int won = 0, lost = 0;
    for (int w = 0; w < 2; w++) {
        char c = 0;
        if (read(res_pipe[0], &c, 1) == 1) won += c == 'w', lost += c == 'l';
    }
    close(go_pipe[1]);
    for (int w = 0; w < 2; w++) waitpid(pid[w], NULL, 0);
    close(res_pipe[0]), close(res_pipe[1]);
    CHECK(won == 1 && lost == 1, "%d claimed, %d refused", won, lost);
    /* A running campaign of a process that is gone can be claimed again. */
    db = res_open(p, RES_OPEN_WRITE, err);
    sqlite3_exec(res_sqlite(db), "UPDATE campaigns SET pid = 999999999", NULL, NULL, NULL);
    res_campaign c;
    CHECK(res_campaign_claim(db, id, "interrupted failed", &c, err) == 1);
    res_campaign_free(&c);
    CHECK(res_campaign_claim(db, id, "interrupted failed", &c, err) == 0 && !strcmp(c.status, "running"));
    res_campaign_free(&c);
    res_close(db);
}

/* Two processes logging campaigns into one file at the same time. */
static void test_two_writers(void)
{
    char p[512];
    path(p, "shared.db");
    enum { N = 200, NV = 16, G = 25 };
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            char err[BASE_ERRLEN];
            res_db *db = res_open(p, RES_OPEN_CREATE, err);
            if (!db) {
                fprintf(stderr, "writer %d: %s\n", w, err);
                _exit(3);
            }
            long long id;
            if (res_campaign_new(db, w ? "w1" : "w0", "nsga", "n", "p", "c", "{}", &id, err)) _exit(4);
            static int gen[N * NV], rank[N];
            static double obj[N * 3], cv[N], crowd[N];
            for (long g = 0; g < G; g++) {
                make_pop(N, NV, g + w, gen, obj, cv, rank, crowd);
                res_pop pop = {N, NV, gen, obj, cv, rank, crowd};
                res_gen st = {g, N * (g + 1), 0, 0.1, {1, 2, 3}, 1, N, 0};
                if (res_generation_write(db, id, &st, &pop, gen, sizeof gen, err)) {
                    fprintf(stderr, "writer %d: %s\n", w, err);
                    _exit(5);
                }
            }
            if (res_finish(db, id, NULL, NULL, NULL, "finished", err)) _exit(6);
            res_close(db);
            _exit(0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status = -1;
        waitpid(pid[w], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    sqlite3 *h;
    CHECK(sqlite3_open(p, &h) == SQLITE_OK);
    long long nfin = db_int(h, "SELECT count(*) FROM campaigns WHERE status='finished'");
    CHECK(nfin == 2, "%lld finished campaigns (query error %s)", nfin, sqlite3_errmsg(h));
    CHECK(db_int(h, "SELECT count(*) FROM individuals") == 2 * N * G);
    CHECK(db_int(h, "SELECT count(*) FROM generations") == 2 * G);
    sqlite3_stmt *s;
    sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &s, NULL);
    CHECK(sqlite3_step(s) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(s, 0), "ok"));
    sqlite3_finalize(s);
    sqlite3_close(h);
}

static void test_readonly_folder(void)
{
    char src[512], ro[512], p[600], q[600], cmd[2600], err[BASE_ERRLEN];
    path(src, "rosrc");
    path(ro, "ro folder?#%"); /* characters a URI would read otherwise */
    mkdir(src, 0755);
    mkdir(ro, 0755);
    snprintf(p, sizeof p, "%s/c.db", src);
    res_db *db = res_open(p, RES_OPEN_CREATE, err);
    long long id = -1;
    CHECK(db && !res_campaign_new(db, "n", "nsga", "toy6", "local-2", "hybrid", "{}", &id, err), "%s", err);
    res_close(db);
    snprintf(cmd, sizeof cmd, "mount --bind '%s' '%s' 2>/dev/null && mount -o remount,bind,ro '%s' 2>/dev/null", src,
             ro, ro);
    if (geteuid() != 0 || system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "umount '%s' 2>/dev/null", ro);
        if (system(cmd)) {}
        printf("skip: no read-only bind mount here (needs root)\n");
        return;
    }
    snprintf(q, sizeof q, "%s/c.db", ro);
    db = res_open(q, RES_OPEN_READ, err);
    CHECK(db != NULL, "reading %s: %s", q, err);
    res_campaign *cs = NULL;
    int n = db ? res_campaign_list(db, &cs, err) : -1;
    CHECK(n == 1 && cs && cs[0].id == id, "%d campaigns in the read-only copy: %s", n, err);
    if (n > 0) res_campaign_list_free(cs, n);
    res_close(db);
    CHECK(res_open(q, RES_OPEN_WRITE, err) == NULL && strstr(err, "not writable"), "%s", err);
    snprintf(cmd, sizeof cmd, "umount '%s'", ro);
    CHECK(system(cmd) == 0);
    /* a -wal with content beside it: not read as immutable (that would skip
     * the changes it holds); refused, saying so */
    snprintf(cmd, sizeof cmd, "printf x > '%s/c.db-wal' && mount --bind '%s' '%s' && mount -o remount,bind,ro '%s'",
             src, src, ro, ro);
    CHECK(system(cmd) == 0);
    CHECK(res_open(q, RES_OPEN_READ, err) == NULL && strstr(err, "-wal"), "%s", err);
    snprintf(cmd, sizeof cmd, "umount '%s'", ro);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dse-test-results-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    test_genome_text();
    test_roundtrip();
    test_refusals();
    test_two_writers();
    test_migration();
    test_lock_bounded();
    test_claim();
    test_readonly_folder();
    if (!check_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    }
    printf("%s\n", check_failures ? "FAILED" : "ok");
    return check_failures != 0;
}
