/* commands: entry points of the commands listed in commands.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* moesim bench --backend cuda (cmd_bench.c) */
int ms_cmd_bench(int argc, char **argv);
int ms_cmd_calibrate(int argc, char **argv);
int ms_cmd_check(int argc, char **argv);
int ms_cmd_collective(int argc, char **argv);
int ms_cmd_compare(int argc, char **argv);
/* moesim exec --backend cpu|cuda SCHEDULE.json (cmd_exec.c) */
int ms_cmd_exec(int argc, char **argv);
int ms_cmd_flows(int argc, char **argv);
/* moesim repro NAME [--quick] (cmd_repro.c) */
int ms_cmd_repro(int argc, char **argv);
int ms_cmd_run(int argc, char **argv);
int ms_cmd_sweep(int argc, char **argv);
/* moesim model list | show NAME|FILE (cmd_model.c) */
int ms_cmd_model(int argc, char **argv);
/* moesim plan ... --out FILE (cmd_plan.c) */
int ms_cmd_plan(int argc, char **argv);
/* moesim topo list | show NAME|FILE (cmd_topo.c) */
int ms_cmd_topo(int argc, char **argv);
int ms_cmd_trace(int argc, char **argv);
int ms_cmd_validate(int argc, char **argv);

G_END_DECLS
