/* scenario: planning each iteration of a study point and running it. Iterations are read one at
 * a time, so memory does not grow with the trace. */
#include "scenario.h"

#include "sim/policy/planner.h"

G_DEFINE_QUARK(ms_scenario_error_quark, ms_scenario_error)

static gboolean
cancelled(const MsScenario *sc, GError **error)
{
    if (sc->cancel && g_atomic_int_get(sc->cancel)) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_CANCELLED, "cancelled");
        return TRUE;
    }
    return FALSE;
}

/* The engine's counters a result sums over its iterations: events, flows, bandwidth solves and
 * what each kind of collective was made of (sim/engine.c: "calls.KIND", "bytes.KIND",
 * "flows.KIND"). Other figures of a run (its wall time, a backend's device) are not sums. */
static gboolean
summed_stat(const char *key)
{
    return strcmp(key, "events") == 0 || strcmp(key, "flows") == 0 ||
           strcmp(key, "bandwidth_solves") == 0 || g_str_has_prefix(key, "calls.") ||
           g_str_has_prefix(key, "bytes.") || g_str_has_prefix(key, "flows.");
}

static void
add_stats(MsResult *res, const MsRecords *r)
{
    for (const char *const *k = ms_records_stat_keys(r); k && *k; k++) {
        double v = 0, sum = 0;
        if (summed_stat(*k) && ms_records_get_stat(r, *k, &v)) {
            ms_result_get_stat(res, *k, &sum);
            ms_result_set_stat(res, *k, sum + v);
        }
    }
}

/* The last iteration a pure runner ran without detail: its work's digest and its records. An
 * iteration of the same work (a model padded to capacity does the same work whatever the
 * routing) takes them instead of running again: the runner would return the same. */
typedef struct {
    char *digest;
    MsRecords *records;
    guint reused;
} Memo;

static void
memo_clear(Memo *m)
{
    g_clear_pointer(&m->digest, g_free);
    g_clear_pointer(&m->records, ms_records_free);
}

/* Plans and runs one measured iteration; the first one's schedule and records are kept whole,
 * and the sink gets those it wants. */
static gboolean
run_iteration(const MsScenario *sc, MsPlanner *planner, const MsRouting *routing, MsResult *res,
              Memo *memo, GError **error)
{
    g_autoptr(MsSchedule) s = ms_planner_plan(planner, routing, error);
    guint index = ms_result_n_iterations(res);
    gboolean detail = index == 0;
    gboolean sink = sc->sink && sc->sink->wants(sc->sink->data, index);
    const MsRunWhatIf what_if = {sc->pace, sc->n_pace, sc->net};
    g_autofree char *digest =
        s && !detail && !sink && ms_runner_pure(sc->runner) ? ms_schedule_work_digest(s) : NULL;
    if (digest && g_strcmp0(digest, memo->digest) == 0) {
        memo->reused++;
        ms_result_add(res, s, memo->records);
        return TRUE;
    }
    g_autoptr(MsRecords) r =
        s ? ms_runner_execute(sc->runner, s, sc->topology, detail || sink, &what_if, error) : NULL;
    if (r == NULL) {
        return FALSE;
    }
    add_stats(res, r);
    ms_result_add(res, s, r);
    if (sink && !sc->sink->each(sc->sink->data, index, s, r, error)) {
        return FALSE;
    }
    if (detail) {
        ms_result_set_detail(res, g_steal_pointer(&s), g_steal_pointer(&r));
    } else if (digest) {
        memo_clear(memo);
        memo->digest = g_steal_pointer(&digest);
        memo->records = g_steal_pointer(&r);
    }
    return TRUE;
}

MsResult *
ms_scenario_run(const MsScenario *sc, GError **error)
{
    g_return_val_if_fail(sc->topology && sc->model && sc->policy && sc->runner, NULL);
    gboolean generated = sc->routing == NULL || ms_routing_source_generated(sc->routing);
    MsPlannerInputs pin = {
        .topology = sc->topology,
        .model = sc->model,
        .policy = sc->policy,
        .routing = sc->routing,
        .mode = sc->mode,
        .iterations = sc->warmup + (sc->iterations ? sc->iterations : 1),
        .seed = sc->seed,
        .ranks = sc->ranks,
    };
    g_autoptr(MsPlanner) planner = ms_planner_new(&pin, error);
    if (planner == NULL) {
        return NULL;
    }
    g_autoptr(MsResult) res = ms_result_new(ms_runner_name(sc->runner));
    if (sc->layers) {
        ms_result_keep_layers(res);
    }
    gboolean ok = TRUE;
    Memo memo = {0};
    /* 64 bits: "the whole trace" after warm-up iterations must not wrap around. */
    guint64 want = sc->iterations ? sc->iterations : (generated ? 1 : G_MAXUINT);
    for (guint64 it = 0; ok && it < sc->warmup + want; it++) {
        g_autoptr(MsRouting) routing = NULL;
        GError *local = NULL;
        if (cancelled(sc, error)) {
            ok = FALSE;
            break;
        }
        /* FALSE without an error is the end of the trace, not a failure. */
        if (!ms_planner_read(planner, &routing, &local)) {
            if (local) {
                g_propagate_error(error, local);
                ok = FALSE;
            }
            break;
        }
        if (!ms_plan_check_routing(sc->model, routing, sc->topology, sc->mode, error)) {
            /* The routing's own name, as the user gave it (a file, sample: or gen:). */
            const char *spec = sc->routing ? ms_routing_source_spec(sc->routing) : NULL;
            g_prefix_error(error, "--trace %s: ", spec ? spec : "(generated)");
            ok = FALSE;
            break;
        }
        ok = it < sc->warmup || run_iteration(sc, planner, routing, res, &memo, error);
        /* Lina learns the paths (and its expert caches the uses) of every batch it has seen,
         * warm-up batches included. */
        if (ok) {
            ok = ms_planner_learn(planner, routing, error);
        }
    }
    memo_clear(&memo);
    if (!ok) {
        return NULL;
    }
    /* The engine's counters sum the iterations it ran; those it did not are counted apart. */
    if (memo.reused) {
        ms_result_set_stat(res, "reused_iterations", memo.reused);
    }
    guint got = ms_result_n_iterations(res);
    /* The routing as the user named it (a file, sample: or gen:). */
    const char *spec = sc->routing ? ms_routing_source_spec(sc->routing) : NULL;
    if (spec == NULL) {
        spec = "(generated)";
    }
    if (got == 0) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "--trace %s: the trace has no iteration after %u warm-up iteration%s", spec,
                    sc->warmup, sc->warmup == 1 ? "" : "s");
        return NULL;
    }
    /* A count asked for is a count run: fewer would be reported as if it were all. */
    if (sc->iterations && got < sc->iterations) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "--trace %s: the trace has %u iteration%s after %u warm-up iteration%s, fewer "
                    "than the %u asked for",
                    spec, got, got == 1 ? "" : "s", sc->warmup, sc->warmup == 1 ? "" : "s",
                    sc->iterations);
        return NULL;
    }
    ms_result_add_note(res, sc->calibration ? "calibrated figures" : "nominal topology figures");
    for (guint i = 0; sc->notes && sc->notes[i]; i++) {
        ms_result_add_note(res, sc->notes[i]);
    }
    return g_steal_pointer(&res);
}
