/* test_campaign_resume.c -- a campaign killed with SIGKILL at several
 * moments (and one stopped by Ctrl-C), then resumed, ends with a front and
 * a final population byte-identical to an uninterrupted run with the same
 * seed; and every stored generation equals the uninterrupted one.
 * With `--init LIST` (CTest test_campaign_resume_seeded) the campaigns are
 * seeded by those solvers (dse run --init): the same must hold, and the
 * stored configuration (the seeds' genomes with it) too. */
#include "cutil.h"

/* densenet121 keeps the generations slow enough to kill a campaign in the
 * middle of one; gens are many so that kill points land everywhere. */
#define NET "densenet121"
static const char *gens = "300";
static const char *init; /* --init LIST, or NULL */

static const char *front_sql =
    "SELECT idx, genome, energy, memory, latency, violation, src_gen, src_idx FROM front"
    " WHERE campaign = 1 ORDER BY idx";
static const char *final_pop_sql =
    "SELECT idx, genome, energy, memory, latency, violation, rank, crowding FROM individuals"
    " WHERE campaign = 1 AND gen = (SELECT max(gen) FROM individuals WHERE campaign = 1)"
    " ORDER BY idx";
static const char *all_pop_sql =
    "SELECT gen, idx, genome, energy, memory, latency, violation, rank, crowding FROM"
    " individuals WHERE campaign = 1 ORDER BY gen, idx";
static const char *gens_sql =
    "SELECT gen, hypervolume, best_energy, best_memory, best_latency, front_size, feasible"
    " FROM generations WHERE campaign = 1 ORDER BY gen";

static int run_args(const char *db, const char **args)
{
    static const char *base[] = {"run", "--network", NET, "--platform", "jetson-nx-8-cpu",
                                 "--chromosome", "hybrid", "--splits", "2", "--pop", "100",
                                 "--seed", "11", "--quiet", "--threads", "2", "--gens"};
    int n = 0;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) args[n++] = base[i];
    args[n++] = gens;
    if (init) {
        args[n++] = "--init";
        args[n++] = init;
    }
    args[n++] = "--db";
    args[n++] = db;
    args[n] = NULL;
    return n;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) && errno == EINTR) {
    }
}

/* Wait until the campaign has stored generation g (or the child ended). */
static void wait_gen(const char *db, pid_t pid, long long g)
{
    double t0 = base_now();
    while (gens_done(db) < g && base_now() - t0 < 120) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            return; /* it ended (not reaped: the caller collects it) */
        sleep_s(0.002);
    }
}

/* Resume until it finishes (a missing campaign means the kill came before
 * the campaign existed: run it afresh). */
static void finish(const char *db, const char *tag)
{
    sqlite3 *h = file_exists(db) ? db_open(db) : NULL;
    long long nc = h ? db_int(h, "SELECT count(*) FROM campaigns") : 0;
    sqlite3_close(h);
    if (nc < 1) {
        const char *args[32];
        unlink(db);
        run_args(db, args);
        CHECK(dse_wait(dse_start(NULL, NULL, args)) == 0);
        return;
    }
    int rc = dse_run(tpath("resume.out"), tpath("resume.err"), "resume", "--campaign", "1",
                     "--db", db, "--quiet", "--threads", "1", NULL);
    if (rc == 2 && contains(tpath("resume.err"), "is finished")) return; /* killed after the end */
    if (rc != 0) {
        char *e = tfile_read(tpath("resume.err"), NULL);
        fprintf(stderr, "%s: resume exit %d: %s\n", tag, rc, e ? e : "");
        free(e);
    }
    CHECK(rc == 0);
    CHECK(contains(tpath("resume.out"), "campaign 1\n"));
}

static void compare(const char *ref, const char *db, const char *tag)
{
    fprintf(stderr, "  %s\n", tag);
    CHECK(same_rows(ref, db, front_sql));
    CHECK(same_rows(ref, db, final_pop_sql));
    CHECK(same_rows(ref, db, all_pop_sql));
    CHECK(same_rows(ref, db, gens_sql));
    CHECK(same_rows(ref, db, "SELECT config FROM campaigns WHERE id = 1"));
    sqlite3 *h = db_open(db);
    if (h) {
        char *st = db_text(h, "SELECT status FROM campaigns WHERE id = 1");
        CHECK(st && !strcmp(st, "finished"));
        free(st);
        CHECK(db_int(h, "SELECT count(*) FROM generations WHERE campaign = 1") == atoi(gens) + 1);
        char *ic = db_text(h, "PRAGMA integrity_check");
        CHECK(ic && !strcmp(ic, "ok"));
        free(ic);
        sqlite3_close(h);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--init")) init = argv[2];
    mk_tdir("resume");
#ifdef DSE_SANITIZED_BUILD
    gens = "60"; /* ASan + UBSan run about 3x slower */
#endif
    const char *args[32];
    static char ref[512];
    snprintf(ref, sizeof ref, "%s", tpath("ref.db"));
    run_args(ref, args);
    double t0 = base_now();
    CHECK(dse_wait(dse_start(tpath("ref.out"), NULL, args)) == 0);
    fprintf(stderr, "uninterrupted run: %.2f s\n", base_now() - t0);
    CHECK(contains(tpath("ref.out"), "campaign 1\n"));
    if (init) {
        sqlite3 *h = db_open(ref);
        CHECK(h && db_int(h, "SELECT json_array_length(config, '$.init') FROM campaigns WHERE id = 1") >= 1);
        sqlite3_close(h);
    }

    /* kill -9 at several moments: right at the start, then a little after
     * the campaign stored generation g (a little: to land inside the next
     * generation's evaluation or inside its transaction) */
    static const struct {
        long long gen;
        double extra;
    } at[] = {{-2, 0.0}, {-2, 0.02}, {0, 0.0}, {0, 0.004}, {20, 0.001}, {60, 0.003},
              {100, 0.0}, {150, 0.007}, {0, 0.010}};
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        char name[64], tag[96];
        snprintf(name, sizeof name, "kill%zu.db", k);
        const char *db = tpath(name);
        long long g = at[k].gen * atoi(gens) / 300; /* scaled to the campaign */
        run_args(db, args);
        pid_t pid = dse_start(NULL, NULL, args);
        if (at[k].gen >= 0) wait_gen(db, pid, g);
        sleep_s(at[k].extra);
        kill(pid, SIGKILL);
        int rc = dse_wait(pid);
        snprintf(tag, sizeof tag, "SIGKILL %.3f s after generation %lld (exit %d, stored %lld)",
                 at[k].extra, at[k].gen >= 0 ? g : -1, rc, gens_done(db));
        finish(db, tag);
        compare(ref, db, tag);
    }

    /* killed twice: the resume itself is killed too */
    {
        const char *db = tpath("twice.db");
        run_args(db, args);
        pid_t pid = dse_start(NULL, NULL, args);
        wait_gen(db, pid, atoi(gens) / 5);
        kill(pid, SIGKILL);
        dse_wait(pid);
        const char *rargs[] = {"resume", "--campaign", "1", "--db", db, "--quiet", NULL};
        pid = dse_start(NULL, NULL, rargs);
        wait_gen(db, pid, atoi(gens) / 2);
        kill(pid, SIGKILL);
        dse_wait(pid);
        finish(db, "killed twice");
        compare(ref, db, "SIGKILL during the run and during the resume");
    }

    /* Ctrl-C: stops after the current generation, status interrupted */
    {
        const char *db = tpath("int.db");
        run_args(db, args);
        pid_t pid = dse_start(tpath("int.out"), tpath("int.err"), args);
        wait_gen(db, pid, atoi(gens) / 6);
        kill(pid, SIGINT);
        int rc = dse_wait(pid);
        sqlite3 *h = db_open(db);
        char *st = h ? db_text(h, "SELECT status FROM campaigns WHERE id = 1") : NULL;
        if (rc == 1) {
            CHECK(st && !strcmp(st, "interrupted"));
            CHECK(contains(tpath("int.err"), "dse resume --campaign 1"));
            /* the stop came after a whole generation: gens_done matches the table */
            CHECK(db_int(h, "SELECT gens_done FROM campaigns WHERE id = 1") ==
                  db_int(h, "SELECT max(gen) FROM generations WHERE campaign = 1"));
        } else {
            fprintf(stderr, "SIGINT came too late (exit %d, status %s)\n", rc, st ? st : "-");
            CHECK(rc == 0);
        }
        free(st);
        sqlite3_close(h);
        finish(db, "SIGINT");
        compare(ref, db, "SIGINT then resume");
    }

    /* resuming a finished campaign or an unknown one is refused */
    CHECK(dse_run(NULL, tpath("e1"), "resume", "--campaign", "1", "--db", ref, NULL) == 2);
    CHECK(contains(tpath("e1"), "campaign 1 is finished"));
    CHECK(file_lines(tpath("e1")) == 1);
    CHECK(dse_run(NULL, tpath("e2"), "resume", "--campaign", "9", "--db", ref, NULL) == 2);
    CHECK(contains(tpath("e2"), "no campaign 9"));
    CHECK(file_lines(tpath("e2")) == 1);

    rm_tdir();
    printf("%s\n", check_failures ? "FAILED" : "ok");
    return check_failures != 0;
}
