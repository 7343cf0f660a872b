/* validate.h -- validation (DESIGN sections 8, 9; the thesis' Tables 3, 5,
 * 6): a campaign's front points run on the MPI runtime, predicted beside
 * measured -- per objective, per device and step by step -- and stored in
 * the results database.  The whole public API of validate/, prefix val_;
 * `dse validate` is its command.
 *
 * Each point's prediction is made from the campaign's own stored network,
 * platform and coefficients (camp_from_config), and its mapping is run as
 * a separate job (rt_measure, with --trace) under a deadline, o->rounds
 * times, the points in turn in every round; the run stored is the point's
 * median-latency round.  A point
 * that fails (dead rank, timeout, wrong output) or cannot run here (GPU
 * work) is stored with its reason; the others still run.
 *
 * Invariants: the stored rows of a point (per device, the whole mapping,
 * its steps) are its prediction and its measurement of one run (its
 * median round); nothing
 * is stored for a point that was not attempted; measured values no sensor
 * gave are NAN ("not measured"), never invented.
 *
 * Ownership: a val_report owns its points (val_report_free).  Errors: one
 * line in err (BASE_ERRLEN); nothing prints but the progress callback.
 */
#ifndef DSE_VALIDATE_H
#define DSE_VALIDATE_H

#include <signal.h>

#include "cost.h"
#include "results.h"
#include "runtime.h"

#define VAL_WORST 5       /* steps with the largest errors kept per point */
#define VAL_MAX_ROUNDS 15 /* val_options.rounds at most */
#define VAL_DRIFT_WARN 0.10 /* the reference's |measured / predicted - 1| past which dse validate warns */
/* A launch is slow (val_point.slow_launch) when its handoff probe's pass
 * took over VAL_HANDOFF_SLOW x what the model prices it at (the message
 * by the campaign's link coefficients, plus the launch's own touch), or
 * its touch over VAL_TOUCH_SLOW x the validation's fastest (the core
 * itself slower).  On the VM this was built on, with local-2 calibrated
 * (2 MB priced at 239 us): fast launches passed 2 MB in 193-300 us and
 * slow ones in 600-1070 us, and a slowed core touched in 59-73 us against
 * 37 (bench/README.md, "Split mappings slower in some launches"). */
#define VAL_HANDOFF_SLOW 1.5
#define VAL_TOUCH_SLOW 1.3
/* That rule, for one launch: hop_us and touch_us its probe's, msg_us the
 * model's price of the probe's message (cost_message_s), touch_min the
 * fastest touch among the launches compared; moves: the launch's mapping
 * passes data between devices (one that does not is not slowed by dear
 * passes, only by a slow core).  1: slow.  dse validate and bench_fidelity
 * --handoff both judge launches by it. */
int val_launch_slow(double hop_us, double touch_us, int moves, double msg_us, double touch_min);
/* The launch of r judged so, against *touch_min, the fastest touch of the
 * launches compared so far, which r's own touch lowers first; moves is
 * rt_moved_data(r) (the input sent to a device that is not the input's
 * counts: its first layer reads it).  1: slow; 0: fast, or no probe in r. */
int val_judge_launch(const rt_result *r, double msg_us, double *touch_min);

typedef struct {
    const char *db;          /* results database (default dse.db) */
    long long campaign;
    int top;                 /* 0: the best point per objective; N: N points spread
                                along the front */
    int warmup, reps;        /* dse exec --bench */
    int rounds;              /* measure every point this many times, points in turn
                                (round 1: every point, round 2: every point, ...), so
                                that a core that changes speed during the run slows
                                every point alike; 1..VAL_MAX_ROUNDS (0: 1) */
    double timeout_s;        /* the ranks' deadline per point; <= 0: derived from
                                the mapping (rt_default_timeout) */
    const char *keep;        /* keep each point's files (mapping, traces) here, or NULL */
    int no_reference;        /* 1: skip the reference run (val_reference) */
    int no_beside;           /* 1: run the reference alone only (val_reference.beside_n) */
    int no_handoff;          /* 1: no handoff probe in the launches (val_handoff) */
    int relaunch;            /* a point's launch the probe finds slow (val_launch_slow, the
                                fastest touch so far) is run again, at most this many times;
                                the last launch is kept (0: never; needs the probe) */
    void (*progress)(void *ctx, const char *line); /* may be NULL */
    void *ctx;
    volatile sig_atomic_t *stop;
} val_options;

typedef struct {
    int idx;                 /* front index */
    char why[40];            /* "best latency", "front point" */
    double pred[COST_NOBJ];
    double meas[COST_NOBJ];  /* NAN = not measured */
    const char *status;      /* "ok", "failed", "unmeasured" */
    char reason[BASE_ERRLEN];
    long long row;           /* its whole-mapping validation row */
    int nrounds;             /* rounds measured */
    double round_ms[VAL_MAX_ROUNDS]; /* the latency each round measured */
    int med_round;           /* the round whose run is stored: the median latency
                                (the lower of the two middle ones for an even count) */
    double spread[COST_NOBJ]; /* per objective, the largest over the smallest value of
                                 the rounds (1 with one round; NAN: not measured) */
    int nsteps;              /* steps stored */
    int nworst;
    res_step worst[VAL_WORST]; /* compute steps of the largest |measured - predicted|
                                  (op strings are static) */
    char worst_dev[VAL_WORST][64];
    double rel_meas, rel_pred; /* latency over the reference's: measured (the median over
                                  the rounds of this round's over the reference's same
                                  round) and predicted; NAN without a reference */
    int slow_launch;         /* its stored run's launch was slow by the handoff probe
                                (VAL_HANDOFF_SLOW, VAL_TOUCH_SLOW) */
    int relaunched;          /* launches of it that were slow and run again (val_options.relaunch) */
} val_point;

/* The reference: the whole network on one device (the one the model finds
 * fastest alone, of those this runtime can run, preferring those it fits
 * on), run in every round before the points while any point is measured.  A single-device run is what a calibration measures layer by
 * layer, so its measured / predicted latency says how far the machine has
 * drifted from the state it was calibrated in (cores that changed speed, a
 * board throttled, another workload): errors of that size in the points'
 * are drift, not the mapping, and the points' latencies relative to the
 * reference's are what the drift leaves intact.  Printed, not stored. */
typedef struct {
    int dev;                 /* its device, -1: none (no device runs here, --no-reference) */
    char name[64];           /* the device's name */
    double pred_ms;          /* predicted latency */
    double meas_ms;          /* the median of its measured rounds; NAN: not measured */
    double round_ms[VAL_MAX_ROUNDS]; /* per round; NAN where that round's run failed */
    int nrounds;             /* rounds attempted */
    char reason[BASE_ERRLEN]; /* why it was not measured (a round failed), or "" */
    int calibrated;          /* 1: the campaign's coefficients came from a file (else the
                                built-in defaults) */
    char calib_date[64];     /* their date, or "" */
    int calib_net;           /* 1: the network is among those they were calibrated on */
    /* Beside (dse exec --beside): where the reference's board has other CPU
     * devices, each round's reference job then runs the network on all of
     * them at once, and the reference device's latency then over its
     * latency alone says how much the board's CPUs slow each other when
     * busy together *now* -- what a split mapping pays beyond the model
     * when it is more than the calibration's corun factors (the VM this was
     * built on had spells of 1.3-1.7x).  Both runs keep the input on the
     * reference device, and pred_ms is predicted so. */
    int beside_n;            /* CPU devices busy at once (its board's), 0: not run */
    double beside_round_ms[VAL_MAX_ROUNDS]; /* its latency beside them per round (NAN: none) */
    double beside_ratio;     /* median over the rounds of beside / alone; NAN: none */
    double hop_us[VAL_MAX_ROUNDS], touch_us[VAL_MAX_ROUNDS]; /* its launches' handoff probes
                                                                 (NAN: none) */
} val_reference;

/* The handoff probe (dse exec --handoff) of every launch of a validation
 * (the reference's and the points'): the first two CPU devices of one board
 * pass 2 MB back and forth, touching it on receipt.  Printed, not stored. */
typedef struct {
    int n;                   /* launches probed (0: none: no such board, --no-handoff) */
    char a[64], b[64];       /* the two devices */
    double hop_min, hop_max; /* us per pass */
    double touch_min, touch_max; /* us per touch of a's own data */
    double msg_us;           /* the model's message of 2 MB from a to b (cost_message_s) */
    int relaunched;          /* slow launches run again (val_options.relaunch), not in n */
} val_handoff;

typedef struct {
    char network[128], platform[128], chromosome[32];
    char warn[BASE_ERRLEN];  /* one line for the user, or "": the campaign's coefficients
                                were measured on another CPU architecture than its
                                devices state (coeffs_arch_warning) */
    int warmup, reps;
    int rounds;
    int n;
    val_point *pts;
    val_reference ref;
    val_handoff handoff;
} val_report;

/* Validate campaign o->campaign.  Returns 0 (every point measured or
 * unmeasurable here), 1 (some point failed; the rows say why, or a
 * runtime failure with err) or 2 (bad usage: no such database or
 * campaign, no front yet; err says why, nothing stored). */
int val_run(const val_options *o, val_report *r, char *err);
void val_report_free(val_report *r);

/* Did the measurements rank r's measured points in the predicted order of
 * objective k?  A pair whose predictions differ by less than the
 * run-to-run spread of either point (spread[k] - 1, relative) is a tie: the
 * measurement cannot order it.  Returns the number of pairs measured in
 * the other order (up to cap of them into wrong[] as index pairs into
 * r->pts); *pairs counts the pairs compared, *ties the ties among them. */
int val_order(const val_report *r, int k, int *pairs, int *ties, int (*wrong)[2], int cap);

#endif
