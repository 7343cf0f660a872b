/* cmd_plot.c -- `dse plot --campaign ID[,ID...] [--db F] -o DIR`: the
 * Pareto front of each campaign in 3-D and its three 2-D projections, and
 * the convergence of the best value of each objective against generation
 * (one line per campaign, three panels as in the thesis' figures 12-30),
 * drawn by gnuplot (pngcairo).
 *
 * Invariant: the data files gnuplot reads (DIR/front-ID.dat,
 * DIR/convergence-ID.dat) are written from the database with every
 * number exact (%.17g), together with the .gp scripts, before gnuplot
 * runs; so a user can re-plot (cd DIR && gnuplot convergence.gp) and the
 * files survive a missing gnuplot (exit 1).
 */
#include "campaign.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXC 32

static const char plot_help[] =
    "usage: dse plot --campaign ID[,ID...] [--db F] -o DIR\n"
    "PNG plots via gnuplot (pngcairo) into DIR (created if missing):\n"
    "  front-ID-3d.png, front-ID-energy-latency.png, front-ID-memory-latency.png,\n"
    "  front-ID-energy-memory.png   the Pareto front of each campaign\n"
    "  convergence.png              best energy / memory / latency per generation,\n"
    "                               one line per campaign\n"
    "  hypervolume.png              normalised hypervolume per generation\n"
    "and, for campaigns checked with dse validate, predicted vs measured per\n"
    "objective (validation-ID.png).\n"
    "The data (front-ID.dat, convergence-ID.dat, validation-ID.dat) and the gnuplot scripts (*.gp) are\n"
    "written too.  The gnuplot program is taken from $DSE_GNUPLOT, else `gnuplot`.\n";

/* Per campaign: the data ranges of its front (energy, memory, latency) and
 * of its convergence (the three best values, then hypervolume), so a
 * script can fix an axis whose data is a single value: gnuplot would warn
 * "empty range" on the user's terminal for a constant series. */
typedef struct {
    long long id;
    char title[200];
    double flo[3], fhi[3], clo[4], chi[4];
} plotted;

static void range_init(double *lo, double *hi, int n)
{
    for (int k = 0; k < n; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
}

static void range_add(double *lo, double *hi, int k, double v)
{
    if (isnan(v)) return;
    if (v < lo[k]) lo[k] = v;
    if (v > hi[k]) hi[k] = v;
}

/* "set Xrange" around a single value (1% each side), else autoscale. */
static void axis_range(FILE *f, const char *axis, double lo, double hi)
{
    if (lo == hi && isfinite(lo)) {
        double d = lo != 0 ? fabs(lo) * 0.01 : 1;
        fprintf(f, "set %srange [%.17g:%.17g]\n", axis, lo - d, hi + d);
    } else {
        fprintf(f, "set autoscale %s\n", axis);
    }
}

static void safe_title(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++) dst[k++] = *src == '"' || *src == '\\' ? '\'' : *src;
    dst[k] = 0;
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    return fopen(path, "w");
}

static int write_data(res_db *db, const char *dir, plotted *pc, char *err, size_t errn)
{
    char name[64], path[4096], e[CAMP_ERRLEN];
    res_campaign cm;
    if (res_campaign_get(db, pc->id, &cm, e)) {
        snprintf(err, errn, "%s", e);
        return EXIT_USAGE;
    }
    char t[180];
    safe_title(t, sizeof t, cm.name);
    snprintf(pc->title, sizeof pc->title, "%lld: %s", pc->id, t);
    res_campaign_free(&cm);
    res_point *p;
    int n = camp_load_front(db, pc->id, &p, e);
    if (n < 0) {
        snprintf(err, errn, "%s", e);
        return EXIT_FAIL;
    }
    snprintf(name, sizeof name, "front-%lld.dat", pc->id);
    FILE *f = open_in(dir, name, path, sizeof path);
    if (!f) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        res_points_free(p, n);
        return EXIT_FAIL;
    }
    fprintf(f, "# dse front of campaign %lld (%s)\n# index energy_J memory_MB latency_ms\n",
            pc->id, pc->title);
    range_init(pc->flo, pc->fhi, 3);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d %.17g %.17g %.17g\n", i, p[i].obj[0], p[i].obj[1], p[i].obj[2]);
        for (int k = 0; k < 3; k++) range_add(pc->flo, pc->fhi, k, p[i].obj[k]);
    }
    res_points_free(p, n);
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return EXIT_FAIL;
    }
    res_gen *g;
    int ng = res_generations(db, pc->id, &g, e);
    if (ng < 0) {
        snprintf(err, errn, "%s", e);
        return EXIT_FAIL;
    }
    snprintf(name, sizeof name, "convergence-%lld.dat", pc->id);
    if (!(f = open_in(dir, name, path, sizeof path))) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        free(g);
        return EXIT_FAIL;
    }
    fprintf(f,
            "# dse convergence of campaign %lld (%s); NaN = no feasible point\n"
            "# generation best_energy_J best_memory_MB best_latency_ms hypervolume "
            "evaluations\n",
            pc->id, pc->title);
    range_init(pc->clo, pc->chi, 4);
    for (int i = 0; i < ng; i++) {
        fprintf(f, "%ld %.17g %.17g %.17g %.17g %lld\n", g[i].gen, g[i].best[0], g[i].best[1],
                g[i].best[2], g[i].hv, g[i].evaluations);
        for (int k = 0; k < 3; k++) range_add(pc->clo, pc->chi, k, g[i].best[k]);
        range_add(pc->clo, pc->chi, 3, g[i].hv);
    }
    free(g);
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return EXIT_FAIL;
    }
    return 0;
}

static int write_front_script(const char *dir, const plotted *pc, char *err, size_t errn)
{
    char name[64], path[4096];
    snprintf(name, sizeof name, "front-%lld.gp", pc->id);
    FILE *f = open_in(dir, name, path, sizeof path);
    if (!f) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        return -1;
    }
    long long id = pc->id;
    fprintf(f,
            "# Pareto front of campaign %lld; data: front-%lld.dat (written by dse plot)\n"
            "reset\n"
            "set terminal pngcairo size 800,600 noenhanced font 'sans,10'\n"
            "set grid\nset key off\n"
            "set output 'front-%lld-3d.png'\n"
            "set title \"Pareto front, campaign %s\"\n"
            "set xlabel 'energy (J)'\nset ylabel 'memory (MB)'\nset zlabel 'latency (ms)' rotate\n"
            "set ticslevel 0\nset view 60,30\n",
            id, id, id, pc->title);
    axis_range(f, "x", pc->flo[0], pc->fhi[0]);
    axis_range(f, "y", pc->flo[1], pc->fhi[1]);
    axis_range(f, "z", pc->flo[2], pc->fhi[2]);
    fprintf(f,
            "splot 'front-%lld.dat' using 2:3:4 with points pt 7 ps 1 lc rgb '#1f77b4'\n", id);
    static const struct {
        const char *tag, *xl, *yl;
        int x, y;
    } proj[3] = {{"energy-latency", "energy (J)", "latency (ms)", 2, 4},
                 {"memory-latency", "memory (MB)", "latency (ms)", 3, 4},
                 {"energy-memory", "energy (J)", "memory (MB)", 2, 3}};
    for (int k = 0; k < 3; k++) {
        axis_range(f, "x", pc->flo[proj[k].x - 2], pc->fhi[proj[k].x - 2]);
        axis_range(f, "y", pc->flo[proj[k].y - 2], pc->fhi[proj[k].y - 2]);
        fprintf(f,
                "set output 'front-%lld-%s.png'\n"
                "set title \"Pareto front, campaign %s: %s\"\n"
                "set xlabel '%s'\nset ylabel '%s'\n"
                "plot 'front-%lld.dat' using %d:%d with points pt 7 ps 1 lc rgb '#1f77b4'\n",
                id, proj[k].tag, pc->title, proj[k].tag, proj[k].xl, proj[k].yl, id, proj[k].x,
                proj[k].y);
    }
    fprintf(f, "unset output\n");
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return -1;
    }
    return 0;
}

static int write_convergence_script(const char *dir, const plotted *pc, int n, char *err,
                                    size_t errn)
{
    char path[4096];
    FILE *f = open_in(dir, "convergence.gp", path, sizeof path);
    if (!f) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "# Convergence of the best value per objective (thesis figures 12-30 form);\n"
            "# data: convergence-ID.dat (written by dse plot)\n"
            "reset\n"
            "set terminal pngcairo size 800,900 noenhanced font 'sans,10'\n"
            "set output 'convergence.png'\n"
            "set multiplot layout 3,1 title 'best value per generation'\n"
            "set grid\nset key top right box opaque\nset xlabel 'generation'\n");
    static const char *const ylab[3] = {"energy (J)", "memory (MB)", "latency (ms)"};
    double lo[4], hi[4];
    range_init(lo, hi, 4);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            range_add(lo, hi, k, pc[i].clo[k]);
            range_add(lo, hi, k, pc[i].chi[k]);
        }
    for (int k = 0; k < 3; k++) {
        axis_range(f, "y", lo[k], hi[k]);
        fprintf(f, "%sset ylabel '%s'\nplot ", k == 1 ? "unset key\n" : "", ylab[k]);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s'convergence-%lld.dat' using 1:%d with linespoints pt 7 ps 0.4 title \"%s\"",
                    i ? ", \\\n     " : "", pc[i].id, 2 + k, pc[i].title);
        fputc('\n', f);
    }
    fprintf(f,
            "unset multiplot\n"
            "set terminal pngcairo size 800,400 noenhanced font 'sans,10'\n"
            "set output 'hypervolume.png'\n"
            "set title 'normalised hypervolume of the front'\nset ylabel 'hypervolume'\n"
            "set key bottom right box opaque\n");
    axis_range(f, "y", lo[3], hi[3]);
    fprintf(f, "plot ");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s'convergence-%lld.dat' using 1:5 with linespoints pt 7 ps 0.4 title \"%s\"",
                i ? ", \\\n     " : "", pc[i].id, pc[i].title);
    fprintf(f, "\nunset output\n");
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return -1;
    }
    return 0;
}

/* Predicted against measured (dse validate), the form of the thesis'
 * figures 15-17: per objective, a pair of bars per validated point.
 * Returns 1 when written, 0 when the campaign has no validation, -1 on
 * error. */
static int write_validation(res_db *db, const char *dir, const plotted *pc, char *err, size_t errn)
{
    char name[64], path[4096], e[RES_ERRLEN];
    res_validation *v;
    int n = res_validations(db, pc->id, &v, e);
    if (n < 0) {
        snprintf(err, errn, "%s", e);
        return -1;
    }
    if (n == 0) return 0;
    snprintf(name, sizeof name, "validation-%lld.dat", pc->id);
    FILE *f = open_in(dir, name, path, sizeof path);
    if (!f) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        res_validations_free(v, n);
        return -1;
    }
    fprintf(f, "# dse validate of campaign %lld (%s); NaN = not measured\n"
               "# point predicted_energy_J measured_energy_J predicted_memory_MB "
               "measured_memory_MB predicted_latency_ms measured_latency_ms status\n",
            pc->id, pc->title);
    int measured[COST_NOBJ] = {0, 0, 0}; /* some point has a measured value */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < COST_NOBJ; k++) measured[k] |= !isnan(v[i].meas[k]);
    for (int i = 0; i < n; i++)
        fprintf(f, "%d %.17g %.17g %.17g %.17g %.17g %.17g %s\n", v[i].point, v[i].pred[0],
                v[i].meas[0], v[i].pred[1], v[i].meas[1], v[i].pred[2], v[i].meas[2], v[i].status);
    res_validations_free(v, n);
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return -1;
    }
    snprintf(name, sizeof name, "validation-%lld.gp", pc->id);
    if (!(f = open_in(dir, name, path, sizeof path))) {
        snprintf(err, errn, "%.400s: %.100s", path, strerror(errno));
        return -1;
    }
    long long id = pc->id;
    static const char *ylabel[COST_NOBJ] = {"energy per device (J)", "peak memory per device (MB)",
                                           "latency (ms)"};
    fprintf(f,
            "# Predicted vs measured of campaign %lld; data: validation-%lld.dat (dse plot)\n"
            "reset\n"
            "set terminal pngcairo size 1500,480 font ',10'\n"
            "set output 'validation-%lld.png'\n"
            "set style data histograms\n"
            "set style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1\n"
            "set key top left\n"
            "set xlabel 'front point'\n"
            "set yrange [0:*]\n"
            "set multiplot layout 1,3 title 'campaign %s: predicted vs measured'\n",
            id, id, id, pc->title);
    /* An objective nothing measured (energy without a sensor) shows the
     * prediction alone: gnuplot refuses a histogram of no valid points. */
    for (int k = 0; k < COST_NOBJ; k++) {
        fprintf(f, "set ylabel '%s'\n", ylabel[k]);
        if (measured[k])
            fprintf(f, "plot 'validation-%lld.dat' using %d:xtic(1) title 'predicted', '' using %d "
                       "title 'measured'\n", id, 2 + 2 * k, 3 + 2 * k);
        else
            fprintf(f, "plot 'validation-%lld.dat' using %d:xtic(1) title 'predicted (not "
                       "measured here)'\n", id, 2 + 2 * k);
    }
    fprintf(f, "unset multiplot\n");
    if (fclose(f)) {
        snprintf(err, errn, "%.400s: write failed", path);
        return -1;
    }
    return 1;
}

/* Run gnuplot on the scripts inside dir.  0 ok, 1 failed, 127 not found. */
static int run_gnuplot(const char *dir, const char *const *scripts, int n)
{
    const char *prog = getenv("DSE_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        char *argv[MAXC + 3];
        int k = 0;
        argv[k++] = (char *)prog;
        for (int i = 0; i < n; i++) argv[k++] = (char *)scripts[i];
        argv[k] = NULL;
        if (chdir(dir) != 0) _exit(1);
        execvp(prog, argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 1;
    if (!WIFEXITED(st)) return 1;
    return WEXITSTATUS(st) == 127 ? 127 : WEXITSTATUS(st) != 0;
}

int cmd_plot(int argc, char **argv)
{
    cli_args a;
    char err[CAMP_ERRLEN];
    if (cli_parse(&a, "plot", argc, argv, "help")) return EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        fputs(plot_help, stdout);
        return EXIT_OK;
    }
    const char *ids = cli_get(&a, "campaign"), *dbpath = cli_get(&a, "db"), *dir = cli_get(&a, "o");
    if (cli_finish(&a)) return EXIT_USAGE;
    if (!ids || !dir) {
        cli_error("plot", "--campaign ID[,ID...] and -o DIR are required");
        return EXIT_USAGE;
    }
    plotted pc[MAXC];
    int n = 0;
    for (const char *s = ids; *s;) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 1 || (*end && *end != ',') || n == MAXC) {
            cli_error("plot", "--campaign must be up to %d campaign ids separated by commas, not \"%s\"",
                      MAXC, ids);
            return EXIT_USAGE;
        }
        pc[n++].id = v;
        s = *end ? end + 1 : end;
    }
    res_db *db = res_open(dbpath ? dbpath : "dse.db", RES_OPEN_READ, err);
    if (!db) {
        cli_error("plot", "%s", err);
        return EXIT_USAGE;
    }
    /* Check every campaign exists before writing anything. */
    for (int i = 0; i < n; i++) {
        res_campaign cm;
        if (res_campaign_get(db, pc[i].id, &cm, err)) {
            cli_error("plot", "%s", err);
            res_close(db);
            return EXIT_USAGE;
        }
        res_campaign_free(&cm);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        cli_error("plot", "%s: cannot create folder: %s", dir, strerror(errno));
        res_close(db);
        return EXIT_USAGE;
    }
    const char *scripts[2 * MAXC + 1];
    char names[2 * MAXC][64];
    int ns = 0, validated[MAXC];
    for (int i = 0; i < n; i++) {
        int rc = write_data(db, dir, &pc[i], err, sizeof err);
        if (!rc && write_front_script(dir, &pc[i], err, sizeof err)) rc = EXIT_FAIL;
        if (!rc && (validated[i] = write_validation(db, dir, &pc[i], err, sizeof err)) < 0)
            rc = EXIT_FAIL;
        if (rc) {
            cli_error("plot", "%s", err);
            res_close(db);
            return rc;
        }
        snprintf(names[ns], sizeof names[ns], "front-%lld.gp", pc[i].id);
        scripts[ns] = names[ns];
        ns++;
        if (validated[i]) {
            snprintf(names[ns], sizeof names[ns], "validation-%lld.gp", pc[i].id);
            scripts[ns] = names[ns];
            ns++;
        }
    }
    res_close(db);
    if (write_convergence_script(dir, pc, n, err, sizeof err)) {
        cli_error("plot", "%s", err);
        return EXIT_FAIL;
    }
    scripts[ns] = "convergence.gp";
    int g = run_gnuplot(dir, scripts, ns + 1);
    if (g == 127) {
        cli_error("plot", "gnuplot not found (install gnuplot-nox); data and scripts are in %s", dir);
        return EXIT_FAIL;
    }
    if (g) {
        cli_error("plot", "gnuplot failed; data and scripts are in %s", dir);
        return EXIT_FAIL;
    }
    for (int i = 0; i < n; i++) {
        printf("%s/front-%lld-3d.png (+ energy-latency, memory-latency, energy-memory)\n", dir,
               pc[i].id);
        if (validated[i]) printf("%s/validation-%lld.png (predicted vs measured)\n", dir, pc[i].id);
    }
    printf("%s/convergence.png\n%s/hypervolume.png\n", dir, dir);
    return EXIT_OK;
}
