/* Tests of the per-layer table: busy time per part as the union of op intervals (chunked ops not
 * counted twice), the layer's span, phase and layer keys, the slowest GPU, what allreduces and
 * weight moves leave out, the result's collection over iterations, and the JSON and CSV outputs
 * in closed form. */
#include "ms_test.h"
#include "sim/out/layers.h"
#include "sim/out/result.h"

static guint32 ranks2[2] = {0, 1};

static guint32
compute(MsSchedule *s, guint rank, MsRole role, MsPhase phase, gint layer, const char *label)
{
    return ms_schedule_add_compute(s, rank, 0, role, phase, layer, -1, label);
}

static void
span(MsRecords *r, guint32 op, double a, double b)
{
    ms_records_set(r, op, ms_time_from_us(a), ms_time_from_us(b));
}

/* Layer 1 forward on two GPUs, gate -> host -> two dispatch chunks -> expert -> combine, an
 * attention before it; a backward expert; an allreduce and a head op outside any layer.
 *   GPU 0: attn [0,10] gate [10,12] host [12,20] dispatch chunks [20,30] [25,35]
 *          expert [35,45] combine [45,50]        (layer span 0..50)
 *   GPU 1: attn [0,10] gate [10,13] host [13,21] dispatch [20,30] [25,35]
 *          expert [35,60] combine [60,70]        (span 0..70: the slowest)
 *   backward: GPU 0 expert [100,130]; allreduce [130,200] on both; head [0,1] on GPU 1. */
static void
build(MsSchedule **s_out, MsRecords **r_out)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 attn[2], gate[2], host[2], exp[2], d0[2], d1[2], c[2], ar[2];
    for (guint g = 0; g < 2; g++) {
        attn[g] = compute(s, g, MS_ROLE_ATTENTION, MS_PHASE_FORWARD, 1, "L1.fwd.attn");
        ms_schedule_set_cost(s, attn[g], MS_COMPUTE_ATTENTION, 1, 1, 96 + g);
        gate[g] = compute(s, g, MS_ROLE_GATE, MS_PHASE_FORWARD, 1, "L1.fwd.gate");
        ms_schedule_set_cost(s, gate[g], MS_COMPUTE_ELEMENTWISE, 1, 1, 64 + g);
        host[g] = compute(s, g, MS_ROLE_HOST, MS_PHASE_FORWARD, 1, "L1.fwd.host");
    }
    /* GPU 0's gate carries 1 us of host time: its first microsecond is the host's. */
    ms_schedule_set_host(s, gate[0], 1e-6);
    guint64 m[4] = {0, 100, 200, 0};
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1, 0,
                             "L1.fwd.dispatch.c0", d0);
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1, 1,
                             "L1.fwd.dispatch.c1", d1);
    for (guint g = 0; g < 2; g++) {
        exp[g] = compute(s, g, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 1, "L1.fwd.expert");
        ms_schedule_set_shape(s, exp[g], 8, 4, 4, 2, 3 + g);
    }
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_COMBINE, MS_PHASE_FORWARD, 1, -1,
                             "L1.fwd.combine", c);
    guint32 bexp = compute(s, 0, MS_ROLE_EXPERT, MS_PHASE_BACKWARD, 1, "L1.bwd.expert");
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 1000, 4, MS_PHASE_BACKWARD, 1, -1, "ar", ar);
    guint32 head = compute(s, 1, MS_ROLE_OTHER, MS_PHASE_FORWARD, -1, "head");
    MsRecords *r = ms_records_new(ms_schedule_n_ops(s), "test");
    for (guint g = 0; g < 2; g++) {
        span(r, attn[g], 0, 10);
        span(r, gate[g], 10, 12 + g);
        span(r, host[g], 12 + g, 20 + g);
        span(r, d0[g], 20, 30);
        span(r, d1[g], 25, 35);
        span(r, ar[g], 130, 200);
    }
    span(r, exp[0], 35, 45);
    span(r, c[0], 45, 50);
    span(r, exp[1], 35, 60);
    span(r, c[1], 60, 70);
    span(r, bexp, 100, 130);
    span(r, head, 0, 1);
    *s_out = s;
    *r_out = r;
}

static void
test_rows(void)
{
    g_autoptr(MsSchedule) s = NULL;
    g_autoptr(MsRecords) r = NULL;
    build(&s, &r);
    g_autoptr(MsLayerTable) t = ms_layer_table_new();
    ms_layer_table_add(t, 7, s, r);
    /* Forward rows first (GPU 0, GPU 1), then the backward row; nothing for the head. */
    CU_ASSERT_EQUAL_FATAL(ms_layer_table_n_rows(t), 3);
    const MsLayerRow *a = ms_layer_table_row(t, 0), *b = ms_layer_table_row(t, 1);
    const MsLayerRow *bw = ms_layer_table_row(t, 2);
    CU_ASSERT_EQUAL(a->iteration, 7);
    CU_ASSERT_EQUAL(a->layer, 1);
    CU_ASSERT_EQUAL(a->phase, MS_PHASE_FORWARD);
    CU_ASSERT_EQUAL(a->gpu, 0);
    CU_ASSERT_EQUAL(b->gpu, 1);
    MS_ASSERT_REL(a->layer_us, 50, 1e-12);
    MS_ASSERT_REL(b->layer_us, 70, 1e-12);
    /* Ops back to back: GPU 1 is busy for all of its 70 us, GPU 0 for its 50. */
    MS_ASSERT_REL(a->busy_us, 50, 1e-12);
    MS_ASSERT_REL(b->busy_us, 70, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_ATTENTION], 10, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_GATE], 1, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_GATE], 3, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_HOST], 9, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_HOST], 8, 1e-12);
    /* Two overlapping dispatch chunks [20,30] and [25,35]: 15 us busy, not 20. */
    MS_ASSERT_REL(a->part_us[MS_LAYER_DISPATCH], 15, 1e-12);
    CU_ASSERT_EQUAL(a->part_ops[MS_LAYER_DISPATCH], 2);
    MS_ASSERT_REL(b->part_us[MS_LAYER_EXPERT], 25, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_COMBINE], 10, 1e-12);
    CU_ASSERT_EQUAL(a->part_us[MS_LAYER_FFN], 0);
    CU_ASSERT_EQUAL(a->experts, 3);
    CU_ASSERT_EQUAL(b->experts, 4);
    /* Tokens from the first gate or attention op: the attention comes first. */
    CU_ASSERT_EQUAL(a->tokens, 96);
    CU_ASSERT_EQUAL(b->tokens, 97);
    MS_ASSERT_REL(a->start_us, 0, 1e-12);
    /* Backward: the expert alone; the allreduce is no part of any layer. */
    CU_ASSERT_EQUAL(bw->phase, MS_PHASE_BACKWARD);
    MS_ASSERT_REL(bw->layer_us, 30, 1e-12);
    MS_ASSERT_REL(bw->start_us, 100, 1e-12);
    MS_ASSERT_REL(bw->part_us[MS_LAYER_EXPERT], 30, 1e-12);
    CU_ASSERT_FALSE(ms_layer_table_slowest(t, 0));
    CU_ASSERT_TRUE(ms_layer_table_slowest(t, 1));
    CU_ASSERT_TRUE(ms_layer_table_slowest(t, 2));
    CU_ASSERT_PTR_EQUAL(ms_layer_table_find(t, 7, 1, MS_PHASE_FORWARD, 1), b);
    CU_ASSERT_PTR_EQUAL(ms_layer_table_find(t, 7, 1, MS_PHASE_BACKWARD, 0), bw);
    CU_ASSERT_PTR_NULL(ms_layer_table_find(t, 7, 1, MS_PHASE_BACKWARD, 1));
    CU_ASSERT_PTR_NULL(ms_layer_table_find(t, 8, 1, MS_PHASE_FORWARD, 0));
    /* A tie goes to the lower GPU. */
    MsLayerRow x = *a, y = *a;
    x.iteration = y.iteration = 9;
    y.gpu = 1;
    ms_layer_table_append(t, &y);
    ms_layer_table_append(t, &x);
    CU_ASSERT_FALSE(ms_layer_table_slowest(t, 3));
    CU_ASSERT_TRUE(ms_layer_table_slowest(t, 4));
    MsLayerPart part;
    CU_ASSERT_TRUE(ms_layer_part_from_name("host", &part) && part == MS_LAYER_HOST);
    CU_ASSERT_FALSE(ms_layer_part_from_name("allreduce", &part));
    CU_ASSERT_FALSE(ms_layer_part_of_role(MS_ROLE_ALLREDUCE, &part));
    CU_ASSERT_FALSE(ms_layer_part_of_role(MS_ROLE_WEIGHTS, &part));
    CU_ASSERT_STRING_EQUAL(ms_layer_part_name(MS_LAYER_N_PARTS), "?");
}

static void
test_outputs(void)
{
    g_autoptr(MsSchedule) s = NULL;
    g_autoptr(MsRecords) r = NULL;
    build(&s, &r);
    ms_schedule_set_meta(s, "model", "m");
    ms_schedule_set_meta(s, "iteration", "3");
    /* Through a result, over two iterations numbered by the schedule's iteration. */
    g_autoptr(MsResult) res = ms_result_new("test");
    CU_ASSERT_PTR_NULL(ms_result_layers(res));
    ms_result_keep_layers(res);
    ms_result_add(res, s, r);
    ms_schedule_set_meta(s, "iteration", "4");
    ms_result_add(res, s, r);
    const MsLayerTable *t = ms_result_layers(res);
    CU_ASSERT_EQUAL_FATAL(ms_layer_table_n_rows(t), 6);
    CU_ASSERT_EQUAL(ms_layer_table_row(t, 0)->iteration, 3);
    CU_ASSERT_EQUAL(ms_layer_table_row(t, 5)->iteration, 4);
    CU_ASSERT_STRING_EQUAL(ms_layer_table_get_meta(t, "model"), "m");
    CU_ASSERT_STRING_EQUAL(ms_layer_table_get_meta(t, "backend"), "test");
    g_autofree char *csv = g_build_filename(ms_test_tmpdir(), "layers.csv", NULL);
    g_autofree char *json = g_build_filename(ms_test_tmpdir(), "layers.json", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_layer_table_save(t, csv, &error));
    CU_ASSERT_TRUE(ms_layer_table_save(t, json, &error));
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 9); /* version, header, 6 rows, "" */
    CU_ASSERT_STRING_EQUAL(lines[0], "# moesim-layers 1");
    CU_ASSERT_STRING_EQUAL(lines[1], "iteration,layer,phase,gpu,slowest,start_us,layer_us,busy_us,"
                                     "attention_us,gate_us,host_us,dispatch_us,expert_us,"
                                     "combine_us,ffn_us,other_us,experts,tokens,attention_ops,"
                                     "gate_ops,host_ops,dispatch_ops,expert_ops,combine_ops,"
                                     "ffn_ops,other_ops");
    CU_ASSERT_STRING_EQUAL(lines[3],
                           "3,1,forward,1,1,0.000000,70.000000,70.000000,10.000000,3.000000,"
                           "8.000000,15.000000,25.000000,10.000000,0.000000,0.000000,"
                           "4,97,1,1,1,2,1,1,0,0");
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, &error));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "moesim-layers");
    JsonArray *layers = json_object_get_array_member(o, "layers");
    CU_ASSERT_EQUAL(json_array_get_length(layers), 4);
    JsonObject *l0 = json_array_get_object_element(layers, 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(l0, "slowest_gpu"), 1);
    MS_ASSERT_REL(json_object_get_double_member(l0, "slowest_us"), 70, 1e-12);
    JsonObject *g0 = json_array_get_object_element(json_object_get_array_member(l0, "gpus"), 0);
    MS_ASSERT_REL(json_object_get_double_member(g0, "dispatch_us"), 15, 1e-12);
    CU_ASSERT_FALSE(ms_layer_table_save(t, "/nonexistent/x.csv", &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    g_clear_error(&error);
}

/* moesim run --layers and compare --layers write their tables. */
static void
test_cli(void)
{
    g_autofree char *csv = g_build_filename(ms_test_tmpdir(), "run-layers.csv", NULL);
    const char *run[] = {"run", "--iterations", "2", "--layers", csv, NULL};
    char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(run, &out, &err), 0);
    g_free(out);
    g_free(err);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    /* lina-gpt2-16e on 16 GPUs: 12 layers x 2 phases x 16 GPUs x 2 iterations. */
    CU_ASSERT_EQUAL(g_strv_length(lines), 2 + 12 * 2 * 16 * 2 + 1);
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "cmp", NULL);
    const char *cmp[] = {"compare", "--policies", "fifo;lina:chunk=8MB",
                         "--mode",  "infer",      "--iterations",
                         "2",       "--layers",   "--out",
                         dir,       NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(cmp, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "layers.json, layers.csv"));
    g_free(out);
    g_free(err);
    g_autofree char *ccsv = g_build_filename(dir, "layers.csv", NULL);
    g_autofree char *ctext = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(ccsv, &ctext, NULL, NULL));
    CU_ASSERT_TRUE(g_str_has_prefix(ctext, "# moesim-layers 1\npolicy,iteration,layer"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ctext, "\nfifo,0,0,forward,0,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ctext, "\nlina:chunk=8MB,0,0,forward,0,"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"rows, parts, spans and the slowest GPU", test_rows},
        {"collected by a result; CSV and JSON", test_outputs},
        {"run --layers and compare --layers", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"layers", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
