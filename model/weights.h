/* weights.h -- the weights of a net: the raw float32 file, its layout, and
 * the deterministic generator used when a net has no weights.
 *
 * Layout (docs/onnx.md, "Weights file"): one flat little-endian float32
 * array, no header; the layers' blocks follow each other in the net's
 * (topological) layer order, layer i's block holding exactly
 * n->layers[i].weights floats:
 *   Conv       W[out_c][in_c/groups][kh][kw], then bias[out_c] if bias
 *   ConvTranspose W[out_c][kh][kw][in_c/groups], then bias[out_c] if bias
 *              (ONNX's [in_c][out_c/groups][kh][kw], transposed on import)
 *   FC         W[out][in] (a row per output feature: Gemm transB=1), then
 *              bias[out] if bias; `in` indexes the input flattened as C,H,W
 *   BatchNorm  scale[C], shift[C], mean[C], var[C]
 *   LayerNorm, InstanceNorm  scale[C], shift[C]; Scale scale[C]; PReLU slope[C]
 *   others     nothing
 * So layer i's block starts at weights_offset(n, i) floats.
 *
 * A weights path ending in ".onnx" names an ONNX model instead: its
 * initializers, read through the importer, in the same layout (that is what
 * `--network model.onnx` nets carry).
 *
 * Ownership: returned arrays and strings are the caller's (free()).  Errors:
 * NULL / -1 with one line in err (BASE_ERRLEN bytes).
 */
#ifndef DSE_WEIGHTS_H
#define DSE_WEIGHTS_H

#include "net.h"

#include <stdint.h>

/* Floats before layer i's block (i == n->n gives the total). */
int64_t weights_offset(const net *n, int layer);
static inline int64_t weights_total(const net *n) { return weights_offset(n, n->n); }

/* Whether n's weights are an ONNX file's initializers (read only whole,
 * by weights_load) rather than a raw file or generated. */
int weights_in_onnx(const net *n);

/* The whole weights array of n from n->weights_path, size-checked against
 * the net; NULL with err if the net has no weights file or it does not fit. */
float *weights_load(const net *n, char *err);

/* The weights file n names exists, is a regular file and (a raw file)
 * holds exactly weights_total(n) floats: what every reader of a network
 * file checks (net_load), so a later stage never finds it missing.  0 when
 * n has no weights file. */
int weights_check_file(const net *n, char *err);

/* Write the whole array (weights_total(n) floats) as a weights file,
 * whole or not at all (base_outset). */
int weights_save(const net *n, const float *w, const char *path, char *err);
/* The same into an output stream (a member of a caller's base_outset);
 * -1 on a failed write (the outset's commit reports it too). */
int weights_write(const net *n, const float *w, FILE *f);

/* Deterministic pseudo-random weights, a pure function of (seed, layer
 * index, element index within the layer's block), so any slice of any layer
 * can be generated alone.  Fills elements [first, first+count) of layer
 * `layer`'s block.  With h = splitmix64 of (seed, layer, element) and
 * u = top 24 bits of h / 2^24 in [0,1), v = 2u - 1:
 *   Conv/FC weights  v * sqrt(6 / fan_in)   (fan_in = in_c/groups*kh*kw or in;
 *                    He-uniform: variance 2/fan_in keeps activations O(1)
 *                    through deep ReLU nets, see docs/runtime-kernels.md)
 *   biases           0.01 v
 *   BatchNorm        scale 1 + 0.1 v, shift 0.1 v, mean 0.1 v, var 1 + 0.5 u
 */
#define WEIGHTS_SEED_DEFAULT 1u
void weights_generate(const net *n, int layer, uint64_t seed, int64_t first, int64_t count,
                      float *out);
/* The whole array generated; NULL only when out of memory. */
float *weights_generate_all(const net *n, uint64_t seed);

/* Path helpers for network files that reference a weights file: a relative
 * weights path in a JSON file is relative to that file's folder. */
/* The path to open: wpath itself if absolute or doc has no folder, else
 * folder(doc)/wpath.  Caller frees; NULL when out of memory. */
char *weights_path_resolve(const char *doc, const char *wpath);
/* The path to store in doc for the file wpath (relative to the current
 * directory or absolute): relative to doc's folder when the two can be
 * resolved, else wpath unchanged.  Caller frees. */
char *weights_path_relative(const char *doc, const char *wpath);

#endif
