/* engine: the simulated executor. The dispatcher decides launches; compute ops become timed
 * events; collectives become flow DAGs on the network (sim/net/collective.h). Every launch and
 * completion is an event, so decisions follow event order exactly as on real hardware. */
#include "engine.h"

#include <math.h>

#include "sim/compute.h"
#include "sim/net/collective.h"
#include "sim/schedule/dispatcher.h"
#include "sim/sim.h"
#include "sim/calib/calibration.h"

G_DEFINE_QUARK(ms_engine_error_quark, ms_engine_error)

typedef struct Engine Engine;

/* A compute op in flight where NCCL kernels slow compute (an overlap slowdown above 1 on some
 * rank): its kernel body progresses at 1 / slowdown of its pace while a communication op of its
 * rank runs, at its own pace otherwise. */
typedef struct {
    MsTime body_from; /* the end of its launch and host time: when the body starts */
    MsTime last;      /* when body_left was last brought up to date */
    double body_left; /* seconds of body left at the GPU's own pace */
    guint32 gen;      /* its completion event's generation; older events are stale */
    guint32 rank;
} Work;

/* A collective while it runs: its network object and the engine it reports to. */
typedef struct {
    Engine *engine;
    guint32 id;
    MsColl *coll;
    guint left;       /* participants not finished */
    guint64 expected; /* bytes all participants must send, when known in closed form, else 0 */
    guint64 bytes;    /* the collective's size, for the per-kind stats */
    MsCollOp op;
    MsCollAlgo algo; /* resolved (never auto) */
} Running;

struct Engine {
    const MsSchedule *s;
    const MsTopology *topo;
    const MsEngineOptions *opts;
    MsNetModel *net; /* the network model's state (communicators), per run */
    MsSim *sim;
    MsDispatcher *d;
    MsRecords *rec;
    MsComputeModel **compute; /* per rank */
    Running **running;        /* per collective, while it runs */
    guint *comm_running;      /* per rank: comm ops in flight (compute slows while > 0) */
    /* With an overlap slowdown above 1 on some rank: per op its progress, per rank the compute
     * ops in flight (guint32); NULL otherwise, every compute op then taking its time alone. */
    Work *work;
    GArray **active;
    GArray *launch;
    /* Ops finished at this instant, told to the dispatcher together, in op order, when the
     * instant has nothing else to run (settle): which of several simultaneous completions the
     * loop happened to meet first must not decide what launches next. */
    GArray *finished;
    guint8 *done;     /* with check_invariants: ops finished */
    guint32 clock_op; /* the first compute op that ends at the clock's end, or G_MAXUINT32 */
    /* with record_links: per link its last rate, per class the sum of rates and of capacities */
    double *link_rate;
    double class_rate[MS_LINK_N_CLASSES], class_capacity[MS_LINK_N_CLASSES];
    /* with a link timeline: the running collectives by their handler, the link's flows */
    GHashTable *by_handler;
    GArray *sharing;
    GError *error;
};

static void violated(Engine *e, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Records the first broken invariant; the run stops at the next dispatch. */
static void
violated(Engine *e, const char *format, ...)
{
    if (e->error) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    e->error =
        g_error_new(MS_ENGINE_ERROR, MS_ENGINE_ERROR_INVARIANT, "invariant violated: %s", msg);
}

/* Bytes a collective's participants send in total: the off-diagonal sum of a direct all-to-all's
 * matrix, steps x size for a flat ring; 0 where no closed form is checked, as for an allreduce
 * the nccl model runs as NCCL's tree or NVLS choice (ch: that choice, NULL under the flow
 * model). */
static guint64
expected_bytes(const MsCollSpec *spec, const MsNcclChoice *ch)
{
    guint n = spec->n_ranks;
    if (ch && ch->algo != MS_NCCL_ALGO_RING) {
        return 0;
    }
    if (spec->op == MS_COLL_ALLTOALL && spec->algo == MS_COLL_ALGO_DIRECT) {
        guint64 sum = 0;
        for (guint i = 0; i < n; i++) {
            for (guint j = 0; j < n; j++) {
                sum +=
                    i == j ? 0 : (spec->matrix ? spec->matrix[(gsize)i * n + j] : spec->bytes / n);
            }
        }
        return sum;
    }
    if (spec->op != MS_COLL_ALLTOALL && spec->algo == MS_COLL_ALGO_RING) {
        return (spec->op == MS_COLL_ALLREDUCE ? 2 : 1) * (guint64)(n - 1) * spec->bytes;
    }
    return 0;
}

static void dispatch(Engine *e);

/* Labels a flow on the timeline's link: its collective's label and kind, and which connection
 * it is (sim/net/collective.h). */
static void
label_flow(gpointer ctx, guint64 cookie, char **op, char **kind, char **conn)
{
    Engine *e = ctx;
    guint32 handler;
    guint64 arg;
    ms_sim_flow_owner(cookie, &handler, &arg);
    const Running *r = g_hash_table_lookup(e->by_handler, GUINT_TO_POINTER(handler));
    MsCollFlowLabel l;
    if (r == NULL || !ms_coll_flow_label(r->coll, arg, &l)) {
        return;
    }
    MsCollInfo c;
    ms_schedule_coll(e->s, r->id, &c);
    *op = g_strdup(c.label);
    *kind = g_strdup(ms_coll_op_name(r->op));
    g_autofree char *ch = l.channel >= 0 ? g_strdup_printf("ch%d ", l.channel) : g_strdup("");
    g_autofree char *x = l.conns > 1 ? g_strdup_printf(" x%u", l.conns) : g_strdup("");
    /* "ch1 ring gpu3->gpu4", "a2a gpu0->gpu5 x2" (a send NCCL spreads over 2 connections). */
    *conn = g_strdup_printf("%s%s gpu%u->gpu%u%s", ch, l.pattern, l.src, l.dst, x);
}

static void
observe_timeline(Engine *e, MsTime now, const guint32 *links, guint n)
{
    guint link = ms_link_timeline_link(e->opts->link_timeline);
    guint lo = 0, hi = n;
    while (lo < hi) { /* links come in increasing order */
        guint mid = (lo + hi) / 2;
        if (links[mid] < link) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == n || links[lo] != link) {
        return;
    }
    g_array_set_size(e->sharing, 0);
    ms_network_link_sharing(ms_sim_network(e->sim), link, e->sharing);
    ms_link_timeline_observe(e->opts->link_timeline, now, (const MsLinkFlow *)e->sharing->data,
                             e->sharing->len, label_flow, e);
}

/* Network observer: keeps each link class's total rate and samples its utilisation; feeds the
 * link timeline. */
static void
observe_links(gpointer ctx, MsTime now, const guint32 *links, guint n)
{
    Engine *e = ctx;
    if (e->opts->link_timeline) {
        observe_timeline(e, now, links, n);
    }
    if (e->link_rate == NULL) {
        return;
    }
    MsNetwork *net = ms_sim_network(e->sim);
    gboolean changed[MS_LINK_N_CLASSES] = {FALSE};
    for (guint i = 0; i < n; i++) {
        const MsLink *l = ms_topology_link(e->topo, links[i]);
        double r = ms_network_link_rate(net, links[i]);
        e->class_rate[l->klass] += r - e->link_rate[links[i]];
        e->link_rate[links[i]] = r;
        changed[l->klass] = TRUE;
    }
    for (guint c = 0; c < MS_LINK_N_CLASSES; c++) {
        if (changed[c] && e->class_capacity[c] > 0) {
            g_autofree char *name = g_strdup_printf("util.%s", ms_link_class_name(c));
            ms_records_sample(e->rec, name, now, MAX(0.0, e->class_rate[c] / e->class_capacity[c]));
        }
    }
}

static void
setup_link_recording(Engine *e)
{
    if (!e->opts->record_links) {
        ms_network_set_link_observer(ms_sim_network(e->sim), observe_links, e);
        return;
    }
    guint n = ms_topology_n_links(e->topo);
    e->link_rate = g_new0(double, MAX(n, 1));
    for (guint l = 0; l < n; l++) {
        const MsLink *link = ms_topology_link(e->topo, l);
        if (isfinite(link->bandwidth)) {
            e->class_capacity[link->klass] += link->bandwidth;
        }
    }
    for (guint c = 0; c < MS_LINK_N_CLASSES; c++) {
        if (e->class_capacity[c] > 0) {
            g_autofree char *name = g_strdup_printf("util.%s", ms_link_class_name(c));
            ms_records_sample(e->rec, name, 0, 0);
        }
    }
    ms_network_set_link_observer(ms_sim_network(e->sim), observe_links, e);
}

static void dispatch(Engine *e);

static gint
cmp_op(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

/* The instant's finished ops to the dispatcher, in op order, then what they let launch. */
static void
settle(MsSim *sim, gpointer ctx, guint64 arg)
{
    (void)sim;
    (void)arg;
    Engine *e = ctx;
    g_array_sort(e->finished, cmp_op);
    for (guint k = 0; k < e->finished->len; k++) {
        ms_dispatcher_finished(e->d, g_array_index(e->finished, guint32, k));
    }
    g_array_set_size(e->finished, 0);
    dispatch(e);
}

/* Records op's end now; the dispatcher hears of it when the instant settles. */
static void
finish(Engine *e, guint32 op)
{
    if (e->done) {
        if (e->done[op]) {
            violated(e, "op %u finished twice", op);
        }
        e->done[op] = 1;
    }
    ms_records_set(e->rec, op, ms_records_start(e->rec, op), ms_sim_now(e->sim));
    g_array_append_val(e->finished, op);
    ms_sim_at_instant_end(e->sim, settle, e);
}

/* A compute op's completion event: the op in the low 32 bits, its generation above. */
static void
compute_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    Engine *e = ctx;
    guint32 op = (guint32)arg;
    if (e->work) {
        if (e->work[op].gen != (guint32)(arg >> 32)) {
            return; /* retimed since: a later event ends it */
        }
        GArray *a = e->active[e->work[op].rank];
        for (guint k = 0; k < a->len; k++) {
            if (g_array_index(a, guint32, k) == op) {
                g_array_remove_index_fast(a, k);
                break;
            }
        }
    }
    finish(e, op);
}

/* Schedules op's end delay from now. */
static void
schedule_compute(Engine *e, guint32 op, MsTime delay, guint32 gen)
{
    if (e->clock_op == G_MAXUINT32 && delay >= MS_SIM_CLOCK_END - ms_sim_now(e->sim)) {
        e->clock_op = op; /* named if the run reaches the clock's end */
    }
    ms_sim_after(e->sim, delay, compute_done, e, (guint64)gen << 32 | op);
}

/* The pace factor of rank's compute bodies now: its slowdown while comm runs there, else 1. */
static double
pace(const Engine *e, guint rank)
{
    return e->comm_running[rank] ? ms_compute_model_overlap_slowdown(e->compute[rank]) : 1.0;
}

/* (Re)schedules the end of a tracked op from its progress, at pace f from now. */
static void
schedule_work(Engine *e, guint32 op, double f)
{
    Work *w = &e->work[op];
    MsTime now = ms_sim_now(e->sim), from = MAX(now, w->body_from);
    schedule_compute(e, op, from - now + ms_time_from_s(w->body_left * f), ++w->gen);
}

/* A communication op of rank starts (delta 1) or ends (-1). When that starts or ends the
 * communication on the rank, its compute ops in flight are brought up to date at the pace they
 * ran at and retimed at the new one. */
static void
comm_change(Engine *e, guint rank, int delta)
{
    double before = pace(e, rank);
    e->comm_running[rank] = (guint)((int)e->comm_running[rank] + delta);
    double after = pace(e, rank);
    if (e->work == NULL || before == after) {
        return;
    }
    MsTime now = ms_sim_now(e->sim);
    GArray *a = e->active[rank];
    for (guint k = 0; k < a->len; k++) {
        guint32 op = g_array_index(a, guint32, k);
        Work *w = &e->work[op];
        MsTime from = MAX(w->last, w->body_from);
        if (now > from) {
            w->body_left = MAX(0, w->body_left - ms_time_to_s(now - from) / before);
        }
        w->last = now;
        schedule_work(e, op, after);
    }
}

static void
add_stat(MsRecords *rec, const char *key, double value)
{
    double v = 0;
    ms_records_get_stat(rec, key, &v);
    ms_records_set_stat(rec, key, v + value);
}

/* What a finished collective was made of, summed per kind into the records' stats: which part of
 * a step's flows are all-to-alls and which the gradients' rings or trees is what decides how a
 * large step costs (docs/performance.md, "DeepSeek-V3 training step"). The kind is the op, its
 * ranks and algorithm, and under the nccl model NCCL's choice ("allreduce.256.tree.LL128"). */
static void
count_kind(Engine *e, const Running *r)
{
    const MsNcclChoice *ch = ms_coll_nccl_choice(r->coll);
    const char *op = ms_coll_op_name(r->op);
    guint n = ms_coll_n_ranks(r->coll);
    g_autofree char *kind = ch ? g_strdup_printf("%s.%u.%s.%s", op, n, ms_nccl_algo_name(ch->algo),
                                                 ms_nccl_proto_name(ch->proto))
                               : g_strdup_printf("%s.%u.%s", op, n, ms_coll_algo_name(r->algo));
    g_autofree char *calls = g_strconcat("calls.", kind, NULL);
    g_autofree char *bytes = g_strconcat("bytes.", kind, NULL);
    g_autofree char *flows = g_strconcat("flows.", kind, NULL);
    add_stat(e->rec, calls, 1);
    if (r->bytes) { /* an allreduce's buffer per rank (an all-to-all's sizes are its matrix) */
        add_stat(e->rec, bytes, (double)r->bytes);
    }
    add_stat(e->rec, flows, (double)ms_coll_n_flows(r->coll));
}

static void
coll_rank_done(MsColl *coll, guint part, gpointer ctx)
{
    Running *r = ctx;
    Engine *e = r->engine;
    MsCollInfo c;
    ms_schedule_coll(e->s, r->id, &c);
    comm_change(e, c.ranks[part], -1);
    finish(e, c.ops[part]);
    if (--r->left == 0) {
        guint64 sent = 0;
        for (guint p = 0; p < c.n_ranks; p++) {
            sent += ms_coll_bytes_sent(r->coll, p);
        }
        if (e->done && r->expected && sent != r->expected) {
            violated(e,
                     "collective %u (%s) moved %" G_GUINT64_FORMAT " bytes, not %" G_GUINT64_FORMAT,
                     r->id, c.label, sent, r->expected);
        }
        count_kind(e, r);
        if (e->by_handler) {
            g_hash_table_remove(e->by_handler, GUINT_TO_POINTER(ms_coll_handler(r->coll)));
        }
        /* The collective object is freed after the network has delivered its last callback. */
        e->running[r->id] = NULL;
        ms_coll_free(r->coll);
        g_free(r);
    }
}

static gboolean
start_collective(Engine *e, guint32 id, GError **error)
{
    MsCollInfo c;
    ms_schedule_coll(e->s, id, &c);
    MsCollSpec spec = {
        .op = c.kind == MS_COLL_KIND_ALLTOALL ? MS_COLL_ALLTOALL : MS_COLL_ALLREDUCE,
        .algo = c.algo,
        .n_ranks = c.n_ranks,
        .ranks = c.ranks,
        .bytes = c.bytes,
        .matrix = c.matrix,
        .rdma = c.rdma,
        .returning = c.returning,
        .window = c.window,
        /* Link utilisation and the link timeline need every link's flows. */
        .symmetric = !e->opts->flow_by_flow && !e->opts->record_links && !e->opts->link_timeline,
    };
    spec.net = e->net;
    /* The nccl model has its own latencies and protocol efficiencies: a calibration's
     * per-collective figures are for the flow model. */
    g_autofree guint64 *scaled =
        e->opts->calibration && ms_net_model_kind(e->net) == MS_NET_FLOW
            ? ms_calibration_adjust_collective(e->opts->calibration, e->topo, &spec)
            : NULL;
    (void)scaled; /* only holds memory to free */
    Running *r = g_new0(Running, 1);
    r->engine = e;
    r->id = id;
    r->left = c.n_ranks;
    r->coll = ms_coll_new(e->sim, &spec, coll_rank_done, r, error);
    if (spec.algo == MS_COLL_ALGO_AUTO) {
        spec.algo = spec.op == MS_COLL_ALLTOALL ? MS_COLL_ALGO_DIRECT : MS_COLL_ALGO_RING;
    }
    r->expected = expected_bytes(&spec, r->coll ? ms_coll_nccl_choice(r->coll) : NULL);
    r->bytes = c.bytes;
    r->op = spec.op;
    r->algo = spec.algo;
    if (r->coll == NULL) {
        /* Name the collective, and the calibration when its stretch made the size invalid. */
        g_prefix_error(
            error, "collective %u (%s)%s: ", id, c.label,
            spec.bytes != c.bytes || scaled ? " as stretched by the calibration's efficiency" : "");
        g_free(r);
        return FALSE;
    }
    e->running[id] = r;
    if (e->by_handler) {
        g_hash_table_insert(e->by_handler, GUINT_TO_POINTER(ms_coll_handler(r->coll)), r);
    }
    return TRUE;
}

static gboolean
launch(Engine *e, guint32 op, GError **error)
{
    MsOpInfo i;
    ms_schedule_op(e->s, op, &i);
    for (guint k = 0; e->done && k < i.n_deps; k++) {
        if (!e->done[i.deps[k]]) {
            violated(e, "op %u (%s) started before its dependency %u", op, i.label, i.deps[k]);
        }
    }
    if (e->done && ms_records_start(e->rec, op) != MS_TIME_NEVER) {
        violated(e, "op %u (%s) started twice", op, i.label);
    }
    MsTime now = ms_sim_now(e->sim);
    ms_records_set(e->rec, op, now, now);
    if (i.kind == MS_OP_COMPUTE) {
        /* Rows of one GEMM, host time and the overlap slowdown: ms_compute_op_parts. */
        if (e->work == NULL) {
            schedule_compute(e, op, ms_compute_op_time(e->compute[i.rank], &i, FALSE), 0);
            return TRUE;
        }
        double fixed = 0, body = 0;
        ms_compute_op_parts(e->compute[i.rank], &i, &fixed, &body);
        Work *w = &e->work[op];
        w->body_from = now + ms_time_from_s(fixed);
        w->last = now;
        w->body_left = body;
        w->rank = i.rank;
        g_array_append_val(e->active[i.rank], op);
        schedule_work(e, op, pace(e, i.rank));
        return TRUE;
    }
    if (e->running[i.coll] == NULL && !start_collective(e, i.coll, error)) {
        return FALSE;
    }
    MsCollInfo c;
    ms_schedule_coll(e->s, i.coll, &c);
    guint part = 0;
    while (c.ops[part] != op) {
        part++;
    }
    comm_change(e, i.rank, 1);
    ms_coll_launch(e->running[i.coll]->coll, part);
    return TRUE;
}

static void
dispatch(Engine *e)
{
    if (e->error) {
        return;
    }
    g_array_set_size(e->launch, 0);
    ms_dispatcher_poll(e->d, e->launch);
    for (guint k = 0; k < e->launch->len && !e->error; k++) {
        launch(e, g_array_index(e->launch, guint32, k), &e->error);
    }
}

static gboolean
setup_compute(Engine *e, GError **error)
{
    guint n = ms_schedule_n_ranks(e->s);
    e->compute = g_new0(MsComputeModel *, n);
    for (guint r = 0; r < n; r++) {
        const MsGpuSpec *spec = ms_topology_gpu_spec(e->topo, r);
        e->compute[r] = e->opts->calibration
                            ? ms_calibration_compute_model(e->opts->calibration, spec, error)
                            : ms_compute_model_new(spec, error);
        if (e->compute[r] == NULL || !ms_compute_model_apply_schedule(e->compute[r], e->s, error) ||
            (r < e->opts->n_pace &&
             !ms_compute_model_set_pace(e->compute[r], e->opts->pace[r], error))) {
            return FALSE;
        }
    }
    return TRUE;
}

static void
engine_clear(Engine *e)
{
    guint n = ms_schedule_n_ranks(e->s);
    for (guint r = 0; e->compute && r < n; r++) {
        ms_compute_model_free(e->compute[r]);
    }
    g_free(e->compute);
    for (guint c = 0; e->running && c < ms_schedule_n_colls(e->s); c++) {
        if (e->running[c]) {
            ms_coll_free(e->running[c]->coll);
            g_free(e->running[c]);
        }
    }
    g_free(e->running);
    g_free(e->comm_running);
    for (guint r = 0; e->active && r < n; r++) {
        g_array_unref(e->active[r]);
    }
    g_free(e->active);
    g_free(e->work);
    g_free(e->done);
    g_free(e->link_rate);
    if (e->by_handler) {
        g_hash_table_unref(e->by_handler);
        g_array_unref(e->sharing);
    }
    if (e->launch) {
        g_array_unref(e->launch);
        g_array_unref(e->finished);
    }
    ms_dispatcher_free(e->d);
    ms_sim_free(e->sim);
    ms_net_model_free(e->net);
    g_clear_error(&e->error);
}

MsRecords *
ms_engine_run(const MsSchedule *s, const MsTopology *topo, const MsEngineOptions *opts,
              GError **error)
{
    static const MsEngineOptions defaults = {0};
    if (ms_schedule_n_ranks(s) > ms_topology_n_gpus(topo)) {
        g_set_error(error, MS_ENGINE_ERROR, MS_ENGINE_ERROR_MISMATCH,
                    "the schedule has %u ranks but topology '%s' has %u GPUs",
                    ms_schedule_n_ranks(s), ms_topology_name(topo), ms_topology_n_gpus(topo));
        return NULL;
    }
    Engine e = {.s = s, .topo = topo, .opts = opts ? opts : &defaults, .clock_op = G_MAXUINT32};
    gint64 t0 = g_get_monotonic_time();
    e.d = ms_dispatcher_new(s, error);
    if (e.d == NULL || !setup_compute(&e, error)) {
        engine_clear(&e);
        return NULL;
    }
    MsNetSpec flow;
    ms_net_spec_init(&flow);
    e.net = ms_net_model_new(e.opts->net ? e.opts->net : &flow, topo, error);
    if (e.net == NULL) {
        engine_clear(&e);
        return NULL;
    }
    e.sim = ms_sim_new(topo);
    ms_net_model_apply(e.net, e.sim);
    ms_sim_set_check_invariants(e.sim, e.opts->check_invariants);
    e.running = g_new0(Running *, MAX(ms_schedule_n_colls(s), 1));
    e.comm_running = g_new0(guint, ms_schedule_n_ranks(s));
    gboolean slowed = FALSE;
    for (guint r = 0; r < ms_schedule_n_ranks(s); r++) {
        slowed |= ms_compute_model_overlap_slowdown(e.compute[r]) > 1.0;
    }
    if (slowed) {
        e.work = g_new0(Work, MAX(ms_schedule_n_ops(s), 1));
        e.active = g_new(GArray *, ms_schedule_n_ranks(s));
        for (guint r = 0; r < ms_schedule_n_ranks(s); r++) {
            e.active[r] = g_array_new(FALSE, FALSE, sizeof(guint32));
        }
    }
    e.launch = g_array_new(FALSE, FALSE, sizeof(guint32));
    e.finished = g_array_new(FALSE, FALSE, sizeof(guint32));
    if (e.opts->check_invariants) {
        e.done = g_new0(guint8, MAX(ms_schedule_n_ops(s), 1));
    }
    g_autoptr(MsRecords) rec = ms_records_new(ms_schedule_n_ops(s), "sim");
    e.rec = rec;
    if (e.opts->link_timeline) {
        e.by_handler = g_hash_table_new(g_direct_hash, g_direct_equal);
        e.sharing = g_array_new(FALSE, FALSE, sizeof(MsLinkFlow));
    }
    if (e.opts->record_links || e.opts->link_timeline) {
        setup_link_recording(&e);
    }
    dispatch(&e);
    gboolean ok = e.error == NULL && ms_sim_run(e.sim, error);
    if (!ok && error && *error && (*error)->domain == MS_SIM_ERROR &&
        (*error)->code == MS_SIM_ERROR_CLOCK) {
        /* Name what was running and where, so that the input off by orders of magnitude can be
         * found: the compute op whose time reaches the end, or a collective still on the network,
         * on this topology. */
        g_autofree char *what = NULL;
        if (e.clock_op != G_MAXUINT32) {
            MsOpInfo i;
            ms_schedule_op(s, e.clock_op, &i);
            what = g_strdup_printf("compute op %u (%s) of rank %u ends there; ", e.clock_op,
                                   i.label, i.rank);
        }
        for (guint32 c = 0; c < ms_schedule_n_colls(s) && what == NULL; c++) {
            if (e.running[c]) {
                MsCollInfo ci;
                ms_schedule_coll(s, c, &ci);
                what = g_strdup_printf("collective %u (%s) still running; ", c, ci.label);
            }
        }
        g_prefix_error(error, "topology '%s': %s", ms_topology_name(topo), what ? what : "");
    }
    if (ok && e.error) {
        g_propagate_error(error, g_steal_pointer(&e.error));
        ok = FALSE;
    }
    ok = ok && ms_dispatcher_check_progress(e.d, error);
    if (ok) {
        MsSimStats st;
        ms_sim_stats(e.sim, &st);
        ms_records_set_stat(rec, "wall_s", (g_get_monotonic_time() - t0) * 1e-6);
        ms_records_set_stat(rec, "events", (double)st.events);
        ms_records_set_stat(rec, "flows", (double)st.net.flows_started);
        ms_records_set_stat(rec, "bandwidth_solves", (double)st.net.solves);
    }
    engine_clear(&e);
    return ok ? g_steal_pointer(&rec) : NULL;
}

/* The engine as a runner: its options, with the network spec they point to kept here. */
typedef struct {
    MsEngineOptions opts;
    MsNetSpec net;
} EngineRunner;

static MsRecords *
engine_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
               const MsRunWhatIf *what_if, GError **error)
{
    MsEngineOptions opts = ((const EngineRunner *)data)->opts;
    if (what_if && what_if->pace) {
        opts.pace = what_if->pace;
        opts.n_pace = what_if->n_pace;
    }
    if (what_if && what_if->net) {
        opts.net = what_if->net;
    }
    opts.record_links = opts.record_links && detail;
    opts.link_timeline = detail ? opts.link_timeline : NULL;
    return ms_engine_run(s, topo, &opts, error);
}

MsRunner *
ms_engine_runner_new(const MsEngineOptions *opts)
{
    EngineRunner *r = g_new0(EngineRunner, 1);
    if (opts) {
        r->opts = *opts;
    }
    if (r->opts.net) {
        r->net = *r->opts.net;
        r->opts.net = &r->net;
    }
    MsRunner *runner = ms_runner_new("sim", engine_execute, r, g_free);
    ms_runner_set_pure(runner, TRUE);
    return runner;
}
