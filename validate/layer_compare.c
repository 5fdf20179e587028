/* layer_compare: pairing two per-layer tables and the report of their differences. */
#include "layer_compare.h"

#include <math.h>
#include <string.h>

#include "sim/base/json_output.h"
#include "sim/base/units.h"

G_DEFINE_QUARK(ms_layer_compare_error_quark, ms_layer_compare_error)

/* A part is named as missing from the simulation when it is at least this share of the
 * measured layer time; the host total when it is this share and the simulation has less than a
 * quarter of it. */
#define PART_SHARE 0.01
#define HOST_SHARE 0.05

void
ms_layer_select_init(MsLayerSelect *sel)
{
    sel->first = 0;
    sel->last = G_MAXUINT32;
    sel->min_us = 1.0;
}

gboolean
ms_layer_select_parse(MsLayerSelect *sel, const char *text)
{
    guint64 a = 0, b = G_MAXUINT32;
    const char *dash = strchr(text, '-');
    g_autofree char *head = dash ? g_strndup(text, (gsize)(dash - text)) : g_strdup(text);
    if (!ms_parse_uint(head, 0, G_MAXUINT32, &a, NULL)) {
        return FALSE;
    }
    if (dash == NULL) {
        b = a;
    } else if (dash[1] != '\0' && !ms_parse_uint(dash + 1, a, G_MAXUINT32, &b, NULL)) {
        return FALSE;
    }
    sel->first = (guint)a;
    sel->last = (guint)b;
    return TRUE;
}

static const char *const metric_names[3] = {"layer", "slowest", "host_total"};

static double
host_total(const MsLayerRow *r)
{
    return r->part_us[MS_LAYER_HOST] + MAX(0.0, r->layer_us - r->busy_us);
}

static gboolean
selected(const MsLayerSelect *sel, const MsLayerRow *r)
{
    return r->iteration >= sel->first && r->iteration <= sel->last;
}

/* Values of one metric over the pairs. */
typedef struct {
    GArray *sim, *meas;
    double sim_sum, meas_sum;
    guint n_all;
} Acc;

static void
acc_add(Acc *a, double sim, double meas, double min_us)
{
    a->sim_sum += sim;
    a->meas_sum += meas;
    a->n_all++;
    if (meas > min_us) {
        g_array_append_val(a->sim, sim);
        g_array_append_val(a->meas, meas);
    }
}

static void
acc_finish(Acc *a, MsLayerMetric *m)
{
    memset(&m->stats, 0, sizeof m->stats);
    if (a->meas->len > 0) {
        ms_error_stats((double *)a->sim->data, (double *)a->meas->data, a->meas->len, &m->stats,
                       NULL);
    }
    m->sim_mean_us = a->n_all ? a->sim_sum / a->n_all : 0;
    m->meas_mean_us = a->n_all ? a->meas_sum / a->n_all : 0;
    g_array_unref(a->sim);
    g_array_unref(a->meas);
}

/* The slowest GPU's layer time per (iteration, layer, phase) of one table. */
static GHashTable *
slowest_of(const MsLayerTable *t, const MsLayerSelect *sel)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (guint i = 0; i < ms_layer_table_n_rows(t); i++) {
        const MsLayerRow *r = ms_layer_table_row(t, i);
        if (!selected(sel, r)) {
            continue;
        }
        char *key = g_strdup_printf("%u.%d.%d", r->iteration, r->layer, r->phase);
        double *v = g_hash_table_lookup(h, key);
        if (v == NULL) {
            v = g_new(double, 1);
            *v = r->layer_us;
            g_hash_table_insert(h, key, v);
        } else {
            *v = MAX(*v, r->layer_us);
            g_free(key);
        }
    }
    return h;
}

static void
name_unmodelled(MsLayerComparison *c, const MsLayerTable *meas)
{
    const MsLayerMetric *layer = &c->metrics[0], *host = &c->metrics[2];
    double L = layer->meas_mean_us;
    for (guint p = 0; p < MS_LAYER_N_PARTS && L > 0; p++) {
        const MsLayerMetric *m = &c->metrics[3 + p];
        if (p != MS_LAYER_HOST && m->meas_mean_us >= PART_SHARE * L && m->sim_mean_us == 0) {
            g_ptr_array_add(c->unmodelled,
                            g_strdup_printf("%s: measured %.3f us per layer (%.1f%% of the layer "
                                            "time), which the simulation has none of",
                                            ms_layer_part_name(p), m->meas_mean_us,
                                            100 * m->meas_mean_us / L));
        }
    }
    if (L > 0 && host->meas_mean_us >= HOST_SHARE * L &&
        host->sim_mean_us < 0.25 * host->meas_mean_us) {
        g_ptr_array_add(
            c->unmodelled,
            g_strdup_printf("host time (framework work and time between ops): measured %.3f us "
                            "per layer (%.1f%% of the layer time), simulated %.3f us: give the "
                            "model its framework figures (host_op, host_moe_layer, host_expert, "
                            "docs/models.md) or fit them with moesim calibrate --layers",
                            host->meas_mean_us, 100 * host->meas_mean_us / L, host->sim_mean_us));
    }
    /* What the reader of the measurement found that moesim does not model. */
    for (const char *keys[] = {"unmodelled.device copies", "measured.host synchronisations"},
                    **k = keys;
         k < keys + G_N_ELEMENTS(keys); k++) {
        const char *v = ms_layer_table_get_meta(meas, *k);
        if (v) {
            g_ptr_array_add(c->unmodelled, g_strdup_printf("%s: %s", strchr(*k, '.') + 1, v));
        }
    }
    if (c->meas_only) {
        g_ptr_array_add(c->unmodelled,
                        g_strdup_printf("%u measured layer rows have no simulated counterpart "
                                        "(layers, phases, GPUs or iterations the simulation did "
                                        "not run)",
                                        c->meas_only));
    }
}

gboolean
ms_layer_compare(const MsLayerTable *sim, const MsLayerTable *meas, const MsLayerSelect *sel,
                 MsLayerComparison *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->unmodelled = g_ptr_array_new_with_free_func(g_free);
    out->predicted = g_array_new(FALSE, FALSE, sizeof(double));
    out->measured = g_array_new(FALSE, FALSE, sizeof(double));
    Acc acc[MS_LAYER_COMPARE_N_METRICS];
    for (guint m = 0; m < MS_LAYER_COMPARE_N_METRICS; m++) {
        acc[m] = (Acc){g_array_new(FALSE, FALSE, sizeof(double)),
                       g_array_new(FALSE, FALSE, sizeof(double)), 0, 0, 0};
        out->metrics[m].name = m < 3 ? metric_names[m] : ms_layer_part_name(m - 3);
    }
    for (guint i = 0; i < ms_layer_table_n_rows(meas); i++) {
        const MsLayerRow *b = ms_layer_table_row(meas, i);
        if (!selected(sel, b)) {
            continue;
        }
        const MsLayerRow *a = ms_layer_table_find(sim, b->iteration, b->layer, b->phase, b->gpu);
        if (a == NULL) {
            out->meas_only++;
            continue;
        }
        out->pairs++;
        acc_add(&acc[0], a->layer_us, b->layer_us, sel->min_us);
        acc_add(&acc[2], host_total(a), host_total(b), sel->min_us);
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            acc_add(&acc[3 + p], a->part_us[p], b->part_us[p], sel->min_us);
        }
        if (b->layer_us > sel->min_us) {
            g_array_append_val(out->predicted, a->layer_us);
            g_array_append_val(out->measured, b->layer_us);
        }
    }
    for (guint i = 0; i < ms_layer_table_n_rows(sim); i++) {
        const MsLayerRow *a = ms_layer_table_row(sim, i);
        out->sim_only += selected(sel, a) && ms_layer_table_find(meas, a->iteration, a->layer,
                                                                 a->phase, a->gpu) == NULL;
    }
    g_autoptr(GHashTable) ss = slowest_of(sim, sel);
    g_autoptr(GHashTable) ms = slowest_of(meas, sel);
    g_autoptr(GList) keys = g_hash_table_get_keys(ms);
    keys = g_list_sort(keys, (GCompareFunc)strcmp);
    for (GList *k = keys; k; k = k->next) {
        const double *a = g_hash_table_lookup(ss, k->data), *b = g_hash_table_lookup(ms, k->data);
        if (a) {
            acc_add(&acc[1], *a, *b, sel->min_us);
        }
    }
    for (guint m = 0; m < MS_LAYER_COMPARE_N_METRICS; m++) {
        acc_finish(&acc[m], &out->metrics[m]);
    }
    if (out->pairs == 0) {
        g_set_error(error, MS_LAYER_COMPARE_ERROR, MS_LAYER_COMPARE_ERROR_EMPTY,
                    "no layer of the measurement (%u rows in the selected iterations) is in the "
                    "simulation (%u rows): they come from different runs or iterations",
                    out->meas_only, ms_layer_table_n_rows(sim));
        ms_layer_comparison_clear(out);
        return FALSE;
    }
    name_unmodelled(out, meas);
    return TRUE;
}

void
ms_layer_comparison_clear(MsLayerComparison *c)
{
    if (c->unmodelled) {
        g_ptr_array_unref(c->unmodelled);
    }
    if (c->predicted) {
        g_array_unref(c->predicted);
    }
    if (c->measured) {
        g_array_unref(c->measured);
    }
    memset(c, 0, sizeof *c);
}

const MsLayerMetric *
ms_layer_comparison_metric(const MsLayerComparison *c, const char *name)
{
    for (guint m = 0; m < MS_LAYER_COMPARE_N_METRICS; m++) {
        if (c->metrics[m].name && !strcmp(c->metrics[m].name, name)) {
            return &c->metrics[m];
        }
    }
    return NULL;
}

JsonNode *
ms_layer_comparison_to_json(const MsLayerComparison *c)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.validate-layers/1"); /* docs/outputs.md */
    ms_json_member_int(b, "pairs", c->pairs);
    ms_json_member_int(b, "simulated_only", c->sim_only);
    ms_json_member_int(b, "measured_only", c->meas_only);
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_array(b);
    for (guint m = 0; m < MS_LAYER_COMPARE_N_METRICS; m++) {
        const MsLayerMetric *x = &c->metrics[m];
        json_builder_begin_object(b);
        ms_json_member_string(b, "name", x->name);
        ms_json_member_int(b, "n", x->stats.n);
        ms_json_member_double(b, "median", x->stats.median);
        ms_json_member_double(b, "p90", x->stats.p90);
        ms_json_member_double(b, "max", x->stats.max);
        ms_json_member_double(b, "simulated_mean_us", x->sim_mean_us);
        ms_json_member_double(b, "measured_mean_us", x->meas_mean_us);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "unmodelled");
    json_builder_begin_array(b);
    for (guint i = 0; i < c->unmodelled->len; i++) {
        json_builder_add_string_value(b, c->unmodelled->pdata[i]);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
