/* commands: the table of `moesim` commands. Each command lives in its own cmd_NAME.c. */
#include "cli.h"
#include "commands.h"

const MsCommand ms_commands[] = {
    {"bench", "run calibration microbenchmarks on GPUs (cuda backend)", ms_cmd_bench},
    {"collective", "simulate an nccl-tests size sweep of a collective", ms_cmd_collective},
    {"exec", "execute a schedule on the cpu or cuda backend", ms_cmd_exec},
    {"flows", "replay a flow list on a topology", ms_cmd_flows},
    {"topo", "list the shipped topologies or show one", ms_cmd_topo},
    {NULL, NULL, NULL},
};
