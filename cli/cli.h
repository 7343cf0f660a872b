/* cli.h -- what the command-line front end shares: option parsing, the
 * subcommand table, and the exit-code convention (0 ok, 1 runtime
 * failure, 2 bad usage or bad input).  Only the CLI prints; libraries
 * return errors.
 */
#ifndef DSE_CLI_H
#define DSE_CLI_H

#include <stdio.h>

#include "base.h"
#include "cost.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Parsed arguments of one subcommand.  Options are `--name value` or, for
 * names listed as flags, `--name`; `--name=value` works too.  Everything
 * else is positional. */
typedef struct {
    const char *cmd;   /* e.g. "zoo show", for messages */
    int nopt;
    const char *key[64];
    const char *val[64]; /* NULL for flags */
    int used[64];
    int npos;
    const char *pos[32];
} cli_args;

/* flags: space-separated names of options that take no value.  Returns 0,
 * or prints a usage line and returns EXIT_USAGE. */
int cli_parse(cli_args *a, const char *cmd, int argc, char **argv, const char *flags);
/* How every command starts: cli_parse with the flags and --help; with
 * --help, prints help on stdout.  Returns -1 to go on, or the exit code to
 * return (EXIT_OK after the help, EXIT_USAGE on a parse error). */
int cli_start(cli_args *a, const char *cmd, int argc, char **argv, const char *flags,
              const char *help);
const char *cli_get(cli_args *a, const char *name);          /* last value or NULL */
int cli_getall(cli_args *a, const char *name, const char **out, int max); /* repeated */
int cli_flag(cli_args *a, const char *name);
/* Integer / double option with a default and a range; prints and returns
 * -1 on a bad value. */
int cli_int(cli_args *a, const char *name, long def, long lo, long hi, long *out);
/* The one reading of an integer on the command line: text is a decimal
 * integer (strtoll's syntax) in [lo, hi], with nothing after it and no
 * overflow (a value past the type's range is refused, not clamped); 0, or
 * -1 (the caller reports). */
int cli_llong(const char *text, long long lo, long long hi, long long *out);
int cli_double(cli_args *a, const char *name, double def, double lo, double hi, double *out);
/* --bench W,R: 0 <= W <= 100000 warm-up and 1 <= R <= 100000 timed runs,
 * nothing else in the text; 0, or -1 (the caller reports). */
int cli_bench(const char *text, int *warm, int *reps);
/* Call after reading every option: unknown options are an error (2). */
int cli_finish(cli_args *a);
/* An objective vector as text: "energy 1.2 J<sep>memory 3 MB<sep>...",
 * each value printed with fmt (e.g. "%.6g"), into buf; returns buf. */
char *cli_objectives(char *buf, size_t n, const double *obj, const char *sep, const char *fmt);
/* An objective vector on stdout, one line each: "  NAME  VALUE UNIT  (LABEL)"
 * (the label when it is not the name)
 * in the table's order (model/objectives.def). */
void cli_print_objectives(const double *obj);
/* Prints a JSON record (indented) on stdout and deletes it; -1 when out of
 * memory (nothing printed). */
struct cJSON;
int cli_print_json(struct cJSON *o);
/* Adds an objective vector to a JSON record under the table's keys
 * (model/objectives.def: "energy_j", "memory_mb", "latency_ms", ...) and,
 * for one release, "mem_mb" beside "memory_mb" (the key dse eval and dse
 * solve printed before 2026-11; docs/cost-model.md).  -1 when out of memory. */
int cli_json_objectives(struct cJSON *o, const double *obj);
/* A string from a file, a database or the command line made inert for the
 * terminal: control characters (C0, DEL and C1: escape sequences,
 * newlines) shown as \xHH, into buf; returns buf (docs/security.md). */
char *cli_inert(char *buf, size_t n, const char *s);
/* Print "dse CMD: message" on stderr (the message made inert). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The outputs of a command, checked after it read its inputs and before
 * it writes anything (docs/exit-codes.md): each path must be usable
 * (base_out_check: its folder exists and is writable; it is absent or a
 * regular file; it is none of the files this process read, through any
 * path) and differ from the others.  NULL entries are skipped.  0, or one
 * line on stderr and EXIT_USAGE.  Every command that writes files calls
 * it (dse exec: the runtime checks its outputs the same way on the ranks). */
int cli_outputs(const char *cmd, const char *const *paths, int n);
/* An output folder (export -o, plot -o): created when missing (its parent
 * must exist; *created = 1 then, so a command that fails can remove it),
 * else a writable folder.  0, or one line and EXIT_USAGE. */
int cli_outdir(const char *cmd, const char *dir, int *created);

/* Subcommands: int cmd_X(int argc, char **argv) with argv[0] = "X". */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cmd_zoo(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_mpirun(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_calib_worker(int argc, char **argv);
int cmd_space(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_platform(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_front(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_exhaust(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
