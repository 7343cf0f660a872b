/* fuzz_seeds.c -- writes the fuzzer's seed corpus: small valid models the
 * importer accepts (the tiny zoo networks and the glue networks of
 * extra_nets.h, exported by dse itself).  usage: fuzz_seeds DIR */
#include "net.h"
#include "onnx.h"
#include "extra_nets.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char err[BASE_ERRLEN], path[512];
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds DIR\n");
        return 2;
    }
    static const char *zoo[] = {"toy6", "branchy"};
    for (int i = 0; i < 2 + N_EXTRA_NETS; i++) {
        net *n = i < 2 ? net_zoo(zoo[i], err) : net_from_json(extra_nets[i - 2], "seeds", err);
        if (!n) {
            fprintf(stderr, "fuzz_seeds: %s\n", err);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s.onnx", argv[1], n->name);
        if (onnx_export(n, path, err)) {
            fprintf(stderr, "fuzz_seeds: %s\n", err);
            net_free(n);
            return 1;
        }
        net_free(n);
    }
    return 0;
}
