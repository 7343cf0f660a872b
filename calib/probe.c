/* probe.c -- the probe networks: one chain per size holding every layer
 * kind of kinds.def (Conv in each of its algorithms and cost classes, FC
 * and squeeze-excitation's 1x1 convolutions on a 1x1 map, ReLU, ReLU6,
 * LRN, both pools, GAP, BatchNorm, Add, Concat, Flatten, Dropout, Softmax,
 * Sigmoid, HardSigmoid, HardSwish, Mul the three ways, ReduceMean, ReduceMax, Slice,
 * ChannelShuffle, LayerNorm, GELU, Scale, LeakyReLU, PReLU, ELU, Tanh,
 * Clip, Upsample, Nearest, Bilinear, Pad, L2Norm, Mish, BranchSum, BranchSoftmax, ConvTranspose, InstanceNorm, GroupNorm,
 * PixelShuffle, PixelUnshuffle, Softplus; a test checks that none is
 * missing), so the per-kind fallback coefficients are fitted over shapes
 * the calibrated networks may lack (e.g. AveragePool and Concat for
 * DenseNet when calibrating on AlexNet and ResNet-50).
 *
 * Invariant: every probe is a valid net (one output, topological order);
 * layer semantics come from net.c, nothing is re-derived here.
 */
#include "calib.h"

#include <stdio.h>

/* The first CALIB_PROBES_QUICK are what --quick runs. */
static const struct {
    int c, h, w;
} sizes[] = {{64, 56, 56}, {128, 28, 28}, {8, 16, 16}, {32, 112, 112}, {256, 14, 14}};
/* {8, 16, 16} is a network of tiny layers (toy6's and branchy's sizes,
 * 8 channels: im2col, not Winograd): each class's curve (coeffs_curve)
 * then reaches down to them; a line through the large layers' samples
 * had charged such layers 5-15 times their time. */

int calib_probe_count(void) { return (int)(sizeof sizes / sizeof sizes[0]); }

typedef struct {
    net *n;
    int failed;
    char *err;
} pb;

static void add(pb *b, const char *name, net_kind k, const net_attr *a, const char *in0,
                const char *in1)
{
    const char *in[2] = {in0, in1};
    if (!b->failed && net_add(b->n, name, k, a, in1 ? 2 : 1, in, b->err) < 0) b->failed = 1;
}

net *calib_probe_net(int i, char *err)
{
    if (i < 0 || i >= calib_probe_count()) {
        base_seterr(err, "no probe network %d", i);
        return NULL;
    }
    int C = sizes[i].c;
    char name[64];
    snprintf(name, sizeof name, "calib-probe-%dx%dx%d", C, sizes[i].h, sizes[i].w);
    pb b = {net_new(name, "data", (net_shape){C, sizes[i].h, sizes[i].w}), 0, err};
    if (!b.n) {
        base_seterr(err, "probe network: out of memory");
        return NULL;
    }
    net_attr a, d = net_attr_default(NET_RELU);
    a = net_attr_conv(C, 3, 1, 1, 1, 1); /* 3x3 stride 1: the ConvWinograd class, im2col path */
    add(&b, "conv3x3", NET_CONV, &a, "data", NULL);
    a = net_attr_default(NET_BN);
    add(&b, "bn", NET_BN, &a, "conv3x3", NULL);
    add(&b, "relu", NET_RELU, &d, "bn", NULL);
    a = net_attr_conv(C, 1, 1, 0, 1, 1); /* pointwise: SGEMM straight on the input */
    add(&b, "conv1x1", NET_CONV, &a, "relu", NULL);
    a = net_attr_default(NET_LRN);
    add(&b, "lrn", NET_LRN, &a, "conv1x1", NULL);
    a = net_attr_default(NET_ADD);
    add(&b, "add", NET_ADD, &a, "relu", "lrn");
    a = net_attr_default(NET_CONCAT);
    add(&b, "concat", NET_CONCAT, &a, "add", "bn");
    a = net_attr_conv(2 * C, 3, 1, 1, 2 * C, 1); /* depthwise: the direct loop */
    add(&b, "dwconv", NET_CONV, &a, "concat", NULL);
    a = d;
    a.relu_max = 6.0;
    add(&b, "relu6", NET_RELU, &a, "dwconv", NULL);
    /* The mobile networks' activations and squeeze-excitation scale. */
    add(&b, "sigmoid", NET_SIGMOID, NULL, "relu6", NULL);
    a = net_attr_default(NET_HSIGMOID);
    a.hs_alpha = 1.0 / 6;
    add(&b, "hsigmoid", NET_HSIGMOID, &a, "sigmoid", NULL);
    add(&b, "hswish", NET_HSWISH, NULL, "hsigmoid", NULL);
    add(&b, "mul", NET_MUL, NULL, "hswish", "relu6");
    add(&b, "se_gap", NET_GAP, NULL, "mul", NULL);
    /* Squeeze-excitation's two 1x1 convolutions on the 1x1 map: matrix-
     * vector products (convalgo GEMV), costed in FC's class, which the
     * probe's one large FC alone would fit at a single size. */
    a = net_attr_conv(C / 2, 1, 1, 0, 1, 1);
    add(&b, "se_fc1", NET_CONV, &a, "se_gap", NULL);
    a = net_attr_conv(2 * C, 1, 1, 0, 1, 1);
    add(&b, "se_fc2", NET_CONV, &a, "se_fc1", NULL);
    add(&b, "se_scale", NET_MUL, NULL, "mul", "se_fc2");
    /* CBAM's spatial attention: a max over channels, each pixel gated by it. */
    a = net_attr_default(NET_REDUCEMAX);
    a.rm_c = 1;
    add(&b, "rmax", NET_REDUCEMAX, &a, "se_scale", NULL);
    add(&b, "sa_gate", NET_MUL, NULL, "se_scale", "rmax");
    /* ShuffleNet's and ConvNeXt's: a mean over channels joined back on and
     * sliced off again, a shuffle, LayerNorm, GELU and a per-channel scale. */
    a = net_attr_default(NET_REDUCEMEAN);
    a.rm_c = 1;
    add(&b, "rmean", NET_REDUCEMEAN, &a, "sa_gate", NULL);
    add(&b, "join", NET_CONCAT, NULL, "sa_gate", "rmean");
    a = net_attr_default(NET_SLICE);
    a.start = 0, a.out_c = 2 * C;
    add(&b, "slice", NET_SLICE, &a, "join", NULL);
    a = net_attr_default(NET_SHUFFLE);
    a.groups = 2;
    add(&b, "shuffle", NET_SHUFFLE, &a, "slice", NULL);
    add(&b, "layernorm", NET_LAYERNORM, NULL, "shuffle", NULL);
    add(&b, "l2norm", NET_L2NORM, NULL, "layernorm", NULL); /* SSD's conv4_3, embeddings */
    add(&b, "gelu", NET_GELU, NULL, "l2norm", NULL);
    add(&b, "scale", NET_SCALE, NULL, "gelu", NULL);
    add(&b, "instnorm", NET_INSTNORM, NULL, "scale", NULL); /* style transfer, GAN generators */
    a = net_attr_default(NET_GROUPNORM); /* ResNet-GN, BiT, detection heads: 8 groups of 2C / 8 */
    a.groups = 8;
    add(&b, "groupnorm", NET_GROUPNORM, &a, "instnorm", NULL);
    /* Sub-pixel upsampling (super-resolution): C x H x W to C/4 x 2H x 2W,
     * pooled back and joined four times to keep the chain's shape. */
    a = net_attr_default(NET_SHUFFLEUP);
    a.up_h = a.up_w = 2;
    add(&b, "pixelshuffle", NET_SHUFFLEUP, &a, "groupnorm", NULL);
    a = net_attr_pool(NET_MAXPOOL, 2, 2, 0);
    add(&b, "pspool", NET_MAXPOOL, &a, "pixelshuffle", NULL);
    {
        const char *four[4] = {"pspool", "pspool", "pspool", "pspool"};
        if (!b.failed && net_add(b.n, "psjoin", NET_CONCAT, NULL, 4, four, b.err) < 0) b.failed = 1;
    }
    /* and back by its inverse (space to depth), added on */
    a = net_attr_default(NET_SHUFFLEDOWN);
    a.up_h = 2;
    add(&b, "pixelunshuffle", NET_SHUFFLEDOWN, &a, "pixelshuffle", NULL);
    add(&b, "psadd", NET_ADD, NULL, "psjoin", "pixelunshuffle");
    /* The detectors' and segmenters' activations. */
    a = net_attr_default(NET_LEAKYRELU);
    a.act_alpha = 0.1;
    add(&b, "leakyrelu", NET_LEAKYRELU, &a, "psadd", NULL);
    add(&b, "prelu", NET_PRELU, NULL, "leakyrelu", NULL);
    add(&b, "elu", NET_ELU, NULL, "prelu", NULL);
    add(&b, "tanh", NET_TANH, NULL, "elu", NULL);
    add(&b, "softplus", NET_SOFTPLUS, NULL, "tanh", NULL);
    add(&b, "mish", NET_MISH, NULL, "softplus", NULL); /* YOLOv4's x tanh(softplus x), fused */
    /* Split attention (SKNet, ResNeSt): two branches stacked, a softmax
     * across them, their sum: back to C channels. */
    add(&b, "branches", NET_CONCAT, NULL, "mish", "mish");
    a = net_attr_default(NET_BSOFTMAX);
    a.groups = 2;
    add(&b, "bsoftmax", NET_BSOFTMAX, &a, "branches", NULL);
    a = net_attr_default(NET_BSUM);
    a.groups = 2;
    add(&b, "bsum", NET_BSUM, &a, "bsoftmax", NULL);
    a = net_attr_default(NET_CLIP);
    a.clip_lo = -0.5, a.clip_hi = 0.5;
    add(&b, "clip", NET_CLIP, &a, "bsum", NULL);
    /* Zeros around the map (YOLO's ZeroPad2d before a MaxPool), then the
     * 3x3 pool without padding of its own: the map keeps its size. */
    a = net_attr_default(NET_PAD);
    a.pt = a.pl = a.pb = a.pr = 1;
    add(&b, "pad", NET_PAD, &a, "clip", NULL);
    a = net_attr_pool(NET_MAXPOOL, 3, 1, 0);
    add(&b, "maxpool", NET_MAXPOOL, &a, "pad", NULL);
    a = net_attr_pool(NET_AVGPOOL, 2, 2, 0); /* DenseNet's transition pool */
    add(&b, "avgpool", NET_AVGPOOL, &a, "maxpool", NULL);
    /* Nearest upsampling by 2 (a detector's top-down path), pooled back
     * down so that the layers after it keep their sizes. */
    a = net_attr_default(NET_UPSAMPLE);
    a.up_h = a.up_w = 2;
    add(&b, "upsample", NET_UPSAMPLE, &a, "avgpool", NULL);
    a = net_attr_pool(NET_MAXPOOL, 2, 2, 0);
    add(&b, "downpool", NET_MAXPOOL, &a, "upsample", NULL);
    /* Nearest resizing by 1.5 (an FPN's top-down path at an odd size),
     * then bilinear resizing (a segmenter's head) to twice the pooled
     * map, pooled back down. */
    a = net_attr_default(NET_NEAREST);
    a.up_h = sizes[i].h / 2 * 3 / 2, a.up_w = sizes[i].w / 2 * 3 / 2;
    add(&b, "nearest", NET_NEAREST, &a, "downpool", NULL);
    a = net_attr_default(NET_BILINEAR);
    a.up_h = 2 * (sizes[i].h / 2), a.up_w = 2 * (sizes[i].w / 2);
    add(&b, "bilinear", NET_BILINEAR, &a, "nearest", NULL);
    a = net_attr_pool(NET_MAXPOOL, 2, 2, 0);
    add(&b, "downpool2", NET_MAXPOOL, &a, "bilinear", NULL);
    /* A learned 2x2 upsampling (a U-Net's up-convolution), pooled back
     * down as well. */
    a = net_attr_conv(C, 2, 2, 0, 1, 1);
    add(&b, "deconv", NET_DECONV, &a, "downpool2", NULL);
    a = net_attr_pool(NET_MAXPOOL, 2, 2, 0);
    add(&b, "downpool3", NET_MAXPOOL, &a, "deconv", NULL);
    a = net_attr_conv(C, 7, 2, 3, 1, 1); /* large kernel, strided: the Conv class */
    add(&b, "conv7x7s2", NET_CONV, &a, "downpool3", NULL);
    a = net_attr_conv(2 * C, 3, 2, 1, 1, 1); /* 3x3 stride 2: Conv class */
    add(&b, "conv3x3s2", NET_CONV, &a, "conv7x7s2", NULL);
    a = net_attr_default(NET_GAP);
    add(&b, "gap", NET_GAP, &a, "conv3x3s2", NULL);
    a = net_attr_default(NET_FLATTEN);
    add(&b, "flatten", NET_FLATTEN, &a, "gap", NULL);
    a = net_attr_default(NET_FC);
    a.out_c = 1000;
    add(&b, "fc", NET_FC, &a, "flatten", NULL);
    a = net_attr_default(NET_DROPOUT);
    add(&b, "dropout", NET_DROPOUT, &a, "fc", NULL);
    a = net_attr_default(NET_SOFTMAX);
    add(&b, "softmax", NET_SOFTMAX, &a, "dropout", NULL);
    if (b.failed || net_finalize(b.n, name, err)) {
        net_free(b.n);
        return NULL;
    }
    return b.n;
}
