/* test_layers.c -- layer semantics of model/net.c on small hand-computed
 * cases: output shapes (strides, dilation, asymmetric pads, ceil_mode,
 * groups), MACs / ops / parameters, splittability, topological order and
 * consumers.  Every expected number is worked out in the comment next to it.
 */
#include "mcheck.h"
#include "net.h"

#include <stdlib.h>
#include <string.h>

/* A one-layer (or few-layer) net on input c x h x w, built through the API. */
typedef struct {
    net *n;
    char err[BASE_ERRLEN];
} tnet;

static void tn_init(tnet *t, int c, int h, int w)
{
    t->n = net_new("t", "data", (net_shape){c, h, w});
    t->err[0] = 0;
}

static void tn_add(tnet *t, const char *name, net_kind k, const net_attr *a, const char *in0,
                   const char *in1)
{
    const char *ins[2] = {in0, in1};
    CHECK(net_add(t->n, name, k, a, in1 ? 2 : 1, ins, t->err) >= 0);
}

/* Finalize; returns the named layer or NULL (and the error in t->err). */
static const net_layer *tn_done(tnet *t, const char *name)
{
    if (net_finalize(t->n, "test", t->err)) return NULL;
    int i = net_find(t->n, name);
    return i < 0 ? NULL : &t->n->layers[i];
}


static net_attr conv(int out, int kh, int kw, int sh, int sw)
{
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = out;
    a.kh = kh, a.kw = kw, a.sh = sh, a.sw = sw;
    return a;
}

static net_attr pool(net_kind k, int kk, int s, int p, int ceil_mode)
{
    net_attr a = net_attr_default(k);
    a.kh = a.kw = kk;
    a.sh = a.sw = s;
    a.pt = a.pl = a.pb = a.pr = p;
    a.ceil_mode = ceil_mode;
    return a;
}

#define CHECK_OUT(L, wc, wh, ww)                                                        \
    do {                                                                                \
        CHECK((L) != NULL);                                                             \
        if (L) {                                                                        \
            CHECK_I64((L)->out.c, wc);                                                  \
            CHECK_I64((L)->out.h, wh);                                                  \
            CHECK_I64((L)->out.w, ww);                                                  \
        }                                                                               \
    } while (0)

/* One layer of kind k with attributes a on an input of shape in: its
 * output shape `want` and `ops` elementwise ops; then with attributes
 * bad_a (NULL: a) on an input of shape bad_in, refused with `msg`. */
static void moves_kind(net_kind k, const net_attr *a, net_shape in, net_shape want, int64_t ops,
                     const net_attr *bad_a, net_shape bad_in, const char *msg)
{
    tnet t;
    tn_init(&t, in.c, in.h, in.w);
    tn_add(&t, "l", k, a, "data", NULL);
    const net_layer *L = tn_done(&t, "l");
    CHECK_OUT(L, want.c, want.h, want.w);
    if (L) CHECK_I64(L->ops, ops);
    net_free(t.n);
    tn_init(&t, bad_in.c, bad_in.h, bad_in.w);
    tn_add(&t, "l", k, bad_a ? bad_a : a, "data", NULL);
    CHECK(tn_done(&t, "l") == NULL && strstr(t.err, msg), "%s: %s", net_kind_name(k), t.err);
    net_free(t.n);
}

/* One conv (or ConvTranspose) on a given input; checks shape, MACs and
 * parameters. */
static void one_kind(net_kind kind, int c, int h, int w, net_attr a, int oc, int oh, int ow,
                     long long macs, long long params)
{
    tnet t;
    tn_init(&t, c, h, w);
    tn_add(&t, "c", kind, &a, "data", NULL);
    const net_layer *L = tn_done(&t, "c");
    if (!L) fprintf(stderr, "conv: %s\n", t.err);
    CHECK_OUT(L, oc, oh, ow);
    if (L) {
        CHECK_I64(L->macs, macs);
        CHECK_I64(L->params, params);
        CHECK_I64(L->weights, params);
        CHECK_I64(L->ops, 0);
    }
    net_free(t.n);
}

static void one_conv(int c, int h, int w, net_attr a, int oc, int oh, int ow, long long macs,
                     long long params)
{
    one_kind(NET_CONV, c, h, w, a, oc, oh, ow, macs, params);
}

static void test_conv(void)
{
    /* 3x10x10, 8 filters 3x3: (10-3)/1+1 = 8; MACs 8*8*8*27 = 13824;
     * params 8*27 + 8 bias = 224. */
    one_conv(3, 10, 10, conv(8, 3, 3, 1, 1), 8, 8, 8, 13824, 224);
    /* Stride 2, pads 1: (11+2-3)/2+1 = 6.  MACs 4*36*27 = 3888, params 4*27+4. */
    net_attr a = conv(4, 3, 3, 2, 2);
    a.pt = a.pl = a.pb = a.pr = 1;
    one_conv(3, 11, 11, a, 4, 6, 6, 3888, 112);
    /* Dilation 2: effective kernel 2*(3-1)+1 = 5, (10-5)+1 = 6; no bias:
     * params 2*1*9 = 18, MACs 2*36*9 = 648. */
    a = conv(2, 3, 3, 1, 1);
    a.dh = a.dw = 2;
    a.bias = 0;
    one_conv(1, 10, 10, a, 2, 6, 6, 648, 18);
    /* Dilation 3 with pads 3 keeps the size: eff 7, 10+6-7+1 = 10. */
    a = conv(1, 3, 3, 1, 1);
    a.dh = a.dw = 3;
    a.pt = a.pl = a.pb = a.pr = 3;
    one_conv(1, 10, 10, a, 1, 10, 10, 900, 10);
    /* Different dilation per axis: dh 1 -> 10-3+1 = 8; dw 4 -> eff 9, 10-9+1 = 2. */
    a = conv(1, 3, 3, 1, 1);
    a.dw = 4;
    one_conv(1, 10, 10, a, 1, 8, 2, 16 * 9, 10);
    /* Asymmetric kernel, stride and pads on 2x7x7: kernel 2x3, stride 1x2,
     * pads top 0 left 2 bottom 1 right 0.
     * H: (7+0+1-2)/1+1 = 7;  W: (7+2+0-3)/2+1 = 4.
     * MACs 5*7*4*(2*2*3) = 1680; params 5*12+5 = 65. */
    a = conv(5, 2, 3, 1, 2);
    a.pt = 0, a.pl = 2, a.pb = 1, a.pr = 0;
    one_conv(2, 7, 7, a, 5, 7, 4, 1680, 65);
    /* Grouped: 8 in, 4 out, groups 2, 1x1: each output sees 4 inputs.
     * MACs 4*25*4 = 400; params 4*4+4 = 20. */
    a = conv(4, 1, 1, 1, 1);
    a.groups = 2;
    one_conv(8, 5, 5, a, 4, 5, 5, 400, 20);
    /* Depthwise (groups = channels = 6), 3x3 pad 1: MACs 6*25*9 = 1350,
     * params 6*9+6 = 60. */
    a = conv(6, 3, 3, 1, 1);
    a.groups = 6;
    a.pt = a.pl = a.pb = a.pr = 1;
    one_conv(6, 5, 5, a, 6, 5, 5, 1350, 60);
    /* Kernel exactly the padded input: 1x1 output. */
    a = conv(3, 5, 5, 1, 1);
    a.pt = a.pl = a.pb = a.pr = 1;
    one_conv(1, 3, 3, a, 3, 1, 1, 3 * 25, 3 * 25 + 3);
}

static void one_pool(net_kind k, int h, net_attr a, int oh)
{
    tnet t;
    tn_init(&t, 2, h, h);
    tn_add(&t, "p", k, &a, "data", NULL);
    const net_layer *L = tn_done(&t, "p");
    if (!L) fprintf(stderr, "pool: %s\n", t.err);
    CHECK_OUT(L, 2, oh, oh);
    if (L) {
        CHECK_I64(L->macs, 0);
        CHECK_I64(L->params, 0);
        CHECK_I64(L->ops, 2LL * oh * oh);
    }
    net_free(t.n);
}

static void test_pool(void)
{
    /* floor((6-3)/2)+1 = 2; ceil: ceil(3/2)+1 = 3, last window starts at 4 < 6. */
    one_pool(NET_MAXPOOL, 6, pool(NET_MAXPOOL, 3, 2, 0, 0), 2);
    one_pool(NET_MAXPOOL, 6, pool(NET_MAXPOOL, 3, 2, 0, 1), 3);
    /* GoogLeNet's 112 -> 56 with ceil_mode (floor would give 55). */
    one_pool(NET_MAXPOOL, 112, pool(NET_MAXPOOL, 3, 2, 0, 1), 56);
    one_pool(NET_MAXPOOL, 112, pool(NET_MAXPOOL, 3, 2, 0, 0), 55);
    /* PyTorch's rule: with ceil_mode the last window must start inside the
     * input or the left pad.  5x5, k2 s2 p1: ceil(5/2)+1 = 4, but window 4
     * would start at 6 >= 5+1, so 3 (MaxPool2d(2, 2, 1, ceil_mode=True)). */
    one_pool(NET_MAXPOOL, 5, pool(NET_MAXPOOL, 2, 2, 1, 1), 3);
    one_pool(NET_MAXPOOL, 5, pool(NET_MAXPOOL, 2, 2, 1, 0), 3);
    /* ResNet's stem pool: 112, k3 s2 p1 -> 56. */
    one_pool(NET_MAXPOOL, 112, pool(NET_MAXPOOL, 3, 2, 1, 0), 56);
    /* AveragePool 2x2/2 halves: 8 -> 4; 7 -> 3 (floor), 4 (ceil). */
    one_pool(NET_AVGPOOL, 8, pool(NET_AVGPOOL, 2, 2, 0, 0), 4);
    one_pool(NET_AVGPOOL, 7, pool(NET_AVGPOOL, 2, 2, 0, 0), 3);
    one_pool(NET_AVGPOOL, 7, pool(NET_AVGPOOL, 2, 2, 0, 1), 4);
}

static void test_fc_and_elementwise(void)
{
    tnet t;
    /* FC on a 3-D input flattens implicitly: 4x3x3 = 36 features -> 10.
     * MACs 360, params 370. */
    tn_init(&t, 4, 3, 3);
    net_attr a = net_attr_default(NET_FC);
    a.out_c = 10;
    tn_add(&t, "fc", NET_FC, &a, "data", NULL);
    const net_layer *L = tn_done(&t, "fc");
    CHECK_OUT(L, 10, 1, 1);
    if (L) {
        CHECK_I64(L->macs, 360);
        CHECK_I64(L->params, 370);
        CHECK_I64(L->ops, 0);
    }
    net_free(t.n);

    /* FC without bias. */
    tn_init(&t, 36, 1, 1);
    a.bias = 0;
    tn_add(&t, "fc", NET_FC, &a, "data", NULL);
    L = tn_done(&t, "fc");
    CHECK(L && L->params == 360 && L->macs == 360);
    net_free(t.n);

    /* A chain of shape-preserving and shape-changing layers on 6x5x4. */
    tn_init(&t, 6, 5, 4);
    tn_add(&t, "relu", NET_RELU, NULL, "data", NULL);
    tn_add(&t, "lrn", NET_LRN, NULL, "relu", NULL);
    tn_add(&t, "bn", NET_BN, NULL, "lrn", NULL);
    tn_add(&t, "drop", NET_DROPOUT, NULL, "bn", NULL);
    tn_add(&t, "gap", NET_GAP, NULL, "drop", NULL);
    tn_add(&t, "flat", NET_FLATTEN, NULL, "gap", NULL);
    tn_add(&t, "soft", NET_SOFTMAX, NULL, "flat", NULL);
    CHECK(tn_done(&t, "soft") != NULL);
    net *n = t.n;
    CHECK_SHAPE(n, "relu", 6, 5, 4);
    CHECK_SHAPE(n, "lrn", 6, 5, 4);
    CHECK_SHAPE(n, "bn", 6, 5, 4);
    CHECK_SHAPE(n, "drop", 6, 5, 4);
    CHECK_SHAPE(n, "gap", 6, 1, 1);
    CHECK_SHAPE(n, "flat", 6, 1, 1);
    CHECK_SHAPE(n, "soft", 6, 1, 1);
    /* One op per output element, GlobalAveragePool one per element it
     * reads; no MACs. */
    CHECK_I64(n->layers[net_find(n, "relu")].ops, 120);
    CHECK_I64(n->layers[net_find(n, "lrn")].ops, 120);
    CHECK_I64(n->layers[net_find(n, "gap")].ops, 120);
    /* BatchNorm: 2 learnable parameters per channel, 4 floats at run time. */
    const net_layer *bn = &n->layers[net_find(n, "bn")];
    CHECK_I64(bn->params, 12);
    CHECK_I64(bn->weights, 24);
    net_totals tt = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(tt.macs, 0);
    CHECK_I64(tt.ops, 120 * 5 + 6 * 2);
    CHECK_I64(tt.params, 12);
    CHECK_I64(tt.weights, 24);
    CHECK_I64(tt.nsplittable, 0);
    net_free(n);

    /* Flatten of a 3-D tensor: 4x3x2 -> 24. */
    tn_init(&t, 4, 3, 2);
    tn_add(&t, "flat", NET_FLATTEN, NULL, "data", NULL);
    L = tn_done(&t, "flat");
    CHECK_OUT(L, 24, 1, 1);
    net_free(t.n);
}

static void test_add_concat(void)
{
    tnet t;
    net_attr c4 = conv(4, 1, 1, 1, 1), c3 = conv(3, 1, 1, 1, 1);
    tn_init(&t, 2, 5, 5);
    tn_add(&t, "a", NET_CONV, &c4, "data", NULL);
    tn_add(&t, "b", NET_CONV, &c4, "data", NULL);
    tn_add(&t, "c", NET_CONV, &c3, "data", NULL);
    tn_add(&t, "sum", NET_ADD, NULL, "a", "b");
    tn_add(&t, "cat", NET_CONCAT, NULL, "sum", "c");
    const net_layer *L = tn_done(&t, "cat");
    if (!L) fprintf(stderr, "add/concat: %s\n", t.err);
    CHECK_OUT(L, 7, 5, 5); /* channels add up: 4 + 3 */
    CHECK_SHAPE(t.n, "sum", 4, 5, 5);
    CHECK_I64(t.n->layers[net_find(t.n, "sum")].ops, 100);
    CHECK_I64(t.n->layers[net_find(t.n, "cat")].ops, 175);
    net_free(t.n);

    /* Three-way Add and Concat, and Add(x, x) reading one tensor twice. */
    tn_init(&t, 3, 4, 4);
    tn_add(&t, "r", NET_RELU, NULL, "data", NULL);
    const char *three[3] = {"r", "r", "data"};
    CHECK(net_add(t.n, "add3", NET_ADD, NULL, 3, three, t.err) >= 0);
    const char *cat3[3] = {"add3", "r", "data"};
    CHECK(net_add(t.n, "cat3", NET_CONCAT, NULL, 3, cat3, t.err) >= 0);
    L = tn_done(&t, "cat3");
    CHECK_OUT(L, 9, 4, 4);
    /* r has two consumers (add3 once, though read twice, and cat3); the
     * network input feeds r, add3 and cat3. */
    int r = net_find(t.n, "r");
    CHECK_I64(net_ncons(t.n, r), 2);
    CHECK_I64(net_ncons(t.n, NET_INPUT), 3);
    net_free(t.n);
}

/* ShuffleNet's, MnasNet's and ConvNeXt's kinds on a 6 x 4 x 5 input. */
static void test_mobile_kinds(void)
{
    tnet t;
    net_attr a;
    const net_layer *L;
    /* ReduceMean over channels: 1 x 4 x 5, reading all 120 elements (ops);
     * over H and W: 6 x 1 x 1; over W alone: 6 x 4 x 1. */
    static const int axes[3][3] = {{1, 0, 0}, {0, 1, 1}, {0, 0, 1}};
    static const int want[3][3] = {{1, 4, 5}, {6, 1, 1}, {6, 4, 1}};
    for (int k = 0; k < 6; k++) { /* ReduceMean, then ReduceMax alike */
        net_kind kind = k < 3 ? NET_REDUCEMEAN : NET_REDUCEMAX;
        tn_init(&t, 6, 4, 5);
        a = net_attr_default(kind);
        a.rm_c = axes[k % 3][0], a.rm_h = axes[k % 3][1], a.rm_w = axes[k % 3][2];
        tn_add(&t, "m", kind, &a, "data", NULL);
        L = tn_done(&t, "m");
        CHECK_OUT(L, want[k % 3][0], want[k % 3][1], want[k % 3][2]);
        if (L) CHECK_I64(L->ops, 120);
        if (L) CHECK_I64(L->params, 0);
        net_free(t.n);
    }
    tn_init(&t, 6, 4, 5);
    tn_add(&t, "m", NET_REDUCEMEAN, NULL, "data", NULL); /* no axis */
    CHECK(tn_done(&t, "m") == NULL && strstr(t.err, "over no axis"));
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    tn_add(&t, "m", NET_REDUCEMAX, NULL, "data", NULL);
    CHECK(tn_done(&t, "m") == NULL && strstr(t.err, "ReduceMax over no axis"), "%s", t.err);
    net_free(t.n);
    /* Slice of channels [2, 5): 3 x 4 x 5, 60 ops; [4, 7) does not fit. */
    for (int k = 0; k < 2; k++) {
        tn_init(&t, 6, 4, 5);
        a = net_attr_default(NET_SLICE);
        a.start = k ? 4 : 2, a.out_c = 3;
        tn_add(&t, "s", NET_SLICE, &a, "data", NULL);
        L = tn_done(&t, "s");
        if (!k) {
            CHECK_OUT(L, 3, 4, 5);
            if (L) CHECK_I64(L->ops, 60);
        } else {
            CHECK(L == NULL && strstr(t.err, "[4, 7)") && strstr(t.err, "6 channels"));
        }
        net_free(t.n);
    }
    /* Crops of a 6 x 9 x 10 map: rows 1, 3, 5, 7 (from 1, step 2, to the
     * end), columns 2..6 (5 of them, step 1): 6 x 4 x 5, 120 ops; columns
     * 2, 5, 8 (step 3, 3 of them) fit, 4 of them (up to 11) do not; a first
     * row of 9 is outside the map. */
    for (int k = 0; k < 4; k++) {
        tn_init(&t, 6, 9, 10);
        a = net_attr_default(NET_SLICE);
        a.start = 0, a.out_c = 6, a.sl_top = k == 3 ? 9 : 1, a.sh = 2;
        a.sl_left = 2, a.sl_cols = k == 0 ? 5 : k == 1 ? 3 : 4, a.sw = k == 0 ? 1 : 3;
        tn_add(&t, "s", NET_SLICE, &a, "data", NULL);
        L = tn_done(&t, "s");
        if (k == 0) {
            CHECK_OUT(L, 6, 4, 5);
            if (L) CHECK_I64(L->ops, 120);
        } else if (k == 1) {
            CHECK_OUT(L, 6, 4, 3);
        } else {
            CHECK(L == NULL && strstr(t.err, "of a 9x10 map"), "%s", t.err);
        }
        net_free(t.n);
    }
    /* L2Norm keeps the shape, one op per element, F.normalize's eps by default */
    tn_init(&t, 6, 4, 5);
    tn_add(&t, "l2", NET_L2NORM, NULL, "data", NULL);
    L = tn_done(&t, "l2");
    CHECK_OUT(L, 6, 4, 5);
    if (L) CHECK(L->ops == 120 && L->a.bn_eps == 1e-12);
    net_free(t.n);
    CHECK(!net_kind_channelwise(NET_L2NORM) && !net_kind_splittable(NET_L2NORM) && net_kind_rowsplit(NET_L2NORM));
    /* Add that subtracts: of two inputs only */
    {
        net_shape three[3] = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}};
        net_layer S;
        memset(&S, 0, sizeof S);
        S.name = "sub", S.kind = NET_ADD, S.nin = 3, S.a = net_attr_default(NET_ADD);
        S.a.add_sub = 1;
        CHECK(net_layer_infer(&S, three, "t", t.err) == -1 && strstr(t.err, "subtract needs two inputs, got 3"),
              "%s", t.err);
        S.nin = 2;
        CHECK(net_layer_infer(&S, three, "t", t.err) == 0);
        CHECK(S.out.c == 2 && S.out.h == 3 && S.out.w == 4);
    }
    /* ChannelShuffle: groups 3 of 6 channels keeps the shape; 4 does not divide. */
    for (int g = 3; g <= 4; g++) {
        tn_init(&t, 6, 4, 5);
        a = net_attr_default(NET_SHUFFLE);
        a.groups = g;
        tn_add(&t, "x", NET_SHUFFLE, &a, "data", NULL);
        L = tn_done(&t, "x");
        if (g == 3) CHECK_OUT(L, 6, 4, 5);
        else CHECK(L == NULL && strstr(t.err, "groups 4"));
        net_free(t.n);
    }
    /* LayerNorm: 2 x 6 params (scale, shift) and run-time weights; GELU
     * none; Scale 6 (one per channel); all keep the shape, 120 ops. */
    tn_init(&t, 6, 4, 5);
    tn_add(&t, "ln", NET_LAYERNORM, NULL, "data", NULL);
    tn_add(&t, "g", NET_GELU, NULL, "ln", NULL);
    tn_add(&t, "s", NET_SCALE, NULL, "g", NULL);
    L = tn_done(&t, "s");
    CHECK_OUT(L, 6, 4, 5);
    static const char *names[3] = {"ln", "g", "s"};
    static const int params[3] = {12, 0, 6};
    for (int k = 0; L && k < 3; k++) {
        const net_layer *M = &t.n->layers[net_find(t.n, names[k])];
        CHECK_I64(M->params, params[k]);
        CHECK_I64(M->weights, params[k]);
        CHECK_I64(M->ops, 120);
        CHECK_I64(M->macs, 0);
    }
    net_free(t.n);
    /* Which of them a mapping may split or slice channel-wise. */
    CHECK(net_kind_channelwise(NET_GELU) && net_kind_channelwise(NET_SCALE));
    CHECK(!net_kind_channelwise(NET_LAYERNORM) && !net_kind_channelwise(NET_REDUCEMEAN) &&
          !net_kind_channelwise(NET_SLICE) && !net_kind_channelwise(NET_SHUFFLE));
}

/* Detectors' activations keep the shape (PReLU one slope per channel);
 * Upsample multiplies height and width, one op per output element; a Clip
 * whose min is above its max and a scale of 0 are refused. */
static void test_detector_kinds(void)
{
    tnet t;
    net_attr a;
    const net_layer *L;
    tn_init(&t, 6, 4, 5);
    tn_add(&t, "lr", NET_LEAKYRELU, NULL, "data", NULL);
    tn_add(&t, "pr", NET_PRELU, NULL, "lr", NULL);
    tn_add(&t, "el", NET_ELU, NULL, "pr", NULL);
    tn_add(&t, "th", NET_TANH, NULL, "el", NULL);
    a = net_attr_default(NET_CLIP);
    a.clip_lo = -1, a.clip_hi = 1;
    tn_add(&t, "cl", NET_CLIP, &a, "th", NULL);
    a = net_attr_default(NET_UPSAMPLE);
    a.up_h = 2, a.up_w = 3;
    tn_add(&t, "up", NET_UPSAMPLE, &a, "cl", NULL);
    L = tn_done(&t, "up");
    CHECK_OUT(L, 6, 8, 15);
    if (L) CHECK_I64(L->ops, 6 * 8 * 15);
    static const char *names[5] = {"lr", "pr", "el", "th", "cl"};
    for (int k = 0; L && k < 5; k++) {
        const net_layer *M = &t.n->layers[net_find(t.n, names[k])];
        CHECK_OUT(M, 6, 4, 5);
        CHECK_I64(M->params, k == 1 ? 6 : 0);
        CHECK_I64(M->ops, 120);
    }
    CHECK(net_attr_default(NET_LEAKYRELU).act_alpha == 0.01 && net_attr_default(NET_ELU).act_alpha == 1);
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    a = net_attr_default(NET_CLIP);
    a.clip_lo = 2, a.clip_hi = 1;
    tn_add(&t, "cl", NET_CLIP, &a, "data", NULL);
    CHECK(tn_done(&t, "cl") == NULL && strstr(t.err, "min 2 above max 1"));
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    a = net_attr_default(NET_UPSAMPLE);
    a.up_h = 0, a.up_w = 2;
    tn_add(&t, "up", NET_UPSAMPLE, &a, "data", NULL);
    CHECK(tn_done(&t, "up") == NULL && strstr(t.err, "scale factors of at least 1"));
    net_free(t.n);
    CHECK(net_kind_channelwise(NET_UPSAMPLE) && net_kind_channelwise(NET_PRELU));
    /* Bilinear: the output size it is given */
    tn_init(&t, 6, 4, 5);
    a = net_attr_default(NET_BILINEAR);
    a.up_h = 7, a.up_w = 2;
    tn_add(&t, "b", NET_BILINEAR, &a, "data", NULL);
    L = tn_done(&t, "b");
    CHECK_OUT(L, 6, 7, 2);
    net_free(t.n);
    /* Pad: zeros around H and W, one op per output element */
    tn_init(&t, 6, 4, 5);
    a = net_attr_default(NET_PAD);
    a.pt = 0, a.pl = 1, a.pb = 2, a.pr = 3;
    tn_add(&t, "p", NET_PAD, &a, "data", NULL);
    L = tn_done(&t, "p");
    CHECK_OUT(L, 6, 6, 9);
    if (L) CHECK_I64(L->ops, 6 * 6 * 9);
    net_free(t.n);
    /* Reflecting pads must be smaller than the map (ONNX's reflect does not
     * repeat the edge); edge pads may be any size; not both. */
    tn_init(&t, 6, 4, 5);
    a = net_attr_default(NET_PAD);
    a.pt = 3, a.pl = 4, a.pb = 3, a.pr = 4, a.pad_reflect = 1;
    tn_add(&t, "p", NET_PAD, &a, "data", NULL);
    L = tn_done(&t, "p");
    CHECK_OUT(L, 6, 10, 13);
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    a.pt = 4;
    tn_add(&t, "p", NET_PAD, &a, "data", NULL);
    CHECK(tn_done(&t, "p") == NULL && strstr(t.err, "must be smaller than the map"));
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    a.pad_edge = 1, a.pt = 9;
    tn_add(&t, "p", NET_PAD, &a, "data", NULL);
    CHECK(tn_done(&t, "p") == NULL && strstr(t.err, "cannot both reflect and repeat"));
    net_free(t.n);
    tn_init(&t, 6, 4, 5);
    a.pad_reflect = 0;
    tn_add(&t, "p", NET_PAD, &a, "data", NULL);
    L = tn_done(&t, "p");
    CHECK_OUT(L, 6, 16, 13);
    net_free(t.n);
    /* InstanceNorm and GroupNorm of 3 groups: same shape, a scale and a
     * shift per channel; InstanceNorm channel-wise, GroupNorm split by
     * channels (a slice reads its groups' channels) */
    for (int k = 0; k < 2; k++) {
        net_kind kind = k ? NET_GROUPNORM : NET_INSTNORM;
        tn_init(&t, 6, 4, 5);
        a = net_attr_default(kind);
        a.groups = 3;
        tn_add(&t, "norm", kind, &a, "data", NULL);
        L = tn_done(&t, "norm");
        CHECK_OUT(L, 6, 4, 5);
        if (L) {
            CHECK_I64(L->params, 12);
            CHECK_I64(L->weights, 12);
            CHECK_I64(L->ops, 120);
        }
        net_free(t.n);
    }
    CHECK(net_kind_channelwise(NET_INSTNORM) && !net_kind_splittable(NET_INSTNORM));
    CHECK(!net_kind_channelwise(NET_GROUPNORM) && net_kind_splittable(NET_GROUPNORM));
    /* groups that do not divide the channels: refused */
    tn_init(&t, 6, 4, 5);
    a.groups = 4;
    tn_add(&t, "gn", NET_GROUPNORM, &a, "data", NULL);
    CHECK(tn_done(&t, "gn") == NULL && strstr(t.err, "GroupNorm groups 4 does not divide 6"), "%s", t.err);
    net_free(t.n);
    /* PixelShuffle by 3: 18 channels to 2, each side 3 times, whole only; 8 refused */
    a = net_attr_default(NET_SHUFFLEUP);
    a.up_h = 3;
    moves_kind(NET_SHUFFLEUP, &a, (net_shape){18, 4, 5}, (net_shape){2, 12, 15}, 2 * 12 * 15, NULL,
             (net_shape){8, 4, 5}, "needs a multiple of 9 channels");
    CHECK(!net_kind_channelwise(NET_SHUFFLEUP) && !net_kind_splittable(NET_SHUFFLEUP));
    /* PixelUnshuffle by 3: 2 x 12 x 15 to 18 x 4 x 5; 12 x 14 does not divide */
    moves_kind(NET_SHUFFLEDOWN, &a, (net_shape){2, 12, 15}, (net_shape){18, 4, 5}, 18 * 4 * 5, NULL,
             (net_shape){2, 12, 14}, "must be multiples of 3");
    CHECK(!net_kind_channelwise(NET_SHUFFLEDOWN) && !net_kind_splittable(NET_SHUFFLEDOWN));
    /* Nearest to 7 x 3 of 2 x 12 x 15: 42 ops; to 0 rows refused */
    a = net_attr_default(NET_NEAREST);
    a.up_h = 7, a.up_w = 3;
    net_attr zero = a;
    zero.up_h = 0;
    moves_kind(NET_NEAREST, &a, (net_shape){2, 12, 15}, (net_shape){2, 7, 3}, 42, &zero,
             (net_shape){2, 12, 15}, "Nearest needs an output size");
    CHECK(net_kind_channelwise(NET_NEAREST) && !net_kind_splittable(NET_NEAREST));
    /* BranchSum of 3 branches: 24 x 5 x 7 to 8 x 5 x 7, its work what it
     * reads (840); 25 channels refused */
    a = net_attr_default(NET_BSUM);
    a.groups = 3;
    moves_kind(NET_BSUM, &a, (net_shape){24, 5, 7}, (net_shape){8, 5, 7}, 24 * 5 * 7, NULL,
               (net_shape){25, 5, 7}, "BranchSum of 3 branches (cardinality 1) needs a multiple of 3 channels");
    CHECK(!net_kind_channelwise(NET_BSUM) && !net_kind_splittable(NET_BSUM) && net_kind_rowsplit(NET_BSUM));
    /* BranchSoftmax of 2 branches in 3 groups: the shape kept; 2 x 3 must
     * divide the channels (27 refused) */
    a = net_attr_default(NET_BSOFTMAX);
    a.groups = 2, a.card = 3;
    moves_kind(NET_BSOFTMAX, &a, (net_shape){24, 1, 1}, (net_shape){24, 1, 1}, 24, NULL,
               (net_shape){27, 1, 1}, "needs a multiple of 6 channels, got 27");
    CHECK(!net_kind_channelwise(NET_BSOFTMAX) && !net_kind_splittable(NET_BSOFTMAX));
    net_attr one = a; /* of one branch: refused (all ones) */
    one.groups = 1, one.card = 1;
    moves_kind(NET_BSOFTMAX, &a, (net_shape){24, 1, 1}, (net_shape){24, 1, 1}, 24, &one,
               (net_shape){24, 1, 1}, "BranchSoftmax of 1 branch");
}

/* ConvTranspose's shape, MACs and parameters by hand (one_conv of kind
 * NET_DECONV): H' = sh (H-1) + dh (kh-1) + 1 + output_padding - top -
 * bottom, MACs out_c * H * W * (C/groups) * kh * kw (every input pixel
 * times every tap). */
static void one_deconv(int c, int h, int w, net_attr a, int oh, int ow, long long macs,
                       long long params)
{
    one_kind(NET_DECONV, c, h, w, a, a.out_c, oh, ow, macs, params);
}

static void test_deconv(void)
{
    /* U-Net's up-convolution, 2x2 stride 2 on 16x7x7 -> 8: H' = 2*6 + 1 + 1
     * = 14; MACs 8*49*16*4 = 25088; params 8*16*4 + 8 = 520. */
    one_deconv(16, 7, 7, conv(8, 2, 2, 2, 2), 14, 14, 25088, 520);
    /* 3x3 stride 2, pads 1, output padding 1 on 3x4x5 -> 8 (doubles the
     * map): H' = 2*3 + 2 + 1 + 1 - 2 = 8, W' = 2*4 + 2 + 1 + 1 - 2 = 10;
     * MACs 8*20*3*9 = 4320; params 8*27 + 8 = 224. */
    net_attr a = conv(8, 3, 3, 2, 2);
    a.pt = a.pl = a.pb = a.pr = 1;
    a.oph = a.opw = 1;
    one_deconv(3, 4, 5, a, 8, 10, 4320, 224);
    /* Grouped (4 groups of 2 inputs, 3 outputs), dilated 2, stride 1x2,
     * pads 2, 1, 2, 1, output padding 0x1 on 8x5x6 -> 12:
     * H' = 4 + 4 + 1 + 0 - 4 = 5, W' = 10 + 4 + 1 + 1 - 2 = 14;
     * MACs 12*30*2*9 = 6480; params 12*2*9 + 12 = 228; no bias: 216. */
    a = conv(12, 3, 3, 1, 2);
    a.groups = 4, a.dh = a.dw = 2;
    a.pt = 2, a.pl = 1, a.pb = 2, a.pr = 1, a.opw = 1;
    one_deconv(8, 5, 6, a, 5, 14, 6480, 228);
    a.bias = 0;
    one_deconv(8, 5, 6, a, 5, 14, 6480, 216);
    /* Pads that crop everything, and groups that do not divide, are refused. */
    tnet t;
    tn_init(&t, 2, 1, 1);
    a = conv(2, 1, 1, 1, 1);
    a.pt = a.pb = 1;
    tn_add(&t, "d", NET_DECONV, &a, "data", NULL);
    CHECK(tn_done(&t, "d") == NULL && strstr(t.err, "leave no output"));
    net_free(t.n);
    tn_init(&t, 3, 4, 4);
    a = conv(4, 2, 2, 2, 2);
    a.groups = 2;
    tn_add(&t, "d", NET_DECONV, &a, "data", NULL);
    CHECK(tn_done(&t, "d") == NULL && strstr(t.err, "does not divide"));
    net_free(t.n);
    /* Split like a Conv, under the mask's "conv" bit. */
    CHECK(net_kind_splittable(NET_DECONV) && !net_kind_channelwise(NET_DECONV));
    CHECK(net_split_has(NET_SPLIT_DEFAULT, NET_DECONV) && net_split_has(net_split_mask_parse("conv"), NET_DECONV));
    CHECK(!net_split_has(net_split_mask_parse("fc"), NET_DECONV) && !net_split_has(NET_SPLIT_DEFAULT, NET_RELU));
}

static void test_kinds(void)
{
    for (int k = 0; k < NET_KIND_COUNT; k++) {
        net_kind back;
        CHECK(net_kind_parse(net_kind_name((net_kind)k), &back) == 0 && back == (net_kind)k);
        CHECK_I64(net_kind_splittable((net_kind)k), k == NET_CONV || k == NET_FC || k == NET_DECONV || k == NET_GROUPNORM);
    }
    net_kind dummy;
    CHECK(net_kind_parse("Deconv", &dummy) == -1);
    CHECK(net_kind_parse("ConvTranspose", &dummy) == 0 && dummy == NET_DECONV);
    CHECK(net_kind_parse("conv", &dummy) == -1); /* names are case-sensitive */
    CHECK_STR(net_kind_name(NET_GAP), "GlobalAveragePool");
    CHECK_STR(net_kind_name(NET_AVGPOOL), "AveragePool");
    CHECK_STR(net_kind_name(NET_BN), "BatchNorm");
    /* Channel-wise: output channel c depends only on input channel c. */
    CHECK(net_kind_channelwise(NET_RELU) && net_kind_channelwise(NET_BN) &&
          net_kind_channelwise(NET_MAXPOOL) && net_kind_channelwise(NET_AVGPOOL) &&
          net_kind_channelwise(NET_GAP) && net_kind_channelwise(NET_DROPOUT));
    CHECK(!net_kind_channelwise(NET_LRN) && !net_kind_channelwise(NET_SOFTMAX) &&
          !net_kind_channelwise(NET_CONV) && !net_kind_channelwise(NET_FC) &&
          !net_kind_channelwise(NET_CONCAT) && !net_kind_channelwise(NET_FLATTEN));
    CHECK_I64(net_split_mask_parse("conv,fc"), (1 << NET_CONV) | (1 << NET_FC));
    CHECK_I64(net_split_mask_parse("FC"), 1 << NET_FC);
    CHECK_I64(net_split_mask_parse("conv"), 1 << NET_CONV);
    CHECK_I64(net_split_mask_parse("fc,relu"), -1);
    CHECK_I64(net_split_mask_parse(""), -1);
    CHECK_I64(NET_SPLIT_DEFAULT, (1 << NET_CONV) | (1 << NET_FC));
    /* Defaults of net_attr_default: stride, dilation, groups 1, bias on. */
    net_attr a = net_attr_default(NET_CONV);
    CHECK(a.sh == 1 && a.sw == 1 && a.dh == 1 && a.dw == 1 && a.groups == 1 && a.bias == 1);
    CHECK(a.pt == 0 && a.pl == 0 && a.pb == 0 && a.pr == 0);
}

static void test_slices(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("alexnet-bvlc", err);
    CHECK(n != NULL);
    if (!n) return;
    int c2 = net_find(n, "conv2"), f6 = net_find(n, "fc6"), r1 = net_find(n, "relu1");
    /* conv2: 256 channels, each 27*27*(48*25) = 874800 MACs. */
    CHECK_I64(net_slice_macs(n, c2, 0, 1), 874800);
    CHECK_I64(net_slice_macs(n, c2, 100, 156) + net_slice_macs(n, c2, 0, 100),
              n->layers[c2].macs);
    CHECK_I64(net_slice_macs(n, c2, 0, 256), n->layers[c2].macs);
    /* fc6: per output 9216 MACs and 9216 + 1 weights. */
    CHECK_I64(net_slice_macs(n, f6, 10, 3), 3 * 9216);
    CHECK_I64(net_slice_weights(n, f6, 0, 2), 2 * 9217);
    /* relu1: one op per element, 55*55 per channel. */
    CHECK_I64(net_slice_ops(n, r1, 0, 10), 10 * 55 * 55);
    CHECK_I64(net_slice_macs(n, r1, 0, 10), 0);
    net_free(n);
}

static void test_topo_order(void)
{
    tnet t;
    /* Given out of order: the sort must put producers first, and otherwise
     * keep the file's order (stable). */
    tn_init(&t, 3, 8, 8);
    net_attr c = conv(4, 3, 3, 1, 1);
    c.pt = c.pl = c.pb = c.pr = 1;
    tn_add(&t, "out", NET_ADD, NULL, "left", "right");
    tn_add(&t, "right", NET_RELU, NULL, "stem", NULL);
    tn_add(&t, "left", NET_CONV, &c, "stem", NULL);
    tn_add(&t, "stem", NET_CONV, &c, "data", NULL);
    const net_layer *L = tn_done(&t, "out");
    if (!L) fprintf(stderr, "topo: %s\n", t.err);
    CHECK(L != NULL);
    if (L) {
        static const char *order[4] = {"stem", "right", "left", "out"};
        for (int i = 0; i < 4; i++) CHECK_STR(t.n->layers[i].name, order[i]);
        CHECK_I64(net_output(t.n), 3);
        /* Inputs were remapped to the new indices. */
        int out = net_find(t.n, "out");
        CHECK_STR(t.n->layers[t.n->layers[out].in[0]].name, "left");
        CHECK_STR(t.n->layers[t.n->layers[out].in[1]].name, "right");
        CHECK_I64(net_ncons(t.n, net_find(t.n, "stem")), 2);
        CHECK_I64(net_ncons(t.n, NET_INPUT), 1);
        CHECK_I64(net_cons(t.n, NET_INPUT)[0], 0);
        net_shape s = net_in_shape(t.n, 0, 0);
        CHECK(s.c == 3 && s.h == 8 && s.w == 8);
    }
    /* Finalizing twice is harmless; adding after finalize is refused. */
    CHECK(net_finalize(t.n, "test", t.err) == 0);
    CHECK(net_add(t.n, "late", NET_RELU, NULL, 1, (const char *const[]){"out"}, t.err) < 0);
    net_free(t.n);
}

int main(void)
{
    test_conv();
    test_pool();
    test_fc_and_elementwise();
    test_add_concat();
    test_mobile_kinds();
    test_detector_kinds();
    test_deconv();
    test_kinds();
    test_slices();
    test_topo_order();
    return check_done("test_layers");
}
