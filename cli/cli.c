/* cli.c -- option parsing shared by every subcommand. */
#include "cli.h"
#include "jsonutil.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

char *cli_inert(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    if (!n) return buf;
    for (; s && *s && k + 9 < n; s++) {
        unsigned char c = (unsigned char)*s, c2 = (unsigned char)s[1];
        if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
        else if (c == 0xc2 && c2 >= 0x80 && c2 <= 0x9f) /* a C1 control (U+0080..U+009F) */
            k += (size_t)snprintf(buf + k, n - k, "\\xc2\\x%02x", c2), s++;
        else buf[k++] = (char)c;
    }
    buf[k] = 0;
    return buf;
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    /* Messages quote file contents, names and paths: one line, inert. */
    char msg[2 * BASE_ERRLEN], out[4 * BASE_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "dse %s: %s\n", cmd, cli_inert(out, sizeof out, msg));
}

char *cli_objectives(char *buf, size_t n, const double *obj, const char *sep, const char *fmt)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < COST_NOBJ && k < n; i++) {
        char v[64];
        snprintf(v, sizeof v, fmt, obj[i]);
        k += (size_t)snprintf(buf + k, n - k, "%s%s %s %s", i ? sep : "", cost_objectives[i].name,
                              v, cost_objectives[i].unit);
    }
    return buf;
}

void cli_print_objectives(const double *obj)
{
    for (int i = 0; i < COST_NOBJ; i++) {
        const cost_objective *o = &cost_objectives[i];
        printf("  %-10s %.6g %s", o->name, obj[i], o->unit);
        if (strcmp(o->label, o->name)) printf("  (%s)", o->label); /* a label that says more */
        putchar('\n');
    }
}

int cli_json_objectives(cJSON *o, const double *obj)
{
    for (int i = 0; i < COST_NOBJ; i++) {
        if (!cJSON_AddNumberToObject(o, cost_objectives[i].key, obj[i])) return -1;
        /* The old spelling stays readable by existing scripts for one release. */
        if (!strcmp(cost_objectives[i].key, "memory_mb") && !cJSON_AddNumberToObject(o, "mem_mb", obj[i]))
            return -1;
    }
    return 0;
}

int cli_print_json(cJSON *o)
{
    char *txt = ju_print(o, 1);
    cJSON_Delete(o);
    if (!txt) return -1;
    puts(txt);
    free(txt);
    return 0;
}

/* Option keys point into argv ("json" of "--json", "k=v" of "--k=v"), so
 * nothing is allocated; a key ends at its '=' if any. */
static int key_eq(const char *key, const char *name)
{
    size_t n = strlen(name);
    return strncmp(key, name, n) == 0 && (key[n] == 0 || key[n] == '=');
}

static int is_flag(const char *flags, const char *name, size_t len)
{
    for (const char *p = flags; p && *p;) {
        const char *e = strchr(p, ' ');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0) return 1;
        p += l;
        while (*p == ' ') p++;
    }
    return 0;
}

int cli_parse(cli_args *a, const char *cmd, int argc, char **argv, const char *flags)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        /* "-o" (one letter, as DESIGN.md writes it) is "--o". */
        int single = s[0] == '-' && ((s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z')) && !s[2];
        if ((strncmp(s, "--", 2) == 0 && s[2]) || single) {
            if (a->nopt == 64) {
                cli_error(cmd, "too many options");
                return EXIT_USAGE;
            }
            const char *name = s + (single ? 1 : 2), *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            a->key[a->nopt] = name;
            if (is_flag(flags, name, len)) {
                if (eq) {
                    cli_error(cmd, "--%.*s takes no value", (int)len, name);
                    return EXIT_USAGE;
                }
                a->val[a->nopt] = NULL;
            } else if (eq) {
                a->val[a->nopt] = eq + 1;
            } else if (i + 1 < argc) {
                a->val[a->nopt] = argv[++i];
            } else {
                cli_error(cmd, "--%s needs a value", name);
                return EXIT_USAGE;
            }
            a->nopt++;
        } else {
            if (a->npos == 32) {
                cli_error(cmd, "too many arguments");
                return EXIT_USAGE;
            }
            a->pos[a->npos++] = s;
        }
    }
    return 0;
}

const char *cli_get(cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->nopt; i++)
        if (key_eq(a->key[i], name) && a->val[i]) {
            a->used[i] = 1;
            v = a->val[i];
        }
    return v;
}

int cli_getall(cli_args *a, const char *name, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < a->nopt; i++)
        if (key_eq(a->key[i], name) && a->val[i]) {
            a->used[i] = 1;
            if (n < max) out[n++] = a->val[i];
        }
    return n;
}

int cli_flag(cli_args *a, const char *name)
{
    int on = 0;
    for (int i = 0; i < a->nopt; i++)
        if (key_eq(a->key[i], name) && !a->val[i]) {
            a->used[i] = 1;
            on = 1;
        }
    return on;
}

int cli_int(cli_args *a, const char *name, long def, long lo, long hi, long *out)
{
    const char *v = cli_get(a, name);
    if (!v) {
        *out = def;
        return 0;
    }
    long long x;
    if (cli_llong(v, lo, hi, &x)) {
        cli_error(a->cmd, "--%s must be an integer in [%ld, %ld], not \"%s\"", name, lo, hi, v);
        return -1;
    }
    *out = (long)x;
    return 0;
}

int cli_llong(const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno || end == text || *end || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

int cli_double(cli_args *a, const char *name, double def, double lo, double hi, double *out)
{
    const char *v = cli_get(a, name);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < lo || x > hi) {
        cli_error(a->cmd, "--%s must be a number in [%g, %g], not \"%s\"", name, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

int cli_finish(cli_args *a)
{
    for (int i = 0; i < a->nopt; i++)
        if (!a->used[i]) {
            cli_error(a->cmd, "unknown option --%.*s (see dse %s --help)",
                      (int)strcspn(a->key[i], "="), a->key[i], a->cmd);
            return EXIT_USAGE;
        }
    return 0;
}

int cli_outputs(const char *cmd, const char *const *paths, int n)
{
    char err[BASE_ERRLEN];
    if (base_out_check_all(paths, n, err)) {
        cli_error(cmd, "%s", err);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_outdir(const char *cmd, const char *dir, int *created)
{
    char err[BASE_ERRLEN];
    if (base_out_dir(dir, created, err)) {
        cli_error(cmd, "%s", err);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_bench(const char *text, int *warm, int *reps)
{
    const char *comma = strchr(text, ',');
    char w0[32];
    long long w, r;
    if (!comma || comma - text >= (long)sizeof w0) return -1;
    snprintf(w0, sizeof w0, "%.*s", (int)(comma - text), text);
    if (cli_llong(w0, 0, 100000, &w) || cli_llong(comma + 1, 1, 100000, &r)) return -1;
    *warm = (int)w;
    *reps = (int)r;
    return 0;
}

int cli_start(cli_args *a, const char *cmd, int argc, char **argv, const char *flags,
              const char *help)
{
    char all[256];
    snprintf(all, sizeof all, "help %s", flags);
    if (cli_parse(a, cmd, argc, argv, all)) return EXIT_USAGE;
    if (cli_flag(a, "help")) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    return -1;
}
