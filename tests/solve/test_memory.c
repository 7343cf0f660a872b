/* test_memory.c -- dse solve --method memory (solve/memory.c,
 * docs/solvers.md "memory"):
 *  - on zoo networks and platforms (one with an accelerator that supports
 *    only some kinds), its peak memory per device is at most that of the
 *    single, greedy, elim and cluster mappings, and never below the bound
 *    no mapping can beat: the network's weights shared evenly (every
 *    weight is held by some device);
 *  - its mapping is what solve_run validated, its objectives are the
 *    model's for that mapping (evaluated again here), and two runs give the
 *    same mapping;
 *  - a hand-worked case: a chain of two FC layers on two equal devices:
 *    the solver cuts both by channels and each device holds within a few
 *    channels of half the weights;
 *  - vgg16 on 8 devices: the FC layers by channels, a peak below the even
 *    channel-only mapping's (built here independently), the lower of the
 *    best peaks with and without bands it reports, bands exactly when
 *    those are the lower, and no higher than the mapping that keeps the
 *    early maps and the late weights on different devices (built here:
 *    pool4 and before whole on device 0, the rest on the other seven);
 *  - issue 21's memory goal is out of reach there for any mapping: a
 *    hybrid genome (channel cuts only) reaches a peak whose 70% lies under
 *    the even share of the weights;
 *  - the spatial chromosome encodes the solver's channel cuts as channel
 *    cuts (mapping_distance compares a layer cut by channels with its
 *    bands by channel share x band share per device: checked on conv5_1).
 */
#include "solve.h"
#include "chrom.h"
#include "plan.h"
#include "sutil.h"

#include <math.h>
#include <string.h>

static char err[BASE_ERRLEN];

/* Plan + model of m: per-device figures into per (ndev entries). */
static cost_result eval_dev(const net *n, const platform *pl, cost_model *cm, const mapping *m, cost_device *per)
{
    cost_result r = {0};
    plan *p = plan_new();
    CHECK(p && plan_build(p, n, m, pl->source, err) == 0, "%s", err);
    CHECK(cost_eval(cm, p, &r, per) == 0, "%s", cost_error(cm));
    plan_free(p);
    return r;
}

static void against_others(void)
{
    static const struct {
        const char *net, *plat;
    } cases[] = {{"toy6", "local-2"},          {"branchy", "local-4"},          {"alexnet-bvlc", "local-4"},
                 {"resnet50", "jetson-nx-8-cpu"}, {"mobilenetv2", "jetson-nx-4-cpudla"}, {"mobilenet_v3_large", "local-2"}};
    static const char *others[] = {"single", "greedy", "elim", "cluster"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        net *n = net_zoo(cases[i].net, err);
        platform *pl = n ? platform_open(cases[i].plat, err) : NULL;
        CHECK(n && pl, "%s", err);
        if (!n || !pl) {
            net_free(n);
            continue;
        }
        cost_model *cm = cost_new(n, pl, NULL, NULL, err);
        solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
        mapping *m = mapping_new(n->n, pl->ndev), *m2 = mapping_new(n->n, pl->ndev), *o = mapping_new(n->n, pl->ndev);
        cost_device *per = calloc((size_t)pl->ndev, sizeof *per);
        solve_result r, r2, ro;
        CHECK(solve_run("memory", &p, m, &r, err) == 0, "%s/%s: %s", cases[i].net, cases[i].plat, err);
        CHECK(solve_run("memory", &p, m2, &r2, err) == 0 && mapping_equal(m, m2), "%s: not deterministic",
              cases[i].net);
        cost_result e = eval_dev(n, pl, cm, m, per);
        CHECK(e.mem_mb == r.obj.mem_mb && e.latency_ms == r.obj.latency_ms, "%s: objectives differ from the model's",
              cases[i].net);
        /* the bound: every weight is held by some device (a band's layer
         * on each of its devices), so the peak is at least the even share;
         * and its weights are what its slices hold */
        double wsum = 0, wtot = 4.0 * (double)net_total(n, NET_SPLIT_DEFAULT).weights;
        for (int d = 0; d < pl->ndev; d++) wsum += per[d].weights_bytes;
        CHECK(wsum >= wtot * (1 - 1e-9), "%s: weights held %.6g, the network has %.6g", cases[i].net, wsum, wtot);
        CHECK(r.obj.mem_mb * 1e6 >= wtot / pl->ndev * (1 - 1e-9), "%s: peak %.6g MB under the even share of weights",
              cases[i].net, r.obj.mem_mb);
        for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
            CHECK(solve_run(others[k], &p, o, &ro, err) == 0, "%s: %s", others[k], err);
            CHECK(r.obj.mem_mb <= ro.obj.mem_mb, "%s/%s: memory %.6g MB, %s %.6g MB", cases[i].net, cases[i].plat,
                  r.obj.mem_mb, others[k], ro.obj.mem_mb);
        }
        printf("%s on %s: %.4g MB per device (%s)\n", cases[i].net, cases[i].plat, r.obj.mem_mb, r.detail);
        free(per);
        mapping_free(m), mapping_free(m2), mapping_free(o);
        cost_free(cm), platform_free(pl), net_free(n);
    }
}

static void fc_chain(void)
{
    net *n = net_new("fcchain", "data", (net_shape){1000, 1, 1});
    net_attr a = net_attr_default(NET_FC);
    a.out_c = 1000;
    a.bias = 1;
    sadd(n, "fc1", NET_FC, a, 1, "data", NULL);
    sadd(n, "fc2", NET_FC, a, 1, "fc1", NULL);
    sfinal(n);
    platform *pl = platform_open("local-2", err);
    CHECK(n->layers[0].out.c == 1000 && net_slice_weights(n, 0, 0, 1000) == 1000 * 1001, "fc chain set-up");
    CHECK(pl != NULL, "%s", err);
    cost_model *cm = cost_new(n, pl, NULL, NULL, err);
    solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
    mapping *m = mapping_new(n->n, pl->ndev);
    cost_device per[2];
    solve_result r;
    CHECK(solve_run("memory", &p, m, &r, err) == 0, "%s", err);
    eval_dev(n, pl, cm, m, per);
    double half = 2 * 1000.0 * 1001 * 4 / 2, chan = 1001 * 4.0;
    for (int d = 0; d < 2; d++)
        CHECK(fabs(per[d].weights_bytes - half) <= 8 * 2 * chan, "device %d holds %.0f bytes of weights, half is %.0f",
              d, per[d].weights_bytes, half);
    for (int l = 0; l < n->n; l++) CHECK(m->cut[l] == MAP_CUT_CHANNELS && mapping_nslices(m, l) == 2);
    printf("fc chain: %s\n", r.detail);
    mapping_free(m), cost_free(cm), platform_free(pl), net_free(n);
}

/* Into c: Conv and FC from layer `from` on by channels evenly over
 * devices d0..D-1, every other layer whole on device 0. */
static void even_channels(mapping *c, const net *n, int from, int d0, int D)
{
    int pos = 0;
    for (int l = 0; l < n->n; l++) {
        const net_layer *L = &n->layers[l];
        c->first[l] = pos;
        c->cut[l] = MAP_CUT_CHANNELS;
        c->recompute[l] = 0;
        if (l >= from && net_kind_splittable(L->kind)) {
            for (int d = d0, at = 0, k = D - d0; d < D; d++) {
                int nc = L->out.c / k + (d - d0 < L->out.c % k);
                c->slices[pos++] = (map_slice){d, at, nc};
                at += nc;
            }
        } else {
            c->slices[pos++] = (map_slice){0, 0, L->out.c};
        }
    }
    c->first[n->n] = pos;
}

static void vgg16(void)
{
    net *n = net_zoo("vgg16", err);
    platform *pl = platform_open("jetson-nx-8-cpu", err);
    CHECK(n && pl, "%s", err);
    if (!n || !pl) {
        net_free(n), platform_free(pl);
        return;
    }
    cost_model *cm = cost_new(n, pl, NULL, NULL, err);
    solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
    int D = pl->ndev;
    mapping *m = mapping_new(n->n, D), *c = mapping_new(n->n, D);
    solve_result r;
    CHECK(solve_run("memory", &p, m, &r, err) == 0, "%s", err);
    int bands = 0, fc_chan = 0;
    for (int l = 0; l < n->n; l++) {
        bands += m->cut[l] != MAP_CUT_CHANNELS;
        fc_chan += n->layers[l].kind == NET_FC && mapping_nslices(m, l) > 1;
    }
    CHECK(fc_chan == 3, "vgg16: %d FC layers cut by channels", fc_chan);
    /* the lowest peaks with and without bands it reports: the chosen one
     * is the lower, and it names whether the chosen mapping has bands */
    double with = NAN, without = NAN;
    for (int i = 0; i < r.nstat; i++) {
        if (!strcmp(r.stat[i].key, "memory_mb_with_bands")) with = r.stat[i].value;
        if (!strcmp(r.stat[i].key, "memory_mb_without_bands")) without = r.stat[i].value;
    }
    CHECK(isfinite(with) && isfinite(without) && r.obj.mem_mb == fmin(with, without) &&
              (bands > 0) == (with < without),
          "vgg16: peak %.6g MB, with bands %.6g, without %.6g, %d band layers", r.obj.mem_mb, with, without, bands);
    /* Conv and FC by channels evenly over every device, the rest whole on
     * device 0: what channel cuts alone give without balancing. */
    even_channels(c, n, 0, 0, D);
    CHECK(mapping_validate(c, n, err) == 0, "%s", err);
    cost_device *per = calloc((size_t)D, sizeof *per);
    cost_result e = eval_dev(n, pl, cm, c, per);
    CHECK(r.obj.mem_mb < e.mem_mb, "vgg16: memory solver %.6g MB, even channel cuts %.6g MB", r.obj.mem_mb, e.mem_mb);
    /* Everything before pool4 whole on device 0 (its maps, 30.5 MB of
     * early weights), Conv and FC from pool4 on by channels evenly over
     * devices 1..D-1 only (none on device 0), the rest whole on device 0:
     * the early maps and the late weights on different devices. Its peak
     * (80.3 MB under the built-in coefficients) bounds the solver's, whose
     * second start explores this family; from an even start over all
     * eight devices alone it stopped at 81.0. */
    int pool4 = -1;
    for (int l = 0; l < n->n; l++)
        if (!strcmp(n->layers[l].name, "pool4")) pool4 = l;
    CHECK(pool4 > 0, "vgg16: no layer pool4");
    even_channels(c, n, pool4 + 1, 1, D);
    CHECK(mapping_validate(c, n, err) == 0, "%s", err);
    cost_result apart = eval_dev(n, pl, cm, c, per);
    CHECK(r.obj.mem_mb <= apart.mem_mb, "vgg16: memory solver %.6g MB, early maps and late weights apart %.6g MB",
          r.obj.mem_mb, apart.mem_mb);
    /* Issue 21's memory goal (the best-memory point 30% below the best
     * channel-only point) cannot be met here by any mapping: a hybrid
     * genome, channel cuts only, reaches a peak whose 70% is below the
     * even share of the weights that bounds every mapping. Rows k = 0..6:
     * device 0 at split point 10 (conv4_3), device k+1 at 16 (fc8), so
     * conv4_3 and before are whole on device 0 and the rest shared evenly
     * by devices 1..7 (docs/chromosomes.md, hybrid). */
    chrom *h = chrom_new(n, D, CHROM_HYBRID, D - 1, NET_SPLIT_DEFAULT, err);
    CHECK(h && chrom_nsplittable(h) == 16, "vgg16: hybrid chromosome: %s", err);
    if (h && chrom_length(h) <= 64) {
        int g[64] = {0};
        for (int k = 0; k < D - 1; k++) g[k * D] = 10, g[k * D + k + 1] = 16;
        CHECK(chrom_decode(h, g, chrom_length(h), c, err) == 0, "%s", err);
        int chan_only = 1;
        for (int l = 0; l < n->n; l++) chan_only &= c->cut[l] == MAP_CUT_CHANNELS;
        CHECK(chan_only, "vgg16: the hybrid genome decoded to a mapping with bands");
        cost_result hg = eval_dev(n, pl, cm, c, per);
        double bound = 4.0 * (double)net_total(n, NET_SPLIT_DEFAULT).weights / D / 1e6;
        CHECK(0.7 * hg.mem_mb < bound, "vgg16: hybrid genome %.6g MB; 70%% of it is not under the weights' bound %.6g MB",
              hg.mem_mb, bound);
        printf("vgg16 on %s: a hybrid genome (channel cuts only) reaches %.4g MB; no mapping goes below %.4g MB "
               "(%.1f%% below it at most)\n", pl->name, hg.mem_mb, bound, 100 * (1 - bound / hg.mem_mb));
        chrom_free(h);
    }
    /* The solver's mapping (channel cuts only here) seeds the spatial
     * chromosome as channel cuts: a genome that turns its channel-cut
     * layers into bands of the same amounts is not close to it
     * (mapping_distance counts such a layer as moved in full). */
    CHECK(bands == 0, "vgg16: the solver's best has %d band layers", bands);
    chrom *sp = chrom_new(n, D, CHROM_SPATIAL, D, NET_SPLIT_DEFAULT, err);
    CHECK(sp != NULL, "%s", err);
    if (sp && bands == 0) {
        int g[128] = {0};
        CHECK(chrom_length(sp) <= 128, "spatial genome length %d", chrom_length(sp));
        double d = chrom_encode(sp, m, g, err);
        CHECK(d >= 0 && d < 0.01 && chrom_decode(sp, g, chrom_length(sp), c, err) == 0, "encode: %.6g %s", d, err);
        int enc_bands = 0;
        for (int l = 0; l < n->n; l++) enc_bands += c->cut[l] != MAP_CUT_CHANNELS;
        cost_result se = eval_dev(n, pl, cm, c, per);
        CHECK(enc_bands == 0 && se.mem_mb < 1.01 * r.obj.mem_mb,
              "vgg16: the spatial seed has %d band layers, %.6g MB against the solver's %.6g", enc_bands, se.mem_mb,
              r.obj.mem_mb);
        /* the rule itself: conv5_1 cut into even row bands over the same
         * devices keeps on each device only channel share x band share */
        int l5 = -1;
        for (int l = 0; l < n->n; l++)
            if (!strcmp(n->layers[l].name, "conv5_1")) l5 = l;
        CHECK(l5 > 0 && mapping_nslices(m, l5) > 1, "vgg16: conv5_1 not split");
        if (l5 > 0 && mapping_nslices(m, l5) > 1) {
            mapping_copy(c, m);
            int k = mapping_nslices(c, l5), H = n->layers[l5].out.h;
            map_slice *sl = &c->slices[c->first[l5]];
            for (int a = 0, at = 0; a < k; a++) {
                int rows = H / k + (a < H % k);
                sl[a].c0 = at, sl[a].nc = rows, at += rows;
            }
            c->cut[l5] = MAP_CUT_ROWS;
            /* what each device computes in both: its channel share times
             * its band share (the same devices in the same order) */
            double common = 0;
            for (int a = 0; a < k; a++)
                common += (double)mapping_slices(m, l5)[a].nc / n->layers[l5].out.c * ((double)sl[a].nc / H);
            double total = 0, w5 = 0;
            for (int l = 0; l < n->n; l++) {
                double w = (double)(net_slice_macs(n, l, 0, n->layers[l].out.c) +
                                    net_slice_ops(n, l, 0, n->layers[l].out.c));
                total += w;
                if (l == l5) w5 = w;
            }
            CHECK(H >= k && mapping_validate(c, n, err) == 0, "%s", err);
            double dd = mapping_distance(c, m, n), want = w5 * (1 - common) / total;
            CHECK(fabs(dd - want) < 1e-12, "vgg16: conv5_1 in bands: distance %.9g, expected %.9g", dd, want);
        }
    }
    chrom_free(sp);
    printf("vgg16 on %s: %.4g MB per device against %.4g MB for even channel cuts, %.4g MB for early maps and late "
           "weights apart (%s)\n", pl->name, r.obj.mem_mb, e.mem_mb, apart.mem_mb, r.detail);
    free(per);
    mapping_free(m), mapping_free(c), cost_free(cm), platform_free(pl), net_free(n);
}

int main(void)
{
    against_others();
    fc_chain();
    vgg16();
    return check_done("test_memory");
}
