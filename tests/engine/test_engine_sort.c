/* test_engine_sort.c -- non-dominated sorting and crowding distance.
 * Property: Deb's sort, the fast sort (ENS-BS, O(n log n) for m = 2) and a
 * naive peeling written here give identical ranks on random sets full of
 * ties and duplicates, for 2, 3 and 4 objectives, with and without
 * constraint violations.  Plus hand-checked cases, the front properties,
 * crowding distances by hand, and bad input. */
#include "check.h"
#include "util.h"

static unsigned rnd_state = 1;
static unsigned rnd(void)
{
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return rnd_state >> 8;
}

/* constrained domination, written out plainly */
static int cdom(const double *a, double ca, const double *b, double cb, int m)
{
    if (ca == 0 && cb > 0) return 1;
    if (ca > 0 && cb == 0) return 0;
    if (ca > 0 && cb > 0) return ca < cb;
    int better = 0;
    for (int k = 0; k < m; k++) {
        if (a[k] > b[k]) return 0;
        if (a[k] < b[k]) better = 1;
    }
    return better;
}

/* naive peeling: rank r = points not dominated by any unranked point */
static void naive_rank(int n, int m, const double *obj, const double *cv, int *rank)
{
    for (int i = 0; i < n; i++) rank[i] = -1;
    for (int r = 0, left = n; left > 0; r++) {
        int *now = calloc((size_t)n, sizeof *now);
        for (int i = 0; i < n; i++) {
            if (rank[i] >= 0) continue;
            int dom = 0;
            for (int j = 0; j < n && !dom; j++)
                if (rank[j] < 0 && j != i) dom = cdom(obj + j * m, cv ? cv[j] : 0, obj + i * m, cv ? cv[i] : 0, m);
            now[i] = !dom;
        }
        for (int i = 0; i < n; i++)
            if (now[i]) rank[i] = r, left--;
        free(now);
    }
}

static void random_set(int n, int m, int levels, double *obj, double *cv, int with_cv)
{
    for (int i = 0; i < n * m; i++) obj[i] = levels ? (double)(rnd() % levels) : (rnd() % 1000000) / 1e6;
    for (int i = 0; i < n / 10; i++) { /* exact duplicates */
        int a = rnd() % n, b = rnd() % n;
        memcpy(obj + a * m, obj + b * m, (size_t)m * sizeof *obj);
        if (cv) cv[a] = cv[b];
    }
    if (cv)
        for (int i = 0; i < n; i++) cv[i] = with_cv && rnd() % 3 == 0 ? (double)(1 + rnd() % 4) / 2 : 0;
}

static void property(void)
{
    int sizes[] = {1, 2, 3, 7, 40, 200, 601};
    for (int m = 2; m <= 4; m++)
        for (int si = 0; si < 7; si++)
            for (int levels = 0; levels <= 5; levels += 5) /* continuous, and 5 levels: ties */
                for (int wc = 0; wc <= 2; wc++) {
                    int n = sizes[si];
                    double *obj = malloc((size_t)n * m * sizeof *obj), *cv = malloc((size_t)n * sizeof *cv);
                    int *r1 = malloc((size_t)n * sizeof *r1), *r2 = malloc((size_t)n * sizeof *r2),
                        *r3 = malloc((size_t)n * sizeof *r3);
                    random_set(n, m, levels, obj, cv, wc == 2);
                    double *c = wc ? cv : NULL;
                    int f1 = nsga_sort_deb(n, m, obj, c, r1), f2 = nsga_sort_fast(n, m, obj, c, r2);
                    naive_rank(n, m, obj, c, r3);
                    int same = f1 == f2, naive = 1, maxr = -1;
                    for (int i = 0; i < n; i++) {
                        same &= r1[i] == r2[i];
                        naive &= r1[i] == r3[i];
                        if (r1[i] > maxr) maxr = r1[i];
                    }
                    CHECK(same, "deb and fast differ: m %d n %d levels %d cv %d", m, n, levels, wc);
                    CHECK(naive, "deb and naive differ: m %d n %d levels %d cv %d", m, n, levels, wc);
                    CHECK(f1 == maxr + 1, "front count %d vs max rank %d", f1, maxr);
                    /* front properties: nobody dominated within or from a later front;
                     * every rank r > 0 point is dominated by some rank r - 1 point */
                    int ok = 1;
                    for (int i = 0; i < n && ok; i++) {
                        int has_parent = r1[i] == 0;
                        for (int j = 0; j < n; j++) {
                            int d = cdom(obj + j * m, c ? c[j] : 0, obj + i * m, c ? c[i] : 0, m);
                            if (d && r1[j] >= r1[i]) ok = 0;
                            if (d && r1[j] == r1[i] - 1) has_parent = 1;
                        }
                        ok &= has_parent;
                    }
                    CHECK(ok, "front properties: m %d n %d levels %d cv %d", m, n, levels, wc);
                    free(obj), free(cv), free(r1), free(r2), free(r3);
                }
}

static void large(void)
{
    /* 3000 random 3-objective points: the two sorts agree */
    int n = 3000, m = 3;
    double *obj = malloc((size_t)n * m * sizeof *obj);
    int *r1 = malloc((size_t)n * sizeof *r1), *r2 = malloc((size_t)n * sizeof *r2);
    random_set(n, m, 0, obj, NULL, 0);
    int f1 = nsga_sort_deb(n, m, obj, NULL, r1), f2 = nsga_sort_fast(n, m, obj, NULL, r2);
    CHECK(f1 == f2 && memcmp(r1, r2, (size_t)n * sizeof *r1) == 0, "3000 points: %d vs %d fronts", f1, f2);
    free(obj), free(r1), free(r2);
}

static void by_hand(void)
{
    /* 2-D: (1,4) (2,2) (4,1) front 0; (3,3) (2,4) front 1; (4,4) front 2; (2,2) twice */
    double obj[] = {1, 4, 2, 2, 4, 1, 3, 3, 2, 4, 4, 4, 2, 2};
    int want[] = {0, 0, 0, 1, 1, 2, 0}, r[7];
    CHECK(nsga_sort_fast(7, 2, obj, NULL, r) == 3, "three fronts");
    for (int i = 0; i < 7; i++) CHECK(r[i] == want[i], "point %d rank %d, want %d", i, r[i], want[i]);
    /* constrained: infeasible ones after the feasible, one front per cv value */
    double cv[] = {0, 0, 2, 0, 1, 0, 1};
    int wantc[] = {0, 0, 4, 1, 3, 2, 3};
    CHECK(nsga_sort_fast(7, 2, obj, cv, r) == 5, "five fronts with constraints");
    for (int i = 0; i < 7; i++) CHECK(r[i] == wantc[i], "constrained point %d rank %d, want %d", i, r[i], wantc[i]);
    CHECK(nsga_sort_deb(7, 2, obj, cv, r) == 5, "deb: five fronts");
    for (int i = 0; i < 7; i++) CHECK(r[i] == wantc[i], "deb constrained point %d rank %d", i, r[i]);

    /* crowding: front (0,4) (1,2) (3,1) (4,0): ends infinite; (1,2): (3-0)/4 + (4-1)/4 = 1.5;
     * (3,1): (4-1)/4 + (2-0)/4 = 1.25 */
    double f[] = {0, 4, 1, 2, 3, 1, 4, 0}, cd[4];
    int rk[4] = {0, 0, 0, 0};
    CHECK(nsga_crowding_distance(4, 2, f, rk, cd) == 0, "crowding ok");
    CHECK(isinf(cd[0]) && isinf(cd[3]) && fabs(cd[1] - 1.5) < 1e-12 && fabs(cd[2] - 1.25) < 1e-12,
          "crowding %g %g %g %g", cd[0], cd[1], cd[2], cd[3]);
    /* two fronts are crowded separately; fronts of <= 2 points are all infinite */
    double g[] = {0, 4, 1, 2, 3, 1, 4, 0, 5, 5, 6, 6};
    int rg[6] = {0, 0, 0, 0, 1, 1};
    double cg[6];
    nsga_crowding_distance(6, 2, g, rg, cg);
    CHECK(fabs(cg[1] - 1.5) < 1e-12 && isinf(cg[4]) && isinf(cg[5]), "per-front crowding");
}

static void bad_input(void)
{
    double obj[] = {0, NAN, 1, 1}, cv[] = {0, -1};
    int r[2];
    CHECK(nsga_sort_fast(2, 2, obj, NULL, r) == NSGA_EINVAL, "NaN objective rejected");
    CHECK(nsga_sort_deb(2, 2, obj, NULL, r) == NSGA_EINVAL, "NaN objective rejected (deb)");
    obj[1] = 0;
    CHECK(nsga_sort_fast(2, 2, obj, cv, r) == NSGA_EINVAL, "negative violation rejected");
    CHECK(nsga_sort_fast(-1, 2, obj, NULL, r) == NSGA_EINVAL, "negative n rejected");
    CHECK(nsga_sort_fast(2, 0, obj, NULL, r) == NSGA_EINVAL, "m = 0 rejected");
    CHECK(nsga_sort_fast(0, 2, NULL, NULL, NULL) == 0, "empty set: no fronts");
}

int main(void)
{
    property();
    large();
    by_hand();
    bad_input();
    return check_done("test_engine_sort");
}
