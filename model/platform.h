/* platform.h -- the boards a network is mapped onto (docs/platform-format.md).
 *
 * A platform lists devices (one MPI rank each: a CPU or a GPU of a board)
 * and the links between them by class: same_device, same_board (e.g. the
 * CPU and GPU of one Jetson) and network, with per-pair overrides.
 *
 * Invariant after platform_load(): 1 to PLAT_MAX_DEV devices, unique device
 * names (UTF-8 without control characters), boards that are host names,
 * every figure within ju_figure's bounds (positive; powers and latencies
 * may be 0), and link[i][j] resolved for
 * every ordered pair, so lookups on the hot path are one array access.
 * Ownership: a platform owns all its memory; platform_free() releases it.
 */
#ifndef DSE_PLATFORM_H
#define DSE_PLATFORM_H

#include <stdint.h>

#include "convalgo.h"
#include "net.h"

/* At most 64 devices: the Plan, the model and the runtime keep device
 * sets in 64-bit masks; the reader refuses more. */
#define PLAT_MAX_DEV 64
#define PLAT_MAX_CORES 65536

typedef enum { PLAT_CPU, PLAT_GPU } plat_kind;
typedef enum { LINK_SAME_DEVICE, LINK_SAME_BOARD, LINK_NETWORK, LINK_CLASS_COUNT } link_class;

typedef struct {
    char *name;
    char *board;         /* host name the rank runs on */
    plat_kind kind;
    double freq_mhz;
    int cores;
    double memory_mb;    /* capacity */
    double idle_w, busy_w;
    char *energy_sensor; /* e.g. /sys/class/powercap/intel-rapl:0/energy_uj, or NULL */
    char *arch;          /* CPU architecture as `uname -m` names it ("aarch64"), or NULL */
    int restricted;      /* the file lists "supports": only those kinds run here */
    uint64_t supports;   /* bit k: layers of net_kind k may run here (all bits when not restricted) */
    double pace;         /* emulated board paced to this CPU share (emulate.cpu_limit "pace",
                            a share that is not a whole number of CPUs), else 0 */
} plat_device;

typedef struct {
    double latency_us;
    double bandwidth_mbs; /* MB/s, 1 MB = 1e6 bytes */
} plat_link;

typedef struct {
    char *name;
    char *description;
    int ndev;
    plat_device *dev;
    int source;                      /* device holding the network input */
    plat_link cls[LINK_CLASS_COUNT]; /* per class */
    plat_link *link;                 /* ndev x ndev, resolved (row-major) */
    link_class *link_cls;            /* ndev x ndev, class of each pair */
    char *text;                      /* the JSON it was read from (stored by campaigns) */
    int emulated;                    /* has an "emulate" section: its boards are network
                                        namespaces made by scripts/emulate-boards */
    convalgo_rule kernels;           /* "kernels": the machine's part of the convolution
                                        rule, which the model and the runtime both use */
} platform;

platform *platform_load(const char *path, char *err);
platform *platform_from_json(const char *text, const char *what, char *err);
/* A preset name (examples/platforms/NAME.json, looked up next to the
 * program and in the source tree) or a file path. */
platform *platform_open(const char *name_or_path, char *err);
void platform_free(platform *p);
int platform_find(const platform *p, const char *name);
const char *plat_kind_name(plat_kind k);
const char *link_class_name(link_class c);
static inline const plat_link *platform_link(const platform *p, int a, int b)
{
    return &p->link[a * p->ndev + b];
}
/* Is `board` this machine: localhost, 127.0.0.1, ::1, or this host's name
 * (with or without its domain)?  The one rule for "here" (the runtime's
 * placement, AutoDiCE's keys). */
int platform_board_is_here(const char *board);
/* The host name a hostfile uses for `board` (docs/runtime.md): the board
 * itself, or this machine's host name (gethostname) for a board that is this
 * machine, since Open MPI takes "localhost" next to other nodes for another
 * node.  Writes at most len bytes (NUL-terminated) into buf and returns buf. */
char *platform_board_host(const char *board, char *buf, size_t len);
/* Whether layers of kind k may run on device dev ("supports"). */
static inline int platform_supports(const platform *p, int dev, net_kind k)
{
    return (int)(p->dev[dev].supports >> k & 1u);
}
/* 1 if some device lists "supports" (decoders and planners then repair). */
int platform_restricted(const platform *p);
/* 0 if every layer of n may run on some device of p; else -1 and one line
 * naming the first layer whose kind no device supports. */
int platform_check_net(const platform *p, const net *n, char *err);

/* Index of the fastest device (highest freq_mhz x cores; ties: lowest index). */
int platform_fastest(const platform *p);
/* Do devices a and b share a board (and its memory)?  The platform's own
 * rule: a == b, or their link class is same_board (a link matrix may say
 * otherwise than the board names).  The model's corun factors, the
 * calibration's corun pairs and dse exec --beside all go by it. */
int platform_same_board(const platform *p, int a, int b);
/* Is device d a CPU of device of's board (d == of included)?  What "the
 * board's CPUs" means wherever they are counted or run together. */
int platform_board_cpu(const platform *p, int d, int of);
/* How many CPU devices share dev's board (dev included if it is one). */
int platform_board_cpus(const platform *p, int dev);
/* The first two CPU devices of one board (*a < *b; platform order): 1, or
 * 0 when no board has two. */
int platform_cpu_pair(const platform *p, int *a, int *b);
/* CPU architecture names: `uname -m`'s, with Debian's aliases folded in
 * ("arm64" is "aarch64", "amd64" is "x86_64"); letters compared without
 * case.  plat_arch_canonical returns a static name or arch itself. */
const char *plat_arch_canonical(const char *arch);
int plat_arch_same(const char *a, const char *b);

#endif
