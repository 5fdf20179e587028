/* bench_net: speed, memory and exactness of the flow-level engine on all-to-all, skewed
 * all-to-all-v and ring allreduce, 16 .. 1024 GPUs, each point in a child process. With the
 * SimGrid peer, the same flows are replayed on SimGrid's CM02 model and per-flow completion times
 * compared (see docs/performance.md for the columns). Times are CPU seconds of the simulation.
 * Prints figures; asserts nothing about time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ms_bench.h"
#include "sim/net/collective.h"
#include "sim/net/flowfile.h"
#include "sim/sim.h"
#include "topologies/topology.h"

#define A2A_BYTES (32u << 20)       /* per rank: 4096 tokens x d_model 4096 x fp16 */
#define ALLREDUCE_BYTES (64u << 20) /* a gradient bucket */

static MsTopology *
cluster(guint gpus, GError **error)
{
    g_autofree char *text = ms_bench_dgx_a100_ini(gpus / 8);
    return ms_topology_load_data(text, strlen(text), "bench topology", error);
}

/* Token counts from each rank to each rank's expert: 4096 tokens x top-2 per source, destination
 * popularity Zipf(1.0) over a seeded random ranking, multinomial per source. */
static guint64 *
skewed_matrix(guint n)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    g_autofree guint *rank_of = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        rank_of[i] = i;
    }
    for (guint i = n - 1; i > 0; i--) {
        guint j = g_rand_int_range(rng, 0, i + 1);
        guint t = rank_of[i];
        rank_of[i] = rank_of[j];
        rank_of[j] = t;
    }
    g_autofree double *cdf = g_new(double, n);
    double sum = 0;
    for (guint j = 0; j < n; j++) {
        sum += 1.0 / (rank_of[j] + 1);
        cdf[j] = sum;
    }
    guint64 *m = g_new0(guint64, (gsize)n * n);
    for (guint i = 0; i < n; i++) {
        for (guint t = 0; t < 8192; t++) {
            double u = g_rand_double(rng) * sum;
            guint lo = 0, hi = n - 1;
            while (lo < hi) {
                guint mid = (lo + hi) / 2;
                if (cdf[mid] < u) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            m[(gsize)i * n + lo] += 8192; /* bytes per token: 4096 x fp16 */
        }
    }
    return m;
}

static void
spec_for(const char *scenario, guint n, MsCollSpec *spec, guint64 **matrix)
{
    memset(spec, 0, sizeof *spec);
    spec->n_ranks = n;
    *matrix = NULL;
    if (strcmp(scenario, "allreduce") == 0) {
        spec->op = MS_COLL_ALLREDUCE;
        spec->algo = MS_COLL_ALGO_RING;
        spec->bytes = ALLREDUCE_BYTES;
    } else {
        spec->op = MS_COLL_ALLTOALL;
        spec->algo = MS_COLL_ALGO_DIRECT;
        spec->bytes = A2A_BYTES;
        if (strcmp(scenario, "a2av") == 0) {
            *matrix = skewed_matrix(n);
            spec->matrix = *matrix;
        }
    }
}

typedef struct {
    MsFlowList *list;
    guint count;
} Export;

static void
export_flow(gpointer ctx, guint src, guint dst, guint64 bytes, const gint64 *preds, guint n_preds)
{
    Export *e = ctx;
    guint deps[2];
    for (guint k = 0; k < n_preds && k < 2; k++) {
        deps[k] = (guint)preds[k];
    }
    char id[32];
    g_snprintf(id, sizeof id, "f%u", e->count++);
    ms_flow_list_add(e->list, id, src, dst, bytes, 0, 1.0, deps, MIN(n_preds, 2));
}

/* Writes the peer scenario and the per-flow completion times moesim predicts for it. */
static int
write_peer(const MsTopology *topo, const MsCollSpec *spec, guint budget, const char *scenario_path,
           const char *ends_path)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, NULL, NULL, &error);
    g_autoptr(MsFlowList) list = ms_flow_list_new(topo);
    Export e = {list, 0};
    if (coll == NULL || !ms_coll_enumerate(coll, export_flow, &e)) {
        fprintf(stderr, "bench_net: cannot enumerate flows\n");
        return 1;
    }
    guint n = ms_flow_list_len(list);
    g_autofree MsTime *begin = g_new(MsTime, MAX(n, 1));
    g_autofree MsTime *end = g_new(MsTime, MAX(n, 1));
    g_autoptr(MsSim) replay = ms_sim_new(topo);
    ms_network_set_solver_budget(ms_sim_network(replay), budget);
    if (!ms_flow_list_run(list, replay, begin, end, &error)) {
        fprintf(stderr, "bench_net: %s\n", error->message);
        return 1;
    }
    FILE *f = fopen(scenario_path, "w");
    FILE *g = fopen(ends_path, "w");
    if (f == NULL || g == NULL) {
        fprintf(stderr, "bench_net: cannot write %s\n", scenario_path);
        return 1;
    }
    guint n_links = ms_topology_n_links(topo);
    fprintf(f, "links %u\n", n_links);
    for (guint l = 0; l < n_links; l++) {
        const MsLink *link = ms_topology_link(topo, l);
        /* SimGrid needs finite links; 1 TB/s never binds here (NICs are 25 GB/s). */
        fprintf(f, "%.17g %.17g\n", isfinite(link->bandwidth) ? link->bandwidth : 1e12,
                ms_time_to_s(link->latency));
    }
    fprintf(f, "hosts %u\nflows %u\n", ms_topology_n_devices(topo), n);
    for (guint i = 0; i < n; i++) {
        guint len = 0, n_deps = 0;
        const guint32 *route = ms_topology_route(topo, ms_flow_list_src(list, i),
                                                 ms_flow_list_dst(list, i), &len, NULL);
        fprintf(f, "%u %u %" G_GUINT64_FORMAT " 0 %u", ms_flow_list_src(list, i),
                ms_flow_list_dst(list, i), ms_flow_list_bytes(list, i), len);
        for (guint k = 0; k < len; k++) {
            fprintf(f, " %u", route[k]);
        }
        const guint *deps = ms_flow_list_deps(list, i, &n_deps);
        fprintf(f, " %u", n_deps);
        for (guint k = 0; k < n_deps; k++) {
            fprintf(f, " %u", deps[k]);
        }
        fprintf(f, "\n");
        fprintf(g, "%.17g\n", ms_time_to_s(end[i]));
    }
    fclose(f);
    fclose(g);
    return 0;
}

static int
child(const char *scenario, guint n, guint budget, const char *peer_file, const char *ends_file)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = cluster(n, &error);
    if (topo == NULL) {
        fprintf(stderr, "bench_net: %s\n", error->message);
        return 1;
    }
    MsCollSpec spec;
    g_autofree guint64 *matrix = NULL;
    spec_for(scenario, n, &spec, &matrix);
    if (peer_file) {
        return write_peer(topo, &spec, budget, peer_file, ends_file);
    }
    /* Routes are computed lazily; the first all-pairs use pays for them, so warm them first to
     * time the engine rather than route computation (which is reported separately). */
    gint64 r0 = g_get_monotonic_time();
    for (guint i = 0; i < n; i++) {
        for (guint j = 0; j < n; j++) {
            guint len;
            ms_topology_gpu_route(topo, i, j, &len, NULL);
        }
    }
    double route_s = (g_get_monotonic_time() - r0) * 1e-6;
    guint64 base = ms_bench_status_kib("VmRSS:");
    gint64 t0 = g_get_monotonic_time();
    double c0 = ms_bench_cpu_seconds();
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_network_set_solver_budget(ms_sim_network(sim), budget);
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &error);
    if (coll == NULL) {
        fprintf(stderr, "bench_net: %s\n", error->message);
        return 1;
    }
    ms_coll_launch_all(coll);
    if (!ms_sim_run(sim, &error)) {
        fprintf(stderr, "bench_net: %s\n", error->message);
        return 1;
    }
    double wall = (g_get_monotonic_time() - t0) * 1e-6, cpu = ms_bench_cpu_seconds() - c0;
    MsTime makespan = 0;
    for (guint i = 0; i < n; i++) {
        makespan = MAX(makespan, ms_coll_rank_end(coll, i));
    }
    MsSimStats st;
    ms_sim_stats(sim, &st);
    guint64 peak = ms_bench_status_kib("VmHWM:");
    printf("flows=%" G_GUINT64_FORMAT " events=%" G_GUINT64_FORMAT " solves=%" G_GUINT64_FORMAT
           " elems=%" G_GUINT64_FORMAT " peak_live=%" G_GUINT64_FORMAT
           " wall=%.6f cpu=%.6f route_s=%.6f peak_kb=%" G_GUINT64_FORMAT
           " base_kb=%" G_GUINT64_FORMAT " makespan_us=%.3f vars=%" G_GUINT64_FORMAT
           " repairs=%" G_GUINT64_FORMAT " rescans=%" G_GUINT64_FORMAT
           " rate_changes=%" G_GUINT64_FORMAT " group_changes=%" G_GUINT64_FORMAT "\n",
           ms_coll_n_flows(coll), st.events, st.net.solves, st.net.solver_elements,
           st.net.peak_live_flows, wall, cpu, route_s, peak, base, ms_time_to_us(makespan),
           st.net.solver_vars, st.net.solver_repairs, st.net.solver_rescans, st.net.rate_changes,
           st.net.group_changes);
    return 0;
}

static double
field(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? g_ascii_strtod(p + strlen(key), NULL) : NAN;
}

/* One SimGrid run: per-flow completion times (s) and the peer's own timings. */
typedef struct {
    GArray *ends; /* double */
    double wall, cpu;
} PeerRun;

static void
peer_run_clear(PeerRun *r)
{
    g_clear_pointer(&r->ends, g_array_unref);
}

/* Runs the peer on a scenario with an optional extra --cfg; FALSE on failure or timeout. */
static gboolean
run_peer(const char *peer, const char *scenario, const char *extra_cfg, guint timeout_s,
         PeerRun *run)
{
    g_autofree char *timeout = g_strdup_printf("%u", timeout_s);
    const char *argv[] = {"timeout",
                          timeout,
                          peer,
                          scenario,
                          "--cfg=network/model:CM02",
                          "--cfg=network/crosstraffic:0",
                          "--cfg=network/TCP-gamma:0",
                          "--cfg=contexts/stack-size:64",
                          "--log=root.thres:critical",
                          extra_cfg,
                          NULL};
    g_autofree char *out = NULL;
    int status = 0;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                      NULL, NULL, &out, NULL, &status, NULL) ||
        !g_spawn_check_wait_status(status, NULL)) {
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    run->ends = g_array_new(FALSE, FALSE, sizeof(double));
    run->wall = run->cpu = -1;
    for (guint i = 0; lines[i] && lines[i][0]; i++) {
        if (g_str_has_prefix(lines[i], "wall ")) {
            run->wall = g_ascii_strtod(lines[i] + 5, NULL);
        } else if (g_str_has_prefix(lines[i], "cpu ")) {
            run->cpu = g_ascii_strtod(lines[i] + 4, NULL);
        } else {
            double t = g_ascii_strtod(lines[i], NULL);
            g_array_append_val(run->ends, t);
        }
    }
    return run->cpu >= 0;
}

/* How far per-flow completion times b are from the reference a. */
typedef struct {
    double max, median, p99, makespan;
} Diff;

static int
cmp_double(gconstpointer x, gconstpointer y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static gboolean
compare_ends(const GArray *a, const GArray *b, Diff *out)
{
    if (a->len != b->len || a->len == 0) {
        return FALSE;
    }
    g_autoptr(GArray) rel = g_array_sized_new(FALSE, FALSE, sizeof(double), a->len);
    double ma = 0, mb = 0;
    for (guint i = 0; i < a->len; i++) {
        double x = g_array_index(a, double, i), y = g_array_index(b, double, i);
        double r = fabs(x - y) / MAX(fabs(x), 1e-12);
        g_array_append_val(rel, r);
        ma = MAX(ma, x);
        mb = MAX(mb, y);
    }
    g_array_sort(rel, cmp_double);
    const double *r = (const double *)rel->data;
    out->max = r[rel->len - 1];
    out->median = r[rel->len / 2];
    out->p99 = r[(gsize)rel->len * 99 / 100];
    out->makespan = fabs(ma - mb) / MAX(ma, 1e-12);
    return TRUE;
}

static GArray *
read_ends(const char *path)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; lines[i] && lines[i][0]; i++) {
        double t = g_ascii_strtod(lines[i], NULL);
        g_array_append_val(ends, t);
    }
    return ends;
}

/* Replays the point on SimGrid and prints the comparison columns. */
static void
compare_with_peer(const char *self, const char *peer, const char *scenario, const char *gpus,
                  const char *budget, const char *tmp, guint timeout_s, double cpu, double wall)
{
    g_autofree char *sc = g_build_filename(tmp, "scenario.txt", NULL);
    g_autofree char *ends_path = g_build_filename(tmp, "ends.txt", NULL);
    const char *argv[] = {self, "--child", scenario, gpus, budget, sc, ends_path, NULL};
    int status = 0;
    PeerRun run = {0}, fine = {0};
    g_autoptr(GArray) mine = NULL;
    Diff d, noise;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                      NULL) ||
        !g_spawn_check_wait_status(status, NULL) || (mine = read_ends(ends_path)) == NULL) {
        printf(" %9s\n", "failed");
    } else if (!run_peer(peer, sc, NULL, timeout_s, &run)) {
        printf(" %9s\n", "timeout");
    } else if (!compare_ends(run.ends, mine, &d)) {
        printf(" %9s\n", "mismatch");
    } else {
        printf(" %9.3f %7.0fx %7.0fx %9.2e %9.2e %9.2e %9.2e", run.cpu, run.cpu / cpu,
               run.wall / wall, d.max, d.median, d.p99, d.makespan);
        if (d.max > 1e-3 && run_peer(peer, sc, "--cfg=surf/precision:1e-11", timeout_s, &fine) &&
            compare_ends(run.ends, fine.ends, &noise)) {
            printf(" | %9.2e %9.2e", noise.max, noise.makespan);
        }
        printf("\n");
    }
    peer_run_clear(&run);
    peer_run_clear(&fine);
    g_unlink(sc);
    g_unlink(ends_path);
}

int
main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--child") == 0) {
        return child(argv[2], (guint)atoi(argv[3]), (guint)atoi(argv[4]), argc > 6 ? argv[5] : NULL,
                     argc > 6 ? argv[6] : NULL);
    }
    g_autofree char *gpus_list = g_strdup("16,64,128,256,1024");
    g_autofree char *scenarios_list = g_strdup("a2a,a2av,allreduce");
    g_autofree char *peer = g_strdup(g_getenv("MOESIM_SIMGRID_PEER"));
    gint budget_n = 24, peer_max = 256, peer_timeout = 600;
    GOptionEntry entries[] = {
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &gpus_list, "GPU counts (multiples of 8)", "LIST"},
        {"scenarios", 0, 0, G_OPTION_ARG_STRING, &scenarios_list, "Scenarios to run", "LIST"},
        {"peer", 0, 0, G_OPTION_ARG_FILENAME, &peer,
         "SimGrid peer binary (default: $MOESIM_SIMGRID_PEER; none: moesim alone)", "PATH"},
        {"peer-max-gpus", 0, 0, G_OPTION_ARG_INT, &peer_max, "Largest point compared (256)", "N"},
        {"peer-timeout", 0, 0, G_OPTION_ARG_INT, &peer_timeout, "Seconds per SimGrid run (600)",
         "S"},
        {"solver-budget", 0, 0, G_OPTION_ARG_INT, &budget_n,
         "Propagation budget per link and solve (24; 0: fill repair only)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("- flow-level engine benchmark, against SimGrid when a peer is given");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &error) || argc > 1 || budget_n < 0 ||
        peer_max < 0 || peer_timeout < 1) {
        fprintf(stderr, "bench_net: %s\n",
                error ? error->message : "bad --solver-budget, --peer-max-gpus or --peer-timeout");
        return 2;
    }
    g_autofree char *budget = g_strdup_printf("%d", budget_n);
    if (peer && !*peer) {
        g_clear_pointer(&peer, g_free);
    }
    g_auto(GStrv) gpus = g_strsplit(gpus_list, ",", -1);
    g_auto(GStrv) scenarios = g_strsplit(scenarios_list, ",", -1);
    g_autofree char *tmp = g_dir_make_tmp("moesim-bench-XXXXXX", NULL);
    printf("# bench_net: moesim flow-level engine%s\n",
           peer ? " vs SimGrid 3.32 (CM02, crosstraffic 0, TCP-gamma 0)" : " (no SimGrid peer)");
    printf(
        "# times in CPU seconds but wall_s; speedup: SimGrid's CPU time over moesim's, wall_x:\n"
        "# the same for wall time (noisy on a shared machine); rel: |moesim - SimGrid| / SimGrid\n"
        "# per flow (max, median, 99th percentile) and for the makespan; noise: SimGrid against\n"
        "# itself with surf/precision 1e-11 instead of 1e-9, shown where max_rel > 1e-3\n");
    printf("%-9s %5s %8s %8s %6s %7s %7s %9s %7s %6s | %9s %8s %8s %9s %9s %9s %9s | %9s %9s\n",
           "scenario", "gpus", "flows", "events", "solves", "wall_s", "cpu_s", "flows/s", "peak_MB",
           "B/flow", "simgrid_s", "speedup", "wall_x", "max_rel", "med_rel", "p99_rel", "mksp_rel",
           "noise_max", "noise_mk");
    for (guint s = 0; scenarios[s]; s++) {
        for (guint g = 0; gpus[g]; g++) {
            guint n = atoi(gpus[g]);
            const char *cargv[] = {argv[0], "--child", scenarios[s], gpus[g], budget, NULL};
            g_autofree char *out = NULL;
            int status = 0;
            if (!g_spawn_sync(NULL, (char **)cargv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                              &status, NULL) ||
                !g_spawn_check_wait_status(status, NULL)) {
                printf("%-9s %5u  failed\n", scenarios[s], n);
                continue;
            }
            double flows = field(out, "flows="), wall = field(out, "wall="),
                   cpu = field(out, "cpu=");
            double peak = field(out, "peak_kb="), base = field(out, "base_kb=");
            printf("%-9s %5u %8.0f %8.0f %6.0f %7.3f %7.3f %9.0f %7.1f %6.0f |", scenarios[s], n,
                   flows, field(out, "events="), field(out, "solves="), wall, cpu, flows / cpu,
                   peak / 1024, (peak - base) * 1024 / flows);
            if (peer && n <= (guint)peer_max) {
                compare_with_peer(argv[0], peer, scenarios[s], gpus[g], budget, tmp, peer_timeout,
                                  cpu, wall);
            } else {
                printf(" %9s\n", "-");
            }
            fflush(stdout);
        }
    }
    g_rmdir(tmp);
    return 0;
}
