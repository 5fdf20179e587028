/* inputs: names to objects. The topology and model modules resolve a name themselves (a file
 * when it exists, else a shipped copy); the texts for variants follow the same rule. */
#include "inputs.h"

#include "sim/base/input_file.h"

struct _MsInputs {
    MsInputNames names;
    char *strings[5]; /* the names' copies */
    MsTopology *topology;
    MsCalibration *calibration;
    MsModel *model;
    MsPolicy *policy;
    MsRoutingSource *routing;
};

void
ms_inputs_free(MsInputs *in)
{
    if (in == NULL) {
        return;
    }
    ms_topology_free(in->topology);
    ms_calibration_free(in->calibration);
    ms_model_free(in->model);
    ms_policy_free(in->policy);
    ms_routing_source_free(in->routing);
    for (guint i = 0; i < G_N_ELEMENTS(in->strings); i++) {
        g_free(in->strings[i]);
    }
    g_free(in);
}

MsTopology *
ms_inputs_load_topology(const char *name, const MsCalibration *cal, GError **error)
{
    g_autoptr(MsTopology) topo = ms_topology_load(name, error);
    if (topo == NULL || (cal && !ms_calibration_apply_topology(cal, topo, error))) {
        return NULL;
    }
    return g_steal_pointer(&topo);
}

MsModel *
ms_inputs_load_model(const char *name, const MsCalibration *cal, GError **error)
{
    MsModel *model = ms_model_load(name, error);
    if (model && cal) {
        ms_calibration_apply_model(cal, model);
    }
    return model;
}

static const char *
keep(MsInputs *in, guint slot, const char *name, const char *dflt)
{
    in->strings[slot] = g_strdup(name ? name : dflt);
    return in->strings[slot];
}

MsInputs *
ms_inputs_load(const MsInputNames *names, GError **error)
{
    g_autoptr(MsInputs) in = g_new0(MsInputs, 1);
    in->names.topology = keep(in, 0, names->topology, MS_SCENARIO_TOPOLOGY);
    in->names.model = keep(in, 1, names->model, MS_SCENARIO_MODEL);
    in->names.calibration = keep(in, 2, names->calibration, NULL);
    in->names.policy = keep(in, 3, names->policy, MS_SCENARIO_POLICY);
    in->names.trace = keep(in, 4, names->trace, NULL);
    in->topology = ms_topology_load(in->names.topology, error);
    if (in->topology == NULL) {
        return NULL;
    }
    if (in->names.calibration) {
        in->calibration = ms_calibration_load(in->names.calibration, error);
        if (in->calibration == NULL ||
            !ms_calibration_apply_topology(in->calibration, in->topology, error)) {
            return NULL;
        }
    }
    in->model = ms_inputs_load_model(in->names.model, in->calibration, error);
    in->policy = in->model ? ms_policy_parse(in->names.policy, error) : NULL;
    in->routing = in->policy ? ms_routing_source_new(in->names.trace, error) : NULL;
    if (in->routing == NULL) {
        return NULL;
    }
    return g_steal_pointer(&in);
}

const MsInputNames *
ms_inputs_names(const MsInputs *in)
{
    return &in->names;
}

const MsTopology *
ms_inputs_topology(const MsInputs *in)
{
    return in->topology;
}

MsTopology *
ms_inputs_topology_to_edit(MsInputs *in)
{
    return in->topology;
}

const MsModel *
ms_inputs_model(const MsInputs *in)
{
    return in->model;
}

const MsCalibration *
ms_inputs_calibration(const MsInputs *in)
{
    return in->calibration;
}

const MsPolicy *
ms_inputs_policy(const MsInputs *in)
{
    return in->policy;
}

const MsRoutingSource *
ms_inputs_routing(const MsInputs *in)
{
    return in->routing;
}

void
ms_inputs_fill(const MsInputs *in, MsScenario *sc)
{
    sc->topology = in->topology;
    sc->model = in->model;
    sc->calibration = in->calibration;
    sc->policy = in->policy;
    sc->routing = in->routing;
}

static GBytes *
text_of(const char *name, MsInputKind file_kind, GBytes *shipped, GQuark domain, gint code,
        const char *kind, GError **error)
{
    if (g_file_test(name, G_FILE_TEST_EXISTS)) {
        char *text = NULL;
        gsize len = 0;
        if (!ms_input_file_read(name, file_kind, &text, &len, error)) {
            return NULL;
        }
        return g_bytes_new_take(text, len);
    }
    if (shipped == NULL) {
        g_set_error(error, domain, code, "unknown %s '%s': no such file, and none is shipped", kind,
                    name);
        return NULL;
    }
    return g_bytes_ref(shipped);
}

GBytes *
ms_inputs_topology_text(const char *name, GError **error)
{
    g_autoptr(GBytes) shipped =
        g_file_test(name, G_FILE_TEST_EXISTS) ? NULL : ms_topology_shipped_data(name);
    return text_of(name, MS_INPUT_TOPOLOGY, shipped, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                   "topology", error);
}

GBytes *
ms_inputs_model_text(const char *name, GError **error)
{
    g_autoptr(GBytes) shipped =
        g_file_test(name, G_FILE_TEST_EXISTS) ? NULL : ms_model_shipped_data(name);
    return text_of(name, MS_INPUT_MODEL, shipped, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "model",
                   error);
}
