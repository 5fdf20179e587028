/* inputs: the named inputs of a study loaded into objects, in one place: a topology (a shipped
 * name or a file) calibrated by an optional calibration file, a model, a policy spec and a
 * routing source. Every command that runs scenarios (run, compare, sweep, check, plan) loads
 * through here once and hands the objects on; nothing below reloads them. */
#pragma once

#include <glib.h>

#include "sim/calib/calibration.h"
#include "sim/moe/model.h"
#include "sim/policy/policy.h"
#include "sim/routing_source.h"
#include "sim/scenario.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

typedef struct {
    const char *topology;    /* shipped name or file; NULL: MS_SCENARIO_TOPOLOGY */
    const char *model;       /* shipped name or file; NULL: MS_SCENARIO_MODEL */
    const char *calibration; /* file; NULL: the topology's nominal figures */
    const char *policy;      /* "NAME[:key=value,...]"; NULL: MS_SCENARIO_POLICY */
    const char *trace;       /* FILE, sample:NAME, gen:KEY=VALUE,...; NULL: generated */
} MsInputNames;

typedef struct _MsInputs MsInputs;

/* Loads, in this order, the topology, the calibration (applied to the topology), the model, the
 * policy and the routing source; returns NULL with the first error (each module's: they name the
 * file and line or the parameter). */
MsInputs *ms_inputs_load(const MsInputNames *names, GError **error);
void ms_inputs_free(MsInputs *inputs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsInputs, ms_inputs_free)

/* The names loaded, defaults filled in (calibration and trace may be NULL); owned by inputs. */
const MsInputNames *ms_inputs_names(const MsInputs *inputs);
const MsTopology *ms_inputs_topology(const MsInputs *inputs);
/* The topology to change (a what-if's degraded link) before the inputs are handed on. */
MsTopology *ms_inputs_topology_to_edit(MsInputs *inputs);
const MsModel *ms_inputs_model(const MsInputs *inputs);
const MsCalibration *ms_inputs_calibration(const MsInputs *inputs); /* NULL: nominal */
const MsPolicy *ms_inputs_policy(const MsInputs *inputs);
const MsRoutingSource *ms_inputs_routing(const MsInputs *inputs);

/* Sets sc's topology, model, calibration, policy and routing to the loaded objects (borrowed);
 * the other fields are left as they are. */
void ms_inputs_fill(const MsInputs *inputs, MsScenario *sc);

/* The loaders ms_inputs_load uses, for inputs that vary (a sweep's axes). They apply cal (may be
 * NULL): its links to the topology, its framework figures to the model. */
MsTopology *ms_inputs_load_topology(const char *name, const MsCalibration *cal, GError **error);
MsModel *ms_inputs_load_model(const char *name, const MsCalibration *cal, GError **error);
/* The text a named topology or model was loaded from: the file's contents when name is an
 * existing file (read as a topology or model file, sim/base/input_file.h), else the shipped copy
 * (MS_INPUT_FILE_ERROR naming the file, or MS_TOPOLOGY_ERROR / MS_MODEL_ERROR _UNKNOWN for a
 * name that is neither). Free with g_bytes_unref. */
GBytes *ms_inputs_topology_text(const char *name, GError **error);
GBytes *ms_inputs_model_text(const char *name, GError **error);

G_END_DECLS
