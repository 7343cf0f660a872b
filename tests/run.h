/* run.h -- the one way the tests run the built `dse` program (or a shell
 * command line around it: environment, mpirun): wait for it and collect
 * exit code, stdout and stderr; and scratch files in a private temporary
 * folder that scratch_cleanup() removes.  Linked into every test
 * (tests/CMakeLists.txt's dse_testrun).
 * Strings returned here are owned by the caller (free()).
 */
#ifndef DSE_TEST_RUN_H
#define DSE_TEST_RUN_H

#include "tfile.h" /* tfile_read() for the outputs it writes */

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    int status; /* exit code, or 128 + signal number if it died */
    char *out;  /* everything it wrote on stdout */
    char *err;  /* ... and on stderr */
} run_result;

/* Start DSE_BIN with args (NULL-terminated, program name excluded) after
 * the words of prefix (NULL-terminated, may be NULL: e.g. setpriv ...),
 * stdout and stderr into the files out and err (NULL: /dev/null), without
 * waiting: the pid, for run_wait (or a kill first). */
pid_t run_dse_start(const char *const *prefix, const char *out, const char *err, const char *const *args);
/* Wait for a child: its exit code, 128 + signal number if it died, -1. */
int run_wait(pid_t pid);
/* Run DSE_BIN with args (NULL-terminated, program name excluded). */
int run_dse(run_result *r, const char *const *args);
/* Run a shell command line (sh -c), e.g. "DSE_FAULT=stall@1 dse mpirun ...";
 * r may be NULL (outputs discarded).  Returns the exit code (128 + signal). */
int run_sh(run_result *r, const char *cmdline);
/* run_sh keeping only stderr, into errbuf (may be NULL). */
int run_sh_err(const char *cmdline, char *errbuf, size_t errlen);
/* run_sh with printf-style formatting, outputs discarded. */
int run_shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void run_free(run_result *r);

/* A platform file of n one-core devices r0, r1, ... on this machine
 * ("local-test", one shared-memory link); the last a GPU if gpu_last. */
int write_local_platform(const char *path, int n, int gpu_last);

/* A path inside the test's scratch folder (created on first use). */
char *scratch_path(const char *name);
int write_text(const char *path, const char *text);
void scratch_cleanup(void);
/* Number of '\n'-terminated lines (a last unterminated line counts too). */
int count_lines(const char *s);

#endif
