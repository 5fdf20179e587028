/* Tests of repro: every experiment's quick version against its golden file
 * (tests/golden/repro-NAME.json): the same rows (model, experts, GPUs, policy, baseline, network)
 * in the same order, every figure within 0.5% relative (the runs are deterministic; the margin
 * absorbs a C library that rounds the generator's pow and log differently, docs/trace-format.md),
 * no figure missing or added. Also the experiment list, an unknown name, the setups (GPUs as many
 * as experts, every FFN MoE), the files written, and `moesim repro` on the command line.
 * MS_REPRO_GOLDEN_WRITE=DIR rewrites the goldens into DIR. */
#include "ms_test.h"
#include "sim/out/plot.h"
#include "sim/moe/model.h"
#include "sim/repro.h"
#include "sim/repro_private.h"
#include "topologies/topology.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#define TOLERANCE 0.005

static JsonObject *
golden(const char *name, JsonParser *parser)
{
    g_autofree char *file = g_strdup_printf("repro-%s.json", name);
    g_autofree char *path = g_build_filename(ms_test_srcdir(), "tests", "golden", file, NULL);
    GError *error = NULL;
    if (!json_parser_load_from_file(parser, path, &error)) {
        fprintf(stderr, "\n  %s: %s\n", path, error->message);
        g_error_free(error);
        return NULL;
    }
    return json_node_get_object(json_parser_get_root(parser));
}

static void
compare(const char *name, JsonNode *got_node)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *want = golden(name, parser);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    JsonObject *got = json_node_get_object(got_node);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(got, "experiment"), name);
    JsonArray *a = json_object_get_array_member(want, "rows");
    JsonArray *b = json_object_get_array_member(got, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(a), json_array_get_length(b));
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *x = json_array_get_object_element(a, i);
        JsonObject *y = json_array_get_object_element(b, i);
        CU_ASSERT_EQUAL(json_object_get_size(x), json_object_get_size(y));
        g_autoptr(GList) members = json_object_get_members(x);
        for (GList *m = members; m; m = m->next) {
            const char *key = m->data;
            CU_ASSERT_TRUE_FATAL(json_object_has_member(y, key));
            JsonNode *u = json_object_get_member(x, key), *v = json_object_get_member(y, key);
            if (json_node_get_value_type(u) == G_TYPE_STRING) {
                CU_ASSERT_STRING_EQUAL(json_node_get_string(u), json_node_get_string(v));
                continue;
            }
            double p = json_node_get_double(u), q = json_node_get_double(v);
            gboolean ok = fabs(p - q) <= TOLERANCE * MAX(fabs(p), 1e-9);
            if (!ok) {
                fprintf(stderr, "\n  %s row %u %s: golden %g, now %g\n", name, i, key, p, q);
            }
            CU_ASSERT_TRUE(ok);
        }
    }
}

static void
check_quick(const char *name)
{
    MsReproOptions opts = {.quick = TRUE};
    GError *error = NULL;
    g_autoptr(MsReproResult) res = ms_repro_run(name, &opts, &error);
    if (error) {
        fprintf(stderr, "\n  %s: %s\n", name, error->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    g_autoptr(JsonNode) node = ms_repro_result_to_json(res);
    const char *dir = g_getenv("MS_REPRO_GOLDEN_WRITE");
    if (dir) {
        g_autofree char *file = g_strdup_printf("repro-%s.json", name);
        g_autofree char *path = g_build_filename(dir, file, NULL);
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_pretty(gen, TRUE);
        json_generator_set_root(gen, node);
        CU_ASSERT_TRUE(json_generator_to_file(gen, path, NULL));
        return;
    }
    compare(name, node);
}

static void
test_lina_train(void)
{
    check_quick("lina-train");
}

/* lina-train draws every flow on node 0's NIC for DeepSpeed on GPT-2 with 16 experts under NCCL
 * 2.10: its first backward all-to-all (hierarchical: node 0's 4 GPUs to their peers on the 3
 * other nodes, 12 flows) beside the allreduce's 2 ring channels. */
static void
test_lina_train_link_timeline(void)
{
    MsReproOptions opts = {.quick = TRUE};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsReproResult) res = ms_repro_run("lina-train", &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "train-timeline", NULL);
    gboolean ok = ms_repro_result_write(res, dir, &error);
    CU_ASSERT_TRUE(ok || g_error_matches(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT));
    g_autofree char *csv = g_build_filename(dir, "lina-train-link-timeline.csv", NULL);
    g_autofree char *gp = g_build_filename(dir, "lina-train-link-timeline.png.gp", NULL);
    g_autofree char *text = NULL, *script = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    CU_ASSERT_TRUE(g_str_has_prefix(text, "# moesim-link-timeline 1 link n0.nic0->fabric "
                                          "capacity_GBps 12.500000\ntime_us,flow,rate_GBps,op,"
                                          "kind,connection\n"));
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &script, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "alltoall: L11.bwd.combine (up to 12 flows at once)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "allreduce: grads.b0 (up to 2 flows at once)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "gpt2 16e, deepspeed, nccl 2.10"));
}

static void
test_lina_infer(void)
{
    check_quick("lina-infer");
}

static void
test_lina_motivation(void)
{
    check_quick("lina-motivation");
}

static void
test_schemoe_ablation(void)
{
    check_quick("schemoe-ablation");
}

static void
test_schemoe_ct_moe(void)
{
    check_quick("schemoe-ct-moe");
}

/* GPUs as many as experts, 4 per node; every FFN an MoE layer; the motivation's dimensions give
 * its parameter counts (117M and 419M at 12 layers) within 4%. */
static void
test_setup(void)
{
    static const guint gpus[] = {2, 4, 8, 16}, nodes[] = {1, 1, 2, 4};
    for (guint i = 0; i < G_N_ELEMENTS(gpus); i++) {
        GError *error = NULL;
        g_autofree char *text = repro_lina_testbed(gpus[i], &error);
        g_assert_no_error(error);
        g_autoptr(MsTopology) t = ms_topology_load_data(text, strlen(text), "t", &error);
        g_assert_no_error(error);
        CU_ASSERT_EQUAL(ms_topology_n_gpus(t), gpus[i]);
        CU_ASSERT_EQUAL(ms_topology_n_nodes(t), nodes[i]);
    }
    static const struct {
        guint experts;
        double params_m;
    } counts[] = {{4, 117}, {16, 419}};
    for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
        g_autofree char *text = repro_lina_model("transformer-xl", counts[i].experts, 12, FALSE);
        GError *error = NULL;
        g_autoptr(MsModel) m = ms_model_load_data(text, strlen(text), "m", &error);
        g_assert_no_error(error);
        const MsModelSpec *s = ms_model_spec(m);
        CU_ASSERT_EQUAL(s->n_moe, 12);
        double params =
            s->layers * (double)(ms_model_attention_params(m) + ms_model_gate_params(m) +
                                 s->experts * ms_model_expert_params(m));
        MS_ASSERT_REL(params / 1e6, counts[i].params_m, 0.04);
    }
}

static void
test_names_and_errors(void)
{
    const char *const *names = ms_repro_names();
    CU_ASSERT_EQUAL(g_strv_length((char **)names), 5);
    for (const char *const *n = names; *n; n++) {
        CU_ASSERT_PTR_NOT_NULL(ms_repro_summary(*n));
    }
    CU_ASSERT_PTR_NULL(ms_repro_summary("lina"));
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_repro_run("lina", NULL, &error));
    MS_ASSERT_ERROR(error, MS_REPRO_ERROR, MS_REPRO_ERROR_UNKNOWN,
                    "unknown experiment 'lina' (known: lina-train, lina-infer, lina-motivation, "
                    "schemoe-ablation, schemoe-ct-moe)");
    /* A network model that does not parse fails the run that uses it, naming it. */
    const char *bad[] = {"nccl:version=9.9", NULL};
    MsReproOptions opts = {.quick = TRUE, .nets = bad};
    CU_ASSERT_PTR_NULL(ms_repro_run("schemoe-ablation", &opts, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "nccl:version=9.9"));
    g_clear_error(&error);
    /* Cancelled before it starts. */
    gint cancel = 1;
    MsReproOptions stop = {.quick = TRUE, .cancel = &cancel};
    CU_ASSERT_PTR_NULL(ms_repro_run("schemoe-ablation", &stop, &error));
    MS_ASSERT_ERROR(error, MS_REPRO_ERROR, MS_REPRO_ERROR_CANCELLED, "cancelled");
}

/* moesim repro on the command line: the table, the files, the JSON on standard output, usage. */
static void
test_cli(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "repro", NULL);
    g_autofree char *out = NULL, *err = NULL;
    gint status = 0;
    const char *argv[] = {
        ms_test_moesim(), "repro", "schemoe-ablation", "--quick", "-q", "--net", "flow",
        "--out",          dir,     "--json",           "-",       NULL};
    CU_ASSERT_TRUE_FATAL(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                      &err, &status, NULL));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "rows")), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "| schemoe-ablation-layer | 32 | 32 | `schemoe:r=1` |"));
    g_autofree char *md = g_build_filename(dir, "schemoe-ablation.md", NULL);
    g_autofree char *js = g_build_filename(dir, "schemoe-ablation.json", NULL);
    CU_ASSERT_TRUE(g_file_test(md, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE(g_file_test(js, G_FILE_TEST_EXISTS));
    g_free(out);
    g_free(err);
    const char *bad[] = {ms_test_moesim(), "repro", "schemoe", NULL};
    CU_ASSERT_TRUE_FATAL(g_spawn_sync(NULL, (char **)bad, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                      &err, &status, NULL));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown experiment 'schemoe'"));
    g_free(out);
    g_free(err);
    const char *none[] = {ms_test_moesim(), "repro", NULL};
    CU_ASSERT_TRUE_FATAL(g_spawn_sync(NULL, (char **)none, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                      &err, &status, NULL));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "give one experiment"));
}

/* The network models compared: rows under the second model paired with the same run under the
 * first; ratios of times over every pair, of speedups over the non-baseline ones only, the run
 * furthest from 1 named; a row without a pair and a figure no pair has are left out. */
static void
test_net_summary(void)
{
    g_autoptr(MsReproResult) res = repro_result_new("t");
    static const struct {
        const char *policy, *net;
        double step, speedup;
    } rows[] = {
        {"base", "flow", 100, 1}, {"a", "flow", 50, 2},   {"b", "flow", 80, 1.25},
        {"base", "nccl", 110, 1}, {"a", "nccl", 44, 2.5}, {"b", "nccl", 88, 1.25},
        {"c", "nccl", 10, 11},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        repro_row(res, "m", 4, 4, rows[i].policy, "base", rows[i].net);
        repro_row_set(res, "step_ms", rows[i].step);
        repro_row_set(res, "speedup", rows[i].speedup);
    }
    repro_net_summary(res);
    CU_ASSERT_EQUAL_FATAL(res->summary->len, 1);
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(res->summary, 0),
                           "nccl over flow, the same runs: step_ms 0.880x to 1.100x (furthest "
                           "from 1: m, 4 experts, `a`); speedup 1.000x to 1.250x (furthest from 1: "
                           "m, 4 experts, `a`)");
    /* One network model: nothing to compare. */
    g_autoptr(MsReproResult) one = repro_result_new("t");
    repro_row(one, "m", 4, 4, "a", "base", "flow");
    repro_row_set(one, "step_ms", 1);
    repro_net_summary(one);
    CU_ASSERT_EQUAL(one->summary->len, 0);
    /* Network models given as options keep their own names: two nccl specs stay apart. */
    CU_ASSERT_STRING_EQUAL(repro_net_label("nccl:version=2.10"), "nccl 2.10");
    CU_ASSERT_STRING_EQUAL(repro_net_label("nccl"), "nccl");
    const char *nets[] = {"flow", "nccl:version=2.10", "nccl:version=2.10,arbitration=connection",
                          NULL};
    MsReproOptions opts = {.quick = TRUE, .nets = nets};
    GError *error = NULL;
    g_autoptr(MsReproResult) three = ms_repro_run("lina-motivation", &opts, &error);
    g_assert_no_error(error);
    guint per[3] = {0};
    for (guint i = 0; i < ms_repro_result_n_rows(three); i++) {
        const char *net = ms_repro_result_text(three, i, "net");
        per[0] += strcmp(net, "flow") == 0;
        per[1] += strcmp(net, "nccl 2.10") == 0;
        per[2] += strcmp(net, nets[2]) == 0;
    }
    CU_ASSERT_TRUE(per[0] > 0 && per[0] == per[1] && per[1] == per[2]);
    CU_ASSERT_EQUAL(per[0] * 3, ms_repro_result_n_rows(three));
    /* The motivation's summary is the comparison alone: a line per model after the first. */
    CU_ASSERT_EQUAL(three->summary->len, 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"lina-train quick against its golden", test_lina_train},
        {"lina-train's link timeline", test_lina_train_link_timeline},
        {"lina-infer quick against its golden", test_lina_infer},
        {"lina-motivation quick against its golden", test_lina_motivation},
        {"schemoe-ablation quick against its golden", test_schemoe_ablation},
        {"schemoe-ct-moe quick against its golden", test_schemoe_ct_moe},
        {"the papers' setups", test_setup},
        {"names and errors", test_names_and_errors},
        {"the command line", test_cli},
        {"the network models compared", test_net_summary},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"repro", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
