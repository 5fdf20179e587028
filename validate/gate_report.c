/* gate_report: figures as JSON and JUnit XML. */
#include "gate_report.h"
#include "sim/base/json_output.h"

typedef struct {
    guint scenario;
    char *name, *metric;
    double expected_us, measured_us, change;
    MsGateVerdict verdict;
} Figure;

struct _MsGateReport {
    char *path;
    double tolerance;
    GArray *figures; /* Figure */
};

static const char *const verdicts[] = {"ok", "regressed", "improved"};

static void
figure_clear(gpointer p)
{
    Figure *f = p;
    g_free(f->name);
    g_free(f->metric);
}

MsGateReport *
ms_gate_report_new(const char *path, double tolerance)
{
    MsGateReport *r = g_new0(MsGateReport, 1);
    r->path = g_strdup(path);
    r->tolerance = tolerance;
    r->figures = g_array_new(FALSE, FALSE, sizeof(Figure));
    g_array_set_clear_func(r->figures, figure_clear);
    return r;
}

void
ms_gate_report_free(MsGateReport *r)
{
    if (r == NULL) {
        return;
    }
    g_array_unref(r->figures);
    g_free(r->path);
    g_free(r);
}

void
ms_gate_report_add(const MsGateFigure *f, gpointer report)
{
    MsGateReport *r = report;
    Figure copy = {f->scenario,    g_strdup(f->name), g_strdup(f->metric), f->expected_us,
                   f->measured_us, f->change,         f->verdict};
    g_array_append_val(r->figures, copy);
}

static guint
count(const MsGateReport *r, MsGateVerdict v)
{
    guint n = 0;
    for (guint i = 0; i < r->figures->len; i++) {
        n += g_array_index(r->figures, Figure, i).verdict == v;
    }
    return n;
}

static void
add_number(JsonBuilder *b, const char *key, double v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_double_value(b, v);
}

static void
add_int(JsonBuilder *b, const char *key, gint64 v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_int_value(b, v);
}

JsonNode *
ms_gate_report_to_json(const MsGateReport *r)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.check/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, "moesim-check");
    add_int(b, "version", 1);
    json_builder_set_member_name(b, "baseline");
    json_builder_add_string_value(b, r->path);
    add_number(b, "tolerance", r->tolerance);
    add_int(b, "figures", r->figures->len);
    add_int(b, "regressed", count(r, MS_GATE_REGRESSED));
    add_int(b, "improved", count(r, MS_GATE_IMPROVED));
    json_builder_set_member_name(b, "scenarios");
    json_builder_begin_array(b);
    for (guint i = 0; i < r->figures->len; i++) {
        const Figure *f = &g_array_index(r->figures, Figure, i);
        if (i == 0 || g_array_index(r->figures, Figure, i - 1).scenario != f->scenario) {
            if (i > 0) {
                json_builder_end_array(b);
                json_builder_end_object(b);
            }
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "name");
            json_builder_add_string_value(b, f->name);
            json_builder_set_member_name(b, "figures");
            json_builder_begin_array(b);
        }
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "metric");
        json_builder_add_string_value(b, f->metric);
        add_number(b, "expected_us", f->expected_us);
        add_number(b, "measured_us", f->measured_us);
        add_number(b, "change", f->change);
        json_builder_set_member_name(b, "verdict");
        json_builder_add_string_value(b, verdicts[f->verdict]);
        json_builder_end_object(b);
    }
    if (r->figures->len) {
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

char *
ms_gate_report_to_junit(const MsGateReport *r)
{
    guint n = r->figures->len, failures = count(r, MS_GATE_REGRESSED);
    g_autofree char *suite = g_markup_escape_text(r->path, -1);
    GString *s = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    g_string_append_printf(s, "<testsuites name=\"moesim check\" tests=\"%u\" failures=\"%u\">\n",
                           n, failures);
    g_string_append_printf(s, "  <testsuite name=\"%s\" tests=\"%u\" failures=\"%u\">\n", suite, n,
                           failures);
    for (guint i = 0; i < n; i++) {
        const Figure *f = &g_array_index(r->figures, Figure, i);
        g_autofree char *cls = g_markup_escape_text(f->name, -1);
        g_autofree char *what = g_strdup_printf(
            "%s: %.3f ms expected, %.3f ms measured (%+.2f%%, tolerance %.2f%%)", f->metric,
            f->expected_us / 1e3, f->measured_us / 1e3, 100 * f->change, 100 * r->tolerance);
        g_autofree char *msg = g_markup_escape_text(what, -1);
        g_string_append_printf(s, "    <testcase classname=\"%s\" name=\"%s\"", cls, f->metric);
        if (f->verdict == MS_GATE_REGRESSED) {
            g_string_append_printf(s, ">\n      <failure message=\"regressed: %s\"/>\n", msg);
            g_string_append(s, "    </testcase>\n");
        } else if (f->verdict == MS_GATE_IMPROVED) {
            g_string_append_printf(s,
                                   ">\n      <system-out>improved beyond the tolerance (record it "
                                   "with --update): %s</system-out>\n    </testcase>\n",
                                   msg);
        } else {
            g_string_append(s, "/>\n");
        }
    }
    g_string_append(s, "  </testsuite>\n</testsuites>\n");
    return g_string_free(s, FALSE);
}
