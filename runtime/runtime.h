/* runtime.h -- the MPI runtime (DESIGN section 9): executes a Plan for real,
 * launches such jobs, and measures mappings.  The whole public API of
 * runtime/, prefix rt_.
 *
 * Executing (rt_exec, rt_exec_plan; runtime/exec.c, runtime/rank.c):
 * rank r is device r of the platform.  Every rank builds the same Plan
 * from the same files -- and checks that it did: the ranks agree on a
 * digest of network, platform and mapping before anything runs -- keeps
 * only its own step list, allocates only its slices' weights, and
 * interprets the steps: COMPUTE runs a kernel (kernels/kernels.h), SEND is
 * an MPI_Isend issued as soon as the tensor exists, RECV buffers are
 * allocated and their MPI_Irecv posted when an inference starts and waited
 * on at the RECV step (a message of another size than the Plan's is an
 * error, never a write past a buffer), CONCAT copies slices (channel-major
 * slices of an NCHW tensor are contiguous).  Tensors are freed after the
 * step whose free list names them; a tensor still being sent is freed as
 * soon as its sends complete.  The cost model (model/cost.h) reads the
 * same Plan with these semantics.  Both are collective: every rank of
 * MPI_COMM_WORLD calls them; results are gathered on rank 0; errors are
 * returned (same code on every rank), err filled on rank 0.
 *
 * Launching (rt_run_job, rt_mpirun_argv; runtime/launch.c, board.c): the
 * one way dse starts `mpirun ... dse ...` jobs, with a deadline; when
 * rt_run_job returns, the job and everything it started is gone.
 *
 * Measuring (rt_measure; runtime/measure.c, record.c): one mapping run as
 * a job of `dse exec --json`, its record parsed back into an rt_result --
 * the one way dse validate, dse calibrate and the fidelity benchmark
 * measure, and the one definition of the record's format.
 *
 * Nothing here prints.  Exit-code-like returns: 0 ok, 1 runtime failure
 * (a rank died or stalled, a mismatch, I/O), 2 bad input (files, rank
 * count, GPU work, ranks that read different files).
 */
#ifndef DSE_RUNTIME_H
#define DSE_RUNTIME_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "net.h"
#include "plan.h"
#include "platform.h"

#define RT_MAX_DEV PLAT_MAX_DEV

/* ---- executing ---- */

typedef struct {
    const char *network;  /* zoo name or file */
    const char *platform; /* preset or file */
    const char *mapping;  /* mapping file (dse-mapping JSON), or NULL with single_dev */
    int single_dev;       /* with mapping == NULL: everything on this device */
    const char *input;    /* raw float32 NCHW input file, or NULL (generated) */
    const char *output;   /* write the network output here (raw float32), or NULL */
    int warmup, reps;     /* benchmark: warm-up and timed inferences (0, 1 = one run) */
    double timeout_s;     /* > 0: a rank exceeding it aborts the job; 0: wait forever;
                             < 0: rt_default_timeout of the Plan */
    uint64_t seed;        /* generated weights and input */
    const char *trace;    /* write the timeline of the median timed inference here
                             (model/trace.h; rank 0 writes), or NULL */
    int check;            /* compare the first output with the single-device run:
                             every |y - ref| <= 1e-4 |ref| + 1e-5 max|ref| (float32
                             rounding grows through deep nets; the absolute floor
                             keeps near-zero outputs from failing on noise) */
    int beside;           /* with single_dev (rt_exec): after the run alone, every CPU
                             device on single_dev's board runs the whole network at the
                             same time, each on its own input (no messages), and
                             rt_result.beside holds single_dev's latency then; both runs
                             keep the input on single_dev.  rt_exec_plan: p is this
                             rank's own plan (they differ by rank), and the latency and
                             output are single_dev's */
    int handoff;          /* after the timed inferences, the handoff probe
                             (rt_result.handoff) in the same launch */
} rt_options;

typedef struct {
    int a, b;               /* devices, a < b; a = -1: none measured (see rt_result) */
    double hop_us, touch_us;
} rt_handoff;

typedef struct {
    char name[64];
    int nsteps;
    double busy_ms;      /* median over timed inferences: compute + concat */
    double wait_ms;      /* median time blocked in receives */
    double finish_ms;    /* median time from the start barrier to the last step */
    int64_t bytes_sent, bytes_recv; /* per inference */
    int64_t bytes_to[RT_MAX_DEV];   /* per inference, sent to each rank (payload, as sent) */
    double peak_rss_mb;  /* VmHWM of the rank's process, 1 MB = 1e6 bytes */
    double energy_j;     /* per inference; valid only if energy_measured */
    int energy_measured;
} rt_device;

typedef struct {
    int ndev;
    rt_device dev[RT_MAX_DEV];
    int warmup, reps;     /* what was run */
    double lat_med_ms, lat_min_ms, lat_max_ms; /* barrier to output complete */
    int out_dev;
    int checked;          /* the output was compared with the single-device run */
    double max_abs_err;   /* max |y - ref| */
    double max_rel_err;   /* max |y - ref| / max(|ref|, 0.1 max|ref|) */
    int check_ok;
    int64_t out_numel;
    double timeout_s;     /* the deadline the ranks ran under (0 = none) */
    int bytes_to_known;   /* the record had bytes_to (older records do not) */
    /* rt_options.beside: the output device's latency while every CPU device of
     * its board ran the network too (n of them, itself included; 0: not run,
     * 1: it has no such neighbour).  Its ratio to lat_med_ms says how much
     * the board's CPUs slow each other when busy at once, now. */
    struct {
        int n;
        double med_ms, min_ms, max_ms;
    } beside;
    /* rt_options.handoff: the first two CPU devices of one board (a < b;
     * a = -1: no board has two, nothing run) pass a buffer of RT_HANDOFF_BYTES
     * back and forth through MPI, each touching it (x = x/2 + 1) on receipt:
     * hop_us per pass (the message and the touch of data the other core
     * wrote), touch_us the same touch on a's own data (medians of
     * RT_HANDOFF_ROUNDS).  Their ratio is what reading a neighbour's data
     * costs in this launch: on a VM it changes from one launch to the next,
     * and a split mapping's receives and the steps after them with it
     * (bench/README.md, "Split mappings slower in some launches"). */
    rt_handoff handoff;
} rt_result;
#define RT_HANDOFF_BYTES (2 << 20)
#define RT_HANDOFF_ROUNDS 15

/* Load the files of o, build the Plan, and run it (rt_exec_plan). */
int rt_exec(const rt_options *o, rt_result *r, char *err);
/* Run Plan p of network n on platform pl (o's files are not read; its
 * input, output, warmup, reps, timeout, seed, trace and check are used,
 * and beside with single_dev: rt_options.beside).  what names the inputs
 * in messages (e.g. the mapping file).  The ranks first agree on a digest
 * of n, pl and p (not with o->beside, where plans differ by rank); one
 * that differs fails the job with exit 2 naming the rank. */
int rt_exec_plan(const net *n, const platform *pl, const plan *p, const rt_options *o,
                 const char *what, rt_result *r, char *err);

/* The deadline a run gets when none is given (docs/runtime.md): 100 x the
 * model's latency of the Plan with built-in coefficients per inference
 * run (warm-up, timed, the check's reference), plus 1 s per 10 MB of the
 * largest rank's weights, and never less than RT_TIMEOUT_FLOOR_S -- a
 * floor for sanitizer builds, CPU-throttled boards and emulated CPUs. */
#define RT_TIMEOUT_FLOOR_S 600.0
double rt_default_timeout(const net *n, const platform *pl, const plan *p, int warmup, int reps);

/* Energy sensors (DESIGN section 9): a RAPL-style counter (a path ending
 * in energy_uj, microjoules) or an instantaneous power file in milliwatts
 * (e.g. a Jetson INA3221 rail), integrated by a thread sampling every 5 ms.
 * rt_sensor_start returns NULL when the path cannot be read; rt_sensor_stop
 * returns the joules between start and stop (NAN if the counter wrapped),
 * the interval's length in *seconds (may be NULL), and frees s. */
typedef struct rt_sensor rt_sensor;
rt_sensor *rt_sensor_start(const char *path);
double rt_sensor_stop(rt_sensor *s, double *seconds);

/* DSE_FAULT=abort@R | stall@R | corrupt@R: the fault the tests inject into
 * rank R (die, hang, or perturb the first value it computes). */
typedef enum { RT_FAULT_NONE, RT_FAULT_ABORT, RT_FAULT_STALL, RT_FAULT_CORRUPT } rt_fault;
rt_fault rt_fault_for(int rank);

/* VmHWM of this process in bytes (0 if unknown). */
int64_t rt_peak_rss(void);

/* Kernel threads a rank of device dev uses: 1 on `local-*` platforms
 * (ranks share this machine's cores), else the device's cores.  The
 * calibration worker times kernels with the same count. */
int rt_threads(const platform *pl, int dev);

/* Pacing (runtime/pace.c): on an emulated platform whose boards are paced
 * (emulate.cpu_limit "pace", plat_device.pace), work of CPU time c between
 * rt_pace_begin and rt_pace_end takes at least c / share of wall time: the
 * difference is owed and slept off at rt_pace_settle (rt_pace_end with
 * settle 1, or settle 0 once 200 us are owed; debt under 20 us is carried
 * to the next region instead).
 * On any other device every call returns at once.  dse exec paces each
 * compute and concat step, the calibration worker each whole pass it
 * times. */
typedef struct {
    double share;      /* plat_device.pace: 0 = not paced */
    int thread_clock;  /* charge the thread's CPU time (one kernel thread), else the process's */
    double w0, c0;     /* wall and process CPU clocks at rt_pace_begin */
    double debt;       /* seconds owed (negative: a sleep's overshoot credited) */
} rt_pace;
void rt_pace_init(rt_pace *p, const platform *pl, int dev);
void rt_pace_begin(rt_pace *p);
void rt_pace_end(rt_pace *p, int settle);
void rt_pace_settle(rt_pace *p);
/* The rank is about to block (a receive, a new inference): a sleep's
 * overshoot credited to later work is forgotten, so that work after a wait
 * is never paid for by a sleep before it. */
void rt_pace_idle(rt_pace *p);

/* How a waiting rank waits, in microseconds of nap between polls; 0 spins
 * in MPI_Wait.  A board of its own loses nothing by spinning (the fastest
 * wake-up).  An emulated board is a CPU share (scripts/emulate-boards): a
 * rank spinning there spends its board's share while it waits, which no
 * real board does, so on an emulated platform it naps 20 us between polls.
 * DSE_WAIT=spin or DSE_WAIT=nap overrides (docs/runtime.md). */
int rt_wait_nap(const platform *pl);

/* MPI_Wait that naps between polls when nap_us > 0 (rt_barrier likewise):
 * how dse exec waits, and the calibration worker's ping-pong with it. */
int rt_wait(MPI_Request *r, MPI_Status *st, int nap_us);

/* A barrier of MPI_COMM_WORLD (inside an MPI job) that polls and naps
 * between polls (nap_us at first, doubling up to 5 x nap_us), so waiting
 * ranks leave the cores (and an emulated board's CPU share) to the ones
 * working; nap_us 0 spins in MPI_Wait.  Always an MPI_Ibarrier, so ranks
 * that nap differently (or not at all) meet in the same collective. */
int rt_barrier(int nap_us);

/* ---- boards and launching ---- */

/* Is `board` this machine: localhost, 127.0.0.1, ::1, or this host's name
 * (with or without its domain)? */
int rt_board_is_here(const char *board);

/* Where the ranks of a platform's job run.  A `local-*` platform whose
 * boards are all this machine runs here as mpirun places it (one rank per
 * core, bound: each runs one kernel thread, rt_threads): returns 0 with
 * path[0] = 0 and writes nothing.  Any other writes dir/hosts, an Open MPI
 * hostfile for the sequential mapper (`--map-by seq`): line r is the board
 * of device r, this machine's boards spelt by its host name, so that rank r
 * runs on device r's board whatever the order of the devices.  Returns 0
 * with the file's path in path[len] and the boards other than this machine
 * in remote[rlen] ("jetson-1, jetson-2", for messages), or -1 with err.
 * An emulated platform (an "emulate" section) also sets, in this process's
 * environment for the mpirun it starts, the OMPI_MCA_* launch settings that
 * scripts/emulate-boards up wrote to /run/dse-emu/NAME/mca ($DSE_EMU_DIR
 * instead of /run/dse-emu); -1 with err when they are missing (not up). */
int rt_placement_file(const platform *pl, const char *dir, char *path, size_t len, char *remote,
                      size_t rlen, char *err);

/* Builds `mpirun -np N [flags] prog args...` with what Open MPI needs here
 * (--oversubscribe; running as root allowed through the
 * OMPI_ALLOW_RUN_AS_ROOT* variables, set in the environment by
 * rt_mpirun_env).  hostfile (may be NULL) is a user's hostfile, mapped as
 * mpirun does by default; seqfile (may be NULL) one from
 * rt_placement_file, mapped rank by line and not bound to cores (a device
 * of several cores runs as many kernel threads).  argv_out must hold
 * 16 + nargs entries; returns its count. */
int rt_mpirun_argv(int np, const char *hostfile, const char *seqfile, const char *const *args,
                   int nargs, const char **argv_out);
void rt_mpirun_env(void);

enum {
    RT_JOB_NOSTART = -1,      /* fork/exec failed (errline says why) */
    RT_JOB_TIMEOUT = 124,     /* killed at the deadline */
    RT_JOB_INTERRUPTED = 130  /* killed because *stop became nonzero */
};

/* Run argv (argv[0] looked up in PATH) with stdin from /dev/null, collect
 * its stdout into *out (malloc'd, always NUL-terminated, caller frees; out
 * NULL: the job writes to this process's stdout) and
 * pick one line of its stderr into errline: the first line containing
 * `prefer` (e.g. "dse exec:"; NULL = none), else the first non-empty line.
 * Kills the job's process group at timeout_s seconds (<= 0: no deadline)
 * or as soon as *stop (may be NULL) is nonzero.  Returns the job's exit
 * code, 128 + signal if it died of a signal, or one of the RT_JOB_* codes.
 * errtext (may be NULL) receives the whole stderr (malloc'd). */
int rt_run_job(const char *const *argv, double timeout_s, volatile sig_atomic_t *stop,
               const char *prefer, char **out, char **errtext, char *errline, size_t errlen);

/* The rank mpirun reports dead in its stderr text ("process rank 1 ...
 * exited on signal 6 (Aborted)"), with the signal's description in
 * how[n]; -1 when it names none. */
int rt_dead_rank(const char *mpirun_stderr, char *how, size_t n);
/* After a deadline, from a job's stderr: the rank that the timed-out
 * ranks waited for most ("dse exec: rank R ...: timed out ... waiting for
 * rank P ..."), ties going to a rank whose own line is missing (a cut link
 * keeps it from arriving), then to the lowest; when no line names a rank
 * (ranks waiting in a collective) but every rank but one reported, that
 * one.  *waiters (may be NULL) gets how many waited for it.  -1 when
 * neither names a rank. */
int rt_stalled_rank(const char *stderr_text, int ndev, int *waiters);

/* Absolute path of the running program (for launching itself under
 * mpirun); "dse" if /proc/self/exe cannot be read.  Static storage. */
const char *rt_self_exe(void);

/* ---- the record of a run (`dse exec --json`; runtime/record.c) ---- */

/* The JSON record of r (docs/runtime.md), malloc'd; NULL out of memory. */
char *rt_record_json(const rt_result *r);
/* Parse a record back; 0, or -1 with err naming what is missing. */
int rt_record_parse(const char *text, rt_result *r, char *err);
/* The measured objectives of a run (model/objectives.def), NAN for those
 * not measured (energy without a sensor on every used device), and one
 * device's share. */
void rt_objectives(const rt_result *r, double *obj);
void rt_objectives_dev(const rt_result *r, int dev, double *obj);
/* Did the run pass data between devices (any bytes sent)? */
int rt_moved_data(const rt_result *r);

/* ---- measuring a mapping (runtime/measure.c) ---- */

typedef struct {
    const char *dse;        /* program to launch; NULL = this program */
    const char *network;    /* files (or zoo / preset names) given to dse exec */
    const char *platform;
    const char *mapping;    /* or NULL with single_dev >= 0 */
    int single_dev;
    const platform *pl;     /* the platform, for the rank count and placement */
    const char *hostfile;   /* a user's hostfile, or NULL */
    const char *seqfile;    /* rt_placement_file's file, or NULL */
    const char *remote;     /* its remote boards, for messages, or NULL */
    int warmup, reps;
    double timeout_s;       /* the ranks' deadline (dse exec --timeout); the job is
                               killed 30 s after it.  <= 0: rt_default_timeout's rule,
                               applied by dse exec, and the job killed after an hour */
    uint64_t seed;
    const char *trace;      /* dse exec --trace file, or NULL */
    int no_check;
    volatile sig_atomic_t *stop;
    int beside;             /* dse exec --beside (with single_dev): rt_options.beside */
    int handoff;            /* dse exec --handoff: rt_options.handoff */
} rt_measure_opts;

/* Run the job and parse its record into r.  Returns 0; 1 when the run
 * failed (a rank died -- err names it --, timed out, a mismatch, an
 * unreadable record) or 2 when dse exec refused its input; err says why
 * in one line (without a "dse exec:" prefix). */
int rt_measure(const rt_measure_opts *o, rt_result *r, char *err);

#endif
