/* tfile.h -- reading files in tests: a whole file, and the first ```json
 * block of a markdown document (so the docs' examples are loaded by the
 * tests and cannot drift from the code). */
#ifndef DSE_TEST_TFILE_H
#define DSE_TEST_TFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, NUL-terminated (caller frees); its length in *len when
 * len is not NULL.  NULL if it cannot be read. */
static inline char *tfile_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* The first ```json block of a markdown file (caller frees), or NULL. */
static inline char *tfile_md_json(const char *path)
{
    char *md = tfile_read(path, NULL);
    if (!md) return NULL;
    char *s = strstr(md, "```json\n"), *e = s ? strstr(s + 8, "```") : NULL;
    char *out = NULL;
    if (s && e) {
        s += 8;
        out = malloc((size_t)(e - s) + 1);
        memcpy(out, s, (size_t)(e - s));
        out[e - s] = 0;
    }
    free(md);
    return out;
}

#endif
