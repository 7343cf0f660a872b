/* plot.c -- res_plot (results.h): what dse plot draws, with gnuplot, from
 * the database: fronts (every pair of objectives, coloured by another,
 * each point labelled with its index; 3-D views coloured by depth),
 * convergence and hypervolume, predicted vs measured, the predicted and
 * measured timelines of validated points as Gantt charts on one time axis,
 * and the picture of one point's mapping.
 *
 * Invariants:
 *  - Every file (data, scripts, PNGs) is written in a staging folder
 *    inside DIR and moved into DIR only when all are whole (a PNG is whole
 *    when it ends with its IEND chunk: gnuplot does not report a full
 *    disk), so a failure -- gnuplot missing or failing included -- leaves
 *    nothing (docs/exit-codes.md).  No file is moved over an input of the
 *    process (the database) or a folder: that is bad usage, and nothing is
 *    moved then either.
 *  - Data files hold every number exact (%.17g) and are written before
 *    gnuplot runs, so a user can re-plot by hand (cd DIR && gnuplot F.gp).
 *  - No string from a database or a file reaches a script but through
 *    gp_text, which keeps letters, digits and a few punctuation marks
 *    only: no newline (gnuplot's `!` runs a shell at a line's start), no
 *    quote, backquote (command substitution) or `@` (macros).
 */
#include "res_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXC 32     /* campaigns per plot */
#define MAXOUT 4096 /* files per plot */

/* ---- outputs written whole or not at all ---- */

typedef struct {
    const char *dir;
    char stage[4200];   /* DIR/.dse-plot-XXXXXX: where everything is written first */
    int n;
    char *name[MAXOUT]; /* final names, relative to dir */
    int png[MAXOUT];    /* written by gnuplot (checked, not by us) */
    char err[BASE_ERRLEN];
} outset;

static int add_out(outset *o, const char *name, int png)
{
    if (o->n == MAXOUT || !(o->name[o->n] = strdup(name))) {
        snprintf(o->err, sizeof o->err, "too many files to plot");
        return -1;
    }
    o->png[o->n++] = png;
    return 0;
}

/* Open a data file or a script in the staging folder. */
static FILE *out_open(outset *o, const char *name)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/%s", o->stage, name);
    if (add_out(o, name, 0)) return NULL;
    FILE *f = fopen(path, "w");
    if (!f) snprintf(o->err, sizeof o->err, "%.300s: cannot write: %s", path, strerror(errno));
    return f;
}

static int out_close(outset *o, FILE *f)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        snprintf(o->err, sizeof o->err, "%s: a write failed (disk full?)", o->dir);
        return -1;
    }
    return 0;
}

/* A PNG that gnuplot finished: its signature at the start, IEND last. */
static int png_whole(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[8] = {'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char a[8], b[8];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int ok = fread(a, 1, 8, f) == 8 && !memcmp(a, sig, 8) && fseek(f, -8, SEEK_END) == 0 &&
             fread(b, 1, 8, f) == 8 && !memcmp(b, iend, 8);
    fclose(f);
    return ok;
}

/* Move into DIR the data files and scripts (keep_data) and the whole
 * PNGs (keep_png; an incomplete one fails the plot, and then nothing is
 * kept: docs/exit-codes.md, a write that fails midway leaves nothing);
 * remove the rest and the staging folder. */
static int out_finish(outset *o, int keep_data, int keep_png)
{
    char from[4700], to[4700];
    int rc = 0;
    for (int i = 0; keep_png && i < o->n; i++) {
        snprintf(from, sizeof from, "%s/%s", o->stage, o->name[i]);
        if (o->png[i] && !png_whole(from)) {
            snprintf(o->err, sizeof o->err, "%.300s/%s: gnuplot left it incomplete (disk full?)",
                     o->dir, o->name[i]);
            keep_png = keep_data = 0, rc = -1;
        }
    }
    for (int i = 0; i < o->n && (keep_png || keep_data); i++) {
        snprintf(to, sizeof to, "%s/%s", o->dir, o->name[i]);
        if (base_out_check(to, o->err)) /* the database in DIR under a plot's name, a folder */
            keep_png = keep_data = 0, rc = -3;
    }
    for (int i = 0; i < o->n; i++) {
        snprintf(from, sizeof from, "%s/%s", o->stage, o->name[i]);
        snprintf(to, sizeof to, "%s/%s", o->dir, o->name[i]);
        if ((o->png[i] ? keep_png : keep_data) && rename(from, to) != 0) {
            snprintf(o->err, sizeof o->err, "%.300s: cannot move into place: %s", to, strerror(errno));
            rc = -1;
        }
        unlink(from); /* no-op once moved */
        free(o->name[i]);
    }
    o->n = 0;
    if (o->stage[0]) rmdir(o->stage);
    return rc;
}

/* ---- text that reaches a script ---- */

static char *gp_text(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; src && *src && k + 1 < n; src++) {
        unsigned char c = (unsigned char)*src;
        dst[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           strchr(" _-.,:/+()=%", c) ? (char)c : '_';
    }
    dst[k] = 0;
    return dst;
}

/* "set Xrange" around a single value (1% each side), else autoscale:
 * gnuplot warns "empty range" on the user's terminal for a constant. */
static void axis_range(FILE *f, const char *axis, double lo, double hi)
{
    if (lo == hi && isfinite(lo)) {
        double d = lo != 0 ? fabs(lo) * 0.01 : 1;
        fprintf(f, "set %srange [%.17g:%.17g]\n", axis, lo - d, hi + d);
    } else {
        fprintf(f, "set autoscale %s\n", axis);
    }
}

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

static const char *label_of(int k, char *buf, size_t n)
{
    snprintf(buf, n, "%s (%s)", cost_objectives[k].label, cost_objectives[k].unit);
    return buf;
}

/* ---- per campaign ---- */

typedef struct {
    long long id;
    char title[200];
    double flo[COST_NOBJ], fhi[COST_NOBJ];     /* front */
    double clo[COST_NOBJ + 1], chi[COST_NOBJ + 1]; /* convergence: bests, then hypervolume */
    int npoints;
} plotted;

static int front_data(res_db *db, const res_plot_opts *po, outset *o, plotted *pc, char *err)
{
    char name[64];
    res_point *p;
    /* The points dse front lists, in its order (campaign's loader). */
    int n = po->load_front ? po->load_front(db, pc->id, &p, err) : res_front(db, pc->id, &p, err);
    if (n < 0) return -1;
    snprintf(name, sizeof name, "front-%lld.dat", pc->id);
    FILE *f = out_open(o, name);
    if (!f) {
        res_points_free(p, n);
        return -1;
    }
    fprintf(f, "# dse front of campaign %lld\n# index", pc->id);
    for (int k = 0; k < COST_NOBJ; k++) fprintf(f, " %s_%s", cost_objectives[k].name, cost_objectives[k].unit);
    fputc('\n', f);
    range_init(pc->flo, pc->fhi, COST_NOBJ);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d", i);
        for (int k = 0; k < COST_NOBJ; k++) {
            fprintf(f, " %.17g", p[i].obj[k]);
            range_add(pc->flo, pc->fhi, k, p[i].obj[k]);
        }
        fputc('\n', f);
    }
    pc->npoints = n;
    res_points_free(p, n);
    return out_close(o, f);
}

static int convergence_data(res_db *db, outset *o, plotted *pc, char *err)
{
    char name[64];
    res_gen *g;
    int ng = res_generations(db, pc->id, &g, err);
    if (ng < 0) return -1;
    snprintf(name, sizeof name, "convergence-%lld.dat", pc->id);
    FILE *f = out_open(o, name);
    if (!f) {
        free(g);
        return -1;
    }
    fprintf(f, "# dse convergence of campaign %lld; NaN = no feasible point\n# generation", pc->id);
    for (int k = 0; k < COST_NOBJ; k++) fprintf(f, " best_%s", cost_objectives[k].name);
    fprintf(f, " hypervolume evaluations\n");
    range_init(pc->clo, pc->chi, COST_NOBJ + 1);
    for (int i = 0; i < ng; i++) {
        fprintf(f, "%ld", g[i].gen);
        for (int k = 0; k < COST_NOBJ; k++) {
            fprintf(f, " %.17g", g[i].best[k]);
            range_add(pc->clo, pc->chi, k, g[i].best[k]);
        }
        fprintf(f, " %.17g %lld\n", g[i].hv, g[i].evaluations);
        range_add(pc->clo, pc->chi, COST_NOBJ, g[i].hv);
    }
    free(g);
    return out_close(o, f);
}

/* A PNG the script writes (gnuplot runs in the staging folder). */
static int png_out(outset *o, FILE *f, const char *name)
{
    fprintf(f, "set output '%s'\n", name);
    return add_out(o, name, 1);
}

static int front_script(outset *o, const plotted *pc)
{
    char name[64], la[3][128];
    long long id = pc->id;
    snprintf(name, sizeof name, "front-%lld.gp", id);
    FILE *f = out_open(o, name);
    if (!f) return -1;
    fprintf(f,
            "# Pareto front of campaign %lld; data: front-%lld.dat (written by dse plot).\n"
            "# Column 1 is the front index (dse export --point N), then the objectives.\n"
            "reset\n"
            "set terminal pngcairo size 900,650 noenhanced font 'sans,10'\n"
            "set grid\nset key off\nset palette rgbformulae 33,13,10\n",
            id, id);
    int rc = 0;
    /* Every pair of objectives, coloured by the first objective not on
     * the axes, each point labelled with its index. */
    for (int i = 0; i < COST_NOBJ; i++)
        for (int j = i + 1; j < COST_NOBJ; j++) {
            int c = -1;
            for (int k = 0; k < COST_NOBJ && c < 0; k++)
                if (k != i && k != j) c = k;
            char png[160];
            snprintf(png, sizeof png, "front-%lld-%s-%s.png", id, cost_objectives[i].name,
                     cost_objectives[j].name);
            rc |= png_out(o, f, png);
            axis_range(f, "x", pc->flo[i], pc->fhi[i]);
            axis_range(f, "y", pc->flo[j], pc->fhi[j]);
            fprintf(f, "set title \"Pareto front, campaign %s: %s vs %s\"\n", pc->title,
                    cost_objectives[i].name, cost_objectives[j].name);
            fprintf(f, "set xlabel '%s'\nset ylabel '%s'\n", label_of(i, la[0], sizeof la[0]),
                    label_of(j, la[1], sizeof la[1]));
            if (c >= 0) {
                axis_range(f, "cb", pc->flo[c], pc->fhi[c]);
                fprintf(f, "set cblabel '%s'\nset colorbox\n", label_of(c, la[2], sizeof la[2]));
                fprintf(f, "plot 'front-%lld.dat' using %d:%d:%d with points pt 7 ps 1.3 lc palette, "
                           "'' using %d:%d:1 with labels offset 0.9,0.6 font ',8' tc rgb '#444444'\n",
                        id, 2 + i, 2 + j, 2 + c, 2 + i, 2 + j);
            } else {
                fprintf(f, "unset colorbox\n");
                fprintf(f, "plot 'front-%lld.dat' using %d:%d with points pt 7 ps 1.3 lc rgb '#1f77b4', "
                           "'' using %d:%d:1 with labels offset 0.9,0.6 font ',8' tc rgb '#444444'\n",
                        id, 2 + i, 2 + j, 2 + i, 2 + j);
            }
        }
    /* 3-D: the first three objectives; colour by the fourth when there is
     * one, else by depth (the third), with drop lines to the floor. */
    if (COST_NOBJ >= 3) {
        char png[96];
        snprintf(png, sizeof png, "front-%lld-3d.png", id);
        rc |= png_out(o, f, png);
        int c = COST_NOBJ >= 4 ? 3 : 2;
        fprintf(f, "set title \"Pareto front, campaign %s\"\n", pc->title);
        fprintf(f, "set xlabel '%s'\nset ylabel '%s'\nset zlabel '%s' rotate\n",
                label_of(0, la[0], sizeof la[0]), label_of(1, la[1], sizeof la[1]),
                label_of(2, la[2], sizeof la[2]));
        axis_range(f, "x", pc->flo[0], pc->fhi[0]);
        axis_range(f, "y", pc->flo[1], pc->fhi[1]);
        axis_range(f, "z", pc->flo[2], pc->fhi[2]);
        axis_range(f, "cb", pc->flo[c], pc->fhi[c]);
        fprintf(f, "set cblabel '%s'\nset colorbox\nset ticslevel 0\nset view 60,30\n",
                label_of(c, la[0], sizeof la[0]));
        fprintf(f, "splot 'front-%lld.dat' using 2:3:4:%d with impulses lc palette, "
                   "'' using 2:3:4:%d with points pt 7 ps 1.3 lc palette, "
                   "'' using 2:3:4:1 with labels offset 0.9,0.6 font ',8' tc rgb '#444444'\n",
                id, 2 + c, 2 + c);
    }
    fprintf(f, "unset output\n");
    return out_close(o, f) | rc;
}

static int convergence_script(outset *o, const plotted *pc, int n)
{
    char la[128];
    FILE *f = out_open(o, "convergence.gp");
    if (!f) return -1;
    int rc = 0;
    fprintf(f,
            "# Convergence of the best value per objective (thesis figures 12-30 form);\n"
            "# data: convergence-ID.dat (written by dse plot)\n"
            "reset\n"
            "set terminal pngcairo size 800,%d noenhanced font 'sans,10'\n",
            300 * COST_NOBJ);
    rc |= png_out(o, f, "convergence.png");
    fprintf(f, "set multiplot layout %d,1 title 'best value per generation'\n"
               "set grid\nset key top right box opaque\nset xlabel 'generation'\n", COST_NOBJ);
    double lo[COST_NOBJ + 1], hi[COST_NOBJ + 1];
    range_init(lo, hi, COST_NOBJ + 1);
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= COST_NOBJ; k++) {
            range_add(lo, hi, k, pc[i].clo[k]);
            range_add(lo, hi, k, pc[i].chi[k]);
        }
    for (int k = 0; k < COST_NOBJ; k++) {
        axis_range(f, "y", lo[k], hi[k]);
        fprintf(f, "%sset ylabel '%s'\nplot ", k == 1 ? "unset key\n" : "", label_of(k, la, sizeof la));
        for (int i = 0; i < n; i++)
            fprintf(f, "%s'convergence-%lld.dat' using 1:%d with linespoints pt 7 ps 0.4 title \"%s\"",
                    i ? ", \\\n     " : "", pc[i].id, 2 + k, pc[i].title);
        fputc('\n', f);
    }
    fprintf(f, "unset multiplot\nset terminal pngcairo size 800,400 noenhanced font 'sans,10'\n");
    rc |= png_out(o, f, "hypervolume.png");
    fprintf(f, "set title 'normalised hypervolume of the front'\nset ylabel 'hypervolume'\n"
               "set key bottom right box opaque\n");
    axis_range(f, "y", lo[COST_NOBJ], hi[COST_NOBJ]);
    fprintf(f, "plot ");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s'convergence-%lld.dat' using 1:%d with linespoints pt 7 ps 0.4 title \"%s\"",
                i ? ", \\\n     " : "", pc[i].id, 2 + COST_NOBJ, pc[i].title);
    fprintf(f, "\nunset output\n");
    return out_close(o, f) | rc;
}

/* ---- validations: predicted vs measured, and timelines ---- */

static int validation_plots(res_db *db, outset *o, const plotted *pc, int *count, char *err)
{
    char name[96], la[128];
    res_validation *v;
    long long id = pc->id;
    int n = res_validations(db, id, &v, err);
    *count = 0;
    if (n <= 0) return n;
    snprintf(name, sizeof name, "validation-%lld.dat", id);
    FILE *f = out_open(o, name);
    if (!f) goto fail;
    fprintf(f, "# dse validate of campaign %lld; NaN = not measured\n# point", id);
    for (int k = 0; k < COST_NOBJ; k++)
        fprintf(f, " predicted_%s_%s measured_%s_%s", cost_objectives[k].name,
                cost_objectives[k].unit, cost_objectives[k].name, cost_objectives[k].unit);
    fprintf(f, " status\n");
    int measured[COST_NOBJ] = {0}; /* some point has a measured value */
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d", v[i].point);
        for (int k = 0; k < COST_NOBJ; k++) {
            fprintf(f, " %.17g %.17g", v[i].pred[k], v[i].meas[k]);
            measured[k] |= !isnan(v[i].meas[k]);
        }
        char st[32];
        fprintf(f, " %s\n", gp_text(st, sizeof st, v[i].status));
    }
    if (out_close(o, f)) goto fail;
    snprintf(name, sizeof name, "validation-%lld.gp", id);
    if (!(f = out_open(o, name))) goto fail;
    fprintf(f,
            "# Predicted vs measured of campaign %lld; data: validation-%lld.dat (dse plot)\n"
            "reset\n"
            "set terminal pngcairo size %d,480 font ',10' noenhanced\n",
            id, id, 500 * COST_NOBJ);
    snprintf(name, sizeof name, "validation-%lld.png", id);
    int rc = png_out(o, f, name);
    fprintf(f, "set style data histograms\nset style histogram clustered gap 1\n"
               "set style fill solid 0.8 border -1\nset key top left\nset xlabel 'front point'\n"
               "set yrange [0:*]\nset multiplot layout 1,%d title 'campaign %s: predicted vs "
               "measured'\n", COST_NOBJ, pc->title);
    /* An objective nothing measured (energy without a sensor) shows the
     * prediction alone: gnuplot refuses a histogram of no valid points. */
    for (int k = 0; k < COST_NOBJ; k++) {
        fprintf(f, "set ylabel '%s'\n", label_of(k, la, sizeof la));
        if (measured[k])
            fprintf(f, "plot 'validation-%lld.dat' using %d:xtic(1) title 'predicted', '' using %d "
                       "title 'measured'\n", id, 2 + 2 * k, 3 + 2 * k);
        else
            fprintf(f, "plot 'validation-%lld.dat' using %d:xtic(1) title 'predicted (not "
                       "measured here)'\n", id, 2 + 2 * k);
    }
    fprintf(f, "unset multiplot\nunset output\n");
    if (out_close(o, f) | rc) goto fail;
    *count = 1;
    /* Timelines: predicted above measured, one time axis, a row per device. */
    for (int i = 0; i < n; i++) {
        res_step *st;
        int ns = res_validation_steps(db, v[i].id, &st, err);
        if (ns < 0) goto fail;
        if (ns == 0) continue;
        int ndev = 0, meas = 0;
        double tmax = 0;
        snprintf(name, sizeof name, "timeline-%lld-%d.dat", id, v[i].point);
        if (!(f = out_open(o, name))) {
            res_steps_free(st, ns);
            goto fail;
        }
        fprintf(f, "# steps of point %d of campaign %lld (ms from the inference's start); "
                   "NaN = not measured\n# device step op layer c0 nc bytes pred_start pred_end "
                   "meas_start meas_end op_index\n", v[i].point, id);
        for (int s = 0; s < ns; s++) {
            const res_step *x = &st[s];
            int opi = !strcmp(x->op, "compute") ? 0 : !strcmp(x->op, "send") ? 1 : !strcmp(x->op, "recv") ? 2 : 3;
            fprintf(f, "%d %d %s %d %d %d %lld %.17g %.17g %.17g %.17g %d\n", x->device, x->step,
                    x->op, x->layer, x->c0, x->nc, x->bytes, x->pred_start_ms,
                    x->pred_start_ms + x->pred_ms, x->meas_start_ms, x->meas_start_ms + x->meas_ms, opi);
            if (x->device + 1 > ndev) ndev = x->device + 1;
            if (x->pred_start_ms + x->pred_ms > tmax) tmax = x->pred_start_ms + x->pred_ms;
            if (!isnan(x->meas_ms)) {
                meas = 1;
                if (x->meas_start_ms + x->meas_ms > tmax) tmax = x->meas_start_ms + x->meas_ms;
            }
        }
        res_steps_free(st, ns);
        if (out_close(o, f)) goto fail;
        snprintf(name, sizeof name, "timeline-%lld-%d.gp", id, v[i].point);
        if (!(f = out_open(o, name))) goto fail;
        fprintf(f,
                "# Timelines of point %d of campaign %lld: predicted (dse eval --trace) above\n"
                "# measured (dse exec --trace); data: timeline-%lld-%d.dat (dse plot)\n"
                "reset\nset terminal pngcairo size 1200,%d noenhanced font 'sans,10'\n",
                v[i].point, id, id, v[i].point, 260 + 2 * 60 * ndev);
        snprintf(name, sizeof name, "timeline-%lld-%d.png", id, v[i].point);
        rc = png_out(o, f, name);
        fprintf(f, "set multiplot layout 2,1 title 'campaign %s, point %d: where the time goes'\n"
                   "set xrange [0:%.17g]\nset yrange [-0.6:%d.6]\nset ytics 1\nset grid x\n"
                   "set ylabel 'device'\nset style fill solid 0.85 border -1\nunset colorbox\n"
                   "set palette defined (0 '#1f77b4', 1 '#ff7f0e', 2 '#d62728', 3 '#2ca02c')\n"
                   "set cbrange [0:3]\nset key off\n",
                pc->title, v[i].point, tmax > 0 ? tmax * 1.02 : 1.0, ndev - 1);
        /* boxxyerror: x, y, x_low, x_high, y_low, y_high; colour by op
         * (compute blue, send orange, recv red, concat green). */
        fprintf(f, "set title 'predicted'\nset xlabel ''\n"
                   "plot 'timeline-%lld-%d.dat' using (($8+$9)/2):1:8:9:($1-0.35):($1+0.35):12 "
                   "with boxxyerror lc palette\n", id, v[i].point);
        fprintf(f, "set title '%s'\nset xlabel 'time from the inference start (ms)'\n",
                meas ? "measured (the median timed inference)" : "measured: not available");
        if (meas)
            fprintf(f, "plot 'timeline-%lld-%d.dat' using (($10+$11)/2):1:10:11:($1-0.35):($1+0.35):12 "
                       "with boxxyerror lc palette\n", id, v[i].point);
        else
            fprintf(f, "plot 0 with lines lc rgb '#ffffff'\n");
        fprintf(f, "unset multiplot\nunset output\n");
        if (out_close(o, f) | rc) goto fail;
        (*count)++;
    }
    res_validations_free(v, n);
    return 0;
fail:
    if (o->err[0]) base_seterr(err, "%s", o->err);
    res_validations_free(v, n);
    return -1;
}

/* ---- the picture of one point's mapping ---- */

static int mapping_plot(outset *o, const plotted *pc, int point, const res_mapping_picture *m)
{
    char name[96];
    long long id = pc->id;
    snprintf(name, sizeof name, "mapping-%lld-%d.dat", id, point);
    FILE *f = out_open(o, name);
    if (!f) return -1;
    fprintf(f, "# mapping of front point %d of campaign %lld: share of each layer's output "
               "(channels, rows or columns, as it is cut) per device\n# layer device share\n", point, id);
    for (int l = 0; l < m->nlayers; l++) {
        for (int d = 0; d < m->ndev; d++)
            fprintf(f, "%d %d %.17g\n", l, d, m->share[(size_t)l * m->ndev + d]);
        fputc('\n', f);
    }
    if (out_close(o, f)) return -1;
    snprintf(name, sizeof name, "mapping-%lld-%d-bytes.dat", id, point);
    if (!(f = out_open(o, name))) return -1;
    fprintf(f, "# payload bytes sent per inference\n# from to bytes\n");
    for (int a = 0; a < m->ndev; a++) {
        for (int b = 0; b < m->ndev; b++) fprintf(f, "%d %d %lld\n", a, b, m->bytes[(size_t)a * m->ndev + b]);
        fputc('\n', f);
    }
    if (out_close(o, f)) return -1;
    snprintf(name, sizeof name, "mapping-%lld-%d.gp", id, point);
    if (!(f = out_open(o, name))) return -1;
    int wide = m->nlayers * 14 + 300;
    fprintf(f,
            "# The mapping of front point %d of campaign %lld (dse plot --point %d)\n"
            "reset\nset terminal pngcairo size %d,%d noenhanced font 'sans,9'\n",
            point, id, point, wide < 900 ? 900 : wide > 4000 ? 4000 : wide, 380 + 40 * m->ndev);
    snprintf(name, sizeof name, "mapping-%lld-%d.png", id, point);
    int rc = png_out(o, f, name);
    fprintf(f, "set multiplot title 'campaign %s, front point %d: who computes what, "
               "who sends what'\nset tmargin 4\nset bmargin 9\nset lmargin 14\n", pc->title, point);
    /* Left: layers x devices, shaded by the share of each layer's output. */
    fprintf(f, "set size 0.70,1\nset origin 0,0\nset xlabel 'layer'\nset ylabel 'device'\n"
               "set cblabel 'share of the layer output'\nset cbrange [0:1]\n"
               "set palette defined (0 '#ffffff', 1 '#08306b')\n"
               "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\nset ytics (",
            m->nlayers - 1, m->ndev - 1);
    for (int d = 0; d < m->ndev; d++) {
        char dn[80];
        fprintf(f, "%s\"%s\" %d", d ? ", " : "", gp_text(dn, sizeof dn, m->dev[d]), d);
    }
    fprintf(f, ")\nset xtics rotate by 90 right (");
    int step = m->nlayers > 60 ? m->nlayers / 30 : 1;
    for (int l = 0, k = 0; l < m->nlayers; l += step, k++) {
        char ln[80];
        fprintf(f, "%s\"%s\" %d", k ? ", " : "", gp_text(ln, sizeof ln, m->layer[l]), l);
    }
    fprintf(f, ")\nplot 'mapping-%lld-%d.dat' using 1:2:3 with image notitle\n", id, point);
    /* Right: bytes from row device to column device, labelled. */
    fprintf(f, "set size 0.30,1\nset origin 0.70,0\nset lmargin 8\nset xlabel 'to device'\nset ylabel 'from device'\n"
               "set cblabel 'bytes per inference'\nset autoscale cb\nset xtics norotate 1\nset ytics 1\n"
               "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n"
               "set palette defined (0 '#ffffff', 1 '#a50f15')\n"
               "plot 'mapping-%lld-%d-bytes.dat' using 2:1:3 with image notitle, "
               "'' using 2:1:($3 > 0 ? sprintf('%%.3g MB', $3/1e6) : '') with labels font ',8' notitle\n",
            m->ndev - 1, m->ndev - 1, id, point);
    fprintf(f, "unset multiplot\nunset output\n");
    return out_close(o, f) | rc;
}

/* ---- gnuplot ---- */

/* Run gnuplot on the scripts inside dir: 0 ok, 1 failed, 127 not found. */
static int run_gnuplot(const char *dir, char *const *scripts, int n)
{
    const char *prog = getenv("DSE_GNUPLOT");
    if (!prog || !*prog) prog = "gnuplot";
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        char **argv = calloc((size_t)n + 2, sizeof *argv);
        if (!argv) _exit(1);
        argv[0] = (char *)prog;
        for (int i = 0; i < n; i++) argv[1 + i] = scripts[i];
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

int res_plot(res_db *db, const res_plot_opts *po, char **outlist, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    const long long *ids = po->ids;
    int n = po->n, point = po->point;
    const char *dir = po->dir;
    const res_mapping_picture *pic = po->pic;
    if (outlist) *outlist = NULL;
    if (n < 1 || n > MAXC) {
        base_seterr(err, "plot: 1 to %d campaigns, not %d", MAXC, n);
        return -1;
    }
    plotted pc[MAXC];
    memset(pc, 0, sizeof pc);
    /* Check every campaign exists before writing anything. */
    for (int i = 0; i < n; i++) {
        res_campaign cm;
        if (res_campaign_get(db, ids[i], &cm, err)) return -1;
        char t[160];
        pc[i].id = ids[i];
        snprintf(pc[i].title, sizeof pc[i].title, "%lld: %s", ids[i], gp_text(t, sizeof t, cm.name));
        res_campaign_free(&cm);
    }
    struct stat st;
    if (mkdir(dir, 0755) != 0 && (errno != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        base_seterr(err, "%s: cannot create folder: %s", base_path(dir, pb),
                    errno == EEXIST ? "a file of that name exists" : strerror(errno));
        return -1;
    }
    if (access(dir, W_OK) != 0) {
        base_seterr(err, "%s: folder is not writable", base_path(dir, pb));
        return -1;
    }
    outset *o = calloc(1, sizeof *o);
    if (!o) {
        base_seterr(err, "out of memory");
        return -2;
    }
    o->dir = dir;
    snprintf(o->stage, sizeof o->stage, "%s/.dse-plot-XXXXXX", dir);
    if (!mkdtemp(o->stage)) {
        base_seterr(err, "%s: cannot write in it: %s", base_path(dir, pb), strerror(errno));
        free(o);
        return -1;
    }
    err[0] = 0;
    char *scripts[MAXOUT];
    int nsc = 0, rc = 0, nval[MAXC];
    for (int i = 0; i < n && !rc; i++) {
        int before = o->n;
        if (front_data(db, po, o, &pc[i], err) || convergence_data(db, o, &pc[i], err) ||
            front_script(o, &pc[i]) || validation_plots(db, o, &pc[i], &nval[i], err))
            rc = -2;
        if (!rc && point >= 0 && i == 0 && pic) {
            if (point >= pc[0].npoints) {
                base_seterr(err, "campaign %lld's front has points 0..%d, not %d", pc[0].id,
                            pc[0].npoints - 1, point);
                rc = -1;
            } else if (mapping_plot(o, &pc[0], point, pic)) {
                rc = -2;
            }
        }
        for (int k = before; k < o->n; k++) {
            size_t l = strlen(o->name[k]);
            if (l > 3 && !strcmp(o->name[k] + l - 3, ".gp") && !(scripts[nsc++] = strdup(o->name[k])))
                rc = -2;
        }
    }
    if (!rc && convergence_script(o, pc, n)) rc = -2;
    if (!rc) scripts[nsc++] = strdup("convergence.gp");
    if (!rc) {
        int g = run_gnuplot(o->stage, scripts, nsc);
        if (g == 127) base_seterr(err, "gnuplot not found (install gnuplot-nox)"), rc = -2;
        else if (g) base_seterr(err, "gnuplot failed on the scripts of %s", base_path(dir, pb)), rc = -2;
    }
    if (rc == -2 && !err[0]) base_seterr(err, "%s", o->err);
    /* The PNG names, for the caller's listing, before the set is released. */
    size_t len = 1;
    for (int k = 0; k < o->n; k++) len += strlen(dir) + strlen(o->name[k]) + 2;
    char *list = !rc && outlist ? malloc(len) : NULL;
    if (list) {
        list[0] = 0;
        for (int k = 0; k < o->n; k++)
            if (o->png[k]) sprintf(list + strlen(list), "%s/%s\n", dir, o->name[k]);
    }
    int fin = out_finish(o, rc == 0, rc == 0);
    if (fin) {
        if (!rc) base_seterr(err, "%s", o->err);
        if (!rc) rc = fin == -3 ? -1 : -2; /* an output over an input: bad usage */
        free(list);
        list = NULL;
    }
    if (outlist) *outlist = list;
    else free(list);
    for (int k = 0; k < nsc; k++) free(scripts[k]);
    free(o);
    return rc;
}
