/* launch.h -- running a child job (an `mpirun ... dse ...` command line)
 * with a deadline, from a parent that keeps control: the one job launcher
 * `dse validate`, `dse calibrate` and the fidelity benchmark share.
 *
 * Invariant: when rt_run_job returns, the job and everything it started
 * (mpirun and every rank: the child runs in its own process group) is
 * gone, whether it finished, timed out, or was interrupted by the caller's
 * stop flag (e.g. set by a SIGINT handler).  Nothing is printed.
 *
 * Ownership: *out is malloc'd (caller frees), always NUL-terminated, also
 * on failure; argv is borrowed.
 */
#ifndef DSE_LAUNCH_H
#define DSE_LAUNCH_H

#include <signal.h>
#include <stddef.h>

enum {
    RT_JOB_NOSTART = -1,      /* fork/exec failed (errline says why) */
    RT_JOB_TIMEOUT = 124,     /* killed at the deadline */
    RT_JOB_INTERRUPTED = 130  /* killed because *stop became nonzero */
};

/* Run argv (argv[0] looked up in PATH) with stdin from /dev/null, collect
 * its stdout into *out and pick one line of its stderr into errline: the
 * first line containing `prefer` (e.g. "dse exec:"; NULL = none), else the
 * first non-empty line.  Kills the job's process group at timeout_s
 * seconds (<= 0: no deadline) or as soon as *stop (may be NULL) is
 * nonzero.  Returns the job's exit code, 128 + signal if it died of a
 * signal, or one of the RT_JOB_* codes. */
int rt_run_job(const char *const *argv, double timeout_s, volatile sig_atomic_t *stop,
               const char *prefer, char **out, char *errline, size_t errlen);

/* Absolute path of the running program (for launching itself under
 * mpirun); "dse" if /proc/self/exe cannot be read.  Static storage. */
const char *rt_self_exe(void);

#endif
