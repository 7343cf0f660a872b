/* test_exec_spatial.c -- row bands on the MPI runtime (docs/spatial.md):
 * `dse exec` under a real `dse mpirun` of random mappings mixing row cuts,
 * channel cuts and whole layers (halo sends, channels feeding rows and
 * rows feeding channels) equals the single-device output computed here
 * with the kernels directly -- bit for bit where no layer runs Winograd --
 * (within 1e-4: channel slices of FC and Conv layers go through BLAS
 * products of other sizes; tests/kernels/test_bands shows bands alone are
 * bit for bit), and every rank sends and receives exactly the bytes the
 * model counts for the same Plan (`dse eval`) and runs its steps; every
 * other mapping has row-cut layers that recompute their halos. */
#include "kernels.h"
#include "mapping.h"
#include "net.h"
#include "plan.h"
#include "trace.h"
#include "platform.h"

#include <cJSON.h>
#include <math.h>
#include "check.h"
#include "randmap.h"
#include "bandkinds.h"
#include "run.h"
#include "tfile.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static cJSON *run_json(const char *cmd, const char *path, char *ebuf, size_t elen)
{
    char full[4096];
    snprintf(full, sizeof full, "%s > %s", cmd, path);
    int rc = run_sh_err(full, ebuf, elen);
    CHECK(rc == 0, "exit %d: %s: %s", rc, cmd, ebuf);
    char *txt = tfile_read(path, NULL);
    cJSON *x = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    return x;
}

static void mixed(const char *netname, int nd, int trials, unsigned seed)
{
    char err[BASE_ERRLEN], plat[300], map[300], out[300], js[300], cmd[2048], ebuf[4096];
    net *n = net_open(netname, err);
    snprintf(plat, sizeof plat, "%s/plat%d.json", tmpdir, nd);
    write_local_platform(plat, nd, 0);
    platform *pl = platform_load(plat, err);
    CHECK(n && pl, "%s", err);
    if (!n || !pl) return;
    mapping *m = mapping_new(n->n, nd);
    size_t on = (size_t)net_shape_numel(n->layers[n->n - 1].out);
    float *x = malloc((size_t)net_shape_numel(n->input) * sizeof(float));
    float *ref = malloc(on * sizeof(float));
    kern_input_gen(n, 7 ^ 0x1234567ull, x);
    CHECK(kern_forward(n, 7, x, ref, err) == 0, "%s", err);
    double scale = 0, worst = 0;
    for (size_t i = 0; i < on; i++) scale = fmax(scale, fabs(ref[i]));
    int nbands = 0, ncols = 0, nrecomp = 0;
    uint64_t kinds_cut = 0, kinds_in = 0; /* bit k: a layer of kind k (cut into bands) */
    for (int i = 0; i < n->n; i++)
        if (net_layer_rowsplit(n, i) || net_layer_colsplit(n, i)) kinds_in |= 1ull << n->layers[i].kind;
    plan *p = plan_new();
    for (int t = 0; t < trials; t++) {
        randmap_mixed(m, n, nd, &seed);
        /* Every other trial, half the band-cut layers (not the output)
         * recompute their halos (docs/spatial.md, "Recompute or fetch"). */
        for (int i = 0; i + 1 < n->n; i++) {
            m->recompute[i] = t % 2 && m->cut[i] && (seed >> 9) % 2;
            seed = seed * 1103515245u + 12345u;
            nrecomp += m->recompute[i];
        }
        for (int i = 0; i < n->n; i++) {
            nbands += m->cut[i] != 0, ncols += m->cut[i] == MAP_CUT_COLS;
            if (m->cut[i]) kinds_cut |= 1ull << n->layers[i].kind;
        }
        CHECK(!mapping_validate(m, n, err), "%s", err);
        CHECK(!plan_build(p, n, m, pl->source, err), "%s", err);
        snprintf(map, sizeof map, "%s/map.json", tmpdir);
        snprintf(out, sizeof out, "%s/out.f32", tmpdir);
        snprintf(js, sizeof js, "%s/exec.json", tmpdir);
        remove(out);
        CHECK(mapping_save(m, n, pl, map, err) == 0, "%s", err);
        char xt[300], et[300];
        snprintf(xt, sizeof xt, "%s/exec-trace.json", tmpdir);
        snprintf(et, sizeof et, "%s/eval-trace.json", tmpdir);
        snprintf(cmd, sizeof cmd, "%s mpirun -np %d %s exec --network %s --platform %s --mapping %s "
                 "--seed 7 --output %s --json --trace %s", DSE_BIN, nd, DSE_BIN, netname, plat, map,
                 out, xt);
        cJSON *xr = run_json(cmd, js, ebuf, sizeof ebuf);
        snprintf(cmd, sizeof cmd, "%s eval --network %s --platform %s --mapping %s --json --trace %s",
                 DSE_BIN, netname, plat, map, et);
        snprintf(js, sizeof js, "%s/eval.json", tmpdir);
        cJSON *er = run_json(cmd, js, ebuf, sizeof ebuf);
        /* The two traces: the same steps, boxes, peers and bytes in the same order. */
        trace_file tx, te;
        memset(&tx, 0, sizeof tx);
        memset(&te, 0, sizeof te);
        int lx = trace_load(xt, &tx, err), le = lx ? -1 : trace_load(et, &te, err);
        CHECK(!lx && !le, "%s", err);
        if (!lx && !le) CHECK(trace_same_steps(&tx, &te, err) == 0, "%s trial %d: %s", netname, t, err);
        trace_file_free(&tx);
        trace_file_free(&te);
        const cJSON *xd = cJSON_GetObjectItemCaseSensitive(xr, "devices");
        const cJSON *ed = cJSON_GetObjectItemCaseSensitive(er, "devices");
        CHECK(cJSON_GetArraySize(xd) == nd && cJSON_GetArraySize(ed) == nd);
        for (int d = 0; d < nd && xd && ed; d++) {
            const cJSON *a = cJSON_GetArrayItem(xd, d), *b = cJSON_GetArrayItem(ed, d);
            CHECK(jnum(a, "bytes_sent") == jnum(b, "bytes_sent") &&
                      jnum(a, "bytes_recv") == jnum(b, "bytes_recv") &&
                      jnum(a, "steps") == plan_nsteps_dev(p, d),
                  "%s trial %d device %d: runtime %.0f steps, sent/received %.0f/%.0f B; the "
                  "Plan %d steps, the model %.0f/%.0f B", netname, t, d, jnum(a, "steps"),
                  jnum(a, "bytes_sent"), jnum(a, "bytes_recv"), plan_nsteps_dev(p, d),
                  jnum(b, "bytes_sent"), jnum(b, "bytes_recv"));
        }
        cJSON_Delete(xr);
        cJSON_Delete(er);
        FILE *f = fopen(out, "rb");
        float *y = malloc(on * sizeof(float));
        size_t got = f ? fread(y, sizeof(float), on, f) : 0;
        if (f) fclose(f);
        CHECK(got == on, "%s: no output file", netname);
        int bad = 0;
        for (size_t i = 0; got == on && i < on; i++) {
            double e = fabs((double)y[i] - ref[i]);
            if (e > worst) worst = e;
            if (!(e <= 1e-4 * fabs(ref[i]) + 1e-5 * scale)) bad++;
        }
        CHECK(!bad, "%s on %d ranks, trial %d: %d of %zu outputs differ from the single-device "
              "run", netname, nd, t, bad, on);
        free(y);
    }
    CHECK(nbands > ncols && ncols > 0, "%d band cuts drawn, %d by columns: not both kinds", nbands,
          ncols);
    CHECK(trials < 2 || nrecomp > 0, "no recomputed halo drawn");
    /* Every kind of the network of kinds that move rows was cut into bands
     * in some trial. */
    CHECK(!strstr(netname, "bandkinds") || trials < 4 || kinds_cut == kinds_in,
          "%s: kinds never cut into bands: %#llx", netname,
          (unsigned long long)(kinds_in & ~kinds_cut));
    printf("ok: %s, %d ranks, %d random mixed mappings (%d band-cut layers, %d by columns, %d "
           "recomputing their halos) equal the single-device output (max |error| %.3g of max "
           "|output| %.3g); bytes and steps as the Plan's and the model's\n", netname, nd, trials,
           nbands, ncols, nrecomp, worst, scale);
    plan_free(p);
    free(x);
    free(ref);
    mapping_free(m);
    platform_free(pl);
    net_free(n);
}

int main(int argc, char **argv)
{
    int small = argc > 1 && !strcmp(argv[1], "--small");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dse-test-exec-spatial-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd)) return 1;
    mixed("toy6", 2, small ? 2 : 4, 11);
    /* Pads, upsamplings, bilinear resizes, pixel shuffles and norms in bands. */
    char err[BASE_ERRLEN], bk[300];
    net *kinds = bandkinds_net(err);
    snprintf(bk, sizeof bk, "%s/bandkinds.json", tmpdir);
    CHECK(kinds && !net_save(kinds, bk, err), "%s", err);
    net_free(kinds);
    mixed(bk, 2, small ? 3 : 6, 21);
    if (!small) mixed(bk, 3, 4, 30);
    mixed("branchy", small ? 2 : 3, small ? 2 : 4, 12);
    if (!small) {
        mixed("alexnet-bvlc", 2, 2, 13);
        mixed("mobilenetv2", 3, 2, 14);
        mixed("resnet50", 2, 1, 15);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return check_done("test_exec_spatial");
}
