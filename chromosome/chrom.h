/* chrom.h -- genome encodings of mappings (DESIGN section 5, thesis 4.2):
 * the whole public API of the chromosome module.
 *
 * A chrom is bound to one network, a device count, the kind of encoding,
 * (hybrid only) the number p of horizontal splits, and the mask of layer
 * kinds that may be split.  It reports the genome length, the per-gene
 * bounds and the search-space size, and decodes any genome within bounds
 * into a valid Mapping: decoding repairs, it never rejects
 * (docs/chromosomes.md states every rule, including the repair and
 * tie-breaking choices).
 *
 * Notation: n devices (0-based in code), L layers, S layers of a splittable
 * kind (re-indexed 1..S in topological order), p splits.
 *   naive    length S*n + L - S, genes 0..n-1 (a device)
 *   hybrid   length p*n, row-major (gene k*n + d = row k, device d), 0..S
 *   vertical length n, genes 0..L (a split point, 0 = device unused)
 *   spatial  hybrid's p*n genes, then S cut genes, one per splittable
 *            layer: 0 = channels, 1 = bands (chrom_cut_mode below;
 *            docs/spatial.md)
 *
 * Hot path: chrom_decode() allocates nothing and touches only the genome,
 * the mapping and the chrom's precomputed tables; a chrom is read-only
 * after chrom_new(), so any number of threads may decode with one chrom
 * (each into its own mapping).
 *
 * Devices that support only some layer kinds (platform "supports") are
 * honoured after chrom_restrict(): decoding then repairs every mapping so
 * that no layer lands on such a device unless it supports the layer's kind.
 *
 * Ownership: chrom_new() keeps a pointer to the net (borrowed: the net
 * must outlive the chrom); chrom_free() releases the rest.  Errors go to a
 * char err[BASE_ERRLEN] buffer as one line; nothing here prints.
 */
#ifndef DSE_CHROM_H
#define DSE_CHROM_H

#include <stddef.h>
#include <stdint.h>

#include "mapping.h"
#include "net.h"

/* Devices a chrom can handle: bounds the decoder's stack scratch. */
#define CHROM_MAX_DEV 1024

typedef enum { CHROM_NAIVE, CHROM_HYBRID, CHROM_VERTICAL, CHROM_SPATIAL } chrom_kind;

typedef struct chrom chrom;

/* p is used by CHROM_HYBRID and CHROM_SPATIAL only (1 <= p <= ndev); split_mask is a bit mask
 * of net_kind (net_split_mask_parse; NET_SPLIT_DEFAULT = Conv and FC).
 * Returns NULL with err set on a bad argument. */
chrom *chrom_new(const net *n, int ndev, chrom_kind k, int p, int split_mask, char *err);
void chrom_free(chrom *c);

/* "naive", "hybrid", "vertical", "spatial" <-> kind; parse returns 0 or -1. */
int chrom_kind_parse(const char *s, chrom_kind *k);
const char *chrom_kind_name(chrom_kind k);

/* ---- what the engine needs ---- */
int chrom_length(const chrom *c);
void chrom_bounds(const chrom *c, int *lo, int *hi); /* chrom_length entries each, inclusive */
double chrom_log10_space(const chrom *c);            /* log10 of the number of genomes */

/* Decode genome (len genes) into m, a mapping from mapping_new(net->n,
 * ndev).  Returns 0, or -1 with err set when len is not chrom_length(), a
 * gene is out of bounds, or m has the wrong size; m is then unspecified. */
int chrom_decode(const chrom *c, const int *genome, int len, mapping *m, char *err);

/* Devices that run only some layer kinds (platform "supports"): from now
 * on chrom_decode repairs every mapping so that no layer lands on a device
 * that does not support its kind (the slice moves to a substitute device,
 * docs/chromosomes.md "Restricted devices").  A platform where no device
 * lists supports changes nothing.  Call before sharing the chrom between
 * threads.  Returns 0, or -1 with err when p's device count differs or
 * some layer of the net runs on no device. */
int chrom_restrict(chrom *c, const platform *p, char *err);

/* Only layers of the kinds in `kinds` (bit k: net_kind k) may be cut into
 * bands from now on (the others' bands become channel cuts or whole
 * layers, as for a kind that cannot be cut so): how a campaign stored
 * when fewer kinds could be cut into bands decodes its genomes as it did
 * (campaign.c).  Call before sharing the chrom between threads. */
void chrom_band_kinds(chrom *c, uint64_t kinds);

/* Write into genome (chrom_length entries) a genome decoding to every layer
 * whole on device dev.  Returns 0, or -1 if dev is out of range or the
 * encoding cannot express it (hybrid with no splittable layer: only
 * device 0). */
int chrom_single_device(const chrom *c, int dev, int *genome);

/* The genome (chrom_length genes, written into genome) whose decoded
 * mapping is closest to target by mapping_distance (the share of the
 * work placed on other devices); docs/chromosomes.md "Encoding a mapping"
 * says how it is searched.  Returns that distance, in [0, 1] (0: the
 * encoding expresses target exactly), or -1 with err when target has the
 * wrong size or memory runs out.  Deterministic; not for hot paths. */
double chrom_encode(const chrom *c, const mapping *target, int *genome, char *err);

/* A human-readable description of genome, snprintf-style: writes at most
 * len bytes (NUL-terminated) and returns the length it needed. */
int chrom_dump(const chrom *c, const int *genome, char *buf, size_t len);

/* ---- accessors ---- */
chrom_kind chrom_get_kind(const chrom *c);
int chrom_ndev(const chrom *c);
int chrom_splits(const chrom *c);      /* p for hybrid and spatial, 0 otherwise */
int chrom_nsplittable(const chrom *c); /* S */
int chrom_split_mask(const chrom *c);  /* split kinds (encode.c, campaign seeds) */
/* spatial: what its cut genes choose (docs/chromosomes.md):
 *   CHROM_CUTS_ROWS   0 channels, 1 rows (campaigns stored before columns)
 *   CHROM_CUTS_BANDS  0 channels, 1 bands along the layer's longer side:
 *                     rows, or columns where the output is wider than tall
 *                     (chrom_new's default: the space of ROWS, and the same
 *                     decode wherever maps are square or tall)
 *   CHROM_CUTS_ALL    0 channels, 1 rows, 2 columns
 * Names (configurations, dse run --cuts): "channels,rows",
 * "channels,bands", "channels,rows,columns". */
typedef enum { CHROM_CUTS_ROWS, CHROM_CUTS_BANDS, CHROM_CUTS_ALL } chrom_cut_mode;
const char *chrom_cut_mode_name(chrom_cut_mode m);
int chrom_cut_mode_parse(const char *s, chrom_cut_mode *m); /* 0, or -1 if unknown */
chrom_cut_mode chrom_get_cut_mode(const chrom *c);
/* Values a cut gene takes (2 or 3; 1 for the other kinds). */
int chrom_cut_values(const chrom *c);
/* Returns 0, or -1 for another kind or mode.  (The one change to a chrom
 * after chrom_new: call it before sharing the chrom between threads.) */
int chrom_set_cut_mode(chrom *c, chrom_cut_mode m);
const net *chrom_net(const chrom *c);

#endif
