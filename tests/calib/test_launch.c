/* test_launch.c -- rt_run_job: exit codes, stdout collected whole, the
 * stderr line chosen, the deadline and the stop flag kill the whole process
 * group (grandchildren included), a missing program is reported. */
#include "base.h"
#include "runtime.h"
#include "tcheck.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* Alive and not a zombie. */
static int alive(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

int main(void)
{
    char *out, line[256];
    const char *echo[] = {"sh", "-c", "echo hello; echo 'mpirun: noise' >&2; echo 'dse exec: the real reason' >&2; exit 3", NULL};
    int rc = rt_run_job(echo, 10, NULL, "dse exec:", &out, NULL, line, sizeof line);
    CHECK(rc == 3, "exit code %d", rc);
    CHECK(!strcmp(out, "hello\n"), "stdout [%s]", out);
    CHECK(!strcmp(line, "dse exec: the real reason"), "preferred line [%s]", line);
    free(out);
    rc = rt_run_job(echo, 10, NULL, NULL, &out, NULL, line, sizeof line);
    CHECK(!strcmp(line, "mpirun: noise"), "first line [%s]", line);
    free(out);

    /* A megabyte of output is collected whole (the pipe never blocks it). */
    const char *big[] = {"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' a", NULL};
    rc = rt_run_job(big, 30, NULL, NULL, &out, NULL, line, sizeof line);
    CHECK(rc == 0 && strlen(out) == 1000000 && out[999999] == 'a', "big output: rc %d len %zu", rc, strlen(out));
    free(out);

    /* Deadline: the job and its grandchild are killed. */
    const char *slow[] = {"sh", "-c", "sleep 60 & echo $!; wait", NULL};
    double t0 = base_now();
    rc = rt_run_job(slow, 0.5, NULL, NULL, &out, NULL, line, sizeof line);
    double dt = base_now() - t0;
    long gpid = atol(out);
    CHECK(rc == RT_JOB_TIMEOUT, "timeout code %d", rc);
    CHECK(dt < 5, "took %.1f s", dt);
    CHECK(gpid > 0, "no grandchild pid [%s]", out);
    for (int i = 0; i < 50 && gpid > 0 && alive(gpid); i++) sleep_s(0.02);
    CHECK(gpid > 0 && !alive(gpid), "grandchild %ld survived the deadline", gpid);
    free(out);

    /* Stop flag: killed at once. */
    volatile sig_atomic_t stop = 1;
    const char *sl[] = {"sleep", "30", NULL};
    t0 = base_now();
    rc = rt_run_job(sl, 0, &stop, NULL, &out, NULL, line, sizeof line);
    CHECK(rc == RT_JOB_INTERRUPTED && base_now() - t0 < 5, "stop: rc %d after %.1f s", rc, base_now() - t0);
    free(out);

    /* Death by signal. */
    const char *sig[] = {"sh", "-c", "kill -9 $$", NULL};
    rc = rt_run_job(sig, 10, NULL, NULL, &out, NULL, line, sizeof line);
    CHECK(rc == 128 + 9, "signal: rc %d", rc);
    free(out);

    /* A program that does not exist. */
    const char *none[] = {"/nonexistent/dse-nothing", NULL};
    rc = rt_run_job(none, 10, NULL, NULL, &out, NULL, line, sizeof line);
    CHECK(rc == 127 && strstr(line, "cannot run"), "missing program: rc %d [%s]", rc, line);
    CHECK(out && !out[0], "output of a missing program");
    free(out);

    CHECK(rt_self_exe()[0] == '/', "self exe %s", rt_self_exe());

    /* After a deadline: the rank the others waited for.  b2's link cut:
     * ranks 0 and 1 wait for rank 2, whose own line never arrives. */
    int w = -1;
    const char *cut = "dse exec: rank 0 (device b0 on board b0): timed out after 8 s (--timeout) waiting for rank 2 (device b2 on board b2)\n"
                      "--------\n"
                      "dse exec: rank 1 (device b1 on board b1): timed out after 8 s (--timeout) waiting for rank 2 (device b2 on board b2)\n";
    CHECK(rt_stalled_rank(cut, 3, &w) == 2 && w == 2, "cut link: rank %d, %d waiters", rt_stalled_rank(cut, 3, NULL), w);
    /* A tie (0 waits for 1, 1 waits for 0) goes to the rank that did not
     * report, else to the lowest; a rank beyond the platform is ignored. */
    const char *tie = "dse exec: rank 0: timed out after 3 s (--timeout) waiting for rank 1\n"
                      "dse exec: rank 1: timed out after 3 s (--timeout) waiting for rank 0\n"
                      "dse exec: rank 2: timed out after 3 s (--timeout) waiting for rank 9\n";
    CHECK(rt_stalled_rank(tie, 3, &w) == 0 && w == 1, "tie: rank %d", rt_stalled_rank(tie, 3, NULL));
    const char *tie2 = "dse exec: rank 0: timed out after 3 s (--timeout) waiting for rank 1\n"
                       "dse exec: rank 2: timed out after 3 s (--timeout) waiting for rank 0\n";
    CHECK(rt_stalled_rank(tie2, 3, &w) == 1 && w == 1, "tie, one silent: rank %d", rt_stalled_rank(tie2, 3, NULL));
    /* Ranks in a collective name nobody: the one rank that did not report
     * is named (its link was cut during set-up); with two silent, none. */
    const char *coll = "dse exec: rank 0: timed out after 3 s (--timeout) during set-up waiting for every other rank\n"
                       "dse exec: rank 1: timed out after 3 s (--timeout) during set-up waiting for every other rank\n";
    CHECK(rt_stalled_rank(coll, 3, &w) == 2 && w == 2, "collective: rank %d", rt_stalled_rank(coll, 3, NULL));
    CHECK(rt_stalled_rank("dse exec: rank 1: timed out after 3 s (--timeout) while working\n", 3, &w) == -1 && w == 0,
          "nobody waited, two silent");
    CHECK(rt_stalled_rank(NULL, 2, NULL) == -1 && rt_stalled_rank("", 2, NULL) == -1, "no text");
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
