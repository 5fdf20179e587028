/* scenario: loading the inputs of a study point, streaming its routing and running each
 * iteration. Iterations are read one at a time, so memory does not grow with the trace. */
#include "scenario.h"

#include <string.h>

#include "backends/executor.h"
#include "sim/engine.h"
#include "sim/moe/model.h"
#include "sim/policy/lina_infer.h"
#include "sim/policy/policy.h"
#include "traces/trace_gen.h"
#include "traces/trace_reader.h"
#include "sim/calib/calibration.h"

G_DEFINE_QUARK(ms_scenario_error_quark, ms_scenario_error)

/* The default skew of generated routing (docs/running.md): the hottest expert receives 1.5x the
 * mean load, as models trained with a load-balancing loss show; half the tokens follow their
 * previous expert's group (the path locality Lina exploits); popularity ranks drift slowly. */
#define GEN_HOT_OVER_MEAN 1.5
#define GEN_DEFAULTS "corr=0.5,drift=0.02"

/* Where iterations come from: a trace file (or sample) or the generator. */
typedef struct {
    MsTraceReader *reader;
    MsTraceGen *gen;
} Source;

static gboolean
source_next(Source *src, MsRouting **out, GError **error)
{
    return src->reader ? ms_trace_reader_next_iteration(src->reader, out, error)
                       : ms_trace_gen_next(src->gen, out, error);
}

static void
source_clear(Source *src)
{
    if (src->reader) {
        ms_trace_reader_free(src->reader);
    }
    if (src->gen) {
        ms_trace_gen_free(src->gen);
    }
}

/* Applies "key=value,key=value" items (no repetition check: later ones win). */
static gboolean
apply_items(MsTraceGenParams *p, const char *items, GError **error)
{
    if (items == NULL || *items == '\0') {
        return TRUE;
    }
    g_auto(GStrv) kv = g_strsplit(items, ",", -1);
    for (guint i = 0; kv[i]; i++) {
        char *eq = strchr(kv[i], '=');
        if (eq == NULL) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                        "trace gen: '%s' is not KEY=VALUE", kv[i]);
            return FALSE;
        }
        *eq = '\0';
        if (!ms_trace_gen_params_set(p, g_strstrip(kv[i]), g_strstrip(eq + 1), error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
gen_params(const MsScenario *sc, const MsModel *model, const MsTopology *topo, MsTraceGenParams *p,
           GError **error)
{
    const MsModelSpec *m = ms_model_spec(model);
    gboolean infer = sc->mode == MS_PLAN_INFER;
    ms_trace_gen_params_init(p);
    /* A token picks top_k distinct experts, so the hottest share is at most 1 / top_k (and is
     * exactly 1 / experts when every token picks every expert: no skew to ask for). */
    guint top_k = infer ? m->top_k_infer : m->top_k;
    gboolean skew = m->experts > top_k;
    char hot[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(hot, sizeof hot,
                   MIN(GEN_HOT_OVER_MEAN / MAX(m->experts, 1), 0.95 / MAX(top_k, 1)));
    g_autofree char *base = g_strdup_printf(
        "ranks=%u,experts=%u,layers=%u,top_k=%u,tokens=%u,iterations=%u,seed=%" G_GUINT64_FORMAT
        ",%s%s%s",
        ms_topology_n_gpus(topo), m->experts, m->n_moe, top_k,
        infer ? m->tokens_per_gpu_infer : m->tokens_per_gpu,
        sc->warmup + (sc->iterations ? sc->iterations : 1), sc->seed ? sc->seed : 1, GEN_DEFAULTS,
        skew ? ",hot=" : ",zipf=0", skew ? hot : "");
    const char *overrides = sc->trace && g_str_has_prefix(sc->trace, "gen:") ? sc->trace + 4 : NULL;
    return apply_items(p, base, error) && apply_items(p, overrides, error) &&
           ms_trace_gen_params_validate(p, error);
}

char *
ms_scenario_gen_spec(const MsScenario *sc, GError **error)
{
    g_autoptr(MsTopology) topo =
        ms_topology_load(sc->topology ? sc->topology : MS_SCENARIO_TOPOLOGY, error);
    g_autoptr(MsModel) model =
        topo ? ms_model_load(sc->model ? sc->model : MS_SCENARIO_MODEL, error) : NULL;
    MsTraceGenParams p;
    if (model == NULL || !gen_params(sc, model, topo, &p, error)) {
        return NULL;
    }
    g_autofree char *spec = ms_trace_gen_params_to_spec(&p);
    return g_strconcat("gen:", spec, NULL);
}

static gboolean
open_source(const MsScenario *sc, const MsModel *model, const MsTopology *topo, Source *src,
            GError **error)
{
    if (sc->trace == NULL || g_str_has_prefix(sc->trace, "gen:")) {
        MsTraceGenParams p;
        if (!gen_params(sc, model, topo, &p, error)) {
            return FALSE;
        }
        src->gen = ms_trace_gen_new(&p, error);
        return src->gen != NULL;
    }
    src->reader = ms_trace_reader_open(sc->trace, error);
    return src->reader != NULL;
}

static MsRecords *
execute(const MsScenario *sc, const MsSchedule *s, const MsTopology *topo, const MsCalibration *cal,
        gboolean detail, GError **error)
{
    if (sc->backend && strcmp(sc->backend, "sim") != 0) {
        /* Real execution of the same schedule: outputs have the simulated run's format. */
        MsExecOptions exec = {.topology = topo};
        return ms_backend_execute(sc->backend, s, topo, &exec, error);
    }
    MsEngineOptions opts = {
        .check_invariants = sc->check_invariants,
        .calibration = cal,
        .record_links = detail && sc->record_links,
    };
    return ms_engine_run(s, topo, &opts, error);
}

static gboolean
cancelled(const MsScenario *sc, GError **error)
{
    if (sc->cancel && g_atomic_int_get(sc->cancel)) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_CANCELLED, "cancelled");
        return TRUE;
    }
    return FALSE;
}

MsResult *
ms_scenario_run(const MsScenario *sc, GError **error)
{
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(MsTopology) topo =
        ms_topology_load(sc->topology ? sc->topology : MS_SCENARIO_TOPOLOGY, error);
    if (topo == NULL) {
        return NULL;
    }
    g_autoptr(MsCalibration) cal = NULL;
    if (sc->calibration) {
        cal = ms_calibration_load(sc->calibration, error);
        if (cal == NULL || !ms_calibration_apply_topology(cal, topo, error)) {
            return NULL;
        }
    }
    g_autoptr(MsModel) model = ms_model_load(sc->model ? sc->model : MS_SCENARIO_MODEL, error);
    g_autoptr(MsPolicy) policy =
        model ? ms_policy_parse(sc->policy ? sc->policy : MS_SCENARIO_POLICY, error) : NULL;
    if (policy == NULL) {
        return NULL;
    }
    Source src = {0};
    if (!open_source(sc, model, topo, &src, error)) {
        source_clear(&src);
        return NULL;
    }
    const MsModelSpec *m = ms_model_spec(model);
    /* Only Lina's inference scheduler learns from earlier batches. */
    g_autoptr(MsPathProfile) profile =
        sc->mode == MS_PLAN_INFER && g_strcmp0(ms_policy_name(policy), "lina") == 0
            ? ms_path_profile_new(m->experts, m->n_moe, (guint)ms_policy_get_uint(policy, "path"))
            : NULL;
    g_autoptr(MsResult) res = ms_result_new(sc->backend ? sc->backend : "sim");
    gboolean ok = TRUE;
    double events = 0, flows = 0;
    /* 64 bits: "the whole trace" after warm-up iterations must not wrap around. */
    guint64 want = sc->iterations ? sc->iterations : (src.gen ? 1 : G_MAXUINT);
    for (guint64 it = 0; ok && it < sc->warmup + want;) {
        g_autoptr(MsRouting) routing = NULL;
        GError *local = NULL;
        if (cancelled(sc, error)) {
            ok = FALSE;
            break;
        }
        /* FALSE without an error is the end of the trace, not a failure. */
        if (!source_next(&src, &routing, &local)) {
            if (local) {
                g_propagate_error(error, local);
                ok = FALSE;
            }
            break;
        }
        ok = ms_plan_check_routing(model, routing, topo, sc->mode, error);
        if (ok && it >= sc->warmup) {
            MsPolicyInput in = {model, routing, topo, sc->mode, profile};
            g_autoptr(MsSchedule) s = ms_policy_plan(policy, &in, error);
            gboolean detail = ms_result_n_iterations(res) == 0;
            g_autoptr(MsRecords) r = s ? execute(sc, s, topo, cal, detail, error) : NULL;
            ok = r != NULL;
            if (ok) {
                double ev = 0, fl = 0;
                ms_records_get_stat(r, "events", &ev);
                ms_records_get_stat(r, "flows", &fl);
                events += ev;
                flows += fl;
                ms_result_add(res, s, r);
                if (detail) {
                    ms_result_set_detail(res, g_steal_pointer(&s), g_steal_pointer(&r));
                }
            }
        }
        /* Lina learns the paths of every batch it has seen, warm-up batches included. */
        if (ok && profile && ms_routing_has_paths(routing)) {
            ok = ms_path_profile_add(profile, routing, error);
        }
        it++;
    }
    source_clear(&src);
    if (!ok) {
        return NULL;
    }
    if (ms_result_n_iterations(res) == 0) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has no iteration after %u warm-up iteration%s", sc->warmup,
                    sc->warmup == 1 ? "" : "s");
        return NULL;
    }
    ms_result_set_stat(res, "wall_s", (g_get_monotonic_time() - t0) * 1e-6);
    ms_result_set_stat(res, "events", events);
    ms_result_set_stat(res, "flows", flows);
    ms_result_add_note(res, cal ? "calibrated figures" : "nominal topology figures");
    return g_steal_pointer(&res);
}
