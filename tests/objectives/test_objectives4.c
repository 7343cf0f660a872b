/* test_objectives4.c -- a fourth objective is one table row plus its model
 * code (docs/architecture.md): built with four.def, a campaign optimises
 * four objectives, the database gains their columns, the stored values are
 * the model's (recomputed here from the decoded genomes), and dse plot's
 * library draws every pair of them. */
#include "campaign.h"
#include "check.h"
#include "dbq.h"
#include "cost.h"
#include "mapping.h"
#include "plan.h"
#include "results.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_png(const char *path)
{
    unsigned char h[8];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, 8, f) : 0;
    if (f) fclose(f);
    return n == 8 && h[1] == 'P' && h[2] == 'N' && h[3] == 'G';
}

int main(void)
{
    char dir[] = "/tmp/dse-test-obj4-XXXXXX", db[256], out[256], err[BASE_ERRLEN];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(COST_NOBJ == 4 && !strcmp(cost_objectives[3].name, "traffic"));
    snprintf(db, sizeof db, "%s/four.db", dir);
    camp_options o = {"alexnet-bvlc", "jetson-nx-8-cpu", NULL, "hybrid", 2, NULL, 16, 4, 0, 3, 0, "nsga", NULL, NULL};
    camp *c = camp_new(&o, 1, NULL, NULL, err);
    CHECK(c != NULL, "%s", err);
    res_db *r = res_open(db, RES_OPEN_CREATE, err);
    CHECK(r != NULL, "%s", err);
    long long id;
    CHECK(res_campaign_new(r, "four", "nsga", "n", "p", "hybrid", camp_config(c), &id, err) == 0);
    CHECK(camp_drive(c, r, id, 0, NULL, err) == CAMP_FINISHED, "%s", err);
    sqlite3 *h = res_sqlite(r);
    /* The schema's columns follow the table. */
    CHECK(db_int(h, "SELECT count(*) FROM pragma_table_info('individuals') WHERE name='traffic'") == 1);
    CHECK(db_int(h, "SELECT count(*) FROM pragma_table_info('generations') WHERE name='best_traffic'") == 1);
    CHECK(db_int(h, "SELECT count(*) FROM pragma_table_info('validations') WHERE name='meas_traffic'") == 1);
    CHECK(db_int(h, "SELECT count(*) FROM individuals WHERE traffic IS NULL") == 0);
    /* The stored front's fourth objective is the model's bytes moved. */
    res_point *p;
    int n = camp_load_front(r, id, &p, err);
    CHECK(n > 0, "%s", err);
    const net *nt = camp_net(c);
    const platform *pl = camp_platform(c);
    mapping *m = mapping_new(nt->n, pl->ndev);
    plan *pn = plan_new();
    int moving = 0;
    for (int i = 0; i < n; i++) {
        CHECK(camp_decode(c, p[i].genome, m, err) == 0 && plan_build(pn, nt, m, pl->source, err) == 0);
        CHECK(p[i].obj[3] == (double)pn->bytes_moved / 1e6, "point %d: traffic %.17g MB, plan %lld bytes",
              i, p[i].obj[3], (long long)pn->bytes_moved);
        moving += pn->bytes_moved > 0;
    }
    printf("ok: %d front points, %d move bytes; the fourth objective equals each Plan's bytes\n", n, moving);
    res_points_free(p, n);
    plan_free(pn);
    mapping_free(m);
    /* Plots for four objectives: the six pairs and the 3-D view. */
    snprintf(out, sizeof out, "%s/plots", dir);
    res_plot_opts po = {&id, 1, out, -1, NULL, camp_load_front};
    char *list = NULL;
    CHECK(res_plot(r, &po, &list, err) == 0, "%s", err);
    const char *names[4] = {"energy", "memory", "latency", "traffic"};
    int pngs = 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            char f[512];
            snprintf(f, sizeof f, "%s/front-%lld-%s-%s.png", out, id, names[i], names[j]);
            CHECK(is_png(f), "%s missing", f);
            pngs += is_png(f);
        }
    char f[512];
    snprintf(f, sizeof f, "%s/front-%lld.dat", out, id);
    FILE *d = fopen(f, "r");
    char head[256] = "", line[256];
    while (d && fgets(line, sizeof line, d))
        if (strstr(line, "index")) snprintf(head, sizeof head, "%s", line);
    if (d) fclose(d);
    CHECK(strstr(head, "traffic_MB") != NULL, "front data header: %s", head);
    printf("ok: %d pair plots and the 3-D view for four objectives\n", pngs);
    free(list);
    res_close(r);
    camp_free(c);
    if (!check_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd)) {}
    }
    return check_failures != 0;
}
