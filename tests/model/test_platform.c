/* test_platform.c -- platform files (docs/platform-format.md): the shipped
 * presets against the thesis' set-up (8 Jetson Xavier NX, CPU only or CPU
 * and GPU as 16 devices, Table 2's single-device power), link classes and
 * per-pair overrides, the source device, and the documentation's example.
 */
#include "mcheck.h"
#include "platform.h"
#include "run.h"

#include <stdlib.h>

static platform *open_ok(const char *name)
{
    char err[BASE_ERRLEN];
    platform *p = platform_open(name, err);
    if (!p) fprintf(stderr, "platform_open(%s): %s\n", name, err);
    CHECK(p != NULL);
    return p;
}

static link_class cls(const platform *p, int a, int b) { return p->link_cls[a * p->ndev + b]; }

static void test_jetson_cpu(void)
{
    platform *p = open_ok("jetson-nx-8-cpu");
    if (!p) return;
    CHECK_I64(p->ndev, 8);
    CHECK_I64(p->source, 0);
    for (int i = 0; i < p->ndev; i++) {
        char want[32];
        snprintf(want, sizeof want, "nx%d-cpu", i);
        CHECK_STR(p->dev[i].name, want);
        CHECK(p->dev[i].kind == PLAT_CPU);
        CHECK_I64(p->dev[i].cores, 6); /* 6-core Carmel (thesis 5.1) */
        CHECK(p->dev[i].freq_mhz == 1400);
        CHECK(p->dev[i].memory_mb > 7000 && p->dev[i].memory_mb <= 8192); /* 8 GB boards */
        /* Thesis Table 2: AlexNet on one device, 0.352 J in 28.3 ms. */
        CHECK_REL(p->dev[i].busy_w, 0.352 / 0.0283, 0.01);
        CHECK(p->dev[i].idle_w >= 0 && p->dev[i].idle_w < p->dev[i].busy_w);
        for (int j = 0; j < p->ndev; j++) {
            CHECK_I64(cls(p, i, j), i == j ? LINK_SAME_DEVICE : LINK_NETWORK);
            if (i != j) {
                CHECK(platform_link(p, i, j)->latency_us == 150);
                CHECK(platform_link(p, i, j)->bandwidth_mbs == 112);
            }
        }
    }
    /* Gigabit Ethernet cannot carry more than 125 MB/s. */
    CHECK(p->cls[LINK_NETWORK].bandwidth_mbs <= 125);
    CHECK_I64(platform_find(p, "nx5-cpu"), 5);
    CHECK_I64(platform_find(p, "nx5-gpu"), -1);
    CHECK_I64(platform_fastest(p), 0); /* all equal: the lowest index */
    CHECK(p->text && strstr(p->text, "\"dse-platform\""));
    CHECK(p->description && strstr(p->description, "Table 2"));
    platform_free(p);
}

static void test_jetson_cpugpu(void)
{
    platform *p = open_ok("jetson-nx-8-cpugpu");
    if (!p) return;
    CHECK_I64(p->ndev, 16);
    int ncpu = 0, ngpu = 0;
    for (int i = 0; i < p->ndev; i++) {
        ncpu += p->dev[i].kind == PLAT_CPU;
        ngpu += p->dev[i].kind == PLAT_GPU;
        if (p->dev[i].kind == PLAT_GPU) CHECK_I64(p->dev[i].cores, 384);
    }
    CHECK_I64(ncpu, 8);
    CHECK_I64(ngpu, 8);
    /* nxK-cpu <-> nxK-gpu: same_board; every other pair of distinct devices: network. */
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) {
            const char *na = p->dev[a].name, *nb = p->dev[b].name;
            int same_board = a != b && strncmp(na, nb, 3) == 0; /* "nxK" prefix */
            link_class want = a == b ? LINK_SAME_DEVICE
                              : same_board ? LINK_SAME_BOARD
                                           : LINK_NETWORK;
            CHECK_I64(cls(p, a, b), want);
            CHECK(platform_link(p, a, b)->latency_us == p->cls[want].latency_us);
            CHECK(platform_link(p, a, b)->bandwidth_mbs == p->cls[want].bandwidth_mbs);
        }
    for (int k = 0; k < 8; k++) {
        char c[32], g[32];
        snprintf(c, sizeof c, "nx%d-cpu", k);
        snprintf(g, sizeof g, "nx%d-gpu", k);
        int ic = platform_find(p, c), ig = platform_find(p, g);
        CHECK(ic >= 0 && ig >= 0);
        if (ic >= 0 && ig >= 0) {
            CHECK_I64(cls(p, ic, ig), LINK_SAME_BOARD);
            CHECK_STR(p->dev[ic].board, p->dev[ig].board);
        }
    }
    /* The on-board link is faster than the network. */
    CHECK(p->cls[LINK_SAME_BOARD].bandwidth_mbs > p->cls[LINK_NETWORK].bandwidth_mbs);
    CHECK(p->cls[LINK_SAME_BOARD].latency_us < p->cls[LINK_NETWORK].latency_us);
    /* freq x cores: a GPU (1100 x 384) beats a CPU (1400 x 6); the first GPU. */
    CHECK_STR(p->dev[platform_fastest(p)].name, "nx0-gpu");
    platform_free(p);
}

static void test_local(void)
{
    platform *p = open_ok("local-2");
    if (p) {
        CHECK_I64(p->ndev, 2);
        CHECK_I64(cls(p, 0, 1), LINK_SAME_BOARD);
        CHECK_I64(cls(p, 1, 1), LINK_SAME_DEVICE);
        /* same_device defaults to free: no latency, huge bandwidth. */
        CHECK(platform_link(p, 1, 1)->latency_us == 0);
        CHECK(platform_link(p, 1, 1)->bandwidth_mbs >= 1e9);
    }
    platform_free(p);
    p = open_ok("local-4");
    CHECK(p && p->ndev == 4);
    platform_free(p);
    /* By path, too. */
    p = open_ok(DSE_SOURCE_DIR "/examples/platforms/local-2.json");
    CHECK(p && p->ndev == 2);
    platform_free(p);
}

static void test_doc_example(void)
{
    char err[BASE_ERRLEN];
    char *text = tfile_md_json(DSE_SOURCE_DIR "/docs/platform-format.md");
    CHECK(text != NULL);
    if (!text) return;
    platform *p = platform_from_json(text, "platform-format.md", err);
    if (!p) fprintf(stderr, "doc example: %s\n", err);
    CHECK(p != NULL);
    free(text);
    if (!p) return;
    CHECK_STR(p->name, "two-boards");
    CHECK_I64(p->ndev, 3);
    int acpu = platform_find(p, "a-cpu"), agpu = platform_find(p, "a-gpu"),
        bcpu = platform_find(p, "b-cpu");
    CHECK_I64(p->source, acpu);
    CHECK(p->dev[agpu].kind == PLAT_GPU);
    CHECK(p->dev[acpu].energy_sensor && strstr(p->dev[acpu].energy_sensor, "in_power0"));
    CHECK(p->dev[bcpu].energy_sensor == NULL);
    /* arch: as written, Debian's name the same as uname's; unstated is NULL */
    CHECK_STR(p->dev[acpu].arch, "aarch64");
    CHECK_STR(p->dev[bcpu].arch, "arm64");
    CHECK(p->dev[agpu].arch == NULL);
    CHECK(plat_arch_same(p->dev[acpu].arch, p->dev[bcpu].arch));
    CHECK(plat_arch_same("AMD64", "x86_64") && !plat_arch_same("aarch64", "x86_64"));
    CHECK(!plat_arch_same("armv7l", "aarch64"));
    CHECK_I64(cls(p, acpu, agpu), LINK_SAME_BOARD);
    CHECK_I64(cls(p, acpu, bcpu), LINK_NETWORK);
    CHECK(platform_link(p, acpu, bcpu)->latency_us == 150);
    /* The override, in both directions, keeping its class. */
    CHECK(platform_link(p, agpu, bcpu)->latency_us == 300);
    CHECK(platform_link(p, bcpu, agpu)->bandwidth_mbs == 90);
    CHECK_I64(cls(p, agpu, bcpu), LINK_NETWORK);
    platform_free(p);
}

static void test_rules(void)
{
    char err[BASE_ERRLEN];
    /* Kind defaults to cpu; source names a device; one board needs no
     * network class; a later pair entry wins. */
    const char *t =
        "{\"format\":\"dse-platform\",\"source\":\"y\",\"devices\":["
        "{\"name\":\"x\",\"board\":\"h\",\"freq_mhz\":1000,\"cores\":2,\"memory_mb\":100,"
        "\"idle_w\":0,\"busy_w\":1},"
        "{\"name\":\"y\",\"board\":\"h\",\"freq_mhz\":1000,\"cores\":4,\"memory_mb\":100,"
        "\"idle_w\":0,\"busy_w\":1}],"
        "\"links\":{\"same_board\":{\"latency_us\":1,\"bandwidth_mbs\":10},\"pairs\":["
        "{\"a\":\"x\",\"b\":\"y\",\"latency_us\":5,\"bandwidth_mbs\":50},"
        "{\"a\":\"y\",\"b\":\"x\",\"latency_us\":7,\"bandwidth_mbs\":70}]}}";
    platform *p = platform_from_json(t, "rules", err);
    if (!p) fprintf(stderr, "rules: %s\n", err);
    CHECK(p != NULL);
    if (p) {
        CHECK_I64(p->source, 1);
        CHECK(p->dev[0].kind == PLAT_CPU);
        CHECK_STR(p->name, "platform");
        CHECK(platform_link(p, 0, 1)->latency_us == 7 && platform_link(p, 1, 0)->latency_us == 7);
        CHECK_I64(platform_fastest(p), 1); /* 1000 x 4 > 1000 x 2 */
        CHECK_STR(p->text, t);
    }
    platform_free(p);
    CHECK_STR(plat_kind_name(PLAT_GPU), "gpu");
    CHECK_STR(link_class_name(LINK_SAME_BOARD), "same_board");
    CHECK_STR(link_class_name(LINK_NETWORK), "network");
    /* Presets are found in $DSE_PLATFORM_DIR first. */
    char *path = scratch_path("mine.json");
    CHECK(write_text(path, t) == 0);
    char *dir = strdup(path);
    *strrchr(dir, '/') = 0;
    setenv("DSE_PLATFORM_DIR", dir, 1);
    p = platform_open("mine", err);
    CHECK(p && p->ndev == 2);
    platform_free(p);
    unsetenv("DSE_PLATFORM_DIR");
    CHECK(platform_open("mine", err) == NULL);
    CHECK_HAS(err, "mine: unknown platform");
    free(dir);
    free(path);
}

/* "kernels": the machine's part of the convolution rule; absent is the
 * default (no limit); anything but a non-negative integer limit is refused
 * naming the file and the section. */
static void test_kernels(void)
{
    char err[BASE_ERRLEN], t[1024];
    static const char *const cases[] = {
        "",                                                           /* absent */
        ",\"kernels\":{}",                                              /* empty: default */
        ",\"kernels\":{\"winograd2_max_channel_pairs\":131072,\"note\":\"x\"}",
        ",\"kernels\":[]",
        ",\"kernels\":{\"winograd2_max_channel_pairs\":-1}",
        ",\"kernels\":{\"winograd2_max_channel_pairs\":1.5}",
        ",\"kernels\":{\"winograd4_max_channel_pairs\":1}",
        ",\"kernels\":{\"note\":5}",
        ",\"kernels\":{\"winograd2_max_channel_pairs\":4294967296}",
    };
    static const long want[] = {0, 0, 131072, -1, -1, -1, -1, -1, 4294967296L};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(t, sizeof t,
                 "{\"format\":\"dse-platform\",\"devices\":[{\"name\":\"x\",\"board\":\"h\","
                 "\"freq_mhz\":1000,\"cores\":1,\"memory_mb\":100,\"idle_w\":0,\"busy_w\":1}],"
                 "\"links\":{}%s}",
                 cases[i]);
        platform *p = platform_from_json(t, "k.json", err);
        if (want[i] < 0) {
            CHECK(p == NULL, "case %zu accepted", i);
            if (!p) CHECK(strstr(err, "k.json") && strstr(err, "kernels"), "case %zu: %s", i, err);
        } else {
            CHECK(p != NULL, "case %zu: %s", i, err);
            if (p) CHECK(p->kernels.wino2_max_pairs == want[i] && p->kernels.wino_force == 0);
        }
        platform_free(p);
    }
}

/* emulate.cpu_limit "pace": devices of fractional shares are paced to
 * them, whole shares and "quota" (the default) pace nothing. */
static void test_pace(void)
{
    char err[BASE_ERRLEN], t[1200];
    const char *fmt =
        "{\"format\":\"dse-platform\",\"devices\":["
        "{\"name\":\"x\",\"board\":\"b0\",\"freq_mhz\":1000,\"cores\":1,\"memory_mb\":100,"
        "\"idle_w\":0,\"busy_w\":1},"
        "{\"name\":\"y\",\"board\":\"b1\",\"freq_mhz\":400,\"cores\":1,\"memory_mb\":100,"
        "\"idle_w\":0,\"busy_w\":1}],"
        "\"links\":{\"network\":{\"latency_us\":1,\"bandwidth_mbs\":10}},"
        "\"emulate\":{\"subnet\":\"10.199.9.0/24\",%s\"boards\":{"
        "\"b0\":{\"cpu\":1,\"link_mbit\":100},\"b1\":{\"cpu\":%s,\"link_mbit\":100}}}}";
    static const struct {
        const char *limit, *cpu;
        double pace1; /* -1: refused */
    } cases[] = {
        {"\"cpu_limit\":\"pace\",", "0.4", 0.4},
        {"\"cpu_limit\":\"pace\",", "2", 0},
        {"\"cpu_limit\":\"pace\",", "1.5", 1.5},
        {"\"cpu_limit\":\"quota\",", "0.4", 0},
        {"", "0.4", 0},
        {"\"cpu_limit\":\"fast\",", "0.4", -1},
        {"\"cpu_limit\":1,", "0.4", -1},
        {"\"cpu_limit\":\"pace\",", "0.1", -1},
        {"\"cpu_limit\":\"pace\",", "\"half\"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(t, sizeof t, fmt, cases[i].limit, cases[i].cpu);
        platform *p = platform_from_json(t, "pace.json", err);
        if (cases[i].pace1 < 0) {
            CHECK(p == NULL);
            if (!p) CHECK_HAS(err, "pace.json: emulate.");
        } else {
            CHECK(p != NULL);
            if (p) {
                CHECK(p->dev[0].pace == 0);
                CHECK(p->dev[1].pace == cases[i].pace1);
            }
        }
        platform_free(p);
    }
}

int main(void)
{
    test_pace();
    test_jetson_cpu();
    test_jetson_cpugpu();
    test_local();
    test_doc_example();
    test_rules();
    test_kernels();
    scratch_cleanup();
    return check_done("test_platform");
}
