/* validation_report: pairing runs or predicting tables, and the error statistics over them. */
#include "validation_report.h"
#include "sim/base/json_output.h"

#include <math.h>
#include <string.h>

#include "validate/calibrate.h"
#include "validate/measurement.h"
#include "validate/nic_fit.h"
#include "validate/pace_fit.h"
#include "validate/validation.h"

struct _MsValidationReport {
    gboolean runs;
    GArray *rows;        /* MsReportRow */
    GArray *pred, *meas; /* double, every item compared */
    GArray *size, *bus;  /* double per item: bytes, bus-bandwidth factor (0: none) */
    double tau;
    gboolean has_tau; /* two pairs or more */
    MsErrorStats all;
};

static void
row_clear(gpointer p)
{
    MsReportRow *row = p;
    g_free(row->name);
    if (row->paces) {
        g_array_unref(row->paces);
    }
}

static MsValidationReport *
report_new(gboolean runs)
{
    MsValidationReport *r = g_new0(MsValidationReport, 1);
    r->runs = runs;
    r->rows = g_array_new(FALSE, TRUE, sizeof(MsReportRow));
    g_array_set_clear_func(r->rows, row_clear);
    r->pred = g_array_new(FALSE, FALSE, sizeof(double));
    r->meas = g_array_new(FALSE, FALSE, sizeof(double));
    r->size = g_array_new(FALSE, TRUE, sizeof(double));
    r->bus = g_array_new(FALSE, TRUE, sizeof(double));
    r->tau = NAN;
    return r;
}

void
ms_validation_report_free(MsValidationReport *r)
{
    if (r == NULL) {
        return;
    }
    g_array_unref(r->rows);
    g_array_unref(r->pred);
    g_array_unref(r->meas);
    g_array_unref(r->size);
    g_array_unref(r->bus);
    g_free(r);
}

/* Appends a row over the items p and m (n of them) and the items to the totals. */
static gboolean
add_row(MsValidationReport *r, char *name, const double *p, const double *m, guint n,
        double step_sim, double step_meas, GError **error)
{
    MsReportRow row = {name, {0}, step_sim, step_meas, NAN, NAN, NULL};
    if (!ms_error_stats(p, m, n, &row.stats, error)) {
        g_free(name);
        return FALSE;
    }
    g_array_append_val(r->rows, row);
    g_array_append_vals(r->pred, p, n);
    g_array_append_vals(r->meas, m, n);
    /* Items without a size (runs' ops) have no bus bandwidth; tables fill theirs in after. */
    g_array_set_size(r->size, r->pred->len);
    g_array_set_size(r->bus, r->pred->len);
    return TRUE;
}

/* The errors of every item; nothing compared is an error (a bound must never pass on nothing). */
static gboolean
finish(MsValidationReport *r, GError **error)
{
    if (r->pred->len == 0) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_EMPTY,
                    "the measurements hold nothing to compare");
        return FALSE;
    }
    return ms_error_stats((double *)r->pred->data, (double *)r->meas->data, r->pred->len, &r->all,
                          error);
}

/* Compares one pair of result files into a row. */
static gboolean
compare_pair(MsValidationReport *r, const char *sim, const char *meas, double min_us,
             GError **error)
{
    g_autoptr(JsonNode) a = ms_result_file_load(sim, error);
    g_autoptr(JsonNode) b = a ? ms_result_file_load(meas, error) : NULL;
    MsRunComparison cmp;
    if (b == NULL) {
        return FALSE;
    }
    if (!ms_compare_runs(a, b, min_us, &cmp, error)) {
        g_prefix_error(error, "%s against %s: ", sim, meas);
        return FALSE;
    }
    guint k = cmp.ops->len;
    if (k == 0) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                    "%s against %s: no op measured longer than --min-op (%g us): nothing to "
                    "compare",
                    sim, meas, min_us);
        ms_run_comparison_clear(&cmp);
        return FALSE;
    }
    g_autofree double *p = g_new(double, k);
    g_autofree double *m = g_new(double, k);
    for (guint j = 0; j < k; j++) {
        const MsOpPair *op = &g_array_index(cmp.ops, MsOpPair, j);
        p[j] = op->predicted_us;
        m[j] = op->measured_us;
    }
    gboolean ok = add_row(r, g_strdup(cmp.policy), p, m, k, cmp.step_predicted_us,
                          cmp.step_measured_us, error);
    if (ok) {
        MsReportRow *row = &g_array_index(r->rows, MsReportRow, r->rows->len - 1);
        row->wait_simulated_us = cmp.wait_predicted_us;
        row->wait_measured_us = cmp.wait_measured_us;
        row->paces = ms_pace_fit(&cmp);
    }
    ms_run_comparison_clear(&cmp);
    return ok;
}

MsValidationReport *
ms_validation_report_runs(const char *const *sims, const char *const *meas, double min_us,
                          GError **error)
{
    g_autoptr(MsValidationReport) r = report_new(TRUE);
    guint n = g_strv_length((char **)sims);
    g_return_val_if_fail(n == g_strv_length((char **)meas), NULL);
    for (guint i = 0; i < n; i++) {
        if (!compare_pair(r, sims[i], meas[i], min_us, error)) {
            return NULL;
        }
    }
    if (n >= 2) {
        g_autofree double *sp = g_new(double, n);
        g_autofree double *sm = g_new(double, n);
        for (guint i = 0; i < n; i++) {
            sp[i] = g_array_index(r->rows, MsReportRow, i).step_simulated_us;
            sm[i] = g_array_index(r->rows, MsReportRow, i).step_measured_us;
        }
        r->tau = ms_kendall_tau(sp, sm, n);
        r->has_tau = TRUE;
    }
    return finish(r, error) ? g_steal_pointer(&r) : NULL;
}

/* nccl-tests' bus-bandwidth factor of a row (docs/collectives.md "Bus bandwidth and sizes"):
 * 2(n-1)/n for allreduce, (n-1)/n for the other collectives (an all-to-all under an allreduce is
 * an all-to-all); sendrecv's busbw is its algbw. 0 for rows without one: compute kinds, one
 * rank. */
static double
bus_factor(const MsMeasurement *row)
{
    MsCollOp op;
    MsMeasurementKind kind =
        row->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE ? MS_MEASUREMENT_ALLTOALL : row->kind;
    if (kind == MS_MEASUREMENT_SENDRECV) {
        return 1;
    }
    return ms_calibrate_coll_op(kind, &op) ? ms_coll_busbw_factor(op, row->ranks) : 0;
}

/* One row per kind and configuration of a table, in the order they appear. */
static gboolean
predict_table(MsValidationReport *r, const MsMeasurementSet *set, const MsTopology *topo,
              const MsCalibration *cal, MsNetModel *net, GError **error)
{
    guint n = ms_measurement_set_size(set);
    g_autofree guint8 *done = g_new0(guint8, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        const MsMeasurement *a = ms_measurement_set_get(set, i);
        if (done[i]) {
            continue;
        }
        g_autoptr(GArray) p = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) m = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) size = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) bus = g_array_new(FALSE, FALSE, sizeof(double));
        for (guint j = i; j < n; j++) {
            const MsMeasurement *b = ms_measurement_set_get(set, j);
            if (done[j] || b->kind != a->kind || b->ranks != a->ranks ||
                b->ranks_per_node != a->ranks_per_node || g_strcmp0(b->label, a->label) ||
                ms_measurement_overlapped(b) != ms_measurement_overlapped(a)) {
                continue;
            }
            done[j] = 1;
            double s;
            /* An all-to-all under a looping allreduce is simulated as the NIC fit compares it
             * (validate/nic_fit.h); a calibration's per-collective figures are for calls alone. */
            gboolean ok = b->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE
                              ? ms_nic_fit_predict(topo, net ? ms_net_model_spec(net) : NULL, b,
                                                   NULL, &s, error)
                              : ms_calibrate_predict_net(topo, cal, net, b, &s, error);
            if (!ok) {
                return FALSE;
            }
            s *= 1e6;
            double mu = b->seconds * 1e6;
            g_array_append_val(p, s);
            g_array_append_val(m, mu);
            double bytes = (double)b->bytes, factor = bus_factor(b);
            g_array_append_val(size, bytes);
            g_array_append_val(bus, factor);
        }
        /* Kernels timed under an allreduce are their own group: the overlap slowdown's. */
        char *name = g_strdup_printf("%s %ux%u%s%s%s", ms_measurement_kind_name(a->kind), a->ranks,
                                     a->ranks_per_node, a->label && *a->label ? " " : "",
                                     a->label ? a->label : "",
                                     ms_measurement_overlapped(a) ? " under allreduce" : "");
        if (!add_row(r, name, (double *)p->data, (double *)m->data, p->len, NAN, NAN, error)) {
            return FALSE;
        }
        guint first = r->bus->len - bus->len;
        memcpy(&g_array_index(r->size, double, first), size->data, size->len * sizeof(double));
        memcpy(&g_array_index(r->bus, double, first), bus->data, bus->len * sizeof(double));
    }
    return TRUE;
}

MsValidationReport *
ms_validation_report_tables(const char *const *files, const MsMeasurementReadOptions *read,
                            const MsTopology *topo, const MsCalibration *cal, MsNetModel *net,
                            GError **error)
{
    g_autoptr(MsValidationReport) r = report_new(FALSE);
    for (guint f = 0; files[f]; f++) {
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_load_with(files[f], read, error);
        if (set == NULL || !predict_table(r, set, topo, cal, net, error)) {
            return NULL;
        }
    }
    return finish(r, error) ? g_steal_pointer(&r) : NULL;
}

gboolean
ms_validation_report_is_runs(const MsValidationReport *r)
{
    return r->runs;
}

guint
ms_validation_report_n_rows(const MsValidationReport *r)
{
    return r->rows->len;
}

const MsReportRow *
ms_validation_report_row(const MsValidationReport *r, guint i)
{
    return &g_array_index(r->rows, MsReportRow, i);
}

double
ms_validation_report_tau(const MsValidationReport *r)
{
    return r->tau;
}

const MsErrorStats *
ms_validation_report_all(const MsValidationReport *r)
{
    return &r->all;
}

const double *
ms_validation_report_predicted(const MsValidationReport *r, guint *n)
{
    *n = r->pred->len;
    return (const double *)r->pred->data;
}

const double *
ms_validation_report_measured(const MsValidationReport *r, guint *n)
{
    *n = r->meas->len;
    return (const double *)r->meas->data;
}

const double *
ms_validation_report_sizes(const MsValidationReport *r, guint *n)
{
    *n = r->size->len;
    return (const double *)r->size->data;
}

const double *
ms_validation_report_bus_factors(const MsValidationReport *r, guint *n)
{
    *n = r->bus->len;
    return (const double *)r->bus->data;
}

gboolean
ms_validation_report_stat(const MsValidationReport *r, const char *stat, double *out)
{
    if (!strcmp(stat, "median")) {
        *out = r->all.median;
    } else if (!strcmp(stat, "p90")) {
        *out = r->all.p90;
    } else if (!strcmp(stat, "max")) {
        *out = r->all.max;
    } else {
        return FALSE;
    }
    return TRUE;
}

JsonNode *
ms_validation_report_to_json(const MsValidationReport *r)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    /* docs/outputs.md: simulated against measured runs, or a measurement table's groups. */
    ms_json_member_string(b, "schema", r->runs ? "moesim.validate/1" : "moesim.validate-table/1");
    json_builder_set_member_name(b, r->runs ? "runs" : "groups");
    if (r->runs) {
        json_builder_begin_array(b);
    } else {
        json_builder_begin_object(b);
    }
    for (guint i = 0; i < r->rows->len; i++) {
        const MsReportRow *row = ms_validation_report_row(r, i);
        if (!r->runs) {
            ms_error_stats_json(b, row->name, &row->stats);
            continue;
        }
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, row->name);
        ms_error_stats_json(b, "ops", &row->stats);
        json_builder_set_member_name(b, "step_simulated_us");
        json_builder_add_double_value(b, row->step_simulated_us);
        json_builder_set_member_name(b, "step_measured_us");
        json_builder_add_double_value(b, row->step_measured_us);
        if (isfinite(row->wait_simulated_us) && isfinite(row->wait_measured_us)) {
            ms_json_member_double(b, "wait_simulated_us", row->wait_simulated_us);
            ms_json_member_double(b, "wait_measured_us", row->wait_measured_us);
        }
        json_builder_set_member_name(b, "gpu_pace");
        json_builder_begin_array(b);
        for (guint k = 0; k < row->paces->len; k++) {
            const MsGpuPace *g = &g_array_index(row->paces, MsGpuPace, k);
            json_builder_begin_object(b);
            ms_json_member_int(b, "gpu", g->gpu);
            ms_json_member_double(b, "pace", g->pace);
            ms_json_member_int(b, "ops", g->ops);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    if (r->runs) {
        json_builder_end_array(b);
    } else {
        json_builder_end_object(b);
    }
    if (r->has_tau) {
        json_builder_set_member_name(b, "kendall_tau");
        json_builder_add_double_value(b, r->tau);
    }
    ms_error_stats_json(b, "all", &r->all);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
