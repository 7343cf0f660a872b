/* kern_impl.h -- what the runtime's kernel files share privately (not part
 * of the module API, which is kernels.h).
 */
#ifndef DSE_KERN_IMPL_H
#define DSE_KERN_IMPL_H

#include <stddef.h>

#include "convalgo.h"
#include "net.h"

/* conv.c: Conv and FC slices.  in is the full input tensor x; w the slice's
 * weights (kernels.h layout); out (nc, out.h, out.w); alg the algorithm
 * (kern_conv_algo of the whole layer: a row band runs its layer's). */
size_t kern_conv_workspace(const net_layer *L, net_shape x, int nc);
void kern_conv(const net_layer *L, net_shape x, convalgo alg, int c0, int nc, const float *in,
               const float *w, float *out, float *ws);
void kern_fc(const net_layer *L, net_shape x, int nc, const float *in, const float *w,
             float *out);

/* deconv.c: ConvTranspose slices and bands; in is the input of the
 * slice's first group on (kernels.h), w the slice's weights, ws
 * convalgo_deconv_workspace(L, x, nc) floats (a band's:
 * convalgo_workspace_band).  band: the whole layer's input rows per matrix
 * product (convalgo_deconv_band_rows of the whole layer), iy0: the row of
 * the whole input that x's first row is (0 but for a band, whose L is
 * net_band_layer's), so that products start at the whole layer's rows. */
void kern_deconv(const net_layer *L, net_shape x, int band, int iy0, int c0, int nc,
                 const float *in, const float *w, float *out, float *ws);

/* wino.c: the algorithm of a Conv under the runtime's rule
 * (kern_set_conv_rule, kern_set_winograd): model/convalgo.h's rule, the one
 * the cost model charges; and 3x3 stride-1 Conv slices by Winograd
 * F(2x2, 3x3) or F(4x4, 3x3) for the layers it sends there. */
convalgo kern_conv_algo(const net_layer *L, net_shape x);
void kern_wino(const net_layer *L, net_shape x, convalgo alg, int c0, int nc, const float *in,
               const float *w, float *out, float *ws);

/* gemm.c: C = A B (acc = 0) or C += A B (acc = 1), row-major, on
 * kern_get_threads() threads; our AVX-512 product or cblas_sgemm (see
 * kern_set_gemm).  Each element's arithmetic is independent of M, N and the
 * threads, so slices of rows equal the whole product's rows bit for bit. */
void kern_sgemm(int M, int N, int K, const float *A, int lda, const float *B, int ldb, int acc,
                float *C, int ldc);

/* gemm.c: 1 when this CPU runs AVX-512 code and DSE_AVX512 is not 0; 1
 * when it runs AVX2 code (x86-64 only). */
int kern_avx512(void);
int kern_avx2(void);

/* vmath.c: y[i] = e^x[i], 1 / (1 + e^-x[i]), GELU (erf form) x/2 (1 +
 * erf(x / sqrt 2)) and GELU (tanh form) x sigmoid(2 sqrt(2/pi) (x +
 * 0.044715 x^3)), vectorised; y may be x.  Each element's value is
 * independent of n, the array's position and the SIMD width (vmath.c gives
 * the accuracy). */
void kern_vexp(const float *x, float *y, size_t n);
void kern_vsigmoid(const float *x, float *y, size_t n);
void kern_vgelu(const float *x, float *y, size_t n);
void kern_vgelu_tanh(const float *x, float *y, size_t n);
void kern_vtanh(const float *x, float *y, size_t n);
void kern_vsoftplus(const float *x, float *y, size_t n); /* log(1 + e^x) */
void kern_velu(const float *x, float *y, size_t n, float alpha);
void kern_vleaky(const float *x, float *y, size_t n, float alpha); /* LeakyReLU, PReLU */
/* LRN's last step, in place over the sums of squares o: o[i] = x[i] (k +
 * s o[i])^-beta; vectorised for beta = 3/4. */
void kern_vlrn(const float *x, float *o, size_t n, float k, float s, float beta);
/* For tests: run vmath's loops for 1 the baseline, 2 AVX2, 3 AVX-512, 0 the
 * widest allowed (default).  Returns 0, changing nothing, when this CPU or
 * build has no such loop. */
int kern_vmath_path(int path);

/* kernels.c: run fn(ctx, i0, i1) over [0, n) split in contiguous chunks on
 * up to kern_get_threads() threads (inline when 1 thread or little work:
 * `work` is an estimate of the total elementary operations). */
typedef void (*kern_range_fn)(void *ctx, int i0, int i1);
void kern_parallel_for(int n, double work, kern_range_fn fn, void *ctx);

#endif
