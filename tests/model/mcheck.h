/* mcheck.h -- the model tests' own assertion on top of tests/check.h:
 * CHECK_SHAPE(net, layer name, c, h, w). */
#ifndef DSE_TEST_MCHECK_H
#define DSE_TEST_MCHECK_H

#include "check.h"
#include "net.h"

/* Output shape of layer `name` of net n is c x h x w. */
#define CHECK_SHAPE(n, name, wc, wh, ww)                                                  \
    do {                                                                               \
        int i_ = net_find((n), (name));                                                \
        if (i_ < 0) {                                                                  \
            fprintf(stderr, "%s:%d: no layer %s\n", __FILE__, __LINE__, (name));       \
            check_failures++, check_count++;                                                          \
        } else {                                                                       \
            net_shape s_ = (n)->layers[i_].out;                                        \
            if (s_.c != (wc) || s_.h != (wh) || s_.w != (ww)) {                           \
                fprintf(stderr, "%s:%d: layer %s is %dx%dx%d, expected %dx%dx%d\n",    \
                        __FILE__, __LINE__, (name), s_.c, s_.h, s_.w, (wc), (wh), (ww));  \
                check_failures++, check_count++;                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)

#endif
