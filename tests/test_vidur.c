/* Tests of vidur: the shipped Vidur A100 profiles (row counts and specific values, shapes derived
 * for tensor parallelism) and every error path with its code and SOURCE:LINE message. */
#include "ms_test.h"
#include "validate/vidur.h"

static MsMeasurementSet *
load(const char *name)
{
    GError *error = NULL;
    MsMeasurementSet *set = ms_measurement_set_load(name, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    return set;
}

static guint
count(const MsMeasurementSet *set, guint ranks, guint per_node)
{
    guint n = 0;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        n += r->ranks == ranks && r->ranks_per_node == per_node;
    }
    return n;
}

static void
test_network(void)
{
    g_autoptr(MsMeasurementSet) sr = load("nccl_send_recv_dgx.csv");
    CU_ASSERT_EQUAL(ms_measurement_set_size(sr), 1988);
    CU_ASSERT_EQUAL(count(sr, 2, 1), 994);
    CU_ASSERT_EQUAL(count(sr, 2, 2), 994);
    const MsMeasurement *r = ms_measurement_set_get(sr, 0);
    CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_SENDRECV);
    CU_ASSERT_EQUAL(r->bytes, 2048);
    CU_ASSERT_EQUAL(r->line, 2);
    CU_ASSERT_STRING_EQUAL(r->source, "nccl_send_recv_dgx.csv");
    CU_ASSERT_PTR_NULL(r->dtype);
    MS_ASSERT_REL(r->seconds, 0.024e-3, 1e-12);
    MS_ASSERT_REL(r->median_s, 0.024e-3, 1e-12);
    MS_ASSERT_REL(r->min_s, 0.016e-3, 1e-12);
    MS_ASSERT_REL(r->mean_s, 0.03466666666666667e-3, 1e-12);

    g_autoptr(MsMeasurementSet) ar = load("nccl_all_reduce_dgx.csv");
    CU_ASSERT_EQUAL(ms_measurement_set_size(ar), 6958);
    CU_ASSERT_EQUAL(count(ar, 16, 8), 994);
    CU_ASSERT_EQUAL(count(ar, 8, 4), 994);
    const MsMeasurement *last = ms_measurement_set_get(ar, 6957);
    CU_ASSERT_EQUAL(last->kind, MS_MEASUREMENT_ALLREDUCE);
    CU_ASSERT_EQUAL(last->bytes, 67108864);
    CU_ASSERT_EQUAL(last->ranks, 16);
    MS_ASSERT_REL(last->seconds, 7.1930000000000005e-3, 1e-12);

    g_autoptr(MsMeasurementSet) pcie = load("nccl_all_reduce_pcie_nvlink_pairs.csv");
    CU_ASSERT_EQUAL(ms_measurement_set_size(pcie), 4496);
    CU_ASSERT_EQUAL(count(pcie, 4, 4), 2248);
}

static void
test_compute(void)
{
    g_autoptr(MsMeasurementSet) set = load("mlp_llama3_8b.csv");
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 3 * 1824);
    /* Line 2: 32768 tokens, no tensor parallelism. */
    const MsMeasurement *up = ms_measurement_set_get(set, 0);
    const MsMeasurement *act = ms_measurement_set_get(set, 1);
    const MsMeasurement *down = ms_measurement_set_get(set, 2);
    CU_ASSERT_EQUAL(up->kind, MS_MEASUREMENT_GEMM);
    CU_ASSERT_STRING_EQUAL(up->label, "mlp_up_proj");
    CU_ASSERT_STRING_EQUAL(up->dtype, "fp16");
    CU_ASSERT_EQUAL(up->m, 32768);
    CU_ASSERT_EQUAL(up->k, 4096);
    CU_ASSERT_EQUAL(up->n, 28672);
    CU_ASSERT_EQUAL(up->line, 2);
    MS_ASSERT_REL(up->seconds, 33.094e-3, 1e-12);
    CU_ASSERT_EQUAL(act->kind, MS_MEASUREMENT_ELEMENTWISE);
    CU_ASSERT_STRING_EQUAL(act->label, "mlp_act");
    CU_ASSERT_EQUAL(act->n, 14336);
    CU_ASSERT_EQUAL(act->bytes, 2ull * 32768 * (28672 + 14336));
    MS_ASSERT_REL(act->seconds, 2.7685e-3, 1e-12);
    CU_ASSERT_EQUAL(down->k, 14336);
    CU_ASSERT_EQUAL(down->n, 4096);
    MS_ASSERT_REL(down->seconds, 16.6075e-3, 1e-12);
    double flops, bytes;
    ms_measurement_gemm_cost(up, &flops, &bytes);
    CU_ASSERT_EQUAL(flops, 2.0 * 32768 * 28672 * 4096);
    CU_ASSERT_EQUAL(bytes, 2.0 * (32768.0 * 4096 + 4096.0 * 28672 + 32768.0 * 28672));
    /* Line 458: two-way tensor parallelism halves the expanded dimension. */
    const MsMeasurement *up2 = ms_measurement_set_get(set, 3 * (458 - 2));
    CU_ASSERT_EQUAL(up2->line, 458);
    CU_ASSERT_EQUAL(up2->n, 14336);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 3 * (458 - 2) + 2)->k, 7168);
    MS_ASSERT_REL(up2->seconds, 17.389e-3, 1e-12);
    /* Line 457: one token; min and mean are kept. */
    const MsMeasurement *one = ms_measurement_set_get(set, 3 * (457 - 2));
    CU_ASSERT_EQUAL(one->m, 1);
    MS_ASSERT_REL(one->min_s, 0.141e-3, 1e-12);
    MS_ASSERT_REL(one->mean_s, 0.14245e-3, 1e-12);
}

#define NET_HEADER                                                                                 \
    ",time_stats.send_recv.min,time_stats.send_recv.median,rank,num_workers,size,collective,"      \
    "devices_per_node\n"
#define MLP_HEADER                                                                                 \
    "time_stats.mlp_up_proj.median,time_stats.mlp_act.median,time_stats.mlp_down_proj.median,"     \
    "n_embd,n_expanded_embd,use_gated_mlp,num_tokens,num_tensor_parallel_workers\n"

static void
test_network_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {NET_HEADER "0,0.01,0.02,0,2,2048,send_recv\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "n.csv:2: 7 fields, but the header names 8"},
        {NET_HEADER "0,0.01,abc,0,2,2048,send_recv,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: time_stats.send_recv.median: 'abc' is not a number"},
        {NET_HEADER "0,0.01,-0.02,0,2,2048,send_recv,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: time_stats.send_recv.median: '-0.02' ms is not a positive time"},
        {NET_HEADER "0,-1,0.02,0,2,2048,send_recv,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: time_stats.send_recv.min: '-1' ms"},
        {NET_HEADER "0,0.01,0.02,0,2,2k,send_recv,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: size: '2k' is not a non-negative integer"},
        {NET_HEADER "0,0.01,0.02,0,2,2048,all_reduce,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: collective: 'all_reduce' in a file of time_stats.send_recv"},
        {NET_HEADER "0,0.01,0.02,0,2,2048,send_recv,3\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: ranks_per_node: 3 is outside [1, ranks = 2]"},
        {NET_HEADER "0,0.01,0.02,0,0,2048,send_recv,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:2: num_workers: 0 out of range"},
        {",time_stats.send_recv.median,num_workers,devices_per_node\n1,2,3,4\n",
         MS_MEASUREMENT_ERROR_MISSING, "n.csv:1: required column 'size' is missing"},
        {",time_stats.send_recv.mean,size,num_workers,devices_per_node\n",
         MS_MEASUREMENT_ERROR_MISSING, "n.csv:1: no time_stats.<operation>.median column"},
        {",time_stats.median,size,num_workers,devices_per_node\n", MS_MEASUREMENT_ERROR_MISSING,
         "n.csv:1: no time_stats.<operation>.median column"},
        {",time_stats.broadcast.median,size,num_workers,devices_per_node\n",
         MS_MEASUREMENT_ERROR_VALUE,
         "n.csv:1: time_stats.broadcast.median: operation "
         "'broadcast' is not one moesim models"},
        {",time_stats.all_reduce.median,time_stats.send_recv.median,size\n",
         MS_MEASUREMENT_ERROR_VALUE, "a second operation ('send_recv' after 'all_reduce')"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        CU_ASSERT_FALSE(
            ms_vidur_read_network(set, cases[i].text, strlen(cases[i].text), "n.csv", &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, cases[i].code, cases[i].needle);
    }
}

static void
test_compute_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {MLP_HEADER "0.1,0.01,0.05,4096,14336,True,1,3\n", MS_MEASUREMENT_ERROR_VALUE,
         "c.csv:2: num_tensor_parallel_workers: 3 does not divide n_expanded_embd 14336"},
        {MLP_HEADER "0.1,0.01,0.05,4096,14336,maybe,1,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "c.csv:2: use_gated_mlp: 'maybe' is not True or False"},
        {MLP_HEADER "0.1,0.01,0.05,4096,14336,True,0,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "c.csv:2: num_tokens: 0 out of range"},
        {MLP_HEADER "0.1,0.01,0,4096,14336,True,1,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "c.csv:2: time_stats.mlp_down_proj.median: '0' ms is not a positive time"},
        {MLP_HEADER "0.1,x,0.05,4096,14336,True,1,1\n", MS_MEASUREMENT_ERROR_VALUE,
         "c.csv:2: time_stats.mlp_act.median: 'x' is not a number"},
        {MLP_HEADER "0.1,0.01,0.05,4096,14336,True,1\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "c.csv:2: 7 fields"},
        {"time_stats.mlp_up_proj.median,n_embd,num_tokens\n", MS_MEASUREMENT_ERROR_MISSING,
         "c.csv:1: required column 'n_expanded_embd' is missing"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        CU_ASSERT_FALSE(
            ms_vidur_read_compute(set, cases[i].text, strlen(cases[i].text), "c.csv", &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, cases[i].code, cases[i].needle);
    }
    /* A good line, with blank lines around, gives three rows; a plain (not gated) MLP too. */
    static const char good[] = MLP_HEADER "\n0.1,0.01,0.05,4096,14336,False,8,2\n\n";
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    CU_ASSERT_TRUE(ms_vidur_read_compute(set, good, strlen(good), "c.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 3);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->n, 7168);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 1)->bytes, 2ull * 8 * (7168 + 7168));
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 2)->line, 3);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"network profiles", test_network},
        {"MLP compute profile", test_compute},
        {"network errors", test_network_errors},
        {"compute errors", test_compute_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"vidur", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
