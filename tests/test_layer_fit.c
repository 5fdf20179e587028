/* Tests of the per-layer fit: a measurement made from a simulated table by known figures (compute
 * scale and per-op time, all-to-all factor and per-call time, time between ops, framework time
 * per layer, per expert and per token) gives those figures back; terms that do not vary are
 * folded and said so; the calibration written reproduces them; every refusal; and calibrate
 * --layers on the command line. */
#include "ms_test.h"
#include "validate/layer_fit.h"

/* The figures the measurement is made with (us). */
#define SCALE 1.25
#define OP_US 3.0
#define A2A_FACTOR 4.0
#define CALL_US 20.0
#define GAP_US 7.0
#define LAYER_US 900.0
#define EXPERT_US 65.0
#define TOKEN_US 0.5

static void
part(MsLayerRow *r, MsLayerPart p, double us, guint ops)
{
    r->part_us[p] = us;
    r->part_ops[p] = ops;
}

/* Per iteration and GPU: a dense layer 0 and an MoE layer 1 (forward), with sizes that vary by
 * iteration and GPU (local experts 1 or 2 when vary_experts, tokens 1000 + 100 gpu). */
static void
tables(MsLayerTable *sim, MsLayerTable *meas, gboolean vary_experts)
{
    for (guint it = 0; it < 6; it++) {
        for (guint gpu = 0; gpu < 4; gpu++) {
            double k = 1 + 0.1 * it + 0.05 * gpu;
            MsLayerRow d = {.iteration = it, .layer = 0, .phase = MS_PHASE_FORWARD, .gpu = gpu};
            part(&d, MS_LAYER_ATTENTION, 100 * k, 1);
            part(&d, MS_LAYER_FFN, 300 * k, 1);
            MsLayerRow m = {.iteration = it, .layer = 1, .phase = MS_PHASE_FORWARD, .gpu = gpu};
            m.experts = vary_experts ? 1 + gpu % 2 : 2;
            m.tokens = 1000 + 100 * gpu;
            part(&m, MS_LAYER_ATTENTION, 100 * k, 1);
            part(&m, MS_LAYER_GATE, 10 * k, 1);
            part(&m, MS_LAYER_DISPATCH, 50 * k * k, 2);
            part(&m, MS_LAYER_EXPERT, 400 * k * m.experts, 1);
            part(&m, MS_LAYER_COMBINE, 40 * k * k, 1);
            MsLayerRow *rows[2] = {&d, &m};
            for (guint i = 0; i < 2; i++) {
                MsLayerRow *s = rows[i], x = *s;
                guint compute_ops = 0;
                double sum = 0, msum = 0;
                for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
                    gboolean a2a = p == MS_LAYER_DISPATCH || p == MS_LAYER_COMBINE;
                    sum += s->part_us[p];
                    if (s->part_ops[p]) {
                        x.part_us[p] = a2a ? CALL_US * s->part_ops[p] + A2A_FACTOR * s->part_us[p]
                                           : OP_US * s->part_ops[p] + SCALE * s->part_us[p];
                        compute_ops += a2a ? 0 : s->part_ops[p];
                    }
                    msum += x.part_us[p];
                }
                s->layer_us = s->busy_us = sum;
                x.busy_us = msum;
                x.layer_us = msum + GAP_US * compute_ops;
                if (s->experts) {
                    x.layer_us += LAYER_US + EXPERT_US * s->experts + TOKEN_US * s->tokens;
                }
                ms_layer_table_append(sim, s);
                ms_layer_table_append(meas, &x);
            }
        }
    }
}

static void
test_recovers(void)
{
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    g_autoptr(MsLayerTable) meas = ms_layer_table_new();
    tables(sim, meas, TRUE);
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    MsLayerFit f;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_layer_fit(sim, meas, &sel, 4e-6, &f, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(f.pairs, 48);
    MS_ASSERT_REL(f.compute_scale, SCALE, 1e-9);
    MS_ASSERT_REL(f.compute_op_s, OP_US * 1e-6, 1e-9);
    MS_ASSERT_REL(f.efficiency, 0.7 / SCALE, 1e-9);
    MS_ASSERT_REL(f.launch_s, SCALE * 4e-6 + OP_US * 1e-6, 1e-9);
    CU_ASSERT_TRUE(f.has_a2a);
    MS_ASSERT_REL(f.a2a_factor, A2A_FACTOR, 1e-9);
    MS_ASSERT_REL(f.a2a_alpha_s, CALL_US * 1e-6, 1e-9);
    MS_ASSERT_REL(f.gap_op_s, GAP_US * 1e-6, 1e-9);
    MS_ASSERT_REL(f.framework.op_s, GAP_US * 1e-6, 1e-9);
    CU_ASSERT_EQUAL(f.moe_layers, 24);
    CU_ASSERT_FALSE(f.expert_folded);
    CU_ASSERT_FALSE(f.token_folded);
    MS_ASSERT_REL(f.framework.layer_s, LAYER_US * 1e-6, 1e-7);
    MS_ASSERT_REL(f.framework.expert_s, EXPERT_US * 1e-6, 1e-7);
    MS_ASSERT_REL(f.framework.token_s, TOKEN_US * 1e-6, 1e-7);
    CU_ASSERT_TRUE(f.layer_stats.max < 1e-9);
    /* Written into a calibration as docs/calibration-format.md says. */
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_layer_fit_apply(&f, cal, &error));
    MsFramework fw;
    guint points = 0;
    CU_ASSERT_TRUE(ms_calibration_framework(cal, &fw, &points));
    CU_ASSERT_EQUAL(points, 24);
    MS_ASSERT_REL(fw.layer_s, LAYER_US * 1e-6, 1e-7);
    MsTime alpha = 0;
    CU_ASSERT_TRUE(ms_calibration_collective_alpha(cal, MS_MEASUREMENT_ALLTOALL, &alpha));
    CU_ASSERT_EQUAL(alpha, ms_time_from_us(CALL_US));
    MS_ASSERT_REL(ms_calibration_collective_efficiency(cal, MS_MEASUREMENT_ALLTOALL, 12345),
                  1 / A2A_FACTOR, 1e-9);
    MsGpuSpec gpu = {.model = "g",
                     .peak_flops = 1e12,
                     .hbm_bandwidth = 1e12,
                     .memory_bytes = 1,
                     .launch_overhead = 4 * MS_PS_PER_US};
    g_autoptr(MsComputeModel) cm = ms_calibration_compute_model(cal, &gpu, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cm);
    MS_ASSERT_REL(ms_compute_efficiency(cm, 77), 0.7 / SCALE, 1e-6);
    g_autoptr(GPtrArray) lines = ms_layer_fit_describe(&f);
    CU_ASSERT_TRUE(lines->len >= 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(lines->pdata[4], "900 us per layer + 65 us per local expert"));
}

/* One expert count and one token count: those terms cannot be told from the layer term. */
static void
test_folded(void)
{
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    g_autoptr(MsLayerTable) meas = ms_layer_table_new();
    tables(sim, meas, FALSE);
    /* Tokens the same on every GPU too. */
    for (guint i = 0; i < ms_layer_table_n_rows(sim); i++) {
        ((MsLayerRow *)ms_layer_table_row(sim, i))->tokens = 1000;
    }
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    MsLayerFit f;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_layer_fit(sim, meas, &sel, 4e-6, &f, &error));
    CU_ASSERT_TRUE(f.expert_folded);
    CU_ASSERT_TRUE(f.token_folded);
    CU_ASSERT_EQUAL(f.framework.expert_s, 0);
    CU_ASSERT_EQUAL(f.framework.token_s, 0);
    /* The layer term carries the mean of what the folded terms gave (they varied by GPU in the
     * measurement: 65 x 2 and 0.5 x (1000 + 100 gpu), 0.5 x 1150 on average). */
    MS_ASSERT_REL(f.framework.layer_s, (LAYER_US + EXPERT_US * 2 + TOKEN_US * 1150) * 1e-6, 1e-7);
    g_autoptr(GPtrArray) lines = ms_layer_fit_describe(&f);
    CU_ASSERT_PTR_NOT_NULL(strstr(lines->pdata[4], "(one expert count: folded into the layer"));
    /* Fitted on iterations 0-2 only. */
    CU_ASSERT_TRUE(ms_layer_select_parse(&sel, "0-2"));
    CU_ASSERT_TRUE(ms_layer_fit(sim, meas, &sel, 4e-6, &f, &error));
    CU_ASSERT_EQUAL(f.pairs, 24);
}

static void
test_refusals(void)
{
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    g_autoptr(MsLayerTable) meas = ms_layer_table_new();
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    MsLayerFit f;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_layer_fit(sim, meas, &sel, 0, &f, &error));
    MS_ASSERT_ERROR(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_INPUT,
                    "no measured layer (of the iterations asked for) is in the simulation");
    tables(sim, meas, TRUE);
    MsLayerRow host = *ms_layer_table_row(sim, 1);
    host.iteration = 99;
    host.part_us[MS_LAYER_HOST] = 5;
    ms_layer_table_append(sim, &host);
    host.part_us[MS_LAYER_HOST] = 0;
    ms_layer_table_append(meas, &host);
    CU_ASSERT_FALSE(ms_layer_fit(sim, meas, &sel, 0, &f, &error));
    MS_ASSERT_ERROR(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_INPUT,
                    "the simulation has host time (layer 1, iteration 99): simulate the run "
                    "without framework figures");
    /* Only all-to-alls: no compute part to fit. */
    g_autoptr(MsLayerTable) s2 = ms_layer_table_new();
    g_autoptr(MsLayerTable) m2 = ms_layer_table_new();
    MsLayerRow r = {.layer = 1, .layer_us = 10, .busy_us = 10};
    part(&r, MS_LAYER_DISPATCH, 10, 1);
    ms_layer_table_append(s2, &r);
    ms_layer_table_append(m2, &r);
    CU_ASSERT_FALSE(ms_layer_fit(s2, m2, &sel, 0, &f, &error));
    MS_ASSERT_ERROR(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_FIT,
                    "no compute part (attention, gate, expert, FFN) was measured in both tables");
    /* A measurement three times faster than nominal cannot become an efficiency. */
    memset(&f, 0, sizeof f);
    f.compute_scale = 0.3;
    f.efficiency = 0.7 / 0.3;
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_FALSE(ms_layer_fit_apply(&f, cal, &error));
    MS_ASSERT_ERROR(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_FIT,
                    "the measured compute runs 3.33 times faster than the nominal model");
}

/* calibrate --layers writes a calibration that run reads. */
static void
test_cli(void)
{
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    g_autoptr(MsLayerTable) meas = ms_layer_table_new();
    tables(sim, meas, TRUE);
    g_autofree char *sp = g_build_filename(ms_test_tmpdir(), "fit-sim.csv", NULL);
    g_autofree char *mp = g_build_filename(ms_test_tmpdir(), "fit-meas.json", NULL);
    g_autofree char *cp = g_build_filename(ms_test_tmpdir(), "fit.ini", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_layer_table_save(sim, sp, &error));
    CU_ASSERT_TRUE_FATAL(ms_layer_table_save(meas, mp, &error));
    const char *ok[] = {"calibrate", "--layers", mp, "--simulated",  sp,    "--topology",
                        "dgx-a100",  "--out",    cp, "--iterations", "0-4", NULL};
    char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(ok, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "layers: 40 rows paired"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "wrote "));
    g_free(out);
    g_free(err);
    g_autoptr(MsCalibration) cal = ms_calibration_load(cp, &error);
    g_assert_no_error(error);
    MsFramework fw;
    CU_ASSERT_TRUE(ms_calibration_framework(cal, &fw, NULL));
    MS_ASSERT_REL(fw.expert_s, EXPERT_US * 1e-6, 1e-6);
    const char *run[] = {"run", "--calibration", cp, "--mode", "infer", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(run, &out, &err), 0);
    g_free(out);
    g_free(err);
    const char *half[] = {"calibrate", "--layers", mp, "--topology", "dgx-a100", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(half, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "calibrate --layers: give the measured --layers FILE, the "
                                       "--simulated FILE and --topology"));
    g_free(out);
    g_free(err);
    const char *stray[] = {"calibrate", "--iterations", "0-3", "--topology",
                           "dgx-a100",  "x.log",        NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(stray, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--iterations, --layer-pattern and --gpu go with --layers"));
    g_free(out);
    g_free(err);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"known figures come back", test_recovers},
        {"terms that do not vary are folded", test_folded},
        {"refusals", test_refusals},
        {"calibrate --layers", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"layer_fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
