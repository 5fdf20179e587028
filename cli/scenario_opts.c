/* scenario_opts: parsing and describing the scenario options. */
#include "scenario_opts.h"

#include <math.h>
#include <string.h>

#include "backend_runner.h"
#include "backends/registry.h"
#include "cli.h"
#include "sim/compute.h"
#include "sim/engine.h"
#include "sim/what_if.h"

/* --iterations before parsing: "not given", which 0 cannot mean since 0 is refused. */
#define ITERATIONS_UNSET G_MININT

GOptionEntry *
ms_scenario_opts_entries(MsScenarioOpts *o, gboolean with_policy)
{
    o->iterations = ITERATIONS_UNSET;
    const GOptionEntry all[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &o->topology,
         "Cluster: shipped name or file (default " MS_SCENARIO_TOPOLOGY ")", "T"},
        {"model", 'm', 0, G_OPTION_ARG_STRING, &o->model,
         "Model: shipped name or file (default " MS_SCENARIO_MODEL ")", "M"},
        {"trace", 'T', 0, G_OPTION_ARG_STRING, &o->trace,
         "Routing: a trace file, sample:NAME or gen:KEY=VALUE,... (default: generated)", "SRC"},
        {"mode", 0, 0, G_OPTION_ARG_STRING, &o->mode, "train (default) or infer", "MODE"},
        {"iterations", 'n', 0, G_OPTION_ARG_INT, &o->iterations,
         "Training steps or inference batches to run (default 1, or the whole trace)", "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_INT, &o->warmup,
         "Iterations read first only to teach Lina's path profile (default 0)", "N"},
        {"seed", 0, 0, G_OPTION_ARG_INT64, &o->seed, "Seed of generated routing (default 1)", "S"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &o->calibration,
         "Calibrated figures (moesim calibrate); default: nominal", "FILE"},
        {"backend", 0, 0, G_OPTION_ARG_STRING, &o->backend, "sim (default), cpu or cuda", "B"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &o->net,
         "Network model: flow (default) or nccl[:version=2.18,...] (docs/collectives.md)", "MODEL"},
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &o->gpus,
         "Run on the first N GPUs of the topology (N or 0-M; default: all of them)", "N"},
        {"ranks", 0, 0, G_OPTION_ARG_STRING, &o->ranks,
         "Repeat the trace's ranks N times over the GPUs (Nx; default 1x)", "Nx"},
        {"check-invariants", 0, 0, G_OPTION_ARG_NONE, &o->check,
         "Verify capacities, bytes, time order and op order during the run", NULL},
        {"straggler", 0, 0, G_OPTION_ARG_STRING, &o->straggler,
         "Slower GPUs: GPU=FACTOR[,...], each of its kernels taking FACTOR (1 to 10) times its "
         "time",
         "GPU=F"},
        {"slow-link", 0, 0, G_OPTION_ARG_STRING, &o->slow_link,
         "Degraded links: LINK=FACTOR[,...], each at 1/FACTOR (1 to 10) of its bandwidth",
         "LINK=F"},
        {"engine", 0, 0, G_OPTION_ARG_STRING, &o->engine,
         "classes (default: a symmetric ring's or padded all-to-all's first node stands for all "
         "while alone on its links) or flows (every flow on its own, the reference)",
         "E"},
        {"policy", 'P', 0, G_OPTION_ARG_STRING, &o->policy,
         "fifo (default), concurrent, priority, lina, schemoe [:key=value,...]", "P"},
    };
    guint n = G_N_ELEMENTS(all) - (with_policy ? 0 : 1);
    GOptionEntry *e = g_new0(GOptionEntry, n + 1);
    memcpy(e, all, n * sizeof(GOptionEntry));
    return e;
}

GOptionEntry *
ms_scenario_opts_with(MsScenarioOpts *opts, gboolean with_policy, const GOptionEntry *own)
{
    g_autofree GOptionEntry *common = ms_scenario_opts_entries(opts, with_policy);
    guint nc = 0, no = 0;
    while (common[nc].long_name) {
        nc++;
    }
    while (own[no].long_name) {
        no++;
    }
    GOptionEntry *all = g_new0(GOptionEntry, nc + no + 1);
    memcpy(all, common, nc * sizeof(GOptionEntry));
    memcpy(all + nc, own, no * sizeof(GOptionEntry));
    return all;
}

gboolean
ms_scenario_opts_workers(const char *cmd, gint jobs, guint *workers)
{
    if (jobs < 0 || jobs > 1024) {
        ms_cli_usage("%s: --jobs: %d is not 0 to 1024", cmd, jobs);
        return FALSE;
    }
    *workers = jobs ? (guint)jobs : g_get_num_processors();
    return TRUE;
}

gboolean
ms_scenario_opts_rank_map(const char *gpus, const char *ranks, MsRankMap *map)
{
    memset(map, 0, sizeof *map);
    g_autoptr(GError) error = NULL;
    if ((gpus && !ms_rank_map_parse_gpus(gpus, &map->gpus, &error)) ||
        (ranks && !ms_rank_map_parse_ranks(ranks, &map->tile, &error))) {
        ms_cli_usage("%s", error->message);
        return FALSE;
    }
    return TRUE;
}

/* The mode and counts of the options into sc (zeroed first); FALSE with a usage message. */
static gboolean
apply(const MsScenarioOpts *o, MsScenario *sc)
{
    memset(sc, 0, sizeof *sc);
    if (!ms_scenario_opts_rank_map(o->gpus, o->ranks, &sc->ranks)) {
        return FALSE;
    }
    if (o->mode && !ms_plan_mode_from_name(o->mode, &sc->mode)) {
        ms_cli_usage("--mode '%s': use train or infer", o->mode);
        return FALSE;
    }
    /* 0 used to run 1 iteration as if it had been asked for: a count given is a count run. */
    if (o->iterations == 0) {
        ms_cli_usage("--iterations 0: give at least 1 (without it a generated routing runs 1 "
                     "iteration and a trace all that it holds)");
        return FALSE;
    }
    gboolean given = o->iterations != ITERATIONS_UNSET;
    if ((given && (o->iterations < 1 || o->iterations > 1000000)) || o->warmup < 0 ||
        o->warmup > 1000000) {
        ms_cli_usage("--iterations must be between 1 and 1000000 and --warmup between 0 and "
                     "1000000");
        return FALSE;
    }
    if (o->seed < 0) {
        ms_cli_usage("--seed must not be negative");
        return FALSE;
    }
    sc->iterations = given ? (guint)o->iterations : 0;
    sc->warmup = o->warmup;
    sc->seed = o->seed ? (guint64)o->seed : 1;
    return TRUE;
}

/* The what-ifs' notes for the result, NULL-terminated, into out (sc.notes points there). */
static void
add_note(MsCliScenario *out, char *note)
{
    guint n = out->notes ? g_strv_length(out->notes) : 0;
    out->notes = g_renew(char *, out->notes, n + 2);
    out->notes[n] = note;
    out->notes[n + 1] = NULL;
    out->sc.notes = (const char *const *)out->notes;
}

/* A what-if's notes (strings that array frees) given to the scenario, which frees them. */
static void
take_notes(MsCliScenario *out, GPtrArray *notes)
{
    g_ptr_array_set_free_func(notes, NULL);
    for (guint i = 0; i < notes->len; i++) {
        add_note(out, notes->pdata[i]);
    }
}

/* --straggler GPU=FACTOR[,...] into out->pace (one factor per GPU used, 1 where none is given)
 * and a note per straggler; FALSE with the usage message printed. */
static gboolean
parse_stragglers(const char *text, guint gpus, MsCliScenario *out)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    if (!ms_what_if_stragglers("--straggler", text, gpus, &out->pace, notes, &error)) {
        ms_cli_fail(error);
        return FALSE;
    }
    take_notes(out, notes);
    return TRUE;
}

/* --slow-link LINK=FACTOR[,...]: each link of the loaded topology at 1/FACTOR of its bandwidth,
 * and a note per link; FALSE with the usage message printed. */
static gboolean
parse_slow_links(const char *text, MsCliScenario *out)
{
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) error = NULL;
    if (!ms_what_if_slow_links("--slow-link", text, ms_inputs_topology_to_edit(out->inputs), notes,
                               &error)) {
        ms_cli_fail(error);
        return FALSE;
    }
    take_notes(out, notes);
    return TRUE;
}

int
ms_scenario_opts_setup(const MsScenarioOpts *o, gboolean record_links, MsCliScenario *out)
{
    memset(out, 0, sizeof *out);
    if (!apply(o, &out->sc)) {
        return MS_EXIT_USAGE;
    }
    MsInputNames names = {o->topology, o->model, o->calibration, o->policy, o->trace};
    g_autoptr(GError) error = NULL;
    out->inputs = ms_inputs_load(&names, &error);
    if (out->inputs == NULL) {
        return ms_cli_fail(error);
    }
    ms_inputs_fill(out->inputs, &out->sc);
    MsNetSpec net;
    ms_net_spec_init(&net);
    if (o->net && !ms_net_spec_parse(o->net, &net, &error)) {
        g_prefix_error(&error, "--net: ");
        return ms_cli_fail(error);
    }
    if (o->backend && strcmp(o->backend, "sim") != 0 && ms_backend_find(o->backend, NULL) == NULL) {
        /* The registry knows the executors; run and compare also take the simulator. */
        g_autoptr(GString) known = g_string_new("sim");
        for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
            g_string_append_printf(known, ", %s", (*b)->name);
        }
        return ms_cli_usage("--backend: unknown backend '%s' (known: %s)", o->backend, known->str);
    }
    if (o->net && o->backend && strcmp(o->backend, "sim") != 0) {
        return ms_cli_usage("--net chooses the simulator's network model: it does not go with "
                            "--backend %s",
                            o->backend);
    }
    if (o->engine && strcmp(o->engine, "flows") != 0 && strcmp(o->engine, "classes") != 0) {
        return ms_cli_usage("--engine: '%s' is neither flows nor classes", o->engine);
    }
    if (o->engine && o->backend && strcmp(o->backend, "sim") != 0) {
        return ms_cli_usage("--engine chooses how the simulator runs: it does not go with "
                            "--backend %s",
                            o->backend);
    }
    if (o->link_timeline && o->backend && strcmp(o->backend, "sim") != 0) {
        return ms_cli_usage("--link-timeline records the simulator's flows: it does not go with "
                            "--backend %s",
                            o->backend);
    }
    if (o->straggler && o->backend && strcmp(o->backend, "sim") != 0) {
        return ms_cli_usage("--straggler slows the simulator's GPUs: it does not go with "
                            "--backend %s (a real GPU is as slow as it is)",
                            o->backend);
    }
    if (o->straggler) {
        const MsTopology *topo = ms_inputs_topology(out->inputs);
        guint used = 0;
        if (!ms_rank_map_gpus_used(&out->sc.ranks, ms_topology_n_gpus(topo), ms_topology_name(topo),
                                   &used, &error)) {
            return ms_cli_fail(error);
        }
        if (!parse_stragglers(o->straggler, used, out)) {
            return MS_EXIT_USAGE;
        }
    }
    if (o->slow_link && o->backend && strcmp(o->backend, "sim") != 0) {
        return ms_cli_usage("--slow-link slows the simulator's links: it does not go with "
                            "--backend %s",
                            o->backend);
    }
    if (o->slow_link && !parse_slow_links(o->slow_link, out)) {
        return MS_EXIT_USAGE;
    }
    if (o->link_timeline) {
        const MsTopology *topo = ms_inputs_topology(out->inputs);
        guint l = 0;
        if (!ms_topology_find_link(topo, o->link_timeline, &l)) {
            return ms_cli_usage("--link-timeline: topology '%s' has no link '%s' (its links: "
                                "moesim topo show %s --links)",
                                ms_topology_name(topo), o->link_timeline, ms_topology_name(topo));
        }
        const MsLink *link = ms_topology_link(topo, l);
        if (!isfinite(link->bandwidth)) {
            return ms_cli_usage("--link-timeline: link '%s' has unlimited bandwidth: no flow "
                                "shares it",
                                o->link_timeline);
        }
        out->timeline = ms_link_timeline_new(l, link->name, link->bandwidth);
    }
    if (o->backend == NULL || strcmp(o->backend, "sim") == 0) {
        MsEngineOptions eo = {
            .check_invariants = o->check,
            .calibration = ms_inputs_calibration(out->inputs),
            .record_links = record_links,
            .net = &net,
            .flow_by_flow = o->engine && strcmp(o->engine, "flows") == 0,
            .link_timeline = out->timeline,
            .pace = out->pace ? (const double *)out->pace->data : NULL,
            .n_pace = out->pace ? out->pace->len : 0,
        };
        out->runner = ms_engine_runner_new(&eo);
    } else {
        out->runner = ms_backend_runner_new(o->backend);
    }
    out->sc.runner = out->runner;
    return MS_EXIT_OK;
}

void
ms_cli_scenario_clear(MsCliScenario *cs)
{
    ms_runner_free(cs->runner);
    ms_link_timeline_free(cs->timeline);
    if (cs->pace) {
        g_array_unref(cs->pace);
    }
    g_strfreev(cs->notes);
    ms_inputs_free(cs->inputs);
    memset(cs, 0, sizeof *cs);
}

void
ms_scenario_opts_clear(MsScenarioOpts *o)
{
    g_free(o->topology);
    g_free(o->model);
    g_free(o->trace);
    g_free(o->policy);
    g_free(o->mode);
    g_free(o->engine);
    g_free(o->straggler);
    g_free(o->slow_link);
    g_free(o->calibration);
    g_free(o->backend);
    g_free(o->net);
    g_free(o->gpus);
    g_free(o->ranks);
    memset(o, 0, sizeof *o);
}

char *
ms_scenario_describe(const MsScenarioOpts *o, MsPlanMode mode)
{
    g_autofree char *map =
        g_strdup_printf("%s%s%s%s", o->gpus ? ", GPUs " : "", o->gpus ? o->gpus : "",
                        o->ranks ? ", ranks " : "", o->ranks ? o->ranks : "");
    return g_strdup_printf(
        "%s on %s%s, %s, routing %s%s%s%s%s%s%s%s%s", o->model ? o->model : MS_SCENARIO_MODEL,
        o->topology ? o->topology : MS_SCENARIO_TOPOLOGY, map, ms_plan_mode_name(mode),
        o->trace ? o->trace : "generated",
        o->calibration ? ", calibrated by " : ", nominal figures",
        o->calibration ? o->calibration : "", o->net ? ", network " : "", o->net ? o->net : "",
        o->straggler ? ", straggler " : "", o->straggler ? o->straggler : "",
        o->slow_link ? ", slow link " : "", o->slow_link ? o->slow_link : "");
}
