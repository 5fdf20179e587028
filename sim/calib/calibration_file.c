/* calibration_file: the calibration's reader (sim/base/ini.h for single values, lists parsed here)
 * and its writer. Groups are [calibration], [link CLASS], [collective NAME] and [gemm]. */
#include <math.h>
#include <string.h>

#include "sim/base/ini.h"
#include "sim/base/output_file.h"
#include "sim/calib/calibration_private.h"

/* Entries in one list: tables are a few dozen; thousands is a broken file. */
#define LIST_MAX 4096

#define FRAMEWORK_TIME                                                                             \
    "host time per occurrence (docs/models.md); a second per op or layer is a unit typo"

/* Every number a calibration file carries (docs/bad-inputs.md is generated from this table, and
 * tests/test_input_ranges.c walks it). Lists check each item. */
static const MsRange fields[] = {
    {"[link CLASS]", "bandwidth", MS_RANGE_BANDWIDTH, MS_TOPOLOGY_BANDWIDTH_MIN,
     MS_TOPOLOGY_BANDWIDTH_MAX, "as a topology link's"},
    {"[link CLASS]", "latency", MS_RANGE_TIME, 0, 1,
     "as a topology link's: a second is a unit typo (ms for us), not a link"},
    {"[link CLASS]", "r2", MS_RANGE_NUMBER, -1e9, 1,
     "a fit's coefficient of determination is at most 1; recorded, not used"},
    {"[link CLASS]", "max_residual", MS_RANGE_NUMBER, 0, 1e9,
     "a relative residual; recorded, not used"},
    {"[link CLASS]", "points", MS_RANGE_COUNT, 1, G_MAXUINT32, "a count of measurements"},
    {"[collective NAME]", "alpha", MS_RANGE_TIME, 0, 1,
     "a per-call overhead; measured ones are a few to a few hundred microseconds"},
    {"[collective NAME]", "sizes", MS_RANGE_BYTES, 1, (double)MS_BYTES_MAX,
     "call sizes, as every size moesim reads"},
    {"[collective NAME]", "efficiency", MS_RANGE_NUMBER, MS_EFF_RATIO_MIN, MS_EFF_RATIO_MAX,
     "the fit keeps efficiencies in this range (docs/calibration.md); transfers are stretched "
     "by 1 / efficiency, at most 100x, so 1 PiB stays far inside 64 bits"},
    {"[gemm]", "tokens", MS_RANGE_NUMBER, 1, 1e12, "a GEMM has at least one token"},
    {"[gemm]", "efficiency", MS_RANGE_NUMBER, MS_CALIBRATION_GEMM_EFFICIENCY_MIN,
     MS_COMPUTE_EFFICIENCY_MAX,
     "achieved over peak FLOP/s; a memory-bound point stores flops x hbm / (peak x bytes), "
     "above 1e-3 for one token of an fp32 expert on any GPU so far; above 1 only for a peak "
     "quoted too low"},
    {"[gemm]", "overlap_slowdown", MS_RANGE_NUMBER, 1, MS_COMPUTE_SLOWDOWN_MAX,
     "a slowdown of compute overlapped with communication; never a speedup"},
    {"[gemm]", "launch", MS_RANGE_TIME, 0, 1,
     "a kernel launch overhead; a few microseconds on real GPUs"},
    {"[framework]", "name", MS_RANGE_CHOICE, 0, MS_FRAMEWORK_N - 1,
     "the framework whose synchronisations per layer the group starts from (default custom)",
     ms_framework_names},
    {"[framework]", "op", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, FRAMEWORK_TIME},
    {"[framework]", "moe_layer", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, FRAMEWORK_TIME},
    {"[framework]", "expert", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, FRAMEWORK_TIME},
    {"[framework]", "sync", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, FRAMEWORK_TIME},
    {"[framework]", "token", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, FRAMEWORK_TIME},
    {"[framework]", "syncs", MS_RANGE_COUNT, 0, MS_FRAMEWORK_MAX_SYNCS,
     "host synchronisations per forward MoE layer"},
    {"[framework]", "points", MS_RANGE_COUNT, 1, G_MAXUINT32,
     "MoE layers the figures were fitted on; recorded, not used"},
    {NULL},
};

static const MsRangeTable ranges = {"Calibration files", fields};

const MsRangeTable *
ms_calibration_ranges(void)
{
    return &ranges;
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

static const MsRange *
field(const char *where, const char *key)
{
    return ms_range_find(fields, where, key);
}

/* A ';'-separated list (a trailing ';' allowed, as GKeyFile writes lists), each item checked
 * against range; all but efficiencies must increase. */
static GArray *
read_list(const MsIni *ini, const char *group, const MsRange *range, GError **error)
{
    const char *key = range->key;
    gboolean increasing = strcmp(key, "efficiency") != 0;
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
        if (!ms_range_parse(range, items[i], &v, &local)) {
            ini_error(ini, group, key, error, MS_CALIBRATION_ERROR_VALUE, "item %u: %s", i + 1,
                      local->message);
            return NULL;
        }
        if (out->len > 0 && increasing && !(v > g_array_index(out, double, out->len - 1))) {
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

/* Reads the paired lists xkey and efficiency of the table's row where; both absent is fine
 * (*x = NULL). */
static gboolean
read_table(const MsIni *ini, const char *group, const char *where, const char *xkey, GArray **x,
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
    *x = read_list(ini, group, field(where, xkey), error);
    *eff = *x ? read_list(ini, group, field(where, "efficiency"), error) : NULL;
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
    if (!ms_link_class_from_name(name, &klass)) {
        return ini_error(ini, group, NULL, error, MS_CALIBRATION_ERROR_GROUP,
                         "unknown link class '%s' (classes: nvlink, nvswitch, pcie, cpu, nic, "
                         "fabric)",
                         name);
    }
    MsCalibrationLink l = {.r2 = NAN, .max_residual = NAN};
    guint64 points = 0;
    const char *w = "[link CLASS]";
    if (!ms_ini_check_keys(ini, group, keys, error) ||
        !ms_ini_range_double(ini, group, field(w, "bandwidth"), TRUE, &l.bandwidth, error) ||
        !ms_ini_range_time(ini, group, field(w, "latency"), TRUE, &l.latency, error) ||
        !ms_ini_range_double(ini, group, field(w, "r2"), FALSE, &l.r2, error) ||
        !ms_ini_range_double(ini, group, field(w, "max_residual"), FALSE, &l.max_residual, error) ||
        !ms_ini_range_uint(ini, group, field(w, "points"), FALSE, &points, error)) {
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
        !ms_ini_range_time(ini, group, field("[collective NAME]", "alpha"), TRUE, &alpha, error) ||
        !read_table(ini, group, "[collective NAME]", "sizes", &sizes, &eff, error)) {
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
        !ms_ini_range_double(ini, "gemm", field("[gemm]", "overlap_slowdown"), FALSE, &slowdown,
                             error) ||
        !ms_ini_range_time(ini, "gemm", field("[gemm]", "launch"), FALSE, &launch, error) ||
        !read_table(ini, "gemm", "[gemm]", "tokens", &tokens, &eff, error)) {
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

/* [framework]: name (the defaults it starts from), then each figure; docs/calibration-format.md. */
static gboolean
read_framework_time(const MsIni *ini, const char *key, double *out, GError **error)
{
    MsTime t = ms_time_from_s(*out);
    if (!ms_ini_range_time(ini, "framework", field("[framework]", key), FALSE, &t, error)) {
        return FALSE;
    }
    *out = ms_time_to_s(t);
    return TRUE;
}

static gboolean
read_framework(MsCalibration *cal, const MsIni *ini, GError **error)
{
    static const char *const keys[] = {"name",  "op",    "moe_layer", "expert", "sync",
                                       "syncs", "token", "points",    NULL};
    guint kind = MS_FRAMEWORK_CUSTOM;
    if (!ms_ini_check_keys(ini, "framework", keys, error) ||
        !ms_ini_range_choice(ini, "framework", field("[framework]", "name"), FALSE, &kind, error)) {
        return FALSE;
    }
    MsFramework f;
    ms_framework_defaults(kind, TRUE, &f);
    guint64 syncs = f.syncs, points = 0;
    if (!read_framework_time(ini, "op", &f.op_s, error) ||
        !read_framework_time(ini, "moe_layer", &f.layer_s, error) ||
        !read_framework_time(ini, "expert", &f.expert_s, error) ||
        !read_framework_time(ini, "sync", &f.sync_s, error) ||
        !read_framework_time(ini, "token", &f.token_s, error) ||
        !ms_ini_range_uint(ini, "framework", field("[framework]", "syncs"), FALSE, &syncs, error) ||
        !ms_ini_range_uint(ini, "framework", field("[framework]", "points"), FALSE, &points,
                           error)) {
        return FALSE;
    }
    f.syncs = (guint)syncs;
    return ms_calibration_set_framework(cal, &f, (guint)points, error);
}

static gboolean
read_group(MsCalibration *cal, const MsIni *ini, const char *group, GError **error)
{
    if (strcmp(group, "calibration") == 0) {
        return TRUE;
    }
    if (strcmp(group, "framework") == 0) {
        return read_framework(cal, ini, error);
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
                     "[gemm], [framework])");
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
    g_autoptr(MsIni) ini = ms_ini_load_file(path, MS_INPUT_CALIBRATION, error);
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
    g_string_append_printf(s, "\n[link %s]\nbandwidth = ", ms_link_class_name(klass));
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
write_framework(GString *s, const MsCalibration *cal)
{
    const MsFramework *f = &cal->framework;
    const struct {
        const char *key;
        double v;
    } times[] = {{"op", f->op_s},
                 {"moe_layer", f->layer_s},
                 {"expert", f->expert_s},
                 {"sync", f->sync_s},
                 {"token", f->token_s}};
    g_string_append_printf(s, "\n[framework]\nname = %s\n", ms_framework_name(f->kind));
    for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
        g_string_append_printf(s, "%s = ", times[i].key);
        append_time(s, ms_time_from_s(times[i].v));
        g_string_append_c(s, '\n');
    }
    g_string_append_printf(s, "syncs = %u\n", f->syncs);
    if (cal->framework_points) {
        g_string_append_printf(s, "points = %u\n", cal->framework_points);
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
    if (cal->has_framework) {
        write_framework(s, cal);
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
    if (!ms_output_file_set_contents(path, MS_OUTPUT_REPLACE, text, len, &local)) {
        g_set_error_literal(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_IO, local->message);
        return FALSE;
    }
    return TRUE;
}
