/* ocheck.h -- the ONNX tests' assertion macros: count failures, keep going,
 * print each failure with its line; main returns ocheck_done(). */
#ifndef DSE_OCHECK_H
#define DSE_OCHECK_H

#include <stdio.h>

static int ocheck_failures, ocheck_checks;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        ocheck_checks++;                                                      \
        if (!(cond)) {                                                        \
            ocheck_failures++;                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

static inline int ocheck_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, ocheck_checks, ocheck_failures);
    return ocheck_failures ? 1 : 0;
}

#endif
