/* scenario_opts: the command-line options that describe a scenario, shared by run, compare,
 * sweep and plan. */
#pragma once

#include <glib.h>

#include "sim/scenario.h"

G_BEGIN_DECLS

typedef struct {
    char *topology, *model, *trace, *policy, *mode, *calibration, *backend;
    gint iterations, warmup;
    gint64 seed;
    gboolean check;
} MsScenarioOpts;

/* Entries bound to opts (with_policy: include --policy), terminated; owned by the caller. */
GOptionEntry *ms_scenario_opts_entries(MsScenarioOpts *opts, gboolean with_policy);
/* The scenario entries followed by a command's own (own is NULL-terminated); free with g_free. */
GOptionEntry *ms_scenario_opts_with(MsScenarioOpts *opts, gboolean with_policy,
                                    const GOptionEntry *own);
/* Fills sc from the options (strings stay owned by opts). FALSE with a usage message printed. */
gboolean ms_scenario_opts_apply(const MsScenarioOpts *opts, MsScenario *sc);
void ms_scenario_opts_clear(MsScenarioOpts *opts);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsScenarioOpts, ms_scenario_opts_clear)

/* Writes a result's outputs: summary JSON, Chrome trace and CSV of the first iteration, and into
 * plot_dir the run's figures (any may be NULL). */
gboolean ms_cli_write_outputs(MsResult *res, const char *json, const char *chrome, const char *csv,
                              const char *plot_dir, GError **error);

/* A one-line description of a scenario for report headers. */
char *ms_scenario_describe(const MsScenario *sc);

G_END_DECLS
