/* Tests of calibrate: rank placement, recovery of known link and collective figures from
 * measurements moesim generated itself on a "truth" topology, hop latencies folding into the
 * per-call overhead, calibrating in two passes, what the engine does with a calibrated
 * collective, held-out masks and evaluation, and every error with its code and message. */
#include "ms_test.h"
#include "validate/calibrate.h"
#include "validate/holdout.h"

/* The truth the fits must find: NVSwitch and NIC figures unlike vidur-dgx-a100's nominal ones. */
#define TRUE_NVSWITCH_BW 250e9
#define TRUE_NVSWITCH_LAT_US 1.1
#define TRUE_NIC_BW 11e9
#define TRUE_NIC_LAT_US 2.3
#define TOPOLOGY "vidur-dgx-a100"

static MsTopology *
load_topology(const char *name)
{
    GError *error = NULL;
    MsTopology *topo = ms_topology_load(name, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    return topo;
}

static MsTopology *
truth_topology(void)
{
    MsTopology *topo = load_topology(TOPOLOGY);
    /* ms_topology_set_class takes a figure per physical link: a GPU's route to the NVSwitch is
     * 12 NVLinks, so the truth of the route is 12 x this. */
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, 0, 1, &n, NULL);
    CU_ASSERT_FATAL(route != NULL && n > 0);
    CU_ASSERT_EQUAL(ms_topology_link_count(topo, route[0]), 12);
    CU_ASSERT(ms_topology_set_class(topo, MS_LINK_NVSWITCH, TRUE_NVSWITCH_BW / 12,
                                    ms_time_from_us(TRUE_NVSWITCH_LAT_US)) > 0);
    CU_ASSERT(ms_topology_set_class(topo, MS_LINK_NIC, TRUE_NIC_BW,
                                    ms_time_from_us(TRUE_NIC_LAT_US)) > 0);
    return topo;
}

/* A measured row built in memory (line is its place in a set). */
static MsMeasurement
row_of(MsMeasurementKind kind, guint ranks, guint per_node, guint64 bytes, double seconds,
       guint line)
{
    MsMeasurement row = {
        .kind = kind,
        .bytes = bytes,
        .ranks = ranks,
        .ranks_per_node = per_node,
        .label = "",
        .seconds = seconds,
        .min_s = NAN,
        .median_s = NAN,
        .mean_s = NAN,
        .source = "synthetic",
        .line = line,
    };
    return row;
}

static void
add_row(MsMeasurementSet *set, MsMeasurementKind kind, guint ranks, guint per_node, guint64 bytes,
        double seconds)
{
    MsMeasurement row =
        row_of(kind, ranks, per_node, bytes, seconds, ms_measurement_set_size(set) + 1);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_measurement_set_add(set, &row, &error));
    CU_ASSERT_PTR_NULL(error);
}

/* A size sweep 1 KiB .. 64 MiB (17 powers of two) of one configuration, timed by moesim on truth
 * under truth_cal (may be NULL). */
static void
add_sweep(MsMeasurementSet *set, const MsTopology *truth, const MsCalibration *truth_cal,
          MsMeasurementKind kind, guint ranks, guint per_node)
{
    for (guint k = 10; k <= 26; k++) {
        add_row(set, kind, ranks, per_node, G_GUINT64_CONSTANT(1) << k, 1.0);
        guint last = ms_measurement_set_size(set) - 1;
        MsMeasurement *row = (MsMeasurement *)ms_measurement_set_get(set, last);
        GError *error = NULL;
        CU_ASSERT_TRUE(ms_calibrate_predict(truth, truth_cal, row, &row->seconds, &error));
        CU_ASSERT_PTR_NULL(error);
    }
}

static const guint configs[][2] = {{8, 8}, {16, 8}, {4, 2}};

/* Send/recv on both GPU pairs and allreduce in three configurations. */
static MsMeasurementSet *
synthetic_set(const MsTopology *truth, const MsCalibration *truth_cal)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    add_sweep(set, truth, truth_cal, MS_MEASUREMENT_SENDRECV, 2, 2);
    add_sweep(set, truth, truth_cal, MS_MEASUREMENT_SENDRECV, 2, 1);
    for (guint c = 0; c < G_N_ELEMENTS(configs); c++) {
        add_sweep(set, truth, truth_cal, MS_MEASUREMENT_ALLREDUCE, configs[c][0], configs[c][1]);
    }
    return set;
}

static void
test_place(void)
{
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    guint out[16];
    CU_ASSERT_TRUE(ms_calibrate_place(topo, 4, 2, out, NULL));
    CU_ASSERT_EQUAL(out[0], 0);
    CU_ASSERT_EQUAL(out[1], 1);
    CU_ASSERT_EQUAL(out[2], 8);
    CU_ASSERT_EQUAL(out[3], 9);
    CU_ASSERT_TRUE(ms_calibrate_place(topo, 16, 8, out, NULL));
    for (guint i = 0; i < 16; i++) {
        CU_ASSERT_EQUAL(out[i], i);
    }
    CU_ASSERT_TRUE(ms_calibrate_place(topo, 3, 2, out, NULL));
    CU_ASSERT_EQUAL(out[2], 8);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_calibrate_place(topo, 24, 8, out, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "24 ranks with 8 per node do not fit topology 'vidur-dgx-a100' (2 nodes of 8 "
                    "GPUs)");
    CU_ASSERT_FALSE(ms_calibrate_place(topo, 16, 16, out, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "16 ranks with 16 per node do not fit");
    CU_ASSERT_FALSE(ms_calibrate_place(topo, 0, 1, out, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT, "0 ranks");
    g_autoptr(MsTopology) one = load_topology("dgx-a100");
    CU_ASSERT_FALSE(ms_calibrate_place(one, 16, 8, out, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "16 ranks with 8 per node do not fit topology 'dgx-a100' (1 nodes of 8 GPUs)");
}

/* Every link of the route a -> b has the same bandwidth and latency on both topologies. */
static void
assert_route_matches(const MsTopology *fitted, const MsTopology *truth, guint a, guint b)
{
    guint n = 0, m = 0;
    const guint32 *rf = ms_topology_gpu_route(fitted, a, b, &n, NULL);
    const guint32 *rt = ms_topology_gpu_route(truth, a, b, &m, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(n, m);
    for (guint i = 0; i < n; i++) {
        const MsLink *lf = ms_topology_link(fitted, rf[i]), *lt = ms_topology_link(truth, rt[i]);
        CU_ASSERT_EQUAL(lf->klass, lt->klass);
        if (isfinite(lt->bandwidth)) {
            MS_ASSERT_REL(lf->bandwidth, lt->bandwidth, 1e-6);
        }
        CU_ASSERT_DOUBLE_EQUAL((double)lf->latency, (double)lt->latency,
                               1e-6 * (double)lt->latency + 1);
    }
}

/* The class fit stands for the route: its beta is the route's bandwidth, its alpha the sum of
 * the route's latencies. */
static void
assert_class_fit(const MsCalibration *cal, const MsTopology *truth, MsLinkClass klass, guint a,
                 guint b)
{
    MsCalibrationLink l;
    CU_ASSERT_TRUE_FATAL(ms_calibration_link(cal, klass, &l));
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(truth, a, b, &n, NULL);
    MS_ASSERT_REL(l.bandwidth, ms_topology_route_bandwidth(truth, route, n), 1e-6);
    MS_ASSERT_REL((double)l.latency, (double)ms_topology_route_latency(truth, route, n), 1e-6);
    MS_ASSERT_REL(l.r2, 1.0, 1e-9);
    CU_ASSERT_TRUE(l.max_residual < 1e-6);
    CU_ASSERT_EQUAL(l.points, 17);
}

/* Every row of set predicted by the fitted calibration on the fitted topology within rel (and
 * the 2 ps that rounding to whole picoseconds may cost). */
static void
assert_reproduces(const MsTopology *fitted, const MsCalibration *cal, const MsMeasurementSet *set,
                  double rel)
{
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *row = ms_measurement_set_get(set, i);
        double t = 0;
        CU_ASSERT_TRUE(ms_calibrate_predict(fitted, cal, row, &t, NULL));
        if (fabs(t - row->seconds) > rel * row->seconds + 2e-12) {
            fprintf(stderr, "\n  %s %ux%u %" G_GUINT64_FORMAT " B: predicted %g s, measured %g s\n",
                    ms_measurement_kind_name(row->kind), row->ranks, row->ranks_per_node,
                    row->bytes, t, row->seconds);
            CU_FAIL("a synthetic measurement is not reproduced");
        }
    }
}

/* Truth for collectives: per-configuration overheads and one efficiency table (1 up to 1 MiB,
 * falling to 0.55 at 64 MiB, with corners at even powers of two so that a table fitted on every
 * other power of two interpolates it exactly), applied by moesim's own collective model. */
static MsCalibration *
truth_collectives(gboolean trivial)
{
    MsCalibration *cal = ms_calibration_new();
    if (trivial) {
        /* Overhead 0, efficiency 1: the bandwidth part alone. */
        CU_ASSERT_TRUE(ms_calibration_set_collective(cal, MS_MEASUREMENT_ALLREDUCE, 0, NULL, NULL));
        return cal;
    }
    static const double sizes[] = {1048576, 4194304, 67108864}, eff[] = {1.0, 0.7, 0.55};
    const MsEffTable table = {3, (double *)sizes, (double *)eff};
    static const double alpha_us[] = {12, 40, 25};
    for (guint c = 0; c < G_N_ELEMENTS(configs); c++) {
        CU_ASSERT_TRUE(ms_calibration_set_collective_config(
            cal, MS_MEASUREMENT_ALLREDUCE, configs[c][0], configs[c][1],
            ms_time_from_us(alpha_us[c]), &table, NULL));
    }
    return cal;
}

/* The synthetic measurements of the full truth (links, overheads and tables). */
static MsMeasurementSet *
truth_measurements(void)
{
    g_autoptr(MsTopology) truth = truth_topology();
    g_autoptr(MsCalibration) truth_cal = truth_collectives(FALSE);
    return synthetic_set(truth, truth_cal);
}

static void
recover(gboolean trivial)
{
    g_autoptr(MsTopology) truth = truth_topology();
    g_autoptr(MsCalibration) truth_cal = truth_collectives(trivial);
    g_autoptr(MsMeasurementSet) set = synthetic_set(truth, truth_cal);
    g_autoptr(MsTopology) fitted = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibrate(fitted, set, NULL, cal, report, &error));
    CU_ASSERT_PTR_NULL(error);
    /* Links: the class figures and every link of both GPU routes. */
    assert_class_fit(cal, truth, MS_LINK_NVSWITCH, 0, 1);
    assert_class_fit(cal, truth, MS_LINK_NIC, 0, 8);
    assert_route_matches(fitted, truth, 0, 1);
    assert_route_matches(fitted, truth, 0, 8);
    assert_route_matches(fitted, truth, 3, 12);
    /* Collectives: each configuration's overhead and efficiencies. */
    for (guint c = 0; c < G_N_ELEMENTS(configs); c++) {
        MsTime alpha = 0, want = 0;
        const MsEffTable *table = NULL, *want_table = NULL;
        CU_ASSERT_TRUE(ms_calibration_collective_lookup(
            cal, MS_MEASUREMENT_ALLREDUCE, configs[c][0], configs[c][1], &alpha, &table));
        CU_ASSERT_TRUE(ms_calibration_collective_lookup(
            truth_cal, MS_MEASUREMENT_ALLREDUCE, configs[c][0], configs[c][1], &want, &want_table));
        CU_ASSERT_DOUBLE_EQUAL((double)alpha, (double)want, 1e-6 * (double)want + 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(table);
        for (guint i = 0; i < table->n; i++) {
            double expect = want_table ? ms_eff_table_eval(want_table, table->sizes[i]) : 1.0;
            /* Times are whole picoseconds (a 1 KiB ring step of 20 ns is good to 5e-5) and ring
             * chunks whole bytes. */
            double rel = table->sizes[i] < 16384 ? 1e-4 : 5e-5;
            if (fabs(table->ratios[i] / expect - 1) > rel) {
                fprintf(stderr, "\n  %ux%u at %g B: efficiency %.9g, want %.9g\n", configs[c][0],
                        configs[c][1], table->sizes[i], table->ratios[i], expect);
                CU_FAIL("a fitted efficiency is not the truth's");
            }
        }
    }
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_ALLREDUCE), 3);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_SENDRECV), 2);
    assert_reproduces(fitted, cal, set, 1e-5);
    /* Two link lines, five collective lines, each in-sample residual ~0. */
    CU_ASSERT_EQUAL(report->len, 7);
    CU_ASSERT_TRUE(g_str_has_prefix(report->pdata[0], "link nvswitch    17 points  latency    "
                                                      "2.200 us  bandwidth  250.000 GB/s"));
    CU_ASSERT_TRUE(g_str_has_prefix(report->pdata[1], "link nic         17 points  latency    "
                                                      "4.600 us  bandwidth   11.000 GB/s"));
    for (guint i = 2; i < report->len; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(report->pdata[i], "fit median 0.00% largest 0.0%"));
    }
    CU_ASSERT_STRING_EQUAL(ms_calibration_topology(cal), TOPOLOGY);
}

static void
test_recover_bandwidth_part(void)
{
    recover(TRUE);
}

static void
test_recover_overheads_and_tables(void)
{
    recover(FALSE);
}

/* Measured by the nominal model itself, hop latencies included: on rings whose every hop is of
 * one class, the latencies add up to a constant, which becomes the overhead exactly:
 * 2 (n - 1) ring steps x the route latency. */
static void
test_latency_folds_into_overhead(void)
{
    g_autoptr(MsTopology) truth = truth_topology();
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    add_sweep(set, truth, NULL, MS_MEASUREMENT_SENDRECV, 2, 2);
    add_sweep(set, truth, NULL, MS_MEASUREMENT_SENDRECV, 2, 1);
    add_sweep(set, truth, NULL, MS_MEASUREMENT_ALLREDUCE, 8, 8);
    add_sweep(set, truth, NULL, MS_MEASUREMENT_ALLREDUCE, 2, 1);
    g_autoptr(MsTopology) fitted = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_calibrate(fitted, set, NULL, cal, NULL, NULL));
    const double intra = 2 * TRUE_NVSWITCH_LAT_US, inter = 2 * TRUE_NIC_LAT_US;
    const struct {
        MsMeasurementKind kind;
        guint ranks, per_node;
        double alpha_us;
    } want[] = {
        {MS_MEASUREMENT_ALLREDUCE, 8, 8, 14 * intra},
        {MS_MEASUREMENT_ALLREDUCE, 2, 1, 2 * inter},
        {MS_MEASUREMENT_SENDRECV, 2, 2, intra},
        {MS_MEASUREMENT_SENDRECV, 2, 1, inter},
    };
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        MsTime alpha = 0;
        const MsEffTable *table = NULL;
        CU_ASSERT_TRUE(ms_calibration_collective_lookup(cal, want[i].kind, want[i].ranks,
                                                        want[i].per_node, &alpha, &table));
        MS_ASSERT_REL(ms_time_to_us(alpha), want[i].alpha_us, 1e-6);
        for (guint k = 0; table && k < table->n; k++) {
            MS_ASSERT_REL(table->ratios[k], 1.0, 1e-5);
        }
    }
    assert_reproduces(fitted, cal, set, 1e-4);
}

/* Links from send/recv first, collectives in a second call on a fresh topology: the same
 * calibration as one call on everything. */
static void
test_two_passes(void)
{
    g_autoptr(MsTopology) truth = truth_topology();
    g_autoptr(MsMeasurementSet) set = truth_measurements();
    guint n = ms_measurement_set_size(set);
    g_autofree gboolean *links = g_new(gboolean, n), *colls = g_new(gboolean, n);
    for (guint i = 0; i < n; i++) {
        links[i] = ms_measurement_set_get(set, i)->kind == MS_MEASUREMENT_SENDRECV;
        colls[i] = !links[i];
    }
    g_autoptr(MsTopology) one_topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) one = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_calibrate(one_topo, set, NULL, one, NULL, NULL));
    g_autoptr(MsCalibration) two = ms_calibration_new();
    g_autoptr(MsTopology) first = load_topology(TOPOLOGY);
    MsCalibrateOptions opts = {links, 4096, 14336, TRUE};
    CU_ASSERT_TRUE_FATAL(ms_calibrate(first, set, &opts, two, NULL, NULL));
    g_autoptr(MsTopology) second = load_topology(TOPOLOGY);
    opts.use = colls;
    CU_ASSERT_TRUE_FATAL(ms_calibrate(second, set, &opts, two, NULL, NULL));
    g_autofree char *a = ms_calibration_to_data(one, NULL);
    g_autofree char *b = ms_calibration_to_data(two, NULL);
    /* The send/recv collective entries come from the first pass only; compare the allreduce
     * groups and the links. */
    g_autofree char *a_ar = g_strdup(strstr(a, "[collective allreduce"));
    g_autofree char *b_ar = g_strdup(strstr(b, "[collective allreduce"));
    *strstr(a_ar, "[collective sendrecv") = '\0';
    *strstr(b_ar, "[collective sendrecv") = '\0';
    CU_ASSERT_STRING_EQUAL(a_ar, b_ar);
    assert_route_matches(second, truth, 0, 8);
}

/* What the engine does with a collective: alpha, no hop latency, bytes (or the matrix)
 * stretched by 1 / efficiency at the call's size. */
static void
test_adjust_collective(void)
{
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    static const double sizes[] = {1000, 1000000}, eff[] = {0.5, 0.8};
    const MsEffTable table = {2, (double *)sizes, (double *)eff};
    CU_ASSERT_TRUE(ms_calibration_set_collective_config(cal, MS_MEASUREMENT_ALLTOALL, 4, 4,
                                                        ms_time_from_us(7), &table, NULL));
    CU_ASSERT_TRUE(ms_calibration_set_collective_config(cal, MS_MEASUREMENT_ALLREDUCE, 16, 8,
                                                        ms_time_from_us(30), &table, NULL));
    /* Allreduce of 16 ranks over two nodes, 10 MB: efficiency clamped to 0.8. */
    MsCollSpec ar = {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = 10000000};
    CU_ASSERT_PTR_NULL(ms_calibration_adjust_collective(cal, topo, &ar));
    CU_ASSERT_EQUAL(ar.alpha, ms_time_from_us(30));
    CU_ASSERT_TRUE(ar.no_hop_latency);
    CU_ASSERT_EQUAL(ar.bytes, 12500000);
    /* Alltoall of 4 ranks in one node with a matrix: per-rank size 1000 B, efficiency 0.5. */
    guint64 matrix[16];
    for (guint k = 0; k < 16; k++) {
        matrix[k] = k % 5 == 0 ? 0 : 1000 / 3 + (k == 1);
    }
    guint ranks[4] = {0, 1, 2, 3};
    MsCollSpec a2a = {.op = MS_COLL_ALLTOALL, .n_ranks = 4, .ranks = ranks, .matrix = matrix};
    g_autofree guint64 *scaled = ms_calibration_adjust_collective(cal, topo, &a2a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(scaled);
    CU_ASSERT_PTR_EQUAL(a2a.matrix, scaled);
    CU_ASSERT_EQUAL(scaled[1], 668);
    CU_ASSERT_EQUAL(scaled[2], 666);
    CU_ASSERT_EQUAL(scaled[0], 0);
    CU_ASSERT_EQUAL(matrix[1], 334);
    CU_ASSERT_EQUAL(a2a.alpha, ms_time_from_us(7));
    /* Uncalibrated kind: spec untouched. */
    MsCollSpec rs = {.op = MS_COLL_REDUCESCATTER, .n_ranks = 8, .bytes = 4096};
    CU_ASSERT_PTR_NULL(ms_calibration_adjust_collective(cal, topo, &rs));
    CU_ASSERT_EQUAL(rs.bytes, 4096);
    CU_ASSERT_EQUAL(rs.alpha, 0);
    CU_ASSERT_FALSE(rs.no_hop_latency);
}

/* Without a calibration a collective pays every hop latency, as the engine's do: a 2-rank ring
 * across nodes takes 2 steps of (route latency + half the buffer at the NIC's bandwidth). */
static void
test_predict_nominal(void)
{
    g_autoptr(MsTopology) truth = truth_topology();
    MsMeasurement row = row_of(MS_MEASUREMENT_ALLREDUCE, 2, 1, 22000000, 1, 1);
    double t = 0;
    CU_ASSERT_TRUE(ms_calibrate_predict(truth, NULL, &row, &t, NULL));
    double step = 2 * TRUE_NIC_LAT_US * 1e-6 + 11000000 / TRUE_NIC_BW;
    MS_ASSERT_REL(t, 2 * step, 1e-6);
    row.kind = MS_MEASUREMENT_SENDRECV;
    CU_ASSERT_TRUE(ms_calibrate_predict(truth, NULL, &row, &t, NULL));
    MS_ASSERT_REL(t, 2 * TRUE_NIC_LAT_US * 1e-6 + 22000000 / TRUE_NIC_BW, 1e-6);
    /* A launch row is the GPU's launch overhead (4 us on this topology). */
    row.kind = MS_MEASUREMENT_LAUNCH;
    CU_ASSERT_TRUE(ms_calibrate_predict(truth, NULL, &row, &t, NULL));
    MS_ASSERT_REL(t, 4e-6, 1e-9);
}

/* Rows of one configuration in two datatypes are refused, naming both rows and datatypes;
 * another kind or configuration in another datatype, and rows without one, mix freely. */
static void
test_mixed_dtypes(void)
{
    static const struct {
        MsMeasurementKind kind;
        guint ranks;
        const char *dtype;
    } rows[] = {
        {MS_MEASUREMENT_ALLREDUCE, 8, "fp32"},  {MS_MEASUREMENT_ALLREDUCE, 8, "fp32"},
        {MS_MEASUREMENT_ALLREDUCE, 8, NULL},    {MS_MEASUREMENT_ALLTOALL, 8, "fp16"},
        {MS_MEASUREMENT_ALLREDUCE, 16, "fp16"}, {MS_MEASUREMENT_ALLREDUCE, 8, "bf16"},
    };
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        if (i == G_N_ELEMENTS(rows) - 1) {
            CU_ASSERT_TRUE(ms_calibrate_check_dtypes(set, &error));
            CU_ASSERT_PTR_NULL(error);
        }
        MsMeasurement row = row_of(rows[i].kind, rows[i].ranks, 8, 1024u << i, 20e-6, i + 1);
        row.dtype = rows[i].dtype;
        CU_ASSERT_TRUE(ms_measurement_set_add(set, &row, &error));
    }
    CU_ASSERT_FALSE(ms_calibrate_check_dtypes(set, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_MIXED,
                    "synthetic:6: allreduce rows of 8 ranks (8 per node) in fp32 and in bf16 "
                    "(synthetic:1)");
    CU_ASSERT_FALSE(ms_calibrate(topo, set, NULL, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_MIXED, "fp32 and in bf16");
}

static void
test_no_data(void)
{
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_calibrate(topo, set, NULL, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA,
                    "no point-to-point, collective or expert GEMM measurements to fit (0 rows "
                    "read)");
    /* Launch rows alone, and collectives left out by the mask. */
    add_row(set, MS_MEASUREMENT_LAUNCH, 1, 1, 0, 4e-6);
    for (guint k = 0; k < 6; k++) {
        add_row(set, MS_MEASUREMENT_ALLREDUCE, 8, 8, 1024u << k, 20e-6);
    }
    gboolean use[7] = {TRUE};
    MsCalibrateOptions opts = {use, 4096, 14336, TRUE};
    CU_ASSERT_FALSE(ms_calibrate(topo, set, &opts, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA, "(7 rows read)");
    /* Fewer than 4 sizes say nothing about a configuration. */
    for (guint i = 0; i < 4; i++) {
        use[i] = TRUE;
    }
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    CU_ASSERT_FALSE(ms_calibrate(topo, set, &opts, cal, report, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA, "no point-to-point");
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_ALLREDUCE), 0);
    CU_ASSERT_EQUAL_FATAL(report->len, 1);
    CU_ASSERT_STRING_EQUAL(report->pdata[0], "collective allreduce       8x8      3 points  not "
                                             "fitted: at least 4 sizes are needed");
    /* The fourth size makes it. */
    use[4] = TRUE;
    CU_ASSERT_TRUE(ms_calibrate(topo, set, &opts, cal, NULL, &error));
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_ALLREDUCE), 1);
}

/* Rows under forced NCCL channels or queue pairs describe another configuration: the flow
 * model's tables leave them out (and say so); under the nccl model a row's channels apply; an
 * all-to-all under an allreduce is the NIC fit's to predict. */
static void
test_forced_configuration(void)
{
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    for (guint k = 0; k < 6; k++) {
        MsMeasurement row = row_of(MS_MEASUREMENT_ALLREDUCE, 8, 8, 1024u << (2 * k), 20e-6, k + 1);
        row.channels = 2;
        row.qps = k % 2 ? 4 : 0;
        CU_ASSERT_TRUE(ms_measurement_set_add(set, &row, NULL));
    }
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_calibrate(topo, set, NULL, cal, report, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA,
                    "(6 rows read; those under forced NCCL channels or queue pairs are for "
                    "calibrate --net nccl)");
    CU_ASSERT_EQUAL_FATAL(report->len, 1);
    CU_ASSERT_STRING_EQUAL(report->pdata[0], "6 rows under forced NCCL channels or queue pairs "
                                             "left out (the nccl model's fit uses them)");
    /* NCCL's all-to-all over two DGX A100 on one channel: fewer connections, slower. */
    g_autoptr(MsTopology) two = load_topology("dgx-a100-2node");
    MsNetSpec spec;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl", &spec, NULL));
    g_autoptr(MsNetModel) net = ms_net_model_new(&spec, two, NULL);
    MsMeasurement row = row_of(MS_MEASUREMENT_ALLTOALL, 16, 8, 32u << 20, 1, 1);
    double nccl_own = 0, one = 0;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(two, NULL, net, &row, &nccl_own, &error));
    row.channels = 1;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(two, NULL, net, &row, &one, &error));
    CU_ASSERT(one > 1.05 * nccl_own);
    MsNetSpec forced;
    ms_calibrate_row_spec(&spec, &row, &forced);
    CU_ASSERT_EQUAL(forced.nccl.min_channels, 1);
    CU_ASSERT_EQUAL(forced.nccl.max_channels, 1);
    CU_ASSERT_TRUE(ms_calibrate_row_default(&(MsMeasurement){.kind = MS_MEASUREMENT_ALLTOALL}));
    CU_ASSERT_FALSE(ms_calibrate_row_default(&row));
    MsMeasurement under = row_of(MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE, 8, 8, 1u << 20, 1, 9);
    under.background_bytes = 1u << 20;
    CU_ASSERT_FALSE(ms_calibrate_predict_net(topo, NULL, net, &under, &one, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                    "synthetic:9: an alltoall_under_allreduce row is predicted by the NIC fit");
}

/* The prediction of a row at a release. */
static double
predict_at(const MsTopology *topo, const char *net_spec, const MsMeasurement *row)
{
    MsNetSpec spec;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(net_spec, &spec, NULL));
    g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, NULL);
    double t = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, row, &t, &error));
    return t;
}

/* Under version=log a row runs at the release its log printed (2.6.4 as 2.8.0, the oldest
 * modelled), without one at the default; any other spec keeps its own release. Two DGX A100 at
 * 64 KiB: 2.10 and 2.18 differ (2.18's ring launches every network step, its LL latencies). */
static void
test_release_per_row(void)
{
    g_autoptr(MsTopology) two = load_topology("dgx-a100-2node");
    MsMeasurement row = row_of(MS_MEASUREMENT_ALLREDUCE, 16, 8, 64u << 10, 1, 1);
    double at210 = predict_at(two, "nccl:version=2.10.3", &row);
    double at218 = predict_at(two, "nccl:version=2.18.6", &row);
    double at280 = predict_at(two, "nccl:version=2.8.0", &row);
    CU_ASSERT_TRUE(fabs(at210 - at218) > 0.01 * at218);
    MS_ASSERT_REL(predict_at(two, "nccl:version=log", &row), at218, 1e-12);
    row.nccl_version = MS_NCCL_VERSION(2, 10, 3);
    MS_ASSERT_REL(predict_at(two, "nccl:version=log", &row), at210, 1e-12);
    MS_ASSERT_REL(predict_at(two, "nccl:version=2.18.6", &row), at218, 1e-12);
    MS_ASSERT_REL(predict_at(two, "nccl", &row), at218, 1e-12);
    row.nccl_version = MS_NCCL_VERSION(2, 6, 4);
    MS_ASSERT_REL(predict_at(two, "nccl:version=log", &row), at280, 1e-12);
}

static void
test_placement_errors(void)
{
    g_autoptr(MsTopology) one = load_topology("dgx-a100");
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    for (guint k = 0; k < 4; k++) {
        add_row(set, MS_MEASUREMENT_ALLREDUCE, 8, 8, 1024u << k, 20e-6 + k * 1e-6);
    }
    for (guint k = 0; k < 4; k++) {
        add_row(set, MS_MEASUREMENT_ALLREDUCE, 16, 8, 1024u << k, 30e-6 + k * 1e-6);
    }
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_calibrate(one, set, NULL, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "synthetic:5: allreduce 16x8: 16 ranks with 8 per node do not fit topology "
                    "'dgx-a100' (1 nodes of 8 GPUs)");
    double t;
    CU_ASSERT_FALSE(ms_calibrate_predict(one, NULL, ms_measurement_set_get(set, 6), &t, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "synthetic:7: allreduce 16x8: 16 ranks");
    /* A transfer across nodes on a single node. */
    g_autoptr(MsMeasurementSet) p2p = ms_measurement_set_new();
    for (guint k = 0; k < 4; k++) {
        add_row(p2p, MS_MEASUREMENT_SENDRECV, 2, 1, 1024u << k, 20e-6 + k * 1e-6);
    }
    CU_ASSERT_FALSE(ms_calibrate(one, p2p, NULL, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "synthetic:1: no GPU pair for this transfer in topology 'dgx-a100'");
}

/* The expert shape must be one the profile holds. */
static void
test_expert_shape(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("mlp_llama3_8b.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    MsCalibrateOptions opts = {NULL, 1024, 4096, TRUE};
    CU_ASSERT_FALSE(ms_calibrate(topo, set, &opts, cal, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING,
                    "no token count has mlp_up_proj, mlp_act and mlp_down_proj rows for an expert "
                    "with d_model 1024, d_ffn 4096 (gated)");
    CU_ASSERT_FALSE(ms_calibration_has_gemm(cal));
    /* The right shape fits the curve, with the GPU's launch overhead recorded. */
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    CU_ASSERT_TRUE(ms_calibrate(topo, set, NULL, cal, report, &error));
    CU_ASSERT_TRUE(ms_calibration_has_gemm(cal));
    CU_ASSERT_EQUAL(report->len, 1);
    CU_ASSERT_TRUE(
        g_str_has_prefix(report->pdata[0], "gemm expert 4096x14336 gated: 451 token counts"));
}

/* Rows of two configurations interleaved, sizes out of order, a label apart. */
static MsMeasurementSet *
mask_set(void)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    static const guint64 sizes[] = {4096, 1024, 2048, 8192};
    for (guint k = 0; k < 4; k++) {
        add_row(set, MS_MEASUREMENT_ALLREDUCE, 8, 4, sizes[k], 1e-5);
        add_row(set, MS_MEASUREMENT_ALLREDUCE, 4, 4, sizes[k], 1e-5);
    }
    add_row(set, MS_MEASUREMENT_LAUNCH, 1, 1, 0, 4e-6);
    return set;
}

static void
test_holdout_alternate_sizes(void)
{
    g_autoptr(MsMeasurementSet) set = mask_set();
    gboolean held[9], other[9];
    ms_holdout_alternate_sizes(set, 1, held);
    ms_holdout_alternate_sizes(set, 0, other);
    /* In size order 1024, 2048, 4096, 8192 each configuration holds out 2048 and 8192. */
    guint count = 0;
    for (guint i = 0; i < 8; i++) {
        guint64 b = ms_measurement_set_get(set, i)->bytes;
        CU_ASSERT_EQUAL(held[i], b == 2048 || b == 8192);
        CU_ASSERT_EQUAL(other[i], !held[i]);
        count += held[i];
    }
    CU_ASSERT_EQUAL(count, 4);
    /* The single launch row is the first of its group: held with offset 0 only. */
    CU_ASSERT_FALSE(held[8]);
    CU_ASSERT_TRUE(other[8]);
}

static void
test_holdout_configs(void)
{
    g_autoptr(MsMeasurementSet) set = mask_set();
    gboolean held[9];
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_holdout_configs(set, "4x4", held, &error));
    for (guint i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(held[i], i % 2 == 1);
    }
    CU_ASSERT_FALSE(held[8]);
    CU_ASSERT_TRUE(ms_holdout_configs(set, "8x4,4x4", held, &error));
    for (guint i = 0; i < 8; i++) {
        CU_ASSERT_TRUE(held[i]);
    }
    CU_ASSERT_FALSE(held[8]);
    static const struct {
        const char *list, *needle;
    } bad[] = {
        {"16y8", "held-out configuration '16y8' is not RANKSxPER_NODE (e.g. 8x4)"},
        {"4xq", "held-out configuration '4xq' is not RANKSxPER_NODE"},
        {"4x8", "'4x8' is not RANKSxPER_NODE"},
        {"0x0", "'0x0' is not"},
        {"x4", "'x4' is not"},
        {"4x4,", "held-out configuration '' is not"},
        {"", "no held-out configuration given (e.g. 4x4,8x4)"},
        {"4x4, 8x4", "' 8x4' is not"},
        {"2097152x1", "'2097152x1' is not"},
        {"3x3", "held-out configuration '3x3' matches no communication measurement"},
        {"1x1", "'1x1' matches no communication measurement"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(ms_holdout_configs(set, bad[i].list, held, &error));
        MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT, bad[i].needle);
    }
}

/* Held-out evaluation on the synthetic truth: every held-out row is predicted exactly, one group
 * per configuration. */
static void
test_holdout_evaluation(void)
{
    g_autoptr(MsMeasurementSet) set = truth_measurements();
    guint n = ms_measurement_set_size(set);
    g_autofree gboolean *held = g_new(gboolean, n);
    ms_holdout_alternate_sizes(set, 1, held);
    /* The links stay in the fit: sizes of a line need no interpolation. */
    g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(MsHoldoutGroup));
    MsErrorStats all;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_holdout(TOPOLOGY, set, held, NULL, groups, &all, &error));
    CU_ASSERT_EQUAL(groups->len, 5);
    CU_ASSERT_EQUAL(all.n, 5 * 8);
    for (guint k = 0; k < groups->len; k++) {
        const MsHoldoutGroup *g = &g_array_index(groups, MsHoldoutGroup, k);
        CU_ASSERT_EQUAL(g->stats.n, 8);
    }
    const MsHoldoutGroup *g = &g_array_index(groups, MsHoldoutGroup, 3);
    CU_ASSERT_EQUAL(g->kind, MS_MEASUREMENT_ALLREDUCE);
    CU_ASSERT_EQUAL(g->ranks, 16);
    CU_ASSERT_EQUAL(g->per_node, 8);
    /* Between two fitted sizes a factor 4 apart the table interpolates linearly in log size, as
     * the truth does between its corners at 1, 4 and 64 MiB: the same line (up to whole-byte ring
     * chunks). */
    if (!(all.max < 5e-5)) {
        fprintf(stderr, "\n  largest held-out error %g\n", all.max);
        for (guint k = 0; k < groups->len; k++) {
            const MsHoldoutGroup *h = &g_array_index(groups, MsHoldoutGroup, k);
            fprintf(stderr, "  %ux%u: %g\n", h->ranks, h->per_node, h->stats.max);
        }
        CU_FAIL("held-out synthetic rows are not predicted exactly");
    }
    /* Nothing held out, and a set whose held-out rows are all compute. */
    for (guint i = 0; i < n; i++) {
        held[i] = FALSE;
    }
    CU_ASSERT_FALSE(ms_calibrate_holdout(TOPOLOGY, set, held, NULL, groups, &all, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "no communication measurement is held out");
    CU_ASSERT_FALSE(
        ms_calibrate_holdout("no-such-topology", set, held, NULL, groups, &all, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "no-such-topology"));
    g_clear_error(&error);
}

/* A calibration with configuration groups round-trips through its file, and the reloaded one
 * predicts exactly what the fitted one does. */
static void
test_file_round_trip(void)
{
    g_autoptr(MsMeasurementSet) set = truth_measurements();
    g_autoptr(MsTopology) fitted = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_calibrate(fitted, set, NULL, cal, NULL, NULL));
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "synthetic.ini", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibration_save(cal, path, &error));
    g_autoptr(MsCalibration) back = ms_calibration_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    g_autofree char *a = ms_calibration_to_data(cal, NULL);
    g_autofree char *b = ms_calibration_to_data(back, NULL);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\n[collective allreduce 4x2]\nalpha = "));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\n[collective sendrecv 2x1]\nalpha = "));
    g_autoptr(MsTopology) reloaded = load_topology(TOPOLOGY);
    CU_ASSERT_TRUE(ms_calibration_apply_topology(back, reloaded, &error));
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *row = ms_measurement_set_get(set, i);
        double t1 = 0, t2 = 0;
        CU_ASSERT_TRUE(ms_calibrate_predict(fitted, cal, row, &t1, NULL));
        CU_ASSERT_TRUE(ms_calibrate_predict(reloaded, back, row, &t2, NULL));
        /* Bandwidth keeps 10 significant digits, efficiencies 6. */
        MS_ASSERT_REL(t2, t1, 1e-5);
    }
}

/* Link classes the calibration does not hold, or that no GPU route is bottlenecked by, are left
 * as they are. */
static void
test_apply_topology(void)
{
    g_autoptr(MsTopology) topo = load_topology(TOPOLOGY);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    MsCalibrationLink pcie = {
        .bandwidth = 1e9, .latency = ms_time_from_us(3), .r2 = NAN, .max_residual = NAN};
    CU_ASSERT_TRUE(ms_calibration_set_link(cal, MS_LINK_PCIE, &pcie, NULL));
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_calibration_apply_topology(cal, topo, &error));
    g_autoptr(MsTopology) nominal = load_topology(TOPOLOGY);
    assert_route_matches(topo, nominal, 0, 1);
    assert_route_matches(topo, nominal, 0, 8);
    /* The intra-node route is NVSwitch-bound: a fit of 100 GB/s and 5 us gives each of its two
     * links 2.5 us, and a transfer on it takes exactly alpha + bytes / beta. */
    MsCalibrationLink nvs = {
        .bandwidth = 100e9, .latency = ms_time_from_us(5), .r2 = NAN, .max_residual = NAN};
    CU_ASSERT_TRUE(ms_calibration_set_link(cal, MS_LINK_NVSWITCH, &nvs, NULL));
    CU_ASSERT_TRUE(ms_calibration_apply_topology(cal, topo, &error));
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, 2, 5, &n, NULL);
    CU_ASSERT_EQUAL(ms_topology_route_latency(topo, route, n), ms_time_from_us(5));
    MS_ASSERT_REL(ms_topology_route_bandwidth(topo, route, n), 100e9, 1e-12);
    MsMeasurement row = row_of(MS_MEASUREMENT_SENDRECV, 2, 2, 1000000, 1, 1);
    double t = 0;
    CU_ASSERT_TRUE(ms_calibrate_predict(topo, NULL, &row, &t, NULL));
    MS_ASSERT_REL(t, 5e-6 + 1e-5, 1e-9);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"rank placement", test_place},
        {"synthetic recovery: bandwidth part", test_recover_bandwidth_part},
        {"synthetic recovery: overheads and tables", test_recover_overheads_and_tables},
        {"hop latencies fold into the overhead", test_latency_folds_into_overhead},
        {"two passes equal one", test_two_passes},
        {"collective adjustment", test_adjust_collective},
        {"nominal predictions", test_predict_nominal},
        {"no data", test_no_data},
        {"rows of one configuration in two datatypes", test_mixed_dtypes},
        {"placement errors", test_placement_errors},
        {"rows under forced NCCL channels or queue pairs", test_forced_configuration},
        {"version=log: each row at its log's NCCL release", test_release_per_row},
        {"expert shape", test_expert_shape},
        {"held-out sizes mask", test_holdout_alternate_sizes},
        {"held-out configurations mask", test_holdout_configs},
        {"held-out evaluation", test_holdout_evaluation},
        {"calibration file round trip", test_file_round_trip},
        {"apply to a topology", test_apply_topology},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"calibrate", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
