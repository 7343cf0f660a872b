/* test_apportion.c -- mapping_apportion(): hand-computed cases, then
 * properties over random totals and weights, checked against an
 * independent largest-remainder (qsort on exact remainders) and an
 * independent feasibility criterion for "within one channel and never
 * empty".
 */
#include "tutil.h"

static void expect(int line, int total, int k, const int *w, const int *want)
{
    int out[16];
    mapping_apportion(total, k, w, out);
    for (int i = 0; i < k; i++)
        if (out[i] != want[i]) {
            fprintf(stderr, "line %d: apportion(%d) share %d = %d, expected %d\n", line, total, i,
                    out[i], want[i]);
            check_failures++;
        }
}
#define EXPECT(total, k, w, ...) expect(__LINE__, total, k, (const int[])w, (const int[]){__VA_ARGS__})
#define W(...) {__VA_ARGS__}

static void test_cases(void)
{
    EXPECT(10, 3, W(1, 1, 1), 4, 3, 3);        /* 3.33 each: tie -> lowest index */
    EXPECT(10, 2, W(1, 2), 3, 7);              /* 3.33 / 6.67 */
    EXPECT(5, 2, W(1, 1), 3, 2);
    EXPECT(20, 3, W(1, 2, 2), 4, 8, 8);        /* the thesis' conv example */
    EXPECT(10, 4, W(1, 1, 1, 2), 2, 2, 2, 4);  /* ... and its fc */
    EXPECT(96, 2, W(3, 2), 58, 38);            /* 57.6 / 38.4 */
    EXPECT(1000, 2, W(2, 1), 667, 333);
    EXPECT(4096, 5, W(1, 1, 1, 1, 1), 820, 819, 819, 819, 819);
    EXPECT(0, 3, W(1, 2, 3), 0, 0, 0);
    EXPECT(1, 3, W(1, 1, 1), 1, 0, 0);         /* fewer channels than shares */
    EXPECT(2, 5, W(1, 1, 1, 1, 1), 1, 1, 0, 0, 0);
    EXPECT(1, 3, W(1, 1, 2), 0, 0, 1);         /* largest remainder: 0.5 */
    EXPECT(7, 1, W(5), 7);
    EXPECT(10, 2, W(0, 0), 5, 5);              /* all zero: equal shares */
    /* total >= k: no empty share.  3 of [1,1,14]: quotas .19 .19 2.63; pure
     * largest remainder gives 0,0,3; the rule takes from the largest. */
    EXPECT(3, 3, W(1, 1, 14), 1, 1, 1);
    /* 2 of [4,1]: 1.6 / .4 -> LR 2,0 -> 1,1 (both within one channel). */
    EXPECT(2, 2, W(4, 1), 1, 1);
    /* A zero weight still gets a channel when total >= k. */
    EXPECT(7, 3, W(2, 0, 1), 4, 1, 2);
}

/* Independent largest remainder: sort indices by exact remainder (desc),
 * index (asc). */
static const int64_t *g_rem;
static int by_rem(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (g_rem[i] != g_rem[j]) return g_rem[i] > g_rem[j] ? -1 : 1;
    return i - j;
}

static void test_random(void)
{
    uint64_t s = 7;
    int w[64], out[64], lr[64], idx[64];
    int64_t rem[64];
    long cases = 0, feasible_fixes = 0, infeasible = 0;
    for (int rep = 0; rep < 300000; rep++) {
        int k = trange(&s, 1, rep % 10 == 0 ? 64 : 16);
        int total;
        switch (rep % 4) {
        case 0: total = trange(&s, 0, 2 * k); break;        /* few channels */
        case 1: total = trange(&s, 0, 100); break;
        case 2: total = trange(&s, 0, 5000); break;
        default: total = trange(&s, 0, 1 << 20); break;
        }
        int wmax = rep % 3 == 0 ? 3 : 50;
        int64_t W = 0;
        for (int i = 0; i < k; i++) W += w[i] = trange(&s, 1, wmax);
        mapping_apportion(total, k, w, out);
        cases++;
        /* sum and sign */
        int64_t sum = 0;
        int neg = 0, empty = 0;
        for (int i = 0; i < k; i++) sum += out[i], neg |= out[i] < 0, empty |= out[i] == 0;
        if (sum != total || neg) {
            fprintf(stderr, "apportion(%d, k=%d): sum %lld\n", total, k, (long long)sum);
            check_failures++;
            continue;
        }
        if (total >= k && empty) {
            fprintf(stderr, "apportion(%d, k=%d): an empty share\n", total, k);
            check_failures++;
        }
        /* Independent largest remainder. */
        int64_t given = 0;
        int need_fix = 0;
        for (int i = 0; i < k; i++) {
            lr[i] = (int)((int64_t)total * w[i] / W);
            rem[i] = (int64_t)total * w[i] % W;
            given += lr[i];
            idx[i] = i;
        }
        g_rem = rem;
        qsort(idx, (size_t)k, sizeof *idx, by_rem);
        for (int a = 0; a < total - given; a++) lr[idx[a]]++;
        for (int i = 0; i < k; i++) need_fix |= total >= k && lr[i] == 0;
        /* Feasibility of "every share within one channel of its quota and
         * none empty": lower bounds max(floor, 1) must fit in total. */
        int64_t lows = 0;
        for (int i = 0; i < k; i++) {
            int64_t f = (int64_t)total * w[i] / W;
            lows += (total >= k && f < 1) ? 1 : f;
        }
        int feasible = lows <= total;
        if (!need_fix) {
            for (int i = 0; i < k; i++)
                if (out[i] != lr[i]) {
                    fprintf(stderr, "apportion(%d, k=%d): share %d = %d, largest remainder "
                            "gives %d\n", total, k, i, out[i], lr[i]);
                    check_failures++;
                    break;
                }
        } else if (feasible) {
            feasible_fixes++;
        } else {
            infeasible++;
        }
        if (feasible)
            for (int i = 0; i < k; i++) {
                int64_t d = (int64_t)out[i] * W - (int64_t)total * w[i]; /* (share-q)*W */
                if (d <= -W || d >= W) {
                    fprintf(stderr, "apportion(%d, k=%d): share %d = %d is not within one "
                            "channel of %d*%d/%lld\n", total, k, i, out[i], total, w[i],
                            (long long)W);
                    check_failures++;
                    break;
                }
            }
    }
    printf("%ld random cases (%ld needed the non-empty fix and stayed within one channel, "
           "%ld could not)\n", cases, feasible_fixes, infeasible);
    CHECK(feasible_fixes > 0 && infeasible > 0); /* both branches were exercised */
}

int main(void)
{
    test_cases();
    test_random();
    return check_done("test_apportion");
}
