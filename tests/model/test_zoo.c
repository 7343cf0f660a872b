/* test_zoo.c -- the built-in networks against figures that do not come
 * from this program: the published torchvision parameter counts and MACs
 * (DESIGN section 3), the thesis' Table 4 layer list for alexnet-bvlc, and
 * per-layer MACs, parameters and shapes computed here by hand formula.
 */
#include "mcheck.h"
#include "net.h"

#include <stdlib.h>

/* Output size of a convolution or pooling window, by the textbook formula. */
static int out_size(int in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

/* Conv MACs and parameters: every output element costs cin/groups*k*k MACs. */
static long long conv_macs(int cout, int oh, int ow, int cin, int groups, int k)
{
    return (long long)cout * oh * ow * (cin / groups) * k * k;
}
static long long conv_params(int cout, int cin, int groups, int k, int bias)
{
    return (long long)cout * (cin / groups) * k * k + (bias ? cout : 0);
}

static net *zoo(const char *name)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo(name, err);
    if (!n) fprintf(stderr, "net_zoo(%s): %s\n", name, err);
    CHECK(n != NULL);
    return n;
}

static int count_kind(const net *n, net_kind k)
{
    int c = 0;
    for (int i = 0; i < n->n; i++) c += n->layers[i].kind == k;
    return c;
}

/* The shape feeding the single GlobalAveragePool layer: the last feature map. */
static net_shape before_gap(const net *n)
{
    for (int i = 0; i < n->n; i++)
        if (n->layers[i].kind == NET_GAP) return net_in_shape(n, i, 0);
    return (net_shape){0, 0, 0};
}

/* Thesis Table 4: the 24 layers of the Caffe AlexNet, in order. */
static void test_alexnet_bvlc(void)
{
    static const struct {
        const char *name;
        net_kind kind;
        int c, h, w;
    } t4[24] = {
        {"conv1", NET_CONV, 96, 55, 55},     {"relu1", NET_RELU, 96, 55, 55},
        {"norm1", NET_LRN, 96, 55, 55},      {"pool1", NET_MAXPOOL, 96, 27, 27},
        {"conv2", NET_CONV, 256, 27, 27},    {"relu2", NET_RELU, 256, 27, 27},
        {"norm2", NET_LRN, 256, 27, 27},     {"pool2", NET_MAXPOOL, 256, 13, 13},
        {"conv3", NET_CONV, 384, 13, 13},    {"relu3", NET_RELU, 384, 13, 13},
        {"conv4", NET_CONV, 384, 13, 13},    {"relu4", NET_RELU, 384, 13, 13},
        {"conv5", NET_CONV, 256, 13, 13},    {"relu5", NET_RELU, 256, 13, 13},
        {"pool5", NET_MAXPOOL, 256, 6, 6},   {"flatten", NET_FLATTEN, 9216, 1, 1},
        {"fc6", NET_FC, 4096, 1, 1},         {"relu6", NET_RELU, 4096, 1, 1},
        {"drop6", NET_DROPOUT, 4096, 1, 1},  {"fc7", NET_FC, 4096, 1, 1},
        {"relu7", NET_RELU, 4096, 1, 1},     {"drop7", NET_DROPOUT, 4096, 1, 1},
        {"fc8", NET_FC, 1000, 1, 1},         {"prob", NET_SOFTMAX, 1000, 1, 1},
    };
    net *n = zoo("alexnet-bvlc");
    if (!n) return;
    CHECK_I64(n->n, 24);
    CHECK_I64(n->input.c, 3);
    CHECK_I64(n->input.h, 227);
    CHECK_I64(n->input.w, 227);
    for (int i = 0; i < 24 && i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        CHECK_STR(L->name, t4[i].name);
        CHECK_STR(net_kind_name(L->kind), net_kind_name(t4[i].kind));
        CHECK_SHAPE(n, t4[i].name, t4[i].c, t4[i].h, t4[i].w);
        CHECK_I64(L->nin, 1);
        CHECK_I64(L->in[0], i - 1); /* a chain: conv1 reads the input (-1) */
        CHECK_I64(net_kind_splittable(L->kind), t4[i].kind == NET_CONV || t4[i].kind == NET_FC);
    }
    /* The spatial sizes by formula, from 227: conv1 k11 s4 -> 55, pool
     * k3 s2 -> 27, conv2 k5 p2 -> 27, pool -> 13, conv3-5 k3 p1 -> 13,
     * pool5 -> 6. */
    int h1 = out_size(227, 11, 4, 0), p1 = out_size(h1, 3, 2, 0), h2 = out_size(p1, 5, 1, 2),
        p2 = out_size(h2, 3, 2, 0), h3 = out_size(p2, 3, 1, 1), p5 = out_size(h3, 3, 2, 0);
    CHECK_I64(h1, 55);
    CHECK_I64(p1, 27);
    CHECK_I64(p2, 13);
    CHECK_I64(p5, 6);
    /* Caffe's two towers: conv2, conv4, conv5 have groups 2. */
    const long long macs[8] = {
        conv_macs(96, h1, h1, 3, 1, 11),   conv_macs(256, h2, h2, 96, 2, 5),
        conv_macs(384, h3, h3, 256, 1, 3), conv_macs(384, h3, h3, 384, 2, 3),
        conv_macs(256, h3, h3, 384, 2, 3), 256LL * p5 * p5 * 4096,
        4096LL * 4096,                     4096LL * 1000,
    };
    const long long params[8] = {
        conv_params(96, 3, 1, 11, 1),  conv_params(256, 96, 2, 5, 1),
        conv_params(384, 256, 1, 3, 1), conv_params(384, 384, 2, 3, 1),
        conv_params(256, 384, 2, 3, 1), 9216LL * 4096 + 4096,
        4096LL * 4096 + 4096,          4096LL * 1000 + 1000,
    };
    static const char *split[8] = {"conv1", "conv2", "conv3", "conv4",
                                   "conv5", "fc6",   "fc7",   "fc8"};
    long long sm = 0, sp = 0;
    for (int k = 0; k < 8; k++) {
        int i = net_find(n, split[k]);
        CHECK(i >= 0);
        if (i < 0) continue;
        CHECK_I64(n->layers[i].macs, macs[k]);
        CHECK_I64(n->layers[i].params, params[k]);
        sm += macs[k];
        sp += params[k];
    }
    CHECK_I64(sm, 724406816LL); /* the hand sums agree with the figures */
    CHECK_I64(sp, 60965224LL);
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.macs, 724406816LL);
    CHECK_I64(t.params, 60965224LL);
    CHECK_I64(t.nsplittable, 8);
    CHECK_I64(net_total(n, 1 << NET_FC).nsplittable, 3);
    CHECK_I64(net_total(n, 1 << NET_CONV).nsplittable, 5);
    /* Non-compute layers cost one op per output element. */
    int relu1 = net_find(n, "relu1"), prob = net_find(n, "prob");
    CHECK_I64(n->layers[relu1].ops, 96LL * 55 * 55);
    CHECK_I64(n->layers[relu1].macs, 0);
    CHECK_I64(n->layers[prob].ops, 1000);
    CHECK_I64(n->layers[0].ops, 0);
    net_free(n);
}

/* torchvision AlexNet: everything by hand formula, and the published figures. */
static void test_alexnet(void)
{
    net *n = zoo("alexnet");
    if (!n) return;
    int h1 = out_size(224, 11, 4, 2), p1 = out_size(h1, 3, 2, 0), p2 = out_size(p1, 3, 2, 0),
        p5 = out_size(p2, 3, 2, 0);
    CHECK_I64(h1, 55);
    CHECK_I64(p5, 6);
    long long macs = conv_macs(64, h1, h1, 3, 1, 11) + conv_macs(192, p1, p1, 64, 1, 5) +
                     conv_macs(384, p2, p2, 192, 1, 3) + conv_macs(256, p2, p2, 384, 1, 3) +
                     conv_macs(256, p2, p2, 256, 1, 3) + 9216LL * 4096 + 4096LL * 4096 +
                     4096LL * 1000;
    long long params = conv_params(64, 3, 1, 11, 1) + conv_params(192, 64, 1, 5, 1) +
                       conv_params(384, 192, 1, 3, 1) + conv_params(256, 384, 1, 3, 1) +
                       conv_params(256, 256, 1, 3, 1) + 9216LL * 4096 + 4096 +
                       4096LL * 4096 + 4096 + 4096LL * 1000 + 1000;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.macs, macs);
    CHECK_I64(t.params, params);
    CHECK_I64(t.params, 61100840LL);
    CHECK_REL(t.macs, 0.714e9, 0.005);
    CHECK_I64(t.nsplittable, 8);
    CHECK_SHAPE(n, "pool5", 256, 6, 6);
    net_free(n);
}

/* VGG-16 configuration D, summed by formula over its 13 convs and 3 FCs. */
static void test_vgg16(void)
{
    static const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                              512, 512, 512, 0, 512, 512, 512, 0};
    net *n = zoo("vgg16");
    if (!n) return;
    long long macs = 0, params = 0;
    int c = 3, s = 224;
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        if (!cfg[i]) {
            s /= 2;
            continue;
        }
        macs += conv_macs(cfg[i], s, s, c, 1, 3);
        params += conv_params(cfg[i], c, 1, 3, 1);
        c = cfg[i];
    }
    CHECK_I64(s, 7);
    macs += 512LL * 7 * 7 * 4096 + 4096LL * 4096 + 4096LL * 1000;
    params += 512LL * 7 * 7 * 4096 + 4096 + 4096LL * 4096 + 4096 + 4096LL * 1000 + 1000;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.macs, macs);
    CHECK_I64(t.params, params);
    CHECK_I64(t.params, 138357544LL);
    CHECK_REL(t.macs, 15.47e9, 0.005);
    CHECK_I64(t.nsplittable, 16);
    CHECK_SHAPE(n, "pool5", 512, 7, 7);
    CHECK_SHAPE(n, "conv1_1", 64, 224, 224);
    net_free(n);
}

static void test_resnet50(void)
{
    net *n = zoo("resnet50");
    if (!n) return;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.params, 25557032LL);
    CHECK_REL(t.macs, 4.089e9, 0.005);
    /* 49 convs of the 16 bottlenecks and stem + 4 downsample convs, 1 FC. */
    CHECK_I64(count_kind(n, NET_CONV), 53);
    CHECK_I64(count_kind(n, NET_FC), 1);
    CHECK_I64(count_kind(n, NET_ADD), 16);
    CHECK_I64(t.nsplittable, 54);
    net_shape f = before_gap(n);
    CHECK(f.c == 2048 && f.h == 7 && f.w == 7);
    CHECK_SHAPE(n, "stem_conv", 64, 112, 112);
    CHECK_SHAPE(n, "stem_pool", 64, 56, 56);
    CHECK_SHAPE(n, "l1_b0_add", 256, 56, 56);
    CHECK_SHAPE(n, "l2_b0_add", 512, 28, 28);
    CHECK_SHAPE(n, "l3_b0_add", 1024, 14, 14);
    CHECK_SHAPE(n, "fc", 1000, 1, 1);
    /* v1.5: the stride sits on the 3x3 conv, the 1x1 before it keeps 56x56. */
    CHECK_SHAPE(n, "l2_b0_a_conv", 128, 56, 56);
    CHECK_SHAPE(n, "l2_b0_b_conv", 128, 28, 28);
    net_free(n);
}

static void test_densenet121(void)
{
    net *n = zoo("densenet121");
    if (!n) return;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.params, 7978856LL);
    CHECK_REL(t.macs, 2.834e9, 0.005);
    /* 121 = stem conv + 2 x 58 dense-layer convs + 3 transition convs + FC. */
    CHECK_I64(count_kind(n, NET_CONV), 120);
    CHECK_I64(t.nsplittable, 121);
    net_shape f = before_gap(n);
    CHECK(f.c == 1024 && f.h == 7 && f.w == 7);
    CHECK_SHAPE(n, "pool0", 64, 56, 56);
    CHECK_SHAPE(n, "b1_out", 64 + 6 * 32, 56, 56);
    CHECK_SHAPE(n, "t1_pool", 128, 28, 28);
    CHECK_SHAPE(n, "b2_out", 128 + 12 * 32, 28, 28);
    CHECK_SHAPE(n, "b3_out", 256 + 24 * 32, 14, 14);
    CHECK_SHAPE(n, "b4_out", 512 + 16 * 32, 7, 7);
    net_free(n);
}

static void test_mobilenetv2(void)
{
    net *n = zoo("mobilenetv2");
    if (!n) return;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.params, 3504872LL);
    CHECK_REL(t.macs, 0.301e9, 0.01);
    /* stem + 17 inverted residuals (the first without expansion) + last conv. */
    CHECK_I64(count_kind(n, NET_CONV), 1 + 2 + 16 * 3 + 1);
    CHECK_I64(count_kind(n, NET_ADD), 10);
    net_shape f = net_in_shape(n, net_find(n, "gap"), 0);
    CHECK(f.c == 1280 && f.h == 7 && f.w == 7);
    /* ReLU6 is a clipped ReLU. */
    int r = net_find(n, "stem_relu");
    CHECK(r >= 0 && n->layers[r].a.relu_max == 6.0);
    net_free(n);
}

/* PyTorch's own figures for torchvision 0.14's mobilenet_v3_large and
 * efficientnet_b0 (weights=None): sum of parameter sizes, and MACs by
 * forward hooks on every Conv2d and Linear (tests/torch/tvzoo.py). */
static void test_mobilenet_v3_large(void)
{
    net *n = zoo("mobilenet_v3_large");
    if (!n) return;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.params, 5483032LL);
    CHECK_I64(t.macs, 216589760LL);
    /* stem, 14 expansions, 15 depthwise, 8 squeeze-excitations of two
     * 1x1 convs, 15 projections, the last conv; two FC. */
    CHECK_I64(count_kind(n, NET_CONV), 1 + 14 + 15 + 2 * 8 + 15 + 1);
    CHECK_I64(count_kind(n, NET_FC), 2);
    CHECK_I64(count_kind(n, NET_ADD), 10);
    CHECK_I64(count_kind(n, NET_HSIGMOID), 8);
    /* stem, expansion and depthwise of the 9 HardSwish blocks, last conv, fc1 */
    CHECK_I64(count_kind(n, NET_HSWISH), 1 + 2 * 9 + 1 + 1);
    net_shape f = net_in_shape(n, net_find(n, "gap"), 0); /* the head's, not an SE's */
    CHECK(f.c == 960 && f.h == 7 && f.w == 7);
    /* The gate is PyTorch's hardsigmoid, relu6(x + 3) / 6; SE squeezes to
     * make_divisible(C / 4, 8): 72 -> 24 channels. */
    int g = net_find(n, "b3_se_gate"), s = net_find(n, "b3_se_fc1");
    CHECK(g >= 0 && (float)n->layers[g].a.hs_alpha == (float)(1 / 6.0) && n->layers[g].a.hs_beta == 0.5);
    CHECK(s >= 0 && n->layers[s].out.c == 24);
    net_free(n);
}

static void test_efficientnet_b0(void)
{
    net *n = zoo("efficientnet_b0");
    if (!n) return;
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.params, 5288548LL);
    CHECK_I64(t.macs, 385814752LL);
    /* 16 MBConv blocks: stem, 15 expansions, 16 depthwise, 16 SE (two
     * convs each), 16 projections, the last conv. */
    CHECK_I64(count_kind(n, NET_CONV), 1 + 15 + 16 + 2 * 16 + 16 + 1);
    CHECK_I64(count_kind(n, NET_ADD), 9);
    /* SiLU x sigmoid(x) after stem, expansions, depthwise, SE, last (49),
     * plus the 16 SE gates: a Sigmoid each, a Mul each for SiLU and scale. */
    CHECK_I64(count_kind(n, NET_SIGMOID), 49 + 16);
    CHECK_I64(count_kind(n, NET_MUL), 49 + 16);
    net_shape f = net_in_shape(n, net_find(n, "gap"), 0);
    CHECK(f.c == 1280 && f.h == 7 && f.w == 7);
    /* SE squeezes to the block's input channels / 4: 16 -> 4 in block 1. */
    int s = net_find(n, "b1_se_fc1");
    CHECK(s >= 0 && n->layers[s].out.c == 4);
    net_free(n);
}

static void test_toy6(void)
{
    static const net_kind kinds[6] = {NET_CONV, NET_RELU, NET_MAXPOOL,
                                      NET_FLATTEN, NET_FC, NET_SOFTMAX};
    net *n = zoo("toy6");
    if (!n) return;
    CHECK_I64(n->n, 6);
    for (int i = 0; i < 6 && i < n->n; i++) CHECK_I64(n->layers[i].kind, kinds[i]);
    /* 3x16x16 -> conv 20 3x3 pad 1 -> 20x16x16 -> pool 2 -> 20x8x8 -> 1280 -> 10. */
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.macs, conv_macs(20, 16, 16, 3, 1, 3) + 1280LL * 10);
    CHECK_I64(t.params, conv_params(20, 3, 1, 3, 1) + 1280LL * 10 + 10);
    CHECK_I64(t.nsplittable, 2);
    CHECK_SHAPE(n, "pool", 20, 8, 8);
    CHECK_SHAPE(n, "flatten", 1280, 1, 1);
    CHECK_SHAPE(n, "softmax", 10, 1, 1);
    net_free(n);
}

static void test_branchy(void)
{
    net *n = zoo("branchy");
    if (!n) return;
    CHECK_I64(count_kind(n, NET_ADD), 1);
    CHECK_I64(count_kind(n, NET_CONCAT), 1);
    CHECK_SHAPE(n, "add", 8, 16, 16);
    CHECK_SHAPE(n, "cat", 16, 16, 16);
    CHECK_SHAPE(n, "head", 16, 8, 8);
    /* stem_relu feeds three branches; the net has one output, the last layer. */
    int sr = net_find(n, "stem_relu");
    CHECK_I64(net_ncons(n, sr), 3);
    CHECK_I64(net_ncons(n, net_output(n)), 0);
    CHECK_STR(n->layers[net_output(n)].name, "softmax");
    for (int i = 0; i < n->n; i++)
        for (int k = 0; k < n->layers[i].nin; k++) CHECK(n->layers[i].in[k] < i);
    net_free(n);
}

static void test_names(void)
{
    static const char *want[] = {"alexnet",     "alexnet-bvlc", "vgg16", "resnet50",
                                 "densenet121", "mobilenetv2",  "toy6",  "branchy",
                                 "mobilenet_v3_large", "efficientnet_b0"};
    char err[BASE_ERRLEN];
    CHECK_I64(net_zoo_count(), 10);
    for (int k = 0; k < 10; k++) {
        int found = 0;
        for (int i = 0; i < net_zoo_count(); i++)
            if (!strcmp(net_zoo_name(i), want[k])) found = 1;
        CHECK(found);
    }
    for (int i = 0; i < net_zoo_count(); i++) {
        net *n = net_zoo(net_zoo_name(i), err);
        CHECK(n && !strcmp(n->name, net_zoo_name(i)));
        CHECK(net_zoo_describe(i)[0] != 0);
        /* The invariant of net.h on every zoo network. */
        int sinks = 0;
        for (int l = 0; n && l < n->n; l++) {
            const net_layer *L = &n->layers[l];
            CHECK(L->out.c > 0 && L->out.h > 0 && L->out.w > 0);
            for (int k = 0; k < L->nin; k++) CHECK(L->in[k] < l);
            sinks += net_ncons(n, l) == 0;
        }
        CHECK_I64(sinks, 1);
        net_free(n);
    }
    CHECK(net_zoo("lenet", err) == NULL);
    CHECK_HAS(err, "lenet");
    net *n = net_open("toy6", err);
    CHECK(n != NULL);
    net_free(n);
    CHECK(net_open("no-such-net", err) == NULL);
    CHECK_HAS(err, "no-such-net");
}

int main(void)
{
    test_alexnet_bvlc();
    test_alexnet();
    test_vgg16();
    test_resnet50();
    test_densenet121();
    test_mobilenetv2();
    test_mobilenet_v3_large();
    test_efficientnet_b0();
    test_toy6();
    test_branchy();
    test_names();
    return check_done("test_zoo");
}
