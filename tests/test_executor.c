/* Tests of the executor's driver loop with a fake backend that runs ops on a virtual clock:
 * launches follow the dispatcher exactly, records land where the backend said, stuck schedules
 * and timeouts are errors, a misbehaving backend is caught, every option and lookup error. */
#include "backends/cpu/cpu_backend.h"
#include "backends/executor.h"
#include "backends/registry.h"
#include "ms_test.h"
#include "sim/schedule/dispatcher.h"

/* --- the fake backend --- */

enum {
    FAKE_OK,
    FAKE_NEVER_DONE,
    FAKE_UNLAUNCHED,
    FAKE_TWICE,
    FAKE_BACKWARDS,
    FAKE_FAIL_OPEN,
    FAKE_FAIL_LAUNCH,
    FAKE_FAIL_WAIT,
    FAKE_OUT_OF_RANGE
};

static struct {
    int mode;
    const MsSchedule *s;
    GArray *running;  /* launched, not finished, in launch order */
    GArray *launches; /* every launch, in order */
    MsTime now;
    guint opens, closes, finishes;
    guint32 last_done;
} fake;

/* Each op takes 1000 ps plus 10 ps per id, so records are predictable. */
static MsTime
fake_duration(guint32 op)
{
    return 1000 + 10 * (MsTime)op;
}

static gpointer
fake_open(const MsSchedule *s, const MsExecOptions *opts, const MsExecPlace *place, GError **error)
{
    if (fake.mode == FAKE_FAIL_OPEN) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "fake open failed");
        return NULL;
    }
    fake.opens++;
    fake.s = s;
    fake.now = 5000000; /* an arbitrary clock origin, removed by normalisation */
    fake.running = g_array_new(FALSE, FALSE, sizeof(MsExecDone));
    fake.launches = g_array_new(FALSE, FALSE, sizeof(guint32));
    return &fake;
}

static gboolean
fake_launch(gpointer state, guint32 op, GError **error)
{
    if (fake.mode == FAKE_FAIL_LAUNCH) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "fake launch of op %u failed", op);
        return FALSE;
    }
    MsExecDone d = {op, fake.now, 0};
    g_array_append_val(fake.running, d);
    g_array_append_val(fake.launches, op);
    return TRUE;
}

/* Finishes the oldest running op (FIFO), one per call. */
static gboolean
fake_wait(gpointer state, gint64 timeout_us, GArray *done, GError **error)
{
    if (fake.mode == FAKE_FAIL_WAIT) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "fake wait failed");
        return FALSE;
    }
    if (fake.mode == FAKE_NEVER_DONE || fake.running->len == 0) {
        g_usleep(MIN(timeout_us, 20000));
        return TRUE;
    }
    MsExecDone d = g_array_index(fake.running, MsExecDone, 0);
    g_array_remove_index(fake.running, 0);
    d.end = d.start + fake_duration(d.op);
    fake.now = MAX(fake.now, d.end);
    switch (fake.mode) {
    case FAKE_UNLAUNCHED:
        d.op = ms_schedule_n_ops(fake.s) - 1;
        break;
    case FAKE_OUT_OF_RANGE:
        d.op = ms_schedule_n_ops(fake.s) + 7;
        break;
    case FAKE_BACKWARDS:
        d.end = d.start - 1;
        break;
    case FAKE_TWICE:
        g_array_append_val(done, d);
        break;
    }
    g_array_append_val(done, d);
    fake.last_done = d.op;
    return TRUE;
}

static gboolean
fake_finish(gpointer state, MsRecords *records, GError **error)
{
    fake.finishes++;
    ms_records_set_stat(records, "fake_ops", ms_schedule_n_ops(fake.s));
    return TRUE;
}

static void
fake_close(gpointer state)
{
    fake.closes++;
    g_array_unref(fake.running);
}

static const MsExecBackend fake_backend = {
    .name = "fake",
    .open = fake_open,
    .launch = fake_launch,
    .wait = fake_wait,
    .finish = fake_finish,
    .close = fake_close,
};

static void
fake_reset(int mode)
{
    if (fake.launches) {
        g_array_unref(fake.launches);
    }
    memset(&fake, 0, sizeof fake);
    fake.mode = mode;
}

static int
fake_clean(void)
{
    fake_reset(FAKE_OK);
    return 0;
}

/* --- schedules --- */

static guint32 ranks2[2] = {0, 1};

static guint32
compute(MsSchedule *s, guint rank, const char *label)
{
    guint32 op = ms_schedule_add_compute(s, rank, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, label);
    ms_schedule_set_cost(s, op, MS_COMPUTE_ELEMENTWISE, 0, 1000, 0);
    return op;
}

/* Two ranks: compute, an all-to-all, compute after it, an allreduce on a second comm stream, and
 * a compute op placed first in program order that waits for the other rank. */
static MsSchedule *
sample(const char *policy)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "a2a", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_set_policy(s, policy);
    guint32 a = compute(s, 0, "a"), b = compute(s, 1, "b");
    guint64 m[4] = {5, 10, 20, 7};
    guint32 x[2], y[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "x", x);
    ms_schedule_add_dep(s, x[0], a);
    ms_schedule_add_dep(s, x[1], b);
    guint32 c = compute(s, 0, "c"), d = compute(s, 1, "d");
    ms_schedule_add_dep(s, c, x[0]);
    ms_schedule_add_dep(s, d, x[1]);
    ms_schedule_add_allreduce(s, 2, ranks2, 2, 4096, 0, MS_PHASE_BACKWARD, 0, -1, "y", y);
    ms_schedule_add_dep(s, y[0], c);
    ms_schedule_add_dep(s, y[1], d);
    guint32 e = compute(s, 1, "e");
    ms_schedule_set_priority(s, e, -1);
    ms_schedule_add_dep(s, e, a);
    g_assert(ms_schedule_validate(s, NULL));
    return s;
}

/* --- tests --- */

static void
test_follows_dispatcher(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    fake_reset(FAKE_OK);
    GError *error = NULL;
    g_autoptr(MsRecords) r = ms_executor_run(&fake_backend, s, NULL, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(fake.opens, 1);
    CU_ASSERT_EQUAL(fake.finishes, 1);
    CU_ASSERT_EQUAL(fake.closes, 1);
    /* Replay: a dispatcher fed the same FIFO completions must launch the same ops in the same
     * order. */
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) expect = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) batch = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint head = 0;
    for (;;) {
        g_array_set_size(batch, 0);
        ms_dispatcher_poll(d, batch);
        g_array_append_vals(expect, batch->data, batch->len);
        if (head == expect->len) {
            break;
        }
        ms_dispatcher_finished(d, g_array_index(expect, guint32, head++));
    }
    CU_ASSERT_EQUAL_FATAL(fake.launches->len, ms_schedule_n_ops(s));
    CU_ASSERT_EQUAL_FATAL(expect->len, fake.launches->len);
    for (guint k = 0; k < expect->len; k++) {
        CU_ASSERT_EQUAL(g_array_index(expect, guint32, k),
                        g_array_index(fake.launches, guint32, k));
    }
    /* Records: the backend's times, shifted so the first start is 0; every dependency first. */
    MsTime first = MS_TIME_NEVER;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        first = MIN(first, ms_records_start(r, op));
        CU_ASSERT_EQUAL(ms_records_end(r, op) - ms_records_start(r, op), fake_duration(op));
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        for (guint k = 0; k < i.n_deps; k++) {
            CU_ASSERT_TRUE(ms_records_start(r, op) >= ms_records_end(r, i.deps[k]));
        }
    }
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_STRING_EQUAL(ms_records_backend(r), "fake");
    double v = 0;
    CU_ASSERT_TRUE(ms_records_get_stat(r, "wall_s", &v));
    CU_ASSERT_TRUE(v >= 0);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "fake_ops", &v));
    CU_ASSERT_EQUAL(v, ms_schedule_n_ops(s));
}

static void
test_stuck(void)
{
    MsSchedule *s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    /* a is first in program order but depends on b, which waits behind it. */
    guint32 a = compute(s, 0, "first"), b = compute(s, 0, "second");
    ms_schedule_add_dep(s, a, b);
    fake_reset(FAKE_OK);
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, NULL, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_STUCK, "op 0 (first)");
    CU_ASSERT_EQUAL(fake.closes, 1);
    ms_schedule_free(s);
}

static void
test_timeout(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    fake_reset(FAKE_NEVER_DONE);
    MsExecOptions o = {.timeout_s = 0.15};
    GError *error = NULL;
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, &o, &error));
    gint64 waited = g_get_monotonic_time() - t0;
    /* Only a can start (rank 1's stream waits for e, which waits for a), and it never ends. */
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_TIMEOUT,
                    "did not finish within the 0.15 s timeout: 1 op still running, the first "
                    "op 0 (a) on rank 0, stream compute");
    CU_ASSERT_TRUE(waited >= 150000);
    CU_ASSERT_EQUAL(fake.closes, 1);
}

static void
test_misbehaving_backend(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    const struct {
        int mode;
        int code;
        const char *needle;
    } cases[] = {
        {FAKE_UNLAUNCHED, MS_EXECUTOR_ERROR_PROTOCOL,
         "reported op 8 (e) on rank 1 finished, but it was never launched"},
        {FAKE_TWICE, MS_EXECUTOR_ERROR_PROTOCOL,
         "reported op 0 (a) on rank 0 finished a second time"},
        {FAKE_BACKWARDS, MS_EXECUTOR_ERROR_PROTOCOL,
         "op 0 (a) on rank 0 with an end before its start"},
        {FAKE_OUT_OF_RANGE, MS_EXECUTOR_ERROR_PROTOCOL,
         "reported op 16, but the schedule has 9 ops"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        fake_reset(cases[k].mode);
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, NULL, &error));
        MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, cases[k].code, cases[k].needle);
        CU_ASSERT_EQUAL(fake.closes, 1);
        CU_ASSERT_EQUAL(fake.finishes, 0);
    }
}

static void
test_backend_errors_pass_through(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    const struct {
        int mode;
        const char *needle;
        guint closes;
    } cases[] = {
        {FAKE_FAIL_OPEN, "fake open failed", 0},
        {FAKE_FAIL_LAUNCH, "fake launch of op 0 failed", 1},
        {FAKE_FAIL_WAIT, "fake wait failed", 1},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        fake_reset(cases[k].mode);
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, NULL, &error));
        MS_ASSERT_ERROR(error, G_IO_ERROR, G_IO_ERROR_FAILED, cases[k].needle);
        CU_ASSERT_EQUAL(fake.closes, cases[k].closes);
    }
}

static void
test_schedule_errors(void)
{
    g_autoptr(MsSchedule) s = sample("fifo");
    ms_schedule_set_rules(s, &(MsDispatchRules){MS_DISPATCH_ORDER_N, MS_ALLREDUCE_GATE_NONE});
    fake_reset(FAKE_OK);
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, NULL, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_RULES,
                    "the schedule's dispatch order 2 is unknown");
    CU_ASSERT_EQUAL(fake.opens, 0);
    /* An invalid schedule (a dependency on a missing op) is refused before anything runs. */
    MsSchedule *bad = ms_schedule_new(1);
    ms_schedule_add_stream(bad, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(bad, "fifo");
    guint32 a = compute(bad, 0, "a");
    ms_schedule_add_dep(bad, a, 99);
    CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, bad, NULL, &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    CU_ASSERT_EQUAL(error->domain, MS_SCHEDULE_ERROR);
    g_clear_error(&error);
    CU_ASSERT_EQUAL(fake.opens, 0);
    ms_schedule_free(bad);
}

static void
test_options(void)
{
    MsExecOptions out;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_exec_options_resolve(NULL, &out, &error));
    CU_ASSERT_EQUAL(out.timeout_s, MS_EXEC_DEFAULT_TIMEOUT_S);
    CU_ASSERT_PTR_NULL(out.backend);
    const struct {
        MsExecOptions in;
        const char *needle;
    } bad[] = {
        {{.timeout_s = -1}, "timeout: -1 s is not in (0, 604800] s"},
        {{.timeout_s = NAN}, "timeout: nan s"},
        {{.timeout_s = 1e9}, "timeout: 1e+09 s"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        CU_ASSERT_FALSE(ms_exec_options_resolve(&bad[k].in, &out, &error));
        MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS, bad[k].needle);
    }
    /* The backend's record passes through untouched, for its hooks to read. */
    static const int record = 42;
    MsExecOptions with = {.timeout_s = 3, .backend = &record};
    CU_ASSERT_TRUE(ms_exec_options_resolve(&with, &out, &error));
    CU_ASSERT_PTR_EQUAL(out.backend, &record);
    CU_ASSERT_EQUAL(out.timeout_s, 3);
    g_autoptr(MsSchedule) s = sample("fifo");
    fake_reset(FAKE_OK);
    MsExecOptions o = {.timeout_s = -3};
    CU_ASSERT_PTR_NULL(ms_executor_run(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS, "timeout");
    CU_ASSERT_EQUAL(fake.opens, 0);
}

/* The one-call API finds the backend in the registry and runs it with the given topology and
 * the backend's own record. */
static void
test_backend_execute(void)
{
    g_autoptr(MsSchedule) s = sample("lina");
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    GError *error = NULL;
    MsCpuOptions cpu = {.time_scale = 1e-3};
    MsExecOptions o = {.backend = &cpu};
    g_autoptr(MsRecords) r = ms_backend_execute("cpu", s, t, &o, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(ms_records_backend(r), "cpu");
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        CU_ASSERT_NOT_EQUAL(ms_records_start(r, op), MS_TIME_NEVER);
    }
    /* The record reaches the backend, which checks it. */
    cpu.time_scale = -1;
    CU_ASSERT_PTR_NULL(ms_backend_execute("cpu", s, t, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS,
                    "time scale: -1 is not in [0, 1e+06]");
    /* Without a topology the cpu backend cannot size its busy work. */
    cpu.time_scale = 1e-3;
    CU_ASSERT_PTR_NULL(ms_backend_execute("cpu", s, NULL, &o, &error));
    MS_ASSERT_ERROR(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP, "needs a topology");
    CU_ASSERT_PTR_NULL(ms_backend_execute("gpu", s, NULL, NULL, &error));
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                    "unknown backend 'gpu' (known: cpu, cuda)");
}

/* --- the exec command --- */

static char *
save_sample(const char *name, const char *policy, const char *topology)
{
    g_autoptr(MsSchedule) s = sample(policy);
    if (topology) {
        ms_schedule_set_meta(s, "topology", topology);
    }
    char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_assert(ms_schedule_save(s, path, NULL));
    return path;
}

static int
run_exec(const char *const *args, char **err)
{
    g_autofree char *out = NULL;
    return ms_test_run_moesim(args, &out, err);
}

static void
test_exec_cpu(void)
{
    g_autofree char *path = save_sample("lina.json", "lina", "dgx-a100");
    g_autofree char *json = g_build_filename(ms_test_tmpdir(), "out.json", NULL);
    g_autofree char *trace = g_build_filename(ms_test_tmpdir(), "out.trace.json", NULL);
    g_autofree char *csv = g_build_filename(ms_test_tmpdir(), "out.csv", NULL);
    const char *args[] = {"exec", "--backend",      "cpu", "--time-scale", "0.001", path, "--json",
                          json,   "--chrome-trace", trace, "--csv",        csv,     NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy lina, backend cpu"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "step "));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "moesim-result");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "backend"), "cpu");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "policy"), "lina");
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "ops")), 9);
    JsonObject *stats = json_object_get_object_member(o, "stats");
    /* the all-to-all moves its whole matrix (5 + 10 + 20 + 7 bytes), the allreduce 4096 bytes */
    CU_ASSERT_EQUAL(json_object_get_double_member(stats, "checked_bytes"), 42);
    CU_ASSERT_EQUAL(json_object_get_double_member(stats, "transfer_bytes"), 42 + 4096);
    JsonObject *summary = json_object_get_object_member(o, "summary");
    CU_ASSERT_TRUE(json_object_get_double_member(summary, "step_time_us") > 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(summary, "a2a_bytes"), 30);
    /* The summary in ms, as run prints it ("73247822.878 us" took counting digits). */
    CU_ASSERT_PTR_NULL(strstr(out, " us"));
    g_autofree char *step =
        g_strdup_printf("%.3f ms", json_object_get_double_member(summary, "step_time_us") / 1e3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, step));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "30 B in all"));
    g_autoptr(JsonParser) tp = json_parser_new();
    CU_ASSERT_TRUE(json_parser_load_from_file(tp, trace, NULL));
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 1 + 9 + 1); /* header, ops, the empty tail */
    CU_ASSERT_TRUE(g_str_has_prefix(lines[0], "op,rank,stream,kind"));
    /* --json - writes only the JSON to stdout */
    const char *quiet[] = {"exec", path, "--time-scale", "0.001", "--json", "-", NULL};
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    CU_ASSERT_EQUAL(ms_test_run_moesim(quiet, &out, &err), 0);
    CU_ASSERT_TRUE(g_str_has_prefix(out, "{"));
}

static void
test_exec_errors(void)
{
    g_autofree char *path = save_sample("plain.json", "fifo", NULL);
    g_autofree char *bad = ms_test_write_tmp("bad.json", "{ not json");
    const struct {
        const char *args[10];
        const char *needle;
    } cases[] = {
        {{"exec", NULL}, "expected one SCHEDULE.json"},
        {{"exec", "--backend", "tpu", path, NULL}, "unknown backend 'tpu' (known: cpu, cuda)"},
        {{"exec", "/nonexistent/s.json", NULL}, "/nonexistent/s.json"},
        {{"exec", bad, NULL}, "bad.json"},
        {{"exec", path, NULL}, "needs a topology to size its compute busy work"},
        {{"exec", "--topology", "h200", path, NULL},
         "the schedule has 2 ranks but topology "
         "'h200' has 1 GPUs"},
        {{"exec", "--topology", "no-such-topo", path, NULL}, "no-such-topo"},
        {{"exec", "--topology", "dgx-a100", "--timeout", "5", path, NULL}, "--timeout: "},
        {{"exec", "--topology", "dgx-a100", "--timeout", "0s", path, NULL},
         "--timeout: '0s' must be more than 0"},
        {{"exec", "--topology", "dgx-a100", "--max-memory", "0", path, NULL},
         "--max-memory: '0' must be more than 0"},
        {{"exec", "--topology", "dgx-a100", "--max-memory", "12 parsecs", path, NULL},
         "--max-memory"},
        {{"exec", "--topology", "dgx-a100", "--max-memory", "1KB", path, NULL},
         "over the limit of 1000 bytes"},
        {{"exec", "--topology", "dgx-a100", "--time-scale", "-1", path, NULL},
         "--time-scale: '-1' is not a number in (0, 1e+06]"},
        {{"exec", "--topology", "dgx-a100", "--time-scale", "0", path, NULL},
         "--time-scale: '0' is not a number in (0, 1e+06]"},
        {{"exec", "--topology", "dgx-a100", "--time-scale", "1x", path, NULL},
         "--time-scale: '1x' is not a number"},
        /* A backend's option given to another backend, and a bad value of the right one. */
        {{"exec", "--dtype", "fp16", path, NULL},
         "--dtype is not an option of backend 'cpu' (see 'moesim exec --help')"},
        {{"exec", "--backend", "cuda", "--time-scale", "2", path, NULL},
         "--time-scale is not an option of backend 'cuda'"},
        {{"exec", "--backend", "cuda", "--dtype", "fp8", path, NULL},
         "--dtype: 'fp8' is not fp32, tf32, fp16 or bf16"},
        {{"exec", "--worker", "--backend", "cpu", NULL}, "runs every rank in one process"},
        {{"exec", "--worker", path, NULL}, "takes no schedule"},
        {{"exec", "--bogus", path, NULL}, "Unknown option --bogus"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        g_autofree char *err = NULL;
        int rc = run_exec(cases[k].args, &err);
        CU_ASSERT_EQUAL(rc, 2);
        if (err == NULL || strstr(err, cases[k].needle) == NULL) {
            fprintf(stderr, "\n  case %u: stderr '%s' lacks '%s'\n", k, err, cases[k].needle);
            CU_FAIL("exec error message");
        }
    }
    /* The cuda backend on a machine without a GPU (or a build without the backend). */
    const MsExecBackend *hooks = ms_backend_hooks(ms_backend_find("cuda", NULL), NULL);
    gboolean gpu = hooks && hooks->devices(NULL) > 0;
    if (!gpu) {
        const char *cuda[] = {"exec", "--backend", "cuda", path, NULL};
        g_autofree char *cerr = NULL;
        CU_ASSERT_EQUAL(run_exec(cuda, &cerr), 2);
        gboolean built = ms_backend_in_build(ms_backend_find("cuda", NULL));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(cerr, built ? "no CUDA device is visible" : "this moesim was built without"));
    }
    /* A schedule's own topology must be a shipped one; another name is refused naming it. */
    g_autofree char *named = save_sample("named.json", "fifo", "no-such-topo");
    const char *args[] = {"exec", named, NULL};
    g_autofree char *err = NULL;
    CU_ASSERT_EQUAL(run_exec(args, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err, "named.json: meta 'topology': 'no-such-topo' is not a shipped topology"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"launches follow the dispatcher; records are the backend's", test_follows_dispatcher},
        {"a schedule that cannot progress", test_stuck},
        {"a backend that never finishes times out", test_timeout},
        {"a backend reporting wrong completions", test_misbehaving_backend},
        {"backend errors pass through and close runs", test_backend_errors_pass_through},
        {"bad schedules are refused before open", test_schedule_errors},
        {"options", test_options},
        {"ms_backend_execute: registry, topology, the backend's record", test_backend_execute},
        {"moesim exec on the cpu backend: JSON, Chrome trace, CSV", test_exec_cpu},
        {"moesim exec: every error exits 2 with its message", test_exec_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"executor", NULL, fake_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
