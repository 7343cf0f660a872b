/* db.c -- opening a results database: identity, schema (made from the
 * objectives table), migrations, bounded lock waits, and the SQLite
 * helpers the other files of results/ share (res_internal.h).
 *
 * Invariants: a file is only used if it is a dse database of a schema
 * version this build understands, else it is refused and left untouched;
 * a file this call created is removed again when opening fails; no wait
 * for another process is longer than RES_LOCK_WAIT_S.
 *
 * Speed: a thesis-sized campaign logs 100k individuals, so every write goes
 * through statements prepared once per connection (res_stmt), and one
 * generation is one transaction (one fsync at most in WAL mode with
 * synchronous=NORMAL).
 */
#include "res_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- SQL made from the objectives table ---- */

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t l = strlen(buf);
    if (l + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + l, n - l, fmt, ap);
    va_end(ap);
}

char *res_sql_cols(char *buf, size_t n, const char *pre, const char *post)
{
    for (int k = 0; k < COST_NOBJ; k++)
        append(buf, n, "%s%s%s%s", k ? ", " : "", pre, cost_objectives[k].name, post);
    return buf;
}

char *res_sql_pairs(char *buf, size_t n, const char *pre, const char *post, const char *pre2,
                    const char *post2)
{
    for (int k = 0; k < COST_NOBJ; k++)
        append(buf, n, "%s%s%s%s, %s%s%s", k ? ", " : "", pre, cost_objectives[k].name, post, pre2,
               cost_objectives[k].name, post2);
    return buf;
}

char *res_sql_marks(char *buf, size_t n, int k)
{
    for (int i = 0; i < k; i++) append(buf, n, "%s?", i ? "," : "");
    return buf;
}

char *res_sql_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* The schema of this version.  Objective columns come from the table. */
static char *schema_sql(void)
{
    char gen[512] = "", ind[512] = "", val[1024] = "";
    res_sql_cols(gen, sizeof gen, "best_", " REAL");
    res_sql_cols(ind, sizeof ind, "", " REAL");
    res_sql_pairs(val, sizeof val, "pred_", " REAL", "meas_", " REAL");
    return res_sql_fmt(
        "CREATE TABLE IF NOT EXISTS campaigns(\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  name TEXT NOT NULL,\n"
        "  kind TEXT NOT NULL,\n"
        "  status TEXT NOT NULL CHECK (status IN ('running','finished','interrupted','failed')),\n"
        "  created TEXT NOT NULL,\n"
        "  updated TEXT NOT NULL,\n"
        "  network TEXT, platform TEXT, chromosome TEXT,\n"
        "  config TEXT NOT NULL,\n"
        "  message TEXT,\n"
        "  gens_done INTEGER NOT NULL DEFAULT -1,\n"
        "  evaluations INTEGER NOT NULL DEFAULT 0,\n"
        "  pid INTEGER, host TEXT);\n"
        "CREATE TABLE IF NOT EXISTS generations(\n"
        "  campaign INTEGER NOT NULL, gen INTEGER NOT NULL,\n"
        "  evaluations INTEGER, cache_hits INTEGER, hypervolume REAL,\n"
        "  %s,\n"
        "  front_size INTEGER, feasible INTEGER, wall_time REAL,\n"
        "  PRIMARY KEY (campaign, gen)) WITHOUT ROWID;\n"
        "CREATE TABLE IF NOT EXISTS individuals(\n"
        "  campaign INTEGER NOT NULL, gen INTEGER NOT NULL, idx INTEGER NOT NULL,\n"
        "  genome TEXT NOT NULL, %s,\n"
        "  violation REAL, rank INTEGER, crowding REAL,\n"
        "  PRIMARY KEY (campaign, gen, idx)) WITHOUT ROWID;\n"
        "CREATE TABLE IF NOT EXISTS front(\n"
        "  campaign INTEGER NOT NULL, idx INTEGER NOT NULL,\n"
        "  genome TEXT NOT NULL, %s, violation REAL,\n"
        "  src_gen INTEGER, src_idx INTEGER,\n"
        "  PRIMARY KEY (campaign, idx)) WITHOUT ROWID;\n"
        "CREATE TABLE IF NOT EXISTS checkpoints(\n"
        "  campaign INTEGER PRIMARY KEY, gen INTEGER NOT NULL, state BLOB NOT NULL);\n"
        "CREATE TABLE IF NOT EXISTS validations(\n"
        "  id INTEGER PRIMARY KEY, campaign INTEGER NOT NULL, point INTEGER NOT NULL,\n"
        "  device TEXT,\n"
        "  %s,\n"
        "  status TEXT NOT NULL, reason TEXT, created TEXT NOT NULL);\n"
        "CREATE TABLE IF NOT EXISTS calibrations(\n"
        "  id INTEGER PRIMARY KEY, created TEXT NOT NULL, platform TEXT, network TEXT,\n"
        "  coeffs TEXT NOT NULL, report TEXT);\n"
        "%s",
        gen, ind, ind, val,
        /* version 2 */
        "CREATE TABLE IF NOT EXISTS validation_steps(\n"
        "  validation INTEGER NOT NULL, device INTEGER NOT NULL, step INTEGER NOT NULL,\n"
        "  op TEXT NOT NULL, layer INTEGER, c0 INTEGER, nc INTEGER, bytes INTEGER,\n"
        "  pred_start_ms REAL, pred_ms REAL, meas_start_ms REAL, meas_ms REAL,\n"
        "  meas_med_ms REAL,\n"
        "  PRIMARY KEY (validation, device, step)) WITHOUT ROWID;\n"
        /* A validation deleted by hand (sqlite3) takes its steps along:
         * row ids are reused once the table is emptied. */
        "CREATE TRIGGER IF NOT EXISTS validation_steps_follow AFTER DELETE ON validations\n"
        "  BEGIN DELETE FROM validation_steps WHERE validation = old.id; END;\n");
}

/* The text of the prepared statements. */
static int make_statements(res_db *db)
{
    char gen[256] = "", ind[256] = "", mo[64] = "";
    res_sql_cols(gen, sizeof gen, "best_", "");
    res_sql_cols(ind, sizeof ind, "", "");
    res_sql_marks(mo, sizeof mo, COST_NOBJ);
    db->sql[ST_INS_GEN] = res_sql_fmt("INSERT OR REPLACE INTO generations(campaign, gen, evaluations,"
                                      " cache_hits, hypervolume, %s, front_size, feasible,"
                                      " wall_time) VALUES (?,?,?,?,?,%s,?,?,?)",
                                      gen, mo);
    db->sql[ST_INS_IND] = res_sql_fmt("INSERT OR REPLACE INTO individuals(campaign, gen, idx, genome,"
                                      " %s, violation, rank, crowding) VALUES (?,?,?,?,%s,?,?,?)",
                                      ind, mo);
    db->sql[ST_INS_CKPT] =
        res_sql_fmt("INSERT OR REPLACE INTO checkpoints(campaign, gen, state) VALUES (?,?,?)");
    db->sql[ST_UPD_PROGRESS] = res_sql_fmt("UPDATE campaigns SET gens_done = ?, evaluations = ?,"
                                           " updated = ? WHERE id = ?");
    db->sql[ST_DEL_GEN] = res_sql_fmt("DELETE FROM generations WHERE campaign = ? AND gen > ?");
    db->sql[ST_DEL_IND] = res_sql_fmt("DELETE FROM individuals WHERE campaign = ? AND gen > ?");
    db->sql[ST_INS_FRONT] = res_sql_fmt("INSERT INTO front(campaign, idx, genome, %s, violation,"
                                        " src_gen, src_idx) VALUES (?,?,?,%s,?,?,?)",
                                        ind, mo);
    db->sql[ST_INS_STEP] = res_sql_fmt(
        "INSERT INTO validation_steps(validation, device, step, op, layer, c0, nc, bytes,"
        " pred_start_ms, pred_ms, meas_start_ms, meas_ms, meas_med_ms)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (int i = 0; i < ST_COUNT; i++)
        if (!db->sql[i]) return -1;
    return 0;
}

/* ---- helpers ---- */

/* The wait for another process's lock: RES_LOCK_WAIT_S, or DSE_LOCK_WAIT. */
static double lock_wait(void)
{
    const char *e = getenv("DSE_LOCK_WAIT");
    char *end;
    double v = e ? strtod(e, &end) : NAN;
    return e && end != e && !*end && v >= 0 && v <= 86400 ? v : RES_LOCK_WAIT_S;
}

void res_lock_holder(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "another process");
    char aux[4096];
    const char *suffix[3] = {"", "-shm", "-wal"};
    FILE *f = fopen("/proc/locks", "r");
    if (!f) return;
    char line[256];
    long me = (long)getpid(), found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char type[16], adv[16], rw[16], dev[32];
        long pid;
        unsigned long long ino;
        /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; blocked
         * requests are listed as "1: -> FLOCK ..." and are skipped. */
        const char *p = strchr(line, ':');
        if (!p || strstr(line, "->")) continue;
        if (sscanf(p + 1, "%15s %15s %15s %ld %31s", type, adv, rw, &pid, dev) != 5) continue;
        const char *c = strrchr(dev, ':');
        if (!c || sscanf(c + 1, "%llu", &ino) != 1 || pid == me) continue;
        for (int k = 0; k < 3 && found < 0; k++) {
            struct stat st;
            snprintf(aux, sizeof aux, "%s%s", path, suffix[k]);
            if (stat(aux, &st) == 0 && (unsigned long long)st.st_ino == ino) found = pid;
        }
    }
    fclose(f);
    if (found < 0) return;
    char comm[64] = "?";
    snprintf(aux, sizeof aux, "/proc/%ld/comm", found);
    FILE *c = fopen(aux, "r");
    if (c) {
        if (fgets(comm, sizeof comm, c)) comm[strcspn(comm, "\n")] = 0;
        fclose(c);
    }
    snprintf(buf, n, "process %ld (%s)", found, comm);
}

int res_dberr(res_db *db, char *err, const char *what)
{
    char pb[BASE_PATHSHOW + 1];
    int code = sqlite3_errcode(db->h);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
        char who[128];
        res_lock_holder(db->path, who, sizeof who);
        base_seterr(err, "%s: %s: the database stayed locked by %s for longer than the %.0f s "
                    "this waits; try again when it is done", base_path(db->path, pb), what, who,
                    lock_wait());
        return -1;
    }
    base_seterr(err, "%s: %s: %s", base_path(db->path, pb), what, sqlite3_errmsg(db->h));
    return -1;
}

int res_readerr(res_db *db, char *err, int rc, const char *what)
{
    if (rc != SQLITE_NOMEM) return res_dberr(db, err, what);
    char pb[BASE_PATHSHOW + 1];
    base_seterr(err, "%s: %s: out of memory", base_path(db->path, pb), what);
    return -1;
}

int res_grow(void **v, int n, int *cap, size_t size)
{
    if (n < *cap) return 0;
    int nc = *cap ? 2 * *cap : 16;
    void *nv = realloc(*v, (size_t)nc * size);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

int res_exec(res_db *db, const char *sql, char *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sqlite3_free(msg);
        return res_dberr(db, err, "executing");
    }
    return 0;
}

sqlite3_stmt *res_stmt(res_db *db, int which, char *err)
{
    if (!db->st[which] &&
        sqlite3_prepare_v3(db->h, db->sql[which], -1, SQLITE_PREPARE_PERSISTENT, &db->st[which],
                           NULL) != SQLITE_OK) {
        res_dberr(db, err, "preparing a statement");
        return NULL;
    }
    sqlite3_reset(db->st[which]);
    sqlite3_clear_bindings(db->st[which]);
    return db->st[which];
}

sqlite3_stmt *res_prep(res_db *db, const char *sql, char *err)
{
    sqlite3_stmt *s = NULL;
    if (!sql) {
        char pb[BASE_PATHSHOW + 1];
        base_seterr(err, "%s: out of memory", base_path(db->path, pb));
        return NULL;
    }
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK) {
        res_dberr(db, err, "preparing a query");
        return NULL;
    }
    return s;
}

int res_step_done(res_db *db, sqlite3_stmt *s, char *err)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return res_dberr(db, err, "writing");
    sqlite3_reset(s);
    return 0;
}

void res_bind_real(sqlite3_stmt *s, int k, double v)
{
    if (isnan(v)) sqlite3_bind_null(s, k); /* SQLite turns NaN into NULL anyway; say so */
    else sqlite3_bind_double(s, k, v);
}

double res_col_real(sqlite3_stmt *s, int k)
{
    return sqlite3_column_type(s, k) == SQLITE_NULL ? NAN : sqlite3_column_double(s, k);
}

char *res_col_str(sqlite3_stmt *s, int k)
{
    const unsigned char *t = sqlite3_column_text(s, k);
    return t ? strdup((const char *)t) : NULL;
}

int res_begin(res_db *db, char *err) { return res_exec(db, "BEGIN IMMEDIATE", err); }
int res_commit(res_db *db, char *err) { return res_exec(db, "COMMIT", err); }
void res_rollback(res_db *db)
{
    if (!sqlite3_get_autocommit(db->h)) sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- genomes ---- */

size_t res_genome_fmt(res_db *db, const int *g, int nvar)
{
    size_t need = (size_t)nvar * 12 + 1;
    if (need > db->gcap) {
        char *b = realloc(db->gbuf, need);
        if (!b) return (size_t)-1;
        db->gbuf = b;
        db->gcap = need;
    }
    char *p = db->gbuf;
    for (int j = 0; j < nvar; j++) {
        if (j) *p++ = ' ';
        long long v = g[j];
        if (v < 0) {
            *p++ = '-';
            v = -v;
        }
        char tmp[12];
        int k = 0;
        do tmp[k++] = (char)('0' + v % 10);
        while ((v /= 10) > 0);
        while (k) *p++ = tmp[--k];
    }
    *p = 0;
    return (size_t)(p - db->gbuf);
}

char *res_genome_text(const int *g, int nvar)
{
    res_db tmp = {0};
    size_t n = res_genome_fmt(&tmp, g, nvar);
    if (n == (size_t)-1) return NULL;
    return tmp.gbuf;
}

int res_genome_parse(const char *s, int *out, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < -2147483647L || v > 2147483647L) return -1;
        if (*end && *end != ' ') return -1;
        if (n >= max) return -1;
        out[n++] = (int)v;
        s = end;
    }
    return n;
}

/* ---- opening ---- */

/* application_id, user_version and the number of schema objects, read in
 * one statement so that they come from one snapshot even while another
 * process is creating the schema. */
static int read_ident(res_db *db, int *app, int *ver, int *ntab)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db->h,
                                "SELECT a.application_id, v.user_version,"
                                " (SELECT count(*) FROM sqlite_master)"
                                " FROM pragma_application_id AS a, pragma_user_version AS v",
                                -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *app = sqlite3_column_int(s, 0);
        *ver = sqlite3_column_int(s, 1);
        *ntab = sqlite3_column_int(s, 2);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc;
}

/* 0 = a usable dse database, 1 = empty (to be created), -1 = refused. */
static int judge(res_db *db, int rc, int app, int ver, int ntab, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    const char *p = base_path(db->path, pb);
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
        base_seterr(err, "%s: not a dse results database (not an SQLite file)", p);
        return -1;
    }
    if (rc != SQLITE_OK) return res_dberr(db, err, "reading the schema");
    if (app == RES_APP_ID) {
        if (ver > RES_SCHEMA_VERSION) {
            base_seterr(err, "%s: results schema version %d is newer than this dse understands (%d)",
                        p, ver, RES_SCHEMA_VERSION);
            return -1;
        }
        return 0;
    }
    if (app != 0 || ntab > 0) {
        base_seterr(err, "%s: not a dse results database (an SQLite file with other tables)", p);
        return -1;
    }
    return 1;
}

/* Does table t have column c? */
static int has_column(res_db *db, const char *t, const char *c)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", t);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK) return 0;
    sqlite3_bind_text(s, 1, c, -1, SQLITE_STATIC);
    int yes = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return yes;
}

/* The first objective column the file lacks ("table.column" into buf),
 * or 0 when it has them all. */
static int missing_column(res_db *db, char *buf, size_t n)
{
    static const struct { const char *table, *pre; } where[] = {
        {"generations", "best_"}, {"individuals", ""}, {"front", ""},
        {"validations", "pred_"}, {"validations", "meas_"}};
    for (size_t w = 0; w < sizeof where / sizeof *where; w++)
        for (int k = 0; k < COST_NOBJ; k++) {
            char col[96];
            snprintf(col, sizeof col, "%s%s", where[w].pre, cost_objectives[k].name);
            if (!has_column(db, where[w].table, col)) {
                snprintf(buf, n, "%s.%s", where[w].table, col);
                return 1;
            }
        }
    return 0;
}

/* Bring a database of an older version (or made before an objective
 * existed) up to this one, inside the caller's write transaction.
 * Version 1 -> 2: the table validation_steps.  Objective columns: added
 * as NULL (not known) for the rows stored before. */
static int migrate(res_db *db, int ver, char *err)
{
    char *schema = schema_sql();
    if (!schema) {
        char pb[BASE_PATHSHOW + 1];
        base_seterr(err, "%s: out of memory", base_path(db->path, pb));
        return -1;
    }
    /* CREATE TABLE IF NOT EXISTS: creates what a version lacks, keeps the rest. */
    int rc = res_exec(db, schema, err);
    free(schema);
    char col[128];
    while (!rc && missing_column(db, col, sizeof col)) {
        char sql[256];
        *strchr(col, '.') = ' ';
        char table[64], name[64];
        sscanf(col, "%63s %63s", table, name);
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s REAL", table, name);
        rc = res_exec(db, sql, err);
    }
    if (!rc && ver != RES_SCHEMA_VERSION) {
        char sql[80];
        snprintf(sql, sizeof sql, "PRAGMA user_version=%d", RES_SCHEMA_VERSION);
        rc = res_exec(db, sql, err);
    }
    return rc;
}

/* Check (and for an empty or older file, create or migrate) the schema.
 * Returns 0, or -1. */
static int check_schema(res_db *db, int writable, char *err)
{
    char pb[BASE_PATHSHOW + 1], col[128];
    int app = 0, ver = 0, ntab = 0;
    int rc = read_ident(db, &app, &ver, &ntab);
    int j = judge(db, rc, app, ver, ntab, err);
    if (j < 0) return -1;
    int stale = j == 0 && (ver < RES_SCHEMA_VERSION || missing_column(db, col, sizeof col));
    if (j == 0 && !stale) return 0;
    if (!writable) {
        if (j == 1) {
            base_seterr(err, "%s: not a dse results database (empty)", base_path(db->path, pb));
            return -1;
        }
        /* A reader of an older file: what it reads is there, but for the
         * newer tables (read as empty) and new objective columns. */
        if (!missing_column(db, col, sizeof col)) return 0;
        base_seterr(err, "%s: made before the objective column %s existed; a writing command "
                    "(dse resume, dse run) adds it", base_path(db->path, pb), col);
        return -1;
    }
    /* Create or migrate.  Two processes may race here; the write lock
     * serialises them and the second finds the work done. */
    if (res_exec(db, "PRAGMA journal_mode=WAL", err) || res_begin(db, err)) return -1;
    rc = read_ident(db, &app, &ver, &ntab);
    j = judge(db, rc, app, ver, ntab, err);
    if (j == 1) {
        char sql[80];
        snprintf(sql, sizeof sql, "PRAGMA application_id=%d", RES_APP_ID);
        if (res_exec(db, sql, err)) j = -1;
    }
    if (j >= 0 && migrate(db, j == 1 ? 0 : ver, err)) j = -1;
    if (j < 0) {
        res_rollback(db);
        return -1;
    }
    return res_commit(db, err);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* "file:PATH?immutable=1" with PATH percent-encoded where a URI would
 * read it otherwise ('%', '?', '#'); NULL when out of memory. */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(3 * n + 32), *q = u;
    if (!u) return NULL;
    q += sprintf(q, path[0] == '/' ? "file://" : "file:"); /* "//x" must not read as a host */
    for (const char *c = path; *c; c++)
        if (*c == '%' || *c == '?' || *c == '#') q += sprintf(q, "%%%02X", (unsigned char)*c);
        else *q++ = *c;
    strcpy(q, "?immutable=1");
    return u;
}

/* Does PATH-wal exist with something in it? */
static int wal_has_content(const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    char *w = malloc(n + 5);
    if (!w) return 1; /* unknown: not immutable */
    memcpy(w, path, n);
    memcpy(w + n, "-wal", 5);
    int has = stat(w, &st) == 0 && st.st_size > 0;
    free(w);
    return has;
}

/* flock(LOCK_EX) that gives up after lock_wait() seconds: 0, or -1 with
 * err naming who holds the lock. */
static int flock_bounded(res_db *db, char *err)
{
    double until = base_now() + lock_wait();
    struct timespec nap = {0, 20 * 1000 * 1000};
    while (flock(db->lockfd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) return 0; /* no flock here: SQLite's locks suffice */
        if (base_now() >= until) {
            char who[128], pb[BASE_PATHSHOW + 1];
            res_lock_holder(db->path, who, sizeof who);
            base_seterr(err, "%s: locked by %s for longer than the %.0f s this waits; try again "
                        "when it is done", base_path(db->path, pb), who, lock_wait());
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    return 0;
}

res_db *res_open(const char *path, int mode, char *err)
{
    struct stat st;
    char pb[BASE_PATHSHOW + 1], db2[BASE_PATHSHOW + 1];
    const char *p = base_path(path, pb);
    char *dir = dir_of(path);
    if (!dir) {
        base_seterr(err, "%s: out of memory", p);
        return NULL;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        base_seterr(err, "%s: folder %s does not exist", p, base_path(dir, db2));
        free(dir);
        return NULL;
    }
    /* WAL needs its -wal and -shm files next to the database: a writer
     * needs the folder writable.  A reader on a read-only file system
     * (read-only media, a read-only mount), where SQLite cannot make them,
     * opens the file as immutable instead: nothing can be writing it there.
     * Not when a -wal file with content lies beside it (immutable would
     * skip what it holds), nor for a folder that is merely not ours (its
     * owner may be writing the database). */
    int ro_folder = access(dir, W_OK) != 0, ro_fs = ro_folder && errno == EROFS;
    if (mode != RES_OPEN_READ && ro_folder) {
        base_seterr(err, "%s: folder %s is not writable", p, base_path(dir, db2));
        free(dir);
        return NULL;
    }
    free(dir);
    int exists = stat(path, &st) == 0, made = 0;
    if (!exists && mode != RES_OPEN_CREATE) {
        base_seterr(err, "%s: no such results database", p);
        return NULL;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        base_seterr(err, "%s: not a regular file", p);
        return NULL;
    }
    if (exists && mode != RES_OPEN_READ && access(path, W_OK) != 0) {
        base_seterr(err, "%s: results database is read-only", p);
        return NULL;
    }
    if (!exists) {
        /* Create it ourselves, exclusively, so that on failure we remove
         * only a file this call made (another process may race us). */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            made = 1;
            close(fd);
        } else if (errno != EEXIST) {
            base_seterr(err, "%s: cannot create: %s", p, strerror(errno));
            return NULL;
        }
    }
    res_db *db = calloc(1, sizeof *db);
    if (db) db->lockfd = -1;
    if (!db || !(db->path = strdup(path)) || make_statements(db)) {
        res_close(db);
        if (made) unlink(path);
        base_seterr(err, "%s: out of memory", p);
        return NULL;
    }
    /* A reader opens read-write where it could write, then query_only
     * (SQLite refuses any write it would make): SQLite removes the -wal and
     * -shm files when the last connection closes, and a read-only
     * connection cannot, so every `dse list` left two files beside the
     * user's database.  Not for a file without write permission bits (root
     * passes access(W_OK) regardless).  Its close, the last, may still move
     * committed transactions a crashed writer left in the -wal into the
     * file, as the next writer would. */
    int rw_reader = mode == RES_OPEN_READ && !ro_folder && access(path, W_OK) == 0 && (st.st_mode & 0222);
    int flags = mode == RES_OPEN_READ && !rw_reader ? SQLITE_OPEN_READONLY
                : mode == RES_OPEN_READ            ? SQLITE_OPEN_READWRITE
                                                   : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int immutable = mode == RES_OPEN_READ && ro_fs && !wal_has_content(path);
    char *uri = immutable ? immutable_uri(path) : NULL;
    if (immutable && !uri) {
        base_seterr(err, "%s: out of memory", p);
        goto fail;
    }
    int orc = sqlite3_open_v2(uri ? uri : path, &db->h, flags | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0),
                              NULL);
    free(uri);
    if (orc != SQLITE_OK) {
        base_seterr(err, "%s: cannot open: %s", p, db->h ? sqlite3_errmsg(db->h) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, (int)(lock_wait() * 1000));
    if (rw_reader && res_exec(db, "PRAGMA query_only=1", err)) goto fail;
    if (mode != RES_OPEN_READ && sqlite3_db_readonly(db->h, "main") == 1) {
        base_seterr(err, "%s: results database is read-only", p);
        goto fail;
    }
    /* Writers take turns through the schema check: on a new file, the
     * switch to WAL and the schema creation can fail with "database is
     * locked" instead of waiting when two processes do them at once.  An
     * flock on the file is independent of SQLite's own (fcntl) locks. */
    if (mode != RES_OPEN_READ && (db->lockfd = open(path, O_RDONLY)) >= 0 &&
        flock_bounded(db, err))
        goto fail;
    if (check_schema(db, mode != RES_OPEN_READ, err)) {
        if (mode == RES_OPEN_READ && ro_fs && !immutable) /* SQLite says only "unable to open" */
            base_seterr(err, "%s: on a read-only file system beside its -wal file, which holds changes "
                        "not yet in it: copy both to a writable folder to read it", p);
        goto fail;
    }
    if (mode != RES_OPEN_READ && (res_exec(db, "PRAGMA journal_mode=WAL", err) ||
                                  res_exec(db, "PRAGMA synchronous=NORMAL", err)))
        goto fail;
    if (db->lockfd >= 0) flock(db->lockfd, LOCK_UN);
    base_input_note(path); /* an input: no output of this process may replace it */
    return db;
fail:
    res_close(db);
    if (made) { /* leave nothing behind */
        char aux[4096];
        unlink(path);
        snprintf(aux, sizeof aux, "%s-wal", path);
        unlink(aux);
        snprintf(aux, sizeof aux, "%s-shm", path);
        unlink(aux);
    }
    return NULL;
}

void res_close(res_db *db)
{
    if (!db) return;
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        free(db->sql[i]);
    }
    if (db->h) sqlite3_close(db->h);
    if (db->lockfd >= 0) close(db->lockfd);
    free(db->path);
    free(db->gbuf);
    free(db);
}

const char *res_path(const res_db *db) { return db->path; }
void *res_sqlite(res_db *db) { return db->h; }
