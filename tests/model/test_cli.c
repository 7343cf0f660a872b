/* test_cli.c -- `dse zoo list`, `dse zoo show NAME [--json]`,
 * `dse net show FILE [--json]` and `dse platform show FILE|PRESET [--json]`
 * run as a user would (the built program, DSE_BIN), with their --json
 * output parsed by cJSON and checked against figures known independently
 * (the published zoo counts, the thesis' device set-up).
 */
#include "mcheck.h"
#include "net.h"
#include "run.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN(r, ...) run_dse((r), (const char *const[]){__VA_ARGS__, NULL})

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    CHECK(cJSON_IsNumber(v));
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    CHECK(cJSON_IsString(v));
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A successful run: exit 0, nothing on stderr. */
static void ok(const run_result *r, const char *what)
{
    if (r->status != 0 || r->err[0])
        fprintf(stderr, "%s: exit %d, stderr: %s\n", what, r->status, r->err);
    CHECK_I64(r->status, 0);
    CHECK_STR(r->err, "");
}

/* A refused run: exit 2, nothing on stdout, one line on stderr. */
static void refused(const run_result *r, const char *what)
{
    if (r->status != 2) fprintf(stderr, "%s: exit %d\n", what, r->status);
    CHECK_I64(r->status, 2);
    CHECK_I64(count_lines(r->err), 1);
    CHECK_STR(r->out, "");
}

static void test_zoo_list(void)
{
    static const struct {
        const char *name, *params;
    } want[] = {{"alexnet", "61100840"},     {"alexnet-bvlc", "60965224"},
                {"vgg16", "138357544"},      {"resnet50", "25557032"},
                {"densenet121", "7978856"},  {"mobilenetv2", "3504872"},
                {"mobilenet_v3_large", "5483032"}, {"efficientnet_b0", "5288548"},
                {"toy6", ""},                {"branchy", ""}};
    run_result r;
    RUN(&r, "zoo", "list");
    ok(&r, "zoo list");
    CHECK_I64(count_lines(r.out), 1 + (long)(sizeof want / sizeof want[0])); /* header + one line per network */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        /* The line starting with the name carries its parameter count. */
        const char *line = r.out;
        size_t len = strlen(want[i].name);
        while (line && !(strncmp(line, want[i].name, len) == 0 && line[len] == ' ')) {
            line = strchr(line, '\n');
            if (line) line++;
        }
        CHECK(line != NULL);
        if (!line) continue;
        const char *eol = strchr(line, '\n');
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", eol ? (int)(eol - line) : (int)strlen(line), line);
        CHECK_HAS(buf, want[i].params);
    }
    run_free(&r);
}

static void test_zoo_show(void)
{
    run_result r;
    RUN(&r, "zoo", "show", "alexnet-bvlc", "--json");
    ok(&r, "zoo show --json");
    cJSON *j = cJSON_Parse(r.out);
    CHECK(j != NULL);
    if (j) {
        const cJSON *t = cJSON_GetObjectItem(j, "totals"), *ls = cJSON_GetObjectItem(j, "layers");
        CHECK_STR(str(j, "name"), "alexnet-bvlc");
        CHECK(num(t, "layers") == 24);
        CHECK(num(t, "macs") == 724406816.0);
        CHECK(num(t, "params") == 60965224.0);
        CHECK(num(t, "splittable") == 8);
        CHECK_I64(cJSON_GetArraySize(ls), 24);
        /* The per-layer rows add up to the totals; 8 rows are splittable. */
        double macs = 0, params = 0;
        int split = 0, rows = 0;
        const cJSON *l;
        cJSON_ArrayForEach(l, ls)
        {
            macs += num(l, "macs");
            params += num(l, "params");
            split += cJSON_IsTrue(cJSON_GetObjectItem(l, "splittable"));
            rows += cJSON_IsTrue(cJSON_GetObjectItem(l, "rows"));
        }
        /* by rows: the 5 convolutions, their 5 ReLUs, 2 LRNs and 3 pools
           (not the FC layers, their ReLUs and dropouts, whose output has
           one row, nor flatten and softmax) */
        CHECK_I64(rows, 15);
        CHECK(macs == 724406816.0);
        CHECK(params == 60965224.0);
        CHECK_I64(split, 8);
        const cJSON *c1 = cJSON_GetArrayItem(ls, 0), *fl = cJSON_GetArrayItem(ls, 15);
        CHECK_STR(str(c1, "name"), "conv1");
        const cJSON *s = cJSON_GetObjectItem(c1, "shape");
        CHECK(cJSON_GetArrayItem(s, 0)->valueint == 96 && cJSON_GetArrayItem(s, 1)->valueint == 55);
        CHECK(num(c1, "macs") == 96.0 * 55 * 55 * 3 * 11 * 11);
        CHECK_STR(str(fl, "kind"), "Flatten");
        CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(fl, "shape"), 0)->valueint == 9216);
        CHECK_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(fl, "inputs"), 0)->valuestring,
                  "pool5");
    }
    cJSON_Delete(j);
    run_free(&r);

    RUN(&r, "zoo", "show", "resnet50", "--json");
    ok(&r, "zoo show resnet50");
    j = cJSON_Parse(r.out);
    CHECK(j && num(cJSON_GetObjectItem(j, "totals"), "params") == 25557032.0);
    cJSON_Delete(j);
    run_free(&r);

    RUN(&r, "zoo", "show", "alexnet-bvlc");
    ok(&r, "zoo show text");
    CHECK_HAS(r.out, "24 layers");
    CHECK_HAS(r.out, "total: 724406816 MACs");
    CHECK_HAS(r.out, "60965224 params, 8 splittable layers");
    run_free(&r);

    RUN(&r, "zoo", "show", "lenet5");
    refused(&r, "zoo show unknown");
    CHECK_HAS(r.err, "lenet5");
    run_free(&r);
    RUN(&r, "zoo", "show", "toy6", "--bogus");
    refused(&r, "zoo show --bogus");
    CHECK_HAS(r.err, "--bogus");
    run_free(&r);
    RUN(&r, "zoo", "frobnicate");
    CHECK_I64(r.status, 2);
    run_free(&r);
    RUN(&r, "zoo", "--help");
    ok(&r, "zoo --help");
    CHECK_HAS(r.out, "zoo show NAME");
    run_free(&r);
}

static void test_net_show(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("vgg16", err);
    char *path = scratch_path("vgg16.json");
    CHECK(n && net_save(n, path, err) == 0);
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    run_result r;
    RUN(&r, "net", "show", path, "--json");
    ok(&r, "net show --json");
    cJSON *j = cJSON_Parse(r.out);
    CHECK(j != NULL);
    if (j) {
        const cJSON *tt = cJSON_GetObjectItem(j, "totals");
        CHECK(num(tt, "params") == 138357544.0);
        CHECK(num(tt, "macs") == (double)t.macs);
        CHECK(num(tt, "layers") == n->n);
        CHECK(num(tt, "splittable") == 16);
        CHECK_STR(str(cJSON_GetObjectItem(j, "input"), "name"), "data");
    }
    cJSON_Delete(j);
    run_free(&r);
    RUN(&r, "net", "show", path);
    ok(&r, "net show");
    CHECK_HAS(r.out, "network vgg16");
    CHECK_HAS(r.out, "138357544 params, 16 splittable layers");
    run_free(&r);
    /* A zoo name is accepted where a file is. */
    RUN(&r, "net", "show", "toy6");
    ok(&r, "net show toy6");
    CHECK_HAS(r.out, "network toy6");
    run_free(&r);
    RUN(&r, "net", "show", "/nonexistent/dir/net.json");
    refused(&r, "net show missing");
    CHECK_HAS(r.err, "/nonexistent/dir/net.json");
    run_free(&r);
    free(path);
    net_free(n);
}

static void test_platform_show(void)
{
    run_result r;
    RUN(&r, "platform", "show", "jetson-nx-8-cpugpu", "--json");
    ok(&r, "platform show --json");
    cJSON *j = cJSON_Parse(r.out);
    CHECK(j != NULL);
    if (j) {
        const cJSON *ds = cJSON_GetObjectItem(j, "devices"), *ls = cJSON_GetObjectItem(j, "links");
        CHECK_I64(cJSON_GetArraySize(ds), 16);
        CHECK_I64(cJSON_GetArraySize(ls), 16);
        CHECK_STR(str(j, "source"), "nx0-cpu");
        int gpus = 0, arm = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, ds) gpus += !strcmp(str(d, "kind"), "gpu");
        CHECK_I64(gpus, 8);
        /* the CPUs state their architecture (Carmel, aarch64), the GPUs none */
        cJSON_ArrayForEach(d, ds) arm += !strcmp(str(d, "kind"), "cpu") && !strcmp(str(d, "arch"), "aarch64");
        CHECK_I64(arm, 8);
        /* Row of nx3-cpu: same_board only with nx3-gpu. */
        int a = -1, g = -1, i = 0;
        cJSON_ArrayForEach(d, ds)
        {
            if (!strcmp(str(d, "name"), "nx3-cpu")) a = i;
            if (!strcmp(str(d, "name"), "nx3-gpu")) g = i;
            i++;
        }
        CHECK(a >= 0 && g >= 0);
        const cJSON *row = cJSON_GetArrayItem(ls, a);
        CHECK_I64(cJSON_GetArraySize(row), 16);
        for (int b = 0; b < 16 && a >= 0; b++) {
            const cJSON *l = cJSON_GetArrayItem(row, b);
            const char *want = b == a ? "same_device" : b == g ? "same_board" : "network";
            CHECK_STR(str(l, "class"), want);
            if (b != a && b != g) {
                CHECK(num(l, "latency_us") == 150);
                CHECK(num(l, "bandwidth_mbs") == 112);
            }
        }
        const cJSON *cl = cJSON_GetObjectItem(j, "classes");
        CHECK(num(cJSON_GetObjectItem(cl, "same_board"), "bandwidth_mbs") == 10000);
    }
    cJSON_Delete(j);
    run_free(&r);

    RUN(&r, "platform", "show", "jetson-nx-8-cpu");
    ok(&r, "platform show text");
    CHECK_HAS(r.out, "8 devices");
    CHECK_HAS(r.out, "nx7-cpu");
    run_free(&r);

    /* A file with an override: listed in the text output. */
    char *path = scratch_path("pair.json");
    write_text(path,
               "{\"format\":\"dse-platform\",\"devices\":["
               "{\"name\":\"p\",\"board\":\"h1\",\"freq_mhz\":1000,\"cores\":1,"
               "\"memory_mb\":100,\"idle_w\":1,\"busy_w\":2},"
               "{\"name\":\"q\",\"board\":\"h2\",\"freq_mhz\":1000,\"cores\":1,"
               "\"memory_mb\":100,\"idle_w\":1,\"busy_w\":2}],"
               "\"links\":{\"network\":{\"latency_us\":100,\"bandwidth_mbs\":100},"
               "\"pairs\":[{\"a\":\"p\",\"b\":\"q\",\"latency_us\":7,\"bandwidth_mbs\":9}]}}");
    RUN(&r, "platform", "show", path);
    ok(&r, "platform show file");
    CHECK_HAS(r.out, "2 devices");
    CHECK_HAS(r.out, "override p <-> q: latency 7 us, bandwidth 9 MB/s");
    run_free(&r);
    free(path);

    RUN(&r, "platform", "show", "no-such-preset");
    refused(&r, "platform show unknown");
    CHECK_HAS(r.err, "no-such-preset");
    run_free(&r);
    RUN(&r, "--help");
    ok(&r, "dse --help");
    CHECK_HAS(r.out, "platform");
    run_free(&r);
}

/* Issue 15: inputs that are not files, outputs that are inputs, long
 * paths, numbers that wrap. */
static void test_inputs_outputs(void)
{
    run_result r;
    /* /dev/zero was read for about 2 GB before "read error". */
    RUN(&r, "net", "show", "/dev/zero");
    refused(&r, "net show /dev/zero");
    CHECK_HAS(r.err, "/dev/zero: is a device, not a file dse can read");
    run_free(&r);
    char *fifo = scratch_path("fifo.json");
    CHECK(mkfifo(fifo, 0600) == 0);
    RUN(&r, "platform", "show", fifo);
    refused(&r, "platform show FIFO");
    CHECK_HAS(r.err, "not a file dse can read");
    run_free(&r);

    /* dse net import never writes over its own input (same file through
     * any path), nor two outputs into one file. */
    char *m = scratch_path("m.onnx"), *hl = scratch_path("hard.onnx"), *js = scratch_path("n.json");
    RUN(&r, "net", "export", "toy6", "-o", m);
    CHECK_I64(r.status, 0);
    run_free(&r);
    size_t n0 = 0, n1 = 0;
    char *before = tfile_read(m, &n0);
    CHECK(before && n0 > 100);
    CHECK(link(m, hl) == 0);
    char proc[600];
    snprintf(proc, sizeof proc, "/proc/self/cwd/../../../../../../..%s", m);
    const char *const bad[][8] = {
        {"net", "import", m, "-o", m, NULL},
        {"net", "import", m, "-o", hl, NULL},
        {"net", "import", m, "-o", proc, NULL},
        {"net", "import", m, "-o", js, "--weights", m},
        {"net", "import", m, "-o", js, "--weights", js},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_dse(&r, bad[i]);
        refused(&r, "net import over its input");
        CHECK(strstr(r.err, "same file as the input") || strstr(r.err, "another output"),
              "case %zu: %s", i, r.err);
        run_free(&r);
        char *after = tfile_read(m, &n1);
        CHECK(after && n1 == n0 && !memcmp(after, before, n0), "case %zu: the input changed", i);
        free(after);
        CHECK(access(js, F_OK) != 0, "case %zu: an output was written", i);
    }
    free(before);
    /* An output path that cannot be used: exit 2, nothing written. */
    RUN(&r, "net", "import", m, "-o", "/nonexistent-dir/n.json");
    refused(&r, "net import into a missing folder");
    run_free(&r);
    char *folder = scratch_path("");
    RUN(&r, "net", "export", "toy6", "-o", folder);
    free(folder);
    refused(&r, "net export onto a folder");
    CHECK_HAS(r.err, "names a folder");
    run_free(&r);

    /* A long path keeps its problem in the message (was cut at ~512). */
    char lp[3000] = "/nonexistent";
    while (strlen(lp) < 2500) strcat(lp, "/a-rather-long-folder-name");
    strcat(lp, "/net.json");
    RUN(&r, "net", "show", lp);
    refused(&r, "net show LONG");
    CHECK_HAS(r.err, "No such file or directory");
    CHECK_HAS(r.err, "folder-name/net.json");
    run_free(&r);

    /* Numbers that wrap to something else are refused, not truncated. */
    RUN(&r, "exec", "--network", "toy6", "--platform", "local-2", "--single", "0", "--bench",
        "0,4294967297");
    refused(&r, "--bench 0,4294967297");
    CHECK_HAS(r.err, "--bench");
    run_free(&r);
    /* -np 4294967297 was atoi's undefined behaviour (one rank here). */
    RUN(&r, "mpirun", "-np", "4294967297", "dse", "zoo", "list");
    CHECK(r.status == 2 && !strstr(r.out, "toy6"), "mpirun -np 4294967297: exit %d", r.status);
    run_free(&r);
    free(fifo), free(m), free(hl), free(js);
}

/* A network file imported from an ONNX model that holds its weights
 * records the model's size; a model replaced afterwards (another network
 * exported to the same path) is refused by the reader, before any work,
 * naming both files -- not by `dse exec` when it loads the weights. */
static void test_onnx_replaced(void)
{
    run_result r;
    char *a = scratch_path("rep-a.onnx"), *b = scratch_path("rep-b.onnx"), *js = scratch_path("rep.json");
    RUN(&r, "net", "export", "toy6", "-o", a);
    ok(&r, "net export toy6");
    run_free(&r);
    RUN(&r, "net", "export", "branchy", "-o", b);
    ok(&r, "net export branchy");
    run_free(&r);
    RUN(&r, "net", "import", a, "-o", js);
    ok(&r, "net import");
    run_free(&r);
    size_t na = 0, nj = 0;
    char *ta = tfile_read(a, &na), *tj = tfile_read(js, &nj);
    cJSON *o = tj ? cJSON_Parse(tj) : NULL;
    const cJSON *wb = cJSON_GetObjectItemCaseSensitive(o, "weights_bytes");
    CHECK(cJSON_IsNumber(wb) && wb->valuedouble == (double)na, "weights_bytes %g, the model has %zu bytes",
          cJSON_IsNumber(wb) ? wb->valuedouble : -1, na);
    cJSON_Delete(o);
    RUN(&r, "net", "show", js);
    CHECK_I64(r.status, 0);
    run_free(&r);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", b, a);
    CHECK(system(cmd) == 0);
    const char *const cmds[][10] = {{"net", "show", js, NULL},
                                    {"eval", "--network", js, "--platform", "local-2", "--single", "0", NULL}};
    for (int i = 0; i < 2; i++) {
        run_dse(&r, cmds[i]);
        refused(&r, "a replaced model");
        CHECK_HAS(r.err, "rep-a.onnx");
        CHECK_HAS(r.err, "import it again");
        run_free(&r);
    }
    /* imported again, it reads */
    RUN(&r, "net", "import", a, "-o", js);
    ok(&r, "net import again");
    run_free(&r);
    RUN(&r, "net", "show", js);
    CHECK_I64(r.status, 0);
    run_free(&r);
    /* the key is checked like any other */
    char *bad = scratch_path("rep-bad.json");
    char *t2 = tj ? strdup(tj) : NULL, *at = t2 ? strstr(t2, "\"weights_bytes\"") : NULL;
    if (at) {
        char *colon = strchr(at, ':');
        if (colon) colon[1] = '-';
        write_text(bad, t2);
        RUN(&r, "net", "show", bad);
        refused(&r, "a negative weights_bytes");
        CHECK_HAS(r.err, "weights_bytes");
        run_free(&r);
    }
    CHECK(at != NULL, "no weights_bytes in %s", js);
    free(t2), free(ta), free(tj), free(bad);
    free(a), free(b), free(js);
}

int main(void)
{
    test_zoo_list();
    test_zoo_show();
    test_net_show();
    test_platform_show();
    test_inputs_outputs();
    test_onnx_replaced();
    scratch_cleanup();
    return check_done("test_cli");
}
