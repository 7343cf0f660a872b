/* calib.h -- calibration of the analytical model on the boards (DESIGN
 * section 10, thesis 4.3): the whole public API of calib/, prefix calib_.
 *
 * Three parts:
 *  - the measurement WORKER (calib_worker), an MPI program run under
 *    mpirun with one rank per device (`dse calib-worker`): times every
 *    layer slice in the order of an inference on one device of each kind
 *    (several channel shares, median of >= 20 clean runs after warm-up),
 *    row bands, each layer alone and beside the same layer on another
 *    device of its board (half the runs, at least 10), CONCAT copies, MPI
 *    ping-pong per link class, and power where a sensor exists; rank 0
 *    writes the raw measurements as JSON;
 *  - the DRIVER (calib_run): checks that the platform can be launched
 *    here, runs the worker and the memory runs (the real runtime, `dse
 *    exec`, with one layer on its own device, thesis 4.3.3) through
 *    runtime/launch.h, fits every coefficient with GSL least squares and
 *    builds the coefficients file (model/cost.h) and a JSON report with
 *    every fit's points and residuals;
 *  - the FIT and STATISTICS helpers the driver, the tests and the fidelity
 *    benchmark share.
 *
 * Invariants: the driver writes nothing the caller did not ask for; its
 * result is either a complete, checked cost_coeffs or an error (exit-code
 * like: 1 runtime failure, 2 bad input).  Every timing that feeds a fit is
 * the median of at least `reps` runs (half as many, at least 10, for the
 * shared-memory timings, which are ratios of medians taken in turn) whose CPU time shows the thread was
 * not preempted (single-threaded devices), so load from other processes
 * is re-measured rather than fitted.
 *
 * Ownership: results own their memory (calib_result_free); options are
 * borrowed.  Errors: one line in char err[BASE_ERRLEN]; nothing prints
 * here except through the caller's progress callback.
 */
#ifndef DSE_CALIB_H
#define DSE_CALIB_H

#include <signal.h>
#include <stdint.h>

#include "cost.h"
#include "net.h"
#include "platform.h"

#define CALIB_R2_FLAG 0.9  /* fits below this R^2 are flagged */
#define CALIB_REPS 20      /* timed runs per median (the thesis' 20) */
#define CALIB_MAX_NETS 16
/* The keys of a raw "bands" record along axis ax (0 rows, 1 columns):
 * its "axis" value (also the key of the band's size), the layer's extent
 * and the band's first unit (worker.c writes them, calibrate.c reads them;
 * docs/calibration.md). */
#define CALIB_BAND_UNITS(ax) ((ax) ? "columns" : "rows")
#define CALIB_BAND_EXTENT(ax) ((ax) ? "width" : "height")
#define CALIB_BAND_START(ax) ((ax) ? "w0" : "h0")

/* ---- fits and statistics ---- */

/* y = a + b x by least squares (gsl_fit_wlinear).  relative != 0 weights
 * each point by 1/y^2, i.e. minimises relative residuals (times span
 * orders of magnitude).  r2 is that of the fit as weighted; rmse is the
 * root mean square residual in y's unit; max_rel the largest
 * |residual| / |y|.  Returns 0, or -1 with err (fewer than 2 points, no
 * spread in x, non-finite data). */
typedef struct {
    double a, b;
    double r2, rmse, max_rel;
    int n;
} calib_fit;
int calib_fit_line(const double *x, const double *y, int n, int relative, calib_fit *f, char *err);
/* y = b x (a = 0), same conventions. */
int calib_fit_origin(const double *x, const double *y, int n, int relative, calib_fit *f,
                     char *err);

/* A class's curve (coeffs_curve, model/cost.h) from its samples (x work,
 * y seconds): samples sorted by work and grouped, a group starting where
 * work exceeds CALIB_CURVE_BIN times its first (the factor widened until
 * at most COEFFS_CURVE_MAX groups remain); each group's median work and
 * median time; the times made non-decreasing by pooling adjacent groups
 * (isotonic regression weighted by group size: a larger layer is not
 * faster, what says so is noise or another shape).  Fewer than
 * CALIB_CLASS_MIN_SIZES groups: no curve (cv->n = 0; two points would
 * extrapolate one power law from two layers).  cv->r2 as the line's, on
 * relative residuals of every sample against coeffs_curve_at.  0, or -1
 * with err (data not usable, out of memory). */
#define CALIB_CURVE_BIN 1.5
int calib_fit_curve(const double *x, const double *y, int n, coeffs_curve *cv, char *err);

/* A link's one-way time t = latency + bytes / bandwidth from ping-pong
 * sizes spanning orders of magnitude (x bytes, y seconds): the slope b by
 * unweighted least squares over the large sizes (x >= largest / 64, at
 * least the two largest sizes), the intercept a = y - b x of the smallest
 * size, or that size's time when this is negative (a shaper's bucket, or
 * TCP's window, passes small messages faster than the rate: what a small
 * message costs is then all latency).  A relative fit over every size let
 * the small sizes decide the slope and showed 10-80x the shaped rate.
 * Quality figures (unweighted) are those of the large sizes.  Returns 0;
 * -1 with err when the data are not usable or b <= 0 (time does not grow
 * with size: the caller falls back). */
int calib_fit_link(const double *x, const double *y, int n, calib_fit *f, char *err);

/* A rate from many noisy samples of one-way times (x bytes, y seconds:
 * the receives of a traced run), robust to the few a preemption or a late
 * poll made slow: over the points of calib_fit_link's large sizes (x >=
 * largest / 64, at least those of the two largest sizes), the slope b is
 * the median of the slopes between every two points of different sizes
 * (Theil-Sen), the intercept a the median of y - b x; over more than
 * CALIB_RATE_MAX points, every k-th of them in order of size and time
 * (the pairs grow as the square).  One wild point among many moves the least-squares
 * slope (a traced resnestish split: 1.9 GB/s by least squares, 3.8 by
 * this) and not this.  Quality figures as calib_fit_link's.  Returns 0;
 * -1 with err when unusable or b <= 0. */
#define CALIB_RATE_MAX 1000
int calib_fit_rate(const double *x, const double *y, int n, calib_fit *f, char *err);

/* Mean and maximum of 100 |pred - meas| / |meas| over n pairs. */
double calib_mape(const double *pred, const double *meas, int n);
double calib_max_ape(const double *pred, const double *meas, int n);
/* Spearman's rank correlation (ties get their average rank); NAN when a
 * side is constant or n < 2. */
double calib_spearman(const double *x, const double *y, int n);

/* The work unit of a slice the cost model charges (cost.h: MACs for
 * layers that have them, elementwise ops otherwise). */
int64_t calib_work(const net *n, int layer, int c0, int nc);
/* Channels of share 1/k of a layer's output (>= 1). */
int calib_share_channels(int out_c, int k);

/* The pair that stands for (a, b)'s link when calibrating: the first pair
 * (lower rank first, in rank order) of the same class with the same
 * platform figures.  Pairs the platform says differ are measured apart;
 * returned as first * ndev + second. */
int calib_link_rep(const platform *pl, int a, int b);

/* Probe networks: small chains holding every layer kind (and every conv
 * class) at several sizes, timed so that the per-kind fallback covers
 * kinds the calibrated networks lack.  Index 0..calib_probe_count()-1;
 * --quick runs the first CALIB_PROBES_QUICK.  NULL with err on failure.
 * Their names start with "calib-probe". */
#define CALIB_PROBES_QUICK 3
/* A per-class fallback fit gets a fixed cost per step (an intercept) only
 * from samples of at least this many different work values (layers, or
 * channel shares of one); else its line goes through the origin. */
#define CALIB_CLASS_MIN_SIZES 3
int calib_probe_count(void);
net *calib_probe_net(int i, char *err);

/* ---- the worker (collective, under mpirun, rank r = device r) ---- */

typedef struct {
    const char *platform;             /* preset or file */
    const char *networks[CALIB_MAX_NETS];
    int nnetworks;
    int quick;                        /* fewer shares, sizes and probes */
    int reps;                         /* timed runs per median (>= 3) */
    uint64_t seed;
    const char *out;                  /* raw measurements JSON (rank 0 writes) */
} calib_worker_opts;
/* 0, or 1 (runtime failure) / 2 (bad input) with err on rank 0. */
int calib_worker(const calib_worker_opts *o, char *err);

/* ---- the driver ---- */

typedef struct {
    const char *platform;             /* preset or file */
    const char *networks[CALIB_MAX_NETS];
    int nnetworks;
    const char *hostfile;             /* NULL: ranks placed on the platform's boards
                                         (rt_placement_file); else mpirun's own
                                         placement over this hostfile */
    int quick;
    int reps;                         /* 0 = CALIB_REPS */
    uint64_t seed;
    double timeout_s;                 /* per launched job; <= 0: 3600 */
    const char *dse;                  /* dse program to launch; NULL = this program */
    const char *keep_dir;             /* keep raw measurements and memory runs here, or NULL */
    volatile sig_atomic_t *stop;      /* nonzero: kill the running job, return 1 */
    void (*progress)(void *ctx, const char *line);
    void *ctx;
} calib_options;

/* One line of the summary table. */
typedef struct {
    char what[96];    /* "Conv on cpu", "link same_board", "memory cpu", ... */
    char param[32];   /* "per_cycle", "overhead_us", "latency_us", ... */
    double value;
    coeffs_source source;
    double r2, rmse;  /* NAN when not fitted */
    int n;
    int flagged;      /* fitted with r2 < CALIB_R2_FLAG */
} calib_row;

typedef struct {
    cost_coeffs *coeffs;  /* complete and checked */
    char *report_json;    /* every fit with its points and residuals */
    calib_row *rows;
    int nrows;
    int nlayer_fits, nlayer_flagged; /* per-layer fits (rows hold only flagged ones) */
    int nband_layers[2], nband_tables[2]; /* [0] rows, [1] columns: layers whose bands along
                                           * that axis were timed; those whose bands did not
                                           * cost their share (coeffs_band) */
    int ncorun_layers, ncorun_factors; /* layers timed beside another device of their board;
                                        * those that took at least 20 us alone and over 5%
                                        * longer beside it (corun factors) */
    double corun_max;     /* the largest corun factor kept (1 without) */
    char corun_layer[160]; /* its network/layer, or "" */
    double seconds;       /* wall time of the calibration */
    char warn[BASE_ERRLEN]; /* one line for the user, or "": the devices state another CPU
                              architecture than the one that measured (coeffs_arch_warning) */
} calib_result;

/* Everything that can be said before measuring: platform and networks
 * load, every device is a CPU, a given hostfile lists every board that is
 * not this machine.  0 or 2 with err. */
int calib_check(const calib_options *o, char *err);
/* Measure and fit.  0, 1 (a job failed, timed out, was interrupted; a
 * fit impossible) or 2 (bad input), with err. */
int calib_run(const calib_options *o, calib_result *r, char *err);
void calib_result_free(calib_result *r);

#endif
