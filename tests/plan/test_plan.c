/* test_plan.c -- the Plan's invariants (plan_check) on random genomes of
 * every encoding for every zoo network with 2, 5 and 16 devices, plus hand
 * checked plans: what is sent, how often, where concats happen. */
#include "chrom.h"
#include "mapping.h"
#include "net.h"
#include "plan.h"

#include "check.h"
#include "group_chans.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Random genomes per network x devices x encoding; `test_plan N` takes N
 * (the arm64 label's short form, under emulation; the soak label's long
 * one, capped at 1000 under DSE_SHORT, its CI form).  The default suite's
 * 3000 take 1.5-4 minutes on 2 cores beside other tests (10,000 took up
 * to 12 of its 15-minute timeout in CI). */
#if defined(__SANITIZE_ADDRESS__)
static int genomes = 300; /* the sanitizer build checks the same code on fewer samples */
#else
static int genomes = 3000;
#endif

/* Count steps of an op on a device. */
static int count(const plan *p, int d, plan_op op, int layer)
{
    int k = 0;
    for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
        const plan_step *s = &plan_steps_dev(p, d)[i];
        if (s->op == op && (layer == -2 || s->layer == layer)) k++;
    }
    return k;
}

/* The bytes the plan moves, recomputed from the mapping alone: for every
 * producer, every device running a consumer (or the output concat) needs
 * the hull of the channels its consumers read (the whole output for the
 * output), and receives each piece of it that another device holds, once. */
static int64_t expected_bytes(const net *n, const mapping *m, int source)
{
    int64_t total = 0;
    for (int q = -1; q < n->n; q++) {
        net_shape sh = q < 0 ? n->input : n->layers[q].out;
        for (int d = 0; d < m->ndev; d++) {
            int lo = sh.c, hi = 0; /* channel hull on d */
            for (int c = 0; c < n->n; c++)
                for (int j = 0; j < n->layers[c].nin; j++)
                    if (n->layers[c].in[j] == q)
                        for (int k = m->first[c]; k < m->first[c + 1]; k++) {
                            if (m->slices[k].dev != d) continue;
                            int a0, a1;
                            group_chans(n, c, j, m->slices[k].c0, m->slices[k].nc, sh.c, &a0, &a1);
                            lo = a0 < lo ? a0 : lo, hi = a1 > hi ? a1 : hi;
                        }
            if (q == n->n - 1 && m->slices[m->first[q]].dev == d) lo = 0, hi = sh.c;
            if (hi <= lo) continue;
            if (q < 0) {
                if (d != source) total += (int64_t)(hi - lo) * sh.h * sh.w * 4;
                continue;
            }
            for (int k = m->first[q]; k < m->first[q + 1]; k++) {
                const map_slice *s = &m->slices[k];
                int a0 = s->c0 > lo ? s->c0 : lo, a1 = s->c0 + s->nc < hi ? s->c0 + s->nc : hi;
                if (s->dev != d && a1 > a0) total += (int64_t)(a1 - a0) * sh.h * sh.w * 4;
            }
        }
    }
    return total;
}

static void random_invariants(void)
{
    static const int devs[3] = {2, 5, 16};
    static const chrom_kind kinds[3] = {CHROM_NAIVE, CHROM_HYBRID, CHROM_VERTICAL};
    char err[BASE_ERRLEN];
    unsigned seed = 12345;
    for (int z = 0; z < net_zoo_count(); z++) {
        net *n = net_zoo(net_zoo_name(z), err);
        for (int di = 0; di < 3; di++)
            for (int ki = 0; ki < 3; ki++) {
                int nd = devs[di];
                chrom *c = chrom_new(n, nd, kinds[ki], 2, NET_SPLIT_DEFAULT, err);
                CHECK(c, "%s", err);
                if (!c) continue;
                int len = chrom_length(c);
                int *lo = malloc(len * sizeof(int)), *hi = malloc(len * sizeof(int)),
                    *g = malloc(len * sizeof(int));
                chrom_bounds(c, lo, hi);
                mapping *m = mapping_new(n->n, nd);
                plan *p = plan_new();
                int64_t moved = 0;
                int bad = 0;
                for (int t = 0; t < genomes && !bad; t++) {
                    for (int k = 0; k < len; k++)
                        g[k] = lo[k] + (int)(rand_r(&seed) % (unsigned)(hi[k] - lo[k] + 1));
                    int src = t % nd;
                    if (chrom_decode(c, g, len, m, err) || plan_build(p, n, m, src, err) ||
                        plan_check(p, n, err)) {
                        CHECK(0, "%s %s %d devices genome %d: %s", n->name,
                              chrom_kind_name(kinds[ki]), nd, t, err);
                        bad = 1;
                        break;
                    }
                    int64_t want = expected_bytes(n, m, src);
                    if (p->bytes_moved != want) {
                        CHECK(0, "%s %s %d devices genome %d: plan moves %lld bytes, mapping "
                              "implies %lld", n->name, chrom_kind_name(kinds[ki]), nd, t,
                              (long long)p->bytes_moved, (long long)want);
                        bad = 1;
                    }
                    moved += p->bytes_moved;
                }
                if (!bad)
                    printf("ok: %-13s %-8s %2d devices: %d genomes, plans valid and "
                           "deadlock-free, %.1f MB moved on average\n", n->name,
                           chrom_kind_name(kinds[ki]), nd, genomes, moved / 1e6 / genomes);
                free(lo);
                free(hi);
                free(g);
                mapping_free(m);
                plan_free(p);
                chrom_free(c);
            }
        net_free(n);
    }
}

/* toy6 (conv 20ch, relu, pool, flatten, fc 10, softmax) on 3 devices:
 * conv split 0:[0,10) 1:[10,20); relu on 2; fc split 2:[0,5) 0:[5,10);
 * softmax on 1.  Hand-derived plan. */
static void hand_plan(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("toy6", err);
    mapping *m = mapping_new(n->n, 3);
    map_slice sl[] = {{0, 0, 10}, {1, 10, 10}, {2, 0, 20}, {2, 0, 20}, {2, 0, 1280},
                      {2, 0, 5},  {0, 5, 5},   {1, 0, 10}};
    int first[] = {0, 2, 3, 4, 5, 7, 8};
    memcpy(m->slices, sl, sizeof sl);
    memcpy(m->first, first, sizeof first);
    CHECK(mapping_validate(m, n, err) == 0, "%s", err);
    plan *p = plan_new();
    CHECK(plan_build(p, n, m, 0, err) == 0, "%s", err);
    CHECK(plan_check(p, n, err) == 0, "%s", err);
    /* input: 3x16x16 floats sent 0 -> 1 once (both conv slices need it). */
    CHECK(count(p, 0, PLAN_SEND, NET_INPUT) == 1, "input sent once to device 1");
    /* conv slices (10x16x16 floats = 10240 B each) both go to device 2, which concats. */
    CHECK(count(p, 2, PLAN_RECV, 0) == 2 && count(p, 2, PLAN_CONCAT, 0) == 1,
          "device 2 receives both conv slices and concats them");
    CHECK(count(p, 0, PLAN_CONCAT, -2) == 0, "device 0 has no concat");
    /* flatten (1280 floats) sent 2 -> 0 for the second fc slice, once. */
    CHECK(count(p, 0, PLAN_RECV, 3) == 1, "device 0 receives flatten once");
    /* fc slices go to device 1 (softmax), concatenated there; output there. */
    CHECK(count(p, 1, PLAN_RECV, 4) == 2 && count(p, 1, PLAN_CONCAT, 4) == 1 && p->out_dev == 1,
          "fc slices concatenated on the softmax device 1");
    int64_t want = 3 * 16 * 16 * 4 + 2 * 10 * 16 * 16 * 4 + 1280 * 4 + 2 * 5 * 4;
    CHECK(p->bytes_moved == want, "bytes moved %lld, hand count %lld", (long long)p->bytes_moved,
          (long long)want);
    CHECK(p->nmsgs == 6, "6 messages, got %d", p->nmsgs);

    mapping_free(m);
    plan_free(p);
    net_free(n);

    /* Split last layer: the output is concatenated on its first slice's device. */
    n = net_new("fc-end", "x", (net_shape){8, 1, 1});
    net_attr a = net_attr_default(NET_FC);
    a.out_c = 6;
    const char *in0[1] = {"x"}, *in1[1] = {"fc1"};
    net_add(n, "fc1", NET_FC, &a, 1, in0, err);
    net_add(n, "fc2", NET_FC, &a, 1, in1, err);
    CHECK(net_finalize(n, "fc-end", err) == 0, "%s", err);
    m = mapping_new(2, 3);
    map_slice sl3[] = {{0, 0, 6}, {2, 0, 3}, {1, 3, 3}};
    int first3[] = {0, 1, 3};
    memcpy(m->slices, sl3, sizeof sl3);
    memcpy(m->first, first3, sizeof first3);
    p = plan_new();
    CHECK(plan_build(p, n, m, 0, err) == 0 && plan_check(p, n, err) == 0, "%s", err);
    CHECK(p->out_dev == 2 && count(p, 2, PLAN_CONCAT, 1) == 1 && count(p, 2, PLAN_RECV, 1) == 1,
          "split output layer concatenated on its first slice's device 2");
    /* fc1 output (6 floats) goes to devices 1 and 2: one message each. */
    CHECK(count(p, 0, PLAN_SEND, 0) == 2, "fc1 sent once per device");
    mapping_free(m);
    plan_free(p);
    net_free(n);
    printf("ok: hand-checked plans (toy6 on 3 devices, split output layer)\n");
}

/* A depthwise and a 2-group convolution split by channels, worked by hand:
 * a slice receives only the input channels of its groups (issue 17). */
static void groups_by_hand(void)
{
    char err[BASE_ERRLEN];
    net *n = net_new("groups", "x", (net_shape){8, 4, 4});
    const char *x[1] = {"x"}, *p1[1] = {"pw"}, *dw[1] = {"dw"};
    net_attr a = net_attr_conv(8, 1, 1, 0, 1, 1);
    net_add(n, "pw", NET_CONV, &a, 1, x, err);
    a = net_attr_conv(8, 3, 1, 1, 8, 1); /* depthwise */
    net_add(n, "dw", NET_CONV, &a, 1, p1, err);
    a = net_attr_conv(6, 3, 1, 1, 2, 1); /* two groups: 4 inputs -> 3 outputs each */
    net_add(n, "g2", NET_CONV, &a, 1, dw, err);
    CHECK(!net_finalize(n, "groups", err), "%s", err);
    mapping *m = mapping_new(3, 2);
    /* pw whole on d0; dw [0,4) on d0, [4,8) on d1; g2 [0,2) on d1, [2,6) on d0 */
    map_slice sl[5] = {{0, 0, 8}, {0, 0, 4}, {1, 4, 4}, {1, 0, 2}, {0, 2, 4}};
    int first[4] = {0, 1, 3, 5};
    memcpy(m->slices, sl, sizeof sl);
    memcpy(m->first, first, sizeof first);
    CHECK(!mapping_validate(m, n, err), "%s", err);
    plan *p = plan_new();
    int ok = p && !plan_build(p, n, m, 0, err) && !plan_check(p, n, err);
    CHECK(ok, "%s", err);
    if (ok) {
        /* pw channels 4..7 to d1 (dw's groups 4..7); dw channels 0..3 to d1
         * (g2 [0,2) is group 0: input channels 0..3; d1 holds none of
         * them); dw 4..7 to d0 (g2 [2,6) spans both groups); g2 [2,6) to d1,
         * where the output is assembled (its first slice's device).  Each
         * 4 x 4 plane is 64 bytes; the whole inputs would be 8 + 8 + 8 + 4. */
        CHECK_I64(p->bytes_moved, 64 * (4 + 4 + 4 + 4));
        CHECK_I64(p->bytes_moved, expected_bytes(n, m, 0));
    }
    plan_free(p);
    mapping_free(m);
    net_free(n);
    printf("ok: grouped convolutions by hand (a slice receives its groups' channels only)\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && (genomes = atoi(argv[1])) < 1) {
        fprintf(stderr, "usage: test_plan [genomes >= 1]\n");
        return 2;
    }
    if (getenv("DSE_SHORT") && atoi(getenv("DSE_SHORT")) > 0 && genomes > 1000) genomes = 1000;
    hand_plan();
    groups_by_hand();
    random_invariants();
    return check_done("test_plan");
}
