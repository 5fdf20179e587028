/* scenario_opts: the command-line options that describe a scenario, shared by run, compare and
 * sweep: they name the inputs (loaded once, sim/inputs.h), set the iterations and choose the
 * runner (the engine, or a backend through cli/backend_runner.h). */
#pragma once

#include <glib.h>

#include "sim/inputs.h"
#include "sim/out/link_timeline.h"
#include "sim/out/result.h"
#include "sim/runner.h"
#include "sim/scenario.h"

G_BEGIN_DECLS

typedef struct {
    char *topology, *model, *trace, *policy, *mode, *calibration, *backend, *net;
    char *gpus, *ranks; /* the routing's ranks on the GPUs (sim/rank_map.h) */
    gint iterations, warmup;
    gint64 seed;
    gboolean check;
    char *engine;    /* flows or classes; NULL: classes */
    char *straggler; /* GPU=FACTOR[,GPU=FACTOR...]: slower GPUs (the engine's pace) */
    char *slow_link; /* LINK=FACTOR[,...]: degraded links (the topology's bandwidth divided) */
    /* A link of the topology to record per flow (set by a command, not an option entry of these;
     * borrowed): ms_scenario_opts_setup makes MsCliScenario.timeline for it. */
    const char *link_timeline;
} MsScenarioOpts;

/* Entries bound to opts (with_policy: include --policy), terminated; owned by the caller. */
/* --gpus and --ranks parsed into map (zeroed first); FALSE with the usage message printed. */
gboolean ms_scenario_opts_rank_map(const char *gpus, const char *ranks, MsRankMap *map);
GOptionEntry *ms_scenario_opts_entries(MsScenarioOpts *opts, gboolean with_policy);
/* The scenario entries followed by a command's own (own is NULL-terminated); free with g_free. */
GOptionEntry *ms_scenario_opts_with(MsScenarioOpts *opts, gboolean with_policy,
                                    const GOptionEntry *own);
void ms_scenario_opts_clear(MsScenarioOpts *opts);

/* --jobs N of run and compare (sweep's --jobs runs points at once instead): the iterations the
 * simulator runs at once, MsScenario.workers. */
#define MS_SCENARIO_JOBS_ENTRY(var)                                                                \
    {                                                                                              \
        "jobs", 'j', 0, G_OPTION_ARG_INT, &(var), MS_SCENARIO_JOBS_HELP, "N"                       \
    }
#define MS_SCENARIO_JOBS_HELP                                                                      \
    "Iterations the simulator runs at once on worker threads (default 1; 0: one per processor); "  \
    "the results are the same for any count"
/* The workers --jobs asks for (0: one per processor); FALSE with cmd's usage message printed
 * when it is out of range. */
gboolean ms_scenario_opts_workers(const char *cmd, gint jobs, guint *workers);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsScenarioOpts, ms_scenario_opts_clear)

/* What the options set up: the loaded inputs, the runner and a scenario on them. */
typedef struct {
    MsInputs *inputs;
    MsRunner *runner;
    MsScenario sc;
    MsLinkTimeline *timeline; /* with opts->link_timeline: filled by the detailed iteration */
    GArray *pace;             /* with --straggler: per GPU (double), the engine's pace */
    GStrv notes;              /* the result's notes of the what-ifs (sc.notes) */
} MsCliScenario;

/* Checks the options (mode, counts: a usage message), loads the inputs they name and makes the
 * runner they choose: the engine (--backend sim or none, with the calibration, the network model
 * of --net, invariant checks
 * with --check-invariants, link series when record_links, the link timeline of
 * opts->link_timeline) or a backend. Returns MS_EXIT_OK, or MS_EXIT_USAGE with the message
 * printed (an unknown link among them, or a link timeline with a backend). */
int ms_scenario_opts_setup(const MsScenarioOpts *opts, gboolean record_links, MsCliScenario *out);
void ms_cli_scenario_clear(MsCliScenario *cs);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsCliScenario, ms_cli_scenario_clear)

/* Creates the folder a file will be written to (nothing for "-" or a bare name). */
gboolean ms_cli_make_parent(const char *path, GError **error);

/* Writes a result's outputs: summary JSON, Chrome trace and CSV of the first iteration, and into
 * plot_dir the run's figures (any may be NULL). */
gboolean ms_cli_write_outputs(MsResult *res, const char *json, const char *chrome, const char *csv,
                              const char *plot_dir, GError **error);

/* A one-line description of the options' scenario for report headers (the names as given). */
char *ms_scenario_describe(const MsScenarioOpts *opts, MsPlanMode mode);

G_END_DECLS
