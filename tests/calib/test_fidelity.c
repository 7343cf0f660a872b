/* test_fidelity.c -- the calibrated model predicts the runtime: a --quick
 * calibration of local-2 on alexnet-bvlc, then a dozen mappings (single
 * device, campaign fronts, random genomes) predicted and measured by
 * bench_fidelity --pair (each measured in 3 rounds over the list, right
 * after the single-device mappings of the devices it computes on); here,
 * independently:
 *  - asserted (does not depend on speed): every row parsed, the
 *    single-device mappings are their own references (ratio 1), peak
 *    memory MAPE <= 10%;
 *  - reported, never failed on: latency relative to those references
 *    (MAPE, Spearman) and absolute latency.  The cores of these machines
 *    change speed by tens of percent within minutes, each on its own, so
 *    a timing goal in CI fails for reasons no code change makes; the
 *    latency goals live in bench/fidelity and bench/README.md.
 * Label "fidelity": it measures wall-clock latency, so it is skipped (exit
 * 77) when other processes keep the machine too busy to measure anything
 * (idle fraction below 0.6 at the start, or other processes taking more
 * than 25% of the CPU during the median run).
 */
#include "runtime.h"
#include "tcheck.h"

#include <unistd.h>

#define MAXP 128

/* Average ranks, written here without the library's helper; values in a
 * chain each within tol (relative) of the one before tie.  The model does
 * not claim an order between mappings it predicts within 2% of each other
 * (vertical mappings that move a layer or two: 0.1-0.5% apart), and the
 * measured order of such mappings is the machine's noise. */
static void ranks(const double *v, int n, double tol, double *r)
{
    int ix[MAXP];
    for (int i = 0; i < n; i++) ix[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[ix[j]] < v[ix[j - 1]]; j--) {
            int t = ix[j];
            ix[j] = ix[j - 1];
            ix[j - 1] = t;
        }
    for (int a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && v[ix[b]] <= v[ix[b - 1]] * (1 + tol); b++) {}
        for (int k = a; k < b; k++) r[ix[k]] = (a + 1 + b) / 2.0;
    }
}

/* Spearman's rho of predictions x (ties within 2%) and measurements y. */
static double spearman(const double *x, const double *y, int n)
{
    double rx[MAXP], ry[MAXP], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    ranks(x, n, 0.02, rx);
    ranks(y, n, 0, ry);
    for (int i = 0; i < n; i++) mx += rx[i] / n, my += ry[i] / n;
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxy / sqrt(sxx * syy);
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Idle fraction of the machine over secs, from /proc/stat. */
static double idle_now(double secs)
{
    unsigned long long v[2][8];
    for (int p = 0; p < 2; p++) {
        FILE *f = fopen("/proc/stat", "r");
        if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[p][0], &v[p][1],
                         &v[p][2], &v[p][3], &v[p][4], &v[p][5], &v[p][6], &v[p][7]) != 8) {
            if (f) fclose(f);
            return 1;
        }
        fclose(f);
        if (!p) sleep_s(secs);
    }
    double tot = 0;
    for (int i = 0; i < 8; i++) tot += (double)(v[1][i] - v[0][i]);
    return tot > 0 ? (double)(v[1][3] + v[1][4] - v[0][3] - v[0][4]) / tot : 1;
}

/* Median latency (ms) of n runs of the single-device mapping of device
 * dev, or -1. */
static double reference_ms(int dev, int n)
{
    char cmd[2048], *out, line[512];
    double v[8];
    int k = 0;
    snprintf(cmd, sizeof cmd, "%s mpirun -np 2 %s exec --network alexnet-bvlc --platform local-2 "
             "--single %d --bench 2,20 --json", DSE_BIN, DSE_BIN, dev);
    const char *av[] = {"sh", "-c", cmd, NULL};
    for (int i = 0; i < n && i < 8; i++) {
        int rc = rt_run_job(av, 300, NULL, "dse exec:", &out, NULL, line, sizeof line);
        const char *p = rc ? NULL : strstr(out, "\"objectives\"");
        if (p) p = strstr(p, "\"latency_ms\":");
        if (p && sscanf(p + 13, "%lf", &v[k]) == 1) k++;
        else CHECK(0, "reference run: exit %d: %s", rc, line);
        free(out);
    }
    if (!k) return -1;
    qsort(v, (size_t)k, sizeof *v, cmpd);
    return v[(k - 1) / 2];
}

int main(void)
{
    char dir[256], cmd[4096], *out, line[512];
    double idle0 = idle_now(3);
    if (idle0 < 0.6) {
        printf("SKIPPED: the machine is busy with other work (idle %.2f over 3 s): latencies "
               "measured now would measure that work\n", idle0);
        return 77;
    }
    double before[2] = {reference_ms(0, 3), reference_ms(1, 3)};
    if (before[0] < 0 || before[1] < 0) return 1;
    snprintf(dir, sizeof dir, "/tmp/dse-test-fidelity-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(cmd, sizeof cmd, "%s calibrate --platform local-2 --network alexnet-bvlc --quick -o %s/c.json --db %s/c.db",
             DSE_BIN, dir, dir);
    const char *av[] = {"sh", "-c", cmd, NULL};
    int rc = rt_run_job(av, 600, NULL, "dse calibrate:", &out, NULL, line, sizeof line);
    free(out);
    CHECK(rc == 0, "calibrate: exit %d: %s", rc, line);
    if (rc) return 1;
    snprintf(cmd, sizeof cmd,
             "%s --dse %s --platform local-2 --network alexnet-bvlc --coeffs %s/c.json --out %s "
             "--campaigns naive,hybrid:2,vertical --pop 12 --gens 6 --per-front 2 --random 5 "
             "--bench 2,20 --rounds 3 --quiet 0.8 --max-wait 5 --max-foreign 0.15 --pair",
             FIDELITY_BIN, DSE_BIN, dir, dir);
    rc = rt_run_job(av, 900, NULL, "bench_fidelity:", &out, NULL, line, sizeof line);
    free(out);
    CHECK(rc == 0, "bench_fidelity: exit %d: %s", rc, line);
    char csv[400];
    snprintf(csv, sizeof csv, "%s/alexnet-bvlc.csv", dir);
    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    if (!f) return 1;
    double pl[MAXP], ml[MAXP], pm[MAXP], mm[MAXP], foreign[MAXP], ref[MAXP], mr[MAXP], pr[MAXP];
    int single[MAXP], n = 0;
    char row[512];
    if (!fgets(row, sizeof row, f)) row[0] = 0; /* header */
    while (n < MAXP && fgets(row, sizeof row, f)) {
        int idx;
        char src[128];
        if (sscanf(row, "%d,%127[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &idx, src, &pl[n], &ml[n],
                   &pm[n], &mm[n], &foreign[n], &ref[n], &mr[n], &pr[n]) == 10) {
            single[n] = !strncmp(src, "single ", 7);
            n++;
        }
    }
    fclose(f);
    CHECK(n >= 8, "only %d mappings measured", n);
    double sorted[MAXP];
    memcpy(sorted, foreign, (size_t)n * sizeof *foreign);
    qsort(sorted, (size_t)n, sizeof *sorted, cmpd);
    double med_foreign = n ? sorted[n / 2] : 1;
    if (med_foreign > 0.25) {
        printf("SKIPPED: other processes took %.0f%% of the CPU during the median run: latencies "
               "measured now would measure that work\n", 100 * med_foreign);
        return 77;
    }
    /* Single-device mappings are their own references (ratio 1 by
     * construction): the relative figures leave them out. */
    double el = 0, em = 0, er = 0, lo = fmin(before[0], before[1]), hi = fmax(before[0], before[1]);
    double rp[MAXP], rm[MAXP];
    int nr = 0, nsingle = 0;
    for (int i = 0; i < n; i++) {
        el += fabs(pl[i] - ml[i]) / ml[i] / n;
        em += fabs(pm[i] - mm[i]) / mm[i] / n;
        lo = fmin(lo, ref[i]), hi = fmax(hi, ref[i]);
        if (single[i]) {
            CHECK(fabs(mr[i] - 1) < 1e-9 && fabs(pr[i] - 1) < 1e-9, "row %d: a single-device "
                  "mapping's ratio to itself is %g (predicted %g)", i, mr[i], pr[i]);
            nsingle++;
            continue;
        }
        rp[nr] = pr[i], rm[nr++] = mr[i];
    }
    CHECK(nsingle == 2, "%d single-device mappings, not 2", nsingle);
    for (int i = 0; i < nr; i++) er += fabs(rp[i] - rm[i]) / rm[i] / nr;
    double rho = spearman(pl, ml, n), rho_r = spearman(rp, rm, nr);
    int steady = hi / lo <= 1.15;
    printf("%d mappings: %d relative to the single-device runs beside them: latency MAPE %.1f%%, "
           "Spearman %.3f; absolute: latency MAPE %.1f%%, Spearman %.3f; memory MAPE %.1f%% (other "
           "processes: %.0f%% of the CPU in the median run; single-device runs %.2f and %.2f ms "
           "before calibrating, %.2f..%.2f ms in all)\n", n, nr, 100 * er, rho_r, 100 * el, rho,
           100 * em, 100 * med_foreign, before[0], before[1], lo, hi);
    /* Latency depends on how fast the cores run today: its figures are
     * reported, never failed on (the goals live in bench/fidelity).  What
     * does not depend on speed is asserted above; memory below. */
    printf("REPORT (not checked) relative latency MAPE %.1f%% (goal <= 5%%), Spearman %.3f (goal "
           ">= 0.95)%s\n", 100 * er, rho_r, steady ? "" : "; the machine's speed changed during the test");
    CHECK(100 * em <= 10, "memory MAPE %.1f%% > 10%%", 100 * em);
    if (!check_failures) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) {}
    } else {
        fprintf(stderr, "files kept in %s\n", dir);
    }
    return check_failures ? 1 : 0;
}
