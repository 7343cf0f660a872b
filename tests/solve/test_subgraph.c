/* test_subgraph.c -- seed 004's subgraph extraction, checked independently:
 *  - property test on random DAGs: every extracted subgraph is convex (no
 *    node outside it both reachable from it and reaching it, by this
 *    test's own depth-first search), weakly connected, made of supported
 *    nodes only, and every supported node is in one; it is maximal: no
 *    supported neighbour that a later subgraph took would have kept it
 *    convex; post-pruning splits each subgraph into convex connected
 *    pieces with one input operator and one output operator each;
 *  - the seed's figure 2 by hand: a diamond whose one branch is not
 *    supported gives two subgraphs, not one non-convex;
 *  - the method on the accelerator preset: only supported layers land on
 *    the accelerator, and offloading never makes the simulated latency
 *    worse than the host alone.
 */
#include "sutil.h"

#include "mapping.h"
#include "solve.h"

#include <string.h>

#define MAXN 48

typedef struct {
    int n;
    int first[MAXN + 1], pred[MAXN * 4];
    unsigned char adj[MAXN][MAXN]; /* adj[a][b]: edge a -> b */
} dag;

static void reach_from(const dag *g, int s, unsigned char *seen)
{
    for (int b = 0; b < g->n; b++)
        if (g->adj[s][b] && !seen[b]) {
            seen[b] = 1;
            reach_from(g, b, seen);
        }
}

/* Convex by definition: no v outside X with a path X -> v -> X. */
static int convex(const dag *g, const int *lab, int k)
{
    static unsigned char from[MAXN][MAXN];
    memset(from, 0, sizeof from);
    for (int a = 0; a < g->n; a++) reach_from(g, a, from[a]);
    for (int v = 0; v < g->n; v++) {
        if (lab[v] == k) continue;
        int down = 0, up = 0; /* v reachable from X, X reachable from v */
        for (int x = 0; x < g->n; x++)
            if (lab[x] == k) down |= from[x][v], up |= from[v][x];
        if (down && up) return 0;
    }
    return 1;
}

static int connected(const dag *g, const int *lab, int k)
{
    int seen[MAXN] = {0}, stack[MAXN], sp = 0, start = -1, count = 0, total = 0;
    for (int v = 0; v < g->n; v++)
        if (lab[v] == k) {
            total++;
            if (start < 0) start = v;
        }
    if (start < 0) return 0;
    seen[start] = 1, stack[sp++] = start;
    while (sp) {
        int v = stack[--sp];
        count++;
        for (int u = 0; u < g->n; u++)
            if ((g->adj[v][u] || g->adj[u][v]) && lab[u] == k && !seen[u]) seen[u] = 1, stack[sp++] = u;
    }
    return count == total;
}

static void random_dag(dag *g, uint64_t *s)
{
    memset(g, 0, sizeof *g);
    g->n = srange(s, 2, MAXN);
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        g->first[i] = k;
        int np = i ? srange(s, 0, 3) : 0;
        for (int t = 0; t < np; t++) {
            int p = srange(s, i > 6 ? i - 6 : 0, i - 1); /* mostly local, like CNNs */
            if (g->adj[p][i]) continue;
            g->adj[p][i] = 1;
            g->pred[k++] = p;
        }
    }
    g->first[g->n] = k;
}

static void properties(void)
{
    uint64_t s = 4;
    int total_sub = 0, total_pieces = 0, nonconvex_neighbours = 0;
    for (int trial = 0; trial < 500; trial++) {
        dag g;
        random_dag(&g, &s);
        unsigned char ok[MAXN];
        int pct = srange(&s, 30, 90);
        for (int i = 0; i < g.n; i++) ok[i] = srange(&s, 0, 99) < pct;
        solve_dag sg = {g.n, g.first, g.pred, NULL, NULL};
        int lab[MAXN], piece[MAXN];
        int k = solve_convex_subgraphs(&sg, ok, lab);
        CHECK(k >= 0);
        total_sub += k;
        for (int i = 0; i < g.n; i++) CHECK(ok[i] ? lab[i] >= 0 && lab[i] < k : lab[i] == -1);
        for (int c = 0; c < k; c++) {
            CHECK(convex(&g, lab, c), "trial %d: subgraph %d not convex", trial, c);
            CHECK(connected(&g, lab, c), "trial %d: subgraph %d not connected", trial, c);
            /* maximal: a supported neighbour in a later subgraph would break convexity */
            for (int v = 0; v < g.n; v++) {
                if (lab[v] <= c) continue;
                int adjacent = 0;
                for (int x = 0; x < g.n; x++) adjacent |= lab[x] == c && (g.adj[x][v] || g.adj[v][x]);
                if (!adjacent) continue;
                int tmp[MAXN];
                memcpy(tmp, lab, sizeof tmp);
                tmp[v] = c;
                CHECK(!convex(&g, tmp, c), "trial %d: subgraph %d could take node %d", trial, c, v);
                nonconvex_neighbours++;
            }
        }
        int np = solve_prune(&sg, lab, piece);
        CHECK(np >= k);
        total_pieces += np;
        for (int i = 0; i < g.n; i++) CHECK(lab[i] < 0 ? piece[i] == -1 : piece[i] >= 0 && piece[i] < np);
        for (int q = 0; q < np; q++) {
            int sub = -1, nin = 0, nout = 0;
            for (int v = 0; v < g.n; v++) {
                if (piece[v] != q) continue;
                CHECK(sub < 0 || lab[v] == sub, "piece %d spans two subgraphs", q);
                sub = lab[v];
                int in = g.first[v] == g.first[v + 1], out = 1;
                for (int u = 0; u < g.n; u++) {
                    if (g.adj[u][v] && piece[u] != q) in = 1;
                    if (g.adj[v][u]) out = out && 1;
                }
                int has_succ = 0, ext = 0;
                for (int u = 0; u < g.n; u++)
                    if (g.adj[v][u]) has_succ = 1, ext |= piece[u] != q;
                out = !has_succ || ext;
                nin += in, nout += out;
            }
            CHECK(sub >= 0);
            CHECK(nin == 1 && nout == 1, "trial %d: piece %d has %d input and %d output operators", trial, q, nin, nout);
            CHECK(convex(&g, piece, q), "trial %d: piece %d not convex", trial, q);
            CHECK(connected(&g, piece, q), "trial %d: piece %d not connected", trial, q);
        }
    }
    printf("500 random DAGs: %d subgraphs, %d pieces, %d neighbours refused for convexity\n", total_sub,
           total_pieces, nonconvex_neighbours);
    CHECK(nonconvex_neighbours > 0);
    CHECK(total_pieces > total_sub);
}

/* Seed 004 figure 2: a -> b -> d and a -> c -> d with c on the CPU:
 * {a, b, d} is not convex (a -> c -> d leaves it): {a, b} and {d}. */
static void figure2(void)
{
    enum { a, b, c, d };
    static const int first[] = {0, 0, 1, 2, 4}, pred[] = {a, a, b, c};
    solve_dag g = {4, first, pred, NULL, NULL};
    unsigned char ok[] = {1, 1, 0, 1};
    int lab[4];
    CHECK(solve_convex_subgraphs(&g, ok, lab) == 2);
    CHECK(lab[a] == 0 && lab[b] == 0 && lab[c] == -1 && lab[d] == 1);
    ok[c] = 1; /* all supported: one subgraph */
    CHECK(solve_convex_subgraphs(&g, ok, lab) == 1);
    /* pruning: a has two successors inside, d two predecessors: one input
     * (a) and one output (d) operator, so the diamond stays whole */
    int piece[4];
    CHECK(solve_prune(&g, lab, piece) == 1);
}

static void method(void)
{
    static const char *nets[] = {"resnet50", "mobilenetv2", "alexnet-bvlc", "branchy"};
    char err[BASE_ERRLEN];
    platform *pl = platform_open("jetson-nx-4-cpudla", err);
    CHECK(pl != NULL, "%s", err);
    for (int i = 0; pl && i < 4; i++) {
        net *n = net_zoo(nets[i], err);
        cost_model *cm = cost_new(n, pl, NULL, NULL, err);
        solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
        mapping *m = mapping_new(n->n, pl->ndev);
        solve_result r, rs;
        CHECK(solve_run("subgraph", &p, m, &r, err) == 0, "%s", err);
        int on_acc = 0;
        for (int l = 0; l < n->n; l++) {
            int d = mapping_slices(m, l)[0].dev;
            CHECK(platform_supports(pl, d, n->layers[l].kind));
            on_acc += pl->dev[d].restricted;
        }
        CHECK(solve_run("single", &p, m, &rs, err) == 0, "%s", err);
        CHECK(r.obj.latency_ms <= rs.obj.latency_ms);
        printf("%s: %s: %d layers on the accelerator, %.6g ms (host alone %.6g ms)\n", nets[i], r.detail,
               on_acc, r.obj.latency_ms, rs.obj.latency_ms);
        mapping_free(m);
        cost_free(cm);
        net_free(n);
    }
    /* A platform without an accelerator: one clear error. */
    platform *plain = splatform(2, NULL);
    net *n = net_zoo("toy6", err);
    cost_model *cm = cost_new(n, plain, NULL, NULL, err);
    solve_problem p = {n, plain, cm, NET_SPLIT_DEFAULT, 0};
    mapping *m = mapping_new(n->n, plain->ndev);
    solve_result r;
    CHECK(solve_run("subgraph", &p, m, &r, err) == -1);
    CHECK(strstr(err, "supports") != NULL, "%s", err);
    mapping_free(m), cost_free(cm), net_free(n), platform_free(plain), platform_free(pl);
}

int main(void)
{
    properties();
    figure2();
    method();
    return check_done("test_subgraph");
}
