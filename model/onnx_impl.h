/* onnx_impl.h -- what the ONNX files of model/ share privately (not part
 * of the module API, which is onnx.h): onnx_tensor.c (messages, the name
 * map, tensor values), onnx_import.c (the importer's state and the helpers
 * of operator handlers), onnx_ops.c (the handlers), onnx_export.c.
 * Internal names carry ox_ so that they never meet the public onnx_ API.
 */
#ifndef DSE_ONNX_IMPL_H
#define DSE_ONNX_IMPL_H

#include "onnx.h"

#include "onnx.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#define OX_OPSET_MIN 1
#define OX_OPSET_MAX 21        /* operators used here have kept their meaning */
#define OX_ATTR_MAX (1 << 20)  /* kernel, stride, pad, dilation, group bound */
#define OX_IMPLICIT "dse:implicit" /* doc_string of the exporter's glue nodes */

/* ---- onnx_tensor.c: messages, files, names, tensor values ---- */

/* One line into err (BASE_ERRLEN bytes); control characters become '?'. */
void ox_seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ox_printable(const char *s);
/* Whole file into memory; NULL with err. */
/* Largest ONNX file read (protobuf's message limit, 2 GiB - 1). */
#define OX_MODEL_MAX 2147483647LL
uint8_t *ox_read_all(const char *path, size_t *len, char *err);
/* The shortest decimal that rounds to f, as a double. */
double ox_float_dec(float f);
/* Folder of path ("." if none); caller frees. */
char *ox_dir_of(const char *path);
/* Swap each width-byte value between little-endian and the host's order. */
void ox_le_bytes(uint8_t *p, size_t count, size_t width);

/* A string -> int map (open addressing), for tensor and layer names. */
typedef struct {
    const char **key;
    int *val;
    int cap, count;
} ox_smap;
int ox_smap_init(ox_smap *m, int n);
void ox_smap_free(ox_smap *m);
int ox_smap_get(const ox_smap *m, const char *k); /* -1 if absent */
/* Insert k (not copied: must outlive the map) unless present; the value
 * stored under k, or -2 when out of memory. */
int ox_smap_put(ox_smap *m, const char *k, int v);

/* Where a tensor's values are decoded: for external data and messages. */
typedef struct {
    const char *dir; /* folder for external data, NULL to refuse it */
    char *err;
    char ctx[400];   /* "file: node X (Op): input W" prefix for messages */
} ox_dctx;
int ox_dfail(ox_dctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ox_dtype_name(int t);
int64_t ox_tp_numel(ox_dctx *d, const Onnx__TensorProto *t);
/* Float32 values of t into dst (count = numel; dst NULL: validate only). */
int ox_tp_floats(ox_dctx *d, const Onnx__TensorProto *t, float *dst, int64_t *count);
/* Integer values (int64 or int32) of a small tensor, at most max of them. */
int ox_tp_ints(ox_dctx *d, const Onnx__TensorProto *t, int64_t *dst, int max, int *count);

/* ---- onnx_import.c: the importer's state ---- */

/* What a tensor of the graph is to the importer: an activation (a layer's
 * output or the network input), a constant, or a symbolic value -- an
 * expression of one activation that is not a layer (yet): the steps of a
 * decomposed LayerNorm or GELU, a channel-shuffle's 5-D view, a scaling by
 * a constant (onnx_fuse.c). */
enum { OX_UNDEF, OX_ACT, OX_CONST, OX_SYM };

/* Symbolic values, each of activation X (ox_tens.sym_src). */
enum {
    OX_S_MEANC = 1, /* mean of X over its channels (keepdims) */
    OX_S_CENT,      /* X - mean_c(X) */
    OX_S_SQ,        /* (X - mean_c(X))^2 */
    OX_S_VAR,       /* mean_c((X - mean_c(X))^2) */
    OX_S_VARE,      /* var + eps (sym_val = eps) */
    OX_S_STD,       /* sqrt(var + eps) (sym_val = eps) */
    OX_S_SCALED,    /* X * c (sym_val = c): Mul or Div by a scalar */
    OX_S_ERF,       /* erf(X / sqrt 2) */
    OX_S_ERF1,      /* 1 + erf(X / sqrt 2) */
    OX_S_XERF1,     /* X (1 + erf(X / sqrt 2)), twice GELU(X) */
    OX_S_HALFERF1,  /* (1 + erf(X / sqrt 2)) / 2 */
    OX_S_GROUPEDT,  /* X's 5-D view [1, g, C/g, H, W] (ox_tens.g5) transposed to
                       [1, C/g, g, H, W] (sym_val = g) */
    OX_S_VIEW6,     /* X viewed as [1, a, b, c, H, W] (sym_val = a 8192 + b) */
    OX_S_VIEW6T,    /* that view transposed as a pixel shuffle of factor r:
                       [1, C/r^2, H, r, W, r] (sym_val = r CRD, -r DCR) */
    OX_S_GVIEW,     /* X viewed as [1, G, C/G H W] (sym_val = G) */
    OX_S_GNORM,     /* that view through InstanceNormalization, a GroupNorm of
                       G groups (sym_node: the InstanceNormalization) */
    OX_S_SOFTPLUS,  /* softplus(X) (sym_node: the Softplus) */
    OX_S_TANHSP,    /* tanh(softplus(X)) (sym_node: the Tanh): times X, Mish */
    OX_S_L2,        /* the L2 norm of X over its channels (keepdims) */
    OX_S_L2C,       /* that norm clipped below at eps (sym_val = eps): F.normalize's */
    OX_S_VIEW6D,    /* X viewed as [1, C, H/r, r, W/r, r] (sym_val = r) */
    OX_S_VIEW6DT,   /* that view transposed as a pixel unshuffle of factor r:
                       [1, C, r, r, H/r, W/r] (sym_val = r, PyTorch's) or
                       [1, r, r, C, H/r, W/r] (-r, SpaceToDepth's) */
    OX_S_RVIEW,     /* X viewed as [1, G, K, C/(G K) H W] (sym_val = G, sym_k = K):
                       ResNeSt's radix softmax begins */
    OX_S_RVIEWT,    /* that view transposed to [1, K, G, C/(G K) H W] */
    OX_S_RSOFT,     /* the softmax of that over K (sym_node: the Softmax): a
                       BranchSoftmax, made where a Reshape reads it */
    OX_S_REDC,      /* the mean (sym_val NET_REDUCEMEAN) or the max
                       (NET_REDUCEMAX) of X over its channels without
                       keepdims, [1, H, W] (sym_node: the reduction) */
};

typedef struct {
    const char *name;
    int kind;
    int spec;      /* OX_ACT: producing spec, -1 for the network input */
    int rank;      /* OX_ACT: 2 or 4 */
    int flat;      /* OX_ACT: the exporter's implicit flatten (only Gemm may read it) */
    int pad[4];    /* OX_ACT: zero padding (top, left, bottom, right) still to apply:
                    * a Pad node, folded into the Conv or AveragePool reading it */
    int nhwc;      /* OX_ACT rank 4: its ONNX dims are [1, H, W, C] (a Transpose's view
                    * of the layer's C x H x W floats) */
    int g5;        /* OX_ACT rank 4: its ONNX dims are [1, g5, C/g5, H, W] (torch.stack of
                    * branches, a view of them: split attention); read only by the
                    * operators that know it (onnx_fuse.c, "branches") */
    int rv_k, rv_g; /* OX_ACT: a radix softmax's output, read only by the Reshape that made
                     * its layer; its ONNX dims [1, K, G, C/(G K) H W] (0: none) */
    net_shape shape; /* OX_ACT: the dse shape (net.c's, as the layers infer it) */
    int sym, sym_src; /* OX_SYM: which OX_S_* of which activation */
    double sym_val;  /* OX_SYM: its constant */
    int sym_k;       /* OX_SYM: a second one (a radix softmax's K) */
    int sym_node;    /* OX_SYM: the node that made it (names a layer realised from it) */
    const Onnx__TensorProto *tp; /* OX_CONST */
    int nuse;      /* node inputs reading it, plus one if it is the graph output */
    int folded;    /* OX_ACT: its layer now computes a later tensor (a Slice of this
                    * Slice merged into it): no layer has its shape */
} ox_tens;

typedef struct {
    char *name;          /* unique layer name */
    const Onnx__NodeProto *node;
    int node_idx;
    net_kind kind;
    net_attr a;
    int nin;
    int *in;             /* tensor indices */
    float *w;            /* weights in weights.h layout (NULL if not kept) */
    int64_t nw;          /* their count, kept or not */
    int autopad;         /* 1 SAME_UPPER, 2 SAME_LOWER: pads from the input size */
    int64_t flat_n;      /* Reshape: required features (>0), -2: = input channels */
    int flat_softmax;    /* Softmax < opset 13 on 4-D: ours only when H = W = 1 */
    int bias_open;       /* FC or Conv without bias that a following Add or Sub of a constant
                            may give one */
    int out;             /* tensor holding the layer's result */
} ox_spec;

typedef struct {
    const char *what;    /* file name for messages */
    char *err;
    ox_dctx d;
    int keep;            /* keep weight values (else only validate them) */
    Onnx__GraphProto *g;
    int64_t opset;
    ox_tens *t;
    int nt, capt;
    ox_smap tmap;           /* tensor name -> index */
    ox_spec *s;
    int ns, caps;
    ox_smap explicit_names; /* node names given in the file */
    ox_smap lnames;         /* layer names handed out */
    char **owned_names;  /* generated layer names (freed with the specs) */
    Onnx__TensorProto **owned; /* tensors made from Constant attributes */
    int nowned;
    int input;           /* tensor index of the network input */
    const Onnx__NodeProto *nd; /* node being imported */
    int nd_idx;
} ox_imp;

/* One line naming the file and the current node (I->nd), then -1. */
int ox_fail(ox_imp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The decoding context of the current node's tensor `tname` in `role`. */
ox_dctx *ox_dc(ox_imp *I, const char *role, const char *tname);

/* Attributes of the current node. */
const Onnx__AttributeProto *ox_att(const Onnx__NodeProto *nd, const char *name);
/* Every attribute must be one of `allowed` (space separated). */
int ox_check_attrs(ox_imp *I, const char *allowed);
int ox_att_int(ox_imp *I, const char *name, int64_t def, int64_t *out);
int ox_att_float(ox_imp *I, const char *name, double def, double *out);
/* An ints attribute of exactly `want` values, each in [lo, OX_ATTR_MAX];
 * absent: *present = 0. */
int ox_att_ints(ox_imp *I, const char *name, int want, int lo, int *v, int *present);
/* A string attribute equal to one of `choices` (space separated); index. */
int ox_att_choice(ox_imp *I, const char *name, const char *choices, int *idx);

/* Inputs of the current node. */
const char *ox_in_name(ox_imp *I, size_t k); /* "" when absent */
int ox_in_count(ox_imp *I);                  /* without trailing absent ones */
/* Input k as an activation; its tensor index, or -1 with the error set. */
int ox_in_act(ox_imp *I, size_t k);
int ox_in_kind(ox_imp *I, size_t k);   /* OX_* of input k's tensor */
int ox_in_tensor(ox_imp *I, size_t k); /* its index, -1 when absent */
/* Input k as a constant; NULL if absent and optional (*bad = 0), or on
 * error (*bad = 1). */
const Onnx__TensorProto *ox_in_const(ox_imp *I, size_t k, int required, int *bad);
/* Floats of a constant into a fresh array (NULL when values are not kept
 * or on error: check *bad). */
float *ox_const_floats(ox_imp *I, const Onnx__TensorProto *t, const char *role, size_t k,
                       int keep, int64_t *count, int *bad);
/* A scalar float constant (one element, any rank) at input k. */
int ox_const_scalar(ox_imp *I, size_t k, const char *role, int *present, double *v);
/* Outputs after the first must be read by nothing. */
int ox_extra_outputs_unused(ox_imp *I);

/* What the current node's output 0 becomes. */
/* An alias of tensor src (no layer); rank 0 keeps src's rank. */
int ox_alias(ox_imp *I, int src, int rank, int flat);
/* A new layer reading activations ins[0..nin), its output shape inferred
 * by net.c at once; NULL with the error set.  _out: output `out` of a node
 * of several outputs (Split: one layer each, named NODE.out). */
ox_spec *ox_new_spec(ox_imp *I, net_kind kind, const net_attr *a, int nin, const int *ins, int rank);
ox_spec *ox_new_spec_out(ox_imp *I, int out, net_kind kind, const net_attr *a, int nin,
                         const int *ins, int rank);
/* Append count floats to the layer's weights (kept only when I->keep). */
int ox_spec_append(ox_imp *I, ox_spec *s, const float *v, int64_t count);
int ox_act_rank(ox_imp *I, int t, int want, const char *what);
/* kernel_shape / strides / pads / dilations / auto_pad of Conv and pools. */
int ox_window_attrs(ox_imp *I, net_attr *a, int *autopad, int pool);
/* SAME padding before the input size is known (fixed once it is). */
void ox_same_guess(net_attr *a, int autopad);
/* Add the zero padding of a Pad node feeding this Conv / AveragePool. */
int ox_fold_pad(ox_imp *I, int x, net_attr *a, int autopad);

/* ---- onnx_const.c: folding of small constant computations ---- */

#define OX_CMAX 64 /* most values a folded constant may have */
#define OX_MAX_OUTPUTS 16 /* graph outputs the importer joins into one */
/* A small constant's values as doubles (exact for the integers of shapes). */
typedef struct {
    int dtype; /* ONNX data type */
    int rank;
    int64_t dims[8];
    int n;
    double v[OX_CMAX];
} ox_cval;
/* Keep a tensor made by the importer (freed with the import). */
int ox_own_tensor(ox_imp *I, Onnx__TensorProto *t);
int ox_cval_of(ox_imp *I, int t, const char *role, ox_cval *c); /* constant tensor t */
int ox_cval_out(ox_imp *I, int out, const ox_cval *c);         /* node output out := c */
/* Fold the current node if its inputs are constants (Shape: an activation);
 * *handled says whether it did. */
int ox_fold(ox_imp *I, int *handled);

/* ---- onnx_fuse.c: layouts and the patterns of decomposed operators ---- */

/* A symbolic value read as an activation: a layer made from it where one
 * can be (a mean over channels: ReduceMean; a scaling: Scale), else -1
 * with an error naming the pattern left unfinished. */
int ox_sym_realize(ox_imp *I, int t);
/* Handlers of the operators the patterns run through. */
int ox_op_transpose(ox_imp *I);
int ox_op_reducemean(ox_imp *I);
/* L2 normalisation (F.normalize): ReduceL2 over the channels, Clip of it
 * (*handled: the Clip's input is such a norm), Expand of it, and ONNX's
 * LpNormalization; the Div by it is ox_op_div's. */
int ox_op_reducel2(ox_imp *I);
/* Mish's steps: Softplus of an activation, and Tanh of that (*handled:
 * the Tanh's input is such a softplus); the Mul by x is ox_op_mul's. */
int ox_op_softplus(ox_imp *I);
int ox_op_tanh(ox_imp *I, int *handled);
int ox_op_clip_norm(ox_imp *I, int *handled);
int ox_op_expand(ox_imp *I);
int ox_op_lpnorm(ox_imp *I);
int ox_op_sub(ox_imp *I);
int ox_op_imagescaler(ox_imp *I);
int ox_op_pow(ox_imp *I);
int ox_op_sqrt(ox_imp *I);
int ox_op_erf(ox_imp *I);
int ox_op_div(ox_imp *I);
int ox_op_mul(ox_imp *I);
int ox_op_add(ox_imp *I, int sum);
int ox_op_layernorm(ox_imp *I);
int ox_op_reducemax(ox_imp *I);
int ox_op_globalmaxpool(ox_imp *I);
/* Unsqueeze of an activation (*handled 1): only of a reduction over
 * channels without keepdims, back to [1, 1, H, W]; else *handled 0. */
int ox_op_unsqueeze(ox_imp *I, int *handled);
int ox_op_reshape5(ox_imp *I, int *handled);
/* The 5-D views of branches (ox_tens.g5): their sum over axis 1, a
 * Concat of them, their product; Softmax over their axis 1 (*handled
 * when the input is such a view or ResNeSt's transposed view). */
int ox_op_reducesum(ox_imp *I);
int ox_op_concat5(ox_imp *I, int *handled);
int ox_op_mul5(ox_imp *I, int *handled);
int ox_op_softmax5(ox_imp *I, int *handled);
/* InstanceNormalization of a GroupNorm's 3-D view (*handled 1), else
 * nothing (*handled 0: op_instnorm imports it). */
int ox_op_instnorm_grouped(ox_imp *I, int *handled);
/* GroupNormalization (opset 18): a GroupNorm layer. */
int ox_op_groupnormalization(ox_imp *I);

/* ---- onnx_ops.c ---- */
/* Import the current node (I->nd): dispatch on its operator. */
int ox_import_node(ox_imp *I);

#endif
