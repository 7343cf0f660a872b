/* test_onnx_hostile.c -- ONNX files changed the way an attacker would
 * (issue 15), made from a model dse itself exported (so the test needs no
 * Python onnx): each is refused by `dse net import` with exit 2 and one
 * line naming the file and the problem, and no output is left.
 *
 *   - an external-data offset of 2^63-1 (was clamped and overflowed the
 *     range check: UBSan, and the release build accepted the file);
 *   - an offset and a length that each fit the file but not together;
 *   - a node attribute given twice (was resolved to the first silently);
 *   - a node name with an escape sequence (names reach the terminal).
 * A control (the untouched external-data model) must import.
 */
#include "check.h"
#include "run.h"

#include <onnx.pb-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];

static char *tp(const char *name)
{
    static char b[16][300];
    static int k;
    char *p = b[k++ % 16];
    snprintf(p, 300, "%s/%s", tmp, name);
    return p;
}

static Onnx__ModelProto *load(const char *path)
{
    size_t len = 0;
    char *b = tfile_read(path, &len);
    Onnx__ModelProto *m = b ? onnx__model_proto__unpack(NULL, len, (const uint8_t *)b) : NULL;
    free(b);
    return m;
}

static void save(const Onnx__ModelProto *m, const char *path)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *b = malloc(n);
    onnx__model_proto__pack(m, b);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
    free(b);
}

/* dse net import MODEL -o NAME.json --weights NAME.bin; returns the exit
 * code, stderr in err (one buffer). */
static int import(const char *model, const char *name, char *err, size_t n)
{
    char cmd[1500], wname[200];
    snprintf(wname, sizeof wname, "%s.bin", name);
    snprintf(cmd, sizeof cmd, "%s net import %s -o %s --weights %s", DSE_BIN, model, tp(name),
             tp(wname));
    run_result r;
    int rc = run_sh(&r, cmd);
    snprintf(err, n, "%s", r.err ? r.err : "");
    run_free(&r);
    return rc;
}

static void refused(const char *model, const char *want)
{
    char err[4096];
    int rc = import(model, "out.json", err, sizeof err);
    CHECK(rc == 2 && count_lines(err) == 1 && strstr(err, model) && strstr(err, want),
          "%s: exit %d, stderr %s(wanted \"%s\")", model, rc, err, want);
    CHECK(access(tp("out.json"), F_OK) != 0 && access(tp("out.json.bin"), F_OK) != 0,
          "%s: an output was left", model);
}

/* The tensor externalise() changed and what it held (restored before the
 * model is freed: the unpacked allocator must free only its own). */
static Onnx__TensorProto *g_t, g_saved;

static void restore(void)
{
    if (g_t) *g_t = g_saved;
    g_t = NULL;
}

/* The first initializer with raw data moved to DATA (an external file of
 * the model's folder) at offset off, length len (NULL: none given). */
static void externalise(Onnx__ModelProto *m, const char *off, const char *len)
{
    Onnx__GraphProto *g = m->graph;
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        if (!t->has_raw_data && !t->n_float_data) continue;
        g_t = t;
        g_saved = *t;
        size_t bytes = t->has_raw_data ? t->raw_data.len : t->n_float_data * 4;
        FILE *f = fopen(tp("data.bin"), "wb");
        const void *src = t->has_raw_data ? (const void *)t->raw_data.data : (const void *)t->float_data;
        CHECK(f && fwrite(src, 1, bytes, f) == bytes);
        if (f) fclose(f);
        t->has_raw_data = 0;
        t->n_float_data = 0;
        static Onnx__StringStringEntryProto e[3];
        static Onnx__StringStringEntryProto *ep[3];
        static const char *keys[3] = {"location", "offset", "length"};
        const char *vals[3] = {"data.bin", off, len};
        size_t k = 0;
        for (int j = 0; j < 3; j++) {
            if (!vals[j]) continue;
            onnx__string_string_entry_proto__init(&e[k]);
            e[k].key = (char *)keys[j];
            e[k].value = (char *)vals[j];
            ep[k] = &e[k];
            k++;
        }
        t->n_external_data = k;
        t->external_data = ep;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        return;
    }
    CHECK(0, "no initializer with data");
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/dse-test-onnx-hostile-XXXXXX");
    if (!mkdtemp(tmp)) return 1;
    char err[4096];
    CHECK(run_shf("%s net export toy6 -o %s", DSE_BIN, tp("toy6.onnx")) == 0);

    /* control: external data that fits imports */
    Onnx__ModelProto *m = load(tp("toy6.onnx"));
    CHECK(m != NULL);
    if (!m) return check_done("test_onnx_hostile");
    externalise(m, "0", NULL);
    save(m, tp("ext_ok.onnx"));
    restore();
    CHECK(import(tp("ext_ok.onnx"), "ok.json", err, sizeof err) == 0, "control: %s", err);
    onnx__model_proto__free_unpacked(m, NULL);

    m = load(tp("toy6.onnx"));
    externalise(m, "9223372036854775807", NULL);
    save(m, tp("ext_max_offset.onnx"));
    restore();
    onnx__model_proto__free_unpacked(m, NULL);
    refused(tp("ext_max_offset.onnx"), "external data file");

    m = load(tp("toy6.onnx"));
    externalise(m, "9223372036854775808", NULL); /* beyond int64 */
    save(m, tp("ext_over_offset.onnx"));
    restore();
    onnx__model_proto__free_unpacked(m, NULL);
    refused(tp("ext_over_offset.onnx"), "is not a byte offset");

    m = load(tp("toy6.onnx"));
    externalise(m, "4", NULL); /* every byte exists, but not 4 further on */
    save(m, tp("ext_past_end.onnx"));
    restore();
    onnx__model_proto__free_unpacked(m, NULL);
    refused(tp("ext_past_end.onnx"), "at offset 4");

    /* an attribute given twice */
    m = load(tp("toy6.onnx"));
    Onnx__GraphProto *g = m->graph;
    int done = 0;
    for (size_t i = 0; i < g->n_node && !done; i++) {
        Onnx__NodeProto *nd = g->node[i];
        if (nd->n_attribute == 0) continue;
        Onnx__AttributeProto **orig = nd->attribute, **a = malloc((nd->n_attribute + 1) * sizeof *a);
        memcpy(a, orig, nd->n_attribute * sizeof *a);
        a[nd->n_attribute] = a[0];
        nd->attribute = a;
        nd->n_attribute++;
        save(m, tp("dup_attr.onnx"));
        nd->n_attribute--;
        nd->attribute = orig;
        free(a);
        done = 1;
    }
    CHECK(done, "no node with attributes in toy6");
    /* a node name with an escape sequence */
    char *name0 = g->node[0]->name;
    g->node[0]->name = (char *)"conv\033[2J";
    save(m, tp("ctl_name.onnx"));
    g->node[0]->name = name0;
    onnx__model_proto__free_unpacked(m, NULL);
    refused(tp("dup_attr.onnx"), "is given twice");
    char e2[4096];
    int rc = import(tp("ctl_name.onnx"), "ctl.json", e2, sizeof e2);
    /* Either refused, or the name cleaned: never an escape in what dse
     * writes or prints. */
    int raw_esc = strchr(e2, '\033') != NULL;
    char *js = tfile_read(tp("ctl.json"), NULL);
    CHECK(!raw_esc && (rc == 2 || (rc == 0 && js && !strchr(js, '\033') && !strstr(js, "\\u001b"))),
          "a node name with ESC: exit %d, stderr %s", rc, e2);
    free(js);
    if (check_failures) fprintf(stderr, "left %s\n", tmp);
    else run_shf("rm -rf %s", tmp);
    return check_done("test_onnx_hostile");
}
