/* cmd_plot.c -- `dse plot`: parse, gather what results/plot.c draws (and,
 * with --point, the picture of that point's mapping from its campaign),
 * call res_plot, list the PNGs. */
#include "campaign.h"
#include "cli.h"
#include "results.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXC 32

static const char plot_help[] =
    "usage: dse plot --campaign ID[,ID...] [--point N] [--db F] -o DIR\n"
    "PNG plots via gnuplot (pngcairo) into DIR (created if missing):\n"
    "  front-ID-A-B.png      the Pareto front on every pair of objectives A, B, coloured\n"
    "                        by another objective, each point labelled with its index\n"
    "                        (the N of dse export --point N)\n"
    "  front-ID-3d.png       the front in 3-D, coloured by depth, with drop lines\n"
    "  convergence.png       best value of each objective per generation, one line per\n"
    "                        campaign; hypervolume.png the normalised hypervolume\n"
    "and, for campaigns checked with dse validate, predicted vs measured per objective\n"
    "(validation-ID.png) and, per validated point, its predicted and measured timelines\n"
    "as Gantt charts on one time axis (timeline-ID-POINT.png).  --point N (one campaign):\n"
    "mapping-ID-N.png, front point N's mapping: layers x devices shaded by the share of\n"
    "each layer's output (channels, rows or columns), and the bytes each device sends to each other.\n"
    "The data (*.dat) and the gnuplot scripts (*.gp) are written too; all the files are\n"
    "written whole or none (docs/exit-codes.md).  The gnuplot program is $DSE_GNUPLOT,\n"
    "else `gnuplot`.\n";

int cmd_plot(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "plot", argc, argv, "", plot_help);
    if (started >= 0) return started;
    const char *ids = cli_get(&a, "campaign"), *dbpath = cli_get(&a, "db"), *dir = cli_get(&a, "o");
    long point;
    if (cli_int(&a, "point", -1, 0, 1000000000, &point) || cli_finish(&a)) return EXIT_USAGE;
    if (!ids || !dir) {
        cli_error("plot", "--campaign ID[,ID...] and -o DIR are required");
        return EXIT_USAGE;
    }
    long long id[MAXC];
    int n = 0;
    for (const char *s = ids; *s;) {
        char one[32];
        size_t len = strcspn(s, ",");
        long long v = 0;
        snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), s);
        if (len >= sizeof one || cli_llong(one, 1, LLONG_MAX, &v) || n == MAXC) {
            cli_error("plot", "--campaign must be up to %d campaign ids separated by commas, not \"%s\"",
                      MAXC, ids);
            return EXIT_USAGE;
        }
        id[n++] = v;
        s = s[len] ? s + len + 1 : s + len;
    }
    if (point >= 0 && n != 1) {
        cli_error("plot", "--point goes with one campaign");
        return EXIT_USAGE;
    }
    res_db *db = res_open(dbpath ? dbpath : "dse.db", RES_OPEN_READ, err);
    if (!db) {
        cli_error("plot", "%s", err);
        return EXIT_USAGE;
    }
    int made = 0;
    if (cli_outdir("plot", dir, &made)) {
        res_close(db);
        return EXIT_USAGE;
    }
    res_mapping_picture pic; /* its names point into c: c lives until plotted */
    memset(&pic, 0, sizeof pic);
    int rc = EXIT_USAGE;
    camp *c = NULL;
    if (point >= 0) {
        res_campaign cm;
        res_point *p = NULL;
        int np = -1;
        if (!res_campaign_get(db, id[0], &cm, err)) {
            if ((c = camp_from_config(cm.config, 1, err)) && (np = camp_load_front(db, id[0], &p, err)) >= 0) {
                if (point >= np)
                    snprintf(err, sizeof err, "campaign %lld's front has points 0..%d, not %ld", id[0],
                             np - 1, point);
                else if (!camp_picture(c, p[point].genome, &pic, err))
                    rc = EXIT_OK;
            }
            res_campaign_free(&cm);
        }
        if (np > 0) res_points_free(p, np);
        if (rc != EXIT_OK) {
            cli_error("plot", "%s", err);
            camp_free(c);
            res_close(db);
            if (made) rmdir(dir); /* nothing left behind */
            return EXIT_USAGE;
        }
    }
    char *list = NULL;
    res_plot_opts po = {id, n, dir, (int)point, point >= 0 ? &pic : NULL, camp_load_front};
    int r = res_plot(db, &po, &list, err);
    res_close(db);
    camp_picture_free(&pic);
    camp_free(c);
    if (r) {
        cli_error("plot", "%s", err);
        free(list);
        if (made) rmdir(dir); /* nothing left behind */
        return r == -1 ? EXIT_USAGE : EXIT_FAIL;
    }
    /* One PNG path a line; the folder came from the command line. */
    for (char *l = list, *e; l && *l; l = e + 1) {
        char t[2 * BASE_ERRLEN];
        if (!(e = strchr(l, '\n'))) break;
        *e = 0;
        puts(cli_inert(t, sizeof t, l));
    }
    free(list);
    return EXIT_OK;
}
