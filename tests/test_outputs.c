/* Tests of the output contract (docs/outputs.md): every command that reports results writes,
 * with --json -, one JSON document and nothing else on standard output, carrying a versioned
 * "schema" id, and the document holds the fields of its JSON Schema in docs/schemas/ with their
 * types. A small validator reads the schemas (the keywords they use: type, const, required,
 * properties, additionalProperties, items); a schema keyword it does not know fails the test. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

#include "validate/bench_report.h"
#include "validate/measurement.h"

/* --- the validator --- */

static const char *
type_of(JsonNode *v)
{
    switch (JSON_NODE_TYPE(v)) {
    case JSON_NODE_NULL:
        return "null";
    case JSON_NODE_OBJECT:
        return "object";
    case JSON_NODE_ARRAY:
        return "array";
    default:
        break;
    }
    GType t = json_node_get_value_type(v);
    return t == G_TYPE_BOOLEAN  ? "boolean"
           : t == G_TYPE_INT64  ? "integer"
           : t == G_TYPE_DOUBLE ? "number"
                                : "string";
}

static gboolean
type_matches(const char *want, JsonNode *v)
{
    const char *have = type_of(v);
    return strcmp(want, have) == 0 || (strcmp(want, "number") == 0 && strcmp(have, "integer") == 0);
}

static void check(JsonObject *schema, JsonNode *v, const char *path, GString *why);

static void
check_type(JsonNode *type, JsonNode *v, const char *path, GString *why)
{
    gboolean ok = FALSE;
    GString *names = g_string_new(NULL);
    if (JSON_NODE_HOLDS_ARRAY(type)) {
        JsonArray *a = json_node_get_array(type);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            const char *t = json_array_get_string_element(a, i);
            ok |= type_matches(t, v);
            g_string_append_printf(names, "%s%s", i ? " or " : "", t);
        }
    } else {
        ok = type_matches(json_node_get_string(type), v);
        g_string_append(names, json_node_get_string(type));
    }
    if (!ok) {
        g_string_append_printf(why, "%s: %s where the schema says %s\n", path, type_of(v),
                               names->str);
    }
    g_string_free(names, TRUE);
}

static void
check_members(JsonObject *schema, JsonObject *o, const char *path, GString *why)
{
    JsonObject *props = json_object_has_member(schema, "properties")
                            ? json_object_get_object_member(schema, "properties")
                            : NULL;
    JsonNode *extra = json_object_get_member(schema, "additionalProperties");
    g_autoptr(GList) names = json_object_get_members(o);
    for (GList *l = names; l; l = l->next) {
        const char *name = l->data;
        g_autofree char *sub = g_strdup_printf("%s.%s", path, name);
        JsonNode *v = json_object_get_member(o, name);
        if (props && json_object_has_member(props, name)) {
            check(json_object_get_object_member(props, name), v, sub, why);
        } else if (extra && JSON_NODE_HOLDS_OBJECT(extra)) {
            check(json_node_get_object(extra), v, sub, why);
        } else if (extra && !json_node_get_boolean(extra)) {
            g_string_append_printf(why, "%s: not in the schema\n", sub);
        }
    }
}

static void
check(JsonObject *schema, JsonNode *v, const char *path, GString *why)
{
    g_autoptr(GList) keys = json_object_get_members(schema);
    for (GList *l = keys; l; l = l->next) {
        const char *k = l->data;
        JsonNode *s = json_object_get_member(schema, k);
        if (!strcmp(k, "$schema") || !strcmp(k, "$id") || !strcmp(k, "title") ||
            !strcmp(k, "description") || !strcmp(k, "properties") ||
            !strcmp(k, "additionalProperties")) {
            continue;
        } else if (!strcmp(k, "type")) {
            check_type(s, v, path, why);
        } else if (!strcmp(k, "const")) {
            if (!json_node_equal(s, v)) {
                g_string_append_printf(why, "%s: not the schema's constant\n", path);
            }
        } else if (!strcmp(k, "required")) {
            JsonArray *req = json_node_get_array(s);
            for (guint i = 0; JSON_NODE_HOLDS_OBJECT(v) && i < json_array_get_length(req); i++) {
                const char *name = json_array_get_string_element(req, i);
                if (!json_object_has_member(json_node_get_object(v), name)) {
                    g_string_append_printf(why, "%s: lacks %s\n", path, name);
                }
            }
        } else if (!strcmp(k, "items")) {
            if (JSON_NODE_HOLDS_ARRAY(v)) {
                JsonArray *a = json_node_get_array(v);
                for (guint i = 0; i < json_array_get_length(a); i++) {
                    g_autofree char *sub = g_strdup_printf("%s[%u]", path, i);
                    check(json_node_get_object(s), json_array_get_element(a, i), sub, why);
                }
            }
        } else {
            g_string_append_printf(why, "%s: schema keyword '%s' is not one the test knows\n", path,
                                   k);
        }
    }
    if (JSON_NODE_HOLDS_OBJECT(v)) {
        check_members(schema, json_node_get_object(v), path, why);
    }
}

static JsonParser *
load_schema(const char *name)
{
    g_autofree char *file = g_strdup_printf("%s.schema.json", name);
    g_autofree char *path = g_build_filename(ms_test_srcdir(), "docs", "schemas", file, NULL);
    JsonParser *p = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_file(p, path, &error)) {
        fprintf(stderr, "\n  %s: %s\n", path, error->message);
        g_clear_error(&error);
        CU_FAIL("schema does not load");
    }
    return p;
}

/* The problems of doc against docs/schemas/NAME.schema.json, "" when none (caller frees). */
static char *
validate(const char *name, JsonNode *doc)
{
    g_autoptr(JsonParser) p = load_schema(name);
    JsonNode *root = json_parser_get_root(p);
    GString *why = g_string_new(NULL);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_string_append(why, "no schema\n");
        return g_string_free(why, FALSE);
    }
    JsonObject *schema = json_node_get_object(root);
    g_autofree char *id = g_strdup_printf("moesim.%s/1", name);
    if (g_strcmp0(json_object_get_string_member_with_default(schema, "$id", ""), id) != 0) {
        g_string_append_printf(why, "schema file's $id is not %s\n", id);
    }
    check(schema, doc, "$", why);
    return g_string_free(why, FALSE);
}

/* --- the commands --- */

typedef struct {
    const char *schema; /* docs/schemas/NAME.schema.json */
    const char *args[24];
} Case;

#define EX "docs/examples/"
#define SLOW2 "@" EX "slow2.ini"
#define SMALL "-t", SLOW2, "-m", "@" EX "switch-8e.ini", "--mode", "infer"

/* Arguments with "@PATH" made absolute in the source tree and "%NAME" in the temporary folder. */
static char **
resolve(const char *const *args)
{
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; args[i]; i++) {
        const char *a = args[i];
        g_ptr_array_add(out, a[0] == '@'   ? g_build_filename(ms_test_srcdir(), a + 1, NULL)
                             : a[0] == '%' ? g_build_filename(ms_test_tmpdir(), a + 1, NULL)
                                           : g_strdup(a));
    }
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

static int
moesim(const char *const *args, char **out, char **err)
{
    g_auto(GStrv) real = resolve(args);
    int rc = ms_test_run_moesim((const char *const *)real, out, err);
    if (rc != 0) {
        fprintf(stderr, "\n  moesim %s: exit %d\n%s", args[0], rc, *err ? *err : "");
    }
    return rc;
}

/* The inputs some outputs read: a small run and its cpu execution, their per-layer figures. */
static int
make_inputs(void)
{
    static const char *const steps[][24] = {
        {"run", SMALL, "--json", "%sim.json", "--layers", "%sim.csv", "-n", "2", NULL},
        {"plan", SMALL, "--out", "%step.json", NULL},
        {"exec", "--backend", "cpu", "-t", SLOW2, "%step.json", "--json", "%exec.json", NULL},
        {"run", SMALL, "-n", "2", "--backend", "cpu", "--layers", "%meas.csv", NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(steps); i++) {
        char *out = NULL, *err = NULL;
        int rc = moesim(steps[i], &out, &err);
        g_free(out);
        g_free(err);
        if (rc != 0) {
            return 1;
        }
    }
    return 0;
}

static const Case cases[] = {
    {"result", {"run", "--json", "-", NULL}},
    {"result", {"run", "--mode", "infer", "-n", "2", "--json", "-", NULL}},
    {"result", {"exec", "--backend", "cpu", "-t", SLOW2, "%step.json", "--json", "-", NULL}},
    {"compare", {"compare", "-p", "fifo,lina", "--out", "%cmp", "--json", "-", NULL}},
    {"compare", {"compare", "--mode", "infer", "-n", "2", "--out", "%cmpi", "--json", "-", NULL}},
    {"sweep",
     {"sweep", "--vary", "policy=fifo,lina", "--vary", "nodes=2,4", "--out", "%sw", "--json", "-",
      NULL}},
    {"check", {"check", "--baseline", "@tests/golden/baseline.json", "--json", "-", NULL}},
    {"validate", {"validate", "-s", "%sim.json", "-M", "%exec.json", "--json", "-", NULL}},
    {"validate-table",
     {"validate", "-M", "@tests/data/all_reduce_perf.log", "-t", "dgx-a100-2node", "--json", "-",
      NULL}},
    {"validate-layers",
     {"validate", "--layers", "-s", "%sim.csv", "-M", "%meas.csv", "--json", "-", NULL}},
    {"calibrate",
     {"calibrate", "@tests/data/all_reduce_perf.log", "-t", "dgx-a100-2node", "--json", "-", NULL}},
    /* The simulation's own per-layer figures as the measurement: the cpu execution's all-to-alls
     * are real copies, which a loaded machine (sanitizers on) once made 113 times the model's,
     * past what a calibration may stretch, and the schema check needs no particular fit. */
    {"calibrate-layers",
     {"calibrate", "--layers", "%sim.csv", "--simulated", "%sim.csv", "-t", SLOW2, "--json", "-",
      NULL}},
    {"collective",
     {"collective", "--op", "allreduce", "-b", "1M", "-e", "4M", "--json", "-", NULL}},
    {"collective",
     {"collective", "--op", "alltoall", "--net", "nccl", "-b", "1M", "-e", "4M", "--json", "-",
      NULL}},
    {"flows", {"flows", "-t", "dgx-a100-2node", "@" EX "two-flows.txt", "--json", "-", NULL}},
    {"trace-info", {"trace", "info", "sample:default", "--json", "-", NULL}},
    {"trace-info",
     {"trace", "info", "gen:experts=16,ranks=16,expert_nodes=4,max_nodes=2", "--json", "-", NULL}},
    {"topology", {"topo", "show", "dgx-a100-2node", "--json", "-", NULL}},
    {"model", {"model", "show", "lina-gpt2-16e", "--json", "-", NULL}},
    {"model", {"model", "show", "deepseek-v3", "--json", "-", NULL}},
    {"topology", {"topo", "show", "dgx-h100", "--json", "-", NULL}},
    {"repro",
     {"repro", "schemoe-ablation", "--quick", "-q", "--out", "%repro", "--json", "-", NULL}},
};

/* moesim bench needs GPUs: its document is built here from rows of every shape it measures
 * (a collective with its dtype, a transfer without, a GEMM with min/median/mean, an all-to-all
 * under an allreduce with NCCL settings), as its report does from rank 0's CSV. */
static void
check_bench(GHashTable *seen)
{
    g_autofree char *csv = ms_test_write_tmp(
        "bench.csv", "# moesim-measurements 2\n"
                     "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,min_us,median_us,"
                     "mean_us,background_bytes,channels,qps\n"
                     "sendrecv,1048576,2,2,,,,,nvswitch,12.5,,,12.5,,,\n"
                     "allreduce,26214400,8,8,,,,bf16,,440,,,440,,,\n"
                     "gemm,0,1,1,1024,28672,4096,bf16,mlp_up_proj,610,600,610,615,,,\n"
                     "alltoall_under_allreduce,4194304,8,8,,,,,,150,,,150,26214400,4,2\n");
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load(csv, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    g_autoptr(JsonNode) doc = ms_bench_report_to_json(set, "cuda");
    g_autofree char *why = validate("bench", doc);
    if (*why) {
        fprintf(stderr, "\n  bench against its schema:\n%s", why);
    }
    CU_ASSERT_STRING_EQUAL(why, "");
    JsonArray *rows = json_object_get_array_member(json_node_get_object(doc), "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(rows), 4);
    JsonObject *p2p = json_array_get_object_element(rows, 0);
    CU_ASSERT_TRUE(json_object_get_null_member(p2p, "dtype"));
    CU_ASSERT_TRUE(json_object_get_null_member(p2p, "min_us"));
    MS_ASSERT_REL(json_object_get_double_member(p2p, "time_us"), 12.5, 1e-12);
    JsonObject *gemm = json_array_get_object_element(rows, 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(gemm, "n"), 28672);
    MS_ASSERT_REL(json_object_get_double_member(gemm, "min_us"), 600, 1e-12);
    JsonObject *under = json_array_get_object_element(rows, 3);
    CU_ASSERT_EQUAL(json_object_get_int_member(under, "background_bytes"), 26214400);
    CU_ASSERT_EQUAL(json_object_get_int_member(under, "qps"), 2);
    g_hash_table_add(seen, (gpointer) "bench");
}

/* Standard output with --json - is one JSON document that its schema accepts. */
static void
test_every_output(void)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    check_bench(seen);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const Case *c = &cases[i];
        g_autofree char *out = NULL, *err = NULL;
        int rc = moesim(c->args, &out, &err);
        /* check exits 1 on a regression: the document is written either way. */
        CU_ASSERT_TRUE(rc == 0 || (rc == 1 && strcmp(c->schema, "check") == 0));
        g_autoptr(JsonParser) p = json_parser_new();
        GError *error = NULL;
        if (!json_parser_load_from_data(p, out ? out : "", -1, &error)) {
            fprintf(stderr, "\n  moesim %s %s --json -: standard output is not JSON alone: %s\n",
                    c->args[0], c->args[1], error->message);
            g_clear_error(&error);
            CU_FAIL("standard output is not one JSON document");
            continue;
        }
        g_autofree char *why = validate(c->schema, json_parser_get_root(p));
        if (*why) {
            fprintf(stderr, "\n  moesim %s %s against %s:\n%s", c->args[0], c->args[1], c->schema,
                    why);
        }
        CU_ASSERT_STRING_EQUAL(why, "");
        g_hash_table_add(seen, (gpointer)c->schema);
    }
    /* Every schema of docs/schemas/ was exercised. */
    g_autofree char *dir = g_build_filename(ms_test_srcdir(), "docs", "schemas", NULL);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    guint n = 0;
    for (const char *f; (f = g_dir_read_name(d));) {
        g_autofree char *name = g_strndup(f, strlen(f) - strlen(".schema.json"));
        CU_ASSERT_TRUE(g_str_has_suffix(f, ".schema.json"));
        if (!g_hash_table_contains(seen, name)) {
            fprintf(stderr, "\n  no command's output was checked against %s\n", f);
            CU_FAIL("a schema without a test");
        }
        n++;
    }
    CU_ASSERT_EQUAL(n, g_hash_table_size(seen));
}

/* The validator fails a document whose documented field disappears or changes type, or whose
 * schema id is another's. */
static void
test_validator_fails(void)
{
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = {"collective", "--op", "allreduce", "-b", "1M",
                          "-e",         "1M",   "--json",    "-",  NULL};
    CU_ASSERT_EQUAL_FATAL(moesim(args, &out, &err), 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    g_autofree char *ok = validate("collective", json_parser_get_root(p));
    CU_ASSERT_STRING_EQUAL(ok, "");
    JsonObject *row = json_array_get_object_element(json_object_get_array_member(o, "rows"), 0);
    json_object_remove_member(row, "busbw_gbps");
    json_object_set_string_member(o, "ranks", "8");
    json_object_set_int_member(row, "time_us", 3);
    json_object_set_string_member(o, "schema", "moesim.collective/2");
    g_autofree char *why = validate("collective", json_parser_get_root(p));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "$.rows[0]: lacks busbw_gbps\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "$.ranks: string where the schema says integer\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "$.schema: not the schema's constant\n"));
    /* An integer is a number. */
    CU_ASSERT_PTR_NULL(strstr(why, "time_us"));
    g_autofree char *other = validate("flows", json_parser_get_root(p));
    CU_ASSERT_PTR_NOT_NULL(strstr(other, "$: lacks makespan_us\n"));
}

/* docs/outputs.md names every schema and every top-level field of each. */
static void
test_documented(void)
{
    g_autofree char *path = g_build_filename(ms_test_srcdir(), "docs", "outputs.md", NULL);
    g_autofree char *doc = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &doc, NULL, NULL));
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_hash_table_add(names, (gpointer)cases[i].schema);
    }
    g_hash_table_add(names, (gpointer) "bench");
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, names);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        g_autoptr(JsonParser) p = load_schema(key);
        JsonObject *s = json_node_get_object(json_parser_get_root(p));
        g_autofree char *id = g_strdup_printf("`moesim.%s/1`", (const char *)key);
        if (strstr(doc, id) == NULL) {
            fprintf(stderr, "\n  docs/outputs.md does not name %s\n", id);
            CU_FAIL("schema not documented");
        }
        g_autoptr(GList) fields =
            json_object_get_members(json_object_get_object_member(s, "properties"));
        for (GList *l = fields; l; l = l->next) {
            g_autofree char *quoted = g_strdup_printf("`%s`", (const char *)l->data);
            if (strstr(doc, quoted) == NULL) {
                fprintf(stderr, "\n  docs/outputs.md does not name %s of %s\n", quoted, id);
                CU_FAIL("field not documented");
            }
        }
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the validator fails a changed document", test_validator_fails},
        {"every command's --json - against its schema", test_every_output},
        {"docs/outputs.md names every schema and field", test_documented},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"outputs", make_inputs, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
