/* check.h -- the few assertions the model tests use.  A failed check
 * prints where and what, counts, and lets the test go on so that one run
 * shows every failure; check_done() turns the count into the exit code.
 */
#ifndef DSE_TEST_CHECK_H
#define DSE_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_I64(got, want)                                                           \
    do {                                                                               \
        long long g_ = (long long)(got), w_ = (long long)(want);                       \
        if (g_ != w_) {                                                                \
            fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__,   \
                    #got, g_, w_);                                                     \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

/* |got - want| <= rel * |want| */
#define CHECK_REL(got, want, rel)                                                      \
    do {                                                                               \
        double g_ = (double)(got), w_ = (double)(want);                                \
        if (!(fabs(g_ - w_) <= (rel) * fabs(w_))) {                                    \
            fprintf(stderr, "%s:%d: %s = %.6g, expected %.6g within %g%%\n", __FILE__, \
                    __LINE__, #got, g_, w_, 100.0 * (rel));                            \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_STR(got, want)                                                           \
    do {                                                                               \
        const char *g_ = (got), *w_ = (want);                                          \
        if (!g_ || strcmp(g_, w_) != 0) {                                              \
            fprintf(stderr, "%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__,         \
                    __LINE__, #got, g_ ? g_ : "(null)", w_);                           \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_HAS(text, part)                                                          \
    do {                                                                               \
        const char *t_ = (text), *p_ = (part);                                         \
        if (!t_ || !strstr(t_, p_)) {                                                  \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__,       \
                    __LINE__, t_ ? t_ : "(null)", p_);                                 \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

/* Output shape of layer `name` of net n is c x h x w. */
#define CHECK_SHAPE(n, name, wc, wh, ww)                                                  \
    do {                                                                               \
        int i_ = net_find((n), (name));                                                \
        if (i_ < 0) {                                                                  \
            fprintf(stderr, "%s:%d: no layer %s\n", __FILE__, __LINE__, (name));       \
            check_failures++;                                                          \
        } else {                                                                       \
            net_shape s_ = (n)->layers[i_].out;                                        \
            if (s_.c != (wc) || s_.h != (wh) || s_.w != (ww)) {                           \
                fprintf(stderr, "%s:%d: layer %s is %dx%dx%d, expected %dx%dx%d\n",    \
                        __FILE__, __LINE__, (name), s_.c, s_.h, s_.w, (wc), (wh), (ww));  \
                check_failures++;                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)

static inline int check_done(const char *what)
{
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", what, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", what);
    return 0;
}

#endif
