/* check.h -- the tiny assertion kit of the engine tests: CHECK counts and
 * reports failures and carries on, so one run shows every failure;
 * tests end with `return check_summary(name)` (0 = all passed). */
#ifndef ENGINE_CHECK_H
#define ENGINE_CHECK_H

#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        check_count++;                                                          \
        if (!(cond)) {                                                          \
            check_failures++;                                                   \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
