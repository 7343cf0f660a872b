/* jsonutil.h -- strict typed access to cJSON objects and whole-file I/O,
 * shared by the readers of every dse file format (network, platform,
 * mapping, coefficients).  Each getter returns 0 when the key is absent and
 * not required (leaving *out untouched) or when it read a valid value, and
 * -1 with one line in err (NET_ERRLEN bytes) prefixed by ctx otherwise.
 */
#ifndef DSE_JSONUTIL_H
#define DSE_JSONUTIL_H

#include <cJSON.h>

/* Parse text; on a syntax error, err says where (line, column). */
cJSON *ju_parse(const char *text, const char *what, char *err);
int ju_int(const cJSON *o, const char *key, int *out, int required, const char *ctx, char *err);
/* count integers, each >= minval; a scalar is accepted and repeated. */
int ju_ints(const cJSON *o, const char *key, int count, int *out, int required, int minval,
            const char *ctx, char *err);
int ju_num(const cJSON *o, const char *key, double *out, const char *ctx, char *err);
int ju_num_req(const cJSON *o, const char *key, double *out, int required, double minval,
               const char *ctx, char *err);
int ju_bool(const cJSON *o, const char *key, int *out, const char *ctx, char *err);
int ju_str(const cJSON *o, const char *key, const char **out, int required, const char *ctx,
           char *err);
/* JSON text of item (formatted: indented like cJSON_Print; else one
 * line), malloc'd, NULL when out of memory.  Unlike cJSON_Print, every
 * number is written with the fewest significant digits (15 to 17) that
 * read back to the very same double, so a value stored as JSON and read
 * again is bit-identical (a campaign's reference point, a platform's
 * bandwidth, fitted coefficients).  Non-finite numbers become null. */
char *ju_print(const cJSON *item, int formatted);
/* The same number text into buf (at least JU_NUMLEN bytes). */
enum { JU_NUMLEN = 32 };
void ju_format_double(char *buf, double v);
/* Whole file as a NUL-terminated string (caller frees), or NULL + err. */
char *ju_read_file(const char *path, char *err);
/* Write via a temporary file in the same folder and rename, so a reader
 * never sees a half-written file. */
int ju_write_file_atomic(const char *path, const char *text, char *err);
/* Several files, all or none: a path that is a folder is refused before
 * anything is written; every text goes to a temporary file first; only
 * when all are complete are they renamed into place.  Returns 0; -2 when
 * a path cannot be used (a folder there, a folder missing or not
 * writable: bad usage); -1 when writing failed (disk full: a runtime
 * failure); nothing is left behind either way. */
int ju_write_files_atomic(int n, const char *const *paths, const char *const *texts, char *err);

#endif
