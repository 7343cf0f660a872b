/* generations.c -- what a running campaign writes: each generation's
 * statistics, its population and the engine checkpoint, in one
 * transaction; and their readers.
 * Invariant: after a crash the file holds whole generations only, and the
 * checkpoint belongs to the last stored one. */
#include "res_internal.h"

#include <stdlib.h>
#include <string.h>

static int truncate_locked(res_db *db, long long id, long gen, char *err)
{
    for (int w = ST_DEL_GEN; w <= ST_DEL_IND; w++) {
        sqlite3_stmt *s = res_stmt(db, w, err);
        if (!s) return -1;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, gen);
        if (res_step_done(db, s, err)) return -1;
    }
    return 0;
}

static int write_pop(res_db *db, long long id, long gen, const res_pop *pop, char *err)
{
    sqlite3_stmt *s = res_stmt(db, ST_INS_IND, err);
    if (!s) return -1;
    for (int i = 0; i < pop->n; i++) {
        size_t len = res_genome_fmt(db, pop->genomes + (size_t)i * pop->nvar, pop->nvar);
        if (len == (size_t)-1) {
            char pb[BASE_PATHSHOW + 1];
            base_seterr(err, "%s: out of memory", base_path(db->path, pb));
            return -1;
        }
        const double *o = pop->obj + (size_t)i * COST_NOBJ;
        int c = 1;
        sqlite3_bind_int64(s, c++, id);
        sqlite3_bind_int64(s, c++, gen);
        sqlite3_bind_int(s, c++, i);
        sqlite3_bind_text(s, c++, db->gbuf, (int)len, SQLITE_STATIC);
        for (int k = 0; k < COST_NOBJ; k++) res_bind_real(s, c++, o[k]);
        res_bind_real(s, c++, pop->cv ? pop->cv[i] : 0.0);
        if (pop->rank) sqlite3_bind_int(s, c++, pop->rank[i]);
        else sqlite3_bind_null(s, c++);
        if (pop->crowd) res_bind_real(s, c++, pop->crowd[i]);
        else sqlite3_bind_null(s, c++);
        if (sqlite3_step(s) != SQLITE_DONE) return res_dberr(db, err, "writing individuals");
        sqlite3_reset(s);
    }
    return 0;
}

int res_generation_write(res_db *db, long long id, const res_gen *g, const res_pop *pop,
                         const void *ckpt, size_t ckpt_len, char *err)
{
    char now[32];
    base_now_iso(now, sizeof now);
    if (res_begin(db, err)) return -1;
    /* Anything at or after this generation is stale (a resume from an
     * older state); the primary keys make the rewrite an upsert anyway. */
    if (truncate_locked(db, id, g->gen - 1, err)) goto fail;
    sqlite3_stmt *s = res_stmt(db, ST_INS_GEN, err);
    if (!s) goto fail;
    int c = 1;
    sqlite3_bind_int64(s, c++, id);
    sqlite3_bind_int64(s, c++, g->gen);
    sqlite3_bind_int64(s, c++, g->evaluations);
    sqlite3_bind_int64(s, c++, g->cache_hits);
    res_bind_real(s, c++, g->hv);
    for (int k = 0; k < COST_NOBJ; k++) res_bind_real(s, c++, g->best[k]);
    sqlite3_bind_int(s, c++, g->front_size);
    sqlite3_bind_int(s, c++, g->feasible);
    res_bind_real(s, c++, g->wall);
    if (res_step_done(db, s, err)) goto fail;
    if (pop && write_pop(db, id, g->gen, pop, err)) goto fail;
    if (ckpt) {
        s = res_stmt(db, ST_INS_CKPT, err);
        if (!s) goto fail;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, g->gen);
        sqlite3_bind_blob64(s, 3, ckpt, ckpt_len, SQLITE_STATIC);
        if (res_step_done(db, s, err)) goto fail;
    }
    s = res_stmt(db, ST_UPD_PROGRESS, err);
    if (!s) goto fail;
    sqlite3_bind_int64(s, 1, g->gen);
    sqlite3_bind_int64(s, 2, g->evaluations);
    sqlite3_bind_text(s, 3, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, id);
    if (res_step_done(db, s, err)) goto fail;
    if (sqlite3_changes(db->h) == 0) {
        char pb[BASE_PATHSHOW + 1];
        base_seterr(err, "%s: no campaign %lld", base_path(db->path, pb), id);
        goto fail;
    }
    if (res_commit(db, err)) goto fail;
    return 0;
fail:
    res_rollback(db);
    return -1;
}

int res_generations(res_db *db, long long id, res_gen **out, char *err)
{
    *out = NULL;
    char best[256] = "";
    res_sql_cols(best, sizeof best, "best_", "");
    char *sql = res_sql_fmt("SELECT gen, evaluations, cache_hits, hypervolume, front_size,"
                            " feasible, wall_time, %s FROM generations WHERE campaign = ?"
                            " ORDER BY gen", best);
    sqlite3_stmt *s = res_prep(db, sql, err);
    free(sql);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int n = 0, cap = 0, rc;
    res_gen *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (res_grow((void **)&v, n, &cap, sizeof *v)) {
            rc = SQLITE_NOMEM;
            break;
        }
        res_gen *g = &v[n++];
        g->gen = (long)sqlite3_column_int64(s, 0);
        g->evaluations = sqlite3_column_int64(s, 1);
        g->cache_hits = sqlite3_column_int64(s, 2);
        g->hv = res_col_real(s, 3);
        g->front_size = sqlite3_column_int(s, 4);
        g->feasible = sqlite3_column_int(s, 5);
        g->wall = res_col_real(s, 6);
        for (int k = 0; k < COST_NOBJ; k++) g->best[k] = res_col_real(s, 7 + k);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        free(v);
        return res_readerr(db, err, rc, "reading generations");
    }
    *out = v;
    return n;
}

int res_checkpoint_get(res_db *db, long long id, long *gen, void **blob, size_t *len, char *err)
{
    *blob = NULL;
    *len = 0;
    sqlite3_stmt *s = res_prep(db, "SELECT gen, state FROM checkpoints WHERE campaign = ?", err);
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
            char pb[BASE_PATHSHOW + 1];
            base_seterr(err, "%s: out of memory", base_path(db->path, pb));
            return -1;
        }
        if (n > 0) memcpy(*blob, b, (size_t)n);
        *len = (size_t)n;
        found = 1;
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return res_dberr(db, err, "reading a checkpoint");
    return found;
}

int res_truncate(res_db *db, long long id, long gen, char *err)
{
    if (res_begin(db, err)) return -1;
    if (truncate_locked(db, id, gen, err)) {
        res_rollback(db);
        return -1;
    }
    return res_commit(db, err);
}
