/* gate: reading baselines, rerunning their scenarios, comparing figures. */
#include "gate.h"

#include <math.h>
#include <string.h>

#include "sim/base/json_input.h"
#include "sim/base/json_output.h"
#include "sim/engine.h"
#include "sim/inputs.h"

G_DEFINE_QUARK(ms_gate_error_quark, ms_gate_error)

static const char *const metrics[] = {"step_time_us",    "step_time_p95_us", "a2a_us",
                                      "exposed_comm_us", "allreduce_us",     NULL};

/* A scenario's settings; strings borrowed from the JSON. */
typedef struct {
    JsonObject *object;
    char *name;
    const char *topology, *model, *trace, *policy;
    MsPlanMode mode;
    guint iterations, warmup;
    guint64 seed;
} Entry;

struct _MsBaseline {
    char *path;
    JsonParser *parser;
    Entry *entries;
    guint n;
};

const char *const *
ms_gate_metrics(void)
{
    return metrics;
}

void
ms_baseline_free(MsBaseline *b)
{
    if (b == NULL) {
        return;
    }
    for (guint i = 0; i < b->n; i++) {
        g_free(b->entries[i].name);
    }
    g_free(b->entries);
    g_clear_object(&b->parser);
    g_free(b->path);
    g_free(b);
}

static gboolean bad(GError **error, const char *path, guint index, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
bad(GError **error, const char *path, guint index, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_GATE_ERROR, MS_GATE_ERROR_FORMAT, "%s: scenario %u: %s", path, index,
                msg);
    return FALSE;
}

static gboolean
read_strings(JsonObject *o, const char *path, guint index, Entry *e, GError **error)
{
    const char *strs[] = {"topology", "model", "trace", "policy", "mode"};
    const char **dest[] = {&e->topology, &e->model, &e->trace, &e->policy, NULL};
    for (guint i = 0; i < G_N_ELEMENTS(strs); i++) {
        JsonNode *n = json_object_get_member(o, strs[i]);
        if (n == NULL || JSON_NODE_HOLDS_NULL(n)) {
            continue;
        }
        if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING) {
            return bad(error, path, index, "field '%s' must be a string", strs[i]);
        }
        if (dest[i]) {
            *dest[i] = json_node_get_string(n);
        } else if (!ms_plan_mode_from_name(json_node_get_string(n), &e->mode)) {
            return bad(error, path, index, "mode '%s': use train or infer",
                       json_node_get_string(n));
        }
    }
    return TRUE;
}

static gboolean
read_numbers(JsonObject *o, const char *path, guint index, Entry *e, GError **error)
{
    const char *nums[] = {"iterations", "warmup", "seed"};
    for (guint i = 0; i < G_N_ELEMENTS(nums); i++) {
        JsonNode *n = json_object_get_member(o, nums[i]);
        if (n == NULL) {
            continue;
        }
        if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64 ||
            json_node_get_int(n) < 0 || json_node_get_int(n) > 1000000) {
            return bad(error, path, index, "field '%s' must be an integer from 0 to 1000000",
                       nums[i]);
        }
        guint64 v = (guint64)json_node_get_int(n);
        if (i == 0) {
            e->iterations = (guint)v;
        } else if (i == 1) {
            e->warmup = (guint)v;
        } else {
            e->seed = v;
        }
    }
    return TRUE;
}

/* Reads one scenario object into e. */
static gboolean
read_entry(JsonNode *node, const char *path, guint index, Entry *e, GError **error)
{
    static const char *const known[] = {"name",   "topology", "model",      "trace",
                                        "policy", "mode",     "iterations", "warmup",
                                        "seed",   "expect",   NULL};
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        g_set_error(error, MS_GATE_ERROR, MS_GATE_ERROR_FORMAT, "%s: scenario %u is not an object",
                    path, index);
        return FALSE;
    }
    JsonObject *o = json_node_get_object(node);
    g_autoptr(GList) members = json_object_get_members(o);
    for (GList *m = members; m; m = m->next) {
        if (!g_strv_contains(known, m->data)) {
            g_autofree char *list = g_strjoinv(", ", (char **)known);
            return bad(error, path, index, "unknown field '%s' (fields: %s)", (const char *)m->data,
                       list);
        }
    }
    e->object = o;
    if (!read_strings(o, path, index, e, error) || !read_numbers(o, path, index, e, error)) {
        return FALSE;
    }
    const char *name = json_object_get_string_member_with_default(o, "name", NULL);
    e->name = name ? g_strdup(name) : g_strdup_printf("scenario %u", index);
    return TRUE;
}

MsBaseline *
ms_baseline_load(const char *path, GError **error)
{
    g_autoptr(MsBaseline) b = g_new0(MsBaseline, 1);
    b->path = g_strdup(path);
    b->parser = json_parser_new();
    GError *local = NULL;
    if (!ms_json_input_load_file(b->parser, path, MS_INPUT_BASELINE, &local)) {
        /* Every message names the file (and the line, for syntax and nesting) already. */
        g_propagate_error(error, local);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(b->parser);
    JsonObject *ro = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *list = ro ? json_object_get_member(ro, "scenarios") : NULL;
    if (ro == NULL ||
        g_strcmp0(json_object_get_string_member_with_default(ro, "format", ""),
                  "moesim-baseline") ||
        list == NULL || !JSON_NODE_HOLDS_ARRAY(list)) {
        g_set_error(error, MS_GATE_ERROR, MS_GATE_ERROR_FORMAT,
                    "%s: not a moesim baseline (an object with \"format\": \"moesim-baseline\" "
                    "and a \"scenarios\" array)",
                    path);
        return NULL;
    }
    JsonArray *sa = json_node_get_array(list);
    b->entries = g_new0(Entry, MAX(json_array_get_length(sa), 1));
    for (guint i = 0; i < json_array_get_length(sa); i++) {
        if (!read_entry(json_array_get_element(sa, i), path, i, &b->entries[i], error)) {
            return NULL;
        }
        b->n++;
    }
    return g_steal_pointer(&b);
}

const char *
ms_baseline_path(const MsBaseline *b)
{
    return b->path;
}

guint
ms_baseline_n_scenarios(const MsBaseline *b)
{
    return b->n;
}

const char *
ms_baseline_name(const MsBaseline *b, guint scenario)
{
    return b->entries[scenario].name;
}

static double
metric(const MsResult *res, const char *name)
{
    MsMetrics m;
    ms_result_mean(res, &m);
    if (!strcmp(name, "step_time_us")) {
        return m.step_us;
    }
    if (!strcmp(name, "step_time_p95_us")) {
        return ms_result_step_percentile(res, 95);
    }
    if (!strcmp(name, "a2a_us")) {
        return m.a2a_us;
    }
    if (!strcmp(name, "exposed_comm_us")) {
        return m.exposed_comm_us;
    }
    return m.allreduce_us;
}

/* Loads a scenario's inputs by name and runs it on the engine with nominal figures. */
static MsResult *
run_entry(const MsBaseline *b, guint i, GError **error)
{
    const Entry *e = &b->entries[i];
    MsInputNames names = {
        .topology = e->topology, .model = e->model, .policy = e->policy, .trace = e->trace};
    g_autoptr(MsInputs) in = ms_inputs_load(&names, error);
    g_autoptr(MsRunner) runner = ms_engine_runner_new(NULL);
    MsScenario sc = {.runner = runner,
                     .mode = e->mode,
                     .iterations = e->iterations,
                     .warmup = e->warmup,
                     .seed = e->seed};
    MsResult *res = NULL;
    if (in) {
        ms_inputs_fill(in, &sc);
        res = ms_scenario_run(&sc, error);
    }
    if (res == NULL) {
        g_prefix_error(error, "%s: scenario %u: ", b->path, i);
    }
    return res;
}

static JsonObject *
expect_of(const Entry *e)
{
    JsonNode *en = json_object_get_member(e->object, "expect");
    return en && JSON_NODE_HOLDS_OBJECT(en) ? json_node_get_object(en) : NULL;
}

static gboolean expect_error(GError **error, const MsBaseline *b, guint i, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
expect_error(GError **error, const MsBaseline *b, guint i, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_GATE_ERROR, MS_GATE_ERROR_EXPECT, "%s: scenario %u: %s", b->path, i, msg);
    return FALSE;
}

/* A scenario's expectations must compare something: known figures, each a positive number (a
 * misspelt key would compare nothing and pass; a string would be read as 0). */
static gboolean
check_expect(const MsBaseline *b, guint i, GError **error)
{
    JsonNode *en = json_object_get_member(b->entries[i].object, "expect");
    g_autofree char *list = g_strjoinv(", ", (char **)metrics);
    if (en == NULL) {
        g_set_error(error, MS_GATE_ERROR, MS_GATE_ERROR_EXPECT,
                    "%s: scenario %u (%s) has no 'expect' figures: record them with --update",
                    b->path, i, b->entries[i].name);
        return FALSE;
    }
    if (!JSON_NODE_HOLDS_OBJECT(en)) {
        return expect_error(error, b, i, "expect must be an object of figures (%s)", list);
    }
    JsonObject *expect = json_node_get_object(en);
    g_autoptr(GList) members = json_object_get_members(expect);
    if (members == NULL) {
        return expect_error(error, b, i, "expect holds no figure: record them with --update");
    }
    for (GList *m = members; m; m = m->next) {
        const char *key = m->data;
        if (!g_strv_contains(metrics, key)) {
            return expect_error(error, b, i, "expect: unknown figure '%s' (figures: %s)", key,
                                list);
        }
        JsonNode *v = json_object_get_member(expect, key);
        GType t = JSON_NODE_HOLDS_VALUE(v) ? json_node_get_value_type(v) : G_TYPE_INVALID;
        double x = t == G_TYPE_INT64 || t == G_TYPE_DOUBLE ? json_node_get_double(v) : NAN;
        if (!(x > 0) || !isfinite(x)) {
            g_autofree char *text = json_to_string(v, FALSE);
            return expect_error(error, b, i,
                                "expect: %s must be a positive number of microseconds, not %s", key,
                                text);
        }
    }
    return TRUE;
}

gboolean
ms_gate_check(const MsBaseline *b, double tol, MsGateFigureFn each, gpointer ctx,
              MsGateSummary *summary, GError **error)
{
    memset(summary, 0, sizeof *summary);
    for (guint i = 0; i < b->n; i++) {
        if (!check_expect(b, i, error)) {
            return FALSE;
        }
    }
    for (guint i = 0; i < b->n; i++) {
        g_autoptr(MsResult) res = run_entry(b, i, error);
        if (res == NULL) {
            return FALSE;
        }
        JsonObject *expect = expect_of(&b->entries[i]);
        gboolean first = TRUE;
        for (guint k = 0; metrics[k]; k++) {
            if (!json_object_has_member(expect, metrics[k])) {
                continue;
            }
            MsGateFigure f = {.scenario = i, .name = b->entries[i].name, .first = first};
            first = FALSE;
            f.metric = metrics[k];
            f.expected_us = json_object_get_double_member(expect, metrics[k]);
            f.measured_us = metric(res, metrics[k]);
            f.change = f.measured_us / f.expected_us - 1; /* expected > 0: checked */
            f.verdict = f.change > tol    ? MS_GATE_REGRESSED
                        : f.change < -tol ? MS_GATE_IMPROVED
                                          : MS_GATE_OK;
            summary->figures++;
            summary->regressed += f.verdict == MS_GATE_REGRESSED;
            summary->improved += f.verdict == MS_GATE_IMPROVED;
            if (each) {
                each(&f, ctx);
            }
        }
        summary->scenarios++;
    }
    return TRUE;
}

gboolean
ms_gate_update(MsBaseline *b, MsGateScenarioFn each, gpointer ctx, GError **error)
{
    for (guint i = 0; i < b->n; i++) {
        g_autoptr(MsResult) res = run_entry(b, i, error);
        if (res == NULL) {
            return FALSE;
        }
        JsonObject *fresh = json_object_new();
        for (guint k = 0; metrics[k]; k++) {
            /* A figure of 0 (no allreduce in inference) is left out: no relative change can be
             * taken from it, so it cannot be expected. */
            double v = round(metric(res, metrics[k]) * 1e3) / 1e3;
            if (v > 0) {
                json_object_set_double_member(fresh, metrics[k], v);
            }
        }
        json_object_set_object_member(b->entries[i].object, "expect", fresh);
        if (each) {
            each(i, b->entries[i].name, ctx);
        }
    }
    return TRUE;
}

gboolean
ms_baseline_write(const MsBaseline *b, const char *path, GError **error)
{
    /* --update rewrites the baseline it read. */
    return ms_json_write_file(path, json_parser_get_root(b->parser), TRUE, MS_OUTPUT_UPDATE, error);
}
