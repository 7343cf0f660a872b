/* test_engine_cli.c -- `dse optimize` through the built binary (DSE_BIN):
 * exit 2 with one line on stderr for every bad option, 0 and the expected
 * report for good runs, identical fronts for identical options (also
 * across thread counts), JSON output. */
#include "check.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 20], errtxt[1 << 16];

/* Runs `dse optimize ARGS` through the tests' runner (run.h); stdout into
 * out, stderr into errtxt. */
static int run(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s optimize %s", DSE_BIN, args);
    run_result r;
    int st = run_sh(&r, cmd);
    snprintf(out, sizeof out, "%s", r.out);
    snprintf(errtxt, sizeof errtxt, "%s", r.err);
    run_free(&r);
    return st;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* the text report minus its timing line (the only non-deterministic one) */
static void strip_timing(char *s)
{
    char *p = strstr(s, "pop ");
    char *e = p ? strchr(p, '\n') : NULL;
    if (p && e) memmove(p, e + 1, strlen(e + 1) + 1);
}

int main(void)
{
    const char *bad[] = {"",
                         "zdt1 extra",
                         "nosuchproblem",
                         "zdt1 --pop 3",
                         "zdt1 --pop 5",
                         "zdt1 --pop 102x",
                         "zdt1 --gens -1",
                         "zdt1 --seed -4",
                         "zdt1 --threads 0",
                         "zdt1 --xover onepoint",
                         "zdt1 --bogus 1",
                         "zdt1 --json=yes",
                         "zdt1 --pop"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run(bad[i]);
        CHECK(rc == 2, "\"dse optimize %s\": exit %d, want 2", bad[i], rc);
        CHECK(lines(errtxt) == 1 && strstr(errtxt, "optimize"), "\"%s\": stderr \"%s\"", bad[i], errtxt);
        CHECK(out[0] == 0, "\"%s\": nothing on stdout", bad[i]);
    }
    CHECK(run("--help") == 0 && strstr(out, "zdt6") && strstr(out, "knapsack"), "help lists the problems");

    CHECK(run("zdt1 --pop 40 --gens 30 --seed 3") == 0, "zdt1 runs: %s", errtxt);
    CHECK(strstr(out, "problem zdt1") && strstr(out, "hypervolume") && strstr(out, "true front 0.8766"),
          "report: %s", out);
    static char first[1 << 20];
    strip_timing(out);
    snprintf(first, sizeof first, "%s", out);
    CHECK(run("zdt1 --pop 40 --gens 30 --seed 3 --threads 4") == 0, "zdt1 with 4 threads");
    strip_timing(out);
    CHECK(strcmp(first, out) == 0, "4 threads print the same front as 1");
    CHECK(run("zdt1 --pop 40 --gens 30 --seed 4") == 0, "another seed");
    strip_timing(out);
    CHECK(strcmp(first, out) != 0, "another seed, another front");

    CHECK(run("knapsack --pop 20 --gens 10 --xover twopoint --json") == 0, "knapsack json: %s", errtxt);
    CHECK(out[0] == '{' && strstr(out, "\"front\"") && strstr(out, "\"true_hypervolume\"") &&
              strstr(out, "\"problem\":\t\"knapsack\""),
          "json: %.300s", out);
    CHECK(run("dtlz2 --pop 20 --gens 5 --archive") == 0 && strstr(out, "archive") && strstr(out, "1.1, 1.1, 1.1"),
          "dtlz2 archive: %.300s", out);
    CHECK(run("tnk --pop 20 --gens 5") == 0 && strstr(out, "true front"), "tnk");
    CHECK(run("zdt5 --pop 20 --gens 5") == 0 && strstr(out, "(32, 11)"), "zdt5: %.200s", out);
    CHECK(run("zdt6 --pop 8 --gens 0") == 0 && strstr(out, "0 generations"), "zero generations: initial population");
    return check_done("test_engine_cli");
}
