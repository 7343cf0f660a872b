/* test_cluster.c -- Ramiel's clustering (seed 002, section III) replayed on
 * a hand-worked example, then the method on real networks.
 *
 * The example: a fork-join graph like the SqueezeNet snippet of Ramiel's
 * figure 1, every edge weighing 1 (Ramiel adds a unit cost per edge):
 *
 *     node   A  B  C  D  E  F  G        edges: A->B A->C B->D C->D
 *     weight 2  3  1  2  4  1  2               D->E D->F E->G F->G
 *
 * Distance pass (distance_to_end = weight + max over successors of
 * 1 + their distance):  G 2; E 4+1+2 = 7; F 1+1+2 = 4; D 2+1+7 = 10;
 * B 3+1+10 = 14; C 1+1+10 = 12; A 2+1+14 = 17.
 *
 * Algorithm 1: the only ready node is A; the path follows the successor
 * farthest from the end: A -> B (14 > 12) -> D -> E (7 > 4) -> G, cluster
 * 0.  Left: C and F, both ready now (their predecessors are clustered);
 * C (12) first: its successor D is taken, so cluster 1 = {C}; then
 * cluster 2 = {F}.
 *
 * Algorithm 2 (spans = distance of entry and exit): cluster 0 spans 17..2,
 * cluster 1 12..12, cluster 2 4..4.  Cluster 0 overlaps both; cluster 1
 * with cluster 2: 4 < 12, they do not overlap: merged into {C, F}.  A
 * second round (algorithm 3) merges nothing (12..4 overlaps 17..2).
 *
 * Schedule length of {A,B,D,E,G} {C,F} (one processor each, edges between
 * clusters cost 1): A 0-2, B 2-5, C 3-4, D 5-7, E 7-11, F 8-9, G 11-13: 13,
 * against 15 (the sum of the weights) for one cluster.
 */
#include "sutil.h"

#include "mapping.h"
#include "solve.h"

#include <string.h>

enum { A, B, C, D, E, F, G };

static void hand(void)
{
    /* predecessors per node, CSR */
    static const int first[] = {0, 0, 1, 2, 4, 5, 6, 8};
    static const int pred[] = {A, A, B, C, D, D, E, F};
    static const double w[] = {2, 3, 1, 2, 4, 1, 2};
    static const double ew[] = {1, 1, 1, 1, 1, 1, 1, 1};
    solve_dag g = {7, first, pred, w, ew};
    double dte[7];
    CHECK(solve_distance_to_end(&g, dte) == 0);
    static const double want_dte[] = {17, 14, 12, 10, 7, 4, 2};
    for (int i = 0; i < 7; i++) CHECK(dte[i] == want_dte[i], "node %c: %g, by hand %g", 'A' + i, dte[i], want_dte[i]);
    int cl[7];
    CHECK(solve_lc(&g, cl) == 3);
    static const int want_lc[] = {0, 0, 1, 0, 0, 2, 0};
    for (int i = 0; i < 7; i++) CHECK(cl[i] == want_lc[i], "linear clustering: node %c in %d, by hand %d", 'A' + i, cl[i], want_lc[i]);
    CHECK(solve_lc_merge(&g, 3, cl) == 2);
    static const int want_m[] = {0, 0, 1, 0, 0, 1, 0};
    for (int i = 0; i < 7; i++) CHECK(cl[i] == want_m[i], "merging: node %c in %d, by hand %d", 'A' + i, cl[i], want_m[i]);
    CHECK(solve_cluster_length(&g, cl) == 13);
    int one[7] = {0};
    CHECK(solve_cluster_length(&g, one) == 15);
    CHECK(solve_merge_to(&g, 2, 1, cl) == 1);
    for (int i = 0; i < 7; i++) CHECK(cl[i] == 0);
}

/* Merging down, one pair at a time, the pair whose union schedules
 * shortest (ties: the first pair in label order): four independent nodes
 * of weights 5, 4, 3, 1.  4 -> 3 clusters: {4,1} and {3,1} both give 5,
 * {4,1} comes first; 3 -> 2: {5}+{3} and {4,1}+{3} both give 8, {5,3}
 * first.  (Greedy: {5,1} {4,3} would give 7.) */
static void merge_down(void)
{
    static const int first[] = {0, 0, 0, 0, 0};
    solve_dag g = {4, first, NULL, (const double[]){5, 4, 3, 1}, NULL};
    int cl[4] = {0, 1, 2, 3};
    CHECK(solve_merge_to(&g, 4, 2, cl) == 2);
    CHECK(cl[0] == cl[2] && cl[1] == cl[3] && cl[0] != cl[1], "got %d %d %d %d", cl[0], cl[1], cl[2], cl[3]);
    CHECK(solve_cluster_length(&g, cl) == 8);
}

/* The method on networks: a valid mapping, every layer whole, never on a
 * device that does not support it, and no slower than the single-device
 * mapping (here its own one-cluster mapping: all on d0, the fastest device
 * that supports everything). */
static void networks(void)
{
    static const char *nets[] = {"branchy", "resnet50", "toy6"};
    char err[BASE_ERRLEN];
    for (int i = 0; i < 3; i++) {
        net *n = net_zoo(nets[i], err);
        platform *pl = splatform_link(3, ",\"supports\":[\"Conv\",\"ReLU\"]", 2e4, 5);
        cost_model *cm = cost_new(n, pl, NULL, NULL, err);
        solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
        mapping *m = mapping_new(n->n, pl->ndev);
        solve_result r;
        CHECK(solve_run("cluster", &p, m, &r, err) == 0, "%s", err);
        for (int l = 0; l < n->n; l++) {
            CHECK(mapping_nslices(m, l) == 1);
            CHECK(platform_supports(pl, mapping_slices(m, l)[0].dev, n->layers[l].kind));
        }
        printf("%s: %s; latency %.6g ms\n", nets[i], r.detail, r.obj.latency_ms);
        solve_result rs;
        CHECK(solve_run("single", &p, m, &rs, err) == 0, "%s", err);
        CHECK(r.obj.latency_ms <= rs.obj.latency_ms, "%s: cluster %g ms, single %g ms", nets[i], r.obj.latency_ms, rs.obj.latency_ms);
        mapping_free(m);
        cost_free(cm);
        platform_free(pl);
        net_free(n);
    }
}

int main(void)
{
    hand();
    merge_down();
    networks();
    return check_done("test_cluster");
}
