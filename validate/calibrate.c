/* calibrate: the fitting procedure (see calibrate.h) and predictions of measured rows. */
#include "calibrate.h"

#include <math.h>
#include <string.h>

#include "sim/compute.h"
#include "sim/sim.h"
#include "sim/net/host_loop.h"
#include "validate/fit.h"
#include "validate/overlap_fit.h"

G_DEFINE_QUARK(ms_calibrate_error_quark, ms_calibrate_error)

/* The expert FFN of the shipped A100 profiles (validate/data/SOURCE.md): d_model 4096, a gated FFN
 * of width 14336, the shape of one Mixtral-8x7B expert. */
const MsCalibrateOptions ms_calibrate_default_options = {NULL, 4096, 14336, TRUE};

/* Collectives need enough sizes to say anything about a configuration. */
#define MIN_COLLECTIVE_POINTS 4
/* Efficiency tables: NCCL switches protocols and channel counts at a handful of sizes; a bin per
 * eighth of a decade (6 decades) follows those steps without chasing single noisy points. */
#define TABLE_POINTS 48

gboolean
ms_calibrate_place(const MsTopology *topo, guint ranks, guint per_node, guint *out, GError **error)
{
    guint gpn = ms_topology_gpus_per_node(topo), nodes = ms_topology_n_nodes(topo);
    if (per_node == 0 || ranks == 0 || gpn == 0 || per_node > gpn ||
        (ranks + per_node - 1) / per_node > nodes) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "%u ranks with %u per node do not fit topology '%s' (%u nodes of %u GPUs)",
                    ranks, per_node, ms_topology_name(topo), nodes, gpn);
        return FALSE;
    }
    for (guint i = 0; i < ranks; i++) {
        out[i] = (i / per_node) * gpn + i % per_node;
    }
    return TRUE;
}

/* --- links --- */

static gboolean
fit_links(MsTopology *topo, const MsMeasurementSet *set, MsCalibration *cal, GPtrArray *report,
          GError **error)
{
    for (guint scope = 0; scope < 2; scope++) {
        g_autoptr(GArray) bytes = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) secs = g_array_new(FALSE, FALSE, sizeof(double));
        for (guint i = 0; i < ms_measurement_set_size(set); i++) {
            const MsMeasurement *r = ms_measurement_set_get(set, i);
            if (r->kind == MS_MEASUREMENT_SENDRECV && r->ranks == 2 &&
                ms_calibrate_row_default(r) && (r->ranks_per_node < r->ranks) == (scope == 1) &&
                r->bytes > 0) {
                double bb = (double)r->bytes;
                g_array_append_val(bytes, bb);
                g_array_append_val(secs, r->seconds);
            }
        }
        guint n = 0, neck = 0;
        if (bytes->len < 2 || ms_calibration_scope_route(topo, scope == 1, &n, &neck) == NULL) {
            continue;
        }
        MsLinkClass klass = ms_topology_link(topo, neck)->klass;
        MsLinearFit fit;
        g_autoptr(GError) local = NULL;
        if (!ms_fit_linear_relative((double *)bytes->data, (double *)secs->data, bytes->len, &fit,
                                    &local)) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_FIT, "%s link fit: %s",
                        ms_link_class_name(klass), local->message);
            return FALSE;
        }
        MsCalibrationLink l = {
            .bandwidth = fit.beta,
            .latency = ms_time_from_s(fit.alpha),
            .r2 = fit.r2,
            .max_residual = fit.max_residual,
            .points = fit.n,
        };
        if (!ms_calibration_set_link(cal, klass, &l, error)) {
            return FALSE;
        }
        if (report) {
            g_ptr_array_add(report,
                            g_strdup_printf("link %-9s %4u points  latency %8.3f us  bandwidth "
                                            "%8.3f GB/s  R^2 %.4f  largest residual %.1f%%",
                                            ms_link_class_name(klass), fit.n, fit.alpha * 1e6,
                                            fit.beta / 1e9, fit.r2, 100 * fit.max_residual));
        }
    }
    /* Also when nothing was fitted here: cal may hold link figures from an earlier pass, and the
     * collective tables must be fitted against the links the predictions will use. */
    return ms_calibration_apply_topology(cal, topo, error);
}

/* --- collectives --- */

gboolean
ms_calibrate_coll_op(MsMeasurementKind kind, MsCollOp *op)
{
    switch (kind) {
    case MS_MEASUREMENT_ALLREDUCE:
        *op = MS_COLL_ALLREDUCE;
        return TRUE;
    case MS_MEASUREMENT_ALLTOALL:
        *op = MS_COLL_ALLTOALL;
        return TRUE;
    case MS_MEASUREMENT_ALLGATHER:
        *op = MS_COLL_ALLGATHER;
        return TRUE;
    case MS_MEASUREMENT_REDUCESCATTER:
        *op = MS_COLL_REDUCESCATTER;
        return TRUE;
    default:
        return FALSE;
    }
}

/* Simulates one collective from a simultaneous launch to the last rank's completion. With
 * no_latency the transfers skip their route latency (the bandwidth part, which calibration
 * compares with data); a collective cal calibrates always does, its alpha holding the latency. */
static gboolean
simulate_spec(const MsTopology *topo, const MsCalibration *cal, MsCollSpec spec, double *seconds,
              GError **error)
{
    gboolean nccl = spec.net && ms_net_model_kind(spec.net) == MS_NET_NCCL;
    g_autofree guint64 *scaled =
        cal && !nccl ? ms_calibration_adjust_collective(cal, topo, &spec) : NULL;
    (void)scaled; /* only holds memory to free */
    MsTime end;
    if (!ms_coll_run_alone(topo, &spec, &end, error)) {
        return FALSE;
    }
    *seconds = ms_time_to_s(end);
    return TRUE;
}

static gboolean
simulate(const MsTopology *topo, const MsCalibration *cal, gboolean no_latency, MsCollOp op,
         const guint *ranks, guint n, guint64 bytes, double *seconds, GError **error)
{
    MsCollSpec spec = {
        .op = op, .n_ranks = n, .ranks = ranks, .bytes = bytes, .no_hop_latency = no_latency};
    return simulate_spec(topo, cal, spec, seconds, error);
}

static int
cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    MsMeasurementKind kind;
    guint ranks, per_node;
    const MsMeasurement *first; /* the configuration's first row, for messages */
} Config;

/* Places a row's ranks; a failure names the row. */
static gboolean
place_row(const MsTopology *topo, const MsMeasurement *row, guint *ranks, GError **error)
{
    if (ms_calibrate_place(topo, row->ranks, row->ranks_per_node, ranks, error)) {
        return TRUE;
    }
    g_prefix_error(error, "%s:%u: %s %ux%u: ", row->source ? row->source : "<memory>", row->line,
                   ms_measurement_kind_name(row->kind), row->ranks, row->ranks_per_node);
    return FALSE;
}

static gboolean bandwidth_part(const MsTopology *topo, MsMeasurementKind kind, MsCollOp op,
                               const guint *ranks, guint n, const MsMeasurement *row,
                               double *seconds, GError **error);

/* The report line of a configuration: its overhead, the range of its efficiency table and how
 * well the fitted figures reproduce the points they were fitted to (alpha + B(s) / eff(s), the
 * flow model's bandwidth part being linear in size). */
static void
report_config(GPtrArray *report, const Config *cfg, GArray *size, GArray *meas, GArray *band,
              double alpha, const MsEffTable *table)
{
    double lo = 1e9, hi = 0;
    for (guint i = 0; table && i < table->n; i++) {
        lo = MIN(lo, table->ratios[i]);
        hi = MAX(hi, table->ratios[i]);
    }
    guint n = size->len;
    g_autofree double *pred = g_new(double, n);
    for (guint i = 0; i < n; i++) {
        double eff = table ? ms_eff_table_eval(table, g_array_index(size, double, i)) : 1.0;
        pred[i] = alpha + g_array_index(band, double, i) / eff;
    }
    MsErrorStats st = {0};
    ms_error_stats(pred, (double *)meas->data, n, &st, NULL);
    g_ptr_array_add(report,
                    g_strdup_printf("collective %-13s %3ux%-3u %4u points  overhead %8.3f us  "
                                    "efficiency %.3f .. %.3f over %2u sizes  fit median %.2f%% "
                                    "largest %.1f%%",
                                    ms_measurement_kind_name(cfg->kind), cfg->ranks, cfg->per_node,
                                    n, alpha * 1e6, table ? lo : 1.0, table ? hi : 1.0,
                                    table ? table->n : 0, 100 * st.median, 100 * st.max));
}

/* One configuration. The model's bandwidth part B(s) is simulated without hop latencies; the
 * per-call overhead is the median excess of the measurement over B(s) among the smallest tenth of
 * sizes (it holds launch, protocol and every hop's latency), and the efficiency at each size is
 * B(s) / (measured - overhead) where the bandwidth part is large enough to say something. */
static gboolean
fit_config(const MsTopology *topo, const MsMeasurementSet *set, const Config *cfg,
           MsCalibration *cal, GPtrArray *report, gboolean *fitted, GError **error)
{
    MsCollOp op = MS_COLL_ALLREDUCE;
    ms_calibrate_coll_op(cfg->kind, &op);
    g_autofree guint *ranks = g_new(guint, cfg->ranks);
    if (cfg->kind != MS_MEASUREMENT_SENDRECV && !place_row(topo, cfg->first, ranks, error)) {
        return FALSE;
    }
    g_autoptr(GArray) size = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) meas = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) band = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        if (r->kind != cfg->kind || r->ranks != cfg->ranks || r->ranks_per_node != cfg->per_node ||
            r->bytes == 0 || !ms_calibrate_row_default(r)) {
            continue;
        }
        double t;
        if (!bandwidth_part(topo, cfg->kind, op, ranks, cfg->ranks, r, &t, error)) {
            return FALSE;
        }
        double sz = (double)r->bytes;
        g_array_append_val(size, sz);
        g_array_append_val(meas, r->seconds);
        g_array_append_val(band, t);
    }
    guint n = size->len;
    if (n < MIN_COLLECTIVE_POINTS) {
        if (report) {
            g_ptr_array_add(report, g_strdup_printf("collective %-13s %3ux%-3u %4u points  not "
                                                    "fitted: at least %d sizes are needed",
                                                    ms_measurement_kind_name(cfg->kind), cfg->ranks,
                                                    cfg->per_node, n, MIN_COLLECTIVE_POINTS));
        }
        return TRUE;
    }
    g_autofree double *sorted = g_memdup2(size->data, n * sizeof(double));
    qsort(sorted, n, sizeof(double), cmp_double);
    double small_limit = sorted[MAX(1, n / 10) - 1];
    g_autoptr(GArray) excess = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < n; i++) {
        if (g_array_index(size, double, i) <= small_limit) {
            double x = g_array_index(meas, double, i) - g_array_index(band, double, i);
            g_array_append_val(excess, x);
        }
    }
    g_array_sort(excess, cmp_double);
    double alpha = MAX(0, g_array_index(excess, double, excess->len / 2));
    g_autoptr(GArray) es = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) em = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) ep = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < n; i++) {
        double p = g_array_index(band, double, i);
        double m = g_array_index(meas, double, i) - alpha;
        if (p < 0.1 * alpha || m <= 0) {
            continue;
        }
        m = CLAMP(m, p / MS_EFF_RATIO_MAX, p / 0.01);
        g_array_append_val(es, g_array_index(size, double, i));
        g_array_append_val(em, m);
        g_array_append_val(ep, p);
    }
    g_autoptr(MsEffTable) table = NULL;
    if (es->len) {
        g_autoptr(GError) local = NULL;
        table = ms_fit_eff_table((double *)es->data, (double *)em->data, (double *)ep->data,
                                 es->len, TABLE_POINTS, FALSE, &local);
        if (table == NULL) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_FIT, "%s: %s %ux%u: %s",
                        cfg->first->source, ms_measurement_kind_name(cfg->kind), cfg->ranks,
                        cfg->per_node, local->message);
            return FALSE;
        }
    }
    if (!ms_calibration_set_collective_config(cal, cfg->kind, cfg->ranks, cfg->per_node,
                                              ms_time_from_s(alpha), table, error)) {
        return FALSE;
    }
    if (report) {
        report_config(report, cfg, size, meas, band, alpha, table);
    }
    *fitted = TRUE;
    return TRUE;
}

static gboolean
fit_collectives(const MsTopology *topo, const MsMeasurementSet *set, MsCalibration *cal,
                GPtrArray *report, gboolean *any, GError **error)
{
    g_autoptr(GArray) configs = g_array_new(FALSE, FALSE, sizeof(Config));
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        MsCollOp op;
        if ((!ms_calibrate_coll_op(r->kind, &op) && r->kind != MS_MEASUREMENT_SENDRECV) ||
            !ms_calibrate_row_default(r)) {
            continue;
        }
        Config c = {r->kind, r->ranks, r->ranks_per_node, r};
        gboolean seen = FALSE;
        for (guint k = 0; k < configs->len && !seen; k++) {
            const Config *o = &g_array_index(configs, Config, k);
            seen = o->kind == c.kind && o->ranks == c.ranks && o->per_node == c.per_node;
        }
        if (!seen) {
            g_array_append_val(configs, c);
        }
    }
    for (guint k = 0; k < configs->len; k++) {
        if (!fit_config(topo, set, &g_array_index(configs, Config, k), cal, report, any, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* --- expert GEMMs --- */

void
ms_calibrate_roofline(const MsTopology *topo, MsRoofline *roof)
{
    const MsGpuSpec *spec = ms_topology_gpu_spec(topo, 0);
    roof->peak_flops = spec->peak_flops;
    roof->hbm_bandwidth = spec->hbm_bandwidth;
    roof->launch_s = ms_time_to_s(spec->launch_overhead);
}

/* GEMM rows of any shape (a profiler trace's aten::mm ...), as points at their row counts, on the
 * roofline of their datatype with no launch (the rows are kernel times). FALSE when the rows mix
 * datatypes or the GPU has no peak for theirs. */
static gboolean
fit_plain_gemms(const MsTopology *topo, const MsMeasurementSet *set, MsCalibration *cal,
                GPtrArray *report, gboolean *any, GError **error)
{
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    const char *dtype = NULL;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        if (r->kind != MS_MEASUREMENT_GEMM || ms_measurement_overlapped(r)) {
            continue;
        }
        if (dtype && strcmp(dtype, r->dtype) != 0) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_FIT,
                        "%s:%u: GEMM rows in %s and %s: fit one datatype at a time", r->source,
                        r->line, dtype, r->dtype);
            return FALSE;
        }
        dtype = r->dtype;
        MsGemmPoint p = {.tokens = (double)r->m, .seconds = r->seconds};
        ms_measurement_gemm_cost(r, &p.flops, &p.bytes);
        g_array_append_val(points, p);
    }
    MsDtype d = MS_DTYPE_FP16;
    const char *name = g_str_has_prefix(dtype, "fp8") ? "fp8" : dtype;
    MsRoofline roof;
    ms_calibrate_roofline(topo, &roof);
    roof.launch_s = 0;
    if (!ms_dtype_from_name(name, &d) ||
        !ms_gpu_spec_peak(ms_topology_gpu_spec(topo, 0), d, &roof.peak_flops)) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_FIT,
                    "GEMM rows in %s: the topology's GPU has no peak for it (docs/topology.md)",
                    dtype);
        return FALSE;
    }
    g_autoptr(MsGemmCurve) curve =
        ms_fit_gemm_curve((MsGemmPoint *)points->data, points->len, &roof, error);
    if (curve == NULL || !ms_calibration_set_gemm(cal, curve, 1.0, 0, error)) {
        return FALSE;
    }
    if (report) {
        g_ptr_array_add(report,
                        g_strdup_printf("gemm (%u %s rows, kernel times, launch 0): %u row counts, "
                                        "efficiency %.3f at %g rows .. %.3f at %g rows",
                                        points->len, dtype, curve->n, curve->efficiency[0],
                                        curve->tokens[0], curve->efficiency[curve->n - 1],
                                        curve->tokens[curve->n - 1]));
    }
    *any = TRUE;
    return TRUE;
}

static gboolean
fit_gemm(const MsTopology *topo, const MsMeasurementSet *set, const MsCalibrateOptions *opts,
         MsCalibration *cal, GPtrArray *report, gboolean *any, GError **error)
{
    gboolean has = FALSE, expert = FALSE;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        gboolean alone = r->kind == MS_MEASUREMENT_GEMM && !ms_measurement_overlapped(r);
        has |= alone;
        expert |= alone && !g_strcmp0(r->label, "mlp_up_proj");
    }
    if (!has) {
        return TRUE;
    }
    if (!expert) {
        return fit_plain_gemms(topo, set, cal, report, any, error);
    }
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    if (!ms_measurement_set_expert_points(set, opts->expert_d_model, opts->expert_d_ffn,
                                          opts->expert_gated, points, error)) {
        return FALSE;
    }
    MsRoofline roof;
    ms_calibrate_roofline(topo, &roof);
    g_autoptr(MsGemmCurve) curve =
        ms_fit_gemm_curve((MsGemmPoint *)points->data, points->len, &roof, error);
    if (curve == NULL ||
        !ms_calibration_set_gemm(cal, curve, 1.0, ms_time_from_s(roof.launch_s), error)) {
        return FALSE;
    }
    if (report) {
        g_ptr_array_add(
            report,
            g_strdup_printf("gemm expert %" G_GUINT64_FORMAT "x%" G_GUINT64_FORMAT
                            "%s: %u token counts, efficiency %.3f at %g tokens .. %.3f at "
                            "%g tokens (%u memory-bound)",
                            opts->expert_d_model, opts->expert_d_ffn,
                            opts->expert_gated ? " gated" : "", curve->n, curve->efficiency[0],
                            curve->tokens[0], curve->efficiency[curve->n - 1],
                            curve->tokens[curve->n - 1], curve->n_memory_bound));
    }
    *any = TRUE;
    return TRUE;
}

/* The overlap slowdown, after the curve (which ms_calibration_set_gemm records with none). */
static gboolean
fit_overlap(const MsMeasurementSet *set, MsCalibration *cal, GPtrArray *report, gboolean *any,
            GError **error)
{
    MsOverlapFit f;
    if (!ms_overlap_fit(set, NULL, &f, error)) {
        return FALSE;
    }
    if (f.pairs == 0) {
        return TRUE;
    }
    if (!ms_calibration_set_overlap_slowdown(cal, f.applied, error)) {
        return FALSE;
    }
    if (report) {
        g_autofree char *se = isnan(f.std_error) ? g_strdup("one pair: no error")
                                                 : g_strdup_printf("+- %.3f", f.std_error);
        g_autofree char *kept =
            f.applied != f.slowdown ? g_strdup_printf(", %.3f applied", f.applied) : g_strdup("");
        g_ptr_array_add(report,
                        g_strdup_printf("overlap slowdown %.3f %s%s (%u kernels alone and under "
                                        "an allreduce, largest %.3fx; median error of the time "
                                        "together %.1f%% without it, %.1f%% with it)",
                                        f.slowdown, se, kept, f.pairs, f.largest,
                                        100 * f.median_before, 100 * f.median_after));
    }
    *any = TRUE;
    return TRUE;
}

gboolean
ms_calibrate_check_dtypes(const MsMeasurementSet *set, GError **error)
{
    /* The first row that names a datatype, per configuration "kind ranks per_node". */
    g_autoptr(GHashTable) first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *b = ms_measurement_set_get(set, i);
        if (!ms_measurement_kind_is_comm(b->kind) || b->dtype == NULL) {
            continue;
        }
        char *key = g_strdup_printf("%d %u %u", (int)b->kind, b->ranks, b->ranks_per_node);
        const MsMeasurement *a = g_hash_table_lookup(first, key);
        if (a == NULL) {
            g_hash_table_insert(first, key, (gpointer)b);
            continue;
        }
        g_free(key);
        if (strcmp(a->dtype, b->dtype) != 0) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_MIXED,
                        "%s:%u: %s rows of %u ranks (%u per node) in %s and in %s (%s:%u): a "
                        "calibration holds one table per configuration, so it is fitted on one "
                        "datatype; give the rows of one datatype",
                        b->source, b->line, ms_measurement_kind_name(a->kind), a->ranks,
                        a->ranks_per_node, a->dtype, b->dtype, a->source, a->line);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_calibrate(MsTopology *topo, const MsMeasurementSet *set, const MsCalibrateOptions *opts_in,
             MsCalibration *cal, GPtrArray *report, GError **error)
{
    const MsCalibrateOptions *opts = opts_in ? opts_in : &ms_calibrate_default_options;
    /* Work on the rows to fit only. */
    g_autoptr(MsMeasurementSet) used = ms_measurement_set_new();
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        if ((opts->use == NULL || opts->use[i]) &&
            !ms_measurement_set_add(used, ms_measurement_set_get(set, i), error)) {
            return FALSE;
        }
    }
    if (!ms_calibrate_check_dtypes(used, error)) {
        return FALSE;
    }
    gboolean before = ms_calibration_link(cal, MS_LINK_NIC, &(MsCalibrationLink){0}) ||
                      ms_calibration_link(cal, MS_LINK_NVSWITCH, &(MsCalibrationLink){0});
    if (!fit_links(topo, used, cal, report, error)) {
        return FALSE;
    }
    gboolean any = before;
    for (guint k = 0; k < MS_LINK_N_CLASSES; k++) {
        MsCalibrationLink l;
        any |= ms_calibration_link(cal, (MsLinkClass)k, &l);
    }
    if (!fit_collectives(topo, used, cal, report, &any, error) ||
        !fit_gemm(topo, used, opts, cal, report, &any, error) ||
        !fit_overlap(used, cal, report, &any, error)) {
        return FALSE;
    }
    guint forced = 0;
    for (guint i = 0; i < ms_measurement_set_size(used); i++) {
        forced += !ms_calibrate_row_default(ms_measurement_set_get(used, i));
    }
    if (forced && report) {
        g_ptr_array_add(report, g_strdup_printf("%u rows under forced NCCL channels or queue pairs "
                                                "left out (the nccl model's fit uses them)",
                                                forced));
    }
    if (!any) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA,
                    "no point-to-point, collective or expert GEMM measurements to fit "
                    "(%u rows read%s)",
                    ms_measurement_set_size(set),
                    forced ? "; those under forced NCCL channels or queue pairs are for "
                             "calibrate --net nccl"
                           : "");
        return FALSE;
    }
    ms_calibration_set_topology(cal, ms_topology_name(topo), NULL);
    return TRUE;
}

/* --- predictions --- */

static void
transfer_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    /* Nothing to do: the transfer's finish time is the clock when the run ends. */
}

/* A point-to-point transfer between the scope's GPU pair; with no_latency only its bandwidth
 * part. */
static gboolean
transfer_time(const MsTopology *topo, const MsMeasurement *row, guint64 bytes, gboolean no_latency,
              double *seconds, GError **error)
{
    guint a, b;
    if (!ms_calibration_scope_pair(topo, row->ranks_per_node < row->ranks, &a, &b)) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "%s:%u: no GPU pair for this transfer in topology '%s'", row->source, row->line,
                    ms_topology_name(topo));
        return FALSE;
    }
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    guint32 h = ms_sim_add_handler(sim, transfer_done, NULL);
    if (!ms_sim_transfer_latency(sim, ms_topology_gpu_device(topo, a),
                                 ms_topology_gpu_device(topo, b), bytes, 1.0,
                                 no_latency ? 0 : MS_TIME_NEVER, h, 0, error)) {
        return FALSE;
    }
    if (!ms_sim_run(sim, error)) {
        return FALSE;
    }
    *seconds = ms_time_to_s(ms_sim_now(sim));
    return TRUE;
}

static gboolean
bandwidth_part(const MsTopology *topo, MsMeasurementKind kind, MsCollOp op, const guint *ranks,
               guint n, const MsMeasurement *row, double *seconds, GError **error)
{
    if (kind == MS_MEASUREMENT_SENDRECV) {
        return transfer_time(topo, row, row->bytes, TRUE, seconds, error);
    }
    return simulate(topo, NULL, TRUE, op, ranks, n, row->bytes, seconds, error);
}

static gboolean
predict_sendrecv(const MsTopology *topo, const MsCalibration *cal, const MsMeasurement *row,
                 double *seconds, GError **error)
{
    MsTime alpha = 0;
    const MsEffTable *table = NULL;
    if (cal == NULL || !ms_calibration_collective_lookup(cal, MS_MEASUREMENT_SENDRECV, row->ranks,
                                                         row->ranks_per_node, &alpha, &table)) {
        return transfer_time(topo, row, row->bytes, FALSE, seconds, error);
    }
    double eff = table ? ms_eff_table_eval(table, (double)row->bytes) : 1.0;
    double t;
    if (!transfer_time(topo, row, ms_calibration_stretch(row->bytes, eff), TRUE, &t, error)) {
        return FALSE;
    }
    *seconds = ms_time_to_s(alpha) + t;
    return TRUE;
}

/* nccl-tests' sendrecv under the nccl model: rank i sends bytes to i + 1 in one group. */
static gboolean
predict_sendrecv_net(const MsTopology *topo, MsNetModel *net, const MsMeasurement *row,
                     double *seconds, GError **error)
{
    guint n = row->ranks;
    g_autofree guint *ranks = g_new(guint, n);
    if (!place_row(topo, row, ranks, error)) {
        return FALSE;
    }
    g_autofree guint64 *matrix = g_new0(guint64, (gsize)n * n);
    for (guint i = 0; i < n; i++) {
        matrix[(gsize)i * n + (i + 1) % n] += row->bytes;
    }
    MsCollSpec spec = {
        .op = MS_COLL_ALLTOALL, .n_ranks = n, .ranks = ranks, .matrix = matrix, .net = net};
    return simulate_spec(topo, NULL, spec, seconds, error);
}

gboolean
ms_calibrate_predict(const MsTopology *topo, const MsCalibration *cal, const MsMeasurement *row,
                     double *seconds, GError **error)
{
    return ms_calibrate_predict_net(topo, cal, NULL, row, seconds, error);
}

void
ms_calibrate_row_spec(const MsNetSpec *base, const MsMeasurement *row, MsNetSpec *out)
{
    *out = *base;
    if (base->kind == MS_NET_NCCL && row->channels) {
        out->nccl.min_channels = out->nccl.max_channels = row->channels;
    }
}

MsNetModel *
ms_calibrate_row_model(const MsTopology *topo, MsNetModel *net, const MsMeasurement *row,
                       MsNetModel **own, GError **error)
{
    *own = NULL;
    if (net == NULL || ms_net_model_kind(net) != MS_NET_NCCL) {
        return net;
    }
    /* Under version=log the row's own release; one outside the modelled releases runs as the
     * nearest (2.6.4 as 2.8.0, as the corpus does), a row without one at the default. */
    const MsNetSpec *base = ms_net_model_spec(net);
    guint release = 0;
    if (base->nccl.version == MS_NCCL_VERSION_LOG && row->nccl_version) {
        release = CLAMP(row->nccl_version, MS_NCCL_VERSION_MIN, MS_NCCL_VERSION_MAX);
    }
    if (row->channels == 0 && (release == 0 || release == ms_net_model_nccl_version(net))) {
        return net;
    }
    MsNetSpec spec;
    ms_calibrate_row_spec(base, row, &spec);
    spec.nccl.version = release ? release : spec.nccl.version;
    *own = ms_net_model_new(&spec, topo, error);
    return *own;
}

gboolean
ms_calibrate_row_default(const MsMeasurement *row)
{
    return row->channels == 0 && row->qps == 0;
}

/* The device time of a collective (op) or send/receive (op NULL) row, seconds. */
static gboolean
predict_comm(const MsTopology *topo, const MsCalibration *cal, MsNetModel *net, gboolean nccl,
             const MsMeasurement *row, const MsCollOp *op, double *seconds, GError **error)
{
    if (op == NULL) {
        return nccl ? predict_sendrecv_net(topo, net, row, seconds, error)
                    : predict_sendrecv(topo, cal, row, seconds, error);
    }
    g_autofree guint *ranks = g_new(guint, row->ranks);
    MsCollSpec spec = {
        .op = *op, .n_ranks = row->ranks, .ranks = ranks, .bytes = row->bytes, .net = net};
    return place_row(topo, row, ranks, error) && simulate_spec(topo, cal, spec, seconds, error);
}

gboolean
ms_calibrate_predict_net(const MsTopology *topo, const MsCalibration *cal, MsNetModel *net,
                         const MsMeasurement *row, double *seconds, GError **error)
{
    gboolean nccl = net && ms_net_model_kind(net) == MS_NET_NCCL;
    if (row->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                    "%s:%u: an alltoall_under_allreduce row is predicted by the NIC fit",
                    row->source ? row->source : "<memory>", row->line);
        return FALSE;
    }
    /* A row under forced channels runs on a model of its own with them. */
    g_autoptr(MsNetModel) own = NULL;
    if (nccl && (net = ms_calibrate_row_model(topo, net, row, &own, error)) == NULL) {
        return FALSE;
    }
    MsCollOp op;
    gboolean is_coll = ms_calibrate_coll_op(row->kind, &op);
    if (is_coll || row->kind == MS_MEASUREMENT_SENDRECV) {
        if (!predict_comm(topo, cal, net, nccl, row, is_coll ? &op : NULL, seconds, error)) {
            return FALSE;
        }
        /* A run whose threads each drove several GPUs paced by its host (sim/net/host_loop.h). */
        double cost = ms_host_loop_call_cost(net ? ms_net_model_spec(net) : NULL, topo);
        *seconds = ms_host_loop_iteration(*seconds, row->gpus_per_thread, cost);
        return TRUE;
    }
    const MsGpuSpec *spec = ms_topology_gpu_spec(topo, 0);
    g_autoptr(MsComputeModel) model =
        cal ? ms_calibration_compute_model(cal, spec, error) : ms_compute_model_new(spec, error);
    if (model == NULL) {
        return FALSE;
    }
    double flops = 0, bytes = (double)row->bytes;
    if (row->kind == MS_MEASUREMENT_GEMM) {
        ms_measurement_gemm_cost(row, &flops, &bytes);
        /* A GEMM runs at the peak of its own datatype (both fp8 formats at the fp8 peak). */
        MsDtype dtype;
        const char *name = row->dtype && g_str_has_prefix(row->dtype, "fp8") ? "fp8" : row->dtype;
        if (ms_dtype_from_name(name, &dtype) && !ms_compute_model_set_dtype(model, dtype, error)) {
            return FALSE;
        }
    }
    /* A kernel timed under a looping allreduce runs as the engine runs compute beside NCCL. */
    MsTime t = ms_measurement_overlapped(row)
                   ? ms_compute_time_overlapped(model, flops, (guint64)bytes, row->m)
                   : ms_compute_time(model, flops, (guint64)bytes, row->m);
    *seconds =
        ms_time_to_s(row->kind == MS_MEASUREMENT_LAUNCH ? ms_compute_model_launch(model) : t);
    return TRUE;
}
