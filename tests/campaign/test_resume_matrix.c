/* test_resume_matrix.c -- every zoo network x every preset platform x
 * every chromosome: a campaign killed (SIGKILL, sometimes SIGINT) at
 * random moments, its resumes killed too, ends byte-identical to the
 * uninterrupted run (front, every stored population, every generation's
 * statistics).
 *
 *   test_resume_matrix          a subset of the matrix drawn with a fixed
 *                               seed, printed (the default suite)
 *   test_resume_matrix --full   the whole matrix (label soak; with
 *                               DSE_SHORT=1 a larger subset)
 *   test_resume_matrix --cells N  the first N cells of the subset (the
 *                               arm64 label's form, under emulation)
 *
 * DSE_MATRIX_SEED=N draws another subset and other kill moments; the seed
 * in use is printed first so any failure can be replayed.  Kill moments
 * are random, never assumed: whatever moment a kill lands on, the outcome
 * must be the same bytes, so the test cannot fail because the machine is
 * slow.  Networks come from `dse zoo list`, platforms from
 * examples/platforms, so new ones join the matrix by themselves.
 */
#include "cutil.h"

#include <dirent.h>

static const char *const chromosomes[] = {"naive", "hybrid", "vertical", "spatial"};
enum { NCHROM = 4, POP = 8 };

static const char *front_sql =
    "SELECT idx, genome, energy, memory, latency, violation, src_gen, src_idx FROM front"
    " WHERE campaign = 1 ORDER BY idx";
static const char *all_pop_sql =
    "SELECT gen, idx, genome, energy, memory, latency, violation, rank, crowding FROM"
    " individuals WHERE campaign = 1 ORDER BY gen, idx";
/* Not compared: wall_time, and evaluations / cache_hits, which count the
 * work done (a resumed engine starts with an empty evaluation cache). */
static const char *gens_sql =
    "SELECT gen, hypervolume, best_energy, best_memory, best_latency,"
    " front_size, feasible FROM generations WHERE campaign = 1 ORDER BY gen";

/* xorshift64*: the test's own draws, reproducible from the printed seed */
static unsigned long long rng_state;
static unsigned long long rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static double rnd01(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) && errno == EINTR) {
    }
}

/* ---- the matrix ---- */

static char nets[64][64], plats[64][64];
static int nnet, nplat;

static void list_networks(void)
{
    const char *out = tpath("zoo.txt");
    CHECK(dse_run(out, NULL, "zoo", "list", NULL) == 0);
    char *t = tfile_read(out, NULL);
    char *save = NULL;
    int first = 1;
    for (char *l = t ? strtok_r(t, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
        if (first) { /* the header */
            first = 0;
            continue;
        }
        if (nnet < 64 && sscanf(l, "%63s", nets[nnet]) == 1) nnet++;
    }
    free(t);
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

static void list_platforms(void)
{
    DIR *d = opendir(DSE_SOURCE_DIR "/examples/platforms");
    struct dirent *e;
    while (d && (e = readdir(d)) && nplat < 64) {
        size_t n = strlen(e->d_name);
        if (n > 5 && n < 60 && !strcmp(e->d_name + n - 5, ".json")) {
            memcpy(plats[nplat], e->d_name, n - 5);
            plats[nplat++][n - 5] = 0;
        }
    }
    if (d) closedir(d);
    qsort(plats, (size_t)nplat, sizeof plats[0], cmp_str); /* readdir order is not stable */
}

/* ---- one cell ---- */

typedef struct {
    const char *net, *plat, *chrom;
    char seed[16], gens[16];
} cell;

static void run_args(const cell *c, const char *db, const char *threads, const char **a)
{
    int n = 0;
    const char *base[] = {"run", "--network", c->net, "--platform", c->plat, "--chromosome", c->chrom,
                          "--pop", "8", "--gens", c->gens, "--seed", c->seed, "--quiet",
                          "--threads", threads, "--db", db};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) a[n++] = base[i];
    a[n] = NULL;
}

static int ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* Kill pid (SIGKILL, one time in four SIGINT) at a random moment: two
 * times in three a little after the campaign stored a random generation
 * below gens (inside the next generation's work or its transaction), else
 * after a random delay in [0, span] seconds.  Returns the signal sent. */
static int kill_at_random(pid_t pid, const char *db, long gens, double span)
{
    if (rnd() % 3) {
        long long g = (long long)(rnd() % (unsigned long long)(gens > 1 ? gens - 1 : 1));
        double t0 = base_now();
        while (gens_done(db) < g && !ended(pid) && base_now() - t0 < 60) sleep_s(0.0005);
        sleep_s(rnd01() * 0.002);
    } else {
        sleep_s(rnd01() * span);
    }
    int sig = rnd() % 4 == 0 ? SIGINT : SIGKILL;
    kill(pid, sig);
    return sig;
}

/* The kill left a checkpoint to resume from (a campaign neither finished
 * nor without any generation): the case that exercises the restore. */
static int mid_run(const char *db)
{
    sqlite3 *h = file_exists(db) ? db_open(db) : NULL;
    char *st = h ? db_text(h, "SELECT status FROM campaigns WHERE id = 1") : NULL;
    long long g = h ? db_int(h, "SELECT count(*) FROM checkpoints") : 0;
    int mid = st && strcmp(st, "finished") && g > 0;
    free(st);
    sqlite3_close(h);
    return mid;
}

static long long ncampaigns(const char *db)
{
    sqlite3 *h = file_exists(db) ? db_open(db) : NULL;
    long long n = h ? db_int(h, "SELECT count(*) FROM campaigns") : 0;
    sqlite3_close(h);
    return n < 0 ? 0 : n;
}

/* Resume (each attempt killed at random half the time) until finished. */
static int finish(const cell *c, const char *db, double span, const char *tag)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        if (ncampaigns(db) < 1) { /* killed before the campaign existed: run afresh */
            const char *a[32];
            unlink(db);
            run_args(c, db, "2", a);
            if (dse_wait(dse_start(NULL, NULL, a)) != 0) return -1;
            return 0;
        }
        const char *rargs[] = {"resume", "--campaign", "1", "--db", db, "--quiet", "--threads",
                               rnd() % 2 ? "1" : "2", NULL};
        const char *errf = tpath("resume.err");
        pid_t pid = dse_start(NULL, errf, rargs);
        if (attempt < 7 && rnd() % 2) kill_at_random(pid, db, atol(c->gens), span);
        int rc = dse_wait(pid);
        if (rc == 0) return 0;
        if (rc == 2 && contains(errf, "is finished")) return 0; /* the kill came after the end */
        if (rc == 1 || rc == 128 + SIGKILL || rc == 128 + SIGINT) {
            if (rc == 1 && !contains(errf, "is resumable")) {
                char *e = tfile_read(errf, NULL);
                fprintf(stderr, "%s: resume failed: %s", tag, e ? e : "?\n");
                free(e);
                return -1;
            }
            continue; /* killed or interrupted: again */
        }
        char *e = tfile_read(errf, NULL);
        fprintf(stderr, "%s: resume exit %d: %s", tag, rc, e ? e : "?\n");
        free(e);
        return -1;
    }
    return -1;
}

/* Seconds the uninterrupted run spent in its generations (the wall of its
 * last stored generation). */
static double search_seconds(const char *db)
{
    sqlite3 *h = db_open(db);
    double w = h ? db_real(h, "SELECT max(wall_time) FROM generations WHERE campaign = 1") : NAN;
    sqlite3_close(h);
    return w;
}

/* Returns the number of kills that left a checkpoint to restore. */
static int run_cell(cell *c, int kills)
{
    char tag[256], name[64];
    const char *ref = tpath("ref.db");
    const char *a[32];
    double span = 0;
    /* Enough generations that kills can land inside the search: a cell
     * whose search is over in a blink gets more of them. */
    for (;;) {
        snprintf(tag, sizeof tag, "%s on %s, %s chromosome, seed %s, %s generations", c->net,
                 c->plat, c->chrom, c->seed, c->gens);
        unlink(ref);
        run_args(c, ref, "1", a);
        double t0 = base_now();
        int rc = dse_wait(dse_start(NULL, tpath("ref.err"), a));
        span = base_now() - t0;
        CHECK(rc == 0, " %s: uninterrupted run exit %d", tag, rc);
        if (rc) return 0;
        long g = atol(c->gens);
        if (!(search_seconds(ref) < 0.2) || g >= 4000) break;
        snprintf(c->gens, sizeof c->gens, "%d", (int)g * 4);
    }
    int mid = 0;
    for (int k = 0; k < kills; k++) {
        snprintf(name, sizeof name, "kill%d.db", k);
        const char *db = tpath(name);
        unlink(db);
        run_args(c, db, "2", a);
        pid_t pid = dse_start(NULL, NULL, a);
        int sig = kill_at_random(pid, db, atol(c->gens), span);
        dse_wait(pid);
        mid += mid_run(db);
        char ktag[320];
        snprintf(ktag, sizeof ktag, "%s, %s %d", tag, sig == SIGINT ? "SIGINT" : "SIGKILL", k);
        int fr = finish(c, db, span, ktag);
        CHECK(fr == 0, " %s: could not resume to the end", ktag);
        if (fr) continue;
        int same = same_rows(ref, db, front_sql) && same_rows(ref, db, all_pop_sql) &&
                   same_rows(ref, db, gens_sql);
        CHECK(same, " %s: resumed campaign differs from the uninterrupted one", ktag);
        sqlite3 *h = db_open(db);
        char *st = h ? db_text(h, "SELECT status FROM campaigns WHERE id = 1") : NULL;
        CHECK(st && !strcmp(st, "finished"), " %s: status %s", ktag, st ? st : "?");
        free(st);
        sqlite3_close(h);
        if (same) unlink(db); /* else kept for inspection */
    }
    return mid;
}

int main(int argc, char **argv)
{
    int full = argc > 1 && !strcmp(argv[1], "--full");
    int ncells = argc > 2 && !strcmp(argv[1], "--cells") ? atoi(argv[2]) : 0;
    int shrt = getenv("DSE_SHORT") && atoi(getenv("DSE_SHORT"));
    const char *se = getenv("DSE_MATRIX_SEED");
    unsigned long long seed = se ? strtoull(se, NULL, 10) : 20261125;
    rng_state = seed ? seed : 1;
    mk_tdir("rel-matrix");
    list_networks();
    list_platforms();
    CHECK(nnet >= 8, " dse zoo list gave %d networks", nnet);
    CHECK(nplat >= 4, " %d preset platforms", nplat);
    int total = nnet * nplat * NCHROM;
    /* every cell in a seeded order; the subset is its head */
    int *order = malloc(sizeof(int) * (size_t)(total > 0 ? total : 1));
    for (int i = 0; i < total; i++) order[i] = i;
    for (int i = total - 1; i > 0; i--) {
        int j = (int)(rnd() % (unsigned long long)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
#ifdef DSE_SANITIZED_BUILD
    int cells = full ? (shrt ? 12 : total) : 4, kills = full ? 3 : 2;
#else
    int cells = full ? (shrt ? 16 : total) : 8, kills = full ? 3 : 2;
#endif
    if (ncells > 0 && ncells < cells) cells = ncells;
    if (cells > total) cells = total;
    printf("resume matrix: %d networks x %d platforms x %d chromosomes = %d cells; %s: %d cells, "
           "%d kills each, seed %llu (DSE_MATRIX_SEED)\n",
           nnet, nplat, NCHROM, total, full && cells == total ? "full" : "subset", cells, kills, seed);
    double t0 = base_now();
    int mid = 0;
    for (int i = 0; i < cells; i++) {
        int x = order[i];
        cell c = {nets[x / (nplat * NCHROM)], plats[x / NCHROM % nplat], chromosomes[x % NCHROM], "", ""};
        snprintf(c.seed, sizeof c.seed, "%llu", rnd() % 1000 + 1);
        snprintf(c.gens, sizeof c.gens, "%llu", rnd() % 20 + 10);
        int before = check_failures;
        int m = run_cell(&c, kills);
        mid += m;
        printf("  %-3d %-13s %-18s %-9s seed %-4s gens %-5s %d/%d kills mid-run  %s\n", i + 1,
               c.net, c.plat, c.chrom, c.seed, c.gens, m, kills,
               check_failures == before ? "identical" : "FAILED");
        fflush(stdout);
    }
    printf("%d cells in %.0f s; %d of %d kills left a checkpoint to resume from\n", cells,
           base_now() - t0, mid, cells * kills);
    /* kill moments are random, but a matrix whose kills all missed the
     * search would prove nothing */
    CHECK(mid > 0);
    free(order);
    rm_tdir();
    return check_done("test_resume_matrix");
}
