/* onnx.c -- placeholder until the ONNX importer lands (issue 6). */
#include "onnx.h"

#include <stdio.h>

net *onnx_import(const char *path, const char *weights_out, char *err)
{
    (void)weights_out;
    snprintf(err, NET_ERRLEN, "%s: ONNX import is not available in this build yet", path);
    return NULL;
}

int onnx_export(const net *n, const char *path, char *err)
{
    (void)n;
    snprintf(err, NET_ERRLEN, "%s: ONNX export is not available in this build yet", path);
    return -1;
}
