/* fuzz_cli.c -- the command line as a fuzz target (issue 15): a seeded
 * mutation loop over dse's argv and option values.
 *
 *   fuzz_cli DSE_BIN SOURCE_DIR WORKDIR SECONDS [SEED]
 *
 * Starts from valid command lines of every command that works on files
 * (zoo, net, platform, space, plan, eval, solve, run, resume, list, front,
 * export, exhaust, plot; not exec, mpirun, calibrate or validate, which
 * launch MPI jobs), mutates their arguments (hostile numbers, control
 * bytes, long strings, shell and gnuplot metacharacters, paths that are
 * inputs, folders, devices or FIFOs, options dropped, repeated, swapped or
 * added) and runs the real program on each: execv with the argv as data,
 * never a shell, in a scratch folder of files copied afresh each time, as
 * the unprivileged user nobody when started as root (a mutated absolute
 * output path cannot reach the system), with a deadline.  What each run
 * must keep (docs/exit-codes.md, docs/security.md):
 *   - it ends by itself with exit 0, 1 or 2: no signal, no sanitizer
 *     report, no hang (SECONDS_PER_RUN; run's seeds keep --time-budget);
 *   - a failure says so on stderr, its first line "dse ..." or "usage:";
 *   - stdout and stderr carry no raw control bytes (C0 but \n and \t, DEL,
 *     C1): names and paths reach the terminal inert;
 *   - nothing from the data runs: the canary file that the injected shell
 *     and gnuplot commands would create never appears;
 *   - no temporary (".dse-tmp.") is left behind, and a refusal (exit 2)
 *     leaves the scratch folder as it was (names and sizes; SQLite's -wal,
 *     -shm and -journal side files aside).
 * A mutated command line whose outcome (command, exit code, the shape of
 * the first stderr line) is new joins the corpus: the distinct outcomes
 * are this loop's coverage figure.  A finding is written to
 * WORKDIR/finding-N.txt (argv in C escapes, why, stderr); exit 1 if any.
 * The same SEED gives the same sequence of command lines.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXARGS 48
#define MAXARG 6000      /* bytes of one argument */
#define SECONDS_PER_RUN 60 /* a run that takes longer is a hang */
#define MAXCORPUS 4000
#define MAXSIGS 20000

typedef struct {
    int n;
    char *a[MAXARGS]; /* a[0] is the command; dse's own argv[0] is added at run time */
} cmdline;

static const char *g_bin, *g_src, *g_work;
static char g_base[4096], g_scratch[4096], g_io[4096], g_canary[4096];
static uint64_t g_rng;
static uid_t g_uid = (uid_t)-1;
static gid_t g_gid = (gid_t)-1;

static uint64_t rnd(void) /* xorshift64*: the whole sequence follows from the seed */
{
    g_rng ^= g_rng >> 12, g_rng ^= g_rng << 25, g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ULL;
}
static int rn(int n) { return n > 0 ? (int)(rnd() % (uint64_t)n) : 0; }

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz_cli: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static char *dup_s(const char *s)
{
    char *t = strdup(s);
    if (!t) die("out of memory");
    return t;
}

/* ---- the values a mutation draws from ---- */

static const char *const numbers[] = {
    "0", "-1", "1", "2", "3", "4", "-0", "00", "007", "1e999", "1e-999", "nan", "inf", "-inf",
    "0x10", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "4294967297",
    "9223372036854775807", "9223372036854775808", "18446744073709551616", "1.5", "1,2",
    "0,4294967297", "4,20", "1,0", " 5", "5 ", "5x", "", "+3", "1e3", "1e8", "-1e8",
    "99999999999999999999", "0.0000001", "1000000", "65", "64", "1025"};

static const char *const paths[] = {
    "toy6", "toy6.json", "toy6.onnx", "plat.json", "local-2", "local-4", "jetson-nx-8-cpu",
    "emu-3-mixed", "map.json", "c.db", "coeffs.json", "out", "out.json", "ex", ".", "..",
    "../..", "fifo", "/dev/zero", "/dev/null", "/dev/full", "/proc/self/mem", "/proc/self/cwd/toy6.json",
    "missing.json", "sub/", "sub/x.json", "no/such/dir/x", "c.db-journal", "toy6.json/x", "-",
    "--", "ad"};

/* Canary commands are filled in with g_canary at start. */
static char *inject[6];
static const char *const inject_fmt[6] = {
    "x\n!touch %s\n#", "$(touch %s)", "`touch %s`", "a;touch %s", "\"; system(\"touch %s\"); \"",
    "'\n!touch %s\n"};

static const char *const words[] = {
    "hybrid", "naive", "vertical", "conv", "fc", "conv,fc", "fc,conv,fc", "greedy", "single",
    "elim", "cluster", "subgraph", "single,greedy", "best-latency", "best-energy", "best-memory",
    "best-", "zdt1", "d0", "cpu0", "\x1b[31mred", "\x1b]0;title\x07", "\xc2\x9b" "31m", "\x7f",
    "\xff\xfe", "\xc3\x28", "%s%s%n", "%99999999d", "\\", "\"", "'", "*", "?", "~", "=",
    "--help", "-h", "help", "1,2,3", ",", ",,", "a b"};

static const char *const options[] = {
    "--pop", "--gens", "--db", "-o", "--name", "--seed", "--threads", "--bench", "--timeout",
    "--json", "--csv", "--help", "--point", "--campaign", "--mapping", "--network",
    "--platform", "--coeffs", "--single", "--splits", "--split-kinds", "--chromosome",
    "--max-points", "--trace", "--weights", "--init", "--method", "--beam", "--devices",
    "--check", "--quiet", "--time-budget", "-h", "--", "-", "--pop=4", "--db=c.db", "-x",
    "--unknown", "--autodice"};

static const char *const interesting_bytes[] = {
    "\x01", "\n", "\r", "\t", "\x1b", "\x7f", "\xc2\x9b", "\xc2\x85", "\xff", "%", "\\", "\"", "'",
    "$", "`", "!", "/", "-", " ", ",", ".", "0", "9", "e", ";", "|", "&", "*", "\xe2\x80\xae"};

#define N(a) ((int)(sizeof(a) / sizeof *(a)))

/* ---- seeds ---- */

static const char *const seeds[][24] = {
    {"zoo", "list"},
    {"zoo", "show", "toy6", "--json"},
    {"net", "show", "toy6.json"},
    {"net", "show", "toy6.onnx", "--json"},
    {"net", "import", "toy6.onnx", "-o", "n2.json"},
    {"net", "import", "toy6.onnx", "-o", "n3.json", "--weights", "n3.bin"},
    {"net", "export", "toy6.json", "-o", "t.onnx"},
    {"platform", "show", "local-2", "--json"},
    {"platform", "show", "plat.json"},
    {"space", "--network", "toy6", "--devices", "2", "--chromosome", "hybrid", "--splits", "2"},
    {"plan", "--network", "toy6", "--platform", "local-2", "--mapping", "map.json", "--check"},
    {"plan", "--network", "toy6.json", "--platform", "plat.json", "--single", "0"},
    {"eval", "--network", "toy6.json", "--platform", "plat.json", "--mapping", "map.json",
     "--json", "--trace", "tr.json"},
    {"eval", "--network", "toy6", "--platform", "local-2", "--single", "1", "--coeffs",
     "coeffs.json"},
    {"solve", "--method", "greedy", "--network", "toy6", "--platform", "local-2", "-o", "s.json",
     "--json"},
    {"solve", "--method", "elim", "--network", "toy6.onnx", "--platform", "plat.json", "--beam",
     "4"},
    {"run", "--network", "toy6", "--platform", "local-2", "--chromosome", "hybrid", "--pop", "4",
     "--gens", "2", "--seed", "3", "--db", "c.db", "--name", "x", "--quiet"},
    {"run", "--network", "toy6.json", "--platform", "plat.json", "--chromosome", "vertical",
     "--pop", "6", "--gens", "1", "--init", "greedy", "--db", "r.db", "--threads", "2"},
    {"resume", "--campaign", "1", "--db", "c.db", "--quiet"},
    {"list", "--db", "c.db"},
    {"front", "--campaign", "1", "--db", "c.db", "--json"},
    {"front", "--campaign", "1", "--db", "c.db", "--csv"},
    {"export", "--campaign", "1", "--point", "best-latency", "-o", "ex", "--db", "c.db"},
    {"export", "--network", "toy6", "--platform", "local-2", "--mapping", "map.json", "-o",
     "ex2"},
    {"exhaust", "--network", "toy6", "--platform", "local-2", "--chromosome", "vertical",
     "--max-points", "1000", "--db", "c.db", "--quiet"},
    {"plot", "--campaign", "1", "--db", "c.db", "-o", "pl"},
    {"plot", "--campaign", "1", "--point", "0", "--db", "c.db", "-o", "pl2"},
};

/* Commands whose work a mutated number can make long: their command lines
 * always end with a time budget that no mutation removes. */
static int budgeted(const char *cmd) { return !strcmp(cmd, "run") || !strcmp(cmd, "resume"); }

/* ---- files ---- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    remove(p);
    return 0;
}
static void rm_tree(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void copy_file(const char *from, const char *to)
{
    int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (a < 0 || b < 0) die("copy %s -> %s: %s", from, to, strerror(errno));
    char buf[65536];
    ssize_t k;
    while ((k = read(a, buf, sizeof buf)) > 0)
        if (write(b, buf, (size_t)k) != k) die("copy %s: %s", to, strerror(errno));
    close(a), close(b);
}

static void own(const char *p)
{
    if (g_uid != (uid_t)-1 && lchown(p, g_uid, g_gid) != 0) die("chown %s: %s", p, strerror(errno));
}

static const char *const base_files[] = {"toy6.json", "toy6.onnx", "plat.json", "map.json",
                                         "c.db", "coeffs.json"};

/* The scratch folder afresh: the base files, a FIFO and a folder. */
static void reset_scratch(void)
{
    char a[8192], b[8192];
    rm_tree(g_scratch);
    if (mkdir(g_scratch, 0755)) die("mkdir %s: %s", g_scratch, strerror(errno));
    own(g_scratch);
    for (int i = 0; i < N(base_files); i++) {
        snprintf(a, sizeof a, "%s/%s", g_base, base_files[i]);
        snprintf(b, sizeof b, "%s/%s", g_scratch, base_files[i]);
        copy_file(a, b);
        own(b);
    }
    snprintf(b, sizeof b, "%s/fifo", g_scratch);
    if (mkfifo(b, 0644)) die("mkfifo: %s", strerror(errno));
    own(b);
    snprintf(b, sizeof b, "%s/sub", g_scratch);
    mkdir(b, 0755);
    own(b);
}

/* "name size" of every entry below dir, sorted, into a malloc'd text. */
typedef struct {
    char *s;
    size_t n, cap;
} sbuf;
static void sb_add(sbuf *b, const char *t)
{
    size_t l = strlen(t);
    if (b->n + l + 1 > b->cap) {
        b->cap = (b->n + l + 1) * 2;
        if (!(b->s = realloc(b->s, b->cap))) die("out of memory");
    }
    memcpy(b->s + b->n, t, l + 1);
    b->n += l;
}
static sbuf *g_list;
static int g_tmpleft;
static int list_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)flag, (void)f;
    char line[8300];
    if (strstr(p, ".dse-tmp.")) g_tmpleft = 1;
    /* SQLite's own side files: a read-only reader of a WAL database leaves
     * -wal and -shm that it may not remove; they are not dse's outputs. */
    size_t l = strlen(p);
    if ((l > 4 && (!strcmp(p + l - 4, "-wal") || !strcmp(p + l - 4, "-shm"))) ||
        (l > 8 && !strcmp(p + l - 8, "-journal")))
        return 0;
    snprintf(line, sizeof line, "%s %lld\n", p, S_ISREG(st->st_mode) ? (long long)st->st_size : -1LL);
    sb_add(g_list, line);
    return 0;
}
static char *listing(const char *dir, int *tmpleft)
{
    sbuf b = {0};
    g_list = &b, g_tmpleft = 0;
    sb_add(&b, "");
    nftw(dir, list_one, 16, FTW_PHYS);
    if (tmpleft) *tmpleft = g_tmpleft;
    return b.s;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    sbuf b = {0};
    sb_add(&b, "");
    if (!f) return b.s;
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf - 1, f)) > 0) {
        buf[k] = 0;
        for (size_t i = 0; i < k; i++)
            if (!buf[i]) buf[i] = '\x01'; /* a NUL byte is a control byte too */
        sb_add(&b, buf);
    }
    fclose(f);
    return b.s;
}

/* ---- running ---- */

typedef struct {
    int status;  /* exit code, 128 + signal, or -1 on timeout */
    char *out, *err;
    double secs;
} outcome;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run(const cmdline *c, outcome *o, const char *cwd)
{
    char out[8192], err[8192], home[8300];
    const char *argv[MAXARGS + 2];
    argv[0] = g_bin;
    for (int i = 0; i < c->n; i++) argv[i + 1] = c->a[i];
    argv[c->n + 1] = NULL;
    snprintf(out, sizeof out, "%s/stdout", g_io);
    snprintf(err, sizeof err, "%s/stderr", g_io);
    snprintf(home, sizeof home, "HOME=%s", cwd);
    char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home, "LC_ALL=C",
                   "ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:halt_on_error=1",
                   "UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1", NULL};
    fflush(NULL);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0); /* gnuplot and any other child die with it on a timeout */
        int fi = open("/dev/null", O_RDONLY);
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fi < 0 || fo < 0 || fe < 0) _exit(125);
        dup2(fi, 0), dup2(fo, 1), dup2(fe, 2);
        if (chdir(cwd)) _exit(125);
        /* Files grow to 64 MiB at most; past it a write fails (EFBIG), it
         * does not kill: dse must report it as any failed write. */
        struct rlimit fs = {64 << 20, 64 << 20};
        setrlimit(RLIMIT_FSIZE, &fs);
        signal(SIGXFSZ, SIG_IGN);
        if (g_uid != (uid_t)-1 && (setgroups(0, NULL) || setgid(g_gid) || setuid(g_uid))) _exit(125);
        execve(g_bin, (char *const *)argv, env);
        _exit(127);
    }
    int st = 0, done = 0;
    while (!done) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) done = 1;
        else if (r < 0 && errno != EINTR) die("waitpid: %s", strerror(errno));
        else if (now() - t0 > SECONDS_PER_RUN) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            o->status = -1;
            break;
        } else
            usleep(2000);
    }
    kill(-pid, SIGKILL); /* whatever it left running */
    o->secs = now() - t0;
    if (done) o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (o->status == 125 || o->status == 127) die("could not start %s in %s", g_bin, cwd);
    o->out = read_all(out);
    o->err = read_all(err);
}

/* ---- checks ---- */

static const char *raw_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ||
            (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return (const char *)p;
    return NULL;
}

/* Why the outcome breaks a promise, or NULL. */
static const char *verdict(const outcome *o, const char *before, const char *after, int tmpleft,
                           char *why, size_t n)
{
    if (o->status < 0) snprintf(why, n, "hang: still running after %d s", SECONDS_PER_RUN);
    else if (o->status >= 128) snprintf(why, n, "killed by signal %d", o->status - 128);
    else if (o->status > 2) snprintf(why, n, "exit %d (documented: 0, 1, 2)", o->status);
    else if (strstr(o->err, "Sanitizer") || strstr(o->err, "runtime error:"))
        snprintf(why, n, "sanitizer report");
    else if (access(g_canary, F_OK) == 0) snprintf(why, n, "code from the data ran: %.400s exists", g_canary);
    else if (o->status && strncmp(o->err, "dse", 3) && strncmp(o->err, "usage:", 6))
        snprintf(why, n, "exit %d without a \"dse ...\" line first on stderr", o->status);
    else if (raw_control(o->out))
        snprintf(why, n, "raw control byte 0x%02x on stdout", *(const unsigned char *)raw_control(o->out));
    else if (raw_control(o->err))
        snprintf(why, n, "raw control byte 0x%02x on stderr", *(const unsigned char *)raw_control(o->err));
    else if (tmpleft) snprintf(why, n, "a temporary file (.dse-tmp.) was left behind");
    else if (o->status == 2 && strcmp(before, after))
        snprintf(why, n, "refused (exit 2) but the folder changed");
    else return NULL;
    return why;
}

/* ---- the corpus and its outcomes ---- */

static cmdline corpus[MAXCORPUS];
static int ncorpus;
static uint64_t sigs[MAXSIGS];
static int nsigs;

static void cl_free(cmdline *c)
{
    for (int i = 0; i < c->n; i++) free(c->a[i]);
    c->n = 0;
}
static void cl_copy(cmdline *d, const cmdline *s)
{
    d->n = s->n;
    for (int i = 0; i < s->n; i++) d->a[i] = dup_s(s->a[i]);
}

/* The outcome's shape: command, exit code, the first stderr line with
 * numbers, quoted text and leading paths squashed (so that one message
 * with other values is not a new outcome). */
static uint64_t signature(const cmdline *c, const outcome *o)
{
    uint64_t h = 1469598103934665603ULL;
#define MIX(ch) (h = (h ^ (unsigned char)(ch)) * 1099511628211ULL)
    for (const char *p = c->n ? c->a[0] : ""; *p; p++) MIX(*p);
    MIX('|'), MIX('0' + (o->status < 0 ? 9 : o->status % 10));
    const char *e = o->err, *end = strchr(e, '\n');
    if (!end) end = e + strlen(e);
    const char *colon = strstr(e, ": "); /* after "dse CMD: " */
    if (colon && colon < end) e = colon + 2;
    const char *p2 = strstr(e, ": "); /* a leading "PATH: " */
    if (p2 && p2 < end && !memchr(e, ' ', (size_t)(p2 - e))) e = p2 + 2;
    int quoted = 0, digit = 0;
    for (const char *p = e; p < end && p < e + 80; p++) {
        if (*p == '"') {
            quoted = !quoted;
            continue;
        }
        if (quoted) continue;
        if (*p >= '0' && *p <= '9') {
            if (!digit) MIX('#');
            digit = 1;
            continue;
        }
        digit = 0;
        MIX(*p);
    }
#undef MIX
    return h;
}
static int sig_new(uint64_t s)
{
    for (int i = 0; i < nsigs; i++)
        if (sigs[i] == s) return 0;
    if (nsigs < MAXSIGS) sigs[nsigs++] = s;
    return 1;
}

/* ---- mutations ---- */

static char *pick_value(void)
{
    switch (rn(5)) {
    case 0: return dup_s(numbers[rn(N(numbers))]);
    case 1: return dup_s(paths[rn(N(paths))]);
    case 2: return dup_s(inject[rn(N(inject))]);
    case 3: return dup_s(words[rn(N(words))]);
    default: {
        /* a number from a wide range, as text */
        char b[64];
        long long v = (long long)(rnd() >> rn(64));
        snprintf(b, sizeof b, "%lld", rn(2) ? v : -v);
        return dup_s(b);
    }
    }
}

static void set_arg(cmdline *c, int i, char *v)
{
    if (strlen(v) >= MAXARG) v[MAXARG - 1] = 0;
    free(c->a[i]);
    c->a[i] = v;
}

static void insert_arg(cmdline *c, int at, char *v)
{
    if (c->n >= MAXARGS - 4) {
        free(v);
        return;
    }
    memmove(&c->a[at + 1], &c->a[at], (size_t)(c->n - at) * sizeof *c->a);
    c->a[at] = v;
    c->n++;
}

static void mutate_once(cmdline *c)
{
    int first = 1; /* the command itself (a[0]) is not mutated: see the list above */
    if (c->n <= first) {
        insert_arg(c, c->n, dup_s(options[rn(N(options))]));
        return;
    }
    int i = first + rn(c->n - first);
    switch (rn(11)) {
    case 0: case 1: case 2: /* a value from the lists */
        set_arg(c, i, pick_value());
        break;
    case 3: { /* a byte inserted */
        const char *b = interesting_bytes[rn(N(interesting_bytes))];
        size_t l = strlen(c->a[i]), at = (size_t)rn((int)l + 1), bl = strlen(b);
        char *t = malloc(l + bl + 1);
        if (!t) die("out of memory");
        memcpy(t, c->a[i], at), memcpy(t + at, b, bl), memcpy(t + at + bl, c->a[i] + at, l - at + 1);
        set_arg(c, i, t);
        break;
    }
    case 4: /* an argument dropped */
        free(c->a[i]);
        memmove(&c->a[i], &c->a[i + 1], (size_t)(c->n - i - 1) * sizeof *c->a);
        c->n--;
        break;
    case 5: /* an argument repeated */
        insert_arg(c, i, dup_s(c->a[i]));
        break;
    case 6: { /* two swapped */
        int j = first + rn(c->n - first);
        char *t = c->a[i];
        c->a[i] = c->a[j], c->a[j] = t;
        break;
    }
    case 7: case 8: /* an option added, with a value */
        insert_arg(c, i, dup_s(options[rn(N(options))]));
        if (rn(3)) insert_arg(c, i + 1, pick_value());
        break;
    case 9: { /* cut short */
        size_t l = strlen(c->a[i]);
        c->a[i][rn((int)l + 1)] = 0;
        break;
    }
    default: { /* made long */
        size_t l = strlen(c->a[i]) ? strlen(c->a[i]) : 1;
        int times = 1 + rn(1 + 4000 / (int)l);
        char *t = malloc(l * (size_t)times + 2);
        if (!t) die("out of memory");
        t[0] = 0;
        for (int k = 0; k < times; k++) strcat(t, c->a[i][0] ? c->a[i] : "a");
        set_arg(c, i, t);
    }
    }
}

/* run's and resume's command lines end with a time budget (see budgeted). */
static void add_budget(cmdline *c)
{
    if (c->n && budgeted(c->a[0])) {
        insert_arg(c, c->n, dup_s("--time-budget"));
        insert_arg(c, c->n, dup_s("5"));
    }
}

/* ---- a finding ---- */

static int nfind;
static void escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\x%02x", *p);
        else fputc(*p, f);
    fputc('"', f);
}
static void report(const cmdline *c, const outcome *o, const char *why, const char *before,
                   const char *after)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/finding-%d.txt", g_work, ++nfind);
    FILE *f = fopen(p, "w");
    if (!f) die("%s: %s", p, strerror(errno));
    fprintf(f, "why: %s\nexit: %d\nargv (C strings, run in a copy of %s):\n  dse", why, o->status,
            g_base);
    for (int i = 0; i < c->n; i++) fputc(' ', f), escaped(f, c->a[i]);
    fprintf(f, "\nstderr:\n%.4000s\n", o->err);
    if (strcmp(before, after)) fprintf(f, "files before:\n%.4000s\nfiles after:\n%.4000s\n", before, after);
    fclose(f);
    fprintf(stderr, "fuzz_cli: FINDING %d: %s (%s)\n", nfind, why, p);
}

/* ---- setup ---- */

static void prepare(void)
{
    char p[8192], q[8192];
    snprintf(g_base, sizeof g_base, "%s/base", g_work);
    snprintf(g_io, sizeof g_io, "%s/io", g_work);
    /* four levels deep: "../.." from a mutation stays inside WORKDIR */
    snprintf(g_scratch, sizeof g_scratch, "%s/j/a/b/s", g_work);
    snprintf(g_canary, sizeof g_canary, "%s/PWNED", g_work);
    for (int i = 0; i < N(inject); i++) {
        snprintf(p, sizeof p, inject_fmt[i], g_canary);
        inject[i] = dup_s(p);
    }
    rm_tree(g_base), rm_tree(g_io);
    snprintf(p, sizeof p, "%s/j", g_work), rm_tree(p);
    remove(g_canary);
    const char *dirs[] = {"base", "io", "j", "j/a", "j/a/b"};
    for (int i = 0; i < N(dirs); i++) {
        snprintf(p, sizeof p, "%s/%s", g_work, dirs[i]);
        if (mkdir(p, 0755) && errno != EEXIST) die("mkdir %s: %s", p, strerror(errno));
        own(p);
    }
    own(g_work);
    /* The base files, made by dse itself (the runs must succeed). */
    static const char *const make[][20] = {
        {"net", "export", "toy6", "-o", "toy6.onnx"},
        {"net", "import", "toy6.onnx", "-o", "toy6.json"},
        {"run", "--network", "toy6", "--platform", "local-2", "--chromosome", "hybrid", "--pop",
         "4", "--gens", "2", "--seed", "7", "--db", "c.db", "--quiet"},
        {"export", "--campaign", "1", "--point", "0", "-o", "ad", "--db", "c.db"},
    };
    for (int k = 0; k < N(make); k++) {
        cmdline c = {0};
        for (int i = 0; make[k][i]; i++) c.a[c.n++] = dup_s(make[k][i]);
        outcome o = {0};
        run(&c, &o, g_base);
        if (o.status) die("preparing the base files: dse %s %s: exit %d: %s", c.a[0], c.a[1], o.status, o.err);
        free(o.out), free(o.err);
        cl_free(&c);
    }
    snprintf(p, sizeof p, "%s/ad/dse-mapping.json", g_base);
    snprintf(q, sizeof q, "%s/map.json", g_base);
    copy_file(p, q);
    snprintf(p, sizeof p, "%s/examples/platforms/local-2.json", g_src);
    snprintf(q, sizeof q, "%s/plat.json", g_base);
    copy_file(p, q);
    /* coefficients: the first example file */
    snprintf(p, sizeof p, "%s/examples/coeffs", g_src);
    DIR *d = opendir(p);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (!found && strstr(e->d_name, ".json")) {
            snprintf(q, sizeof q, "%s/examples/coeffs/%s", g_src, e->d_name);
            snprintf(p, sizeof p, "%s/coeffs.json", g_base);
            copy_file(q, p);
            found = 1;
        }
    if (d) closedir(d);
    if (!found) die("no coefficients file in %s/examples/coeffs", g_src);
}

int main(int argc, char **argv)
{
    if (argc < 5) die("usage: fuzz_cli DSE_BIN SOURCE_DIR WORKDIR SECONDS [SEED]");
    g_bin = argv[1], g_src = argv[2], g_work = argv[3];
    double secs = atof(argv[4]);
    uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : (uint64_t)time(NULL);
    g_rng = seed * 2 + 1;
    if (geteuid() == 0) g_uid = 65534, g_gid = 65534; /* nobody: see the top */
    if (access(g_bin, X_OK)) die("%s: %s", g_bin, strerror(errno));
    mkdir(g_work, 0755);
    prepare();
    printf("fuzz_cli: seed %llu (reproduce: fuzz_cli %s %s %s %s %llu)\n",
           (unsigned long long)seed, g_bin, g_src, g_work, argv[4], (unsigned long long)seed);
    fflush(stdout);
    for (int s = 0; s < N(seeds); s++) {
        cmdline *c = &corpus[ncorpus++];
        for (int i = 0; seeds[s][i]; i++) c->a[c->n++] = dup_s(seeds[s][i]);
    }
    long execs = 0, by_exit[4] = {0, 0, 0, 0};
    double t0 = now(), slowest = 0;
    while (now() - t0 < secs) {
        cmdline c = {0};
        int from = rn(ncorpus);
        cl_copy(&c, &corpus[from]);
        /* the plain seeds first, then 1..4 stacked mutations */
        if (execs >= N(seeds)) {
            int k = 1 + rn(4);
            for (int m = 0; m < k; m++) mutate_once(&c);
        } else {
            cl_free(&c);
            cl_copy(&c, &corpus[execs]);
        }
        cmdline ran = {0};
        cl_copy(&ran, &c);
        add_budget(&ran);
        reset_scratch();
        char *before = listing(g_scratch, NULL);
        outcome o = {0};
        run(&ran, &o, g_scratch);
        int tmpleft = 0;
        char *after = listing(g_scratch, &tmpleft);
        char why[512];
        if (verdict(&o, before, after, tmpleft, why, sizeof why)) report(&ran, &o, why, before, after);
        remove(g_canary);
        execs++;
        if (o.status >= 0 && o.status <= 2) by_exit[o.status]++;
        else by_exit[3]++;
        if (o.secs > slowest) slowest = o.secs;
        if (sig_new(signature(&ran, &o)) && ncorpus < MAXCORPUS && execs > N(seeds))
            cl_copy(&corpus[ncorpus++], &c);
        cl_free(&c), cl_free(&ran);
        free(before), free(after), free(o.out), free(o.err);
        if (nfind >= 50) break;
    }
    double t = now() - t0;
    printf("stat::executions %ld\nstat::executions_per_second %.2f\nstat::outcomes %d\n"
           "stat::corpus %d\nstat::exit0 %ld\nstat::exit1 %ld\nstat::exit2 %ld\nstat::other %ld\n"
           "stat::slowest_run_s %.1f\nstat::findings %d\n",
           execs, execs / (t > 0 ? t : 1), nsigs, ncorpus, by_exit[0], by_exit[1], by_exit[2],
           by_exit[3], slowest, nfind);
    rm_tree(g_scratch);
    for (int i = 0; i < ncorpus; i++) cl_free(&corpus[i]);
    for (int i = 0; i < N(inject); i++) free(inject[i]);
    return nfind ? 1 : 0;
}
