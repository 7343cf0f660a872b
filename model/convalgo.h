/* convalgo.h -- THE rule that picks how a convolution is computed, and the
 * scratch memory that way needs: the one place both interpreters of a
 * Plan ask.  The runtime's kernels (kernels/conv.c, kernels/wino.c) run
 * the algorithm it names with the blocking it gives; the cost model
 * (model/cost.c) charges the coefficient class of that algorithm
 * (cost_class) and counts its workspace in a device's memory.
 *
 * The algorithms, by the layer's shape only (never by slice, so that the
 * slices of a layer concatenate to the whole layer's output):
 *   DIRECT     groups with one input channel each (depthwise, or with a
 *              depth multiplier): a direct loop per output channel;
 *   WINO4      3x3, stride 1, dilation 1, >= 16 input and output channels
 *              per group, on maps of >= 2500 output pixels, or >= 400
 *              pixels with >= 32768 channel pairs: Winograd F(4x4, 3x3);
 *   WINO2      the other such layers on maps of >= 169 pixels (13x13):
 *              Winograd F(2x2, 3x3);
 *   GEMV       one output pixel (squeeze-excitation's 1x1 maps, a kernel
 *              covering the whole map): the pixel's input column times
 *              the weights, a matrix-vector product as FC computes (a
 *              matrix product of one column packs every weight first:
 *              several times slower), and costed as FC is;
 *   POINTWISE  1x1, stride 1, unpadded: one matrix product on the input;
 *   IM2COL     everything else: im2col a band of output rows at a time,
 *              then a matrix product.
 * The thresholds were measured in whole forward passes (bench/README.md,
 * "Kernels"); docs/runtime-kernels.md explains them.
 *
 * One thing in the rule belongs to the machine the kernels run on, so the
 * platform file states it (convalgo_rule, "kernels" in
 * docs/platform-format.md) and both the model and the runtime take it from
 * there: the largest number of channel pairs (input x output channels per
 * group) Winograd F(2x2) takes on.  F(2x2) transforms every pair's weights
 * on every call (16 floats written and read back per pair); on small maps
 * (13x13 to 19x19, 49 to 100 tiles) and many pairs those no longer stay in
 * cache, and whether the products' saved multiply-adds pay for that traffic
 * is the machine's balance of arithmetic against memory.  Here (x86,
 * AVX-512) they do not from 2^17 pairs on (bench/README.md, "Winograd on
 * small maps"); on a board without wide vectors the products cost more and
 * the trade can go the other way, so a platform without the field keeps
 * F(2x2) on every such layer (as the thesis' Jetson figures assume).
 *
 * Overrides (kern_set_winograd of the runtime, for benchmarks and tests)
 * are the rule's `wino_force`: 0 the rule above, -1 no Winograd, 2 or 4
 * Winograd of that size on every eligible layer.  The model never forces.
 *
 * Pure functions of shapes and the rule; nothing allocates or prints.
 */
#ifndef DSE_CONVALGO_H
#define DSE_CONVALGO_H

#include <stddef.h>

#include "net.h"

typedef enum {
    CONVALGO_IM2COL,
    CONVALGO_POINTWISE,
    CONVALGO_DIRECT,
    CONVALGO_WINO2,
    CONVALGO_WINO4,
    CONVALGO_GEMV,
    CONVALGO_COUNT
} convalgo;

/* The machine's part of the rule (a platform's "kernels" section). */
typedef struct {
    int wino_force;       /* 0 the rule; -1, 2, 4 the overrides above */
    long wino2_max_pairs; /* F(2x2) only below this many channel pairs; 0: no limit */
} convalgo_rule;
/* The rule of a platform that states nothing (all zero: no override, no
 * limit).  A NULL rule anywhere below means this one. */
#define CONVALGO_RULE_DEFAULT ((convalgo_rule){0, 0})

/* The algorithm of Conv layer L whose (first) input has shape x. */
convalgo convalgo_pick(const net_layer *L, net_shape x, const convalgo_rule *r);
/* The same for layer `layer` of n; -1 when the layer is not a Conv. */
int convalgo_of(const net *n, int layer, const convalgo_rule *r);
const char *convalgo_name(convalgo a); /* "im2col", "pointwise", ... */

/* Whether a GEMV layer gathers its one input column into the workspace
 * (1) or reads the input itself as the vector (0: a 1x1 kernel on a 1x1
 * map without top or left padding, so the column is every channel's one
 * value, contiguous).  The kernel and convalgo_workspace both ask this. */
int convalgo_gemv_gathers(const net_layer *L, net_shape x);

/* Scratch floats a slice of nc output channels needs with algorithm a
 * (0 for DIRECT, POINTWISE and a GEMV that does not gather).  Independent of the slice's first
 * channel and non-decreasing in nc. */
size_t convalgo_workspace(const net_layer *L, net_shape x, int nc, convalgo a);
/* The workspace of a slice of `layer` under rule r, floats (0 for layers
 * that are not Conv or ConvTranspose). */
size_t convalgo_workspace_of(const net *n, int layer, int nc, const convalgo_rule *r);
/* The workspace of output rows [h0, h0+nh) x columns [w0, w0+nw) (all
 * channels) of `layer`: a band runs the whole layer's algorithm (convalgo_pick on the layer's own
 * shape under r, so that its rows equal the whole layer's) on the band's
 * geometry (net_band_layer); a ConvTranspose band, its products on the
 * box's rows (kern_deconv).  0 for other kinds. */
size_t convalgo_workspace_band(const net *n, int layer, int h0, int nh, int w0, int nw,
                               const convalgo_rule *r);

/* The blocking behind those sizes, which the kernels follow. */
/* im2col: output rows per band for a K-row column matrix multiplied by the
 * layer's m = out_c / groups rows of weights per group.  From the layer's
 * shape only, never the slice's: the BLAS (OpenBLAS, the boards' path) sums
 * an element in an order that depends on the product's width, so a band
 * that followed the slice would make a slice differ from the whole layer in
 * the last bits. */
int convalgo_im2col_band_rows(int K, int m, int oh, int ow);
/* Winograd F(m x m, 3x3) (m = 2 or 4; alpha = m + 2): tiles across and
 * down the output, tiles per band of the input transform, and output
 * channels per block of transformed weights, for a slice of nc channels. */
typedef struct {
    int m, alpha;
    int tx, ty;      /* tiles across, down */
    int band_tiles;  /* tiles transformed together (whole tile rows) */
    int block_rows;  /* output channels per block of U (a group's part of the
                        slice in one block: its U made once per group) */
} convalgo_wino;
convalgo_wino convalgo_wino_geometry(const net_layer *L, net_shape x, int nc, int m);

/* ConvTranspose (kernels/deconv.c): one matrix product per band of input
 * rows, its column matrix (a group's output channels x kernel taps) x (the
 * band's pixels) then added into the output.  Input rows per band, from the
 * whole layer's shape only (never the slice's, so that a slice adds into
 * each output element in the whole layer's order), and the scratch floats
 * of a slice of nc output channels (non-decreasing in nc). */
int convalgo_deconv_band_rows(const net_layer *L, net_shape x);
size_t convalgo_deconv_workspace(const net_layer *L, net_shape x, int nc);

#endif
