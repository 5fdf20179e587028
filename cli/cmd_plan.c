/* cmd_plan: `moesim plan`: the schedule of one iteration (a training step or an inference batch)
 * of a scenario, written as JSON for the engine and the backends, with a short summary of what
 * was planned (ops, collectives, bytes, the policy's decisions). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "sim/inputs.h"
#include "scenario_opts.h"
#include "sim/policy/planner.h"

typedef struct {
    guint compute, comm, colls, a2a, allreduce, weights;
    guint64 a2a_bytes, allreduce_bytes, weight_bytes;
    double flops;
} Counts;

static void
count(const MsSchedule *s, Counts *c)
{
    memset(c, 0, sizeof(*c));
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        if (i.kind == MS_OP_COMPUTE) {
            c->compute++;
            c->flops += i.flops;
        } else {
            c->comm++;
        }
    }
    c->colls = ms_schedule_n_colls(s);
    for (guint32 k = 0; k < c->colls; k++) {
        MsCollInfo ci;
        ms_schedule_coll(s, k, &ci);
        if (ci.kind == MS_COLL_KIND_ALLREDUCE) {
            c->allreduce++;
            c->allreduce_bytes += ci.bytes * ci.n_ranks;
            continue;
        }
        /* Bytes a GPU keeps for itself cross no link: left out, as run and the result's
         * a2a_bytes leave them out. */
        guint64 sum = 0;
        for (gsize x = 0; x < (gsize)ci.n_ranks * ci.n_ranks; x++) {
            sum += x / ci.n_ranks == x % ci.n_ranks ? 0 : ci.matrix[x];
        }
        MsOpInfo first;
        ms_schedule_op(s, ci.ops[0], &first);
        if (first.role == MS_ROLE_WEIGHTS) {
            c->weights++;
            c->weight_bytes += sum;
        } else {
            c->a2a++;
            c->a2a_bytes += sum;
        }
    }
}

static void
print_meta(const MsSchedule *s, const char *prefix)
{
    static const char *const keys[] = {
        "lina.pack",      "lina.pack_reason", "lina.chunk_compute_s", "lina.chunk_a2a_s",
        "lina.placement", "lina.replans",     "lina.weight_bytes",    "lina.estimate_error",
    };
    for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
        const char *v = ms_schedule_get_meta(s, keys[k]);
        if (v && g_str_has_prefix(keys[k], prefix)) {
            printf("  %-20s %s\n", keys[k], v);
        }
    }
}

static void
summary(const MsSchedule *s, const char *trace, const char *out)
{
    Counts c;
    count(s, &c);
    char b1[32], b2[32], b3[32];
    printf("plan        %s on %s, policy %s, %s, iteration %s\n", ms_schedule_get_meta(s, "model"),
           ms_schedule_get_meta(s, "topology"), ms_schedule_get_meta(s, "policy"),
           ms_schedule_get_meta(s, "mode"), ms_schedule_get_meta(s, "iteration"));
    printf("trace       %s\n", trace);
    if (ms_schedule_get_meta(s, "rank_map")) {
        printf("gpus        %s\n", ms_schedule_get_meta(s, "rank_map"));
    }
    printf("ranks       %u, ep %s, streams", ms_schedule_n_ranks(s), ms_schedule_get_meta(s, "ep"));
    for (guint k = 0; k < ms_schedule_n_streams(s); k++) {
        printf(" %s", ms_schedule_stream_name(s, k));
    }
    printf("\nops         %u compute (%.4g flops), %u communication in %u collectives\n", c.compute,
           c.flops, c.comm, c.colls);
    printf("traffic     all-to-all %u (%s between GPUs), allreduce %u (%s summed over GPUs), "
           "weights %u (%s)\n",
           c.a2a, ms_format_bytes(c.a2a_bytes, b1, sizeof b1), c.allreduce,
           ms_format_bytes(c.allreduce_bytes, b2, sizeof b2), c.weights,
           ms_format_bytes(c.weight_bytes, b3, sizeof b3));
    printf("dropped     %s tokens\n", ms_schedule_get_meta(s, "dropped_tokens"));
    print_meta(s, "lina.");
    printf("schedule    %s\n", out);
}

int
ms_cmd_plan(int argc, char **argv)
{
    g_autofree char *topology = NULL, *model = NULL, *trace = NULL, *policy = NULL;
    g_autofree char *mode_name = NULL, *out = NULL, *gpus = NULL, *ranks = NULL;
    gint64 iteration = 0, seed = 1;
    const GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology,
         "cluster: shipped name or file (default " MS_SCENARIO_TOPOLOGY ")", "T"},
        {"model", 'm', 0, G_OPTION_ARG_STRING, &model,
         "model: shipped name or file (default " MS_SCENARIO_MODEL ")", "M"},
        {"trace", 'T', 0, G_OPTION_ARG_STRING, &trace,
         "routing: a trace file, sample:NAME or gen:KEY=VALUE,... (default: generated, as "
         "moesim run does)",
         "SRC"},
        {"policy", 'P', 0, G_OPTION_ARG_STRING, &policy,
         "fifo, concurrent, priority, lina or schemoe, with :key=value,... (default fifo)",
         "P[:params]"},
        {"mode", 0, 0, G_OPTION_ARG_STRING, &mode_name, "train (a step) or infer (a batch)",
         "train|infer"},
        {"iteration", 0, 0, G_OPTION_ARG_INT64, &iteration,
         "the trace iteration to plan (default 0)", "N"},
        {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "seed of a generated trace (default 1)", "S"},
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &gpus,
         "run on the first N GPUs of the topology (N or 0-M; default: all of them)", "N"},
        {"ranks", 0, 0, G_OPTION_ARG_STRING, &ranks,
         "repeat the trace's ranks N times over the GPUs (Nx; default 1x)", "Nx"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the schedule JSON here (- = stdout)",
         "FILE|-"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL,
                      "Plan one training step or inference batch and write its schedule.",
                      "Policies and their parameters: docs/policies.md; models: docs/models.md.\n"
                      "Example: moesim plan --policy lina:chunk=16MB --out step.json")) {
        return MS_EXIT_USAGE;
    }
    if (argc != 1) {
        return ms_cli_usage("plan: unexpected argument '%s'", argv[1]);
    }
    if (out == NULL) {
        return ms_cli_usage("plan: --out FILE is required (- for standard output)");
    }
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {out};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    MsPlanMode mode = MS_PLAN_TRAIN;
    if (mode_name && !ms_plan_mode_from_name(mode_name, &mode)) {
        return ms_cli_usage("plan: --mode must be train or infer, not '%s'", mode_name);
    }
    if (iteration < 0 || iteration > G_MAXUINT32) {
        return ms_cli_usage("plan: --iteration %" G_GINT64_FORMAT " is out of range", iteration);
    }
    if (seed < 0) {
        return ms_cli_usage("plan: --seed %" G_GINT64_FORMAT " is negative", seed);
    }
    MsRankMap map;
    if (!ms_scenario_opts_rank_map(gpus, ranks, &map)) {
        return MS_EXIT_USAGE;
    }
    MsInputNames names = {.topology = topology, .model = model, .policy = policy, .trace = trace};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsInputs) in = ms_inputs_load(&names, &error);
    MsPlannerInputs pin = {
        .topology = in ? ms_inputs_topology(in) : NULL,
        .model = in ? ms_inputs_model(in) : NULL,
        .policy = in ? ms_inputs_policy(in) : NULL,
        .routing = in ? ms_inputs_routing(in) : NULL,
        .mode = mode,
        .iterations = (guint)iteration + 1,
        .seed = (guint64)seed,
        .ranks = map,
    };
    g_autoptr(MsPlanner) planner = in ? ms_planner_new(&pin, &error) : NULL;
    g_autoptr(MsSchedule) s =
        planner ? ms_planner_plan_iteration(planner, (guint64)iteration, &error) : NULL;
    if (s == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(JsonNode) json = ms_schedule_to_json(s);
    if (!ms_cli_write_json(out, json, &error)) {
        return ms_cli_fail(error);
    }
    if (strcmp(out, "-") != 0) {
        summary(s, ms_planner_trace(planner), out);
    }
    return MS_EXIT_OK;
}
