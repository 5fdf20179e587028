/* repro: the registry of experiments, their runs on worker threads (each a scenario on its own
 * loaded inputs, through a runner that also measures the MoE blocks and the backward
 * all-to-alls' slowdown), and the result's rows in JSON and Markdown. */
#include "repro_private.h"

#include <math.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/out/overlap.h"
#include "sim/routing_source.h"
#include "sim/scenario.h"

G_DEFINE_QUARK(ms_repro_error_quark, ms_repro_error)

typedef struct {
    const char *name;
    const char *summary;
    gboolean (*run)(MsReproResult *res, const MsReproOptions *opts, GError **error);
} Experiment;

static const Experiment experiments[] = {
    {"lina-train", "Lina's training evaluation: 12 models, DeepSpeed against Lina",
     repro_lina_train},
    {"lina-infer", "Lina's inference evaluation: Enwik8 and WMT, 4 and 16 experts",
     repro_lina_infer},
    {"lina-motivation", "Lina's motivation runs: DeepSpeed's all-to-all time and share",
     repro_lina_motivation},
    {"schemoe-ablation", "ScheMoE's ablation layer: each feature's gain, Tutel and FasterMoE",
     repro_schemoe_ablation},
    {"schemoe-ct-moe", "ScheMoE's CT-MoE models against Tutel and FasterMoE", repro_schemoe_ct_moe},
};

static const char *const names[] = {"lina-train",       "lina-infer",     "lina-motivation",
                                    "schemoe-ablation", "schemoe-ct-moe", NULL};

const char *const *
ms_repro_names(void)
{
    return names;
}

static const Experiment *
find(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(experiments); i++) {
        if (g_strcmp0(experiments[i].name, name) == 0) {
            return &experiments[i];
        }
    }
    return NULL;
}

const char *
ms_repro_summary(const char *name)
{
    const Experiment *e = find(name);
    return e ? e->summary : NULL;
}

/* --- runs --- */

ReproRun *
repro_run_new(const char *label, const char *model, gboolean shipped, const char *topology,
              const char *trace, const char *policy, const char *net, MsPlanMode mode,
              guint iterations, guint warmup)
{
    ReproRun *r = g_new0(ReproRun, 1);
    r->label = g_strdup(label);
    r->model = g_strdup(model);
    r->model_shipped = shipped;
    r->topology = g_strdup(topology);
    r->trace = g_strdup(trace);
    r->policy = g_strdup(policy);
    r->net = g_strdup(net);
    r->mode = mode;
    r->iterations = iterations;
    r->warmup = warmup;
    r->seed = 1;
    r->slowdowns = g_array_new(FALSE, FALSE, sizeof(double));
    return r;
}

void
repro_run_free(ReproRun *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->label);
    g_free(r->tag);
    g_free(r->model);
    g_free(r->topology);
    g_free(r->trace);
    g_free(r->policy);
    g_free(r->net);
    ms_result_free(r->result);
    ms_link_timeline_free(r->timeline);
    g_array_unref(r->slowdowns);
    g_free(r);
}

/* The roles of an MoE block (gate to combine, with ScheMoE's codecs and FasterMoE's shadows). */
static gboolean
moe_role(MsRole role)
{
    return role == MS_ROLE_GATE || role == MS_ROLE_DISPATCH || role == MS_ROLE_EXPERT ||
           role == MS_ROLE_COMBINE || role == MS_ROLE_COMPRESS || role == MS_ROLE_DECOMPRESS ||
           role == MS_ROLE_WEIGHTS;
}

/* Per GPU, the span of each MoE block (first op start to last op end), summed over the layers,
 * averaged over GPUs: forward into *fwd, backward into *bwd (microseconds). */
static void
moe_spans(const MsSchedule *s, const MsRecords *rec, double *fwd, double *bwd)
{
    guint n = ms_schedule_n_ranks(s), layers = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        layers = MAX(layers, (guint)MAX(i.layer + 1, 0));
    }
    /* [layer * 2 + backward]: the block's first start and last end on the rank. */
    g_autofree MsTime *lo = g_new(MsTime, 2 * (gsize)MAX(layers, 1));
    g_autofree MsTime *hi = g_new(MsTime, 2 * (gsize)MAX(layers, 1));
    double sum[2] = {0, 0};
    for (guint r = 0; r < n; r++) {
        for (guint k = 0; k < 2 * layers; k++) {
            lo[k] = MS_TIME_NEVER;
            hi[k] = 0;
        }
        guint n_ops = 0;
        const guint32 *ops = ms_schedule_rank_ops(s, r, &n_ops);
        for (guint k = 0; k < n_ops; k++) {
            MsOpInfo i;
            ms_schedule_op(s, ops[k], &i);
            if (!moe_role(i.role) || i.layer < 0 ||
                (i.phase != MS_PHASE_FORWARD && i.phase != MS_PHASE_BACKWARD)) {
                continue;
            }
            guint at = (guint)i.layer * 2 + (i.phase == MS_PHASE_BACKWARD);
            lo[at] = MIN(lo[at], ms_records_start(rec, ops[k]));
            hi[at] = MAX(hi[at], ms_records_end(rec, ops[k]));
        }
        for (guint k = 0; k < 2 * layers; k++) {
            if (lo[k] != MS_TIME_NEVER) {
                sum[k % 2] += ms_time_to_us(hi[k] - lo[k]);
            }
        }
    }
    *fwd = sum[0] / n;
    *bwd = sum[1] / n;
}

typedef struct {
    MsRunner *engine;
    ReproRun *run;
    MsNetSpec net;
} Measure;

static void
measure_free(gpointer p)
{
    Measure *m = p;
    ms_runner_free(m->engine);
    g_free(m);
}

/* The engine, then the run's own figures of this execution. A run is executed by one thread. */
static MsRecords *
measure_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                const MsRunWhatIf *what_if, GError **error)
{
    Measure *m = data;
    MsRecords *rec = ms_runner_execute(m->engine, s, topo, detail, what_if, error);
    if (rec == NULL) {
        return NULL;
    }
    double fwd = 0, bwd = 0;
    moe_spans(s, rec, &fwd, &bwd);
    m->run->moe_fwd_us += fwd;
    m->run->moe_bwd_us += bwd;
    const char *ep = ms_schedule_get_meta(s, "ep");
    m->run->ep = ep ? (guint)g_ascii_strtoull(ep, NULL, 10) : 0;
    if (m->run->overlap) {
        g_autoptr(GArray) a2a = g_array_new(FALSE, FALSE, sizeof(MsOverlapA2a));
        if (!ms_overlap_a2a(s, rec, topo, &m->net, MS_PHASE_BACKWARD, a2a, error)) {
            ms_records_free(rec);
            return NULL;
        }
        for (guint i = 0; i < a2a->len; i++) {
            const MsOverlapA2a *x = &g_array_index(a2a, MsOverlapA2a, i);
            if (x->overlapped && x->alone_us > 0) {
                double slow = x->run_us / x->alone_us;
                g_array_append_val(m->run->slowdowns, slow);
            }
        }
    }
    return rec;
}

/* Model states per GPU: 16 bytes per parameter (fp16 weights and gradients, fp32 master weights
 * and Adam's two moments, ZeRO's count) of the dense part and of the experts the GPU holds. */
static double
state_bytes(const MsModel *model, guint ep)
{
    const MsModelSpec *s = ms_model_spec(model);
    double dense = (double)s->layers * (double)ms_model_attention_params(model) +
                   (double)(s->layers - s->n_moe) * (double)ms_model_dense_ffn_params(model) +
                   (double)s->n_moe * (double)ms_model_gate_params(model) +
                   (double)ms_model_head_params(model);
    double experts = (double)s->n_moe * (double)(s->experts / MAX(ep, 1)) *
                     (double)ms_model_expert_params(model);
    return 16 * (dense + experts);
}

/* Every parameter of the model, each expert once. */
static double
params_of(const MsModel *model)
{
    return state_bytes(model, 1) / 16;
}

gint
repro_compare_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static gboolean
execute_run(ReproRun *run, const gint *cancel, GError **error)
{
    g_autoptr(MsTopology) topo =
        ms_topology_load_data(run->topology, strlen(run->topology), run->label, error);
    g_autoptr(MsModel) model =
        topo == NULL ? NULL
        : run->model_shipped
            ? ms_model_load(run->model, error)
            : ms_model_load_data(run->model, strlen(run->model), run->label, error);
    g_autoptr(MsPolicy) policy = model ? ms_policy_parse(run->policy, error) : NULL;
    g_autoptr(MsRoutingSource) routing = policy ? ms_routing_source_new(run->trace, error) : NULL;
    if (routing == NULL) {
        return FALSE;
    }
    Measure *m = g_new0(Measure, 1);
    m->run = run;
    if (!ms_net_spec_parse(run->net, &m->net, error)) {
        g_free(m);
        return FALSE;
    }
    if (run->timeline_link) {
        guint l = 0;
        /* The experiment names a link of its testbed. */
        g_return_val_if_fail(ms_topology_find_link(topo, run->timeline_link, &l), FALSE);
        const MsLink *link = ms_topology_link(topo, l);
        run->timeline = ms_link_timeline_new(l, link->name, link->bandwidth);
    }
    MsEngineOptions eo = {.net = &m->net, .link_timeline = run->timeline};
    m->engine = ms_engine_runner_new(&eo);
    g_autoptr(MsRunner) runner = ms_runner_new("sim", measure_execute, m, measure_free);
    MsScenario sc = {.topology = topo,
                     .model = model,
                     .policy = policy,
                     .routing = routing,
                     .runner = runner,
                     .mode = run->mode,
                     .iterations = run->iterations,
                     .warmup = run->warmup,
                     .seed = run->seed,
                     .cancel = cancel};
    run->result = ms_scenario_run(&sc, error);
    if (run->result == NULL) {
        return FALSE;
    }
    guint n = ms_result_n_iterations(run->result);
    run->moe_fwd_us /= n;
    run->moe_bwd_us /= n;
    run->state_bytes = state_bytes(model, run->ep);
    run->params = params_of(model);
    return TRUE;
}

typedef struct {
    GMutex lock;
    guint done, total;
    GError *error; /* the first failure */
    const MsReproOptions *opts;
    gint stop;
} Pool;

static void
work(gpointer item, gpointer data)
{
    ReproRun *run = item;
    Pool *pool = data;
    if (g_atomic_int_get(&pool->stop) ||
        (pool->opts->cancel && g_atomic_int_get(pool->opts->cancel))) {
        return;
    }
    GError *error = NULL;
    gboolean ok = execute_run(run, pool->opts->cancel, &error);
    g_mutex_lock(&pool->lock);
    if (!ok && pool->error == NULL) {
        g_prefix_error(&error, "%s: ", run->label);
        pool->error = g_steal_pointer(&error);
        g_atomic_int_set(&pool->stop, 1);
    }
    g_clear_error(&error);
    pool->done++;
    if (ok && pool->opts->progress) {
        pool->opts->progress(pool->done, pool->total, run->label, pool->opts->progress_data);
    }
    g_mutex_unlock(&pool->lock);
}

gboolean
repro_run_all(GPtrArray *runs, const MsReproOptions *opts, GError **error)
{
    Pool pool = {.total = runs->len, .opts = opts};
    g_mutex_init(&pool.lock);
    guint threads = opts->threads ? opts->threads : MAX(g_get_num_processors(), 1);
    GThreadPool *tp =
        g_thread_pool_new(work, &pool, (gint)MIN(threads, MAX(runs->len, 1)), TRUE, NULL);
    for (guint i = 0; i < runs->len; i++) {
        g_thread_pool_push(tp, runs->pdata[i], NULL);
    }
    g_thread_pool_free(tp, FALSE, TRUE);
    g_mutex_clear(&pool.lock);
    if (pool.error) {
        g_propagate_error(error, pool.error);
        return FALSE;
    }
    if (opts->cancel && g_atomic_int_get(opts->cancel)) {
        g_set_error(error, MS_REPRO_ERROR, MS_REPRO_ERROR_CANCELLED, "cancelled");
        return FALSE;
    }
    return TRUE;
}

double
repro_step_ms(const ReproRun *run)
{
    MsMetrics m;
    ms_result_mean(run->result, &m);
    return m.step_us / 1e3;
}

double
repro_a2a_bwd_ms(const ReproRun *run)
{
    MsMetrics m;
    ms_result_mean(run->result, &m);
    return m.a2a_bwd_us / 1e3;
}

double
repro_a2a_ms(const ReproRun *run)
{
    MsMetrics m;
    ms_result_mean(run->result, &m);
    return m.a2a_us / 1e3;
}

double
repro_percentile_ms(const ReproRun *run, double p)
{
    return ms_result_step_percentile(run->result, p) / 1e3;
}

double
repro_step_spread(const ReproRun *run)
{
    guint n = ms_result_n_iterations(run->result);
    double sum = 0, sum2 = 0;
    for (guint i = 0; i < n; i++) {
        double x = ms_result_iteration(run->result, i)->step_us;
        sum += x;
        sum2 += x * x;
    }
    double mean = sum / n, var = MAX(sum2 / n - mean * mean, 0);
    return mean > 0 ? sqrt(var) / mean : 0;
}

const char *
repro_net_label(const char *net)
{
    return strcmp(net, "nccl:version=2.10") == 0 ? "nccl 2.10" : net;
}

const char *const *
repro_nets(const MsReproOptions *opts, const char *const *dflt)
{
    return opts->nets && opts->nets[0] ? opts->nets : dflt;
}

/* --- results --- */

static void
row_free(gpointer p)
{
    ReproRow *r = p;
    for (guint i = 0; i < r->figures->len; i++) {
        g_free(g_array_index(r->figures, ReproFigure, i).key);
    }
    g_array_unref(r->figures);
    g_free(r->model);
    g_free(r->policy);
    g_free(r->baseline);
    g_free(r->net);
    g_free(r->column);
    g_free(r);
}

static void
chart_free(gpointer p)
{
    ReproChart *c = p;
    g_free(c->suffix);
    g_free(c->key);
    g_free(c->ylabel);
    g_free(c);
}

MsReproResult *
repro_result_new(const char *name)
{
    MsReproResult *res = g_new0(MsReproResult, 1);
    res->name = g_strdup(name);
    res->rows = g_ptr_array_new_with_free_func(row_free);
    res->setup = g_ptr_array_new_with_free_func(g_free);
    res->summary = g_ptr_array_new_with_free_func(g_free);
    res->charts = g_ptr_array_new_with_free_func(chart_free);
    res->files = g_ptr_array_new_with_free_func(g_free);
    res->pivots = g_ptr_array_new_with_free_func(g_free);
    return res;
}

void
ms_repro_result_free(MsReproResult *res)
{
    if (res == NULL) {
        return;
    }
    g_ptr_array_unref(res->rows);
    g_ptr_array_unref(res->setup);
    g_ptr_array_unref(res->summary);
    g_ptr_array_unref(res->charts);
    g_ptr_array_unref(res->files);
    g_ptr_array_unref(res->pivots);
    ms_link_timeline_free(res->timeline);
    g_free(res->timeline_title);
    g_free(res->name);
    g_free(res);
}

void
repro_link_timeline(MsReproResult *res, ReproRun *run, const char *title)
{
    ms_link_timeline_free(res->timeline);
    g_free(res->timeline_title);
    res->timeline = g_steal_pointer(&run->timeline);
    res->timeline_title = g_strdup(title);
}

void
repro_row(MsReproResult *res, const char *model, guint experts, guint gpus, const char *policy,
          const char *baseline, const char *net)
{
    ReproRow *r = g_new0(ReproRow, 1);
    r->model = g_strdup(model);
    r->experts = experts;
    r->gpus = gpus;
    r->policy = g_strdup(policy);
    r->baseline = g_strdup(baseline);
    r->net = g_strdup(net);
    r->figures = g_array_new(FALSE, FALSE, sizeof(ReproFigure));
    g_ptr_array_add(res->rows, r);
}

void
repro_row_set(MsReproResult *res, const char *key, double value)
{
    g_return_if_fail(res->rows->len > 0);
    ReproRow *r = g_ptr_array_index(res->rows, res->rows->len - 1);
    ReproFigure f = {g_strdup(key), value};
    g_array_append_val(r->figures, f);
}

void
repro_row_column(MsReproResult *res, const char *column)
{
    g_return_if_fail(res->rows->len > 0);
    ReproRow *r = g_ptr_array_index(res->rows, res->rows->len - 1);
    g_free(r->column);
    r->column = g_strdup(column);
}

void
repro_setup(MsReproResult *res, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_ptr_array_add(res->setup, g_strdup_vprintf(format, ap));
    va_end(ap);
}

void
repro_summary(MsReproResult *res, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_ptr_array_add(res->summary, g_strdup_vprintf(format, ap));
    va_end(ap);
}

void
repro_pivot(MsReproResult *res, const char *key, const char *title)
{
    g_ptr_array_add(res->pivots, g_strdup(key));
    g_ptr_array_add(res->pivots, g_strdup(title));
}

void
repro_setup_file(MsReproResult *res, const char *name, const char *text)
{
    for (guint i = 0; i < res->files->len; i += 2) {
        if (strcmp(res->files->pdata[i], name) == 0) {
            return;
        }
    }
    g_ptr_array_add(res->files, g_strdup(name));
    g_ptr_array_add(res->files, g_strdup(text));
}

void
repro_chart(MsReproResult *res, const char *suffix, const char *key, const char *ylabel)
{
    ReproChart *c = g_new0(ReproChart, 1);
    c->suffix = g_strdup(suffix);
    c->key = g_strdup(key);
    c->ylabel = g_strdup(ylabel);
    g_ptr_array_add(res->charts, c);
}

MsReproResult *
ms_repro_run(const char *name, const MsReproOptions *opts, GError **error)
{
    const Experiment *e = find(name);
    if (e == NULL) {
        g_autofree char *list = g_strjoinv(", ", (char **)names);
        g_set_error(error, MS_REPRO_ERROR, MS_REPRO_ERROR_UNKNOWN,
                    "unknown experiment '%s' (known: %s)", name, list);
        return NULL;
    }
    MsReproOptions none = {0};
    g_autoptr(MsReproResult) res = repro_result_new(name);
    if (!e->run(res, opts ? opts : &none, error)) {
        return NULL;
    }
    repro_net_summary(res);
    return g_steal_pointer(&res);
}

const char *
ms_repro_result_name(const MsReproResult *res)
{
    return res->name;
}

guint
ms_repro_result_n_rows(const MsReproResult *res)
{
    return res->rows->len;
}

double
ms_repro_result_figure(const MsReproResult *res, guint row, const char *key)
{
    g_return_val_if_fail(row < res->rows->len, NAN);
    const ReproRow *r = g_ptr_array_index(res->rows, row);
    for (guint i = 0; i < r->figures->len; i++) {
        if (strcmp(g_array_index(r->figures, ReproFigure, i).key, key) == 0) {
            return g_array_index(r->figures, ReproFigure, i).value;
        }
    }
    return NAN;
}

const char *
ms_repro_result_text(const MsReproResult *res, guint row, const char *key)
{
    g_return_val_if_fail(row < res->rows->len, NULL);
    const ReproRow *r = g_ptr_array_index(res->rows, row);
    return !strcmp(key, "model")      ? r->model
           : !strcmp(key, "policy")   ? r->policy
           : !strcmp(key, "baseline") ? r->baseline
           : !strcmp(key, "net")      ? r->net
                                      : NULL;
}

JsonNode *
ms_repro_result_to_json(const MsReproResult *res)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_string_value(b, "moesim.repro/1");
    json_builder_set_member_name(b, "experiment");
    json_builder_add_string_value(b, res->name);
    json_builder_set_member_name(b, "rows");
    json_builder_begin_array(b);
    for (guint i = 0; i < res->rows->len; i++) {
        const ReproRow *r = g_ptr_array_index(res->rows, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "model");
        json_builder_add_string_value(b, r->model);
        json_builder_set_member_name(b, "experts");
        json_builder_add_int_value(b, r->experts);
        json_builder_set_member_name(b, "gpus");
        json_builder_add_int_value(b, r->gpus);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, r->policy);
        json_builder_set_member_name(b, "baseline");
        json_builder_add_string_value(b, r->baseline);
        json_builder_set_member_name(b, "net");
        json_builder_add_string_value(b, r->net);
        for (guint k = 0; k < r->figures->len; k++) {
            const ReproFigure *f = &g_array_index(r->figures, ReproFigure, k);
            if (isfinite(f->value)) {
                json_builder_set_member_name(b, f->key);
                json_builder_add_double_value(b, f->value);
            }
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
