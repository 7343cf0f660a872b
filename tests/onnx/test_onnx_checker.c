/* test_onnx_checker.c -- every export must be a valid ONNX model in the
 * eyes of the ONNX project's own checker: onnx.checker.check_model(m,
 * full_check=True) (python3-onnx, which also runs ONNX shape inference and
 * so cross-checks every value_info the exporter writes).  All zoo networks
 * and the glue networks of extra_nets.h.  Skipped (exit 77) with a message
 * only when /usr/bin/python3 lacks the onnx module.  DSE_ONNX_ZOO_BIG=0
 * skips zoo networks of more than 30 M weights (as test_onnx_roundtrip).
 */
#include "net.h"
#include "onnx.h"
#include "check.h"
#include "extra_nets.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

static char tmpdir[] = "/tmp/dse-onnx-chk-XXXXXX";

static const char checker[] =
    "import sys, onnx\n"
    "m = onnx.load(sys.argv[1])\n"
    "onnx.checker.check_model(m, full_check=True)\n"
    "inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)\n"
    "assert m.opset_import[0].version == 13 and m.ir_version == 7\n"
    "print('checker ok:', sys.argv[1], len(m.graph.node), 'nodes')\n";

static int run_checker(const char *script, const char *model)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, PY " %s %s", script, model);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_export(net *n, const char *script)
{
    char err[BASE_ERRLEN], path[300];
    snprintf(path, sizeof path, "%s/%s.onnx", tmpdir, n->name);
    int rc = onnx_export(n, path, err);
    CHECK(rc == 0, "%s: export failed: %s", n->name, err);
    if (rc) return;
    rc = run_checker(script, path);
    CHECK(rc == 0, "%s: onnx.checker rejected the export (exit %d)", n->name, rc);
    unlink(path);
}

int main(void)
{
    char err[BASE_ERRLEN], script[300];
    if (system(PY " -c 'import onnx' 2>/dev/null") != 0) {
        printf("SKIP: " PY " has no onnx module (Debian package python3-onnx; scripts/bootstrap)\n");
        return 77;
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(script, sizeof script, "%s/check.py", tmpdir);
    FILE *f = fopen(script, "w");
    CHECK(f != NULL, "cannot write %s", script);
    if (!f) return 1;
    fputs(checker, f);
    fclose(f);
    const char *big = getenv("DSE_ONNX_ZOO_BIG");
    int skip_big = big && !strcmp(big, "0");
    for (int i = 0; i < net_zoo_count(); i++) {
        net *n = net_zoo(net_zoo_name(i), err);
        CHECK(n != NULL, "zoo %s: %s", net_zoo_name(i), err);
        if (!n) continue;
        if (skip_big && net_total(n, NET_SPLIT_DEFAULT).weights > 30000000) {
            printf("skipped %s (DSE_ONNX_ZOO_BIG=0)\n", n->name);
            net_free(n);
            continue;
        }
        check_export(n, script);
        net_free(n);
    }
    for (int i = 0; i < N_EXTRA_NETS; i++) {
        net *n = net_from_json(extra_nets[i], "extra_nets.h", err);
        CHECK(n != NULL, "extra net %d: %s", i, err);
        if (!n) continue;
        check_export(n, script);
        net_free(n);
    }
    unlink(script);
    rmdir(tmpdir);
    return check_done("test_onnx_checker");
}
