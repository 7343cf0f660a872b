/* bandkinds.h -- a small network of every kind that moves positions or
 * reads more than its own rows when cut into bands (Pad of each mode,
 * Upsample, Nearest to any size, Bilinear both ways, InstanceNorm, GroupNorm, PixelShuffle, PixelUnshuffle,
 * ConvTranspose) and of the
 * kinds that keep positions but read other channels (GELU, Scale,
 * LayerNorm, L2Norm, BranchSoftmax, BranchSum, ChannelShuffle, Slice; Slices cropping rows and columns with
 * steps move positions too), between convolutions: the tests of
 * bands run it through the Plan, the model and the runtime as they run
 * the zoo (docs/spatial.md). */
#ifndef DSE_TEST_BANDKINDS_H
#define DSE_TEST_BANDKINDS_H

#include "net.h"

static inline net *bandkinds_net(char *err)
{
    net *n = net_new("bandkinds", "data", (net_shape){3, 12, 10});
    if (!n) return NULL;
    const char *prev = "data";
    int ok = 1;
#define BK_ADD(name, kind, a)                                                  \
    do {                                                                       \
        const char *in_[1] = {prev};                                           \
        ok = ok && net_add(n, name, kind, &(a), 1, in_, err) >= 0;             \
        prev = name;                                                           \
    } while (0)
    net_attr c = net_attr_conv(8, 3, 1, 1, 1, 1);
    BK_ADD("c1", NET_CONV, c);
    net_attr p = net_attr_default(NET_PAD);
    p.pt = 2, p.pl = 1, p.pb = 1, p.pr = 2, p.pad_reflect = 1;
    BK_ADD("pad_reflect", NET_PAD, p); /* 8x15x13 */
    c = net_attr_conv(8, 3, 2, 0, 1, 1);
    BK_ADD("c2", NET_CONV, c); /* 8x7x6 */
    net_attr u = net_attr_default(NET_UPSAMPLE);
    u.up_h = 2, u.up_w = 3;
    BK_ADD("up", NET_UPSAMPLE, u); /* 8x14x18 */
    c = net_attr_conv(8, 3, 1, 1, 1, 1);
    BK_ADD("c3", NET_CONV, c);
    net_attr b = net_attr_default(NET_BILINEAR);
    b.up_h = 19, b.up_w = 9;
    BK_ADD("bil", NET_BILINEAR, b); /* 8x19x9 */
    net_attr in = net_attr_default(NET_INSTNORM);
    in.bn_eps = 1e-5;
    BK_ADD("inorm", NET_INSTNORM, in);
    net_attr gn = net_attr_default(NET_GROUPNORM);
    gn.groups = 4;
    BK_ADD("gnorm", NET_GROUPNORM, gn);
    net_attr g = net_attr_default(NET_GELU);
    BK_ADD("gelu", NET_GELU, g);
    net_attr s = net_attr_default(NET_SCALE);
    BK_ADD("scale", NET_SCALE, s);
    net_attr ln = net_attr_default(NET_LAYERNORM);
    ln.bn_eps = 1e-5;
    BK_ADD("ln", NET_LAYERNORM, ln);
    net_attr l2 = net_attr_default(NET_L2NORM);
    BK_ADD("l2norm", NET_L2NORM, l2);
    net_attr bs = net_attr_default(NET_BSOFTMAX); /* ResNeSt's: 2 branches in 2 groups */
    bs.groups = 2, bs.card = 2;
    BK_ADD("bsoftmax", NET_BSOFTMAX, bs);
    net_attr bsum = net_attr_default(NET_BSUM);
    bsum.groups = 2;
    BK_ADD("bsum", NET_BSUM, bsum); /* 4x19x9 */
    c = net_attr_conv(16, 1, 1, 0, 1, 1);
    BK_ADD("c4", NET_CONV, c); /* 16x19x9 */
    net_attr ps = net_attr_default(NET_SHUFFLEUP);
    ps.up_h = 2;
    BK_ADD("ps", NET_SHUFFLEUP, ps); /* 4x38x18 */
    net_attr pu = net_attr_default(NET_SHUFFLEDOWN);
    pu.up_h = 2, pu.ps_dcr = 1;
    BK_ADD("pu", NET_SHUFFLEDOWN, pu); /* 16x19x9 */
    BK_ADD("ps_back", NET_SHUFFLEUP, ps); /* 4x38x18 */
    net_attr nr = net_attr_default(NET_NEAREST);
    nr.up_h = 57, nr.up_w = 12; /* 1.5 times the rows, 2/3 of the columns */
    BK_ADD("nearest", NET_NEAREST, nr); /* 4x57x12 */
    nr.up_h = 38, nr.up_w = 18;
    BK_ADD("nearest_back", NET_NEAREST, nr); /* 4x38x18 */
    net_attr sh = net_attr_default(NET_SHUFFLE);
    sh.groups = 2;
    BK_ADD("shuffle", NET_SHUFFLE, sh);
    net_attr sl = net_attr_default(NET_SLICE);
    sl.start = 1, sl.out_c = 3;
    BK_ADD("slice", NET_SLICE, sl); /* 3x38x18 */
    sl = net_attr_default(NET_SLICE); /* crops: every other row from 3, columns from 1 */
    sl.start = 0, sl.out_c = 3, sl.sl_top = 3, sl.sh = 2, sl.sl_left = 1;
    BK_ADD("crop_rows", NET_SLICE, sl); /* 3x18x17 */
    sl.sl_top = 1, sl.sl_rows = 15, sl.sh = 1, sl.sl_left = 0, sl.sl_cols = 8, sl.sw = 2;
    BK_ADD("crop_cols", NET_SLICE, sl); /* 3x15x8: rows [1, 16), columns 0, 2, ..., 14 */
    p = net_attr_default(NET_PAD);
    p.pt = 0, p.pl = 2, p.pb = 3, p.pr = 1, p.pad_edge = 1;
    BK_ADD("pad_edge", NET_PAD, p); /* 3x18x11 */
    c = net_attr_conv(6, 3, 2, 1, 1, 1);
    BK_ADD("c5", NET_CONV, c); /* 6x9x6 */
    b = net_attr_default(NET_BILINEAR);
    b.up_h = 8, b.up_w = 5, b.align_corners = 1;
    BK_ADD("bil_ac", NET_BILINEAR, b); /* 6x8x5 */
    p = net_attr_default(NET_PAD);
    p.pt = 1, p.pl = 0, p.pb = 2, p.pr = 1;
    BK_ADD("pad_zeros", NET_PAD, p); /* 6x11x6 */
    c = net_attr_conv(4, 3, 1, 0, 1, 1);
    BK_ADD("c6", NET_CONV, c); /* 4x9x4 */
    net_attr d = net_attr_default(NET_DECONV);
    d.out_c = 4, d.kh = d.kw = 3, d.sh = d.sw = 2, d.pt = d.pb = d.pl = d.pr = 1, d.bias = 1;
    d.oph = d.opw = 1;
    BK_ADD("deconv", NET_DECONV, d); /* 4x18x8 */
    c = net_attr_conv(3, 3, 1, 1, 1, 1);
    BK_ADD("c7", NET_CONV, c);
#undef BK_ADD
    if (!ok || net_finalize(n, "bandkinds", err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

#endif
