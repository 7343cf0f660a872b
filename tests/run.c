/* run.c -- see run.h (the tests' one runner of the dse program).  Output is collected through files in the scratch
 * folder rather than pipes, so a chatty child can never block. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static char *made[256];
static int nmade;
static pid_t owner; /* the process that made dir */

static void exit_cleanup(void)
{
    if (getpid() == owner) scratch_cleanup();
}

static const char *scratch_dir(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/dse-test-model-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
        /* Removed at exit even by a test that never calls scratch_cleanup
         * (run_dse's run.stdout and run.stderr live here); only by the
         * process that made it, not by a forked child that exits. */
        static int registered;
        owner = getpid();
        if (!registered) registered = atexit(exit_cleanup) == 0;
    }
    return dir;
}

char *scratch_path(const char *name)
{
    size_t n = strlen(scratch_dir()) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    for (int i = 0; i < nmade; i++)
        if (strcmp(made[i], p) == 0) return p;
    if (nmade < 256) made[nmade++] = strdup(p);
    return p;
}

int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

void scratch_cleanup(void)
{
    for (int i = 0; i < nmade; i++) {
        unlink(made[i]);
        /* and SQLite's files beside a database, or the rmdir below fails */
        static const char *const side[] = {"-wal", "-shm", "-journal"};
        for (int k = 0; k < 3; k++) {
            char q[1100];
            snprintf(q, sizeof q, "%s%s", made[i], side[k]);
            unlink(q);
        }
        free(made[i]);
    }
    nmade = 0;
    if (dir[0]) rmdir(dir);
    dir[0] = 0;
}

int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p == '\n' || !p[1]) n++;
    return n;
}

/* The one fork and exec of the tests: argv[0] with argv, stdout and
 * stderr into the files out and err (NULL: /dev/null). */
static pid_t spawn(const char *const *argv, const char *out, const char *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0) _exit(126);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

int run_wait(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t run_dse_start(const char *const *prefix, const char *out, const char *err, const char *const *args)
{
    const char *argv[64];
    int n = 0;
    for (const char *const *p = prefix; p && *p && n < 62; p++) argv[n++] = *p;
    argv[n++] = DSE_BIN;
    for (; *args && n < 63; args++) argv[n++] = *args;
    argv[n] = NULL;
    return spawn(argv, out, err);
}

/* Run argv, stdout and stderr into scratch files, then read them. */
static int run_argv(run_result *r, const char *const *argv)
{
    char *out = scratch_path("run.stdout"), *err = scratch_path("run.stderr");
    int status = run_wait(spawn(argv, out, err));
    if (r) {
        r->status = status;
        r->out = tfile_read(out, NULL);
        r->err = tfile_read(err, NULL);
        if (!r->out) r->out = strdup("");
        if (!r->err) r->err = strdup("");
    }
    free(out);
    free(err);
    return status;
}

int run_dse(run_result *r, const char *const *args)
{
    const char *argv[64];
    int k = 0;
    argv[k++] = DSE_BIN;
    for (int i = 0; args[i] && k < 63; i++) argv[k++] = args[i];
    argv[k] = NULL;
    return run_argv(r, argv);
}

int run_sh(run_result *r, const char *cmdline)
{
    const char *argv[] = {"/bin/sh", "-c", cmdline, NULL};
    return run_argv(r, argv);
}

int run_shf(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return run_sh(NULL, cmd);
}

void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int run_sh_err(const char *cmdline, char *errbuf, size_t errlen)
{
    run_result r;
    int st = run_sh(&r, cmdline);
    if (errbuf) snprintf(errbuf, errlen, "%s", r.err);
    run_free(&r);
    return st;
}

int write_local_platform(const char *path, int n, int gpu_last)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"format\":\"dse-platform\",\"version\":1,\"name\":\"local-test\",\"devices\":[");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s{\"name\":\"r%d\",\"board\":\"localhost\",\"kind\":\"%s\",\"freq_mhz\":2000,"
                   "\"cores\":1,\"memory_mb\":4096,\"idle_w\":1,\"busy_w\":2}",
                i ? "," : "", i, gpu_last && i == n - 1 ? "gpu" : "cpu");
    fprintf(f, "],\"links\":{\"same_board\":{\"latency_us\":2,\"bandwidth_mbs\":4000}}}\n");
    return fclose(f) ? -1 : 0;
}
