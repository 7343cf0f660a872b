/* test_cost.c -- the analytical model against expectations computed by
 * hand from the formulas of docs/cost-model.md (the comments show each
 * sum), on tiny networks and round-number platforms; and the thesis' Table
 * 2 rows reproduced by examples/coeffs/jetson-nx-thesis.json.
 *
 * Round numbers used throughout: 1000 MHz, 1 core and per_cycle 1 make one
 * MAC or op cost 1 ns; a 1 MB/s link moves 1 byte per us; 100 MB/s copies
 * 1 byte per 10 ns.
 */
#include "chrom.h"
#include "convalgo.h"
#include "cost.h"
#include "mapping.h"
#include "check.h"
#include "plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define US 1e-6
#define CLOSE(got, want) CHECK_REL(got, want, 1e-9)

static char err[BASE_ERRLEN], warn[BASE_ERRLEN];

/* Two CPUs on different boards: network link 100 us + 1 MB/s.  a's memory
 * capacity is given (MB); idle power idle_w. */
static platform *plat2(double cap_a, double idle_w, double lat_us, double bw_mbs)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"two\",\"devices\":["
             "{\"name\":\"a\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
             "\"memory_mb\":%g,\"idle_w\":%g,\"busy_w\":10},"
             "{\"name\":\"b\",\"board\":\"B\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
             "\"memory_mb\":1000,\"idle_w\":%g,\"busy_w\":10}],"
             "\"links\":{\"same_board\":{\"latency_us\":10,\"bandwidth_mbs\":100},"
             "\"network\":{\"latency_us\":%g,\"bandwidth_mbs\":%g}}}",
             cap_a, idle_w, idle_w, lat_us, bw_mbs);
    platform *p = platform_from_json(text, "two.json", err);
    if (!p) fprintf(stderr, "platform: %s\n", err);
    return p;
}

/* per_cycle 1 for every class, overhead ovh_us per step, send overhead
 * send_us, copy 100 MB/s, memory coefficient mc and bias bias_mb. */
static cost_coeffs *unit_coeffs(const char *netname, double ovh_us, double send_us, double mc,
                                double bias_mb)
{
    cost_coeffs *c = coeffs_new();
    coeffs_add_platform(c, "two");
    coeffs_add_network(c, netname);
    coeffs_set_info(c, "test", "2024-01-01", NULL);
    coeffs_device *d = coeffs_dev(c, PLAT_CPU);
    for (int k = 0; k < COST_NCLASS; k++)
        d->cls[k].per_cycle = coeffs_given(1.0, COEFFS_ASSUMPTION);
    d->overhead_us = coeffs_given(ovh_us, COEFFS_ASSUMPTION);
    d->send_overhead_us = coeffs_given(send_us, COEFFS_ASSUMPTION);
    d->copy_bandwidth_mbs = coeffs_given(100, COEFFS_ASSUMPTION);
    d->mem_coefficient = coeffs_given(mc, COEFFS_ASSUMPTION);
    d->mem_bias_mb = coeffs_given(bias_mb, COEFFS_ASSUMPTION);
    return c;
}

static net *fc_chain(const char *name, int out1, int out2)
{
    net *n = net_new(name, "x", (net_shape){100, 1, 1});
    net_attr a = net_attr_default(NET_FC);
    a.bias = 1;
    const char *x[] = {"x"}, *f1[] = {"fc1"};
    a.out_c = out1;
    net_add(n, "fc1", NET_FC, &a, 1, x, err);
    a.out_c = out2;
    net_add(n, "fc2", NET_FC, &a, 1, f1, err);
    if (net_finalize(n, name, err)) fprintf(stderr, "net: %s\n", err);
    return n;
}

/* Set layer i to slices (dev, c0, nc) x k. */
static void set_layer(mapping *m, const net *n, int i, int k, const map_slice *s)
{
    (void)n;
    /* Rebuild the CSR: every other layer keeps one slice. */
    map_slice *all = malloc((size_t)(m->first[m->nlayers] + k) * sizeof *all);
    int *first = malloc((size_t)(m->nlayers + 1) * sizeof *first), w = 0;
    for (int l = 0; l < m->nlayers; l++) {
        first[l] = w;
        if (l == i)
            for (int j = 0; j < k; j++) all[w++] = s[j];
        else
            for (int j = m->first[l]; j < m->first[l + 1]; j++) all[w++] = m->slices[j];
    }
    first[m->nlayers] = w;
    memcpy(m->first, first, (size_t)(m->nlayers + 1) * sizeof *first);
    memcpy(m->slices, all, (size_t)w * sizeof *all);
    free(all);
    free(first);
}

static void put(mapping *m, const net *n, const char *layer, int dev)
{
    int i = net_find(n, layer);
    map_slice s = {dev, 0, n->layers[i].out.c};
    set_layer(m, n, i, 1, &s);
}

/* Build and evaluate; returns 0 when both succeed. */
static int run(const net *n, const platform *pl, const cost_coeffs *c, const mapping *m,
               cost_result *r, cost_device *d)
{
    plan *p = plan_new();
    cost_model *cm = cost_new(n, pl, c, warn, err);
    int rc = -1;
    if (!cm) {
        fprintf(stderr, "cost_new: %s\n", err);
    } else if (mapping_validate(m, n, err) || plan_build(p, n, m, pl->source, err) ||
               plan_check(p, n, err)) {
        fprintf(stderr, "mapping/plan: %s\n", err);
    } else if (cost_eval(cm, p, r, d)) {
        fprintf(stderr, "cost_eval: %s\n", cost_error(cm));
    } else {
        rc = 0;
    }
    cost_free(cm);
    plan_free(p);
    return rc;
}

/* fc1 on a, fc2 on b: one transfer of fc1's 800 bytes. */
static void test_chain(void)
{
    net *n = fc_chain("chain", 200, 50);
    platform *pl = plat2(1000, 2, 100, 1);
    cost_coeffs *c = unit_coeffs("chain", 1, 2, 1, 0);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    put(m, n, "fc2", 1);
    cost_result r;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CHECK_STR(warn, "");
    /* a: fc1 = 1 + 100*200 ns = 21 us; send overhead 2 -> 23; 800 B at
     * 1 B/us = 800 us, + 100 us latency: arrives at 923.
     * b: waits until 923; fc2 = 1 + 200*50 ns = 11 -> 934. */
    CLOSE(r.latency_ms, 0.934);
    CLOSE(d[0].busy_s, 23 * US);
    CLOSE(d[0].compute_s, 21 * US);
    CLOSE(d[0].send_s, 2 * US);
    CLOSE(d[0].finish_s, 23 * US);
    CLOSE(d[0].idle_s, 911 * US);
    CHECK(d[0].wait_s == 0);
    CLOSE(d[1].busy_s, 11 * US);
    CLOSE(d[1].wait_s, 923 * US);
    CLOSE(d[1].finish_s, 934 * US);
    CHECK_I64(d[0].bytes_sent, 800);
    CHECK_I64(d[1].bytes_recv, 800);
    CHECK_I64(d[0].bytes_recv, 0);
    /* Energy: busy * 10 W + (latency - busy) * 2 W. */
    CLOSE(d[0].energy_j, 23e-6 * 10 + 911e-6 * 2);
    CLOSE(d[1].energy_j, 11e-6 * 10 + 923e-6 * 2);
    CLOSE(r.energy_j, 23e-6 * 10 + 911e-6 * 2);
    /* Memory a: fc1 weights (100*200 + 200) * 4 = 80800 B; live: input 400
     * + fc1 800 = 1200.  b: fc2 weights (200*50 + 50) * 4 = 40200; receive
     * buffer 800 (from the start) + fc2 200 = 1000. */
    CLOSE(d[0].weights_bytes, 80800);
    CLOSE(d[0].peak_act_bytes, 1200);
    CLOSE(d[0].mem_mb, 0.082);
    CLOSE(d[1].weights_bytes, 40200);
    CLOSE(d[1].peak_act_bytes, 1000);
    CLOSE(d[1].mem_mb, 0.0412);
    CLOSE(r.mem_mb, 0.082);
    CHECK(r.violation_bytes == 0);
    CHECK(d[0].used && d[1].used);

    /* eq. 4.10: with P_idle = 0 energy is busy time * P_busy. */
    platform *p0 = plat2(1000, 0, 100, 1);
    CHECK(run(n, p0, c, m, &r, d) == 0);
    CLOSE(d[0].energy_j, 23e-6 * 10);
    CLOSE(d[1].energy_j, 11e-6 * 10);
    platform_free(p0);

    /* Capacity of a = 0.05 MB: 82000 - 50000 = 32000 bytes over. */
    platform *small = plat2(0.05, 2, 100, 1);
    CHECK(run(n, small, c, m, &r, d) == 0);
    CLOSE(r.violation_bytes, 32000);
    /* Memory coefficient 2, bias 0.01 MB: a = 2 * 82000 + 10000 = 174000,
     * b = 2 * 41200 + 10000 = 92400 (fits in 1000 MB). */
    cost_coeffs *c2 = unit_coeffs("chain", 1, 2, 2, 0.01);
    CHECK(run(n, small, c2, m, &r, d) == 0);
    CLOSE(d[0].mem_mb, 0.174);
    CLOSE(d[1].mem_mb, 0.0924);
    CLOSE(r.violation_bytes, 124000);
    /* Per-kind weights coefficient: FC weights at 0.5, the rest at 2:
     * a = 0.5 * 80800 + 2 * 1200 + 10000 = 52800. */
    coeffs_dev(c2, PLAT_CPU)->mem_weights[NET_FC] = coeffs_given(0.5, COEFFS_ASSUMPTION);
    CHECK(run(n, small, c2, m, &r, d) == 0);
    CLOSE(d[0].mem_mb, 0.0528);
    CLOSE(r.violation_bytes, 2800);
    coeffs_free(c2);
    platform_free(small);

    /* A single-device mapping on a: b has no step, so it is not part of
     * the deployment: no energy, no memory. */
    mapping_set_single(m, n, 0);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.032); /* 21 + 11 us */
    CHECK(!d[1].used && d[1].energy_j == 0 && d[1].mem_mb == 0);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* fc1 split 150/50 between a and b, fc2 on a: the slices finish at
 * different times and a (done first) waits for b's slice. */
static void test_split_wait(void)
{
    net *n = fc_chain("split", 200, 10);
    platform *pl = plat2(1000, 2, 100, 1);
    cost_coeffs *c = unit_coeffs("split", 1, 2, 1, 0);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    map_slice s[2] = {{0, 0, 150}, {1, 150, 50}};
    set_layer(m, n, 0, 2, s);
    cost_result r;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r, d) == 0);
    /* a: send x to b (overhead 2; 400 B -> arrives 2 + 400 + 100 = 502);
     *    its slice: 1 + 150*100 ns = 16 -> 18; waits for b's slice;
     * b: receives x at 502; slice 1 + 50*100 ns = 6 -> 508; send +2 -> 510;
     *    200 B -> arrives 510 + 200 + 100 = 810;
     * a: wait 810 - 18 = 792; concat 800 B at 10 ns/B + 1 = 9 -> 819;
     *    fc2 1 + 200*10 ns = 3 -> 822. */
    CLOSE(r.latency_ms, 0.822);
    CLOSE(d[0].wait_s, 792 * US);
    CLOSE(d[0].busy_s, (2 + 16 + 9 + 3) * US);
    CLOSE(d[0].concat_s, 9 * US);
    CLOSE(d[0].idle_s, (822 - 30) * US);
    CLOSE(d[1].wait_s, 502 * US);
    CLOSE(d[1].busy_s, 8 * US);
    CLOSE(d[1].finish_s, 510 * US);
    CLOSE(d[1].idle_s, (822 - 8) * US);
    /* Without the wait the latency would be 18 + 9 + 3 = 30 us. */
    CHECK(r.latency_ms > 0.5);
    /* Memory a: input 400 + receive buffer 200 from the start; slice 600
     * -> 1200; x stays until its send arrives (502 > 18); after the
     * receive (810) x goes -> 800; concat +800 -> 1600 (peak).  Weights:
     * 150 channels of 101 floats + fc2 2010 floats = 68640 B. */
    CLOSE(d[0].peak_act_bytes, 1600);
    CLOSE(d[0].weights_bytes, 68640);
    CLOSE(d[0].mem_mb, (68640 + 1600) / 1e6);
    /* b: receive buffer 400 + slice 200 = 600; weights 50 * 101 * 4. */
    CLOSE(d[1].peak_act_bytes, 600);
    CLOSE(d[1].weights_bytes, 20200);
    CHECK_I64(d[0].bytes_sent, 400);
    CHECK_I64(d[0].bytes_recv, 200);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* Steps that vary from inference to inference (devices.cpu.step_spread):
 * a receive that meets another device's clock ends, on average, at the
 * expected later of the two (Clark 1961), recomputed here from its
 * definition for two independent normals.  fc1 (100 -> 200) split 100/100
 * on a and b over a link of 1 us and 1 TB/s (a byte costs 1e-6 us). */
static double clark_mean(double mx, double sx, double my, double sy)
{
    double th = sqrt(sx * sx + sy * sy), a = (mx - my) / th;
    double Phi = 0.5 * (1 + erf(a / sqrt(2.0))), phi = exp(-a * a / 2) / sqrt(2 * 3.14159265358979323846);
    return mx * Phi + my * (1 - Phi) + th * phi;
}

static void test_spread(void)
{
    net *n = fc_chain("spread", 200, 10);
    platform *pl = plat2(1000, 2, 1, 1e6);
    cost_coeffs *c = unit_coeffs("spread", 1, 2, 1, 0);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    map_slice sl[2] = {{0, 0, 100}, {1, 100, 100}};
    set_layer(m, n, 0, 2, sl);
    cost_result r, r0;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r0, d) == 0);
    /* a: sends x (400 B) at 2, arriving 3.0004; its slice 1 + 100 * 100 ns
     *    = 11 -> 13; receives b's slice, own side 13.0004;
     * b: x at 3.0004; slice 11 -> 14.0004; send 2 -> 16.0004; arrives
     *    17.0008; a: concat 800 B (1 + 8) and fc2 (1 + 2): out 29.0008. */
    CLOSE(r0.latency_ms, 29.0008e-3);
    /* A spread of 0.25: each 11 us slice has a standard deviation of 2.75
     * us; a's receive ends at E[max(N(13.0004, 2.75^2), N(17.0008,
     * 2.75^2))]; nothing else meets another clock. */
    c->dev[PLAT_CPU].step_spread = coeffs_given(0.25, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    double e = clark_mean(13.0004, 2.75, 17.0008, 2.75);
    CHECK(e > 17.0008 + 0.2 && e < 17.0008 + 0.5, "Clark's E[max] %g", e);
    CLOSE(r.latency_ms, (e + 12) * 1e-3);
    CLOSE(d[0].wait_s, (e - 13) * 1e-6);
    /* b's receive of x met a clock with no variance (a computed nothing
     * before sending it): unchanged. */
    CLOSE(d[1].wait_s, 3.0004e-6);
    /* One device: no clock to meet, no change. */
    mapping_set_single(m, n, 0);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    c->dev[PLAT_CPU].step_spread = coeffs_given(0, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r0, d) == 0);
    CHECK(r.latency_ms == r0.latency_ms, "%.17g against %.17g", r.latency_ms, r0.latency_ms);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* Two FC branches fa and fb (100 -> 200, bias) of the input x, a ReLU on
 * each (ra, rb), and their Add (out). */
static net *fan_net(const char *name)
{
    net *n = net_new(name, "x", (net_shape){100, 1, 1});
    net_attr a = net_attr_default(NET_FC);
    a.bias = 1;
    a.out_c = 200;
    const char *x[] = {"x"}, *fa[] = {"fa"}, *fb[] = {"fb"}, *sum[] = {"ra", "rb"};
    net_add(n, "fa", NET_FC, &a, 1, x, err);
    net_add(n, "fb", NET_FC, &a, 1, x, err);
    net_add(n, "ra", NET_RELU, NULL, 1, fa, err);
    net_add(n, "rb", NET_RELU, NULL, 1, fb, err);
    net_add(n, "out", NET_ADD, NULL, 2, sum, err);
    CHECK(net_finalize(n, name, err) == 0);
    return n;
}

/* fa and fb on a, both sent to b: the second send queues behind the first
 * on a's outgoing link, and fa stays in memory until its send arrives. */
static void test_fan(void)
{
    net *n = fan_net("fan");
    platform *pl = plat2(1000, 2, 100, 1);
    cost_coeffs *c = unit_coeffs("fan", 1, 2, 1, 0);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 1);
    put(m, n, "fa", 0);
    put(m, n, "fb", 0);
    cost_result r;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r, d) == 0);
    /* a: input is on a (source).  fa 21 -> send 23: link busy 23..823,
     * arrives 923.  fb 23 + 21 = 44 -> send 46: link free at 823, busy
     * 823..1623, arrives 1723.
     * b: ra at 923 + 1 + 0.2 = 924.2; its receive of fb starts at 924.2
     * and still pulls the 800 bytes (the receiver moves the payload):
     * max(1723, 924.2 + 800) = 1724.2; rb 1725.4; add 1 + 0.2 -> 1726.6. */
    CLOSE(r.latency_ms, 1.7266);
    CLOSE(d[1].wait_s, (923 + (1724.2 - 924.2)) * US);
    /* a: input 400; fa +800 = 1200; fa freed at its send but in flight
     * until 923; fb +800 -> 2000 (peak). */
    CLOSE(d[0].peak_act_bytes, 2000);
    /* b: both receive buffers (1600) from the start; +800 for each of ra,
     * rb, out, each step freeing one input: peak 2400. */
    CLOSE(d[1].peak_act_bytes, 2400);
    /* A per-device factor (per_device.b.compute_scale 2): b's steps take
     * twice as long: ra 923 + 2.4 = 925.4; the receive of fb max(1723,
     * 925.4 + 800) = 1725.4; rb 1727.8; add 1730.2.  a's are unchanged (fb
     * still arrives at 1723), and a device the platform lacks is ignored. */
    coeffs_device_factor(c, "b")->compute_scale = coeffs_given(2, COEFFS_MEASURED);
    coeffs_device_factor(c, "nosuch")->compute_scale = coeffs_given(100, COEFFS_MEASURED);
    CHECK(coeffs_device_factor(c, "b") == &c->per[0] && c->nper == 2);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 1.7302);
    CLOSE(d[0].compute_s, 42 * US);
    CLOSE(d[1].compute_s, 3 * 2.4 * US);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* One outgoing channel per link class: a's long same_board transfer (fa to
 * g) does not delay its network send (fb to b) issued after it. */
static void test_channels(void)
{
    net *n = fan_net("fan2");
    /* same_board: 10 us + 1 MB/s (800 B occupy it 800 us); network:
     * 500 us + 100 MB/s (800 B occupy it 8 us). */
    const char *text =
        "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"two\",\"devices\":["
        "{\"name\":\"a\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
        "\"memory_mb\":1000,\"idle_w\":2,\"busy_w\":10},"
        "{\"name\":\"g\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
        "\"memory_mb\":1000,\"idle_w\":2,\"busy_w\":10},"
        "{\"name\":\"b\",\"board\":\"B\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
        "\"memory_mb\":1000,\"idle_w\":2,\"busy_w\":10}],"
        "\"links\":{\"same_board\":{\"latency_us\":10,\"bandwidth_mbs\":1},"
        "\"network\":{\"latency_us\":500,\"bandwidth_mbs\":100}}}";
    platform *pl = platform_from_json(text, "three.json", err);
    CHECK(pl != NULL);
    cost_coeffs *c = unit_coeffs("fan2", 1, 2, 1, 0);
    mapping *m = mapping_new(n->n, 3);
    mapping_set_single(m, n, 1);
    put(m, n, "fa", 0);
    put(m, n, "fb", 0);
    put(m, n, "rb", 2);
    cost_result r;
    cost_device d[3];
    CHECK(run(n, pl, c, m, &r, d) == 0);
    /* a: fa 21, send 23: same_board busy 23..823, arrives at g 833.
     *    fb 44, send 46: network channel free, busy 46..54, arrives 554.
     * b: rb 554 + 1.2 = 555.2, send 557.2, busy ..565.2, arrives 1065.2.
     * g: ra 833 + 1.2 = 834.2; out 1065.2 + 1.2 = 1066.4.
     * (One shared channel would delay fb to 823..831: latency 1843.4.) */
    CLOSE(r.latency_ms, 1.0664);
    CLOSE(d[2].wait_s, 554 * US);
    CLOSE(d[1].wait_s, (833 + (1065.2 - 834.2)) * US);
    /* A per-pair coefficient (links.pairs) for b-a only: fb now arrives at
     * 54 + 200 = 254; rb 255.2, its send to g (the class's 500 us) busy
     * 257.2..265.2, arrives 765.2, before ra ends at 834.2; g's receive
     * still pulls the 800 bytes (8 us at 100 MB/s, test_fan):
     * max(765.2, 842.2) = 842.2, out 843.4.
     * A pair of devices this platform lacks changes nothing. */
    coeffs_link *P = coeffs_pair_link(c, "b", "a");
    CHECK(P != NULL);
    P->latency_us = coeffs_given(200, COEFFS_MEASURED);
    P = coeffs_pair_link(c, "a", "nosuch");
    CHECK(P != NULL);
    P->latency_us = coeffs_given(1, COEFFS_MEASURED);
    P->bandwidth_mbs = coeffs_given(1e-3, COEFFS_MEASURED);
    CHECK(coeffs_pair_link(c, "a", "b") == &c->pairs[0].l && c->npairs == 2);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.8434);
    CLOSE(d[2].wait_s, 254 * US);
    /* A late receiver's pickup (links.<class>.pickup_us, then a pair's):
     * network class 50 us: g reaches its receive of rb at 834.2 after it
     * arrived, so pays 50 + 8: max(765.2, 892.2) = 892.2, out 893.4; b
     * waits for fb (arrives 254) from 0, where 0 + 50 + 8 < 254 changes
     * nothing.  Pair b-a 300 us: b's receive ends at max(254, 308) = 308,
     * rb 309.2, its send busy 311.2..319.2, arrives 819.2, still before g
     * reaches it: out 893.4 again. */
    c->link[LINK_NETWORK].pickup_us = coeffs_given(50, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.8934);
    CLOSE(d[2].wait_s, 254 * US);
    coeffs_pair_link(c, "b", "a")->pickup_us = coeffs_given(300, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.8934);
    CLOSE(d[2].wait_s, 308 * US);
    /* A pull rate (links.<class>.pull_bandwidth_mbs): network 10 MB/s, so
     * a receiver moves 800 B in 80 us from the later of its RECV plus the
     * pickup and the header's arrival (send start + latency).  b: fb's
     * header at 46 + 200 = 246, b's pickup ends at 300: 300 + 80 = 380 (not
     * 308); rb 381.2, send 381.2..383.2, moving 383.2..391.2, arrives 891.2,
     * header 883.2.  g reaches it at 834.2, pickup to 884.2: 884.2 + 80 =
     * 964.2 against its arrival 891.2; out 965.4.  The same_board class has
     * no pull rate: fa pulled at the link's (arrives 833, as before). */
    c->link[LINK_NETWORK].pull_bandwidth_mbs = coeffs_given(10, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.9654);
    CLOSE(d[2].wait_s, 380 * US);
    /* A receiver there before the header (pair pickup 0): b pulls from the
     * header's 246 to 326, not from fb's arrival at 254 (the link's own
     * rate); rb 327.2, send ..329.2, header 829.2, arrives 837.2; g pulls
     * from 884.2 as before: out 965.4. */
    coeffs_pair_link(c, "b", "a")->pickup_us = coeffs_given(0, COEFFS_MEASURED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 0.9654);
    CLOSE(d[2].wait_s, 326 * US);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* Frees: x -> r1 -> r2 -> r3 -> r4 (1000 floats each) on one device peaks
 * at two tensors (8000 B), not five; with out = Add(r3, r1), r1 stays
 * alive and the peak is three tensors. */
static void test_frees(void)
{
    for (int keep = 0; keep < 2; keep++) {
        net *n = net_new("relus", "x", (net_shape){1000, 1, 1});
        const char *x[] = {"x"}, *r1[] = {"r1"}, *r2[] = {"r2"}, *r3[] = {"r3"},
                   *add[] = {"r3", "r1"};
        net_add(n, "r1", NET_RELU, NULL, 1, x, err);
        net_add(n, "r2", NET_RELU, NULL, 1, r1, err);
        net_add(n, "r3", NET_RELU, NULL, 1, r2, err);
        if (keep)
            net_add(n, "out", NET_ADD, NULL, 2, add, err);
        else
            net_add(n, "r4", NET_RELU, NULL, 1, r3, err);
        CHECK(net_finalize(n, "relus", err) == 0);
        platform *pl = plat2(1000, 2, 100, 1);
        cost_coeffs *c = unit_coeffs("relus", 0, 0, 1, 0);
        mapping *m = mapping_new(n->n, 2);
        mapping_set_single(m, n, 0);
        cost_result r;
        cost_device d[2];
        CHECK(run(n, pl, c, m, &r, d) == 0);
        CLOSE(d[0].peak_act_bytes, keep ? 12000 : 8000);
        CLOSE(r.latency_ms, 4 * 1000 * 1e-6); /* 4 layers x 1000 ops x 1 ns */
        mapping_free(m);
        coeffs_free(c);
        platform_free(pl);
        net_free(n);
    }
}

/* Zoo `branchy`: "left" (1x1 conv) on a and "right" (3x3 conv) on b run in
 * parallel.  No overheads; a fast link: 1 us + 10000 MB/s (0.1 ns/byte). */
static void test_branchy(void)
{
    net *n = net_zoo("branchy", err);
    CHECK(n != NULL);
    if (!n) return;
    /* The layer counts the hand computation below relies on (net.c's). */
    CHECK_I64(n->layers[net_find(n, "stem")].macs, 8 * 256 * 27);
    CHECK_I64(n->layers[net_find(n, "left")].macs, 8 * 256 * 8);
    CHECK_I64(n->layers[net_find(n, "right")].macs, 8 * 256 * 72);
    CHECK_I64(n->layers[net_find(n, "head")].macs, 16 * 64 * 144);
    CHECK_I64(n->layers[net_find(n, "fc")].macs, 160);
    platform *pl = plat2(1000, 2, 1, 10000);
    cost_coeffs *c = unit_coeffs("branchy", 0, 0, 1, 0);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    cost_result r1, r2;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r1, d) == 0);
    /* One device: the sum of every layer, in ns: stem 55296, stem_relu
     * 2048, left 16384, right 147456, add 2048, side_pool 2048, cat 4096,
     * head 147456, head_relu 1024, gap 1024 (16 x 8 x 8 read), flatten 16,
     * fc 160, softmax 10. */
    double single_us =
        (55296 + 2048 + 16384 + 147456 + 2048 + 2048 + 4096 + 147456 + 1024 + 1024 + 16 + 160 + 10) /
        1e3;
    CLOSE(r1.latency_ms, single_us / 1e3);
    put(m, n, "right", 1);
    CHECK(run(n, pl, c, m, &r2, d) == 0);
    /* a: stem + stem_relu -> 57.344 us; send stem_relu (8192 B: 0.8192 us
     * + 1 us) arrives at b at 59.1632; a: left -> 73.728.
     * b: right 147.456 -> 206.6192; its 8192 B arrive at a at 208.4384.
     * a: add .. softmax = 2.048 + 2.048 + 4.096 + 147.456 + 1.024 + 1.024
     *    + 0.016 + 0.160 + 0.010 = 157.882 -> 366.3204 us. */
    CLOSE(r2.latency_ms, 366.3204e-3);
    CLOSE(d[0].wait_s, (208.4384 - 73.728) * US);
    CHECK(r2.latency_ms < r1.latency_ms); /* the branches overlapped */
    CLOSE(d[1].busy_s, 147.456 * US);
    CHECK_I64(d[0].bytes_sent, 8192);
    CHECK_I64(d[1].bytes_sent, 8192);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

/* Built-in defaults (docs/coefficients-format.md): cpu Conv 2, FC 0.5,
 * elementwise 0.25 per cycle per core; 10 us per step; powers declared by
 * the platform. */
static void test_defaults(void)
{
    net *n = fc_chain("chain", 200, 50);
    platform *pl = plat2(1000, 2, 100, 1);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    cost_result r;
    cost_device d[2];
    CHECK(run(n, pl, NULL, m, &r, d) == 0);
    CHECK_STR(warn, "");
    /* fc1: 10 + 20000 / (1e9 * 0.5) s = 10 + 40 us; fc2: 10 + 20 us. */
    CLOSE(r.latency_ms, 0.080);
    CLOSE(r.energy_j, 80e-6 * 10);
    cost_coeffs *def = coeffs_default(pl);
    CHECK(def->dev[PLAT_CPU].present && !def->dev[PLAT_GPU].present);
    CHECK(def->dev[PLAT_CPU].cls[NET_CONV].per_cycle.value == 2.0);
    CHECK(def->dev[PLAT_CPU].cls[NET_FC].per_cycle.source == COEFFS_DEFAULT);
    CHECK(!coeffs_isset(&def->dev[PLAT_CPU].busy_w)); /* the platform's */
    CHECK(coeffs_check(def, err) == 0);
    coeffs_free(def);
    mapping_free(m);
    platform_free(pl);
    net_free(n);
}

/* Lookup order layer -> network "*" -> class -> built-in default, and the
 * warning naming what fell back. */
static void test_fallbacks(void)
{
    net *n = fc_chain("chain", 200, 50);
    platform *pl = plat2(1000, 2, 100, 1);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    cost_result r;
    cost_device d[2];
    cost_coeffs *c = unit_coeffs("chain", 0, 0, 1, 0);
    /* fc1 at 4 MACs/cycle, every layer of chain at 2 (so fc2 at 2). */
    coeffs_layer_rates(c, PLAT_CPU, "chain", "fc1")->per_cycle = coeffs_fitted(4, 0.99, 0.1, 5);
    coeffs_layer_rates(c, PLAT_CPU, "chain", "*")->per_cycle = coeffs_given(2, COEFFS_DERIVED);
    CHECK(run(n, pl, c, m, &r, d) == 0);
    CHECK_STR(warn, "");
    CLOSE(r.latency_ms, (20000 / 4.0 + 10000 / 2.0) * 1e-6);
    /* A network the file does not know: per-kind rates (1), and a warning. */
    net *other = fc_chain("other", 200, 50);
    CHECK(run(other, pl, c, m, &r, d) == 0);
    CLOSE(r.latency_ms, 30000 * 1e-6);
    CHECK_HAS(warn, "calibrated on network chain, not other: its 2 layers use per-kind");
    /* Another platform; no FC rate: built-in default (0.5 per cycle). */
    cost_coeffs *c2 = unit_coeffs("chain", 0, 0, 1, 0);
    free(c2->platforms[0]);
    c2->platforms[0] = strdup("elsewhere");
    c2->dev[PLAT_CPU].cls[NET_FC].per_cycle = coeffs_given(0, COEFFS_UNSET);
    CHECK(run(n, pl, c2, m, &r, d) == 0);
    CLOSE(r.latency_ms, 30000 / 0.5 * 1e-6);
    CHECK_HAS(warn, "fitted for platform elsewhere, not two");
    CHECK_HAS(warn, "2 layers (FC) have no cpu rate: built-in defaults");
    CHECK(strchr(warn, '\n') == NULL);
    /* The algorithms' classes fall back to Conv, not to the defaults.
     * branchy's 3x3 convs have 8 channels: too few for the runtime's
     * Winograd (below); its "left" is 1x1. */
    net *br = net_zoo("branchy", err);
    CHECK(cost_class(br, net_find(br, "right"), NULL) == NET_CONV);
    CHECK(cost_class(br, net_find(br, "left"), NULL) == COST_CLASS_CONV_POINTWISE);
    CHECK(cost_class(br, net_find(br, "head"), NULL) == NET_CONV); /* stride 2 */
    cost_coeffs *c3 = unit_coeffs("branchy", 0, 0, 1, 0);
    c3->dev[PLAT_CPU].cls[COST_CLASS_CONV_WINOGRAD].per_cycle = coeffs_given(0, COEFFS_UNSET);
    c3->dev[PLAT_CPU].cls[COST_CLASS_CONV_POINTWISE].per_cycle = coeffs_given(0, COEFFS_UNSET);
    c3->dev[PLAT_CPU].cls[COST_CLASS_CONV_DIRECT].per_cycle = coeffs_given(0, COEFFS_UNSET);
    c3->dev[PLAT_CPU].cls[NET_CONV].per_cycle = coeffs_given(2, COEFFS_ASSUMPTION);
    mapping *mb = mapping_new(br->n, 2);
    mapping_set_single(mb, br, 0);
    CHECK(run(br, pl, c3, mb, &r, d) == 0);
    CHECK_STR(warn, "");
    /* Conv layers (stem, left, right, head) at 2/cycle, the rest at 1. */
    CLOSE(r.latency_ms, ((55296 + 16384 + 147456 + 147456) / 2.0 + 2048 + 2048 + 2048 + 4096 +
                         1024 + 1024 + 16 + 160 + 10) *
                            1e-6);
    /* GroupNorm, a kind newer than most files, falls back to InstanceNorm
     * (same passes per element): 4 x 5 x 5 = 100 ops at 4 per cycle. */
    net *gn = net_new("gn", "x", (net_shape){4, 5, 5});
    net_attr ga = net_attr_default(NET_GROUPNORM);
    ga.groups = 2;
    const char *gx[1] = {"x"};
    net_add(gn, "g", NET_GROUPNORM, &ga, 1, gx, err);
    CHECK(!net_finalize(gn, "gn", err), "%s", err);
    CHECK(cost_class_base(NET_GROUPNORM) == NET_INSTNORM);
    cost_coeffs *c4 = unit_coeffs("gn", 0, 0, 1, 0);
    c4->dev[PLAT_CPU].cls[NET_GROUPNORM].per_cycle = coeffs_given(0, COEFFS_UNSET);
    c4->dev[PLAT_CPU].cls[NET_INSTNORM].per_cycle = coeffs_given(4, COEFFS_ASSUMPTION);
    mapping *mg = mapping_new(gn->n, 2);
    mapping_set_single(mg, gn, 0);
    CHECK(run(gn, pl, c4, mg, &r, d) == 0);
    CHECK_STR(warn, "");
    CLOSE(r.latency_ms, 100 / 4.0 * 1e-6);
    mapping_free(mg);
    coeffs_free(c4);
    net_free(gn);
    /* A gpu device on the platform and no gpu section. */
    const char *gtext =
        "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"two\",\"devices\":["
        "{\"name\":\"a\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
        "\"memory_mb\":1000,\"idle_w\":1,\"busy_w\":10},"
        "{\"name\":\"g\",\"board\":\"A\",\"kind\":\"gpu\",\"freq_mhz\":1000,\"cores\":100,"
        "\"memory_mb\":1000,\"idle_w\":1,\"busy_w\":10}],"
        "\"links\":{\"same_board\":{\"latency_us\":10,\"bandwidth_mbs\":100},"
        "\"network\":{\"latency_us\":100,\"bandwidth_mbs\":1}}}";
    platform *pg = platform_from_json(gtext, "gpu.json", err);
    mapping_set_single(m, n, 1);
    CHECK(run(n, pg, c, m, &r, d) == 0);
    CHECK_HAS(warn, "coefficients have no gpu section: built-in defaults for gpu devices");
    /* gpu defaults: FC 0.01 per core per cycle x 100 cores = 1 MAC/ns;
     * 20 us per step.  The input (400 B) crosses same_board: 4 us + 10 us
     * (a's send overhead is 0 here), then fc1 20 + 20 us, fc2 20 + 10 us. */
    CLOSE(r.latency_ms, (14 + 20 + 20 + 20 + 10) * 1e-3);
    platform_free(pg);
    mapping_free(mb);
    coeffs_free(c3);
    net_free(br);
    coeffs_free(c2);
    net_free(other);
    coeffs_free(c);
    mapping_free(m);
    platform_free(pl);
    net_free(n);
}

/* Thesis Table 2 (seed 003): single-device CPU runs, latency / peak
 * memory / energy; examples/coeffs/jetson-nx-thesis.json must reproduce
 * them within 10% on both Jetson presets. */
static void test_table2(void)
{
    static const struct {
        const char *net;
        double ms, mb, j;
    } rows[] = {{"alexnet-bvlc", 28.3, 152.746, 0.352},
                {"vgg16", 122.46, 446.852, 1.959},
                {"densenet121", 138.68, 95.969, 1.026}};
    const char *plats[] = {"jetson-nx-8-cpu", "jetson-nx-8-cpugpu"};
    cost_coeffs *c = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    CHECK(c != NULL);
    if (!c) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    for (int k = 0; k < 2; k++) {
        platform *pl = platform_open(plats[k], err);
        CHECK(pl != NULL);
        if (!pl) continue;
        for (int i = 0; i < 3; i++) {
            net *n = net_zoo(rows[i].net, err);
            mapping *m = mapping_new(n->n, pl->ndev);
            mapping_set_single(m, n, platform_find(pl, "nx0-cpu"));
            cost_result r;
            cost_device *d = calloc((size_t)pl->ndev, sizeof *d);
            CHECK(run(n, pl, c, m, &r, d) == 0);
            CHECK_STR(warn, "");
            CHECK_REL(r.latency_ms, rows[i].ms, 0.10);
            CHECK_REL(r.mem_mb, rows[i].mb, 0.10);
            CHECK_REL(r.energy_j, rows[i].j, 0.10);
            printf("%-13s on %-19s %8.3f ms (%8.3f) %8.3f MB (%8.3f) %6.4f J (%6.4f)\n",
                   rows[i].net, plats[k], r.latency_ms, rows[i].ms, r.mem_mb, rows[i].mb,
                   r.energy_j, rows[i].j);
            free(d);
            mapping_free(m);
            net_free(n);
        }
        platform_free(pl);
    }
    /* Another network: the per-kind fallbacks, with a warning. */
    platform *pl = platform_open("jetson-nx-8-cpu", err);
    net *n = net_zoo("resnet50", err);
    cost_model *cm = cost_new(n, pl, c, warn, err);
    CHECK(cm != NULL);
    CHECK_HAS(warn, "not resnet50: its 175 layers use per-kind coefficients");
    cost_free(cm);
    net_free(n);
    platform_free(pl);
    coeffs_free(c);
}

/* A plan that does not belong to the model is refused, not misread. */
static void test_mismatch(void)
{
    net *n = fc_chain("chain", 200, 50), *n3 = net_zoo("toy6", err);
    platform *pl = plat2(1000, 2, 100, 1);
    cost_model *cm = cost_new(n3, pl, NULL, warn, err);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    plan *p = plan_new();
    CHECK(plan_build(p, n, m, 0, err) == 0);
    cost_result r;
    CHECK(cost_eval(cm, p, &r, NULL) == -1);
    CHECK_HAS(cost_error(cm), "plan for 2 layers");
    plan_free(p);
    mapping_free(m);
    cost_free(cm);
    platform_free(pl);
    net_free(n);
    net_free(n3);
}

/* Random hybrid mappings (chromosome decoder, p = 3) of several networks
 * on the 16 Jetson devices: identities that hold for every plan.  A device
 * runs back to back, so finish = busy + wait; every step is an ancestor of
 * the output, so finish <= latency; a result does not depend on what the
 * model evaluated before (scratch reuse). */
static uint64_t rng = 99991;
static int rnd(int lo, int hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (int)(rng % (uint64_t)(hi - lo + 1));
}

static void test_random(void)
{
    const char *nets[] = {"branchy", "alexnet-bvlc", "resnet50", "mobilenetv2"};
    platform *pl = platform_open("jetson-nx-8-cpugpu", err);
    cost_coeffs *c = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    CHECK(pl && c);
    if (!pl || !c) return;
    int nd = pl->ndev, bad = 0;
    for (int k = 0; k < 4; k++) {
        net *n = net_zoo(nets[k], err);
        chrom *ch = chrom_new(n, nd, CHROM_HYBRID, 3, NET_SPLIT_DEFAULT, err);
        cost_model *m = cost_new(n, pl, c, warn, err);
        mapping *mp = mapping_new(n->n, nd), *m0 = mapping_new(n->n, nd);
        plan *p = plan_new(), *p0 = plan_new();
        int len = chrom_length(ch), *lo = malloc(sizeof(int) * len),
            *hi = malloc(sizeof(int) * len), *g = malloc(sizeof(int) * len);
        chrom_bounds(ch, lo, hi);
        for (int i = 0; i < len; i++) g[i] = rnd(lo[i], hi[i]);
        chrom_decode(ch, g, len, m0, err);
        plan_build(p0, n, m0, pl->source, err);
        cost_result r0, ra, rb;
        cost_device d0[64], da[64];
        CHECK(cost_eval(m, p0, &r0, d0) == 0);
        for (int it = 0; it < 300; it++) {
            for (int i = 0; i < len; i++) g[i] = rnd(lo[i], hi[i]);
            if (chrom_decode(ch, g, len, mp, err) || plan_build(p, n, mp, pl->source, err) ||
                cost_eval(m, p, &ra, da)) {
                bad++;
                continue;
            }
            double emax = 0, mmax = 0, busy_e = 0;
            for (int d = 0; d < nd; d++) {
                const cost_device *v = &da[d];
                if (!v->used) continue;
                bad += fabs(v->finish_s - (v->busy_s + v->wait_s)) > 1e-12 + 1e-9 * v->finish_s;
                bad += v->finish_s > ra.latency_ms * 1e-3 * (1 + 1e-12);
                bad += fabs(v->idle_s - (ra.latency_ms * 1e-3 - v->busy_s)) > 1e-12;
                bad += v->mem_mb <= 0 || v->energy_j <= 0 || v->peak_act_bytes < v->bytes_recv;
                emax = v->energy_j > emax ? v->energy_j : emax;
                mmax = v->mem_mb > mmax ? v->mem_mb : mmax;
                busy_e += v->busy_s;
            }
            bad += emax != ra.energy_j || mmax != ra.mem_mb || ra.violation_bytes != 0;
            bad += busy_e <= 0;
            /* Re-evaluating an earlier plan gives the same numbers. */
            if (it % 50 == 0) {
                CHECK(cost_eval(m, p0, &rb, NULL) == 0);
                bad += memcmp(&rb, &r0, sizeof rb) != 0;
            }
        }
        free(lo);
        free(hi);
        free(g);
        plan_free(p);
        plan_free(p0);
        mapping_free(mp);
        mapping_free(m0);
        cost_free(m);
        chrom_free(ch);
        net_free(n);
    }
    CHECK(bad == 0);
    coeffs_free(c);
    platform_free(pl);
}

/* One conv of cin channels on a side x side map, k x k, stride st, groups g. */
static net *one_conv(int cin, int cout, int side, int k, int st, int g)
{
    net *n = net_new("one", "x", (net_shape){cin, side, side});
    net_attr a = net_attr_conv(cout, k, st, k / 2, g, 1);
    const char *x[] = {"x"};
    net_add(n, "c", NET_CONV, &a, 1, x, err);
    if (net_finalize(n, "one", err)) fprintf(stderr, "net: %s\n", err);
    return n;
}

/* The one rule (model/convalgo.h) on hand-worked shapes: its thresholds
 * are those docs/runtime-kernels.md states, and the model's class and
 * workspace follow it. */
static void test_convalgo(void)
{
    static const struct {
        int cin, cout, side, k, st, g;
        convalgo want;
    } cases[] = {
        {16, 16, 13, 3, 1, 1, CONVALGO_WINO2},      /* 169 pixels: the smallest F(2x2) map */
        {16, 16, 12, 3, 1, 1, CONVALGO_IM2COL},     /* 144 pixels */
        {15, 64, 56, 3, 1, 1, CONVALGO_IM2COL},     /* < 16 input channels */
        {64, 15, 56, 3, 1, 1, CONVALGO_IM2COL},     /* < 16 output channels */
        {8, 8, 64, 3, 1, 1, CONVALGO_IM2COL},       /* branchy-like: cin_g 8 */
        {16, 16, 50, 3, 1, 1, CONVALGO_WINO4},      /* 2500 pixels */
        {16, 16, 49, 3, 1, 1, CONVALGO_WINO2},
        {256, 128, 20, 3, 1, 1, CONVALGO_WINO4},    /* 400 pixels, 32768 pairs */
        {255, 128, 20, 3, 1, 1, CONVALGO_WINO2},    /* 32640 pairs */
        {256, 128, 19, 3, 1, 1, CONVALGO_WINO2},    /* 361 pixels */
        {64, 64, 28, 3, 2, 1, CONVALGO_IM2COL},     /* stride 2 */
        {32, 32, 28, 3, 1, 32, CONVALGO_DIRECT},    /* depthwise */
        {32, 64, 28, 3, 1, 32, CONVALGO_DIRECT},    /* depth multiplier 2 */
        {64, 64, 28, 3, 1, 2, CONVALGO_WINO2},      /* 32 channels per group */
        {64, 256, 56, 1, 1, 1, CONVALGO_POINTWISE},
        {64, 256, 56, 1, 2, 1, CONVALGO_IM2COL},    /* 1x1 stride 2 */
        {3, 64, 224, 7, 2, 1, CONVALGO_IM2COL},
        {960, 240, 1, 1, 1, 1, CONVALGO_GEMV},      /* squeeze-excitation: 1x1 map */
        {64, 32, 1, 3, 1, 1, CONVALGO_GEMV},        /* one pixel, column gathered */
        {32, 32, 1, 3, 1, 32, CONVALGO_DIRECT},     /* depthwise stays direct */
        {64, 32, 1, 1, 2, 1, CONVALGO_GEMV},        /* 1x1 stride 2 on 1x1: the input itself */
        {64, 32, 2, 1, 2, 1, CONVALGO_GEMV},        /* 1x1 stride 2 on 2x2: column gathered */
    };
    int n_wino = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        net *n = one_conv(cases[i].cin, cases[i].cout, cases[i].side, cases[i].k, cases[i].st,
                          cases[i].g);
        int alg = convalgo_of(n, 0, NULL);
        CHECK(alg == (int)cases[i].want, "case %zu (%dx%d ch, %dx%d map, k%d s%d g%d): %s, expected "
              "%s", i, cases[i].cin, cases[i].cout, cases[i].side, cases[i].side, cases[i].k,
              cases[i].st, cases[i].g, convalgo_name((convalgo)alg), convalgo_name(cases[i].want));
        int wino = alg == CONVALGO_WINO2 || alg == CONVALGO_WINO4;
        n_wino += wino;
        static const int cls_of[CONVALGO_COUNT] = {
            [CONVALGO_IM2COL] = NET_CONV, [CONVALGO_POINTWISE] = COST_CLASS_CONV_POINTWISE,
            [CONVALGO_DIRECT] = COST_CLASS_CONV_DIRECT, [CONVALGO_WINO2] = COST_CLASS_CONV_WINOGRAD,
            [CONVALGO_WINO4] = COST_CLASS_CONV_WINOGRAD, [CONVALGO_GEMV] = NET_FC};
        CHECK(cost_class(n, 0, NULL) == cls_of[alg], "case %zu: class %s", i, cost_class_name(cost_class(n, 0, NULL)));
        /* workspace: none for direct, pointwise and a gemv straight on the
         * input; a slice's never above the layer's; a gathered gemv's is
         * its column; im2col's is one band of the column matrix */
        size_t whole = convalgo_workspace_of(n, 0, cases[i].cout, NULL);
        int gemv_direct = alg == CONVALGO_GEMV && cases[i].k == 1 && cases[i].side == 1;
        CHECK((whole == 0) == (alg == CONVALGO_DIRECT || alg == CONVALGO_POINTWISE || gemv_direct),
              "case %zu: workspace %zu floats", i, whole);
        if (alg == CONVALGO_GEMV && !gemv_direct)
            CHECK(whole == (size_t)cases[i].cin / cases[i].g * cases[i].k * cases[i].k);
        CHECK(convalgo_workspace_of(n, 0, 1, NULL) <= whole);
        if (alg == CONVALGO_IM2COL) {
            size_t K = (size_t)cases[i].cin / cases[i].g * cases[i].k * cases[i].k;
            int ow = n->layers[0].out.w;
            /* whole output rows, about 1 Mi floats (one row when a row is more) */
            CHECK(whole % (K * ow) == 0 && (whole <= (size_t)1 << 20 || whole == K * ow),
                  "im2col workspace %zu floats, K %zu, %d columns", whole, K, ow);
        }
        /* and the model counts it in the device's memory */
        platform *pl = platform_open("local-2", err);
        cost_model *cm = cost_new(n, pl, NULL, NULL, err);
        mapping *m = mapping_new(n->n, 2);
        mapping_set_single(m, n, 0);
        plan *p = plan_new();
        cost_result r;
        cost_device d[2];
        CHECK(plan_build(p, n, m, 0, err) == 0 && cost_eval(cm, p, &r, d) == 0);
        CHECK(d[0].workspace_bytes == 4.0 * (double)whole, "workspace %g B, the rule says %zu floats",
              d[0].workspace_bytes, whole);
        plan_free(p);
        mapping_free(m);
        cost_free(cm);
        platform_free(pl);
        net_free(n);
    }
    printf("ok: one convolution rule: %zu shapes, %d Winograd, classes and workspace follow it\n",
           sizeof cases / sizeof cases[0], n_wino);
}

/* Devices that share a board's memory (docs/cost-model.md): the split of
 * test_split_wait on two devices of one board, fc1's corun factor 1.5.
 * Link same_board: 10 us + 100 MB/s (10 ns/B), no pickup.
 * a: send x (400 B): overhead 2 -> 2, arrives 2 + 4 + 10 = 16; fc1
 *    [0,150): 1 + 15 = 16 us, [2, 18).
 * b: receives x at 16 (its pull 0 + 4 ends earlier); fc1 [150,200):
 *    1 + 5 = 6 us, [16, 22).  Overlap 2 us: a's factor 1 + 2 x 0.5 / 16
 *    = 1.0625 (17 us, to 19), b's 1 + 2 x 0.5 / 6 (7 us, to 23).
 * b: send 200 B: +2 -> 25, arrives 25 + 2 + 10 = 37; a: waits to 37,
 *    concat 800 B: 1 + 8 = 9 -> 46; fc2: 1 + 2 = 3 -> 49 us.
 * Without the factor: 48 us.  On two boards, or on one device: unchanged. */
static void test_corun(void)
{
    net *n = fc_chain("split", 200, 10);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"two\",\"devices\":["
             "{\"name\":\"a\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
             "\"memory_mb\":1000,\"idle_w\":2,\"busy_w\":10},"
             "{\"name\":\"b\",\"board\":\"A\",\"kind\":\"cpu\",\"freq_mhz\":1000,\"cores\":1,"
             "\"memory_mb\":1000,\"idle_w\":2,\"busy_w\":10}],"
             "\"links\":{\"same_board\":{\"latency_us\":10,\"bandwidth_mbs\":100},"
             "\"network\":{\"latency_us\":100,\"bandwidth_mbs\":1}}}");
    platform *one = platform_from_json(text, "one-board.json", err), *two = plat2(1000, 2, 100, 1);
    cost_coeffs *c = unit_coeffs("split", 1, 2, 1, 0), *c0 = unit_coeffs("split", 1, 2, 1, 0);
    coeffs_rates *lr = coeffs_layer_rates(c, PLAT_CPU, "split", "fc1");
    CHECK(one && two && c && c0 && lr);
    if (!one || !two || !lr) return;
    lr->corun = coeffs_given(1.5, COEFFS_MEASURED);
    CHECK(coeffs_check(c, err) == 0, "%s", err);
    mapping *m = mapping_new(n->n, 2);
    mapping_set_single(m, n, 0);
    map_slice s[2] = {{0, 0, 150}, {1, 150, 50}};
    set_layer(m, n, 0, 2, s);
    cost_result r, r0;
    cost_device d[2], d0[2];
    CHECK(run(n, one, c, m, &r, d) == 0 && run(n, one, c0, m, &r0, d0) == 0);
    CLOSE(r.latency_ms, 0.049);
    CLOSE(r0.latency_ms, 0.048);
    CLOSE(d[0].compute_s, (17 + 3) * US);
    CLOSE(d[1].compute_s, 7 * US);
    CLOSE(d0[1].compute_s, 6 * US);
    /* Two boards: the factor changes nothing. */
    CHECK(run(n, two, c, m, &r, d) == 0 && run(n, two, c0, m, &r0, d0) == 0);
    CHECK(!memcmp(&r, &r0, sizeof r) && !memcmp(d, d0, sizeof d), "two boards: corun changed the result");
    /* One device: nothing runs beside it. */
    mapping_set_single(m, n, 1);
    CHECK(run(n, one, c, m, &r, d) == 0 && run(n, one, c0, m, &r0, d0) == 0);
    CHECK(!memcmp(&r, &r0, sizeof r) && !memcmp(d, d0, sizeof d), "one device: corun changed the result");
    mapping_free(m);
    coeffs_free(c);
    coeffs_free(c0);
    platform_free(one);
    platform_free(two);
    net_free(n);
}

/* The rule again, on random hybrid mappings of real networks on local-4
 * (four devices, one board) with random corun factors: every compute
 * step's duration is its duration without factors times 1 + the sum over
 * the other devices' compute steps of overlap / duration x min(k, k'),
 * the overlaps taken from the schedule without factors (computed here
 * pair by pair, independently of the model's sweep). */
static void test_corun_random(void)
{
    const char *nets[] = {"alexnet-bvlc", "resnet50"};
    platform *pl = platform_open("local-4", err);
    CHECK(pl != NULL, "%s", err);
    if (!pl) return;
    int nd = pl->ndev, bad = 0, checked = 0;
    for (int k = 0; k < 2; k++) {
        net *n = net_zoo(nets[k], err);
        cost_coeffs *c = coeffs_default(pl), *c0 = coeffs_default(pl);
        coeffs_set_info(c, "test", "2026-11-27", NULL);
        coeffs_add_network(c, n->name);
        double *kf = calloc((size_t)n->n, sizeof *kf);
        for (int i = 0; i < n->n; i++)
            if (rnd(0, 2)) {
                kf[i] = rnd(1, 100) / 100.0;
                coeffs_layer_rates(c, PLAT_CPU, n->name, n->layers[i].name)->corun =
                    coeffs_given(1 + kf[i], COEFFS_MEASURED);
            }
        chrom *ch = chrom_new(n, nd, CHROM_HYBRID, 3, NET_SPLIT_DEFAULT, err);
        cost_model *m = cost_new(n, pl, c, NULL, err), *m0 = cost_new(n, pl, c0, NULL, err);
        mapping *mp = mapping_new(n->n, nd);
        plan *p = plan_new();
        int len = chrom_length(ch), *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len),
            *g = malloc(sizeof(int) * len);
        chrom_bounds(ch, lo, hi);
        CHECK(m && m0, "%s", err);
        for (int it = 0; m && m0 && it < 40; it++) {
            for (int i = 0; i < len; i++) g[i] = rnd(lo[i], hi[i]);
            if (chrom_decode(ch, g, len, mp, err) || plan_build(p, n, mp, pl->source, err)) {
                bad++;
                continue;
            }
            double *a0 = malloc(sizeof(double) * p->nsteps), *a1 = malloc(sizeof(double) * p->nsteps);
            double *b0 = malloc(sizeof(double) * p->nsteps), *b1 = malloc(sizeof(double) * p->nsteps);
            cost_result ra, rb;
            if (cost_schedule(m0, p, &ra, NULL, a0, a1) || cost_schedule(m, p, &rb, NULL, b0, b1)) {
                bad++;
            } else {
                for (int d = 0; d < nd; d++)
                    for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
                        const plan_step *st = &plan_steps_dev(p, d)[i];
                        int gi = p->step0[d] + i;
                        if (st->op != PLAN_COMPUTE) continue;
                        double dur = a1[gi] - a0[gi], extra = 0;
                        for (int e = 0; e < nd && kf[st->layer] > 0 && dur > 0; e++)
                            for (int j = 0; e != d && j < plan_nsteps_dev(p, e); j++) {
                                const plan_step *s2 = &plan_steps_dev(p, e)[j];
                                int gj = p->step0[e] + j;
                                double lo2 = a0[gj] > a0[gi] ? a0[gj] : a0[gi];
                                double hi2 = a1[gj] < a1[gi] ? a1[gj] : a1[gi];
                                if (s2->op == PLAN_COMPUTE && hi2 > lo2 && kf[s2->layer] > 0)
                                    extra += (hi2 - lo2) * fmin(kf[st->layer], kf[s2->layer]);
                            }
                        double want = dur * (1 + (dur > 0 ? extra / dur : 0)), got = b1[gi] - b0[gi];
                        bad += fabs(got - want) > 1e-9 * want + 1e-15;
                        checked++;
                    }
                bad += rb.latency_ms < ra.latency_ms * (1 - 1e-12);
            }
            free(a0), free(a1), free(b0), free(b1);
        }
        free(lo), free(hi), free(g), free(kf);
        plan_free(p);
        mapping_free(mp);
        cost_free(m);
        cost_free(m0);
        chrom_free(ch);
        coeffs_free(c);
        coeffs_free(c0);
        net_free(n);
    }
    CHECK(bad == 0 && checked > 1000, "%d of %d compute steps off the corun rule", bad, checked);
    printf("ok: corun rule on %d compute steps of random local-4 mappings\n", checked);
    platform_free(pl);
}

/* The model prices a Conv by the algorithm its platform's rule gives:
 * local-2 states an F(2x2) limit of 2^17 channel pairs, so vgg16's conv5
 * layers (512 x 512 on 14x14) are im2col there ("Conv"), and without the
 * limit F(2x2) ("ConvWinograd"): the same mapping then costs another
 * latency (cost_new must hand the platform's rule on), and the layer
 * another scratch. */
static void test_platform_rule(void)
{
    platform *pl = platform_open("local-2", err);
    net *n = net_zoo("vgg16", err);
    cost_coeffs *c = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    CHECK(pl && n && c, "%s", err);
    if (!pl || !n || !c) return;
    int l = net_find(n, "conv5_1");
    CHECK(l >= 0 && pl->kernels.wino2_max_pairs == 131072);
    CHECK_I64(cost_class(n, l, &pl->kernels), NET_CONV);
    CHECK_I64(cost_class(n, l, NULL), COST_CLASS_CONV_WINOGRAD);
    mapping *m = mapping_new(n->n, pl->ndev);
    mapping_set_single(m, n, 0);
    cost_result r[2];
    cost_device *d = calloc((size_t)pl->ndev, sizeof *d);
    CHECK(run(n, pl, c, m, &r[0], d) == 0);
    pl->kernels.wino2_max_pairs = 0; /* the same platform without the limit */
    CHECK(run(n, pl, c, m, &r[1], d) == 0);
    CHECK(r[0].latency_ms != r[1].latency_ms, "latency %g both ways", r[0].latency_ms);
    /* (the device's peak memory is set by an earlier layer's scratch; the
     * layer's own scratch follows its algorithm) */
    int C = n->layers[l].out.c;
    pl->kernels.wino2_max_pairs = 131072;
    CHECK(convalgo_workspace_of(n, l, C, &pl->kernels) != convalgo_workspace_of(n, l, C, NULL));
    printf("vgg16 on local-2: %.2f ms with the limit, %.2f ms without\n", r[0].latency_ms,
           r[1].latency_ms);
    free(d);
    mapping_free(m);
    coeffs_free(c);
    net_free(n);
    platform_free(pl);
}

/* A ReLU on a 2x4x4 input cut into rows [0, 2) on a and [2, 4) on b, the
 * input and the output on a: the input's rows [2, 4) of both channels are
 * no run of floats in a's tensor (plan_send_offset), so a packs them before
 * its send, and the model charges that copy and holds its buffer; b's band
 * goes back whole, in place.  Round numbers as above (network link 100 us +
 * 1 B/us, 1 us step overhead, 2 us send overhead, 0.01 us per copied byte). */
static void test_packed_send(void)
{
    net *n = net_new("packed", "x", (net_shape){2, 4, 4});
    net_attr a = net_attr_default(NET_RELU);
    const char *x[] = {"x"};
    net_add(n, "r", NET_RELU, &a, 1, x, err);
    CHECK(!net_finalize(n, "packed", err), "%s", err);
    platform *pl = plat2(1000, 2, 100, 1);
    cost_coeffs *c = unit_coeffs("packed", 1, 2, 1, 0);
    mapping *m = mapping_new(1, 2);
    m->cut[0] = MAP_CUT_ROWS;
    m->slices[0] = (map_slice){0, 0, 2};
    m->slices[1] = (map_slice){1, 2, 2};
    m->first[0] = 0, m->first[1] = 2;
    plan *p = plan_new();
    CHECK(!mapping_validate(m, n, err) && !plan_build(p, n, m, 0, err) && !plan_check(p, n, err),
          "%s", err);
    int packed = 0, inplace = 0;
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].op == PLAN_SEND) {
            int d = i >= p->step0[1];
            if (plan_send_offset(p, d, &p->steps[i]) < 0) packed += d == 0;
            else inplace += d == 1;
        }
    CHECK(p->nmsgs == 2 && packed == 1 && inplace == 1, "%d messages, %d packed on a, %d in place on b",
          p->nmsgs, packed, inplace);
    cost_result r;
    cost_device d[2];
    CHECK(run(n, pl, c, m, &r, d) == 0);
    /* a: send of 64 bytes, packed: 2 + (1 + 64 * 0.01) = 3.64 us; its 64
     * bytes arrive at 3.64 + 64 + 100 = 167.64.  a's band reads a crop of
     * the input's rows [0, 2) (a CONCAT of one piece, 1 + 0.64 -> 5.28),
     * then 1 + 16 ns -> 6.296.  b: 167.64, its band -> 168.656, its send
     * (in place, 2 us) -> 170.656, arrives at 334.656.  a: 334.656, the
     * output's concat of 128 bytes 1 + 1.28 -> 336.936 us. */
    CLOSE(d[0].send_s, 3.64 * US);
    CLOSE(d[1].send_s, 2 * US);
    CLOSE(d[0].concat_s, (1.64 + 2.28) * US);
    CLOSE(d[0].busy_s, (3.64 + 1.64 + 1.016 + 2.28) * US);
    CLOSE(d[1].wait_s, 167.64 * US);
    CLOSE(r.latency_ms, 0.336936);
    /* a's live bytes at the crop: the input 128 + the receive buffer of
     * b's band 64 (posted from the start) + the packed buffer 64 (until its
     * message arrives, 167.64) + the crop 64 = 320; the input is freed after
     * the crop, its last reader (the send in flight holds the pack, not the
     * input), so its band adds 64 to 256.  b: receive buffer 64 + its band
     * 64. */
    CLOSE(d[0].peak_act_bytes, 320);
    CLOSE(d[1].peak_act_bytes, 128);
    plan_free(p);
    mapping_free(m);
    coeffs_free(c);
    platform_free(pl);
    net_free(n);
}

int main(void)
{
    test_convalgo();
    test_random();
    test_chain();
    test_split_wait();
    test_spread();
    test_corun();
    test_corun_random();
    test_fan();
    test_channels();
    test_frees();
    test_branchy();
    test_defaults();
    test_fallbacks();
    test_table2();
    test_mismatch();
    test_platform_rule();
    test_packed_send();
    return check_done("test_cost");
}
