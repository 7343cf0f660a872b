/* base.c -- the helpers of base.h.  Invariant: no state, no output. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void base_seterr(char *err, const char *fmt, ...)
{
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, BASE_ERRLEN, fmt, ap);
    va_end(ap);
}

const char *base_path(const char *path, char buf[BASE_PATHSHOW + 1])
{
    if (!path) return "(null)";
    size_t n = strlen(path);
    if (n <= BASE_PATHSHOW) return path;
    /* The end of a path names the file; its start is the least telling. */
    memcpy(buf, "...", 3);
    memcpy(buf + 3, path + n - (BASE_PATHSHOW - 3), BASE_PATHSHOW - 3);
    buf[BASE_PATHSHOW] = '\0';
    return buf;
}

char *base_strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

double base_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void base_now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double base_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int base_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double base_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, base_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
