/* cmd_optimize.c -- `dse optimize PROBLEM`: the NSGA-II engine on one of
 * its built-in test problems; prints the final front and its hypervolume
 * beside the true front's.  Everything it prints is a function of the
 * options alone except the "seconds" figure. */
#include "cli.h"
#include "jsonutil.h"
#include "nsga.h"
#include "problems.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char optimize_help[] =
    "usage: dse optimize PROBLEM [--pop N] [--gens G] [--seed S] [--threads T]\n"
    "                    [--xover uniform|twopoint] [--dedup] [--archive] [--json]\n"
    "Runs the NSGA-II engine on a built-in problem and prints the final front (the\n"
    "population's feasible first front, or with --archive every non-dominated\n"
    "solution evaluated) with its hypervolume and, where known, the true front's.\n"
    "  --pop N       population, even and >= 4 (100)\n"
    "  --gens G      generations (250)\n"
    "  --seed S      RNG seed (1)\n"
    "  --threads T   evaluation threads; results do not depend on T (1)\n"
    "  --xover X     integer crossover: uniform or twopoint (uniform)\n"
    "  --dedup       re-draw duplicate offspring (always on for integer problems)\n"
    "Problems:\n";

/* The help with the built-in problems listed. */
static const char *usage(void)
{
    static char h[4096];
    size_t k = (size_t)snprintf(h, sizeof h, "%s", optimize_help);
    for (int i = 0; i < nsga_builtin_count() && k < sizeof h; i++)
        k += (size_t)snprintf(h + k, sizeof h - k, "  %-9s %s\n", nsga_builtin_name(i),
                              nsga_builtin_describe(i));
    if (k < sizeof h)
        snprintf(h + k, sizeof h - k, "Reference points: (1.1, 1.1) or (1.1, 1.1, 1.1); zdt5 (32, 11); "
                 "knapsack (0, 0),\nits objectives being the negated profits.\n");
    return h;
}

/* the printed front: indices ordered by objectives, lexicographically */
typedef struct {
    const double *f;
    int m, i;
} row;

static int cmp_row(const void *a, const void *b)
{
    const row *x = a, *y = b;
    for (int k = 0; k < x->m; k++)
        if (x->f[k] != y->f[k]) return x->f[k] < y->f[k] ? -1 : 1;
    return x->i - y->i;
}

int cmd_optimize(int argc, char **argv)
{
    cli_args a;
    int started = cli_start(&a, "optimize", argc, argv, "json dedup archive", usage());
    if (started >= 0) return started;
    long pop, gens, seed, threads;
    if (cli_int(&a, "pop", 100, 4, 1 << 24, &pop) || cli_int(&a, "gens", 250, 0, 100000000, &gens) ||
        cli_int(&a, "seed", 1, 0, 0x7fffffffL, &seed) || cli_int(&a, "threads", 1, 1, 256, &threads))
        return EXIT_USAGE;
    const char *xo = cli_get(&a, "xover");
    int json = cli_flag(&a, "json"), dedup = cli_flag(&a, "dedup"), archive = cli_flag(&a, "archive");
    if (cli_finish(&a)) return EXIT_USAGE;
    if (a.npos != 1) {
        cli_error("optimize", "expected one problem name (dse optimize --help lists them)");
        return EXIT_USAGE;
    }
    if (xo && strcmp(xo, "uniform") && strcmp(xo, "twopoint")) {
        cli_error("optimize", "--xover must be uniform or twopoint, not \"%s\"", xo);
        return EXIT_USAGE;
    }
    if (pop % 2) {
        cli_error("optimize", "--pop %ld: the population must be even", pop);
        return EXIT_USAGE;
    }
    char err[BASE_ERRLEN];
    nsga_builtin *b = nsga_builtin_create(a.pos[0], (int)threads, err);
    if (!b) {
        cli_error("optimize", "%s (dse optimize --help lists the problems)", err);
        return strstr(err, "unknown") ? EXIT_USAGE : EXIT_FAIL;
    }
    const nsga_problem *p = nsga_builtin_problem(b);
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = (int)pop;
    o.max_gens = gens;
    o.seed = (unsigned long)seed;
    o.ref = nsga_builtin_ref(b);
    o.xover = xo && !strcmp(xo, "twopoint") ? NSGA_XO_TWOPOINT : NSGA_XO_UNIFORM;
    o.dedup = dedup || p->kind == NSGA_INT;
    o.archive = archive;
    nsga *e = nsga_create(p, &o, err);
    if (!e) {
        cli_error("optimize", "%s", err);
        nsga_builtin_free(b);
        return EXIT_USAGE;
    }
    int rc = gens > 0 ? nsga_run(e, err) : nsga_init(e, err);
    if (rc < 0) {
        cli_error("optimize", "%s", err);
        nsga_destroy(e);
        nsga_builtin_free(b);
        return EXIT_FAIL;
    }

    int m = p->nobj, nv = p->nvar, n = 0;
    int cap = archive ? nsga_archive_size(e) : nsga_pop_size(e);
    row *rows = malloc((size_t)(cap ? cap : 1) * sizeof *rows);
    double *pts = malloc((size_t)(cap ? cap : 1) * m * sizeof *pts);
    if (!rows || !pts) {
        cli_error("optimize", "out of memory");
        free(rows), free(pts), nsga_destroy(e), nsga_builtin_free(b);
        return EXIT_FAIL;
    }
    if (archive) {
        for (int i = 0; i < cap; i++) rows[n++] = (row){nsga_archive_objectives(e, i), m, i};
    } else {
        for (int i = 0; i < cap; i++)
            if (nsga_rank(e, i) == 0 && nsga_cv(e, i) == 0) rows[n++] = (row){nsga_objectives(e, i), m, i};
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    for (int i = 0; i < n; i++) memcpy(pts + (size_t)i * m, rows[i].f, (size_t)m * sizeof *pts);
    const double *ref = nsga_builtin_ref(b);
    double hv = nsga_hv(n, m, pts, ref), truehv = nsga_builtin_true_hv(b);
    const nsga_stats *s = nsga_get_stats(e);

    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "problem", nsga_builtin_id(b));
        cJSON_AddNumberToObject(j, "variables", nv);
        cJSON_AddNumberToObject(j, "objectives", m);
        cJSON_AddNumberToObject(j, "pop", (double)pop);
        cJSON_AddNumberToObject(j, "generations", (double)s->generation);
        cJSON_AddNumberToObject(j, "seed", (double)seed);
        cJSON_AddNumberToObject(j, "threads", (double)threads);
        cJSON_AddNumberToObject(j, "evaluations", (double)s->evaluations);
        cJSON_AddNumberToObject(j, "cache_hits", (double)s->cache_hits);
        cJSON_AddNumberToObject(j, "seconds", s->elapsed);
        cJSON_AddStringToObject(j, "front_of", archive ? "archive" : "population");
        cJSON_AddItemToObject(j, "reference", cJSON_CreateDoubleArray(ref, m));
        cJSON_AddNumberToObject(j, "hypervolume", hv);
        if (isnan(truehv)) cJSON_AddNullToObject(j, "true_hypervolume");
        else cJSON_AddNumberToObject(j, "true_hypervolume", truehv);
        cJSON *fr = cJSON_AddArrayToObject(j, "front");
        for (int r = 0; r < n; r++) {
            int i = rows[r].i;
            cJSON *pt = cJSON_CreateObject();
            if (p->kind == NSGA_INT)
                cJSON_AddItemToObject(pt, "x", cJSON_CreateIntArray(archive ? nsga_archive_genome_int(e, i)
                                                                            : nsga_genome_int(e, i), nv));
            else
                cJSON_AddItemToObject(pt, "x", cJSON_CreateDoubleArray(archive ? nsga_archive_genome_real(e, i)
                                                                               : nsga_genome_real(e, i), nv));
            cJSON_AddItemToObject(pt, "f", cJSON_CreateDoubleArray(rows[r].f, m));
            cJSON_AddItemToArray(fr, pt);
        }
        cli_print_json(j);
    } else {
        printf("problem %s: %s\n", nsga_builtin_id(b), nsga_builtin_describe_of(b));
        printf("pop %ld, %ld generations, seed %ld, %ld thread%s: %lld evaluations, %lld cache hits, %.3f s\n",
               pop, s->generation, seed, threads, threads > 1 ? "s" : "", s->evaluations, s->cache_hits,
               s->elapsed);
        printf("front (%s): %d points\n", archive ? "archive of every non-dominated solution" : "population, rank 0",
               n);
        for (int k = 0; k < m; k++) printf("%*s%d", k ? 14 : 12, "f", k + 1);
        putchar('\n');
        for (int r = 0; r < n; r++) {
            for (int k = 0; k < m; k++) printf("%s%14.8g", k ? " " : "", rows[r].f[k]);
            putchar('\n');
        }
        printf("hypervolume %.6f at (", hv);
        for (int k = 0; k < m; k++) printf("%s%g", k ? ", " : "", ref[k]);
        if (isnan(truehv)) printf("); true front unknown\n");
        else printf("); true front %.6f (%.2f%%)\n", truehv, 100 * hv / truehv);
    }
    free(rows), free(pts);
    nsga_destroy(e);
    nsga_builtin_free(b);
    return EXIT_OK;
}
