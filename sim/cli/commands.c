/* commands: the table of `moesim` commands. Each command lives in its own cmd_NAME.c. */
#include "cli.h"
#include "commands.h"

const MsCommand ms_commands[] = {
    {"trace", "generate, inspect and import expert-selection traces", ms_cmd_trace},
    {NULL, NULL, NULL},
};
