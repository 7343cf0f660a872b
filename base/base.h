/* base.h -- the floor under every module of dse: the few helpers that every
 * library needs and none owns (error lines, strings, clocks, medians).
 * Whole public API, prefix base_.  Depends on libc only; every other module
 * may include it, it includes nothing of the project.
 *
 * Invariants:
 *  - Every library reports failure through one caller-owned buffer of
 *    BASE_ERRLEN bytes holding one line ("what: problem"); base_seterr
 *    always terminates it and never writes past it.  Paths are put in
 *    messages through base_path(), which keeps a very long path from
 *    pushing the problem text out of the line.
 *  - Nothing here prints, allocates behind the caller's back (but for
 *    base_strdup's result, owned by the caller) or keeps state.
 */
#ifndef DSE_BASE_H
#define DSE_BASE_H

#include <stddef.h>

/* Size of every error buffer of the project (one line, with its NUL). */
#define BASE_ERRLEN 1024
/* The longest path base_path() lets into a message. */
#define BASE_PATHSHOW 160

/* Format one line into err (BASE_ERRLEN bytes); err may be NULL. */
void base_seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A path for a message: itself when at most BASE_PATHSHOW characters,
 * else "...<its last BASE_PATHSHOW - 3 characters>" in buf (which must
 * hold BASE_PATHSHOW + 1 bytes).  NULL reads as "(null)". */
const char *base_path(const char *path, char buf[BASE_PATHSHOW + 1]);

/* strdup that accepts NULL (and returns it); NULL also when out of memory. */
char *base_strdup(const char *s);

/* Seconds of CLOCK_MONOTONIC: for durations and deadlines, never dates. */
double base_now(void);
/* The current UTC time as ISO 8601 ("2026-11-25T20:12:51Z") into buf[n]. */
void base_now_iso(char *buf, size_t n);
/* This thread's CPU seconds: other load on the machine does not inflate them. */
double base_cpu_now(void);

/* qsort comparator of doubles, ascending (NaN compares equal to all). */
int base_cmp_double(const void *a, const void *b);
/* Median of v[0..n) (sorted in place); 0 when n <= 0. */
double base_median(double *v, int n);

#endif
