/* validations.c -- what dse validate and dse calibrate store: predicted
 * beside measured per front point (and per device), the per-step
 * timelines of each validated point, and calibration runs.
 * Invariant: a validation row and its steps are written in one
 * transaction; the readers return the latest run of each point. */
#include "res_internal.h"

#include <stdlib.h>
#include <string.h>

static int add_steps(res_db *db, long long vid, const res_step *st, int n, char *err)
{
    /* Steps left by a validation row deleted without the trigger (by an
     * older dse's users) would collide with the reused row id. */
    sqlite3_stmt *d = res_prep(db, "DELETE FROM validation_steps WHERE validation = ?", err);
    if (!d) return -1;
    sqlite3_bind_int64(d, 1, vid);
    int rc = sqlite3_step(d);
    sqlite3_finalize(d);
    if (rc != SQLITE_DONE) return res_dberr(db, err, "writing validation steps");
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *s = res_stmt(db, ST_INS_STEP, err);
        if (!s) return -1;
        const res_step *x = &st[i];
        int c = 1;
        sqlite3_bind_int64(s, c++, vid);
        sqlite3_bind_int(s, c++, x->device);
        sqlite3_bind_int(s, c++, x->step);
        sqlite3_bind_text(s, c++, x->op ? x->op : "?", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, c++, x->layer);
        sqlite3_bind_int(s, c++, x->c0);
        sqlite3_bind_int(s, c++, x->nc);
        sqlite3_bind_int64(s, c++, x->bytes);
        res_bind_real(s, c++, x->pred_start_ms);
        res_bind_real(s, c++, x->pred_ms);
        res_bind_real(s, c++, x->meas_start_ms);
        res_bind_real(s, c++, x->meas_ms);
        res_bind_real(s, c++, x->meas_med_ms);
        if (res_step_done(db, s, err)) return -1;
    }
    return 0;
}

int res_validation_add(res_db *db, const res_validation *v, const res_step *steps, int nsteps,
                       long long *id, char *err)
{
    char now[32], cols[512] = "", marks[128] = "";
    base_now_iso(now, sizeof now);
    res_sql_pairs(cols, sizeof cols, "pred_", "", "meas_", "");
    res_sql_marks(marks, sizeof marks, 2 * COST_NOBJ);
    char *sql = res_sql_fmt("INSERT INTO validations(campaign, point, device, status, reason,"
                            " created, %s) VALUES (?,?,?,?,?,?,%s)", cols, marks);
    if (res_begin(db, err)) {
        free(sql);
        return -1;
    }
    sqlite3_stmt *s = res_prep(db, sql, err);
    free(sql);
    if (!s) goto fail;
    int c = 1;
    sqlite3_bind_int64(s, c++, v->campaign);
    sqlite3_bind_int(s, c++, v->point);
    if (v->device) sqlite3_bind_text(s, c, v->device, -1, SQLITE_STATIC);
    c++;
    sqlite3_bind_text(s, c++, v->status, -1, SQLITE_STATIC);
    if (v->reason) sqlite3_bind_text(s, c, v->reason, -1, SQLITE_STATIC);
    c++;
    sqlite3_bind_text(s, c++, now, -1, SQLITE_STATIC);
    for (int k = 0; k < COST_NOBJ; k++) {
        res_bind_real(s, c++, v->pred[k]);
        res_bind_real(s, c++, v->meas[k]);
    }
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_dberr(db, err, "writing a validation");
        goto fail;
    }
    long long vid = sqlite3_last_insert_rowid(db->h);
    if (add_steps(db, vid, steps, nsteps, err) || res_commit(db, err)) goto fail;
    if (id) *id = vid;
    return 0;
fail:
    res_rollback(db);
    return -1;
}

int res_validations(res_db *db, long long campaign, res_validation **out, char *err)
{
    *out = NULL;
    char cols[512] = "";
    res_sql_pairs(cols, sizeof cols, "pred_", "", "meas_", "");
    char *sql = res_sql_fmt("SELECT id, point, status, reason, %s FROM validations v"
                            " WHERE campaign = ? AND device IS NULL AND id = (SELECT MAX(id)"
                            " FROM validations w WHERE w.campaign = v.campaign AND"
                            " w.point = v.point AND w.device IS NULL) ORDER BY point", cols);
    sqlite3_stmt *s = res_prep(db, sql, err);
    free(sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, campaign);
    int n = 0, cap = 0, rc;
    res_validation *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (res_grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_validation *r = &v[n++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(s, 0);
        r->campaign = campaign;
        r->point = sqlite3_column_int(s, 1);
        r->status = res_col_str(s, 2);
        r->reason = res_col_str(s, 3);
        for (int k = 0; k < COST_NOBJ; k++) {
            r->pred[k] = res_col_real(s, 4 + 2 * k);
            r->meas[k] = res_col_real(s, 5 + 2 * k);
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_validations_free(v, n);
        return res_readerr(db, err, rc, "reading validations");
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

int res_validation_steps(res_db *db, long long id, res_step **out, char *err)
{
    *out = NULL;
    sqlite3_stmt *s = res_prep(db,
                               "SELECT device, step, op, layer, c0, nc, bytes, pred_start_ms,"
                               " pred_ms, meas_start_ms, meas_ms, meas_med_ms FROM"
                               " validation_steps WHERE validation = ? ORDER BY device, step",
                               err);
    if (!s) {
        /* A database of schema version 1 opened read-only has no steps. */
        if (!strstr(err, "no such table")) return -1;
        return 0;
    }
    sqlite3_bind_int64(s, 1, id);
    int n = 0, cap = 0, rc;
    res_step *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (res_grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_step *x = &v[n];
        memset(x, 0, sizeof *x);
        x->device = sqlite3_column_int(s, 0);
        x->step = sqlite3_column_int(s, 1);
        if (!(x->op = res_col_str(s, 2))) {
            rc = SQLITE_NOMEM;
            break;
        }
        n++;
        x->layer = sqlite3_column_int(s, 3);
        x->c0 = sqlite3_column_int(s, 4);
        x->nc = sqlite3_column_int(s, 5);
        x->bytes = sqlite3_column_int64(s, 6);
        x->pred_start_ms = res_col_real(s, 7);
        x->pred_ms = res_col_real(s, 8);
        x->meas_start_ms = res_col_real(s, 9);
        x->meas_ms = res_col_real(s, 10);
        x->meas_med_ms = res_col_real(s, 11);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_steps_free(v, n);
        return res_readerr(db, err, rc, "reading validation steps");
    }
    *out = v;
    return n;
}

void res_steps_free(res_step *s, int n)
{
    for (int i = 0; s && i < n; i++) free((char *)s[i].op);
    free(s);
}

int res_calibration_add(res_db *db, const char *platform, const char *network,
                        const char *coeffs, const char *report, long long *id, char *err)
{
    char now[32];
    base_now_iso(now, sizeof now);
    sqlite3_stmt *s = res_prep(db,
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
    if (rc != SQLITE_DONE) return res_dberr(db, err, "writing a calibration");
    if (id) *id = sqlite3_last_insert_rowid(db->h);
    return 0;
}
