/* exec.h -- the MPI runtime: executes a Plan for real (DESIGN section 9).
 *
 * Rank r is device r of the platform.  Every rank builds the same Plan from
 * the same files, keeps only its own step list, allocates only its slices'
 * weights, and interprets the steps: COMPUTE runs a kernel (runtime/
 * kernels.h), SEND is an MPI_Isend issued as soon as the tensor exists,
 * RECV buffers are allocated and their MPI_Irecv posted when an inference
 * starts and waited on at the RECV step, CONCAT copies slices (channel-major
 * slices of an NCHW tensor are contiguous).  Tensors are freed after the
 * step whose free list names them; a tensor still being sent is freed as
 * soon as its sends complete.  The cost model (model/cost.h) reads the
 * same Plan with these semantics.
 *
 * rt_exec is collective: every rank of MPI_COMM_WORLD calls it.  Results are
 * gathered on rank 0.  Errors are returned (same code on every rank);
 * err is filled on rank 0.  Nothing is printed here.
 */
#ifndef DSE_EXEC_H
#define DSE_EXEC_H

#include <stdint.h>

#include "net.h"
#include "platform.h"

typedef struct {
    const char *network;  /* zoo name or file */
    const char *platform; /* preset or file */
    const char *mapping;  /* mapping file (dse-mapping JSON), or NULL with single_dev */
    int single_dev;       /* with mapping == NULL: everything on this device */
    const char *input;    /* raw float32 NCHW input file, or NULL (generated) */
    const char *output;   /* write the network output here (raw float32), or NULL */
    int warmup, reps;     /* benchmark: warm-up and timed inferences (0, 1 = one run) */
    double timeout_s;     /* > 0: a rank exceeding it aborts the job */
    uint64_t seed;        /* generated weights and input */
    const char *trace;    /* write the timeline of the median timed inference here
                             (model/trace.h; rank 0 writes), or NULL */
    int check;            /* compare the first output with the single-device run:
                             every |y - ref| <= 1e-4 |ref| + 1e-5 max|ref| (float32
                             rounding grows through deep nets; the absolute floor
                             keeps near-zero outputs from failing on noise) */
} rt_options;

typedef struct {
    char name[64];
    int nsteps;
    double busy_ms;      /* median over timed inferences: compute + concat */
    double wait_ms;      /* median time blocked in receives */
    double finish_ms;    /* median time from the start barrier to the last step */
    int64_t bytes_sent, bytes_recv; /* per inference */
    double peak_rss_mb;  /* VmHWM of the rank's process, 1 MB = 1e6 bytes */
    double energy_j;     /* per inference; valid only if energy_measured */
    int energy_measured;
} rt_device;

typedef struct {
    int ndev;
    rt_device dev[64];
    double lat_med_ms, lat_min_ms, lat_max_ms; /* barrier to output complete */
    int out_dev;
    int checked;          /* the output was compared with the single-device run */
    double max_abs_err;   /* max |y - ref| */
    double max_rel_err;   /* max |y - ref| / max(|ref|, 0.1 max|ref|) */
    int check_ok;
    int64_t out_numel;
} rt_result;

/* Exit-code-like returns: 0 ok, 1 runtime failure (mismatch, I/O), 2 bad
 * input (files, rank count, GPU work). */
int rt_exec(const rt_options *o, rt_result *r, char *err);

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
 * in remote[rlen] ("jetson-1, jetson-2", for messages), or -1 with err. */
int rt_placement_file(const platform *pl, const char *dir, char *path, size_t len, char *remote,
                      size_t rlen, char *err);

/* The one way dse launches MPI jobs (tests and scripts go through
 * `dse mpirun`): builds `mpirun -np N [flags] prog args...` with what Open
 * MPI needs here (--oversubscribe; running as root allowed through the
 * OMPI_ALLOW_RUN_AS_ROOT* variables, set in the environment by
 * rt_mpirun_env).  hostfile (may be NULL) is a user's hostfile, mapped as
 * mpirun does by default; seqfile (may be NULL) one from
 * rt_placement_file, mapped rank by line and not bound to cores (a device
 * of several cores runs as many kernel threads).  argv_out must hold
 * 16 + nargs entries; returns its count. */
int rt_mpirun_argv(int np, const char *hostfile, const char *seqfile, const char *const *args,
                   int nargs, const char **argv_out);
void rt_mpirun_env(void);

#endif
