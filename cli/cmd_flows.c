/* cmd_flows: `moesim flows`: replays a flow list on a topology and prints when each flow
 * finished. */
#include "cli.h"
#include "sim/base/json_output.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "sim/net/flowfile.h"
#include "sim/sim.h"
#include "topologies/topology.h"
#include "validate/calibrate.h"

static void
add_summary(JsonBuilder *jb, const MsSimStats *st, MsTime makespan, guint n)
{
    json_builder_set_member_name(jb, "flows");
    json_builder_add_int_value(jb, n);
    json_builder_set_member_name(jb, "makespan_us");
    json_builder_add_double_value(jb, ms_time_to_us(makespan));
    json_builder_set_member_name(jb, "events");
    json_builder_add_int_value(jb, (gint64)st->events);
    json_builder_set_member_name(jb, "solves");
    json_builder_add_int_value(jb, (gint64)st->net.solves);
}

static void
print_text(const MsTopology *topo, const MsFlowList *list, const MsTime *begin, const MsTime *end,
           gboolean summary_only, const MsSimStats *st, MsTime makespan)
{
    guint n = ms_flow_list_len(list);
    if (!summary_only) {
        printf("# %-14s %-10s %-10s %14s %12s %12s %12s %12s\n", "id", "src", "dst", "bytes",
               "start_us", "begin_us", "end_us", "duration_us");
        for (guint i = 0; i < n; i++) {
            printf(
                "%-16s %-10s %-10s %14" G_GUINT64_FORMAT " %12.3f %12.3f %12.3f %12.3f\n",
                ms_flow_list_id(list, i), ms_topology_device_name(topo, ms_flow_list_src(list, i)),
                ms_topology_device_name(topo, ms_flow_list_dst(list, i)),
                ms_flow_list_bytes(list, i), ms_time_to_us(ms_flow_list_start(list, i)),
                ms_time_to_us(begin[i]), ms_time_to_us(end[i]), ms_time_to_us(end[i] - begin[i]));
        }
    }
    printf("# flows %u, makespan %.3f us, events %" G_GUINT64_FORMAT
           ", bandwidth solves %" G_GUINT64_FORMAT "\n",
           n, ms_time_to_us(makespan), st->events, st->net.solves);
}

static JsonNode *
to_json(const MsTopology *topo, const MsFlowList *list, const MsTime *begin, const MsTime *end,
        const MsSimStats *st, MsTime makespan)
{
    guint n = ms_flow_list_len(list);
    g_autoptr(JsonBuilder) jb = json_builder_new();
    json_builder_begin_object(jb);
    ms_json_member_string(jb, "schema", "moesim.flows/1"); /* docs/outputs.md */
    json_builder_set_member_name(jb, "topology");
    json_builder_add_string_value(jb, ms_topology_name(topo));
    add_summary(jb, st, makespan, n);
    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (guint i = 0; i < n; i++) {
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "id");
        json_builder_add_string_value(jb, ms_flow_list_id(list, i));
        json_builder_set_member_name(jb, "begin_us");
        json_builder_add_double_value(jb, ms_time_to_us(begin[i]));
        json_builder_set_member_name(jb, "end_us");
        json_builder_add_double_value(jb, ms_time_to_us(end[i]));
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    return json_builder_get_root(jb);
}

int
ms_cmd_flows(int argc, char **argv)
{
    g_autofree char *topology = NULL, *json = NULL, *calibration = NULL;
    gboolean check = FALSE, quiet = FALSE;
    const GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology,
         "Topology name or file (default dgx-a100)", "T"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration,
         "Calibrated link figures (moesim calibrate)", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Write per-flow results and the summary as JSON (- for stdout, instead of the text)",
         "FILE"},
        {"summary", 0, 0, G_OPTION_ARG_NONE, &quiet, "Print only the summary line", NULL},
        {"check-invariants", 0, 0, G_OPTION_ARG_NONE, &check,
         "Verify link capacities, bytes and time order during the run", NULL},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, "FILE", "Replay a flow list on a topology.",
                      "Each line of FILE: ID SRC DST BYTES START [weight=W] [after=ID,...]\n"
                      "  e.g.  f1 gpu0 gpu8 1MB 0us\n"
                      "        f2 gpu8 gpu0 1MB 0us weight=2 after=f1\n"
                      "SRC and DST are device names of the topology or GPU ranks; BYTES and START "
                      "need units. See docs/flows.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc != 2) {
        return ms_cli_usage("flows: expected exactly one FILE (try 'moesim flows --help')");
    }
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {json};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = ms_topology_load(topology ? topology : "dgx-a100", &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    if (calibration) {
        g_autoptr(MsCalibration) cal = ms_calibration_load(calibration, &error);
        if (cal == NULL || !ms_calibration_apply_topology(cal, topo, &error)) {
            return ms_cli_fail(error);
        }
    }
    g_autoptr(MsFlowList) list = ms_flow_list_load_file(argv[1], topo, &error);
    if (list == NULL) {
        return ms_cli_fail(error);
    }
    guint n = ms_flow_list_len(list);
    g_autofree MsTime *begin = g_new(MsTime, MAX(n, 1));
    g_autofree MsTime *end = g_new(MsTime, MAX(n, 1));
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, check);
    double t0 = ms_cli_wall_seconds();
    if (!ms_flow_list_run(list, sim, begin, end, &error)) {
        return ms_cli_fail(error);
    }
    double wall = ms_cli_wall_seconds() - t0;
    MsTime makespan = 0;
    for (guint i = 0; i < n; i++) {
        makespan = MAX(makespan, end[i]);
    }
    MsSimStats st;
    ms_sim_stats(sim, &st);
    /* "--json -" makes standard output pure JSON. The wall time goes to stderr so that standard
     * output is byte-for-byte reproducible. */
    if (json == NULL || strcmp(json, "-") != 0) {
        print_text(topo, list, begin, end, quiet, &st, makespan);
    }
    fflush(stdout);
    fprintf(stderr, "# wall time %.3f s (%.0f flows/s)\n", wall, wall > 0 ? n / wall : 0);
    if (json) {
        g_autoptr(JsonNode) root = to_json(topo, list, begin, end, &st, makespan);
        if (!ms_cli_write_json(json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}
