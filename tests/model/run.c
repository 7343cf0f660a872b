/* run.c -- see run.h.  Output is collected through files in the scratch
 * folder rather than pipes, so a chatty child can never block. */
#include "run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];
static char *made[256];
static int nmade;

static const char *scratch_dir(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/dse-test-model-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
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

int run_dse(run_result *r, const char *const *args)
{
    char *out = scratch_path("run.stdout"), *err = scratch_path("run.stderr");
    const char *argv[64];
    int k = 0;
    argv[k++] = DSE_BIN;
    for (int i = 0; args[i] && k < 63; i++) argv[k++] = args[i];
    argv[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fo < 0 || fe < 0) _exit(127);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(DSE_BIN, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = tfile_read(out, NULL);
    r->err = tfile_read(err, NULL);
    if (!r->out) r->out = strdup("");
    if (!r->err) r->err = strdup("");
    free(out);
    free(err);
    return r->status;
}

void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
