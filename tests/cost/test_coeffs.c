/* test_coeffs.c -- the coefficients file (docs/coefficients-format.md):
 * a file built in code survives save + load unchanged; the shipped
 * example loads and passes coeffs_check; every kind of bad file is
 * refused with one line naming the file and the problem; a layer's band
 * table prices bands as documented. */
#include "cost.h"
#include "check.h"
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char err[BASE_ERRLEN];

static int same_value(const coeffs_value *a, const coeffs_value *b)
{
    if (a->source != b->source || a->value != b->value || a->n != b->n) return 0;
    if (isnan(a->r2) != isnan(b->r2) || (!isnan(a->r2) && a->r2 != b->r2)) return 0;
    if (isnan(a->rmse) != isnan(b->rmse) || (!isnan(a->rmse) && a->rmse != b->rmse)) return 0;
    if (!a->note != !b->note || (a->note && strcmp(a->note, b->note))) return 0;
    return 1;
}

static void test_roundtrip(void)
{
    cost_coeffs *c = coeffs_new();
    CHECK(coeffs_add_platform(c, "p1") == 0 && coeffs_add_platform(c, "p2") == 0);
    CHECK(coeffs_add_network(c, "toy6") == 0);
    CHECK(coeffs_set_info(c, "test board", "2024-02-03", "made in code") == 0);
    CHECK(coeffs_set_arch(c, "aarch64") == 0);
    coeffs_device *d = coeffs_dev(c, PLAT_CPU);
    d->overhead_us = coeffs_fitted(12.5, 0.97, 0.3, 9);
    d->overhead_us.note = coeffs_note(c, "intercept of the per-layer fits");
    d->send_overhead_us = coeffs_given(3, COEFFS_ASSUMPTION);
    d->copy_bandwidth_mbs = coeffs_given(4000, COEFFS_MEASURED);
    d->idle_w = coeffs_given(2.5, COEFFS_DECLARED);
    d->mem_coefficient = coeffs_fitted(1.1, 0.9, 2, 3);
    d->mem_bias_mb = coeffs_given(40, COEFFS_DERIVED);
    d->mem_weights[NET_FC] = coeffs_given(0.5, COEFFS_DERIVED);
    d->cls[NET_CONV].per_cycle = coeffs_fitted(3.25, 0.999, 0.01, 12);
    d->cls[COST_CLASS_CONV_WINOGRAD].per_cycle = coeffs_given(9, COEFFS_ASSUMPTION);
    d->cls[NET_RELU].busy_w = coeffs_given(7, COEFFS_MEASURED);
    coeffs_layer_rates(c, PLAT_CPU, "toy6", "conv")->per_cycle = coeffs_fitted(2.5, 0.95, 0.2, 4);
    coeffs_layer_rates(c, PLAT_CPU, "toy6", "*")->busy_w = coeffs_given(11, COEFFS_DERIVED);
    coeffs_dev(c, PLAT_GPU)->cls[NET_FC].overhead_us = coeffs_given(30, COEFFS_ASSUMPTION);
    c->link[LINK_NETWORK].bandwidth_mbs = coeffs_fitted(110, 0.999, 1.5, 20);
    c->link[LINK_NETWORK].latency_us = coeffs_fitted(140, 0.999, 3, 20);
    c->link[LINK_SAME_BOARD].pickup_us = coeffs_given(37.5, COEFFS_MEASURED);
    d->step_spread = coeffs_given(0.061, COEFFS_MEASURED);
    d->step_spread.n = 41;
    c->link[LINK_SAME_BOARD].pull_bandwidth_mbs = coeffs_fitted(6716.4, 0.9998, 12.4, 4);
    coeffs_link *pl = coeffs_pair_link(c, "b0-cpu", "b2-cpu");
    CHECK(pl != NULL);
    pl->bandwidth_mbs = coeffs_fitted(11.5, 0.998, 2, 5);
    pl->pickup_us = coeffs_given(420, COEFFS_MEASURED);
    pl->pull_bandwidth_mbs = coeffs_fitted(9.5, 0.99, 3, 4);
    coeffs_device_factor(c, "b1-cpu")->compute_scale = coeffs_given(2.5, COEFFS_MEASURED);
    coeffs_device_factor(c, "b2-cpu"); /* unset: not written */
    CHECK(coeffs_check(c, err) == 0);
    char *path = scratch_path("rt.json");
    CHECK(coeffs_save(c, path, err) == 0);
    cost_coeffs *e = coeffs_load(path, err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "%s\n", err);
        coeffs_free(c);
        free(path);
        return;
    }
    CHECK(e->version == COEFFS_VERSION && e->nplatforms == 2 && e->nnetworks == 1);
    CHECK_STR(e->arch, "aarch64");
    CHECK_STR(e->platforms[1], "p2");
    CHECK_STR(e->board, "test board");
    CHECK_STR(e->date, "2024-02-03");
    CHECK_STR(e->description, "made in code");
    for (int k = 0; k < 2; k++) {
        const coeffs_device *a = &c->dev[k], *b = &e->dev[k];
        CHECK(a->present == b->present);
        CHECK(same_value(&a->overhead_us, &b->overhead_us));
        CHECK(same_value(&a->send_overhead_us, &b->send_overhead_us));
        CHECK(same_value(&a->copy_bandwidth_mbs, &b->copy_bandwidth_mbs));
        CHECK(same_value(&a->step_spread, &b->step_spread));
        CHECK(same_value(&a->busy_w, &b->busy_w) && same_value(&a->idle_w, &b->idle_w));
        CHECK(same_value(&a->mem_coefficient, &b->mem_coefficient));
        CHECK(same_value(&a->mem_bias_mb, &b->mem_bias_mb));
        for (int j = 0; j < NET_KIND_COUNT; j++)
            CHECK(same_value(&a->mem_weights[j], &b->mem_weights[j]));
        for (int j = 0; j < COST_NCLASS; j++) {
            CHECK(same_value(&a->cls[j].per_cycle, &b->cls[j].per_cycle));
            CHECK(same_value(&a->cls[j].overhead_us, &b->cls[j].overhead_us));
            CHECK(same_value(&a->cls[j].busy_w, &b->cls[j].busy_w));
        }
        CHECK(a->nlayers == b->nlayers);
    }
    const coeffs_rates *lr = coeffs_find_layer(e, PLAT_CPU, "toy6", "conv");
    CHECK(lr && lr->per_cycle.value == 2.5 && lr->per_cycle.r2 == 0.95);
    lr = coeffs_find_layer(e, PLAT_CPU, "toy6", "*");
    CHECK(lr && lr->busy_w.value == 11 && !coeffs_isset(&lr->per_cycle));
    CHECK(coeffs_find_layer(e, PLAT_CPU, "toy", "6/conv") == NULL);
    for (int k = 0; k < LINK_CLASS_COUNT; k++) {
        CHECK(same_value(&c->link[k].latency_us, &e->link[k].latency_us));
        CHECK(same_value(&c->link[k].bandwidth_mbs, &e->link[k].bandwidth_mbs));
        CHECK(same_value(&c->link[k].pickup_us, &e->link[k].pickup_us));
        CHECK(same_value(&c->link[k].pull_bandwidth_mbs, &e->link[k].pull_bandwidth_mbs));
    }
    CHECK(e->link[LINK_SAME_BOARD].pull_bandwidth_mbs.value == 6716.4 &&
          e->link[LINK_SAME_BOARD].pull_bandwidth_mbs.n == 4 &&
          !coeffs_isset(&e->link[LINK_NETWORK].pull_bandwidth_mbs));
    CHECK(e->link[LINK_SAME_BOARD].pickup_us.value == 37.5 &&
          !coeffs_isset(&e->link[LINK_SAME_BOARD].latency_us));
    CHECK(e->npairs == 1);
    if (e->npairs == 1) {
        CHECK_STR(e->pairs[0].a, "b0-cpu");
        CHECK_STR(e->pairs[0].b, "b2-cpu");
        CHECK(same_value(&e->pairs[0].l.bandwidth_mbs, &c->pairs[0].l.bandwidth_mbs));
        CHECK(!coeffs_isset(&e->pairs[0].l.latency_us));
        CHECK(e->pairs[0].l.pickup_us.value == 420);
        CHECK(same_value(&e->pairs[0].l.pull_bandwidth_mbs, &c->pairs[0].l.pull_bandwidth_mbs) &&
              e->pairs[0].l.pull_bandwidth_mbs.value == 9.5);
    }
    CHECK(e->nper == 1 && !strcmp(e->per[0].name, "b1-cpu") &&
          e->per[0].compute_scale.value == 2.5);
    /* Saving refuses what the reader would refuse, and writes nothing. */
    d->mem_bias_mb = coeffs_given(-1, COEFFS_DERIVED);
    char *bad = scratch_path("bad-save.json");
    CHECK(coeffs_save(c, bad, err) == -1);
    CHECK_HAS(err, "devices.cpu.mem_bias_mb");
    CHECK(tfile_read(bad, NULL) == NULL);
    coeffs_free(e);
    coeffs_free(c);
    free(path);
    free(bad);
}

static void test_example(void)
{
    cost_coeffs *c = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    CHECK(c != NULL);
    if (!c) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK(coeffs_check(c, err) == 0);
    CHECK(c->dev[PLAT_CPU].present && c->dev[PLAT_GPU].present);
    /* Every value says where it comes from; none is presented as fitted. */
    const coeffs_device *d = &c->dev[PLAT_CPU];
    CHECK(d->cls[NET_CONV].per_cycle.source == COEFFS_DERIVED);
    CHECK(d->cls[NET_FC].per_cycle.source == COEFFS_ASSUMPTION);
    CHECK(d->mem_weights[NET_FC].source == COEFFS_DERIVED);
    CHECK(c->dev[PLAT_GPU].cls[NET_CONV].per_cycle.source == COEFFS_ASSUMPTION);
    for (int j = 0; j < COST_NCLASS; j++) CHECK(d->cls[j].per_cycle.source != COEFFS_FITTED);
    CHECK(coeffs_find_layer(c, PLAT_CPU, "vgg16", "*") != NULL);
    coeffs_free(c);
}

/* One bad file per case: the message must name the file and the problem. */
static const struct {
    const char *name, *text, *want;
} bad[] = {
    {"malformed", "{\"format\": \"dse-coefficients\", ", "malformed.json"},
    {"not-coeffs", "{\"format\": \"dse-platform\", \"version\": 1}", "not a dse coefficients file"},
    {"version",
     "{\"format\":\"dse-coefficients\",\"version\":99,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{}}",
     "version 99"},
    {"arch-in-v1",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"arch\":\"aarch64\",\"devices\":{}}",
     "\"arch\" needs format version 2"},
    {"arch-empty",
     "{\"format\":\"dse-coefficients\",\"version\":2,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"arch\":\"\",\"devices\":{}}",
     "\"arch\" is empty"},
    {"arch-number",
     "{\"format\":\"dse-coefficients\",\"version\":2,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"arch\":64,\"devices\":{}}",
     "\"arch\""},
    {"no-version",
     "{\"format\":\"dse-coefficients\",\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{}}",
     "missing \"version\""},
    {"negative",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"overhead_us\":"
     "{\"value\":-3,\"source\":\"assumption\"}}}}",
     "devices.cpu.overhead_us"},
    {"zero-rate",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"kinds\":{\"FC\":"
     "{\"per_cycle\":{\"value\":0,\"source\":\"assumption\"}}}}}}",
     "must be a number from 1e-09 to 1e+12"},
    /* Issue 15: values that made the model infinite (latency inf ms, a
     * campaign failing on its reference point) are refused here. */
    {"denormal-rate",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"kinds\":{\"Conv\":"
     "{\"per_cycle\":{\"value\":4.9e-324,\"source\":\"assumption\"}}}}}}",
     "devices.cpu.kinds.Conv.per_cycle: value 4.94066e-324 must be a number from 1e-09 to 1e+12"},
    {"huge-power",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"busy_w\":"
     "{\"value\":1e308,\"source\":\"assumption\"}}}}",
     "devices.cpu.busy_w: value 1e+308 must be 0 or a number from 1e-09 to 1e+12"},
    {"tiny-bandwidth",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"network\":{\"bandwidth_mbs\":"
     "{\"value\":1e-300,\"source\":\"measured\"}}}}",
     "links.network.bandwidth_mbs: value 1e-300 must be a number"},
    {"leading-zero",
     "{\"format\":\"dse-coefficients\",\"version\":01,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{}}",
     "line 1, column 40: number with a leading zero"},
    {"control-name",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[\"p\\u001b[2J\"],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{}}",
     "\"platforms\" must hold names"},
    {"unknown-key",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"overhed_us\":1}}}",
     "unknown key \"overhed_us\""},
    {"unknown-kind",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"kinds\":{\"Convv\":{}}}}}",
     "\"Convv\" is not a layer kind"},
    {"bare-number",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"idle_w\":3}}}",
     "must be an object {\"value\""},
    {"bad-source",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"idle_w\":"
     "{\"value\":3,\"source\":\"guess\"}}}}",
     "source \"guess\""},
    {"fit-no-r2",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"idle_w\":"
     "{\"value\":3,\"source\":\"fitted\"}}}}",
     "needs its r2"},
    {"layer-key",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"gpu\":{\"layers\":{\"conv1\":{}}}}}",
     "key must be \"network/layer\""},
    {"no-devices",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\"}",
     "missing \"devices\""},
    {"bad-link",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"wifi\":{}}}",
     "unknown key \"wifi\""},
    {"pair-twice",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"pairs\":["
     "{\"a\":\"x\",\"b\":\"y\"},{\"a\":\"y\",\"b\":\"x\"}]}}",
     "given twice"},
    {"pair-self",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"pairs\":["
     "{\"a\":\"x\",\"b\":\"x\"}]}}",
     "the same device"},
    {"pair-bad-bw",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"pairs\":["
     "{\"a\":\"x\",\"b\":\"y\",\"bandwidth_mbs\":{\"value\":0,\"source\":\"measured\"}}]}}",
     "links.pairs[0].bandwidth_mbs"},
    {"zero-scale",
     "{\"format\":\"dse-coefficients\",\"version\":3,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"per_device\":{\"x\":"
     "{\"compute_scale\":{\"value\":0,\"source\":\"measured\"}}}}",
     "per_device.x.compute_scale"},
    {"per-device-key",
     "{\"format\":\"dse-coefficients\",\"version\":3,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"per_device\":{\"x\":"
     "{\"speed\":{\"value\":1,\"source\":\"measured\"}}}}",
     "unknown key \"speed\""},
    {"per-device-v2",
     "{\"format\":\"dse-coefficients\",\"version\":2,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"per_device\":{\"x\":"
     "{\"compute_scale\":{\"value\":2,\"source\":\"measured\"}}}}",
     "needs format version 3"},
    {"neg-pickup",
     "{\"format\":\"dse-coefficients\",\"version\":3,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"same_board\":"
     "{\"pickup_us\":{\"value\":-3,\"source\":\"measured\"}}}}",
     "links.same_board.pickup_us"},
    {"zero-pull",
     "{\"format\":\"dse-coefficients\",\"version\":9,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"network\":"
     "{\"pull_bandwidth_mbs\":{\"value\":0,\"source\":\"measured\"}}}}",
     "links.network.pull_bandwidth_mbs"},
    {"pull-v8",
     "{\"format\":\"dse-coefficients\",\"version\":8,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"same_board\":"
     "{\"pull_bandwidth_mbs\":{\"value\":6000,\"source\":\"measured\"}}}}",
     "links.same_board.pull_bandwidth_mbs needs format version 9 (the file says 8)"},
    {"pair-pull-v8",
     "{\"format\":\"dse-coefficients\",\"version\":8,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{},\"links\":{\"pairs\":[{\"a\":\"x\","
     "\"b\":\"y\",\"pull_bandwidth_mbs\":{\"value\":6000,\"source\":\"measured\"}}]}}",
     "needs format version 9"},
    {"spread-v9",
     "{\"format\":\"dse-coefficients\",\"version\":9,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
     "{\"step_spread\":{\"value\":0.05,\"source\":\"measured\"}}}}",
     "devices.cpu.step_spread needs format version 10 (the file says 9)"},
    {"spread-large",
     "{\"format\":\"dse-coefficients\",\"version\":10,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
     "{\"step_spread\":{\"value\":1.5,\"source\":\"measured\"}}}}",
     "devices.cpu.step_spread: value 1.5 must be at most 1"},
    {"spread-negative",
     "{\"format\":\"dse-coefficients\",\"version\":10,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
     "{\"step_spread\":{\"value\":-0.1,\"source\":\"measured\"}}}}",
     "devices.cpu.step_spread"},
    {"nan-ish",
     "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],\"networks\":[],"
     "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"busy_w\":"
     "{\"value\":\"7\",\"source\":\"declared\"}}}}",
     "\"value\" must be a number"},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.json", bad[i].name);
        char *path = scratch_path(name);
        write_text(path, bad[i].text);
        err[0] = 0;
        cost_coeffs *c = coeffs_load(path, err);
        CHECK(c == NULL);
        CHECK_HAS(err, name);
        CHECK_HAS(err, bad[i].want);
        CHECK(strchr(err, '\n') == NULL);
        coeffs_free(c);
        free(path);
    }
    CHECK(coeffs_load("/nonexistent/c.json", err) == NULL);
    CHECK_HAS(err, "/nonexistent/c.json");
}

/* The example of docs/coefficients-format.md loads and means what the
 * page says. */
static void test_doc_example(void)
{
    char *doc = tfile_read(DSE_SOURCE_DIR "/docs/coefficients-format.md", NULL);
    CHECK(doc != NULL);
    if (!doc) return;
    char *a = strstr(doc, "```json\n"), *b = a ? strstr(a + 8, "```") : NULL;
    CHECK(a && b);
    if (!a || !b) {
        free(doc);
        return;
    }
    *b = 0;
    cost_coeffs *c = coeffs_from_json(a + 8, "docs example", err);
    CHECK(c != NULL);
    if (c) {
        const coeffs_device *d = &c->dev[PLAT_CPU];
        CHECK(d->present && !c->dev[PLAT_GPU].present);
        CHECK(c->version == 10 && c->arch && !strcmp(c->arch, "x86_64"));
        CHECK(d->step_spread.value == 0.045 && d->step_spread.source == COEFFS_MEASURED &&
              d->step_spread.n == 52);
        CHECK(d->curve[NET_CONV].n == 3 && d->curve[NET_CONV].us[2] == 2950.0 &&
              d->curve[NET_CONV].r2 == 0.96 && d->curve[NET_FC].n == 0);
        CHECK(d->overhead_us.value == 12.0 && d->overhead_us.source == COEFFS_FITTED &&
              d->overhead_us.n == 30 && d->overhead_us.r2 == 0.98);
        CHECK(d->mem_weights[NET_FC].value == 1.0 && d->mem_bias_mb.value == 38.0);
        CHECK(d->cls[COST_CLASS_CONV_WINOGRAD].per_cycle.value == 3.1);
        CHECK_STR(d->copy_bandwidth_mbs.note, "memcpy of 16 MB");
        const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, "toy6", "conv");
        CHECK(r && r->per_cycle.value == 2.7 && r->overhead_us.value == 15.0);
        CHECK(r && r->band.n == 3 && r->band.height == 16 && r->band.rows[2] == 2 && r->band.ratio[2] == 1.35);
        CHECK(r && r->cband.n == 3 && r->cband.height == 16 && r->cband.rows[1] == 4 && r->cband.ratio[2] == 1.4);
        const coeffs_rates *f = coeffs_find_layer(c, PLAT_CPU, "toy6", "fc");
        CHECK(f && f->corun.value == 1.27 && f->corun.source == COEFFS_MEASURED && f->corun.n == 10);
        CHECK(c->link[LINK_NETWORK].bandwidth_mbs.value == 117.0);
        CHECK(c->link[LINK_NETWORK].pickup_us.value == 35.0 &&
              c->link[LINK_NETWORK].pull_bandwidth_mbs.value == 112.0 &&
              c->link[LINK_NETWORK].pull_bandwidth_mbs.n == 4);
        CHECK(!coeffs_isset(&c->link[LINK_SAME_BOARD].latency_us));
        coeffs_free(c);
    } else {
        fprintf(stderr, "%s\n", err);
    }
    free(doc);
}

/* Version 1 files (no "arch") are still read; coefficients from one
 * architecture used for CPU devices that state another give one warning
 * line, from coeffs_arch_warning and in cost_new's warning. */
static void test_arch(void)
{
    const char *v1 = "{\"format\":\"dse-coefficients\",\"version\":1,\"platforms\":[],"
                     "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{}}}";
    cost_coeffs *c = coeffs_from_json(v1, "v1", err);
    CHECK(c && c->version == 1 && c->arch == NULL && c->dev[PLAT_CPU].present);
    if (!c) return;
    /* written back, it keeps its version (its rates mean what version 1
     * says: GlobalAveragePool's per element written) */
    char *txt = coeffs_to_json(c);
    cost_coeffs *c2 = txt ? coeffs_from_json(txt, "v1 rewritten", err) : NULL;
    CHECK(c2 && c2->version == 1 && c2->arch == NULL);
    coeffs_free(c2);
    free(txt);
    platform *nx = platform_open("jetson-nx-8-cpu", err), *loc = platform_open("local-2", err);
    net *n = net_zoo("toy6", err);
    CHECK(nx && loc && n);
    if (!nx || !loc || !n) goto out;
    char w[BASE_ERRLEN];
    /* unknown architecture: nothing to say */
    CHECK(coeffs_arch_warning(c, nx, w) == 0 && w[0] == 0);
    CHECK(coeffs_set_arch(c, "x86_64") == 0);
    CHECK(coeffs_arch_warning(c, nx, w) == 1);
    CHECK_HAS(w, "measured on x86_64 used for 8 aarch64 devices (nx0-cpu, nx1-cpu, nx2-cpu, "
                 "nx3-cpu, ...)");
    CHECK(strchr(w, '\n') == NULL);
    cost_model *m = cost_new(n, nx, c, w, err);
    CHECK(m != NULL);
    CHECK_HAS(w, "measured on x86_64");
    cost_free(m);
    /* devices that state no architecture; the same one under Debian's name */
    CHECK(coeffs_arch_warning(c, loc, w) == 0 && w[0] == 0);
    CHECK(coeffs_set_arch(c, "arm64") == 0);
    CHECK(coeffs_arch_warning(c, nx, w) == 0 && w[0] == 0);
    m = cost_new(n, nx, c, w, err);
    CHECK(m && !strstr(w, "measured on"));
    cost_free(m);
    /* the shipped Jetson coefficients say aarch64, as the presets do */
    cost_coeffs *th = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    CHECK(th && th->arch && !strcmp(th->arch, "aarch64"));
    CHECK(th && coeffs_arch_warning(th, nx, w) == 0);
    coeffs_free(th);
out:
    net_free(n);
    platform_free(nx);
    platform_free(loc);
    coeffs_free(c);
}

/* GlobalAveragePool's work: the elements it reads (C*H*W) from version 4
 * on, the ones it writes (C) before.  A file of either version prices a
 * GAP on 6x5x4 as its own version meant: work / (frequency * per_cycle)
 * on local-2's rank0 (one core). */
/* Network "gapnet": one GlobalAveragePool "gap" on a c x h x w input. */
static net *gap_net(int c, int h, int w)
{
    net *n = net_new("gapnet", "data", (net_shape){c, h, w});
    const char *in[] = {"data"};
    net_attr a = net_attr_default(NET_GAP);
    if (n && (net_add(n, "gap", NET_GAP, &a, 1, in, err) < 0 || net_finalize(n, "gapnet", err))) {
        net_free(n);
        return NULL;
    }
    return n;
}

static void test_gap_versions(void)
{
    platform *pl = platform_open("local-2", err);
    net *n = gap_net(6, 5, 4);
    CHECK(pl && n, "%s", err);
    if (!pl || !n) goto out;
    CHECK(n->layers[0].ops == 120, "GAP on 6x5x4 reads 120 elements, ops %lld",
          (long long)n->layers[0].ops);
    double fc = pl->dev[0].freq_mhz * 1e6 * pl->dev[0].cores;
    for (int v = 3; v <= 4; v++) {
        char txt[600];
        snprintf(txt, sizeof txt,
                 "{\"format\":\"dse-coefficients\",\"version\":%d,\"platforms\":[],"
                 "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
                 "{\"kinds\":{\"GlobalAveragePool\":{\"per_cycle\":{\"value\":0.5,"
                 "\"source\":\"assumption\"},\"overhead_us\":{\"value\":0,"
                 "\"source\":\"assumption\"}}}}}}", v);
        cost_coeffs *c = coeffs_from_json(txt, "gap", err);
        CHECK(c != NULL, "version %d: %s", v, err);
        char w[BASE_ERRLEN];
        cost_model *m = c ? cost_new(n, pl, c, w, err) : NULL;
        CHECK(m != NULL, "%s", err);
        if (m) {
            double want = (v < 4 ? 6 : 120) / 0.5 / fc, got = cost_compute_s(m, 0, 0, 0, 6);
            CHECK(fabs(got - want) <= 1e-12 * want, "version %d: GAP %g s, want %g s", v, got, want);
        }
        cost_free(m);
        coeffs_free(c);
    }
    /* A GPU device of a platform the file has no gpu section for is priced
     * by the built-in defaults, this version's: the same whatever the
     * file's version. */
    platform *g = platform_open("jetson-nx-8-cpugpu", err);
    int gd = -1;
    for (int d = 0; g && d < g->ndev; d++)
        if (g->dev[d].kind == PLAT_GPU) gd = d;
    CHECK(g && gd >= 0, "no gpu device in jetson-nx-8-cpugpu: %s", err);
    double tg[2] = {0, 0};
    for (int v = 3; g && gd >= 0 && v <= 4; v++) {
        char txt[600];
        snprintf(txt, sizeof txt,
                 "{\"format\":\"dse-coefficients\",\"version\":%d,\"platforms\":[],"
                 "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
                 "{\"kinds\":{\"GlobalAveragePool\":{\"per_cycle\":{\"value\":0.5,"
                 "\"source\":\"assumption\"}}}}}}", v);
        cost_coeffs *c = coeffs_from_json(txt, "gap-gpu", err);
        char w[BASE_ERRLEN];
        cost_model *m = c ? cost_new(n, g, c, w, err) : NULL;
        CHECK(m != NULL, "%s", err);
        if (m) tg[v - 3] = cost_compute_s(m, 0, gd, 0, 6);
        cost_free(m);
        coeffs_free(c);
    }
    CHECK(tg[0] > 0 && tg[0] == tg[1], "gpu GAP on defaults: %g s (version 3 file), %g s (4)",
          tg[0], tg[1]);
    platform_free(g);
out:
    net_free(n);
    platform_free(pl);
}

/* A class curve (format 5): read back as written; refused in a version 4
 * file and when it falls; and what the model charges a layer priced by
 * it: the tangent at its whole work (hand-worked), a channel share on
 * the same line, while a layer with an entry of its own ignores it. */
/* A version-5 file whose one kind entry is `kind` with per_cycle 0.5 and a
 * curve through work 100, 1000, 10000 at times `us` (microseconds). */
static cost_coeffs *curve_file(const char *kind, const char *us)
{
    char txt[600];
    snprintf(txt, sizeof txt,
             "{\"format\":\"dse-coefficients\",\"version\":5,\"platforms\":[],\"networks\":[],"
             "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"kinds\":{\"%s\":{"
             "\"per_cycle\":{\"value\":0.5,\"source\":\"assumption\"},"
             "\"curve\":{\"work\":[100,1000,10000],\"us\":[%s]}}}}}}",
             kind, us);
    return coeffs_from_json(txt, kind, err);
}

static void test_curve(void)
{
    const char *fmt =
        "{\"format\":\"dse-coefficients\",\"version\":%d,\"platforms\":[],"
        "\"networks\":[\"other\"],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
        "{\"kinds\":{\"GlobalAveragePool\":{\"per_cycle\":{\"value\":0.5,"
        "\"source\":\"assumption\"},\"overhead_us\":{\"value\":7,\"source\":\"assumption\"},"
        "\"curve\":{\"work\":[10,100,1000],\"us\":[%s],\"r2\":0.97}}}%s}}}";
    char txt[1200];
    snprintf(txt, sizeof txt, fmt, 4, "2,4,40", "");
    cost_coeffs *c = coeffs_from_json(txt, "v4", err);
    CHECK(!c && strstr(err, "curve needs format version 5"), "version 4 with a curve: %s", err);
    coeffs_free(c);
    snprintf(txt, sizeof txt, fmt, 5, "2,4,3", "");
    c = coeffs_from_json(txt, "falls", err);
    CHECK(!c && strstr(err, "time not decrease"), "a falling curve: %s", err);
    coeffs_free(c);
    snprintf(txt, sizeof txt, fmt, 5, "2,4,40", "");
    c = coeffs_from_json(txt, "v5", err);
    CHECK(c != NULL, "%s", err);
    if (!c) return;
    const coeffs_curve *cv = &c->dev[PLAT_CPU].curve[NET_GAP];
    CHECK(cv->n == 3 && cv->work[2] == 1000 && cv->us[1] == 4 && cv->r2 == 0.97, "read: %d points", cv->n);
    char *j = coeffs_to_json(c);
    cost_coeffs *c2 = j ? coeffs_from_json(j, "again", err) : NULL;
    CHECK(c2 && c2->version == 5 && !memcmp(&c2->dev[PLAT_CPU].curve[NET_GAP], cv, sizeof *cv),
          "curve round trip: %s", err);
    free(j);
    coeffs_free(c2);
    /* GAP on 6x5x4: 120 elements read; between 100 (4 us) and 1000 (40
     * us): power 1, so 4.8 us and no fixed cost; 3 of 6 channels: half */
    platform *pl = platform_open("local-2", err);
    net *n = gap_net(6, 5, 4);
    CHECK(pl && n, "%s", err);
    cost_model *m = pl && n ? cost_new(n, pl, c, NULL, err) : NULL;
    CHECK(m != NULL, "%s", err);
    if (m) {
        double t = cost_compute_s(m, 0, 0, 0, 6), h = cost_compute_s(m, 0, 0, 0, 3);
        CHECK(fabs(t - 4.8e-6) < 1e-15 && fabs(h - 2.4e-6) < 1e-15, "GAP by the curve: %g s, half %g s",
              t, h);
    }
    cost_free(m);
    net_free(n);
    /* 6x3x3 reads 54: below 100, first segment power log(2)/log(10):
     * T = 4 us * 0.54^p; fixed cost (1-p) T, the rest per channel */
    n = gap_net(6, 3, 3);
    CHECK(n != NULL, "%s", err);
    m = pl && n ? cost_new(n, pl, c, NULL, err) : NULL;
    CHECK(m != NULL, "%s", err);
    if (m) {
        double p = log(2.0) / log(10.0), T = 2e-6 * pow(5.4, p);
        double t = cost_compute_s(m, 0, 0, 0, 6), h = cost_compute_s(m, 0, 0, 0, 2);
        CHECK(fabs(t - T) < 1e-9 * T && fabs(h - ((1 - p) * T + p * T / 3)) < 1e-9 * T,
              "GAP below the curve: %g s, a third %g s; want %g s", t, h, T);
    }
    cost_free(m);
    coeffs_free(c);
    /* an entry of its own wins over the class's curve: both rates, or
     * only a fixed cost (the class's line gives the rate then) */
    static const struct {
        const char *entry;
        double per_cycle, overhead_us;
    } own[] = {
        {"\"per_cycle\":{\"value\":0.25,\"source\":\"assumption\"},"
         "\"overhead_us\":{\"value\":0,\"source\":\"assumption\"}", 0.25, 0},
        {"\"overhead_us\":{\"value\":3,\"source\":\"assumption\"}", 0.5, 3},
    };
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++) {
        char extra[400];
        snprintf(extra, sizeof extra, ",\"layers\":{\"gapnet/gap\":{%s}}", own[k].entry);
        snprintf(txt, sizeof txt, fmt, 5, "2,4,40", extra);
        c = coeffs_from_json(txt, "layer", err);
        CHECK(c != NULL, "%s", err);
        m = c && n && pl ? cost_new(n, pl, c, NULL, err) : NULL;
        CHECK(m != NULL, "%s", err);
        if (m) {
            double fc = pl->dev[0].freq_mhz * 1e6 * pl->dev[0].cores;
            double t = cost_compute_s(m, 0, 0, 0, 6);
            double want = 54 / own[k].per_cycle / fc + own[k].overhead_us * 1e-6;
            CHECK(fabs(t - want) < 1e-12 * want, "own entry %zu: %g s want %g s", k, t, want);
        }
        cost_free(m);
        coeffs_free(c);
    }
    net_free(n);
    /* an alias (Flatten) is priced flat at its curve's first point, what
     * ever its size: 4x5x4 flattened (80 elements, below the curve) and
     * 30x20x20 (12000, beyond it) alike 1.5 us */
    c = curve_file("Flatten", "1.5,2,9");
    CHECK(c != NULL, "%s", err);
    for (int big = 0; big < 2 && c; big++) {
        net_shape x = big ? (net_shape){30, 20, 20} : (net_shape){4, 5, 4};
        net *f = net_new("fl", "data", x);
        const char *fin[] = {"data", "relu"};
        net_attr ra = net_attr_default(NET_RELU), fa = net_attr_default(NET_FLATTEN);
        CHECK(f && net_add(f, "relu", NET_RELU, &ra, 1, fin, err) >= 0 &&
                  net_add(f, "flat", NET_FLATTEN, &fa, 1, fin + 1, err) >= 0 &&
                  net_finalize(f, "flat", err) == 0, "%s", err);
        cost_model *fm = f && pl ? cost_new(f, pl, c, NULL, err) : NULL;
        CHECK(fm != NULL, "%s", err);
        if (fm) {
            double t = cost_compute_s(fm, 1, 0, 0, f->layers[1].out.c);
            CHECK(fabs(t - 1.5e-6) < 1e-15, "Flatten of %d elements by its curve: %g s, want 1.5 us",
                  x.c * x.h * x.w, t);
        }
        cost_free(fm);
        net_free(f);
    }
    coeffs_free(c);
    /* a curve needs its class's per_cycle beside it */
    c = coeffs_from_json("{\"format\":\"dse-coefficients\",\"version\":5,\"platforms\":[],"
                         "\"networks\":[],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
                         "{\"kinds\":{\"ReLU\":{\"curve\":{\"work\":[1,2],\"us\":[1,2]}}}}}}",
                         "curve alone", err);
    CHECK(!c && strstr(err, "needs the class's per_cycle"), "a curve alone: %s", err);
    coeffs_free(c);
    /* a depthwise conv (ConvDirect) in a file with no ConvDirect entry is
     * priced by Conv's curve: 4 channels, 3x3 on 5x4, 720 MACs, between
     * 100 (4 us) and 1000 (40 us) at power 1: 28.8 us, no fixed cost */
    c = curve_file("Conv", "4,40,80");
    CHECK(c != NULL, "%s", err);
    n = net_new("dw", "data", (net_shape){4, 5, 4});
    const char *in[] = {"data"};
    net_attr a = net_attr_conv(4, 3, 1, 1, 4, 1);
    CHECK(n && net_add(n, "dw", NET_CONV, &a, 1, in, err) >= 0 && net_finalize(n, "dw", err) == 0,
          "%s", err);
    CHECK(n && cost_class(n, 0, NULL) == COST_CLASS_CONV_DIRECT && n->layers[0].macs == 720, "depthwise");
    m = c && n && pl ? cost_new(n, pl, c, NULL, err) : NULL;
    CHECK(m != NULL, "%s", err);
    if (m) {
        double t = cost_compute_s(m, 0, 0, 0, 4);
        CHECK(fabs(t - 28.8e-6) < 1e-15, "ConvDirect by Conv's curve: %g s, want 28.8 us", t);
    }
    cost_free(m);
    coeffs_free(c);
    net_free(n);
    platform_free(pl);
}

/* A layer's measured bands ("band", version 6): read, written, refused
 * when malformed; the model charges a band of nh rows the whole layer's
 * time x nh / H x the ratio, interpolated between the points and (H, 1),
 * held below the last; a table measured at another height is not used. */
static const char *band_fmt =
    "{\"format\":\"dse-coefficients\",\"version\":%d,\"platforms\":[],"
    "\"networks\":[\"toy6\"],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
    "{\"layers\":{\"toy6/%s\":{\"per_cycle\":{\"value\":2,\"source\":\"assumption\"},"
    "\"overhead_us\":{\"value\":3,\"source\":\"assumption\"}%s}}}}}";

/* A file of band_fmt with `extra` (raw entry keys) in the layer's entry. */
static cost_coeffs *bands_file(int version, const char *layer, const char *extra, const char *what)
{
    char txt[2000];
    snprintf(txt, sizeof txt, band_fmt, version, layer, extra);
    return coeffs_from_json(txt, what, err);
}

/* The same with a "band" table (NULL: none). */
static cost_coeffs *band_file(int version, const char *layer, const char *band, const char *what)
{
    char b[600] = "";
    if (band) snprintf(b, sizeof b, ",\"band\":%s", band);
    return bands_file(version, layer, b, what);
}

static void test_band(void)
{
    net *n = net_zoo("toy6", err);
    platform *pl = platform_open("local-2", err);
    CHECK(n && pl, "%s", err);
    if (!n || !pl) {
        net_free(n);
        platform_free(pl);
        return;
    }
    int l = -1;
    for (int i = 0; i < n->n && l < 0; i++)
        if (n->layers[i].kind == NET_CONV && net_layer_rowsplit(n, i) && n->layers[i].out.h % 8 == 0) l = i;
    CHECK(l >= 0, "toy6 has no conv of 8k rows");
    if (l < 0) {
        net_free(n);
        platform_free(pl);
        return;
    }
    const char *name = n->layers[l].name;
    int H = n->layers[l].out.h, C = n->layers[l].out.c;
    char band[300];
    static const struct {
        const char *band, *want;
    } bad[] = {
        {"{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5]}", "arrays \"rows\" and \"ratio\" of one length"},
        {"{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,0]}", "point 1 must be whole rows"},
        {"{\"height\":%d,\"rows\":[%d,%d.5],\"ratio\":[1.5,2]}", "point 1 must be whole rows"},
        {"{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,2],\"width\":3}", "width"},
        {"{\"height\":1e300,\"rows\":[%d,%d],\"ratio\":[1.5,2]}", "a height of at least 2 whole rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(band, sizeof band, bad[i].band, H, H / 2, H / 4);
        cost_coeffs *c = band_file(6, name, band, "bad-band");
        CHECK(!c && strstr(err, bad[i].want) && strstr(err, "bad-band") && !strchr(err, '\n'),
              "bad band %zu: %s", i, err);
        coeffs_free(c);
    }
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,2]}", H, H / 4, H / 2);
    cost_coeffs *c = band_file(6, name, band, "rising");
    CHECK(!c && strstr(err, "point 1 must be whole rows from 1 to"), "rows rising: %s", err);
    coeffs_free(c);
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d],\"ratio\":[1.5]}", H, H);
    c = band_file(6, name, band, "full");
    CHECK(!c && strstr(err, "point 0"), "a band of every row: %s", err);
    coeffs_free(c);
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,2]}", H, H / 2, H / 4);
    c = band_file(5, name, band, "v5");
    CHECK(!c && strstr(err, "needs format version 6"), "version 5 with a band: %s", err);
    coeffs_free(c);

    c = band_file(6, name, band, "good");
    cost_coeffs *plain = band_file(6, name, NULL, "plain");
    CHECK(c && plain, "%s", err);
    if (c && plain) {
        const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, "toy6", name);
        CHECK(r && r->band.n == 2 && r->band.height == H && r->band.rows[1] == H / 4 && r->band.ratio[0] == 1.5,
              "band read");
        char *j = coeffs_to_json(c);
        cost_coeffs *c2 = j ? coeffs_from_json(j, "again", err) : NULL;
        const coeffs_rates *r2 = c2 ? coeffs_find_layer(c2, PLAT_CPU, "toy6", name) : NULL;
        CHECK(r && r2 && !memcmp(&r->band, &r2->band, sizeof r->band) && c2->version == 6,
              "band round trip: %s", err);
        free(j);
        coeffs_free(c2);
        /* a kinds entry has no band */
        coeffs_dev(c, PLAT_CPU)->cls[NET_RELU].band = r->band;
        CHECK(coeffs_check(c, err) == -1 && strstr(err, "a band belongs to a layer"), "kind band: %s", err);
        coeffs_dev(c, PLAT_CPU)->cls[NET_RELU].band.n = 0;

        cost_model *m = cost_new(n, pl, c, NULL, err), *m0 = cost_new(n, pl, plain, NULL, err);
        CHECK(m && m0, "%s", err);
        if (m && m0) {
            double T = cost_compute_s(m, l, 0, 0, C);
            CHECK(T > 0 && T == cost_compute_s(m0, l, 0, 0, C), "the whole layer is unchanged");
            /* shares of T: H/2 rows 0.75 (1.5 x 1/2), H/4 0.5 (2 x 1/4);
             * linear between, proportional below H/4 */
            static const struct {
                int num, den; /* nh = H * num / den */
                double share;
            } pts[] = {{1, 1, 1.0}, {1, 2, 0.75}, {1, 4, 0.5}, {3, 8, 0.625}, {3, 4, 0.875}, {1, 8, 0.25}};
            for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
                int nh = H * pts[i].num / pts[i].den;
                double want = T * pts[i].share, got = cost_band_s(m, l, 0, 0, nh, 0, n->layers[l].out.w);
                CHECK(fabs(got - want) <= 1e-12 * want, "band of %d rows of %d: %g s, want %g", nh, H, got, want);
            }
            for (int nh = 2; nh <= H; nh++)
                CHECK(cost_band_s(m, l, 0, 0, nh, 0, n->layers[l].out.w) >= cost_band_s(m, l, 0, 0, nh - 1, 0, n->layers[l].out.w), "thinner costs more at %d", nh);
            /* without a table: the band's share of the work, plus the step's fixed cost */
            double t0 = cost_band_s(m0, l, 0, 0, H / 2, 0, n->layers[l].out.w), ovh = 3e-6;
            CHECK(fabs(t0 - (ovh + (T - ovh) / 2)) <= 1e-12 * T, "no table: %g s", t0);
        }
        cost_free(m);
        cost_free(m0);
    }
    coeffs_free(c);
    coeffs_free(plain);
    /* a table whose thinner band costs more than a wider one: held at the
     * wider one's time (H/2: 0.5 of T; H/4 would be 0.75) */
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1,3]}", H, H / 2, H / 4);
    c = band_file(6, name, band, "falling");
    cost_model *mf = c ? cost_new(n, pl, c, NULL, err) : NULL;
    CHECK(mf != NULL, "%s", err);
    if (mf) {
        double T = cost_compute_s(mf, l, 0, 0, C);
        for (int nh = 2; nh <= H; nh++)
            CHECK(cost_band_s(mf, l, 0, 0, nh, 0, n->layers[l].out.w) >= cost_band_s(mf, l, 0, 0, nh - 1, 0, n->layers[l].out.w), "falling table: %d", nh);
        CHECK(fabs(cost_band_s(mf, l, 0, 0, H / 4, 0, n->layers[l].out.w) - 0.5 * T) <= 1e-12 * T &&
                  fabs(cost_band_s(mf, l, 0, 0, 3 * H / 8, 0, n->layers[l].out.w) - 0.5 * T) <= 1e-12 * T,
              "a thinner band held at the wider one's time");
    }
    cost_free(mf);
    coeffs_free(c);
    /* a band belongs to one layer, not to "network/ *" */
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d],\"ratio\":[1.5]}", H, H / 2);
    c = band_file(6, "*", band, "wild");
    CHECK(!c && strstr(err, "bands are measured per layer"), "a band on network/ *: %s", err);
    coeffs_free(c);
    /* measured at another height (the network read at another input size) */
    snprintf(band, sizeof band, "{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,2]}", H + 1, H / 2, H / 4);
    c = band_file(6, name, band, "other-height");
    cost_coeffs *plain2 = band_file(6, name, NULL, "plain");
    cost_model *m = c ? cost_new(n, pl, c, NULL, err) : NULL, *m0 = plain2 ? cost_new(n, pl, plain2, NULL, err) : NULL;
    CHECK(m && m0 && cost_band_s(m, l, 0, 0, H / 2, 0, n->layers[l].out.w) == cost_band_s(m0, l, 0, 0, H / 2, 0, n->layers[l].out.w),
          "a table of another height is not used");
    cost_free(m);
    cost_free(m0);
    coeffs_free(c);
    coeffs_free(plain2);
    net_free(n);
    platform_free(pl);
}

/* A layer's measured column bands ("band_columns", version 8): read,
 * written, refused where a row band is and on a version-7 file; the model
 * prices a column band by that table (hand-worked shares below), a layer
 * with only a row table in a version-8 file at its share of the work, a
 * version-7 file's by its row table at the same share (what it was
 * written for), a box cut along both axes at the product of its shares. */
static void test_colband(void)
{
    net *n = net_zoo("toy6", err);
    platform *pl = platform_open("local-2", err);
    CHECK(n && pl, "%s", err);
    int l = -1;
    for (int i = 0; n && i < n->n && l < 0; i++)
        if (n->layers[i].kind == NET_CONV && net_layer_rowsplit(n, i) && net_layer_colsplit(n, i) &&
            n->layers[i].out.h % 8 == 0 && n->layers[i].out.w % 8 == 0)
            l = i;
    CHECK(l >= 0, "toy6 has no conv of 8k rows and columns");
    if (l < 0) {
        net_free(n);
        platform_free(pl);
        return;
    }
    const char *name = n->layers[l].name;
    int H = n->layers[l].out.h, W = n->layers[l].out.w, C = n->layers[l].out.c;
    char rows[200], cols[200], both[500], one[300];
    snprintf(rows, sizeof rows, ",\"band\":{\"height\":%d,\"rows\":[%d,%d],\"ratio\":[1.5,2]}", H, H / 2, H / 4);
    snprintf(cols, sizeof cols, ",\"band_columns\":{\"width\":%d,\"columns\":[%d,%d],\"ratio\":[1.2,1.6]}", W,
             W / 2, W / 4);
    snprintf(both, sizeof both, "%s%s", rows, cols);

    /* malformed, misplaced, too old */
    static const struct {
        const char *band, *want;
    } bad[] = {
        {",\"band_columns\":{\"width\":%d,\"columns\":[%d,%d],\"ratio\":[1.5]}",
         "arrays \"columns\" and \"ratio\" of one length"},
        {",\"band_columns\":{\"width\":%d,\"columns\":[%d,%d],\"ratio\":[1.5,0]}", "point 1 must be whole columns"},
        {",\"band_columns\":{\"height\":%d,\"columns\":[%d,%d],\"ratio\":[1.5,2]}", "height"},
        {",\"band_columns\":{\"width\":%d,\"columns\":[%d,%d],\"ratio\":[1.5,2],\"rows\":[1]}", "rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(one, sizeof one, bad[i].band, W, W / 2, W / 4);
        cost_coeffs *c = bands_file(8, name, one, "bad-colband");
        CHECK(!c && strstr(err, bad[i].want) && strstr(err, "bad-colband") && strstr(err, "band_columns") &&
                  !strchr(err, '\n'),
              "bad column band %zu: %s", i, err);
        coeffs_free(c);
    }
    cost_coeffs *c = bands_file(7, name, cols, "v7");
    CHECK(!c && strstr(err, "band_columns needs format version 8"), "version 7 with column bands: %s", err);
    coeffs_free(c);
    c = bands_file(8, "*", cols, "wild");
    CHECK(!c && strstr(err, "bands are measured per layer"), "column bands on network/ *: %s", err);
    coeffs_free(c);

    cost_coeffs *c8 = bands_file(8, name, both, "v8"), *r8 = bands_file(8, name, rows, "v8-rows"),
                *r7 = bands_file(7, name, rows, "v7-rows"), *p8 = bands_file(8, name, "", "plain");
    snprintf(one, sizeof one, ",\"band_columns\":{\"width\":%d,\"columns\":[%d,%d],\"ratio\":[1.2,1.6]}", W + 1,
             W / 2, W / 4);
    cost_coeffs *o8 = bands_file(8, name, one, "other-width");
    CHECK(c8 && r8 && r7 && p8 && o8, "%s", err);
    if (c8 && r8 && r7 && p8 && o8) {
        const coeffs_rates *r = coeffs_find_layer(c8, PLAT_CPU, "toy6", name);
        CHECK(r && r->cband.n == 2 && r->cband.height == W && r->cband.rows[1] == W / 4 && r->cband.ratio[1] == 1.6 &&
                  r->band.n == 2,
              "column band read");
        char *j = coeffs_to_json(c8);
        cost_coeffs *c2 = j ? coeffs_from_json(j, "again", err) : NULL;
        const coeffs_rates *q = c2 ? coeffs_find_layer(c2, PLAT_CPU, "toy6", name) : NULL;
        CHECK(r && q && !memcmp(&r->cband, &q->cband, sizeof r->cband) && !memcmp(&r->band, &q->band, sizeof r->band) &&
                  c2->version == 8 && strstr(j, "\"band_columns\""),
              "column band round trip: %s", err);
        free(j);
        coeffs_free(c2);
        coeffs_dev(c8, PLAT_CPU)->cls[NET_RELU].cband = r->cband;
        CHECK(coeffs_check(c8, err) == -1 && strstr(err, "a band belongs to a layer"), "kind column band: %s", err);
        coeffs_dev(c8, PLAT_CPU)->cls[NET_RELU].cband.n = 0;

        cost_model *m = cost_new(n, pl, c8, NULL, err), *mr = cost_new(n, pl, r8, NULL, err),
                   *m7 = cost_new(n, pl, r7, NULL, err), *m0 = cost_new(n, pl, p8, NULL, err),
                   *mo = cost_new(n, pl, o8, NULL, err);
        CHECK(m && mr && m7 && m0 && mo, "%s", err);
        if (m && mr && m7 && m0 && mo) {
            double T = cost_compute_s(m, l, 0, 0, C), ovh = 3e-6;
            CHECK(T > 0 && T == cost_compute_s(m0, l, 0, 0, C), "the whole layer is unchanged");
            /* shares of T along the columns: W/2 0.6 (1.2 x 1/2), W/4 0.4
             * (1.6 x 1/4); linear between, proportional below W/4 */
            static const struct {
                int num, den; /* nw = W * num / den */
                double share;
            } pts[] = {{1, 1, 1.0}, {1, 2, 0.6}, {1, 4, 0.4}, {3, 8, 0.5}, {3, 4, 0.8}, {1, 8, 0.2}};
            for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
                int nw = W * pts[i].num / pts[i].den;
                double want = T * pts[i].share, got = cost_band_s(m, l, 0, 0, H, W - nw, nw);
                CHECK(fabs(got - want) <= 1e-12 * want, "band of %d columns of %d: %g s, want %g", nw, W, got, want);
            }
            /* row bands keep their table; a box of half the rows and half
             * the columns: 0.75 x 0.6 */
            CHECK(fabs(cost_band_s(m, l, 0, 0, H / 2, 0, W) - 0.75 * T) <= 1e-12 * T, "row band with both tables");
            CHECK(fabs(cost_band_s(m, l, 0, H / 4, H / 2, W / 2, W / 2) - 0.45 * T) <= 1e-12 * T,
                  "a box cut along both axes: %g of T", cost_band_s(m, l, 0, H / 4, H / 2, W / 2, W / 2) / T);
            /* version 8, only a row table: columns at their share of the work */
            double share = ovh + (T - ovh) / 2;
            CHECK(fabs(cost_band_s(mr, l, 0, 0, H, 0, W / 2) - share) <= 1e-12 * T, "v8 without a column table: %g s",
                  cost_band_s(mr, l, 0, 0, H, 0, W / 2));
            CHECK(fabs(cost_band_s(mo, l, 0, 0, H, 0, W / 2) - share) <= 1e-12 * T, "a table of another width is not used");
            /* version 7: the row table at the same share (H/2 rows: 0.75) */
            CHECK(fabs(cost_band_s(m7, l, 0, 0, H, 0, W / 2) - 0.75 * T) <= 1e-12 * T, "v7 reads the row table: %g of T",
                  cost_band_s(m7, l, 0, 0, H, 0, W / 2) / T);
            CHECK(fabs(cost_band_s(m0, l, 0, 0, H, 0, W / 2) - share) <= 1e-12 * T, "no tables");
            /* boxes cut along both axes: version 7 reads the row table at
             * the same share (H/2 x W/2: H/4 rows, 0.5); version 8 with a
             * row table only: 0.75 (rows) x 1/2 (columns at their share) */
            CHECK(fabs(cost_band_s(m7, l, 0, 0, H / 2, 0, W / 2) - 0.5 * T) <= 1e-12 * T, "v7 2-D box: %g of T",
                  cost_band_s(m7, l, 0, 0, H / 2, 0, W / 2) / T);
            CHECK(fabs(cost_band_s(mr, l, 0, 0, H / 2, 0, W / 2) - 0.375 * T) <= 1e-12 * T, "v8 rows-only 2-D box: %g of T",
                  cost_band_s(mr, l, 0, 0, H / 2, 0, W / 2) / T);
        }
        cost_free(m);
        cost_free(mr);
        cost_free(m7);
        cost_free(m0);
        cost_free(mo);
    }
    coeffs_free(c8);
    coeffs_free(r8);
    coeffs_free(r7);
    coeffs_free(p8);
    coeffs_free(o8);
    net_free(n);
    platform_free(pl);
}

/* A layer's corun factor ("corun", version 7): read, written, refused
 * below 1 or above COEFFS_CORUN_MAX, on a version-6 file, on "network/ *"
 * and in a kinds entry. */
static void test_corun_file(void)
{
    static const char *fmt =
        "{\"format\":\"dse-coefficients\",\"version\":%d,\"platforms\":[],"
        "\"networks\":[\"toy6\"],\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":"
        "{\"layers\":{\"toy6/%s\":{\"per_cycle\":{\"value\":2,\"source\":\"assumption\"}%s}}}}}";
    static const struct {
        int version;
        const char *layer, *extra, *want;
    } bad[] = {
        {6, "c1", ",\"corun\":{\"value\":1.3,\"source\":\"measured\"}", "needs format version 7"},
        {7, "*", ",\"corun\":{\"value\":1.3,\"source\":\"measured\"}", "measured per layer"},
        {7, "c1", ",\"corun\":{\"value\":0.8,\"source\":\"measured\"}", "must be from 1 to 10"},
        {7, "c1", ",\"corun\":{\"value\":11,\"source\":\"measured\"}", "must be from 1 to 10"},
        {7, "c1", ",\"corun\":{\"value\":\"x\",\"source\":\"measured\"}", "corun"},
    };
    char txt[1500];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(txt, sizeof txt, fmt, bad[i].version, bad[i].layer, bad[i].extra);
        cost_coeffs *c = coeffs_from_json(txt, "bad-corun", err);
        CHECK(!c && strstr(err, bad[i].want) && strstr(err, "bad-corun") && !strchr(err, '\n'),
              "bad corun %zu: %s", i, err);
        coeffs_free(c);
    }
    /* not in a kinds entry */
    cost_coeffs *c = coeffs_from_json(
        "{\"format\":\"dse-coefficients\",\"version\":7,\"platforms\":[],\"networks\":[],"
        "\"board\":\"b\",\"date\":\"d\",\"devices\":{\"cpu\":{\"kinds\":{\"FC\":{\"per_cycle\":"
        "{\"value\":2,\"source\":\"assumption\"},\"corun\":{\"value\":1.3,\"source\":\"measured\"}}}}}}",
        "kind-corun", err);
    CHECK(!c && strstr(err, "corun") && strstr(err, "kind-corun"), "corun in a kinds entry: %s", err);
    coeffs_free(c);
    snprintf(txt, sizeof txt, fmt, 7, "c1", ",\"corun\":{\"value\":1.25,\"source\":\"measured\",\"n\":10}");
    c = coeffs_from_json(txt, "good", err);
    CHECK(c != NULL, "%s", err);
    if (!c) return;
    const coeffs_rates *r = coeffs_find_layer(c, PLAT_CPU, "toy6", "c1");
    CHECK(r && coeffs_isset(&r->corun) && r->corun.value == 1.25 && r->corun.n == 10, "corun read");
    char *j = coeffs_to_json(c);
    cost_coeffs *c2 = j ? coeffs_from_json(j, "again", err) : NULL;
    const coeffs_rates *r2 = c2 ? coeffs_find_layer(c2, PLAT_CPU, "toy6", "c1") : NULL;
    CHECK(r2 && r2->corun.value == 1.25 && r2->corun.source == COEFFS_MEASURED && c2->version == 7,
          "corun round trip: %s", err);
    /* coeffs_check: a kind's corun */
    coeffs_dev(c, PLAT_CPU)->cls[NET_FC].corun = coeffs_given(1.2, COEFFS_MEASURED);
    CHECK(coeffs_check(c, err) == -1 && strstr(err, "belongs to a layer"), "kind corun: %s", err);
    free(j);
    coeffs_free(c2);
    coeffs_free(c);
    printf("ok: corun factors read, written and refused\n");
}

int main(void)
{
    test_band();
    test_colband();
    test_corun_file();
    test_curve();
    test_gap_versions();
    test_doc_example();
    test_arch();
    test_roundtrip();
    test_example();
    test_bad();
    scratch_cleanup();
    return check_done("test_coeffs");
}
