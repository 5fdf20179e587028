/* Tests of gate: baselines read and checked before anything runs (every refused field with the
 * file and scenario named), figures recorded by an update and compared against a tolerance
 * (ok, regressed, improved, with the change as measured / expected - 1), the baseline written
 * back, and `moesim check` with its exit codes. */
#include <json-glib/json-glib.h>

#include "sim/base/json_input.h"
#include "sweep_fixture.h"
#include "validate/gate.h"
#include "validate/gate_report.h"

/* A baseline of two scenarios on the small inputs; first and extra are inserted into the first
 * and the second. */
static char *
baseline2(const char *name, const char *first, const char *extra)
{
    g_autofree char *text = g_strdup_printf(
        "{\"format\": \"moesim-baseline\", \"version\": 1, \"scenarios\": [\n"
        " {\"name\": \"tiny fifo\", \"topology\": \"%s\", \"model\": \"%s\", \"policy\": "
        "\"fifo\"%s},\n"
        " {\"topology\": \"%s\", \"model\": \"%s\", \"policy\": \"lina\", \"mode\": \"train\", "
        "\"iterations\": 2, \"warmup\": 0, \"seed\": 3, \"trace\": \"gen:tokens=64\"%s}\n]}\n",
        sfx_topology(), sfx_model(), first ? first : "", sfx_topology(), sfx_model(),
        extra ? extra : "");
    return ms_test_write_tmp(name, text);
}

static char *
baseline(const char *name, const char *extra)
{
    return baseline2(name, NULL, extra);
}

/* An expectation scenario 0 meets (its step time is well under a second). */
#define MET ", \"expect\": {\"step_time_us\": 1e6}"

typedef struct {
    guint figures, firsts;
    GPtrArray *verdicts; /* "NAME METRIC VERDICT" */
} Seen;

static void
seen_figure(const MsGateFigure *f, gpointer ctx)
{
    static const char *const names[] = {"ok", "regressed", "improved"};
    Seen *s = ctx;
    s->figures++;
    s->firsts += f->first;
    MS_ASSERT_REL(f->change, f->measured_us / f->expected_us - 1, 1e-12);
    g_ptr_array_add(s->verdicts,
                    g_strdup_printf("%s %s %s", f->name, f->metric, names[f->verdict]));
}

/* Sets one expected figure of scenario i to factor x what it was. */
static char *
scaled(const char *path, guint i, const char *metric, double factor)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_assert(json_parser_load_from_file(p, path, NULL));
    JsonArray *sa =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "scenarios");
    JsonObject *expect =
        json_object_get_object_member(json_array_get_object_element(sa, i), "expect");
    json_object_set_double_member(expect, metric,
                                  json_object_get_double_member(expect, metric) * factor);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_root(gen, json_parser_get_root(p));
    g_autofree char *text = json_generator_to_data(gen, NULL);
    return ms_test_write_tmp("scaled.json", text);
}

static void
test_update_and_check(void)
{
    GError *error = NULL;
    g_autofree char *path = baseline("b.json", NULL);
    g_autoptr(MsBaseline) b = ms_baseline_load(path, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_baseline_n_scenarios(b), 2);
    CU_ASSERT_STRING_EQUAL(ms_baseline_name(b, 0), "tiny fifo");
    CU_ASSERT_STRING_EQUAL(ms_baseline_name(b, 1), "scenario 1");
    CU_ASSERT_STRING_EQUAL(ms_baseline_path(b), path);
    /* Without expected figures there is nothing to check: refused before anything runs. */
    MsGateSummary sum;
    CU_ASSERT_FALSE(ms_gate_check(b, 0.02, NULL, NULL, &sum, &error));
    MS_ASSERT_ERROR(error, MS_GATE_ERROR, MS_GATE_ERROR_EXPECT,
                    "scenario 0 (tiny fifo) has no 'expect' figures: record them with --update");
    CU_ASSERT_TRUE(ms_gate_update(b, NULL, NULL, &error));
    g_autofree char *recorded = g_build_filename(ms_test_tmpdir(), "recorded.json", NULL);
    CU_ASSERT_TRUE(ms_baseline_write(b, recorded, &error));
    g_assert_no_error(error);
    /* Recorded figures (rounded to 1e-3 us) pass a 0.1% tolerance; all five of each scenario. */
    g_autoptr(MsBaseline) r = ms_baseline_load(recorded, &error);
    g_assert_no_error(error);
    Seen seen = {0, 0, g_ptr_array_new_with_free_func(g_free)};
    CU_ASSERT_TRUE(ms_gate_check(r, 1e-3, seen_figure, &seen, &sum, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(sum.scenarios, 2);
    CU_ASSERT_EQUAL(sum.figures, 10);
    CU_ASSERT_EQUAL(seen.figures, 10);
    CU_ASSERT_EQUAL(seen.firsts, 2);
    CU_ASSERT_EQUAL(sum.regressed + sum.improved, 0);
    g_ptr_array_unref(seen.verdicts);
    /* Expected 10% faster than measured: the measured figure is 11.1% worse. */
    g_autofree char *worse = scaled(recorded, 1, "a2a_us", 0.9);
    g_autoptr(MsBaseline) w = ms_baseline_load(worse, &error);
    Seen sw = {0, 0, g_ptr_array_new_with_free_func(g_free)};
    CU_ASSERT_TRUE(ms_gate_check(w, 0.02, seen_figure, &sw, &sum, &error));
    CU_ASSERT_EQUAL(sum.regressed, 1);
    CU_ASSERT_EQUAL(sum.improved, 0);
    CU_ASSERT_TRUE(g_ptr_array_find_with_equal_func(sw.verdicts, "scenario 1 a2a_us regressed",
                                                    g_str_equal, NULL));
    g_ptr_array_unref(sw.verdicts);
    CU_ASSERT_TRUE(ms_gate_check(w, 0.12, NULL, NULL, &sum, &error));
    CU_ASSERT_EQUAL(sum.regressed, 0);
    g_autofree char *better = scaled(recorded, 0, "step_time_us", 1.5);
    g_autoptr(MsBaseline) i = ms_baseline_load(better, &error);
    CU_ASSERT_TRUE(ms_gate_check(i, 0.02, NULL, NULL, &sum, &error));
    CU_ASSERT_EQUAL(sum.improved, 1);
    CU_ASSERT_EQUAL(sum.regressed, 0);
}

static void
load_refused(const char *text, gint code, const char *needle)
{
    GError *error = NULL;
    g_autofree char *path = ms_test_write_tmp("bad.json", text);
    CU_ASSERT_PTR_NULL(ms_baseline_load(path, &error));
    MS_ASSERT_ERROR(error, MS_GATE_ERROR, code, needle);
}

#define BASE "{\"format\": \"moesim-baseline\", \"scenarios\": "

static void
test_refused(void)
{
    load_refused("{\"format\": \"moesim-result\", \"scenarios\": []}", MS_GATE_ERROR_FORMAT,
                 "bad.json: not a moesim baseline");
    load_refused(BASE "{}}", MS_GATE_ERROR_FORMAT, "not a moesim baseline");
    load_refused(BASE "[{}, 3]}", MS_GATE_ERROR_FORMAT, "bad.json: scenario 1 is not an object");
    load_refused(BASE "[{\"polcy\": \"fifo\"}]}", MS_GATE_ERROR_FORMAT,
                 "bad.json: scenario 0: unknown field 'polcy' (fields: name, topology");
    load_refused(BASE "[{\"model\": 3}]}", MS_GATE_ERROR_FORMAT, "field 'model' must be a string");
    load_refused(BASE "[{\"mode\": \"serve\"}]}", MS_GATE_ERROR_FORMAT,
                 "mode 'serve': use train or infer");
    load_refused(BASE "[{\"iterations\": -1}]}", MS_GATE_ERROR_FORMAT,
                 "field 'iterations' must be an integer from 0 to 1000000");
    load_refused(BASE "[{\"seed\": 1.5}]}", MS_GATE_ERROR_FORMAT, "field 'seed' must be");
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_baseline_load("no/such.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_IO, "no/such.json: ");
    g_autofree char *deep = ms_test_write_tmp("deep.json", "[[[[");
    CU_ASSERT_PTR_NULL(ms_baseline_load(deep, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_EQUAL(error->domain, MS_JSON_INPUT_ERROR);
    g_clear_error(&error);
    /* A scenario that does not run: the file and the scenario named. */
    g_autofree char *path = ms_test_write_tmp(
        "norun.json", BASE "[{\"topology\": \"dgx-z9\", \"expect\": {\"a2a_us\": 1}}]}");
    g_autoptr(MsBaseline) b = ms_baseline_load(path, &error);
    g_assert_no_error(error);
    MsGateSummary sum;
    CU_ASSERT_FALSE(ms_gate_check(b, 0.02, NULL, NULL, &sum, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "norun.json: scenario 0: unknown topology 'dgx-z9'");
}

/* Regression: a misspelt expected figure ("step_time") compared nothing and gave "no
 * regression", exit 0; a figure that is not a number was read as 0 and reported a +inf%
 * regression, exit 1; zero and negative figures were taken. All are refused before anything
 * runs, and update replaces them. */
static void
test_expectations(void)
{
    static const struct {
        const char *expect, *needle;
    } bad[] = {
        {"{\"step_time\": 100}", "scenario 1: expect: unknown figure 'step_time' (figures: "
                                 "step_time_us, step_time_p95_us, a2a_us"},
        {"{\"step_time_us\": \"fast\"}", "scenario 1: expect: step_time_us must be a positive "
                                         "number of microseconds"},
        {"{\"a2a_us\": 0}", "expect: a2a_us must be a positive number"},
        {"{\"a2a_us\": -3.5}", "expect: a2a_us must be a positive number"},
        {"{\"a2a_us\": null}", "expect: a2a_us must be a positive number"},
        {"{}", "scenario 1: expect holds no figure: record them with --update"},
        {"[1]", "scenario 1: expect must be an object of figures"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *extra = g_strdup_printf(", \"expect\": %s", bad[i].expect);
        g_autofree char *path = baseline2("expect.json", MET, extra);
        GError *error = NULL;
        g_autoptr(MsBaseline) b = ms_baseline_load(path, &error);
        g_assert_no_error(error);
        MsGateSummary sum;
        Seen seen = {0, 0, g_ptr_array_new_with_free_func(g_free)};
        CU_ASSERT_FALSE(ms_gate_check(b, 0.02, seen_figure, &seen, &sum, &error));
        MS_ASSERT_ERROR(error, MS_GATE_ERROR, MS_GATE_ERROR_EXPECT, bad[i].needle);
        CU_ASSERT_EQUAL(seen.figures, 0);
        g_ptr_array_unref(seen.verdicts);
    }
    /* Exit 2 from the command, before anything runs; update records over them. */
    g_autofree char *path = baseline2("expect.json", MET, ", \"expect\": {\"step_time\": 1}");
    g_autofree char *out = NULL, *err = NULL;
    const char *check[] = {"check", "--baseline", path, NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(check, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown figure 'step_time'"));
    CU_ASSERT_PTR_NULL(strstr(out, "ms ->"));
    const char *update[] = {"check", "--baseline", path, "--update", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(update, &out, &err), 0);
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(check, &out, &err), 0);
}

static void
test_command(void)
{
    g_autofree char *path = baseline("cli.json", NULL);
    g_autofree char *out = NULL, *err = NULL;
    const char *update[] = {"check", "--baseline", path, "--update", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(update, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  tiny fifo                    recorded\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "updated "));
    const char *check[] = {"check", "--baseline", path, NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(check, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "check: 2 scenarios from "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  tiny fifo                    step time "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no regression\n"));
    g_autofree char *worse = scaled(path, 0, "exposed_comm_us", 0.5);
    const char *regressed[] = {"check", "--baseline", worse, NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(regressed, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "+100.00%  REGRESSED"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "schedule quality regressed: 1 figure worse than"));
    /* Regression: a bare number was a fraction, so --tolerance 5 allowed 500% and an 11%
     * regression passed with exit 0. A bound is a percentage; a bare number is refused. */
    g_autofree char *eleven = scaled(path, 1, "step_time_us", 0.9);
    const char *bare[] = {"check", "--baseline", eleven, "--tolerance", "5", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(bare, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "moesim: check: --tolerance '5': no '%'"));
    const char *five[] = {"check", "--baseline", eleven, "--tolerance", "5%", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(five, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "tolerance 5.00%"));
    const char *twenty[] = {"check", "--baseline", eleven, "--tolerance", "20%", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(twenty, &out, &err), 0);
}

/* An inference scenario has no allreduce: a figure of 0 cannot be expected (no relative change
 * can be taken from it), so --update leaves it out and the check that follows passes. */
static void
test_zero_figures(void)
{
    g_autofree char *text =
        g_strdup_printf("{\"format\": \"moesim-baseline\", \"scenarios\": [{\"topology\": \"%s\", "
                        "\"model\": \"%s\", \"mode\": \"infer\"}]}",
                        sfx_topology(), sfx_model());
    g_autofree char *path = ms_test_write_tmp("infer.json", text);
    GError *error = NULL;
    g_autoptr(MsBaseline) b = ms_baseline_load(path, &error);
    CU_ASSERT_TRUE_FATAL(ms_gate_update(b, NULL, NULL, &error));
    g_autofree char *recorded = g_build_filename(ms_test_tmpdir(), "infer-rec.json", NULL);
    CU_ASSERT_TRUE(ms_baseline_write(b, recorded, &error));
    g_autofree char *back = NULL;
    g_assert(g_file_get_contents(recorded, &back, NULL, NULL));
    CU_ASSERT_PTR_NULL(strstr(back, "allreduce_us"));
    CU_ASSERT_PTR_NOT_NULL(strstr(back, "step_time_us"));
    g_autoptr(MsBaseline) r = ms_baseline_load(recorded, &error);
    MsGateSummary sum;
    CU_ASSERT_TRUE(ms_gate_check(r, 0.001, NULL, NULL, &sum, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(sum.figures, 4);
}

/* The report for CI systems: JSON on standard output with nothing else there, and JUnit XML with
 * a failure per regressed figure. */
static void
test_reports(void)
{
    g_autofree char *path = baseline("reports.json", NULL);
    g_autofree char *out = NULL, *err = NULL;
    const char *update[] = {"check", "--baseline", path, "--update", NULL};
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(update, &out, &err), 0);
    g_autofree char *worse = scaled(path, 1, "step_time_us", 0.9);
    g_autofree char *junit = g_build_filename(ms_test_tmpdir(), "check.xml", NULL);
    const char *check[] = {"check", "--baseline", worse, "--json", "-", "--junit", junit, NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(check, &out, &err), 1);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, out, -1, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(json_parser_get_root(p));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "moesim-check");
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "figures"), 10);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "regressed"), 1);
    MS_ASSERT_REL(json_object_get_double_member(o, "tolerance"), 0.02, 1e-12);
    JsonArray *sc = json_object_get_array_member(o, "scenarios");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(sc), 2);
    JsonObject *second = json_array_get_object_element(sc, 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(second, "name"), "scenario 1");
    JsonObject *step =
        json_array_get_object_element(json_object_get_array_member(second, "figures"), 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(step, "verdict"), "regressed");
    MS_ASSERT_REL(json_object_get_double_member(step, "change"), 1 / 0.9 - 1, 1e-3);
    /* The text report went to standard error. */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "REGRESSED"));
    g_autofree char *xml = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(junit, &xml, NULL, NULL));
    CU_ASSERT_TRUE(g_str_has_prefix(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                         "<testsuites name=\"moesim check\" tests=\"10\" "
                                         "failures=\"1\">\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testcase classname=\"tiny fifo\" name=\"a2a_us\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testcase classname=\"scenario 1\" name=\"step_time_us\">\n"
                                       "      <failure message=\"regressed: step_time_us: "));
    /* Names are escaped. */
    g_autoptr(MsGateReport) r = ms_gate_report_new("a<b>.json", 0.05);
    MsGateFigure f = {0, "x & \"y\"", TRUE, "a2a_us", 100, 90, -0.1, MS_GATE_IMPROVED};
    ms_gate_report_add(&f, r);
    g_autofree char *small = ms_gate_report_to_junit(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(small, "<testsuite name=\"a&lt;b&gt;.json\" tests=\"1\" "
                                         "failures=\"0\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(small, "classname=\"x &amp; &quot;y&quot;\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(small, "<system-out>improved beyond the tolerance"));
}

/* The JUnit report read back as XML (GMarkup): elements nest as JUnit readers expect, the counts
 * on <testsuites> and <testsuite> match the cases and failures inside, names come back
 * unescaped. */
typedef struct {
    GPtrArray *stack; /* element names, outermost first */
    guint suites, cases, failures, outs;
    guint declared_tests, declared_failures;
    GPtrArray *classnames;
    gboolean nesting_ok;
} Junit;

static const char *
attr(const char **names, const char **values, const char *name)
{
    for (guint i = 0; names[i]; i++) {
        if (strcmp(names[i], name) == 0) {
            return values[i];
        }
    }
    return NULL;
}

static void
junit_start(GMarkupParseContext *ctx, const char *el, const char **names, const char **values,
            gpointer data, GError **error)
{
    (void)ctx;
    (void)error;
    Junit *j = data;
    const char *parent = j->stack->len ? g_ptr_array_index(j->stack, j->stack->len - 1) : "";
    static const char *const parents[][2] = {{"testsuites", ""},
                                             {"testsuite", "testsuites"},
                                             {"testcase", "testsuite"},
                                             {"failure", "testcase"},
                                             {"system-out", "testcase"}};
    gboolean known = FALSE;
    for (guint i = 0; i < G_N_ELEMENTS(parents); i++) {
        if (strcmp(el, parents[i][0]) == 0) {
            known = TRUE;
            j->nesting_ok &= strcmp(parent, parents[i][1]) == 0;
        }
    }
    j->nesting_ok &= known;
    if (strcmp(el, "testsuites") == 0) {
        const char *tests = attr(names, values, "tests");
        const char *failures = attr(names, values, "failures");
        j->nesting_ok &= tests && failures;
        j->declared_tests = tests ? atoi(tests) : 0;
        j->declared_failures = failures ? atoi(failures) : 0;
    } else if (strcmp(el, "testsuite") == 0) {
        j->suites++;
    } else if (strcmp(el, "testcase") == 0) {
        j->cases++;
        g_ptr_array_add(j->classnames, g_strdup(attr(names, values, "classname")));
        j->nesting_ok &= attr(names, values, "name") != NULL;
    } else if (strcmp(el, "failure") == 0) {
        j->failures++;
        j->nesting_ok &= attr(names, values, "message") != NULL;
    } else if (strcmp(el, "system-out") == 0) {
        j->outs++;
    }
    g_ptr_array_add(j->stack, g_strdup(el));
}

static void
junit_end(GMarkupParseContext *ctx, const char *el, gpointer data, GError **error)
{
    (void)ctx;
    (void)el;
    (void)error;
    Junit *j = data;
    g_ptr_array_remove_index(j->stack, j->stack->len - 1);
}

static gboolean
parse_junit(const char *xml, Junit *j, GError **error)
{
    static const GMarkupParser parser = {junit_start, junit_end, NULL, NULL, NULL};
    memset(j, 0, sizeof *j);
    j->stack = g_ptr_array_new_with_free_func(g_free);
    j->classnames = g_ptr_array_new_with_free_func(g_free);
    j->nesting_ok = TRUE;
    g_autoptr(GMarkupParseContext) ctx = g_markup_parse_context_new(&parser, 0, j, NULL);
    return g_markup_parse_context_parse(ctx, xml, -1, error) &&
           g_markup_parse_context_end_parse(ctx, error);
}

static void
junit_clear(Junit *j)
{
    g_ptr_array_free(j->stack, TRUE);
    g_ptr_array_free(j->classnames, TRUE);
}

static void
test_junit_parses(void)
{
    g_autofree char *base =
        g_build_filename(ms_test_srcdir(), "tests", "golden", "baseline.json", NULL);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "golden.xml", NULL);
    const char *args[] = {"check", "--baseline", base, "--junit", path, NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 0);
    g_autofree char *xml = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &xml, NULL, NULL));
    Junit j;
    GError *error = NULL;
    CU_ASSERT_TRUE(parse_junit(xml, &j, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(j.nesting_ok);
    CU_ASSERT_EQUAL(j.suites, 1);
    CU_ASSERT_TRUE(j.cases >= 5);
    CU_ASSERT_EQUAL(j.cases, j.declared_tests);
    CU_ASSERT_EQUAL(j.failures, 0);
    CU_ASSERT_EQUAL(j.declared_failures, 0);
    junit_clear(&j);
    /* A regression and an improvement, with names to escape. */
    g_autoptr(MsGateReport) r = ms_gate_report_new("a<b>.json", 0.05);
    MsGateFigure worse = {0, "x & \"y\"", TRUE, "step_time_us", 100, 120, 0.2, MS_GATE_REGRESSED};
    MsGateFigure better = {0, "z", TRUE, "a2a_us", 100, 90, -0.1, MS_GATE_IMPROVED};
    ms_gate_report_add(&worse, r);
    ms_gate_report_add(&better, r);
    g_autofree char *small = ms_gate_report_to_junit(r);
    CU_ASSERT_TRUE(parse_junit(small, &j, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(j.nesting_ok);
    CU_ASSERT_EQUAL(j.cases, 2);
    CU_ASSERT_EQUAL(j.declared_tests, 2);
    CU_ASSERT_EQUAL(j.failures, 1);
    CU_ASSERT_EQUAL(j.declared_failures, 1);
    CU_ASSERT_EQUAL(j.outs, 1);
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(j.classnames, 0), "x & \"y\"");
    junit_clear(&j);
    /* The parser does fail on broken XML, so the checks above can fail. */
    CU_ASSERT_FALSE(parse_junit("<testsuites><testsuite></testsuites>", &j, &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    g_clear_error(&error);
    junit_clear(&j);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"recorded figures, then compared", test_update_and_check},
        {"refused baselines", test_refused},
        {"refused expectations", test_expectations},
        {"figures of 0 are not recorded", test_zero_figures},
        {"moesim check", test_command},
        {"JSON and JUnit reports", test_reports},
        {"JUnit report parsed as XML", test_junit_parses},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"gate", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
