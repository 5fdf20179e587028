/* plan_fixture: helpers shared by the plan and policy tests: small models, routings whose counts
 * follow a formula (so expected traffic has a closed form), topology loading, op queries, and a
 * unit-cost executor that drives the dispatcher without the network model, so that the policies'
 * decisions can be checked event by event (compute: 1 ns + flops / 1 PFLOP/s; a collective:
 * 1 ns + 100 ps per byte of its busiest sender, all participants together). */
#pragma once

#include "ms_test.h"
#include "sim/moe/plan.h"
#include "sim/schedule/dispatcher.h"
#include "sim/policy/policy.h"

typedef guint32 (*FxCountFn)(guint layer, guint src, guint expert);

static inline MsModel *
fx_model(const char *text)
{
    GError *error = NULL;
    MsModel *m = ms_model_load_data(text, strlen(text), "fx.ini", &error);
    if (error) {
        fprintf(stderr, "\n  model: %s\n", error->message);
    }
    g_assert_no_error(error);
    return m;
}

static inline MsTopology *
fx_topo(const char *name)
{
    GError *error = NULL;
    MsTopology *t = ms_topology_load(name, &error);
    g_assert_no_error(error);
    return t;
}

/* A count-level routing; count(layer, src, e) must give each rank the same multiple of top_k
 * at every layer. */
static inline MsRouting *
fx_routing(guint layers, guint ranks, guint experts, guint top_k, FxCountFn count)
{
    MsTraceHeader h;
    ms_trace_header_init(&h);
    h.experts = experts;
    h.layers = layers;
    h.ranks = ranks;
    h.top_k = top_k;
    GError *error = NULL;
    MsRouting *r = ms_routing_new(&h, 0, &error);
    g_assert_no_error(error);
    for (guint l = 0; l < layers; l++) {
        for (guint src = 0; src < ranks; src++) {
            for (guint e = 0; e < experts; e++) {
                ms_routing_add_count(r, l, src, e, count(l, src, e), &error);
                g_assert_no_error(error);
            }
        }
    }
    ms_routing_seal(r, &error);
    g_assert_no_error(error);
    return r;
}

/* Token paths of a batch: ranks x per_rank tokens, each `layers` expert ids (top-1). */
static inline MsRouting *
fx_paths_routing(guint64 iteration, guint experts, guint layers, guint ranks, guint per_rank,
                 const guint32 *paths)
{
    MsTraceHeader h;
    ms_trace_header_init(&h);
    h.experts = experts;
    h.layers = layers;
    h.ranks = ranks;
    h.top_k = 1;
    GError *error = NULL;
    MsRouting *r = ms_routing_new(&h, iteration, &error);
    g_assert_no_error(error);
    for (guint k = 0; k < ranks * per_rank; k++) {
        ms_routing_add_token(r, k, k / per_rank, paths + (gsize)k * layers, &error);
        g_assert_no_error(error);
    }
    ms_routing_seal(r, &error);
    g_assert_no_error(error);
    return r;
}

static inline MsOpInfo
fx_op(const MsSchedule *s, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(s, op, &i);
    return i;
}

static inline guint
fx_count_ops(const MsSchedule *s, guint rank, gint layer, MsRole role, MsPhase phase)
{
    guint n = 0, hits = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        hits += i.layer == layer && i.role == role && i.phase == phase;
    }
    return hits;
}

/* The collectives of a role, phase and layer, in id order (layer < -1: any layer). */
static inline GArray *
fx_colls(const MsSchedule *s, MsRole role, MsPhase phase, gint layer)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 c = 0; c < ms_schedule_n_colls(s); c++) {
        MsCollInfo ci;
        ms_schedule_coll(s, c, &ci);
        MsOpInfo i = fx_op(s, ci.ops[0]);
        if (i.role == role && i.phase == phase && (layer < -1 || i.layer == layer)) {
            g_array_append_val(out, c);
        }
    }
    return out;
}

/* A unit-cost run: per op its times, the dispatcher's counters, and the step of the run at which
 * it became ready, launched and finished (steps order every event exactly, ties included: each
 * reported finish is one step, each poll another). */
typedef struct {
    MsTime *start, *end;
    guint64 *ready_seq, *launch_seq;
    guint64 *ready_step, *launch_step, *finish_step;
    guint n_ops;
} FxRun;

static inline void
fx_run_clear(FxRun *run)
{
    g_free(run->start);
    g_free(run->end);
    g_free(run->ready_seq);
    g_free(run->launch_seq);
    g_free(run->ready_step);
    g_free(run->launch_step);
    g_free(run->finish_step);
}

static inline MsTime
fx_duration(const MsSchedule *s, guint32 op)
{
    MsOpInfo i = fx_op(s, op);
    if (i.kind == MS_OP_COMPUTE) {
        return 1000 + (MsTime)(i.flops / 1e3);
    }
    MsCollInfo c;
    ms_schedule_coll(s, i.coll, &c);
    guint64 most = c.bytes;
    for (guint a = 0; c.matrix && a < c.n_ranks; a++) {
        guint64 row = 0;
        for (guint b = 0; b < c.n_ranks; b++) {
            row += c.matrix[(gsize)a * c.n_ranks + b];
        }
        most = MAX(most, row);
    }
    return 1000 + most * 100;
}

/* Marks the ops that became ready since the last look. */
static inline void
fx_note_ready(MsDispatcher *d, FxRun *run, guint64 step)
{
    for (guint32 op = 0; op < run->n_ops; op++) {
        if (run->ready_step[op] == G_MAXUINT64 && ms_dispatcher_ready_seq(d, op) > 0) {
            run->ready_step[op] = step;
        }
    }
}

static inline guint32
fx_next_finish(GArray *running, const MsTime *end)
{
    guint best = 0;
    for (guint k = 1; k < running->len; k++) {
        guint32 a = g_array_index(running, guint32, k), b = g_array_index(running, guint32, best);
        if (end[a] < end[b] || (end[a] == end[b] && a < b)) {
            best = k;
        }
    }
    guint32 op = g_array_index(running, guint32, best);
    g_array_remove_index_fast(running, best);
    return op;
}

static inline void
fx_run_init(FxRun *run, guint n)
{
    run->n_ops = n;
    run->start = g_new0(MsTime, n);
    run->end = g_new0(MsTime, n);
    run->ready_seq = g_new0(guint64, n);
    run->launch_seq = g_new0(guint64, n);
    run->ready_step = g_new(guint64, n);
    run->launch_step = g_new(guint64, n);
    run->finish_step = g_new(guint64, n);
    for (guint k = 0; k < n; k++) {
        run->ready_step[k] = run->launch_step[k] = run->finish_step[k] = G_MAXUINT64;
    }
}

/* Runs the schedule with unit costs; FALSE when the dispatcher gets stuck. */
static inline gboolean
fx_execute(const MsSchedule *s, FxRun *run)
{
    GError *error = NULL;
    MsDispatcher *d = ms_dispatcher_new(s, &error);
    g_assert_no_error(error);
    fx_run_init(run, ms_schedule_n_ops(s));
    GArray *launch = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *running = g_array_new(FALSE, FALSE, sizeof(guint32));
    MsTime now = 0;
    guint64 step = 0;
    fx_note_ready(d, run, step);
    for (;;) {
        g_array_set_size(launch, 0);
        ms_dispatcher_poll(d, launch);
        step++;
        for (guint k = 0; k < launch->len; k++) {
            guint32 op = g_array_index(launch, guint32, k);
            run->start[op] = now;
            run->end[op] = now + fx_duration(s, op);
            run->launch_step[op] = step;
            g_array_append_val(running, op);
        }
        if (running->len == 0) {
            break;
        }
        guint32 op = fx_next_finish(running, run->end);
        now = run->end[op];
        step++;
        run->finish_step[op] = step;
        ms_dispatcher_finished(d, op);
        fx_note_ready(d, run, step);
    }
    for (guint32 op = 0; op < run->n_ops; op++) {
        run->ready_seq[op] = ms_dispatcher_ready_seq(d, op);
        run->launch_seq[op] = ms_dispatcher_launch_seq(d, op);
    }
    gboolean ok = ms_dispatcher_done(d);
    g_array_unref(launch);
    g_array_unref(running);
    ms_dispatcher_free(d);
    return ok;
}

/* When op became ready: its last dependency's end (0 without dependencies). */
static inline MsTime
fx_ready_time(const MsSchedule *s, const MsTime *end, guint32 op)
{
    MsOpInfo i = fx_op(s, op);
    MsTime t = 0;
    for (guint k = 0; k < i.n_deps; k++) {
        t = MAX(t, end[i.deps[k]]);
    }
    return t;
}

static inline gboolean
fx_is_a2a(const MsSchedule *s, guint32 op)
{
    MsOpInfo i = fx_op(s, op);
    if (i.kind != MS_OP_COMM) {
        return FALSE;
    }
    MsCollInfo c;
    ms_schedule_coll(s, i.coll, &c);
    return c.kind == MS_COLL_KIND_ALLTOALL;
}

/* Lina's rule: no allreduce op launches on a rank while an all-to-all op of that rank is ready
 * (waiting) or running. With steps (an FxRun) the check is exact; with times only (records of
 * the engine) an all-to-all that became ready at the very instant the allreduce started and
 * started later counts as not yet waiting. Returns the number of violations. */
static inline gboolean
fx_gate_bad(const MsSchedule *s, const FxRun *run, const MsTime *start, const MsTime *end,
            guint32 ar, guint32 a2a)
{
    if (run) {
        return run->ready_step[a2a] < run->launch_step[ar] &&
               run->launch_step[ar] < run->finish_step[a2a];
    }
    /* Waiting: ready strictly before the allreduce started and not yet done; running: started
     * no later than the allreduce and not done (an all-to-all that became ready at the very
     * instant, after the allreduce's launch, is neither). */
    MsTime ready = fx_ready_time(s, end, a2a);
    return (ready < start[ar] || start[a2a] <= start[ar]) && start[ar] < end[a2a];
}

static inline guint
fx_gate_violations(const MsSchedule *s, const FxRun *run, const MsTime *start, const MsTime *end)
{
    guint bad = 0;
    for (guint r = 0; r < ms_schedule_n_ranks(s); r++) {
        guint n = 0;
        const guint32 *ops = ms_schedule_rank_ops(s, r, &n);
        for (guint a = 0; a < n; a++) {
            MsOpInfo ai = fx_op(s, ops[a]);
            if (ai.kind != MS_OP_COMM || ai.role != MS_ROLE_ALLREDUCE) {
                continue;
            }
            for (guint x = 0; x < n; x++) {
                bad += fx_is_a2a(s, ops[x]) && fx_gate_bad(s, run, start, end, ops[a], ops[x]);
            }
        }
    }
    return bad;
}

/* A scenario where backward all-to-alls and allreduce buckets contend: 4 MoE layers of 8
 * experts on the 8 GPUs of dgx-a100, 128 choices per rank skewed towards expert (layer + src) % 8,
 * gradient buckets of 1 MiB (about two layers each). */
static const char fx_contended_model[] = "[model]\nformat = 1\nname = contended\nlayers = 4\n"
                                         "d_model = 256\nd_ffn = 512\nexperts = 8\ntop_k = 2\n"
                                         "top_k_infer = 1\nheads = 4\nseq_len = 64\n"
                                         "tokens_per_gpu = 64\ngrad_bucket = 1MiB\n";

static inline guint32
fx_contended_counts(guint layer, guint src, guint e)
{
    return e == (layer + src) % 8 ? 44 : 12;
}

/* Plans the contended scenario under a policy spec. */
static inline MsSchedule *
fx_plan_contended(const char *spec)
{
    g_autoptr(MsModel) m = fx_model(fx_contended_model);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    g_autoptr(MsRouting) r = fx_routing(4, 8, 8, 2, fx_contended_counts);
    GError *error = NULL;
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, &error);
    g_assert_no_error(error);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    MsSchedule *s = ms_policy_plan(p, &in, &error);
    g_assert_no_error(error);
    return s;
}

/* --- runs on the simulator (engine records) --- */

#include "sim/engine.h"

/* Runs s on the engine over topology `topo` (invariants checked) and fills start and end per op
 * (caller frees). FALSE when the engine fails. */
static inline gboolean
fx_engine_times(const MsSchedule *s, const char *topo, MsTime **start, MsTime **end)
{
    g_autoptr(MsTopology) t = fx_topo(topo);
    MsEngineOptions opts = {.check_invariants = TRUE};
    GError *error = NULL;
    g_autoptr(MsRecords) r = ms_engine_run(s, t, &opts, &error);
    if (r == NULL) {
        fprintf(stderr, "\n  engine: %s\n", error->message);
        g_clear_error(&error);
        return FALSE;
    }
    guint n = ms_schedule_n_ops(s);
    *start = g_new(MsTime, n);
    *end = g_new(MsTime, n);
    for (guint32 op = 0; op < n; op++) {
        (*start)[op] = ms_records_start(r, op);
        (*end)[op] = ms_records_end(r, op);
    }
    return TRUE;
}

/* Collectives in launch order terms: ready is when the last participant became ready, launch
 * when the first launched, both as the dispatcher's counters (FX_BY_SEQ), the unit-cost run's
 * steps (FX_BY_STEP) or times (FX_BY_TIME: start and end, from a run or the engine). */
typedef enum {
    FX_BY_SEQ,
    FX_BY_STEP,
    FX_BY_TIME,
} FxBy;

typedef struct {
    guint32 coll;
    guint64 ready, launch;
    gint layer;
    MsRole role;
    guint stream;
} FxColl;

static inline GArray *
fx_coll_order(const MsSchedule *s, const FxRun *run, const MsTime *start, const MsTime *end,
              FxBy by)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(FxColl));
    for (guint32 c = 0; c < ms_schedule_n_colls(s); c++) {
        MsCollInfo ci;
        ms_schedule_coll(s, c, &ci);
        MsOpInfo first = fx_op(s, ci.ops[0]);
        FxColl fc = {c, 0, G_MAXUINT64, first.layer, first.role, first.stream};
        for (guint p = 0; p < ci.n_ranks; p++) {
            guint32 op = ci.ops[p];
            guint64 ready = by == FX_BY_SEQ    ? run->ready_seq[op]
                            : by == FX_BY_STEP ? run->ready_step[op]
                                               : fx_ready_time(s, end, op);
            guint64 launch = by == FX_BY_SEQ    ? run->launch_seq[op]
                             : by == FX_BY_STEP ? run->launch_step[op]
                                                : start[op];
            fc.ready = MAX(fc.ready, ready);
            fc.launch = MIN(fc.launch, launch);
        }
        g_array_append_val(out, fc);
    }
    return out;
}

/* Pairs of collectives on one stream launched against their readiness order (strictly). */
static inline guint
fx_inversions(const GArray *colls, guint stream)
{
    guint bad = 0;
    for (guint a = 0; a < colls->len; a++) {
        const FxColl *x = &g_array_index(colls, FxColl, a);
        for (guint b = 0; b < colls->len; b++) {
            const FxColl *y = &g_array_index(colls, FxColl, b);
            bad += x->stream == stream && y->stream == stream && x->ready < y->ready &&
                   x->launch > y->launch;
        }
    }
    return bad;
}

/* Runs moesim with arguments and checks its exit status and that stdout and stderr contain the
 * given texts (NULL: not checked). */
static inline void
fx_expect_run(const char *const *args, int code, const char *out_needle, const char *err_needle)
{
    char *out = NULL, *err = NULL;
    int rc = ms_test_run_moesim(args, &out, &err);
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_FATAL(out != NULL && err != NULL);
    if (out_needle && strstr(out, out_needle) == NULL) {
        fprintf(stderr, "\n  stdout lacks '%s':\n%s", out_needle, out);
        CU_FAIL("stdout");
    }
    if (err_needle && strstr(err, err_needle) == NULL) {
        fprintf(stderr, "\n  stderr lacks '%s':\n%s", err_needle, err);
        CU_FAIL("stderr");
    }
    g_free(out);
    g_free(err);
}
