/* test_elim.c -- seed 001's node and edge elimination finds the optimum:
 *  - on random pairwise cost graphs (parallel edges, any shape) the strategy
 *    equals brute force over every strategy whenever the reduced graph is
 *    enumerated, and the beam fallback returns a strategy whose reported
 *    cost is its true cost;
 *  - on small networks (a chain, a residual block, a two-branch block) on
 *    three devices of distinct speeds, dse's elim mapping has the least
 *    additive cost (solve_additive_s) of every combination of the per-layer
 *    configurations, which this test builds itself (docs/solvers.md: whole
 *    on one device, or equal shares over the k fastest, k >= 2);
 *  - the additive cost itself matches a hand computation from the model's
 *    step durations.
 */
#include "sutil.h"

#include "mapping.h"
#include "solve.h"

#include <math.h>
#include <string.h>

/* ---- random pairwise graphs ---- */

static double gcost(const solve_egraph *g, const int *cfg)
{
    double t = 0;
    for (int i = 0; i < g->n; i++) t += g->unary[i][cfg[i]];
    for (int e = 0; e < g->nedge; e++) t += g->pair[e][cfg[g->ea[e]] * g->ncfg[g->eb[e]] + cfg[g->eb[e]]];
    return t;
}

static double brute(const solve_egraph *g)
{
    int cur[16] = {0};
    double best = INFINITY;
    for (;;) {
        double t = gcost(g, cur);
        if (t < best) best = t;
        int a = g->n - 1;
        while (a >= 0 && ++cur[a] == g->ncfg[a]) cur[a--] = 0;
        if (a < 0) return best;
    }
}

static void random_graphs(void)
{
    uint64_t s = 20;
    int exact = 0, reduced = 0;
    for (int trial = 0; trial < 400; trial++) {
        int n = srange(&s, 1, 9), ncfg[16], ea[64], eb[64], ne = 0, cfg[16];
        double *unary[16], *pair[64];
        for (int i = 0; i < n; i++) {
            ncfg[i] = srange(&s, 1, 4);
            unary[i] = malloc(sizeof(double) * ncfg[i]);
            for (int c = 0; c < ncfg[i]; c++) unary[i][c] = (double)srange(&s, 0, 1000) / 100;
        }
        /* chains are likely (node elimination), extra and parallel edges too */
        for (int j = 1; j < n && ne < 60; j++) {
            int k = srange(&s, 1, 3);
            for (int t = 0; t < k && ne < 60; t++) {
                int i = t == 0 ? j - 1 : srange(&s, 0, j - 1);
                if (t > 0 && srange(&s, 0, 2) == 0) continue;
                ea[ne] = i, eb[ne] = j;
                pair[ne] = malloc(sizeof(double) * ncfg[i] * ncfg[j]);
                for (int c = 0; c < ncfg[i] * ncfg[j]; c++) pair[ne][c] = (double)srange(&s, 0, 1000) / 100;
                ne++;
            }
        }
        solve_egraph g = {n, ncfg, unary, ne, ea, eb, pair};
        solve_elim_info info;
        char err[BASE_ERRLEN];
        double opt = brute(&g);
        CHECK(solve_eliminate(&g, 1LL << 40, 4, cfg, &info, err) == 0, "%s", err);
        CHECK(info.enumerated == 1);
        CHECK(fabs(info.cost - opt) <= 1e-9 * (1 + opt), "trial %d: elimination %.17g, brute force %.17g",
              trial, info.cost, opt);
        CHECK(fabs(gcost(&g, cfg) - info.cost) <= 1e-9 * (1 + opt));
        for (int i = 0; i < n; i++) CHECK(cfg[i] >= 0 && cfg[i] < ncfg[i]);
        exact += fabs(info.cost - opt) <= 1e-9 * (1 + opt);
        reduced += info.node_elims + info.edge_elims > 0;
        /* The fallback (nothing enumerated): a valid strategy, its cost reported truly. */
        CHECK(solve_eliminate(&g, 0, srange(&s, 1, 3), cfg, &info, err) == 0, "%s", err);
        CHECK(info.enumerated == 0 && info.beam >= 1);
        CHECK(fabs(gcost(&g, cfg) - info.cost) <= 1e-9 * (1 + opt));
        CHECK(info.cost >= opt - 1e-9 * (1 + opt));
        for (int i = 0; i < n; i++) free(unary[i]);
        for (int e = 0; e < ne; e++) free(pair[e]);
    }
    printf("random graphs: %d of 400 optimal, %d reduced by eliminations\n", exact, reduced);
    CHECK(reduced > 200);
}

/* ---- networks ---- */

/* Large enough that splitting a convolution pays on the fast links of
 * check_net: the optimum is not a single device (checked). */
static net *chain(void)
{
    net *n = net_new("chain", "x", (net_shape){16, 48, 48});
    sadd(n, "conv1", NET_CONV, net_attr_conv(48, 3, 1, 1, 1, 1), 1, "x", NULL);
    sadd(n, "relu1", NET_RELU, net_attr_default(NET_RELU), 1, "conv1", NULL);
    sadd(n, "conv2", NET_CONV, net_attr_conv(6, 3, 1, 1, 1, 1), 1, "relu1", NULL);
    sadd(n, "relu2", NET_RELU, net_attr_default(NET_RELU), 1, "conv2", NULL);
    sadd(n, "flat", NET_FLATTEN, net_attr_default(NET_FLATTEN), 1, "relu2", NULL);
    net_attr fc = net_attr_default(NET_FC);
    fc.out_c = 10, fc.bias = 1;
    sadd(n, "fc", NET_FC, fc, 1, "flat", NULL);
    sfinal(n);
    return n;
}

static net *residual(void)
{
    net *n = net_new("residual", "x", (net_shape){16, 40, 40});
    sadd(n, "conv0", NET_CONV, net_attr_conv(32, 3, 1, 1, 1, 0), 1, "x", NULL);
    sadd(n, "bn0", NET_BN, net_attr_default(NET_BN), 1, "conv0", NULL);
    sadd(n, "relu0", NET_RELU, net_attr_default(NET_RELU), 1, "bn0", NULL);
    sadd(n, "conv1", NET_CONV, net_attr_conv(32, 3, 1, 1, 1, 0), 1, "relu0", NULL);
    sadd(n, "bn1", NET_BN, net_attr_default(NET_BN), 1, "conv1", NULL);
    sadd(n, "add", NET_ADD, net_attr_default(NET_ADD), 2, "bn1", "relu0");
    sadd(n, "relu1", NET_RELU, net_attr_default(NET_RELU), 1, "add", NULL);
    sfinal(n);
    return n;
}

static net *two_branch(void)
{
    net *n = net_new("twobranch", "x", (net_shape){8, 40, 40});
    sadd(n, "conv0", NET_CONV, net_attr_conv(24, 3, 1, 1, 1, 1), 1, "x", NULL);
    sadd(n, "relu0", NET_RELU, net_attr_default(NET_RELU), 1, "conv0", NULL);
    sadd(n, "convA", NET_CONV, net_attr_conv(8, 1, 1, 0, 1, 1), 1, "relu0", NULL);
    sadd(n, "reluA", NET_RELU, net_attr_default(NET_RELU), 1, "convA", NULL);
    sadd(n, "convB", NET_CONV, net_attr_conv(32, 3, 1, 1, 1, 1), 1, "relu0", NULL);
    sadd(n, "reluB", NET_RELU, net_attr_default(NET_RELU), 1, "convB", NULL);
    sadd(n, "cat", NET_CONCAT, net_attr_default(NET_CONCAT), 2, "reluA", "reluB");
    sadd(n, "conv2", NET_CONV, net_attr_conv(5, 3, 1, 1, 1, 1), 1, "cat", NULL);
    sfinal(n);
    return n;
}

/* The configurations of docs/solvers.md, built here: k = 0..D-1 whole on
 * device k (d0 is the fastest), then equal shares over d0..d(k-1). */
static int configs(const net *n, int l, int D, map_slice out[][8])
{
    int C = n->layers[l].out.c, m = 0;
    for (int d = 0; d < D; d++) out[m][0] = (map_slice){d, 0, C}, out[m][1].dev = -1, m++;
    if (!net_kind_splittable(n->layers[l].kind)) return m;
    for (int k = 2; k <= D && k <= C; k++, m++) {
        int w[8], sh[8], c0 = 0;
        for (int a = 0; a < k; a++) w[a] = 1;
        mapping_apportion(C, k, w, sh);
        for (int a = 0; a < k; a++) out[m][a] = (map_slice){a, c0, sh[a]}, c0 += sh[a];
        out[m][k].dev = -1;
    }
    return m;
}

static void check_net(net *n, int D, double bw, double lat)
{
    platform *pl = splatform_link(D, NULL, bw, lat);
    char err[BASE_ERRLEN];
    cost_model *cm = cost_new(n, pl, NULL, NULL, err);
    CHECK(cm != NULL, "%s", err);
    solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
    mapping *m = mapping_new(n->n, D), *b = mapping_new(n->n, D);
    solve_result r;
    CHECK(solve_run("elim", &p, m, &r, err) == 0, "%s", err);
    /* brute force over every combination */
    static map_slice cf[32][16][8];
    int nc[32], cur[32] = {0};
    long long count = 0;
    for (int l = 0; l < n->n; l++) nc[l] = configs(n, l, D, cf[l]);
    double best = INFINITY;
    int best_devs = 0;
    for (;;) {
        int pos = 0;
        for (int l = 0; l < n->n; l++) {
            b->first[l] = pos;
            for (int a = 0; cf[l][cur[l]][a].dev >= 0 && a < 8; a++) b->slices[pos++] = cf[l][cur[l]][a];
        }
        b->first[n->n] = pos;
        CHECK(mapping_validate(b, n, err) == 0, "%s", err);
        double t = solve_additive_s(&p, b);
        if (t < best) {
            best = t, best_devs = 0;
            for (int d = 0; d < D; d++)
                for (int k = 0; k < pos; k++)
                    if (b->slices[k].dev == d) {
                        best_devs++;
                        break;
                    }
        }
        count++;
        int a = n->n - 1;
        while (a >= 0 && ++cur[a] == nc[a]) cur[a--] = 0;
        if (a < 0) break;
    }
    double mine = solve_additive_s(&p, m);
    printf("%s on %d devices (%g MB/s): %lld strategies, brute force %.9g ms on %d devices, elim %.9g ms "
           "(reported %.9g ms), simulated %.9g ms\n  %s\n",
           n->name, D, bw, count, best * 1e3, best_devs, mine * 1e3, r.estimate_ms, r.obj.latency_ms, r.detail);
    if (bw >= 1e4) CHECK(best_devs >= 2, "%s: the optimum should use several devices", n->name);
    CHECK(fabs(mine - best) <= 1e-12 * best, "%s: elim %.17g vs brute force %.17g", n->name, mine, best);
    CHECK(fabs(r.estimate_ms * 1e-3 - mine) <= 1e-12 * best);
    double stat_k = -1, stat_enum = -1;
    for (int i = 0; i < r.nstat; i++) {
        if (!strcmp(r.stat[i].key, "nodes_left")) stat_k = r.stat[i].value;
        if (!strcmp(r.stat[i].key, "enumerated")) stat_enum = r.stat[i].value;
    }
    CHECK(stat_k == 2, "%s: K = %g (Jia et al.: these reduce to two nodes)", n->name, stat_k);
    CHECK(stat_enum == 1);
    mapping_free(m), mapping_free(b);
    cost_free(cm);
    platform_free(pl);
}

/* The additive cost by hand, from the model's step durations. */
static void hand(void)
{
    net *n = net_new("two", "x", (net_shape){3, 8, 8});
    sadd(n, "conv", NET_CONV, net_attr_conv(8, 3, 1, 1, 1, 1), 1, "x", NULL);
    sadd(n, "relu", NET_RELU, net_attr_default(NET_RELU), 1, "conv", NULL);
    sfinal(n);
    platform *pl = splatform(2, NULL);
    char err[BASE_ERRLEN];
    cost_model *cm = cost_new(n, pl, NULL, NULL, err);
    solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
    mapping *m = mapping_new(2, 2);
    double in = 3 * 8 * 8 * 4.0, full = 8 * 8 * 8 * 4.0, half = full / 2;
    /* conv on d0 (the source), relu on d1 */
    m->first[0] = 0, m->first[1] = 1, m->first[2] = 2;
    m->slices[0] = (map_slice){0, 0, 8}, m->slices[1] = (map_slice){1, 0, 8};
    double want = cost_compute_s(cm, 0, 0, 0, 8) + cost_compute_s(cm, 1, 1, 0, 8) + cost_message_s(cm, 0, 1, full);
    CHECK_REL(solve_additive_s(&p, m), want, 1e-12);
    /* conv split 4 + 4 over d0 and d1, relu on d0: the input goes to d1,
     * d1's half comes back to d0, which concatenates */
    m->first[0] = 0, m->first[1] = 2, m->first[2] = 3;
    m->slices[0] = (map_slice){0, 0, 4}, m->slices[1] = (map_slice){1, 4, 4}, m->slices[2] = (map_slice){0, 0, 8};
    CHECK(mapping_validate(m, n, err) == 0, "%s", err);
    double tc = fmax(cost_compute_s(cm, 0, 0, 0, 4), cost_compute_s(cm, 0, 1, 4, 4));
    want = tc + cost_compute_s(cm, 1, 0, 0, 8) + cost_message_s(cm, 0, 1, in) +
           cost_message_s(cm, 1, 0, half) + cost_concat_s(cm, 0, full);
    CHECK_REL(solve_additive_s(&p, m), want, 1e-12);
    mapping_free(m);
    cost_free(cm);
    platform_free(pl);
    net_free(n);
}

int main(void)
{
    random_graphs();
    hand();
    net *nets[3] = {chain(), residual(), two_branch()};
    for (int i = 0; i < 3; i++) {
        check_net(nets[i], 2, 500, 30);     /* slow links: little pays */
        check_net(nets[i], 3, 2e4, 2);      /* fast links: splitting pays */
        check_net(nets[i], 2, 1e5, 1);
        net_free(nets[i]);
    }
    return check_done("test_elim");
}
