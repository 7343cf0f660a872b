/* points.c -- the final front and the stored populations: the writer that
 * ends a campaign and the readers of its points.
 * Invariant: a front is replaced whole, with the campaign's final status,
 * in one transaction. */
#include "res_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int res_finish(res_db *db, long long id, const res_pop *front, const long *src_gen, const int *src_idx,
               const char *status, char *err)
{
    if (res_begin(db, err)) return -1;
    sqlite3_stmt *d = res_prep(db, "DELETE FROM front WHERE campaign = ?", err);
    if (!d) goto fail;
    sqlite3_bind_int64(d, 1, id);
    int rc = sqlite3_step(d);
    sqlite3_finalize(d);
    if (rc != SQLITE_DONE) {
        res_dberr(db, err, "writing the front");
        goto fail;
    }
    for (int i = 0; front && i < front->n; i++) {
        sqlite3_stmt *s = res_stmt(db, ST_INS_FRONT, err);
        if (!s) goto fail;
        size_t len = res_genome_fmt(db, front->genomes + (size_t)i * front->nvar, front->nvar);
        if (len == (size_t)-1) {
            char pb[BASE_PATHSHOW + 1];
            base_seterr(err, "%s: out of memory", base_path(db->path, pb));
            goto fail;
        }
        const double *o = front->obj + (size_t)i * COST_NOBJ;
        int c = 1;
        sqlite3_bind_int64(s, c++, id);
        sqlite3_bind_int(s, c++, i);
        sqlite3_bind_text(s, c++, db->gbuf, (int)len, SQLITE_STATIC);
        for (int k = 0; k < COST_NOBJ; k++) res_bind_real(s, c++, o[k]);
        res_bind_real(s, c++, front->cv ? front->cv[i] : 0.0);
        sqlite3_bind_int64(s, c++, src_gen ? src_gen[i] : 0);
        if (src_idx) sqlite3_bind_int(s, c, src_idx[i]);
        if (res_step_done(db, s, err)) goto fail;
    }
    if (res_campaign_set_status(db, id, status, NULL, err) || res_commit(db, err)) goto fail;
    return 0;
fail:
    res_rollback(db);
    return -1;
}

/* Rows: idx, genome, violation, then (front) src_gen, src_idx or
 * (population) rank, crowding, gen, then the objectives. */
static int read_points(res_db *db, sqlite3_stmt *s, int front, res_point **out, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    int n = 0, cap = 0, rc;
    res_point *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (res_grow((void **)&v, n, &cap, sizeof *v)) {
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
            base_seterr(err, "%s: malformed genome text at index %d", base_path(db->path, pb), p->idx);
            sqlite3_finalize(s);
            res_points_free(v, n);
            return -1;
        }
        p->cv = res_col_real(s, 2);
        if (front) {
            p->rank = -1;
            p->crowd = NAN;
            p->src_gen = (long)sqlite3_column_int64(s, 3);
            p->src_idx = sqlite3_column_int(s, 4);
        } else {
            p->rank = sqlite3_column_int(s, 3);
            p->crowd = res_col_real(s, 4);
            p->src_gen = (long)sqlite3_column_int64(s, 5);
            p->src_idx = p->idx;
        }
        for (int k = 0; k < COST_NOBJ; k++)
            p->obj[k] = res_col_real(s, (front ? 5 : 6) + k);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        res_points_free(v, n);
        base_seterr(err, "%s: reading points: %s", base_path(db->path, pb),
                    rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db->h));
        return -1;
    }
    *out = v;
    return n;
}

int res_front(res_db *db, long long id, res_point **out, char *err)
{
    *out = NULL;
    char cols[256] = "";
    res_sql_cols(cols, sizeof cols, "", "");
    char *sql = res_sql_fmt("SELECT idx, genome, violation, src_gen, src_idx, %s FROM front"
                            " WHERE campaign = ? ORDER BY idx", cols);
    sqlite3_stmt *s = res_prep(db, sql, err);
    free(sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    return read_points(db, s, 1, out, err);
}

int res_population(res_db *db, long long id, long gen, res_point **out, char *err)
{
    *out = NULL;
    char cols[256] = "";
    res_sql_cols(cols, sizeof cols, "", "");
    char *sql = res_sql_fmt("SELECT idx, genome, violation, rank, crowding, gen, %s FROM"
                            " individuals WHERE campaign = ?1 AND gen = (CASE WHEN ?2 < 0 THEN"
                            " (SELECT max(gen) FROM individuals WHERE campaign = ?1) ELSE ?2 END)"
                            " ORDER BY idx", cols);
    sqlite3_stmt *s = res_prep(db, sql, err);
    free(sql);
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
