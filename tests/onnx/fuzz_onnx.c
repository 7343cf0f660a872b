/* fuzz_onnx.c -- libFuzzer target for the ONNX importer: any byte string
 * must give either a finalised net or one error line, never a crash, a
 * leak or undefined behaviour (built with ASan + UBSan by scripts/fuzz-onnx).
 */
#include "net.h"
#include "onnx.h"
#include "weights.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[BASE_ERRLEN];
    err[0] = 0;
    net *n = onnx_import_buffer(data, size, "fuzz", err);
    if (!n) {
        /* One line, naming the source. */
        if (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz", 4)) abort();
        return 0;
    }
    /* The invariant net_finalize promises, and a sane weights total. */
    if (n->n < 1 || net_ncons(n, n->n - 1) != 0 || weights_total(n) < 0) abort();
    for (int i = 0; i < n->n; i++)
        for (int k = 0; k < n->layers[i].nin; k++)
            if (n->layers[i].in[k] >= i) abort();
    net_free(n);
    return 0;
}
