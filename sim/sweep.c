/* sweep: grid expansion, variants of topologies and models, the worker pool, and the CSV. */
#include "sweep.h"

#include <math.h>
#include <string.h>

#include "sim/moe/model.h"
#include "sim/out/plot.h"
#include "sim/policy/policy.h"

G_DEFINE_QUARK(ms_sweep_error_quark, ms_sweep_error)

typedef struct {
    char *key;
    GPtrArray *values; /* char* */
} Axis;

struct _MsSweep {
    MsScenario base;
    char *work_dir;
    GPtrArray *axes; /* Axis* */
    MsResult **results;
    guint n_results;
    GMutex lock;
};

static const char *const keys[] = {"policy",  "topology", "model",      "mode",   "nodes",
                                   "experts", "chunk",    "iterations", "seed",   "zipf",
                                   "hot",     "corr",     "drift",      "tokens", NULL};
static const char *const routing_keys[] = {"zipf", "hot", "corr", "drift", "tokens", NULL};
static const char *const metric_names[] = {"iterations",      "step_time_us",
                                           "step_p50_us",     "step_p95_us",
                                           "step_p99_us",     "compute_us",
                                           "a2a_us",          "a2a_forward_us",
                                           "a2a_backward_us", "allreduce_us",
                                           "exposed_comm_us", "a2a_bytes",
                                           "dropped_tokens",  NULL};

static void
axis_free(gpointer p)
{
    Axis *a = p;
    g_free(a->key);
    g_ptr_array_unref(a->values);
    g_free(a);
}

MsSweep *
ms_sweep_new(const MsScenario *base, const char *work_dir)
{
    MsSweep *sw = g_new0(MsSweep, 1);
    sw->base = *base;
    sw->work_dir = g_strdup(work_dir);
    sw->axes = g_ptr_array_new_with_free_func(axis_free);
    g_mutex_init(&sw->lock);
    return sw;
}

void
ms_sweep_free(MsSweep *sw)
{
    if (sw == NULL) {
        return;
    }
    for (guint i = 0; i < sw->n_results; i++) {
        ms_result_free(sw->results[i]);
    }
    g_free(sw->results);
    g_ptr_array_unref(sw->axes);
    g_free(sw->work_dir);
    g_mutex_clear(&sw->lock);
    g_free(sw);
}

guint
ms_sweep_n_points(const MsSweep *sw)
{
    guint n = 1;
    for (guint a = 0; a < sw->axes->len; a++) {
        n *= ((Axis *)sw->axes->pdata[a])->values->len;
    }
    return n;
}

guint
ms_sweep_n_axes(const MsSweep *sw)
{
    return sw->axes->len;
}

const char *
ms_sweep_axis_key(const MsSweep *sw, guint axis)
{
    return ((Axis *)sw->axes->pdata[axis])->key;
}

const char *
ms_sweep_value(const MsSweep *sw, guint point, guint axis)
{
    /* Mixed radix with the first axis slowest. */
    for (guint a = sw->axes->len; a-- > axis + 1;) {
        point /= ((Axis *)sw->axes->pdata[a])->values->len;
    }
    const Axis *ax = sw->axes->pdata[axis];
    return ax->values->pdata[point % ax->values->len];
}

static gboolean
check_value(const char *key, const char *v, GError **error)
{
    guint64 u;
    double d;
    if (!strcmp(key, "nodes") || !strcmp(key, "experts") || !strcmp(key, "iterations") ||
        !strcmp(key, "seed") || !strcmp(key, "tokens")) {
        if (!ms_parse_uint(v, 1, 1u << 26, &u, NULL)) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                        "sweep: %s=%s: expected a whole number from 1 to 67108864", key, v);
            return FALSE;
        }
    } else if (!strcmp(key, "chunk")) {
        if (!ms_parse_bytes(v, &u, NULL) || u == 0) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                        "sweep: chunk=%s: expected a size with a unit, e.g. 8MB", v);
            return FALSE;
        }
    } else if (g_strv_contains(routing_keys, key)) {
        if (!ms_parse_double(v, 0, 1e6, &d, NULL)) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                        "sweep: %s=%s: expected a non-negative number", key, v);
            return FALSE;
        }
    } else if (!strcmp(key, "mode")) {
        MsPlanMode m;
        if (!ms_plan_mode_from_name(v, &m)) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                        "sweep: mode=%s: expected train or infer", v);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_sweep_add_axis(MsSweep *sw, const char *spec, GError **error)
{
    const char *eq = strchr(spec, '=');
    g_autofree char *key = eq ? g_strstrip(g_strndup(spec, eq - spec)) : NULL;
    if (key == NULL || !g_strv_contains(keys, key)) {
        g_autofree char *list = g_strjoinv(", ", (char **)keys);
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_AXIS,
                    "sweep: '%s' is not KEY=V1,V2,... with KEY one of %s", spec, list);
        return FALSE;
    }
    for (guint a = 0; a < sw->axes->len; a++) {
        if (!strcmp(((Axis *)sw->axes->pdata[a])->key, key)) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_AXIS, "sweep: %s varied twice", key);
            return FALSE;
        }
    }
    if (g_strv_contains(routing_keys, key) && sw->base.trace &&
        !g_str_has_prefix(sw->base.trace, "gen:")) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_AXIS,
                    "sweep: %s varies generated routing, but the trace is %s", key, sw->base.trace);
        return FALSE;
    }
    const char *list = eq + 1;
    g_auto(GStrv) vals = g_strsplit(list, strchr(list, ';') ? ";" : ",", -1);
    Axis *ax = g_new0(Axis, 1);
    ax->key = g_steal_pointer(&key);
    ax->values = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; vals[i]; i++) {
        g_strstrip(vals[i]);
        if (vals[i][0] == '\0' || !check_value(ax->key, vals[i], error)) {
            if (vals[i][0] == '\0') {
                g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_AXIS,
                            "sweep: %s has an empty value", ax->key);
            }
            axis_free(ax);
            return FALSE;
        }
        g_ptr_array_add(ax->values, g_strdup(vals[i]));
    }
    guint64 total = (guint64)ms_sweep_n_points(sw) * ax->values->len;
    if (total > MS_SWEEP_MAX_POINTS) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_LIMIT,
                    "sweep: %" G_GUINT64_FORMAT " grid points, more than %u", total,
                    MS_SWEEP_MAX_POINTS);
        axis_free(ax);
        return FALSE;
    }
    g_ptr_array_add(sw->axes, ax);
    return TRUE;
}

/* --- one point --- */

/* Strings a point's scenario refers to. */
typedef struct {
    MsScenario sc;
    char *policy, *topology, *model, *trace;
} Point;

static void
point_clear(Point *p)
{
    g_free(p->policy);
    g_free(p->topology);
    g_free(p->model);
    g_free(p->trace);
}

/* The text of a shipped or file topology/model with `key = value` replaced in its group, and its
 * name made unique; written under the sweep's folder. */
static char *
variant(const MsSweep *sw, const char *kind, const char *name, GBytes *shipped, const char *key,
        const char *value, GError **error)
{
    g_autofree char *text = NULL;
    if (shipped) {
        text = g_strndup(g_bytes_get_data(shipped, NULL), g_bytes_get_size(shipped));
    } else if (!g_file_get_contents(name, &text, NULL, NULL)) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                    "sweep: %s=%s needs the %s '%s' as a shipped name or a readable file", key,
                    value, kind, name);
        return NULL;
    }
    g_autofree char *base = g_path_get_basename(name);
    if (g_str_has_suffix(base, ".ini")) {
        base[strlen(base) - 4] = '\0';
    }
    g_autofree char *vname = g_strdup_printf("%s-%s%s", base, key, value);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gboolean replaced = FALSE;
    for (guint i = 0; lines[i]; i++) {
        g_autofree char *t = g_strstrip(g_strdup(lines[i]));
        const char *eq = strchr(t, '=');
        if (eq == NULL) {
            continue;
        }
        g_autofree char *k = g_strstrip(g_strndup(t, eq - t));
        if (!strcmp(k, key)) {
            g_free(lines[i]);
            lines[i] = g_strdup_printf("%s = %s", key, value);
            replaced = TRUE;
        } else if (!strcmp(k, "name")) {
            g_free(lines[i]);
            lines[i] = g_strdup_printf("name = %s", vname);
        }
    }
    if (!replaced) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_VALUE,
                    "sweep: %s '%s' has no '%s' key to vary", kind, name, key);
        return NULL;
    }
    g_autofree char *dir = g_build_filename(sw->work_dir, "variants", NULL);
    g_mkdir_with_parents(dir, 0755);
    g_autofree char *file = g_strconcat(vname, ".ini", NULL);
    char *path = g_build_filename(dir, file, NULL);
    g_autofree char *out = g_strjoinv("\n", lines);
    g_autoptr(GError) local = NULL;
    g_mutex_lock((GMutex *)&sw->lock);
    gboolean ok = g_file_set_contents(path, out, -1, &local);
    g_mutex_unlock((GMutex *)&sw->lock);
    if (!ok) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "sweep: %s", local->message);
        g_free(path);
        return NULL;
    }
    return path;
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

static gboolean
make_point(const MsSweep *sw, guint point, Point *p, GError **error)
{
    memset(p, 0, sizeof *p);
    p->sc = sw->base;
    const char *policy = sw->base.policy ? sw->base.policy : MS_SCENARIO_POLICY;
    const char *topology = sw->base.topology ? sw->base.topology : MS_SCENARIO_TOPOLOGY;
    const char *model = sw->base.model ? sw->base.model : MS_SCENARIO_MODEL;
    const char *nodes = NULL, *experts = NULL, *chunk = NULL;
    GString *gen = g_string_new(sw->base.trace ? sw->base.trace + 4 : "");
    for (guint a = 0; a < sw->axes->len; a++) {
        const char *key = ms_sweep_axis_key(sw, a), *v = ms_sweep_value(sw, point, a);
        if (!strcmp(key, "policy")) {
            policy = v;
        } else if (!strcmp(key, "topology")) {
            topology = v;
        } else if (!strcmp(key, "model")) {
            model = v;
        } else if (!strcmp(key, "nodes")) {
            nodes = v;
        } else if (!strcmp(key, "experts")) {
            experts = v;
        } else if (!strcmp(key, "chunk")) {
            chunk = v;
        } else if (!strcmp(key, "mode")) {
            ms_plan_mode_from_name(v, &p->sc.mode);
        } else if (!strcmp(key, "iterations")) {
            p->sc.iterations = (guint)g_ascii_strtoull(v, NULL, 10);
        } else if (!strcmp(key, "seed")) {
            p->sc.seed = g_ascii_strtoull(v, NULL, 10);
        } else {
            g_string_append_printf(gen, "%s%s=%s", gen->len ? "," : "", key, v);
        }
    }
    p->trace = gen->len || sw->base.trace ? g_strconcat("gen:", gen->str, NULL) : NULL;
    g_string_free(gen, TRUE);
    p->policy =
        chunk && policy_takes(policy, "chunk")
            ? g_strdup_printf("%s%schunk=%s", policy, strchr(policy, ':') ? "," : ":", chunk)
            : g_strdup(policy);
    if (nodes) {
        g_autoptr(GBytes) shipped = ms_topology_shipped_data(topology);
        p->topology = variant(sw, "topology", topology, shipped, "nodes", nodes, error);
    } else {
        p->topology = g_strdup(topology);
    }
    if (experts) {
        g_autoptr(GBytes) shipped = ms_model_shipped_data(model);
        p->model = variant(sw, "model", model, shipped, "experts", experts, error);
    } else {
        p->model = g_strdup(model);
    }
    if (p->topology == NULL || p->model == NULL) {
        return FALSE;
    }
    if (sw->base.trace && !g_str_has_prefix(sw->base.trace, "gen:")) {
        g_free(p->trace);
        p->trace = g_strdup(sw->base.trace);
    }
    p->sc.policy = p->policy;
    p->sc.topology = p->topology;
    p->sc.model = p->model;
    p->sc.trace = p->trace;
    return TRUE;
}

/* --- the pool --- */

typedef struct {
    MsSweep *sw;
    const gint *cancel;
    guint done, total;
    GError *error;
    MsSweepProgressFn progress;
    gpointer ctx;
} Run;

static void
work(gpointer data, gpointer user)
{
    Run *run = user;
    MsSweep *sw = run->sw;
    guint point = GPOINTER_TO_UINT(data) - 1;
    GError *error = NULL;
    MsResult *res = NULL;
    if (!(run->cancel && g_atomic_int_get(run->cancel))) {
        Point p;
        MsScenario sc;
        if (make_point(sw, point, &p, &error)) {
            sc = p.sc;
            sc.cancel = run->cancel;
            res = ms_scenario_run(&sc, &error);
        }
        point_clear(&p);
    }
    g_mutex_lock(&sw->lock);
    sw->results[point] = res;
    if (error && run->error == NULL &&
        !g_error_matches(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_CANCELLED)) {
        g_prefix_error(&error, "sweep point %u: ", point);
        run->error = g_steal_pointer(&error);
    }
    run->done++;
    if (run->progress) {
        run->progress(run->done, run->total, run->ctx);
    }
    g_mutex_unlock(&sw->lock);
    g_clear_error(&error);
}

gboolean
ms_sweep_run(MsSweep *sw, guint jobs, guint shard, guint shards, const gint *cancel,
             MsSweepProgressFn progress, gpointer ctx, GError **error)
{
    guint n = ms_sweep_n_points(sw);
    g_return_val_if_fail(shards > 0 && shard < shards, FALSE);
    sw->results = g_new0(MsResult *, n);
    sw->n_results = n;
    Run run = {sw, cancel, 0, 0, NULL, progress, ctx};
    for (guint i = shard; i < n; i += shards) {
        run.total++;
    }
    GThreadPool *pool =
        g_thread_pool_new(work, &run, jobs ? (gint)jobs : (gint)g_get_num_processors(), TRUE, NULL);
    for (guint i = shard; i < n; i += shards) {
        g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
    }
    g_thread_pool_free(pool, FALSE, TRUE);
    if (run.error) {
        g_propagate_error(error, run.error);
        return FALSE;
    }
    return TRUE;
}

MsResult *
ms_sweep_result(const MsSweep *sw, guint point)
{
    return point < sw->n_results ? sw->results[point] : NULL;
}

/* --- CSV --- */

static void
csv_field(GString *s, const char *v)
{
    if (strpbrk(v, ",\"\n") == NULL) {
        g_string_append(s, v);
        return;
    }
    g_string_append_c(s, '"');
    for (const char *c = v; *c; c++) {
        if (*c == '"') {
            g_string_append_c(s, '"');
        }
        if (*c != '\n') {
            g_string_append_c(s, *c);
        }
    }
    g_string_append_c(s, '"');
}

/* Splits one CSV line (quoted fields with doubled quotes). */
static GPtrArray *
csv_split(const char *line)
{
    GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
    GString *cur = g_string_new(NULL);
    gboolean quoted = FALSE;
    for (const char *c = line;; c++) {
        if (quoted) {
            if (*c == '"' && c[1] == '"') {
                g_string_append_c(cur, '"');
                c++;
            } else if (*c == '"') {
                quoted = FALSE;
            } else if (*c == '\0') {
                break;
            } else {
                g_string_append_c(cur, *c);
            }
        } else if (*c == '"') {
            quoted = TRUE;
        } else if (*c == ',' || *c == '\0') {
            g_ptr_array_add(f, g_strdup(cur->str));
            g_string_truncate(cur, 0);
            if (*c == '\0') {
                break;
            }
        } else if (*c != '\r') {
            g_string_append_c(cur, *c);
        }
    }
    g_string_free(cur, TRUE);
    return f;
}

gboolean
ms_sweep_write_csv(const MsSweep *sw, const char *path, GError **error)
{
    GString *s = g_string_new("point");
    for (guint a = 0; a < sw->axes->len; a++) {
        g_string_append_printf(s, ",%s", ms_sweep_axis_key(sw, a));
    }
    for (guint m = 0; metric_names[m]; m++) {
        g_string_append_printf(s, ",%s", metric_names[m]);
    }
    g_string_append_c(s, '\n');
    for (guint p = 0; p < sw->n_results; p++) {
        MsResult *res = sw->results[p];
        if (res == NULL) {
            continue;
        }
        g_string_append_printf(s, "%u", p);
        for (guint a = 0; a < sw->axes->len; a++) {
            g_string_append_c(s, ',');
            csv_field(s, ms_sweep_value(sw, p, a));
        }
        MsMetrics m;
        ms_result_mean(res, &m);
        g_string_append_printf(
            s,
            ",%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" G_GUINT64_FORMAT
            ",%" G_GUINT64_FORMAT "\n",
            ms_result_n_iterations(res), m.step_us, ms_result_step_percentile(res, 50),
            ms_result_step_percentile(res, 95), ms_result_step_percentile(res, 99), m.compute_us,
            m.a2a_us, m.a2a_fwd_us, m.a2a_bwd_us, m.allreduce_us, m.exposed_comm_us, m.a2a_bytes,
            m.dropped_tokens);
    }
    g_autoptr(GError) local = NULL;
    gboolean ok = g_file_set_contents(path, s->str, s->len, &local);
    g_string_free(s, TRUE);
    if (!ok) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
    }
    return ok;
}

typedef struct {
    guint point;
    char *line;
} Row;

static int
cmp_row(gconstpointer a, gconstpointer b)
{
    const Row *x = a, *y = b;
    return x->point < y->point ? -1 : x->point > y->point;
}

gboolean
ms_sweep_merge_csv(const char *const *inputs, const char *output, guint *n_rows, GError **error)
{
    g_autofree char *header = NULL;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    gboolean ok = TRUE;
    for (guint f = 0; ok && inputs[f]; f++) {
        g_autofree char *text = NULL;
        g_autoptr(GError) local = NULL;
        if (!g_file_get_contents(inputs[f], &text, NULL, &local)) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
            ok = FALSE;
            break;
        }
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        if (lines[0] == NULL || !g_str_has_prefix(lines[0], "point,")) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_MERGE,
                        "%s:1: not a sweep CSV (no 'point' column)", inputs[f]);
            ok = FALSE;
            break;
        }
        if (header && strcmp(header, lines[0]) != 0) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_MERGE,
                        "%s:1: columns differ from %s's", inputs[f], inputs[0]);
            ok = FALSE;
            break;
        }
        if (header == NULL) {
            header = g_strdup(lines[0]);
        }
        for (guint i = 1; ok && lines[i]; i++) {
            if (lines[i][0] == '\0') {
                continue;
            }
            guint64 point;
            g_autofree char *first = g_strndup(lines[i], strcspn(lines[i], ","));
            if (!ms_parse_uint(first, 0, MS_SWEEP_MAX_POINTS, &point, NULL)) {
                g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_MERGE,
                            "%s:%u: bad point index '%s'", inputs[f], i + 1, first);
                ok = FALSE;
                break;
            }
            Row r = {(guint)point, g_strdup(lines[i])};
            g_array_append_val(rows, r);
        }
    }
    g_array_sort(rows, cmp_row);
    for (guint i = 1; ok && i < rows->len; i++) {
        if (g_array_index(rows, Row, i).point == g_array_index(rows, Row, i - 1).point) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_MERGE,
                        "point %u is in two shard files", g_array_index(rows, Row, i).point);
            ok = FALSE;
        }
    }
    GString *out = g_string_new(header);
    g_string_append_c(out, '\n');
    for (guint i = 0; i < rows->len; i++) {
        g_string_append_printf(out, "%s\n", g_array_index(rows, Row, i).line);
        g_free(g_array_index(rows, Row, i).line);
    }
    if (ok) {
        g_autoptr(GError) local = NULL;
        ok = g_file_set_contents(output, out->str, out->len, &local);
        if (!ok) {
            g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
        }
        *n_rows = rows->len;
    }
    g_string_free(out, TRUE);
    return ok;
}

gboolean
ms_sweep_plot_csv(const char *csv, const char *dir, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(csv, &text, NULL, &local)) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GPtrArray) head = csv_split(lines[0] ? lines[0] : "");
    guint n_axes = 0, step_col = 0;
    while (1 + n_axes < head->len && strcmp(head->pdata[1 + n_axes], "iterations") != 0) {
        n_axes++;
    }
    for (guint c = 0; c < head->len; c++) {
        if (!strcmp(head->pdata[c], "step_time_us")) {
            step_col = c;
        }
    }
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    for (guint i = 1; lines[i]; i++) {
        if (lines[i][0]) {
            g_ptr_array_add(rows, csv_split(lines[i]));
        }
    }
    for (guint a = 0; a < n_axes; a++) {
        gboolean numeric = rows->len > 1;
        for (guint r = 0; r < rows->len && numeric; r++) {
            GPtrArray *f = rows->pdata[r];
            double v;
            numeric =
                f->len == head->len && ms_parse_double(f->pdata[1 + a], -1e300, 1e300, &v, NULL);
        }
        if (!numeric) {
            continue;
        }
        const char *key = head->pdata[1 + a];
        g_autofree char *file = g_strdup_printf("sweep-%s.png", key);
        g_autofree char *path = g_build_filename(dir, file, NULL);
        g_autofree char *title = g_strdup_printf("moesim sweep: step time against %s", key);
        g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
        ms_plot_set(p, "set xlabel '%s'", key);
        ms_plot_set(p, "set ylabel 'step (batch) time (ms)'");
        ms_plot_set(p, "set key outside right top");
        /* One line per combination of the other axes, in first-seen order. */
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint r = 0; r < rows->len; r++) {
            GPtrArray *f = rows->pdata[r];
            GString *name = g_string_new(NULL);
            for (guint b = 0; b < n_axes; b++) {
                if (b != a) {
                    g_string_append_printf(name, "%s%s=%s", name->len ? " " : "",
                                           (char *)head->pdata[1 + b], (char *)f->pdata[1 + b]);
                }
            }
            guint s = 0;
            while (s < names->len && strcmp(names->pdata[s], name->str) != 0) {
                s++;
            }
            if (s == names->len) {
                g_ptr_array_add(names, g_strdup(name->str));
                guint id = ms_plot_series(p, name->len ? name->str : "step time", "1:2",
                                          "linespoints lw 2 pt 7");
                g_array_append_val(ids, id);
            }
            g_string_free(name, TRUE);
            double row[2] = {g_ascii_strtod(f->pdata[1 + a], NULL),
                             g_ascii_strtod(f->pdata[step_col], NULL) / 1e3};
            ms_plot_row(p, g_array_index(ids, guint, s), row, 2, NULL);
        }
        if (!ms_plot_render(p, error)) {
            return FALSE;
        }
    }
    return TRUE;
}
