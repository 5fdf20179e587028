/* cmd_collective: `moesim collective`: a simulated nccl-tests sweep, printed in nccl-tests'
 * columns so that it can sit beside a real all_reduce_perf / alltoall_perf log. Sizes follow
 * nccl-tests: elements of the --dtype (float by default), and for alltoall, reducescatter and
 * allgather a whole number of elements per rank. Short options are nccl-tests' where the meaning
 * is the same (-b -e -f -i -g -d); its others are not taken for anything else. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/net/collective.h"
#include "sim/net/host_loop.h"
#include "sim/base/json_output.h"
#include "sim/sim.h"
#include "topologies/topology.h"
#include "validate/calibrate.h"

/* Sweeps longer than this are refused: a step factor barely above 1 would otherwise simulate
 * millions of sizes. */
#define MAX_SIZES 10000u

/* nccl-tests' data types (src/common.cu, test_typenames, and its fp8 types since 2.19) as it
 * prints them, their element sizes, and the other spellings taken for them: NCCL's and moesim's
 * (validate/measurement.c). The model moves bytes: the type only sets the count column and how a
 * size rounds to whole elements. */
static const struct {
    const char *name;
    guint bytes;
    const char *other[3];
} dtypes[] = {
    {"int8", 1, {"char"}},
    {"uint8", 1, {NULL}},
    {"int32", 4, {"int"}},
    {"uint32", 4, {NULL}},
    {"int64", 8, {NULL}},
    {"uint64", 8, {NULL}},
    {"half", 2, {"fp16", "float16"}},
    {"float", 4, {"fp32", "float32"}},
    {"double", 8, {"fp64", "float64"}},
    {"bfloat16", 2, {"bf16"}},
    {"f8e4m3", 1, {"fp8_e4m3"}},
    {"f8e5m2", 1, {"fp8_e5m2"}},
};
#define DTYPE_FLOAT 7u

typedef struct {
    guint64 size;  /* the size column: bytes of the buffer nccl-tests reports */
    guint64 count; /* the count column: elements per call parameter */
    MsTime time;
    guint64 flows, events;
    gboolean nccl; /* under the nccl model: NCCL's choice */
    MsNcclAlgo algo;
    MsNcclProto proto;
    guint channels;
} Row;

typedef struct {
    char *topology, *op_name, *algo_name, *json, *minbytes, *maxbytes, *alpha, *delay;
    char *calibration, *net, *stepbytes, *dtype_name;
    double stepfactor;
    gint ranks, channels, window, per_node, gpus_per_thread;
    gboolean check;
    guint dtype;  /* index in dtypes */
    guint64 step; /* --stepbytes; 0: multiply by stepfactor */
} Options;

static void
options_clear(Options *o)
{
    g_free(o->topology);
    g_free(o->op_name);
    g_free(o->algo_name);
    g_free(o->json);
    g_free(o->minbytes);
    g_free(o->maxbytes);
    g_free(o->alpha);
    g_free(o->delay);
    g_free(o->calibration);
    g_free(o->net);
    g_free(o->stepbytes);
    g_free(o->dtype_name);
}

/* nccl-tests' reading of a sweep size (its setupArgs and getCollByteCount): size / the element
 * size; allreduce passes them all as the count, the others count/n per rank, and the size
 * column is the buffer those counts make. */
static void
nccl_tests_size(MsCollOp op, guint n, guint elem, guint64 size, Row *row)
{
    guint64 count = size / elem;
    row->count = op == MS_COLL_ALLREDUCE ? count : count / n;
    row->size = (op == MS_COLL_ALLREDUCE ? row->count : row->count * n) * elem;
}

static gboolean
dtype_from_name(const char *name, guint *out)
{
    for (guint i = 0; i < G_N_ELEMENTS(dtypes); i++) {
        gboolean match = strcmp(name, dtypes[i].name) == 0;
        for (guint k = 0; k < G_N_ELEMENTS(dtypes[i].other) && dtypes[i].other[k]; k++) {
            match |= strcmp(name, dtypes[i].other[k]) == 0;
        }
        if (match) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

/* Simulates one size from scratch; the time is from launch to the last rank's completion. */
static gboolean
simulate(const MsTopology *topo, const MsCalibration *cal, const MsCollSpec *spec_in,
         gboolean check, Row *row, GError **error)
{
    MsCollSpec copy = *spec_in, *spec = &copy;
    /* The nccl model has its own latencies and protocol efficiencies: a calibration's
     * per-collective figures are for the flow model. */
    gboolean flow = ms_net_model_kind(spec->net) == MS_NET_FLOW;
    g_autofree guint64 *scaled =
        cal && flow ? ms_calibration_adjust_collective(cal, topo, spec) : NULL;
    (void)scaled; /* only holds memory to free */
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_net_model_apply(spec->net, sim);
    ms_sim_set_check_invariants(sim, check);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, NULL, NULL, error);
    if (coll == NULL) {
        if (spec->bytes != spec_in->bytes || scaled) {
            g_prefix_error(error,
                           "--calibration: its efficiency at %" G_GUINT64_FORMAT
                           " B stretches the transfer: ",
                           spec_in->bytes);
        }
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
    const MsNcclChoice *ch = ms_coll_nccl_choice(coll);
    if (ch) {
        row->nccl = TRUE;
        row->algo = ch->algo;
        row->proto = ch->proto;
        row->channels = ch->channels;
    }
    row->flows = ms_coll_n_flows(coll);
    row->events = st.events;
    return TRUE;
}

/* The size after `size` (< hi) in a sweep: size + step when step is not 0 (nccl-tests' -i), else
 * size x factor rounded down, at least size + 1; past hi (also where a guint64 could not hold
 * it) the sweep ends: returns hi + 1. */
static guint64
next_size(guint64 size, guint64 hi, double factor, guint64 step)
{
    if (step) {
        return step > hi - size ? hi + 1 : size + step;
    }
    double next = floor((double)size * factor);
    if (next > (double)hi) {
        return hi + 1;
    }
    return MAX((guint64)next, size + 1);
}

static guint
count_sizes(guint64 lo, guint64 hi, double factor, guint64 step)
{
    guint n = 0;
    for (guint64 size = lo; size <= hi && n <= MAX_SIZES;
         size = next_size(size, hi, factor, step)) {
        n++;
    }
    return n;
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

static gboolean
parse_options(int *argc, char ***argv, Options *o)
{
    /* nccl-tests' letters and long names where the meaning is the same (src/common.cu); hidden
     * entries take its long spellings. Its -t -n -w -c -o -a -p ... mean things moesim does not
     * model here, so no option of this command takes those letters. */
    const GOptionEntry entries[] = {
        {"topology", 0, 0, G_OPTION_ARG_STRING, &o->topology,
         "Topology name or file (default dgx-a100)", "T"},
        {"op", 0, 0, G_OPTION_ARG_STRING, &o->op_name,
         "alltoall, allreduce, reducescatter or allgather (also nccl-tests' all_reduce, "
         "all_to_all, all_reduce_perf ...)",
         "OP"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &o->algo_name,
         "direct, 2dh, pipe (alltoall); ring, hier (allreduce); default auto", "A"},
        {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &o->minbytes, "Smallest size (default 8)",
         "SIZE"},
        {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &o->maxbytes, "Largest size (default 128M)",
         "SIZE"},
        {"stepfactor", 'f', 0, G_OPTION_ARG_DOUBLE, &o->stepfactor,
         "Multiply the size by this factor each step (default 2)", "F"},
        {"stepbytes", 'i', 0, G_OPTION_ARG_STRING, &o->stepbytes,
         "Add this to the size each step instead", "SIZE"},
        {"ranks", 'g', 0, G_OPTION_ARG_INT, &o->ranks,
         "Use GPUs 0..N-1 (default: all; nccl-tests' -g, --ngpus)", "N"},
        {"ngpus", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &o->ranks, NULL, "N"},
        {"gpus-per-thread", 0, 0, G_OPTION_ARG_INT, &o->gpus_per_thread,
         "GPUs one host thread drives, calling NCCL for each in turn (nccl-tests run as one "
         "process with -g G; default 1: a process per GPU)",
         "G"},
        {"dtype", 'd', 0, G_OPTION_ARG_STRING, &o->dtype_name,
         "Element type, nccl-tests' names: float (default), half, bfloat16, double, int8, ...",
         "T"},
        {"datatype", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &o->dtype_name, NULL, "T"},
        {"per-node", 0, 0, G_OPTION_ARG_INT, &o->per_node,
         "Use the first P GPUs of each node (with --ranks: as many nodes as needed)", "P"},
        {"channels", 0, 0, G_OPTION_ARG_INT, &o->channels, "Ring channels (default: NICs per node)",
         "C"},
        {"window", 0, 0, G_OPTION_ARG_INT, &o->window,
         "alltoall rounds in flight per rank (default 0: all)", "W"},
        {"alpha", 0, 0, G_OPTION_ARG_STRING, &o->alpha, "Per-call overhead, e.g. 10us (default 0)",
         "TIME"},
        {"step-delay", 0, 0, G_OPTION_ARG_STRING, &o->delay,
         "Extra delay per ring step (default 0)", "TIME"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &o->calibration,
         "Calibrated link and collective figures (moesim calibrate)", "FILE"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &o->net,
         "Network model: flow (default) or nccl[:version=2.18,...] (docs/collectives.md)", "MODEL"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &o->json,
         "Also write the table as JSON (- for stdout, instead of the table)", "FILE"},
        {"check-invariants", 0, 0, G_OPTION_ARG_NONE, &o->check,
         "Verify link capacities, bytes and time order during the run", NULL},
        {NULL},
    };
    return ms_cli_parse(
        argc, argv, entries, NULL, "Simulate an nccl-tests size sweep of one collective.",
        "Output columns follow NVIDIA nccl-tests: size (B), count (elements), type, "
        "redop, root, time (us), algbw and busbw (GB/s), #wrong (0: no data is checked), for "
        "out-of-place and in-place (identical in the model). As in nccl-tests, alltoall, "
        "reducescatter and allgather round the size down to a whole number of elements per "
        "rank.\n"
        "See docs/collectives.md.");
}

/* Checks what needs no topology; fills spec's op, algo, alpha and step delay and the sweep. */
static int
check_options(Options *o, MsCollSpec *spec, guint64 *lo, guint64 *hi)
{
    g_autoptr(GError) error = NULL;
    if (o->op_name == NULL) {
        return ms_cli_usage("collective: --op is required (alltoall, allreduce, reducescatter, "
                            "allgather)");
    }
    if (!ms_coll_op_from_alias(o->op_name, &spec->op)) {
        return ms_cli_usage("collective: unknown --op '%s' (alltoall, allreduce, reducescatter, "
                            "allgather)",
                            o->op_name);
    }
    if (o->algo_name && !ms_coll_algo_from_name(o->algo_name, &spec->algo)) {
        return ms_cli_usage("collective: unknown --algo '%s' (direct, 2dh, pipe, ring, hier)",
                            o->algo_name);
    }
    if ((o->minbytes && !ms_cli_parse_size("--minbytes", o->minbytes, lo, &error)) ||
        (o->maxbytes && !ms_cli_parse_size("--maxbytes", o->maxbytes, hi, &error))) {
        return ms_cli_fail(error);
    }
    if (o->stepbytes && !ms_cli_parse_size("--stepbytes", o->stepbytes, &o->step, &error)) {
        return ms_cli_fail(error);
    }
    if (o->stepbytes && o->step == 0) {
        return ms_cli_usage("collective: --stepbytes must be at least 1 (got %s)", o->stepbytes);
    }
    if (o->dtype_name && !dtype_from_name(o->dtype_name, &o->dtype)) {
        return ms_cli_usage("collective: unknown --dtype '%s' (int8, uint8, int32, uint32, int64, "
                            "uint64, half, float, double, bfloat16, f8e4m3, f8e5m2)",
                            o->dtype_name);
    }
    if (*lo > *hi) {
        return ms_cli_usage("collective: --minbytes %" G_GUINT64_FORMAT
                            " is larger than --maxbytes %" G_GUINT64_FORMAT,
                            *lo, *hi);
    }
    if (!(o->stepfactor > 1.0) || o->stepfactor > 1e6) {
        return ms_cli_usage("collective: --stepfactor must be greater than 1 and at most 1e6 "
                            "(got %g)",
                            o->stepfactor);
    }
    if (count_sizes(*lo, *hi, o->stepfactor, o->step) > MAX_SIZES) {
        g_autofree char *by = o->step ? g_strdup_printf("--stepbytes %" G_GUINT64_FORMAT, o->step)
                                      : g_strdup_printf("--stepfactor %.10g", o->stepfactor);
        return ms_cli_usage("collective: --minbytes %" G_GUINT64_FORMAT
                            " to --maxbytes %" G_GUINT64_FORMAT " by %s makes more than %u sizes",
                            *lo, *hi, by, MAX_SIZES);
    }
    if (o->ranks < 0) {
        return ms_cli_usage("collective: --ranks must be >= 0 (got %d)", o->ranks);
    }
    if (o->per_node < 0) {
        return ms_cli_usage("collective: --per-node must be >= 0 (got %d)", o->per_node);
    }
    if (o->gpus_per_thread < 1 || (guint)o->gpus_per_thread > MS_HOST_LOOP_MAX_GPUS) {
        return ms_cli_usage("collective: --gpus-per-thread must be between 1 and %u (got %d)",
                            MS_HOST_LOOP_MAX_GPUS, o->gpus_per_thread);
    }
    if (o->channels < 0 || (guint)o->channels > MS_COLL_MAX_CHANNELS) {
        return ms_cli_usage("collective: --channels must be between 0 and %u (got %d)",
                            MS_COLL_MAX_CHANNELS, o->channels);
    }
    if (o->window < 0) {
        return ms_cli_usage("collective: --window must be >= 0 (got %d)", o->window);
    }
    if (o->alpha && !ms_parse_time(o->alpha, &spec->alpha, &error)) {
        g_prefix_error(&error, "--alpha: ");
        return ms_cli_fail(error);
    }
    if (o->delay && !ms_parse_time(o->delay, &spec->step_delay, &error)) {
        g_prefix_error(&error, "--step-delay: ");
        return ms_cli_fail(error);
    }
    return MS_EXIT_OK;
}

typedef struct {
    const MsTopology *topo;
    const MsCalibration *cal;
    const MsNetModel *net;
    const MsCollSpec *spec;
    MsCollAlgo algo;
    guint channels;
    guint dtype;
    guint gpus_per_thread;
    double host_call_s; /* one NCCL call's host time on one GPU (sim/net/host_loop.h) */
    GArray *rows;
    GString *text;
    JsonBuilder *json;
} Report;

static void
report_header(Report *r)
{
    const MsCollSpec *spec = r->spec;
    g_autofree char *net = ms_net_spec_to_string(ms_net_model_spec(r->net));
    /* The default, a process per GPU, is not named: the header stays nccl-tests' usual one. */
    g_autofree char *host = r->gpus_per_thread > 1
                                ? g_strdup_printf(", %u GPUs per thread at %.2f us per call",
                                                  r->gpus_per_thread, r->host_call_s * 1e6)
                                : g_strdup("");
    if (ms_net_model_kind(r->net) == MS_NET_NCCL) {
        /* NCCL picks the channels per size: the rows give them. */
        g_string_append_printf(r->text, "# moesim collective: %s on %s, %u ranks%s, %s, %s\n#\n",
                               ms_coll_op_name(spec->op), ms_topology_name(r->topo), spec->n_ranks,
                               host, net, r->cal ? "calibrated figures" : "NCCL's link figures");
    } else {
        g_string_append_printf(
            r->text, "# moesim collective: %s (%s) on %s, %u ranks%s, %u channel%s, %s\n#\n",
            ms_coll_op_name(spec->op), ms_coll_algo_name(r->algo), ms_topology_name(r->topo),
            spec->n_ranks, host, r->channels, r->channels == 1 ? "" : "s",
            r->cal ? "calibrated figures" : "nominal link figures");
    }
    g_string_append(r->text,
                    "#                                                              out-of-place  "
                    "                     in-place          \n"
                    "#       size         count      type   redop    root     time   algbw   busbw "
                    "#wrong     time   algbw   busbw #wrong\n"
                    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s) "
                    "           (us)  (GB/s)  (GB/s)       \n");
    JsonBuilder *jb = r->json;
    json_builder_begin_object(jb);
    ms_json_member_string(jb, "schema", "moesim.collective/1"); /* docs/outputs.md */

    json_builder_set_member_name(jb, "topology");
    json_builder_add_string_value(jb, ms_topology_name(r->topo));
    json_builder_set_member_name(jb, "op");
    json_builder_add_string_value(jb, ms_coll_op_name(spec->op));
    json_builder_set_member_name(jb, "algo");
    json_builder_add_string_value(jb, ms_coll_algo_name(r->algo));
    json_builder_set_member_name(jb, "ranks");
    json_builder_add_int_value(jb, spec->n_ranks);
    json_builder_set_member_name(jb, "channels");
    json_builder_add_int_value(jb, r->channels);
    ms_json_member_int(jb, "gpus_per_thread", r->gpus_per_thread);
    ms_json_member_double(jb, "host_call_us", r->host_call_s * 1e6);
    json_builder_set_member_name(jb, "net");
    json_builder_add_string_value(jb, net);
    json_builder_set_member_name(jb, "type");
    json_builder_add_string_value(jb, dtypes[r->dtype].name);
    json_builder_set_member_name(jb, "rows");
    json_builder_begin_array(jb);
}

/* Adds a row; returns its bus bandwidth. #wrong is 0, as nccl-tests prints it when it checks:
 * the model moves no data, so none can be wrong (nccl-tests' N/A means "not checked"). */
static double
report_row(Report *r, const Row *row)
{
    MsCollOp op = r->spec->op;
    const char *redop = op == MS_COLL_ALLREDUCE || op == MS_COLL_REDUCESCATTER ? "sum" : "none";
    double us = ms_time_to_us(row->time);
    double algbw = us > 0 ? (double)row->size / (us * 1e-6) / 1e9 : 0;
    double busbw = algbw * ms_coll_busbw_factor(op, r->spec->n_ranks);
    char t[32];
    format_time(us, t, sizeof t);
    g_string_append_printf(r->text,
                           "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT
                           "  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %5s  %7s  %6.2f  %6.2f  %5s\n",
                           row->size, row->count, dtypes[r->dtype].name, redop, -1, t, algbw, busbw,
                           "0", t, algbw, busbw, "0");
    json_builder_begin_object(r->json);
    ms_json_member_int(r->json, "size", row->size);
    ms_json_member_int(r->json, "count", row->count);
    ms_json_member_double(r->json, "time_us", us);
    ms_json_member_double(r->json, "algbw_gbps", algbw);
    ms_json_member_double(r->json, "busbw_gbps", busbw);
    ms_json_member_int(r->json, "flows", row->flows);
    ms_json_member_int(r->json, "events", row->events);
    if (row->nccl) {
        ms_json_member_string(r->json, "nccl_algo", ms_nccl_algo_name(row->algo));
        ms_json_member_string(r->json, "nccl_proto", ms_nccl_proto_name(row->proto));
        ms_json_member_int(r->json, "nccl_channels", row->channels);
    }
    json_builder_end_object(r->json);
    return busbw;
}

static void
report_footer(Report *r, double avg_busbw)
{
    json_builder_end_array(r->json);
    ms_json_member_double(r->json, "avg_busbw_gbps", avg_busbw);
    json_builder_end_object(r->json);
    g_string_append_printf(r->text, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n",
                           avg_busbw);
}

/* Simulates every size of the sweep into r->rows. */
static gboolean
sweep(Report *r, MsCollSpec *spec, guint64 lo, guint64 hi, const Options *o, GError **error)
{
    for (guint64 size = lo; size <= hi; size = next_size(size, hi, o->stepfactor, o->step)) {
        Row row = {0};
        nccl_tests_size(spec->op, spec->n_ranks, dtypes[o->dtype].bytes, size, &row);
        spec->bytes = row.size;
        if (!simulate(r->topo, r->cal, spec, o->check, &row, error)) {
            return FALSE;
        }
        /* One thread driving several GPUs: each iteration at least its NCCL calls' host time. */
        if (o->gpus_per_thread > 1) {
            double s = ms_host_loop_iteration(ms_time_to_s(row.time), (guint)o->gpus_per_thread,
                                              r->host_call_s);
            row.time = ms_time_from_s(s);
        }
        g_array_append_val(r->rows, row);
    }
    return TRUE;
}

static int
run(const Options *o, MsCollSpec *spec, guint64 lo, guint64 hi)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = ms_topology_load(o->topology ? o->topology : "dgx-a100", &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsCalibration) cal = NULL;
    if (o->calibration) {
        cal = ms_calibration_load(o->calibration, &error);
        if (cal == NULL || !ms_calibration_apply_topology(cal, topo, &error)) {
            return ms_cli_fail(error);
        }
    }
    guint n_gpus = ms_topology_n_gpus(topo);
    if ((guint)o->ranks > n_gpus) {
        return ms_cli_usage("collective: --ranks %d but topology '%s' has %u GPUs", o->ranks,
                            ms_topology_name(topo), n_gpus);
    }
    spec->n_ranks = o->ranks ? (guint)o->ranks : n_gpus;
    g_autofree guint *picked = NULL;
    if (o->per_node) {
        guint want = o->ranks ? (guint)o->ranks : (guint)o->per_node * ms_topology_n_nodes(topo);
        picked = g_new(guint, want);
        if (!ms_calibrate_place(topo, want, o->per_node, picked, &error)) {
            return ms_cli_fail(error);
        }
        spec->n_ranks = want;
        spec->ranks = picked;
    }
    if (spec->n_ranks % (guint)o->gpus_per_thread != 0) {
        return ms_cli_usage(
            "collective: --gpus-per-thread %d does not divide the %u ranks (they are "
            "processes x GPUs per thread)",
            o->gpus_per_thread, spec->n_ranks);
    }
    spec->channels = o->channels;
    spec->window = o->window;
    MsNetSpec net_spec;
    ms_net_spec_init(&net_spec);
    if (o->net && !ms_net_spec_parse(o->net, &net_spec, &error)) {
        g_prefix_error(&error, "--net: ");
        return ms_cli_fail(error);
    }
    g_autoptr(MsNetModel) net = ms_net_model_new(&net_spec, topo, &error);
    if (net == NULL) {
        return ms_cli_fail(error);
    }
    spec->net = net;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    g_autoptr(GString) text = g_string_new(NULL);
    g_autoptr(JsonBuilder) jb = json_builder_new();
    Report r = {
        .topo = topo,
        .cal = cal,
        .net = net,
        .spec = spec,
        .algo = spec->algo != MS_COLL_ALGO_AUTO ? spec->algo
                : spec->op == MS_COLL_ALLTOALL  ? MS_COLL_ALGO_DIRECT
                                                : MS_COLL_ALGO_RING,
        .channels = o->channels ? (guint)o->channels : MAX(1, ms_topology_nics_per_node(topo)),
        .dtype = o->dtype,
        .gpus_per_thread = (guint)o->gpus_per_thread,
        .host_call_s = ms_host_loop_call_cost(&net_spec, topo),
        .rows = rows,
        .text = text,
        .json = jb,
    };
    double t0 = ms_cli_wall_seconds();
    if (!sweep(&r, spec, lo, hi, o, &error)) {
        return ms_cli_fail(error);
    }
    double wall = ms_cli_wall_seconds() - t0;
    report_header(&r);
    double bus_sum = 0;
    for (guint i = 0; i < rows->len; i++) {
        bus_sum += report_row(&r, &g_array_index(rows, Row, i));
    }
    report_footer(&r, rows->len ? bus_sum / rows->len : 0);
    /* "--json -" makes standard output pure JSON; otherwise it holds the table. The wall time
     * goes to stderr so that standard output is byte-for-byte reproducible. */
    if (o->json == NULL || strcmp(o->json, "-") != 0) {
        fputs(text->str, stdout);
    }
    fflush(stdout);
    fprintf(stderr, "# simulated %u sizes in %.3f s of wall time\n", rows->len, wall);
    if (o->json) {
        g_autoptr(JsonNode) root = json_builder_get_root(jb);
        if (!ms_cli_write_json(o->json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}

int
ms_cmd_collective(int argc, char **argv)
{
    Options o = {.stepfactor = 2.0, .dtype = DTYPE_FLOAT, .gpus_per_thread = 1};
    int rc = MS_EXIT_USAGE;
    if (parse_options(&argc, &argv, &o)) {
        MsCollSpec spec = {0};
        guint64 lo = 8, hi = 128 << 20;
        if (argc > 1) {
            rc = ms_cli_usage("collective: unexpected argument '%s'", argv[1]);
        } else if ((rc = check_options(&o, &spec, &lo, &hi)) == MS_EXIT_OK) {
            rc = run(&o, &spec, lo, hi);
        }
    }
    options_clear(&o);
    return rc;
}
