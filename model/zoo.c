/* zoo.c -- the built-in networks, written as torchvision (and BVLC Caffe)
 * define them, so that their parameter and MAC counts match the published
 * figures (tests/model/test_zoo.c asserts them).
 *
 * The builder keeps the name of the last layer so that sequential parts
 * read like the reference definitions; any build error is a bug here, so
 * it is reported through err and the net is discarded.
 */
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    net *n;
    char last[64];
    int failed;
    char *err;
} zb;

static void zb_add(zb *b, const char *name, net_kind k, const net_attr *a, int nin,
                   const char *const *in)
{
    if (b->failed) return;
    if (net_add(b->n, name, k, a, nin, in, b->err) < 0) b->failed = 1;
    snprintf(b->last, sizeof b->last, "%.63s", name);
}

/* Single-input layer fed by the previous one. */
static void seq(zb *b, const char *name, net_kind k, const net_attr *a)
{
    char prev[64];
    const char *in[1] = {prev};
    snprintf(prev, sizeof prev, "%s", b->last);
    zb_add(b, name, k, a, 1, in);
}

static void from(zb *b, const char *name, net_kind k, const net_attr *a, const char *src)
{
    const char *in[1] = {src};
    zb_add(b, name, k, a, 1, in);
}

static net_attr fc_a(int out)
{
    net_attr a = net_attr_default(NET_FC);
    a.out_c = out;
    return a;
}

static void conv(zb *b, const char *name, int out, int k, int s, int p, int groups, int bias)
{
    net_attr a = net_attr_conv(out, k, s, p, groups, bias);
    seq(b, name, NET_CONV, &a);
}

static void simple(zb *b, const char *name, net_kind k)
{
    net_attr a = net_attr_default(k);
    seq(b, name, k, &a);
}

static void pool(zb *b, const char *name, net_kind kind, int k, int s, int p)
{
    net_attr a = net_attr_pool(kind, k, s, p);
    seq(b, name, kind, &a);
}

static void fc(zb *b, const char *name, int out)
{
    net_attr a = fc_a(out);
    seq(b, name, NET_FC, &a);
}

static void relu6(zb *b, const char *name)
{
    net_attr a = net_attr_default(NET_RELU);
    a.relu_max = 6.0;
    seq(b, name, NET_RELU, &a);
}

static net *zb_done(zb *b)
{
    if (!b->failed && net_finalize(b->n, b->n->name, b->err) == 0) return b->n;
    net_free(b->n);
    return NULL;
}

static void zb_init(zb *b, const char *name, int c, int h, int w, char *err)
{
    b->n = net_new(name, "data", (net_shape){c, h, w});
    snprintf(b->last, sizeof b->last, "data");
    b->failed = 0;
    b->err = err;
}

/* ---- AlexNet, torchvision (one-tower, 224x224) ---- */
static net *build_alexnet(char *err)
{
    zb b;
    zb_init(&b, "alexnet", 3, 224, 224, err);
    conv(&b, "conv1", 64, 11, 4, 2, 1, 1);
    simple(&b, "relu1", NET_RELU);
    pool(&b, "pool1", NET_MAXPOOL, 3, 2, 0);
    conv(&b, "conv2", 192, 5, 1, 2, 1, 1);
    simple(&b, "relu2", NET_RELU);
    pool(&b, "pool2", NET_MAXPOOL, 3, 2, 0);
    conv(&b, "conv3", 384, 3, 1, 1, 1, 1);
    simple(&b, "relu3", NET_RELU);
    conv(&b, "conv4", 256, 3, 1, 1, 1, 1);
    simple(&b, "relu4", NET_RELU);
    conv(&b, "conv5", 256, 3, 1, 1, 1, 1);
    simple(&b, "relu5", NET_RELU);
    pool(&b, "pool5", NET_MAXPOOL, 3, 2, 0);
    /* AdaptiveAvgPool2d((6, 6)) is the identity on a 6x6 map. */
    simple(&b, "flatten", NET_FLATTEN);
    simple(&b, "drop6", NET_DROPOUT);
    fc(&b, "fc6", 4096);
    simple(&b, "relu6", NET_RELU);
    simple(&b, "drop7", NET_DROPOUT);
    fc(&b, "fc7", 4096);
    simple(&b, "relu7", NET_RELU);
    fc(&b, "fc8", 1000);
    return zb_done(&b);
}

/* ---- AlexNet as BVLC Caffe ships it (227x227, LRN, two towers) ---- */
static net *build_alexnet_bvlc(char *err)
{
    zb b;
    zb_init(&b, "alexnet-bvlc", 3, 227, 227, err);
    conv(&b, "conv1", 96, 11, 4, 0, 1, 1);
    simple(&b, "relu1", NET_RELU);
    simple(&b, "norm1", NET_LRN);
    pool(&b, "pool1", NET_MAXPOOL, 3, 2, 0);
    conv(&b, "conv2", 256, 5, 1, 2, 2, 1);
    simple(&b, "relu2", NET_RELU);
    simple(&b, "norm2", NET_LRN);
    pool(&b, "pool2", NET_MAXPOOL, 3, 2, 0);
    conv(&b, "conv3", 384, 3, 1, 1, 1, 1);
    simple(&b, "relu3", NET_RELU);
    conv(&b, "conv4", 384, 3, 1, 1, 2, 1);
    simple(&b, "relu4", NET_RELU);
    conv(&b, "conv5", 256, 3, 1, 1, 2, 1);
    simple(&b, "relu5", NET_RELU);
    pool(&b, "pool5", NET_MAXPOOL, 3, 2, 0);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc6", 4096);
    simple(&b, "relu6", NET_RELU);
    simple(&b, "drop6", NET_DROPOUT);
    fc(&b, "fc7", 4096);
    simple(&b, "relu7", NET_RELU);
    simple(&b, "drop7", NET_DROPOUT);
    fc(&b, "fc8", 1000);
    simple(&b, "prob", NET_SOFTMAX);
    return zb_done(&b);
}

/* ---- VGG-16 (configuration D) ---- */
static net *build_vgg16(char *err)
{
    static const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                              512, 512, 512, 0, 512, 512, 512, 0};
    zb b;
    char name[64];
    int stage = 1, idx = 1;
    zb_init(&b, "vgg16", 3, 224, 224, err);
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        if (cfg[i] == 0) {
            snprintf(name, sizeof name, "pool%d", stage);
            pool(&b, name, NET_MAXPOOL, 2, 2, 0);
            stage++, idx = 1;
            continue;
        }
        snprintf(name, sizeof name, "conv%d_%d", stage, idx);
        conv(&b, name, cfg[i], 3, 1, 1, 1, 1);
        snprintf(name, sizeof name, "relu%d_%d", stage, idx++);
        simple(&b, name, NET_RELU);
    }
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc6", 4096);
    simple(&b, "relu6", NET_RELU);
    simple(&b, "drop6", NET_DROPOUT);
    fc(&b, "fc7", 4096);
    simple(&b, "relu7", NET_RELU);
    simple(&b, "drop7", NET_DROPOUT);
    fc(&b, "fc8", 1000);
    return zb_done(&b);
}

/* conv (no bias) + BatchNorm [+ ReLU], the unit of ResNet and DenseNet. */
static void conv_bn(zb *b, const char *pfx, int out, int k, int s, int p, int relu)
{
    char name[64];
    snprintf(name, sizeof name, "%s_conv", pfx);
    conv(b, name, out, k, s, p, 1, 0);
    snprintf(name, sizeof name, "%s_bn", pfx);
    simple(b, name, NET_BN);
    if (relu) {
        snprintf(name, sizeof name, "%s_relu", pfx);
        simple(b, name, NET_RELU);
    }
}

/* ---- ResNet-50 v1.5 (stride on the 3x3 conv) ---- */
static net *build_resnet50(char *err)
{
    static const int blocks[4] = {3, 4, 6, 3};
    zb b;
    char pfx[48], name[64], in[64], sc[64];
    int inplanes = 64;
    zb_init(&b, "resnet50", 3, 224, 224, err);
    conv_bn(&b, "stem", 64, 7, 2, 3, 1);
    pool(&b, "stem_pool", NET_MAXPOOL, 3, 2, 1);
    for (int s = 0; s < 4; s++) {
        int planes = 64 << s;
        for (int k = 0; k < blocks[s]; k++) {
            int stride = (k == 0 && s > 0) ? 2 : 1;
            snprintf(in, sizeof in, "%s", b.last);
            snprintf(pfx, sizeof pfx, "l%d_b%d_a", s + 1, k);
            conv_bn(&b, pfx, planes, 1, 1, 0, 1);
            snprintf(pfx, sizeof pfx, "l%d_b%d_b", s + 1, k);
            conv_bn(&b, pfx, planes, 3, stride, 1, 1);
            snprintf(pfx, sizeof pfx, "l%d_b%d_c", s + 1, k);
            conv_bn(&b, pfx, planes * 4, 1, 1, 0, 0);
            char body[64];
            snprintf(body, sizeof body, "%s", b.last);
            if (k == 0) {
                net_attr a = net_attr_conv(planes * 4, 1, stride, 0, 1, 0);
                snprintf(name, sizeof name, "l%d_b%d_down_conv", s + 1, k);
                from(&b, name, NET_CONV, &a, in);
                snprintf(name, sizeof name, "l%d_b%d_down_bn", s + 1, k);
                simple(&b, name, NET_BN);
                snprintf(sc, sizeof sc, "%s", b.last);
            } else {
                snprintf(sc, sizeof sc, "%s", in);
            }
            const char *ins[2] = {body, sc};
            snprintf(name, sizeof name, "l%d_b%d_add", s + 1, k);
            zb_add(&b, name, NET_ADD, NULL, 2, ins);
            snprintf(name, sizeof name, "l%d_b%d_relu", s + 1, k);
            simple(&b, name, NET_RELU);
            inplanes = planes * 4;
        }
    }
    (void)inplanes;
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc", 1000);
    return zb_done(&b);
}

/* ---- DenseNet-121 (growth 32, blocks 6-12-24-16, bn_size 4) ---- */
static net *build_densenet121(char *err)
{
    static const int cfg[4] = {6, 12, 24, 16};
    enum { MAXF = 64 };
    zb b;
    char name[64], pfx[48];
    char feats[MAXF][64];
    int nf = 64;
    zb_init(&b, "densenet121", 3, 224, 224, err);
    conv(&b, "conv0", 64, 7, 2, 3, 1, 0);
    simple(&b, "norm0", NET_BN);
    simple(&b, "relu0", NET_RELU);
    pool(&b, "pool0", NET_MAXPOOL, 3, 2, 1);
    for (int s = 0; s < 4; s++) {
        int nfeat = 0;
        snprintf(feats[nfeat++], 64, "%s", b.last);
        for (int k = 0; k < cfg[s]; k++) {
            if (nfeat > 1) {
                const char *ins[MAXF];
                for (int i = 0; i < nfeat; i++) ins[i] = feats[i];
                snprintf(name, sizeof name, "b%d_l%d_cat", s + 1, k + 1);
                zb_add(&b, name, NET_CONCAT, NULL, nfeat, ins);
            }
            snprintf(pfx, sizeof pfx, "b%d_l%d", s + 1, k + 1);
            snprintf(name, sizeof name, "%s_norm1", pfx);
            simple(&b, name, NET_BN);
            snprintf(name, sizeof name, "%s_relu1", pfx);
            simple(&b, name, NET_RELU);
            snprintf(name, sizeof name, "%s_conv1", pfx);
            conv(&b, name, 4 * 32, 1, 1, 0, 1, 0);
            snprintf(name, sizeof name, "%s_norm2", pfx);
            simple(&b, name, NET_BN);
            snprintf(name, sizeof name, "%s_relu2", pfx);
            simple(&b, name, NET_RELU);
            snprintf(name, sizeof name, "%s_conv2", pfx);
            conv(&b, name, 32, 3, 1, 1, 1, 0);
            snprintf(feats[nfeat++], 64, "%s", b.last);
        }
        const char *ins[MAXF];
        for (int i = 0; i < nfeat; i++) ins[i] = feats[i];
        snprintf(name, sizeof name, "b%d_out", s + 1);
        zb_add(&b, name, NET_CONCAT, NULL, nfeat, ins);
        nf += cfg[s] * 32;
        if (s < 3) {
            snprintf(name, sizeof name, "t%d_norm", s + 1);
            simple(&b, name, NET_BN);
            snprintf(name, sizeof name, "t%d_relu", s + 1);
            simple(&b, name, NET_RELU);
            nf /= 2;
            snprintf(name, sizeof name, "t%d_conv", s + 1);
            conv(&b, name, nf, 1, 1, 0, 1, 0);
            snprintf(name, sizeof name, "t%d_pool", s + 1);
            pool(&b, name, NET_AVGPOOL, 2, 2, 0);
        }
    }
    simple(&b, "norm5", NET_BN);
    simple(&b, "relu5", NET_RELU);
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "classifier", 1000);
    return zb_done(&b);
}

/* ---- MobileNetV2 (width 1.0) ---- */
static net *build_mobilenetv2(char *err)
{
    static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    zb b;
    char name[64], in[64];
    int inp = 32, blk = 0;
    zb_init(&b, "mobilenetv2", 3, 224, 224, err);
    conv(&b, "stem_conv", 32, 3, 2, 1, 1, 0);
    simple(&b, "stem_bn", NET_BN);
    relu6(&b, "stem_relu");
    for (int g = 0; g < 7; g++) {
        int t = cfg[g][0], c = cfg[g][1];
        for (int r = 0; r < cfg[g][2]; r++, blk++) {
            int s = r == 0 ? cfg[g][3] : 1, hidden = inp * t;
            snprintf(in, sizeof in, "%s", b.last);
            if (t != 1) {
                snprintf(name, sizeof name, "ir%d_expand", blk);
                conv(&b, name, hidden, 1, 1, 0, 1, 0);
                snprintf(name, sizeof name, "ir%d_expand_bn", blk);
                simple(&b, name, NET_BN);
                snprintf(name, sizeof name, "ir%d_expand_relu", blk);
                relu6(&b, name);
            }
            snprintf(name, sizeof name, "ir%d_dw", blk);
            conv(&b, name, hidden, 3, s, 1, hidden, 0);
            snprintf(name, sizeof name, "ir%d_dw_bn", blk);
            simple(&b, name, NET_BN);
            snprintf(name, sizeof name, "ir%d_dw_relu", blk);
            relu6(&b, name);
            snprintf(name, sizeof name, "ir%d_project", blk);
            conv(&b, name, c, 1, 1, 0, 1, 0);
            snprintf(name, sizeof name, "ir%d_project_bn", blk);
            simple(&b, name, NET_BN);
            if (s == 1 && inp == c) {
                char body[64];
                snprintf(body, sizeof body, "%s", b.last);
                const char *ins[2] = {body, in};
                snprintf(name, sizeof name, "ir%d_add", blk);
                zb_add(&b, name, NET_ADD, NULL, 2, ins);
            }
            inp = c;
        }
    }
    conv(&b, "last_conv", 1280, 1, 1, 0, 1, 0);
    simple(&b, "last_bn", NET_BN);
    relu6(&b, "last_relu");
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    simple(&b, "dropout", NET_DROPOUT);
    fc(&b, "classifier", 1000);
    return zb_done(&b);
}

/* torchvision's _make_divisible(v, 8): channels rounded to a multiple of
 * 8, never more than 10% down. */
static int divisible8(double v)
{
    int n = (int)(v + 4) / 8 * 8;
    if (n < 8) n = 8;
    if (n < 0.9 * v) n += 8;
    return n;
}

/* The activations of the mobile networks, each after a BatchNorm: ReLU,
 * HardSwish, or SiLU (x * sigmoid(x), two layers). */
enum { ACT_RELU, ACT_HSWISH, ACT_SILU };
static void act(zb *b, const char *name, int kind)
{
    if (kind == ACT_RELU) {
        simple(b, name, NET_RELU);
    } else if (kind == ACT_HSWISH) {
        simple(b, name, NET_HSWISH);
    } else {
        char x[64], sig[96];
        snprintf(x, sizeof x, "%s", b->last);
        snprintf(sig, sizeof sig, "%.80s_sigmoid", name);
        simple(b, sig, NET_SIGMOID);
        const char *ins[2] = {x, sig};
        zb_add(b, name, NET_MUL, NULL, 2, ins);
    }
}

/* Conv (no bias) + BatchNorm + activation (act < 0: none), named pre_*. */
static void conv_bn_act(zb *b, const char *pre, int out, int k, int s, int groups, int a)
{
    char name[96];
    snprintf(name, sizeof name, "%s", pre);
    conv(b, name, out, k, s, (k - 1) / 2, groups, 0);
    snprintf(name, sizeof name, "%.80s_bn", pre);
    simple(b, name, NET_BN);
    if (a >= 0) {
        snprintf(name, sizeof name, "%.80s_act", pre);
        act(b, name, a);
    }
}

/* Squeeze-excitation (torchvision's SqueezeExcitation): global average,
 * 1x1 Conv to sq channels, activation, 1x1 Conv back, gate (HardSigmoid or
 * Sigmoid), and the block's tensor scaled by the gate per channel. */
static void squeeze_excite(zb *b, const char *pre, int c, int sq, int a, int hard_gate)
{
    char x[64], name[96];
    snprintf(x, sizeof x, "%s", b->last);
    snprintf(name, sizeof name, "%.80s_pool", pre);
    simple(b, name, NET_GAP);
    snprintf(name, sizeof name, "%.80s_fc1", pre);
    conv(b, name, sq, 1, 1, 0, 1, 1);
    snprintf(name, sizeof name, "%.80s_act", pre);
    act(b, name, a);
    snprintf(name, sizeof name, "%.80s_fc2", pre);
    conv(b, name, c, 1, 1, 0, 1, 1);
    snprintf(name, sizeof name, "%.80s_gate", pre);
    if (hard_gate) {
        net_attr h = net_attr_default(NET_HSIGMOID);
        /* PyTorch's hardsigmoid, relu6(x + 3) / 6: alpha 1/6 as float32
         * holds it (ONNX's attribute, the kernel's arithmetic), written
         * shortest so that an ONNX round trip gives the same net. */
        h.hs_alpha = 0.16666667;
        seq(b, name, NET_HSIGMOID, &h);
    } else {
        simple(b, name, NET_SIGMOID);
    }
    char gate[64];
    snprintf(gate, sizeof gate, "%s", b->last);
    const char *ins[2] = {x, gate};
    snprintf(name, sizeof name, "%.80s_scale", pre);
    zb_add(b, name, NET_MUL, NULL, 2, ins);
}

/* The residual Add of a block whose input was `in`. */
static void residual(zb *b, const char *name, const char *in)
{
    char body[64];
    snprintf(body, sizeof body, "%s", b->last);
    const char *ins[2] = {body, in};
    zb_add(b, name, NET_ADD, NULL, 2, ins);
}

/* ---- MobileNetV3-Large, torchvision (width 1.0) ---- */
static net *build_mobilenet_v3_large(char *err)
{
    /* input, kernel, expanded, output, SE, HardSwish, stride */
    static const int cfg[15][7] = {
        {16, 3, 16, 16, 0, 0, 1},    {16, 3, 64, 24, 0, 0, 2},    {24, 3, 72, 24, 0, 0, 1},
        {24, 5, 72, 40, 1, 0, 2},    {40, 5, 120, 40, 1, 0, 1},   {40, 5, 120, 40, 1, 0, 1},
        {40, 3, 240, 80, 0, 1, 2},   {80, 3, 200, 80, 0, 1, 1},   {80, 3, 184, 80, 0, 1, 1},
        {80, 3, 184, 80, 0, 1, 1},   {80, 3, 480, 112, 1, 1, 1},  {112, 3, 672, 112, 1, 1, 1},
        {112, 5, 672, 160, 1, 1, 2}, {160, 5, 960, 160, 1, 1, 1}, {160, 5, 960, 160, 1, 1, 1}};
    zb b;
    char pre[64], in[64];
    zb_init(&b, "mobilenet_v3_large", 3, 224, 224, err);
    conv_bn_act(&b, "stem", 16, 3, 2, 1, ACT_HSWISH);
    for (int i = 0; i < 15; i++) {
        const int *c = cfg[i];
        int a = c[5] ? ACT_HSWISH : ACT_RELU;
        snprintf(in, sizeof in, "%s", b.last);
        if (c[2] != c[0]) {
            snprintf(pre, sizeof pre, "b%d_expand", i);
            conv_bn_act(&b, pre, c[2], 1, 1, 1, a);
        }
        snprintf(pre, sizeof pre, "b%d_dw", i);
        conv_bn_act(&b, pre, c[2], c[1], c[6], c[2], a);
        if (c[4]) {
            snprintf(pre, sizeof pre, "b%d_se", i);
            squeeze_excite(&b, pre, c[2], divisible8(c[2] / 4), ACT_RELU, 1);
        }
        snprintf(pre, sizeof pre, "b%d_project", i);
        conv_bn_act(&b, pre, c[3], 1, 1, 1, -1);
        if (c[6] == 1 && c[0] == c[3]) {
            snprintf(pre, sizeof pre, "b%d_add", i);
            residual(&b, pre, in);
        }
    }
    conv_bn_act(&b, "last", 960, 1, 1, 1, ACT_HSWISH);
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc1", 1280);
    simple(&b, "fc1_act", NET_HSWISH);
    simple(&b, "dropout", NET_DROPOUT);
    fc(&b, "classifier", 1000);
    return zb_done(&b);
}

/* ---- EfficientNet-B0, torchvision ---- */
static net *build_efficientnet_b0(char *err)
{
    /* expansion, kernel, stride, input, output, layers */
    static const int cfg[7][6] = {{1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},
                                  {6, 5, 2, 24, 40, 2},  {6, 3, 2, 40, 80, 3},
                                  {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4},
                                  {6, 3, 1, 192, 320, 1}};
    zb b;
    char pre[64], in[64];
    int blk = 0;
    zb_init(&b, "efficientnet_b0", 3, 224, 224, err);
    conv_bn_act(&b, "stem", 32, 3, 2, 1, ACT_SILU);
    for (int g = 0; g < 7; g++)
        for (int r = 0; r < cfg[g][5]; r++, blk++) {
            int cin = r ? cfg[g][4] : cfg[g][3], s = r ? 1 : cfg[g][2], k = cfg[g][1];
            int exp = divisible8(cin * cfg[g][0]);
            snprintf(in, sizeof in, "%s", b.last);
            if (exp != cin) {
                snprintf(pre, sizeof pre, "b%d_expand", blk);
                conv_bn_act(&b, pre, exp, 1, 1, 1, ACT_SILU);
            }
            snprintf(pre, sizeof pre, "b%d_dw", blk);
            conv_bn_act(&b, pre, exp, k, s, exp, ACT_SILU);
            snprintf(pre, sizeof pre, "b%d_se", blk);
            squeeze_excite(&b, pre, exp, cin / 4 > 1 ? cin / 4 : 1, ACT_SILU, 0);
            snprintf(pre, sizeof pre, "b%d_project", blk);
            conv_bn_act(&b, pre, cfg[g][4], 1, 1, 1, -1);
            if (s == 1 && cin == cfg[g][4]) { /* stochastic depth: the identity at inference */
                snprintf(pre, sizeof pre, "b%d_add", blk);
                residual(&b, pre, in);
            }
        }
    conv_bn_act(&b, "last", 1280, 1, 1, 1, ACT_SILU);
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    simple(&b, "dropout", NET_DROPOUT);
    fc(&b, "classifier", 1000);
    return zb_done(&b);
}

/* ---- toy6: the 6-layer example of the thesis' figure 8a ---- */
static net *build_toy6(char *err)
{
    zb b;
    zb_init(&b, "toy6", 3, 16, 16, err);
    conv(&b, "conv", 20, 3, 1, 1, 1, 1);
    simple(&b, "relu", NET_RELU);
    pool(&b, "pool", NET_MAXPOOL, 2, 2, 0);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc", 10);
    simple(&b, "softmax", NET_SOFTMAX);
    return zb_done(&b);
}

/* ---- branchy: two parallel branches joined by Add, then a Concat ---- */
static net *build_branchy(char *err)
{
    zb b;
    zb_init(&b, "branchy", 3, 16, 16, err);
    conv(&b, "stem", 8, 3, 1, 1, 1, 1);
    simple(&b, "stem_relu", NET_RELU);
    net_attr a1 = net_attr_conv(8, 1, 1, 0, 1, 1), a3 = net_attr_conv(8, 3, 1, 1, 1, 1);
    net_attr mp = net_attr_pool(NET_MAXPOOL, 3, 1, 1);
    from(&b, "left", NET_CONV, &a1, "stem_relu");
    from(&b, "right", NET_CONV, &a3, "stem_relu");
    const char *add_in[2] = {"left", "right"};
    zb_add(&b, "add", NET_ADD, NULL, 2, add_in);
    from(&b, "side_pool", NET_MAXPOOL, &mp, "stem_relu");
    const char *cat_in[2] = {"add", "side_pool"};
    zb_add(&b, "cat", NET_CONCAT, NULL, 2, cat_in);
    conv(&b, "head", 16, 3, 2, 1, 1, 1);
    simple(&b, "head_relu", NET_RELU);
    simple(&b, "gap", NET_GAP);
    simple(&b, "flatten", NET_FLATTEN);
    fc(&b, "fc", 10);
    simple(&b, "softmax", NET_SOFTMAX);
    return zb_done(&b);
}

static const struct {
    const char *name;
    const char *desc;
    net *(*build)(char *err);
} zoo[] = {
    {"alexnet", "AlexNet, torchvision definition, 224x224x3", build_alexnet},
    {"alexnet-bvlc", "AlexNet, BVLC Caffe (LRN, grouped conv2/4/5), 227x227x3: the thesis' network",
     build_alexnet_bvlc},
    {"vgg16", "VGG-16 (configuration D), 224x224x3", build_vgg16},
    {"resnet50", "ResNet-50 v1.5 (stride on the 3x3 conv), 224x224x3", build_resnet50},
    {"densenet121", "DenseNet-121 (growth 32, blocks 6/12/24/16), 224x224x3", build_densenet121},
    {"mobilenetv2", "MobileNetV2 (width 1.0, ReLU6), 224x224x3", build_mobilenetv2},
    {"mobilenet_v3_large", "MobileNetV3-Large (width 1.0: HardSwish, squeeze-excitation), 224x224x3",
     build_mobilenet_v3_large},
    {"efficientnet_b0", "EfficientNet-B0 (SiLU, squeeze-excitation), 224x224x3",
     build_efficientnet_b0},
    {"toy6", "6 layers (Conv, ReLU, MaxPool, Flatten, FC, Softmax): thesis figure 8a", build_toy6},
    {"branchy", "tiny net with parallel branches, Add and Concat, for tests", build_branchy},
};

int net_zoo_count(void) { return (int)(sizeof zoo / sizeof zoo[0]); }
const char *net_zoo_name(int i) { return zoo[i].name; }
const char *net_zoo_describe(int i) { return zoo[i].desc; }

net *net_zoo(const char *name, char *err)
{
    for (int i = 0; i < net_zoo_count(); i++)
        if (strcmp(zoo[i].name, name) == 0) return zoo[i].build(err);
    base_seterr(err, "%s: not a zoo network", name);
    return NULL;
}
