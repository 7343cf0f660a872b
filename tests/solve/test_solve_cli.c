/* test_solve_cli.c -- dse solve, dse run --init and the "supports" lists
 * through the real program:
 *  - every method writes a mapping that dse eval reads and scores exactly
 *    as dse solve reported (same plan, same model);
 *  - bad input is one line on stderr with exit 2 (unknown method, a method
 *    that does not apply, an unknown kind in "supports", a mapping file
 *    placing a layer on a device that does not support it), and nothing
 *    half-written;
 *  - dse run --init prints each seed's distance, stores the genomes in the
 *    configuration, and generation 0 holds them right after the fastest
 *    device's genome; refused --init leaves no database;
 *  - a hybrid campaign's seed line says when the solver's mapping cuts a
 *    layer into more parts than --splits gives one (the count taken from
 *    dse solve's own mapping file), and not when --splits is that large.
 */
#include "check.h"
#include "run.h"
#include "tfile.h"

#include <cJSON.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

static cJSON *json_of(const char *text)
{
    cJSON *o = cJSON_Parse(text);
    CHECK(o != NULL, "not JSON: %s", text);
    return o;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void methods(void)
{
    static const struct {
        const char *method, *net, *plat;
    } cases[] = {{"single", "branchy", "local-2"},         {"greedy", "resnet50", "jetson-nx-4-cpudla"},
                 {"elim", "alexnet-bvlc", "local-4"},      {"elim", "mobilenetv2", "jetson-nx-4-cpudla"},
                 {"cluster", "branchy", "local-2"},        {"subgraph", "resnet50", "jetson-nx-4-cpudla"},
                 {"memory", "resnet50", "jetson-nx-8-cpugpu"}, {"memory", "vgg16", "jetson-nx-8-cpu"}};
    char *map = scratch_path("m.json");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_result r, e;
        unlink(map);
        const char *a[] = {"solve", "--method", cases[i].method, "--network", cases[i].net, "--platform",
                           cases[i].plat, "--json", "-o", map, NULL};
        run_dse(&r, a);
        CHECK(r.status == 0, "%s: %s", cases[i].method, r.err);
        cJSON *o = json_of(r.out);
        const char *b[] = {"eval", "--network", cases[i].net, "--platform", cases[i].plat, "--mapping", map, "--json", NULL};
        run_dse(&e, b);
        CHECK(e.status == 0, "%s", e.err);
        cJSON *x = json_of(e.out);
        if (o && x) {
            const cJSON *ob = cJSON_GetObjectItemCaseSensitive(x, "objectives");
            const cJSON *src = ob ? ob : x;
            CHECK(num(o, "latency_ms") == num(src, "latency_ms"), "%s: solve %.17g, eval %.17g", cases[i].method,
                  num(o, "latency_ms"), num(src, "latency_ms"));
            CHECK(num(o, "energy_j") == num(src, "energy_j"));
            CHECK(num(o, "memory_mb") == num(src, "memory_mb"));
            CHECK(num(o, "seconds") >= 0 && num(o, "latency_ms") > 0 && num(o, "energy_j") > 0);
            CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "stats")));
        }
        cJSON_Delete(o), cJSON_Delete(x);
        run_free(&r), run_free(&e);
    }
    free(map);
    /* text output names the estimate for elim */
    run_result r;
    const char *a[] = {"solve", "--method", "elim", "--network", "vgg16", "--platform", "local-2", NULL};
    run_dse(&r, a);
    CHECK(r.status == 0);
    CHECK(strstr(r.out, "additive optimum") && strstr(r.out, "simulated / estimate"), "%s", r.out);
    run_free(&r);
}

static void bad_input(void)
{
    run_result r;
    char *map = scratch_path("bad.json"), *plat = scratch_path("plat.json");
    const char *a1[] = {"solve", "--method", "magic", "--network", "toy6", "--platform", "local-2", NULL};
    run_dse(&r, a1);
    CHECK(r.status == 2 && strstr(r.err, "magic") && count_lines(r.err) == 1, "%s", r.err);
    run_free(&r);
    const char *a2[] = {"solve", "--method", "subgraph", "--network", "toy6", "--platform", "local-2", "-o", map, NULL};
    unlink(map);
    run_dse(&r, a2);
    CHECK(r.status == 2 && strstr(r.err, "supports"), "%s", r.err);
    CHECK(access(map, F_OK) != 0); /* nothing written */
    run_free(&r);
    const char *a3[] = {"solve", "--network", "toy6", "--platform", "local-2", NULL};
    run_dse(&r, a3);
    CHECK(r.status == 2 && strstr(r.err, "--method"));
    run_free(&r);
    /* an unknown kind in supports */
    write_text(plat, "{\"format\":\"dse-platform\",\"devices\":[{\"name\":\"a\",\"board\":\"x\",\"freq_mhz\":1,"
                     "\"cores\":1,\"memory_mb\":1,\"idle_w\":0,\"busy_w\":1,\"supports\":[\"Conv\",\"Warp\"]}],"
                     "\"links\":{}}");
    const char *a4[] = {"platform", "show", plat, NULL};
    run_dse(&r, a4);
    CHECK(r.status == 2 && strstr(r.err, "Warp") && strstr(r.err, "device a") && count_lines(r.err) == 1, "%s", r.err);
    run_free(&r);
    /* no device runs Softmax: solve refuses, naming the layer */
    write_text(plat, "{\"format\":\"dse-platform\",\"devices\":[{\"name\":\"a\",\"board\":\"x\",\"freq_mhz\":1,"
                     "\"cores\":1,\"memory_mb\":1,\"idle_w\":0,\"busy_w\":1,\"supports\":[\"Conv\",\"ReLU\","
                     "\"MaxPool\",\"Flatten\",\"FC\"]}],\"links\":{}}");
    const char *a5[] = {"solve", "--method", "single", "--network", "toy6", "--platform", plat, NULL};
    run_dse(&r, a5);
    CHECK(r.status == 2 && strstr(r.err, "softmax") && strstr(r.err, "no device supports"), "%s", r.err);
    run_free(&r);
    /* a mapping putting a FC layer on the DLA is refused by dse eval */
    write_text(map, "{\"format\":\"dse-mapping\",\"layers\":{\"conv\":\"nx0-dla\",\"relu\":\"nx0-dla\","
                    "\"pool\":\"nx0-dla\",\"flatten\":\"nx0-cpu\",\"fc\":\"nx0-dla\",\"softmax\":\"nx0-cpu\"}}");
    const char *a6[] = {"eval", "--network", "toy6", "--platform", "jetson-nx-4-cpudla", "--mapping", map, NULL};
    run_dse(&r, a6);
    CHECK(r.status == 2 && strstr(r.err, "\"fc\"") && strstr(r.err, "nx0-dla") && strstr(r.err, "does not support"),
          "%s", r.err);
    run_free(&r);
    /* an -o that cannot be used (a missing folder, a folder, an input file):
     * one line, exit 2, before the solver runs (and before its warning about
     * built-in coefficients), the input untouched */
    char *nodir = scratch_path("no-such-folder/m.json"), *folder = scratch_path("");
    CHECK(write_local_platform(plat, 2, 0) == 0);
    size_t len0 = 0;
    char *before = tfile_read(plat, &len0);
    const char *outs[3] = {nodir, folder, plat};
    const char *says[3] = {"does not exist", "folder", "input"};
    for (int i = 0; i < 3; i++) {
        const char *a7[] = {"solve", "--method", "single", "--network", "toy6", "--platform", plat, "-o", outs[i], NULL};
        run_dse(&r, a7);
        CHECK(r.status == 2 && count_lines(r.err) == 1 && strstr(r.err, says[i]), "-o %s: exit %d: %s", outs[i],
              r.status, r.err);
        run_free(&r);
    }
    size_t len1 = 0;
    char *after = tfile_read(plat, &len1);
    CHECK(before && after && len0 == len1 && !memcmp(before, after, len0), "the platform file changed");
    free(before), free(after);
    free(nodir), free(folder);
    free(map), free(plat);
}

static void init(void)
{
    run_result r;
    char *db = scratch_path("c.db");
    unlink(db);
    const char *bad[][24] = {
        {"run", "--network", "toy6", "--platform", "local-2", "--init", "single,magic", "--db", db, "--quiet", NULL},
        {"run", "--network", "toy6", "--platform", "local-2", "--init", "subgraph", "--db", db, "--quiet", NULL},
        /* more distinct seed genomes than --pop (toy6's planners agree:
         * their copies count once, so four of them fit in 4) */
        {"run", "--network", "resnet50", "--platform", "jetson-nx-4-cpudla", "--init",
         "single,greedy,elim,cluster,memory,subgraph", "--pop", "4", "--db", db, "--quiet", NULL},
        {"run", "--network", "toy6", "--platform", "local-2", "--init", "elim,elim", "--db", db, "--quiet", NULL},
    };
    for (int i = 0; i < 4; i++) {
        run_dse(&r, bad[i]);
        CHECK(r.status == 2 && count_lines(r.err) == 1, "case %d: exit %d: %s", i, r.status, r.err);
        CHECK(access(db, F_OK) != 0, "case %d left a database", i);
        run_free(&r);
    }
    const char *ok[] = {"run", "--network", "resnet50", "--platform", "jetson-nx-4-cpudla", "--chromosome", "hybrid",
                        "--init", "single,elim,subgraph", "--pop", "8", "--gens", "2", "--db", db, "--quiet", NULL};
    run_dse(&r, ok);
    CHECK(r.status == 0, "%s", r.err);
    CHECK(strstr(r.out, "seed single") && strstr(r.out, "seed elim") && strstr(r.out, "seed subgraph"), "%s", r.out);
    run_free(&r);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st;
    char *cfg = NULL;
    if (sqlite3_prepare_v2(h, "SELECT config FROM campaigns WHERE id = 1", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        cfg = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    cJSON *c = cfg ? json_of(cfg) : NULL;
    const cJSON *in = c ? cJSON_GetObjectItemCaseSensitive(c, "init") : NULL;
    CHECK(cJSON_GetArraySize(in) == 3, "config: %s", cfg ? cfg : "(none)");
    /* generation 0: the fastest device's genome, then the seeds in order */
    int k = 0;
    for (const cJSON *s = in ? in->child : NULL; s; s = s->next, k++) {
        char *want = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(s, "genome"));
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT genome FROM individuals WHERE campaign = 1 AND gen = 0 AND idx = %d", k + 1);
        char *got = NULL;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            got = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        /* the database stores genomes as "g0 g1 ..." or JSON: compare the numbers */
        int same = got && want;
        for (const char *p = want, *q = got; same && (*p || *q);) {
            while (*p && (*p < '0' || *p > '9')) p++;
            while (*q && (*q < '0' || *q > '9')) q++;
            long x = strtol(p, (char **)&p, 10), y = strtol(q, (char **)&q, 10);
            same = x == y;
            while (*p && (*p < '0' || *p > '9')) p++;
            while (*q && (*q < '0' || *q > '9')) q++;
            if (!*p != !*q) same = 0;
        }
        CHECK(same, "seed %d: stored %s, generation 0 has %s", k, want, got ? got : "(none)");
        free(want), free(got);
        double d = num(s, "distance");
        CHECK(d >= 0 && d <= 1);
    }
    cJSON_Delete(c);
    free(cfg);
    sqlite3_close(h);
    free(db);
}

/* The most parts any layer of a mapping file is cut into: a layer's value
 * is a device name (one part) or a list of slices. */
static int max_parts(const char *path)
{
    char *t = tfile_read(path, NULL);
    cJSON *o = t ? json_of(t) : NULL, *ls = cJSON_GetObjectItemCaseSensitive(o, "layers");
    int k = 0;
    for (const cJSON *l = ls ? ls->child : NULL; l; l = l->next) {
        int p = cJSON_IsArray(l) ? cJSON_GetArraySize(l) : 1;
        if (p > k) k = p;
    }
    cJSON_Delete(o);
    free(t);
    return k;
}

static void splits_hint(void)
{
    run_result r;
    char *map = scratch_path("elim.json"), *db = scratch_path("h.db");
    const char *sv[] = {"solve", "--method", "elim", "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpu",
                        "-o", map, NULL};
    run_dse(&r, sv);
    CHECK(r.status == 0, "%s", r.err);
    run_free(&r);
    int k = max_parts(map);
    CHECK(k > 2, "elim's mapping of alexnet-bvlc on 8 devices cuts no layer into more than 2 parts (%d)", k);
    char want[128], ks[16];
    snprintf(want, sizeof want, "; it cuts a layer into %d parts, more than --splits 2 allows)", k);
    snprintf(ks, sizeof ks, "%d", k);
    const char *splits[2] = {"2", ks};
    for (int i = 0; i < 2; i++) {
        unlink(db);
        const char *a[] = {"run", "--network", "alexnet-bvlc", "--platform", "jetson-nx-8-cpu", "--init", "elim",
                           "--splits", splits[i], "--pop", "8", "--gens", "0", "--db", db, "--quiet", NULL};
        run_dse(&r, a);
        CHECK(r.status == 0, "%s", r.err);
        const char *line = strstr(r.out, "seed elim");
        CHECK(line != NULL, "%s", r.out);
        if (line && i == 0) CHECK(strstr(line, want) != NULL, "--splits 2: want \"%s\" in %s", want, line);
        if (line && i == 1) CHECK(strstr(line, "more than --splits") == NULL, "--splits %d: %s", k, line);
        run_free(&r);
    }
    free(map), free(db);
}

int main(void)
{
    methods();
    bad_input();
    init();
    splits_hint();
    scratch_cleanup();
    return check_done("test_solve_cli");
}
