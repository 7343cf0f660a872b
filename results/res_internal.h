/* res_internal.h -- what the files of the results module share, private
 * to results/ (the public API is results.h): the connection structure,
 * the statements made from the objectives table, and small SQLite helpers.
 *
 * Invariant: every SQL text that names an objective column is made here
 * from model/objectives.def (res_sql_*), never spelt out in a query.
 */
#ifndef DSE_RES_INTERNAL_H
#define DSE_RES_INTERNAL_H

#include <sqlite3.h>

#include "results.h"

#define RES_APP_ID 0x44534531 /* "DSE1" */

/* Statements prepared once per connection (the hot paths). */
enum {
    ST_INS_GEN,
    ST_INS_IND,
    ST_INS_CKPT,
    ST_UPD_PROGRESS,
    ST_DEL_GEN,
    ST_DEL_IND,
    ST_INS_FRONT,
    ST_INS_STEP,
    ST_COUNT
};

struct res_db {
    sqlite3 *h;
    char *path;
    char *sql[ST_COUNT];        /* the statements' text, made at open */
    sqlite3_stmt *st[ST_COUNT];
    char *gbuf;                 /* genome text scratch */
    size_t gcap;
    int lockfd; /* the flock of res_open's schema check; closed after SQLite's
                   handle, as closing any descriptor of the file drops the
                   process's fcntl locks, SQLite's included */
};

/* ---- SQL made from the objectives table ---- */

/* Append to buf (of size n, NUL-terminated) the objective columns as
 * "<pre>name<post>" joined by ", " (for example "best_energy, best_memory,
 * best_latency", or "pred_energy REAL, meas_energy REAL, ..." with
 * pairs = 1: "<pre>name<post>, <pre2>name<post2>" per objective).  Returns
 * buf. */
char *res_sql_cols(char *buf, size_t n, const char *pre, const char *post);
char *res_sql_pairs(char *buf, size_t n, const char *pre, const char *post, const char *pre2,
                    const char *post2);
/* k question marks joined by commas, appended. */
char *res_sql_marks(char *buf, size_t n, int k);
/* snprintf into a malloc'd string (NULL when out of memory). */
char *res_sql_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- helpers ---- */

int res_dberr(res_db *db, char *err, const char *what);
/* The error of a reader loop that ended with rc: out of memory (set by the
 * loop) or SQLite's own. */
int res_readerr(res_db *db, char *err, int rc, const char *what);
/* Room for row n of an array of `size`-byte rows grown by doubling: 0, or
 * -1 when out of memory (*v and *cap then untouched). */
int res_grow(void **v, int n, int *cap, size_t size);
int res_exec(res_db *db, const char *sql, char *err);
/* A prepared statement of the table above, reset and unbound. */
sqlite3_stmt *res_stmt(res_db *db, int which, char *err);
/* A one-shot statement for the rarely used paths (caller finalizes). */
sqlite3_stmt *res_prep(res_db *db, const char *sql, char *err);
int res_step_done(res_db *db, sqlite3_stmt *s, char *err);
void res_bind_real(sqlite3_stmt *s, int k, double v);
double res_col_real(sqlite3_stmt *s, int k);
char *res_col_str(sqlite3_stmt *s, int k);
int res_begin(res_db *db, char *err);
int res_commit(res_db *db, char *err);
void res_rollback(res_db *db);
/* Genome text into db->gbuf; returns its length, (size_t)-1 out of memory. */
size_t res_genome_fmt(res_db *db, const int *g, int nvar);
/* Who holds a lock on path (from /proc/locks): "process 1234 (dse)", or
 * "another process" when it cannot tell. */
void res_lock_holder(const char *path, char *buf, size_t n);

#endif
