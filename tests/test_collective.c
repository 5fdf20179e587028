/* Tests of the collectives: names, closed forms on dgx-a100 and dgx-a100-2node (ring allreduce,
 * reduce-scatter, all-gather, hierarchical allreduce), channels and their NICs, per-call and
 * per-step delays, launch skew, per-rank completion and bytes, zero sizes, flow enumeration,
 * determinism and every spec error. The all-to-all algorithms: test_collective_a2a.c. */
#include "coll_harness.h"
#include "sim/net/flowfile.h"

static void
test_names(void)
{
    for (MsCollOp op = MS_COLL_ALLTOALL; op <= MS_COLL_ALLGATHER; op++) {
        MsCollOp back = 99;
        CU_ASSERT_TRUE(ms_coll_op_from_name(ms_coll_op_name(op), &back));
        CU_ASSERT_EQUAL(back, op);
    }
    for (MsCollAlgo a = MS_COLL_ALGO_AUTO; a <= MS_COLL_ALGO_HIER; a++) {
        MsCollAlgo back = 99;
        CU_ASSERT_TRUE(ms_coll_algo_from_name(ms_coll_algo_name(a), &back));
        CU_ASSERT_EQUAL(back, a);
    }
    MsCollOp op = MS_COLL_ALLGATHER;
    CU_ASSERT_FALSE(ms_coll_op_from_name("all_reduce", &op));
    CU_ASSERT_FALSE(ms_coll_op_from_name(NULL, &op));
    CU_ASSERT_EQUAL(op, MS_COLL_ALLGATHER);
    /* nccl-tests' and NCCL's spellings, for the command line only. */
    static const struct {
        const char *name;
        MsCollOp op;
    } aliases[] = {
        {"all_reduce", MS_COLL_ALLREDUCE},         {"all_reduce_perf", MS_COLL_ALLREDUCE},
        {"AllReduce", MS_COLL_ALLREDUCE},          {"alltoall_perf", MS_COLL_ALLTOALL},
        {"all_to_all", MS_COLL_ALLTOALL},          {"all-to-all", MS_COLL_ALLTOALL},
        {"reduce_scatter", MS_COLL_REDUCESCATTER}, {"ReduceScatter", MS_COLL_REDUCESCATTER},
        {"all_gather_perf", MS_COLL_ALLGATHER},    {"allgather", MS_COLL_ALLGATHER},
    };
    for (guint i = 0; i < G_N_ELEMENTS(aliases); i++) {
        op = 99;
        CU_ASSERT_TRUE(ms_coll_op_from_alias(aliases[i].name, &op));
        CU_ASSERT_EQUAL(op, aliases[i].op);
    }
    static const char *const not_ops[] = {"perf", "all_reduce_perf_perf", "broadcast", "sum", ""};
    for (guint i = 0; i < G_N_ELEMENTS(not_ops); i++) {
        op = MS_COLL_ALLGATHER;
        CU_ASSERT_FALSE(ms_coll_op_from_alias(not_ops[i], &op));
        CU_ASSERT_EQUAL(op, MS_COLL_ALLGATHER);
    }
    CU_ASSERT_FALSE(ms_coll_op_from_alias(NULL, &op));
    MsCollAlgo algo = MS_COLL_ALGO_HIER;
    CU_ASSERT_FALSE(ms_coll_algo_from_name("Ring", &algo));
    CU_ASSERT_EQUAL(algo, MS_COLL_ALGO_HIER);
    CU_ASSERT_STRING_EQUAL(ms_coll_op_name(42), "?");
    CU_ASSERT_STRING_EQUAL(ms_coll_algo_name(42), "?");
    /* nccl-tests' bus bandwidth factors. */
    MS_ASSERT_REL(ms_coll_busbw_factor(MS_COLL_ALLREDUCE, 8), 1.75, 1e-15);
    MS_ASSERT_REL(ms_coll_busbw_factor(MS_COLL_ALLTOALL, 16), 15.0 / 16, 1e-15);
    MS_ASSERT_REL(ms_coll_busbw_factor(MS_COLL_REDUCESCATTER, 4), 0.75, 1e-15);
    MS_ASSERT_REL(ms_coll_busbw_factor(MS_COLL_ALLGATHER, 2), 0.5, 1e-15);
    CU_ASSERT_EQUAL(ms_coll_busbw_factor(MS_COLL_ALLREDUCE, 1), 0);
}

/* Single node: every channel's ring crosses the NVSwitch (2 links of 0.7 us); C channels split
 * the buffer C ways and share each GPU's 300 GB/s C ways, so the time does not depend on C:
 * 2(n-1)/n * S/B + 2(n-1)a. */
static void
test_ring_allreduce_closed_form(void)
{
    double a = coll_lat(one_node, 0, 1);
    MS_ASSERT_REL(a, 1.4e-6, 1e-12);
    const guint channels[] = {1, 3, 8, 16};
    const guint64 sizes[] = {GIB, 1000000007, 64 << 20};
    for (guint c = 0; c < G_N_ELEMENTS(channels); c++) {
        for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
            MsCollSpec spec = {
                .op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = sizes[s], .channels = channels[c]};
            double want = 2.0 * 7 / 8 * sizes[s] / NVS + 14 * a;
            MS_ASSERT_REL(coll_run_s(one_node, &spec), want, 1e-3);
        }
    }
    /* Sizes whose chunks differ by one byte stay on the closed form (before steps waited for
     * their connection's previous step, 174400127 B with 8 channels was 1.3% off). */
    const guint64 odd[] = {174400127, 32804807, 1000000007};
    for (guint c = 1; c <= 8; c++) {
        for (guint s = 0; s < G_N_ELEMENTS(odd); s++) {
            MsCollSpec spec = {
                .op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = odd[s], .channels = c};
            MS_ASSERT_REL(coll_run_s(one_node, &spec), 1.75 * odd[s] / NVS + 14 * a, 1e-5);
        }
    }
    /* A subset of ranks: n = 4. */
    const guint ranks[] = {1, 3, 5, 7};
    MsCollSpec spec = {MS_COLL_ALLREDUCE, MS_COLL_ALGO_RING, 4, ranks, GIB, .channels = 2};
    MS_ASSERT_REL(coll_run_s(one_node, &spec), ring_closed(GIB, 4, 6, NVS, a), 1e-3);
}

static void
test_reducescatter_allgather_closed_form(void)
{
    double a = coll_lat(one_node, 0, 1);
    for (MsCollOp op = MS_COLL_REDUCESCATTER; op <= MS_COLL_ALLGATHER; op++) {
        MsCollSpec spec = {.op = op, .n_ranks = 8, .bytes = GIB};
        MS_ASSERT_REL(coll_run_s(one_node, &spec), ring_closed(GIB, 8, 7, NVS, a), 1e-3);
        spec.channels = 1;
        spec.bytes = 8 * 1000000;
        MS_ASSERT_REL(coll_run_s(one_node, &spec), ring_closed(8e6, 8, 7, NVS, a), 1e-3);
    }
}

/* The rate on every NIC egress link (NIC -> network) at time t of a ring allreduce. */
static guint
busy_nics_at(const MsCollSpec *spec, MsTime t, double *min_busy_rate)
{
    g_autoptr(MsSim) sim = ms_sim_new(two_node);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    ms_coll_launch_all(coll);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, t, NULL));
    guint busy = 0;
    *min_busy_rate = INFINITY;
    for (guint l = 0; l < ms_topology_n_links(two_node); l++) {
        const MsLink *link = ms_topology_link(two_node, l);
        if (link->klass != MS_LINK_NIC ||
            ms_topology_device_kind(two_node, link->from) != MS_DEVICE_NIC) {
            continue;
        }
        double r = ms_network_link_rate(ms_sim_network(sim), l);
        if (r > 0) {
            busy++;
            *min_busy_rate = MIN(*min_busy_rate, r);
        }
    }
    return busy;
}

/* NCCL runs one ring per channel and each channel leaves the node through a different NIC: with
 * 8 channels all 16 NICs send at line rate and the bus bandwidth approaches 8 x 25 GB/s; a single
 * ring crosses through 2 NICs and is about 8x slower. */
static void
test_channels_use_different_nics(void)
{
    MsCollSpec spec = {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = GIB};
    Outcome o8, o1;
    coll_run(two_node, &spec, &o8);
    double t8 = ms_time_to_s(o8.last);
    double busbw8 = GIB / t8 * ms_coll_busbw_factor(MS_COLL_ALLREDUCE, 16);
    CU_ASSERT_TRUE(busbw8 > 0.97 * 8 * NIC && busbw8 <= 8 * NIC);
    CU_ASSERT_EQUAL(o8.flows, 8 * 30 * 16);
    double rate = 0;
    CU_ASSERT_EQUAL(busy_nics_at(&spec, o8.last / 2, &rate), 16);
    MS_ASSERT_REL(rate, NIC, 1e-9);

    spec.channels = 1;
    coll_run(two_node, &spec, &o1);
    double t1 = ms_time_to_s(o1.last);
    double busbw1 = GIB / t1 * ms_coll_busbw_factor(MS_COLL_ALLREDUCE, 16);
    CU_ASSERT_TRUE(busbw1 > 0.97 * NIC && busbw1 <= NIC);
    CU_ASSERT_TRUE(t1 / t8 > 7.5 && t1 / t8 < 8.0);
    CU_ASSERT_EQUAL(busy_nics_at(&spec, o1.last / 2, &rate), 2);
    MS_ASSERT_REL(rate, NIC, 1e-9);
}

/* Hierarchical allreduce on 2 x 8: intra-node reduce-scatter (7 steps of S/8 at 300 GB/s), ring
 * allreduce of each GPU's S/8 shard with its peer on the other node (2 steps of S/16 through the
 * GPU's NIC), intra-node all-gather (as the reduce-scatter). */
static void
test_hier_allreduce_phases(void)
{
    double ai = coll_lat(two_node, 0, 1), ax = coll_lat(two_node, 0, 8);
    for (guint c = 1; c <= 8; c *= 8) {
        MsCollSpec spec = {MS_COLL_ALLREDUCE, MS_COLL_ALGO_HIER, 16, .bytes = GIB, .channels = c};
        Outcome o;
        coll_run(two_node, &spec, &o);
        double intra = ring_closed(GIB, 8, 7, NVS, ai);
        double inter = ring_closed(GIB / 8.0, 2, 2, NIC, ax);
        MS_ASSERT_REL(ms_time_to_s(o.last), 2 * intra + inter, 1e-3);
        /* Flows: per channel, 2 nodes x 8 x 7 steps twice, and 8 pairs x 2 x 2 steps. */
        CU_ASSERT_EQUAL(o.flows, c * (2 * 2 * 8 * 7 + 8 * 2 * 2));
        /* Each rank sends 7/8 S twice inside the node and S/8 across. */
        for (guint i = 0; i < 16; i++) {
            CU_ASSERT_EQUAL(o.sent[i], 2 * 7 * (GIB / 8) + GIB / 8);
        }
    }
}

/* alpha delays each rank's entry once (even for multi-phase algorithms); step_delay precedes
 * every ring step: 2(n-1) steps on one node. */
/* How much later the last rank finishes with alpha and step_delay set than without. */
static MsTime
added(const MsTopology *topo, MsCollSpec spec, MsTime alpha, MsTime step_delay)
{
    Outcome base, slow;
    coll_run(topo, &spec, &base);
    spec.alpha = alpha;
    spec.step_delay = step_delay;
    coll_run(topo, &spec, &slow);
    for (guint r = 0; r < spec.n_ranks && step_delay == 0; r++) {
        CU_ASSERT_EQUAL(slow.end[r], base.end[r] + alpha);
    }
    return slow.last - base.last;
}

static void
test_alpha_and_step_delay(void)
{
    MsCollSpec spec[] = {
        {.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = 64 << 20},
        {.op = MS_COLL_ALLTOALL, .n_ranks = 8, .bytes = 64 << 20},
        {.op = MS_COLL_ALLGATHER, .n_ranks = 8, .bytes = 64 << 20},
        {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 16, .bytes = 64 << 20},
        {.op = MS_COLL_ALLREDUCE, .algo = MS_COLL_ALGO_HIER, .n_ranks = 16, .bytes = 64 << 20},
    };
    MsTime alpha = ms_time_from_us(17.25), d = ms_time_from_us(3);
    for (guint i = 0; i < G_N_ELEMENTS(spec); i++) {
        CU_ASSERT_EQUAL(added(spec[i].n_ranks == 8 ? one_node : two_node, spec[i], alpha, 0),
                        alpha);
    }
    CU_ASSERT_EQUAL(added(one_node, spec[0], 0, d), 14 * d);
    CU_ASSERT_EQUAL(added(one_node, spec[2], alpha, d), alpha + 7 * d);
    CU_ASSERT_EQUAL(added(one_node, spec[1], 0, d), 0); /* all-to-all has no ring steps */
}

static void
launch_rank(MsSim *sim, gpointer ctx, guint64 part)
{
    ms_coll_launch(ctx, (guint)part);
}

/* Rank 3 of a one-node all-to-all launches D late. The 42 flows among the other ranks run at
 * once (6 sends share each GPU: a + 6x, x = S/8/B) and are over before D; the 14 flows that
 * touch rank 3 wait for it, then take a + 7x (7 of them share rank 3's link). */
static void
test_launch_skew(void)
{
    guint64 S = GIB;
    double x = S / 8.0 / NVS, a = coll_lat(one_node, 0, 1);
    MsTime D = ms_time_from_s(10 * x);
    g_autoptr(MsSim) sim = ms_sim_new(one_node);
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 8, .bytes = S};
    Done done = {0};
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, coll_on_done, &done, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    for (guint r = 0; r < 8; r++) {
        if (r != 3) {
            ms_coll_launch(coll, r);
        }
    }
    ms_sim_at(sim, D, launch_rank, coll, 3);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, ms_time_from_s(a + 6 * x) - 10, NULL));
    CU_ASSERT_EQUAL(ms_network_n_live_flows(ms_sim_network(sim)), 42);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, D, NULL));
    CU_ASSERT_EQUAL(ms_network_n_live_flows(ms_sim_network(sim)), 0);
    CU_ASSERT_EQUAL(ms_coll_n_flows(coll), 42);
    CU_ASSERT_EQUAL(done.total, 0);
    for (guint r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(ms_coll_bytes_sent(coll, r), r == 3 ? 0 : 6 * (S / 8));
        CU_ASSERT_EQUAL(ms_coll_rank_end(coll, r), MS_TIME_NEVER);
    }
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_TRUE(ms_coll_finished(coll));
    for (guint r = 0; r < 8; r++) {
        MS_ASSERT_REL(ms_time_to_s(ms_coll_rank_end(coll, r)), ms_time_to_s(D) + a + 7 * x, 1e-6);
        CU_ASSERT_EQUAL(done.calls[r], 1);
    }
}

/* Each rank completes when its own sends, receives and copies are done. */
static void
test_per_rank_completion(void)
{
    guint64 m[8 * 8] = {0};
    m[0 * 8 + 1] = 300000000; /* 1 ms at 300 GB/s */
    m[2 * 8 + 3] = 150000000;
    m[5 * 8 + 5] = 2039000000; /* a local copy of 2 ms */
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 8, .matrix = m, .alpha = 1000};
    Outcome o;
    coll_run(one_node, &spec, &o);
    double a = coll_lat(one_node, 0, 1) + 1e-9;
    MS_ASSERT_REL(ms_time_to_s(o.end[0]), a + 1e-3, 1e-9);
    CU_ASSERT_EQUAL(o.end[1], o.end[0]);
    MS_ASSERT_REL(ms_time_to_s(o.end[2]), a + 0.5e-3, 1e-9);
    CU_ASSERT_EQUAL(o.end[3], o.end[2]);
    MS_ASSERT_REL(ms_time_to_s(o.end[5]), 1e-9 + 2e-3, 1e-9);
    for (guint r = 4; r < 8; r++) {
        if (r != 5) {
            CU_ASSERT_EQUAL(o.end[r], 1000);
        }
    }
    CU_ASSERT_EQUAL(o.sent[0], m[1]);
    CU_ASSERT_EQUAL(o.sent[5], 0);
    CU_ASSERT_EQUAL(o.flows, 2);
}

static void
test_bytes_sent(void)
{
    guint64 S = 8 * 3 * 1000000; /* divisible by channels x ranks */
    MsCollSpec spec = {.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = S, .channels = 3};
    Outcome o;
    coll_run(one_node, &spec, &o);
    for (guint r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(o.sent[r], 2 * 7 * S / 8);
    }
    CU_ASSERT_EQUAL(o.flows, 3 * 14 * 8);
    spec.op = MS_COLL_REDUCESCATTER;
    coll_run(one_node, &spec, &o);
    for (guint r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(o.sent[r], 7 * S / 8);
    }
    /* Sizes that do not divide: every byte still travels, chunks differ by at most one byte. */
    spec.op = MS_COLL_ALLGATHER;
    spec.bytes = 1000003;
    coll_run(one_node, &spec, &o);
    guint64 total = 0;
    for (guint r = 0; r < 8; r++) {
        total += o.sent[r];
        CU_ASSERT_TRUE(o.sent[r] >= 7 * (spec.bytes / 8) - 21 &&
                       o.sent[r] <= 7 * spec.bytes / 8 + 21);
    }
    CU_ASSERT_EQUAL(total, 7 * spec.bytes);
}

/* Zero bytes: every rank finishes right after its per-call overhead, once, with no flow. */
static void
test_zero_size(void)
{
    const MsCollSpec cases[] = {
        {MS_COLL_ALLTOALL, MS_COLL_ALGO_DIRECT}, {MS_COLL_ALLTOALL, MS_COLL_ALGO_2DH},
        {MS_COLL_ALLTOALL, MS_COLL_ALGO_PIPE},   {MS_COLL_ALLREDUCE, MS_COLL_ALGO_RING},
        {MS_COLL_ALLREDUCE, MS_COLL_ALGO_HIER},  {MS_COLL_REDUCESCATTER, MS_COLL_ALGO_RING},
        {MS_COLL_ALLGATHER, MS_COLL_ALGO_RING},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        MsCollSpec spec = cases[i];
        spec.n_ranks = 16;
        spec.alpha = ms_time_from_us(5);
        spec.step_delay = ms_time_from_us(1);
        Outcome o;
        coll_run(two_node, &spec, &o);
        CU_ASSERT_EQUAL(o.flows, 0);
        CU_ASSERT_EQUAL(o.done.total, 16);
        for (guint r = 0; r < 16; r++) {
            CU_ASSERT_EQUAL(o.end[r], ms_time_from_us(5));
            CU_ASSERT_EQUAL(o.sent[r], 0);
        }
    }
}

/* The owner may free the collective from the callback of its last rank (as the engine does). */
typedef struct {
    MsColl *coll;
    guint left;
} Owner;

static void
free_when_done(MsColl *coll, guint part, gpointer ctx)
{
    Owner *o = ctx;
    CU_ASSERT_PTR_EQUAL(coll, o->coll);
    if (--o->left == 0) {
        g_clear_pointer(&o->coll, ms_coll_free);
    }
}

static void
test_free_from_callback(void)
{
    const MsCollSpec specs[] = {
        {.op = MS_COLL_ALLTOALL, .n_ranks = 16, .bytes = 1 << 20},
        {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 16, .bytes = 1 << 20},
        {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 16, .bytes = 0},
        {.op = MS_COLL_ALLREDUCE, .algo = MS_COLL_ALGO_HIER, .n_ranks = 16, .bytes = 0},
        {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = 1 << 20},
        {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_PIPE, .n_ranks = 16, .bytes = 1 << 20},
    };
    for (guint i = 0; i < G_N_ELEMENTS(specs); i++) {
        g_autoptr(MsSim) sim = ms_sim_new(two_node);
        Owner owner = {NULL, 16};
        owner.coll = ms_coll_new(sim, &specs[i], free_when_done, &owner, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(owner.coll);
        ms_coll_launch_all(owner.coll);
        CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
        CU_ASSERT_PTR_NULL(owner.coll);
        CU_ASSERT_EQUAL(owner.left, 0);
    }
}

typedef struct {
    MsFlowList *list;
    guint64 bytes;
} Enum;

/* Collects the enumerated flows into a flow list (as the benchmark hands them to its peer). */
static void
collect(gpointer ctx, guint src, guint dst, guint64 bytes, const gint64 *preds, guint n_preds)
{
    Enum *e = ctx;
    guint deps[2];
    CU_ASSERT_TRUE_FATAL(n_preds <= 2);
    for (guint k = 0; k < n_preds; k++) {
        CU_ASSERT_TRUE(preds[k] >= 0 && preds[k] < (gint64)ms_flow_list_len(e->list));
        deps[k] = (guint)preds[k];
    }
    CU_ASSERT_TRUE(bytes > 0 || src == dst);
    e->bytes += bytes;
    ms_flow_list_add(e->list, NULL, src, dst, bytes, 0, 1.0, deps, n_preds);
}

/* Enumerates spec's flows, checks each predecessor ends where its successor starts (ring) or
 * leaves the same sender (window), and replays them: the replay must end when the collective
 * does. Returns the number of flows. */
static guint
enumerate(const MsCollSpec *spec, guint *roots)
{
    g_autoptr(MsFlowList) list = ms_flow_list_new(two_node);
    Enum e = {list, 0};
    g_autoptr(MsSim) sim = ms_sim_new(two_node);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    CU_ASSERT_TRUE(ms_coll_enumerate(coll, collect, &e));
    guint n = ms_flow_list_len(list), n_deps = 0, moving = 0;
    *roots = 0;
    for (guint k = 0; k < n; k++) {
        const guint *p = ms_flow_list_deps(list, k, &n_deps);
        guint src = ms_flow_list_src(list, k);
        moving += ms_flow_list_bytes(list, k) > 0;
        if (n_deps == 0) {
            ++*roots;
        } else if (spec->op == MS_COLL_ALLTOALL) {
            CU_ASSERT_TRUE(n_deps == 1 && ms_flow_list_src(list, p[0]) == src);
        } else {
            /* The chunk it forwards came from its predecessor in the ring (unless that step was
             * empty); its own previous step left from the same GPU. */
            CU_ASSERT_TRUE_FATAL(n_deps == 2);
            CU_ASSERT_TRUE(ms_flow_list_dst(list, p[0]) == src ||
                           ms_flow_list_bytes(list, p[0]) == 0);
            CU_ASSERT_EQUAL(ms_flow_list_src(list, p[1]), src);
        }
    }
    /* The same flows simulated as the collective itself. */
    ms_coll_launch_all(coll);
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_EQUAL(ms_coll_n_flows(coll), moving);
    guint64 sent = 0;
    MsTime last = 0, replay_last = 0;
    for (guint i = 0; i < spec->n_ranks; i++) {
        sent += ms_coll_bytes_sent(coll, i);
        last = MAX(last, ms_coll_rank_end(coll, i));
    }
    CU_ASSERT_EQUAL(sent, e.bytes);
    g_autofree MsTime *begin = g_new(MsTime, MAX(n, 1));
    g_autofree MsTime *end = g_new(MsTime, MAX(n, 1));
    g_autoptr(MsSim) replay = ms_sim_new(two_node);
    CU_ASSERT_TRUE(ms_flow_list_run(list, replay, begin, end, NULL));
    for (guint i = 0; i < n; i++) {
        replay_last = MAX(replay_last, end[i]);
    }
    if (spec->op != MS_COLL_ALLTOALL) {
        CU_ASSERT_EQUAL(replay_last, last);
    } else {
        CU_ASSERT_TRUE(replay_last <= last); /* all-to-all adds local copies */
    }
    return n;
}

static void
test_enumerate(void)
{
    guint roots = 0;
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 16, .bytes = 16 << 20};
    CU_ASSERT_EQUAL(enumerate(&spec, &roots), 240);
    CU_ASSERT_EQUAL(roots, 240);
    spec.window = 3;
    CU_ASSERT_EQUAL(enumerate(&spec, &roots), 240);
    CU_ASSERT_EQUAL(roots, 16 * 3);
    spec = (MsCollSpec){.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = 64 << 20, .channels = 2};
    CU_ASSERT_EQUAL(enumerate(&spec, &roots), 2 * 30 * 16);
    CU_ASSERT_EQUAL(roots, 2 * 16);
    spec.op = MS_COLL_REDUCESCATTER;
    CU_ASSERT_EQUAL(enumerate(&spec, &roots), 2 * 15 * 16);
    CU_ASSERT_EQUAL(roots, 2 * 16);
    /* 8 bytes over 8 channels and 16 ranks: one byte per channel, one chunk of 16 carries it
     * (30 flows per channel); the other steps are empty and listed as local flows. */
    spec = (MsCollSpec){.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = 8};
    CU_ASSERT_EQUAL(enumerate(&spec, &roots), 8 * 30 * 16);
    CU_ASSERT_EQUAL(roots, 8 * 16);
    /* Multi-phase algorithms are not enumerated. */
    const MsCollSpec multi[] = {{MS_COLL_ALLTOALL, MS_COLL_ALGO_2DH, 16},
                                {MS_COLL_ALLTOALL, MS_COLL_ALGO_PIPE, 16},
                                {MS_COLL_ALLREDUCE, MS_COLL_ALGO_HIER, 16}};
    for (guint i = 0; i < G_N_ELEMENTS(multi); i++) {
        MsCollSpec m = multi[i];
        g_autoptr(MsSim) sim = ms_sim_new(two_node);
        g_autoptr(MsColl) coll = ms_coll_new(sim, &m, NULL, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
        CU_ASSERT_FALSE(ms_coll_enumerate(coll, collect, NULL));
    }
}

static void
test_determinism(void)
{
    guint64 m[16 * 16];
    coll_skewed(m, 16);
    const MsCollSpec specs[] = {
        {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 16, .matrix = m},
        {.op = MS_COLL_ALLTOALL,
         .algo = MS_COLL_ALGO_PIPE,
         .n_ranks = 16,
         .matrix = m,
         .window = 2},
        {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = 123456789, .channels = 5},
    };
    for (guint i = 0; i < G_N_ELEMENTS(specs); i++) {
        Outcome a, b;
        coll_run(two_node, &specs[i], &a);
        coll_run(two_node, &specs[i], &b);
        CU_ASSERT_EQUAL(memcmp(a.end, b.end, sizeof a.end), 0);
        CU_ASSERT_EQUAL(memcmp(a.sent, b.sent, sizeof a.sent), 0);
        CU_ASSERT_EQUAL(a.stats.events, b.stats.events);
        CU_ASSERT_EQUAL(a.stats.net.solves, b.stats.net.solves);
    }
}

static void
expect_error(const MsTopology *topo, const MsCollSpec *spec, const char *needle)
{
    GError *error = NULL;
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    MsColl *coll = ms_coll_new(sim, spec, NULL, NULL, &error);
    CU_ASSERT_PTR_NULL(coll);
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID, needle);
}

static void
test_errors(void)
{
    const guint out_of_range[] = {0, 8};
    const guint twice[] = {1, 2, 1};
    const guint nine[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    guint64 huge[4] = {1, MS_BYTES_MAX, MS_BYTES_MAX, 0};
    const struct {
        MsCollSpec spec;
        const char *needle;
    } cases[] = {
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 0},
         "allreduce over 0 ranks: the topology 'dgx-a100'"},
        {{.op = MS_COLL_ALLTOALL, .n_ranks = 9},
         "alltoall over 9 ranks: the topology 'dgx-a100' has 8 GPUs"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 2, .ranks = out_of_range},
         "rank 8 is out of range (the topology 'dgx-a100' has 8 GPUs)"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 3, .ranks = twice}, "rank 1 is listed twice"},
        {{.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_RING, .n_ranks = 8},
         "algorithm 'ring' does not apply to alltoall"},
        {{.op = MS_COLL_ALLREDUCE, .algo = MS_COLL_ALGO_2DH, .n_ranks = 8},
         "algorithm '2dh' does not apply to allreduce"},
        {{.op = MS_COLL_REDUCESCATTER, .algo = MS_COLL_ALGO_HIER, .n_ranks = 8},
         "algorithm 'hier' does not apply to reducescatter"},
        {{.op = MS_COLL_ALLGATHER, .algo = MS_COLL_ALGO_DIRECT, .n_ranks = 8},
         "algorithm 'direct' does not apply to allgather"},
        {{.op = MS_COLL_ALLREDUCE, .algo = 17, .n_ranks = 8}, "algorithm '?' does not apply"},
        {{.op = 9, .n_ranks = 8}, "unknown operation 9"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = MS_BYTES_MAX + 1},
         "size 1125899906842625 B is larger than 1 PiB"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 2, .bytes = G_MAXUINT64, .matrix = huge},
         "size 18446744073709551615 B is larger than 1 PiB"}, /* a matrix is for alltoall only */
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .weight = -1}, "weight -1 is not"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .weight = NAN}, "weight nan is not"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .weight = INFINITY}, "weight inf is not"},
        {{.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .channels = 257}, "257 channels: at most 256"},
        {{.op = MS_COLL_ALLTOALL, .n_ranks = 2, .matrix = huge}, "rank 0 sends more than 1 PiB"},
        {{.op = MS_COLL_ALLTOALL, .n_ranks = 2, .matrix = huge, .bytes = G_MAXUINT64},
         "rank 0 sends more than 1 PiB"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        expect_error(one_node, &cases[i].spec, cases[i].needle);
    }
    /* Rows (sent) and columns (received) each stay within 1 PiB; a single entry too. */
    guint64 col[4] = {0, MS_BYTES_MAX, 0, 1};
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 2, .matrix = col};
    expect_error(one_node, &spec, "alltoall matrix: rank 1 receives more than 1 PiB in total");
    guint64 entry[4] = {0, 0, G_MAXUINT64, 0};
    spec.matrix = entry;
    expect_error(one_node, &spec, "alltoall matrix: rank 0 receives more than 1 PiB in total");
    /* Flow counts beyond the limit are refused before any allocation. */
    g_autoptr(MsTopology) big = ms_topology_load("dgx-a100-128node", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    spec = (MsCollSpec){.op = MS_COLL_ALLREDUCE, .n_ranks = 1024, .channels = 256};
    expect_error(big, &spec,
                 "allreduce over 1024 ranks with 256 channels would make 536346624 "
                 "flows, more than 268435456");
    /* Node-structured algorithms need the same number of ranks on every node. */
    const MsCollSpec uneven[] = {{MS_COLL_ALLTOALL, MS_COLL_ALGO_2DH},
                                 {MS_COLL_ALLTOALL, MS_COLL_ALGO_PIPE},
                                 {MS_COLL_ALLREDUCE, MS_COLL_ALGO_HIER}};
    for (guint i = 0; i < G_N_ELEMENTS(uneven); i++) {
        spec = uneven[i];
        spec.n_ranks = 9;
        spec.ranks = nine;
        spec.bytes = 1 << 20;
        g_autofree char *needle =
            g_strdup_printf("%s needs the same number of ranks on every node (9 ranks on 2 nodes)",
                            ms_coll_algo_name(spec.algo));
        expect_error(two_node, &spec, needle);
    }
    /* The same ranks run the flat algorithms. */
    spec.op = MS_COLL_ALLTOALL;
    spec.algo = MS_COLL_ALGO_DIRECT;
    CU_ASSERT_TRUE(coll_run_s(two_node, &spec) > 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"op and algorithm names, busbw factors", test_names},
        {"ring allreduce closed form, any channel count", test_ring_allreduce_closed_form},
        {"reduce-scatter and all-gather closed forms", test_reducescatter_allgather_closed_form},
        {"channels cross nodes through different NICs", test_channels_use_different_nics},
        {"hierarchical allreduce phases", test_hier_allreduce_phases},
        {"alpha and step delay add exactly", test_alpha_and_step_delay},
        {"a late rank delays exactly its flows", test_launch_skew},
        {"per-rank completion", test_per_rank_completion},
        {"bytes sent per rank", test_bytes_sent},
        {"zero-size collectives", test_zero_size},
        {"owner frees the collective from its callback", test_free_from_callback},
        {"flow enumeration and replay", test_enumerate},
        {"determinism", test_determinism},
        {"spec errors", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"collective", coll_suite_init, coll_suite_clean, tests},
                                         {NULL}};
    return ms_test_main(argc, argv, suites);
}
