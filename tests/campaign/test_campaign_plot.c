/* test_campaign_plot.c -- dse plot: valid PNG files (signature and IHDR
 * with a sane size) for every figure, data files equal to what the
 * database holds (read here with the sqlite3 API), several campaigns in
 * one convergence figure, and a missing gnuplot: exit 1, data kept. */
#include "cutil.h"

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static unsigned be32(const unsigned char *p)
{
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static int valid_png(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[33];
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f) fclose(f);
    if (n != sizeof h || memcmp(h, png_sig, 8)) return 0;
    /* first chunk: length 13, type IHDR, width and height, bit depth */
    unsigned w = be32(h + 16), ht = be32(h + 20);
    return be32(h + 8) == 13 && !memcmp(h + 12, "IHDR", 4) && w >= 200 && w <= 4000 &&
           ht >= 200 && ht <= 4000 && h[24] >= 1 && h[24] <= 16;
}

/* Numbers of a data file (comments skipped), row by row, into v. */
static int read_dat(const char *path, double *v, int max)
{
    char *t = tfile_read(path, NULL);
    int n = 0;
    for (char *line = t; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (line[0] != '#')
            for (char *p = line, *end; *p && n < max; p = end) {
                double x = strtod(p, &end);
                if (end == p) break;
                v[n++] = x;
            }
        line = next;
    }
    free(t);
    return n;
}

/* Compare a data file with a query's rows (same columns, NULL = NaN). */
static int same_as_db(sqlite3 *h, const char *path, const char *sql)
{
    static double v[200000];
    int n = read_dat(path, v, 200000), k = 0, ok = 1;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) return 0;
    while (sqlite3_step(s) == SQLITE_ROW)
        for (int c = 0; c < sqlite3_column_count(s); c++, k++) {
            double d = sqlite3_column_type(s, c) == SQLITE_NULL ? NAN : sqlite3_column_double(s, c);
            if (k >= n || !(v[k] == d || (isnan(v[k]) && isnan(d)))) ok = 0;
        }
    sqlite3_finalize(s);
    if (!ok || k != n) fprintf(stderr, "%s differs from the database (%d vs %d numbers)\n", path, n, k);
    return ok && k == n && n > 0;
}

int main(void)
{
    mk_tdir("plot");
    const char *db = tpath("p.db");
    for (int i = 0; i < 2; i++)
        CHECK(dse_run(NULL, NULL, "run", "--network", "alexnet-bvlc", "--platform",
                      "jetson-nx-8-cpu", "--chromosome", i ? "vertical" : "hybrid", "--pop", "24",
                      "--gens", "12", "--seed", "3", "--db", db, "--quiet", NULL) == 0);
    const char *dir = tpath("plots");
    CHECK(dse_run(tpath("plot.out"), tpath("plot.err"), "plot", "--campaign", "1,2", "--db", db,
                  "-o", dir, NULL) == 0);
    static const char *png[] = {"convergence.png", "hypervolume.png", "front-1-3d.png",
                                "front-1-energy-latency.png", "front-1-memory-latency.png",
                                "front-1-energy-memory.png", "front-2-3d.png",
                                "front-2-energy-memory.png"};
    char p[600];
    for (size_t i = 0; i < sizeof png / sizeof *png; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, png[i]);
        if (!valid_png(p)) fprintf(stderr, "not a valid PNG: %s\n", p);
        CHECK(valid_png(p));
    }
    sqlite3 *h = db_open(db);
    for (int c = 1; c <= 2 && h; c++) {
        char sql[300];
        snprintf(p, sizeof p, "%s/front-%d.dat", dir, c);
        snprintf(sql, sizeof sql,
                 "SELECT idx, energy, memory, latency FROM front WHERE campaign = %d ORDER BY idx", c);
        CHECK(same_as_db(h, p, sql));
        snprintf(p, sizeof p, "%s/convergence-%d.dat", dir, c);
        snprintf(sql, sizeof sql,
                 "SELECT gen, best_energy, best_memory, best_latency, hypervolume, evaluations"
                 " FROM generations WHERE campaign = %d ORDER BY gen", c);
        CHECK(same_as_db(h, p, sql));
    }
    sqlite3_close(h);
    /* one convergence figure, both campaigns in it */
    snprintf(p, sizeof p, "%s/convergence.gp", dir);
    CHECK(contains(p, "convergence-1.dat") && contains(p, "convergence-2.dat"));

    /* gnuplot missing: exit 1, one clear line, nothing left (docs/exit-codes.md) */
    const char *dir2 = tpath("plots2");
    setenv("DSE_GNUPLOT", "/nonexistent/gnuplot", 1);
    CHECK(dse_run(NULL, tpath("np.err"), "plot", "--campaign", "2", "--db", db, "-o", dir2, NULL) == 1);
    unsetenv("DSE_GNUPLOT");
    CHECK(contains(tpath("np.err"), "gnuplot not found") && file_lines(tpath("np.err")) == 1);
    snprintf(p, sizeof p, "%s/front-2.dat", dir2);
    CHECK(!file_exists(p));
    snprintf(p, sizeof p, "%s/convergence-2.dat", dir2);
    CHECK(!file_exists(p));
    snprintf(p, sizeof p, "%s/convergence.png", dir2);
    CHECK(!file_exists(p));
    /* an unknown campaign: exit 2, nothing written */
    CHECK(dse_run(NULL, tpath("uk.err"), "plot", "--campaign", "1,5", "--db", db, "-o",
                  tpath("plots3"), NULL) == 2);
    CHECK(contains(tpath("uk.err"), "no campaign 5") && !file_exists(tpath("plots3")));
    /* and with --point (the fuzzer's finding: the folder was left) */
    CHECK(dse_run(NULL, tpath("uk2.err"), "plot", "--campaign", "5", "--point", "0", "--db", db, "-o",
                  tpath("plots4"), NULL) == 2);
    CHECK(contains(tpath("uk2.err"), "no campaign 5") && !file_exists(tpath("plots4")));

    /* Issue 15: a full disk (a tmpfs of 64 KiB in a mount namespace of
     * its own): exit 1, one line, nothing left (was: "wrote ...", exit 0,
     * empty and cut-off PNGs). */
    {
        const char *full = tpath("full");
        mkdir(full, 0755);
        char cmd[2000];
        snprintf(cmd, sizeof cmd,
                 "unshare -m sh -c 'mount -t tmpfs -o size=64k dse-full %s 2>/dev/null || exit 99; "
                 "%s plot --campaign 1 --db %s -o %s/p >%s 2>%s; rc=$?; ls -A %s >%s; exit $rc' "
                 "2>/dev/null", full, DSE_BIN, db, full, tpath("p5.out"), tpath("p5.err"), full,
                 tpath("p5.ls"));
        int rc = run_sh(NULL, cmd);
        if (rc == 99) {
            fprintf(stderr, "cannot mount a tmpfs in a mount namespace here: full-disk case skipped\n");
        } else {
            CHECK(rc == 1, "plot on a full disk: exit %d", rc);
            CHECK(file_lines(tpath("p5.err")) == 1 && !contains(tpath("p5.out"), "png"));
            char *ls = tfile_read(tpath("p5.ls"), NULL);
            CHECK(ls && !ls[0], "plot on a full disk left: %s", ls ? ls : "?");
            free(ls);
        }
    }
    /* Issue 15: strings of a database (another program may have written
     * them) reach gnuplot's scripts and the terminal inert: a newline
     * followed by gnuplot's `!` ran a shell command; escape sequences
     * reached the terminal raw. */
    const char *pwned = tpath("PWNED");
    char evil[600];
    snprintf(evil, sizeof evil, "x\n!touch %s\n#\033[2J\302\233", pwned);
    sqlite3 *hw = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open(db, &hw) == SQLITE_OK && sqlite3_prepare_v2(hw, "UPDATE campaigns SET name = ?1, network = ?1, platform = ?1,"
                                       " chromosome = ?1 WHERE id = 2", -1, &st, NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, evil, -1, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(hw);
    const char *dir4 = tpath("plots4");
    CHECK(dse_run(tpath("p4.out"), tpath("p4.err"), "plot", "--campaign", "1,2", "--db", db, "-o",
                  dir4, NULL) == 0);
    CHECK(!file_exists(pwned), "a campaign name ran a shell command through gnuplot");
    CHECK(dse_run(tpath("list.out"), tpath("list.err"), "list", "--db", db, NULL) == 0);
    CHECK(dse_run(tpath("front.out"), tpath("front.err"), "front", "--campaign", "2", "--db", db,
                  NULL) == 0);
    static const char *const shown[] = {"p4.out", "p4.err", "list.out", "list.err", "front.out",
                                        "front.err"};
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) {
        char *t = tfile_read(tpath(shown[i]), NULL);
        int raw = 0;
        for (const unsigned char *c = (const unsigned char *)(t ? t : ""); *c; c++)
            raw += (*c < 0x20 && *c != '\n') || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f);
        CHECK(raw == 0, "%s: %d raw control characters on the terminal", shown[i], raw);
        free(t);
    }
    CHECK(contains(tpath("list.out"), "x\\x0a!touch"), "the name shown inert in dse list");
    /* ... and such a name is refused where dse would store it. */
    CHECK(dse_run(NULL, tpath("nm.err"), "run", "--network", "toy6", "--platform", "local-2",
                  "--pop", "4", "--gens", "1", "--db", tpath("nm.db"), "--quiet", "--name", evil,
                  NULL) == 2);
    CHECK(contains(tpath("nm.err"), "--name") && !file_exists(tpath("nm.db")));
    CHECK(!file_exists(pwned));
    rm_tdir();
    printf("%s\n", check_failures ? "FAILED" : "ok");
    return check_failures != 0;
}
