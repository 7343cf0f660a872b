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

/* ---- strict lexical check (RFC 8259), before cJSON parses ----
 * cJSON accepts numbers JSON does not ("01", "1."), cuts a string at
 * "\u0000", passes invalid UTF-8 and raw control characters through, and
 * reads 1e999 as infinity.  Every dse file is checked here first, so a
 * reader sees only text that any JSON parser reads the same way. */

typedef struct {
    const char *text, *p, *what;
    char *err;
} lex;

static int lex_fail(lex *L, const char *at, const char *why)
{
    int line = 1, col = 1;
    for (const char *q = L->text; q < at; q++) {
        if (*q == '\n') line++, col = 1;
        else if (((unsigned char)*q & 0xc0) != 0x80) col++; /* characters, not bytes */
    }
    base_seterr(L->err, "%s: malformed JSON at line %d, column %d: %s", L->what, line, col, why);
    return -1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Four hex digits at p: the code unit, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static int lex_string(lex *L)
{
    const char *q = L->p + 1;
    for (;;) {
        unsigned char c = (unsigned char)*q;
        if (!c) {
            int line = 1;
            for (const char *t = L->text; t < q; t++) line += *t == '\n';
            base_seterr(L->err, "%s: malformed JSON: unexpected end of file (truncated?) "
                     "at line %d", L->what, line);
            return -1;
        }
        if (c == '"') break;
        if (c < 0x20) return lex_fail(L, q, "control character in a string (JSON needs it escaped)");
        if (c == '\\') {
            char e = q[1];
            if (e == 'u') {
                long u = hex4(q + 2);
                if (u < 0) return lex_fail(L, q, "\\u needs four hex digits");
                if (u == 0) return lex_fail(L, q, "\\u0000 (a NUL character) in a string");
                if (u >= 0xd800 && u <= 0xdbff) { /* a surrogate pair */
                    long lo = q[6] == '\\' && q[7] == 'u' ? hex4(q + 8) : -1;
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return lex_fail(L, q, "\\u escape of a lone UTF-16 surrogate");
                    q += 6;
                } else if (u >= 0xdc00 && u <= 0xdfff) {
                    return lex_fail(L, q, "\\u escape of a lone UTF-16 surrogate");
                }
                q += 6;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                q += 2;
            } else {
                return lex_fail(L, q, "invalid escape in a string");
            }
            continue;
        }
        if (c < 0x80) {
            q++;
            continue;
        }
        int n = base_utf8_len(q);
        if (!n) return lex_fail(L, q, "invalid UTF-8 in a string");
        q += n;
    }
    L->p = q + 1;
    return 0;
}

static int isdig(char c) { return c >= '0' && c <= '9'; }

static int lex_number(lex *L)
{
    const char *q = L->p, *start = q;
    if (*q == '-') q++;
    if (*q == '0') {
        q++;
        if (isdig(*q)) return lex_fail(L, start, "number with a leading zero");
    } else if (isdig(*q)) {
        while (isdig(*q)) q++;
    } else {
        return lex_fail(L, start, "malformed number");
    }
    if (*q == '.') {
        if (!isdig(*++q)) return lex_fail(L, start, "malformed number (a digit must follow '.')");
        while (isdig(*q)) q++;
    }
    if (*q == 'e' || *q == 'E') {
        if (*++q == '+' || *q == '-') q++;
        if (!isdig(*q)) return lex_fail(L, start, "malformed number (an exponent needs digits)");
        while (isdig(*q)) q++;
    }
    if (isdig(*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-')
        return lex_fail(L, start, "malformed number");
    if (!isfinite(strtod(start, NULL))) return lex_fail(L, start, "number too large for a double");
    L->p = q;
    return 0;
}

static int ju_lex(const char *text, const char *what, char *err)
{
    lex L = {text, text, what, err};
    if ((unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb && (unsigned char)text[2] == 0xbf)
        return lex_fail(&L, text, "byte-order mark at the start (save the file as UTF-8 without BOM)");
    while (*L.p) {
        char c = *L.p;
        if (c == '"') {
            if (lex_string(&L)) return -1;
        } else if (c == '-' || isdig(c)) {
            if (lex_number(&L)) return -1;
        } else {
            L.p++;
        }
    }
    return 0;
}

cJSON *ju_parse(const char *text, const char *what, char *err)
{
    if (ju_lex(text, what, err)) return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root) {
        const cJSON *key = NULL, *in = dup_key(root, &key);
        if (!in) return root;
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
        if (cJSON_IsString(nm) && key != nm)
            base_seterr(err, "%s: %s: duplicate key \"%s\"", what, nm->valuestring,
                     key->string);
        else
            base_seterr(err, "%s: duplicate key \"%s\"", what, key->string);
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
        base_seterr(err, "%s: malformed JSON: unexpected end of file (truncated?) "
                 "at line %d", what, line);
    else
        base_seterr(err, "%s: malformed JSON at line %d, column %d", what, line, col);
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
        base_seterr(err, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    if (!is_integer(v)) {
        base_seterr(err, "%s: \"%s\" must be an integer", ctx, key);
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
        base_seterr(err, "%s: missing \"%s\"", ctx, key);
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
    base_seterr(err, "%s: \"%s\" must be an array of %d integers >= %d", ctx, key,
             count, minval);
    return -1;
}

/* o's key: 1 and *v when present; 0 when absent and optional; -1 with
 * err when absent and required. */
static int ju_lookup(const cJSON *o, const char *key, int required, const cJSON **v,
                     const char *ctx, char *err)
{
    if ((*v = cJSON_GetObjectItemCaseSensitive(o, key))) return 1;
    if (!required) return 0;
    base_seterr(err, "%s: missing \"%s\"", ctx, key);
    return -1;
}

int ju_num_req(const cJSON *o, const char *key, double *out, int required, double minval,
               const char *ctx, char *err)
{
    const cJSON *v;
    int h = ju_lookup(o, key, required, &v, ctx, err);
    if (h <= 0) return h;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < minval) {
        base_seterr(err, "%s: \"%s\" must be a number >= %g", ctx, key, minval);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int ju_num(const cJSON *o, const char *key, double *out, const char *ctx, char *err)
{
    return ju_num_req(o, key, out, 0, -HUGE_VAL, ctx, err);
}

int ju_fig_ok(double v, int zero_ok)
{
    return isfinite(v) && ((zero_ok && v == 0) || (v >= JU_FIG_MIN && v <= JU_FIG_MAX));
}

int ju_figure(const cJSON *o, const char *key, double *out, int required, int zero_ok,
              const char *ctx, char *err)
{
    const cJSON *v;
    int h = ju_lookup(o, key, required, &v, ctx, err);
    if (h <= 0) return h;
    if (!cJSON_IsNumber(v) || !ju_fig_ok(v->valuedouble, zero_ok)) {
        base_seterr(err, "%s: \"%s\" must be %sa number from %g to %g", ctx, key,
                 zero_ok ? "0 or " : "", JU_FIG_MIN, JU_FIG_MAX);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int ju_bool(const cJSON *o, const char *key, int *out, const char *ctx, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) {
        base_seterr(err, "%s: \"%s\" must be true or false", ctx, key);
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
        base_seterr(err, "%s: missing \"%s\"", ctx, key);
        return -1;
    }
    if (!cJSON_IsString(v)) {
        base_seterr(err, "%s: \"%s\" must be a string", ctx, key);
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

int ju_name(const cJSON *o, const char *key, const char **out, int required, const char *ctx,
            char *err)
{
    const char *s = NULL;
    if (ju_str(o, key, &s, required, ctx, err)) return -1;
    if (!s) return 0;
    if (!s[0] || base_has_control(s)) {
        base_seterr(err, "%s: \"%s\" must be a non-empty name without control characters",
                 ctx, key);
        return -1;
    }
    *out = s;
    return 0;
}

char *ju_read_file(const char *path, char *err)
{
    size_t len;
    char *buf = base_read_file(path, JU_READ_MAX, &len, err);
    if (!buf) return NULL;
    if (strlen(buf) != len) {
        char pb[BASE_PATHSHOW + 1];
        free(buf);
        base_seterr(err, "%s: not a text file (contains NUL bytes)", base_path(path, pb));
        return NULL;
    }
    return buf;
}

int ju_write_file_atomic(const char *path, const char *text, char *err)
{
    size_t len = strlen(text);
    char *t = malloc(len + 2);
    if (!t) {
        base_seterr(err, "out of memory");
        return -1;
    }
    memcpy(t, text, len);
    t[len] = '\n';
    int rc = base_write_file(path, t, len + 1, err);
    free(t);
    return rc;
}

int ju_write_files_atomic(int n, const char *const *paths, const char *const *texts, char *err)
{
    /* Every path checked before anything is written (bad usage: -2), then
     * one output set (base/files.c): all renamed into place, or none. */
    if (base_out_check_all(paths, n, err)) return -2;
    base_outset *s = base_outset_new();
    int rc = -1;
    if (!s) base_seterr(err, "out of memory");
    else {
        int k = 0;
        for (; k < n; k++) {
            FILE *f = base_outset_add(s, paths[k], err);
            if (!f) break;
            fputs(texts[k], f); /* a failed write is kept by the stream: commit reports it */
            fputc('\n', f);
        }
        if (k == n) rc = base_outset_commit(s, err);
    }
    base_outset_free(s);
    return rc;
}
