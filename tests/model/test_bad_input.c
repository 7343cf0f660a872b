/* test_bad_input.c -- one CTest test per kind of bad network or platform
 * file (tests/model/CMakeLists.txt registers `model_bad_CASE` for each).
 *
 * Each case is checked twice: through the API (net_load / platform_load
 * returns NULL and one line naming the file, the layer or device, and the
 * problem) and through the CLI (`dse net show FILE` / `dse platform show
 * FILE` exits 2, prints nothing on stdout and exactly one such line on
 * stderr, and does not crash -- under the sanitizer build, a leak or
 * undefined behaviour would add lines or change the exit code).
 *
 * Run without an argument, it checks that CMake registers every case of
 * the table (BAD_CASES, passed in by CMake) and no other.
 */
#include "mcheck.h"
#include "net.h"
#include "platform.h"
#include "run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { NET, PLAT };

typedef struct {
    const char *name;
    int what;          /* NET or PLAT */
    const char *text;  /* the file's content (NULL: made by generated()) */
    const char *want[3]; /* substrings the error line must contain (besides the path) */
} bad_case;

/* Network files: a valid prefix and suffix around the layers. */
#define NETF(layers) "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8]},\"layers\":[" layers "]}"
#define L(name, kind, in, extra) \
    "{\"name\":\"" name "\",\"kind\":\"" kind "\",\"inputs\":[" in "]" extra "}"
/* Platform files. */
#define DEV(name, board, extra)                                                            \
    "{\"name\":\"" name "\",\"board\":\"" board "\",\"freq_mhz\":1000,\"cores\":2,"        \
    "\"memory_mb\":512,\"idle_w\":1,\"busy_w\":2" extra "}"
#define LINKS                                                                              \
    "\"links\":{\"same_board\":{\"latency_us\":1,\"bandwidth_mbs\":1000},"                 \
    "\"network\":{\"latency_us\":100,\"bandwidth_mbs\":100}}"
#define PLATF(devs, links) "{\"format\":\"dse-platform\",\"devices\":[" devs "]," links "}"


/* ---- generated files (issue 15) ---- */

/* A growing string: the generated files below. */
typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = 2 * (b->n + (size_t)k + 1);
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* 1,030 FC layers of 3,000,000 x 3,000,000 (9e12 MACs each, well within
 * a layer's limit): their MACs in all pass 2^53 near layer 1,000 and
 * overflowed int64 sums before (UBSan; a negative total, exit 0). */
static char *gen_total_overflow(void)
{
    sbuf b = {0};
    sb_add(&b, "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8]},\"layers\":[");
    for (int i = 0; i < 1030; i++)
        sb_add(&b, "%s{\"name\":\"f%d\",\"kind\":\"FC\",\"inputs\":[\"%s%d\"],"
               "\"out_features\":3000000}", i ? "," : "", i, i ? "f" : "data", i - 1);
    sb_add(&b, "]}");
    /* the first layer reads "data", not "f-1" */
    char *q = strstr(b.s, "data-1");
    memmove(q + 4, q + 6, strlen(q + 6) + 1);
    return b.s;
}

/* An Add of 1,025 inputs: one more than NET_MAX_IN.  It was accepted
 * until `dse exec` (the runtime held 64). */
static char *gen_many_inputs(void)
{
    sbuf b = {0};
    sb_add(&b, "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8]},\"layers\":[");
    for (int i = 0; i < 1025; i++)
        sb_add(&b, "{\"name\":\"r%d\",\"kind\":\"ReLU\",\"inputs\":[\"data\"]},", i);
    sb_add(&b, "{\"name\":\"sum\",\"kind\":\"Add\",\"inputs\":[");
    for (int i = 0; i < 1025; i++) sb_add(&b, "%s\"r%d\"", i ? "," : "", i);
    sb_add(&b, "]}]}");
    return b.s;
}

/* 65 devices: platform show accepted them, eval and plan failed (device
 * sets are 64-bit masks). */
static char *gen_65_devices(void)
{
    sbuf b = {0};
    sb_add(&b, "{\"format\":\"dse-platform\",\"devices\":[");
    for (int i = 0; i < 65; i++)
        sb_add(&b, "%s{\"name\":\"d%d\",\"board\":\"b%d\",\"freq_mhz\":1000,\"cores\":2,"
               "\"memory_mb\":512,\"idle_w\":1,\"busy_w\":2}", i ? "," : "", i, i);
    sb_add(&b, "]," LINKS "}");
    return b.s;
}

/* The text of a case too long to write out (NULL-text cases). */
static char *generated(const char *name)
{
    if (!strcmp(name, "total_overflow")) return gen_total_overflow();
    if (!strcmp(name, "too_many_inputs")) return gen_many_inputs();
    if (!strcmp(name, "plat_65_devices")) return gen_65_devices();
    abort();
}

static const bad_case cases[] = {
    /* ---- networks ---- */
    {"malformed_json", NET,
     "{\"format\": \"dse-network\",\n \"input\": {\"shape\": [3, 8, 8]},\n"
     " \"layers\": [{\"name\": \"r\" \"kind\": \"ReLU\", \"inputs\": [\"data\"]}]}\n",
     {"malformed JSON", "line 3"}},
    {"truncated_json", NET,
     "{\"format\": \"dse-network\",\n \"input\": {\"shape\": [3, 8, 8]},\n"
     " \"layers\": [{\"name\": \"r\", \"kind\": \"ReLU\", \"inpu",
     {"malformed JSON", "unexpected end of file"}},
    {"empty_file", NET, "", {"malformed JSON", "end of file"}},
    {"not_a_network", NET, "{\"format\":\"dse-platform\"}", {"not a dse network file"}},
    {"wrong_type_kernel", NET,
     NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":\"3\"")),
     {"layer c1", "\"kernel\" must be"}},
    {"wrong_type_bias", NET, NETF(L("f", "FC", "\"data\"", ",\"out_features\":4,\"bias\":1")),
     {"layer f", "\"bias\" must be true or false"}},
    {"wrong_type_inputs", NET, NETF("{\"name\":\"r\",\"kind\":\"ReLU\",\"inputs\":\"data\"}"),
     {"layer r", "\"inputs\" must be"}},
    {"fractional_channels", NET, NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":2.5,\"kernel\":1")),
     {"layer c1", "\"out_channels\" must be an integer"}},
    {"missing_required", NET, NETF(L("c1", "Conv", "\"data\"", ",\"kernel\":3")),
     {"layer c1", "missing \"out_channels\""}},
    {"unknown_kind", NET, NETF(L("up", "Deconv", "\"data\"", "")),
     {"layer up", "unknown layer kind \"Deconv\""}},
    {"unknown_attribute", NET, NETF(L("p", "MaxPool", "\"data\"", ",\"kernel\":2,\"strides\":2")),
     {"layer p", "unknown attribute \"strides\""}},
    {"unknown_top_key", NET,
     "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8]},\"batch\":4,\"layers\":[" L(
         "r", "ReLU", "\"data\"", "") "]}",
     {"unknown key \"batch\""}},
    {"duplicate_key", NET,
     NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":3,\"kernel\":5")),
     {"c1", "duplicate key \"kernel\""}},
    {"dangling_input", NET, NETF(L("r", "ReLU", "\"data\"", "") "," L("s", "Softmax", "\"rleu\"", "")),
     {"layer s", "input rleu is not a layer"}},
    /* x and y form a cycle; head (listed first) only reads it. */
    {"cycle", NET,
     NETF(L("head", "ReLU", "\"x\"", "") "," L("x", "Add", "\"data\",\"y\"", "") "," L(
         "y", "ReLU", "\"x\"", "")),
     {"layer x", "cycle"}},
    {"self_cycle", NET, NETF(L("r", "ReLU", "\"r\"", "")), {"layer r", "cycle"}},
    {"nonpositive_input", NET,
     "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,0,8]},\"layers\":[" L(
         "r", "ReLU", "\"data\"", "") "]}",
     {"input data", "non-positive dimension 3x0x8"}},
    {"nonpositive_channels", NET, NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":0,\"kernel\":3")),
     {"layer c1", "positive out_channels"}},
    {"add_shapes", NET,
     NETF(L("a", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":1") "," L(
         "sum", "Add", "\"a\",\"data\"", "")),
     {"layer sum", "Add of different shapes 4x8x8 and 3x8x8"}},
    {"kernel_too_large", NET, NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":[5,11],\"pads\":1")),
     {"layer c1", "kernel 5x11 larger than its padded input 10x10"}},
    {"pool_too_large", NET, NETF(L("p", "MaxPool", "\"data\"", ",\"kernel\":9")),
     {"layer p", "larger than its padded input"}},
    {"concat_spatial", NET,
     NETF(L("p", "MaxPool", "\"data\"", ",\"kernel\":2") "," L("cat", "Concat", "\"data\",\"p\"", "")),
     {"layer cat", "Concat of different spatial sizes 8x8 and 4x4"}},
    {"groups_not_dividing", NET, NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":3,\"groups\":2")),
     {"layer c1", "groups 2 does not divide input channels 3"}},
    {"two_outputs", NET, NETF(L("r", "ReLU", "\"data\"", "") "," L("s", "Softmax", "\"data\"", "")),
     {"2 outputs", "first r"}},
    {"duplicate_names", NET, NETF(L("r", "ReLU", "\"data\"", "") "," L("r", "Softmax", "\"r\"", "")),
     {"duplicate layer name r"}},
    {"add_one_input", NET, NETF(L("sum", "Add", "\"data\"", "")),
     {"layer sum", "Add takes at least two inputs, got 1"}},
    {"stated_shape", NET, NETF(L("r", "ReLU", "\"data\"", ",\"shape\":[3,8,9]")),
     {"layer r", "stated shape 3x8x9 but inputs give 3x8x8"}},
    {"pool_pad_too_big", NET, NETF(L("p", "MaxPool", "\"data\"", ",\"kernel\":2,\"pads\":2")),
     {"layer p", "pads must be smaller than the kernel"}},
    {"huge_tensor", NET,
     NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":2000000000,\"kernel\":1,\"pads\":2000000000")),
     {"layer c1", "more than"}},
    {"huge_dilation", NET,
     NETF(L("c1", "Conv", "\"data\"", ",\"out_channels\":4,\"kernel\":2000000000,\"dilation\":2000000000")),
     {"layer c1", "larger than its padded input"}},
    {"negative_relu_max", NET, NETF(L("r", "ReLU", "\"data\"", ",\"max\":-1")),
     {"layer r", "\"max\" must be a number >= 0"}},
    {"bad_version", NET,
     "{\"format\":\"dse-network\",\"version\":2,\"input\":{\"shape\":[3,8,8]},\"layers\":[]}",
     {"unsupported network format version 2"}},
    {"no_layers", NET, NETF(""), {"no layers"}},
    {"layer_not_object", NET, NETF("[\"r\"]"), {"layers[0] is not an object"}},
    {"unknown_input_key", NET,
     "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8],\"dtype\":\"f32\"},"
     "\"layers\":[" L("r", "ReLU", "\"data\"", "") "]}",
     {"input", "unknown key \"dtype\""}},
    {"name_is_input", NET, NETF(L("data", "ReLU", "\"data\"", "")),
     {"layer data", "same name as the network input"}},
    {"fc_two_inputs", NET,
     NETF(L("r", "ReLU", "\"data\"", "") "," L("f", "FC", "\"r\",\"data\"", ",\"out_features\":2")),
     {"layer f", "FC takes one input, got 2"}},
    {"mul_shapes", NET,
     NETF(L("p", "MaxPool", "\"data\"", ",\"kernel\":2") "," L("m", "Mul", "\"data\",\"p\"", "")),
     {"layer m", "Mul of 3x8x8 by 3x4x4", "one value per channel (3x1x1)"}},
    {"mul_three_inputs", NET, NETF(L("m", "Mul", "\"data\",\"data\",\"data\"", "")),
     {"layer m", "Mul takes two inputs, got 3"}},
    /* ---- platforms ---- */
    {"plat_malformed", PLAT, "{\"format\": \"dse-platform\", \"devices\": [", {"malformed JSON"}},
    {"plat_no_devices", PLAT, PLATF("", LINKS), {"no devices"}},
    {"plat_duplicate_device", PLAT, PLATF(DEV("nx0", "a", "") "," DEV("nx0", "b", ""), LINKS),
     {"duplicate device name nx0"}},
    {"plat_missing_link_class", PLAT,
     PLATF(DEV("d0", "a", "") "," DEV("d1", "b", ""),
           "\"links\":{\"same_board\":{\"latency_us\":1,\"bandwidth_mbs\":1000}}"),
     {"links.network is missing", "devices d0 and d1"}},
    {"plat_unknown_key", PLAT, PLATF(DEV("d0", "a", ",\"frequency\":1400"), LINKS),
     {"device d0", "unknown key \"frequency\""}},
    {"plat_wrong_kind", PLAT, PLATF(DEV("d0", "a", ",\"kind\":\"tpu\""), LINKS),
     {"device d0", "\"tpu\""}},
    {"plat_bad_arch", PLAT, PLATF(DEV("d0", "a", ",\"arch\":\"ARM v8\""), LINKS),
     {"device d0", "\"arch\" must be a CPU architecture", "\"ARM v8\""}},
    {"plat_arch_not_string", PLAT, PLATF(DEV("d0", "a", ",\"arch\":64"), LINKS),
     {"device d0", "\"arch\""}},
    {"plat_unknown_top_key", PLAT,
     "{\"format\":\"dse-platform\",\"sources\":\"d0\",\"devices\":[" DEV("d0", "a", "") "]," LINKS "}",
     {"unknown key \"sources\""}},
    {"plat_negative_freq", PLAT,
     PLATF("{\"name\":\"d0\",\"board\":\"a\",\"freq_mhz\":-5,\"cores\":2,\"memory_mb\":1,"
           "\"idle_w\":1,\"busy_w\":2}", LINKS),
     {"device d0", "\"freq_mhz\" must be a number"}},
    {"plat_missing_field", PLAT,
     PLATF("{\"name\":\"d0\",\"board\":\"a\",\"freq_mhz\":5,\"cores\":2,\"idle_w\":1,"
           "\"busy_w\":2}", LINKS),
     {"device d0", "missing \"memory_mb\""}},
    {"plat_unknown_source", PLAT,
     "{\"format\":\"dse-platform\",\"source\":\"d9\",\"devices\":[" DEV("d0", "a", "") "]," LINKS "}",
     {"source device d9"}},
    {"plat_pair_unknown_device", PLAT,
     PLATF(DEV("d0", "a", "") "," DEV("d1", "b", ""),
           "\"links\":{\"network\":{\"latency_us\":1,\"bandwidth_mbs\":1},\"pairs\":["
           "{\"a\":\"d0\",\"b\":\"d7\",\"latency_us\":1,\"bandwidth_mbs\":1}]}"),
     {"links.pairs[0]", "unknown device d7"}},
    {"plat_zero_bandwidth", PLAT,
     PLATF(DEV("d0", "a", "") "," DEV("d1", "b", ""),
           "\"links\":{\"network\":{\"latency_us\":1,\"bandwidth_mbs\":0}}"),
     {"links.network", "\"bandwidth_mbs\" must be a number"}},
    {"plat_link_stray_key", PLAT,
     PLATF(DEV("d0", "a", ""), "\"links\":{\"same_board\":{\"latency_us\":1,"
                                "\"bandwidth_mbs\":1,\"a\":\"d0\"}}"),
     {"links.same_board", "unknown key \"a\""}},
    /* ---- issue 15: what later stages relied on, checked by the readers ---- */
    {"total_overflow", NET, NULL, {"network has more than 2^53", "in all"}},
    {"too_many_inputs", NET, NULL, {"layer sum", "1025 inputs", "at most 1024"}},
    {"missing_weights", NET,
     "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,8,8]},\"weights\":\"nowhere.bin\","
     "\"layers\":[" L("f", "FC", "\"data\"", ",\"out_features\":4") "]}",
     {"weights file", "nowhere.bin"}},
    {"json_leading_zero", NET,
     "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,08,8]},\"layers\":["
     L("r", "ReLU", "\"data\"", "") "]}",
     {"number with a leading zero", "line 1"}},
    {"json_huge_number", NET, NETF(L("f", "FC", "\"data\"", ",\"out_features\":1e999")),
     {"number too large for a double"}},
    {"json_invalid_utf8", NET, NETF(L("r\xff", "ReLU", "\"data\"", "")), {"invalid UTF-8"}},
    {"json_nul_escape", NET, NETF(L("r\\u0000x", "ReLU", "\"data\"", "")), {"\\u0000"}},
    {"control_char_name", NET, NETF(L("r\\u001b[2J", "ReLU", "\"data\"", "")),
     {"layers[0]", "without control characters"}},
    /* ---- the kernels' int matrix sides (review of the ConvTranspose change) ---- */
    {"conv_window_huge", NET,
     NETF(L("c", "Conv", "\"data\"",
            ",\"out_channels\":1,\"kernel\":[40000,40000],\"pads\":[20000,20000,20000,20000]")),
     {"layer c", "Conv window too large", "over 2^30"}},
    {"deconv_window_huge", NET,
     NETF(L("t", "ConvTranspose", "\"data\"",
            ",\"out_channels\":2,\"kernel\":[40000,40000],\"pads\":[20000,20000,20000,20000]")),
     {"layer t", "ConvTranspose window too large"}},
    {"pad_value_reflect", NET,
     NETF(L("p", "Pad", "\"data\"", ",\"pads\":[1,1,1,1],\"reflect\":true,\"value\":2")),
     {"layer p", "value 2 is for constant padding"}},
    {"plat_kernels_negative", PLAT,
     "{\"format\":\"dse-platform\",\"devices\":[" DEV("d0", "a", "") "]," LINKS
     ",\"kernels\":{\"winograd2_max_channel_pairs\":-5}}",
     {"kernels", "\"winograd2_max_channel_pairs\" must be a whole number"}},
    {"plat_65_devices", PLAT, NULL, {"65 devices", "at most 64"}},
    {"plat_board_not_host", PLAT, PLATF(DEV("d0", "a;touch PWNED", ""), LINKS),
     {"device d0", "is not a host name"}},
    {"plat_huge_figure", PLAT,
     PLATF("{\"name\":\"d0\",\"board\":\"a\",\"freq_mhz\":1e308,\"cores\":2,"
           "\"memory_mb\":1,\"idle_w\":1,\"busy_w\":2}", LINKS),
     {"device d0", "\"freq_mhz\" must be a number from 1e-09 to 1e+12"}},
    {"plat_denormal_bandwidth", PLAT,
     PLATF(DEV("d0", "a", "") "," DEV("d1", "b", ""),
           "\"links\":{\"network\":{\"latency_us\":1,\"bandwidth_mbs\":4.9e-324}}"),
     {"links.network", "\"bandwidth_mbs\" must be a number from 1e-09"}},
};

static const int ncases = (int)(sizeof cases / sizeof cases[0]);

static void run_case(const bad_case *c)
{
    char err[BASE_ERRLEN], fname[128];
    snprintf(fname, sizeof fname, "%s.json", c->name);
    char *path = scratch_path(fname);
    char *text = c->text ? NULL : generated(c->name);
    CHECK(write_text(path, c->text ? c->text : text) == 0);
    free(text);

    /* API */
    err[0] = 0;
    if (c->what == NET) {
        net *n = net_load(path, err);
        CHECK(n == NULL);
        net_free(n);
    } else {
        platform *p = platform_load(path, err);
        CHECK(p == NULL);
        platform_free(p);
    }
    fprintf(stderr, "%s: API says: %s\n", c->name, err);
    CHECK_HAS(err, path);
    CHECK(strchr(err, '\n') == NULL);
    for (int k = 0; k < 3 && c->want[k]; k++) CHECK_HAS(err, c->want[k]);

    /* CLI */
    run_result r;
    if (c->what == NET) run_dse(&r, (const char *const[]){"net", "show", path, NULL});
    else run_dse(&r, (const char *const[]){"platform", "show", path, NULL});
    fprintf(stderr, "%s: CLI exit %d, stderr: %s", c->name, r.status, r.err);
    CHECK_I64(r.status, 2);
    CHECK_STR(r.out, "");
    CHECK_I64(count_lines(r.err), 1);
    CHECK(r.err[0] && r.err[strlen(r.err) - 1] == '\n');
    CHECK_HAS(r.err, path);
    for (int k = 0; k < 3 && c->want[k]; k++) CHECK_HAS(r.err, c->want[k]);
    /* The API and the CLI say the same thing. */
    CHECK_HAS(r.err, err);
    run_free(&r);
    free(path);
}

/* Every case registered by CMake, and only those. */
static void check_registered(void)
{
    const char *list = BAD_CASES; /* "a;b;c" */
    int seen = 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int i = 0; i < ncases; i++)
            if (strlen(cases[i].name) == len && !strncmp(cases[i].name, p, len)) found = 1;
        if (!found) fprintf(stderr, "CMake registers %.*s, not a case here\n", (int)len, p);
        CHECK(found);
        seen++;
        p += len;
        if (*p == ';') p++;
    }
    if (seen != ncases) fprintf(stderr, "%d cases here, %d registered\n", ncases, seen);
    CHECK_I64(seen, ncases);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        check_registered();
        return check_done("test_bad_input (registration)");
    }
    for (int i = 0; i < ncases; i++)
        if (!strcmp(cases[i].name, argv[1])) {
            run_case(&cases[i]);
            scratch_cleanup();
            return check_done(argv[1]);
        }
    fprintf(stderr, "no case %s\n", argv[1]);
    return 1;
}
