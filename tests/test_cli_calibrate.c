/* Tests of `moesim calibrate` and `moesim validate`: a calibration file written from measurements
 * that loads again, held-out reports, tables and runs compared with and without a calibration,
 * the --max-error bound (exit 1 with a readable message), plots, JSON reports, and exit 2 with a
 * clear message for every bad usage or input. */
#include "ms_test.h"
#include "sim/out/plot.h"
#include "sim/calib/calibration.h"

#include <json-glib/json-glib.h>

/* One run of moesim: its exit status and what it printed (cleared by the next run). */
typedef struct {
    int rc;
    char *out, *err;
} Cli;

static void
cli_clear(Cli *c)
{
    g_clear_pointer(&c->out, g_free);
    g_clear_pointer(&c->err, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Cli, cli_clear)

static void
cli(Cli *c, const char *const *args)
{
    cli_clear(c);
    c->rc = ms_test_run_moesim(args, &c->out, &c->err);
}

/* Whether text holds needle; says what it holds instead when not. */
static gboolean
has(const char *text, const char *needle)
{
    if (text && strstr(text, needle)) {
        return TRUE;
    }
    fprintf(stderr, "\n  output '%s' lacks '%s'\n", text ? text : "", needle);
    return FALSE;
}

static char *
tmp(const char *name)
{
    return g_build_filename(ms_test_tmpdir(), name, NULL);
}

/* Runs args and checks the exit code and that stderr holds needle (stdout for exit 0). */
static void
expect(const char *const *args, int rc, const char *needle)
{
    g_auto(Cli) r = {0};
    cli(&r, args);
    if (r.rc != rc) {
        fprintf(stderr, "\n  %s %s: exit %d, want %d\n  %s%s", args[0], args[1], r.rc, rc, r.out,
                r.err);
    }
    CU_ASSERT_EQUAL(r.rc, rc);
    CU_ASSERT_TRUE(has(rc == 0 ? r.out : r.err, needle));
}

/* Measurements in moesim's CSV: send/recv on both GPU pairs and allreduce on one node and on two,
 * each a straight line in size (a made-up cluster, close to vidur-dgx-a100). */
static char *
measurements(void)
{
    GString *s = g_string_new("# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n");
    static const struct {
        const char *kind;
        guint ranks, per_node;
        double alpha_us, gbps;
    } lines[] = {
        {"sendrecv", 2, 2, 9, 200},
        {"sendrecv", 2, 1, 25, 9},
        {"allreduce", 8, 8, 30, 100},
        {"allreduce", 16, 8, 90, 4},
    };
    for (guint l = 0; l < G_N_ELEMENTS(lines); l++) {
        for (guint k = 12; k <= 26; k++) {
            double bytes = (double)(1u << k);
            g_string_append_printf(s, "%s,%u,%u,%u,%.6f\n", lines[l].kind, 1u << k, lines[l].ranks,
                                   lines[l].per_node,
                                   lines[l].alpha_us + bytes / (lines[l].gbps * 1e3));
        }
    }
    char *path = ms_test_write_tmp("meas.csv", s->str);
    g_string_free(s, TRUE);
    return path;
}

static void
test_calibrate_usage(void)
{
    g_autofree char *meas = measurements();
    expect((const char *[]){"calibrate", "--help", NULL}, 0, "--holdout-configs");
    expect((const char *[]){"calibrate", "--topology", "vidur-dgx-a100", NULL}, 2,
           "moesim: calibrate: give at least one measurement INPUT");
    expect((const char *[]){"calibrate", meas, NULL}, 2, "--topology is required");
    expect((const char *[]){"calibrate", meas, "--bogus", NULL}, 2, "--bogus");
    expect((const char *[]){"calibrate", meas, "--topology", "no-such-topology", NULL}, 2,
           "no-such-topology");
    expect((const char *[]){"calibrate", "/nonexistent-dir/m.csv", "--topology", "dgx-a100", NULL},
           2, "/nonexistent-dir/m.csv");
    expect((const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--expert", "4096,x",
                            NULL},
           2, "--expert '4096,x': expected D_MODEL,D_FFN[,gated|plain] (e.g. 4096,14336,gated)");
    expect((const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--expert",
                            "4096,14336,fused", NULL},
           2, "--expert '4096,14336,fused'");
    expect((const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--holdout-configs",
                            "16y8", NULL},
           2, "moesim: --holdout-configs: held-out configuration '16y8' is not RANKSxPER_NODE");
    expect((const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--holdout-configs",
                            "8x8,4x4", NULL},
           2, "held-out configuration '4x4' matches no communication measurement");
    /* Two-node measurements on a single node: the row is named. */
    g_autofree char *where = g_strdup_printf("moesim: %s:18: no GPU pair for this transfer in "
                                             "topology 'dgx-a100'",
                                             meas);
    expect((const char *[]){"calibrate", meas, "--topology", "dgx-a100", NULL}, 2, where);
    g_autofree char *ar = ms_test_write_tmp("ar16.csv", "# moesim-measurements 1\n"
                                                        "kind,bytes,ranks,ranks_per_node,time_us\n"
                                                        "allreduce,1024,16,8,50\n"
                                                        "allreduce,2048,16,8,51\n"
                                                        "allreduce,4096,16,8,52\n"
                                                        "allreduce,8192,16,8,54\n");
    g_autofree char *ar_where = g_strdup_printf("moesim: %s:3: allreduce 16x8: 16 ranks with 8 per "
                                                "node do not fit topology 'dgx-a100' (1 nodes of 8 "
                                                "GPUs)",
                                                ar);
    expect((const char *[]){"calibrate", ar, "--topology", "dgx-a100", NULL}, 2, ar_where);
    expect((const char *[]){"validate", "--measured", ar, "--topology", "dgx-a100", NULL}, 2,
           ar_where);
    g_autofree char *launch = ms_test_write_tmp("launch.csv", "# moesim-measurements 1\n"
                                                              "kind,time_us\nlaunch,4\n");
    expect((const char *[]){"calibrate", launch, "--topology", "dgx-a100", NULL}, 2,
           "moesim: no point-to-point, collective or expert GEMM measurements to fit (1 rows "
           "read)");
    g_autofree char *bad = ms_test_write_tmp("bad.csv", "# moesim-measurements 1\n"
                                                        "kind,bytes,time_us\nallreduce,1KB,4\n");
    expect((const char *[]){"calibrate", bad, "--topology", "dgx-a100", NULL}, 2, "bad.csv:3:");
    /* Allreduce rows in two datatypes (an nccl-tests log, and one run with -d half): refused,
     * both named, before anything is fitted; also under the nccl model's fit. */
    g_autofree char *log =
        g_build_filename(ms_test_srcdir(), "tests", "data", "all_reduce_perf.log", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(log, &text, NULL, NULL));
    g_auto(GStrv) parts = g_strsplit(text, "     float", -1);
    g_autofree char *joined = g_strjoinv("      half", parts);
    g_autofree char *half = ms_test_write_tmp("all_reduce_half.log", joined);
    g_autofree char *mixed = g_strdup_printf("moesim: %s:20: allreduce rows of 8 ranks (4 per "
                                             "node) in fp32 and in fp16 (%s:20)",
                                             half, log);
    expect((const char *[]){"calibrate", log, half, "--topology", "dgx-a100-2node", NULL}, 2,
           mixed);
    expect((const char *[]){"calibrate", log, half, "--topology", "dgx-a100-2node", "--net", "nccl",
                            NULL},
           2, mixed);
    expect((const char *[]){"calibrate", half, "--topology", "dgx-a100-2node", NULL}, 0,
           "allreduce");
}

/* Under --net nccl a held-out evaluation also fits the nccl model's factors without the held-out
 * rows and reports how they predict them (text, and the JSON's "nccl NAME" with the spec). */
static void
test_calibrate_holdout_nccl(void)
{
    g_autofree char *meas = measurements();
    g_autofree char *json = tmp("nccl-holdout.json");
    g_auto(Cli) r = {0};
    cli(&r, (const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--net", "nccl",
                             "--holdout-configs", "8x8", "--json", json, NULL});
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "nccl network model fitted on 60 collective rows:"));
    CU_ASSERT_TRUE(has(r.out, "held out: configurations 8x8\n"));
    CU_ASSERT_TRUE(has(r.out, "held out, nccl model fitted without them on 45 rows: "
                              "configurations 8x8\n  --net 'nccl:latency_scale="));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    JsonObject *n = json_object_get_object_member(o, "nccl configurations 8x8");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_EQUAL(json_object_get_int_member(n, "rows"), 45);
    CU_ASSERT_TRUE(g_str_has_prefix(json_object_get_string_member(n, "spec"), "nccl:"));
    JsonObject *g = json_object_get_object_member(n, "allreduce 8x8");
    CU_ASSERT_EQUAL(json_object_get_int_member(g, "points"), 15);
    /* Fitted without them: another spec than the fit on every row. */
    const char *in_sample = strstr(r.out, "--net '"), *held = strstr(r.out, "without them");
    CU_ASSERT_FATAL(in_sample && held && in_sample < held);
    g_autofree char *first = g_strndup(in_sample, strcspn(in_sample, "\n"));
    const char *second = strstr(held, "--net '");
    CU_ASSERT_FATAL(second != NULL);
    CU_ASSERT_FALSE(g_str_has_prefix(second, first));
    /* Four rows left to fit four factors: the nccl model is not evaluated there, the command
     * still succeeds with the flow model's table. */
    GString *few =
        g_string_new("# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n");
    static const guint sizes[] = {10, 16, 22, 26};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        double bytes = (double)(1u << sizes[i]);
        g_string_append_printf(few, "allreduce,%u,8,8,%.6f\n", 1u << sizes[i], 30 + bytes / 1e5);
    }
    for (guint k = 12; k <= 26; k++) {
        double bytes = (double)(1u << k);
        g_string_append_printf(few, "allreduce,%u,16,8,%.6f\n", 1u << k, 90 + bytes / 4e3);
    }
    g_autofree char *path = ms_test_write_tmp("few.csv", few->str);
    g_string_free(few, TRUE);
    g_auto(Cli) f = {0};
    cli(&f, (const char *[]){"calibrate", path, "--topology", "vidur-dgx-a100", "--net", "nccl",
                             "--holdout-configs", "16x8", NULL});
    CU_ASSERT_EQUAL(f.rc, 0);
    CU_ASSERT_TRUE(has(f.out, "held out: configurations 16x8\n  allreduce 16x8"));
    CU_ASSERT_TRUE(has(f.out, "held out, nccl model: configurations 16x8 not evaluated: 4 "
                              "collective rows to fit 4 factors"));
}

static void
test_calibrate_writes_file(void)
{
    g_autofree char *meas = measurements();
    g_autofree char *cal_path = tmp("cal.ini");
    g_autofree char *json = tmp("fit.json");
    g_auto(Cli) r = {0};
    cli(&r, (const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--out", cal_path,
                             "--json", json, "--holdout-sizes", "--holdout-configs", "8x8", NULL});
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "calibration of vidur-dgx-a100 from 60 measurements\n"));
    CU_ASSERT_TRUE(has(r.out,
                       "  link nvswitch    15 points  latency    9.000 us  bandwidth  200.000 "
                       "GB/s  R^2 1.0000  largest residual 0.0%\n"));
    CU_ASSERT_TRUE(has(r.out, "  link nic         15 points  latency   25.000 us  bandwidth    "
                              "9.000 GB/s"));
    CU_ASSERT_TRUE(has(r.out, "  collective allreduce      16x8     15 points  overhead"));
    CU_ASSERT_TRUE(has(r.out, "held out: every other size\n"));
    CU_ASSERT_TRUE(has(r.out, "  allreduce 16x8                   7 points  median"));
    CU_ASSERT_TRUE(has(r.out, "held out: configurations 8x8\n  allreduce 8x8                   15 "
                              "points"));
    g_autofree char *wrote = g_strdup_printf("wrote %s\n", cal_path);
    CU_ASSERT_TRUE(has(r.out, wrote));
    /* The file loads and holds what was fitted. */
    GError *error = NULL;
    g_autoptr(MsCalibration) cal = ms_calibration_load(cal_path, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cal);
    MsCalibrationLink l;
    CU_ASSERT_TRUE(ms_calibration_link(cal, MS_LINK_NIC, &l));
    MS_ASSERT_REL(l.bandwidth, 9e9, 1e-6);
    MS_ASSERT_REL(ms_time_to_us(l.latency), 25, 1e-6);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_ALLREDUCE), 2);
    CU_ASSERT_STRING_EQUAL(ms_calibration_topology(cal), "vidur-dgx-a100");
    guint n = 0;
    const char *const *sources = ms_calibration_sources(cal, &n);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(sources[0], meas);
    /* The JSON report: the fit lines and each held-out evaluation. */
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "fits")), 6);
    JsonObject *sizes = json_object_get_object_member(o, "every other size");
    JsonObject *all = json_object_get_object_member(sizes, "all communication");
    CU_ASSERT_EQUAL(json_object_get_int_member(all, "points"), 4 * 7);
    JsonObject *cfg = json_object_get_object_member(o, "configurations 8x8");
    CU_ASSERT_EQUAL(
        json_object_get_int_member(json_object_get_object_member(cfg, "allreduce 8x8"), "points"),
        15);
    /* Same inputs, same bytes. */
    g_autofree char *again = tmp("cal2.ini");
    cli(&r,
        (const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--out", again, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    g_autofree char *a = NULL, *b = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(cal_path, &a, NULL, NULL));
    CU_ASSERT_TRUE(g_file_get_contents(again, &b, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(a, b);
}

static void
test_validate_tables(void)
{
    g_autofree char *meas = measurements();
    g_autofree char *cal = tmp("v.ini");
    g_auto(Cli) r = {0};
    cli(&r,
        (const char *[]){"calibrate", meas, "--topology", "vidur-dgx-a100", "--out", cal, NULL});
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    g_autofree char *json = tmp("v.json");
    g_autofree char *plots = tmp("plots");
    /* Plots need gnuplot (a build dependency; without it --plot is an error). */
    gboolean plot = ms_plot_available();
    cli(&r, (const char *[]){"validate", "--measured", meas, "--topology", "vidur-dgx-a100",
                             "--calibration", cal, "--max-error", "5%", "--stat", "p90", "--json",
                             json, plot ? "--plot" : NULL, plots, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "measurement               points    median       p90       max\n"));
    CU_ASSERT_TRUE(has(r.out, "sendrecv 2x2                  15 "));
    CU_ASSERT_TRUE(has(r.out, "allreduce 16x8                15 "));
    CU_ASSERT_TRUE(has(r.out, "all: 60 compared, median "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "no --calibration"));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    JsonObject *all = json_object_get_object_member(o, "all");
    CU_ASSERT_EQUAL(json_object_get_int_member(all, "points"), 60);
    /* Straight lines: the calibration reproduces them to a fraction of a percent. */
    CU_ASSERT_TRUE(json_object_get_double_member(all, "p90") < 0.01);
    CU_ASSERT_TRUE(
        json_object_has_member(json_object_get_object_member(o, "groups"), "allreduce 8x8"));
    static const char *const pngs[] = {"scatter.png", "errors.png", "curves.png"};
    for (guint i = 0; plot && i < G_N_ELEMENTS(pngs); i++) {
        g_autofree char *path = g_build_filename(plots, pngs[i], NULL);
        g_autofree char *data = NULL;
        gsize len = 0;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
        CU_ASSERT_TRUE(len > 1000);
        CU_ASSERT_EQUAL(memcmp(data, "\x89PNG", 4), 0);
    }
    /* The curves with a second model: a measured series and a line per model for each of the 4
     * groups, every one of the 15 sizes of each (send/recv's busbw is its algbw). */
    g_autofree char *curves = tmp("curves");
    cli(&r, (const char *[]){"validate", "--measured", meas, "--topology", "vidur-dgx-a100",
                             "--calibration", cal, "--plot", curves, "--plot-net", "flow",
                             "--plot-label", "calibrated", NULL});
    CU_ASSERT_EQUAL(r.rc, plot ? 0 : 2);
    g_autofree char *gp = g_build_filename(curves, "curves.png.gp", NULL);
    g_autofree char *script = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &script, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "title 'sendrecv 2x2 measured'"));
    /* The first curve named by --plot-label, the second by its model. */
    CU_ASSERT_PTR_NOT_NULL(
        strstr(script, "dt 1 lc rgb '#d62728' title 'allreduce 16x8 calibrated'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "dt 2 lc rgb '#d62728' title 'allreduce 16x8 flow'"));
    guint blocks = 0, rows = 0;
    for (const char *b = strstr(script, " << EOD\n"); b; b = strstr(b, " << EOD\n")) {
        b += strlen(" << EOD\n");
        blocks++;
        for (const char *e = strstr(b, "EOD\n"); b < e; b = strchr(b, '\n') + 1) {
            rows++;
        }
    }
    CU_ASSERT_EQUAL(blocks, 4 * 3);
    CU_ASSERT_EQUAL(rows, 4 * 3 * 15);
    /* sendrecv 2x2 at 4 KiB: 9 us + 4096 B at 200 GB/s, 4096 / 9.02048 us = 0.454077... GB/s. */
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "$d0 << EOD\n4096 0.45407"));
    expect((const char *[]){"validate", "-M", meas, "-t", "vidur-dgx-a100", "--plot-net", "flow",
                            NULL},
           2,
           "validate: --plot-net and --plot-label go with --measured tables, --topology "
           "and --plot");
    expect((const char *[]){"validate", "-M", meas, "-t", "vidur-dgx-a100", "--plot", curves,
                            "--plot-label", "a", "--plot-label", "b", NULL},
           2, "validate: 2 --plot-label for 1 curves (--net and 0 --plot-net)");
    expect((const char *[]){"validate", "-M", meas, "-t", "vidur-dgx-a100", "--plot", curves,
                            "--plot-net", "nccl:bogus=1", NULL},
           2, "--plot-net: ");
    g_autofree char *file = ms_test_write_tmp("curves-not-a-dir", "x");
    g_autofree char *under = g_build_filename(file, "sub", NULL);
    expect((const char *[]){"validate", "-M", meas, "-t", "vidur-dgx-a100", "--plot", under, NULL},
           2, "cannot create");
    /* Without the calibration: nominal figures, said so, and far off. */
    cli(&r, (const char *[]){"validate", "--measured", meas, "--topology", "vidur-dgx-a100",
                             "--max-error", "10%", NULL});
    CU_ASSERT_EQUAL(r.rc, 1);
    CU_ASSERT_TRUE(has(r.out, "# no --calibration: nominal figures of vidur-dgx-a100\n"));
    CU_ASSERT_TRUE(has(r.err, "moesim: validation failed: median error "));
    CU_ASSERT_TRUE(has(r.err, "% exceeds --max-error 10.00%\n"));
    /* The bound applies to the statistic asked for: max is above a bound the median is under. */
    cli(&r,
        (const char *[]){"validate", "--measured", meas, "--topology", "vidur-dgx-a100",
                         "--calibration", cal, "--max-error", "0.0001%", "--stat", "max", NULL});
    CU_ASSERT_EQUAL(r.rc, 1);
    CU_ASSERT_TRUE(has(r.err, "moesim: validation failed: max error "));
    CU_ASSERT_TRUE(has(r.err, "exceeds --max-error 0.00%"));
    /* Tables that do not fit the topology, a bad calibration file. */
    expect((const char *[]){"validate", "--measured", meas, "--topology", "dgx-a100", NULL}, 2,
           "meas.csv:18: no GPU pair for this transfer in topology 'dgx-a100'");
    g_autofree char *broken = ms_test_write_tmp("broken.ini", "[calibration]\nformat = 1\n"
                                                              "[collective allreduce 8y8]\n"
                                                              "alpha = 1us\n");
    expect((const char *[]){"validate", "--measured", meas, "--topology", "vidur-dgx-a100",
                            "--calibration", broken, NULL},
           2, "broken.ini:3: [collective allreduce 8y8]: configuration '8y8' is not");
    g_autofree char *empty = ms_test_write_tmp("empty.csv", "# moesim-measurements 1\n"
                                                            "kind,time_us\n");
    expect((const char *[]){"validate", "--measured", empty, "--topology", "vidur-dgx-a100", NULL},
           2, "moesim: validate: the measurements hold nothing to compare");
}

/* A result file of two ops whose durations are a and b us, and a step time. */
static char *
result(const char *name, const char *policy, double a, double b, double step)
{
    g_autofree char *text = g_strdup_printf(
        "{\"format\": \"moesim-result\", \"policy\": \"%s\", \"summary\": {\"step_time_us\": "
        "%g}, \"ops\": [{\"id\": 0, \"label\": \"a2a\", \"start_us\": 0, \"end_us\": %g}, "
        "{\"id\": 1, \"label\": \"expert\", \"start_us\": 100, \"end_us\": %g}]}",
        policy, step, a, 100 + b);
    return ms_test_write_tmp(name, text);
}

static void
test_validate_runs(void)
{
    g_autofree char *s1 = result("s1.json", "fifo", 100, 50, 1000);
    g_autofree char *m1 = result("m1.json", "fifo", 110, 50, 1100);
    g_autofree char *s2 = result("s2.json", "lina", 80, 40, 800);
    g_autofree char *m2 = result("m2.json", "lina", 80, 44, 900);
    g_autofree char *json = tmp("runs.json");
    g_auto(Cli) r = {0};
    cli(&r, (const char *[]){"validate", "-s", s1, "-M", m1, "-s", s2, "-M", m2, "--json", json,
                             "--max-error", "10%", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "fifo               2 "));
    CU_ASSERT_TRUE(has(r.out, "1000.0        1100.0   -9.09%"));
    CU_ASSERT_TRUE(has(r.out, "ranking of the 2 runs by step time: Kendall tau 1.000 (1 = same "
                              "order)\n"));
    /* Errors -9.09%, 0%, 0%, -9.09%: median 4.55%. */
    CU_ASSERT_TRUE(has(r.out, "all: 4 compared, median 4.55%, p90 9.09%, max 9.09%\n"));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    MS_ASSERT_REL(json_object_get_double_member(o, "kendall_tau"), 1.0, 1e-12);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "runs")), 2);
    /* Past the bound: exit 1 and why. */
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--max-error", "4%", NULL}, 1,
           "moesim: validation failed: median error 4.55% exceeds --max-error 4.00%\n");
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--max-error", "5%", NULL}, 0,
           "all: 2 compared");
    /* Ops at most --min-op long are left out: nothing left is an error, not a pass. */
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--min-op", "200us", "--max-error",
                            "1%", NULL},
           2, "no op measured longer than --min-op (200 us): nothing to compare");
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--min-op", "60us", NULL}, 0,
           "all: 1 compared");
}

static void
test_validate_usage(void)
{
    g_autofree char *s1 = result("u1.json", "fifo", 100, 50, 1000);
    g_autofree char *m1 = result("u2.json", "fifo", 110, 50, 1100);
    g_autofree char *other = ms_test_write_tmp(
        "other.json", "{\"format\": \"moesim-result\", \"ops\": [{\"id\": 0, \"label\": "
                      "\"a2a\", \"start_us\": 0, \"end_us\": 5}]}");
    expect((const char *[]){"validate", "--help", NULL}, 0, "--max-error");
    const char *pairs = "validate: give --simulated/--measured pairs, or --measured tables with "
                        "--topology (see --help)";
    expect((const char *[]){"validate", NULL}, 2, pairs);
    expect((const char *[]){"validate", "-s", s1, NULL}, 2, pairs);
    expect((const char *[]){"validate", "-s", s1, "-s", s1, "-M", m1, NULL}, 2, pairs);
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--topology", "dgx-a100", NULL}, 2,
           pairs);
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "extra", NULL}, 2,
           "validate: unexpected argument 'extra'");
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--stat", "mean", "--max-error", "5%",
                            NULL},
           2, "validate: --stat 'mean': use median, p90 or max");
    static const char *const bad_bounds[] = {"abc", "-5%", "5%%", "", "1e7"};
    for (guint i = 0; i < G_N_ELEMENTS(bad_bounds); i++) {
        g_autofree char *needle = g_strdup_printf("validate: --max-error '%s': ", bad_bounds[i]);
        expect((const char *[]){"validate", "-s", s1, "-M", m1, "--max-error", bad_bounds[i], NULL},
               2, needle);
    }
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--min-op", "2", NULL}, 2,
           "validate: --min-op: time '2' has no unit");
    expect((const char *[]){"validate", "-s", s1, "-M", "/nonexistent-dir/m.json", NULL}, 2,
           "moesim: /nonexistent-dir/m.json: ");
    expect((const char *[]){"validate", "-s", s1, "-M", other, NULL}, 2,
           "the results have 2 and 1 ops: they come from different schedules");
    g_autofree char *no_ops = ms_test_write_tmp("no-ops.json", "{\"format\": \"moesim-result\"}");
    expect((const char *[]){"validate", "-s", no_ops, "-M", m1, NULL}, 2,
           "no-ops.json: the result has no per-op records");
    g_autofree char *plots = ms_test_write_tmp("not-a-dir", "x");
    g_autofree char *under = g_build_filename(plots, "sub", NULL);
    expect((const char *[]){"validate", "-s", s1, "-M", m1, "--plot", under, NULL}, 2,
           "cannot create");
}

/* The commands of docs/calibration.md on the shipped Vidur A100 profiles. */
static void
test_vidur_documented(void)
{
    g_autofree char *cal = tmp("vidur.ini");
    g_auto(Cli) r = {0};
    cli(&r,
        (const char *[]){"calibrate", "nccl_send_recv_dgx.csv", "nccl_all_reduce_dgx.csv",
                         "mlp_llama3_8b.csv", "--topology", "vidur-dgx-a100", "--out", cal, NULL});
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "calibration of vidur-dgx-a100 from 14418 measurements\n"));
    CU_ASSERT_TRUE(has(r.out, "  link nic        994 points  latency   29.029 us  bandwidth    "
                              "7.771 GB/s"));
    CU_ASSERT_TRUE(has(r.out, "  gemm expert 4096x14336 gated: 451 token counts"));
    cli(&r, (const char *[]){"validate", "--measured", "nccl_all_reduce_dgx.csv", "--topology",
                             "vidur-dgx-a100", "--calibration", cal, "--max-error", "5%", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "all: 6958 compared, median 0.68%"));
}

/* With --json -, standard output is the JSON alone (the report goes to standard error), for
 * validate and calibrate, and calibrate --net nccl adds the fitted factors. */
static void
test_json_stdout(void)
{
    g_autofree char *log = g_build_filename(ms_test_srcdir(), "validate", "data", "corpus",
                                            "dgx-h100", "all_reduce_1x2.log", NULL);
    g_autofree char *topo = g_build_filename(ms_test_srcdir(), "validate", "data", "corpus",
                                             "dgx-h100", "topology.ini", NULL);
    const char *const *cmds[] = {
        (const char *[]){"validate", "--measured", log, "--topology", topo, "--json", "-", NULL},
        (const char *[]){"calibrate", "--topology", topo, log, "--net", "nccl:version=2.18.3",
                         "--json", "-", NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cmds); i++) {
        g_auto(Cli) r = {0};
        cli(&r, cmds[i]);
        CU_ASSERT_EQUAL(r.rc, 0);
        g_autoptr(JsonParser) p = json_parser_new();
        GError *error = NULL;
        CU_ASSERT_TRUE(json_parser_load_from_data(p, r.out, -1, &error));
        g_clear_error(&error);
        CU_ASSERT(strlen(r.err) > 0);
        if (i == 1) {
            CU_ASSERT(has(r.out, "\"latency_scale\""));
            CU_ASSERT(has(r.err, "--net 'nccl:version=2.18.3,latency_scale="));
        }
    }
}

/* A log as srun --label prints it: every line "TASK: ", no '#  Rank' lines (the column header
 * and data lines, as AWS's excerpts show them), an NCCL INFO line of task 1 and a second task's
 * table interleaved; times a straight line in size (30 us + size / 50 GB/s; task 1 twice as
 * slow). */
static char *
labelled_log(void)
{
    GString *s = g_string_new(NULL);
    for (guint task = 0; task < 2; task++) {
        g_string_append_printf(s,
                               " %u: #       size         count      type   redop    root     "
                               "time   algbw   busbw #wrong     time   algbw   busbw #wrong\n",
                               task);
    }
    g_string_append(s, " 1: host-1:77:77 [1] NCCL INFO comm 0x1 rank 1 nranks 16\n");
    for (guint k = 12; k <= 26; k++) {
        for (guint task = 0; task < 2; task++) {
            double us = (1 + task) * (30 + (double)(1u << k) / 50e3);
            g_string_append_printf(s,
                                   " %u: %12u %12u     float     sum      -1  %8.2f   0.00   "
                                   "0.00      0  %8.2f   0.00   0.00      0\n",
                                   task, 1u << k, 1u << (k - 2), us, us);
        }
    }
    char *path = ms_test_write_tmp("all_reduce_perf.log", s->str);
    g_string_free(s, TRUE);
    return path;
}

static void
test_log_shape(void)
{
    g_autofree char *log = labelled_log();
    expect((const char *[]){"calibrate", log, "--topology", "vidur-dgx-a100", NULL}, 2,
           "all_reduce_perf.log:4: data line before any '#  Rank");
    g_auto(Cli) r = {0};
    cli(&r, (const char *[]){"calibrate", log, "--topology", "vidur-dgx-a100", "--log-shape",
                             "16x8", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "calibration of vidur-dgx-a100 from 15 measurements"));
    CU_ASSERT_TRUE(has(r.out, "allreduce      16x8     15 points"));
    CU_ASSERT_TRUE(has(r.err, "moesim: notice: "));
    CU_ASSERT_TRUE(has(r.err, "all_reduce_perf.log: nccl-tests lines of 2 srun tasks (--label): "
                              "read those of task 0"));
    expect((const char *[]){"calibrate", log, "--topology", "vidur-dgx-a100", "--log-shape", "8x16",
                            NULL},
           2, "calibrate: --log-shape '8x16' is not RANKSxPER_NODE");
    cli(&r, (const char *[]){"validate", "--measured", log, "--topology", "vidur-dgx-a100",
                             "--log-shape", "16x8", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(has(r.out, "allreduce 16x8                15 "));
    CU_ASSERT_TRUE(has(r.err, "read those of task 0"));
    expect((const char *[]){"validate", "--measured", log, "--log-shape", "16x8", "--simulated",
                            log, NULL},
           2, "validate: --log-shape '16x8' goes with --measured tables and --topology");
    /* A log with rank lines is checked against the shape. */
    g_autofree char *ranked =
        g_build_filename(ms_test_srcdir(), "tests", "data", "all_reduce_perf.log", NULL);
    expect((const char *[]){"calibrate", ranked, "--topology", "vidur-dgx-a100", "--log-shape",
                            "16x8", NULL},
           2, "Rank: the '#  Rank' lines give 8 ranks, 4 per node, but the given shape is 16");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"calibrate usage and input errors", test_calibrate_usage},
        {"a held-out evaluation of the nccl model's factors", test_calibrate_holdout_nccl},
        {"calibrate writes a file that loads", test_calibrate_writes_file},
        {"validate measurement tables", test_validate_tables},
        {"validate runs", test_validate_runs},
        {"--json - gives JSON alone on standard output", test_json_stdout},
        {"validate usage and input errors", test_validate_usage},
        {"--log-shape for srun --label logs", test_log_shape},
        {"documented commands on the Vidur profiles", test_vidur_documented},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli_calibrate", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
