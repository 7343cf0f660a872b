/* check.h -- the assertions every dse test uses.  A failed CHECK prints
 * where, the condition and an optional printf-style message, counts, and
 * the test goes on, so one run shows every failure; a test ends with
 * `return check_done("name")`, which prints the tally and turns it into
 * the exit code (0 = all passed).
 *
 *   CHECK(x > 0);
 *   CHECK(rc == 0, "dse exited %d: %s", rc, err);
 *   CHECK_I64(got, want); CHECK_REL(got, want, rel); CHECK_STR(s, "x");
 *   CHECK_HAS(text, "part");
 */
#ifndef DSE_TEST_CHECK_H
#define DSE_TEST_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

static inline void check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    check_failures++;
    fprintf(stderr, "FAIL %s:%d: CHECK(%s)", file, line, cond);
    if (fmt[1]) { /* fmt is " " + the caller's message */
        fputc(':', stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

/* The message, when given, must start with a string literal. */
#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        check_count++;                                                            \
        if (!(cond)) check_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);      \
    } while (0)

#define CHECK_I64(got, want)                                                           \
    do {                                                                               \
        long long g_ = (long long)(got), w_ = (long long)(want);                       \
        check_count++;                                                                 \
        if (g_ != w_)                                                                  \
            check_fail(__FILE__, __LINE__, #got " == " #want, " %lld, expected %lld", g_, w_); \
    } while (0)

/* |got - want| <= rel * |want| */
#define CHECK_REL(got, want, rel)                                                      \
    do {                                                                               \
        double g_ = (double)(got), w_ = (double)(want);                                \
        check_count++;                                                                 \
        if (!(fabs(g_ - w_) <= (rel) * fabs(w_)))                                      \
            check_fail(__FILE__, __LINE__, #got, " %.6g, expected %.6g within %g%%", g_, w_, \
                       100.0 * (rel));                                                 \
    } while (0)

#define CHECK_STR(got, want)                                                           \
    do {                                                                               \
        const char *g_ = (got), *w_ = (want);                                          \
        check_count++;                                                                 \
        if (!g_ || strcmp(g_, w_) != 0)                                                \
            check_fail(__FILE__, __LINE__, #got, " \"%s\", expected \"%s\"", g_ ? g_ : "(null)", w_); \
    } while (0)

/* text contains part */
#define CHECK_HAS(text, part)                                                          \
    do {                                                                               \
        const char *t_ = (text), *p_ = (part);                                         \
        check_count++;                                                                 \
        if (!t_ || !strstr(t_, p_))                                                    \
            check_fail(__FILE__, __LINE__, #text, " \"%s\" does not contain \"%s\"",   \
                       t_ ? t_ : "(null)", p_);                                        \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
