/* naive.h -- the tests' own reference: every layer kind written as plain
 * loops straight from the ONNX/PyTorch definitions, in double precision,
 * sharing no code with runtime/ (only the net's shapes and attributes).
 * Plus small helpers the runtime tests share (RNG, comparison, checks).
 */
#ifndef DSE_TEST_NAIVE_H
#define DSE_TEST_NAIVE_H

#include <stdint.h>
#include "check.h"
#include <stdio.h>

#include "net.h"

/* Whole layer from full inputs; weights in the kernels.h layout. */
void naive_layer(const net *n, int layer, const float *const *inputs, const float *w, float *out);

/* Whole net with the weights of every layer (w[i], kernels.h layout);
 * output has numel(out of the last layer) floats. */
void naive_forward(const net *n, float *const *w, const float *input, float *output);

/* xorshift-style test RNG, independent of the runtime's generator. */
uint64_t trng_next(uint64_t *s);
int trng_int(uint64_t *s, int lo, int hi); /* inclusive */
float trng_float(uint64_t *s);             /* [-1, 1) */
void trng_fill(uint64_t *s, float *x, size_t len);

/* Max violation of |a - b| <= atol + rtol * |b| (<= 0 means all fine);
 * *worst gets the index of the worst element. */
double cmp_tol(const float *a, const float *b, size_t len, double rtol, double atol, size_t *worst);

/* What kern_run is given for output channels [c0, c0+nc) of layer li when
 * the whole inputs are full[]: view[k] = full[k] from the first channel
 * net_chans_in names (a grouped conv's slice reads only its groups). */
void slice_inputs(const net *n, int li, int c0, int nc, const float *const *full, const float **view);


#endif
