/* kinds.c -- the layer-kind table (kinds.def) as data: net_kind_info()
 * and each kind's JSON attributes.
 *
 * Invariant: one row per net_kind, in enum order (the enum and this array
 * expand the same file); every attribute key names a field of net_attr of
 * its type (ints for NET_A_INT/INTS/BOOL, double for NET_A_NUM).
 */
#include "net.h"

#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(net_attr, f)
/* key, type, count, field, required, min, write_if_set, dflt_from */
static const net_akey keys_none[] = {{NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_conv[] = {
    {"out_channels", NET_A_INT, 1, OFF(out_c), 1, 1, 0, -1},
    {"kernel", NET_A_INTS, 2, OFF(kh), 1, 1, 0, -1},
    {"stride", NET_A_INTS, 2, OFF(sh), 0, 1, 0, -1},
    {"dilation", NET_A_INTS, 2, OFF(dh), 0, 1, 0, -1},
    {"pads", NET_A_INTS, 4, OFF(pt), 0, 0, 0, -1},
    {"groups", NET_A_INT, 1, OFF(groups), 0, 1, 0, -1},
    {"bias", NET_A_BOOL, 1, OFF(bias), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
/* ConvTranspose: Conv's keys and the output padding (rows and columns
 * added at the bottom and right, which only the bias reaches). */
static const net_akey keys_deconv[] = {
    {"out_channels", NET_A_INT, 1, OFF(out_c), 1, 1, 0, -1},
    {"kernel", NET_A_INTS, 2, OFF(kh), 1, 1, 0, -1},
    {"stride", NET_A_INTS, 2, OFF(sh), 0, 1, 0, -1},
    {"dilation", NET_A_INTS, 2, OFF(dh), 0, 1, 0, -1},
    {"pads", NET_A_INTS, 4, OFF(pt), 0, 0, 0, -1},
    {"output_padding", NET_A_INTS, 2, OFF(oph), 0, 0, 0, -1},
    {"groups", NET_A_INT, 1, OFF(groups), 0, 1, 0, -1},
    {"bias", NET_A_BOOL, 1, OFF(bias), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_fc[] = {
    {"out_features", NET_A_INT, 1, OFF(out_c), 1, 1, 0, -1},
    {"bias", NET_A_BOOL, 1, OFF(bias), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_relu[] = {
    {"max", NET_A_NUM, 1, OFF(relu_max), 0, 0, 1, -1}, /* 0: unbounded */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_lrn[] = {
    {"size", NET_A_INT, 1, OFF(lrn_size), 0, 1, 0, -1},
    {"alpha", NET_A_NUM, 1, OFF(lrn_alpha), 0, -1e308, 0, -1},
    {"beta", NET_A_NUM, 1, OFF(lrn_beta), 0, -1e308, 0, -1},
    {"k", NET_A_NUM, 1, OFF(lrn_k), 0, -1e308, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
/* Pools: stride defaults to the kernel, as in PyTorch. */
#define POOL_KEYS                                                                                  \
    {"kernel", NET_A_INTS, 2, OFF(kh), 1, 1, 0, -1}, {"stride", NET_A_INTS, 2, OFF(sh), 0, 1, 0, 0}, \
        {"pads", NET_A_INTS, 4, OFF(pt), 0, 0, 0, -1},                                             \
        {"ceil_mode", NET_A_BOOL, 1, OFF(ceil_mode), 0, 0, 0, -1}
static const net_akey keys_maxpool[] = {POOL_KEYS, {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_avgpool[] = {
    POOL_KEYS, {"count_include_pad", NET_A_BOOL, 1, OFF(count_include_pad), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_bn[] = {
    {"epsilon", NET_A_NUM, 1, OFF(bn_eps), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};

static const net_akey keys_hsig[] = {
    {"alpha", NET_A_NUM, 1, OFF(hs_alpha), 0, -1e308, 0, -1},
    {"beta", NET_A_NUM, 1, OFF(hs_beta), 0, -1e308, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};

static const net_akey keys_rmean[] = {
    {"over_channels", NET_A_BOOL, 1, OFF(rm_c), 0, 0, 0, -1},
    {"over_height", NET_A_BOOL, 1, OFF(rm_h), 0, 0, 0, -1},
    {"over_width", NET_A_BOOL, 1, OFF(rm_w), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_add[] = { /* of two inputs, the second may be subtracted */
    {"subtract", NET_A_BOOL, 1, OFF(add_sub), 0, 0, 1, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_slice[] = { /* a box of channels, rows and columns (a crop) */
    {"start", NET_A_INT, 1, OFF(start), 1, 0, 0, -1},
    {"channels", NET_A_INT, 1, OFF(out_c), 1, 1, 0, -1},
    {"origin", NET_A_INTS, 2, OFF(sl_top), 0, 0, 1, -1}, /* first row, column */
    {"size", NET_A_INTS, 2, OFF(sl_rows), 0, 0, 1, -1},  /* rows, columns; 0: to the end */
    {"step", NET_A_INTS, 2, OFF(sh), 0, 1, 1, -1},       /* every step-th row, column */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_shuffle[] = {
    {"groups", NET_A_INT, 1, OFF(groups), 1, 1, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_bsum[] = { /* the sum of K equal groups of channels (branches) */
    {"branches", NET_A_INT, 1, OFF(groups), 1, 1, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_bsoft[] = { /* softmax across K branches, per group of cardinality */
    {"branches", NET_A_INT, 1, OFF(groups), 1, 1, 0, -1},
    {"cardinality", NET_A_INT, 1, OFF(card), 0, 1, 1, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_gn[] = { /* GroupNorm: groups of channels share their statistics */
    {"groups", NET_A_INT, 1, OFF(groups), 1, 1, 0, -1},
    {"epsilon", NET_A_NUM, 1, OFF(bn_eps), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_ln[] = {
    {"epsilon", NET_A_NUM, 1, OFF(bn_eps), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_gelu[] = {
    {"tanh", NET_A_BOOL, 1, OFF(gelu_tanh), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_alpha[] = { /* LeakyReLU, ELU: default per kind (net_attr_default) */
    {"alpha", NET_A_NUM, 1, OFF(act_alpha), 0, -1e308, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_clip[] = { /* Clip with min 0 is imported as a ReLU */
    {"min", NET_A_NUM, 1, OFF(clip_lo), 1, -1e308, 0, -1},
    {"max", NET_A_NUM, 1, OFF(clip_hi), 1, -1e308, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_up[] = {
    {"scale", NET_A_INTS, 2, OFF(up_h), 1, 1, 0, -1}, /* height, width */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_ps[] = { /* sub-pixel upsampling (super-resolution), its inverse */
    {"factor", NET_A_INT, 1, OFF(up_h), 1, 1, 0, -1},
    {"dcr", NET_A_BOOL, 1, OFF(ps_dcr), 0, 0, 0, -1}, /* DepthToSpace's default, SpaceToDepth's order */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_size[] = { /* Nearest: output row o is input row floor(o H / h) */
    {"size", NET_A_INTS, 2, OFF(up_h), 1, 1, 0, -1}, /* output height, width */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_bilin[] = {
    {"size", NET_A_INTS, 2, OFF(up_h), 1, 1, 0, -1}, /* output height, width */
    {"align_corners", NET_A_BOOL, 1, OFF(align_corners), 0, 0, 0, -1},
    {NULL, 0, 0, 0, 0, 0, 0, -1}};
static const net_akey keys_pad[] = { /* around H and W: top, left, bottom, right */
    {"pads", NET_A_INTS, 4, OFF(pt), 1, 0, 0, -1},
    {"reflect", NET_A_BOOL, 1, OFF(pad_reflect), 0, 0, 0, -1}, /* mirror, edge excluded */
    {"edge", NET_A_BOOL, 1, OFF(pad_edge), 0, 0, 0, -1},       /* repeat the edge */
    {"value", NET_A_NUM, 1, OFF(pad_value), 0, -1e308, 1, -1}, /* constant, when not 0 */
    {NULL, 0, 0, 0, 0, 0, 0, -1}};

static const net_kind_info_t table[NET_KIND_COUNT] = {
#define KIND(id, name, min, max, flags, wl, init, keys, onnx, kernel)                              \
    {name, min, max, flags, wl, init, keys_##keys, onnx, #kernel},
#include "kinds.def"
#undef KIND
};

const net_kind_info_t *net_kind_info(net_kind k)
{
    return (k >= 0 && k < NET_KIND_COUNT) ? &table[k] : NULL;
}

const char *net_kind_name(net_kind k)
{
    return (k >= 0 && k < NET_KIND_COUNT) ? table[k].name : "?";
}

int net_kind_parse(const char *s, net_kind *k)
{
    for (int i = 0; i < NET_KIND_COUNT; i++)
        if (strcmp(s, table[i].name) == 0) {
            *k = (net_kind)i;
            return 0;
        }
    return -1;
}

int net_kind_splittable(net_kind k)
{
    return k >= 0 && k < NET_KIND_COUNT && (table[k].flags & NET_KF_SPLIT);
}

int net_kind_channelwise(net_kind k)
{
    return k >= 0 && k < NET_KIND_COUNT && (table[k].flags & NET_KF_CHAN);
}
