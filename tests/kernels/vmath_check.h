/* vmath_check.h -- the accuracy and position-independence check of
 * kernels/vmath.c, shared by test_kernels and test_portable. */
#ifndef DSE_TEST_VMATH_CHECK_H
#define DSE_TEST_VMATH_CHECK_H

#include "check.h"

/* Returns the number of failed checks (printed as they fail). */
int vmath_check(void);

#endif
