/* campaigns.c -- the campaigns table: create, read, list, status, and the
 * atomic claim that keeps two processes from running one campaign.
 * Invariant: a campaign row is only ever claimed by one process at a time
 * (res_campaign_claim is one UPDATE whose WHERE re-checks the status). */
#include "res_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void this_host(char *host, size_t n)
{
    memset(host, 0, n);
    gethostname(host, n - 1);
}

int res_campaign_new(res_db *db, const char *name, const char *kind, const char *network,
                     const char *platform, const char *chromosome, const char *config,
                     long long *id, char *err)
{
    char now[32], host[256];
    base_now_iso(now, sizeof now);
    this_host(host, sizeof host);
    sqlite3_stmt *s = res_prep(db,
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
    if (rc != SQLITE_DONE) return res_dberr(db, err, "creating a campaign");
    *id = sqlite3_last_insert_rowid(db->h);
    return 0;
}

#define CAMPAIGN_COLS                                                                         \
    "id, name, kind, status, created, updated, network, platform, chromosome, config,"       \
    " message, gens_done, evaluations, pid, host"

static void read_campaign(sqlite3_stmt *s, res_campaign *c)
{
    c->id = sqlite3_column_int64(s, 0);
    c->name = res_col_str(s, 1);
    c->kind = res_col_str(s, 2);
    c->status = res_col_str(s, 3);
    c->created = res_col_str(s, 4);
    c->updated = res_col_str(s, 5);
    c->network = res_col_str(s, 6);
    c->platform = res_col_str(s, 7);
    c->chromosome = res_col_str(s, 8);
    c->config = res_col_str(s, 9);
    c->message = res_col_str(s, 10);
    c->gens_done = (long)sqlite3_column_int64(s, 11);
    c->evaluations = sqlite3_column_int64(s, 12);
    c->pid = (long)sqlite3_column_int64(s, 13);
    c->host = res_col_str(s, 14);
}

int res_campaign_get(res_db *db, long long id, res_campaign *c, char *err)
{
    memset(c, 0, sizeof *c);
    sqlite3_stmt *s = res_prep(db, "SELECT " CAMPAIGN_COLS " FROM campaigns WHERE id = ?", err);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) read_campaign(s, c);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE) {
        char pb[BASE_PATHSHOW + 1];
        base_seterr(err, "%s: no campaign %lld", base_path(db->path, pb), id);
    } else {
        res_dberr(db, err, "reading a campaign");
    }
    return -1;
}

int res_campaign_list(res_db *db, res_campaign **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = res_prep(db, "SELECT " CAMPAIGN_COLS " FROM campaigns ORDER BY id", err);
    if (!s) return -1;
    int n = 0, cap = 0, rc;
    res_campaign *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (res_grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        read_campaign(s, &v[n++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_campaign_list_free(v, n);
        return res_readerr(db, err, rc, "listing campaigns");
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
    char now[32], host[256];
    base_now_iso(now, sizeof now);
    this_host(host, sizeof host);
    sqlite3_stmt *s = res_prep(db,
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
    if (rc != SQLITE_DONE) return res_dberr(db, err, "updating a campaign");
    if (sqlite3_changes(db->h) == 0) {
        char pb[BASE_PATHSHOW + 1];
        base_seterr(err, "%s: no campaign %lld", base_path(db->path, pb), id);
        return -1;
    }
    return 0;
}

/* Is process pid of this host gone?  (kill(pid, 0): ESRCH.) */
static int dead_here(const res_campaign *c, const char *host)
{
    return c->status && !strcmp(c->status, "running") && c->host && !strcmp(c->host, host) &&
           c->pid > 0 && c->pid != (long)getpid() && kill((pid_t)c->pid, 0) != 0 && errno == ESRCH;
}

int res_campaign_claim(res_db *db, long long id, const char *from, res_campaign *out, char *err)
{
    char now[32], host[256];
    base_now_iso(now, sizeof now);
    this_host(host, sizeof host);
    res_campaign c;
    /* The read, the decision and the update are one write transaction:
     * a second claimant waits for it and then sees the new status. */
    if (res_begin(db, err)) return -1;
    if (res_campaign_get(db, id, &c, err)) {
        res_rollback(db);
        return -1;
    }
    int ok = 0;
    if (c.status) {
        char want[128];
        snprintf(want, sizeof want, " %s ", from);
        char st[64];
        snprintf(st, sizeof st, " %s ", c.status);
        ok = strstr(want, st) != NULL || dead_here(&c, host);
    }
    /* DSE_FAULT=claim-pause: widen the window between the check and the
     * claim, so the test can start two claimants inside it. */
    const char *f = getenv("DSE_FAULT");
    if (f && !strcmp(f, "claim-pause")) {
        struct timespec nap = {0, 300 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (ok) {
        sqlite3_stmt *s = res_prep(db,
                                   "UPDATE campaigns SET status = 'running', message = NULL,"
                                   " updated = ?, pid = ?, host = ? WHERE id = ? AND status = ?",
                                   err);
        if (!s) goto fail;
        sqlite3_bind_text(s, 1, now, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, (long long)getpid());
        sqlite3_bind_text(s, 3, host, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, id);
        sqlite3_bind_text(s, 5, c.status, -1, SQLITE_STATIC);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) {
            res_dberr(db, err, "claiming a campaign");
            goto fail;
        }
        ok = sqlite3_changes(db->h) == 1;
    }
    if (res_commit(db, err)) goto fail;
    if (out) *out = c;
    else res_campaign_free(&c);
    return ok;
fail:
    res_rollback(db);
    res_campaign_free(&c);
    return -1;
}
