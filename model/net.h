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
 * NET_ERRLEN bytes; they never print.
 */
#ifndef DSE_NET_H
#define DSE_NET_H

#include <stddef.h>
#include <stdint.h>

#define NET_ERRLEN 512
#define NET_INPUT (-1) /* producer index of the network input tensor */

typedef enum {
    NET_CONV,
    NET_FC,
    NET_RELU, /* with relu_max > 0 it is Clip(0, max), e.g. ReLU6 */
    NET_LRN,
    NET_MAXPOOL,
    NET_AVGPOOL,
    NET_GAP, /* GlobalAveragePool */
    NET_BN,  /* BatchNorm, inference form */
    NET_ADD,
    NET_CONCAT, /* along channels */
    NET_FLATTEN,
    NET_DROPOUT, /* identity at inference */
    NET_SOFTMAX, /* over the channel axis (all C*H*W elements when H=W=1) */
    NET_KIND_COUNT
} net_kind;

/* A tensor of batch 1, NCHW.  A flat vector of n features is (n, 1, 1). */
typedef struct {
    int c, h, w;
} net_shape;

/* Attributes; each kind reads only the fields it needs (see net.c). */
typedef struct {
    int out_c;                /* Conv, FC: output channels / features */
    int kh, kw;               /* Conv, pools: kernel */
    int sh, sw;               /* Conv, pools: stride */
    int dh, dw;               /* Conv: dilation */
    int pt, pl, pb, pr;       /* Conv, pools: pads top, left, bottom, right */
    int groups;               /* Conv */
    int bias;                 /* Conv, FC: 1 if there is a bias vector */
    int ceil_mode;            /* pools */
    int count_include_pad;    /* AveragePool */
    int lrn_size;             /* LRN: window across channels */
    double lrn_alpha, lrn_beta, lrn_k;
    double bn_eps;            /* BatchNorm */
    double relu_max;          /* ReLU: 0 = unbounded, else clip at relu_max */
} net_attr;

typedef struct {
    char *name;       /* unique within the net */
    net_kind kind;
    int nin;          /* number of inputs (Add, Concat: >= 2; others: 1) */
    int *in;          /* producer layer indices, or NET_INPUT */
    net_attr a;
    net_shape out;    /* inferred */
    int64_t macs;     /* multiply-adds: Conv and FC only */
    int64_t ops;      /* elementwise ops (one per output element) for the rest */
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
    /* Derived by net_finalize(): consumer lists in CSR form. */
    int *cons_first;    /* n+2 entries; index 0 is the network input */
    int *cons;          /* consumer layer indices */
    char **pending;     /* per layer, its input names until net_finalize */
} net;

/* ---- kinds ---- */
const char *net_kind_name(net_kind k);          /* "Conv", "FC", ... */
int net_kind_parse(const char *s, net_kind *k); /* 0, or -1 if unknown */
int net_kind_splittable(net_kind k);            /* Conv, FC */
/* Channel-wise kinds: output channel c depends only on input channel c. */
int net_kind_channelwise(net_kind k);
/* Bit mask of splittable kinds from "conv,fc" / "fc" / "conv"; -1 if bad. */
int net_split_mask_parse(const char *s);
#define NET_SPLIT_DEFAULT ((1 << NET_CONV) | (1 << NET_FC))

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
/* MACs (or ops) of output channels [c0, c0+nc) of layer i. */
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

/* ---- zoo ---- */
int net_zoo_count(void);
const char *net_zoo_name(int i);
const char *net_zoo_describe(int i);
net *net_zoo(const char *name, char *err); /* NULL if unknown */
/* A zoo name, or a file path: what every --network option accepts. */
net *net_open(const char *name_or_path, char *err);

#endif
