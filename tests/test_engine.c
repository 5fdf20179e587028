/* Tests of the engine on small schedules with closed-form answers: compute roofline times, a
 * collective that starts when its last rank is ready, per-rank completion, stream order, and
 * determinism. */
#include <stdlib.h>

#include "ms_test.h"
#include "sim/compute.h"
#include "sim/engine.h"
#include "sim/sim.h"
#include "sim/schedule/dispatcher.h"
#include "sim/calib/calibration.h"
#include "sim/out/peer_wait.h"
#include "sim/out/result.h"

static MsTopology *
topo(void)
{
    MsTopology *t = ms_topology_load("dgx-a100", NULL);
    g_assert(t);
    return t;
}

static guint32 ranks2[2] = {0, 1};

static MsSchedule *
two_ranks(const char *policy)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    ms_schedule_set_policy(s, policy);
    return s;
}

static guint32
gemm(MsSchedule *s, guint rank, double flops)
{
    guint32 op = ms_schedule_add_compute(s, rank, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, "g");
    ms_schedule_set_cost(s, op, MS_COMPUTE_GEMM, flops, 0, 4096);
    return op;
}

/* Compute time as the compute model gives it for the rank's GPU. */
static MsTime
model_time(const MsTopology *t, double flops)
{
    g_autoptr(GError) error = NULL;
    MsComputeModel *m = ms_compute_model_new(ms_topology_gpu_spec(t, 0), &error);
    MsTime v = ms_compute_time(m, flops, 0, 4096);
    ms_compute_model_free(m);
    return v;
}

static void
test_a2a_after_slowest_rank(void)
{
    g_autoptr(MsTopology) t = topo();
    g_autoptr(MsSchedule) s = two_ranks("fifo");
    guint32 a = gemm(s, 0, 1e12), b = gemm(s, 1, 3e12);
    guint64 bytes = 30000000;
    guint64 m[4] = {0, bytes, bytes, 0};
    guint32 x[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "a2a", x);
    ms_schedule_add_dep(s, x[0], a);
    ms_schedule_add_dep(s, x[1], b);
    guint32 after = gemm(s, 0, 1e12);
    ms_schedule_add_dep(s, after, x[0]);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE};
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTime ta = model_time(t, 1e12), tb = model_time(t, 3e12);
    CU_ASSERT_EQUAL(ms_records_end(r, a), ta);
    CU_ASSERT_EQUAL(ms_records_end(r, b), tb);
    /* The collective is launched when its last rank is ready. */
    CU_ASSERT_EQUAL(ms_records_start(r, x[0]), tb);
    CU_ASSERT_EQUAL(ms_records_start(r, x[1]), tb);
    /* One flow each way over gpu->nvswitch->gpu (300 GB/s, 0.7 us per link). */
    MsTime expect = tb + ms_time_from_us(1.4) + ms_time_from_s(bytes / 300e9);
    MS_ASSERT_REL((double)ms_records_end(r, x[0]), (double)expect, 1e-9);
    CU_ASSERT_EQUAL(ms_records_start(r, after), ms_records_end(r, x[0]));
    /* Rank 0 reached the collective at ta and waited for rank 1 until tb. */
    g_autoptr(GArray) spans = ms_peer_wait_spans(s, r);
    g_autofree MsTime *wait = ms_peer_wait_per_op(s, spans);
    CU_ASSERT_EQUAL(wait[x[0]], tb - ta);
    CU_ASSERT_EQUAL(wait[x[1]], 0);
    MsMetrics mt;
    ms_metrics_compute(s, r, &mt);
    MS_ASSERT_REL(mt.comm_wait_us, ms_time_to_us(tb - ta) / 2, 1e-12);
}

/* A straggler (pace 3 on rank 1): the same GEMM takes launch + 3 x body there, and rank 0 waits
 * the difference for the all-to-all after it. */
static void
test_straggler(void)
{
    g_autoptr(MsTopology) t = topo();
    g_autoptr(MsSchedule) s = two_ranks("fifo");
    guint32 a = gemm(s, 0, 1e12), b = gemm(s, 1, 1e12);
    guint64 m[4] = {0, 1000, 1000, 0};
    guint32 x[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_COMBINE, MS_PHASE_FORWARD, 0, -1,
                             "a2a", x);
    ms_schedule_add_dep(s, x[0], a);
    ms_schedule_add_dep(s, x[1], b);
    const double pace[2] = {1, 3};
    MsEngineOptions opts = {.check_invariants = TRUE, .pace = pace, .n_pace = 2};
    GError *error = NULL;
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    g_assert_no_error(error);
    MsTime launch = ms_topology_gpu_spec(t, 0)->launch_overhead,
           body = model_time(t, 1e12) - launch;
    CU_ASSERT_EQUAL(ms_records_end(r, a), launch + body);
    /* To the picosecond the seconds round to. */
    CU_ASSERT_TRUE(llabs((long long)ms_records_end(r, b) - (long long)(launch + 3 * body)) <= 1);
    CU_ASSERT_EQUAL(ms_records_start(r, x[0]), ms_records_end(r, b));
    g_autoptr(GArray) spans = ms_peer_wait_spans(s, r);
    g_autofree MsTime *wait = ms_peer_wait_per_op(s, spans);
    CU_ASSERT_EQUAL(wait[x[0]], ms_records_end(r, b) - ms_records_end(r, a));
    /* A pace the compute model refuses fails the run. */
    const double bad[1] = {0.5};
    MsEngineOptions refused = {.pace = bad, .n_pace = 1};
    CU_ASSERT_PTR_NULL(ms_engine_run(s, t, &refused, &error));
    MS_ASSERT_ERROR(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID, "straggler factor 0.5");
}

static void
test_stream_is_exclusive_and_deterministic(void)
{
    g_autoptr(MsTopology) t = topo();
    g_autoptr(MsSchedule) s = two_ranks("fifo");
    guint32 ops[4];
    for (guint i = 0; i < 4; i++) {
        ops[i] = gemm(s, 0, 1e11 * (i + 1));
    }
    g_autoptr(MsRecords) r1 = ms_engine_run(s, t, NULL, NULL);
    g_autoptr(MsRecords) r2 = ms_engine_run(s, t, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
    for (guint i = 0; i < 4; i++) {
        if (i) {
            CU_ASSERT_EQUAL(ms_records_start(r1, ops[i]), ms_records_end(r1, ops[i - 1]));
        }
        CU_ASSERT_EQUAL(ms_records_start(r1, ops[i]), ms_records_start(r2, ops[i]));
        CU_ASSERT_EQUAL(ms_records_end(r1, ops[i]), ms_records_end(r2, ops[i]));
    }
    double events = 0;
    CU_ASSERT_TRUE(ms_records_get_stat(r1, "events", &events));
    CU_ASSERT_TRUE(events >= 4);
}

/* Two chains of two equal GEMMs, one per rank, end at one instant; the event loop meets rank 0's
 * second GEMM first there (launched first, when rank 0's first GEMM, the lower op, ended), but
 * rank 1's has the lower op id (made before it). Each is the last a collective on the shared comm
 * stream waits for: p rank 0's, q rank 1's, p first in the plan's order. Both become launchable
 * between the same two polls, so the plan's order decides: p launches at that instant and q
 * after it, whatever order the loop met the GEMMs in or the dispatcher heard of them. Before,
 * the loop's order decided, and the symmetric-classes and flow-by-flow engines, which meet
 * simultaneous flow completions in different orders, could launch different collectives there
 * (tests/test_coll_sym.c); then the op order of the completions did, which let a collective of
 * lower ranks overtake another one the plan puts first. */
static void
test_simultaneous_completions_in_op_order(void)
{
    g_autoptr(MsTopology) t = topo();
    g_autoptr(MsSchedule) s = two_ranks("fifo");
    guint32 a0 = gemm(s, 0, 1e12), b0 = gemm(s, 1, 1e12);
    guint32 b1 = gemm(s, 1, 1e12), a1 = gemm(s, 0, 1e12);
    guint64 bytes = 30000000;
    guint64 m[4] = {0, bytes, bytes, 0};
    guint32 p[2], q[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "p", p);
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "q", q);
    ms_schedule_add_dep(s, a1, a0);
    ms_schedule_add_dep(s, b1, b0);
    ms_schedule_add_dep(s, p[0], a1); /* p waits for rank 0's second GEMM, q for rank 1's */
    ms_schedule_add_dep(s, q[1], b1);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE};
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTime te = 2 * model_time(t, 1e12);
    CU_ASSERT_EQUAL(ms_records_end(r, a1), te);
    CU_ASSERT_EQUAL(ms_records_end(r, b1), te);
    CU_ASSERT_EQUAL(ms_records_start(r, p[0]), te);
    CU_ASSERT_EQUAL(ms_records_start(r, q[0]), ms_records_end(r, p[0]));
    CU_ASSERT(ms_records_end(r, p[0]) > te);
}

/* Regression: a collective reports its last participant done from inside its own transfer
 * callback and then still drains its zero-byte flows; the engine freed it in that callback. The
 * heap use after free is silent in a plain build: the sanitizer build of the suite catches it. */
static void
test_collective_with_empty_pairs(void)
{
    g_autoptr(MsTopology) t = topo();
    MsSchedule *s = ms_schedule_new(4);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 ranks[4] = {0, 1, 2, 3}, x[4];
    guint64 m[16];
    for (guint i = 0; i < 16; i++) {
        m[i] = i % 5 ? 1000000 * (i + 1) : 0;
    }
    guint32 g = gemm(s, 0, 1e9);
    ms_schedule_add_alltoall(s, 1, ranks, 4, m, 0, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, 0,
                             "a2a", x);
    ms_schedule_add_dep(s, x[0], g);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE};
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    for (guint i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(ms_records_start(r, x[i]), ms_records_end(r, g));
        CU_ASSERT_TRUE(ms_records_end(r, x[i]) > ms_records_start(r, x[i]));
    }
    ms_schedule_free(s);
}

/* Regression: on a GPU of 1 FLOPS the first op's time saturated the clock and the second op's
 * end wrapped around into the past: a GLib critical, the op never ran and the step time came out
 * silently wrong. The run now stops with an error. 1 GFLOPS, the slowest GPU a topology may give,
 * takes 1e12 s for 1e21 flops: far past the clock too. */
static void
test_clock_end(void)
{
    g_autoptr(GBytes) h200 = ms_topology_shipped_data("h200");
    g_autofree char *text = g_strndup(g_bytes_get_data(h200, NULL), g_bytes_get_size(h200));
    g_autoptr(GRegex) peak = g_regex_new("^peak = .*$", G_REGEX_MULTILINE, 0, NULL);
    g_autofree char *slow_text = g_regex_replace(peak, text, -1, 0, "peak = 1GFLOPS", 0, NULL);
    g_autoptr(MsTopology) slow = ms_topology_load_data(slow_text, strlen(slow_text), "slow", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(slow);
    MsSchedule *s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    guint32 a = gemm(s, 0, 1e21);
    guint32 b = gemm(s, 0, 1e21);
    ms_schedule_add_dep(s, b, a);
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE};
    MsRecords *r = ms_engine_run(s, slow, &opts, &error);
    CU_ASSERT_PTR_NULL(r);
    ms_records_free(r);
    /* The message names the topology whose figures drove the clock there, and the op whose time
     * reaches the end (the first GEMM: the second never starts). */
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_TRUE(g_str_has_prefix(error->message, "topology 'h200': compute op 0 (g) of "
                                                    "rank 0 ends there; modelled time"));
    MS_ASSERT_ERROR(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK, "the end of the clock");
    ms_schedule_free(s);
}

/* A calibrated efficiency curve is read at one GEMM's rows: an expert op's shape m (one
 * expert's tokens), not its tokens (all its local experts'). */
static void
test_expert_efficiency_at_gemm_rows(void)
{
    static const char cal_ini[] = "[calibration]\nformat = 1\ntopology = h200\n"
                                  "[gemm]\ntokens = 1024;8192\nefficiency = 0.8;0.4\n"
                                  "launch = 0us\n";
    GError *error = NULL;
    g_autoptr(MsCalibration) cal =
        ms_calibration_load_data(cal_ini, sizeof cal_ini - 1, "test.ini", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cal);
    g_autoptr(MsTopology) t = ms_topology_load("h200", NULL);
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    guint32 ex = ms_schedule_add_compute(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "e");
    ms_schedule_set_cost(s, ex, MS_COMPUTE_EXPERT, 1e12, 0, 8192);
    ms_schedule_set_shape(s, ex, 1024, 14336, 4096, 3, 8);
    guint32 plain = gemm(s, 0, 1e12); /* no shape: its 8192 tokens, efficiency 0.4 */
    ms_schedule_set_cost(s, plain, MS_COMPUTE_GEMM, 1e12, 0, 8192);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    MsEngineOptions opts = {.calibration = cal};
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double peak = (double)ms_topology_gpu_spec(t, 0)->peak_flops;
    MS_ASSERT_REL(ms_time_to_s(ms_records_end(r, ex) - ms_records_start(r, ex)),
                  1e12 / (peak * 0.8), 1e-9);
    MS_ASSERT_REL(ms_time_to_s(ms_records_end(r, plain) - ms_records_start(r, plain)),
                  1e12 / (peak * 0.4), 1e-9);
}

static double
stat(const MsRecords *r, const char *key)
{
    double v = -1;
    CU_ASSERT_TRUE(ms_records_get_stat(r, key, &v));
    return v;
}

/* The records count each finished collective by kind: calls, an allreduce's buffer, flows; the
 * kinds' flows add up to the run's, and under the nccl model the kind names NCCL's choice. */
static void
test_stats_per_collective_kind(void)
{
    g_autoptr(MsTopology) t = topo();
    MsSchedule *s = ms_schedule_new(4);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 ranks[4] = {0, 1, 2, 3}, x[4], y[4];
    guint64 m[16];
    for (guint i = 0; i < 16; i++) {
        m[i] = i % 5 ? 1000000 : 0; /* every pair but a rank to itself */
    }
    ms_schedule_add_alltoall(s, 1, ranks, 4, m, 0, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "a2a", x);
    ms_schedule_add_allreduce(s, 1, ranks, 4, 64u << 20, 0, MS_PHASE_BACKWARD, -1, -1, "ar", y);
    ms_schedule_add_allreduce(s, 1, ranks, 4, 32u << 20, 0, MS_PHASE_BACKWARD, -1, -1, "ar", NULL);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    GError *error = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE, .flow_by_flow = TRUE};
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(stat(r, "calls.alltoall.4.direct"), 1);
    CU_ASSERT_EQUAL(stat(r, "flows.alltoall.4.direct"), 12); /* a flow per pair, flow by flow */
    CU_ASSERT_EQUAL(stat(r, "calls.allreduce.4.ring"), 2);
    CU_ASSERT_EQUAL(stat(r, "bytes.allreduce.4.ring"), (double)(96u << 20));
    double ring = stat(r, "flows.allreduce.4.ring");
    /* channels x 2(n - 1) steps x n flows per call */
    CU_ASSERT_TRUE(ring > 0 && fmod(ring, 2.0 * 3 * 4) == 0);
    CU_ASSERT_EQUAL(ring + 12, stat(r, "flows"));
    double v;
    CU_ASSERT_FALSE(ms_records_get_stat(r, "bytes.alltoall.4.direct", &v));

    MsNetSpec net;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl:algo=ring,proto=simple", &net, NULL));
    opts.net = &net;
    g_autoptr(MsRecords) rn = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rn);
    CU_ASSERT_EQUAL(stat(rn, "calls.allreduce.4.ring.Simple"), 2);
    CU_ASSERT_EQUAL(stat(rn, "bytes.allreduce.4.ring.Simple"), (double)(96u << 20));
    CU_ASSERT_FALSE(ms_records_get_stat(rn, "calls.allreduce.4.ring", &v));
    CU_ASSERT_EQUAL(stat(rn, "flows.allreduce.4.ring.Simple") + stat(rn, "flows.alltoall.4.direct"),
                    stat(rn, "flows"));
    ms_schedule_free(s);
}

/* Under the nccl model an allreduce across nodes runs as NCCL chooses, a tree or NVLS_TREE whose
 * traffic is not a ring's 2 (n - 1) x its buffer: the invariant checks pass (they compared every
 * allreduce with the ring's bytes, and failed on dgx-h100-4node). And one on a single rank. */
static void
test_nccl_tree_invariants(void)
{
    g_autoptr(MsTopology) t = ms_topology_load("dgx-h100-4node", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g_autoptr(MsSchedule) s = ms_schedule_new(32);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 ranks[32];
    for (guint i = 0; i < 32; i++) {
        ranks[i] = i;
    }
    ms_schedule_add_allreduce(s, 1, ranks, 32, 64u << 20, 0, MS_PHASE_BACKWARD, -1, -1, "ar", NULL);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    const char *specs[] = {"nccl", "nccl:algo=tree", "nccl:algo=ring"};
    const char *kinds[] = {"calls.allreduce.32.nvlstree.", "calls.allreduce.32.tree.",
                           "calls.allreduce.32.ring."};
    for (guint k = 0; k < G_N_ELEMENTS(specs); k++) {
        MsNetSpec net;
        CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(specs[k], &net, NULL));
        MsEngineOptions opts = {.check_invariants = TRUE, .net = &net};
        g_autoptr(GError) error = NULL;
        g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
        g_assert_no_error(error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        guint calls = 0; /* of the algorithm, in whichever protocol NCCL picked */
        for (const char *const *key = ms_records_stat_keys(r); *key; key++) {
            calls += g_str_has_prefix(*key, kinds[k]) ? (guint)stat(r, *key) : 0;
        }
        CU_ASSERT_EQUAL(calls, 1);
    }
    /* On one rank NCCL never tunes the call (ncclLaunchOneRank: a copy out of place, nothing in
     * place): a one-GPU run under nccl runs it as the flow model does, where it was refused
     * because no algorithm fits one rank. */
    g_autoptr(MsTopology) one = ms_topology_load("h200", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    g_autoptr(MsSchedule) alone = ms_schedule_new(1);
    ms_schedule_add_stream(alone, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(alone, "comm", MS_STREAM_COMM);
    ms_schedule_add_allreduce(alone, 1, ranks, 1, 64u << 20, 0, MS_PHASE_BACKWARD, -1, -1, "ar",
                              NULL);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(alone, NULL));
    MsNetSpec net;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl", &net, NULL));
    MsEngineOptions opts = {.check_invariants = TRUE, .net = &net};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsRecords) r = ms_engine_run(alone, one, &opts, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(stat(r, "calls.allreduce.1.ring"), 1);
}

static void
test_errors(void)
{
    g_autoptr(MsTopology) t = ms_topology_load("h200", NULL);
    g_autoptr(MsSchedule) s = two_ranks("fifo");
    gemm(s, 1, 1e9);
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_engine_run(s, t, NULL, &error));
    MS_ASSERT_ERROR(error, MS_ENGINE_ERROR, MS_ENGINE_ERROR_MISMATCH, "has 1 GPUs");
    g_autoptr(MsTopology) t2 = topo();
    g_autoptr(MsSchedule) s2 = two_ranks("fifo");
    guint32 a = gemm(s2, 0, 1e9), b = gemm(s2, 0, 1e9);
    ms_schedule_add_dep(s2, a, b);
    CU_ASSERT_PTR_NULL(ms_engine_run(s2, t2, NULL, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_STUCK, "cannot progress");
}

/* An all-to-all of bytes each way between ranks 0 and 1 on the comm stream from time 0, and on
 * rank 0's compute stream a GEMM of flops from time 0 and one after the all-to-all, under an
 * overlap slowdown of slow: the GEMMs' records and the all-to-all's end. */
static void
run_overlapped(double slow, guint64 bytes, double flops, MsTime *first, MsTime *second_start,
               MsTime *second_end, MsTime *a2a_end)
{
    g_autoptr(MsTopology) t = topo();
    g_autoptr(MsSchedule) s = two_ranks("concurrent");
    guint64 m[4] = {0, bytes, bytes, 0};
    guint32 x[2];
    guint32 g = gemm(s, 0, flops);
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "a2a", x);
    guint32 after = gemm(s, 0, flops);
    ms_schedule_add_dep(s, after, x[0]);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_calibration_set_overlap_slowdown(cal, slow, NULL));
    MsEngineOptions opts = {.check_invariants = TRUE, .calibration = cal};
    GError *error = NULL;
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(ms_records_start(r, g), 0);
    CU_ASSERT_EQUAL(ms_records_start(r, x[0]), 0);
    *first = ms_records_end(r, g);
    *second_start = ms_records_start(r, after);
    *second_end = ms_records_end(r, after);
    *a2a_end = ms_records_end(r, x[0]);
}

/* The overlap slowdown stretches a kernel body only while communication runs on its rank: the
 * part of the body before the all-to-all ends runs at 1 / s of its pace, the rest at its own. */
static void
test_overlap_prorated(void)
{
    g_autoptr(MsTopology) t = topo();
    const double s = 1.5, flops = 1e12;
    MsTime alone = model_time(t, flops);
    g_autoptr(MsComputeModel) m = ms_compute_model_new(ms_topology_gpu_spec(t, 0), NULL);
    MsTime launch = ms_compute_model_launch(m);
    double body = ms_time_to_s(alone - launch);
    /* 300 MB each way: about 1 ms, within the GEMM's 4.6 ms. */
    MsTime first, start2, end2, a2a;
    run_overlapped(s, 300000000, flops, &first, &start2, &end2, &a2a);
    CU_ASSERT_TRUE(a2a > launch && a2a < alone);
    double done_by_a2a = ms_time_to_s(a2a - launch) / s;
    MsTime expect = a2a + ms_time_from_s(body - done_by_a2a);
    CU_ASSERT_TRUE(llabs((long long)(first - expect)) <= 2);
    /* The GEMM after the all-to-all runs alone. */
    CU_ASSERT_EQUAL(start2, MAX(first, a2a));
    CU_ASSERT_EQUAL(end2 - start2, alone);
    /* An all-to-all outlasting the GEMM stretches all of its body (3 GB: about 10 ms). */
    run_overlapped(s, 3000000000, flops, &first, &start2, &end2, &a2a);
    CU_ASSERT_TRUE(a2a > first);
    CU_ASSERT_TRUE(llabs((long long)(first - (launch + ms_time_from_s(s * body)))) <= 2);
    CU_ASSERT_EQUAL(end2 - start2, alone);
    /* Without a slowdown the GEMM takes its time alone, the all-to-all beside it or not. */
    run_overlapped(1.0, 300000000, flops, &first, &start2, &end2, &a2a);
    CU_ASSERT_EQUAL(first, alone);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"a2a starts when the slowest rank is ready", test_a2a_after_slowest_rank},
        {"a straggler's kernels and its peers' wait", test_straggler},
        {"a stream runs one op at a time, deterministically",
         test_stream_is_exclusive_and_deterministic},
        {"simultaneous completions are told in op order",
         test_simultaneous_completions_in_op_order},
        {"a collective with empty pairs is freed after it is done",
         test_collective_with_empty_pairs},
        {"a run past the clock's end is an error", test_clock_end},
        {"an expert op's efficiency is read at one expert's tokens",
         test_expert_efficiency_at_gemm_rows},
        {"the records count collectives by kind", test_stats_per_collective_kind},
        {"nccl's tree, NVLS_TREE and one rank pass the invariant checks",
         test_nccl_tree_invariants},
        {"the overlap slowdown stretches compute only while communication runs",
         test_overlap_prorated},
        {"errors", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"engine", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
