/* pace.c -- rt_pace: an emulated board slower than this machine's CPU
 * (emulate.cpu_limit "pace", docs/emulated-boards.md).
 *
 * A board of CPU share s paces its computing so that work of CPU time c
 * takes at least c / s of wall time: after each region of work (dse
 * exec: a step) it owes the difference, and sleeps it off when the caller
 * settles (before anything other boards see) or once PACE_LUMP is owed.
 * A cgroup CFS
 * quota does not make a slower CPU on a machine whose tick is 4 ms: a
 * board that waited ran its next quota at full speed (a board of share 0.5
 * computed 1.3-2.4x faster than its calibrated passes, bench/README).
 *
 * The CPU time is the thread's when the rank runs one kernel thread
 * (rt_threads), else the process's (all its threads: kernel workers, and
 * MPI's own, are charged to the board).  Each rank paces itself: two
 * devices of one paced board may together use twice its share (the
 * presets have one device a board).
 *
 * Invariant: a paced region's wall time, once settled, is at least its
 * CPU time over the share, less at most PACE_CREDIT of a sleep's
 * overshoot carried from the region before and PACE_MIN_SLEEP of debt
 * carried to the next; an unpaced rank (pace 0) reads no clock.
 */
#include "runtime.h"

#include "base.h"

#include <errno.h>
#include <time.h>

/* A sleep wakes tens of microseconds late: the overshoot is credited to
 * the next region, up to this much, so that many short regions are not
 * each paced a wake-up too slow. */
#define PACE_CREDIT 500e-6

/* Debt below this is carried rather than slept: a sleep costs a wake-up. */
#define PACE_MIN_SLEEP 20e-6

/* A region that need not settle (more work follows before anything other
 * boards see) sleeps only once its debt reaches this: mobilenetv2's
 * hundreds of short steps, each slept, ran a paced board 20-60 % slower
 * than its pace (each wake-up on a CPU shared with another board costs
 * more than the sleep's overshoot credited). */
#define PACE_LUMP 200e-6

static double cpu_now(const rt_pace *p)
{
    struct timespec t;
    clock_gettime(p->thread_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void rt_pace_init(rt_pace *p, const platform *pl, int dev)
{
    p->share = dev >= 0 && dev < pl->ndev ? pl->dev[dev].pace : 0;
    p->thread_clock = p->share > 0 && rt_threads(pl, dev) == 1;
    p->w0 = p->c0 = p->debt = 0;
}

void rt_pace_begin(rt_pace *p)
{
    if (!(p->share > 0)) return;
    p->w0 = base_now();
    p->c0 = cpu_now(p);
}

void rt_pace_end(rt_pace *p, int settle)
{
    if (!(p->share > 0)) return;
    double w = base_now() - p->w0, c = cpu_now(p) - p->c0;
    /* A region already slower than its pace (preempted) owes nothing. */
    if (c / p->share > w) p->debt += c / p->share - w;
    if (settle || p->debt >= PACE_LUMP) rt_pace_settle(p);
}

void rt_pace_idle(rt_pace *p)
{
    if (p->debt < 0) p->debt = 0;
}

void rt_pace_settle(rt_pace *p)
{
    if (!(p->share > 0) || p->debt < PACE_MIN_SLEEP) return;
    double t0 = base_now(), d = p->debt;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
    p->debt -= base_now() - t0;
    if (p->debt < -PACE_CREDIT) p->debt = -PACE_CREDIT;
}
