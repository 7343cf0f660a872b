/* onnx.h -- ONNX import and export (protobuf-c over Debian's onnx.proto).
 *
 * Import turns an ONNX graph into a net (layer names from node names) and,
 * when weights_out is given, writes the initializers as a raw float32 file
 * the net references.  Export writes any net as a valid ONNX model.
 * Errors: NULL / -1 with one line in err (NET_ERRLEN) naming file, node and
 * reason.
 */
#ifndef DSE_ONNX_H
#define DSE_ONNX_H

#include "net.h"

net *onnx_import(const char *path, const char *weights_out, char *err);
int onnx_export(const net *n, const char *path, char *err);

#endif
