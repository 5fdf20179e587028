/* Tests of input_file: regular files read whole and exactly, the kinds' limits at and one byte
 * past the limit, folders, devices and FIFOs refused without blocking, standard input only where
 * the kind allows it, files that grow past what fstat said; then every loader of moesim refusing
 * a device, a FIFO and a folder through it. */
#include "ms_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/input_file.h"
#include "sim/calib/calibration.h"
#include "sim/moe/model.h"
#include "sim/net/flowfile.h"
#include "sim/inputs.h"
#include "sim/schedule/schedule.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_shards.h"
#include "topologies/topology.h"
#include "traces/trace_import.h"
#include "traces/trace_reader.h"
#include "validate/gate.h"
#include "validate/measurement.h"
#include "validate/validation.h"

/* A file of size bytes (a hole after its first line) under the test folder. */
static char *
sparse_file(const char *name, guint64 size)
{
    g_autofree char *path = ms_test_write_tmp(name, "# x\n");
    CU_ASSERT_EQUAL(truncate(path, (off_t)size), 0);
    return g_steal_pointer(&path);
}

static char *
fifo(const char *name)
{
    char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
    return path;
}

static void
test_read(void)
{
    g_autofree char *path = ms_test_write_tmp("m.ini", "[model]\nname = x\n");
    char *data = NULL;
    gsize len = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(path, MS_INPUT_MODEL, &data, &len, &error));
    CU_ASSERT_EQUAL(len, 17);
    CU_ASSERT_STRING_EQUAL(data, "[model]\nname = x\n");
    g_free(data);
    /* An empty file is read as empty text. */
    g_autofree char *empty = ms_test_write_tmp("empty.ini", "");
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(empty, MS_INPUT_MODEL, &data, NULL, &error));
    CU_ASSERT_STRING_EQUAL(data, "");
    g_free(data);
    /* /proc files say they are empty and are not: reading goes on past the size fstat gave. */
    CU_ASSERT_TRUE_FATAL(
        ms_input_file_read("/proc/self/status", MS_INPUT_MODEL, &data, &len, &error));
    CU_ASSERT_TRUE(g_str_has_prefix(data, "Name:"));
    CU_ASSERT_EQUAL(strlen(data), len);
    g_free(data);
}

static void
test_limits(void)
{
    guint64 limit = ms_input_kind_info(MS_INPUT_MODEL)->max_bytes;
    CU_ASSERT_EQUAL(limit, 1 << 20);
    g_autofree char *at = sparse_file("at.ini", limit);
    g_autofree char *past = sparse_file("past.ini", limit + 1);
    char *data = NULL;
    gsize len = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(at, MS_INPUT_MODEL, &data, &len, &error));
    CU_ASSERT_EQUAL(len, limit);
    g_free(data);
    CU_ASSERT_FALSE(ms_input_file_read(past, MS_INPUT_MODEL, &data, &len, &error));
    MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_TOO_LARGE,
                    "past.ini: 1048577 bytes, more than the 1 MiB limit for a model file");
    /* The same file is fine for a kind with a larger limit, and opens for streaming. */
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(past, MS_INPUT_TOPOLOGY, &data, &len, &error));
    g_free(data);
    FILE *f = ms_input_file_open(past, MS_INPUT_TRACE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fgetc(f), '#');
    fclose(f);
    CU_ASSERT_PTR_NULL(ms_input_file_open(past, MS_INPUT_MODEL, &error));
    MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_TOO_LARGE, "1 MiB limit");
}

static void
test_not_regular(void)
{
    g_autofree char *pipe = fifo("pipe");
    static const struct {
        const char *path;
        const char *what;
    } cases[] = {
        {"/dev/zero", "/dev/zero: not a regular file (a character device); a topology file must "
                      "be a regular file"},
        {"/dev/null", "(a character device)"},
        {NULL, "pipe: not a regular file (a FIFO)"},
        {"/", "/: not a regular file (a folder)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *path = cases[i].path ? cases[i].path : pipe;
        char *data = NULL;
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_input_file_read(path, MS_INPUT_TOPOLOGY, &data, NULL, &error));
        MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOT_REGULAR, cases[i].what);
        CU_ASSERT_PTR_NULL(ms_input_file_open(path, MS_INPUT_TRACE, &error));
        MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOT_REGULAR,
                        "a trace must be a regular file, or - for standard input");
    }
    char *data = NULL;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_input_file_read("/nonexistent/m.ini", MS_INPUT_MODEL, &data, NULL, &error));
    MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOENT,
                    "/nonexistent/m.ini: cannot open: No such file");
}

static void
test_stdin(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_EQUAL(ms_input_file_open("-", MS_INPUT_TRACE, &error), stdin);
    CU_ASSERT_PTR_NULL(error);
    /* Elsewhere "-" is only a file name. */
    CU_ASSERT_PTR_NULL(ms_input_file_open("-", MS_INPUT_TRACE_IMPORT, &error));
    MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOENT, "-: cannot open");
}

/* The documentation's promises about the kinds themselves. */
static void
test_kinds(void)
{
    for (guint k = 0; k < MS_INPUT_N_KINDS; k++) {
        const MsInputKindInfo *info = ms_input_kind_info(k);
        CU_ASSERT_TRUE(g_str_has_prefix(info->name, "a "));
        CU_ASSERT_TRUE(strlen(info->read_by) > 0 && strlen(info->reason) > 10);
        /* Only streamed kinds go without a limit; only traces read standard input. */
        CU_ASSERT_TRUE(info->max_bytes > 0 || k == MS_INPUT_TRACE || k == MS_INPUT_TRACE_IMPORT);
        CU_ASSERT_EQUAL(info->stdin_ok, k == MS_INPUT_TRACE);
    }
}

/* Each loader, given each of these, answers at once with the file named. */
static void
test_loaders(void)
{
    g_autofree char *pipe = fifo("loader-pipe");
    const char *const paths[] = {"/dev/zero", pipe, ms_test_tmpdir()};
    g_autoptr(MsTopology) topo = ms_topology_load("dgx-a100", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
        const char *p = paths[i];
        GError *e[16] = {NULL};
        MsTopology *t = ms_topology_load(p, &e[0]);
        MsModel *m = ms_model_load(p, &e[1]);
        MsCalibration *c = ms_calibration_load(p, &e[2]);
        MsSchedule *s = ms_schedule_load(p, &e[3]);
        JsonNode *r = ms_result_file_load(p, &e[4]);
        MsMeasurementSet *ms = ms_measurement_set_load(p, &e[5]);
        MsFlowList *fl = ms_flow_list_load_file(p, topo, &e[6]);
        MsTraceReader *tr = ms_trace_reader_open(p, &e[7]);
        g_autofree char *out = g_build_filename(ms_test_tmpdir(), "out.trace", NULL);
        MsTraceImportOptions opts = {0};
        gboolean imported =
            ms_trace_import(p, MS_TRACE_IMPORT_CSV, &opts, out, MS_TRACE_FORMAT_TEXT, NULL, &e[8]);
        MsBaseline *b = ms_baseline_load(p, &e[9]);
        GBytes *tt = ms_inputs_topology_text(p, &e[10]);
        GBytes *mt = ms_inputs_model_text(p, &e[11]);
        MsSweepManifest man;
        gboolean manifest = ms_sweep_manifest_load(p, &man, &e[12]);
        JsonNode *table = ms_sweep_csv_to_json(p, &e[13]);
        gboolean plotted = ms_sweep_csv_plot(p, ms_test_tmpdir(), &e[14]);
        const char *const shards[] = {p, NULL};
        g_autofree char *merged = g_build_filename(ms_test_tmpdir(), "merged.csv", NULL);
        guint n_rows = 0;
        gboolean merged_ok = ms_sweep_merge_csv(shards, merged, &n_rows, &e[15]);
        CU_ASSERT_TRUE(t == NULL && m == NULL && c == NULL && s == NULL && r == NULL &&
                       ms == NULL && fl == NULL && tr == NULL && !imported);
        CU_ASSERT_TRUE(b == NULL && tt == NULL && mt == NULL && !manifest && table == NULL &&
                       !plotted && !merged_ok);
        for (guint k = 0; k < G_N_ELEMENTS(e); k++) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(e[k]);
            if (strstr(e[k]->message, p) == NULL ||
                strstr(e[k]->message, "not a regular file") == NULL) {
                fprintf(stderr, "\n  loader %u on %s: %s\n", k, p, e[k]->message);
                CU_FAIL("a loader did not refuse a file that is not regular");
            }
            g_clear_error(&e[k]);
        }
    }
}

/* A UTF-8 byte order mark first is read past, whole or streamed; one elsewhere is kept. */
static void
test_bom(void)
{
    GError *error = NULL;
    g_autofree char *path = ms_test_write_tmp("bom.ini", "\xef\xbb\xbf[model]\nx = \xef\xbb\xbf\n");
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(path, MS_INPUT_MODEL, &data, &len, &error));
    CU_ASSERT_EQUAL(len, 16);
    CU_ASSERT_STRING_EQUAL(data, "[model]\nx = \xef\xbb\xbf\n");
    FILE *f = ms_input_file_open(path, MS_INPUT_TRACE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[32] = {0};
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "[model]\n");
    fclose(f);
    /* Without a mark, the first bytes are the file's own. */
    g_autofree char *plain = ms_test_write_tmp("plain.txt", "ab");
    f = ms_input_file_open(plain, MS_INPUT_TRACE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "ab");
    fclose(f);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"regular files read whole", test_read},
        {"size limits", test_limits},
        {"devices, FIFOs and folders refused", test_not_regular},
        {"standard input where the kind allows it", test_stdin},
        {"kinds as documented", test_kinds},
        {"every loader checks its file", test_loaders},
        {"a UTF-8 byte order mark is read past", test_bom},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"input_file", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
