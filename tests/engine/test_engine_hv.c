/* test_engine_hv.c -- exact hypervolume against independent computations:
 * small sets by inclusion-exclusion over all subsets (the volume of an
 * intersection of boxes is the box at the componentwise maximum), random
 * larger sets by brute-force box decomposition over the grid of all
 * coordinates, for 2, 3 and 4 objectives with ties and duplicates; edge
 * cases (points outside the reference, on its boundary, empty set). */
#include "check.h"
#include "util.h"

static unsigned st = 7;
static double urand(int levels)
{
    st = st * 1664525u + 1013904223u;
    unsigned v = st >> 8;
    return levels ? (double)(v % levels) / levels : (v % 1000000) / 1e6;
}

static double incl_excl(int n, int m, const double *p, const double *ref)
{
    double total = 0;
    for (unsigned s = 1; s < (1u << n); s++) {
        double vol = 1, mx[8];
        for (int k = 0; k < m; k++) mx[k] = -INFINITY;
        int bits = 0;
        for (int i = 0; i < n; i++)
            if (s >> i & 1) {
                bits++;
                for (int k = 0; k < m; k++)
                    if (p[i * m + k] > mx[k]) mx[k] = p[i * m + k];
            }
        for (int k = 0; k < m; k++) vol *= ref[k] > mx[k] ? ref[k] - mx[k] : 0;
        total += bits % 2 ? vol : -vol;
    }
    return total;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* grid of every coordinate per axis; a cell counts if its lower corner is
 * weakly dominated by a point */
static double grid(int n, int m, const double *p, const double *ref)
{
    double *ax[8];
    int len[8];
    for (int k = 0; k < m; k++) {
        ax[k] = malloc((size_t)(n + 1) * sizeof(double));
        int c = 0;
        for (int i = 0; i < n; i++)
            if (p[i * m + k] < ref[k]) ax[k][c++] = p[i * m + k];
        ax[k][c++] = ref[k];
        qsort(ax[k], (size_t)c, sizeof(double), cmpd);
        len[k] = c;
    }
    double vol = 0;
    int idx[8] = {0};
    for (;;) {
        int ok = 1;
        for (int k = 0; k < m; k++) ok &= idx[k] + 1 < len[k];
        if (ok) {
            double cell = 1;
            for (int k = 0; k < m; k++) cell *= ax[k][idx[k] + 1] - ax[k][idx[k]];
            if (cell > 0) {
                int dom = 0;
                for (int i = 0; i < n && !dom; i++) {
                    dom = 1;
                    for (int k = 0; k < m; k++) dom &= p[i * m + k] <= ax[k][idx[k]];
                }
                if (dom) vol += cell;
            }
        }
        int k = 0;
        while (k < m && ++idx[k] >= len[k] - 1) idx[k++] = 0;
        if (k == m) break;
    }
    for (int k = 0; k < m; k++) free(ax[k]);
    return vol;
}

int main(void)
{
    double ref[4] = {1, 1, 1, 1};
    for (int m = 2; m <= 4; m++)
        for (int trial = 0; trial < 40; trial++) {
            int n = 1 + trial % 10;
            double p[40];
            for (int i = 0; i < n * m; i++) p[i] = urand(trial % 2 ? 4 : 0) * 1.1; /* some beyond ref */
            if (n > 2) memcpy(p + m, p, (size_t)m * sizeof *p);                    /* a duplicate */
            double want = incl_excl(n, m, p, ref), got = nsga_hv(n, m, p, ref);
            CHECK(fabs(got - want) < 1e-12, "m %d n %d: hv %.15g vs inclusion-exclusion %.15g", m, n, got, want);
        }
    int sizes[3] = {300, 80, 18};
    for (int m = 2; m <= 4; m++)
        for (int trial = 0; trial < 4; trial++) {
            int n = sizes[m - 2];
            double *p = malloc((size_t)n * m * sizeof *p);
            for (int i = 0; i < n; i++) { /* near a simplex so many points are non-dominated */
                double s = 0;
                for (int k = 0; k < m; k++) s += p[i * m + k] = urand(trial % 2 ? 20 : 0) + 0.01;
                for (int k = 0; k < m; k++) p[i * m + k] = p[i * m + k] / s * (0.8 + 0.4 * urand(0));
            }
            double want = grid(n, m, p, ref), got = nsga_hv(n, m, p, ref);
            CHECK(fabs(got - want) < 1e-10, "m %d n %d: hv %.15g vs grid %.15g", m, n, got, want);
            if (m == 2) CHECK(fabs(util_hv2(n, p, 1, 1) - want) < 1e-10, "util_hv2 agrees");
            if (m == 3) CHECK(fabs(util_hv3(n, p, ref) - want) < 1e-10, "util_hv3 agrees");
            free(p);
        }
    /* edges */
    double q[] = {0.5, 0.5, 1.0, 0.2, 1.5, -1.0};
    CHECK(nsga_hv(0, 2, q, ref) == 0, "empty set");
    CHECK(fabs(nsga_hv(1, 2, q, ref) - 0.25) < 1e-15, "one box");
    CHECK(fabs(nsga_hv(3, 2, q, ref) - 0.25) < 1e-15, "points on or beyond the reference are ignored");
    double r3[3] = {2, 3, 4}, one[3] = {1, 1, 1};
    CHECK(fabs(nsga_hv(1, 3, one, r3) - 6) < 1e-15, "3-D box");
    CHECK(nsga_hv(1, 2, q, NULL) < 0, "no reference point");
    double nanp[2] = {NAN, 0};
    CHECK(nsga_hv(1, 2, nanp, ref) < 0, "NaN rejected");
    return check_done("test_engine_hv");
}
