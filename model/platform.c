/* platform.c -- reading platform files; see platform.h for the invariant. */
#include "platform.h"
#include "jsonutil.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *cls_names[LINK_CLASS_COUNT] = {"same_device", "same_board", "network"};

const char *plat_kind_name(plat_kind k) { return k == PLAT_GPU ? "gpu" : "cpu"; }
const char *link_class_name(link_class c) { return cls_names[c]; }

void platform_free(platform *p)
{
    if (!p) return;
    for (int i = 0; i < p->ndev; i++) {
        free(p->dev[i].name);
        free(p->dev[i].board);
        free(p->dev[i].energy_sensor);
        free(p->dev[i].arch);
    }
    free(p->dev);
    free(p->link);
    free(p->link_cls);
    free(p->name);
    free(p->description);
    free(p->text);
    free(p);
}

int platform_find(const platform *p, const char *name)
{
    for (int i = 0; i < p->ndev; i++)
        if (strcmp(p->dev[i].name, name) == 0) return i;
    return -1;
}

int platform_board_is_here(const char *board)
{
    char host[256];
    if (!strcmp(board, "localhost") || !strcmp(board, "127.0.0.1") || !strcmp(board, "::1"))
        return 1;
    if (gethostname(host, sizeof host)) return 0;
    host[sizeof host - 1] = 0;
    size_t l = strcspn(host, ".");
    return !strcmp(board, host) || (strlen(board) == l && !strncmp(board, host, l));
}

char *platform_board_host(const char *board, char *buf, size_t len)
{
    if (!len) return buf;
    if (!platform_board_is_here(board) || gethostname(buf, len)) {
        snprintf(buf, len, "%s", platform_board_is_here(board) ? "localhost" : board);
        return buf;
    }
    buf[len - 1] = 0;
    return buf;
}

int platform_restricted(const platform *p)
{
    for (int i = 0; i < p->ndev; i++)
        if (p->dev[i].restricted) return 1;
    return 0;
}

int platform_check_net(const platform *p, const net *n, char *err)
{
    uint64_t any = 0;
    for (int d = 0; d < p->ndev; d++) any |= p->dev[d].supports;
    for (int i = 0; i < n->n; i++)
        if (!(any >> n->layers[i].kind & 1u)) {
            base_seterr(err, "platform %s: no device supports layer %s (%s)", p->name,
                     n->layers[i].name, net_kind_name(n->layers[i].kind));
            return -1;
        }
    return 0;
}

/* "supports": a non-empty list of layer kinds (kinds.def names), each
 * once.  Absent: every kind. */
static int read_supports(const cJSON *o, plat_device *d, const char *ctx, char *err)
{
    _Static_assert(NET_KIND_COUNT <= 64, "supports is a 64-bit mask");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(o, "supports");
    d->supports = NET_KIND_COUNT == 64 ? ~0ull : (1ull << NET_KIND_COUNT) - 1;
    if (!js) return 0;
    if (!cJSON_IsArray(js) || cJSON_GetArraySize(js) < 1) {
        base_seterr(err, "%s: \"supports\" must be a non-empty array of layer kinds", ctx);
        return -1;
    }
    d->restricted = 1;
    d->supports = 0;
    for (const cJSON *c = js->child; c; c = c->next) {
        net_kind k;
        if (!cJSON_IsString(c) || net_kind_parse(c->valuestring, &k)) {
            base_seterr(err, "%s: supports: %s%s%s is not a layer kind (Conv, FC, ReLU, ...)",
                     ctx, cJSON_IsString(c) ? "\"" : "", cJSON_IsString(c) ? c->valuestring : "an entry",
                     cJSON_IsString(c) ? "\"" : "");
            return -1;
        }
        if (d->supports >> k & 1u) {
            base_seterr(err, "%s: supports: %s listed twice", ctx, c->valuestring);
            return -1;
        }
        d->supports |= 1ull << k;
    }
    return 0;
}

int platform_fastest(const platform *p)
{
    int best = 0;
    for (int i = 1; i < p->ndev; i++)
        if (p->dev[i].freq_mhz * p->dev[i].cores > p->dev[best].freq_mhz * p->dev[best].cores)
            best = i;
    return best;
}

int platform_same_board(const platform *p, int a, int b)
{
    return a == b || p->link_cls[a * p->ndev + b] == LINK_SAME_BOARD;
}

int platform_board_cpu(const platform *p, int d, int of)
{
    return p->dev[d].kind == PLAT_CPU && platform_same_board(p, d, of);
}

int platform_board_cpus(const platform *p, int dev)
{
    int n = 0;
    for (int d = 0; d < p->ndev; d++) n += platform_board_cpu(p, d, dev);
    return n;
}

int platform_cpu_pair(const platform *p, int *a, int *b)
{
    for (int i = 0; i < p->ndev; i++)
        for (int j = i + 1; j < p->ndev; j++)
            if (p->dev[i].kind == PLAT_CPU && platform_board_cpu(p, j, i)) {
                *a = i, *b = j;
                return 1;
            }
    return 0;
}

const char *plat_arch_canonical(const char *arch)
{
    static const char *const alias[][2] = {{"arm64", "aarch64"}, {"amd64", "x86_64"}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strcasecmp(arch, alias[i][0]) == 0 || strcasecmp(arch, alias[i][1]) == 0)
            return alias[i][1];
    return arch;
}

int plat_arch_same(const char *a, const char *b)
{
    return strcasecmp(plat_arch_canonical(a), plat_arch_canonical(b)) == 0;
}

/* An architecture name as uname -m prints one: letters, digits, '_', '-',
 * '.', at most 32 characters. */
static int arch_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 32) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("_-.", s[i])) return 0;
    return 1;
}

/* A board is a host name or an address: it goes into mpirun's host file
 * and from there onto ssh's command line, where a leading '-' would be an
 * option and a space or newline another word or host. */
static int host_name_ok(const char *b)
{
    if (!b[0] || b[0] == '-' || b[0] == '.' || strlen(b) > 253) return 0;
    for (const char *p = b; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == '_' || *p == ':'))
            return 0;
    return 1;
}

/* A link object: a class default, or (pair = 1) a per-pair override that
 * also names its two devices "a" and "b". */
static int read_link(const cJSON *o, plat_link *l, int pair, const char *ctx, char *err)
{
    if (!cJSON_IsObject(o)) {
        base_seterr(err, "%s: must be an object with latency_us and bandwidth_mbs", ctx);
        return -1;
    }
    for (const cJSON *c = o->child; c; c = c->next)
        if (strcmp(c->string, "latency_us") && strcmp(c->string, "bandwidth_mbs") &&
            strcmp(c->string, "note") &&
            (!pair || (strcmp(c->string, "a") && strcmp(c->string, "b")))) {
            base_seterr(err, "%s: unknown key \"%s\"", ctx, c->string);
            return -1;
        }
    if (ju_figure(o, "latency_us", &l->latency_us, 1, 1, ctx, err) ||
        ju_figure(o, "bandwidth_mbs", &l->bandwidth_mbs, 1, 0, ctx, err))
        return -1;
    return 0;
}


/* emulate.cpu_limit "pace" (docs/emulated-boards.md): each device of a
 * board whose CPU share is not a whole number of CPUs is paced to it by
 * the runtime (rt_pace), as a CFS quota, coarse at the kernel's tick, ran
 * a board that had waited at full speed.  Other keys of the section are
 * scripts/emulate-boards' to check; "quota" (the default) paces nothing. */
static int read_pace(platform *p, const cJSON *je, const char *what, char *err)
{
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(je, "cpu_limit");
    if (!lim) return 0;
    if (!cJSON_IsString(lim) || (strcmp(lim->valuestring, "quota") && strcmp(lim->valuestring, "pace"))) {
        base_seterr(err, "%s: emulate.cpu_limit must be \"quota\" or \"pace\"", what);
        return -1;
    }
    if (strcmp(lim->valuestring, "pace")) return 0;
    const cJSON *boards = cJSON_GetObjectItemCaseSensitive(je, "boards");
    for (int d = 0; d < p->ndev; d++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(boards, p->dev[d].board);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(b, "cpu");
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0.2 && c->valuedouble <= 64)) {
            base_seterr(err, "%s: emulate.boards.%.100s.cpu must be a CPU share from 0.2 to 64",
                        what, p->dev[d].board);
            return -1;
        }
        double s = c->valuedouble;
        p->dev[d].pace = fabs(s - round(s)) < 1e-9 ? 0 : s;
    }
    return 0;
}

/* "kernels": the machine's part of the convolution rule (convalgo.h). */
static int read_kernels(platform *p, const cJSON *jk, const char *what, char *err)
{
    p->kernels = CONVALGO_RULE_DEFAULT;
    if (!jk) return 0;
    if (!cJSON_IsObject(jk)) {
        base_seterr(err, "%s: \"kernels\" must be an object (docs/platform-format.md)", what);
        return -1;
    }
    for (const cJSON *c = jk->child; c; c = c->next)
        if (strcmp(c->string, "winograd2_max_channel_pairs") && strcmp(c->string, "note")) {
            base_seterr(err, "%s: kernels: unknown key \"%s\"", what, c->string);
            return -1;
        }
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(jk, "note");
    if (jn && !cJSON_IsString(jn)) {
        base_seterr(err, "%s: kernels: \"note\" must be a string", what);
        return -1;
    }
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(jk, "winograd2_max_channel_pairs");
    if (!jp) return 0;
    double v = cJSON_IsNumber(jp) ? jp->valuedouble : -1;
    if (v < 0 || v > 1e15 || v != floor(v)) {
        base_seterr(err, "%s: kernels: \"winograd2_max_channel_pairs\" must be a whole number "
                    "from 0 (no limit) to 1e15", what);
        return -1;
    }
    p->kernels.wino2_max_pairs = (long)v;
    return 0;
}

platform *platform_from_json(const char *text, const char *what, char *err)
{
    cJSON *root = ju_parse(text, what, err);
    if (!root) return NULL;
    platform *p = calloc(1, sizeof *p);
    char ctx[400];
    const char *s = NULL;
    const cJSON *jf = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsObject(root) || !cJSON_IsString(jf) || strcmp(jf->valuestring, "dse-platform")) {
        base_seterr(err, "%s: not a dse platform file (\"format\": \"dse-platform\" "
                 "missing)", what);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "name") && strcmp(c->string, "description") &&
            strcmp(c->string, "devices") && strcmp(c->string, "links") &&
            strcmp(c->string, "source") && strcmp(c->string, "emulate") &&
            strcmp(c->string, "kernels")) {
            base_seterr(err, "%s: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    int version = 1;
    if (ju_int(root, "version", &version, 0, what, err)) goto fail;
    if (version != 1) {
        base_seterr(err, "%s: unsupported platform format version %d", what, version);
        goto fail;
    }
    if (ju_name(root, "name", &s, 0, what, err)) goto fail;
    p->name = strdup(s ? s : "platform");
    s = NULL;
    if (ju_str(root, "description", &s, 0, what, err)) goto fail;
    p->description = base_strdup(s);
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (!cJSON_IsArray(jd) || cJSON_GetArraySize(jd) < 1) {
        base_seterr(err, "%s: platform has no devices (\"devices\" must be a "
                 "non-empty array)", what);
        goto fail;
    }
    if (cJSON_GetArraySize(jd) > PLAT_MAX_DEV) {
        base_seterr(err, "%s: %d devices; dse handles at most %d (device sets are "
                 "64-bit masks in the Plan, the model and the runtime)", what,
                 cJSON_GetArraySize(jd), PLAT_MAX_DEV);
        goto fail;
    }
    p->ndev = cJSON_GetArraySize(jd);
    p->dev = calloc((size_t)p->ndev, sizeof *p->dev);
    int i = 0;
    for (const cJSON *o = jd->child; o; o = o->next, i++) {
        plat_device *d = &p->dev[i];
        const char *name = NULL, *board = NULL, *kind = "cpu", *sensor = NULL, *arch = NULL;
        snprintf(ctx, sizeof ctx, "%s: devices[%d]", what, i);
        if (!cJSON_IsObject(o)) {
            base_seterr(err, "%s: must be an object", ctx);
            goto fail;
        }
        if (ju_str(o, "name", &name, 1, ctx, err)) goto fail;
        if (!name[0]) {
            base_seterr(err, "%s: empty device name", ctx);
            goto fail;
        }
        if (ju_name(o, "name", &name, 1, ctx, err)) goto fail;
        snprintf(ctx, sizeof ctx, "%s: device %s", what, name);
        for (const cJSON *c = o->child; c; c = c->next)
            if (strcmp(c->string, "name") && strcmp(c->string, "board") &&
                strcmp(c->string, "kind") && strcmp(c->string, "freq_mhz") &&
                strcmp(c->string, "cores") && strcmp(c->string, "memory_mb") &&
                strcmp(c->string, "idle_w") && strcmp(c->string, "busy_w") &&
                strcmp(c->string, "energy_sensor") && strcmp(c->string, "arch") &&
                strcmp(c->string, "supports") &&
                strcmp(c->string, "note")) {
                base_seterr(err, "%s: unknown key \"%s\"", ctx, c->string);
                goto fail;
            }
        for (int j = 0; j < i; j++)
            if (strcmp(p->dev[j].name, name) == 0) {
                base_seterr(err, "%s: duplicate device name %s", what, name);
                goto fail;
            }
        d->name = strdup(name);
        if (ju_str(o, "board", &board, 1, ctx, err) || ju_str(o, "kind", &kind, 0, ctx, err) ||
            ju_name(o, "energy_sensor", &sensor, 0, ctx, err) ||
            ju_str(o, "arch", &arch, 0, ctx, err))
            goto fail;
        if (arch && !arch_ok(arch)) {
            base_seterr(err, "%s: \"arch\" must be a CPU architecture as uname -m "
                     "prints it (\"aarch64\", \"x86_64\"), not \"%s\"", ctx, arch);
            goto fail;
        }
        if (!host_name_ok(board)) {
            base_seterr(err, "%s: board \"%.100s\" is not a host name (letters, digits, "
                     "'.', '-', '_' or an IP address; it reaches mpirun's host file and ssh)", ctx,
                     board);
            goto fail;
        }
        d->board = strdup(board);
        d->energy_sensor = base_strdup(sensor);
        d->arch = base_strdup(arch);
        if (read_supports(o, d, ctx, err)) goto fail;
        if (strcmp(kind, "cpu") == 0) d->kind = PLAT_CPU;
        else if (strcmp(kind, "gpu") == 0) d->kind = PLAT_GPU;
        else {
            base_seterr(err, "%s: kind must be \"cpu\" or \"gpu\", not \"%s\"", ctx, kind);
            goto fail;
        }
        d->cores = 1;
        if (ju_figure(o, "freq_mhz", &d->freq_mhz, 1, 0, ctx, err) ||
            ju_int(o, "cores", &d->cores, 1, ctx, err) ||
            ju_figure(o, "memory_mb", &d->memory_mb, 1, 0, ctx, err) ||
            ju_figure(o, "idle_w", &d->idle_w, 1, 1, ctx, err) ||
            ju_figure(o, "busy_w", &d->busy_w, 1, 1, ctx, err))
            goto fail;
        if (d->cores < 1 || d->cores > PLAT_MAX_CORES) {
            base_seterr(err, "%s: \"cores\" must be from 1 to %d", ctx, PLAT_MAX_CORES);
            goto fail;
        }
    }
    /* Links: classes with defaults, then per-pair overrides. */
    p->cls[LINK_SAME_DEVICE] = (plat_link){0.0, 1e12};
    p->cls[LINK_SAME_BOARD] = (plat_link){0, 0};
    p->cls[LINK_NETWORK] = (plat_link){0, 0};
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(root, "links");
    if (!cJSON_IsObject(jl)) {
        base_seterr(err, "%s: \"links\" must be an object with same_board and network",
                 what);
        goto fail;
    }
    for (const cJSON *c = jl->child; c; c = c->next) {
        int known = !strcmp(c->string, "pairs");
        for (int k = 0; k < LINK_CLASS_COUNT; k++) known |= !strcmp(c->string, cls_names[k]);
        if (!known) {
            base_seterr(err, "%s: links: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    }
    for (int k = 0; k < LINK_CLASS_COUNT; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(jl, cls_names[k]);
        snprintf(ctx, sizeof ctx, "%s: links.%s", what, cls_names[k]);
        if (!o) {
            if (k == LINK_SAME_DEVICE) continue;
            /* Only needed if some pair of devices is in this class. */
            continue;
        }
        if (read_link(o, &p->cls[k], 0, ctx, err)) goto fail;
    }
    int n = p->ndev;
    p->link = calloc((size_t)n * n, sizeof *p->link);
    p->link_cls = calloc((size_t)n * n, sizeof *p->link_cls);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            link_class c = a == b ? LINK_SAME_DEVICE
                           : strcmp(p->dev[a].board, p->dev[b].board) == 0 ? LINK_SAME_BOARD
                                                                           : LINK_NETWORK;
            if (c != LINK_SAME_DEVICE && p->cls[c].bandwidth_mbs <= 0) {
                base_seterr(err, "%s: links.%s is missing but devices %s and %s need it",
                         what, cls_names[c], p->dev[a].name, p->dev[b].name);
                goto fail;
            }
            p->link_cls[a * n + b] = c;
            p->link[a * n + b] = p->cls[c];
        }
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(jl, "pairs");
    if (jp && !cJSON_IsArray(jp)) {
        base_seterr(err, "%s: links.pairs must be an array", what);
        goto fail;
    }
    i = 0;
    for (const cJSON *o = jp ? jp->child : NULL; o; o = o->next, i++) {
        const char *an = NULL, *bn = NULL;
        plat_link l;
        snprintf(ctx, sizeof ctx, "%s: links.pairs[%d]", what, i);
        if (!cJSON_IsObject(o)) {
            base_seterr(err, "%s: must be an object", ctx);
            goto fail;
        }
        if (ju_str(o, "a", &an, 1, ctx, err) || ju_str(o, "b", &bn, 1, ctx, err) ||
            read_link(o, &l, 1, ctx, err))
            goto fail;
        int a = platform_find(p, an), b = platform_find(p, bn);
        if (a < 0 || b < 0) {
            base_seterr(err, "%s: unknown device %s", ctx, a < 0 ? an : bn);
            goto fail;
        }
        p->link[a * n + b] = p->link[b * n + a] = l;
    }
    /* Emulated boards (scripts/emulate-boards reads the section's details). */
    const cJSON *je = cJSON_GetObjectItemCaseSensitive(root, "emulate");
    if (je && !cJSON_IsObject(je)) {
        base_seterr(err, "%s: \"emulate\" must be an object (docs/emulated-boards.md)",
                 what);
        goto fail;
    }
    p->emulated = je != NULL;
    if (je && read_pace(p, je, what, err)) goto fail;
    if (read_kernels(p, cJSON_GetObjectItemCaseSensitive(root, "kernels"), what, err)) goto fail;
    const char *src = NULL;
    if (ju_str(root, "source", &src, 0, what, err)) goto fail;
    if (src) {
        p->source = platform_find(p, src);
        if (p->source < 0) {
            base_seterr(err, "%s: source device %s is not a device", what, src);
            goto fail;
        }
    }
    p->text = strdup(text);
    cJSON_Delete(root);
    return p;
fail:
    cJSON_Delete(root);
    platform_free(p);
    return NULL;
}

platform *platform_load(const char *path, char *err)
{
    char *text = ju_read_file(path, err);
    if (!text) return NULL;
    platform *p = platform_from_json(text, path, err);
    free(text);
    return p;
}

/* Preset lookup: $DSE_PLATFORM_DIR, then examples/platforms beside the
 * source tree the program was built from, then ../share/dse/platforms. */
platform *platform_open(const char *name_or_path, char *err)
{
    if (strchr(name_or_path, '/') || strstr(name_or_path, ".json"))
        return platform_load(name_or_path, err);
    char path[PATH_MAX];
    const char *dirs[3] = {getenv("DSE_PLATFORM_DIR"), DSE_SOURCE_DIR "/examples/platforms", NULL};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i]) continue;
        snprintf(path, sizeof path, "%s/%s.json", dirs[i], name_or_path);
        if (access(path, R_OK) == 0) return platform_load(path, err);
    }
    base_seterr(err, "%s: unknown platform (not a preset in examples/platforms "
             "and not a file)", name_or_path);
    return NULL;
}
