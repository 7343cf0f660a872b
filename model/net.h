/* net.h -- the in-memory CNN: a DAG of layers in topological order.
 *
 * This is the one place that knows what a layer kind means: its attributes,
 * how its output shape follows from its inputs, how many MACs, elementwise
 * ops and parameters it costs, and whether its output channels may be split
 * across devices.  Everything else (JSON, ONNX, chromosomes, plan, cost
 * model, runtime kernels) asks this module.
 *
 * Invariant kept by net_finalize(): layers[] is in topological order (every
 * input index is smaller than the layer's own index, or NET_INPUT for the
 * network input tensor), names are unique, every shape is positive and
 * consistent with its inputs, and exactly one layer (the last) has no
 * consumer: it is the network output.
 *
 * Ownership: a net owns all its strings and arrays; net_free() releases
 * everything.  Functions that can fail return 0 on success and -1 on
 * error, writing one human-readable line (no newline) into err, a buffer of
 * BASE_ERRLEN bytes; they never print.
 */
#ifndef DSE_NET_H
#define DSE_NET_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

#define NET_INPUT (-1) /* producer index of the network input tensor */
/* Most inputs of one layer (Add, Concat): what the readers accept and the
 * Plan, the model and the runtime handle. */
#define NET_MAX_IN 1024
/* Largest count of a layer and of a whole network (MACs, ops, parameters,
 * weights): 2^53, exact in doubles (JSON) and 4 x weights bytes fit int64. */
#define NET_COUNT_MAX 9007199254740992LL

/* The layer kinds: one row each in model/kinds.def, the table every part of
 * dse reads (docs/extending.md says how to add one). */
typedef enum {
#define KIND(id, ...) NET_##id,
#include "kinds.def"
#undef KIND
    NET_KIND_COUNT
} net_kind;

/* Flags of a kind (kinds.def explains each). */
#define NET_KF_SPLIT 1u   /* output channels may be split across devices */
#define NET_KF_CHAN 2u    /* channel-wise: output channel c reads input channel c */
#define NET_KF_MACS 4u    /* work counted in multiply-adds (else ops) */
#define NET_KF_INPLACE 8u /* the kernel may write over its first input */
#define NET_KF_ALIAS 16u  /* computes nothing: its output is its input's floats */
#define NET_KF_ROWS 32u   /* output rows may be cut into bands (spatial slices) */

/* Weight layouts: none, one row per output channel (+ bias), or k vectors
 * of one value per channel of which the first p are learnable. */
#define NET_W_NONE 0
#define NET_W_ROWS (-1)
#define NET_W_VEC(k, p) ((k) * 16 + (p))

/* A JSON attribute of a kind: its key, type and the net_attr field(s). */
typedef enum { NET_A_INT, NET_A_INTS, NET_A_NUM, NET_A_BOOL } net_atype;
typedef struct {
    const char *key;
    net_atype type;
    int count;        /* NET_A_INTS: 2 (pair) or 4 (pads); else 1 */
    size_t off;       /* offsetof(net_attr, first field) */
    int required;
    double min;       /* smallest accepted value (ints and numbers) */
    int write_if_set; /* written only when not the kind's default (ReLU's max, a Slice's box) */
    int dflt_from;    /* >= 0: when absent, copy the attribute at this index (pool stride = kernel) */
} net_akey;

typedef struct {
    const char *name;     /* "Conv": JSON kind, listings, cost class */
    int min_in, max_in;   /* inputs (max_in 0: unbounded) */
    unsigned flags;       /* NET_KF_* */
    int wlayout;          /* NET_W_* */
    const char *init;     /* generated vector values, one letter per vector */
    const net_akey *keys; /* JSON attributes, NULL-key terminated */
    const char *onnx;     /* ONNX operators imported as this kind */
    const char *kernel;   /* runtime kernel (k_<kernel>, kernels/kernels.c) */
} net_kind_info_t;

/* A tensor of batch 1, NCHW.  A flat vector of n features is (n, 1, 1). */
typedef struct {
    int c, h, w;
} net_shape;

/* Attributes; each kind reads only the fields it needs (see net.c). */
typedef struct {
    int out_c;                /* Conv, FC: output channels / features; Slice: channels kept */
    int kh, kw;               /* Conv, pools: kernel */
    int sh, sw;               /* Conv, pools: stride; Slice: step along rows, columns */
    int dh, dw;               /* Conv: dilation */
    int pt, pl, pb, pr;       /* Conv, pools: pads top, left, bottom, right */
    int groups;               /* Conv; ChannelShuffle: groups interleaved; BranchSum,
                                 BranchSoftmax: the branches K */
    int card;                 /* BranchSoftmax: groups of K branches each (ResNeSt's
                                 cardinality; 1 for SKNet) */
    int bias;                 /* Conv, FC: 1 if there is a bias vector */
    int ceil_mode;            /* pools */
    int count_include_pad;    /* AveragePool */
    int lrn_size;             /* LRN: window across channels */
    double lrn_alpha, lrn_beta, lrn_k;
    double bn_eps;            /* BatchNorm, LayerNorm: epsilon; L2Norm: the smallest norm divided by */
    double relu_max;          /* ReLU: 0 = unbounded, else clip at relu_max */
    double hs_alpha, hs_beta; /* HardSigmoid: max(0, min(1, alpha x + beta)) */
    int rm_c, rm_h, rm_w;     /* ReduceMean: 1 for each axis averaged over */
    int add_sub;              /* Add of two inputs: 1 for input 0 minus input 1 */
    int start;                /* Slice: first input channel kept */
    int sl_top, sl_left;      /* Slice: first input row and column kept */
    int sl_rows, sl_cols;     /* Slice: rows and columns kept (0: every step-th one to the end) */
    int gelu_tanh;            /* GELU: 1 for the tanh approximation */
    double act_alpha;         /* LeakyReLU: slope below 0; ELU: alpha (x < 0: alpha (e^x - 1)) */
    double clip_lo, clip_hi;  /* Clip: min(clip_hi, max(clip_lo, x)) */
    int up_h, up_w;           /* Upsample: integer scale factors (nearest); Bilinear, Nearest: output size;
                                 PixelShuffle, PixelUnshuffle: up_h the factor r */
    int align_corners;        /* Bilinear: 1 maps the corner pixels' centres onto each other */
    int ps_dcr;               /* PixelShuffle: input channel (i r + j) C' + c, ONNX DCR, instead of
                                 c r^2 + i r + j (PyTorch, ONNX CRD); PixelUnshuffle: output
                                 channel (i r + j) C + c (SpaceToDepth) instead of c r^2 + i r + j */
    int pad_reflect, pad_edge; /* Pad: mirror the map (edge excluded), or repeat its edge,
                                  instead of zeros */
    double pad_value;         /* Pad: the constant around the map (0: zeros; neither mode) */
    int oph, opw;             /* ConvTranspose: output padding (rows at the bottom, columns at
                                 the right that no input reaches: the bias alone) */
} net_attr;

typedef struct {
    char *name;       /* unique within the net */
    net_kind kind;
    int nin;          /* number of inputs (Add, Concat: >= 2; others: 1) */
    int *in;          /* producer layer indices, or NET_INPUT */
    net_attr a;
    net_shape out;    /* inferred */
    int64_t macs;     /* multiply-adds: Conv and FC only */
    int64_t ops;      /* elementwise ops for the rest: one per output element
                         (ReduceMean, GlobalAveragePool: per input element) */
    int64_t params;   /* learnable parameters, torchvision's convention */
    int64_t weights;  /* floats the layer holds at run time (params + BN stats) */
} net_layer;

typedef struct net {
    char *name;
    char *input_name;  /* name of the input tensor ("data" by default) */
    net_shape input;
    int n;             /* number of layers */
    int cap;
    net_layer *layers;
    char *weights_path; /* raw float32 weights file, or NULL (generated) */
    int64_t weights_bytes; /* the ONNX file's size when weights_path is the model the
                              network was imported from (network JSON "weights_bytes"),
                              0 = not recorded: net_load refuses that file at another size */
    /* Derived by net_finalize(): consumer lists in CSR form. */
    int *cons_first;    /* n+2 entries; index 0 is the network input */
    int *cons;          /* consumer layer indices */
    char **pending;     /* per layer, its input names until net_finalize */
} net;

/* ---- kinds ---- */
const char *net_kind_name(net_kind k);          /* "Conv", "FC", ... */
int net_kind_parse(const char *s, net_kind *k); /* 0, or -1 if unknown */
int net_kind_splittable(net_kind k);            /* NET_KF_SPLIT: Conv, FC */
/* The kind's row of kinds.def (NULL for an out-of-range kind). */
const net_kind_info_t *net_kind_info(net_kind k);
static inline int net_wvecs(int wl) { return wl > 0 ? wl / 16 : 0; }
static inline int net_wparams(int wl) { return wl > 0 ? wl % 16 : 0; }
/* Channel-wise kinds: output channel c depends only on input channel c. */
int net_kind_channelwise(net_kind k);
/* ---- row and column bands (model/rows.c, docs/spatial.md) ---- */
/* NET_KF_ROWS: the kind's output rows (and columns) may be cut into bands. */
int net_kind_rowsplit(net_kind k);
/* Layer i may be cut into bands of rows (of columns): its kind allows it
 * and its output has at least two rows (columns). */
int net_layer_rowsplit(const net *n, int i);
int net_layer_colsplit(const net *n, int i);
/* The rows [*i0, *i1) of input k of layer i that its output rows [o0, o1)
 * read.  Windows (Conv, pools; stride S, top pad P, dilated kernel
 * tK = (K-1)*D+1, input height H): [max(0, S*o0 - P), min(H, S*(o1-1) - P
 * + tK)); Pad: the hull of net_pad_src over the band, reaching the
 * map's edge where the band mirrors or repeats it;
 * Upsample, PixelShuffle (factor s): [o0 / s, (o1-1) / s + 1); Bilinear:
 * from the first source row of o0 to the second of o1 - 1
 * (net_bilinear_src); InstanceNorm, GroupNorm: every row (their statistics); other
 * kinds: the same rows, or the whole input when it has another height
 * than the output (a C x 1 x 1 Mul scale); ConvTranspose: the hull over
 * its taps of the input rows that land in the band.  Never empty: a band
 * that reads nothing (in padding, or reached by no tap) reads one row,
 * unused: its interval's start clamped into the map (the Plan moves boxes
 * of at least one row). */
void net_rows_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1);
/* The same for columns: stride, left pad, kernel width and dilation along
 * the width, input width W. */
void net_cols_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1);
/* Pad's source of output position o along an axis of n inputs with
 * `before` pads: o - before inside the map; outside it the map mirrored
 * about its edge (reflect: the edge not repeated), its edge repeated
 * (edge), or -1 (zeros). */
int net_pad_src(int o, int before, int n, int reflect, int edge);
/* Bilinear's sources of output position o along an axis of n inputs and m
 * outputs: coordinate s = o (n-1)/(m-1) with align, else (o + 1/2) n/m -
 * 1/2 clamped at 0 (PyTorch's align_corners=False, ONNX's half_pixel),
 * between inputs *i0 = floor(s) and *i1 = min(*i0 + 1, n - 1), weight
 * *l = s - *i0 on *i1; s grows with o.  Inline: the Bilinear kernel calls it for every output row and column. */
static inline void net_bilinear_src(int n, int m, int align, int o, int *i0, int *i1, float *l)
{
    double s = align ? (m > 1 ? (double)o * (n - 1) / (m - 1) : 0) : (o + 0.5) * ((double)n / m) - 0.5;
    if (s < 0) s = 0;
    int f = (int)s;
    if (f > n - 1) f = n - 1;
    *i0 = f, *i1 = f + 1 < n ? f + 1 : n - 1;
    *l = (float)(s - f);
}
/* Nearest's source of output position o along an axis of n inputs and m
 * outputs: PyTorch's rule for a size, floor(o * (n / m)) with the ratio
 * and the product in float32 (as upsample_nearest2d computes it: at some
 * sizes, 26 to 22 or 14 to 46, one position off the exact floor(o n / m)
 * of ONNX's definition), at most n - 1; grows with o.  Inline: the kernel
 * calls it for every output row and column. */
static inline int net_nearest_src(int n, int m, int o)
{
    if (n == m) return o;
    /* float32 on every target dse builds for (FLT_EVAL_METHOD 0: SSE,
     * NEON; no -ffast-math, so nothing reassociates the two steps) */
    float s = (float)n / (float)m;
    int f = (int)floorf((float)o * s);
    return f < n - 1 ? f : n - 1;
}
/* The channels [*a0, *a1) of input k of layer i that its output channels
 * [c0, c1) read: a grouped or depthwise Conv's (ConvTranspose's, GroupNorm's)
 * input 0, the input channels of the groups those outputs belong to; a channel-wise kind's input,
 * [c0, c1); any other, all of it.  The Plan sends and assembles exactly
 * these, and kern_run reads them (kernels.h). */
void net_chans_in(const net *n, int i, int k, int c0, int c1, int *a0, int *a1);
/* Layer i restricted to output rows [h0, h1) x columns [w0, w1), as a
 * layer of its own: out.h = h1 - h0, out.w = w1 - w0, pads made to read
 * the box of input 0 (*x: input 0's shape with the needed rows and
 * columns; all of them along an axis the box does not cut, as the Plan
 * sends them) exactly as the whole layer reads them (top pad max(0, P -
 * S*h0); bottom pad H + pb - i1; left and right alike; a Pad's with
 * stride 1, the far pads closing the band), counts scaled to the band.
 * Kinds that move positions (Upsample, Bilinear, PixelShuffle) or read the
 * whole map (InstanceNorm, GroupNorm) need where the band and its box start in the
 * whole: the first input row and column of the box in *r0, *q0 (either
 * may be NULL).  Kernels run it; the cost model sizes its workspace. */
void net_band_layer(const net *n, int i, int h0, int h1, int w0, int w1, net_layer *band,
                    net_shape *x, int *r0, int *q0);
/* MACs or ops of channels [c0, c0+nc) x output rows [h0, h0+nh) x columns
 * [w0, w0+nw) of layer i: the slice's count x nh / out.h x nw / out.w
 * (every output position of a layer costs the same), except an
 * InstanceNorm or GroupNorm band's: two thirds of the slice's count (its statistics
 * read the whole map) plus a third scaled; and a ConvTranspose band's:
 * the count x the share of the input its box is (it multiplies every tap
 * of every input position it reads). */
int64_t net_box_macs(const net *n, int i, int c0, int nc, int h0, int nh, int w0, int nw);
int64_t net_box_ops(const net *n, int i, int c0, int nc, int h0, int nh, int w0, int nw);

/* Bit mask of splittable kinds from "conv,fc" / "fc" / "conv"; -1 if bad. */
int net_split_mask_parse(const char *s);
#define NET_SPLIT_DEFAULT ((1 << NET_CONV) | (1 << NET_FC))
/* The bit of a split mask that names kind k: "conv" names Conv and
 * ConvTranspose alike (a mask is an int: there are more kinds than bits). */
int net_split_bit(net_kind k);
/* Whether a split mask lets layers of kind k be cut by channels (its bit
 * set, and the kind splittable at all). */
int net_split_has(int mask, net_kind k);

/* Default attributes for a kind (stride 1, dilation 1, groups 1, ...). */
net_attr net_attr_default(net_kind k);
/* Square-kernel shorthands: k x k kernel, stride s, pad p on every side. */
net_attr net_attr_conv(int out_c, int k, int s, int p, int groups, int bias);
net_attr net_attr_pool(net_kind kind, int k, int s, int p);

/* ---- building ---- */
net *net_new(const char *name, const char *input_name, net_shape input);
void net_free(net *n);
/* Append a layer; inputs are given by name (the input tensor's name or an
 * earlier or later layer's name: resolution happens in net_finalize).
 * Returns the layer index, or -1 with err set on allocation failure. */
int net_add(net *n, const char *name, net_kind kind, const net_attr *a, int nin,
            const char *const *inputs, char *err);
/* Resolve input names, sort topologically (stable: keeps the given order
 * where the graph allows), infer shapes and counts, check the invariant.
 * `what` names the source (a file name) for error messages. */
int net_finalize(net *n, const char *what, char *err);

/* Infer layer L's shape and counts from its inputs' shapes ins[0..L->nin)
 * (L->name, kind, nin and a set): what net_finalize does for every layer,
 * for an importer that needs shapes while it builds.  0, or -1 with err. */
int net_layer_infer(net_layer *L, const net_shape *ins, const char *what, char *err);

/* ---- queries (valid after net_finalize) ---- */
int net_find(const net *n, const char *name); /* layer index or -1 */
net_shape net_in_shape(const net *n, int layer, int k); /* k-th input's shape */
static inline int64_t net_shape_numel(net_shape s) { return (int64_t)s.c * s.h * s.w; }
int net_output(const net *n); /* the output layer: n->n - 1 */
/* Consumers of layer i (i = NET_INPUT for the network input). */
static inline int net_ncons(const net *n, int i) { return n->cons_first[i + 2] - n->cons_first[i + 1]; }
static inline const int *net_cons(const net *n, int i) { return n->cons + n->cons_first[i + 1]; }
/* Totals over the whole net. */
typedef struct {
    int64_t macs, ops, params, weights;
    int nsplittable;
} net_totals;
net_totals net_total(const net *n, int split_mask);
/* MACs (or ops) of output channels [c0, c0+nc) of layer i: the layer's
 * count x nc / C, except a GroupNorm slice's ops: (2 (a1 - a0) + nc) / 3
 * of a channel's, [a0, a1) the channels of the groups it touches (its
 * statistics read them all: net_chans_in). */
int64_t net_slice_macs(const net *n, int i, int c0, int nc);
int64_t net_slice_ops(const net *n, int i, int c0, int nc);
/* Weight floats of the output channels [c0, c0+nc) of layer i. */
int64_t net_slice_weights(const net *n, int i, int c0, int nc);

/* ---- JSON (docs/network-format.md) ---- */
/* Parse a network file (JSON or, when it ends in .onnx and the ONNX
 * importer is built, ONNX).  Returns NULL with err naming file and problem. */
net *net_load(const char *path, char *err);
net *net_from_json(const char *text, const char *what, char *err);
/* Serialise; caller frees the returned string with free(). */
char *net_to_json(const net *n);
int net_save(const net *n, const char *path, char *err);
/* The same and, when w is given, the weights (weights_total(n) floats) as
 * n->weights_path: both files written whole, or neither. */
int net_save_with(const net *n, const char *path, const float *w, char *err);

/* ---- zoo ---- */
int net_zoo_count(void);
const char *net_zoo_name(int i);
const char *net_zoo_describe(int i);
net *net_zoo(const char *name, char *err); /* NULL if unknown */
/* A zoo name, or a file path: what every --network option accepts. */
net *net_open(const char *name_or_path, char *err);

#endif
