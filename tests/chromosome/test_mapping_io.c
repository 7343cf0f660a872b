/* test_mapping_io.c -- mapping_validate() on hand-broken mappings; our
 * JSON format and AutoDiCE's pair of files: exact round trips over random
 * genomes of every encoding on several zoo networks, the files' content
 * for the thesis example, and one bad input per error (NULL, and one line
 * naming the file, the layer or device, and the problem).
 */
#include "jsonutil.h"
#include "tutil.h"

#include <cJSON.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static net *zoo(const char *name)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo(name, err);
    if (!n) fprintf(stderr, "%s\n", err), exit(2);
    return n;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) perror(path), exit(2);
    fputs(text, f);
    fclose(f);
}

static char *path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* toy6 on 5 devices as in the thesis example (hybrid worked example). */
static mapping *example(const net *t)
{
    mapping *m = mapping_new(t->n, 5);
    const map_slice s[] = {{2, 0, 4}, {0, 4, 8}, {1, 12, 8}, /* conv */
                           {2, 0, 20}, {2, 0, 20}, {2, 0, 20 * 8 * 8}, /* relu pool flatten */
                           {3, 0, 2}, {1, 2, 2}, {4, 4, 2}, {0, 6, 4}, /* fc */
                           {3, 0, 10}};
    const int first[] = {0, 3, 4, 5, 6, 10, 11};
    memcpy(m->slices, s, sizeof s);
    memcpy(m->first, first, sizeof first);
    /* flatten's channel count comes from the net, not from a guess */
    m->slices[5].nc = t->layers[3].out.c;
    return m;
}

static void test_validate(void)
{
    net *t = zoo("toy6");
    char err[BASE_ERRLEN];
    mapping *m = example(t);
    CHECK(mapping_validate(m, t, err) == 0);
    mapping *b = mapping_new(t->n, 5);
#define BREAK(stmt, ...)                           \
    do {                                           \
        mapping_copy(b, m);                        \
        stmt;                                      \
        CHECK(mapping_validate(b, t, err) == -1);      \
        TERR(err, __VA_ARGS__);                    \
    } while (0)
    BREAK(b->slices[1].c0 = 5, "conv", "missing");      /* gap */
    BREAK(b->slices[1].c0 = 3, "conv", "twice");        /* overlap */
    BREAK(b->slices[2].nc = 7, "conv", "not computed"); /* short */
    BREAK(b->slices[2].nc = 9, "conv", "beyond");       /* past the end */
    BREAK(b->slices[1].dev = 5, "conv", "device");      /* no such device */
    BREAK(b->slices[1].dev = -1, "conv", "device");
    BREAK(b->slices[2].dev = 2, "conv", "two slices");  /* device twice */
    BREAK(b->slices[10].nc = 0, "softmax");             /* empty */
    BREAK(b->first[6] = 10, "softmax", "no device");    /* no slice */
    /* relu split in two: not a splittable kind */
    mapping *r = mapping_new(t->n, 5);
    const map_slice s[] = {{0, 0, 20}, {0, 0, 10}, {1, 10, 10}};
    memcpy(r->slices, s, sizeof s);
    r->first[0] = 0, r->first[1] = 1, r->first[2] = 3;
    for (int i = 2; i < t->n; i++) {
        r->slices[i + 1] = (map_slice){0, 0, t->layers[i].out.c};
        r->first[i + 1] = i + 2;
    }
    CHECK(mapping_validate(r, t, err) == -1);
    TERR(err, "relu", "cannot be split");
    mapping *wrong = mapping_new(t->n - 1, 5);
    CHECK(mapping_validate(wrong, t, err) == -1);
    mapping_set_single(b, t, 4);
    CHECK(mapping_validate(b, t, err) == 0);
    CHECK(!mapping_equal(b, m));
    mapping_copy(b, m);
    CHECK(mapping_equal(b, m));
    mapping_free(wrong);
    mapping_free(r);
    mapping_free(b);
    mapping_free(m);
    net_free(t);
}

/* The files written for the thesis example, read back with cJSON. */
static void test_content(void)
{
    net *t = zoo("toy6");
    platform *p = tplatform(5);
    char err[BASE_ERRLEN];
    mapping *m = example(t);
    char *txt = mapping_to_json(m, t, p);
    cJSON *o = cJSON_Parse(txt);
    CHECK(o != NULL);
    cJSON *f = cJSON_GetObjectItem(o, "format"), *v = cJSON_GetObjectItem(o, "version");
    CHECK(cJSON_IsString(f) && !strcmp(f->valuestring, "dse-mapping"));
    CHECK(cJSON_IsNumber(v) && v->valueint == 1);
    CHECK(!strcmp(cJSON_GetObjectItem(o, "network")->valuestring, "toy6"));
    CHECK(!strcmp(cJSON_GetObjectItem(o, "platform")->valuestring, "test5"));
    cJSON *l = cJSON_GetObjectItem(o, "layers");
    CHECK_I64(cJSON_GetArraySize(l), 6);
    CHECK(!strcmp(l->child->string, "conv")); /* layer order */
    cJSON *conv = cJSON_GetObjectItem(l, "conv");
    CHECK_I64(cJSON_GetArraySize(conv), 3);
    cJSON *s1 = cJSON_GetArrayItem(conv, 1);
    CHECK(!strcmp(cJSON_GetArrayItem(s1, 0)->valuestring, "d0"));
    CHECK_I64(cJSON_GetArrayItem(s1, 1)->valueint, 4);
    CHECK_I64(cJSON_GetArrayItem(s1, 2)->valueint, 8);
    cJSON *relu = cJSON_GetObjectItem(l, "relu");
    CHECK(cJSON_IsString(relu) && !strcmp(relu->valuestring, "d2"));
    cJSON_Delete(o);
    free(txt);

    char warn[BASE_ERRLEN];
    mkdir(path("ad"), 0755);
    CHECK(mapping_export_autodice(m, t, p, path("ad"), warn, err) == 0);
    CHECK(warn[0] == 0);
    char *tm = ju_read_file(path("ad/mapping.json"), err), *th = ju_read_file(path("ad/horizontal.json"), err);
    cJSON *jm = cJSON_Parse(tm), *jh = cJSON_Parse(th);
    CHECK(jm && jh);
    /* mapping.json: devices in platform order as <board>_cpu<core>, layers
     * in network order, a split layer under every device computing part of it. */
    CHECK_I64(cJSON_GetArraySize(jm), 5);
    CHECK(!strcmp(jm->child->string, "b0_cpu0"));
    cJSON *d0 = cJSON_GetObjectItem(jm, "b0_cpu0"), *d2 = cJSON_GetObjectItem(jm, "b2_cpu0");
    CHECK_I64(cJSON_GetArraySize(d0), 2); /* conv, fc */
    CHECK(!strcmp(cJSON_GetArrayItem(d0, 0)->valuestring, "conv"));
    CHECK(!strcmp(cJSON_GetArrayItem(d0, 1)->valuestring, "fc"));
    CHECK_I64(cJSON_GetArraySize(d2), 4); /* conv relu pool flatten */
    CHECK(!strcmp(cJSON_GetArrayItem(d2, 3)->valuestring, "flatten"));
    cJSON *d3 = cJSON_GetObjectItem(jm, "b3_cpu0");
    CHECK_I64(cJSON_GetArraySize(d3), 2); /* fc softmax */
    /* horizontal.json: only split layers; the end channel of every slice,
     * the last one the layer's channel count; devices in slice order. */
    CHECK_I64(cJSON_GetArraySize(jh), 2);
    cJSON *hc = cJSON_GetObjectItem(jh, "conv"), *hf = cJSON_GetObjectItem(jh, "fc");
    CHECK(!strcmp(cJSON_GetArrayItem(hc, 0)->valuestring, "lop"));
    cJSON *ends = cJSON_GetArrayItem(hc, 1), *devs = cJSON_GetArrayItem(hc, 2);
    CHECK_I64(cJSON_GetArraySize(ends), 3);
    CHECK_I64(cJSON_GetArrayItem(ends, 0)->valueint, 4);
    CHECK_I64(cJSON_GetArrayItem(ends, 1)->valueint, 12);
    CHECK_I64(cJSON_GetArrayItem(ends, 2)->valueint, 20);
    CHECK(!strcmp(cJSON_GetArrayItem(devs, 0)->valuestring, "b2_cpu0"));
    CHECK(!strcmp(cJSON_GetArrayItem(devs, 2)->valuestring, "b1_cpu0"));
    ends = cJSON_GetArrayItem(hf, 1);
    CHECK_I64(cJSON_GetArrayItem(ends, 2)->valueint, 6);
    CHECK_I64(cJSON_GetArrayItem(ends, 3)->valueint, 10);
    cJSON_Delete(jm);
    cJSON_Delete(jh);
    free(tm);
    free(th);
    mapping *back = mapping_import_autodice(path("ad/mapping.json"), path("ad/horizontal.json"),
                                            path("ad/autodice-devices.json"), t, p, err);
    CHECK(back && mapping_equal(back, m));
    mapping_free(back);
    /* the folder as --mapping takes it */
    back = mapping_load(path("ad"), t, p, err);
    CHECK(back && mapping_equal(back, m));
    mapping_free(back);
    /* A vertical-only AutoDiCE mapping needs no horizontal.json. */
    mapping *single = mapping_new(t->n, 5);
    mapping_set_single(single, t, 3);
    mkdir(path("ad1"), 0755);
    CHECK(mapping_export_autodice(single, t, p, path("ad1"), warn, err) == 0);
    back = mapping_import_autodice(path("ad1/mapping.json"), NULL, NULL, t, p, err);
    CHECK(back && mapping_equal(back, single));
    mapping_free(back);
    mapping_free(single);
    /* Export into a missing folder fails (-2: the path cannot be used) and
     * leaves nothing behind; so does a folder where horizontal.json must go. */
    CHECK(mapping_export_autodice(m, t, p, "/nonexistent-dir", warn, err) == -2);
    TERR(err, "/nonexistent-dir", "does not exist");
    mkdir(path("ad2"), 0755);
    mkdir(path("ad2/horizontal.json"), 0755);
    CHECK(mapping_export_autodice(m, t, p, path("ad2"), warn, err) == -2);
    TERR(err, "horizontal.json", "folder");
    CHECK(access(path("ad2/mapping.json"), F_OK) != 0);
    CHECK(access(path("ad2/autodice-devices.json"), F_OK) != 0);
    rmdir(path("ad2/horizontal.json"));
    CHECK(mapping_save(m, t, p, "/nonexistent-dir/m.json", err) == -1);
    mapping_free(m);
    platform_free(p);
    net_free(t);
}

/* Exact round trips over random genomes of every encoding. */
static void test_round_trips(void)
{
    const char *nets[] = {"toy6", "branchy", "alexnet-bvlc", "resnet50", "densenet121", NULL};
    const int ndevs[] = {2, 5, 16};
    char err[BASE_ERRLEN];
    uint64_t s = 99;
    long trips = 0;
    mkdir(path("rt"), 0755);
    for (int ni = 0; nets[ni]; ni++) {
        net *n = zoo(nets[ni]);
        for (int di = 0; di < 3; di++) {
            platform *p = tplatform(ndevs[di]);
            for (int k = 0; k < 3; k++) {
                chrom *c = chrom_new(n, ndevs[di], (chrom_kind)k, 2, NET_SPLIT_DEFAULT, err);
                int len = chrom_length(c);
                int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len);
                int *g = malloc(sizeof(int) * len);
                chrom_bounds(c, lo, hi);
                mapping *m = mapping_new(n->n, ndevs[di]);
                int reps = n->n > 100 ? 3 : 20;
                for (int r = 0; r < reps; r++) {
                    if (r & 1) tsparse_genome(c, lo, hi, g, &s);
                    else trandom_genome(c, lo, hi, g, &s);
                    CHECK(chrom_decode(c, g, len, m, err) == 0);
                    char *txt = mapping_to_json(m, n, p);
                    mapping *b = mapping_from_json(txt, "roundtrip", n, p, err);
                    if (!b || !mapping_equal(b, m)) {
                        fprintf(stderr, "%s: JSON round trip differs (%s)\n", nets[ni],
                                b ? "different" : err);
                        check_failures++;
                    }
                    mapping_free(b);
                    free(txt);
                    if (r == 0) { /* through files too */
                        CHECK(mapping_save(m, n, p, path("rt.json"), err) == 0);
                        b = mapping_load(path("rt.json"), n, p, err);
                        CHECK(b && mapping_equal(b, m));
                        mapping_free(b);
                    }
                    base_inputs_forget(); /* each round trip is a command of its own */
                    char warn[BASE_ERRLEN];
                    CHECK(mapping_export_autodice(m, n, p, path("rt"), warn, err) == 0);
                    /* with the translation file and without (by board and kind) */
                    b = mapping_import_autodice(path("rt/mapping.json"), path("rt/horizontal.json"),
                                                r & 1 ? path("rt/autodice-devices.json") : NULL, n,
                                                p, err);
                    if (!b || !mapping_equal(b, m)) {
                        fprintf(stderr, "%s: AutoDiCE round trip differs (%s)\n", nets[ni],
                                b ? "different" : err);
                        check_failures++;
                    }
                    mapping_free(b);
                    trips++;
                }
                mapping_free(m);
                free(lo);
                free(hi);
                free(g);
                chrom_free(c);
            }
            platform_free(p);
        }
        net_free(n);
    }
    printf("%ld round trips\n", trips);
}

/* One bad file per error: NULL, and the message names what it must. */
static void bad_json(int line, const net *n, const platform *p, const char *body, const char *a,
                     const char *b)
{
    char err[BASE_ERRLEN] = "";
    put(path("bad.json"), body);
    mapping *m = mapping_load(path("bad.json"), n, p, err);
    if (m) {
        fprintf(stderr, "line %d: bad mapping accepted: %s\n", line, body);
        check_failures++;
        mapping_free(m);
        return;
    }
    terr_has(__FILE__, line, err, path("bad.json"), a, b, (const char *)NULL);
    if (strchr(err, '\n')) {
        fprintf(stderr, "line %d: error has several lines\n", line);
        check_failures++;
    }
}
#define BAD(body, a, b) bad_json(__LINE__, t, p, body, a, b)

#define HEAD "{\"format\":\"dse-mapping\",\"version\":1,\"layers\":{"
#define REST "\"relu\":\"d0\",\"pool\":\"d0\",\"flatten\":\"d0\",\"fc\":\"d1\",\"softmax\":\"d1\"}}"

static void test_bad_json(void)
{
    net *t = zoo("toy6");
    platform *p = tplatform(3);
    char err[BASE_ERRLEN];
    put(path("good.json"), HEAD "\"conv\":[[\"d2\",10,10],[\"d0\",0,10]]," REST);
    mapping *m = mapping_load(path("good.json"), t, p, err);
    CHECK(m != NULL); /* slices in any order in the file; sorted by channel */
    if (m) {
        CHECK_I64(mapping_slices(m, 0)[0].dev, 0);
        CHECK_I64(mapping_slices(m, 0)[1].c0, 10);
    }
    mapping_free(m);
    BAD(HEAD "\"conv\":\"d0\",\"conv9\":\"d0\"," REST, "\"conv9\"", "not in network");
    /* a name holding a newline or escape comes back inert, on one line
     * (the JSON fuzzer's finding: "flatt\n" in a mapping's keys) */
    BAD(HEAD "\"conv\":\"d0\",\"co\\nnv\\u001b[2J\":\"d0\"," REST, "\"co?nv?[2J\"", "not in network");
    BAD(HEAD "\"conv\":\"d7\"," REST, "\"conv\"", "\"d7\"");
    BAD(HEAD "\"conv\":[[\"d0\",0,10],[\"d9\",10,10]]," REST, "\"conv\"", "\"d9\"");
    BAD(HEAD "\"conv\":[[\"d0\",0,10],[\"d1\",10,11]]," REST, "\"conv\"", "outside");
    BAD(HEAD "\"conv\":[[\"d0\",-1,10]]," REST, "\"conv\"", "outside");
    BAD(HEAD "\"conv\":[[\"d0\",0,0],[\"d1\",0,20]]," REST, "\"conv\"", "outside");
    BAD(HEAD "\"conv\":[[\"d0\",0,12],[\"d1\",10,10]]," REST, "\"conv\"", "twice");
    BAD(HEAD "\"conv\":[[\"d0\",0,8],[\"d1\",10,10]]," REST, "\"conv\"", "8..9");
    BAD(HEAD "\"conv\":[[\"d0\",0,8],[\"d1\",8,10]]," REST, "\"conv\"", "18..19");
    BAD(HEAD "\"conv\":[[\"d0\",0,8],[\"d0\",8,12]]," REST, "\"conv\"", "two slices");
    BAD(HEAD "\"conv\":[[\"d0\",0,5],[\"d1\",5,5],[\"d2\",10,5],[\"d0\",15,5]]," REST, "\"conv\"",
        "more slices");
    BAD(HEAD "\"conv\":\"d0\",\"relu\":[[\"d0\",0,10],[\"d1\",10,10]],\"pool\":\"d0\","
        "\"flatten\":\"d0\",\"fc\":\"d1\",\"softmax\":\"d1\"}}", "\"relu\"", "cannot be split");
    BAD(HEAD REST, "\"conv\"", "missing");
    BAD(HEAD "\"conv\":\"d0\",\"conv\":\"d1\"," REST, "\"conv\"", "duplicate");
    BAD(HEAD "\"conv\":[\"d0\",0,20]," REST, "\"conv\"", "[device, first_channel");
    BAD(HEAD "\"conv\":[[\"d0\",0.5,20]]," REST, "\"conv\"", "[device, first_channel");
    BAD(HEAD "\"conv\":[]," REST, "\"conv\"", "non-empty");
    BAD(HEAD "\"conv\":7," REST, "\"conv\"", "device name");
    BAD("{\"format\":\"dse-network\",\"layers\":{}}", "dse-mapping", "format");
    BAD("{\"format\":\"dse-mapping\",\"version\":2,\"layers\":{}}", "version", "2");
    BAD("{\"format\":\"dse-mapping\",\"layers\":[]}", "layers", "object");
    BAD("{\"format\":\"dse-mapping\",\"lay\":{}}", "unknown key", "lay");
    BAD(HEAD "\"conv\":\"d0\",", "malformed", "JSON");
    CHECK(mapping_load(path("does-not-exist.json"), t, p, err) == NULL);
    TERR(err, "does-not-exist.json");
    platform_free(p);
    net_free(t);
}

static void bad_autodice(int line, const net *n, const platform *p, const char *mj,
                         const char *hj, const char *file, const char *a, const char *b)
{
    char err[BASE_ERRLEN] = "";
    put(path("bm.json"), mj);
    if (hj) put(path("bh.json"), hj);
    mapping *m = mapping_import_autodice(path("bm.json"), hj ? path("bh.json") : NULL, NULL, n, p,
                                         err);
    if (m) {
        fprintf(stderr, "line %d: bad AutoDiCE files accepted\n", line);
        check_failures++;
        mapping_free(m);
        return;
    }
    terr_has(__FILE__, line, err, path(file), a, b, (const char *)NULL);
}
#define BADA(mj, hj, file, a, b) bad_autodice(__LINE__, t, p, mj, hj, file, a, b)

static void test_bad_autodice(void)
{
    net *t = zoo("toy6");
    platform *p = tplatform(3);
    char err[BASE_ERRLEN];
    const char *mj = "{\"d0\":[\"conv\",\"relu\",\"pool\",\"flatten\",\"fc\"],"
                     "\"d1\":[\"conv\",\"fc\",\"softmax\"]}";
    const char *hj = "{\"conv\":[\"lop\",[6,65535],[\"d1\",\"d0\"]],"
                     "\"fc\":[\"lop\",[3,65535],[\"d0\",\"d1\"]]}";
    put(path("gm.json"), mj);
    put(path("gh.json"), hj);
    mapping *m = mapping_import_autodice(path("gm.json"), path("gh.json"), NULL, t, p, err);
    CHECK(m != NULL);
    if (m) {
        const map_slice *s = mapping_slices(m, 0);
        CHECK(mapping_nslices(m, 0) == 2 && s[0].dev == 1 && s[0].nc == 6 && s[1].dev == 0 &&
          s[1].c0 == 6 && s[1].nc == 14);
        CHECK_I64(mapping_slices(m, 5)[0].dev, 1);
    }
    mapping_free(m);
    BADA("{\"d7\":[\"conv\"]}", hj, "bm.json", "\"d7\"", "not in platform");
    BADA("{\"d0\":[\"conv\",\"relu\",\"pool\",\"flatten\",\"fc\",\"xx\"],\"d1\":[\"conv\",\"fc\","
         "\"softmax\"]}", hj, "bm.json", "\"xx\"", "not in network");
    BADA("{\"d0\":[\"conv\",\"relu\",\"pool\",\"fc\"],\"d1\":[\"conv\",\"fc\",\"softmax\"]}", hj,
         "bm.json", "\"flatten\"", "missing");
    BADA("{\"d0\":[\"conv\",\"relu\",\"pool\",\"flatten\",\"fc\",\"relu\"],\"d1\":[\"conv\",\"fc\","
         "\"softmax\"]}", hj, "bm.json", "\"relu\"", "twice");
    BADA(mj, "{\"fc\":[\"lop\",[3,65535],[\"d0\",\"d1\"]]}", "bm.json", "\"conv\"",
         "no split");
    BADA(mj, NULL, "bm.json", "\"conv\"", "no split");
    BADA(mj, "{\"conv\":[\"lop\",[6,65535],[\"d1\",\"d2\"]],\"fc\":[\"lop\",[3,65535],[\"d0\","
         "\"d1\"]]}", "bm.json", "\"conv\"", "d2");
    BADA(mj, "{\"conv\":[\"lop\",[6,9,65535],[\"d1\",\"d0\",\"d2\"]],\"fc\":[\"lop\",[3,65535],"
         "[\"d0\",\"d1\"]]}", "bm.json", "\"conv\"", "d2");
    BADA(mj, "{\"conv\":[\"lop\",[65535],[\"d1\"]],\"fc\":[\"lop\",[3,65535],[\"d0\",\"d1\"]]}",
         "bm.json", "\"conv\"", "2 devices");
    BADA(mj, "{\"convx\":[\"lop\",[6,65535],[\"d1\",\"d0\"]]}", "bh.json", "\"convx\"",
         "not in network");
    BADA(mj, "{\"conv\":[\"lip\",[6,65535],[\"d1\",\"d0\"]]}", "bh.json", "\"conv\"", "lip");
    BADA(mj, "{\"conv\":[\"lop\",[6],[\"d1\",\"d0\"]]}", "bh.json", "\"conv\"", "end channels");
    BADA(mj, "{\"conv\":[\"lop\",[25,65535],[\"d1\",\"d0\"]]}", "bh.json", "\"conv\"", "25");
    BADA(mj, "{\"conv\":[\"lop\",[0,65535],[\"d1\",\"d0\"]]}", "bh.json", "\"conv\"", "end channel 0");
    BADA(mj, "{\"conv\":[\"lop\",[6,19],[\"d1\",\"d0\"]]}", "bh.json", "\"conv\"", "count 20");
    BADA(mj, "{\"conv\":[\"lop\",[6,65535],[\"d1\",\"d9\"]]}", "bh.json", "\"conv\"", "\"d9\"");
    BADA(mj, "{\"conv\":[\"lop\",[6,65535],[\"d1\",\"d1\"]]}", "bh.json", "\"conv\"", "twice");
    BADA(mj, "{\"relu\":[\"lop\",[6,65535],[\"d1\",\"d0\"]]}", "bh.json", "\"relu\"",
         "cannot be split");
    BADA(mj, "{\"conv\":\"d0\"}", "bh.json", "\"conv\"", "lop");
    BADA(mj, "[1,2]", "bh.json", "bh.json", "object");
    /* AutoDiCE keys: <host>_cpu|arm<one digit per core> or <host>_gpu[N],
     * against boards b0..b2 of one 1-core CPU each. */
    const char *mk = "{\"b0_cpu0\":[\"conv\",\"relu\",\"pool\",\"flatten\",\"fc\"],"
                     "\"b1_arm0\":[\"conv\",\"fc\",\"softmax\"]}";
    put(path("km.json"), mk);
    put(path("kh.json"), "{\"conv\":[\"lop\",[6,20],[\"b1_arm0\",\"b0_cpu0\"]],"
                         "\"fc\":[\"lop\",[3,10],[\"b0_cpu0\",\"d1\"]]}");
    m = mapping_import_autodice(path("km.json"), path("kh.json"), NULL, t, p, err);
    CHECK(m != NULL);
    mapping *same = mapping_import_autodice(path("gm.json"), path("gh.json"), NULL, t, p, err);
    CHECK(m && same && mapping_equal(m, same));
    mapping_free(same);
    mapping_free(m);
#define KEY(k, a, b) BADA("{\"" k "\":[\"conv\",\"relu\",\"pool\",\"flatten\",\"fc\",\"softmax\"]}", \
                          NULL, "bm.json", a, b)
    KEY("b9_cpu0", "\"b9_cpu0\"", "no device on host b9");
    KEY("b0_cpu1", "core 1", "1 CPU core");
    KEY("b0_cpu01", "core 1", "1 CPU core");
    KEY("b0_gpu", "\"b0_gpu\"", "0 GPUs");
    KEY("b0_cpu00", "core 0", "twice");
    KEY("b0_xpu0", "\"b0_xpu0\"", "AutoDiCE key");
    KEY("b0_cpu0_x", "\"b0_cpu0_x\"", "one \"_\"");
    KEY("_cpu0", "\"_cpu0\"", "AutoDiCE key");
    KEY("b0_cpu", "\"b0_cpu\"", "AutoDiCE key");
    KEY("b0_cpu0x", "\"b0_cpu0x\"", "AutoDiCE key");
    KEY("nokey", "\"nokey\"", "not in platform");
    BADA("{\"b0_cpu0\":[\"conv\",\"relu\",\"pool\",\"flatten\"],\"d0\":[\"fc\",\"softmax\"]}",
         NULL, "bm.json", "\"b0_cpu0\" and \"d0\"", "both device d0");
    BADA(mj, "{\"conv\":[\"lop\",[6,20],[\"b1_cpu0\",\"b7_cpu0\"]]}", "bh.json", "\"conv\"",
         "host b7");
    BADA("{\"d0\":\"conv\"}", NULL, "bm.json", "\"d0\"", "list");
    BADA("{\"d0\":[\"conv\"", NULL, "bm.json", "malformed", "JSON");
    platform_free(p);
    net_free(t);
}

/* The three examples of docs/mapping-format.md, in order: our format,
 * mapping.json, horizontal.json; all must be the mapping the hybrid
 * chromosome decodes from the thesis' figure 11. */
static void test_doc_examples(void)
{
    char err[BASE_ERRLEN];
    char *doc = ju_read_file(DSE_SOURCE_DIR "/docs/mapping-format.md", err);
    if (!doc) {
        fprintf(stderr, "%s\n", err);
        check_failures++;
        return;
    }
    const char *names[3] = {"doc.json", "docm.json", "doch.json"};
    char *q = doc;
    for (int b = 0; b < 3; b++) {
        char *start = strstr(q, "```json\n"), *end = start ? strstr(start + 8, "```") : NULL;
        if (!end) {
            fprintf(stderr, "docs/mapping-format.md: json block %d missing\n", b + 1);
            check_failures++;
            free(doc);
            return;
        }
        *end = 0;
        put(path(names[b]), start + 8);
        q = end + 3;
    }
    free(doc);
    net *t = zoo("toy6");
    platform *p = tplatform(5);
    chrom *c = chrom_new(t, 5, CHROM_HYBRID, 5, NET_SPLIT_DEFAULT, err);
    const int g[25] = {0, 0, 1, 2, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 2, 2, 1, 0, 0, 0, 2, 0, 0, 0, 0};
    mapping *m = mapping_new(t->n, 5);
    CHECK(chrom_decode(c, g, 25, m, err) == 0);
    mapping *a = mapping_load(path(names[0]), t, p, err);
    if (!a) fprintf(stderr, "%s\n", err);
    CHECK(a && mapping_equal(a, m));
    mapping *b = mapping_import_autodice(path(names[1]), path(names[2]), NULL, t, p, err);
    if (!b) fprintf(stderr, "%s\n", err);
    CHECK(b && mapping_equal(b, m));
    mapping *e = example(t);
    CHECK(mapping_equal(e, m));
    mapping_free(e);
    mapping_free(a);
    mapping_free(b);
    mapping_free(m);
    chrom_free(c);
    platform_free(p);
    net_free(t);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dse-mapio-XXXXXX");
    if (!mkdtemp(dir)) perror("mkdtemp"), exit(2);
    test_validate();
    test_content();
    test_round_trips();
    test_bad_json();
    test_bad_autodice();
    test_doc_examples();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return check_done("test_mapping_io");
}
