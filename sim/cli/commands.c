/* commands: the table of `moesim` commands. Each command lives in its own cmd_NAME.c. */
#include "cli.h"
#include "commands.h"

const MsCommand ms_commands[] = {
    {"topo", "list the shipped topologies or show one", ms_cmd_topo},
    {NULL, NULL, NULL},
};
