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

/* One measured iteration from its plan to its place in the result. Planned in order on the
 * calling thread (Lina learns from each batch before the next is planned), executed there or by
 * a worker, and committed to the result in order. */
typedef struct {
    guint index;
    MsSchedule *s;
    gboolean detail, sink;
    /* A pure runner's iteration without detail, whose work's digest was taken (its records
     * become the ones a repeat takes), and whether it repeats the work of the last iteration
     * before it whose digest was taken (then it is not executed: it takes that one's records). */
    gboolean digested, repeat;
    MsRecords *r;
    GError *error;
    gboolean done; /* under Run.lock when a worker executes it */
} Job;

static void
job_free(Job *j)
{
    ms_schedule_free(j->s);
    ms_records_free(j->r);
    g_clear_error(&j->error);
    g_free(j);
}

typedef struct {
    const MsScenario *sc;
    MsResult *res;
    guint planned;     /* measured iterations planned so far */
    char *last_digest; /* of the last planned job whose digest was taken */
    GQueue jobs;       /* planned, not committed yet, in order */
    GThreadPool *pool; /* NULL: each job executes as it is planned */
    GMutex lock;
    GCond cond;
    /* The records of the last committed job that had a digest and was executed. */
    MsRecords *memo;
    guint reused;
} Run;

static void
execute(Job *j, const MsScenario *sc)
{
    const MsRunWhatIf what_if = {sc->pace, sc->n_pace, sc->net};
    j->r = ms_runner_execute(sc->runner, j->s, sc->topology, j->detail || j->sink, &what_if,
                             &j->error);
}

static void
work(gpointer data, gpointer user)
{
    Job *j = data;
    Run *run = user;
    execute(j, run->sc);
    g_mutex_lock(&run->lock);
    j->done = TRUE;
    g_cond_broadcast(&run->cond);
    g_mutex_unlock(&run->lock);
}

/* Plans the next measured iteration and executes it or hands it to a worker. */
static gboolean
plan(Run *run, MsPlanner *planner, const MsRouting *routing, GError **error)
{
    const MsScenario *sc = run->sc;
    MsSchedule *s = ms_planner_plan(planner, routing, error);
    if (s == NULL) {
        return FALSE;
    }
    Job *j = g_new0(Job, 1);
    j->index = run->planned++;
    j->s = s;
    j->detail = j->index == 0;
    j->sink = sc->sink && sc->sink->wants(sc->sink->data, j->index);
    if (!j->detail && !j->sink && ms_runner_pure(sc->runner)) {
        g_autofree char *digest = ms_schedule_work_digest(s);
        j->digested = TRUE;
        j->repeat = g_strcmp0(digest, run->last_digest) == 0;
        g_free(run->last_digest);
        run->last_digest = g_steal_pointer(&digest);
    }
    g_queue_push_tail(&run->jobs, j);
    if (j->repeat) {
        j->done = TRUE;
    } else if (run->pool) {
        g_thread_pool_push(run->pool, j, NULL);
    } else {
        execute(j, sc);
        j->done = TRUE;
    }
    return TRUE;
}

/* Waits for the oldest job and adds it to the result: the first one's schedule and records are
 * kept whole, and the sink gets those it wants. */
static gboolean
commit(Run *run, GError **error)
{
    const MsScenario *sc = run->sc;
    Job *j = g_queue_pop_head(&run->jobs);
    g_mutex_lock(&run->lock);
    while (!j->done) {
        g_cond_wait(&run->cond, &run->lock);
    }
    g_mutex_unlock(&run->lock);
    gboolean ok = TRUE;
    if (j->repeat) {
        run->reused++;
        ms_result_add(run->res, j->s, run->memo);
    } else if (j->r == NULL) {
        g_propagate_error(error, g_steal_pointer(&j->error));
        ok = FALSE;
    } else {
        add_stats(run->res, j->r);
        ms_result_add(run->res, j->s, j->r);
        ok = !j->sink || sc->sink->each(sc->sink->data, j->index, j->s, j->r, error);
        if (ok && j->detail) {
            ms_result_set_detail(run->res, g_steal_pointer(&j->s), g_steal_pointer(&j->r));
        } else if (ok && j->digested) {
            ms_records_free(run->memo);
            run->memo = g_steal_pointer(&j->r);
        }
    }
    job_free(j);
    return ok;
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
    Run run = {.sc = sc, .res = res};
    g_queue_init(&run.jobs);
    g_mutex_init(&run.lock);
    g_cond_init(&run.cond);
    /* Workers only for a pure runner: a real GPU runs one schedule at a time. At most two jobs
     * per worker wait to be committed, so memory holds a bounded number of schedules. */
    guint workers = ms_runner_pure(sc->runner) ? sc->workers : 0;
    if (workers > 1) {
        run.pool = g_thread_pool_new(work, &run, (gint)workers, TRUE, NULL);
    }
    guint in_flight = run.pool ? 2 * workers : 0;
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
        ok = it < sc->warmup || plan(&run, planner, routing, error);
        while (ok && run.jobs.length > in_flight) {
            ok = commit(&run, error);
        }
        /* Lina learns the paths (and its expert caches the uses) of every batch it has seen,
         * warm-up batches included. */
        if (ok) {
            ok = ms_planner_learn(planner, routing, error);
        }
    }
    while (ok && run.jobs.length) {
        ok = commit(&run, error);
    }
    if (run.pool) {
        g_thread_pool_free(run.pool, FALSE, TRUE); /* after the jobs it holds, if it stopped */
    }
    g_queue_clear_full(&run.jobs, (GDestroyNotify)job_free);
    ms_records_free(run.memo);
    g_free(run.last_digest);
    g_mutex_clear(&run.lock);
    g_cond_clear(&run.cond);
    if (!ok) {
        return NULL;
    }
    /* The engine's counters sum the iterations it ran; those it did not are counted apart. */
    if (run.reused) {
        ms_result_set_stat(res, "reused_iterations", run.reused);
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
