/* repro_nets: how much the network model moves an experiment's figures. Every row under a network
 * model other than the first is paired with the row of the same model, experts, GPUs and policy
 * under the first, and the ratio of each time and speedup figure over its pair is summarised
 * (smallest, largest, and which row reaches the largest change), so that the result says in
 * numbers what choosing NCCL's sharing of the NICs over equal per-flow shares does. */
#include "repro_private.h"

#include <math.h>
#include <string.h>

/* The figures compared, and whether a baseline row's value is meaningful (a speedup over itself is
 * 1 under every model, so baseline rows are left out of speedups). */
static const struct {
    const char *key;
    gboolean speedup;
} net_keys[] = {
    {"step_ms", FALSE},
    {"p50_ms", FALSE},
    {"p95_ms", FALSE},
    {"a2a_ms", FALSE},
    {"speedup", TRUE},
    {"p50_speedup", TRUE},
    {"p95_speedup", TRUE},
    {"gain", TRUE},
    {"speedup_over_fastermoe", TRUE},
    {"a2a_backward_slowdown_max", FALSE},
};

static double
figure(const ReproRow *r, const char *key)
{
    for (guint i = 0; i < r->figures->len; i++) {
        const ReproFigure *f = &g_array_index(r->figures, ReproFigure, i);
        if (strcmp(f->key, key) == 0) {
            return f->value;
        }
    }
    return NAN;
}

static gboolean
same_run(const ReproRow *a, const ReproRow *b)
{
    return a->experts == b->experts && a->gpus == b->gpus && strcmp(a->model, b->model) == 0 &&
           strcmp(a->policy, b->policy) == 0;
}

void
repro_net_summary(MsReproResult *res)
{
    if (res->rows->len == 0) {
        return;
    }
    const char *first = ((const ReproRow *)g_ptr_array_index(res->rows, 0))->net;
    g_autoptr(GPtrArray) others = g_ptr_array_new();
    for (guint i = 0; i < res->rows->len; i++) {
        const ReproRow *r = g_ptr_array_index(res->rows, i);
        gboolean seen = strcmp(r->net, first) == 0;
        for (guint j = 0; j < others->len && !seen; j++) {
            seen = strcmp(g_ptr_array_index(others, j), r->net) == 0;
        }
        if (!seen) {
            g_ptr_array_add(others, r->net);
        }
    }
    for (guint o = 0; o < others->len; o++) {
        const char *net = g_ptr_array_index(others, o);
        GString *line = g_string_new(NULL);
        g_string_append_printf(line, "%s over %s, the same runs:", net, first);
        guint parts = 0;
        for (guint k = 0; k < G_N_ELEMENTS(net_keys); k++) {
            double lo = INFINITY, hi = -INFINITY, far = 0;
            const ReproRow *at = NULL;
            guint n = 0;
            for (guint i = 0; i < res->rows->len; i++) {
                const ReproRow *r = g_ptr_array_index(res->rows, i);
                if (strcmp(r->net, net) != 0 ||
                    (net_keys[k].speedup && strcmp(r->policy, r->baseline) == 0)) {
                    continue;
                }
                for (guint j = 0; j < res->rows->len; j++) {
                    const ReproRow *q = g_ptr_array_index(res->rows, j);
                    double a = figure(r, net_keys[k].key), b = figure(q, net_keys[k].key);
                    if (strcmp(q->net, first) != 0 || !same_run(r, q) || !isfinite(a) ||
                        !isfinite(b) || b <= 0) {
                        continue;
                    }
                    double x = a / b;
                    lo = MIN(lo, x);
                    hi = MAX(hi, x);
                    if (fabs(log(x)) > far) {
                        far = fabs(log(x));
                        at = r;
                    }
                    n++;
                    break;
                }
            }
            if (n == 0) {
                continue;
            }
            g_string_append_printf(line, "%s %s %.3fx to %.3fx", parts ? ";" : "", net_keys[k].key,
                                   lo, hi);
            if (at) {
                g_string_append_printf(line, " (furthest from 1: %s", at->model);
                if (at->experts) {
                    g_string_append_printf(line, ", %u experts", at->experts);
                }
                g_string_append_printf(line, ", `%s`)", at->policy);
            }
            parts++;
        }
        if (parts) {
            repro_summary(res, "%s", line->str);
        }
        g_string_free(line, TRUE);
    }
}
