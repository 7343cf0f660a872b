/* cost.h -- the analytical model (DESIGN section 6, thesis 4.3) and its
 * coefficients file (docs/coefficients-format.md): the whole public API of
 * model/cost.c and model/coeffs.c.
 *
 * The model interprets a Plan (model/plan.h) exactly as the MPI runtime
 * executes it (runtime/exec.h): a device runs its steps in order; COMPUTE
 * costs overhead + work / (frequency * cores * per_cycle) (eq. 4.7, work =
 * MACs for Conv/FC, elementwise ops otherwise); SEND costs the sender a
 * small overhead and the message, serialised on the sender's outgoing
 * channel of that link class, arrives latency + bytes / bandwidth later
 * (eq. 4.8); RECV waits for the arrival and for its own copy (the
 * receiver moves the payload): bytes / the link's pull rate from the
 * later of the header's arrival and the RECV's start plus the pickup;
 * CONCAT copies bytes at the copy
 * bandwidth.  Receive buffers exist from the start of the inference (the
 * runtime posts every MPI_Irecv then); a tensor is freed after its
 * free-list step, or, if a send of it is still in flight, after the first
 * later non-SEND step ending once that send has arrived.  Memory is
 * weights + (peak live bytes + the kernels' workspace), scaled by
 * per-device-kind coefficients plus a bias (eq. 4.9); energy is busy * P_busy + (latency - busy) * P_idle
 * (eq. 4.10 with an idle term).  docs/cost-model.md states every rule.
 *
 * Units: seconds inside, milliseconds for the latency objective, 1 MB =
 * 1e6 bytes, joules, watts.
 *
 * Ownership and threads: a cost_coeffs owns all its strings (notes
 * included).  A cost_model borrows the net and the platform (they must
 * outlive it), copies what it needs from the coefficients (which may be
 * freed after cost_new), and owns scratch buffers reused by every
 * cost_eval: create one model per thread.  Errors go to char err[BASE_ERRLEN]
 * buffers as one line; nothing here prints.
 */
#ifndef DSE_COST_H
#define DSE_COST_H

#include <stdint.h>

#include "net.h"
#include "plan.h"
#include "platform.h"

/* ---- coefficient classes ----
 * Compute coefficients are looked up per class: the layer kinds, plus one
 * class per convolution algorithm other than im2col, for the Conv layers
 * the runtime computes that way (model/convalgo.h, the one rule the
 * runtime follows too): their speed per MAC differs by several times
 * (thesis 4.3.1 keeps a separate coefficient for Winograd; a depthwise
 * convolution is memory-bound, a pointwise one a plain product).  A file
 * without an entry for one of them uses its "Conv" entry, and so does one
 * without "ConvTranspose" (a matrix product per MAC as im2col's; files
 * older than the kind have none); a file without "GroupNorm" uses its
 * "InstanceNorm" (the same three passes per element), one without
 * "PixelUnshuffle" its "PixelShuffle" (the same gather, inverted), one
 * without "Nearest" its "Upsample" (the same copy), one without "L2Norm"
 * its "LayerNorm" (passes over each pixel's channels), one without "Mish"
 * its "Softplus" (the transcendental part of its work), one without
 * "BranchSum" its "Add" (a sum of equal tensors), one without
 * "BranchSoftmax" its "Softmax": cost_class_base
 * names that fallback. */
#define COST_CLASS_CONV_WINOGRAD NET_KIND_COUNT         /* "ConvWinograd": F(2x2) and F(4x4) */
#define COST_CLASS_CONV_POINTWISE (NET_KIND_COUNT + 1)  /* "ConvPointwise": 1x1, one product */
#define COST_CLASS_CONV_DIRECT (NET_KIND_COUNT + 2)     /* "ConvDirect": depthwise, direct loop */
#define COST_NCLASS (NET_KIND_COUNT + 3)
int cost_class(const net *n, int layer, const convalgo_rule *r); /* r: the platform's kernels */
const char *cost_class_name(int cls);          /* "Conv", ..., "ConvWinograd" */
int cost_class_base(int cls); /* the class cls falls back on: NET_CONV, NET_INSTNORM, or -1 */
int cost_class_parse(const char *s, int *cls); /* 0, or -1 if unknown */

/* ---- coefficients ----
 * Format versions: 1; 2 = 1 plus the optional "arch" (the CPU architecture
 * that measured them), and links' optional "pickup_us"; 3 = 2 plus
 * "per_device"; 4 = 3 with GlobalAveragePool's work counted as the
 * elements it reads (C*H*W of its input), where 1 to 3 counted the ones
 * it writes (C): the model multiplies an older file's GlobalAveragePool
 * per_cycle by each layer's input H*W (the same time per element written),
 * so it prices every layer as before; 5 = 4 plus a class's
 * optional "curve"; 6 = 5 plus a layer's optional "band"; 7 = 6 plus a
 * layer's optional "corun"; 8 = 7 plus a layer's optional
 * "band_columns" (and column bands of a file of 7 or older, which never
 * timed them, priced by its row table); 9 = 8 plus links' optional
 * "pull_bandwidth_mbs"; 10 = 9 plus devices' optional "step_spread".
 * The reader takes all ten (each refuses what a later version added: an
 * older dse says "version 3" rather than "unknown key"); the writer
 * writes the file's own version (coeffs_new: COEFFS_VERSION). */
#define COEFFS_VERSION 10
/* The first version whose GlobalAveragePool rates are per element read. */
#define COEFFS_VERSION_GAP_READS 4
/* The first version with a class's "curve" (coeffs_curve). */
#define COEFFS_VERSION_CURVE 5
/* The first version with a layer's "band" (coeffs_band). */
#define COEFFS_VERSION_BAND 6
/* The first version with a layer's "corun" (coeffs_rates.corun). */
#define COEFFS_VERSION_CORUN 7
/* The first version with a layer's "band_columns" (coeffs_rates.cband),
 * and whose column bands are priced by it alone. */
#define COEFFS_VERSION_COLBAND 8
/* The first version with links' "pull_bandwidth_mbs" (coeffs_link). */
#define COEFFS_VERSION_PULL 9
/* The first version with devices' "step_spread" (coeffs_device). */
#define COEFFS_VERSION_SPREAD 10
/* A step spread is at most this (a step's time varying by more than its
 * median is a measuring accident). */
#define COEFFS_SPREAD_MAX 1.0
/* A corun factor is at most this (a larger one is a measuring accident). */
#define COEFFS_CORUN_MAX 10.0

/* Where a coefficient comes from (the file's "source"). */
typedef enum {
    COEFFS_UNSET = 0,  /* absent: the model falls back (see docs) */
    COEFFS_FITTED,     /* least-squares fit: r2, rmse and n are set */
    COEFFS_MEASURED,   /* read off a measurement */
    COEFFS_DERIVED,    /* computed from measurements under stated assumptions */
    COEFFS_ASSUMPTION, /* an assumption (public specs, rule of thumb) */
    COEFFS_DECLARED,   /* copied from the platform file */
    COEFFS_DEFAULT     /* a built-in default (coeffs_default) */
} coeffs_source;

typedef struct {
    double value;
    coeffs_source source;
    double r2, rmse;  /* fit quality (COEFFS_FITTED); NaN when not known */
    int n;            /* points fitted; 0 when not fitted */
    const char *note; /* NULL, or a string owned by the cost_coeffs (coeffs_note) */
} coeffs_value;

/* A layer's measured row bands (format 6: "band" in a layers entry): a
 * band of rows[i] output rows of the layer, all channels, took ratio[i]
 * times its share of the whole layer's time (rows[i] / height of it).
 * rows strictly decreasing, 1 <= rows < height; ratio > 0; only in an
 * entry of one layer ("network/layer").  The model charges a band of nh
 * rows the whole layer's time x its share: rows / height x ratio at the
 * points, (height, 1), linear in nh between, proportional below the last
 * point, never more for a thinner band (docs/coefficients-format.md). */
#define COEFFS_BAND_MAX 8
typedef struct {
    int n;      /* points; 0: none (a band costs its share of the work) */
    int height; /* the layer's output rows when measured */
    int rows[COEFFS_BAND_MAX];
    double ratio[COEFFS_BAND_MAX];
} coeffs_band;

/* Compute coefficients of one class or one layer on one device kind. */
typedef struct {
    coeffs_value per_cycle;   /* work units (MACs or ops) per cycle per core, > 0 */
    coeffs_value overhead_us; /* fixed cost of each compute step */
    coeffs_value busy_w;      /* power while computing it */
    coeffs_band band;         /* layers entries only; n 0 when absent */
    /* The same for bands of output columns (format 8: "band_columns"):
     * height is the layer's output width when measured, rows[i] the
     * columns of point i. */
    coeffs_band cband;
    /* Layers entries of one layer only (format 7): the layer's time while
     * another device of its board runs the same layer at the same time,
     * over its time alone, in [1, COEFFS_CORUN_MAX]: the memory both share
     * (docs/cost-model.md, "Devices that share a board's memory"). */
    coeffs_value corun;
} coeffs_rates;

/* A class's measured step time against work (format 5: "curve" in a
 * kinds entry, beside its per_cycle), what the model prices a layer of a
 * network that was not calibrated by: a layer none of whose own entries
 * (the layer's or its network's) gives per_cycle or overhead_us; a
 * convolution algorithm's class without a curve or per_cycle of its own
 * takes Conv's curve.  One line per class (per_cycle and overhead_us)
 * cannot serve layers of 1e3 and 1e9 operations: the fixed cost it fits on
 * large layers is charged whole to tiny ones.  The curve is the
 * calibration's samples of the class (every layer and channel share
 * timed), grouped by work, each group's median work and time, made
 * non-decreasing; times were measured on the first device of the kind
 * (calibrate.c rep_of).  Between points the model interpolates log-log (a
 * power law per segment, through both points), below the first it
 * extends the first segment's power law, beyond the last a line through
 * the last point with the power of the last rising segment (none rising:
 * proportional to work); it charges a layer the line through the curve at
 * the layer's whole work with the local power clamped to [0, 1]
 * (coeffs_curve_at), so a channel share still costs overhead + work /
 * rate (eq. 4.7) and shares of one layer sum to at least the whole. */
#define COEFFS_CURVE_MAX 32
typedef struct {
    int n;                         /* points; 0: no curve (the line is used) */
    double work[COEFFS_CURVE_MAX]; /* increasing, > 0 (MACs or ops) */
    double us[COEFFS_CURVE_MAX];   /* non-decreasing, > 0: microseconds per step */
    double r2;                     /* of the curve on its samples, relative
                                    * residuals as the line's; NaN: not known */
} coeffs_curve;
/* The curve's time T (seconds) at work w > 0 and its local power p =
 * dlog T / dlog w clamped to [0, 1] (T itself is not clamped: the curve
 * passes through its points): the line charged there is
 * (1 - p) T + (p T / w) work.  0, or -1 when cv has fewer than 2 points. */
int coeffs_curve_at(const coeffs_curve *cv, double w, double *t_s, double *p);

/* A per-layer entry: key "network/layer", or "network/ *" (without the
 * space) for every layer of that network. */
typedef struct {
    char *key; /* owned */
    coeffs_rates r;
} coeffs_layer;

/* Everything about one device kind (cpu or gpu). */
typedef struct {
    int present;                              /* the file has this section */
    coeffs_value overhead_us;                 /* default per compute/concat step */
    coeffs_value send_overhead_us;            /* sender's cost of issuing a send */
    coeffs_value copy_bandwidth_mbs;          /* CONCAT steps, MB/s, > 0 */
    coeffs_value step_spread;                 /* how much a compute step's time varies
                                               * from inference to inference, relative
                                               * to it (a standard deviation over the
                                               * median; absent: 0; version 10) */
    coeffs_value busy_w, idle_w;              /* override the platform's device powers */
    coeffs_value mem_coefficient;             /* eq. 4.9 coefficient (all bytes by default) */
    coeffs_value mem_bias_mb;                 /* eq. 4.9 bias, MB */
    coeffs_value mem_weights[NET_KIND_COUNT]; /* coefficient of the weights of a kind */
    coeffs_rates cls[COST_NCLASS];
    coeffs_curve curve[COST_NCLASS];          /* per class; n 0 when absent */
    int nlayers, cap_layers;
    coeffs_layer *layers;
} coeffs_device;

typedef struct {
    coeffs_value latency_us, bandwidth_mbs; /* override the platform's class figures */
    coeffs_value pickup_us; /* a receiver reaching its RECV after the message was sent
                             * pays this besides bytes / pull bandwidth (absent: 0) */
    coeffs_value pull_bandwidth_mbs; /* the rate a receiver moves a message at inside its
                                      * MPI call, as a split's exchange in dse exec
                                      * meets it: fresh on the sender, into a cold
                                      * buffer, both ranks pulling at once (absent:
                                      * bandwidth_mbs; version 9) */
} coeffs_link;

/* One device pair's link (links.pairs): overrides its class's coefficients
 * and the platform's figures for that pair, both directions.  Devices are
 * named; a pair the platform in use lacks is ignored. */
typedef struct {
    char *a, *b;
    coeffs_link l;
} coeffs_pair;

/* One device's own factor (per_device): its compute steps take
 * compute_scale times what the model gives its kind (devices of one kind
 * that differ: a board under a CPU quota, cores at another clock).  Named;
 * a device the platform in use lacks is ignored. */
typedef struct {
    char *name;
    coeffs_value compute_scale;
} coeffs_devfactor;

typedef struct coeffs_note_s coeffs_note_s;
typedef struct cost_coeffs {
    int version;
    char **platforms; /* names of the platforms the file is meant for */
    int nplatforms;
    char *board;       /* the hardware, free text */
    char *date;        /* of the calibration, free text (ISO 8601 advised) */
    char *description; /* or NULL */
    char *arch;        /* CPU architecture that measured them (`uname -m`), or NULL */
    char **networks;   /* networks calibrated on */
    int nnetworks;
    coeffs_device dev[2]; /* indexed by plat_kind */
    coeffs_link link[LINK_CLASS_COUNT];
    int npairs;
    coeffs_pair *pairs;   /* per device pair, where pairs of one class differ */
    int nper;
    coeffs_devfactor *per; /* per device, where devices of one kind differ */
    coeffs_note_s *notes; /* private: interned strings */
} cost_coeffs;

/* Read a coefficients file; NULL and one line in err naming the file and
 * the problem (malformed JSON, wrong format or version, unknown key,
 * negative or non-finite value, unknown layer class). */
cost_coeffs *coeffs_load(const char *path, char *err);
cost_coeffs *coeffs_from_json(const char *text, const char *what, char *err);
void coeffs_free(cost_coeffs *c);
/* The documented built-in defaults for the device kinds present on pl
 * (docs/coefficients-format.md): nominal per-core rates, the platform's
 * declared powers.  Never NULL except on allocation failure. */
cost_coeffs *coeffs_default(const platform *pl);
/* Serialise (caller frees) / write atomically (temp file + rename), at the
 * file's own version (c->version). */
char *coeffs_to_json(const cost_coeffs *c);
int coeffs_save(const cost_coeffs *c, const char *path, char *err);
/* The reader's checks, for coefficients built in code: 0 or -1 + err. */
int coeffs_check(const cost_coeffs *c, char *err);

/* Building in code (calibration).  coeffs_new: COEFFS_VERSION, nothing set.
 * The string setters copy; they return 0 or -1 on allocation failure. */
cost_coeffs *coeffs_new(void);
int coeffs_set_info(cost_coeffs *c, const char *board, const char *date, const char *description);
int coeffs_set_arch(cost_coeffs *c, const char *arch); /* NULL: not known */
/* When c states the architecture that measured it and a CPU device of pl
 * states another (plat_arch_same), one line into warn (BASE_ERRLEN) naming
 * both and the devices, and 1; else warn = "" and 0.  Timings do not carry
 * across CPU architectures.  cost_new() adds this line to its warning. */
int coeffs_arch_warning(const cost_coeffs *c, const platform *pl, char *warn);
int coeffs_add_platform(cost_coeffs *c, const char *name);
int coeffs_add_network(cost_coeffs *c, const char *name);
/* The section of kind k, marked present. */
coeffs_device *coeffs_dev(cost_coeffs *c, plat_kind k);
/* The entry of the pair (a, b) (either order), created unset if missing
 * (NULL on allocation failure). */
coeffs_link *coeffs_pair_link(cost_coeffs *c, const char *a, const char *b);
/* Device name's factors (per_device), added unset when absent; NULL on
 * allocation failure. */
coeffs_devfactor *coeffs_device_factor(cost_coeffs *c, const char *name);
/* The entry of layer (or "*") of network on kind k, created empty if
 * missing (NULL on allocation failure). */
coeffs_rates *coeffs_layer_rates(cost_coeffs *c, plat_kind k, const char *network,
                                 const char *layer);
const coeffs_rates *coeffs_find_layer(const cost_coeffs *c, plat_kind k, const char *network,
                                      const char *layer);
/* Values: fitted (with its quality) or given with a source. */
coeffs_value coeffs_fitted(double value, double r2, double rmse, int n);
coeffs_value coeffs_given(double value, coeffs_source s);
/* A copy of text owned by c, for coeffs_value.note (NULL on failure). */
const char *coeffs_note(cost_coeffs *c, const char *text);
const char *coeffs_source_name(coeffs_source s);
int coeffs_source_parse(const char *s, coeffs_source *out);
static inline int coeffs_isset(const coeffs_value *v) { return v->source != COEFFS_UNSET; }

/* ---- the model ---- */
typedef struct cost_model cost_model;

/* Precompute, per layer and device kind, the rates, overheads and powers,
 * and per device pair the link figures.  c may be NULL: built-in defaults
 * (coeffs_default).  warn (BASE_ERRLEN, or NULL) receives one line naming what fell
 * back to less specific coefficients (another network or platform, a
 * missing device-kind section, classes on built-in defaults), or "".
 * NULL with err on allocation failure or a net/platform the model cannot
 * take (more than 64 devices). */
cost_model *cost_new(const net *n, const platform *pl, const cost_coeffs *c, char *warn, char *err);
void cost_free(cost_model *m);

typedef struct {
    int used;      /* the device has at least one step; otherwise all 0 */
    double busy_s; /* compute + concat + send overheads */
    double compute_s, concat_s, send_s;
    double wait_s;   /* blocked in receives */
    double idle_s;   /* latency - busy (>= 0) */
    double finish_s; /* end of its last step */
    int64_t bytes_sent, bytes_recv;
    double weights_bytes;  /* float32 weights of its slices */
    double peak_act_bytes; /* peak live tensors incl. receive and in-flight send buffers */
    double workspace_bytes; /* the kernels' scratch: the largest any of its Conv steps needs */
    double mem_mb;         /* eq. 4.9 */
    double energy_j;
} cost_device;

typedef struct {
    double energy_j;        /* max over devices */
    double mem_mb;          /* max over devices */
    double latency_ms;      /* network output complete on plan.out_dev */
    double violation_bytes; /* sum over devices of bytes above memory_mb; 0 = feasible */
    double comm_mb;         /* payload bytes sent between devices, all pairs, MB */
} cost_result;

/* ---- the objectives (model/objectives.def: the one table of them) ---- */
#ifndef DSE_OBJECTIVES_DEF
#define DSE_OBJECTIVES_DEF "objectives.def"
#endif
enum {
#define OBJ(ID, name, key, unit, label, dir, value, device_value) COST_OBJ_##ID,
#include DSE_OBJECTIVES_DEF
#undef OBJ
    COST_NOBJ
};
typedef struct {
    const char *name;  /* SQL column stem */
    const char *key;   /* JSON / CSV key */
    const char *unit;
    const char *label;
} cost_objective;
extern const cost_objective cost_objectives[COST_NOBJ];
/* The objective vector of a result, and one device's share of each. */
void cost_objectives_of(const cost_result *r, double obj[COST_NOBJ]);
void cost_objectives_dev(const cost_device *d, double obj[COST_NOBJ]);

/* Evaluate plan p (built from the model's net, for the model's platform).
 * per_dev may be NULL, else it receives p->ndev entries.  Allocates only
 * when p is larger than every plan seen before (that needed the same
 * scratch: two devices of one board at work take some more where the
 * coefficients have corun factors, docs/cost-model.md).  Returns 0, or -1 when the
 * plan does not fit the model or cannot run (cost_error says why). */
int cost_eval(cost_model *m, const plan *p, cost_result *r, cost_device *per_dev);
/* cost_eval that also returns the simulated schedule: t0[i] and t1[i], the
 * start and end (seconds from the inference's start) of step i of p
 * (indexed like p->steps; a RECV starts when its device reaches it and
 * ends when the data is in, so its duration is the waiting time).  The
 * predicted timeline of dse eval --trace (model/trace.h). */
int cost_schedule(cost_model *m, const plan *p, cost_result *r, cost_device *per_dev, double *t0,
                  double *t1);
const char *cost_error(const cost_model *m);

/* ---- single steps, for planners (solve/, docs/solvers.md) ----
 * The durations the schedule above gives one step taken alone, in seconds;
 * the same expressions cost_eval uses, so a planner's estimate and the
 * simulation never disagree on them. */
/* COMPUTE of output channels [c0, c0+nc) of layer on device dev. */
double cost_compute_s(const cost_model *m, int layer, int dev, int c0, int nc);
/* CONCAT of a tensor of bytes on dev. */
double cost_concat_s(const cost_model *m, int dev, double bytes);
/* A message of bytes from device a to device b on an idle link: the
 * sender's overhead + bytes / rate + latency (eq. 4.8), rate the slower
 * of the link's bandwidth and its pull rate (the receiver's copy). */
double cost_message_s(const cost_model *m, int from, int to, double bytes);
/* COMPUTE of output rows [h0, h0+nh) x columns [w0, w0+nw) (all channels)
 * of layer on dev. */
double cost_band_s(const cost_model *m, int layer, int dev, int h0, int nh, int w0, int nw);

/* ---- halos: recompute or fetch (docs/spatial.md, "Recompute or fetch") ----
 * Decide, for every layer of mp cut by rows or columns (but the network's
 * output), whether the devices computing its bands also compute the rows
 * (columns) of it their consumers read beyond their own bands (mp->recompute[layer] = 1)
 * or receive them from their neighbours (0), by the model's own schedule.
 * Round 1 simulates the Plan that fetches every halo (cost_schedule); for
 * each layer not yet flagged and each of its bands that received rows of
 * it, saved = the durations of those receives in the schedule (waits,
 * pickups, the payload) and of their SENDs (the send overhead and the
 * packing of a box that is no run of floats, plan_send_offset) plus its
 * assemblies of that layer (CONCATs of two pieces or more), extra = the band's compute with those rows minus
 * without (cost_band_s) plus moving the extra input rows the wider band
 * reads (bytes / rate, as cost_message_s's, where a message from their holder exists or
 * the producer is cut into bands on that device, a whole cost_message_s
 * else; nothing from the device itself); the layer is flagged when the sum
 * of extra over its bands is below the sum of saved.  Rounds 2 and 3 judge
 * the layers left on the Plan with the flags so far (a halo a recomputing
 * consumer moved to its producer is judged there).  The flags are kept
 * only if their Plan's latency is below the Plan that fetches and its
 * memory above capacity (violation_bytes) no larger; else the single layer
 * that gained most, under the same test; else none -- so the choice never
 * makes the model's latency worse nor a feasible mapping infeasible;
 * energy and memory are what the chosen Plan costs (recomputation is extra
 * work).  Mappings without bands are planned and evaluated as they are.
 * p is scratch: on return it holds the Plan of mp as decided (source: the
 * device holding the input), and *res (unless NULL) its evaluation
 * (cost_eval).  Returns the number of layers that recompute, or -1 with
 * err (plan_build's, cost_eval's). */
int cost_pick_halos(cost_model *m, mapping *mp, plan *p, int source, cost_result *res, char *err);

#endif
