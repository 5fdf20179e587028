/* Tests of runner and of the engine as one: the execute function and its data, the free hook
 * (called once, with the runner), errors passed through, and the engine runner's records equal
 * to the engine's, with link series only for detailed executions. */
#include "ms_test.h"
#include "sim/engine.h"
#include "sim/runner.h"

static MsSchedule *
one_gemm(void)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    for (guint r = 0; r < 2; r++) {
        guint32 op =
            ms_schedule_add_compute(s, r, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, "gemm");
        ms_schedule_set_cost(s, op, MS_COMPUTE_GEMM, 1e12 * (r + 1), 0, 4096);
    }
    g_assert(ms_schedule_validate(s, NULL));
    return s;
}

typedef struct {
    guint calls, frees;
    gboolean last_detail;
} Probe;

static MsRecords *
probe_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
              const MsRunWhatIf *what_if, GError **error)
{
    Probe *p = data;
    p->calls++;
    p->last_detail = detail;
    if (ms_schedule_n_ranks(s) > ms_topology_n_gpus(topo)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC, "%u ranks on %u GPUs",
                    ms_schedule_n_ranks(s), ms_topology_n_gpus(topo));
        return NULL;
    }
    return ms_records_new(ms_schedule_n_ops(s), "probe");
}

static void
probe_free(gpointer data)
{
    ((Probe *)data)->frees++;
}

static void
test_hooks(void)
{
    Probe p = {0};
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    g_autoptr(MsSchedule) s = one_gemm();
    GError *error = NULL;
    MsRunner *r = ms_runner_new("probe", probe_execute, &p, probe_free);
    CU_ASSERT_STRING_EQUAL(ms_runner_name(r), "probe");
    g_autoptr(MsRecords) a = ms_runner_execute(r, s, t, TRUE, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_TRUE(p.last_detail);
    g_autoptr(MsRecords) b = ms_runner_execute(r, s, t, FALSE, NULL, &error);
    CU_ASSERT_FALSE(p.last_detail);
    CU_ASSERT_EQUAL(p.calls, 2);
    CU_ASSERT_EQUAL(p.frees, 0);
    /* The function's error comes back as it is. */
    g_autoptr(MsSchedule) big = ms_schedule_new(9);
    ms_schedule_add_stream(big, "compute", MS_STREAM_COMPUTE);
    CU_ASSERT_PTR_NULL(ms_runner_execute(r, big, t, FALSE, NULL, &error));
    MS_ASSERT_ERROR(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC, "9 ranks on 8 GPUs");
    ms_runner_free(r);
    CU_ASSERT_EQUAL(p.frees, 1);
    /* No free hook: the data is the caller's. */
    ms_runner_free(ms_runner_new("plain", probe_execute, &p, NULL));
    CU_ASSERT_EQUAL(p.frees, 1);
}

static void
test_engine_runner(void)
{
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    g_autoptr(MsSchedule) s = one_gemm();
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE, .record_links = TRUE};
    g_autoptr(MsRunner) r = ms_engine_runner_new(&opts);
    /* The options were copied. */
    opts.record_links = FALSE;
    CU_ASSERT_STRING_EQUAL(ms_runner_name(r), "sim");
    g_autoptr(MsRecords) direct = ms_engine_run(s, t, NULL, &error);
    g_autoptr(MsRecords) detailed = ms_runner_execute(r, s, t, TRUE, NULL, &error);
    g_autoptr(MsRecords) plain = ms_runner_execute(r, s, t, FALSE, NULL, &error);
    g_assert_no_error(error);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        CU_ASSERT_EQUAL(ms_records_start(detailed, op), ms_records_start(direct, op));
        CU_ASSERT_EQUAL(ms_records_end(detailed, op), ms_records_end(direct, op));
        CU_ASSERT_EQUAL(ms_records_end(plain, op), ms_records_end(direct, op));
    }
    /* Link series are recorded for the detailed execution only. */
    CU_ASSERT_PTR_NOT_NULL(ms_records_series_names(detailed)[0]);
    CU_ASSERT_PTR_NULL(ms_records_series_names(plain)[0]);
    CU_ASSERT_PTR_NULL(ms_records_series_names(direct)[0]);
    /* NULL options are the engine's defaults. */
    g_autoptr(MsRunner) d = ms_engine_runner_new(NULL);
    g_autoptr(MsRecords) dflt = ms_runner_execute(d, s, t, TRUE, NULL, &error);
    CU_ASSERT_PTR_NULL(ms_records_series_names(dflt)[0]);
    CU_ASSERT_EQUAL(ms_records_end(dflt, 1), ms_records_end(direct, 1));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"execute, its data, its errors and the free hook", test_hooks},
        {"the engine as a runner", test_engine_runner},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"runner", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
