/* test_chrom_property.c -- the decoders' invariant: for every zoo network,
 * every encoding and 2, 5 and 16 devices, 10,000 random genomes each
 * (half uniform, half sparse to exercise the repair rules) decode to
 * mappings that pass mapping_validate().  (All of them under the sanitizer
 * build too: about 8 s there, 2 s without.)
 */
#include "tutil.h"

#include <time.h>

#define GENOMES 10000

int main(void)
{
    const int ndevs[] = {2, 5, 16};
    char err[BASE_ERRLEN];
    uint64_t s = 2024;
    long total = 0;
    clock_t t0 = clock();
    for (int z = 0; z < net_zoo_count(); z++) {
        net *n = net_zoo(net_zoo_name(z), err);
        if (!n) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        for (int di = 0; di < 3; di++)
            for (int k = 0; k < 3; k++) {
                int nd = ndevs[di];
                /* hybrid: alternate p = 2 and p = n (the widest) */
                for (int pv = 0; pv < (k == CHROM_HYBRID ? 2 : 1); pv++) {
                    int p = pv ? nd : 2;
                    chrom *c = chrom_new(n, nd, (chrom_kind)k, p, NET_SPLIT_DEFAULT, err);
                    if (!c) {
                        fprintf(stderr, "%s: %s\n", n->name, err);
                        check_failures++;
                        continue;
                    }
                    int len = chrom_length(c);
                    int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len);
                    int *g = malloc(sizeof(int) * len);
                    chrom_bounds(c, lo, hi);
                    mapping *m = mapping_new(n->n, nd);
                    int count = k == CHROM_HYBRID ? GENOMES / 2 : GENOMES;
                    for (int r = 0; r < count; r++) {
                        if (r & 1) tsparse_genome(c, lo, hi, g, &s);
                        else trandom_genome(c, lo, hi, g, &s);
                        if (chrom_decode(c, g, len, m, err) || mapping_validate(m, n, err)) {
                            char buf[4096];
                            chrom_dump(c, g, buf, sizeof buf);
                            fprintf(stderr, "%s, %s, %d devices, p=%d: %s\n%s", n->name,
                                    chrom_kind_name((chrom_kind)k), nd, p, err, buf);
                            check_failures++;
                            break;
                        }
                        total++;
                    }
                    mapping_free(m);
                    free(lo);
                    free(hi);
                    free(g);
                    chrom_free(c);
                }
            }
        net_free(n);
    }
    printf("%ld genomes decoded and validated in %.1f s\n", total,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    return check_done("test_chrom_property");
}
