/* layers: per-iteration, per-layer figures of a run, to set beside per-layer measurements. For
 * every layer, phase and GPU: when the layer started, how long it took from its first op's start
 * to its last op's end, and the busy time (the union of op intervals) of each part: attention,
 * gate, host (framework work), dispatch, expert, combine, dense FFN and other (compression,
 * re-planning); plus what the layer processed (local experts, tokens) for fits. Gradient
 * allreduces and weight moves overlap layers and belong to none. Microseconds; simulated and
 * measured runs give the same table. Written as JSON (moesim-layers 1) and CSV
 * (docs/running.md). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "sim/base/output_file.h"
#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"

G_BEGIN_DECLS

#define MS_LAYERS_FORMAT 1

typedef enum {
    MS_LAYER_ATTENTION,
    MS_LAYER_GATE,
    MS_LAYER_HOST,
    MS_LAYER_DISPATCH,
    MS_LAYER_EXPERT,
    MS_LAYER_COMBINE,
    MS_LAYER_FFN,
    MS_LAYER_OTHER,
    MS_LAYER_N_PARTS,
} MsLayerPart;

/* "attention", "gate", "host", "dispatch", "expert", "combine", "ffn", "other"; "?" beyond. */
const char *ms_layer_part_name(MsLayerPart part);
gboolean ms_layer_part_from_name(const char *name, MsLayerPart *out);
/* The part an op of this role counts in; FALSE for roles outside any layer (allreduce, weights,
 * the output head). */
gboolean ms_layer_part_of_role(MsRole role, MsLayerPart *out);

/* One (iteration, layer, phase, GPU): a plain value record. Ops of phase "other" (Lina's
 * re-planning) count in the forward row of their layer. The host time an op carries
 * (MsOpInfo.host_s, its first part) counts in the host part, the rest in the op's own. */
typedef struct {
    guint32 iteration;
    gint32 layer;
    MsPhase phase; /* forward or backward */
    guint32 gpu;
    double start_us; /* the layer's first op start, from the iteration's first op */
    double layer_us; /* last op end - first op start */
    double busy_us;  /* the union of all its ops: layer_us - busy_us is time between ops */
    double part_us[MS_LAYER_N_PARTS];
    guint32 part_ops[MS_LAYER_N_PARTS]; /* ops counted in each part */
    guint32 experts; /* local experts of the layer's expert op (0: a dense layer) */
    guint32 tokens;  /* tokens of its gate or attention op */
} MsLayerRow;

typedef struct _MsLayerTable MsLayerTable;

MsLayerTable *ms_layer_table_new(void);
void ms_layer_table_free(MsLayerTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsLayerTable, ms_layer_table_free)

/* Appends the rows of one executed iteration (numbered iteration), ordered forward then
 * backward, by layer, then by GPU. Ops without a record (not run) are left out. The first call
 * copies the schedule's model, topology, policy, mode and dtype into the table's metadata. */
void ms_layer_table_add(MsLayerTable *t, guint iteration, const MsSchedule *s, const MsRecords *r);
/* Appends one row as given (a reader's, or a measurement's); rows keep the order they came in. */
void ms_layer_table_append(MsLayerTable *t, const MsLayerRow *row);
/* Appends row, or, when the table has a row of its (iteration, layer, phase, gpu), adds its times
 * and op counts to that row's (one layer run several times in an iteration). */
void ms_layer_table_accumulate(MsLayerTable *t, const MsLayerRow *row);
guint ms_layer_table_n_rows(const MsLayerTable *t);
const MsLayerRow *ms_layer_table_row(const MsLayerTable *t, guint i);
/* The row of (iteration, layer, phase, gpu), NULL when the table has none. */
const MsLayerRow *ms_layer_table_find(const MsLayerTable *t, guint iteration, gint layer,
                                      MsPhase phase, guint gpu);
/* Whether row i is the slowest GPU of its (iteration, layer, phase): the longest layer_us, the
 * lowest GPU on a tie. */
gboolean ms_layer_table_slowest(const MsLayerTable *t, guint i);

/* Free-form provenance shown in the outputs (backend, model, policy ...): copied. */
void ms_layer_table_set_meta(MsLayerTable *t, const char *key, const char *value);
const char *ms_layer_table_get_meta(const MsLayerTable *t, const char *key);

/* JSON: {"format": "moesim-layers", "version": 1, "meta": {...}, "parts": [...], "layers": [
 * {"iteration", "layer", "phase", "slowest_gpu", "slowest_us", "gpus": [{"gpu", "start_us",
 * "layer_us", "busy_us", "<part>_us" ..., "experts", "tokens", "<part>_ops" ...}]}]}. */
JsonNode *ms_layer_table_to_json(const MsLayerTable *t);
/* CSV: "# moesim-layers 1", then the header, then one line per row; with column (not NULL) a
 * first column of that name holding value on every line (compare's policy). header FALSE leaves
 * out the version line and the header (a file of several tables). */
void ms_layer_table_write_csv(MsOutputFile *f, const MsLayerTable *t, const char *column,
                              const char *value, gboolean header);
/* Writes the table to path as JSON (".json") or CSV (any other name) through output_file:
 * FALSE with its error, naming the path. */
gboolean ms_layer_table_save(const MsLayerTable *t, const char *path, GError **error);

G_END_DECLS
