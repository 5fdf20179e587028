/* nccl_fit: per row, the simulated call split into its latency and byte-moving parts (the call
 * simulated with and without NCCL's latencies) and NCCL's protocol; then a weighted linear least
 * squares on the relative error, solved by Gaussian elimination, with the covariance of the
 * factors from the residuals. */
#include "nccl_fit.h"

#include <math.h>
#include <string.h>

#include "validate/calibrate.h"

G_DEFINE_QUARK(ms_nccl_fit_error_quark, ms_nccl_fit_error)

#define K_MAX (1 + MS_NCCL_N_PROTOS)

typedef struct {
    double t, L, B; /* measured, and the model's latency and byte parts, seconds */
    MsNcclProto proto;
} Row;

static gboolean
is_collective(MsMeasurementKind k)
{
    return k == MS_MEASUREMENT_ALLREDUCE || k == MS_MEASUREMENT_ALLGATHER ||
           k == MS_MEASUREMENT_REDUCESCATTER || k == MS_MEASUREMENT_ALLTOALL ||
           k == MS_MEASUREMENT_SENDRECV;
}

/* The protocol NCCL runs the row's call with. */
static gboolean
row_proto(const MsTopology *topo, MsNetModel *model, const MsMeasurement *m, MsNcclProto *out,
          GError **error)
{
    g_autofree guint *ranks = g_new(guint, m->ranks);
    if (!ms_calibrate_place(topo, m->ranks, m->ranks_per_node, ranks, error)) {
        return FALSE;
    }
    /* NCCL's choice under the row's forced channels, as ms_calibrate_predict_net simulates it. */
    g_autoptr(MsNetModel) own = NULL;
    if (m->channels) {
        MsNetSpec spec;
        ms_calibrate_row_spec(ms_net_model_spec(model), m, &spec);
        if ((own = ms_net_model_new(&spec, topo, error)) == NULL) {
            return FALSE;
        }
        model = own;
    }
    const MsNcclComm *comm = ms_net_model_comm(model, ranks, m->ranks, error);
    if (comm == NULL) {
        return FALSE;
    }
    if (m->kind == MS_MEASUREMENT_ALLTOALL || m->kind == MS_MEASUREMENT_SENDRECV) {
        guint64 per_peer = m->kind == MS_MEASUREMENT_ALLTOALL ? m->bytes / m->ranks : m->bytes;
        MsNcclP2p p2p;
        ms_nccl_p2p(comm, per_peer, comm->n_nodes == 1, &p2p);
        *out = p2p.proto;
        return TRUE;
    }
    MsCollOp op = m->kind == MS_MEASUREMENT_ALLREDUCE   ? MS_COLL_ALLREDUCE
                  : m->kind == MS_MEASUREMENT_ALLGATHER ? MS_COLL_ALLGATHER
                                                        : MS_COLL_REDUCESCATTER;
    MsNcclChoice ch;
    if (!ms_nccl_choose(comm, op, m->bytes, &ch)) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "%s:%u: NCCL's model allows no algorithm and protocol for this call",
                    m->source ? m->source : "<memory>", m->line);
        return FALSE;
    }
    *out = ch.proto;
    return TRUE;
}

/* Solves the k x k system a x = b in place (Gaussian elimination with partial pivoting); FALSE
 * when it is singular. inv receives a's inverse. */
static gboolean
solve(double a[K_MAX][K_MAX], double b[K_MAX], guint k, double x[K_MAX], double inv[K_MAX][K_MAX])
{
    double m[K_MAX][2 * K_MAX + 1];
    for (guint i = 0; i < k; i++) {
        for (guint j = 0; j < k; j++) {
            m[i][j] = a[i][j];
            m[i][k + j] = i == j;
        }
        m[i][2 * k] = b[i];
    }
    for (guint c = 0; c < k; c++) {
        guint p = c;
        for (guint r = c + 1; r < k; r++) {
            if (fabs(m[r][c]) > fabs(m[p][c])) {
                p = r;
            }
        }
        if (!(fabs(m[p][c]) > 1e-300)) {
            return FALSE;
        }
        for (guint j = 0; j <= 2 * k; j++) {
            double t = m[c][j];
            m[c][j] = m[p][j];
            m[p][j] = t;
        }
        double d = m[c][c];
        for (guint j = 0; j <= 2 * k; j++) {
            m[c][j] /= d;
        }
        for (guint r = 0; r < k; r++) {
            if (r != c && m[r][c] != 0) {
                double f = m[r][c];
                for (guint j = 0; j <= 2 * k; j++) {
                    m[r][j] -= f * m[c][j];
                }
            }
        }
    }
    for (guint i = 0; i < k; i++) {
        x[i] = m[i][2 * k];
        for (guint j = 0; j < k; j++) {
            inv[i][j] = m[i][k + j];
        }
    }
    return TRUE;
}

static int
cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
median(GArray *v)
{
    if (v->len == 0) {
        return NAN;
    }
    g_array_sort(v, cmp_double);
    guint n = v->len;
    double *d = (double *)v->data;
    return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

/* The rows' parts under the base spec with every factor 1. */
static gboolean
collect(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base, GArray *rows,
        GError **error)
{
    MsNetSpec unit = *base, no_latency;
    unit.latency_scale = 1;
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        unit.proto_efficiency[p] = 1;
    }
    no_latency = unit;
    no_latency.latency_scale = 0;
    g_autoptr(MsNetModel) full = ms_net_model_new(&unit, topo, error);
    g_autoptr(MsNetModel) bytes_only = full ? ms_net_model_new(&no_latency, topo, error) : NULL;
    if (bytes_only == NULL) {
        return FALSE;
    }
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        if (!is_collective(m->kind) || m->bytes == 0 || m->ranks < 2 || !(m->seconds > 0)) {
            continue;
        }
        Row r = {.t = m->seconds};
        double t1, t0;
        if (!row_proto(topo, full, m, &r.proto, error) ||
            !ms_calibrate_predict_net(topo, NULL, full, m, &t1, error) ||
            !ms_calibrate_predict_net(topo, NULL, bytes_only, m, &t0, error)) {
            return FALSE;
        }
        r.L = MAX(t1 - t0, 0);
        r.B = t0;
        g_array_append_val(rows, r);
    }
    return TRUE;
}

gboolean
ms_nccl_fit(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base,
            MsNcclFit *out, GError **error)
{
    if (base->kind != MS_NET_NCCL) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_SPEC,
                    "only the nccl network model has factors to fit");
        return FALSE;
    }
    memset(out, 0, sizeof *out);
    out->spec = *base;
    out->latency_scale_se = NAN;
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        out->efficiency_se[p] = NAN;
    }
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    if (!collect(topo, set, base, rows, error)) {
        return FALSE;
    }
    /* Unknowns: the latency scale, then 1 / efficiency of each protocol some row used. */
    guint var_of[MS_NCCL_N_PROTOS], k = 1;
    for (guint i = 0; i < rows->len; i++) {
        out->proto_rows[g_array_index(rows, Row, i).proto]++;
    }
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        var_of[p] = out->proto_rows[p] ? k++ : G_MAXUINT;
    }
    if (rows->len <= k) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "%u collective rows to fit %u factors: at least %u are needed", rows->len, k,
                    k + 1);
        return FALSE;
    }
    /* Relative error: every row's equation divided by its measured time. */
    double ata[K_MAX][K_MAX] = {{0}}, atb[K_MAX] = {0};
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double a[K_MAX] = {0};
        a[0] = r->L / r->t;
        a[var_of[r->proto]] = r->B / r->t;
        for (guint x = 0; x < k; x++) {
            atb[x] += a[x];
            for (guint y = 0; y < k; y++) {
                ata[x][y] += a[x] * a[y];
            }
        }
    }
    double x[K_MAX], inv[K_MAX][K_MAX];
    if (!solve(ata, atb, k, x, inv)) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "the rows cannot tell the factors apart (every size latency-bound, or every "
                    "one bandwidth-bound)");
        return FALSE;
    }
    g_autoptr(GArray) before = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) after = g_array_new(FALSE, FALSE, sizeof(double));
    double rss = 0;
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double fit = x[0] * r->L + x[var_of[r->proto]] * r->B;
        double e0 = fabs((r->L + r->B) / r->t - 1), e1 = fabs(fit / r->t - 1);
        g_array_append_val(before, e0);
        g_array_append_val(after, e1);
        rss += (fit / r->t - 1) * (fit / r->t - 1);
    }
    double sigma2 = rss / (rows->len - k);
    out->spec.latency_scale = CLAMP(x[0], 0, 100);
    out->latency_scale_se = sqrt(sigma2 * inv[0][0]);
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        guint v = var_of[p];
        if (v == G_MAXUINT) {
            continue;
        }
        /* efficiency = 1 / u; its error to first order is se(u) / u^2. */
        double u = x[v];
        out->spec.proto_efficiency[p] = CLAMP(u > 0 ? 1 / u : 1.5, 0.01, 1.5);
        out->efficiency_se[p] = u > 0 ? sqrt(sigma2 * inv[v][v]) / (u * u) : NAN;
    }
    out->rows = rows->len;
    out->median_before = median(before);
    out->median_after = median(after);
    return TRUE;
}

char *
ms_nccl_fit_describe(const MsNcclFit *fit)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "latency_scale %.3f +- %.3f (%u rows)\n", fit->spec.latency_scale,
                           fit->latency_scale_se, fit->rows);
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        if (fit->proto_rows[p]) {
            g_autofree char *name = g_ascii_strdown(ms_nccl_proto_name(p), -1);
            g_string_append_printf(s, "%s_efficiency %.3f +- %.3f (%u rows)\n", name,
                                   fit->spec.proto_efficiency[p], fit->efficiency_se[p],
                                   fit->proto_rows[p]);
        }
    }
    g_string_append_printf(s, "median time error %.1f%% before, %.1f%% after\n",
                           100 * fit->median_before, 100 * fit->median_after);
    return g_string_free(s, FALSE);
}
