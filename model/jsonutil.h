/* jsonutil.h -- strict typed access to cJSON objects and whole-file I/O,
 * shared by the readers of every dse file format (network, platform,
 * mapping, coefficients).  Each getter returns 0 when the key is absent and
 * not required (leaving *out untouched) or when it read a valid value, and
 * -1 with one line in err (BASE_ERRLEN bytes) prefixed by ctx otherwise.
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
/* A figure of a platform or coefficients file (a rate, a time, a power, a
 * capacity): finite and either 0 (when zero_ok) or between JU_FIG_MIN and
 * JU_FIG_MAX in the file's units.  The bounds keep every quantity the
 * model derives finite for any network dse accepts (docs/cost-model.md,
 * "Figures"): 2^63 MACs at 1e-9 MACs a cycle on a 1e-9 MHz core drawing
 * 1e12 W is 1e43 J, far from a double's 1.8e308; a denormal or 1e308 is
 * refused, never turned into infinity later. */
#define JU_FIG_MIN 1e-9
#define JU_FIG_MAX 1e12
int ju_fig_ok(double v, int zero_ok);
int ju_figure(const cJSON *o, const char *key, double *out, int required, int zero_ok,
              const char *ctx, char *err);
int ju_bool(const cJSON *o, const char *key, int *out, const char *ctx, char *err);
int ju_str(const cJSON *o, const char *key, const char **out, int required, const char *ctx,
           char *err);
/* A name (of a network, layer, device, board, platform, ...): a non-empty
 * string without control characters (base_has_control), since names reach
 * terminals, plot scripts and other programs' files (docs/security.md). */
int ju_name(const cJSON *o, const char *key, const char **out, int required, const char *ctx,
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
/* Largest file a JSON reader reads (256 MiB: a network of a million
 * layers is far smaller). */
#define JU_READ_MAX (256LL << 20)
/* Whole file as a NUL-terminated string (caller frees), or NULL + err
 * (base_read_file: regular files of at most JU_READ_MAX bytes). */
char *ju_read_file(const char *path, char *err);
/* The text and a newline, written whole or not at all (base_write_file). */
int ju_write_file_atomic(const char *path, const char *text, char *err);
/* Several texts (each with a newline), all or none: every path is checked
 * first (base_out_check_all), then they are written as one base_outset.
 * Returns 0; -2 when a path cannot be used (a folder there, a folder
 * missing or not writable, an input of this process: bad usage); -1 when
 * writing failed (disk full: a runtime failure); nothing is left behind
 * either way. */
int ju_write_files_atomic(int n, const char *const *paths, const char *const *texts, char *err);

#endif
