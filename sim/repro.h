/* repro: the Lina and ScheMoE papers' experiments as their text sets them up (docs/reproduce.md):
 * each experiment derives its testbeds and models from the shipped ones (GPUs per expert count,
 * every FFN an MoE layer, the dimensions chosen from the paper's figures), runs every policy it
 * compares, baselines included, under each network model, and reports rows of figures (step
 * times and speedups over the baseline, MoE layer times, inference percentiles, ablation gains)
 * beside the papers' own where they publish them. The figures are the model's: nothing is fitted
 * to a paper. Runs scenarios (sim/scenario.h) on worker threads; deterministic for a given
 * experiment and options. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define MS_REPRO_ERROR (ms_repro_error_quark())
GQuark ms_repro_error_quark(void);
typedef enum {
    MS_REPRO_ERROR_UNKNOWN,   /* no experiment of that name */
    MS_REPRO_ERROR_CANCELLED, /* stopped by the cancel flag */
} MsReproError;

/* Called from the worker threads after each finished run, with the runs done and in all. */
typedef void (*MsReproProgressFn)(guint done, guint total, const char *what, gpointer data);

typedef struct {
    gboolean quick; /* the reduced version for CI (its golden: tests/golden/repro-*.json) */
    const char *const *nets; /* network model specs (NULL-terminated); NULL: the experiment's */
    guint threads;           /* worker threads; 0: one per processor */
    const gint *cancel;      /* stop between runs when *cancel != 0 (may be NULL) */
    MsReproProgressFn progress;
    gpointer progress_data;
} MsReproOptions;

typedef struct _MsReproResult MsReproResult;

/* The experiments' names (NULL-terminated, in listing order) and a line on each (NULL when
 * unknown). */
const char *const *ms_repro_names(void);
const char *ms_repro_summary(const char *name);

/* Runs an experiment. NULL with MS_REPRO_ERROR_UNKNOWN (listing the names), _CANCELLED, or the
 * error of the first run that failed, prefixed with what it ran. opts may be NULL. */
MsReproResult *ms_repro_run(const char *name, const MsReproOptions *opts, GError **error);
void ms_repro_result_free(MsReproResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsReproResult, ms_repro_result_free)

const char *ms_repro_result_name(const MsReproResult *res);
guint ms_repro_result_n_rows(const MsReproResult *res);
/* A figure of row i by key (NAN when the row has none). */
double ms_repro_result_figure(const MsReproResult *res, guint row, const char *key);
/* A text field of row i: "model", "policy", "baseline" or "net" (NULL for another key). */
const char *ms_repro_result_text(const MsReproResult *res, guint row, const char *key);

/* {"schema": "moesim.repro/1", "experiment": NAME, "rows": [{"model", "experts", "gpus",
 * "policy", "baseline", "net", the figures...}]} (docs/schemas/repro.schema.json); figures a row
 * lacks are left out, paper figures are "paper_*". */
JsonNode *ms_repro_result_to_json(const MsReproResult *res);
/* The Markdown of the experiment: its setup, then its rows as a table (one column per figure,
 * the paper's beside moesim's), then its summary lines. */
char *ms_repro_result_markdown(const MsReproResult *res);
/* Writes DIR/NAME.md, DIR/NAME.json and the experiment's charts (DIR/NAME-*.png) into dir,
 * created when missing. The charts need gnuplot: without it their scripts are written and
 * MS_PLOT_ERROR_GNUPLOT returned. */
gboolean ms_repro_result_write(const MsReproResult *res, const char *dir, GError **error);

G_END_DECLS
