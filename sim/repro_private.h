/* repro_private: what the repro files share: a run (one policy on one model, testbed, routing and
 * network model, with the figures the scenario does not give: MoE layer times, the slowdown of
 * backward all-to-alls, model-state memory), the rows of a result, the papers' setups
 * (repro_setup.c) and the experiments (repro_lina.c, repro_schemoe.c). */
#pragma once

#include "repro.h"

#include "sim/moe/plan.h"
#include "sim/out/link_timeline.h"
#include "sim/out/result.h"

/* One run. Inputs are texts (or shipped names) loaded by the worker that runs it. */
typedef struct {
    char *label;   /* what it ran, for progress and errors */
    char *tag;     /* the model as rows name it */
    guint experts; /* of the model (GPUs too, where the experiment says so) */
    guint index;   /* the experiment's own: which entry of its table the run is */
    char *model;   /* model INI text, or a shipped name when model_shipped */
    gboolean model_shipped;
    char *topology; /* topology INI text */
    char *trace;    /* routing source spec; NULL: generated with the defaults */
    char *policy;
    char *net;
    MsPlanMode mode;
    guint iterations, warmup;
    guint64 seed;
    gboolean overlap; /* measure the backward all-to-alls' slowdown against running alone */
    const char *timeline_link; /* a link (static name) to record per flow in the detailed
                                * iteration, into timeline; NULL: none */
    MsLinkTimeline *timeline;
    /* outputs */
    MsResult *result;
    double moe_fwd_us, moe_bwd_us; /* MoE blocks per GPU per iteration, summed over MoE layers */
    GArray *slowdowns;             /* double: overlapped backward all-to-alls, time over alone */
    double state_bytes;            /* model states per GPU at the run's expert layout */
    double params;                 /* the model's parameters, every expert counted once */
    guint ep;
} ReproRun;

/* A new run (texts copied); the caller sets the other fields. */
ReproRun *repro_run_new(const char *label, const char *model, gboolean shipped,
                        const char *topology, const char *trace, const char *policy,
                        const char *net, MsPlanMode mode, guint iterations, guint warmup);
void repro_run_free(ReproRun *run);

/* qsort-style order of doubles (for g_array_sort). */
gint repro_compare_double(gconstpointer a, gconstpointer b);

/* Runs every run of runs (ReproRun) on worker threads; FALSE with the first failure. */
gboolean repro_run_all(GPtrArray *runs, const MsReproOptions *opts, GError **error);

/* Per-iteration means from a run's result. */
double repro_step_ms(const ReproRun *run);
double repro_a2a_bwd_ms(const ReproRun *run);
double repro_a2a_ms(const ReproRun *run);
double repro_percentile_ms(const ReproRun *run, double p);
/* Standard deviation over mean of the run's step times. */
double repro_step_spread(const ReproRun *run);

typedef struct {
    char *key;
    double value;
} ReproFigure;

typedef struct {
    char *model, *policy, *baseline, *net;
    char *column; /* the row's column in compact tables (NULL: the policy) */
    guint experts, gpus;
    GArray *figures; /* ReproFigure */
} ReproRow;

typedef struct {
    char *suffix, *key, *ylabel;
} ReproChart;

struct _MsReproResult {
    char *name;
    GPtrArray *rows;            /* ReproRow */
    GPtrArray *setup, *summary; /* char* lines */
    GPtrArray *charts;          /* ReproChart */
    GPtrArray *files;           /* file name, text, ...: the setup's INI files */
    GPtrArray *pivots;          /* key, title, ...: compact tables of one figure */
    MsLinkTimeline *timeline;   /* drawn as NAME-link-timeline.png (+ .csv); NULL: none */
    char *timeline_title;
};

/* A result under construction. */
MsReproResult *repro_result_new(const char *name);
/* Starts a row; figures follow with repro_row_set. experts and gpus 0: not applicable. */
void repro_row(MsReproResult *res, const char *model, guint experts, guint gpus, const char *policy,
               const char *baseline, const char *net);
void repro_row_set(MsReproResult *res, const char *key, double value);
/* The current row's column in compact tables, for a policy whose parameters differ by model. */
void repro_row_column(MsReproResult *res, const char *column);
/* A line of the Markdown's setup (before the table) or summary (after it). */
void repro_setup(MsReproResult *res, const char *format, ...) G_GNUC_PRINTF(2, 3);
void repro_summary(MsReproResult *res, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* A compact table of the figure key in the Markdown, before the full one: a row per model (and
 * experts), a column per policy (or row column) and network model; baseline rows left out. */
void repro_pivot(MsReproResult *res, const char *key, const char *title);
/* An input the experiment ran on, written as DIR/setup/name by ms_repro_result_write so that
 * `moesim run` and `compare` can take it (a name given twice keeps the first). */
void repro_setup_file(MsReproResult *res, const char *name, const char *text);
/* A bar chart of the rows' figure `key` (grouped by model, one bar per policy and net), written
 * as DIR/NAME-suffix.png by ms_repro_result_write. */
void repro_chart(MsReproResult *res, const char *suffix, const char *key, const char *ylabel);

/* The result's link timeline: the run's (taken from it), titled; written as
 * DIR/NAME-link-timeline.csv and a chart of the first all-to-all sharing the link with an
 * allreduce, DIR/NAME-link-timeline.png, by ms_repro_result_write. */
void repro_link_timeline(MsReproResult *res, ReproRun *run, const char *title);

/* Summary lines comparing every network model after the first with the first: per time and
 * speedup figure, the range of its ratio over the same run under the first model and the run
 * furthest from 1 (repro_nets.c). Called once the experiment's rows are complete. */
void repro_net_summary(MsReproResult *res);

/* A network model as rows name it: "nccl 2.10" for the experiments' nccl:version=2.10, any other
 * spec as it is given (so that models given with --net stay apart). */
const char *repro_net_label(const char *net);

/* The network models of the options, or the experiment's (a NULL-terminated list of specs). */
const char *const *repro_nets(const MsReproOptions *opts, const char *const *dflt);

/* --- the papers' setups (repro_setup.c) --- */

/* Lina's testbed with as many GPUs as experts: 2 on one node, 4 one node, 8 two, 16 four. */
char *repro_lina_testbed(guint gpus, GError **error);
/* Lina's models, every FFN an MoE layer (family: "transformer-xl", "gpt2", "bert2gpt2", and for
 * inference "bert-large"); layers 0: the family's; capacity factor 1.0, or none when dropless. */
char *repro_lina_model(const char *family, guint experts, guint layers, gboolean dropless);
/* Tokens per GPU of Lina's runs (the batch chosen from its motivation figures). */
#define REPRO_LINA_TOKENS 14336u

/* --- the experiments --- */

gboolean repro_lina_train(MsReproResult *res, const MsReproOptions *opts, GError **error);
gboolean repro_lina_infer(MsReproResult *res, const MsReproOptions *opts, GError **error);
gboolean repro_lina_motivation(MsReproResult *res, const MsReproOptions *opts, GError **error);
gboolean repro_schemoe_ablation(MsReproResult *res, const MsReproOptions *opts, GError **error);
gboolean repro_schemoe_ct_moe(MsReproResult *res, const MsReproOptions *opts, GError **error);
