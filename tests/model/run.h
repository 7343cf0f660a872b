/* run.h -- what the model tests need around the built `dse` program: run
 * it with arguments and collect exit code, stdout and stderr; and scratch
 * files in a private temporary folder that scratch_cleanup() removes.
 * Strings returned here are owned by the caller (free()).
 */
#ifndef DSE_TEST_RUN_H
#define DSE_TEST_RUN_H

#include "tfile.h" /* tfile_read() for the outputs it writes */

typedef struct {
    int status; /* exit code, or 128 + signal number if it died */
    char *out;  /* everything it wrote on stdout */
    char *err;  /* ... and on stderr */
} run_result;

/* Run DSE_BIN with args (NULL-terminated, program name excluded). */
int run_dse(run_result *r, const char *const *args);
void run_free(run_result *r);

/* A path inside the test's scratch folder (created on first use). */
char *scratch_path(const char *name);
int write_text(const char *path, const char *text);
void scratch_cleanup(void);
/* Number of '\n'-terminated lines (a last unterminated line counts too). */
int count_lines(const char *s);

#endif
