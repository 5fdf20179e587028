/* bench_report: measurement rows as text, in the columns nccl-tests prints for communication and
 * as shapes, TFLOP/s and GB/s for kernels, with a compute model's time beside each kernel's; an
 * all-to-all under an allreduce beside its time alone. */
#include "bench_report.h"

#include <math.h>

#include "backends/executor_bench.h"
#include "sim/base/json_output.h"
#include "sim/base/units.h"
#include "validate/nic_fit.h"
#include "validate/overlap_fit.h"

/* The label, and NCCL's settings where the row has them. */
static void
append_label(GString *o, const MsMeasurement *r)
{
    g_string_append(o, *r->label ? r->label : "-");
    if (r->channels) {
        g_string_append_printf(o, " channels=%u", r->channels);
    }
    if (r->qps) {
        g_string_append_printf(o, " qps=%u", r->qps);
    }
    g_string_append_c(o, '\n');
}

static void
format_comm(GString *o, const MsMeasurement *r)
{
    double algbw, busbw;
    ms_bench_bandwidth(r->kind, r->bytes, r->seconds, r->ranks, &algbw, &busbw);
    guint es = r->dtype ? ms_dtype_size(r->dtype) : 1;
    g_string_append_printf(o,
                           "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT
                           "  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %5u  ",
                           r->bytes, r->bytes / MAX(es, 1), r->dtype ? r->dtype : "int8",
                           r->kind == MS_MEASUREMENT_ALLREDUCE ? "sum" : "none", -1,
                           r->seconds * 1e6, algbw / 1e9, busbw / 1e9, r->ranks);
    append_label(o, r);
}

/* Row i, an all-to-all under an allreduce, beside the all-to-all alone it is compared with. */
static void
format_under(GString *o, const MsMeasurementSet *set, guint i)
{
    const MsMeasurement *r = ms_measurement_set_get(set, i);
    const MsMeasurement *a = ms_nic_fit_alone_row(set, i);
    g_string_append_printf(o, "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  ", r->bytes,
                           r->background_bytes);
    if (a) {
        g_string_append_printf(o, "%10.2f", a->seconds * 1e6);
    } else {
        g_string_append_printf(o, "%10s", "-");
    }
    g_string_append_printf(o, "  %12.2f  ", r->seconds * 1e6);
    if (a) {
        g_string_append_printf(o, "%7.2fx", r->seconds / a->seconds);
    } else {
        g_string_append_printf(o, "%8s", "-");
    }
    g_string_append_printf(o, "  %5u  ", r->ranks);
    append_label(o, r);
}

/* Row i, a kernel; one timed under an allreduce says so, and how much slower than alone. */
static void
format_compute(GString *o, const MsMeasurementSet *set, guint i, const MsComputeModel *model)
{
    const MsMeasurement *r = ms_measurement_set_get(set, i);
    double flops = 0, bytes = (double)r->bytes;
    if (r->kind == MS_MEASUREMENT_GEMM) {
        ms_measurement_gemm_cost(r, &flops, &bytes);
    }
    g_string_append_printf(o,
                           "%8" G_GUINT64_FORMAT "  %8" G_GUINT64_FORMAT "  %8" G_GUINT64_FORMAT
                           "  %6s  %-14s  %10.2f  %8.2f  %8.1f",
                           r->m, r->n, r->k, r->dtype ? r->dtype : "-", r->label, r->seconds * 1e6,
                           flops / r->seconds / 1e12, bytes / r->seconds / 1e9);
    gboolean under = ms_measurement_overlapped(r);
    if (model) {
        MsTime t = under ? ms_compute_time_overlapped(model, flops, (guint64)bytes, r->m)
                         : ms_compute_time(model, flops, (guint64)bytes, r->m);
        g_string_append_printf(o, "  %10.2f  %6.2f", ms_time_to_us(t),
                               ms_time_to_s(t) / r->seconds);
    }
    if (under) {
        const MsMeasurement *a = ms_overlap_fit_alone_row(set, i);
        g_string_append_printf(o, "  under an allreduce of %" G_GUINT64_FORMAT " B",
                               r->background_bytes);
        if (a) {
            g_string_append_printf(o, ": %.2fx alone", r->seconds / a->seconds);
        }
    }
    g_string_append_c(o, '\n');
}

char *
ms_bench_report_format(const MsMeasurementSet *set, const MsComputeModel *model)
{
    GString *o = g_string_new(NULL);
    for (guint kind = 0; kind < MS_MEASUREMENT_N_KINDS; kind++) {
        gboolean header = FALSE;
        for (guint i = 0; i < ms_measurement_set_size(set); i++) {
            const MsMeasurement *r = ms_measurement_set_get(set, i);
            if (r->kind != kind) {
                continue;
            }
            gboolean comm = ms_measurement_kind_is_comm(r->kind);
            if (!header && r->kind == MS_MEASUREMENT_LAUNCH) {
                g_string_append(o, "# launch\n");
                header = TRUE;
            }
            if (!header && r->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE) {
                g_string_append(o, "# alltoall_under_allreduce: an all-to-all alone and while an "
                                   "allreduce of background bytes loops beside it\n"
                                   "#       size    background   alone(us)  together(us)  "
                                   "slowdown  ranks  label\n");
                header = TRUE;
            }
            if (!header) {
                g_string_append_printf(o, "# %s\n", ms_measurement_kind_name(r->kind));
                g_string_append(o, comm ? "#       size         count      type   redop    root"
                                          "    time(us)  algbw   busbw  ranks  label\n"
                                        : "#      m         n         k   dtype  label          "
                                          "  time(us)   TFLOP/s     GB/s");
                g_string_append(o, comm || model == NULL ? "" : "   model(us)  model/measured");
                g_string_append(o, comm ? "" : "\n");
                header = TRUE;
            }
            if (r->kind == MS_MEASUREMENT_LAUNCH) {
                g_string_append_printf(o, "# one empty kernel: %.3f us\n", r->seconds * 1e6);
            } else if (r->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE) {
                format_under(o, set, i);
            } else if (comm) {
                format_comm(o, r);
            } else {
                format_compute(o, set, i, model);
            }
        }
    }
    return g_string_free(o, FALSE);
}

static void
member_us(JsonBuilder *b, const char *name, double seconds)
{
    json_builder_set_member_name(b, name);
    if (isnan(seconds)) {
        json_builder_add_null_value(b);
    } else {
        json_builder_add_double_value(b, seconds * 1e6);
    }
}

JsonNode *
ms_bench_report_to_json(const MsMeasurementSet *set, const char *backend)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.bench/1"); /* docs/outputs.md */
    ms_json_member_string(b, "backend", backend);
    json_builder_set_member_name(b, "rows");
    json_builder_begin_array(b);
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        json_builder_begin_object(b);
        ms_json_member_string(b, "kind", ms_measurement_kind_name(r->kind));
        ms_json_member_int(b, "bytes", (gint64)r->bytes);
        ms_json_member_int(b, "ranks", r->ranks);
        ms_json_member_int(b, "ranks_per_node", r->ranks_per_node);
        ms_json_member_int(b, "m", (gint64)r->m);
        ms_json_member_int(b, "n", (gint64)r->n);
        ms_json_member_int(b, "k", (gint64)r->k);
        json_builder_set_member_name(b, "dtype");
        if (r->dtype) {
            json_builder_add_string_value(b, r->dtype);
        } else {
            json_builder_add_null_value(b);
        }
        ms_json_member_string(b, "label", r->label ? r->label : "");
        member_us(b, "time_us", r->seconds);
        member_us(b, "min_us", r->min_s);
        member_us(b, "median_us", r->median_s);
        member_us(b, "mean_us", r->mean_s);
        ms_json_member_int(b, "background_bytes", (gint64)r->background_bytes);
        ms_json_member_int(b, "channels", r->channels);
        ms_json_member_int(b, "qps", r->qps);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
