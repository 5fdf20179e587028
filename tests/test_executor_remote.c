/* Tests of remote execution with a fake per-rank backend: this test program re-runs itself as the
 * rank workers (as moesim does with "exec --worker"), locally forked or as the processes of a
 * torchrun-style job. Checks that every op runs on its rank in dependency order, the session and
 * the figures travel, and that each failure (a rank failing to open, dying, hanging, lying about
 * its rank, a bad environment) ends the run with its own message. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "backends/executor_launch.h"
#include "backends/executor_remote.h"
#include "backends/executor_wire.h"
#include "ms_test.h"

/* --- the fake per-rank backend --- */

typedef struct {
    guint rank;
    guint n_comms;
    guint32 tag;   /* from the options record; 0 without one */
    GArray *queue; /* MsExecDone, launched and not yet reported */
} FakeRank;

/* The fake backend's options record: a number that must reach every rank. */
typedef struct {
    guint32 tag;
} FakeOptions;

static const char *
mode(void)
{
    const char *m = g_getenv("MS_FAKE_MODE");
    return m ? m : "";
}

static MsTime
now_ps(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MsTime)ts.tv_sec * MS_PS_PER_S + (MsTime)ts.tv_nsec * MS_PS_PER_NS;
}

static GBytes *
fake_session(const MsExecOptions *o, guint n_comms, guint local_ranks, GError **error)
{
    if (strcmp(mode(), "session-fail") == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "fake: no devices");
        return NULL;
    }
    char *text = g_strdup_printf("fake-session/%u/%u", n_comms, local_ranks);
    return g_bytes_new_take(text, strlen(text));
}

static gpointer
fake_open(const MsSchedule *s, const MsExecOptions *o, const MsExecPlace *place, GError **error)
{
    gsize n = 0;
    const char *text = g_bytes_get_data(place->session, &n);
    g_autofree char *session = g_strndup(text, n);
    guint comms = 0;
    if (sscanf(session, "fake-session/%u/", &comms) != 1) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "fake: bad session '%s'", session);
        return NULL;
    }
    if (strcmp(mode(), "open-fail") == 0 && place->rank == 1) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "fake device missing on rank %u",
                    place->rank);
        return NULL;
    }
    FakeRank *f = g_new0(FakeRank, 1);
    f->rank = place->rank;
    f->n_comms = comms;
    f->tag = o->backend ? ((const FakeOptions *)o->backend)->tag : 0;
    f->queue = g_array_new(FALSE, FALSE, sizeof(MsExecDone));
    return f;
}

static gboolean
fake_launch(gpointer state, guint32 op, GError **error)
{
    FakeRank *f = state;
    if (strcmp(mode(), "die") == 0 && f->rank == 1) {
        _exit(3);
    }
    MsExecDone d = {op, now_ps(), 0};
    g_array_append_val(f->queue, d);
    return TRUE;
}

static gboolean
fake_wait(gpointer state, gint64 timeout_us, GArray *done, GError **error)
{
    FakeRank *f = state;
    if (strcmp(mode(), "hang") == 0 || f->queue->len == 0) {
        g_usleep(MIN(timeout_us, 1000));
        return TRUE;
    }
    for (guint k = 0; k < f->queue->len; k++) {
        MsExecDone d = g_array_index(f->queue, MsExecDone, k);
        d.end = d.start + 1000;
        g_array_append_val(done, d);
    }
    g_array_set_size(f->queue, 0);
    return TRUE;
}

static gboolean
fake_finish(gpointer state, MsRecords *records, GError **error)
{
    FakeRank *f = state;
    ms_records_set_stat(records, "fake_rank", f->rank);
    ms_records_set_stat(records, "fake_session_comms", f->n_comms);
    ms_records_set_stat(records, "fake_tag", f->tag);
    return TRUE;
}

static void
fake_close(gpointer state)
{
    FakeRank *f = state;
    g_array_unref(f->queue);
    g_free(f);
}

static GBytes *
fake_bench(GBytes *spec, const MsExecOptions *o, const MsExecPlace *place, GError **error)
{
    gsize n = 0;
    const char *text = g_bytes_get_data(spec, &n);
    char *result = g_strdup_printf("rank %u measured: %.*s", place->rank, (int)n, text);
    return g_bytes_new_take(result, strlen(result));
}

static const MsExecBackend fake_backend = {
    .name = "fake",
    .per_rank = TRUE,
    .session = fake_session,
    .open = fake_open,
    .launch = fake_launch,
    .wait = fake_wait,
    .finish = fake_finish,
    .close = fake_close,
    .bench = fake_bench,
    .options_size = sizeof(FakeOptions),
};

/* The fake backend as this process runs it: with MS_FAKE_MODE=busy the coordinator and the
 * forked workers poll without sleeping. */
static MsExecBackend
fake_as_run(void)
{
    MsExecBackend b = fake_backend;
    b.busy_poll = strcmp(mode(), "busy") == 0;
    /* A worker of another build, whose record has another size. */
    b.options_size *= strcmp(mode(), "wide-options") == 0 ? 2 : 1;
    return b;
}

/* --- the child processes --- */

/* "exec --worker --backend fake --timeout Ns": a locally forked worker. */
static int
child_worker(int argc, char **argv)
{
    MsExecOptions o = {0};
    MsTime t = 0;
    if (argc >= 7 && ms_parse_time(argv[6], &t, NULL)) {
        o.timeout_s = ms_time_to_s(t);
    }
    if (strcmp(mode(), "liar") == 0) {
        g_setenv("WORLD_SIZE", "5", TRUE);
    }
    g_autoptr(GError) error = NULL;
    MsExecBackend b = fake_as_run();
    g_autoptr(MsRecords) own = ms_remote_worker_main(&b, &o, &error);
    return own ? 0 : 2;
}

static MsSchedule *sample(void);

/* "job OUT": one process of a torchrun-style job; writes how many ops it recorded. */
static int
child_job(int argc, char **argv)
{
    g_autoptr(MsSchedule) s = sample();
    MsExecOptions o = {.timeout_s = 20};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsRecords) r = ms_remote_execute(&fake_backend, s, &o, &error);
    guint recorded = 0;
    for (guint32 op = 0; r && op < ms_records_n_ops(r); op++) {
        recorded += ms_records_start(r, op) != MS_TIME_NEVER;
    }
    g_autofree char *line = g_strdup_printf("%s %u %d %s\n", r ? "ok" : "error", recorded,
                                            ms_remote_is_primary(), error ? error->message : "-");
    g_file_set_contents(argv[2], line, -1, NULL);
    return r ? 0 : 2;
}

/* --- schedules --- */

static guint32
compute(MsSchedule *s, guint rank, const char *label)
{
    guint32 op = ms_schedule_add_compute(s, rank, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, label);
    ms_schedule_set_cost(s, op, MS_COMPUTE_ELEMENTWISE, 0, 1000, 0);
    return op;
}

/* Three ranks: compute, an all-to-all, compute, an allreduce on a second comm stream, compute. */
static MsSchedule *
sample(void)
{
    MsSchedule *s = ms_schedule_new(3);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "a2a", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_set_policy(s, "priority");
    guint32 ranks[3] = {0, 1, 2}, pre[3], x[3], mid[3], y[3];
    guint64 m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (guint r = 0; r < 3; r++) {
        pre[r] = compute(s, r, "pre");
    }
    ms_schedule_add_alltoall(s, 1, ranks, 3, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "x", x);
    for (guint r = 0; r < 3; r++) {
        ms_schedule_add_dep(s, x[r], pre[r]);
        mid[r] = compute(s, r, "mid");
        ms_schedule_add_dep(s, mid[r], x[r]);
    }
    ms_schedule_add_allreduce(s, 2, ranks, 3, 1000, 0, MS_PHASE_BACKWARD, 0, -1, "y", y);
    for (guint r = 0; r < 3; r++) {
        ms_schedule_add_dep(s, y[r], mid[r]);
        guint32 post = compute(s, r, "post");
        ms_schedule_add_dep(s, post, y[r]);
    }
    g_assert(ms_schedule_validate(s, NULL));
    return s;
}

static char *self_path;

static MsExecOptions
local_options(double timeout_s)
{
    MsExecOptions o = {.timeout_s = timeout_s, .worker_command = self_path};
    return o;
}

/* --- tests --- */

static void
check_local_run(void)
{
    g_autoptr(MsSchedule) s = sample();
    MsExecOptions o = local_options(30);
    FakeOptions record = {.tag = 77};
    o.backend = &record;
    GError *error = NULL;
    MsExecBackend b = fake_as_run();
    g_autoptr(MsRecords) r = ms_remote_execute(&b, s, &o, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(ms_records_backend(r), "fake");
    MsTime first = MS_TIME_NEVER;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        CU_ASSERT_NOT_EQUAL_FATAL(ms_records_start(r, op), MS_TIME_NEVER);
        CU_ASSERT_EQUAL(ms_records_end(r, op) - ms_records_start(r, op), 1000);
        first = MIN(first, ms_records_start(r, op));
        for (guint k = 0; k < i.n_deps; k++) {
            CU_ASSERT_TRUE(ms_records_start(r, op) > ms_records_end(r, i.deps[k]));
        }
    }
    CU_ASSERT_EQUAL(first, 0);
    double v = -1;
    CU_ASSERT_TRUE(ms_records_get_stat(r, "ranks", &v));
    CU_ASSERT_EQUAL(v, 3);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "fake_rank", &v));
    CU_ASSERT_EQUAL(v, 0);
    /* the session was made for the schedule's two communication streams and reached rank 0 */
    CU_ASSERT_TRUE(ms_records_get_stat(r, "fake_session_comms", &v));
    CU_ASSERT_EQUAL(v, 2);
    /* the options record travelled with the job */
    CU_ASSERT_TRUE(ms_records_get_stat(r, "fake_tag", &v));
    CU_ASSERT_EQUAL(v, 77);
    CU_ASSERT_TRUE(ms_remote_is_primary());
}

static void
test_local_run(void)
{
    check_local_run();
}

static void
test_busy_poll(void)
{
    g_setenv("MS_FAKE_MODE", "busy", TRUE);
    check_local_run();
    g_unsetenv("MS_FAKE_MODE");
}

static void
expect_failure(const char *fake_mode, double timeout_s, GQuark domain, int code, const char *needle)
{
    g_setenv("MS_FAKE_MODE", fake_mode, TRUE);
    g_autoptr(MsSchedule) s = sample();
    MsExecOptions o = local_options(timeout_s);
    GError *error = NULL;
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_PTR_NULL(ms_remote_execute(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, domain, code, needle);
    /* the workers are gone well before their own timeout */
    CU_ASSERT_TRUE(g_get_monotonic_time() - t0 <
                   (gint64)((timeout_s + 8) * ms_test_time_factor() * G_USEC_PER_SEC));
    g_unsetenv("MS_FAKE_MODE");
}

static void
test_rank_failures(void)
{
    expect_failure("open-fail", 30, MS_REMOTE_ERROR, MS_REMOTE_ERROR_RANK,
                   "rank 1: fake device missing on rank 1");
    expect_failure("die", 30, MS_WIRE_ERROR, MS_WIRE_ERROR_CLOSED, "rank 1 closed the connection");
    /* Long enough for three workers to start and connect on a loaded machine. */
    double hang_s = 4 * ms_test_time_factor();
    g_autofree char *hang_msg = g_strdup_printf("did not finish within the %g s timeout", hang_s);
    expect_failure("hang", hang_s, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_TIMEOUT, hang_msg);
    expect_failure("liar", 30, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                   "of 5, but this run has 3 ranks");
    expect_failure("session-fail", 30, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "fake: no devices");
    /* Without a record the ranks get none (the backend's defaults). */
    g_autoptr(MsSchedule) s = sample();
    MsExecOptions o = local_options(30);
    GError *error = NULL;
    g_autoptr(MsRecords) r = ms_remote_execute(&fake_backend, s, &o, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double v = -1;
    CU_ASSERT_TRUE(ms_records_get_stat(r, "fake_tag", &v));
    CU_ASSERT_EQUAL(v, 0);
    /* A worker whose backend takes a record of another size refuses the job. */
    g_setenv("MS_FAKE_MODE", "wide-options", TRUE);
    FakeOptions record = {.tag = 5};
    o.backend = &record;
    CU_ASSERT_PTR_NULL(ms_remote_execute(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_RANK,
                    ": the coordinator sent 4 bytes of options for backend 'fake', which takes 8 "
                    "(mixed moesim builds?)");
    g_unsetenv("MS_FAKE_MODE");
}

static GBytes *
make_spec(const char *const *hosts, guint world, gpointer data, GError **error)
{
    CU_ASSERT_EQUAL(world, 2);
    CU_ASSERT_STRING_EQUAL(hosts[0], g_get_host_name());
    CU_ASSERT_STRING_EQUAL(hosts[1], g_get_host_name());
    CU_ASSERT_PTR_NULL(hosts[2]);
    char *text = g_strdup_printf("%s for %u ranks", (const char *)data, world);
    return g_bytes_new_take(text, strlen(text));
}

static GBytes *
failing_spec(const char *const *hosts, guint world, gpointer data, GError **error)
{
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "no pairs to measure");
    return NULL;
}

static void
test_bench(void)
{
    MsExecOptions o = local_options(30);
    GError *error = NULL;
    g_autoptr(GBytes) result = ms_remote_bench(&fake_backend, 2, make_spec, "sweep", &o, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(result);
    gsize n = 0;
    const char *text = g_bytes_get_data(result, &n);
    g_autofree char *got = g_strndup(text, n);
    CU_ASSERT_STRING_EQUAL(got, "rank 0 measured: sweep for 2 ranks");
    CU_ASSERT_PTR_NULL(ms_remote_bench(&fake_backend, 2, failing_spec, NULL, &o, &error));
    MS_ASSERT_ERROR(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "no pairs to measure");
    CU_ASSERT_PTR_NULL(ms_remote_bench(&fake_backend, 0, make_spec, NULL, &o, &error));
    MS_ASSERT_ERROR(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "a benchmark needs 1 to 65536 ranks, not 0");
    MsExecBackend none = fake_backend;
    none.bench = NULL;
    CU_ASSERT_PTR_NULL(ms_remote_bench(&none, 1, make_spec, NULL, &o, &error));
    MS_ASSERT_ERROR(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "backend 'fake' has no microbenchmarks");
}

static guint16
free_port(void)
{
    guint16 port = 0;
    GSocket *l = ms_wire_listen("127.0.0.1", 0, &port, NULL);
    g_object_unref(l);
    return port;
}

/* Three processes of a torchrun-style job: rank 0 coordinates and works, the others work. */
static void
test_job(void)
{
    guint16 port = free_port();
    GPid pids[3];
    for (guint r = 0; r < 3; r++) {
        g_auto(GStrv) env = g_get_environ();
        char num[16];
        g_snprintf(num, sizeof num, "%u", r);
        env = g_environ_setenv(env, "RANK", num, TRUE);
        env = g_environ_setenv(env, "WORLD_SIZE", "3", TRUE);
        env = g_environ_setenv(env, "MASTER_ADDR", "localhost", TRUE);
        g_snprintf(num, sizeof num, "%u", port);
        env = g_environ_setenv(env, "MASTER_PORT", num, TRUE);
        g_autofree char *out = g_strdup_printf("%s/job-%u", ms_test_tmpdir(), r);
        const char *argv[] = {self_path, "job", out, NULL};
        CU_ASSERT_TRUE_FATAL(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pids[r], NULL));
    }
    for (guint r = 0; r < 3; r++) {
        int status = -1;
        waitpid(pids[r], &status, 0);
        CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        g_autofree char *out = g_strdup_printf("%s/job-%u", ms_test_tmpdir(), r);
        g_autofree char *text = NULL;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(out, &text, NULL, NULL));
        /* rank 0 holds all 15 ops' records and is the primary; the others their own 5 */
        CU_ASSERT_STRING_EQUAL(text, r == 0 ? "ok 15 1 -\n" : "ok 5 0 -\n");
    }
}

static void
test_environment_errors(void)
{
    g_autoptr(MsSchedule) s = sample();
    MsExecOptions o = local_options(5);
    GError *error = NULL;
    g_setenv("RANK", "0", TRUE);
    g_setenv("WORLD_SIZE", "2", TRUE);
    g_setenv("MASTER_ADDR", "127.0.0.1", TRUE);
    g_setenv("MASTER_PORT", "1", TRUE);
    CU_ASSERT_PTR_NULL(ms_remote_execute(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "the torchrun job has 2 ranks but the run needs 3 (one process per rank)");
    g_setenv("MOESIM_WORKER", "1", TRUE);
    CU_ASSERT_FALSE(ms_remote_is_primary());
    CU_ASSERT_PTR_NULL(ms_remote_execute(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "this process is a worker (MOESIM_WORKER=1)");
    g_setenv("RANK", "x", TRUE);
    CU_ASSERT_PTR_NULL(ms_remote_execute(&fake_backend, s, &o, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, "RANK='x'");
    g_unsetenv("RANK");
    g_unsetenv("WORLD_SIZE");
    g_unsetenv("MASTER_ADDR");
    g_unsetenv("MASTER_PORT");
    g_unsetenv("MOESIM_WORKER");
    CU_ASSERT_PTR_NULL(ms_remote_worker_main(&fake_backend, &o, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "rank 0: a worker needs its rank from the environment");
    /* A worker whose coordinator never answers gives up at its timeout. */
    g_autofree char *port = g_strdup_printf("%u", free_port());
    g_setenv("RANK", "1", TRUE);
    g_setenv("WORLD_SIZE", "2", TRUE);
    g_setenv("MASTER_ADDR", "127.0.0.1", TRUE);
    g_setenv("MASTER_PORT", port, TRUE);
    MsExecOptions quick = {.timeout_s = 0.3};
    CU_ASSERT_PTR_NULL(ms_remote_worker_main(&fake_backend, &quick, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                    "rank 1: timed out connecting to the coordinator at 127.0.0.1:");
    g_unsetenv("RANK");
    g_unsetenv("WORLD_SIZE");
    g_unsetenv("MASTER_ADDR");
    g_unsetenv("MASTER_PORT");
}

int
main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "exec") == 0) {
        return child_worker(argc, argv);
    }
    if (argc >= 3 && strcmp(argv[1], "job") == 0) {
        return child_job(argc, argv);
    }
    self_path = g_file_read_link("/proc/self/exe", NULL);
    g_unsetenv("MS_FAKE_MODE");
    static const MsTestCase tests[] = {
        {"a local run: every op on its rank, in dependency order", test_local_run},
        {"the same with busy polling", test_busy_poll},
        {"a rank that fails, dies, hangs, lies or differs ends the run", test_rank_failures},
        {"microbenchmark jobs", test_bench},
        {"a torchrun-style job of three processes", test_job},
        {"environment errors", test_environment_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"executor remote", NULL, NULL, tests}, {NULL}};
    int rc = ms_test_main(argc, argv, suites);
    g_free(self_path);
    return rc;
}
