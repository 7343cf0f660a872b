/* mapping.h -- the phenotype: who computes which output channels of which
 * layer (DESIGN section 2).
 *
 * For every layer, a list of slices (device, first_channel, channel_count).
 * Invariant checked by mapping_validate(): the slices of a layer are in
 * increasing channel order, contiguous, non-empty, cover exactly
 * [0, out.c), name valid devices, and no device appears twice in one
 * layer; layers that are not split have exactly one slice.  The first slice
 * (lowest channels) is the layer's "first slice" of DESIGN section 5.
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
    int c0; /* first output channel */
    int nc; /* number of channels */
} map_slice;

typedef struct {
    int nlayers;
    int ndev;
    int *first;        /* nlayers + 1 entries */
    map_slice *slices; /* capacity nlayers * ndev (one slice per device per layer) */
} mapping;

/* Room for the largest mapping of an nlayers-layer net on ndev devices. */
mapping *mapping_new(int nlayers, int ndev);
void mapping_free(mapping *m);
void mapping_copy(mapping *dst, const mapping *src); /* same nlayers, ndev */
/* Every layer whole on device dev. */
void mapping_set_single(mapping *m, const net *n, int dev);
int mapping_equal(const mapping *a, const mapping *b);
static inline int mapping_nslices(const mapping *m, int layer)
{
    return m->first[layer + 1] - m->first[layer];
}
static inline const map_slice *mapping_slices(const mapping *m, int layer)
{
    return m->slices + m->first[layer];
}
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
 * "relu1": "dev", ...}}.  Every layer must appear. */
mapping *mapping_from_json(const char *text, const char *what, const net *n,
                           const platform *p, char *err);
mapping *mapping_load(const char *path, const net *n, const platform *p, char *err);
char *mapping_to_json(const mapping *m, const net *n, const platform *p);
int mapping_save(const mapping *m, const net *n, const platform *p, const char *path, char *err);

/* AutoDiCE's pair of files: mapping.json {"device": ["layer", ...]} (a split
 * layer listed under every device computing part of it) and horizontal.json
 * {"layer": ["lop", [end_0, ..., 65535], ["device", ...]]}. */
int mapping_export_autodice(const mapping *m, const net *n, const platform *p,
                            const char *mapping_path, const char *horizontal_path, char *err);
mapping *mapping_import_autodice(const char *mapping_path, const char *horizontal_path,
                                 const net *n, const platform *p, char *err);

#endif
