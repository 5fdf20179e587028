/* commands: the table of `moesim` commands. Each command lives in its own cmd_NAME.c. */
#include "cli.h"
#include "commands.h"

const MsCommand ms_commands[] = {
    {"bench", "run calibration microbenchmarks on GPUs (cuda backend)", ms_cmd_bench},
    {"calibrate", "fit link, collective and GEMM figures to measurements", ms_cmd_calibrate},
    {"check", "fail when schedule quality regressed against a baseline", ms_cmd_check},
    {"collective", "simulate an nccl-tests size sweep of a collective", ms_cmd_collective},
    {"compare", "run several policies on the same inputs and compare them", ms_cmd_compare},
    {"exec", "execute a schedule on the cpu or cuda backend", ms_cmd_exec},
    {"flows", "replay a flow list on a topology", ms_cmd_flows},
    {"model", "list the shipped MoE models or show one", ms_cmd_model},
    {"plan", "plan a training step or inference batch and write its schedule", ms_cmd_plan},
    {"repro", "run the Lina and ScheMoE papers' experiments as they set them up", ms_cmd_repro},
    {"run", "simulate MoE training steps or inference batches under a policy", ms_cmd_run},
    {"sweep", "run a grid of scenarios on worker threads or as a Slurm array job", ms_cmd_sweep},
    {"topo", "list the shipped topologies or show one", ms_cmd_topo},
    {"trace", "generate, inspect and import expert-selection traces", ms_cmd_trace},
    {"validate", "compare simulated with measured times", ms_cmd_validate},
    {NULL, NULL, NULL},
};
