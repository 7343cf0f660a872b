/* files.c -- inputs read whole and remembered, outputs written whole or not
 * at all (base.h, "files"; the rules users see: docs/exit-codes.md and
 * docs/security.md).
 *
 * Invariants:
 *  - An input is read only when it is a regular file of at most the
 *    caller's limit, decided before a byte is read (/dev/zero, a FIFO or a
 *    10 GB file is refused at once).  Every input file's identity (device,
 *    inode) is remembered for the life of the process.
 *  - An output is written under a temporary name in its own folder and
 *    renamed over its path only after every write, the flush, fsync and
 *    close succeeded; an output set is renamed into place all together
 *    (a rename that fails puts back what the earlier ones replaced).  No
 *    output ever replaces a file the process read (same device and inode,
 *    whatever the path: symlinks, hard links, /proc/self/fd), a folder, a
 *    device or another output of the same set.
 *
 * The one piece of state in base/: the list of input identities, guarded
 * by a mutex (readers may run on several threads).
 */
#define _GNU_SOURCE /* fopencookie: a stream that keeps its first write error */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- inputs remembered ---- */

typedef struct {
    dev_t dev;
    ino_t ino;
    char *path; /* as the process named it: messages, and the staleness check */
} ident;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static ident *g_in;
static int g_nin, g_capin;

static void note_stat(const struct stat *st, const char *path)
{
    pthread_mutex_lock(&g_lock);
    int known = -1;
    for (int i = 0; i < g_nin && known < 0; i++)
        if (g_in[i].dev == st->st_dev && g_in[i].ino == st->st_ino) known = i;
    if (known < 0 && g_nin == g_capin) {
        int cap = g_capin ? 2 * g_capin : 32;
        ident *n = realloc(g_in, (size_t)cap * sizeof *n);
        if (n) g_in = n, g_capin = cap;
    }
    char *p = strdup(path);
    if (known >= 0 && p) { /* the latest name of the file */
        free(g_in[known].path);
        g_in[known].path = p;
    } else if (known < 0 && g_nin < g_capin && p) {
        ident *e = &g_in[g_nin++];
        e->dev = st->st_dev;
        e->ino = st->st_ino;
        e->path = p;
    } else {
        free(p);
    }
    pthread_mutex_unlock(&g_lock);
}

void base_input_note(const char *path)
{
    struct stat st;
    if (path && stat(path, &st) == 0) note_stat(&st, path);
}

void base_inputs_forget(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nin; i++) free(g_in[i].path);
    g_nin = 0;
    pthread_mutex_unlock(&g_lock);
}

/* The input path's file is, or "" (st: the candidate's stat).  An input
 * whose name no longer leads to the file it read (deleted or replaced
 * since) is not matched: its inode may have been reused by another file. */
static int input_of(const struct stat *st, char *name, size_t len)
{
    int hit = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nin && !hit; i++) {
        struct stat now;
        if (g_in[i].dev == st->st_dev && g_in[i].ino == st->st_ino &&
            stat(g_in[i].path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino) {
            char pb[BASE_PATHSHOW + 1];
            snprintf(name, len, "%s", base_path(g_in[i].path, pb));
            hit = 1;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return hit;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : S_ISFIFO(m) ? "a pipe"
           : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

FILE *base_open_input(const char *path, long long max, long long *size, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
    struct stat st;
    if (fd < 0) {
        int e = errno; /* callers tell a missing file (ENOENT) from others */
        base_seterr(err, "%s: cannot open: %s", base_path(path, pb), strerror(e));
        errno = e;
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        base_seterr(err, "%s: is %s, not a file dse can read", base_path(path, pb),
                    kind_of(st.st_mode));
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    if (max >= 0 && st.st_size > max) {
        base_seterr(err, "%s: %lld bytes, more than the %lld this reader accepts", base_path(path, pb),
                    (long long)st.st_size, max);
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        base_seterr(err, "%s: cannot open: %s", base_path(path, pb), strerror(errno));
        close(fd);
        return NULL;
    }
    note_stat(&st, path);
    if (size) *size = (long long)st.st_size;
    return f;
}

char *base_read_file(const char *path, long long max, size_t *len, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    long long size;
    FILE *f = base_open_input(path, max, &size, err);
    if (!f) return NULL;
    /* Read what stat promised and up to the limit beyond: a file that grew
     * meanwhile is refused past the limit, never read without end. */
    size_t cap = (size_t)size + 2, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        base_seterr(err, "%s: out of memory for %lld bytes", base_path(path, pb), size);
        fclose(f);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (max >= 0 && (long long)n > max) break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || (max >= 0 && (long long)n > max)) {
        base_seterr(err, bad ? "%s: read error" : "%s: grew beyond the size this reader accepts",
                    base_path(path, pb));
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* ---- outputs ---- */

/* The folder of path (or "."), into buf. */
static void folder_of(const char *path, char *buf, size_t len)
{
    const char *s = strrchr(path, '/');
    if (!s) snprintf(buf, len, ".");
    else if (s == path) snprintf(buf, len, "/");
    else snprintf(buf, len, "%.*s", (int)(s - path), path);
}

int base_out_check(const char *path, char *err)
{
    char pb[BASE_PATHSHOW + 1], dir[PATH_MAX], in[BASE_PATHSHOW + 1];
    struct stat st;
    if (!path || !path[0]) {
        base_seterr(err, "an output path is empty");
        return -1;
    }
    size_t l = strlen(path);
    if (path[l - 1] == '/') {
        base_seterr(err, "%s: names a folder, not a file", base_path(path, pb));
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            base_seterr(err, "%s: is %s; dse writes only regular files", base_path(path, pb),
                        kind_of(st.st_mode));
            return -1;
        }
        if (input_of(&st, in, sizeof in)) {
            base_seterr(err, "%s: is the same file as the input %s; refusing to overwrite an input",
                        base_path(path, pb), in);
            return -1;
        }
    } else if (errno != ENOENT) {
        base_seterr(err, "%s: %s", base_path(path, pb), strerror(errno));
        return -1;
    }
    if (l >= sizeof dir) {
        base_seterr(err, "%s: path too long", base_path(path, pb));
        return -1;
    }
    folder_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        base_seterr(err, "%s: folder %s %s", base_path(path, pb), base_path(dir, in),
                    errno == ENOENT ? "does not exist" : "is not a folder");
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        base_seterr(err, "%s: folder %s is not writable: %s", base_path(path, pb),
                    base_path(dir, in), strerror(errno));
        return -1;
    }
    return 0;
}

int base_out_dir(const char *dir, int *created, char *err)
{
    char pb[BASE_PATHSHOW + 1], pb2[BASE_PATHSHOW + 1], parent[PATH_MAX];
    struct stat st;
    *created = 0;
    if (!dir || !dir[0]) {
        base_seterr(err, "an output folder is empty");
        return -1;
    }
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || strlen(dir) >= sizeof parent) {
            base_seterr(err, "%s: %s", base_path(dir, pb), strerror(errno));
            return -1;
        }
        /* Created only inside an existing folder (a typo in a parent is
         * not silently made into a tree). */
        snprintf(parent, sizeof parent, "%s", dir);
        size_t l = strlen(parent);
        while (l > 1 && parent[l - 1] == '/') parent[--l] = 0;
        char p2[PATH_MAX];
        folder_of(parent, p2, sizeof p2);
        if (stat(p2, &st) != 0 || !S_ISDIR(st.st_mode)) {
            base_seterr(err, "%s: folder %s %s", base_path(dir, pb), base_path(p2, pb2),
                        errno == ENOENT ? "does not exist" : "is not a folder");
            return -1;
        }
        if (mkdir(dir, 0777) != 0) {
            base_seterr(err, "%s: cannot create the folder: %s", base_path(dir, pb), strerror(errno));
            return -1;
        }
        *created = 1;
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        base_seterr(err, "%s: is %s, not a folder", base_path(dir, pb),
                    S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode));
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        base_seterr(err, "%s: cannot write in this folder: %s", base_path(dir, pb), strerror(errno));
        return -1;
    }
    return 0;
}

/* One output: its final path, its temporary beside it, the stream and the
 * first error of any write to it. */
typedef struct {
    char *path, *tmp, *backup;
    int fd, werr, done;
    FILE *f;
    mode_t mode; /* an existing target's permissions (0: a new file) */
} outfile;

struct base_outset {
    outfile *o;
    int n, cap, committed;
};

base_outset *base_outset_new(void) { return calloc(1, sizeof(base_outset)); }

static ssize_t ck_write(void *c, const char *buf, size_t len)
{
    outfile *o = c;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(o->fd, buf + done, len - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (!o->werr) o->werr = k < 0 ? errno : ENOSPC;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
    }
    return (ssize_t)done;
}

static int ck_close(void *c)
{
    (void)c; /* the descriptor is closed by commit, after fsync */
    return 0;
}

/* Same folder and name as an earlier member (both need not exist yet). */
static int same_target(const char *a, const char *b)
{
    if (!strcmp(a, b)) return 1;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char da[PATH_MAX], db[PATH_MAX];
    folder_of(a, da, sizeof da);
    folder_of(b, db, sizeof db);
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    na = na ? na + 1 : a, nb = nb ? nb + 1 : b;
    return strcmp(na, nb) == 0 && stat(da, &sa) == 0 && stat(db, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int base_out_check_all(const char *const *paths, int n, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    for (int i = 0; i < n; i++) {
        if (!paths[i]) continue;
        if (base_out_check(paths[i], err)) return -1;
        for (int j = 0; j < i; j++)
            if (paths[j] && same_target(paths[j], paths[i])) {
                base_seterr(err, "%s: is also another output of this command", base_path(paths[i], pb));
                return -1;
            }
    }
    return 0;
}

FILE *base_outset_add(base_outset *s, const char *path, char *err)
{
    static unsigned counter;
    char pb[BASE_PATHSHOW + 1];
    if (base_out_check(path, err)) return NULL;
    for (int i = 0; i < s->n; i++)
        if (same_target(s->o[i].path, path)) {
            base_seterr(err, "%s: is also another output of this command", base_path(path, pb));
            return NULL;
        }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        outfile *n = realloc(s->o, (size_t)cap * sizeof *n);
        if (!n) goto oom;
        s->o = n, s->cap = cap;
    }
    outfile *o = &s->o[s->n];
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->mode = 0;
    struct stat st;
    if (stat(path, &st) == 0) o->mode = st.st_mode & 07777;
    size_t pl = strlen(path);
    if (!(o->path = base_strdup(path)) || !(o->tmp = malloc(pl + 64))) goto oom_o;
    char dir[PATH_MAX];
    folder_of(path, dir, sizeof dir);
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    for (int tries = 0; o->fd < 0 && tries < 100; tries++) {
        /* Hidden, in the target's folder (rename is atomic only within a
         * file system), named after the target and this process. */
        snprintf(o->tmp, pl + 64, "%s/.%.*s.dse-tmp.%ld.%u", dir, 100, name, (long)getpid(), counter++);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd < 0 && errno != EEXIST) break;
    }
    if (o->fd < 0) {
        base_seterr(err, "%s: cannot write: %s", base_path(path, pb), strerror(errno));
        free(o->path), free(o->tmp);
        return NULL;
    }
    if (o->mode) fchmod(o->fd, o->mode); /* an existing target keeps its permissions */
    cookie_io_functions_t io = {NULL, ck_write, NULL, ck_close};
    s->n++; /* from here on commit or free cleans it up */
    if (!(o->f = fopencookie(o, "w", io))) goto oom;
    return o->f;
oom_o:
    free(o->path), free(o->tmp);
oom:
    base_seterr(err, "%s: out of memory", base_path(path, pb));
    return NULL;
}

const char *base_outset_tmp(const base_outset *s, const FILE *f)
{
    for (int i = 0; i < s->n; i++)
        if (s->o[i].f == f) return s->o[i].tmp;
    return NULL;
}

/* Close every stream and descriptor; the first error into err. */
static int close_all(base_outset *s, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    int rc = 0;
    for (int i = 0; i < s->n; i++) {
        outfile *o = &s->o[i];
        if (o->f) {
            if (fclose(o->f) != 0 && !o->werr) o->werr = errno ? errno : EIO;
            o->f = NULL;
        }
        if (o->fd >= 0) {
            if (!o->werr && fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS) o->werr = errno;
            if (close(o->fd) != 0 && !o->werr) o->werr = errno;
            o->fd = -1;
        }
        if (o->werr && !rc) {
            base_seterr(err, "%s: cannot write: %s", base_path(o->path, pb), strerror(o->werr));
            rc = -1;
        }
    }
    return rc;
}

int base_outset_commit(base_outset *s, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    int rc = close_all(s, err);
    /* Everything is written: check the targets again (a folder or an
     * input may have appeared since) before replacing any. */
    for (int i = 0; i < s->n && !rc; i++)
        if (base_out_check(s->o[i].path, err)) rc = -1;
    /* Keep what each existing target held until all are in place. */
    for (int i = 0; i < s->n && !rc; i++) {
        outfile *o = &s->o[i];
        struct stat st;
        if (lstat(o->path, &st) != 0) continue;
        size_t bl = strlen(o->tmp) + 8;
        if (!(o->backup = malloc(bl))) {
            base_seterr(err, "out of memory");
            rc = -1;
            break;
        }
        snprintf(o->backup, bl, "%s.old", o->tmp);
        if (link(o->path, o->backup) != 0) { /* no hard links here: no way back for this one */
            free(o->backup);
            o->backup = NULL;
        }
    }
    int moved = 0;
    for (; moved < s->n && !rc; moved++)
        if (rename(s->o[moved].tmp, s->o[moved].path) != 0) {
            base_seterr(err, "%s: cannot move into place: %s", base_path(s->o[moved].path, pb),
                        strerror(errno));
            rc = -1;
            break;
        }
    if (rc) { /* undo the renames done */
        for (int i = 0; i < moved; i++) {
            outfile *o = &s->o[i];
            if (o->backup) rename(o->backup, o->path);
            else unlink(o->path);
        }
    } else {
        for (int i = 0; i < s->n; i++) s->o[i].done = 1;
        s->committed = 1;
    }
    for (int i = 0; i < s->n; i++) {
        outfile *o = &s->o[i];
        if (o->backup) unlink(o->backup);
        free(o->backup);
        o->backup = NULL;
        if (!o->done) unlink(o->tmp);
    }
    return rc;
}

void base_outset_free(base_outset *s)
{
    if (!s) return;
    char err[BASE_ERRLEN];
    close_all(s, err);
    for (int i = 0; i < s->n; i++) {
        if (!s->o[i].done) unlink(s->o[i].tmp);
        free(s->o[i].path);
        free(s->o[i].tmp);
        free(s->o[i].backup);
    }
    free(s->o);
    free(s);
}

int base_write_file(const char *path, const void *data, size_t len, char *err)
{
    base_outset *s = base_outset_new();
    if (!s) {
        base_seterr(err, "out of memory");
        return -1;
    }
    FILE *f = base_outset_add(s, path, err);
    int rc = -1;
    if (f) {
        if (len) fwrite(data, 1, len, f); /* a failed write is kept by the stream: commit reports it */
        rc = base_outset_commit(s, err);
    }
    base_outset_free(s);
    return rc;
}
