/* bench_eval.c -- evaluations per second of a campaign's problem: decode
 * + plan_build + cost_eval per genome, through camp_eval (the engine's
 * batch callback) on 1 and 2 threads, for the networks of bench/README.md.
 * Genomes are uniform random within the chromosome's bounds (a fixed
 * xorshift stream, so every run evaluates the same genomes).
 *   bench_campaign_eval [seconds per case (default 2)] [networks...]
 */
#include "campaign.h"

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t xs(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    static const char *def[] = {"alexnet-bvlc", "vgg16", "resnet50", "densenet121"};
    const char **nets = argc > 2 ? (const char **)argv + 2 : def;
    int nn = argc > 2 ? argc - 2 : 4;
    enum { B = 1000 }; /* a batch = one generation of a pop-1000 campaign */
    printf("%-14s %-22s %6s %7s %12s %12s\n", "network", "platform", "genes", "threads",
           "evals/s", "us/eval");
    for (int i = 0; i < nn; i++) {
        for (int t = 1; t <= 2; t++) {
            char err[BASE_ERRLEN];
            camp_options o = {0};
            o.network = nets[i];
            o.platform = "jetson-nx-8-cpugpu";
            o.chromosome = "hybrid";
            o.splits = 2;
            o.pop = 100;
            o.seed = 1;
            camp *c = camp_new(&o, t, NULL, NULL, err);
            if (!c) {
                fprintf(stderr, "%s: %s\n", nets[i], err);
                return 1;
            }
            int nv = camp_nvar(c);
            const int *lo, *hi;
            camp_bounds(c, &lo, &hi);
            int *g = malloc((size_t)B * nv * sizeof *g);
            double *obj = malloc((size_t)B * COST_NOBJ * sizeof *obj), *cv = malloc(B * sizeof *cv);
            rng = 88172645463325252ull;
            long long n = 0;
            double t0 = base_now(), el;
            do {
                for (int k = 0; k < B * nv; k++) g[k] = lo[k % nv] + (int)(xs() % (uint64_t)(hi[k % nv] - lo[k % nv] + 1));
                if (camp_eval(c, B, g, obj, cv, err)) {
                    fprintf(stderr, "%s\n", err);
                    return 1;
                }
                n += B;
            } while ((el = base_now() - t0) < secs);
            printf("%-14s %-22s %6d %7d %12.0f %12.2f\n", nets[i], "jetson-nx-8-cpugpu", nv, t,
                   n / el, 1e6 * el / n);
            fflush(stdout);
            free(g), free(obj), free(cv);
            camp_free(c);
        }
    }
    return 0;
}
