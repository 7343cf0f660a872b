/* main.c -- the `dse` program: dispatches to one subcommand per DESIGN.md
 * section 11.  Each subcommand lives in cmd_NAME.c and owns its options. */
#include "cli.h"

#include <string.h>

static const cli_command commands[] = {
    {"zoo", cmd_zoo, "built-in networks: zoo list | zoo show NAME [--json]"},
    {"net", cmd_net, "network files: net show FILE [--json] | net import | net export"},
    {"platform", cmd_platform, "platform files: platform show FILE|PRESET [--json]"},
    {"space", cmd_space, "genome length and search-space size of a chromosome"},
    {"optimize", cmd_optimize, "the NSGA-II engine on a built-in test problem (zdt1..zdt6, dtlz2, knapsack, tnk)"},
    {"plan", cmd_plan, "the per-device steps of a mapping and the bytes moved [--check]"},
    {"eval", cmd_eval, "evaluate one mapping with the analytical model"},
    {"solve", cmd_solve, "one mapping from a planner (single, greedy, elim, cluster, subgraph, memory)"},
    {"run", cmd_run, "a DSE campaign into the results database; prints its id"},
    {"resume", cmd_resume, "continue an interrupted campaign"},
    {"list", cmd_list, "campaigns of a results database with their status"},
    {"front", cmd_front, "the Pareto front of a campaign [--csv|--json]"},
    {"export", cmd_export, "write a front point's mapping (ours and AutoDiCE's)"},
    {"exhaust", cmd_exhaust, "enumerate a small space, store its exact front"},
    {"plot", cmd_plot, "PNG plots of fronts and convergence via gnuplot"},
    {"exec", cmd_exec, "run a mapping on the MPI runtime (under dse mpirun)"},
    {"mpirun", cmd_mpirun, "launch an MPI job: mpirun with this machine's flags"},
    {"calibrate", cmd_calibrate, "fit the model's coefficients on the boards (launches the runtime)"},
    {"validate", cmd_validate, "run a campaign's best points on the runtime: predicted vs measured"},
    {"calib-worker", cmd_calib_worker, "(internal) the measuring ranks dse calibrate launches"},
};
static const int ncommands = (int)(sizeof commands / sizeof commands[0]);

static void usage(FILE *f)
{
    fprintf(f, "usage: dse COMMAND [options]   (dse COMMAND --help for details)\n\ncommands:\n");
    for (int i = 0; i < ncommands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    for (int i = 0; i < ncommands; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    char t[512];
    fprintf(stderr, "dse: unknown command \"%s\"\n", cli_inert(t, sizeof t, argv[1]));
    usage(stderr);
    return EXIT_USAGE;
}
