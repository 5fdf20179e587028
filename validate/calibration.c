/* calibration: the in-memory calibration, its reader (sim/ini.h for single values, lists parsed
 * here) and its writer. Groups are [calibration], [link CLASS], [collective NAME] and [gemm]. */
#include "calibration.h"

#include <math.h>
#include <string.h>

#include "sim/ini.h"

G_DEFINE_QUARK(ms - calibration - error - quark, ms_calibration_error)

#define N_COLLECTIVES (MS_MEASUREMENT_SENDRECV + 1)
#define LIST_MAX                                                                                   \
    4096 /* entries in one list: tables are a few dozen; thousands is a broken file                \
          */

G_STATIC_ASSERT(MS_LINK_N_CLASSES == 6);
static const char *const class_names[MS_LINK_N_CLASSES] = {
    "nvlink", "nvswitch", "pcie", "cpu", "nic", "fabric",
};

typedef struct {
    gboolean present;
    MsCalibrationLink link;
} LinkEntry;

typedef struct {
    gboolean present;
    guint ranks, per_node; /* 0, 0: the entry for any configuration */
    MsTime alpha;
    MsEffTable *table; /* NULL: no size table */
} CollectiveEntry;

struct _MsCalibration {
    char *topology;
    GPtrArray *sources; /* char*, NULL-terminated */
    LinkEntry links[MS_LINK_N_CLASSES];
    CollectiveEntry collectives[N_COLLECTIVES];
    GArray *configs[N_COLLECTIVES]; /* CollectiveEntry per (ranks, per_node), sorted */
    gboolean has_gemm;
    MsGemmCurve *curve; /* NULL: default efficiency */
    double slowdown;
    MsTime launch; /* MS_TIME_NEVER: not recorded */
};

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

const char *
ms_calibration_link_class_name(MsLinkClass klass)
{
    g_return_val_if_fail(klass < MS_LINK_N_CLASSES, "?");
    return class_names[klass];
}

gboolean
ms_calibration_link_class_from_name(const char *name, MsLinkClass *out)
{
    for (guint i = 0; i < MS_LINK_N_CLASSES; i++) {
        if (strcmp(name, class_names[i]) == 0) {
            *out = (MsLinkClass)i;
            return TRUE;
        }
    }
    return FALSE;
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
                         class_names[klass], link->bandwidth);
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

gboolean
ms_calibration_set_gemm(MsCalibration *cal, const MsGemmCurve *curve, double overlap_slowdown,
                        MsTime launch, GError **error)
{
    if (!(overlap_slowdown >= 1.0) || !(overlap_slowdown <= MS_COMPUTE_SLOWDOWN_MAX)) {
        return api_error(error, MS_CALIBRATION_ERROR_VALUE,
                         "gemm: overlap_slowdown %g is outside [1, %g]", overlap_slowdown,
                         MS_COMPUTE_SLOWDOWN_MAX);
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

/* ---- reader ---------------------------------------------------------------------------------- */

/* A located error in this module's domain: "FILE:LINE: [group] key: message". */
static gboolean G_GNUC_PRINTF(6, 7)
    ini_error(const MsIni *ini, const char *group, const char *key, GError **error,
              MsCalibrationError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_autoptr(GError) local = NULL;
    ms_ini_set_error(ini, group, key, &local, MS_INI_ERROR_VALUE, "%s", msg);
    g_set_error_literal(error, MS_CALIBRATION_ERROR, code, local->message);
    return FALSE;
}

typedef gboolean (*ItemParser)(const char *text, double *out, GError **error);

static gboolean
parse_size_item(const char *text, double *out, GError **error)
{
    guint64 v;
    if (!ms_parse_bytes(text, &v, error)) {
        return FALSE;
    }
    if (v == 0) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "size '%s' must be > 0", text);
        return FALSE;
    }
    *out = (double)v;
    return TRUE;
}

/* A plain number in (0, max]. */
static gboolean
parse_positive(const char *text, const char *what, double max, double *out, GError **error)
{
    if (!ms_parse_double(text, -G_MAXDOUBLE, G_MAXDOUBLE, out, error)) {
        return FALSE;
    }
    if (!(*out > 0) || *out > max) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "%s '%s' is outside (0, %g]", what,
                    text, max);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_tokens_item(const char *text, double *out, GError **error)
{
    return parse_positive(text, "token count", 1e12, out, error);
}

static gboolean
parse_efficiency_item(const char *text, double *out, GError **error)
{
    return parse_positive(text, "efficiency", MS_COMPUTE_EFFICIENCY_MAX, out, error);
}

/* A ';'-separated list (a trailing ';' allowed, as GKeyFile writes lists), each item parsed. */
static GArray *
read_list(const MsIni *ini, const char *group, const char *key, ItemParser parse, GError **error)
{
    const char *text = ms_ini_get_string(ini, group, key, error);
    if (text == NULL) {
        return NULL;
    }
    g_auto(GStrv) items = g_strsplit(text, ";", -1);
    guint n = g_strv_length(items);
    if (n > 0 && *g_strstrip(items[n - 1]) == '\0') {
        n--;
    }
    if (n == 0 || n > LIST_MAX) {
        ini_error(ini, group, key, error, MS_CALIBRATION_ERROR_LIST,
                  "%u items: a list needs 1 to %d", n, LIST_MAX);
        return NULL;
    }
    g_autoptr(GArray) out = g_array_sized_new(FALSE, FALSE, sizeof(double), n);
    for (guint i = 0; i < n; i++) {
        g_autoptr(GError) local = NULL;
        double v;
        if (*g_strstrip(items[i]) == '\0') {
            ini_error(ini, group, key, error, MS_CALIBRATION_ERROR_LIST, "item %u is empty", i + 1);
            return NULL;
        }
        if (!parse(items[i], &v, &local)) {
            ini_error(ini, group, key, error, MS_CALIBRATION_ERROR_VALUE, "item %u: %s", i + 1,
                      local->message);
            return NULL;
        }
        if (out->len > 0 && parse != parse_efficiency_item &&
            !(v > g_array_index(out, double, out->len - 1))) {
            ini_error(ini, group, key, error, MS_CALIBRATION_ERROR_LIST,
                      "item %u: '%s' is not larger than the item before it (the list must "
                      "increase)",
                      i + 1, items[i]);
            return NULL;
        }
        g_array_append_val(out, v);
    }
    return g_steal_pointer(&out);
}

/* Reads the paired lists xkey and efficiency; both absent is fine (*x = NULL). */
static gboolean
read_table(const MsIni *ini, const char *group, const char *xkey, ItemParser parse, GArray **x,
           GArray **eff, GError **error)
{
    gboolean has_x = ms_ini_has_key(ini, group, xkey);
    gboolean has_e = ms_ini_has_key(ini, group, "efficiency");
    *x = *eff = NULL;
    if (has_x != has_e) {
        return ini_error(ini, group, has_x ? xkey : "efficiency", error, MS_CALIBRATION_ERROR_LIST,
                         "given without '%s'", has_x ? "efficiency" : xkey);
    }
    if (!has_x) {
        return TRUE;
    }
    *x = read_list(ini, group, xkey, parse, error);
    *eff = *x ? read_list(ini, group, "efficiency", parse_efficiency_item, error) : NULL;
    if (*eff == NULL) {
        g_clear_pointer(x, g_array_unref);
        return FALSE;
    }
    if ((*x)->len != (*eff)->len) {
        ini_error(ini, group, "efficiency", error, MS_CALIBRATION_ERROR_LIST,
                  "%u values, but %s has %u", (*eff)->len, xkey, (*x)->len);
        g_clear_pointer(x, g_array_unref);
        g_clear_pointer(eff, g_array_unref);
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_header(MsCalibration *cal, const MsIni *ini, GError **error)
{
    static const char *const keys[] = {"format", "topology", "sources", NULL};
    guint64 format = 0;
    if (!ms_ini_has_group(ini, "calibration") || !ms_ini_has_key(ini, "calibration", "format")) {
        g_set_error(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VERSION,
                    "%s: no [calibration] group with format = %d: not a moesim calibration file",
                    ms_ini_source(ini), MS_CALIBRATION_FORMAT);
        return FALSE;
    }
    if (!ms_ini_check_keys(ini, "calibration", keys, error) ||
        !ms_ini_get_uint(ini, "calibration", "format", 0, G_MAXUINT32, &format, error)) {
        return FALSE;
    }
    if (format != MS_CALIBRATION_FORMAT) {
        return ini_error(ini, "calibration", "format", error, MS_CALIBRATION_ERROR_VERSION,
                         "format %" G_GUINT64_FORMAT " is not one this moesim reads (it reads %d)",
                         format, MS_CALIBRATION_FORMAT);
    }
    const char *topology = NULL, *sources = NULL;
    ms_ini_opt_string(ini, "calibration", "topology", &topology, NULL);
    ms_ini_opt_string(ini, "calibration", "sources", &sources, NULL);
    if (!ms_calibration_set_topology(cal, topology, error)) {
        return FALSE;
    }
    g_auto(GStrv) items = g_strsplit(sources ? sources : "", ";", -1);
    for (guint i = 0; items[i]; i++) {
        if (*g_strstrip(items[i]) && !ms_calibration_add_source(cal, items[i], error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
read_link(MsCalibration *cal, const MsIni *ini, const char *group, const char *name, GError **error)
{
    static const char *const keys[] = {"bandwidth",    "latency", "r2",
                                       "max_residual", "points",  NULL};
    MsLinkClass klass;
    if (!ms_calibration_link_class_from_name(name, &klass)) {
        return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                         "unknown link class '%s' (classes: nvlink, nvswitch, pcie, cpu, nic, "
                         "fabric)",
                         name);
    }
    MsCalibrationLink l = {.r2 = NAN, .max_residual = NAN};
    guint64 points = 0;
    if (!ms_ini_check_keys(ini, group, keys, error) ||
        !ms_ini_get_bandwidth(ini, group, "bandwidth", &l.bandwidth, error) ||
        !ms_ini_get_time(ini, group, "latency", &l.latency, error) ||
        !ms_ini_opt_double(ini, group, "r2", -1e9, 1.0, &l.r2, error) ||
        !ms_ini_opt_double(ini, group, "max_residual", 0, 1e9, &l.max_residual, error) ||
        !ms_ini_opt_uint(ini, group, "points", 1, G_MAXUINT32, &points, error)) {
        return FALSE;
    }
    l.points = (guint)points;
    return ms_calibration_set_link(cal, klass, &l, error);
}

static gboolean
read_collective(MsCalibration *cal, const MsIni *ini, const char *group, const char *name,
                GError **error)
{
    static const char *const keys[] = {"alpha", "sizes", "efficiency", NULL};
    MsMeasurementKind kind;
    guint ranks = 0, per_node = 0;
    g_auto(GStrv) words = g_strsplit(name, " ", -1);
    if (g_strv_length(words) == 2) {
        if (!ms_calibration_parse_config(words[1], &ranks, &per_node)) {
            return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                             "configuration '%s' is not RANKSxPER_NODE (e.g. 16x8)", words[1]);
        }
        name = words[0];
    } else if (g_strv_length(words) != 1) {
        return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                         "expected [collective NAME] or [collective NAME RANKSxPER_NODE]");
    }
    if (!ms_measurement_kind_from_name(name, &kind) || !ms_measurement_kind_is_comm(kind)) {
        return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                         "unknown collective '%s' (collectives: allreduce, alltoall, allgather, "
                         "reducescatter, sendrecv)",
                         name);
    }
    MsTime alpha = 0;
    g_autoptr(GArray) sizes = NULL;
    g_autoptr(GArray) eff = NULL;
    if (!ms_ini_check_keys(ini, group, keys, error) ||
        !ms_ini_get_time(ini, group, "alpha", &alpha, error) ||
        !read_table(ini, group, "sizes", parse_size_item, &sizes, &eff, error)) {
        return FALSE;
    }
    /* The lists were checked as they were read; the table is a view of them, copied by the
     * setter. */
    MsEffTable table = {0};
    if (sizes) {
        table.n = sizes->len;
        table.sizes = (double *)sizes->data;
        table.ratios = (double *)eff->data;
    }
    return ms_calibration_set_collective_config(cal, kind, ranks, per_node, alpha,
                                                sizes ? &table : NULL, error);
}

static gboolean
read_gemm(MsCalibration *cal, const MsIni *ini, GError **error)
{
    static const char *const keys[] = {"tokens", "efficiency", "overlap_slowdown", "launch", NULL};
    double slowdown = 1.0;
    MsTime launch = MS_TIME_NEVER;
    g_autoptr(GArray) tokens = NULL;
    g_autoptr(GArray) eff = NULL;
    if (!ms_ini_check_keys(ini, "gemm", keys, error) ||
        !ms_ini_opt_double(ini, "gemm", "overlap_slowdown", 1.0, MS_COMPUTE_SLOWDOWN_MAX, &slowdown,
                           error) ||
        !ms_ini_opt_time(ini, "gemm", "launch", &launch, error) ||
        !read_table(ini, "gemm", "tokens", parse_tokens_item, &tokens, &eff, error)) {
        return FALSE;
    }
    MsGemmCurve curve = {0};
    if (tokens) {
        curve.n = tokens->len;
        curve.tokens = (double *)tokens->data;
        curve.efficiency = (double *)eff->data;
    }
    return ms_calibration_set_gemm(cal, tokens ? &curve : NULL, slowdown, launch, error);
}

static gboolean
read_group(MsCalibration *cal, const MsIni *ini, const char *group, GError **error)
{
    if (strcmp(group, "calibration") == 0) {
        return TRUE;
    }
    if (strcmp(group, "gemm") == 0) {
        return read_gemm(cal, ini, error);
    }
    if (g_str_has_prefix(group, "link ")) {
        return read_link(cal, ini, group, group + strlen("link "), error);
    }
    if (g_str_has_prefix(group, "collective ")) {
        return read_collective(cal, ini, group, group + strlen("collective "), error);
    }
    return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                     "unknown group (groups: [calibration], [link CLASS], [collective NAME], "
                     "[gemm])");
}

static MsCalibration *
from_ini(const MsIni *ini, GError **error)
{
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    if (!read_header(cal, ini, error)) {
        return NULL;
    }
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        if (!read_group(cal, ini, groups[i], error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&cal);
}

MsCalibration *
ms_calibration_load_data(const char *data, gsize len, const char *source, GError **error)
{
    g_autoptr(MsIni) ini = ms_ini_load_data(data, len, source, error);
    return ini ? from_ini(ini, error) : NULL;
}

MsCalibration *
ms_calibration_load(const char *path, GError **error)
{
    g_autoptr(MsIni) ini = ms_ini_load_file(path, error);
    return ini ? from_ini(ini, error) : NULL;
}

/* ---- writer ---------------------------------------------------------------------------------- */

static void
append_number(GString *s, const char *format, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(s, g_ascii_formatd(buf, sizeof buf, format, v));
}

/* Picoseconds as exact decimal microseconds: 3200000 -> "3.2us". */
static void
append_time(GString *s, MsTime t)
{
    g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)(t / MS_PS_PER_US));
    guint64 frac = (guint64)(t % MS_PS_PER_US);
    if (frac) {
        char digits[8];
        g_snprintf(digits, sizeof digits, "%06" G_GUINT64_FORMAT, frac);
        for (int i = 5; i > 0 && digits[i] == '0'; i--) {
            digits[i] = '\0';
        }
        g_string_append_printf(s, ".%s", digits);
    }
    g_string_append(s, "us");
}

/* A whole number of bytes in the unit that divides it exactly with the smallest quotient:
 * 65536 -> "64KiB", 64000000 -> "64MB", 1000001 -> "1000001B". */
static void
append_size(GString *s, guint64 bytes)
{
    static const struct {
        const char *unit;
        guint64 scale;
    } units[] = {
        {"TiB", G_GUINT64_CONSTANT(1) << 40},
        {"GiB", 1u << 30},
        {"MiB", 1u << 20},
        {"KiB", 1u << 10},
        {"TB", G_GUINT64_CONSTANT(1000000000000)},
        {"GB", 1000000000u},
        {"MB", 1000000u},
        {"KB", 1000u},
        {"B", 1},
    };
    guint best = G_N_ELEMENTS(units) - 1;
    for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
        if (bytes >= units[i].scale && bytes % units[i].scale == 0 &&
            bytes / units[i].scale < bytes / units[best].scale) {
            best = i;
        }
    }
    g_string_append_printf(s, "%" G_GUINT64_FORMAT "%s", bytes / units[best].scale,
                           units[best].unit);
}

static void
append_list(GString *s, const char *key, const double *v, guint n, gboolean sizes,
            const char *format)
{
    g_string_append_printf(s, "%s = ", key);
    for (guint i = 0; i < n; i++) {
        if (i) {
            g_string_append_c(s, ';');
        }
        if (sizes) {
            append_size(s, (guint64)v[i]);
        } else {
            append_number(s, format, v[i]);
        }
    }
    g_string_append_c(s, '\n');
}

static void
write_header(GString *s, const MsCalibration *cal)
{
    g_string_append_printf(s,
                           "# moesim calibration (see docs/calibration-format.md)\n"
                           "[calibration]\nformat = %d\n",
                           MS_CALIBRATION_FORMAT);
    if (cal->topology) {
        g_string_append_printf(s, "topology = %s\n", cal->topology);
    }
    if (cal->sources->len > 1) {
        g_autofree char *joined = g_strjoinv(";", (char **)cal->sources->pdata);
        g_string_append_printf(s, "sources = %s\n", joined);
    }
}

static void
write_link(GString *s, MsLinkClass klass, const MsCalibrationLink *l)
{
    g_string_append_printf(s, "\n[link %s]\nbandwidth = ", class_names[klass]);
    append_number(s, "%.10g", l->bandwidth / 1e9);
    g_string_append(s, "GBps\nlatency = ");
    append_time(s, l->latency);
    g_string_append_c(s, '\n');
    if (!isnan(l->r2)) {
        g_string_append(s, "r2 = ");
        append_number(s, "%.6g", l->r2);
        g_string_append_c(s, '\n');
    }
    if (!isnan(l->max_residual)) {
        g_string_append(s, "max_residual = ");
        append_number(s, "%.6g", l->max_residual);
        g_string_append_c(s, '\n');
    }
    if (l->points) {
        g_string_append_printf(s, "points = %u\n", l->points);
    }
}

static void
write_gemm(GString *s, const MsCalibration *cal)
{
    g_string_append(s, "\n[gemm]\n");
    if (cal->curve) {
        append_list(s, "tokens", cal->curve->tokens, cal->curve->n, FALSE, "%.10g");
        append_list(s, "efficiency", cal->curve->efficiency, cal->curve->n, FALSE, "%.6g");
    }
    g_string_append(s, "overlap_slowdown = ");
    append_number(s, "%.6g", cal->slowdown);
    g_string_append_c(s, '\n');
    if (cal->launch != MS_TIME_NEVER) {
        g_string_append(s, "launch = ");
        append_time(s, cal->launch);
        g_string_append_c(s, '\n');
    }
}

static void
write_collective(GString *s, guint kind, const CollectiveEntry *e)
{
    g_string_append_printf(s, "\n[collective %s", ms_measurement_kind_name(kind));
    if (e->ranks) {
        g_string_append_printf(s, " %ux%u", e->ranks, e->per_node);
    }
    g_string_append(s, "]\nalpha = ");
    append_time(s, e->alpha);
    g_string_append_c(s, '\n');
    if (e->table) {
        append_list(s, "sizes", e->table->sizes, e->table->n, TRUE, NULL);
        append_list(s, "efficiency", e->table->ratios, e->table->n, FALSE, "%.6g");
    }
}

char *
ms_calibration_to_data(const MsCalibration *cal, gsize *len)
{
    GString *s = g_string_new(NULL);
    write_header(s, cal);
    for (guint k = 0; k < MS_LINK_N_CLASSES; k++) {
        if (cal->links[k].present) {
            write_link(s, (MsLinkClass)k, &cal->links[k].link);
        }
    }
    for (guint k = 0; k < N_COLLECTIVES; k++) {
        if (cal->collectives[k].present) {
            write_collective(s, k, &cal->collectives[k]);
        }
        for (guint c = 0; cal->configs[k] && c < cal->configs[k]->len; c++) {
            write_collective(s, k, &g_array_index(cal->configs[k], CollectiveEntry, c));
        }
    }
    if (cal->has_gemm) {
        write_gemm(s, cal);
    }
    if (len) {
        *len = s->len;
    }
    return g_string_free(s, FALSE);
}

gboolean
ms_calibration_save(const MsCalibration *cal, const char *path, GError **error)
{
    gsize len = 0;
    g_autofree char *text = ms_calibration_to_data(cal, &len);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text, (gssize)len, &local)) {
        return api_error(error, MS_CALIBRATION_ERROR_IO, "%s", local->message);
    }
    return TRUE;
}
