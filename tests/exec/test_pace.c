/* test_pace.c -- rt_pace (runtime/pace.c), the pacing of an emulated board
 * slower than this machine's CPU: a paced region's wall time is at least
 * its CPU time over the board's share once settled, whether the work comes
 * in one piece or in many short ones settled once; an unpaced device
 * (share 0, or a "quota" platform) owes nothing.  Lower bounds only: a
 * loaded machine makes regions slower, never faster than their pace. */
#include "platform.h"
#include "runtime.h"

#include "check.h"

#include <stdio.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Burns about `sec` of CPU time; returns what it burnt (inside the paced
 * region: the pace charges at least that). */
static double burn(double sec)
{
    volatile double x = 1;
    double c0 = cpu_now(), c;
    while ((c = cpu_now() - c0) < sec)
        for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
    return c;
}

static platform *plat(const char *limit)
{
    char t[1000], err[BASE_ERRLEN];
    snprintf(t, sizeof t,
             "{\"format\":\"dse-platform\",\"devices\":["
             "{\"name\":\"fast\",\"board\":\"b0\",\"freq_mhz\":2000,\"cores\":1,\"memory_mb\":100,"
             "\"idle_w\":0,\"busy_w\":1},"
             "{\"name\":\"slow\",\"board\":\"b1\",\"freq_mhz\":500,\"cores\":1,\"memory_mb\":100,"
             "\"idle_w\":0,\"busy_w\":1}],"
             "\"links\":{\"network\":{\"latency_us\":1,\"bandwidth_mbs\":10}},"
             "\"emulate\":{\"subnet\":\"10.199.9.0/24\",\"cpu_limit\":\"%s\",\"boards\":{"
             "\"b0\":{\"cpu\":1,\"link_mbit\":100},\"b1\":{\"cpu\":0.25,\"link_mbit\":100}}}}",
             limit);
    platform *p = platform_from_json(t, "pace", err);
    if (!p) fprintf(stderr, "test_pace: %s\n", err);
    return p;
}

int main(void)
{
    platform *pl = plat("pace");
    CHECK(pl != NULL);
    if (!pl) return check_done("test_pace");
    rt_pace slow, fast;
    rt_pace_init(&slow, pl, 1);
    rt_pace_init(&fast, pl, 0);
    CHECK(slow.share == 0.25);
    CHECK(fast.share == 0);

    /* One region of 20 ms of CPU: at least 80 ms of wall. */
    for (int r = 0; r < 3; r++) {
        slow.debt = 0; /* no credit from the region before */
        double w0 = wall_now();
        rt_pace_begin(&slow);
        double c = burn(0.02);
        rt_pace_end(&slow, 1);
        double w = wall_now() - w0;
        if (!(w >= c / 0.25 - 20e-6)) fprintf(stderr, "one region: wall %.4f s, cpu %.4f s\n", w, c);
        CHECK(w >= c / 0.25 - 20e-6); /* at most PACE_MIN_SLEEP carried */
    }

    /* 200 regions of 0.1 ms settled only at the end (a run of compute
     * steps before a send; rt_pace_end sleeps whenever 200 us are owed):
     * their debt adds up, less at most one sleep's credit (500 us) and 20 us carried. */
    slow.debt = 0;
    double w0 = wall_now(), c = 0;
    for (int i = 0; i < 200; i++) {
        rt_pace_begin(&slow);
        c += burn(1e-4);
        rt_pace_end(&slow, i == 199);
    }
    double w = wall_now() - w0;
    if (!(w >= c / 0.25 - 600e-6)) fprintf(stderr, "short regions: wall %.4f s, cpu %.4f s\n", w, c);
    CHECK(w >= c / 0.25 - 600e-6);
    CHECK(slow.debt < 20e-6 + 1e-12); /* settled: at most what is not worth a sleep */

    /* The unpaced device and a "quota" platform owe nothing. */
    rt_pace_begin(&fast);
    burn(0.005);
    rt_pace_end(&fast, 1);
    CHECK(fast.debt == 0);
    platform_free(pl);
    pl = plat("quota");
    CHECK(pl != NULL);
    if (pl) {
        rt_pace q;
        rt_pace_init(&q, pl, 1);
        CHECK(q.share == 0);
        rt_pace_begin(&q);
        burn(0.005);
        rt_pace_end(&q, 1);
        CHECK(q.debt == 0);
    }
    platform_free(pl);
    return check_done("test_pace");
}
