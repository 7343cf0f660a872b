/* base.c -- the helpers of base.h (files: files.c).  Invariant: no state, no output. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void base_vseterr(char *err, const char *fmt, va_list ap)
{
    if (!err) return;
    vsnprintf(err, BASE_ERRLEN, fmt, ap);
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

void base_seterr(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vseterr(err, fmt, ap);
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

int base_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) return 1;
    return 0;
}

int base_utf8_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80) return 1;
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
            : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    long v = p[0] & (0x3f >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    return n;
}

int base_name_ok(const char *s)
{
    if (!s || !s[0] || base_has_control(s)) return 0;
    for (int n; *s; s += n)
        if (!(n = base_utf8_len(s))) return 0;
    return 1;
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
