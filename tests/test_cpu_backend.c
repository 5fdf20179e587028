/* Tests of the cpu backend on hand-made schedules: every op once, after its dependencies, one op
 * at a time per stream, collectives in one order on every rank, exact all-to-all bytes and real
 * allreduce sums (counted in its stats), busy work as long as the model says; each check seen to
 * fire through the backend's deliberate faults or hooks driven out of order; set-up errors. */
#include "backends/cpu/cpu_backend.h"
#include "ms_test.h"
#include "sim/compute.h"
#include "sim/schedule/dispatcher.h"
#include "sim/inputs.h"
#include "sim/policy/planner.h"

static MsTopology *topo;

static int
suite_init(void)
{
    topo = ms_topology_load("dgx-a100", NULL);
    return topo == NULL;
}

static int
suite_clean(void)
{
    ms_topology_free(topo);
    return 0;
}

static MsSchedule *
empty(guint n_ranks, const char *policy)
{
    MsSchedule *s = ms_schedule_new(n_ranks);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "a2a", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_set_policy(s, policy);
    return s;
}

static guint32
gemm(MsSchedule *s, guint rank, double flops, const char *label)
{
    guint32 op =
        ms_schedule_add_compute(s, rank, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, label);
    ms_schedule_set_cost(s, op, MS_COMPUTE_GEMM, flops, 0, 1024);
    return op;
}

/* Four ranks, two layers: compute, dispatch all-to-all with an uneven matrix (diagonal
 * included), expert compute, combine all-to-all, then allreduces (one of 4099 bytes, not a whole
 * number of floats, and one over two ranks only) that a lina gate may hold back. */
static MsSchedule *
sample(const char *policy)
{
    const guint n = 4;
    MsSchedule *s = empty(n, policy);
    guint32 ranks[4] = {0, 1, 2, 3}, pair[2] = {1, 3};
    guint64 m[16];
    for (guint layer = 0; layer < 2; layer++) {
        guint32 pre[4], x[4], mid[4], y[4], ar[4];
        for (guint r = 0; r < n; r++) {
            pre[r] = gemm(s, r, 2e9 * (r + 1), "pre");
        }
        for (guint k = 0; k < n * n; k++) {
            m[k] = 1000 * (k + 1) + 17 * layer + (k % 3 == 0 ? 0 : 5);
        }
        m[1] = 0; /* an empty pair */
        ms_schedule_add_alltoall(s, 1, ranks, n, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, layer,
                                 -1, "dispatch", x);
        for (guint r = 0; r < n; r++) {
            ms_schedule_add_dep(s, x[r], pre[r]);
            mid[r] = gemm(s, r, 1e9, "expert");
            ms_schedule_add_dep(s, mid[r], x[r]);
        }
        ms_schedule_add_alltoall(s, 1, ranks, n, m, 1, 0, MS_ROLE_COMBINE, MS_PHASE_FORWARD, layer,
                                 -1, "combine", y);
        for (guint r = 0; r < n; r++) {
            ms_schedule_add_dep(s, y[r], mid[r]);
        }
        ms_schedule_add_allreduce(s, 2, ranks, n, 4099 + layer * 4000, 0, MS_PHASE_BACKWARD, layer,
                                  -1, "grads", ar);
        for (guint r = 0; r < n; r++) {
            ms_schedule_add_dep(s, ar[r], mid[r]);
        }
        ms_schedule_add_allreduce(s, 2, pair, 2, 64 * 1024, 0, MS_PHASE_BACKWARD, layer, -1, "pair",
                                  ar);
        ms_schedule_add_dep(s, ar[0], mid[1]);
        ms_schedule_add_dep(s, ar[1], mid[3]);
    }
    g_assert(ms_schedule_validate(s, NULL));
    return s;
}

static MsRecords *
run(const MsSchedule *s, guint32 faults, GError **error)
{
    MsCpuOptions cpu = {.time_scale = 1e-3, .faults = faults};
    MsExecOptions o = {.topology = topo, .timeout_s = 60 * ms_test_time_factor(), .backend = &cpu};
    return ms_executor_run(&ms_cpu_backend, s, &o, error);
}

/* Sums of what the collectives must move: all-to-all matrices, allreduce shares x (n - 1). */
static void
expected_bytes(const MsSchedule *s, double *transfer, double *a2a, double *elements)
{
    *transfer = *a2a = *elements = 0;
    for (guint32 id = 0; id < ms_schedule_n_colls(s); id++) {
        MsCollInfo c;
        ms_schedule_coll(s, id, &c);
        if (c.kind == MS_COLL_KIND_ALLTOALL) {
            for (guint k = 0; k < c.n_ranks * c.n_ranks; k++) {
                *a2a += c.matrix[k];
            }
        } else {
            *transfer += (double)c.bytes * (c.n_ranks - 1);
            *elements += (double)c.n_ranks * (c.bytes / 4 + c.bytes % 4);
        }
    }
    *transfer += *a2a;
}

static int
cmp_start(gconstpointer a, gconstpointer b, gpointer data)
{
    MsTime x = ms_records_start(data, *(const guint32 *)a);
    MsTime y = ms_records_start(data, *(const guint32 *)b);
    return x < y ? -1 : x > y;
}

/* What the records of any correct execution satisfy. */
static void
check_semantics(const MsSchedule *s, const MsRecords *r)
{
    guint n_streams = ms_schedule_n_streams(s);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        CU_ASSERT_NOT_EQUAL(ms_records_start(r, op), MS_TIME_NEVER);
        for (guint k = 0; k < i.n_deps; k++) {
            CU_ASSERT_TRUE(ms_records_start(r, op) >= ms_records_end(r, i.deps[k]));
        }
    }
    for (guint rank = 0; rank < ms_schedule_n_ranks(s); rank++) {
        guint n;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
        for (guint st = 0; st < n_streams; st++) {
            g_autoptr(GArray) on = g_array_new(FALSE, FALSE, sizeof(guint32));
            for (guint k = 0; k < n; k++) {
                MsOpInfo i;
                ms_schedule_op(s, ops[k], &i);
                if (i.stream == st) {
                    g_array_append_val(on, ops[k]);
                }
            }
            g_array_sort_with_data(on, cmp_start, (gpointer)r);
            for (guint k = 1; k < on->len; k++) {
                guint32 a = g_array_index(on, guint32, k - 1), b = g_array_index(on, guint32, k);
                CU_ASSERT_TRUE(ms_records_start(r, b) >= ms_records_end(r, a));
            }
        }
    }
    /* Two collectives on one stream run in the same order on every rank they share. */
    for (guint32 a = 0; a < ms_schedule_n_colls(s); a++) {
        for (guint32 b = a + 1; b < ms_schedule_n_colls(s); b++) {
            MsCollInfo ca, cb;
            ms_schedule_coll(s, a, &ca);
            ms_schedule_coll(s, b, &cb);
            int order = 0;
            for (guint p = 0; p < ca.n_ranks; p++) {
                for (guint q = 0; q < cb.n_ranks; q++) {
                    MsOpInfo ia, ib;
                    ms_schedule_op(s, ca.ops[p], &ia);
                    ms_schedule_op(s, cb.ops[q], &ib);
                    if (ca.ranks[p] != cb.ranks[q] || ia.stream != ib.stream) {
                        continue;
                    }
                    int o =
                        ms_records_start(r, ca.ops[p]) < ms_records_start(r, cb.ops[q]) ? 1 : -1;
                    CU_ASSERT_TRUE(order == 0 || order == o);
                    order = o;
                }
            }
        }
    }
}

/* check_semantics, and the records' byte counts equal to what the collectives must move; the
 * all-to-all bytes and allreduce elements expected are returned for further checks. */
static void
check_run(const MsSchedule *s, const MsRecords *r, double *a2a, double *elements)
{
    check_semantics(s, r);
    double transfer, v = -1;
    expected_bytes(s, &transfer, a2a, elements);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "transfer_bytes", &v));
    CU_ASSERT_EQUAL(v, transfer);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "checked_bytes", &v));
    CU_ASSERT_EQUAL(v, *a2a);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "checked_elements", &v));
    CU_ASSERT_EQUAL(v, *elements);
}

static void
test_every_policy(void)
{
    for (guint k = 0; k < MS_DISPATCH_ORDER_N * MS_ALLREDUCE_GATE_N; k++) {
        MsDispatchRules rules = {k % MS_DISPATCH_ORDER_N, k / MS_DISPATCH_ORDER_N};
        g_autoptr(MsSchedule) s = sample("rules");
        ms_schedule_set_rules(s, &rules);
        GError *error = NULL;
        g_autoptr(MsRecords) r = run(s, 0, &error);
        if (error) {
            fprintf(stderr, "\n  rules %s, %s: %s\n", ms_dispatch_order_name(rules.order),
                    ms_allreduce_gate_name(rules.allreduce_gate), error->message);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double a2a, elements, v = -1;
        check_run(s, r, &a2a, &elements);
        CU_ASSERT_TRUE(ms_records_get_stat(r, "workers", &v));
        CU_ASSERT_EQUAL(v, 12); /* 4 ranks x 3 streams */
        CU_ASSERT_STRING_EQUAL(ms_records_backend(r), "cpu");
    }
}

/* A small MoE model on two nodes of two GPUs, so that every policy's plan runs in moments. */
static const char tiny_model[] = "[model]\nformat = 1\nname = tiny\ndescription = four layers, "
                                 "two MoE\nlayers = 4\nmoe_every = 2\nmoe_first = 1\n"
                                 "d_model = 64\nd_ffn = 128\nexperts = 8\ntop_k = 2\n"
                                 "top_k_infer = 2\ngated = true\ncapacity_factor = 0\n"
                                 "dtype = bf16\nheads = 4\nseq_len = 32\ntokens_per_gpu = 256\n"
                                 "tokens_per_gpu_infer = 64\ngrad_bucket = 64KiB\nvocab = 1000\n";
static const char tiny_topology[] =
    "[topology]\nformat = 1\nname = tiny4\ndescription = 2 nodes x 2 GPUs\n[gpu]\n"
    "model = A100\npeak = 312TFLOPS\nhbm = 2039GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
    "[preset]\nnodes = 2\ngpus_per_node = 2\nintra = nvswitch\nintra_bandwidth = 300GBps\n"
    "intra_links = 12\nintra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 200Gbps\n"
    "nic_latency = 0.6us\nfabric = switch\nfabric_latency = 0.13us\n";

/* Every policy's plan of a training step and of an inference batch runs with every check. */
static void
test_planned_schedules(void)
{
    g_autofree char *model = ms_test_write_tmp("tiny.ini", tiny_model);
    g_autofree char *topology = ms_test_write_tmp("tiny4.ini", tiny_topology);
    g_autoptr(MsTopology) t = ms_topology_load(topology, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (const char *const *p = ms_policy_names(); *p; p++) {
        for (guint mode = 0; mode < 2; mode++) {
            MsInputNames names = {.topology = topology, .model = model, .policy = *p};
            GError *error = NULL;
            g_autoptr(MsInputs) in = ms_inputs_load(&names, &error);
            /* A training system (fastermoe) plans no inference batch. */
            if (in && !ms_policy_plans_mode(ms_inputs_policy(in), mode)) {
                continue;
            }
            MsPlannerInputs po = {.topology = in ? ms_inputs_topology(in) : NULL,
                                  .model = in ? ms_inputs_model(in) : NULL,
                                  .policy = in ? ms_inputs_policy(in) : NULL,
                                  .routing = in ? ms_inputs_routing(in) : NULL,
                                  .mode = mode ? MS_PLAN_INFER : MS_PLAN_TRAIN,
                                  .iterations = 2,
                                  .seed = 7};
            g_autoptr(MsPlanner) planner = in ? ms_planner_new(&po, &error) : NULL;
            g_autoptr(MsSchedule) s =
                planner ? ms_planner_plan_iteration(planner, 1, &error) : NULL;
            MsCpuOptions cpu = {.time_scale = 1e-3};
            MsExecOptions o = {
                .topology = t, .timeout_s = 60 * ms_test_time_factor(), .backend = &cpu};
            g_autoptr(MsRecords) r = s ? ms_executor_run(&ms_cpu_backend, s, &o, &error) : NULL;
            if (error) {
                fprintf(stderr, "\n  %s %s: %s\n", *p, mode ? "infer" : "train", error->message);
                g_clear_error(&error);
            }
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            double a2a, elements;
            check_run(s, r, &a2a, &elements);
            CU_ASSERT_TRUE(a2a > 0);
            CU_ASSERT_TRUE(mode || elements > 0); /* a training step allreduces gradients */
        }
    }
}

/* Busy work lasts at least the compute model's time times the scale. */
static void
test_busy_work_duration(void)
{
    g_autoptr(MsSchedule) s = empty(1, "fifo");
    guint32 op = gemm(s, 0, 3e12, "big");
    g_autoptr(MsComputeModel) m = ms_compute_model_new(ms_topology_gpu_spec(topo, 0), NULL);
    MsTime model = ms_compute_time(m, 3e12, 0, 1024);
    MsCpuOptions cpu = {.time_scale = 0.5};
    MsExecOptions o = {.topology = topo, .backend = &cpu};
    g_autoptr(MsRecords) r = ms_executor_run(&ms_cpu_backend, s, &o, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTime took = ms_records_end(r, op) - ms_records_start(r, op);
    CU_ASSERT_TRUE(took >= model / 2);
    /* A second, single-rank collective: the all-to-all to itself is a local copy. */
    g_autoptr(MsSchedule) one = empty(1, "fifo");
    guint32 rank0 = 0, x;
    guint64 self = 123457;
    ms_schedule_add_alltoall(one, 1, &rank0, 1, &self, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0,
                             -1, "self", &x);
    g_autoptr(MsRecords) r1 = ms_executor_run(&ms_cpu_backend, one, &o, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
    double v = 0;
    CU_ASSERT_TRUE(ms_records_get_stat(r1, "checked_bytes", &v));
    CU_ASSERT_EQUAL(v, 123457);
}

static void
test_faults_are_caught(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    const struct {
        guint32 fault;
        const char *needle;
    } cases[] = {
        /* the layer-0 matrix holds 134045 bytes (see sample) */
        {MS_CPU_FAULT_SHORT_COPY, "all-to-all 0 (dispatch): moved 134044 bytes between rank "
                                  "buffers, the schedule says 134045"},
        {MS_CPU_FAULT_BAD_PATTERN, "all-to-all 0 (dispatch): rank 0 received wrong bytes from "
                                   "rank 0: byte 0 of 1000 differs from what was sent"},
        /* whichever allreduce of layer 0 verifies first reports it */
        {MS_CPU_FAULT_BAD_REDUCE, "in element 0 after the reduction, expected"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(run(s, cases[k].fault, &error));
        MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                        cases[k].needle);
    }
}

/* Drives the hooks directly, as a broken driver would. */
typedef struct {
    MsSchedule *s;
    gpointer state;
    GArray *done;
} Direct;

static void
direct_open(Direct *d, MsSchedule *s, double scale)
{
    MsCpuOptions cpu = {.time_scale = scale};
    MsExecOptions o = {.topology = topo, .backend = &cpu};
    d->s = s;
    d->state = ms_cpu_backend.open(s, &o, NULL, NULL);
    g_assert(d->state);
    d->done = g_array_new(FALSE, FALSE, sizeof(MsExecDone));
}

static void
direct_close(Direct *d)
{
    ms_cpu_backend.close(d->state);
    g_array_unref(d->done);
    ms_schedule_free(d->s);
}

/* Waits until op finishes or an error comes; returns the error. */
static GError *
direct_wait(Direct *d)
{
    GError *error = NULL;
    for (guint k = 0; k < 200 && d->done->len == 0; k++) {
        if (!ms_cpu_backend.wait(d->state, 50000, d->done, &error)) {
            return error;
        }
    }
    g_array_set_size(d->done, 0);
    return NULL;
}

/* One rank, a long op (about an hour of busy work, stopped by close) and a short one after it. */
static void
long_then_short(Direct *d, guint32 *first, guint32 *next)
{
    MsSchedule *s = empty(1, "fifo");
    *first = gemm(s, 0, 1e18, "long");
    *next = gemm(s, 0, 1e6, "next");
    direct_open(d, s, 1.0);
}

static void
test_out_of_order_launches(void)
{
    Direct d;
    GError *error = NULL;
    /* An op whose dependency has not run. */
    MsSchedule *s = empty(2, "fifo");
    guint32 a = gemm(s, 0, 1e6, "a"), b = gemm(s, 1, 1e6, "b");
    ms_schedule_add_dep(s, b, a);
    direct_open(&d, s, 1e-3);
    CU_ASSERT_TRUE(ms_cpu_backend.launch(d.state, b, &error));
    error = direct_wait(&d);
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                    "op 1 (b) on rank 1, stream compute: started before its dependency op 0 (a) "
                    "on rank 0 finished");
    direct_close(&d);
    /* Compute ops out of program order, and a second op on a busy stream. */
    guint32 first, next;
    long_then_short(&d, &first, &next);
    CU_ASSERT_FALSE(ms_cpu_backend.launch(d.state, next, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                    "op 1 (next) on rank 0, stream compute: launched out of program order: the "
                    "compute stream's next op is op 0");
    direct_close(&d);
    long_then_short(&d, &first, &next);
    CU_ASSERT_TRUE(ms_cpu_backend.launch(d.state, first, &error));
    CU_ASSERT_FALSE(ms_cpu_backend.launch(d.state, next, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                    "op 1 (next) on rank 0, stream compute: launched while op 0 still runs");
    direct_close(&d); /* stops the long busy work */
}

static void
test_runs_and_finish_checks(void)
{
    Direct d;
    GError *error = NULL;
    /* A comm op launched a second time after it finished. */
    MsSchedule *s = empty(1, "fifo");
    guint32 rank0 = 0, x;
    guint64 self = 64;
    ms_schedule_add_alltoall(s, 1, &rank0, 1, &self, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0,
                             -1, "self", &x);
    guint32 never = gemm(s, 0, 1e6, "never");
    direct_open(&d, s, 1e-3);
    CU_ASSERT_TRUE(ms_cpu_backend.launch(d.state, x, &error));
    CU_ASSERT_PTR_NULL(direct_wait(&d));
    g_autoptr(MsRecords) rec = ms_records_new(ms_schedule_n_ops(s), "cpu");
    /* finish: the compute op never ran */
    CU_ASSERT_FALSE(ms_cpu_backend.finish(d.state, rec, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                    "op 1 (never) on rank 0, stream compute: ran 0 times, not once");
    CU_ASSERT_TRUE(ms_cpu_backend.launch(d.state, x, &error));
    error = direct_wait(&d);
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                    "op 0 (self) on rank 0, stream a2a: started a second time");
    direct_close(&d);
    (void)never;
}

static void
test_setup_errors(void)
{
    GError *error = NULL;
    g_autoptr(MsSchedule) s = sample("fifo");
    MsCpuOptions cpu = {.time_scale = 1e-3};
    MsExecOptions o = {.backend = &cpu};
    CU_ASSERT_PTR_NULL(ms_executor_run(&ms_cpu_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "needs a topology to size its compute busy work");
    g_autoptr(MsTopology) h200 = ms_topology_load("h200", NULL);
    o.topology = h200;
    CU_ASSERT_PTR_NULL(ms_executor_run(&ms_cpu_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the schedule has 4 ranks but topology 'h200' has 1 GPUs");
    o.topology = topo;
    cpu.max_memory = 100000;
    /* a2a stream: every rank's layer-1 row and column, 2 x 134300 in all; allreduce stream: ranks
     * 0 and 2 hold 8099 twice, ranks 1 and 3 the 65536-byte pair allreduce twice. */
    CU_ASSERT_PTR_NULL(ms_executor_run(&ms_cpu_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the cpu backend needs 563140 bytes of rank buffers (the largest collective, "
                    "3 'pair', needs 131072 on one rank), over the limit of 100000 bytes");
    /* More workers than the backend runs: refused before any thread starts. */
    g_autoptr(MsSchedule) wide = ms_schedule_new(MS_CPU_MAX_WORKERS + 1);
    ms_schedule_add_stream(wide, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(wide, "fifo");
    for (guint r = 0; r <= MS_CPU_MAX_WORKERS; r++) {
        gemm(wide, r, 1, "w");
    }
    g_autoptr(MsTopology) big = ms_topology_load("dgx-a100-128node", NULL);
    o.topology = big;
    cpu.max_memory = 0;
    CU_ASSERT_PTR_NULL(ms_executor_run(&ms_cpu_backend, wide, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the schedule needs 1025 worker threads");
}

/* Its registration: options from the command line's text, the record's checks and defaults, and
 * the note of a run. */
static void
test_options(void)
{
    const MsBackendInfo *info = &ms_cpu_backend_info;
    CU_ASSERT_STRING_EQUAL(info->name, "cpu");
    CU_ASSERT_PTR_EQUAL(info->hooks, &ms_cpu_backend);
    CU_ASSERT_PTR_NULL(info->bench_summary);
    gint ts = ms_backend_option_index(info, "time-scale");
    gint mm = ms_backend_option_index(info, "max-memory");
    CU_ASSERT_TRUE_FATAL(ts >= 0 && mm >= 0);
    CU_ASSERT_EQUAL(ms_backend_option_index(info, "dtype"), -1);
    const char *values[3] = {NULL, NULL, NULL};
    values[ts] = "0.25";
    values[mm] = "64MiB";
    GError *error = NULL;
    gpointer rec = NULL;
    CU_ASSERT_TRUE_FATAL(ms_backend_parse_options(info, values, &rec, &error));
    const MsCpuOptions *o = rec;
    CU_ASSERT_EQUAL(o->time_scale, 0.25);
    CU_ASSERT_EQUAL(o->max_memory, 64u << 20);
    CU_ASSERT_EQUAL(o->faults, 0);
    g_autofree char *note = ms_backend_describe(info, rec);
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "busy work of the modelled time x 0.25"));
    g_free(rec);
    values[mm] = "4096";
    CU_ASSERT_TRUE(ms_backend_parse_options(info, values, &rec, &error));
    CU_ASSERT_EQUAL(((const MsCpuOptions *)rec)->max_memory, 4096);
    g_free(rec);
    /* Nothing given: the defaults, and the note says x 1. */
    CU_ASSERT_TRUE_FATAL(ms_backend_parse_options(info, NULL, &rec, &error));
    MsCpuOptions r;
    CU_ASSERT_TRUE(ms_cpu_options_resolve(rec, &r, &error));
    CU_ASSERT_EQUAL(r.time_scale, 1.0);
    CU_ASSERT_EQUAL(r.max_memory, MS_CPU_DEFAULT_MAX_MEMORY);
    g_free(rec);
    g_autofree char *plain = ms_backend_describe(info, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(plain, "modelled time x 1 "));
    const struct {
        const char *time_scale, *max_memory, *needle;
    } bad[] = {
        {"-1", NULL, "--time-scale: '-1' is not a number in (0, 1e+06]"},
        {"2e6", NULL, "--time-scale: '2e6' is not a number in (0, 1e+06]"},
        {"nan", NULL, "--time-scale: 'nan'"},
        {"", NULL, "--time-scale: '' is not a number"},
        {NULL, "0", "--max-memory: '0' must be more than 0"},
        {NULL, "12 parsecs", "--max-memory: "},
        {NULL, "-5", "--max-memory: "},
    };
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        values[ts] = bad[k].time_scale;
        values[mm] = bad[k].max_memory;
        CU_ASSERT_FALSE(ms_backend_parse_options(info, values, &rec, &error));
        CU_ASSERT_PTR_NULL(rec);
        MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS, bad[k].needle);
    }
    /* A record filled by a caller is checked by the backend itself. */
    const double wrong[] = {-0.5, INFINITY, NAN, 1e7};
    for (guint k = 0; k < G_N_ELEMENTS(wrong); k++) {
        MsCpuOptions c = {.time_scale = wrong[k]};
        CU_ASSERT_FALSE(ms_cpu_options_resolve(&c, &r, &error));
        MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS, "time scale: ");
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"every rule set: ops once, after deps, streams exclusive, exact bytes", test_every_policy},
        {"every policy's planned step and batch", test_planned_schedules},
        {"busy work lasts the modelled time; a2a to itself", test_busy_work_duration},
        {"deliberate faults are caught", test_faults_are_caught},
        {"options: command line, record checks, the run's note", test_options},
        {"launches out of order are violations", test_out_of_order_launches},
        {"second runs and missing runs are violations", test_runs_and_finish_checks},
        {"set-up errors", test_setup_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cpu backend", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
