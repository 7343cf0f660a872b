/* tcheck.h -- the calibration tests' assertions and a runner for the built
 * `dse` program (exit code, stdout, the chosen stderr line, whole stderr
 * through a file). */
#ifndef DSE_TEST_CALIB_TCHECK_H
#define DSE_TEST_CALIB_TCHECK_H

#include "check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static inline void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static inline int file_exists(const char *p)
{
    FILE *f = fopen(p, "r");
    if (f) fclose(f);
    return f != NULL;
}

#endif
