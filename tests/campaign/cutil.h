/* cutil.h -- helpers of the campaign tests: run the real `dse` program as
 * a child process (optionally killing it), and read results databases
 * with the plain sqlite3 API, independently of results/. */
#ifndef DSE_TEST_CUTIL_H
#define DSE_TEST_CUTIL_H

#include "base.h"
#include "check.h"
#include "dbq.h"
#include "run.h"
#include "tfile.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static char tdir[64];

static inline void mk_tdir(const char *tag)
{
    snprintf(tdir, sizeof tdir, "/tmp/dse-test-%s-XXXXXX", tag);
    if (!mkdtemp(tdir)) {
        perror("mkdtemp");
        exit(1);
    }
}

static inline void rm_tdir(void)
{
    if (check_failures) {
        fprintf(stderr, "left %s for inspection\n", tdir);
        return;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tdir);
}

static inline const char *tpath(const char *name)
{
    static char buf[1024][280]; /* callers keep these pointers: never reuse */
    static int k;
    char want[280];
    snprintf(want, sizeof want, "%.63s/%.200s", tdir, name);
    for (int i = 0; i < k; i++) /* the same name is the same path: one buffer */
        if (!strcmp(buf[i], want)) return buf[i];
    if (k == 1024) {
        fprintf(stderr, "tpath: out of buffers\n");
        exit(1);
    }
    k++;
    snprintf(buf[k - 1], sizeof buf[k - 1], "%.63s/%.200s", tdir, name);
    return buf[k - 1];
}

/* Start dse with args (NULL-terminated) and stdout/stderr to files (NULL =
 * /dev/null), under exec_prefix when set. */
static const char *const *exec_prefix; /* e.g. {"/usr/bin/setpriv", "--...", NULL} */

static inline pid_t dse_start(const char *out, const char *errf, const char *const *args)
{
    return run_dse_start(exec_prefix, out, errf, args); /* tests/run.c: the one fork and exec */
}

static inline int dse_wait(pid_t pid) { return run_wait(pid); }

/* Run dse to completion; returns its exit status. */
static inline int dse_run(const char *out, const char *errf, ...)
{
    const char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, errf);
    const char *s;
    while ((s = va_arg(ap, const char *)) && n < 63) args[n++] = s;
    va_end(ap);
    args[n] = NULL;
    return dse_wait(dse_start(out, errf, args));
}

static inline int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static inline int contains(const char *path, const char *needle)
{
    char *t = tfile_read(path, NULL);
    int r = t && strstr(t, needle);
    free(t);
    return r;
}

/* Lines of a file (its newlines). */
static inline int file_lines(const char *path)
{
    char *t = tfile_read(path, NULL);
    int n = 0;
    for (char *p = t; p && *p; p++) n += *p == '\n';
    free(t);
    return n;
}

/* Generations a campaign has stored so far (-1: none, or no database yet). */
static inline long long gens_done(const char *db)
{
    if (!file_exists(db)) return -1;
    sqlite3 *h = NULL;
    long long g = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 1000);
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(h, "SELECT max(gens_done) FROM campaigns", -1, &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
                g = sqlite3_column_int64(s, 0);
            sqlite3_finalize(s);
        }
    }
    sqlite3_close(h);
    return g;
}

#endif
