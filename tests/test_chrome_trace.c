/* Tests of the Chrome trace (sim/out/chrome_trace.h): names escaped by the JSON writer, every
 * iteration laid end to end, flows from dependencies and through collectives, counter tracks of
 * bytes in flight and link utilisation, the temporary file, the iteration selection, and `moesim
 * run
 * --chrome-trace` with --chrome-iterations. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

#include "chrome_trace_fixture.h"
#include "sim/out/chrome_trace.h"

/* The events of a trace file (the parser is kept in *p). */
static JsonArray *
load(const char *path, JsonParser **p, JsonObject **root)
{
    *p = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_file(*p, path, &error)) {
        fprintf(stderr, "\n  %s: %s\n", path, error->message);
        g_clear_error(&error);
        return NULL;
    }
    *root = json_node_get_object(json_parser_get_root(*p));
    return json_object_get_array_member(*root, "traceEvents");
}

static const char *
str(JsonObject *o, const char *key)
{
    return json_object_get_string_member_with_default(o, key, "");
}

/* The index of the first event with phase ph and name (NULL: any), pid and ts (< 0: any) at or
 * after from; -1 when none. */
static gint
find(JsonArray *ev, guint from, const char *ph, const char *name, gint64 pid, double ts)
{
    for (guint i = from; i < json_array_get_length(ev); i++) {
        JsonObject *o = json_array_get_object_element(ev, i);
        if (!strcmp(str(o, "ph"), ph) && (!name || !strcmp(str(o, "name"), name)) &&
            (pid < 0 || json_object_get_int_member_with_default(o, "pid", -1) == pid) &&
            (ts < 0 || fabs(json_object_get_double_member_with_default(o, "ts", -1) - ts) < 1e-9)) {
            return (gint)i;
        }
    }
    return -1;
}

static guint
count(JsonArray *ev, const char *ph)
{
    guint n = 0;
    for (gint i = 0; (i = find(ev, (guint)i, ph, NULL, -1, -1)) >= 0; i++) {
        n++;
    }
    return n;
}

static JsonObject *
at(JsonArray *ev, gint i)
{
    g_assert(i >= 0);
    return json_array_get_object_element(ev, (guint)i);
}

static void
test_two_iterations(void)
{
    MsSchedule *s;
    MsRecords *r;
    fx_trace_build(&s, &r);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "two.json", NULL);
    GError *error = NULL;
    g_autoptr(MsChromeTrace) t = ms_chrome_trace_open(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(ms_chrome_trace_add(t, 3, s, r, &error));
    CU_ASSERT_TRUE(ms_chrome_trace_add(t, 4, s, r, &error));
    /* Until closed the file is only the temporary file beside it. */
    CU_ASSERT_TRUE(ms_test_output_temp_exists(path));
    CU_ASSERT_FALSE(g_file_test(path, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE_FATAL(ms_chrome_trace_close(t, &error));
    CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    CU_ASSERT_EQUAL(ms_chrome_trace_n_iterations(t), 2);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *root = NULL;
    JsonArray *ev = load(path, &p, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    CU_ASSERT_EQUAL(json_array_get_length(ev), ms_chrome_trace_n_events(t));
    CU_ASSERT_STRING_EQUAL(str(root, "displayTimeUnit"), "ns");
    JsonObject *other = json_object_get_object_member(root, "otherData");
    CU_ASSERT_EQUAL(json_object_get_int_member(other, "iterations"), 2);
    CU_ASSERT_STRING_EQUAL(str(json_object_get_object_member(other, "meta"), "model"), "tiny");

    /* Names, escaped on the way out and whole on the way back. */
    JsonObject *gpu1 = at(ev, find(ev, 0, "M", "process_name", 1, -1));
    CU_ASSERT_STRING_EQUAL(str(json_object_get_object_member(gpu1, "args"), "name"), "GPU 1");
    gint odd = find(ev, 0, "M", "thread_name", 1, -1);
    odd = find(ev, (guint)odd + 1, "M", "thread_name", 1, -1);
    JsonObject *th = at(ev, odd);
    CU_ASSERT_EQUAL(json_object_get_int_member(th, "tid"), 1);
    CU_ASSERT_STRING_EQUAL(str(json_object_get_object_member(th, "args"), "name"), ODD_STREAM);
    /* Named once, not per iteration; the run's process too. */
    CU_ASSERT_EQUAL(find(ev, (guint)odd + 1, "M", "thread_name", 1, -1), -1);
    CU_ASSERT_TRUE(find(ev, 0, "M", "process_name", MS_CHROME_TRACE_RUN_PID, -1) >= 0);
    /* An op label that is not UTF-8 is made valid rather than written as invalid JSON. */
    CU_ASSERT_TRUE(find(ev, 0, "X", NULL, 0, 0) >= 0);
    CU_ASSERT_TRUE(g_utf8_validate(str(at(ev, find(ev, 0, "X", NULL, 0, 0)), "name"), -1, NULL));

    /* 6 ops, an iteration slice and 3 waits for peers per iteration (r1's all-to-all, ready at
     * 0, for r0's, ready at 10; r0's allreduce, ready at 0, for r1's at 30, in two pieces around
     * r0's all-to-all); the second iteration starts where the first ended. */
    CU_ASSERT_EQUAL(count(ev, "X"), 2 * 10);
    JsonObject *a2a = at(ev, find(ev, 0, "X", "L0.fwd.dispatch", 0, 12));
    CU_ASSERT_STRING_EQUAL(str(a2a, "cat"), "op");
    CU_ASSERT_EQUAL(json_object_get_int_member(a2a, "tid"), 1);
    MS_ASSERT_REL(json_object_get_double_member(a2a, "dur"), 8, 1e-12);
    JsonObject *args = json_object_get_object_member(a2a, "args");
    CU_ASSERT_EQUAL(json_object_get_int_member(args, "iteration"), 3);
    CU_ASSERT_EQUAL(json_object_get_int_member(args, "bytes"), 100);
    CU_ASSERT_STRING_EQUAL(str(args, "collective"), "L0.fwd.dispatch");
    /* who it sends to: GPU 1, 100 bytes (its 7 bytes to itself are not sent) */
    JsonObject *to = json_object_get_object_member(args, "to");
    CU_ASSERT_EQUAL(json_object_get_size(to), 1);
    CU_ASSERT_EQUAL(json_object_get_int_member(to, "GPU 1"), 100);
    gint again = find(ev, 0, "X", "L0.fwd.dispatch", 0, 40 + 12);
    CU_ASSERT_TRUE_FATAL(again >= 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(json_object_get_object_member(at(ev, again), "args"),
                                               "iteration"),
                    4);
    JsonObject *it = at(ev, find(ev, 0, "X", "iteration 4", MS_CHROME_TRACE_RUN_PID, 40));
    MS_ASSERT_REL(json_object_get_double_member(it, "dur"), 40, 1e-12);

    /* Flows: c1 -> r0's all-to-all, r1's all-to-all -> c2, c2 -> r1's allreduce (dependencies
     * on other streams), and one per collective (all-to-all r0 at 12 then r1 at 15; allreduce
     * r0 then r1 at 30): 5 per iteration. */
    CU_ASSERT_EQUAL(count(ev, "s"), 2 * 5);
    CU_ASSERT_EQUAL(count(ev, "f"), 2 * 5);
    JsonObject *dep = at(ev, find(ev, 0, "s", "dependency", 0, 0));
    gint64 id = json_object_get_int_member(dep, "id");
    CU_ASSERT_EQUAL(json_object_get_int_member(dep, "tid"), 0);
    CU_ASSERT_STRING_EQUAL(str(dep, "cat"), "op");
    JsonObject *end = at(ev, find(ev, 0, "f", "dependency", 0, 12));
    CU_ASSERT_EQUAL(json_object_get_int_member(end, "id"), id);
    CU_ASSERT_EQUAL(json_object_get_int_member(end, "tid"), 1);
    CU_ASSERT_STRING_EQUAL(str(end, "bp"), "e");
    JsonObject *cs = at(ev, find(ev, 0, "s", "all-to-all", 0, 12));
    JsonObject *cf = at(ev, find(ev, 0, "f", "all-to-all", 1, 15));
    CU_ASSERT_EQUAL(json_object_get_int_member(cs, "id"), json_object_get_int_member(cf, "id"));
    CU_ASSERT_NOT_EQUAL(json_object_get_int_member(cs, "id"), id);
    /* ids are unique over the file: the second iteration's flows have their own */
    JsonObject *dep2 = at(ev, find(ev, 0, "s", "dependency", 0, 40));
    CU_ASSERT_NOT_EQUAL(json_object_get_int_member(dep2, "id"), id);

    /* Counters: r0 has 100 bytes in flight from 12 to 20 us, then its allreduce's 1000. */
    static const double r0[][2] = {{12, 100}, {20, 0}, {30, 1000}, {40, 0}};
    for (guint k = 0; k < G_N_ELEMENTS(r0); k++) {
        gint i = find(ev, 0, "C", "bytes in flight", 0, r0[k][0]);
        CU_ASSERT_TRUE_FATAL(i >= 0);
        MS_ASSERT_REL(json_object_get_double_member(
                          json_object_get_object_member(at(ev, i), "args"), "bytes"),
                      r0[k][1], 1e-12);
    }
    /* all GPUs: r0's 100 from 12, r1's 200 from 15, none at 20 */
    gint all = find(ev, 0, "C", "bytes in flight, all GPUs", MS_CHROME_TRACE_RUN_PID, 15);
    CU_ASSERT_TRUE_FATAL(all >= 0);
    MS_ASSERT_REL(
        json_object_get_double_member(json_object_get_object_member(at(ev, all), "args"), "bytes"),
        300, 1e-12);
    gint nic = find(ev, 0, "C", "nic links in use", MS_CHROME_TRACE_RUN_PID, 40 + 12);
    CU_ASSERT_TRUE_FATAL(nic >= 0);
    MS_ASSERT_REL(json_object_get_double_member(json_object_get_object_member(at(ev, nic), "args"),
                                                "% of capacity"),
                  50, 1e-12);
    ms_schedule_free(s);
    ms_records_free(r);
}

static void
test_temp_file_and_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_chrome_trace_open("/nonexistent/t.json", &error));
    MS_ASSERT_ERROR(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_IO,
                    "/nonexistent/t.json: cannot write: No such file");
    /* A trace freed before it is closed (a failed run) leaves no file behind. */
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "abandoned.json", NULL);
    MsChromeTrace *t = ms_chrome_trace_open(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(ms_test_output_temp_exists(path));
    ms_chrome_trace_free(t);
    CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    CU_ASSERT_FALSE(g_file_test(path, G_FILE_TEST_EXISTS));
    /* An empty trace is still a valid file. */
    t = ms_chrome_trace_open(path, &error);
    CU_ASSERT_TRUE(ms_chrome_trace_close(t, &error));
    ms_chrome_trace_free(t);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *root = NULL;
    JsonArray *ev = load(path, &p, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    CU_ASSERT_EQUAL(json_array_get_length(ev), 0);
}

static void
test_parse_iterations(void)
{
    static const struct {
        const char *text;
        guint first, count;
    } ok[] = {{"all", 0, G_MAXUINT}, {"0", 0, 1}, {"7", 7, 1}, {"2-5", 2, 4}, {"3-3", 3, 1}};
    for (guint i = 0; i < G_N_ELEMENTS(ok); i++) {
        guint first = 99, n = 99;
        GError *error = NULL;
        CU_ASSERT_TRUE(ms_chrome_trace_parse_iterations(ok[i].text, &first, &n, &error));
        CU_ASSERT_EQUAL(first, ok[i].first);
        CU_ASSERT_EQUAL(n, ok[i].count);
    }
    static const char *const bad[] = {"",  "-1",  "5-2",   "1-",    "-",
                                      "x", "1.5", "all,2", "1-2-3", "99999999999"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        guint first, n;
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_chrome_trace_parse_iterations(bad[i], &first, &n, &error));
        MS_ASSERT_ERROR(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_ITERATIONS,
                        "is not all, an iteration N or a range A-B");
    }
}

/* The iterations of a trace moesim run wrote: the "iteration" of each op's args. */
static GHashTable *
iterations_of(JsonArray *ev)
{
    GHashTable *seen = g_hash_table_new(NULL, NULL);
    for (gint i = 0; (i = find(ev, (guint)i, "X", NULL, -1, -1)) >= 0; i++) {
        JsonObject *o = at(ev, i);
        if (!strcmp(str(o, "cat"), "op")) {
            gint64 it =
                json_object_get_int_member(json_object_get_object_member(o, "args"), "iteration");
            g_hash_table_add(seen, GINT_TO_POINTER((gint)it + 1));
        }
    }
    return seen;
}

/* run wrote the first iteration only, without flows or counters. */
static void
test_run_every_iteration(void)
{
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "run", "t.json", NULL);
    const char *args[] = {"run",      "--mode", "infer",          "-n", "3",
                          "--policy", "lina",   "--chrome-trace", path, NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(args, &out, &err), 0);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *root = NULL;
    JsonArray *ev = load(path, &p, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    g_autoptr(GHashTable) its = iterations_of(ev);
    CU_ASSERT_EQUAL(g_hash_table_size(its), 3);
    CU_ASSERT_TRUE(g_hash_table_contains(its, GINT_TO_POINTER(3)));
    CU_ASSERT_TRUE(count(ev, "s") > 0);
    CU_ASSERT_TRUE(find(ev, 0, "C", "bytes in flight", 0, -1) >= 0);
    /* the engine's link series become counters without --plot */
    CU_ASSERT_TRUE(find(ev, 0, "C", "nvlink links in use", MS_CHROME_TRACE_RUN_PID, -1) >= 0);
    /* One chosen iteration, from time 0. */
    const char *one[] = {"run",      "--mode", "infer",          "-n", "3",
                         "--policy", "lina",   "--chrome-trace", path, "--chrome-iterations",
                         "1",        NULL};
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(one, &out, &err), 0);
    g_autoptr(JsonParser) p1 = NULL;
    ev = load(path, &p1, &root);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
    g_autoptr(GHashTable) only = iterations_of(ev);
    CU_ASSERT_EQUAL(g_hash_table_size(only), 1);
    CU_ASSERT_TRUE(g_hash_table_contains(only, GINT_TO_POINTER(2)));
    CU_ASSERT_TRUE(find(ev, 0, "X", "iteration 1", MS_CHROME_TRACE_RUN_PID, 0) >= 0);
    /* A selection the run does not reach is an error, and leaves no trace. */
    g_autofree char *past = g_build_filename(ms_test_tmpdir(), "run", "past.json", NULL);
    static const char *const bad[][2] = {{"3", "the run has 3 iterations (0 to 2)"},
                                         {"1-3", "the run has 3 iterations (0 to 2)"},
                                         {"two", "'two' is not all"}};
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        const char *args2[] = {
            "run",     "--mode", "infer", "-n", "3", "--chrome-trace", past, "--chrome-iterations",
            bad[k][0], NULL};
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
        CU_ASSERT_EQUAL(ms_test_run_moesim(args2, &out, &err), 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[k][1]));
        CU_ASSERT_FALSE(g_file_test(past, G_FILE_TEST_EXISTS));
    }
    const char *alone[] = {"run", "--chrome-iterations", "1", NULL};
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    CU_ASSERT_EQUAL(ms_test_run_moesim(alone, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "give --chrome-trace FILE too"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"two iterations: names, ops, flows, counters", test_two_iterations},
        {"temporary file, errors, an empty trace", test_temp_file_and_errors},
        {"iteration selections", test_parse_iterations},
        {"moesim run: every iteration, or one", test_run_every_iteration},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"chrome trace", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
