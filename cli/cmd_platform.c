/* cmd_platform.c -- `dse platform show FILE|PRESET [--json]`: what a
 * platform file resolves to (devices, the class of every device pair and
 * its latency and bandwidth), so a user can check a file before a campaign.
 * It only reads: the platform module decides every figure.
 */
#include "cli.h"
#include "jsonutil.h"
#include "platform.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Does pair (a, b) differ from its class figures (a per-pair override)? */
static int overridden(const platform *p, int a, int b)
{
    const plat_link *l = platform_link(p, a, b), *c = &p->cls[p->link_cls[a * p->ndev + b]];
    return l->latency_us != c->latency_us || l->bandwidth_mbs != c->bandwidth_mbs;
}

static void show_text(const platform *p)
{
    int n = p->ndev;
    printf("platform %s: %d device%s, network input on %s\n", p->name, n, n == 1 ? "" : "s",
           p->dev[p->source].name);
    printf("%-3s %-16s %-12s %-4s %-8s %9s %6s %10s %7s %7s  %s\n", "#", "device", "board",
           "kind", "arch", "freq_MHz", "cores", "memory_MB", "idle_W", "busy_W", "energy sensor");
    for (int i = 0; i < n; i++) {
        const plat_device *d = &p->dev[i];
        printf("%-3d %-16s %-12s %-4s %-8s %9g %6d %10g %7g %7g  %s\n", i, d->name, d->board,
               plat_kind_name(d->kind), d->arch ? d->arch : "-", d->freq_mhz, d->cores,
               d->memory_mb, d->idle_w, d->busy_w, d->energy_sensor ? d->energy_sensor : "-");
    }
    for (int i = 0; i < n; i++) {
        if (!p->dev[i].restricted) continue;
        printf("%s supports only:", p->dev[i].name);
        for (int k = 0; k < NET_KIND_COUNT; k++)
            if (platform_supports(p, i, (net_kind)k)) printf(" %s", net_kind_name((net_kind)k));
        putchar('\n');
    }
    if (p->kernels.wino2_max_pairs > 0)
        printf("kernels: Winograd F(2x2) on 13x13-19x19 maps below %ld channel pairs (im2col "
               "from there)\n",
               p->kernels.wino2_max_pairs);
    else
        printf("kernels: Winograd F(2x2) without a channel-pairs limit\n");
    printf("link classes:\n");
    for (int c = 0; c < LINK_CLASS_COUNT; c++)
        printf("  %-12s latency %10g us  bandwidth %12g MB/s\n", link_class_name((link_class)c),
               p->cls[c].latency_us, p->cls[c].bandwidth_mbs);
    /* One letter per pair keeps 16 devices readable: D same_device,
     * B same_board, N network; '*' marks a per-pair override. */
    printf("link matrix (D same_device, B same_board, N network, * override):\n    ");
    for (int b = 0; b < n; b++) printf("%3d", b);
    putchar('\n');
    for (int a = 0; a < n; a++) {
        printf("%3d ", a);
        for (int b = 0; b < n; b++)
            printf("  %c%s", "DBN"[p->link_cls[a * n + b]], overridden(p, a, b) ? "*" : "");
        putchar('\n');
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (overridden(p, a, b))
                printf("override %s <-> %s: latency %g us, bandwidth %g MB/s\n", p->dev[a].name,
                       p->dev[b].name, platform_link(p, a, b)->latency_us,
                       platform_link(p, a, b)->bandwidth_mbs);
}

static cJSON *link_json(const plat_link *l, const char *cls)
{
    cJSON *o = cJSON_CreateObject();
    if (cls) cJSON_AddStringToObject(o, "class", cls);
    cJSON_AddNumberToObject(o, "latency_us", l->latency_us);
    cJSON_AddNumberToObject(o, "bandwidth_mbs", l->bandwidth_mbs);
    return o;
}

static void show_json(const platform *p)
{
    int n = p->ndev;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->name);
    if (p->description) cJSON_AddStringToObject(o, "description", p->description);
    cJSON_AddStringToObject(o, "source", p->dev[p->source].name);
    cJSON *ds = cJSON_AddArrayToObject(o, "devices");
    for (int i = 0; i < n; i++) {
        const plat_device *d = &p->dev[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", d->name);
        cJSON_AddStringToObject(j, "board", d->board);
        cJSON_AddStringToObject(j, "kind", plat_kind_name(d->kind));
        cJSON_AddNumberToObject(j, "freq_mhz", d->freq_mhz);
        cJSON_AddNumberToObject(j, "cores", d->cores);
        cJSON_AddNumberToObject(j, "memory_mb", d->memory_mb);
        cJSON_AddNumberToObject(j, "idle_w", d->idle_w);
        cJSON_AddNumberToObject(j, "busy_w", d->busy_w);
        if (d->energy_sensor) cJSON_AddStringToObject(j, "energy_sensor", d->energy_sensor);
        if (d->arch) cJSON_AddStringToObject(j, "arch", d->arch);
        if (d->restricted) {
            cJSON *sup = cJSON_AddArrayToObject(j, "supports");
            for (int k = 0; k < NET_KIND_COUNT; k++)
                if (platform_supports(p, i, (net_kind)k))
                    cJSON_AddItemToArray(sup, cJSON_CreateString(net_kind_name((net_kind)k)));
        }
        cJSON_AddItemToArray(ds, j);
    }
    cJSON *kj = cJSON_AddObjectToObject(o, "kernels");
    cJSON_AddNumberToObject(kj, "winograd2_max_channel_pairs", (double)p->kernels.wino2_max_pairs);
    cJSON *cls = cJSON_AddObjectToObject(o, "classes");
    for (int c = 0; c < LINK_CLASS_COUNT; c++)
        cJSON_AddItemToObject(cls, link_class_name((link_class)c), link_json(&p->cls[c], NULL));
    /* links[a][b]: the resolved link from device a to device b. */
    cJSON *m = cJSON_AddArrayToObject(o, "links");
    for (int a = 0; a < n; a++) {
        cJSON *row = cJSON_CreateArray();
        for (int b = 0; b < n; b++)
            cJSON_AddItemToArray(row, link_json(platform_link(p, a, b),
                                                link_class_name(p->link_cls[a * n + b])));
        cJSON_AddItemToArray(m, row);
    }
    cli_print_json(o);
}

static const char platform_help[] =
    "usage: dse platform show FILE|PRESET [--json]\n"
    "Devices of a platform file (or a preset of examples/platforms, e.g. jetson-nx-8-cpugpu)\n"
    "and the link class, latency and bandwidth between every pair of devices.\n";

int cmd_platform(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "platform", argc, argv, "json", platform_help);
    if (started >= 0) return started;
    if (a.npos == 2 && !strcmp(a.pos[0], "show")) {
        int json = cli_flag(&a, "json");
        if (cli_finish(&a)) return EXIT_USAGE;
        platform *p = platform_open(a.pos[1], err);
        if (!p) {
            cli_error("platform show", "%s", err);
            return EXIT_USAGE;
        }
        if (json) show_json(p);
        else show_text(p);
        platform_free(p);
        return EXIT_OK;
    }
    fputs(platform_help, stderr);
    return EXIT_USAGE;
}
