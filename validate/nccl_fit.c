/* nccl_fit: per row, the simulated call split into its latency and byte-moving parts (the call
 * simulated with and without NCCL's latencies) and NCCL's protocol; then a weighted linear least
 * squares on the relative error, solved by Gaussian elimination, with the covariance of the
 * factors from the residuals. The network's efficiency is not linear in the times (it slows only
 * the bytes whose bottleneck is a network link, and can move the bottleneck): it is searched, the
 * rows across nodes simulated again at each candidate and the linear fit redone, for the least
 * residual. */
#include "nccl_fit.h"

#include <math.h>
#include <string.h>

#include "sim/net/host_loop.h"
#include "validate/calibrate.h"

G_DEFINE_QUARK(ms_nccl_fit_error_quark, ms_nccl_fit_error)

/* The latency scale, an efficiency per protocol, the per-GPU host cost. */
#define K_MAX (2 + MS_NCCL_N_PROTOS)
/* Rounds of classifying the rows as host- or device-bound and refitting (a round that changes no
 * row's class ends it; in practice two or three). */
#define ROUNDS_MAX 32

/* The network efficiency's search: a grid over its range (log-spaced), then golden-section steps
 * in the best cell, to this relative width, on at most NET_SAMPLE of the rows across nodes (evenly
 * spaced in the set's order: the search only has to find the minimum; the fit at it and the
 * curvature that gives its error use every row). */
#define NET_MIN 0.01
#define NET_MAX 1.5
#define NET_GRID 8
#define NET_TOL 5e-3
#define NET_SAMPLE 256

typedef struct {
    double t, L, B;  /* measured, and the model's latency and byte parts, seconds */
    gboolean across; /* the row's ranks span nodes: its bytes may cross the network */
    MsNcclProto proto;
    guint gpus;    /* GPUs its thread drove (1 for one process per GPU) */
    gboolean host; /* this round: the host's calls outlast the device time */
} Row;

gboolean
ms_nccl_fit_uses(const MsMeasurement *m)
{
    MsMeasurementKind k = m->kind;
    gboolean coll = k == MS_MEASUREMENT_ALLREDUCE || k == MS_MEASUREMENT_ALLGATHER ||
                    k == MS_MEASUREMENT_REDUCESCATTER || k == MS_MEASUREMENT_ALLTOALL ||
                    k == MS_MEASUREMENT_SENDRECV;
    return coll && m->bytes > 0 && m->ranks >= 2 && m->seconds > 0;
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
    if ((model = ms_calibrate_row_model(topo, model, m, &own, error)) == NULL) {
        return FALSE;
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

static gboolean
across_nodes(const MsMeasurement *m)
{
    return m->ranks > m->ranks_per_node;
}

/* The parts of the rows whose `across` is across (both kinds when ALL), every stride-th of them,
 * under the base spec with every factor 1 but the network's efficiency net_eff, appended to
 * rows. */
#define ALL 2
static gboolean
collect(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base, double net_eff,
        guint across, guint stride, GArray *rows, GError **error)
{
    MsNetSpec unit = *base, no_latency;
    unit.net_efficiency = net_eff;
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
    for (guint i = 0, seen = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        if (!ms_nccl_fit_uses(m) || (across != ALL && across_nodes(m) != (gboolean)across) ||
            seen++ % stride != 0) {
            continue;
        }
        Row r = {.t = m->seconds, .gpus = MAX(m->gpus_per_thread, 1u), .across = across_nodes(m)};
        /* The device's parts alone: the host's bound is a term of its own. */
        MsMeasurement device = *m;
        device.gpus_per_thread = 1;
        double t1, t0;
        if (!row_proto(topo, full, m, &r.proto, error) ||
            !ms_calibrate_predict_net(topo, NULL, full, &device, &t1, error) ||
            !ms_calibrate_predict_net(topo, NULL, bytes_only, &device, &t0, error)) {
            return FALSE;
        }
        r.L = MAX(t1 - t0, 0);
        r.B = t0;
        g_array_append_val(rows, r);
    }
    return TRUE;
}

/* The factors of a round: the latency scale, 1 / efficiency per protocol, the host cost
 * (seconds); and which unknown each is in the round's system (G_MAXUINT: not fitted). */
typedef struct {
    double lat, inv_eff[MS_NCCL_N_PROTOS], host;
    guint k, var_of[MS_NCCL_N_PROTOS], host_var;
    guint proto_rows[MS_NCCL_N_PROTOS], host_rows;
} Factors;

static double
device_time(const Factors *f, const Row *r)
{
    return f->lat * r->L + f->inv_eff[r->proto] * r->B;
}

/* Marks each row host- or device-bound under f; TRUE when some row changed. */
static gboolean
classify(const Factors *f, GArray *rows)
{
    gboolean changed = FALSE;
    for (guint i = 0; i < rows->len; i++) {
        Row *r = &g_array_index(rows, Row, i);
        gboolean host = r->gpus > 1 && r->gpus * f->host > device_time(f, r);
        changed |= host != r->host;
        r->host = host;
    }
    return changed;
}

/* One linear least squares on the relative error with the rows' classes fixed: a device-bound
 * row is latency_scale x L + B / efficiency, a host-bound one G x host cost. Numbers the unknowns
 * in f, solves, stores the solution in f; sigma2 receives the residual variance. */
static gboolean
fit_round(GArray *rows, Factors *f, double inv[K_MAX][K_MAX], double *sigma2, GError **error)
{
    memset(f->proto_rows, 0, sizeof f->proto_rows);
    f->host_rows = 0;
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        if (r->host) {
            f->host_rows++;
        } else {
            f->proto_rows[r->proto]++;
        }
    }
    f->k = 1;
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        f->var_of[p] = f->proto_rows[p] ? f->k++ : G_MAXUINT;
    }
    f->host_var = f->host_rows ? f->k++ : G_MAXUINT;
    if (rows->len <= f->k) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "%u collective rows to fit %u factors: at least %u are needed", rows->len, f->k,
                    f->k + 1);
        return FALSE;
    }
    double ata[K_MAX][K_MAX] = {{0}}, atb[K_MAX] = {0};
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double a[K_MAX] = {0};
        if (r->host) {
            a[f->host_var] = r->gpus / r->t;
        } else {
            a[0] = r->L / r->t;
            a[f->var_of[r->proto]] = r->B / r->t;
        }
        for (guint x = 0; x < f->k; x++) {
            atb[x] += a[x];
            for (guint y = 0; y < f->k; y++) {
                ata[x][y] += a[x] * a[y];
            }
        }
    }
    double x[K_MAX];
    if (!solve(ata, atb, f->k, x, inv)) {
        g_set_error(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "the rows cannot tell the factors apart (every size latency-bound, or every "
                    "one bandwidth-bound)");
        return FALSE;
    }
    f->lat = x[0];
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        if (f->var_of[p] != G_MAXUINT) {
            f->inv_eff[p] = x[f->var_of[p]];
        }
    }
    if (f->host_var != G_MAXUINT) {
        f->host = x[f->host_var];
    }
    double rss = 0;
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double e = (r->host ? r->gpus * f->host : device_time(f, r)) / r->t - 1;
        rss += e * e;
    }
    *sigma2 = rss / (rows->len - f->k);
    return TRUE;
}

/* The linear factors of rows from base's: the max of the host's and the device's times is linear
 * on each side, so classify the rows under the current factors, fit, and classify again until no
 * row changes side. */
static gboolean
fit_linear(GArray *rows, const MsNetSpec *base, double host0, Factors *f, double inv[K_MAX][K_MAX],
           double *sigma2, GError **error)
{
    *f = (Factors){.lat = base->latency_scale, .host = host0};
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        f->inv_eff[p] = 1 / base->proto_efficiency[p];
    }
    classify(f, rows);
    for (guint round = 0; round < ROUNDS_MAX; round++) {
        if (!fit_round(rows, f, inv, sigma2, error)) {
            return FALSE;
        }
        if (!classify(f, rows)) {
            break;
        }
    }
    return TRUE;
}

/* One candidate of the network's efficiency: the rows across nodes simulated at it, every
 * stride-th (those inside a node do not depend on it and are kept), the linear fit redone; *rss
 * its squared residuals. */
typedef struct {
    const MsTopology *topo;
    const MsMeasurementSet *set;
    const MsNetSpec *base;
    double host0;
    GArray *inside; /* Row: the rows inside a node, collected once */
} NetSearch;

static gboolean
net_candidate(const NetSearch *s, double eff, guint stride, GArray *rows, Factors *f,
              double inv[K_MAX][K_MAX], double *sigma2, double *rss, GError **error)
{
    g_array_set_size(rows, 0);
    g_array_append_vals(rows, s->inside->data, s->inside->len);
    if (!collect(s->topo, s->set, s->base, eff, TRUE, stride, rows, error) ||
        !fit_linear(rows, s->base, s->host0, f, inv, sigma2, error)) {
        return FALSE;
    }
    *rss = *sigma2 * (rows->len - f->k);
    return TRUE;
}

/* Searches the network's efficiency over its range for the least residual (a log-spaced grid,
 * then golden-section steps between the best point's neighbours, on a sample of the rows across
 * nodes), leaves rows, f, inv and sigma2 those of the best on every row, and sets its figure and
 * standard error in out: the residual's curvature in the efficiency, sigma2 x 2 / RSS''. */
static gboolean
fit_network(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base,
            double host0, GArray *rows, guint net_rows, Factors *f, double inv[K_MAX][K_MAX],
            double *sigma2, MsNcclFit *out, GError **error)
{
    NetSearch s = {topo, set, base, host0, g_array_new(FALSE, FALSE, sizeof(Row))};
    guint stride = (net_rows + NET_SAMPLE - 1) / NET_SAMPLE;
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        if (!r->across) {
            g_array_append_val(s.inside, *r);
        }
    }
    const double lo = log(NET_MIN), hi = log(NET_MAX);
    double grid[NET_GRID], best_rss = INFINITY, rss = 0;
    guint at = 0;
    gboolean ok = TRUE;
    for (guint g = 0; g < NET_GRID && ok; g++) {
        grid[g] = lo + (hi - lo) * g / (NET_GRID - 1);
        ok = net_candidate(&s, exp(grid[g]), stride, rows, f, inv, sigma2, &rss, error);
        if (ok && rss < best_rss) {
            best_rss = rss;
            at = g;
        }
    }
    /* Golden-section search on the log of the efficiency between the best point's neighbours. */
    const double phi = (sqrt(5.0) - 1) / 2;
    double a = grid[at > 0 ? at - 1 : 0], b = grid[at + 1 < NET_GRID ? at + 1 : NET_GRID - 1];
    double c = b - phi * (b - a), d = a + phi * (b - a), fc = 0, fd = 0;
    ok = ok && net_candidate(&s, exp(c), stride, rows, f, inv, sigma2, &fc, error) &&
         net_candidate(&s, exp(d), stride, rows, f, inv, sigma2, &fd, error);
    while (ok && b - a > NET_TOL) {
        if (fc < fd) {
            b = d, d = c, fd = fc, c = b - phi * (b - a);
            ok = net_candidate(&s, exp(c), stride, rows, f, inv, sigma2, &fc, error);
        } else {
            a = c, c = d, fc = fd, d = a + phi * (b - a);
            ok = net_candidate(&s, exp(d), stride, rows, f, inv, sigma2, &fd, error);
        }
    }
    double best = exp((a + b) / 2);
    /* On every row: the curvature from the residuals 2% either side, then the fit at the optimum
     * (the last, so that rows, f, inv and sigma2 are its). */
    double rm = 0, rp = 0, r0 = 0, h = 0.02 * best;
    ok = ok && net_candidate(&s, best - h, 1, rows, f, inv, sigma2, &rm, error) &&
         net_candidate(&s, best + h, 1, rows, f, inv, sigma2, &rp, error) &&
         net_candidate(&s, best, 1, rows, f, inv, sigma2, &r0, error);
    g_array_unref(s.inside);
    if (!ok) {
        return FALSE;
    }
    double curv = (rp - 2 * r0 + rm) / (h * h);
    out->spec.net_efficiency = CLAMP(best, NET_MIN, NET_MAX);
    out->net_efficiency_se = curv > 0 ? sqrt(*sigma2 * 2 / curv) : NAN;
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
    out->latency_scale_se = out->host_us_se = NAN;
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        out->efficiency_se[p] = NAN;
    }
    out->net_efficiency_se = NAN;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    if (!collect(topo, set, base, base->net_efficiency, ALL, 1, rows, error)) {
        return FALSE;
    }
    double host0 = ms_host_loop_call_cost(base, topo);
    /* Before: the base's network, every other factor 1. */
    g_autoptr(GArray) before = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double e0 = fabs(ms_host_loop_iteration(r->L + r->B, r->gpus, host0) / r->t - 1);
        g_array_append_val(before, e0);
    }
    out->median_before = median(before);
    Factors f;
    double inv[K_MAX][K_MAX], sigma2 = 0;
    if (!fit_linear(rows, base, host0, &f, inv, &sigma2, error)) {
        return FALSE;
    }
    out->net_rows = 0;
    for (guint i = 0; i < rows->len; i++) {
        out->net_rows += g_array_index(rows, Row, i).across;
    }
    /* The network's own factor needs rows inside a node too: on rows that all cross it, it and
     * the protocols' efficiencies scale the same bytes and cannot be told apart. */
    if (out->net_rows > 0 && out->net_rows < rows->len &&
        !fit_network(topo, set, base, host0, rows, out->net_rows, &f, inv, &sigma2, out, error)) {
        return FALSE;
    }
    out->spec.latency_scale = CLAMP(f.lat, 0, 100);
    out->latency_scale_se = sqrt(sigma2 * inv[0][0]);
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        guint v = f.var_of[p];
        out->proto_rows[p] = f.proto_rows[p];
        if (v == G_MAXUINT) {
            continue;
        }
        /* efficiency = 1 / u; its error to first order is se(u) / u^2. */
        double u = f.inv_eff[p];
        out->spec.proto_efficiency[p] = CLAMP(u > 0 ? 1 / u : 1.5, 0.01, 1.5);
        out->efficiency_se[p] = u > 0 ? sqrt(sigma2 * inv[v][v]) / (u * u) : NAN;
    }
    out->host_rows = f.host_rows;
    if (f.host_var != G_MAXUINT) {
        out->spec.host_us = CLAMP(f.host * 1e6, 0, 1e4);
        out->host_us_se = sqrt(sigma2 * inv[f.host_var][f.host_var]) * 1e6;
    }
    g_autoptr(GArray) after = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double t1 = ms_host_loop_iteration(device_time(&f, r), r->gpus, f.host);
        double e1 = fabs(t1 / r->t - 1);
        g_array_append_val(after, e1);
    }
    out->rows = rows->len;
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
    if (isfinite(fit->net_efficiency_se)) {
        /* A search that ends at an end of the range found no minimum inside it: say so. */
        double eff = fit->spec.net_efficiency;
        gboolean bound = eff <= NET_MIN * (1 + NET_TOL) || eff >= NET_MAX / (1 + NET_TOL);
        g_string_append_printf(
            s, "net_efficiency %.3f +- %.3f (%u rows across nodes%s)\n", eff,
            fit->net_efficiency_se, fit->net_rows,
            bound ? "; at an end of its range, 0.01 to 1.5: the least residual may lie beyond it"
                  : "");
    }
    if (fit->host_rows) {
        g_string_append_printf(s, "host_us %.3f +- %.3f (%u rows bound by one thread's calls)\n",
                               fit->spec.host_us, fit->host_us_se, fit->host_rows);
    }
    g_string_append_printf(s, "median time error %.1f%% before, %.1f%% after\n",
                           100 * fit->median_before, 100 * fit->median_after);
    return g_string_free(s, FALSE);
}
