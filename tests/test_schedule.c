/* Tests of the schedule's JSON form where loading must refuse bad input cheaply: absurd sizes are
 * caught before anything of their size is allocated, and unreadable or deeply nested files are
 * errors, not crashes; validation names an op on a dependency cycle. */
#include "ms_test.h"
#include "sim/base/json_input.h"
#include "sim/compute.h"
#include "sim/schedule/schedule.h"

/* A schedule of n ranks with one all-to-all over all of them whose matrix has n rows of `cols`
 * elements each, but `last` in the last row. */
static char *
wide_alltoall(guint n, guint cols, guint last)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"format\": \"moesim-schedule\", \"version\": 1, \"ranks\": %u, "
                           "\"policy\": \"fifo\", \"meta\": {}, "
                           "\"streams\": [{\"name\": \"comm\", \"kind\": \"comm\"}], "
                           "\"ops\": [], \"collectives\": [{\"id\": 0, \"kind\": \"alltoall\", "
                           "\"algo\": \"direct\", \"window\": 0, \"label\": \"a2a\", ",
                           n);
    const char *names[] = {"ranks", "ops"};
    for (guint k = 0; k < 2; k++) {
        g_string_append_printf(s, "\"%s\": [", names[k]);
        for (guint i = 0; i < n; i++) {
            g_string_append_printf(s, "%s%u", i ? "," : "", i);
        }
        g_string_append(s, "], ");
    }
    g_string_append(s, "\"matrix\": [");
    for (guint i = 0; i < n; i++) {
        g_string_append(s, i ? ",[" : "[");
        for (guint j = 0; j < (i + 1 < n ? cols : last); j++) {
            g_string_append(s, j ? ",0" : "0");
        }
        g_string_append(s, "]");
    }
    g_string_append(s, "]}]}");
    return g_string_free(s, FALSE);
}

static MsSchedule *
load_text(const char *text, GError **error)
{
    g_autofree char *path = ms_test_write_tmp("s.json", text);
    return ms_schedule_load(path, error);
}

/* Regression: the n x n byte matrix was allocated as soon as the row count matched, so a file of
 * 65536 empty rows (under a megabyte) asked for 32 GiB and aborted. */
static void
test_matrix_checked_before_allocation(void)
{
    GError *error = NULL;
    g_autofree char *text = wide_alltoall(MS_SCHEDULE_MAX_RANKS, 0, 0);
    CU_ASSERT_PTR_NULL(load_text(text, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: collective 0: field 'matrix': row 0 has 0 elements, expected 65536");
    g_autofree char *ragged = wide_alltoall(3, 3, 2);
    CU_ASSERT_PTR_NULL(load_text(ragged, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "field 'matrix': row 2 has 2 elements, expected 3");
    /* A well-formed matrix gets past the matrix to the ops check. */
    g_autofree char *square = wide_alltoall(3, 3, 3);
    CU_ASSERT_PTR_NULL(load_text(square, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_INVALID,
                    "participant 0 has no matching op");
}

/* text with the first occurrence of old (which must occur) replaced by new. */
static char *
variant(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    g_assert(at != NULL);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, new, at + strlen(old));
}

/* The documented limits: ranks, streams, and op ids in collectives. */
static void
test_limits(void)
{
    GError *error = NULL;
    g_autofree char *one = wide_alltoall(1, 1, 1);
    g_autofree char *ranks = variant(one, "\"ranks\": 1,", "\"ranks\": 65537,");
    CU_ASSERT_PTR_NULL(load_text(ranks, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: schedule: field 'ranks': 65537 out of range [1, 65536]");
    g_autoptr(GString) streams = g_string_new(NULL);
    for (guint i = 0; i <= MS_SCHEDULE_MAX_STREAMS; i++) {
        g_string_append_printf(streams, "%s{\"name\": \"s%u\", \"kind\": \"comm\"}", i ? ", " : "",
                               i);
    }
    g_autofree char *many = variant(one, "{\"name\": \"comm\", \"kind\": \"comm\"}", streams->str);
    CU_ASSERT_PTR_NULL(load_text(many, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "field 'streams': between 1 and 16 streams expected");
    g_autofree char *big_op = variant(one, "\"ops\": [0]", "\"ops\": [2097153]");
    CU_ASSERT_PTR_NULL(load_text(big_op, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "field 'ops': element 0 is not an integer in [0, 2097152]");
}

static void
test_unreadable_and_nested(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_schedule_load("/nonexistent/s.json", &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_IO, "/nonexistent/s.json: ");
    CU_ASSERT_PTR_NULL(load_text("{\"format\": [1,\n 2", &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE, "s.json:2:");
    GString *deep = g_string_new("{\"ops\": ");
    for (guint i = 0; i < 100000; i++) {
        g_string_append_c(deep, '[');
    }
    CU_ASSERT_PTR_NULL(load_text(deep->str, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json:1: JSON nested deeper than 512 levels");
    g_string_free(deep, TRUE);
}

/* One table per enumeration: the name functions, the tables the reader matches against, and the
 * reader's message list the same names; collective kinds are coll_names.h's operations. */
static void
test_names(void)
{
    const char *const *roles = ms_role_names();
    CU_ASSERT_EQUAL(g_strv_length((char **)roles), MS_ROLE_N);
    for (guint i = 0; i < MS_ROLE_N; i++) {
        MsRole back = MS_ROLE_N;
        CU_ASSERT_STRING_EQUAL(ms_role_name(i), roles[i]);
        CU_ASSERT_TRUE(ms_role_from_name(roles[i], &back) && back == i);
    }
    CU_ASSERT_EQUAL(g_strv_length((char **)ms_compute_kind_names()), MS_COMPUTE_N_KINDS);
    CU_ASSERT_STRING_EQUAL(ms_compute_kind_name(MS_COMPUTE_ELEMENTWISE), "elementwise");
    CU_ASSERT_STRING_EQUAL(ms_phase_name(MS_PHASE_OTHER), "other");
    CU_ASSERT_STRING_EQUAL(ms_phase_name(3), "?");
    CU_ASSERT_EQUAL(g_strv_length((char **)ms_phase_names()), 3);
    CU_ASSERT_STRING_EQUAL(ms_op_kind_name(MS_OP_COMM), "comm");
    CU_ASSERT_STRING_EQUAL(ms_stream_kind_name(MS_STREAM_COMPUTE), "compute");
    CU_ASSERT_STRING_EQUAL(ms_op_kind_name(2), "?");
    CU_ASSERT_STRING_EQUAL(ms_coll_kind_name(MS_COLL_KIND_ALLTOALL),
                           ms_coll_op_name(MS_COLL_ALLTOALL));
    CU_ASSERT_STRING_EQUAL(ms_coll_kind_name(MS_COLL_KIND_ALLREDUCE), "allreduce");
    CU_ASSERT_STRING_EQUAL(ms_coll_kind_name(MS_COLL_KIND_N), "?");
    /* The reader takes only the kinds a schedule can hold, and says which. */
    GError *error = NULL;
    g_autofree char *one = wide_alltoall(1, 1, 1);
    g_autofree char *gather = variant(one, "\"kind\": \"alltoall\"", "\"kind\": \"allgather\"");
    CU_ASSERT_PTR_NULL(load_text(gather, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "collective 0: field 'kind': unknown value 'allgather' (expected one of: "
                    "alltoall, allreduce)");
    g_autofree char *stream = variant(one, "\"kind\": \"comm\"", "\"kind\": \"copy\"");
    CU_ASSERT_PTR_NULL(load_text(stream, &error));
    MS_ASSERT_ERROR(
        error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
        "stream 0: field 'kind': unknown value 'copy' (expected one of: compute, comm)");
}

/* Host time: written as host_us only when set, read back exactly, refused when negative; a host
 * op costs its host time alone, any other op launch + host + body. */
static void
test_host_time(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    guint st = ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    guint32 a = ms_schedule_add_compute(s, 0, st, MS_ROLE_GATE, MS_PHASE_FORWARD, 0, -1, "g");
    guint32 h = ms_schedule_add_compute(s, 0, st, MS_ROLE_HOST, MS_PHASE_FORWARD, 0, -1, "h");
    ms_schedule_set_cost(s, a, MS_COMPUTE_ELEMENTWISE, 0, 2e6, 16);
    ms_schedule_set_host(s, a, 20e-6);
    ms_schedule_set_host(s, h, 9.7e-3);
    ms_schedule_add_dep(s, h, a);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_schedule_validate(s, &error));
    g_autoptr(JsonNode) root = ms_schedule_to_json(s);
    g_autoptr(MsSchedule) back = ms_schedule_from_json(root, "s.json", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    MsOpInfo ia, ih;
    ms_schedule_op(back, a, &ia);
    ms_schedule_op(back, h, &ih);
    MS_ASSERT_REL(ia.host_s, 20e-6, 1e-12);
    MS_ASSERT_REL(ih.host_s, 9.7e-3, 1e-12);
    CU_ASSERT_EQUAL(ih.role, MS_ROLE_HOST);
    CU_ASSERT_STRING_EQUAL(ms_role_name(MS_ROLE_HOST), "host");
    /* 2 MB at 2 TB/s is 1 us, launch 5 us: 26 us with the host time; the host op 9.7 ms. */
    MsGpuSpec gpu = {.model = "g",
                     .peak_flops = 1e14,
                     .hbm_bandwidth = 2e12,
                     .memory_bytes = 1,
                     .launch_overhead = 5 * MS_PS_PER_US};
    g_autoptr(MsComputeModel) m = ms_compute_model_new(&gpu, &error);
    CU_ASSERT_EQUAL(ms_compute_op_time(m, &ia, FALSE), 26 * MS_PS_PER_US);
    CU_ASSERT_EQUAL(ms_compute_op_time(m, &ih, TRUE), ms_time_from_s(9.7e-3));
    /* No host time: no host_us member (schedules read as before). */
    g_autoptr(MsSchedule) plain = ms_schedule_new(1);
    guint ps = ms_schedule_add_stream(plain, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_compute(plain, 0, ps, MS_ROLE_GATE, MS_PHASE_FORWARD, 0, -1, "g");
    g_autoptr(JsonNode) pj = ms_schedule_to_json(plain);
    JsonObject *op0 = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(pj), "ops"), 0);
    CU_ASSERT_FALSE(json_object_has_member(op0, "host_us"));
    ms_schedule_set_host(s, a, -1);
    CU_ASSERT_FALSE(ms_schedule_validate(s, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_INVALID,
                    "op 0 (g): host time -1 s out of range [0, 3600]");
}

/* A schedule of two ranks: a gate each, then an all-to-all of the given pair sizes; its meta
 * names the iteration, its dropped tokens and its datatype. */
static MsSchedule *
work(guint iteration, double flops, guint64 pair, const char *dtype)
{
    MsSchedule *s = ms_schedule_new(2);
    guint cs = ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    guint ms = ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    const guint32 ranks[] = {0, 1};
    const guint64 matrix[] = {0, pair, 4096, 0};
    guint32 ops[2];
    ms_schedule_add_alltoall(s, ms, ranks, 2, matrix, 0, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0,
                             -1, "a2a", ops);
    for (guint r = 0; r < 2; r++) {
        guint32 g = ms_schedule_add_compute(s, r, cs, MS_ROLE_GATE, MS_PHASE_FORWARD, 0, -1, "g");
        ms_schedule_set_cost(s, g, MS_COMPUTE_ELEMENTWISE, flops, 1e6, 16);
        ms_schedule_add_dep(s, ops[r], g);
    }
    char buf[16];
    g_snprintf(buf, sizeof buf, "%u", iteration);
    ms_schedule_set_meta(s, "iteration", buf);
    ms_schedule_set_meta(s, "dropped_tokens", buf);
    ms_schedule_set_meta(s, "dtype", dtype);
    return s;
}

/* The work's digest: the same for schedules that differ only in the iteration they name and its
 * dropped tokens, different for one op's flops, one pair's bytes, the datatype (the compute
 * model reads it). */
static void
test_work_digest(void)
{
    g_autoptr(MsSchedule) a = work(0, 1e6, 4096, "bf16");
    g_autoptr(MsSchedule) b = work(7, 1e6, 4096, "bf16");
    g_autoptr(MsSchedule) flops = work(0, 1e6 + 1, 4096, "bf16");
    g_autoptr(MsSchedule) pair = work(0, 1e6, 4097, "bf16");
    g_autoptr(MsSchedule) dtype = work(0, 1e6, 4096, "fp16");
    g_autofree char *da = ms_schedule_work_digest(a);
    g_autofree char *db = ms_schedule_work_digest(b);
    g_autofree char *df = ms_schedule_work_digest(flops);
    g_autofree char *dp = ms_schedule_work_digest(pair);
    g_autofree char *dt = ms_schedule_work_digest(dtype);
    CU_ASSERT_EQUAL(strlen(da), 64);
    CU_ASSERT_STRING_EQUAL(da, db);
    CU_ASSERT_STRING_NOT_EQUAL(da, df);
    CU_ASSERT_STRING_NOT_EQUAL(da, dp);
    CU_ASSERT_STRING_NOT_EQUAL(da, dt);
}

/* The dispatcher's rules travel in version 2's "dispatch" object; version 1 named them by policy,
 * and its five names still read as the rules those policies chose. */
static void
test_rules(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    MsDispatchRules r = ms_schedule_rules(s);
    CU_ASSERT_EQUAL(r.order, MS_DISPATCH_ORDER_READY);
    CU_ASSERT_EQUAL(r.allreduce_gate, MS_ALLREDUCE_GATE_NONE);
    ms_schedule_set_policy(s, "mine");
    ms_schedule_set_rules(s, &(MsDispatchRules){MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A});
    g_autoptr(JsonNode) root = ms_schedule_to_json(s);
    JsonObject *o = json_node_get_object(root);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "version"), 2);
    JsonObject *d = json_object_get_object_member(o, "dispatch");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(d, "order"), "priority");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(d, "allreduce_gate"), "a2a");
    GError *error = NULL;
    g_autoptr(MsSchedule) back = ms_schedule_from_json(root, "s.json", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(back), "mine");
    r = ms_schedule_rules(back);
    CU_ASSERT_EQUAL(r.order, MS_DISPATCH_ORDER_PRIORITY);
    CU_ASSERT_EQUAL(r.allreduce_gate, MS_ALLREDUCE_GATE_A2A);
    /* Version 1: the policy's name decides. */
    static const struct {
        const char *policy;
        MsDispatchOrder order;
        MsAllreduceGate gate;
    } v1[] = {
        {"fifo", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
        {"concurrent", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
        {"priority", MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_NONE},
        {"lina", MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A},
        {"schemoe", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    };
    g_autofree char *one = wide_alltoall(1, 1, 1);
    for (guint i = 0; i < G_N_ELEMENTS(v1); i++) {
        g_autofree char *name = g_strdup_printf("\"policy\": \"%s\"", v1[i].policy);
        g_autofree char *text = variant(one, "\"policy\": \"fifo\"", name);
        g_autofree char *ok = variant(text, "\"ops\": []",
                                      "\"ops\": [{\"id\": 0, \"rank\": 0, "
                                      "\"stream\": 0, \"kind\": \"comm\", \"role\": \"dispatch\", "
                                      "\"phase\": \"forward\", \"layer\": 0, \"chunk\": -1, "
                                      "\"label\": \"a2a\", \"priority\": 0, \"flags\": 0, "
                                      "\"deps\": [], \"coll\": 0}]");
        g_autoptr(MsSchedule) old = load_text(ok, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(old);
        r = ms_schedule_rules(old);
        CU_ASSERT_EQUAL(r.order, v1[i].order);
        CU_ASSERT_EQUAL(r.allreduce_gate, v1[i].gate);
        CU_ASSERT_STRING_EQUAL(ms_schedule_policy(old), v1[i].policy);
    }
    g_autofree char *unknown = variant(one, "\"policy\": \"fifo\"", "\"policy\": \"mine\"");
    CU_ASSERT_PTR_NULL(load_text(unknown, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: schedule: field 'policy': version 1 names the dispatcher's rules by "
                    "policy, and 'mine' is none of fifo, concurrent, priority, lina, schemoe");
    /* Version 2 must give the rules, with known values. */
    g_autofree char *v2 = variant(one, "\"version\": 1", "\"version\": 2");
    CU_ASSERT_PTR_NULL(load_text(v2, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: schedule: field 'dispatch': missing");
    g_autofree char *bad_order =
        variant(v2, "\"meta\"", "\"dispatch\": {\"order\": \"lifo\"}, \"meta\"");
    CU_ASSERT_PTR_NULL(load_text(bad_order, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: dispatch: field 'order': unknown value 'lifo' (expected one of: "
                    "ready, priority)");
    g_autofree char *no_gate =
        variant(v2, "\"meta\"", "\"dispatch\": {\"order\": \"ready\"}, \"meta\"");
    CU_ASSERT_PTR_NULL(load_text(no_gate, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "s.json: dispatch: field 'allreduce_gate': missing");
    g_autofree char *v3 = variant(one, "\"version\": 1", "\"version\": 3");
    CU_ASSERT_PTR_NULL(load_text(v3, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "format 'moesim-schedule' version 3 is not a moesim schedule version 1 to 2");
}

/* A dependency cycle is named by an op on it, not by one that only waits for it. */
static void
test_cycle(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    const char *labels[] = {"waits", "b", "c"};
    for (guint i = 0; i < 3; i++) {
        ms_schedule_add_compute(s, 0, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, labels[i]);
    }
    ms_schedule_add_dep(s, 0, 1);
    ms_schedule_add_dep(s, 1, 2);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_schedule_validate(s, &error));
    ms_schedule_add_dep(s, 2, 1);
    CU_ASSERT_FALSE(ms_schedule_validate(s, &error));
    MS_ASSERT_ERROR(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_INVALID,
                    "op 1 (b) is part of a dependency cycle");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the matrix's shape is checked before it is allocated",
         test_matrix_checked_before_allocation},
        {"limits on ranks, streams and op ids", test_limits},
        {"unreadable, broken and deeply nested files", test_unreadable_and_nested},
        {"a dependency cycle", test_cycle},
        {"the work's digest", test_work_digest},
        {"one name table per enumeration", test_names},
        {"the dispatcher's rules, in versions 2 and 1", test_rules},
        {"host time of ops", test_host_time},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"schedule", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
