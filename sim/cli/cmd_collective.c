/* cmd_collective: `moesim collective`: a simulated nccl-tests sweep, printed in nccl-tests'
 * columns so that it can sit beside a real all_reduce_perf / alltoall_perf log. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>

#include "sim/net/collective.h"
#include "sim/sim.h"
#include "topologies/topology.h"
#include "validate/calibrate.h"

typedef struct {
    guint64 size;
    MsTime time;
    guint64 flows, events;
} Row;

static void
rank_done(MsColl *coll, guint rank, gpointer ctx)
{
    (void)coll;
    (void)rank;
    (void)ctx;
}

/* Simulates one size from scratch; the time is from launch to the last rank's completion. */
static gboolean
simulate(const MsTopology *topo, const MsCalibration *cal, const MsCollSpec *spec_in,
         gboolean check, Row *row, GError **error)
{
    MsCollSpec copy = *spec_in, *spec = &copy;
    g_autofree guint64 *scaled = cal ? ms_calibration_adjust_collective(cal, topo, spec) : NULL;
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, check);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, rank_done, NULL, error);
    if (coll == NULL) {
        return FALSE;
    }
    ms_coll_launch_all(coll);
    if (!ms_sim_run(sim, error)) {
        return FALSE;
    }
    row->time = 0;
    for (guint i = 0; i < spec->n_ranks; i++) {
        row->time = MAX(row->time, ms_coll_rank_end(coll, i));
    }
    MsSimStats st;
    ms_sim_stats(sim, &st);
    row->flows = ms_coll_n_flows(coll);
    row->events = st.events;
    return TRUE;
}

static void
format_time(double us, char *buf, gsize len)
{
    /* nccl-tests' precision rules. */
    if (us >= 10000.0) {
        g_snprintf(buf, len, "%7.0f", us);
    } else if (us >= 100.0) {
        g_snprintf(buf, len, "%7.1f", us);
    } else {
        g_snprintf(buf, len, "%7.2f", us);
    }
}

int
ms_cmd_collective(int argc, char **argv)
{
    g_autofree char *topology = NULL, *op_name = NULL, *algo_name = NULL, *json = NULL;
    g_autofree char *minbytes = NULL, *maxbytes = NULL, *alpha_text = NULL, *delay_text = NULL;
    g_autofree char *calibration = NULL;
    double stepfactor = 2.0;
    gint ranks = 0, channels = 0, window = 0, per_node = 0;
    gboolean check = FALSE;
    const GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology, "Topology name or file (default dgx-a100)", "T"},
        {"op", 'o', 0, G_OPTION_ARG_STRING, &op_name, "alltoall, allreduce, reducescatter or allgather", "OP"},
        {"algo", 'a', 0, G_OPTION_ARG_STRING, &algo_name, "direct, 2dh, pipe (alltoall); ring, hier (allreduce); default auto", "A"},
        {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &minbytes, "Smallest size (default 8)", "SIZE"},
        {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &maxbytes, "Largest size (default 128M)", "SIZE"},
        {"stepfactor", 'f', 0, G_OPTION_ARG_DOUBLE, &stepfactor, "Multiply the size by this factor each step (default 2)", "F"},
        {"ranks", 'n', 0, G_OPTION_ARG_INT, &ranks, "Use GPUs 0..N-1 (default: all)", "N"},
        {"per-node", 'p', 0, G_OPTION_ARG_INT, &per_node, "Use the first P GPUs of each node (with --ranks: as many nodes as needed)", "P"},
        {"channels", 'c', 0, G_OPTION_ARG_INT, &channels, "Ring channels (default: NICs per node)", "C"},
        {"window", 'w', 0, G_OPTION_ARG_INT, &window, "alltoall rounds in flight per rank (default 0: all)", "W"},
        {"alpha", 0, 0, G_OPTION_ARG_STRING, &alpha_text, "Per-call overhead, e.g. 10us (default 0)", "TIME"},
        {"step-delay", 0, 0, G_OPTION_ARG_STRING, &delay_text, "Extra delay per ring step (default 0)", "TIME"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration, "Calibrated link and collective figures (moesim calibrate)", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Also write the table as JSON (- for stdout)", "FILE"},
        {"check-invariants", 0, 0, G_OPTION_ARG_NONE, &check, "Verify link capacities, bytes and time order during the run", NULL},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL, "Simulate an nccl-tests size sweep of one collective.",
                      "Output columns follow NVIDIA nccl-tests: size (B), count (float elements), type, "
                      "redop, root, time (us), algbw and busbw (GB/s), for out-of-place and in-place "
                      "(identical in the model).")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1) {
        return ms_cli_usage("collective: unexpected argument '%s'", argv[1]);
    }
    g_autoptr(GError) error = NULL;
    MsCollSpec spec = {0};
    if (op_name == NULL) {
        return ms_cli_usage("collective: --op is required (alltoall, allreduce, reducescatter, "
                            "allgather)");
    }
    if (!ms_coll_op_from_name(op_name, &spec.op)) {
        return ms_cli_usage("collective: unknown --op '%s' (alltoall, allreduce, reducescatter, "
                            "allgather)", op_name);
    }
    if (algo_name && !ms_coll_algo_from_name(algo_name, &spec.algo)) {
        return ms_cli_usage("collective: unknown --algo '%s' (direct, 2dh, pipe, ring, hier)",
                            algo_name);
    }
    guint64 lo = 8, hi = 128 << 20;
    if ((minbytes && !ms_cli_parse_size("--minbytes", minbytes, &lo, &error)) ||
        (maxbytes && !ms_cli_parse_size("--maxbytes", maxbytes, &hi, &error))) {
        return ms_cli_fail(error);
    }
    if (lo > hi) {
        return ms_cli_usage("collective: --minbytes %" G_GUINT64_FORMAT
                            " is larger than --maxbytes %" G_GUINT64_FORMAT, lo, hi);
    }
    if (!(stepfactor > 1.0) || stepfactor > 1e6) {
        return ms_cli_usage("collective: --stepfactor must be greater than 1 (got %g)", stepfactor);
    }
    if (ranks < 0 || channels < 0 || channels > 256 || window < 0 || per_node < 0) {
        return ms_cli_usage("collective: --ranks, --channels (<= 256) and --window must be >= 0");
    }
    if ((alpha_text && !ms_parse_time(alpha_text, &spec.alpha, &error)) ||
        (delay_text && !ms_parse_time(delay_text, &spec.step_delay, &error))) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsTopology) topo = ms_topology_load(topology ? topology : "dgx-a100", &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsCalibration) cal = NULL;
    if (calibration) {
        cal = ms_calibration_load(calibration, &error);
        if (cal == NULL || !ms_calibration_apply_topology(cal, topo, &error)) {
            return ms_cli_fail(error);
        }
    }
    guint n_gpus = ms_topology_n_gpus(topo);
    if ((guint)ranks > n_gpus) {
        return ms_cli_usage("collective: --ranks %d but topology '%s' has %u GPUs", ranks,
                            ms_topology_name(topo), n_gpus);
    }
    g_autofree guint *picked = NULL;
    if (per_node) {
        guint gpn = ms_topology_gpus_per_node(topo);
        guint want = ranks ? (guint)ranks : (guint)per_node * ms_topology_n_nodes(topo);
        if (gpn == 0 || (guint)per_node > gpn || want > (guint)per_node * ms_topology_n_nodes(topo)) {
            return ms_cli_usage("collective: --per-node %d with %u ranks does not fit topology '%s' "
                                "(%u nodes of %u GPUs)", per_node, want, ms_topology_name(topo),
                                ms_topology_n_nodes(topo), gpn);
        }
        picked = g_new(guint, want);
        for (guint i = 0; i < want; i++) {
            picked[i] = (i / per_node) * gpn + i % per_node;
        }
        spec.ranks = picked;
        ranks = want;
    }
    spec.n_ranks = ranks ? (guint)ranks : n_gpus;
    spec.channels = channels;
    spec.window = window;
    guint eff_channels = channels ? (guint)channels : MAX(1, ms_topology_nics_per_node(topo));
    MsCollAlgo shown = spec.algo != MS_COLL_ALGO_AUTO ? spec.algo
                       : spec.op == MS_COLL_ALLTOALL  ? MS_COLL_ALGO_DIRECT
                                                      : MS_COLL_ALGO_RING;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    double t0 = ms_cli_wall_seconds();
    for (guint64 size = lo; size <= hi;) {
        Row row = {.size = size};
        spec.bytes = size;
        if (!simulate(topo, cal, &spec, check, &row, &error)) {
            return ms_cli_fail(error);
        }
        g_array_append_val(rows, row);
        guint64 next = (guint64)((double)size * stepfactor);
        if (next <= size) {
            next = size + 1;
        }
        size = next;
    }
    double wall = ms_cli_wall_seconds() - t0;
    const char *redop =
        spec.op == MS_COLL_ALLREDUCE || spec.op == MS_COLL_REDUCESCATTER ? "sum" : "none";
    g_autofree char *figures = calibration ? g_strdup_printf("calibrated by %s", calibration)
                                           : g_strdup("nominal link figures");
    printf("# moesim collective: %s (%s) on %s, %u ranks, %u channel%s, %s\n",
           ms_coll_op_name(spec.op), ms_coll_algo_name(shown), ms_topology_name(topo),
           spec.n_ranks, eff_channels, eff_channels == 1 ? "" : "s", figures);
    printf("#\n");
    printf("#                                                              out-of-place            "
           "           in-place          \n");
    printf("#       size         count      type   redop    root     time   algbw   busbw #wrong   "
           "  time   algbw   busbw #wrong\n");
    printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)          "
           "  (us)  (GB/s)  (GB/s)       \n");
    double bus_sum = 0;
    g_autoptr(JsonBuilder) jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "topology");
    json_builder_add_string_value(jb, ms_topology_name(topo));
    json_builder_set_member_name(jb, "op");
    json_builder_add_string_value(jb, ms_coll_op_name(spec.op));
    json_builder_set_member_name(jb, "algo");
    json_builder_add_string_value(jb, ms_coll_algo_name(shown));
    json_builder_set_member_name(jb, "ranks");
    json_builder_add_int_value(jb, spec.n_ranks);
    json_builder_set_member_name(jb, "channels");
    json_builder_add_int_value(jb, eff_channels);
    json_builder_set_member_name(jb, "rows");
    json_builder_begin_array(jb);
    for (guint i = 0; i < rows->len; i++) {
        const Row *r = &g_array_index(rows, Row, i);
        double us = ms_time_to_us(r->time);
        double algbw = us > 0 ? (double)r->size / (us * 1e-6) / 1e9 : 0;
        double busbw = algbw * ms_coll_busbw_factor(spec.op, spec.n_ranks);
        bus_sum += busbw;
        char t[32];
        format_time(us, t, sizeof t);
        printf("%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %8s  %6s  %6i  %7s  %6.2f  %6.2f"
               "  %5s  %7s  %6.2f  %6.2f  %5s\n",
               r->size, r->size / 4, "float", redop, -1, t, algbw, busbw, "N/A", t, algbw, busbw,
               "N/A");
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "size");
        json_builder_add_int_value(jb, (gint64)r->size);
        json_builder_set_member_name(jb, "time_us");
        json_builder_add_double_value(jb, us);
        json_builder_set_member_name(jb, "algbw_gbps");
        json_builder_add_double_value(jb, algbw);
        json_builder_set_member_name(jb, "busbw_gbps");
        json_builder_add_double_value(jb, busbw);
        json_builder_set_member_name(jb, "flows");
        json_builder_add_int_value(jb, (gint64)r->flows);
        json_builder_set_member_name(jb, "events");
        json_builder_add_int_value(jb, (gint64)r->events);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "avg_busbw_gbps");
    json_builder_add_double_value(jb, rows->len ? bus_sum / rows->len : 0);
    json_builder_end_object(jb);
    printf("# Out of bounds values : 0 OK\n");
    printf("# Avg bus bandwidth    : %g \n", rows->len ? bus_sum / rows->len : 0);
    /* Wall time goes to stderr so that standard output is byte-for-byte reproducible. */
    fflush(stdout);
    fprintf(stderr, "# simulated %u sizes in %.3f s of wall time\n", rows->len, wall);
    if (json) {
        g_autoptr(JsonNode) root = json_builder_get_root(jb);
        if (!ms_cli_write_json(json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}
