/* board.c -- where ranks run and how mpirun is called: this machine's
 * boards, the placement hostfile, mpirun's command line and environment,
 * threads per rank, and a rank's peak memory.
 * Invariant: rank r always runs on device r's board (rt_placement_file). */
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t rt_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int64_t kb = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", (long long *)&kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* `local-*` platforms: ranks that share this machine's cores, one each. */
static int local_platform(const platform *pl) { return strncmp(pl->name, "local", 5) == 0; }

int rt_threads(const platform *pl, int dev)
{
    return local_platform(pl) || pl->dev[dev].cores < 1 ? 1 : pl->dev[dev].cores;
}

/* ---- launching ---- */

void rt_mpirun_env(void)
{
    /* Open MPI refuses root unless both variables are set; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    /* Quiet the "no high-performance network" notices of containers. */
    setenv("OMPI_MCA_btl_base_warn_component_unused", "0", 0);
}

int rt_board_is_here(const char *board) { return platform_board_is_here(board); }

/* An emulated platform's launch settings, written by scripts/emulate-boards
 * up as "key value" lines, become OMPI_MCA_key variables that mpirun (a
 * child) reads: the agent that enters a board's namespace, direct routing,
 * TCP on the bridge's subnet. */
static int emulated_env(const platform *pl, char *err)
{
    char path[512], line[600];
    const char *root = getenv("DSE_EMU_DIR");
    snprintf(path, sizeof path, "%s/%s/mca", root && root[0] ? root : "/run/dse-emu", pl->name);
    FILE *f = fopen(path, "r");
    if (!f) {
        base_seterr(err, "platform %s is emulated but its boards are not up (%.300s: %s): run "
                    "scripts/emulate-boards up on its platform file", pl->name, path,
                    strerror(errno));
        return -1;
    }
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char key[128], val[460], var[160];
        if (sscanf(line, "%127s %459[^\n]", key, val) != 2) continue;
        snprintf(var, sizeof var, "OMPI_MCA_%s", key);
        setenv(var, val, 1);
        n++;
    }
    fclose(f);
    if (!n) {
        base_seterr(err, "%.300s: no launch settings (run scripts/emulate-boards up again)", path);
        return -1;
    }
    return 0;
}

int rt_placement_file(const platform *pl, const char *dir, char *path, size_t len, char *remote,
                      size_t rlen, char *err)
{
    char host[256];
    size_t k = 0;
    path[0] = remote[0] = 0;
    if (pl->emulated && emulated_env(pl, err)) return -1;
    for (int d = 0; d < pl->ndev; d++) {
        const char *b = pl->dev[d].board;
        int seen = rt_board_is_here(b);
        for (int e = 0; e < d && !seen; e++) seen = !strcmp(pl->dev[e].board, b);
        if (!seen && k < rlen)
            k += (size_t)snprintf(remote + k, rlen - k, "%s%s", k ? ", " : "", b);
    }
    if (!remote[0] && local_platform(pl)) return 0;
    snprintf(path, len, "%s/hosts", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        base_seterr(err, "%.300s: cannot write: %s", path, strerror(errno));
        path[0] = 0;
        return -1;
    }
    for (int d = 0; d < pl->ndev; d++)
        fprintf(f, "%s\n", platform_board_host(pl->dev[d].board, host, sizeof host));
    if (fclose(f)) {
        base_seterr(err, "%.300s: cannot write: %s", path, strerror(errno));
        remove(path);
        path[0] = 0;
        return -1;
    }
    return 0;
}

int rt_mpirun_argv(int np, const char *hostfile, const char *seqfile, const char *const *args,
                   int nargs, const char **argv_out)
{
    static char npbuf[16];
    int k = 0;
    snprintf(npbuf, sizeof npbuf, "%d", np);
    argv_out[k++] = "mpirun";
    argv_out[k++] = "-np";
    argv_out[k++] = npbuf;
    argv_out[k++] = "--oversubscribe";
    if (hostfile) {
        argv_out[k++] = "--hostfile";
        argv_out[k++] = hostfile;
    }
    if (seqfile) {
        argv_out[k++] = "--hostfile";
        argv_out[k++] = seqfile;
        argv_out[k++] = "--map-by";
        argv_out[k++] = "seq";
        argv_out[k++] = "--bind-to";
        argv_out[k++] = "none";
    }
    for (int i = 0; i < nargs; i++) argv_out[k++] = args[i];
    argv_out[k] = NULL;
    return k;
}
