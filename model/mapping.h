/* mapping.h -- the phenotype: who computes which output channels, rows or
 * columns of which layer (DESIGN section 2; rows and columns:
 * docs/spatial.md).
 *
 * For every layer, a list of slices (device, first, count) and a cut kind
 * cut[layer] (map_cut): channels, the slices are channel ranges [first,
 * first+count) of all rows and columns; rows, they are row bands [first,
 * first+count) of all channels and columns; columns, column bands of all
 * channels and rows (a layer is cut one way).  Invariant checked by
 * mapping_validate(): the slices of a layer are in increasing order,
 * contiguous, non-empty, cover exactly [0, out.c), [0, out.h) or [0,
 * out.w), name valid devices, and no device appears twice in one layer;
 * layers that are not split have exactly one slice and cut channels;
 * channel cuts only of splittable kinds (net_kind_splittable), row cuts
 * only of row-splittable layers (net_layer_rowsplit), column cuts only of
 * column-splittable ones (net_layer_colsplit); recompute only on a layer
 * cut by rows or columns that is not the last.  The first slice (lowest
 * channels, rows or columns) is the layer's "first slice" of DESIGN
 * section 5.
 *
 * A mapping is a flat CSR structure so decoders can refill it without
 * allocating: slices of layer i are slices[first[i] .. first[i+1]).
 * Ownership: a mapping owns its arrays; mapping_free() releases them.
 */
#ifndef DSE_MAPPING_H
#define DSE_MAPPING_H

#include "net.h"
#include "platform.h"

typedef struct {
    int dev;
    int c0; /* first output channel (row, column: by cut[layer]) */
    int nc; /* number of channels (rows, columns) */
} map_slice;

/* How a layer's slices cut its output (mapping.cut). */
typedef enum { MAP_CUT_CHANNELS = 0, MAP_CUT_ROWS = 1, MAP_CUT_COLS = 2 } map_cut;
#define MAP_CUT_COUNT 3

typedef struct {
    int nlayers;
    int ndev;
    int *first;        /* nlayers + 1 entries */
    map_slice *slices; /* capacity nlayers * ndev (one slice per device per layer) */
    unsigned char *cut; /* [nlayers]: map_cut of the layer's slices */
    unsigned char *recompute; /* [nlayers]: 1 when a band layer's devices compute the halo
                               * rows (columns) their consumers read instead of fetching them
                               * (docs/spatial.md, "Recompute or fetch"); only on a layer cut
                               * by rows or columns that is not the network's output */
} mapping;

/* Room for the largest mapping of an nlayers-layer net on ndev devices. */
mapping *mapping_new(int nlayers, int ndev);
void mapping_free(mapping *m);
void mapping_copy(mapping *dst, const mapping *src); /* same nlayers, ndev */
/* Every layer whole on device dev. */
void mapping_set_single(mapping *m, const net *n, int dev);
int mapping_equal(const mapping *a, const mapping *b);
/* How differently two mappings of n place the work: the share of the
 * network's work (MACs of Conv and FC layers, elementwise ops of the
 * others) that a device computes in a but not in b.  Per layer and device
 * only the amount of work matters (channels, rows or columns: nc/out.c,
 * nh/out.h or nw/out.w of the layer's), not which part: 0 when every device computes
 * as much of every layer in both, 1 when no work stays on its device
 * (docs/chromosomes.md, "Encoding a mapping").  A layer split by channels
 * in one and into bands (rows or columns) in the other keeps on a device
 * only the outputs both its slices compute: channel share times band
 * share. */
double mapping_distance(const mapping *a, const mapping *b, const net *n);
static inline int mapping_nslices(const mapping *m, int layer)
{
    return m->first[layer + 1] - m->first[layer];
}
static inline const map_slice *mapping_slices(const mapping *m, int layer)
{
    return m->slices + m->first[layer];
}
/* A box of a layer's output: channels [c0, c0+nc) x rows [h0, h0+nh) x
 * columns [w0, w0+nw) (what a slice computes, what the Plan moves). */
typedef struct {
    int c0, nc, h0, nh, w0, nw;
} map_box;

/* The box of output slice s of layer `layer`. */
static inline map_box mapping_slice_box(const mapping *m, const net *n, int layer,
                                        const map_slice *s)
{
    net_shape o = n->layers[layer].out;
    switch (m->cut[layer]) {
    case MAP_CUT_ROWS: return (map_box){0, o.c, s->c0, s->nc, 0, o.w};
    case MAP_CUT_COLS: return (map_box){0, o.c, 0, o.h, s->c0, s->nc};
    default: return (map_box){s->c0, s->nc, 0, o.h, 0, o.w};
    }
}
/* The size of layer i's output along cut c (out.c, out.h or out.w), and
 * the name of its unit ("channel", "row", "column"). */
static inline int mapping_cut_total(const net *n, int i, int c)
{
    net_shape o = n->layers[i].out;
    return c == MAP_CUT_ROWS ? o.h : c == MAP_CUT_COLS ? o.w : o.c;
}
const char *mapping_cut_unit(int c);
/* May layer i be cut that way into several slices (net_kind_splittable,
 * net_layer_rowsplit, net_layer_colsplit)? */
int mapping_cut_allowed(const net *n, int i, int c);
/* Check the invariant above against the net; -1 and a line naming the
 * layer and the problem. */
int mapping_validate(const mapping *m, const net *n, char *err);

/* Split `total` channels into k contiguous shares proportional to w[0..k)
 * (largest-remainder rounding, ties to the lower index): each share is
 * within one channel of its exact proportion, shares sum to total, and no
 * share is empty when total >= k.  Writes k sizes into out. */
void mapping_apportion(int total, int k, const int *w, int *out);

/* ---- files (docs/mapping-format.md) ---- */
/* Our format: {"format":"dse-mapping", "layers": {"conv1": [["dev", c0, nc], ...],
 * "conv2": {"rows": [["dev", h0, nh], ...]}, "conv3": {"columns": [["dev",
 * w0, nw], ...]}, "relu1": "dev", ...}}.  Every layer must appear. */
mapping *mapping_from_json(const char *text, const char *what, const net *n,
                           const platform *p, char *err);
mapping *mapping_load(const char *path, const net *n, const platform *p, char *err);
char *mapping_to_json(const mapping *m, const net *n, const platform *p);
int mapping_save(const mapping *m, const net *n, const platform *p, const char *path, char *err);

/* `--mapping` everywhere: a dse-mapping file, or a folder holding
 * AutoDiCE's mapping.json (+ horizontal.json, + autodice-devices.json),
 * read by mapping_import_autodice. */

/* AutoDiCE's files (docs/mapping-format.md): mapping.json {"<host>_cpu0123":
 * ["layer", ...], "<host>_gpu": [...]} (a split layer listed under every
 * device computing part of it), horizontal.json {"layer": ["lop",
 * [cumulative end channels], ["key", ...]]}, and dse's translation
 * autodice-devices.json {"devices": {"our device": "key"}, "hosts": [...]}.
 * Their names, in that order: */
extern const char *const mapping_autodice_files[3];
/* The three texts for m (texts[0..2], malloc'd).  Returns 0, with warn set
 * (one line) when AutoDiCE can read them but would fail or compute wrong
 * results (a split grouped convolution, ...); 1 when AutoDiCE cannot express
 * m (a used device whose host has a "_", more than 10 cores on a host, a
 * second GPU on a host): no texts, warn says why; -1 with err. */
int mapping_autodice_texts(const mapping *m, const net *n, const platform *p, char **texts,
                           char *warn, char *err);
/* Write the three files into dir, all or none (ju_write_files_atomic).
 * Returns as mapping_autodice_texts; on 1, removes any of the three files
 * that an earlier export left in dir, so dir never pairs two mappings;
 * -2 (with err) when a path cannot be used (ju_write_files_atomic). */
int mapping_export_autodice(const mapping *m, const net *n, const platform *p, const char *dir,
                            char *warn, char *err);
/* What `dse export` writes: dir/dse-mapping.json and AutoDiCE's three
 * files, all four or none; where AutoDiCE cannot express m (returns 1),
 * dse-mapping.json alone, as mapping_export_autodice.  dir is created if
 * missing (base_out_dir); -2 when it cannot be (no parent, not writable) or
 * a file's path cannot be used, -1 when writing fails; nothing is written
 * then, and a folder made for the export is removed again. */
int mapping_export_dir(const mapping *m, const net *n, const platform *p, const char *dir,
                       char *warn, char *err);
/* Read AutoDiCE's files (horizontal_path NULL: no split layer; devices_path
 * NULL: keys matched to devices by host and kind).  Keys resolve to a device
 * by our name, by autodice-devices.json, or as <host>_cpu|arm<cores> /
 * <host>_gpu[N] against the platform's boards (host names as in a hostfile)
 * and the cores the writer gives each CPU device of a host; layer names as
 * dse or AutoDiCE's format_onnx() ('/' -> '_') spells them. */
mapping *mapping_import_autodice(const char *mapping_path, const char *horizontal_path,
                                 const char *devices_path, const net *n, const platform *p,
                                 char *err);

#endif
