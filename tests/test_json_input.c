/* Tests of json_input: the nesting bound (strings and escapes do not count), located syntax
 * errors, unreadable files, and the crash it prevents in json-glib. */
#include "ms_test.h"
#include "sim/base/json_input.h"

/* n levels of '[' then as many ']'. */
static char *
nested(guint n)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_string_append_c(s, '[');
    }
    for (guint i = 0; i < n; i++) {
        g_string_append_c(s, ']');
    }
    return g_string_free(s, FALSE);
}

static void
test_depth(void)
{
    GError *error = NULL;
    g_autofree char *ok = nested(MS_JSON_INPUT_MAX_DEPTH);
    CU_ASSERT_TRUE(ms_json_input_check(ok, strlen(ok), "ok.json", &error));
    CU_ASSERT_PTR_NULL(error);
    g_autofree char *deep = nested(MS_JSON_INPUT_MAX_DEPTH + 1);
    CU_ASSERT_FALSE(ms_json_input_check(deep, strlen(deep), "deep.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_DEPTH,
                    "deep.json:1: JSON nested deeper than 512 levels");
    CU_ASSERT_FALSE(ms_json_input_check(deep, strlen(deep), NULL, &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_DEPTH,
                    "JSON nested deeper than 512 levels");
    /* Siblings do not add up, objects count like arrays, the line is that of the deep bracket. */
    g_autoptr(GString) wide = g_string_new("{\"a\":\n");
    for (guint i = 0; i < 2000; i++) {
        g_string_append(wide, i ? ",[[{}]]" : "[[[{}]]");
    }
    g_string_append(wide, "]}");
    CU_ASSERT_TRUE(ms_json_input_check(wide->str, wide->len, "wide.json", NULL));
    g_autoptr(GString) objs = g_string_new("\n\n");
    for (guint i = 0; i <= MS_JSON_INPUT_MAX_DEPTH; i++) {
        g_string_append(objs, "{\"k\":");
    }
    CU_ASSERT_FALSE(ms_json_input_check(objs->str, objs->len, "o.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_DEPTH, "o.json:3: JSON");
}

static void
test_strings_do_not_nest(void)
{
    /* Brackets inside strings, after escaped quotes and backslashes, are text. */
    g_autoptr(GString) s = g_string_new("[\"");
    for (guint i = 0; i < 4 * MS_JSON_INPUT_MAX_DEPTH; i++) {
        g_string_append(s, "[{");
    }
    g_string_append(s, "\\\" [[[ \\\\\", \"]]]]\"]");
    GError *error = NULL;
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE(ms_json_input_load_data(p, s->str, s->len, "s.json", &error));
    CU_ASSERT_PTR_NULL(error);
    JsonArray *a = json_node_get_array(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_array_get_length(a), 2);
    CU_ASSERT_STRING_EQUAL(json_array_get_string_element(a, 1), "]]]]");
}

/* Regression: json-glib takes "{}{...}" for one document (keeping one, leaking the other), so a
 * file of two concatenated schedules loaded silently and leaked memory. */
static void
test_one_document(void)
{
    GError *error = NULL;
    const char *two = "{\"a\": 1}\n  {\"b\": [2]}";
    CU_ASSERT_FALSE(ms_json_input_check(two, strlen(two), "two.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                    "two.json:2: text after the end of the JSON document");
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FALSE(ms_json_input_load_data(p, "[1][2]", 6, NULL, &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                    "text after the end of the JSON document");
    /* A top-level number or string followed by a container (found by fuzz_schedule: "0{}"). */
    const char *after_scalar[] = {"0{}", "-1.5 [2]", "true\n{\"a\": 1}", "\"x\" \"y\"", "\"x\"[1]"};
    for (guint i = 0; i < G_N_ELEMENTS(after_scalar); i++) {
        CU_ASSERT_FALSE(
            ms_json_input_load_data(p, after_scalar[i], strlen(after_scalar[i]), "s.json", &error));
        MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                        "text after the end of the JSON document");
    }
    /* A lone scalar is one document. */
    CU_ASSERT_TRUE(ms_json_input_load_data(p, " 42 \n", 5, "n.json", &error));
    CU_ASSERT_PTR_NULL(error);
    /* Blanks after the document, and brackets in strings, are fine. */
    const char *one = "{\"a\": \"}{\", \"b\": [\"]\"]} \n\t\r\n";
    CU_ASSERT_TRUE(ms_json_input_load_data(p, one, strlen(one), "one.json", &error));
    CU_ASSERT_PTR_NULL(error);
}

static void
test_syntax_and_io(void)
{
    GError *error = NULL;
    g_autoptr(JsonParser) p = json_parser_new();
    const char *bad = "{\"a\": [1, 2,\n x]}";
    CU_ASSERT_FALSE(ms_json_input_load_data(p, bad, strlen(bad), "bad.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                    "bad.json:2:2: Parse error: unexpected identifier");
    CU_ASSERT_FALSE(ms_json_input_load_data(p, bad, strlen(bad), NULL, &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                    "<data>:2:2: Parse error");
    g_autofree char *path = ms_test_write_tmp("f.json", "{\"x\": [1, {\"y\": 2}]}");
    CU_ASSERT_TRUE(ms_json_input_load_file(p, path, MS_INPUT_SCHEDULE, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)));
    CU_ASSERT_FALSE(ms_json_input_load_file(p, "/nonexistent/f.json", MS_INPUT_SCHEDULE, &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_IO, "/nonexistent/f.json");
    g_autofree char *deep = nested(100000);
    g_autofree char *deep_path = ms_test_write_tmp("deep.json", deep);
    CU_ASSERT_FALSE(ms_json_input_load_file(p, deep_path, MS_INPUT_SCHEDULE, &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_DEPTH,
                    "deep.json:1: JSON nested deeper than 512 levels");
}

/* The CLI commands that read JSON refuse deep nesting instead of overflowing the stack. */
static void
test_commands(void)
{
    g_autofree char *deep = nested(200000);
    g_autofree char *path = ms_test_write_tmp("deep-result.json", deep);
    g_autofree char *out = NULL, *err = NULL;
    int rc =
        ms_test_run_moesim((const char *[]){"validate", "-s", path, "-M", path, NULL}, &out, &err);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "deep-result.json:1: JSON nested deeper than 512 levels"));
    g_autofree char *line = g_strconcat("{\"layer\": ", deep, "}\n", NULL);
    g_autofree char *jsonl = ms_test_write_tmp("deep.jsonl", line);
    g_autofree char *trace = g_build_filename(ms_test_tmpdir(), "deep.trace", NULL);
    g_autofree char *out2 = NULL, *err2 = NULL;
    rc = ms_test_run_moesim(
        (const char *[]){"trace", "import", "--from", "jsonl", jsonl, "-o", trace, NULL}, &out2,
        &err2);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err2, "deep.jsonl:1: bad JSON: JSON nested deeper than 512"));
    g_autofree char *out3 = NULL, *err3 = NULL;
    rc = ms_test_run_moesim((const char *[]){"check", "--baseline", path, NULL}, &out3, &err3);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err3, "deep-result.json:1: JSON nested deeper than 512 levels"));
}

/* A key given twice in one object is refused with its line (json-glib keeps the last silently);
 * the same key in two objects is not a repetition. A byte order mark first is read past. */
static void
test_duplicate_keys(void)
{
    g_autoptr(JsonParser) p = json_parser_new();
    GError *error = NULL;
    const char *dup = "{\"a\": 1,\n \"b\": {\"a\": 2, \"c\": 3},\n \"a\": 4}";
    CU_ASSERT_FALSE(ms_json_input_load_data(p, dup, strlen(dup), "d.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX,
                    "d.json:3: key 'a' given twice in one object");
    const char *inner = "[{\"x\": 1}, {\"x\": 2, \"y\": {\"z\": 1, \"z\": 2}}]";
    CU_ASSERT_FALSE(ms_json_input_load_data(p, inner, strlen(inner), "i.json", &error));
    MS_ASSERT_ERROR(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX, "key 'z' given twice");
    const char *ok = "\xef\xbb\xbf[{\"x\": 1}, {\"x\": 2}]";
    CU_ASSERT_TRUE(ms_json_input_load_data(p, ok, strlen(ok), "o.json", &error));
    CU_ASSERT_EQUAL(json_array_get_length(json_node_get_array(json_parser_get_root(p))), 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"nesting bound", test_depth},
        {"brackets in strings do not nest", test_strings_do_not_nest},
        {"one document per input", test_one_document},
        {"syntax errors and unreadable files", test_syntax_and_io},
        {"commands refuse deep JSON", test_commands},
        {"keys given twice refused", test_duplicate_keys},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"json_input", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
