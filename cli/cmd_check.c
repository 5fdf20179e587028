/* cmd_check: `moesim check`: reruns the scenarios of a baseline and fails (exit 1) with a
 * readable diff when schedule quality regressed beyond a tolerance: the regression gate for CI
 * pipelines. `--update` records the current figures as the new baseline. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/json_input.h"
#include "sim/scenario.h"

/* Metrics a baseline may hold; all are times, lower is better. */
static const char *const metrics[] = {"step_time_us",    "step_time_p95_us", "a2a_us",
                                      "exposed_comm_us", "allreduce_us",     NULL};

static double
metric(MsResult *res, const char *name)
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

static gboolean bad(GError **error, const char *path, guint index, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
bad(GError **error, const char *path, guint index, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: scenario %u: %s", path, index, msg);
    return FALSE;
}

/* Reads one scenario object into sc (strings borrowed from the JSON). */
static gboolean
read_scenario(JsonObject *o, const char *path, guint index, MsScenario *sc, GError **error)
{
    static const char *const known[] = {"name",   "topology", "model",      "trace",
                                        "policy", "mode",     "iterations", "warmup",
                                        "seed",   "expect",   NULL};
    g_autoptr(GList) members = json_object_get_members(o);
    for (GList *m = members; m; m = m->next) {
        if (!g_strv_contains(known, m->data)) {
            g_autofree char *list = g_strjoinv(", ", (char **)known);
            return bad(error, path, index, "unknown field '%s' (fields: %s)", (const char *)m->data,
                       list);
        }
    }
    memset(sc, 0, sizeof *sc);
    const char *strs[] = {"topology", "model", "trace", "policy", "mode"};
    const char **dest[] = {&sc->topology, &sc->model, &sc->trace, &sc->policy, NULL};
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
        } else if (!ms_plan_mode_from_name(json_node_get_string(n), &sc->mode)) {
            return bad(error, path, index, "mode '%s': use train or infer",
                       json_node_get_string(n));
        }
    }
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
            sc->iterations = (guint)v;
        } else if (i == 1) {
            sc->warmup = (guint)v;
        } else {
            sc->seed = v;
        }
    }
    return TRUE;
}

static const char *
scenario_name(JsonObject *o, guint index, char *buf, gsize len)
{
    const char *name = json_object_get_string_member_with_default(o, "name", NULL);
    if (name) {
        return name;
    }
    g_snprintf(buf, len, "scenario %u", index);
    return buf;
}

int
ms_cmd_check(int argc, char **argv)
{
    g_autofree char *baseline = NULL, *tolerance = NULL;
    gboolean update = FALSE;
    const GOptionEntry entries[] = {
        {"baseline", 'b', 0, G_OPTION_ARG_FILENAME, &baseline,
         "Baseline JSON: scenarios and their expected figures (required)", "FILE"},
        {"tolerance", 't', 0, G_OPTION_ARG_STRING, &tolerance,
         "Allowed worsening, e.g. 2% (default 2%)", "T"},
        {"update", 0, 0, G_OPTION_ARG_NONE, &update, "Record the current figures as the baseline",
         NULL},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL, "Fail when schedule quality regressed.",
                      "Reruns every scenario of the baseline (fields: name, topology, model, "
                      "trace, policy, mode, iterations, warmup, seed) and compares step time, "
                      "p95, all-to-all, exposed communication and allreduce with its 'expect' "
                      "figures. Exit 1 when any is worse by more than the tolerance. See "
                      "docs/running.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1 || baseline == NULL) {
        return ms_cli_usage("check: give --baseline FILE (and no other argument)");
    }
    double tol = 0.02;
    if (tolerance) {
        g_autofree char *num = g_strdup(tolerance);
        gboolean pct = g_str_has_suffix(num, "%");
        if (pct) {
            num[strlen(num) - 1] = '\0';
        }
        if (!ms_parse_double(num, 0, 1e6, &tol, NULL)) {
            return ms_cli_usage("check: --tolerance '%s' is not a number or percentage", tolerance);
        }
        tol = pct ? tol / 100 : tol;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!ms_json_input_load_file(parser, baseline, &error)) {
        /* Syntax and nesting errors name the file and line already. */
        return error->code == MS_JSON_INPUT_ERROR_IO
                   ? ms_cli_usage("%s: %s", baseline, error->message)
                   : ms_cli_usage("%s", error->message);
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *ro = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *list = ro ? json_object_get_member(ro, "scenarios") : NULL;
    if (ro == NULL ||
        g_strcmp0(json_object_get_string_member_with_default(ro, "format", ""),
                  "moesim-baseline") ||
        list == NULL || !JSON_NODE_HOLDS_ARRAY(list)) {
        return ms_cli_usage("%s: not a moesim baseline (an object with \"format\": "
                            "\"moesim-baseline\" and a \"scenarios\" array)",
                            baseline);
    }
    JsonArray *sa = json_node_get_array(list);
    guint regressed = 0, improved = 0;
    printf("check: %u scenario%s from %s, tolerance %.2f%%\n", json_array_get_length(sa),
           json_array_get_length(sa) == 1 ? "" : "s", baseline, 100 * tol);
    for (guint i = 0; i < json_array_get_length(sa); i++) {
        JsonNode *node = json_array_get_element(sa, i);
        if (!JSON_NODE_HOLDS_OBJECT(node)) {
            return ms_cli_usage("%s: scenario %u is not an object", baseline, i);
        }
        JsonObject *o = json_node_get_object(node);
        MsScenario sc;
        if (!read_scenario(o, baseline, i, &sc, &error)) {
            return ms_cli_fail(error);
        }
        g_autoptr(MsResult) res = ms_scenario_run(&sc, &error);
        if (res == NULL) {
            g_prefix_error(&error, "%s: scenario %u: ", baseline, i);
            return ms_cli_fail(error);
        }
        char buf[32];
        const char *name = scenario_name(o, i, buf, sizeof buf);
        JsonNode *en = json_object_get_member(o, "expect");
        JsonObject *expect = en && JSON_NODE_HOLDS_OBJECT(en) ? json_node_get_object(en) : NULL;
        if (update) {
            JsonObject *fresh = json_object_new();
            for (guint k = 0; metrics[k]; k++) {
                json_object_set_double_member(fresh, metrics[k],
                                              round(metric(res, metrics[k]) * 1e3) / 1e3);
            }
            json_object_set_object_member(o, "expect", fresh);
            printf("  %-28s recorded\n", name);
            continue;
        }
        if (expect == NULL) {
            return ms_cli_usage("%s: scenario %u (%s) has no 'expect' figures: record them with "
                                "--update",
                                baseline, i, name);
        }
        for (guint k = 0; metrics[k]; k++) {
            if (!json_object_has_member(expect, metrics[k])) {
                continue;
            }
            double old = json_object_get_double_member(expect, metrics[k]);
            double now = metric(res, metrics[k]);
            double rel = old > 0 ? now / old - 1 : (now > 0 ? INFINITY : 0);
            const char *verdict = rel > tol ? "REGRESSED" : rel < -tol ? "improved" : "ok";
            regressed += rel > tol;
            improved += rel < -tol;
            printf("  %-28s %-17s %12.3f ms -> %12.3f ms  %+7.2f%%  %s\n", k ? "" : name,
                   metrics[k], old / 1e3, now / 1e3, 100 * rel, verdict);
        }
    }
    if (update) {
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_pretty(gen, TRUE);
        json_generator_set_root(gen, root);
        if (!json_generator_to_file(gen, baseline, &error)) {
            return ms_cli_fail(error);
        }
        printf("updated %s\n", baseline);
        return MS_EXIT_OK;
    }
    if (improved) {
        printf("%u figure%s improved beyond the tolerance: record them with --update\n", improved,
               improved == 1 ? "" : "s");
    }
    if (regressed) {
        fprintf(stderr,
                "moesim: schedule quality regressed: %u figure%s worse than %s by more "
                "than %.2f%%\n",
                regressed, regressed == 1 ? "" : "s", baseline, 100 * tol);
        return MS_EXIT_BOUND;
    }
    printf("no regression\n");
    return MS_EXIT_OK;
}
