/* jsonutil.c -- see jsonutil.h. */
#include "jsonutil.h"
#include "net.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First object (depth first) holding a key twice; cJSON keeps both and its
 * getters see only the first, so such a file would be read half silently. */
static const cJSON *dup_key(const cJSON *o, const cJSON **key)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        if (cJSON_IsObject(o))
            for (const cJSON *d = o->child; d != c; d = d->next)
                if (strcmp(d->string, c->string) == 0) {
                    *key = c;
                    return o;
                }
        const cJSON *in = dup_key(c, key);
        if (in) return in;
    }
    return NULL;
}

/* Opening quote of a string still open at the end of text (a file cut
 * inside a string), or NULL. */
static const char *open_string(const char *text)
{
    const char *start = NULL;
    for (const char *p = text; *p; p++) {
        if (start) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') start = NULL;
        } else if (*p == '"') {
            start = p;
        }
    }
    return start;
}

cJSON *ju_parse(const char *text, const char *what, char *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root) {
        const cJSON *key = NULL, *in = dup_key(root, &key);
        if (!in) return root;
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
        if (cJSON_IsString(nm) && key != nm)
            snprintf(err, NET_ERRLEN, "%s: %s: duplicate key \"%s\"", what, nm->valuestring,
                     key->string);
        else
            snprintf(err, NET_ERRLEN, "%s: duplicate key \"%s\"", what, key->string);
        cJSON_Delete(root);
        return NULL;
    }
    const char *at = end ? end : cJSON_GetErrorPtr();
    if (!at) at = text;
    int line = 1, col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') line++, col = 1;
        else col++;
    }
    const char *q = at;
    while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r') q++;
    const char *os = open_string(text);
    if (!*q || (os && at >= os))
        snprintf(err, NET_ERRLEN, "%s: malformed JSON: unexpected end of file (truncated?) "
                 "at line %d", what, line);
    else
        snprintf(err, NET_ERRLEN, "%s: malformed JSON at line %d, column %d", what, line, col);
    return NULL;
}

void ju_format_double(char *buf, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, JU_NUMLEN, "null");
        return;
    }
    /* %.17g always round-trips (IEEE double); fewer digits keep the text
     * as people wrote it (0.1, not 0.10000000000000001) when they do. */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, JU_NUMLEN, "%.*g", digits, v);
        double back = strtod(buf, NULL);
        if (memcmp(&back, &v, sizeof v) == 0) return;
    }
}

/* Turn every number of a (copied) tree into raw text printed exactly. */
static int exact_numbers(cJSON *o)
{
    for (cJSON *c = o; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            char b[JU_NUMLEN];
            ju_format_double(b, c->valuedouble);
            char *raw = strdup(b);
            if (!raw) return -1;
            c->type = cJSON_Raw;
            c->valuestring = raw;
        } else if (c->child && exact_numbers(c->child)) {
            return -1;
        }
    }
    return 0;
}

char *ju_print(const cJSON *item, int formatted)
{
    if (!item) return NULL;
    cJSON *copy = cJSON_Duplicate(item, 1);
    if (!copy) return NULL;
    /* a duplicate has no siblings: exact_numbers walks it alone */
    char *txt = exact_numbers(copy) ? NULL : formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return txt;
}

static int is_integer(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
           fabs(v->valuedouble) < 2147483647.0;
}

int ju_int(const cJSON *o, const char *key, int *out, int required, const char *ctx, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required) return 0;
        snprintf(err, NET_ERRLEN, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    if (!is_integer(v)) {
        snprintf(err, NET_ERRLEN, "%s: \"%s\" must be an integer", ctx, key);
        return -1;
    }
    *out = (int)v->valuedouble;
    return 0;
}

int ju_ints(const cJSON *o, const char *key, int count, int *out, int required, int minval,
            const char *ctx, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required) return 0;
        snprintf(err, NET_ERRLEN, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    int tmp[16];
    if (is_integer(v)) {
        for (int i = 0; i < count; i++) tmp[i] = (int)v->valuedouble;
    } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == count) {
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++) {
            if (!is_integer(c)) goto bad;
            tmp[i] = (int)c->valuedouble;
        }
    } else {
        goto bad;
    }
    for (int i = 0; i < count; i++)
        if (tmp[i] < minval) goto bad;
    memcpy(out, tmp, (size_t)count * sizeof *out);
    return 0;
bad:
    snprintf(err, NET_ERRLEN, "%s: \"%s\" must be an array of %d integers >= %d", ctx, key,
             count, minval);
    return -1;
}

int ju_num_req(const cJSON *o, const char *key, double *out, int required, double minval,
               const char *ctx, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required) return 0;
        snprintf(err, NET_ERRLEN, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < minval) {
        snprintf(err, NET_ERRLEN, "%s: \"%s\" must be a number >= %g", ctx, key, minval);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int ju_num(const cJSON *o, const char *key, double *out, const char *ctx, char *err)
{
    return ju_num_req(o, key, out, 0, -HUGE_VAL, ctx, err);
}

int ju_bool(const cJSON *o, const char *key, int *out, const char *ctx, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) {
        snprintf(err, NET_ERRLEN, "%s: \"%s\" must be true or false", ctx, key);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

int ju_str(const cJSON *o, const char *key, const char **out, int required, const char *ctx,
           char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required) return 0;
        snprintf(err, NET_ERRLEN, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    if (!cJSON_IsString(v)) {
        snprintf(err, NET_ERRLEN, "%s: \"%s\" must be a string", ctx, key);
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

char *ju_read_file(const char *path, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, NET_ERRLEN, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
            }
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        free(buf);
        snprintf(err, NET_ERRLEN, "%s: read error", path);
        return NULL;
    }
    buf[len] = 0;
    if (strlen(buf) != len) {
        free(buf);
        snprintf(err, NET_ERRLEN, "%s: not a text file (contains NUL bytes)", path);
        return NULL;
    }
    return buf;
}

int ju_write_file_atomic(const char *path, const char *text, char *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, NET_ERRLEN, "%s: cannot write: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    size_t len = strlen(text);
    int ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, NET_ERRLEN, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int ju_write_files_atomic(int n, const char *const *paths, const char *const *texts, char *err)
{
    struct stat st;
    for (int k = 0; k < n; k++)
        if (stat(paths[k], &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(err, NET_ERRLEN, "%s: cannot write: is a folder", paths[k]);
            return -2;
        }
    char **tmp = calloc((size_t)n + 1, sizeof *tmp);
    int rc = tmp ? 0 : -1, k;
    if (!tmp) snprintf(err, NET_ERRLEN, "%s: out of memory", n ? paths[0] : "");
    for (k = 0; k < n && rc == 0; k++) {
        size_t len = strlen(paths[k]) + 32;
        if (!(tmp[k] = malloc(len))) {
            snprintf(err, NET_ERRLEN, "%s: out of memory", paths[k]);
            rc = -1;
            break;
        }
        snprintf(tmp[k], len, "%s.tmp.%ld", paths[k], (long)getpid());
        FILE *f = fopen(tmp[k], "wb");
        if (!f) { /* a missing or unwritable folder: the path cannot be used */
            snprintf(err, NET_ERRLEN, "%s: cannot write: %s", paths[k], strerror(errno));
            rc = -2;
            break;
        }
        size_t tl = strlen(texts[k]);
        int ok = fwrite(texts[k], 1, tl, f) == tl && fputc('\n', f) != EOF;
        ok = (fclose(f) == 0) && ok;
        if (!ok) {
            snprintf(err, NET_ERRLEN, "%s: cannot write: %s", paths[k], strerror(errno));
            rc = -1;
        }
    }
    for (k = 0; k < n && rc == 0; k++)
        if (rename(tmp[k], paths[k]) != 0) {
            snprintf(err, NET_ERRLEN, "%s: cannot write: %s", paths[k], strerror(errno));
            rc = -1;
        }
    for (k = 0; tmp && k < n; k++) {
        if (tmp[k]) unlink(tmp[k]); /* the ones not renamed */
        free(tmp[k]);
    }
    free(tmp);
    return rc;
}
