/* Tests of fit: alpha-beta recovery (exact and with seeded noise), R^2 and residuals, efficiency
 * tables (interpolation, binning, isotonic smoothing), the GEMM curve on synthetic rooflines and on
 * the Vidur A100 expert profile (fitted and held-out errors), error statistics, and every
 * error path. */
#include "ms_test.h"
#include "validate/fit.h"
#include "validate/measurement.h"

#define ALPHA 10e-6 /* s */
#define BETA 50e9   /* B/s */

/* n sizes evenly spaced in log from 1 KB to 1 GB. */
static void
log_sizes(double *x, guint n)
{
    for (guint i = 0; i < n; i++) {
        x[i] = 1e3 * pow(1e6, (double)i / (n - 1));
    }
}

static void
test_exact_line(void)
{
    double x[16], t[16];
    log_sizes(x, 16);
    for (guint i = 0; i < 16; i++) {
        t[i] = ALPHA + x[i] / BETA;
    }
    GError *error = NULL;
    MsLinearFit f;
    CU_ASSERT_TRUE_FATAL(ms_fit_linear(x, t, 16, &f, &error));
    MS_ASSERT_REL(f.alpha, ALPHA, 1e-9);
    MS_ASSERT_REL(f.beta, BETA, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(f.r2, 1.0, 1e-12);
    CU_ASSERT_TRUE(f.max_residual < 1e-9);
    CU_ASSERT_EQUAL(f.n, 16);
    CU_ASSERT_FALSE(f.alpha_clamped);
    CU_ASSERT_TRUE_FATAL(ms_fit_linear_relative(x, t, 16, &f, &error));
    MS_ASSERT_REL(f.alpha, ALPHA, 1e-9);
    MS_ASSERT_REL(f.beta, BETA, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(f.r2, 1.0, 1e-12);
    MS_ASSERT_REL(ms_linear_fit_predict(&f, 1e6), ALPHA + 1e6 / BETA, 1e-9);

    /* One point 20% slow: it is the worst residual. */
    t[5] *= 1.2;
    CU_ASSERT_TRUE_FATAL(ms_fit_linear_relative(x, t, 16, &f, &error));
    CU_ASSERT_EQUAL(f.max_index, 5);
    CU_ASSERT_TRUE(f.max_residual > 0.1 && f.max_residual < 0.2);
    CU_ASSERT_TRUE(f.r2 < 1.0);
    CU_ASSERT_PTR_NULL(error);
}

/* Times with seeded multiplicative noise, uniform in +-5%. */
static void
noisy_times(const double *x, double *t, guint n, guint32 seed)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
    for (guint i = 0; i < n; i++) {
        t[i] = (ALPHA + x[i] / BETA) * g_rand_double_range(rng, 0.95, 1.05);
    }
}

static void
test_noisy_line(void)
{
    enum { N = 200 };
    double x[N], t[N];
    log_sizes(x, N);
    GError *error = NULL;
    MsLinearFit ols, rel;
    /* Stated tolerances, checked over ten seeds: ordinary least squares is dominated by the
     * large sizes, so it gets beta within 1% but alpha only within 70% (0.37x to 1.64x here);
     * relative weighting gets both within 2% (0.8% at worst here). */
    for (guint32 seed = 1; seed <= 10; seed++) {
        noisy_times(x, t, N, seed);
        CU_ASSERT_TRUE_FATAL(ms_fit_linear(x, t, N, &ols, &error));
        CU_ASSERT_TRUE_FATAL(ms_fit_linear_relative(x, t, N, &rel, &error));
        MS_ASSERT_REL(ols.beta, BETA, 0.01);
        MS_ASSERT_REL(ols.alpha, ALPHA, 0.7);
        MS_ASSERT_REL(rel.beta, BETA, 0.02);
        MS_ASSERT_REL(rel.alpha, ALPHA, 0.02);
        CU_ASSERT_TRUE(ols.r2 > 0.99 && ols.r2 < 1.0);
        CU_ASSERT_TRUE(rel.max_residual < 0.06);
    }
}

static void
test_clamped_alpha(void)
{
    /* t = x / 1e10 - 10 us over 1 MB .. 1 GB: the free fit's alpha is -10 us. */
    double x[4] = {1e6, 1e7, 1e8, 1e9}, t[4];
    for (guint i = 0; i < 4; i++) {
        t[i] = x[i] / 1e10 - 10e-6;
    }
    GError *error = NULL;
    MsLinearFit f;
    CU_ASSERT_TRUE_FATAL(ms_fit_linear(x, t, 4, &f, &error));
    CU_ASSERT_TRUE(f.alpha_clamped);
    CU_ASSERT_EQUAL(f.alpha, 0);
    /* Through the origin: slope = sum x t / sum x^2. */
    double sxt = 0, sxx = 0;
    for (guint i = 0; i < 4; i++) {
        sxt += x[i] * t[i];
        sxx += x[i] * x[i];
    }
    MS_ASSERT_REL(f.beta, sxx / sxt, 1e-12);
}

static void
test_line_errors(void)
{
    GError *error = NULL;
    MsLinearFit f;
    double x[3] = {1e3, 1e4, 1e5}, t[3] = {1e-5, 2e-5, 3e-5};
    CU_ASSERT_FALSE(ms_fit_linear(x, t, 1, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "at least 2 points, got 1");
    double xn[3] = {1e3, -1, 1e5};
    CU_ASSERT_FALSE(ms_fit_linear(xn, t, 3, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 1: size -1");
    double t0[3] = {1e-5, 0, 3e-5};
    CU_ASSERT_FALSE(ms_fit_linear_relative(x, t0, 3, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 1: time 0 s");
    double tnan[3] = {1e-5, 2e-5, NAN};
    CU_ASSERT_FALSE(ms_fit_linear(x, tnan, 3, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 2: time nan");
    double same[3] = {1e4, 1e4, 1e4};
    CU_ASSERT_FALSE(ms_fit_linear(same, t, 3, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_DEGENERATE, "same size (10000 bytes)");
    double falling[3] = {3e-5, 2e-5, 1e-5};
    CU_ASSERT_FALSE(ms_fit_linear(x, falling, 3, &f, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_DEGENERATE, "does not grow with size");
}

static void
test_eff_table(void)
{
    GError *error = NULL;
    const double s[] = {1e3, 1e5};
    const double r[] = {0.2, 0.6};
    g_autoptr(MsEffTable) t = ms_eff_table_new(s, r, 2, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    MS_ASSERT_REL(ms_eff_table_eval(t, 1e4), 0.4, 1e-12);
    MS_ASSERT_REL(ms_eff_table_eval(t, pow(10, 3.5)), 0.3, 1e-12);
    CU_ASSERT_EQUAL(ms_eff_table_eval(t, 1e3), 0.2);
    CU_ASSERT_EQUAL(ms_eff_table_eval(t, 1), 0.2);
    CU_ASSERT_EQUAL(ms_eff_table_eval(t, 0), 0.2);
    CU_ASSERT_EQUAL(ms_eff_table_eval(t, 1e12), 0.6);

    const double s_bad[] = {1e5, 1e3};
    CU_ASSERT_PTR_NULL(ms_eff_table_new(s_bad, r, 2, &error));
    MS_ASSERT_ERROR(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT, "entry 1: size 1000");
    const double r0[] = {0, 0.5};
    CU_ASSERT_PTR_NULL(ms_eff_table_new(s, r0, 2, &error));
    MS_ASSERT_ERROR(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT,
                    "entry 0: ratio 0 is outside");
    const double r_big[] = {0.5, 1.6};
    CU_ASSERT_PTR_NULL(ms_eff_table_new(s, r_big, 2, &error));
    MS_ASSERT_ERROR(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT, "entry 1: ratio 1.6");
    CU_ASSERT_PTR_NULL(ms_eff_table_new(s, r, 0, &error));
    MS_ASSERT_ERROR(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT, "needs entries");
}

static void
test_fit_eff_table(void)
{
    GError *error = NULL;
    /* Repeated sizes are one entry with the median ratio; input order does not matter. */
    const double s[] = {1e5, 1e3, 1e4, 1e3};
    const double meas[] = {1, 1, 2, 1};
    const double pred[] = {0.8, 0.4, 1.0, 0.6};
    g_autoptr(MsEffTable) t = ms_fit_eff_table(s, meas, pred, 4, 0, FALSE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->n, 3);
    CU_ASSERT_EQUAL(t->sizes[0], 1e3);
    MS_ASSERT_REL(t->ratios[0], 0.5, 1e-12);
    MS_ASSERT_REL(t->ratios[1], 0.5, 1e-12);
    MS_ASSERT_REL(t->ratios[2], 0.8, 1e-12);

    /* Isotonic smoothing pools the violating pair 0.7, 0.6 into 0.65. */
    const double s4[] = {1e3, 1e4, 1e5, 1e6};
    const double one[] = {1, 1, 1, 1};
    const double r4[] = {0.5, 0.7, 0.6, 0.9};
    g_autoptr(MsEffTable) m = ms_fit_eff_table(s4, one, r4, 4, 0, TRUE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    MS_ASSERT_REL(m->ratios[0], 0.5, 1e-12);
    MS_ASSERT_REL(m->ratios[1], 0.65, 1e-12);
    MS_ASSERT_REL(m->ratios[2], 0.65, 1e-12);
    MS_ASSERT_REL(m->ratios[3], 0.9, 1e-12);
    g_autoptr(MsEffTable) raw = ms_fit_eff_table(s4, one, r4, 4, 0, FALSE, &error);
    MS_ASSERT_REL(raw->ratios[2], 0.6, 1e-12);

    /* 100 log-spaced sizes into 4 bins of 25: each entry at its bin's geometric mean size. */
    double s100[100], m100[100], p100[100];
    for (guint i = 0; i < 100; i++) {
        s100[i] = 1e3 * pow(1e6, i / 99.0);
        m100[i] = 1;
        p100[i] = 0.5;
    }
    g_autoptr(MsEffTable) b = ms_fit_eff_table(s100, m100, p100, 100, 4, TRUE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(b->n, 4);
    MS_ASSERT_REL(b->sizes[0], 1e3 * pow(1e6, 12 / 99.0), 1e-9);
    MS_ASSERT_REL(b->sizes[3], 1e3 * pow(1e6, 87 / 99.0), 1e-9);
    CU_ASSERT_EQUAL(b->ratios[2], 0.5);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_fit_eff_table_errors(void)
{
    GError *error = NULL;
    const double s[] = {1e3, 1e4};
    const double meas[] = {1, 1};
    const double pred[] = {1, 2};
    CU_ASSERT_PTR_NULL(ms_fit_eff_table(s, meas, pred, 2, 0, FALSE, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE, "at 10000 bytes the model predicts 2");
    const double neg[] = {1, -1};
    CU_ASSERT_PTR_NULL(ms_fit_eff_table(s, neg, meas, 2, 0, FALSE, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 1: size 10000, measured -1");
    CU_ASSERT_PTR_NULL(ms_fit_eff_table(s, meas, meas, 0, 0, FALSE, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no points");
}

/* Synthetic roofline: eff(t) = 0.8 t / (t + 64) on a 1024 x 4096 fp16 GEMM. */
static const MsRoofline roof = {.peak_flops = 100e12, .hbm_bandwidth = 1e12, .launch_s = 2e-6};

static MsGemmPoint
synthetic_point(double t)
{
    MsGemmPoint p = {.tokens = t};
    p.flops = 2 * t * 1024 * 4096;
    p.bytes = 2 * (1024.0 * 4096 + t * 1024 + t * 4096);
    double eff = 0.8 * t / (t + 64);
    p.seconds =
        roof.launch_s + MAX(p.flops / (roof.peak_flops * eff), p.bytes / roof.hbm_bandwidth);
    return p;
}

static void
test_gemm_curve(void)
{
    GError *error = NULL;
    MsGemmPoint pts[12];
    guint memory_bound = 0;
    for (guint i = 0; i < 12; i++) {
        pts[11 - i] = synthetic_point(pow(2, i)); /* given in decreasing order */
        double eff = 0.8 * pts[11 - i].tokens / (pts[11 - i].tokens + 64);
        memory_bound +=
            pts[11 - i].flops / (roof.peak_flops * eff) <= pts[11 - i].bytes / roof.hbm_bandwidth;
    }
    g_autoptr(MsGemmCurve) c = ms_fit_gemm_curve(pts, 12, &roof, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->n, 12);
    CU_ASSERT_EQUAL(c->tokens[0], 1);
    CU_ASSERT_TRUE(memory_bound > 0 && memory_bound < 12);
    CU_ASSERT_EQUAL(c->n_memory_bound, memory_bound);
    /* Compute-bound points give back the true efficiency; every point is reproduced. */
    MS_ASSERT_REL(ms_gemm_curve_eval(c, 2048), 0.8 * 2048 / (2048 + 64), 1e-9);
    for (guint i = 0; i < 12; i++) {
        MS_ASSERT_REL(ms_gemm_curve_predict(c, &roof, &pts[i]), pts[i].seconds, 1e-9);
    }
    /* Memory-bound points store the least efficiency that keeps the memory term in charge. */
    MsGemmPoint p1 = synthetic_point(1);
    MS_ASSERT_REL(c->efficiency[0], p1.flops * roof.hbm_bandwidth / (roof.peak_flops * p1.bytes),
                  1e-12);

    /* Two points at one token count: e = (e1^2 + e2^2) / (e1 + e2). */
    MsGemmPoint two[2];
    for (guint i = 0; i < 2; i++) {
        two[i] = (MsGemmPoint){.tokens = 4096, .flops = 1e12, .bytes = 0};
        two[i].seconds = roof.launch_s + 1e12 / (roof.peak_flops * (i ? 0.7 : 0.5));
    }
    g_autoptr(MsGemmCurve) d = ms_fit_gemm_curve(two, 2, &roof, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->n, 1);
    MS_ASSERT_REL(d->efficiency[0], (0.25 + 0.49) / 1.2, 1e-12);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_gemm_errors(void)
{
    GError *error = NULL;
    MsGemmPoint p = synthetic_point(256);
    CU_ASSERT_PTR_NULL(ms_fit_gemm_curve(&p, 0, &roof, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no GEMM points");
    MsGemmPoint bad = p;
    bad.tokens = 0;
    CU_ASSERT_PTR_NULL(ms_fit_gemm_curve(&bad, 1, &roof, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 0: tokens 0");
    MsRoofline no_peak = roof;
    no_peak.peak_flops = 0;
    CU_ASSERT_PTR_NULL(ms_fit_gemm_curve(&p, 1, &no_peak, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "roofline peak 0");
    bad = p;
    bad.seconds = 1e-6;
    CU_ASSERT_PTR_NULL(ms_fit_gemm_curve(&bad, 1, &roof, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE, "does not exceed the launch");
    bad = p;
    bad.bytes = 0;
    bad.seconds = roof.launch_s + bad.flops / (2 * roof.peak_flops);
    CU_ASSERT_PTR_NULL(ms_fit_gemm_curve(&bad, 1, &roof, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE, "2 x the peak");
}

static void
test_error_stats(void)
{
    GError *error = NULL;
    const double pred[] = {1.1, 0.9, 1.0, 1.3};
    const double meas[] = {1, 1, 1, 1};
    MsErrorStats s;
    CU_ASSERT_TRUE_FATAL(ms_error_stats(pred, meas, 4, &s, &error));
    CU_ASSERT_DOUBLE_EQUAL(s.median, 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.p90, 0.3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.max, 0.3, 1e-12);
    CU_ASSERT_EQUAL(s.worst, 3);
    CU_ASSERT_EQUAL(s.n, 4);
    CU_ASSERT_TRUE_FATAL(ms_error_stats(pred, meas, 3, &s, &error));
    CU_ASSERT_DOUBLE_EQUAL(s.median, 0.1, 1e-12);
    CU_ASSERT_FALSE(ms_error_stats(pred, meas, 0, &s, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no points");
    const double zero[] = {1, 0};
    CU_ASSERT_FALSE(ms_error_stats(pred, zero, 2, &s, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "point 1: measured 0");

    gboolean held[5];
    ms_holdout_every(held, 5, 2, 1);
    CU_ASSERT_FALSE(held[0]);
    CU_ASSERT_TRUE(held[1]);
    CU_ASSERT_FALSE(held[2]);
    CU_ASSERT_TRUE(held[3]);
    CU_ASSERT_FALSE(held[4]);
}

static void
test_holdout(void)
{
    GError *error = NULL;
    double x[10], t[10];
    log_sizes(x, 10);
    for (guint i = 0; i < 10; i++) {
        t[i] = ALPHA + x[i] / BETA;
    }
    gboolean held[10];
    ms_holdout_every(held, 10, 3, 0);
    MsLinearFit f;
    MsErrorStats s;
    CU_ASSERT_TRUE_FATAL(ms_holdout_linear(x, t, 10, held, TRUE, &f, &s, &error));
    CU_ASSERT_EQUAL(s.n, 4);
    CU_ASSERT_EQUAL(f.n, 6);
    CU_ASSERT_TRUE(s.max < 1e-9);
    gboolean none[10] = {FALSE};
    CU_ASSERT_FALSE(ms_holdout_linear(x, t, 10, none, FALSE, &f, &s, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no point of 10 is held out");

    MsGemmPoint pts[9];
    for (guint i = 0; i < 9; i++) {
        pts[i] = synthetic_point(pow(2, i + 4));
    }
    gboolean every_other[9];
    ms_holdout_every(every_other, 9, 2, 1);
    CU_ASSERT_TRUE_FATAL(ms_holdout_gemm(pts, 9, every_other, &roof, &s, &error));
    CU_ASSERT_EQUAL(s.n, 4);
    /* Interpolating the smooth curve over a factor of 4 in tokens costs at most 5.4%. */
    CU_ASSERT_TRUE(s.max > 0 && s.max < 0.06);
    CU_ASSERT_FALSE(ms_holdout_gemm(pts, 9, none, &roof, &s, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "held out");
}

/* The Vidur A100 profile of a Mixtral-8x7B expert (d_model 4096, d_ffn 14336, gated, fp16). */
static const MsRoofline a100 = {.peak_flops = 312e12, .hbm_bandwidth = 2039e9, .launch_s = 0};

static GArray *
vidur_expert_points(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("mlp_llama3_8b.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    CU_ASSERT_TRUE(ms_measurement_set_expert_points(set, 4096, 14336, TRUE, pts, &error));
    CU_ASSERT_PTR_NULL(error);
    return pts;
}

static void
test_vidur_gemm_curve(void)
{
    GError *error = NULL;
    g_autoptr(GArray) pts = vidur_expert_points();
    CU_ASSERT_EQUAL_FATAL(pts->len, 451);
    const MsGemmPoint *p = (const MsGemmPoint *)pts->data;
    g_autoptr(MsGemmCurve) c = ms_fit_gemm_curve(p, pts->len, &a100, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    /* Every point it was fitted on within 2% (the roofline inversion makes it exact). */
    double worst = 0;
    for (guint i = 0; i < pts->len; i++) {
        worst = MAX(worst, fabs(ms_gemm_curve_predict(c, &a100, &p[i]) / p[i].seconds - 1));
    }
    CU_ASSERT_TRUE(worst < 0.02);
    /* Every point takes longer than bytes / 2039 GB/s, so none is memory bound; the efficiency
     * climbs from 0.5% at 1 token to 71% at 4096. */
    CU_ASSERT_EQUAL(c->n_memory_bound, 0);
    CU_ASSERT_TRUE(ms_gemm_curve_eval(c, 1) < 0.01);
    CU_ASSERT_TRUE(ms_gemm_curve_eval(c, 4096) > 0.66 && ms_gemm_curve_eval(c, 4096) < 0.75);

    /* Held out every other token count: median 1.19%, p90 3.14%, max 15.1% (at 136 tokens,
     * where cuBLAS switches kernels); the bounds leave a little room. */
    g_autofree gboolean *held = g_new(gboolean, pts->len);
    ms_holdout_every(held, pts->len, 2, 1);
    MsErrorStats s;
    CU_ASSERT_TRUE_FATAL(ms_holdout_gemm(p, pts->len, held, &a100, &s, &error));
    CU_ASSERT_EQUAL(s.n, 225);
    CU_ASSERT_TRUE(s.median < 0.013);
    CU_ASSERT_TRUE(s.p90 < 0.035);
    CU_ASSERT_TRUE(s.max < 0.16);
    CU_ASSERT_EQUAL(p[2 * s.worst + 1].tokens, 136);
}

/* Golden alpha-beta fits of the Vidur DGX-A100 send/recv profile (2 GPUs). */
static void
test_vidur_sendrecv_fit(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("nccl_send_recv_dgx.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    static const struct {
        guint per_node;
        double ols_alpha_us, ols_beta_gbps, ols_r2, rel_alpha_us, rel_beta_gbps;
    } golden[] = {
        {2, 4.704, 234.53, 0.99052, 13.162, 285.82}, /* same node (NVSwitch) */
        {1, 42.917, 7.831, 0.99992, 29.029, 7.771},  /* across nodes */
    };
    for (guint g = 0; g < G_N_ELEMENTS(golden); g++) {
        g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
        guint n =
            ms_measurement_set_series(set, MS_MEASUREMENT_SENDRECV, 2, golden[g].per_node, x, t);
        CU_ASSERT_EQUAL(n, 994);
        MsLinearFit ols, rel;
        CU_ASSERT_TRUE_FATAL(ms_fit_linear((double *)x->data, (double *)t->data, n, &ols, &error));
        CU_ASSERT_TRUE_FATAL(
            ms_fit_linear_relative((double *)x->data, (double *)t->data, n, &rel, &error));
        MS_ASSERT_REL(ols.alpha * 1e6, golden[g].ols_alpha_us, 1e-3);
        MS_ASSERT_REL(ols.beta / 1e9, golden[g].ols_beta_gbps, 1e-3);
        MS_ASSERT_REL(ols.r2, golden[g].ols_r2, 1e-4);
        MS_ASSERT_REL(rel.alpha * 1e6, golden[g].rel_alpha_us, 1e-3);
        MS_ASSERT_REL(rel.beta / 1e9, golden[g].rel_beta_gbps, 1e-3);
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"exact line recovered, R^2 = 1", test_exact_line},
        {"noisy line within stated tolerance", test_noisy_line},
        {"negative alpha refitted through origin", test_clamped_alpha},
        {"line fit errors", test_line_errors},
        {"efficiency table interpolation", test_eff_table},
        {"efficiency table fit, bins, isotonic", test_fit_eff_table},
        {"efficiency table fit errors", test_fit_eff_table_errors},
        {"GEMM curve on a synthetic roofline", test_gemm_curve},
        {"GEMM curve errors", test_gemm_errors},
        {"error statistics and splits", test_error_stats},
        {"held-out evaluation", test_holdout},
        {"GEMM curve on the Vidur expert profile", test_vidur_gemm_curve},
        {"alpha-beta of Vidur send/recv", test_vidur_sendrecv_fit},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
