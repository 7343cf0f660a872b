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
 *  - Nothing here prints or allocates behind the caller's back (but for
 *    results owned by the caller).  The one state kept is the list of the
 *    files this process read (files.c), so that no output replaces one.
 */
#ifndef DSE_BASE_H
#define DSE_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Size of every error buffer of the project (one line, with its NUL). */
#define BASE_ERRLEN 1024
/* The longest path base_path() lets into a message. */
#define BASE_PATHSHOW 160

/* Format one line into err (BASE_ERRLEN bytes); err may be NULL.  Control
 * bytes (a newline in a name read from a file, ...) become '?': a message
 * quotes arbitrary bytes and must stay one line. */
void base_seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void base_vseterr(char *err, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* A path for a message: itself when at most BASE_PATHSHOW characters,
 * else "...<its last BASE_PATHSHOW - 3 characters>" in buf (which must
 * hold BASE_PATHSHOW + 1 bytes).  NULL reads as "(null)". */
const char *base_path(const char *path, char buf[BASE_PATHSHOW + 1]);

/* strdup that accepts NULL (and returns it); NULL also when out of memory. */
char *base_strdup(const char *s);

/* Whether s holds a control character: C0 (below 0x20), DEL, or C1
 * (U+0080..U+009F in UTF-8).  Such characters drive terminals (escape
 * sequences) and end lines in scripts: names may not hold them
 * (docs/security.md). */
int base_has_control(const char *s);
/* Whether s may name something: non-empty, valid UTF-8 (no overlong
 * forms, surrogates or code points above U+10FFFF), no control character. */
int base_name_ok(const char *s);
/* Length of the valid UTF-8 character at p (1 for ASCII), 0 if invalid. */
int base_utf8_len(const char *p);

/* Seconds of CLOCK_MONOTONIC: for durations and deadlines, never dates. */
double base_now(void);
/* The current UTC time as ISO 8601 ("2026-11-25T20:12:51Z") into buf[n]. */
void base_now_iso(char *buf, size_t n);
/* This thread's CPU seconds: other load on the machine does not inflate them. */
double base_cpu_now(void);

/* ---- files (files.c): inputs read whole, outputs written whole ----
 * Every reader of a file a user gives goes through base_open_input or
 * base_read_file, every writer through a base_outset (or base_write_file):
 * docs/exit-codes.md and docs/security.md state what users are promised. */

/* Open a regular file of at most max bytes (max < 0: no limit) for
 * reading; *size (may be NULL) gets its size.  Anything else (a device
 * such as /dev/zero, a FIFO, a folder, a larger file) is refused before a
 * byte is read: NULL + err naming the file, errno ENOENT when it does not
 * exist.  The file is remembered as an input of this process (no output
 * may replace it). */
FILE *base_open_input(const char *path, long long max, long long *size, char *err);
/* The whole file, as base_open_input allows it, in a malloc'd buffer of
 * *len bytes (len may be NULL) followed by a NUL. */
char *base_read_file(const char *path, long long max, size_t *len, char *err);
/* Remember path's file as an input (files read by other means: SQLite). */
void base_input_note(const char *path);
/* Forget every input remembered: the list is one command's (a program
 * runs one); a long-lived caller that runs several in turn (a test, a
 * fuzzer) starts each with this. */
void base_inputs_forget(void);

/* Whether a file may be written at path: its folder exists and is
 * writable, and path is absent or a regular file that is not an input of
 * this process (same device and inode through any path).  0, or -1 + err.
 * A command checks every output so before it works (exit 2 when one
 * cannot be used). */
int base_out_check(const char *path, char *err);
/* base_out_check of each non-NULL path, and no two of them one file. */
int base_out_check_all(const char *const *paths, int n, char *err);
/* An output folder: created when missing (its parent must exist; then
 * *created = 1), else it must be a writable folder.  0, or -1 + err. */
int base_out_dir(const char *dir, int *created, char *err);

/* A set of output files written whole or not at all.  Each file is
 * written through the stream base_outset_add returns (under a temporary
 * name beside its path); base_outset_commit checks that every write,
 * flush, fsync and close succeeded and renames them all into place, or
 * leaves every path as it was.  base_outset_free removes whatever was not
 * committed.  Errors: NULL / -1 with err naming the file. */
typedef struct base_outset base_outset;
base_outset *base_outset_new(void);
FILE *base_outset_add(base_outset *s, const char *path, char *err);
/* The temporary path of a member (for a program that writes it itself). */
const char *base_outset_tmp(const base_outset *s, const FILE *f);
int base_outset_commit(base_outset *s, char *err);
void base_outset_free(base_outset *s);
/* One whole file from memory. */
int base_write_file(const char *path, const void *data, size_t len, char *err);

/* qsort comparator of doubles, ascending (NaN compares equal to all). */
int base_cmp_double(const void *a, const void *b);
/* Median of v[0..n) (sorted in place); 0 when n <= 0. */
double base_median(double *v, int n);

#endif
