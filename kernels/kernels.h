/* kernels.h -- the compute kernels of the runtime: every layer kind of
 * model/net.h on float32 NCHW tensors of batch 1, independent of MPI.
 *
 * The unit of work is a SLICE: output channels [c0, c0+nc) of one layer.
 * Invariant: for Conv, ConvTranspose and FC the concatenation (along channels) of the
 * slices of any partition of [0, out.c) equals the whole layer's output
 * (same arithmetic per output element, so equal to float rounding of the
 * BLAS; tests/kernels checks it), and the weights of a slice are exactly
 * the rows of the whole layer's weights (generated or loaded), so a rank
 * that holds only its slice computes the same numbers as one device.
 *
 * Tensor conventions (docs/runtime-kernels.md): input k holds the channels
 * net_chans_in names (model/rows.c, the rule the Plan sends by):
 *  - Conv, FC, LRN, Softmax, Add, Concat, Flatten read their FULL input
 *    tensors (net_in_shape), but for a grouped or depthwise Conv's (or
 *    ConvTranspose's) slice,
 *    whose input 0 is only the channels of its groups (from group
 *    c0 / (out.c / groups) on); Conv, ConvTranspose and FC may compute any slice, the
 *    others only the whole layer (c0 = 0, nc = out.c).
 *  - Channel-wise kinds (net_kind_channelwise: ReLU, BatchNorm, pools,
 *    GlobalAveragePool, Dropout) may compute any slice; their input is then
 *    only input channels [c0, c0+nc) (an (nc, H, W) tensor), so they run on
 *    a split producer's slice without a concat.
 *  - The output of a slice is an (nc, out.h, out.w) tensor.
 *
 * Weights of a slice, one contiguous float array (kern_weights_slice):
 *   Conv:      w[nc][in_c/groups][kh][kw], then bias[nc] if a.bias
 *   ConvTranspose: w[nc][kh][kw][in_c/groups], then bias[nc] if a.bias
 *              (the taps outside, so a slice's rows are one matrix:
 *              kernels/deconv.c; ONNX's [in_c][out_c/groups][kh][kw] is
 *              transposed on import and export)
 *   FC:        w[nc][in_c*in_h*in_w] (flattened input, C-major), then bias[nc]
 *   BatchNorm: scale[nc], shift[nc], mean[nc], var[nc]
 *   others:    none (0 floats)
 * so its length is net_slice_weights(n, layer, c0, nc).
 *
 * Ownership: callers own every tensor, weight and workspace buffer passed
 * in; functions that return a buffer (kern_weights_slice, kern_model_*)
 * say who frees it.  Errors: -1 (or NULL) with one line in err
 * (BASE_ERRLEN bytes) naming the layer; nothing is printed.
 */
#ifndef DSE_KERNELS_H
#define DSE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "convalgo.h"
#include "net.h"

/* ---- threads ---- */
/* Threads used by BLAS and by the kernels' own loops (>= 1).  1 makes every
 * kernel single-threaded, which is what calibration of one core needs. */
void kern_set_threads(int nthreads);
int kern_get_threads(void);
/* 3x3 stride-1 convs with >= 16 channels per group in and out use
 * Winograd where it pays on this kind of machine (kernels/wino.c says
 * which size for which map).  mode 0 switches it off, 1 is that choice
 * (default), 2 and 4 force F(2x2, 3x3) or F(4x4, 3x3) on every such conv
 * (for benchmarks and tests).  The choice depends on the layer's shape
 * only, never on the slice. */
void kern_set_winograd(int mode);
/* The machine's part of that choice, from the platform the kernels run on
 * (platform.kernels; NULL: the default, no limit).  The runtime and the
 * calibration worker set it from their platform, so that they run what
 * the cost model charges.  Keeps kern_set_winograd's override. */
void kern_set_conv_rule(const convalgo_rule *r);
/* The rule the kernels follow now (for what the cost model must be told). */
const convalgo_rule *kern_conv_rule(void);
/* The convolutions' matrix products: mode 1 (default) is our own AVX-512
 * product on x86-64 CPUs that have AVX-512 when OpenBLAS runs no AVX-512
 * kernels of its own (OPENBLAS_CORETYPE=Haswell, say), the BLAS's
 * cblas_sgemm otherwise; mode 0 is always the BLAS, mode 2 our product
 * wherever the CPU allows (both for benchmarks and tests).
 * kern_gemm_own() says whether our product is the one in use.
 * DSE_AVX512=0 in the environment (read at the first product) makes the
 * CPU count as one without AVX-512: every mode is then the BLAS, as on the
 * ARM boards, whose builds contain no AVX-512 code at all. */
void kern_set_gemm(int mode);
int kern_gemm_own(void);

/* ---- weights and inputs ---- */
/* Weights are model/weights.h's: the net's weights file (n->weights_path:
 * raw float32 in the layout of weights.h, or an ONNX file's initializers),
 * or, when the net has none, weights_generate(seed), a pure function of
 * (seed, layer, element) -- so a rank generating only its slice gets the
 * rows of the single-device run.  Slices here follow the layout above. */
/* Weights of output channels [c0, c0+nc) of layer `layer`.  *w_out is
 * malloc'd (caller frees; NULL with *nfloats = 0 for kinds without
 * weights).  A raw weights file is read only where the slice lies. */
int kern_weights_slice(const net *n, int layer, int c0, int nc, uint64_t seed,
                       float **w_out, size_t *nfloats, char *err);
/* The same slice into a caller's buffer of net_slice_weights() floats:
 * cut from `all` when it is not NULL (the whole-net array, e.g. an ONNX
 * file's initializers read once with weights_load), else read from the raw
 * weights file, else generated. */
int kern_weights_fill(const net *n, const float *all, int layer, int c0, int nc, uint64_t seed,
                      float *w, char *err);
/* A buffer of nfloats floats for data streamed on every inference (the
 * weights): malloc'd, and its whole 2 MB pages advised to use transparent
 * huge pages, which saves most TLB misses while SGEMM streams the weights
 * (resnet50: about 4% of its latency, bench/README.md).  Resident memory
 * is unchanged: no page outside the buffer is advised.  Free with free();
 * NULL when out of memory. */
float *kern_alloc_streamed(size_t nfloats);
/* Generated weights only (ignores n->weights_path), into a caller's buffer
 * of net_slice_weights() floats. */
void kern_weights_gen(const net *n, int layer, int c0, int nc, uint64_t seed, float *w);
/* The slice cut from a whole-net weights array `all` (weights.h layout,
 * e.g. from weights_load) into a buffer of net_slice_weights() floats. */
int kern_weights_from(const net *n, const float *all, int layer, int c0, int nc, float *w);
/* Network input (n->input.c*h*w floats), uniform in (-1, 1), from seed
 * (generator in docs/runtime-kernels.md). */
void kern_input_gen(const net *n, uint64_t seed, float *x);

/* ---- one slice of one layer ---- */
/* Scratch floats kern_run needs for a slice of nc channels (0 if none).
 * Independent of c0 and non-decreasing in nc, so the whole layer's figure
 * covers every slice of it. */
size_t kern_workspace_floats(const net *n, int layer, int nc);
/* Floats of the (nc, out.h, out.w) output of a slice. */
size_t kern_out_floats(const net *n, int layer, int nc);
/* Compute output channels [c0, c0+nc) of layer `layer` into out.
 * inputs[k] is the k-th input tensor (see the conventions above); weights
 * is the slice's weight array (NULL for kinds without weights); workspace
 * holds kern_workspace_floats() floats (may be NULL when that is 0).
 * out must not overlap the inputs, except that ReLU, BatchNorm, Add,
 * Flatten and Dropout may write in place over inputs[0] (out == inputs[0]).
 * Returns 0, or -1 for a slice the kind cannot compute (err says why). */
int kern_run(const net *n, int layer, int c0, int nc, const float *const *inputs,
             const float *weights, float *out, float *workspace, char *err);

/* ---- one band of rows or columns of one layer (docs/spatial.md) ---- */
/* Output rows [h0, h0+nh) x columns [w0, w0+nw), all channels, of a
 * layer that may be cut that way (net_layer_rowsplit where nh < out.h,
 * net_layer_colsplit where nw < out.w) into out, an (out.c, nh, nw)
 * tensor.  inputs[k] holds all channels of the rows net_rows_in(n, layer,
 * k, h0, h0+nh) and the columns net_cols_in(...) name, (c, rows, cols),
 * and all of the input along an axis the band does not cut (nh == out.h:
 * every row; nw == out.w: every column), as the Plan sends it;
 * weights are the whole layer's; the workspace holds kern_workspace_band()
 * floats.  The band runs the whole layer's convolution algorithm on the
 * band's geometry (net_band_layer), so its outputs equal the whole
 * layer's: bit for bit for im2col, pointwise and direct convolutions,
 * ConvTranspose and every other kind, to float rounding for Winograd (its tiles start at
 * the band's first row and column) and for products
 * a BLAS computes (kern_gemm_own() false), whose order of summation may
 * depend on the matrix's width (OpenBLAS's AVX-512 small-matrix
 * kernels).  Same in-place
 * rules as kern_run. */
int kern_run_band(const net *n, int layer, int h0, int nh, int w0, int nw,
                  const float *const *inputs, const float *weights, float *out, float *workspace,
                  char *err);
size_t kern_workspace_band(const net *n, int layer, int h0, int nh, int w0, int nw);

/* ---- whole network on one process ---- */
/* A network with the weights of every layer in memory: the single-device
 * reference run and the benchmark.  kern_model_new copies nothing of n:
 * n must outlive the model.  Free with kern_model_free. */
typedef struct kern_model kern_model;
kern_model *kern_model_new(const net *n, uint64_t seed, char *err);
void kern_model_free(kern_model *m);
/* input: n->input floats; output: numel of the output layer.  When
 * layer_seconds is not NULL it receives each layer's wall time (n->n
 * entries). */
int kern_model_forward(kern_model *m, const float *input, float *output,
                       double *layer_seconds, char *err);
/* new + forward + free, for one-off runs. */
int kern_forward(const net *n, uint64_t seed, const float *input, float *output, char *err);

/* ---- calibration helper ---- */
/* Run the slice [c0, c0+nc) of layer `layer` reps times (after one warm-up)
 * on generated inputs and weights; return the median wall time in seconds,
 * or -1 with err set. */
double kern_time_slice(const net *n, int layer, int c0, int nc, uint64_t seed, int reps,
                       char *err);

#endif
