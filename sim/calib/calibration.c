/* calibration: the in-memory calibration, its setters and the lookups the simulator makes. The
 * file reader and writer are in calibration_file.c. */
#include "calibration.h"

#include <math.h>
#include <string.h>

#include "sim/calib/calibration_private.h"

G_DEFINE_QUARK(ms_calibration_error_quark, ms_calibration_error)

MsCalibration *
ms_calibration_new(void)
{
    MsCalibration *cal = g_new0(MsCalibration, 1);
    cal->sources = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(cal->sources, NULL);
    cal->slowdown = 1.0;
    cal->launch = MS_TIME_NEVER;
    return cal;
}

void
ms_calibration_free(MsCalibration *cal)
{
    if (cal == NULL) {
        return;
    }
    g_free(cal->topology);
    g_ptr_array_unref(cal->sources);
    for (guint i = 0; i < N_COLLECTIVES; i++) {
        ms_eff_table_free(cal->collectives[i].table);
        for (guint k = 0; cal->configs[i] && k < cal->configs[i]->len; k++) {
            ms_eff_table_free(g_array_index(cal->configs[i], CollectiveEntry, k).table);
        }
        if (cal->configs[i]) {
            g_array_unref(cal->configs[i]);
        }
    }
    ms_gemm_curve_free(cal->curve);
    g_free(cal);
}

static gboolean G_GNUC_PRINTF(3, 4)
    api_error(GError **error, MsCalibrationError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error_literal(error, MS_CALIBRATION_ERROR, code, msg);
    return FALSE;
}

/* ---- setters and lookups --------------------------------------------------------------------- */

/* No control characters (a value is one line) and no backslash (the INI escape character). */
static gboolean
one_line(const char *s, const char *extra)
{
    for (; *s; s++) {
        if (g_ascii_iscntrl(*s) || *s == '\\' || strchr(extra, *s) != NULL) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_calibration_set_topology(MsCalibration *cal, const char *topology, GError **error)
{
    if (topology && !one_line(topology, "")) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "topology '%s' contains a backslash or a control character", topology);
    }
    g_free(cal->topology);
    cal->topology = g_strdup(topology);
    return TRUE;
}

const char *
ms_calibration_topology(const MsCalibration *cal)
{
    return cal->topology;
}

gboolean
ms_calibration_add_source(MsCalibration *cal, const char *source, GError **error)
{
    if (*source == '\0' || !one_line(source, ";")) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "source '%s' is empty or contains ';', a backslash or a control "
                         "character",
                         source);
    }
    g_ptr_array_index(cal->sources, cal->sources->len - 1) = g_strdup(source);
    g_ptr_array_add(cal->sources, NULL);
    return TRUE;
}

const char *const *
ms_calibration_sources(const MsCalibration *cal, guint *n)
{
    if (n) {
        *n = cal->sources->len - 1;
    }
    return (const char *const *)cal->sources->pdata;
}

gboolean
ms_calibration_set_link(MsCalibration *cal, MsLinkClass klass, const MsCalibrationLink *link,
                        GError **error)
{
    g_return_val_if_fail(klass < MS_LINK_N_CLASSES, FALSE);
    if (!(link->bandwidth > 0) || !isfinite(link->bandwidth) || link->latency == MS_TIME_NEVER) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "link %s: bandwidth %g B/s must be positive and finite and the latency "
                         "set",
                         ms_link_class_name(klass), link->bandwidth);
    }
    cal->links[klass].present = TRUE;
    cal->links[klass].link = *link;
    return TRUE;
}

gboolean
ms_calibration_link(const MsCalibration *cal, MsLinkClass klass, MsCalibrationLink *out)
{
    g_return_val_if_fail(klass < MS_LINK_N_CLASSES, FALSE);
    if (!cal->links[klass].present) {
        return FALSE;
    }
    *out = cal->links[klass].link;
    return TRUE;
}

gboolean
ms_calibration_set_collective(MsCalibration *cal, MsMeasurementKind kind, MsTime alpha,
                              const MsEffTable *table, GError **error)
{
    return ms_calibration_set_collective_config(cal, kind, 0, 0, alpha, table, error);
}

static gboolean
config_before(const CollectiveEntry *c, guint ranks, guint per_node)
{
    return c->ranks < ranks || (c->ranks == ranks && c->per_node < per_node);
}

gboolean
ms_calibration_set_collective_config(MsCalibration *cal, MsMeasurementKind kind, guint ranks,
                                     guint per_node, MsTime alpha, const MsEffTable *table,
                                     GError **error)
{
    if (!ms_measurement_kind_is_comm(kind) || alpha == MS_TIME_NEVER) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "collective %s: not a communication kind, or alpha not set",
                         ms_measurement_kind_name(kind));
    }
    if ((ranks == 0) != (per_node == 0) || per_node > ranks || ranks > (1u << 20)) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "collective %s: configuration %ux%u is not ranks x ranks-per-node",
                         ms_measurement_kind_name(kind), ranks, per_node);
    }
    MsEffTable *copy = NULL;
    if (table != NULL) {
        g_autofree double *sizes = g_new(double, table->n);
        for (guint i = 0; i < table->n; i++) {
            sizes[i] = round(table->sizes[i]);
        }
        g_autoptr(GError) local = NULL;
        copy = ms_eff_table_new(sizes, table->ratios, table->n, &local);
        if (copy == NULL) {
            return api_error(error, MS_CALIBRATION_ERROR_LIST, "collective %s: %s",
                             ms_measurement_kind_name(kind), local->message);
        }
    }
    CollectiveEntry *e = &cal->collectives[kind];
    if (ranks) {
        if (cal->configs[kind] == NULL) {
            cal->configs[kind] = g_array_new(FALSE, TRUE, sizeof(CollectiveEntry));
        }
        /* Kept sorted by (ranks, per_node): the file and lookup ties do not depend on the order
         * entries were set in. */
        GArray *a = cal->configs[kind];
        guint at = 0;
        while (at < a->len &&
               config_before(&g_array_index(a, CollectiveEntry, at), ranks, per_node)) {
            at++;
        }
        e = at < a->len ? &g_array_index(a, CollectiveEntry, at) : NULL;
        if (e == NULL || e->ranks != ranks || e->per_node != per_node) {
            CollectiveEntry fresh = {0};
            g_array_insert_val(a, at, fresh);
            e = &g_array_index(a, CollectiveEntry, at);
        }
    }
    ms_eff_table_free(e->table);
    e->present = TRUE;
    e->ranks = ranks;
    e->per_node = per_node;
    e->alpha = alpha;
    e->table = copy;
    return TRUE;
}

gboolean
ms_calibration_parse_config(const char *text, guint *ranks, guint *per_node)
{
    const char *x = strchr(text, 'x');
    guint64 r = 0, p = 0;
    if (x == NULL) {
        return FALSE;
    }
    g_autofree char *head = g_strndup(text, (gsize)(x - text));
    if (!ms_parse_uint(head, 1, 1u << 20, &r, NULL) || !ms_parse_uint(x + 1, 1, r, &p, NULL)) {
        return FALSE;
    }
    *ranks = (guint)r;
    *per_node = (guint)p;
    return TRUE;
}

/* Distance between configurations: crossing nodes or not matters most, then the number of
 * ranks, then ranks per node (both on a log scale). */
static double
config_distance(guint r1, guint p1, guint r2, guint p2)
{
    gboolean inter1 = p1 < r1, inter2 = p2 < r2;
    return (inter1 != inter2 ? 100.0 : 0.0) + fabs(log2((double)r1 / r2)) +
           0.5 * fabs(log2((double)p1 / p2));
}

gboolean
ms_calibration_collective_lookup(const MsCalibration *cal, MsMeasurementKind kind, guint ranks,
                                 guint per_node, MsTime *alpha, const MsEffTable **table)
{
    if (!ms_measurement_kind_is_comm(kind)) {
        return FALSE;
    }
    const CollectiveEntry *best = NULL;
    double best_d = G_MAXDOUBLE;
    GArray *a = cal->configs[kind];
    for (guint k = 0; a && ranks && per_node && k < a->len; k++) {
        const CollectiveEntry *c = &g_array_index(a, CollectiveEntry, k);
        double d = config_distance(ranks, per_node, c->ranks, c->per_node);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    if (best == NULL && cal->collectives[kind].present) {
        best = &cal->collectives[kind];
    }
    if (best == NULL) {
        return FALSE;
    }
    *alpha = best->alpha;
    *table = best->table;
    return TRUE;
}

guint
ms_calibration_collective_configs(const MsCalibration *cal, MsMeasurementKind kind)
{
    return ms_measurement_kind_is_comm(kind) && cal->configs[kind] ? cal->configs[kind]->len : 0;
}

gboolean
ms_calibration_collective_alpha(const MsCalibration *cal, MsMeasurementKind kind, MsTime *alpha)
{
    if (!ms_measurement_kind_is_comm(kind) || !cal->collectives[kind].present) {
        return FALSE;
    }
    *alpha = cal->collectives[kind].alpha;
    return TRUE;
}

const MsEffTable *
ms_calibration_collective_table(const MsCalibration *cal, MsMeasurementKind kind)
{
    return ms_measurement_kind_is_comm(kind) ? cal->collectives[kind].table : NULL;
}

double
ms_calibration_collective_efficiency(const MsCalibration *cal, MsMeasurementKind kind,
                                     guint64 bytes)
{
    const MsEffTable *t = ms_calibration_collective_table(cal, kind);
    return t ? ms_eff_table_eval(t, (double)bytes) : 1.0;
}

static gboolean
check_slowdown(double overlap_slowdown, GError **error)
{
    if (!(overlap_slowdown >= 1.0) || !(overlap_slowdown <= MS_COMPUTE_SLOWDOWN_MAX)) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "gemm: overlap_slowdown %g is outside [1, %g]", overlap_slowdown,
                         MS_COMPUTE_SLOWDOWN_MAX);
    }
    return TRUE;
}

gboolean
ms_calibration_set_overlap_slowdown(MsCalibration *cal, double overlap_slowdown, GError **error)
{
    if (!check_slowdown(overlap_slowdown, error)) {
        return FALSE;
    }
    cal->has_gemm = TRUE;
    cal->slowdown = overlap_slowdown;
    return TRUE;
}

gboolean
ms_calibration_set_gemm(MsCalibration *cal, const MsGemmCurve *curve, double overlap_slowdown,
                        MsTime launch, GError **error)
{
    if (!check_slowdown(overlap_slowdown, error)) {
        return FALSE;
    }
    MsGemmCurve *copy = NULL;
    if (curve != NULL) {
        /* Check through the compute model, which is what the curve will feed. */
        MsGpuSpec probe = {.peak_flops = 1, .hbm_bandwidth = 1};
        g_autoptr(MsComputeModel) model = ms_compute_model_new(&probe, NULL);
        g_autoptr(GError) local = NULL;
        if (curve->n == 0 || !ms_compute_model_set_curve(model, curve->tokens, curve->efficiency,
                                                         curve->n, &local)) {
            return api_error(error, MS_CALIBRATION_ERROR_VALUE, "gemm: %s",
                             local ? local->message : "empty curve");
        }
        copy = g_new0(MsGemmCurve, 1);
        copy->n = curve->n;
        copy->n_memory_bound = curve->n_memory_bound;
        copy->tokens = g_new(double, curve->n);
        copy->efficiency = g_new(double, curve->n);
        memcpy(copy->tokens, curve->tokens, curve->n * sizeof(double));
        memcpy(copy->efficiency, curve->efficiency, curve->n * sizeof(double));
    }
    ms_gemm_curve_free(cal->curve);
    cal->curve = copy;
    cal->has_gemm = TRUE;
    cal->slowdown = overlap_slowdown;
    cal->launch = launch;
    return TRUE;
}

gboolean
ms_calibration_set_framework(MsCalibration *cal, const MsFramework *framework, guint points,
                             GError **error)
{
    g_autofree char *problem = NULL;
    if (!ms_framework_check(framework, &problem)) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE, "framework: %s", problem);
    }
    cal->has_framework = TRUE;
    cal->framework = *framework;
    cal->framework_points = points;
    return TRUE;
}

gboolean
ms_calibration_framework(const MsCalibration *cal, MsFramework *out, guint *points)
{
    if (!cal->has_framework) {
        return FALSE;
    }
    *out = cal->framework;
    if (points) {
        *points = cal->framework_points;
    }
    return TRUE;
}

gboolean
ms_calibration_has_gemm(const MsCalibration *cal)
{
    return cal->has_gemm;
}

gboolean
ms_calibration_apply_compute(const MsCalibration *cal, MsComputeModel *model, GError **error)
{
    if (!cal->has_gemm) {
        return TRUE;
    }
    if (cal->curve && !ms_compute_model_set_curve(model, cal->curve->tokens, cal->curve->efficiency,
                                                  cal->curve->n, error)) {
        return FALSE;
    }
    if (!ms_compute_model_set_overlap_slowdown(model, cal->slowdown, error)) {
        return FALSE;
    }
    if (cal->launch != MS_TIME_NEVER) {
        ms_compute_model_set_launch(model, cal->launch);
    }
    return TRUE;
}

MsComputeModel *
ms_calibration_compute_model(const MsCalibration *cal, const MsGpuSpec *spec, GError **error)
{
    g_autoptr(MsComputeModel) model = ms_compute_model_new(spec, error);
    if (model == NULL || !ms_calibration_apply_compute(cal, model, error)) {
        return NULL;
    }
    return g_steal_pointer(&model);
}
