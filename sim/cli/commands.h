/* commands: entry points of the commands listed in commands.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* moesim bench --backend cuda (cmd_bench.c) */
int ms_cmd_bench(int argc, char **argv);
int ms_cmd_collective(int argc, char **argv);
/* moesim exec --backend cpu|cuda SCHEDULE.json (cmd_exec.c) */
int ms_cmd_exec(int argc, char **argv);
int ms_cmd_flows(int argc, char **argv);
/* moesim topo list | show NAME|FILE (cmd_topo.c) */
int ms_cmd_topo(int argc, char **argv);

G_END_DECLS
