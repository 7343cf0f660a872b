/* dbq.h -- the tests' reading of a results database with the plain
 * sqlite3 API, independently of results/: one value of a query, every row
 * of a query serialised exactly, and one query compared across two files.
 * Failures read as impossible values (NAN, -999/-998, NULL), so a check
 * on them fails rather than the test crashing. */
#ifndef DSE_TEST_DBQ_H
#define DSE_TEST_DBQ_H

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline sqlite3 *db_open(const char *path)
{
    sqlite3 *h = NULL;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot open %s\n", path);
        sqlite3_close(h);
        return NULL;
    }
    return h;
}

static inline double db_real(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *s;
    double v = NAN;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) return NAN;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
        v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return v;
}

static inline long long db_int(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *s;
    long long v = -999;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) return -998;
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static inline char *db_text(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *s;
    char *v = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) return NULL;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        v = strdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return v;
}

/* Every row of a query serialised exactly (doubles by their bits), so two
 * result sets compare byte for byte.  Caller frees. */
static inline char *db_dump(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(h));
        return strdup("<error>");
    }
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    b[0] = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        for (int k = 0; k < sqlite3_column_count(s); k++) {
            char item[64];
            const char *t = item;
            switch (sqlite3_column_type(s, k)) {
            case SQLITE_INTEGER: snprintf(item, sizeof item, "%lld", sqlite3_column_int64(s, k)); break;
            case SQLITE_FLOAT: {
                double d = sqlite3_column_double(s, k);
                unsigned long long u;
                memcpy(&u, &d, 8);
                snprintf(item, sizeof item, "%016llx", u);
                break;
            }
            case SQLITE_NULL: t = "NULL"; break;
            default: t = (const char *)sqlite3_column_text(s, k);
            }
            size_t l = strlen(t) + 2;
            while (len + l + 1 > cap) b = realloc(b, cap *= 2);
            memcpy(b + len, t, l - 2);
            len += l - 2;
            b[len++] = k + 1 < sqlite3_column_count(s) ? '|' : '\n';
            b[len] = 0;
        }
    }
    sqlite3_finalize(s);
    return b;
}

/* Compare one query's rows in two databases. */
static inline int same_rows(const char *db1, const char *db2, const char *sql)
{
    sqlite3 *a = db_open(db1), *b = db_open(db2);
    if (!a || !b) {
        sqlite3_close(a);
        sqlite3_close(b);
        return 0;
    }
    char *x = db_dump(a, sql), *y = db_dump(b, sql);
    int same = strcmp(x, y) == 0 && strlen(x) > 0;
    if (!same)
        fprintf(stderr, "rows differ for %s\n--- %s (%zu bytes)\n--- %s (%zu bytes)\n", sql, db1,
                strlen(x), db2, strlen(y));
    free(x), free(y);
    sqlite3_close(a);
    sqlite3_close(b);
    return same;
}

#endif
