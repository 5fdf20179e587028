/* sweep_variants: tables of loaded objects indexed by the values of the axes that pick them
 * (topology x nodes x slow-link, model x experts, policy x chunk, straggler x slow-link for the
 * notes, net), filled before the points run. */
#include "sweep_variants.h"

#include <string.h>

#include "sim/what_if.h"

G_DEFINE_QUARK(ms_sweep_variants_error_quark, ms_sweep_variants_error)

struct _MsSweepVariants {
    const MsInputs *base;
    const MsSweepGrid *grid;
    gint ax_topology, ax_nodes, ax_model, ax_experts, ax_policy, ax_chunk;
    gint ax_mode, ax_iterations, ax_seed, ax_straggler, ax_slow_link, ax_net;
    /* Indexed by (first axis value) x (second axis value) [x (third)]; an absent axis has one
     * value. */
    const MsTopology **topologies;
    const MsModel **models;
    const MsPolicy **policies;
    GPtrArray *paces; /* per straggler value: GArray of double, the engine's pace per GPU */
    MsNetSpec *nets;  /* per net value: the network model's spec */
    /* Per straggler value and per slow-link value: a GPtrArray of its own notes (char *). */
    GPtrArray *straggler_notes, *link_notes;
    GPtrArray *notes; /* per straggler x slow-link value: GStrv, the settings' notes and theirs */
    GPtrArray *owned; /* what the tables hold that base does not: freed with the variants */
    GArray *routing_axes; /* gint, in axis order */
};

typedef void (*FreeFn)(gpointer);

/* One object of the tables and how it is freed. */
typedef struct {
    gpointer object;
    FreeFn free;
} Owned;

static void
owned_free(gpointer p)
{
    Owned *o = p;
    o->free(o->object);
    g_free(o);
}

static gpointer
own(MsSweepVariants *v, gpointer object, FreeFn free_fn)
{
    Owned *o = g_new(Owned, 1);
    *o = (Owned){object, free_fn};
    g_ptr_array_add(v->owned, o);
    return object;
}

void
ms_sweep_variants_free(MsSweepVariants *v)
{
    if (v == NULL) {
        return;
    }
    g_free(v->topologies);
    g_free(v->models);
    g_free(v->policies);
    g_ptr_array_unref(v->paces);
    g_free(v->nets);
    g_ptr_array_unref(v->straggler_notes);
    g_ptr_array_unref(v->link_notes);
    g_ptr_array_unref(v->notes);
    g_ptr_array_unref(v->owned);
    g_array_unref(v->routing_axes);
    g_free(v);
}

static guint
n_of(const MsSweepVariants *v, gint axis)
{
    return axis >= 0 ? ms_sweep_grid_n_values(v->grid, (guint)axis) : 1;
}

static const char *
value_of(const MsSweepVariants *v, gint axis, guint index, const char *dflt)
{
    return axis >= 0 ? ms_sweep_grid_axis_value(v->grid, (guint)axis, index) : dflt;
}

char *
ms_sweep_variants_ini_with(const char *text, gsize len, const char *group, const char *key,
                           const char *value, const char *name_group, const char *name,
                           GError **error)
{
    g_autofree char *copy = g_strndup(text, len);
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    g_autofree char *current = NULL;
    gboolean replaced = FALSE;
    for (guint i = 0; lines[i]; i++) {
        g_autofree char *t = g_strstrip(g_strdup(lines[i]));
        if (t[0] == '[' && g_str_has_suffix(t, "]")) {
            g_free(current);
            current = g_strstrip(g_strndup(t + 1, strlen(t) - 2));
            continue;
        }
        const char *eq = strchr(t, '=');
        if (current == NULL || eq == NULL || t[0] == '#' || t[0] == ';') {
            continue;
        }
        g_autofree char *k = g_strstrip(g_strndup(t, eq - t));
        if (!strcmp(current, group) && !strcmp(k, key)) {
            g_free(lines[i]);
            lines[i] = g_strdup_printf("%s = %s", key, value);
            replaced = TRUE;
        } else if (!strcmp(current, name_group) && !strcmp(k, "name")) {
            g_free(lines[i]);
            lines[i] = g_strdup_printf("name = %s", name);
        }
    }
    if (!replaced) {
        g_set_error(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_VALUE,
                    "no '%s' key in [%s] to vary", key, group);
        return NULL;
    }
    return g_strjoinv("\n", lines);
}

/* "BASE-KEYVALUE": the variant's name (the file name without .ini for a file). */
static char *
variant_name(const char *name, const char *key, const char *value)
{
    g_autofree char *base = g_path_get_basename(name);
    if (g_str_has_suffix(base, ".ini")) {
        base[strlen(base) - 4] = '\0';
    }
    return g_strdup_printf("%s-%s%s", base, key, value);
}

typedef gpointer (*LoadDataFn)(const char *data, gsize len, const char *source, GError **error);

/* The variant of input `name` (text) with key = value; NULL with the error, which names it. */
static gpointer
make_variant(const char *kind, const char *name, GBytes *text, const char *group, const char *key,
             const char *value, LoadDataFn load, GError **error)
{
    g_autofree char *vname = variant_name(name, key, value);
    gsize len = 0;
    const char *data = g_bytes_get_data(text, &len);
    g_autofree char *edited =
        ms_sweep_variants_ini_with(data, len, group, key, value, kind, vname, error);
    if (edited == NULL) {
        g_prefix_error(error, "sweep: %s=%s: %s '%s': ", key, value, kind, name);
        return NULL;
    }
    g_autofree char *source = g_strdup_printf("%s %s with %s=%s", kind, name, key, value);
    gpointer object = load(edited, strlen(edited), source, error);
    if (object == NULL) {
        g_prefix_error(error, "sweep: ");
    }
    return object;
}

static gpointer
load_topology_data(const char *data, gsize len, const char *source, GError **error)
{
    return ms_topology_load_data(data, len, source, error);
}

static gpointer
load_model_data(const char *data, gsize len, const char *source, GError **error)
{
    return ms_model_load_data(data, len, source, error);
}

/* Cell (t, n) of the topology table, loaded: the named topology (or the base's name) calibrated
 * as the base was, or its nodes variant built from text (NULL without a nodes axis). */
static MsTopology *
load_cell(MsSweepVariants *v, const char *name, GBytes *text, guint n, GError **error)
{
    const MsCalibration *cal = ms_inputs_calibration(v->base);
    if (text == NULL) {
        MsTopology *topo = ms_inputs_load_topology(name, cal, error);
        if (topo == NULL) {
            g_prefix_error(error, "sweep: topology=%s: ", name);
        }
        return topo;
    }
    const char *nodes = value_of(v, v->ax_nodes, n, NULL);
    MsTopology *topo =
        make_variant("topology", name, text, "preset", "nodes", nodes, load_topology_data, error);
    if (topo && cal && !ms_calibration_apply_topology(cal, topo, error)) {
        g_clear_pointer(&topo, ms_topology_free);
    }
    return topo;
}

/* Topology x nodes x slow-link. Each slow-link value, read as --slow-link reads it, slows its own
 * copy of each (topology, nodes) cell, loaded again; its notes are those of the first cell (a
 * nodes variant has the same links at the same figures, and a link it lacks is refused). The
 * slow-link axis goes with no topology axis: a link's name is one topology's. */
static gboolean
build_topologies(MsSweepVariants *v, GError **error)
{
    guint nt = n_of(v, v->ax_topology), nn = n_of(v, v->ax_nodes), ns = n_of(v, v->ax_slow_link);
    v->topologies = g_new0(const MsTopology *, nt *nn *ns);
    if (v->ax_topology < 0 && v->ax_nodes < 0 && v->ax_slow_link < 0) {
        v->topologies[0] = ms_inputs_topology(v->base);
        return TRUE;
    }
    if (v->ax_slow_link >= 0 && v->ax_topology >= 0) {
        g_set_error(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_AXIS,
                    "sweep: slow-link names links of one topology: it does not go with a "
                    "topology axis");
        return FALSE;
    }
    for (guint t = 0; t < nt; t++) {
        const char *name = value_of(v, v->ax_topology, t, ms_inputs_names(v->base)->topology);
        g_autoptr(GBytes) text = v->ax_nodes >= 0 ? ms_inputs_topology_text(name, error) : NULL;
        if (v->ax_nodes >= 0 && text == NULL) {
            return FALSE;
        }
        for (guint n = 0; n < nn; n++) {
            for (guint k = 0; k < ns; k++) {
                MsTopology *topo = load_cell(v, name, text, n, error);
                if (topo == NULL) {
                    return FALSE;
                }
                v->topologies[(t * nn + n) * ns + k] = own(v, topo, (FreeFn)ms_topology_free);
                if (v->ax_slow_link < 0) {
                    continue;
                }
                g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
                const char *value = value_of(v, v->ax_slow_link, k, NULL);
                if (!ms_what_if_slow_links("sweep: slow-link", value, topo, notes, error)) {
                    return FALSE; /* the message names the variant */
                }
                if (n == 0) {
                    g_ptr_array_add(v->link_notes, g_steal_pointer(&notes));
                }
            }
        }
    }
    return TRUE;
}

static gboolean
build_models(MsSweepVariants *v, GError **error)
{
    guint nm = n_of(v, v->ax_model), ne = n_of(v, v->ax_experts);
    v->models = g_new0(const MsModel *, nm *ne);
    if (v->ax_model < 0 && v->ax_experts < 0) {
        v->models[0] = ms_inputs_model(v->base);
        return TRUE;
    }
    for (guint m = 0; m < nm; m++) {
        const char *name = value_of(v, v->ax_model, m, ms_inputs_names(v->base)->model);
        if (v->ax_experts < 0) {
            MsModel *model = ms_inputs_load_model(name, ms_inputs_calibration(v->base), error);
            if (model == NULL) {
                g_prefix_error(error, "sweep: model=%s: ", name);
                return FALSE;
            }
            v->models[m] = own(v, model, (FreeFn)ms_model_free);
            continue;
        }
        g_autoptr(GBytes) text = ms_inputs_model_text(name, error);
        if (text == NULL) {
            return FALSE;
        }
        for (guint e = 0; e < ne; e++) {
            const char *experts = value_of(v, v->ax_experts, e, NULL);
            MsModel *model = make_variant("model", name, text, "model", "experts", experts,
                                          load_model_data, error);
            if (model == NULL) {
                return FALSE;
            }
            if (ms_inputs_calibration(v->base)) {
                ms_calibration_apply_model(ms_inputs_calibration(v->base), model);
            }
            v->models[m * ne + e] = own(v, model, (FreeFn)ms_model_free);
        }
    }
    return TRUE;
}

/* Whether a policy spec's policy takes a parameter. */
static gboolean
policy_takes(const char *spec, const char *param)
{
    g_autofree char *name = g_strdup(spec);
    char *colon = strchr(name, ':');
    if (colon) {
        *colon = '\0';
    }
    const MsPolicyClass *cls = ms_policy_class(name);
    for (guint i = 0; cls && cls->params && cls->params[i].key; i++) {
        if (!strcmp(cls->params[i].key, param)) {
            return TRUE;
        }
    }
    return FALSE;
}

/* A chunk axis over a policy that takes no chunk would label its rows with a chunk it ignored. */
static gboolean
check_chunk(const char *spec, const char *chunk, GError **error)
{
    if (policy_takes(spec, "chunk")) {
        return TRUE;
    }
    g_autoptr(GPtrArray) takers = g_ptr_array_new();
    for (const char *const *n = ms_policy_names(); *n; n++) {
        if (policy_takes(*n, "chunk")) {
            g_ptr_array_add(takers, (gpointer)*n);
        }
    }
    g_ptr_array_add(takers, NULL);
    g_autofree char *list = g_strjoinv(", ", (char **)takers->pdata);
    g_autofree char *name = g_strndup(spec, strcspn(spec, ":"));
    g_set_error(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_AXIS,
                "sweep: chunk=%s: policy %s takes no chunk (the policies that do: %s)", chunk, name,
                list);
    return FALSE;
}

static gboolean
build_policies(MsSweepVariants *v, GError **error)
{
    guint np = n_of(v, v->ax_policy), nc = n_of(v, v->ax_chunk);
    v->policies = g_new0(const MsPolicy *, np *nc);
    if (v->ax_policy < 0 && v->ax_chunk < 0) {
        v->policies[0] = ms_inputs_policy(v->base);
        return TRUE;
    }
    for (guint p = 0; p < np; p++) {
        const char *spec = value_of(v, v->ax_policy, p, ms_inputs_names(v->base)->policy);
        for (guint c = 0; c < nc; c++) {
            const char *chunk = value_of(v, v->ax_chunk, c, NULL);
            if (chunk && !check_chunk(spec, chunk, error)) {
                return FALSE;
            }
            g_autofree char *full =
                chunk ? g_strdup_printf("%s%schunk=%s", spec, strchr(spec, ':') ? "," : ":", chunk)
                      : g_strdup(spec);
            MsPolicy *policy = ms_policy_parse(full, error);
            if (policy == NULL) {
                g_prefix_error(error, "sweep: %s: ", full);
                return FALSE;
            }
            v->policies[p * nc + c] = own(v, policy, (FreeFn)ms_policy_free);
        }
    }
    return TRUE;
}

/* Each straggler value read as --straggler reads it, for the GPUs the points use (the axis goes
 * with no topology or nodes axis: cmd_sweep refuses those, and the sweep of one topology is all
 * this checks against). */
static gboolean
build_stragglers(MsSweepVariants *v, const MsScenario *settings, GError **error)
{
    if (v->ax_straggler < 0) {
        return TRUE;
    }
    const MsTopology *topo = ms_inputs_topology(v->base);
    MsRankMap none = {0};
    guint used = 0;
    if (!ms_rank_map_gpus_used(settings ? &settings->ranks : &none, ms_topology_n_gpus(topo),
                               ms_topology_name(topo), &used, error)) {
        return FALSE;
    }
    for (guint i = 0; i < n_of(v, v->ax_straggler); i++) {
        const char *value = value_of(v, v->ax_straggler, i, NULL);
        GPtrArray *notes = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(v->straggler_notes, notes);
        GArray *pace = NULL;
        if (!ms_what_if_stragglers("sweep: straggler", value, used, &pace, notes, error)) {
            return FALSE;
        }
        g_ptr_array_add(v->paces, pace);
    }
    return TRUE;
}

/* Each net value read as --net reads it, and a model of it built on every topology of the grid
 * and dropped, so that a spec the topology's GPUs cannot run (an architecture NCCL's model does
 * not know, a refused NVLink bundle) stops the sweep before any point runs. */
static gboolean
build_nets(MsSweepVariants *v, GError **error)
{
    guint n = n_of(v, v->ax_net);
    v->nets = g_new(MsNetSpec, n);
    guint n_topologies = n_of(v, v->ax_topology) * n_of(v, v->ax_nodes) * n_of(v, v->ax_slow_link);
    for (guint i = 0; i < n && v->ax_net >= 0; i++) {
        const char *value = value_of(v, v->ax_net, i, NULL);
        if (!ms_net_spec_parse(value, &v->nets[i], error)) {
            g_prefix_error(error, "sweep: net=%s: ", value);
            return FALSE;
        }
        for (guint t = 0; t < n_topologies; t++) {
            g_autoptr(MsNetModel) model = ms_net_model_new(&v->nets[i], v->topologies[t], error);
            if (model == NULL) {
                g_prefix_error(error, "sweep: net=%s: topology '%s': ", value,
                               ms_topology_name(v->topologies[t]));
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* The notes of each straggler x slow-link pair of values: the settings', the straggler's, the
 * slow links'. None without either axis (the point keeps the settings' own). */
static void
build_notes(MsSweepVariants *v, const MsScenario *settings)
{
    if (v->ax_straggler < 0 && v->ax_slow_link < 0) {
        return;
    }
    for (guint i = 0; i < n_of(v, v->ax_straggler); i++) {
        for (guint s = 0; s < n_of(v, v->ax_slow_link); s++) {
            GPtrArray *notes = g_ptr_array_new();
            for (guint k = 0; settings && settings->notes && settings->notes[k]; k++) {
                g_ptr_array_add(notes, g_strdup(settings->notes[k]));
            }
            const GPtrArray *theirs[] = {
                v->ax_straggler >= 0 ? v->straggler_notes->pdata[i] : NULL,
                v->ax_slow_link >= 0 ? v->link_notes->pdata[s] : NULL,
            };
            for (guint o = 0; o < G_N_ELEMENTS(theirs); o++) {
                for (guint k = 0; theirs[o] && k < theirs[o]->len; k++) {
                    g_ptr_array_add(notes, g_strdup(theirs[o]->pdata[k]));
                }
            }
            g_ptr_array_add(notes, NULL);
            g_ptr_array_add(v->notes, g_ptr_array_free(notes, FALSE));
        }
    }
}

MsSweepVariants *
ms_sweep_variants_new(const MsInputs *base, const MsSweepGrid *grid, const MsScenario *settings,
                      GError **error)
{
    g_autoptr(MsSweepVariants) v = g_new0(MsSweepVariants, 1);
    v->base = base;
    v->grid = grid;
    v->owned = g_ptr_array_new_with_free_func(owned_free);
    v->paces = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    v->straggler_notes = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    v->link_notes = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    v->notes = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    v->routing_axes = g_array_new(FALSE, FALSE, sizeof(gint));
    v->ax_topology = ms_sweep_grid_find(grid, "topology");
    v->ax_nodes = ms_sweep_grid_find(grid, "nodes");
    v->ax_model = ms_sweep_grid_find(grid, "model");
    v->ax_experts = ms_sweep_grid_find(grid, "experts");
    v->ax_policy = ms_sweep_grid_find(grid, "policy");
    v->ax_chunk = ms_sweep_grid_find(grid, "chunk");
    v->ax_mode = ms_sweep_grid_find(grid, "mode");
    v->ax_iterations = ms_sweep_grid_find(grid, "iterations");
    v->ax_seed = ms_sweep_grid_find(grid, "seed");
    v->ax_straggler = ms_sweep_grid_find(grid, "straggler");
    v->ax_slow_link = ms_sweep_grid_find(grid, "slow-link");
    v->ax_net = ms_sweep_grid_find(grid, "net");
    const MsRoutingSource *routing = ms_inputs_routing(base);
    for (guint a = 0; a < ms_sweep_grid_n_axes(grid); a++) {
        const char *key = ms_sweep_grid_key(grid, a);
        if (!ms_sweep_key_is_routing(key)) {
            continue;
        }
        if (!ms_routing_source_generated(routing)) {
            g_set_error(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_AXIS,
                        "sweep: %s varies generated routing, but the trace is %s", key,
                        ms_routing_source_spec(routing));
            return NULL;
        }
        gint ax = (gint)a;
        g_array_append_val(v->routing_axes, ax);
    }
    if (!build_topologies(v, error) || !build_models(v, error) || !build_policies(v, error) ||
        !build_stragglers(v, settings, error) || !build_nets(v, error)) {
        return NULL;
    }
    build_notes(v, settings);
    return g_steal_pointer(&v);
}

static guint
index_of(const MsSweepVariants *v, guint point, gint axis)
{
    return axis >= 0 ? ms_sweep_grid_index(v->grid, point, (guint)axis) : 0;
}

gboolean
ms_sweep_variants_point(const MsSweepVariants *v, guint point, const MsScenario *settings,
                        MsScenario *sc, MsRoutingSource **routing, GError **error)
{
    *sc = *settings;
    *routing = NULL;
    guint ns = n_of(v, v->ax_slow_link), slow = index_of(v, point, v->ax_slow_link);
    sc->topology = v->topologies[(index_of(v, point, v->ax_topology) * n_of(v, v->ax_nodes) +
                                  index_of(v, point, v->ax_nodes)) *
                                     ns +
                                 slow];
    sc->model = v->models[index_of(v, point, v->ax_model) * n_of(v, v->ax_experts) +
                          index_of(v, point, v->ax_experts)];
    sc->policy = v->policies[index_of(v, point, v->ax_policy) * n_of(v, v->ax_chunk) +
                             index_of(v, point, v->ax_chunk)];
    sc->calibration = ms_inputs_calibration(v->base);
    sc->routing = ms_inputs_routing(v->base);
    if (v->ax_mode >= 0) {
        ms_plan_mode_from_name(ms_sweep_grid_value(v->grid, point, (guint)v->ax_mode), &sc->mode);
    }
    if (v->ax_iterations >= 0) {
        sc->iterations = (guint)g_ascii_strtoull(
            ms_sweep_grid_value(v->grid, point, (guint)v->ax_iterations), NULL, 10);
    }
    if (v->ax_seed >= 0) {
        sc->seed =
            g_ascii_strtoull(ms_sweep_grid_value(v->grid, point, (guint)v->ax_seed), NULL, 10);
    }
    guint straggler = index_of(v, point, v->ax_straggler);
    if (v->ax_straggler >= 0) {
        const GArray *pace = v->paces->pdata[straggler];
        sc->pace = (const double *)pace->data;
        sc->n_pace = pace->len;
    }
    if (v->notes->len) {
        sc->notes = v->notes->pdata[straggler * ns + slow];
    }
    if (v->ax_net >= 0) {
        sc->net = &v->nets[index_of(v, point, v->ax_net)];
    }
    g_autoptr(MsRoutingSource) made = NULL;
    for (guint i = 0; i < v->routing_axes->len; i++) {
        guint a = (guint)g_array_index(v->routing_axes, gint, i);
        MsRoutingSource *next =
            ms_routing_source_with(made ? made : sc->routing, ms_sweep_grid_key(v->grid, a),
                                   ms_sweep_grid_value(v->grid, point, a), error);
        if (next == NULL) {
            return FALSE;
        }
        ms_routing_source_free(made);
        made = next;
    }
    if (made) {
        sc->routing = made;
        *routing = g_steal_pointer(&made);
    }
    return TRUE;
}

/* "KEY=VALUE ..." of a point, for messages. */
static char *
describe_point(const MsSweepGrid *grid, guint point)
{
    GString *s = g_string_new(NULL);
    for (guint a = 0; a < ms_sweep_grid_n_axes(grid); a++) {
        g_string_append_printf(s, "%s%s=%s", a ? " " : "", ms_sweep_grid_key(grid, a),
                               ms_sweep_grid_value(grid, point, a));
    }
    return g_string_free(s, FALSE);
}

/* The generator a point's planner will make, made and dropped. */
static gboolean
check_point(const MsSweepVariants *v, guint point, const MsScenario *settings, GError **error)
{
    MsScenario sc;
    g_autoptr(MsRoutingSource) made = NULL;
    if (!ms_sweep_variants_point(v, point, settings, &sc, &made, error)) {
        return FALSE;
    }
    if (!ms_routing_source_generated(sc.routing)) {
        return TRUE;
    }
    /* The planner's shape: warm-up and measured iterations, one by default. */
    MsRoutingShape shape = {sc.model, sc.topology, sc.mode,
                            sc.warmup + (sc.iterations ? sc.iterations : 1), sc.seed};
    MsTraceGenParams params;
    if (!ms_routing_source_gen_params(sc.routing, &shape, &params, error)) {
        return FALSE;
    }
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&params, error);
    return gen != NULL;
}

gboolean
ms_sweep_variants_check(const MsSweepVariants *v, const MsScenario *settings, GError **error)
{
    for (guint p = 0; p < ms_sweep_grid_n_points(v->grid); p++) {
        if (!check_point(v, p, settings, error)) {
            g_autofree char *what = describe_point(v->grid, p);
            g_prefix_error(error, "sweep: point %u (%s): ", p, what);
            return FALSE;
        }
    }
    return TRUE;
}
