/* results.c -- the SQLite results database (see results.h for the API and
 * its invariants, docs/results-schema.md for the tables).
 *
 * Speed: a thesis-sized campaign logs 100k individuals, so every write goes
 * through statements prepared once per connection, and one generation is
 * one transaction (one fsync at most in WAL mode with synchronous=NORMAL).
 */
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RES_APP_ID 0x44534531 /* "DSE1" */

enum {
    ST_INS_GEN,
    ST_INS_IND,
    ST_INS_CKPT,
    ST_UPD_PROGRESS,
    ST_DEL_GEN,
    ST_DEL_IND,
    ST_INS_FRONT,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_INS_GEN] = "INSERT OR REPLACE INTO generations(campaign, gen, evaluations, cache_hits,"
                   " hypervolume, best_energy, best_memory, best_latency, front_size, feasible,"
                   " wall_time) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    [ST_INS_IND] = "INSERT OR REPLACE INTO individuals(campaign, gen, idx, genome, energy, memory,"
                   " latency, violation, rank, crowding) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [ST_INS_CKPT] = "INSERT OR REPLACE INTO checkpoints(campaign, gen, state) VALUES (?,?,?)",
    [ST_UPD_PROGRESS] = "UPDATE campaigns SET gens_done = ?, evaluations = ?, updated = ?"
                        " WHERE id = ?",
    [ST_DEL_GEN] = "DELETE FROM generations WHERE campaign = ? AND gen > ?",
    [ST_DEL_IND] = "DELETE FROM individuals WHERE campaign = ? AND gen > ?",
    [ST_INS_FRONT] = "INSERT INTO front(campaign, idx, genome, energy, memory, latency, violation,"
                     " src_gen, src_idx) VALUES (?,?,?,?,?,?,?,?,?)",
};

struct res_db {
    sqlite3 *h;
    char *path;
    sqlite3_stmt *st[ST_COUNT];
    char *gbuf; /* genome text scratch */
    size_t gcap;
    int lockfd; /* the flock of res_open's schema check; closed after SQLite's
                   handle, as closing any descriptor of the file drops the
                   process's fcntl locks, SQLite's included */
};

static const char *schema_sql =
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
    "  best_energy REAL, best_memory REAL, best_latency REAL,\n"
    "  front_size INTEGER, feasible INTEGER, wall_time REAL,\n"
    "  PRIMARY KEY (campaign, gen)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS individuals(\n"
    "  campaign INTEGER NOT NULL, gen INTEGER NOT NULL, idx INTEGER NOT NULL,\n"
    "  genome TEXT NOT NULL, energy REAL, memory REAL, latency REAL,\n"
    "  violation REAL, rank INTEGER, crowding REAL,\n"
    "  PRIMARY KEY (campaign, gen, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS front(\n"
    "  campaign INTEGER NOT NULL, idx INTEGER NOT NULL,\n"
    "  genome TEXT NOT NULL, energy REAL, memory REAL, latency REAL, violation REAL,\n"
    "  src_gen INTEGER, src_idx INTEGER,\n"
    "  PRIMARY KEY (campaign, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS checkpoints(\n"
    "  campaign INTEGER PRIMARY KEY, gen INTEGER NOT NULL, state BLOB NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS validations(\n"
    "  id INTEGER PRIMARY KEY, campaign INTEGER NOT NULL, point INTEGER NOT NULL,\n"
    "  device TEXT,\n"
    "  pred_energy REAL, meas_energy REAL, pred_memory REAL, meas_memory REAL,\n"
    "  pred_latency REAL, meas_latency REAL,\n"
    "  status TEXT NOT NULL, reason TEXT, created TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS calibrations(\n"
    "  id INTEGER PRIMARY KEY, created TEXT NOT NULL, platform TEXT, network TEXT,\n"
    "  coeffs TEXT NOT NULL, report TEXT);\n";

static int dberr(res_db *db, char *err, const char *what)
{
    base_seterr(err, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->h));
    return -1;
}

/* The error of a reader loop that ended with rc: out of memory (set by
 * the loop, SQLite does not know) or SQLite's own. */
static int readerr(res_db *db, char *err, int rc, const char *what)
{
    if (rc != SQLITE_NOMEM) return dberr(db, err, what);
    base_seterr(err, "%s: %s: out of memory", db->path, what);
    return -1;
}

/* Room for row n in an array of rows of `size` bytes grown by doubling:
 * 0, or -1 when out of memory (*v and *cap then untouched). */
static int grow(void **v, int n, int *cap, size_t size)
{
    if (n < *cap) return 0;
    int nc = *cap ? 2 * *cap : 16;
    void *nv = realloc(*v, (size_t)nc * size);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

static void now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int exec(res_db *db, const char *sql, char *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        base_seterr(err, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static sqlite3_stmt *stmt(res_db *db, int which, char *err)
{
    if (!db->st[which] &&
        sqlite3_prepare_v3(db->h, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT, &db->st[which],
                           NULL) != SQLITE_OK) {
        dberr(db, err, "preparing a statement");
        return NULL;
    }
    sqlite3_reset(db->st[which]);
    sqlite3_clear_bindings(db->st[which]);
    return db->st[which];
}

/* One-shot statement for the rarely used paths. */
static sqlite3_stmt *prep(res_db *db, const char *sql, char *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK) {
        dberr(db, err, "preparing a query");
        return NULL;
    }
    return s;
}

static int step_done(res_db *db, sqlite3_stmt *s, char *err)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return dberr(db, err, "writing");
    sqlite3_reset(s);
    return 0;
}

static void bind_real(sqlite3_stmt *s, int k, double v)
{
    if (isnan(v)) sqlite3_bind_null(s, k); /* SQLite turns NaN into NULL anyway; say so */
    else sqlite3_bind_double(s, k, v);
}

static double col_real(sqlite3_stmt *s, int k)
{
    return sqlite3_column_type(s, k) == SQLITE_NULL ? NAN : sqlite3_column_double(s, k);
}

static char *col_str(sqlite3_stmt *s, int k)
{
    const unsigned char *t = sqlite3_column_text(s, k);
    return t ? strdup((const char *)t) : NULL;
}

static int begin(res_db *db, char *err) { return exec(db, "BEGIN IMMEDIATE", err); }
static int commit(res_db *db, char *err) { return exec(db, "COMMIT", err); }
static void rollback(res_db *db)
{
    if (!sqlite3_get_autocommit(db->h)) sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
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
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
        base_seterr(err, "%s: not a dse results database (not an SQLite file)", db->path);
        return -1;
    }
    if (rc != SQLITE_OK) return dberr(db, err, "reading the schema");
    if (app == RES_APP_ID) {
        if (ver > RES_SCHEMA_VERSION) {
            base_seterr(err, "%s: results schema version %d is newer than this dse understands (%d)",
                   db->path, ver, RES_SCHEMA_VERSION);
            return -1;
        }
        return 0;
    }
    if (app != 0 || ntab > 0) {
        base_seterr(err, "%s: not a dse results database (an SQLite file with other tables)",
               db->path);
        return -1;
    }
    return 1;
}

/* Check (and for an empty file, create) the schema.  Returns 0, or -1. */
static int check_schema(res_db *db, int writable, char *err)
{
    int app = 0, ver = 0, ntab = 0;
    int rc = read_ident(db, &app, &ver, &ntab);
    int j = judge(db, rc, app, ver, ntab, err);
    if (j <= 0) return j;
    if (!writable) {
        base_seterr(err, "%s: not a dse results database (empty)", db->path);
        return -1;
    }
    /* Empty file: create the schema.  Two processes may race here; the
     * write lock serialises them and the second finds the work done. */
    if (exec(db, "PRAGMA journal_mode=WAL", err) || begin(db, err)) return -1;
    rc = read_ident(db, &app, &ver, &ntab);
    j = judge(db, rc, app, ver, ntab, err);
    if (j == 1) {
        char sql[80];
        snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d",
                 RES_APP_ID, RES_SCHEMA_VERSION);
        if (exec(db, schema_sql, err) || exec(db, sql, err)) j = -1;
    }
    if (j < 0) {
        rollback(db);
        return -1;
    }
    return commit(db, err);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

res_db *res_open(const char *path, int mode, char *err)
{
    struct stat st;
    char *dir = dir_of(path);
    if (!dir) {
        base_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        base_seterr(err, "%s: folder %s does not exist", path, dir);
        free(dir);
        return NULL;
    }
    if (mode != RES_OPEN_READ && access(dir, W_OK) != 0) {
        /* WAL needs its -wal and -shm files next to the database. */
        base_seterr(err, "%s: folder %s is not writable", path, dir);
        free(dir);
        return NULL;
    }
    free(dir);
    int exists = stat(path, &st) == 0, made = 0;
    if (!exists && mode != RES_OPEN_CREATE) {
        base_seterr(err, "%s: no such results database", path);
        return NULL;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        base_seterr(err, "%s: not a regular file", path);
        return NULL;
    }
    if (exists && mode != RES_OPEN_READ && access(path, W_OK) != 0) {
        base_seterr(err, "%s: results database is read-only", path);
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
            base_seterr(err, "%s: cannot create: %s", path, strerror(errno));
            return NULL;
        }
    }
    res_db *db = calloc(1, sizeof *db);
    if (db) db->lockfd = -1;
    if (!db || !(db->path = strdup(path))) {
        if (made) unlink(path);
        free(db);
        base_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    int flags = mode == RES_OPEN_READ ? SQLITE_OPEN_READONLY
                                      : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &db->h, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        base_seterr(err, "%s: cannot open: %s", path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, 60000);
    if (mode != RES_OPEN_READ && sqlite3_db_readonly(db->h, "main") == 1) {
        base_seterr(err, "%s: results database is read-only", path);
        goto fail;
    }
    /* Writers take turns through the schema check: on a new file, the
     * switch to WAL and the schema creation can fail with "database is
     * locked" instead of waiting when two processes do them at once.  An
     * flock on the file is independent of SQLite's own (fcntl) locks. */
    if (mode != RES_OPEN_READ && (db->lockfd = open(path, O_RDONLY)) >= 0)
        flock(db->lockfd, LOCK_EX);
    if (check_schema(db, mode != RES_OPEN_READ, err)) goto fail;
    if (mode != RES_OPEN_READ &&
        (exec(db, "PRAGMA journal_mode=WAL", err) || exec(db, "PRAGMA synchronous=NORMAL", err)))
        goto fail;
    if (db->lockfd >= 0) flock(db->lockfd, LOCK_UN);
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
    for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(db->st[i]);
    if (db->h) sqlite3_close(db->h);
    if (db->lockfd >= 0) close(db->lockfd);
    free(db->path);
    free(db->gbuf);
    free(db);
}

const char *res_path(const res_db *db) { return db->path; }
void *res_sqlite(res_db *db) { return db->h; }

/* ---- genomes ---- */

/* Into db->gbuf; returns the length. */
static size_t genome_fmt(res_db *db, const int *g, int nvar)
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
    size_t n = genome_fmt(&tmp, g, nvar);
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

/* ---- campaigns ---- */

int res_campaign_new(res_db *db, const char *name, const char *kind, const char *network,
                     const char *platform, const char *chromosome, const char *config,
                     long long *id, char *err)
{
    char now[32], host[256] = "";
    now_iso(now, sizeof now);
    gethostname(host, sizeof host - 1);
    sqlite3_stmt *s = prep(db,
                           "INSERT INTO campaigns(name, kind, status, created, updated, network,"
                           " platform, chromosome, config, pid, host)"
                           " VALUES (?,?,'running',?,?,?,?,?,?,?,?)",
                           err);
    if (!s) return -1;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, network, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, platform, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, chromosome, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 8, config, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 9, (long long)getpid());
    sqlite3_bind_text(s, 10, host, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return dberr(db, err, "creating a campaign");
    *id = sqlite3_last_insert_rowid(db->h);
    return 0;
}

#define CAMPAIGN_COLS                                                                         \
    "id, name, kind, status, created, updated, network, platform, chromosome, config,"       \
    " message, gens_done, evaluations, pid, host"

static void read_campaign(sqlite3_stmt *s, res_campaign *c)
{
    c->id = sqlite3_column_int64(s, 0);
    c->name = col_str(s, 1);
    c->kind = col_str(s, 2);
    c->status = col_str(s, 3);
    c->created = col_str(s, 4);
    c->updated = col_str(s, 5);
    c->network = col_str(s, 6);
    c->platform = col_str(s, 7);
    c->chromosome = col_str(s, 8);
    c->config = col_str(s, 9);
    c->message = col_str(s, 10);
    c->gens_done = (long)sqlite3_column_int64(s, 11);
    c->evaluations = sqlite3_column_int64(s, 12);
    c->pid = (long)sqlite3_column_int64(s, 13);
    c->host = col_str(s, 14);
}

int res_campaign_get(res_db *db, long long id, res_campaign *c, char *err)
{
    memset(c, 0, sizeof *c);
    sqlite3_stmt *s = prep(db, "SELECT " CAMPAIGN_COLS " FROM campaigns WHERE id = ?", err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) read_campaign(s, c);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE) base_seterr(err, "%s: no campaign %lld", db->path, id);
    else dberr(db, err, "reading a campaign");
    return -1;
}

int res_campaign_list(res_db *db, res_campaign **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = prep(db, "SELECT " CAMPAIGN_COLS " FROM campaigns ORDER BY id", err);
    if (!s) return -1;
    int n = 0, cap = 0, rc;
    res_campaign *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        read_campaign(s, &v[n++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_campaign_list_free(v, n);
        return readerr(db, err, rc, "listing campaigns");
    }
    *out = v;
    return n;
}

void res_campaign_free(res_campaign *c)
{
    if (!c) return;
    free(c->name);
    free(c->kind);
    free(c->status);
    free(c->created);
    free(c->updated);
    free(c->network);
    free(c->platform);
    free(c->chromosome);
    free(c->config);
    free(c->message);
    free(c->host);
    memset(c, 0, sizeof *c);
}

void res_campaign_list_free(res_campaign *c, int n)
{
    for (int i = 0; i < n; i++) res_campaign_free(&c[i]);
    free(c);
}

int res_campaign_set_status(res_db *db, long long id, const char *status, const char *message,
                            char *err)
{
    char now[32], host[256] = "";
    now_iso(now, sizeof now);
    gethostname(host, sizeof host - 1);
    sqlite3_stmt *s = prep(db,
                           "UPDATE campaigns SET status = ?, message = ?, updated = ?, pid = ?,"
                           " host = ? WHERE id = ?",
                           err);
    if (!s) return -1;
    sqlite3_bind_text(s, 1, status, -1, SQLITE_STATIC);
    if (message) sqlite3_bind_text(s, 2, message, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, (long long)getpid());
    sqlite3_bind_text(s, 5, host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 6, id);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return dberr(db, err, "updating a campaign");
    if (sqlite3_changes(db->h) == 0) {
        base_seterr(err, "%s: no campaign %lld", db->path, id);
        return -1;
    }
    return 0;
}

/* ---- generations ---- */

static int truncate_locked(res_db *db, long long id, long gen, char *err)
{
    for (int w = ST_DEL_GEN; w <= ST_DEL_IND; w++) {
        sqlite3_stmt *s = stmt(db, w, err);
        if (!s) return -1;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, gen);
        if (step_done(db, s, err)) return -1;
    }
    return 0;
}

static int write_pop(res_db *db, long long id, long gen, const res_pop *pop, char *err)
{
    sqlite3_stmt *s = stmt(db, ST_INS_IND, err);
    if (!s) return -1;
    for (int i = 0; i < pop->n; i++) {
        size_t len = genome_fmt(db, pop->genomes + (size_t)i * pop->nvar, pop->nvar);
        if (len == (size_t)-1) {
            base_seterr(err, "%s: out of memory", db->path);
            return -1;
        }
        const double *o = pop->obj + (size_t)i * RES_NOBJ;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, gen);
        sqlite3_bind_int(s, 3, i);
        sqlite3_bind_text(s, 4, db->gbuf, (int)len, SQLITE_STATIC);
        for (int k = 0; k < RES_NOBJ; k++) bind_real(s, 5 + k, o[k]);
        bind_real(s, 8, pop->cv ? pop->cv[i] : 0.0);
        if (pop->rank) sqlite3_bind_int(s, 9, pop->rank[i]);
        else sqlite3_bind_null(s, 9);
        if (pop->crowd) bind_real(s, 10, pop->crowd[i]);
        else sqlite3_bind_null(s, 10);
        if (sqlite3_step(s) != SQLITE_DONE) return dberr(db, err, "writing individuals");
        sqlite3_reset(s);
    }
    return 0;
}

int res_generation_write(res_db *db, long long id, const res_gen *g, const res_pop *pop,
                         const void *ckpt, size_t ckpt_len, char *err)
{
    char now[32];
    now_iso(now, sizeof now);
    if (begin(db, err)) return -1;
    /* Anything at or after this generation is stale (a resume from an
     * older state); the primary keys make the rewrite an upsert anyway. */
    if (truncate_locked(db, id, g->gen - 1, err)) goto fail;
    sqlite3_stmt *s = stmt(db, ST_INS_GEN, err);
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, g->gen);
    sqlite3_bind_int64(s, 3, g->evaluations);
    sqlite3_bind_int64(s, 4, g->cache_hits);
    bind_real(s, 5, g->hv);
    for (int k = 0; k < RES_NOBJ; k++) bind_real(s, 6 + k, g->best[k]);
    sqlite3_bind_int(s, 9, g->front_size);
    sqlite3_bind_int(s, 10, g->feasible);
    bind_real(s, 11, g->wall);
    if (step_done(db, s, err)) goto fail;
    if (pop && write_pop(db, id, g->gen, pop, err)) goto fail;
    if (ckpt) {
        s = stmt(db, ST_INS_CKPT, err);
        if (!s) goto fail;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, g->gen);
        sqlite3_bind_blob64(s, 3, ckpt, ckpt_len, SQLITE_STATIC);
        if (step_done(db, s, err)) goto fail;
    }
    s = stmt(db, ST_UPD_PROGRESS, err);
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, g->gen);
    sqlite3_bind_int64(s, 2, g->evaluations);
    sqlite3_bind_text(s, 3, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, id);
    if (step_done(db, s, err)) goto fail;
    if (sqlite3_changes(db->h) == 0) {
        base_seterr(err, "%s: no campaign %lld", db->path, id);
        goto fail;
    }
    if (commit(db, err)) goto fail;
    return 0;
fail:
    rollback(db);
    return -1;
}

int res_generations(res_db *db, long long id, res_gen **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = prep(db,
                           "SELECT gen, evaluations, cache_hits, hypervolume, best_energy,"
                           " best_memory, best_latency, front_size, feasible, wall_time"
                           " FROM generations WHERE campaign = ? ORDER BY gen",
                           err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int n = 0, cap = 0, rc;
    res_gen *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_gen *g = &v[n++];
        g->gen = (long)sqlite3_column_int64(s, 0);
        g->evaluations = sqlite3_column_int64(s, 1);
        g->cache_hits = sqlite3_column_int64(s, 2);
        g->hv = col_real(s, 3);
        for (int k = 0; k < RES_NOBJ; k++) g->best[k] = col_real(s, 4 + k);
        g->front_size = sqlite3_column_int(s, 7);
        g->feasible = sqlite3_column_int(s, 8);
        g->wall = col_real(s, 9);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(v);
        return readerr(db, err, rc, "reading generations");
    }
    *out = v;
    return n;
}

int res_checkpoint_get(res_db *db, long long id, long *gen, void **blob, size_t *len, char *err)
{
    *blob = NULL;
    *len = 0;
    sqlite3_stmt *s = prep(db, "SELECT gen, state FROM checkpoints WHERE campaign = ?", err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s), found = 0;
    if (rc == SQLITE_ROW) {
        *gen = (long)sqlite3_column_int64(s, 0);
        int n = sqlite3_column_bytes(s, 1);
        const void *b = sqlite3_column_blob(s, 1);
        *blob = malloc(n > 0 ? (size_t)n : 1);
        if (!*blob) {
            sqlite3_finalize(s);
            base_seterr(err, "%s: out of memory", db->path);
            return -1;
        }
        if (n > 0) memcpy(*blob, b, (size_t)n);
        *len = (size_t)n;
        found = 1;
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return dberr(db, err, "reading a checkpoint");
    return found;
}

int res_truncate(res_db *db, long long id, long gen, char *err)
{
    if (begin(db, err)) return -1;
    if (truncate_locked(db, id, gen, err)) {
        rollback(db);
        return -1;
    }
    return commit(db, err);
}

/* ---- front and populations ---- */

int res_finish(res_db *db, long long id, const res_pop *front, long src_gen, const int *src_idx,
               const char *status, char *err)
{
    if (begin(db, err)) return -1;
    sqlite3_stmt *d = prep(db, "DELETE FROM front WHERE campaign = ?", err);
    if (!d) goto fail;
    sqlite3_bind_int64(d, 1, id);
    int rc = sqlite3_step(d);
    sqlite3_finalize(d);
    if (rc != SQLITE_DONE) {
        dberr(db, err, "writing the front");
        goto fail;
    }
    for (int i = 0; front && i < front->n; i++) {
        sqlite3_stmt *s = stmt(db, ST_INS_FRONT, err);
        if (!s) goto fail;
        size_t len = genome_fmt(db, front->genomes + (size_t)i * front->nvar, front->nvar);
        if (len == (size_t)-1) {
            base_seterr(err, "%s: out of memory", db->path);
            goto fail;
        }
        const double *o = front->obj + (size_t)i * RES_NOBJ;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int(s, 2, i);
        sqlite3_bind_text(s, 3, db->gbuf, (int)len, SQLITE_STATIC);
        for (int k = 0; k < RES_NOBJ; k++) bind_real(s, 4 + k, o[k]);
        bind_real(s, 7, front->cv ? front->cv[i] : 0.0);
        sqlite3_bind_int64(s, 8, src_gen);
        if (src_idx) sqlite3_bind_int(s, 9, src_idx[i]);
        if (step_done(db, s, err)) goto fail;
    }
    if (res_campaign_set_status(db, id, status, NULL, err) || commit(db, err)) goto fail;
    return 0;
fail:
    rollback(db);
    return -1;
}

static int read_points(res_db *db, sqlite3_stmt *s, int front, res_point **out, char *err)
{
    int n = 0, cap = 0, rc;
    res_point *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_point *p = &v[n];
        memset(p, 0, sizeof *p);
        p->idx = sqlite3_column_int(s, 0);
        const char *g = (const char *)sqlite3_column_text(s, 1);
        int len = sqlite3_column_bytes(s, 1);
        int max = len / 2 + 1;
        p->genome = malloc((size_t)max * sizeof(int));
        if (!p->genome) {
            rc = SQLITE_NOMEM;
            break;
        }
        n++;
        p->nvar = g ? res_genome_parse(g, p->genome, max) : -1;
        if (p->nvar < 0) {
            base_seterr(err, "%s: malformed genome text at index %d", db->path, p->idx);
            sqlite3_finalize(s);
            res_points_free(v, n);
            return -1;
        }
        for (int k = 0; k < RES_NOBJ; k++) p->obj[k] = col_real(s, 2 + k);
        p->cv = col_real(s, 5);
        if (front) {
            p->rank = -1;
            p->crowd = NAN;
            p->src_gen = (long)sqlite3_column_int64(s, 6);
            p->src_idx = sqlite3_column_int(s, 7);
        } else {
            p->rank = sqlite3_column_int(s, 6);
            p->crowd = col_real(s, 7);
            p->src_gen = (long)sqlite3_column_int64(s, 8);
            p->src_idx = p->idx;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_points_free(v, n);
        base_seterr(err, "%s: reading points: %s", db->path,
               rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db->h));
        return -1;
    }
    *out = v;
    return n;
}

int res_front(res_db *db, long long id, res_point **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = prep(db,
                           "SELECT idx, genome, energy, memory, latency, violation, src_gen,"
                           " src_idx FROM front WHERE campaign = ? ORDER BY idx",
                           err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    return read_points(db, s, 1, out, err);
}

int res_population(res_db *db, long long id, long gen, res_point **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = prep(db,
                           "SELECT idx, genome, energy, memory, latency, violation, rank,"
                           " crowding, gen FROM individuals WHERE campaign = ?1 AND gen ="
                           " (CASE WHEN ?2 < 0 THEN (SELECT max(gen) FROM individuals"
                           " WHERE campaign = ?1) ELSE ?2 END) ORDER BY idx",
                           err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, gen);
    return read_points(db, s, 0, out, err);
}

void res_points_free(res_point *p, int n)
{
    for (int i = 0; p && i < n; i++) free(p[i].genome);
    free(p);
}

/* ---- validations and calibrations ---- */

int res_validation_add(res_db *db, const res_validation *v, char *err)
{
    char now[32];
    now_iso(now, sizeof now);
    sqlite3_stmt *s = prep(db,
                           "INSERT INTO validations(campaign, point, device, pred_energy,"
                           " meas_energy, pred_memory, meas_memory, pred_latency, meas_latency,"
                           " status, reason, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                           err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, v->campaign);
    sqlite3_bind_int(s, 2, v->point);
    if (v->device) sqlite3_bind_text(s, 3, v->device, -1, SQLITE_STATIC);
    for (int k = 0; k < RES_NOBJ; k++) {
        bind_real(s, 4 + 2 * k, v->pred[k]);
        bind_real(s, 5 + 2 * k, v->meas[k]);
    }
    sqlite3_bind_text(s, 10, v->status, -1, SQLITE_STATIC);
    if (v->reason) sqlite3_bind_text(s, 11, v->reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 12, now, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : dberr(db, err, "writing a validation");
}

int res_validations(res_db *db, long long campaign, res_validation **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = prep(db,
                           "SELECT point, pred_energy, meas_energy, pred_memory, meas_memory,"
                           " pred_latency, meas_latency, status, reason FROM validations v"
                           " WHERE campaign = ? AND device IS NULL AND id = (SELECT MAX(id)"
                           " FROM validations w WHERE w.campaign = v.campaign AND"
                           " w.point = v.point AND w.device IS NULL) ORDER BY point",
                           err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, campaign);
    int n = 0, cap = 0, rc;
    res_validation *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_validation *r = &v[n++];
        memset(r, 0, sizeof *r);
        r->campaign = campaign;
        r->point = sqlite3_column_int(s, 0);
        for (int k = 0; k < RES_NOBJ; k++) {
            r->pred[k] = col_real(s, 1 + 2 * k);
            r->meas[k] = col_real(s, 2 + 2 * k);
        }
        r->status = col_str(s, 7);
        r->reason = col_str(s, 8);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_validations_free(v, n);
        return readerr(db, err, rc, "reading validations");
    }
    *out = v;
    return n;
}

void res_validations_free(res_validation *v, int n)
{
    for (int i = 0; i < n; i++) {
        free((char *)v[i].status);
        free((char *)v[i].reason);
    }
    free(v);
}

int res_calibration_add(res_db *db, const char *platform, const char *network,
                        const char *coeffs, const char *report, long long *id, char *err)
{
    char now[32];
    now_iso(now, sizeof now);
    sqlite3_stmt *s = prep(db,
                           "INSERT INTO calibrations(created, platform, network, coeffs, report)"
                           " VALUES (?,?,?,?,?)",
                           err);
    if (!s) return -1;
    sqlite3_bind_text(s, 1, now, -1, SQLITE_STATIC);
    if (platform) sqlite3_bind_text(s, 2, platform, -1, SQLITE_STATIC);
    if (network) sqlite3_bind_text(s, 3, network, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, coeffs, -1, SQLITE_STATIC);
    if (report) sqlite3_bind_text(s, 5, report, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return dberr(db, err, "writing a calibration");
    if (id) *id = sqlite3_last_insert_rowid(db->h);
    return 0;
}
