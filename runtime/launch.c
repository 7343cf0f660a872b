/* launch.c -- rt_run_job and reading what a job left: fork + exec in a new process group, non-blocking
 * pipes drained while polling for exit, deadline and stop flag.
 *
 * Invariant: the whole process group is SIGKILLed before returning (a
 * no-op when it already ended), so no rank of a failed or abandoned job
 * outlives the call.
 */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STDERR_KEEP (256 * 1024) /* stderr beyond this is dropped */

typedef struct {
    char *p;
    size_t len, cap, limit;
} sbuf;

/* Read everything available from fd into b (past b->limit: read and drop). */
static void drain(int fd, sbuf *b)
{
    char tmp[65536];
    for (;;) {
        ssize_t k = read(fd, tmp, sizeof tmp);
        if (k <= 0) return;
        size_t take = (size_t)k;
        if (b->limit && b->len + take > b->limit) take = b->len < b->limit ? b->limit - b->len : 0;
        if (b->len + take + 1 > b->cap) {
            size_t nc = b->cap ? b->cap : 65536;
            while (nc < b->len + take + 1) nc *= 2;
            char *np = realloc(b->p, nc);
            if (!np) return;
            b->p = np;
            b->cap = nc;
        }
        memcpy(b->p + b->len, tmp, take);
        b->len += take;
        b->p[b->len] = 0;
    }
}

static void pick_line(const char *text, const char *prefer, char *errline, size_t errlen)
{
    const char *line = prefer && prefer[0] ? strstr(text, prefer) : NULL;
    if (line) {
        while (line > text && line[-1] != '\n') line--; /* whole line */
    } else {
        line = text;
        while (*line == '\n' || *line == ' ') line++;
    }
    size_t l = strcspn(line, "\n");
    if (errlen == 0) return;
    if (l >= errlen) l = errlen - 1;
    memcpy(errline, line, l);
    errline[l] = 0;
}

int rt_run_job(const char *const *argv, double timeout_s, volatile sig_atomic_t *stop,
               const char *prefer, char **out, char **errtext, char *errline, size_t errlen)
{
    sbuf so = {NULL, 0, 0, 0}, se = {NULL, 0, 0, STDERR_KEEP};
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc;
    if (errlen) errline[0] = 0;
    if (out) *out = NULL;
    if (pipe(po) || pipe(pe)) {
        snprintf(errline, errlen, "cannot create pipes: %s", strerror(errno));
        rc = RT_JOB_NOSTART;
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(errline, errlen, "cannot fork: %s", strerror(errno));
        rc = RT_JOB_NOSTART;
        goto done;
    }
    if (pid == 0) {
        setpgid(0, 0); /* own group: a kill reaches mpirun and every rank */
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        if (out) dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execvp(argv[0], (char *const *)argv);
        /* The child's report to the parent, through the stderr pipe. */
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with the child's own call */
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    double t0 = base_now();
    int status = 0, killed = 0;
    for (;;) {
        drain(po[0], &so);
        drain(pe[0], &se);
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) break;
        if (!killed && stop && *stop) {
            kill(-pid, SIGKILL);
            killed = RT_JOB_INTERRUPTED;
        } else if (!killed && timeout_s > 0 && base_now() - t0 > timeout_s) {
            kill(-pid, SIGKILL);
            killed = RT_JOB_TIMEOUT;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL); /* stray ranks of a failed job */
    drain(po[0], &so);
    drain(pe[0], &se);
    if (killed) rc = killed;
    else if (WIFEXITED(status)) rc = WEXITSTATUS(status);
    else rc = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    pick_line(se.p ? se.p : "", prefer, errline, errlen);
done:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0) close(po[i]);
        if (pe[i] >= 0) close(pe[i]);
    }
    if (errtext) *errtext = se.p ? se.p : calloc(1, 1);
    else free(se.p);
    if (out) *out = so.p ? so.p : calloc(1, 1);
    else free(so.p);
    return rc;
}

int rt_dead_rank(const char *text, char *how, size_t n)
{
    /* Open MPI 4: "mpirun noticed that process rank 1 with PID 0 on node
     * vm exited on signal 6 (Aborted)." */
    const char *p = text ? strstr(text, "process rank ") : NULL;
    int rank;
    if (!p || sscanf(p, "process rank %d", &rank) != 1) return -1;
    const char *e = strstr(p, "exited on ");
    size_t l = e ? strcspn(e + 10, ".\n") : 0;
    snprintf(how, n, "%.*s", (int)l, e ? e + 10 : "");
    if (!e) snprintf(how, n, "died");
    return rank;
}

int rt_stalled_rank(const char *text, int ndev, int *waiters)
{
    int *cnt = calloc(ndev > 0 ? (size_t)ndev : 1, 2 * sizeof *cnt), *said = cnt + (ndev > 0 ? ndev : 0);
    int best = -1;
    if (waiters) *waiters = 0;
    if (!cnt) return -1;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *d = strstr(l, "dse exec: rank "), *nl = strchr(l, '\n');
        int r, p;
        if (!d || (nl && d > nl) || sscanf(d, "dse exec: rank %d", &r) != 1) continue;
        const char *t = strstr(d, "timed out"), *w = t ? strstr(t, "waiting for rank ") : NULL;
        if (!t || (nl && t > nl)) continue;
        if (r >= 0 && r < ndev) said[r] = 1;
        if (w && (!nl || w < nl) && sscanf(w, "waiting for rank %d", &p) == 1 && p >= 0 && p < ndev)
            cnt[p]++;
    }
    int nsaid = 0, silent = -1;
    for (int r = 0; r < ndev; r++) {
        nsaid += said[r];
        if (!said[r]) silent = r;
        if (cnt[r] && (best < 0 || cnt[r] > cnt[best] || (cnt[r] == cnt[best] && !said[r] && said[best])))
            best = r;
    }
    /* Nobody waited for one rank in particular (a collective, a barrier),
     * but every rank except one reported: that one. */
    if (best < 0 && nsaid == ndev - 1 && ndev > 1) {
        free(cnt);
        if (waiters) *waiters = nsaid;
        return silent;
    }
    if (waiters) *waiters = best >= 0 ? cnt[best] : 0;
    free(cnt);
    return best;
}

const char *rt_self_exe(void)
{
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return "dse";
    self[len] = 0;
    return self;
}
