/* onnx.h -- ONNX import and export (protobuf-c over Debian's onnx.proto).
 *
 * Import turns an ONNX graph into a net (layer names from node names) and,
 * when weights_out is given, writes the initializers as a raw float32 file
 * the net references.  Export writes any net as a valid ONNX model.
 * Errors: NULL / -1 with one line in err (BASE_ERRLEN) naming file, node and
 * reason.  What is accepted and how each operator maps: docs/onnx.md.
 */
#ifndef DSE_ONNX_H
#define DSE_ONNX_H

#include "net.h"

#include <stddef.h>
#include <stdint.h>

/* Import path.  With weights_out, the initializers are written there in the
 * layout of weights.h and n->weights_path is set to weights_out; without,
 * n->weights_path is set to path itself (weights_load() reads the ONNX
 * initializers back).  The caller owns the net (net_free). */
net *onnx_import(const char *path, const char *weights_out, char *err);
/* Import path and hand back its initializers as weights for the net (*w,
 * layout of weights.h; caller frees).  Nothing is written and
 * n->weights_path is NULL: the caller saves both (net_save_with). */
net *onnx_import_weights(const char *path, float **w, char *err);
/* The same from memory (what names the source in messages); external-data
 * initializers are refused since there is no folder to find them in.  The
 * net has no weights_path.  For the fuzzer and tests. */
net *onnx_import_buffer(const void *data, size_t len, const char *what, char *err);
/* The initializers of the ONNX file path, as weights for n (which must be
 * the net that file imports to), in the layout of weights.h; caller frees. */
float *onnx_read_weights(const char *path, const net *n, char *err);

/* Write n as an ONNX model (opset 13, IR version 7), atomically.  Weights:
 * the net's own (weights_load) when it has a weights file, otherwise
 * weights_generate(..., WEIGHTS_SEED_DEFAULT, ...) (weights.h). */
int onnx_export(const net *n, const char *path, char *err);
/* The same with options: ONNX_EXPORT_INIT_INPUTS also lists every
 * initializer among the graph inputs (after the network input), the IR 3
 * convention that AutoDiCE's model splitter needs (docs/onnx.md); valid in
 * every IR version, and dse's importer skips such inputs. */
enum { ONNX_EXPORT_INIT_INPUTS = 1 };
int onnx_export_flags(const net *n, const char *path, unsigned flags, char *err);

/* The names of the ONNX nodes onnx_export writes, in graph order: for each
 * layer, its glue nodes (a Reshape to 4-D named "L.inK_4d", a Flatten
 * before a Gemm named "L.flat"), then its own node, named after the layer.
 * Calls fn(ctx, layer index, name) for each.  -1 when out of memory. */
int onnx_node_names(const net *n, void (*fn)(void *ctx, int layer, const char *name), void *ctx);

/* Read a serialised float32 TensorProto (input_K.pb / output_K.pb files in
 * the ONNX test suite): returns its values (caller frees; at least one
 * byte is allocated even for an empty tensor), its dims and rank (at most
 * 8).  NULL with err on a bad file or a non-float tensor. */
float *onnx_read_tensor(const char *pb_path, int64_t dims[8], int *ndims, char *err);

#endif
