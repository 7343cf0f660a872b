/* test_cost_cli.c -- `dse eval` and `dse plan`: results on known inputs
 * (Table 2 through the CLI, bytes moved counted by hand), the one-line
 * notices on stderr, and exit code 2 with one line for each bad input. */
#include "check.h"
#include "run.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#define THESIS DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json"

/* toy6 on local-2: conv's 20 channels split 10/10, the rest on rank0. */
static const char toy6_split[] =
    "{\"format\":\"dse-mapping\",\"version\":1,\"network\":\"toy6\",\"platform\":\"local-2\","
    "\"layers\":{\"conv\":[[\"rank0\",0,10],[\"rank1\",10,10]],\"relu\":\"rank0\","
    "\"pool\":\"rank0\",\"flatten\":\"rank0\",\"fc\":\"rank0\",\"softmax\":\"rank0\"}}";

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void test_table2_cli(void)
{
    run_result r;
    const char *args[] = {
        "eval",     "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpugpu",
        "--coeffs", THESIS,      "--single",     "nx0-cpu",    "--json",
        NULL};
    run_dse(&r, args);
    CHECK(r.status == 0);
    CHECK_STR(r.err, "");
    cJSON *o = cJSON_Parse(r.out);
    CHECK(o != NULL);
    if (o) {
        CHECK_REL(jnum(o, "latency_ms"), 28.3, 0.10);
        CHECK_REL(jnum(o, "memory_mb"), 152.746, 0.10);
        CHECK_REL(jnum(o, "energy_j"), 0.352, 0.10);
        CHECK(jnum(o, "violation_bytes") == 0);
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(o, "devices");
        CHECK(cJSON_GetArraySize(devs) == 16);
        int used = 0;
        for (const cJSON *d = devs ? devs->child : NULL; d; d = d->next)
            used += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "used"));
        CHECK(used == 1);
        cJSON_Delete(o);
    }
    run_free(&r);
}

static void test_notices(void)
{
    run_result r;
    /* No --coeffs: one line saying built-in defaults are used. */
    const char *a1[] = {"eval",    "--network", "toy6",  "--platform",
                        "local-2", "--single",  "rank1", NULL};
    run_dse(&r, a1);
    CHECK(r.status == 0);
    CHECK_HAS(r.err, "built-in default coefficients");
    CHECK(count_lines(r.err) == 1);
    CHECK_HAS(r.out, "latency");
    /* rank1 computes everything; rank0 holds the input and sends it. */
    CHECK_HAS(r.out, "rank0");
    run_free(&r);
    /* Coefficients from other networks: one warning line, evaluation goes on. */
    const char *a2[] = {"eval",     "--network", "resnet50", "--platform", "jetson-nx-8-cpu",
                        "--coeffs", THESIS,      "--single", "0",          NULL};
    run_dse(&r, a2);
    CHECK(r.status == 0);
    CHECK_HAS(r.err, "warning: coefficients calibrated on networks alexnet-bvlc, vgg16, "
                     "densenet121, not resnet50");
    CHECK(count_lines(r.err) == 1);
    run_free(&r);
}

/* Coefficients measured on x86_64 used for the presets' aarch64 boards:
 * eval and run say so in their one warning line and go on. */
static void test_arch_warning(void)
{
    char *text = tfile_read(THESIS, NULL), *at = text ? strstr(text, "\"arch\": \"aarch64\"") : NULL;
    CHECK(at != NULL);
    if (!at) {
        free(text);
        return;
    }
    const char *x86 = "\"arch\": \"x86_64\" "; /* as long as "arch": "aarch64" */
    memcpy(at, x86, strlen(x86));
    char *path = scratch_path("x86.json"), *db = scratch_path("arch.db");
    write_text(path, text);
    free(text);
    run_result r;
    const char *ev[] = {"eval", "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpu",
                        "--coeffs", path, "--single", "0", NULL};
    run_dse(&r, ev);
    CHECK(r.status == 0);
    CHECK_HAS(r.err, "warning: coefficients measured on x86_64 used for 8 aarch64 devices");
    CHECK(count_lines(r.err) == 1);
    run_free(&r);
    const char *rn[] = {"run", "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpu",
                        "--coeffs", path, "--chromosome", "naive", "--pop", "4", "--gens", "1",
                        "--seed", "1", "--db", db, "--quiet", NULL};
    run_dse(&r, rn);
    CHECK(r.status == 0, "%s", r.err);
    CHECK_HAS(r.err, "warning: coefficients measured on x86_64 used for 8 aarch64 devices");
    CHECK(count_lines(r.err) == 1);
    run_free(&r);
    /* the shipped file says aarch64: no warning */
    const char *ok[] = {"eval", "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpu",
                        "--coeffs", THESIS, "--single", "0", NULL};
    run_dse(&r, ok);
    CHECK(r.status == 0 && r.err[0] == 0, "%s", r.err);
    run_free(&r);
    free(path);
    free(db);
}

static void test_mapping_file(void)
{
    char *path = scratch_path("toy6-split.json");
    write_text(path, toy6_split);
    run_result r;
    const char *a1[] = {"plan",      "--network", "toy6",    "--platform", "local-2",
                        "--mapping", path,        "--check", NULL};
    run_dse(&r, a1);
    CHECK(r.status == 0);
    /* rank1 gets the input (3x16x16 floats = 3072 B) and returns its 10
     * channels of conv (10x16x16 floats = 10240 B): 13312 bytes. */
    CHECK_HAS(r.out, "2 messages, 13312 bytes moved");
    CHECK_HAS(r.out, "plan check: ok");
    run_free(&r);
    const char *a2[] = {"eval",      "--network", "toy6",   "--platform", "local-2",
                        "--mapping", path,        "--json", NULL};
    run_dse(&r, a2);
    CHECK(r.status == 0);
    cJSON *o = cJSON_Parse(r.out);
    CHECK(o != NULL);
    if (o) {
        CHECK(jnum(o, "bytes_moved") == 13312);
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(o, "devices");
        const cJSON *d0 = cJSON_GetArrayItem(devs, 0), *d1 = cJSON_GetArrayItem(devs, 1);
        CHECK(jnum(d0, "bytes_sent") == 3072 && jnum(d0, "bytes_recv") == 10240);
        CHECK(jnum(d1, "bytes_sent") == 10240 && jnum(d1, "bytes_recv") == 3072);
        double m0 = jnum(d0, "memory_mb"), m1 = jnum(d1, "memory_mb");
        CHECK(jnum(o, "memory_mb") == (m0 > m1 ? m0 : m1));
        /* The old key, kept for one release, equals the table's. */
        CHECK(jnum(o, "mem_mb") == jnum(o, "memory_mb") && jnum(d0, "mem_mb") == m0);
        double e0 = jnum(d0, "energy_j"), e1 = jnum(d1, "energy_j");
        CHECK(jnum(o, "energy_j") == (e0 > e1 ? e0 : e1));
        /* rank0 waits for rank1's slice: its wait shows. */
        CHECK(jnum(d0, "wait_ms") > 0);
        cJSON_Delete(o);
    }
    run_free(&r);
    free(path);
}

/* Bad input: exit 2, exactly one line on stderr containing `want`. */
static void bad(const char *want, const char *const *args)
{
    run_result r;
    run_dse(&r, args);
    if (r.status != 2 || !strstr(r.err, want) || count_lines(r.err) != 1) {
        fprintf(stderr, "case \"%s\": status %d, stderr: %s", want, r.status, r.err);
        check_failures++;
    }
    CHECK_STR(r.out, "");
    run_free(&r);
}

static void test_bad_input(void)
{
    char *malformed = scratch_path("malformed.json"), *v2 = scratch_path("v2.json"),
         *neg = scratch_path("neg.json"), *other = scratch_path("other-map.json");
    write_text(malformed, "{\"format\": \"dse-coefficients\", \"version\": 1,");
    write_text(v2, "{\"format\":\"dse-coefficients\",\"version\":99,\"platforms\":[],"
                   "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{}}");
    write_text(neg, "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],"
                    "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
                    "{\"memory\":{\"bias_mb\":{\"value\":-5,\"source\":\"fitted\",\"r2\":0.9,"
                    "\"n\":3}}}}}");
    write_text(other, toy6_split);
    const char *a1[] = {"eval",    "--network", "nosuchnet", "--platform",
                        "local-2", "--single",  "0",         NULL};
    bad("nosuchnet", a1);
    const char *a2[] = {"eval",       "--network", "toy6", "--platform",
                        "nosuchplat", "--single",  "0",    NULL};
    bad("nosuchplat", a2);
    const char *a3[] = {"eval",     "--network", "toy6",     "--platform", "local-2",
                        "--single", "0",         "--coeffs", malformed,    NULL};
    bad("malformed.json", a3);
    const char *a4[] = {"eval",     "--network", "toy6",     "--platform", "local-2",
                        "--single", "0",         "--coeffs", v2,           NULL};
    bad("version 99", a4);
    const char *a5[] = {"eval",     "--network", "toy6",     "--platform", "local-2",
                        "--single", "0",         "--coeffs", neg,          NULL};
    bad("bias_mb", a5);
    const char *a6[] = {"eval",    "--network", "branchy", "--platform",
                        "local-2", "--mapping", other,     NULL};
    bad("other-map.json", a6);
    const char *a7[] = {"eval",    "--network", "toy6", "--platform",
                        "local-2", "--single",  "gpu9", NULL};
    bad("gpu9", a7);
    const char *a8[] = {"eval", "--network", "toy6", "--platform", "local-2", NULL};
    bad("--mapping", a8);
    const char *a9[] = {"plan",      "--network", "toy6", "--platform", "jetson-nx-8-cpu",
                        "--mapping", other,       NULL};
    bad("other-map.json", a9);
    const char *a10[] = {"eval",     "--network", "toy6",    "--platform", "local-2",
                         "--single", "0",         "--bogus", "1",          NULL};
    bad("bogus", a10);
    free(malformed);
    free(v2);
    free(neg);
    free(other);
}

int main(void)
{
    test_table2_cli();
    test_notices();
    test_arch_warning();
    test_mapping_file();
    test_bad_input();
    scratch_cleanup();
    return check_done("test_cost_cli");
}
