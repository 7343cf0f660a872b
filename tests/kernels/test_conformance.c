/* test_conformance.c -- the kernels against reference outputs no one here
 * wrote: the ONNX project's test suite (Debian's libonnx-testdata).
 *
 * For every test model of data/{node,pytorch-converted,pytorch-operator,
 * simple} that the importer (model/onnx.h) accepts once prepared as a
 * deployable model -- graph inputs 1.. (weights, in node tests) bound to
 * their test_data_set_0 values as initializers, batch re-declared as 1 --
 * every sample of input_0.pb is run through kern_model_forward with the
 * model's own weights (read back through weights_load) and compared with
 * output_0.pb within 1e-4 relative + 1e-5 absolute.  Which models the
 * importer refuses is tests/onnx's business; here a list of operator
 * families must each have been compared numerically at least once, so the
 * test cannot pass by comparing nothing.
 */
#include <dirent.h>

#include "onnxprep.h"
#include "tfile.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels.h"
#include "naive.h"
#include "onnx.h"
#include "onnx.pb-c.h"

#define DATA "/usr/share/libonnx-testdata/data"

/* Families (directory name prefixes) that must be compared numerically.
 * (No Concat, Add or Dropout model of the suite is importable: they are
 * 3-D or join graph inputs; test_kernels and test_forward cover them.) */
static const char *must[] = {
    "node/test_conv_", "node/test_basic_conv_", "node/test_maxpool_2d", "node/test_averagepool_2d",
    "node/test_lrn", "node/test_softmax", "node/test_gemm", "node/test_batchnorm",
    "node/test_globalaveragepool", "node/test_flatten", "simple/test_single_relu_model",
    "pytorch-converted/test_Conv2d", "pytorch-converted/test_Linear",
    "pytorch-converted/test_MaxPool2d", "pytorch-converted/test_AvgPool2d",
    "pytorch-converted/test_BatchNorm2d", "pytorch-converted/test_ReLU",
    "pytorch-converted/test_Softmax", "pytorch-operator/test_operator_conv",
    /* detectors' and segmenters' kinds, and a graph of several outputs */
    "pytorch-converted/test_PReLU_2d", "pytorch-converted/test_Tanh", "pytorch-operator/test_operator_clip",
    "node/test_resize_upsample_scales_nearest", "node/test_upsample_nearest",
    "node/test_resize_upsample_scales_linear", "node/test_split_equal_parts_2d",
    /* decoders' learned upsampling: output_shape, pads, output padding,
     * dilation, SAME, and PyTorch's export */
    "node/test_convtranspose", "pytorch-converted/test_ConvTranspose2d",
    /* style transfer's and GAN generators' padding and normalisation */
    "node/test_instancenorm", "pytorch-operator/test_operator_pad",
    "pytorch-converted/test_ReflectionPad2d", "pytorch-converted/test_ReplicationPad2d",
    "pytorch-converted/test_ZeroPad2d",
    /* sub-pixel upsampling, both channel orders */
    "node/test_depthtospace_crd", "node/test_depthtospace_dcr", "node/test_depthtospace_example",
    "pytorch-converted/test_PixelShuffle", /* torch's opset-6 export: 6-D Reshape, Transpose */
    "pytorch-converted/test_Softplus",
    NULL};
static int must_ran[64];

/* Batch re-declared as 1 on every value of two or more dimensions. */
static void set_batch1(Onnx__ValueInfoProto *v)
{
    Onnx__TensorShapeProto__Dimension *d = onnxprep_dim0(v, 2);
    if (d) d->dim_value = 1;
}

static void fix_batch1(Onnx__GraphProto *g, Onnx__ValueInfoProto *first, void *ctx)
{
    (void)ctx;
    set_batch1(first);
    for (size_t i = 0; i < g->n_output; i++) set_batch1(g->output[i]);
    for (size_t i = 0; i < g->n_value_info; i++) set_batch1(g->value_info[i]);
}

/* Write dir's model, prepared as the top comment says, to `out`. */
static int prepare(const char *dir, const char *out)
{
    size_t len;
    uint8_t *buf = onnxprep_bind(dir, &len, fix_batch1, NULL);
    if (!buf) return -1;
    FILE *f = fopen(out, "wb");
    int ok = f && fwrite(buf, 1, len, f) == len;
    if (f && fclose(f)) ok = 0;
    free(buf);
    return ok ? 0 : -1;
}

static int64_t numel(const int64_t *d, int nd)
{
    int64_t p = 1;
    for (int k = 0; k < nd; k++) p *= d[k];
    return p;
}

/* 1 compared and matched, 0 not importable (skipped), -1 mismatch. */
static int run_case(const char *rel, const char *tmp, int *samples)
{
    char dir[600], pb[700], err[BASE_ERRLEN];
    snprintf(dir, sizeof dir, "%s/%s", DATA, rel);
    if (prepare(dir, tmp)) return 0;
    net *n = onnx_import(tmp, NULL, err);
    if (!n) return 0;
    int64_t di[8], dout[8];
    int ni = 0, no = 0, rc = 1;
    snprintf(pb, sizeof pb, "%s/test_data_set_0/input_0.pb", dir);
    float *x = onnx_read_tensor(pb, di, &ni, err);
    snprintf(pb, sizeof pb, "%s/test_data_set_0/output_0.pb", dir);
    float *ref = x ? onnx_read_tensor(pb, dout, &no, err) : NULL;
    /* Several outputs: the importer joins them, flattened, in order; the
     * reference is then, per sample, output 0's values, output 1's, ... */
    for (int k = 1; ref; k++) {
        int64_t dk[8];
        int nk = 0;
        snprintf(pb, sizeof pb, "%s/test_data_set_0/output_%d.pb", dir, k);
        if (access(pb, R_OK) != 0) break;
        float *rk = onnx_read_tensor(pb, dk, &nk, err);
        int64_t B = no ? dout[0] : 1, pa = numel(dout, no) / (B ? B : 1), pk = numel(dk, nk) / (B ? B : 1);
        float *j = rk && nk && dk[0] == B ? malloc((size_t)(B * (pa + pk)) * sizeof *j) : NULL;
        if (!j) {
            free(rk), free(ref);
            ref = NULL;
            snprintf(err, sizeof err, "output %d: unreadable or of another batch", k);
            break;
        }
        for (int64_t b = 0; b < B; b++) {
            memcpy(j + b * (pa + pk), ref + b * pa, (size_t)pa * sizeof *j);
            memcpy(j + b * (pa + pk) + pa, rk + b * pk, (size_t)pk * sizeof *j);
        }
        free(rk), free(ref);
        ref = j;
        no = 2, dout[0] = B, dout[1] = pa + pk;
    }
    kern_model *m = ref ? kern_model_new(n, 1, err) : NULL;
    if (!x || !ref || !m) {
        CHECK(0, "%s: imported but cannot run: %s", rel, err);
        rc = -1;
        goto out;
    }
    int64_t B = ni ? di[0] : 1, xs = net_shape_numel(n->input);
    int64_t ys = net_shape_numel(n->layers[n->n - 1].out);
    if (numel(di, ni) != B * xs || numel(dout, no) != B * ys || (no && dout[0] != B)) {
        CHECK(0, "%s: tensors of %lld and %lld floats for batch %lld of %lld -> %lld", rel,
              (long long)numel(di, ni), (long long)numel(dout, no), (long long)B, (long long)xs,
              (long long)ys);
        rc = -1;
        goto out;
    }
    float *y = malloc((size_t)ys * sizeof *y);
    for (int64_t b = 0; b < B && rc == 1; b++) {
        size_t worst = 0;
        if (kern_model_forward(m, x + b * xs, y, NULL, err)) {
            CHECK(0, "%s: %s", rel, err);
            rc = -1;
        } else if (cmp_tol(y, ref + b * ys, (size_t)ys, 1e-4, 1e-5, &worst) > 0) {
            CHECK(0, "%s: sample %lld element %zu: kernels %.8g, reference %.8g", rel, (long long)b,
                  worst, y[worst], ref[b * ys + worst]);
            rc = -1;
        }
        (*samples)++;
    }
    free(y);
out:
    kern_model_free(m);
    free(x);
    free(ref);
    net_free(n);
    return rc;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int main(int argc, char **argv)
{
    struct stat st;
    if (stat(DATA "/node", &st) != 0) {
        printf("SKIP: %s missing (Debian package libonnx-testdata)\n", DATA);
        return 77;
    }
    int verbose = argc > 1 && !strcmp(argv[1], "-v");
    static const char *roots[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    char *seen[4096], tdir[] = "/tmp/dse-conformance-XXXXXX", tmp[64];
    int nseen = 0, ran = 0, skipped = 0, samples = 0;
    if (!mkdtemp(tdir)) {
        perror("mkdtemp");
        return 1;
    }
    /* The name must end in .onnx: weights_load then reads the initializers. */
    snprintf(tmp, sizeof tmp, "%s/model.onnx", tdir);
    kern_set_threads(1);
    for (int r = 0; r < 4; r++) {
        char root[300];
        snprintf(root, sizeof root, "%s/%s", DATA, roots[r]);
        DIR *d = opendir(root);
        if (!d) continue;
        for (struct dirent *e; (e = readdir(d)) && nseen < 4096;) {
            if (strncmp(e->d_name, "test_", 5)) continue;
            char rel[400];
            snprintf(rel, sizeof rel, "%s/%s", roots[r], e->d_name);
            seen[nseen++] = strdup(rel);
        }
        closedir(d);
    }
    qsort(seen, (size_t)nseen, sizeof *seen, cmpstr);
    for (int i = 0; i < nseen; i++) {
        int rc = run_case(seen[i], tmp, &samples);
        if (rc == 0) {
            skipped++;
            continue;
        }
        ran++;
        if (verbose) printf("%s %s\n", rc > 0 ? "ok  " : "FAIL", seen[i]);
        for (int k = 0; must[k]; k++)
            if (!strncmp(seen[i], must[k], strlen(must[k]))) must_ran[k]++;
    }
    for (int k = 0; must[k]; k++) CHECK(must_ran[k] > 0, "no %s* model was compared", must[k]);
    remove(tmp);
    rmdir(tdir);
    for (int i = 0; i < nseen; i++) free(seen[i]);
    printf("test_conformance: %d test models, %d run through the kernels (%d samples), %d not "
           "importable; %d failures\n", nseen, ran, samples, skipped, check_failures);
    return check_failures ? 1 : 0;
}
