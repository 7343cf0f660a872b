/* cmd_space.c -- `dse space`: the genome length and the size of the search
 * space of one chromosome for a network and a device count (DESIGN
 * section 5).  Prints; computes nothing itself (chrom.h does). */
#include "chrom.h"
#include "cli.h"
#include "jsonutil.h"
#include "net.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char space_help[] =
    "usage: dse space --network NAME|FILE --devices D --chromosome naive|hybrid|vertical|spatial\n"
    "                 [--splits P] [--split-kinds conv,fc] [--cuts C] [--json]\n"
    "Genome length, gene bounds and log10 of the search-space size.\n"
    "  --splits P        hybrid and spatial: horizontal splits per layer, 1..D (default min(2, D))\n"
    "  --split-kinds K   layer kinds that may be split: conv,fc (default), conv or fc\n"
    "  --cuts C          spatial: channels,bands (default), channels,rows or channels,rows,columns\n";

int cmd_space(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "space", argc, argv, "json", space_help);
    if (started >= 0) return started;
    const char *netname = cli_get(&a, "network"), *kname = cli_get(&a, "chromosome");
    const char *kinds = cli_get(&a, "split-kinds"), *cuts = cli_get(&a, "cuts");
    long ndev, p;
    int json = cli_flag(&a, "json");
    if (cli_int(&a, "devices", 0, 1, CHROM_MAX_DEV, &ndev)) return EXIT_USAGE;
    if (!netname || !kname || ndev < 1) {
        cli_error("space", "--network, --devices and --chromosome are required");
        return EXIT_USAGE;
    }
    if (cli_int(&a, "splits", ndev < 2 ? ndev : 2, 1, ndev, &p)) return EXIT_USAGE;
    if (cli_finish(&a)) return EXIT_USAGE;
    if (a.npos) {
        cli_error("space", "unexpected argument \"%s\" (see dse space --help)", a.pos[0]);
        return EXIT_USAGE;
    }
    chrom_kind kind;
    if (chrom_kind_parse(kname, &kind)) {
        cli_error("space", "--chromosome must be naive, hybrid, vertical or spatial, not \"%s\"",
                  kname);
        return EXIT_USAGE;
    }
    chrom_cut_mode cm = CHROM_CUTS_BANDS;
    if (cuts && (kind != CHROM_SPATIAL || chrom_cut_mode_parse(cuts, &cm))) {
        cli_error("space", "--cuts is for the spatial chromosome: channels,bands, channels,rows or "
                  "channels,rows,columns");
        return EXIT_USAGE;
    }
    int mask = kinds ? net_split_mask_parse(kinds) : NET_SPLIT_DEFAULT;
    if (mask < 0) {
        cli_error("space", "--split-kinds must be conv,fc, conv or fc, not \"%s\"", kinds);
        return EXIT_USAGE;
    }
    net *n = net_open(netname, err);
    if (!n) {
        cli_error("space", "%s", err);
        return EXIT_USAGE;
    }
    chrom *c = chrom_new(n, (int)ndev, kind, (int)p, mask, err);
    if (c && kind == CHROM_SPATIAL) chrom_set_cut_mode(c, cm);
    if (!c) {
        cli_error("space", "%s", err);
        net_free(n);
        return EXIT_USAGE;
    }
    int len = chrom_length(c), lo = 0, hi = 0;
    if (len > 0) {
        int *l = malloc((size_t)len * sizeof *l), *h = malloc((size_t)len * sizeof *h);
        if (!l || !h) {
            free(l);
            free(h);
            cli_error("space", "out of memory");
            chrom_free(c);
            net_free(n);
            return EXIT_FAIL;
        }
        chrom_bounds(c, l, h);
        lo = l[0], hi = h[0]; /* uniform, but spatial's cut genes (0..1 or 0..2) */
        free(l);
        free(h);
    }
    double lg = chrom_log10_space(c);
    char kbuf[16] = "";
    if (mask & (1 << NET_CONV)) strcat(kbuf, "conv");
    if (mask & (1 << NET_FC)) strcat(kbuf, kbuf[0] ? ",fc" : "fc");
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "network", n->name);
        cJSON_AddNumberToObject(o, "layers", n->n);
        cJSON_AddNumberToObject(o, "splittable", chrom_nsplittable(c));
        cJSON_AddStringToObject(o, "split_kinds", kbuf);
        cJSON_AddNumberToObject(o, "devices", ndev);
        cJSON_AddStringToObject(o, "chromosome", chrom_kind_name(kind));
        if (kind == CHROM_HYBRID || kind == CHROM_SPATIAL) cJSON_AddNumberToObject(o, "splits", p);
        if (kind == CHROM_SPATIAL) cJSON_AddNumberToObject(o, "cut_genes", chrom_nsplittable(c));
        if (kind == CHROM_SPATIAL)
            cJSON_AddStringToObject(o, "cuts", chrom_cut_mode_name(chrom_get_cut_mode(c)));
        cJSON_AddNumberToObject(o, "length", len);
        cJSON_AddNumberToObject(o, "gene_min", lo);
        cJSON_AddNumberToObject(o, "gene_max", hi);
        cJSON_AddNumberToObject(o, "log10_space", lg);
        cli_print_json(o);
    } else {
        printf("network %s: %d layers, %d splittable (%s)\n", n->name, n->n,
               chrom_nsplittable(c), kbuf);
        if (kind == CHROM_HYBRID || kind == CHROM_SPATIAL)
            printf("chromosome %s, %ld devices, %ld splits\n", chrom_kind_name(kind), ndev, p);
        else
            printf("chromosome %s, %ld devices\n", chrom_kind_name(kind), ndev);
        if (kind == CHROM_SPATIAL) {
            int S = chrom_nsplittable(c), sp = len - S;
            printf("genome length %d: %d split-point genes %d..%d, %d cut genes 0..%d (%s)\n", len,
                   sp, lo, hi, S, chrom_cut_values(c) - 1, chrom_cut_mode_name(chrom_get_cut_mode(c)));
            printf("search space 10^%.3f (%d^%d x %d^%d)\n", lg, hi - lo + 1, sp, chrom_cut_values(c), S);
        } else {
            printf("genome length %d, genes %d..%d\n", len, lo, hi);
            printf("search space 10^%.3f (%d^%d)\n", lg, hi - lo + 1, len);
        }
    }
    chrom_free(c);
    net_free(n);
    return EXIT_OK;
}
