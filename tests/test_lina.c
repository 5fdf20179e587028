/* Tests of lina (training): the imminent flags sit exactly on the compute ops before backward
 * all-to-alls, partitioning and per-chunk pipelining, the all-to-all estimate in closed form,
 * packing decisions on constructed cases, and (driving the dispatcher) no allreduce launched
 * where an all-to-all waits or runs. */
#include "plan_fixture.h"
#include "sim/policy/lina.h"

/* Whether op is a compute dependency of some backward all-to-all op. */
static gboolean
feeds_backward_a2a(const MsSchedule *s, guint32 op)
{
    for (guint32 x = 0; x < ms_schedule_n_ops(s); x++) {
        MsOpInfo i = fx_op(s, x);
        if (i.phase != MS_PHASE_BACKWARD || !fx_is_a2a(s, x)) {
            continue;
        }
        for (guint k = 0; k < i.n_deps; k++) {
            if (i.deps[k] == op) {
                return TRUE;
            }
        }
    }
    return FALSE;
}

static void
test_flags(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("lina:pack=1,a2a_chunk=64KiB");
    guint flagged = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        gboolean want = i.kind == MS_OP_COMPUTE && feeds_backward_a2a(s, op);
        CU_ASSERT_EQUAL((i.flags & MS_OP_FLAG_A2A_IMMINENT) != 0, want);
        flagged += want;
        if (want) {
            /* The attention backward of the layer above (its combine's gradient comes next) or
             * the expert backward (its dispatch's gradient comes next). */
            CU_ASSERT_TRUE((i.role == MS_ROLE_ATTENTION && i.layer >= 1) ||
                           i.role == MS_ROLE_EXPERT);
            CU_ASSERT_EQUAL(i.phase, MS_PHASE_BACKWARD);
        }
    }
    /* Per rank: layers 2, 1, 0 follow an attention backward; 4 layers of one expert op. */
    CU_ASSERT_EQUAL(flagged, 8 * (3 + 4));
    g_autoptr(MsSchedule) p = fx_plan_contended("priority");
    for (guint32 op = 0; op < ms_schedule_n_ops(p); op++) {
        CU_ASSERT_EQUAL(fx_op(p, op).flags, 0);
    }
}

/* Lina's per-layer decisions (hook_data is the policy), with micro-ops of 20000 bytes. */
static void
micro_ops_of_20000(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    ms_policy_moe_layer(data, layer, out);
    out->chunk_bytes = 20000;
    out->chunks = ms_plan_chunks_for(layer->most_wire_bytes, 20000);
}

static void
test_pipelining(void)
{
    /* 64 KiB all-to-all chunks: the largest sender's 59392 B fit one; at 20000 B: 3 chunks, each
     * with its own expert op that waits for its own dispatch chunk only. */
    g_autoptr(MsSchedule) s = fx_plan_contended("lina:pack=1,a2a_chunk=65536B,chunk=20MB");
    g_autoptr(GArray) one = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    CU_ASSERT_EQUAL(one->len, 1);
    g_autoptr(MsSchedule) c = fx_plan_contended("lina:pack=1,a2a_chunk=65536B,chunk=64KiB");
    g_autoptr(GArray) ar = fx_colls(c, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    CU_ASSERT_EQUAL(ar->len, 34); /* 2 buckets of 17 chunks, as priority cuts them */
    g_autoptr(MsModel) m = fx_model(fx_contended_model);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    g_autoptr(MsRouting) r = fx_routing(4, 8, 8, 2, fx_contended_counts);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    GError *error = NULL;
    g_autoptr(MsPolicy) p = ms_policy_parse("lina:pack=1", &error);
    MsPlanConfig cfg;
    CU_ASSERT_TRUE_FATAL(ms_policy_configure(p, &in, &cfg, &error));
    CU_ASSERT_TRUE(cfg.imminent_flags);
    CU_ASSERT_EQUAL(cfg.allreduce_chunk, 30000000);
    /* Each MoE layer: micro-ops of 30 MB (chunk), pipelined; whole all-to-alls in inference. */
    MsMoeLayer layer = {.model = m, .topo = t, .mode = MS_PLAN_TRAIN, .most_wire_bytes = 70000000};
    MsMoeLayerPlan lp = {.chunks = 1};
    ms_policy_moe_layer(p, &layer, &lp);
    CU_ASSERT_TRUE(lp.pipeline);
    CU_ASSERT_EQUAL(lp.chunk_bytes, 30000000);
    CU_ASSERT_EQUAL(lp.chunks, 3);
    CU_ASSERT_EQUAL(lp.order, MS_PLAN_ORDER_CHUNKED);
    layer.mode = MS_PLAN_INFER;
    MsMoeLayerPlan whole = {.chunks = 1};
    ms_policy_moe_layer(p, &layer, &whole);
    CU_ASSERT_FALSE(whole.pipeline);
    CU_ASSERT_EQUAL(whole.chunks, 1);
    /* Micro-ops of 20000 B, below what the parameter allows, through a hook of the test's own. */
    cfg.moe_layer = micro_ops_of_20000;
    g_autoptr(MsSchedule) piped = ms_plan_build(m, r, t, MS_PLAN_TRAIN, &cfg, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(piped);
    g_autoptr(GArray) d3 = fx_colls(piped, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 2);
    CU_ASSERT_EQUAL_FATAL(d3->len, 3);
    guint n = 0;
    const guint32 *ops = ms_schedule_rank_ops(piped, 5, &n);
    guint experts = 0;
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(piped, ops[k]);
        if (i.role != MS_ROLE_EXPERT || i.phase != MS_PHASE_FORWARD || i.layer != 2) {
            continue;
        }
        CU_ASSERT_EQUAL_FATAL(i.n_deps, 1);
        MsOpInfo dep = fx_op(piped, i.deps[0]);
        CU_ASSERT_EQUAL(dep.role, MS_ROLE_DISPATCH);
        CU_ASSERT_EQUAL(dep.chunk, i.chunk);
        CU_ASSERT_EQUAL(dep.rank, 5);
        experts++;
    }
    CU_ASSERT_EQUAL(experts, 3);
    ms_plan_config_clear(&cfg);
}

static void
test_gate(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("lina:pack=1,a2a_chunk=65536B,chunk=64KiB");
    FxRun run;
    CU_ASSERT_TRUE_FATAL(fx_execute(s, &run));
    CU_ASSERT_EQUAL(fx_gate_violations(s, &run, run.start, run.end), 0);
    /* Allreduce chunks did run, and some of them while the backward pass computed. */
    guint ar = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        ar += fx_op(s, op).role == MS_ROLE_ALLREDUCE && run.launch_step[op] != G_MAXUINT64;
    }
    CU_ASSERT_EQUAL(ar, 34 * 8);
    fx_run_clear(&run);
}

/* On the simulator (engine records): no allreduce op starts on a GPU while one of its
 * all-to-all ops waits or runs; under concurrent they do. */
static void
test_gate_simulated(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("lina:pack=1,a2a_chunk=65536B,chunk=64KiB");
    g_autofree MsTime *start = NULL, *end = NULL;
    CU_ASSERT_TRUE_FATAL(fx_engine_times(s, "dgx-a100", &start, &end));
    CU_ASSERT_EQUAL(fx_gate_violations(s, NULL, start, end), 0);
    g_autoptr(MsSchedule) c = fx_plan_contended("concurrent");
    g_autofree MsTime *cs = NULL, *ce = NULL;
    CU_ASSERT_TRUE_FATAL(fx_engine_times(c, "dgx-a100", &cs, &ce));
    CU_ASSERT_TRUE(fx_gate_violations(c, NULL, cs, ce) > 0);
}

static const char uniform_model[] = "[model]\nformat = 1\nname = u16\nlayers = 2\nd_model = 1024\n"
                                    "experts = 16\ntop_k = 2\nheads = 8\nseq_len = 256\n"
                                    "tokens_per_gpu = 2048\n";

static guint32
uniform_counts(guint layer, guint src, guint e)
{
    return 256; /* 2048 tokens x top-2 over 16 experts */
}

static void
test_a2a_estimate(void)
{
    g_autoptr(MsTopology) t = fx_topo("dgx-a100-2node");
    g_autoptr(MsRouting) r = fx_routing(1, 16, 16, 2, uniform_counts);
    g_autoptr(MsPlacement) pl = ms_placement_new_ep(16, 16, 16);
    g_autoptr(MsTraffic) tr = ms_traffic_new(r, 0, pl, NULL);
    /* Rank 0 sends 256 tokens x 2048 B to each of 7 GPUs of its node and 8 of the other:
     * intra over each route's narrowest link, inter over its share of the node's NICs. */
    double bytes = 256.0 * 2048, intra = 0, lat = 0;
    for (guint d = 1; d < 16; d++) {
        guint hops = 0;
        const guint32 *route = ms_topology_gpu_route(t, 0, d, &hops, NULL);
        lat = MAX(lat, ms_time_to_s(ms_topology_route_latency(t, route, hops)));
        if (d < 8) {
            intra += bytes / ms_topology_route_bandwidth(t, route, hops);
        }
    }
    double inter = 8 * bytes / ms_topology_injection_bandwidth(t, 0);
    MS_ASSERT_REL(ms_lina_a2a_estimate(t, tr, 2048, 1), MAX(intra, inter) + lat, 1e-9);
    /* Three chunks: ceil(256 / 3) = 86 tokens per pair in the first. */
    double inter3 = 8 * 86.0 * 2048 / ms_topology_injection_bandwidth(t, 0);
    MS_ASSERT_REL(ms_lina_a2a_estimate(t, tr, 2048, 3), MAX(intra * 86 / 256, inter3) + lat, 1e-9);
}

static MsLinaPack
pack(const char *model_text, guint factor, GError **error)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100-2node");
    guint layers = ms_model_spec(m)->n_moe;
    g_autoptr(MsRouting) r = fx_routing(layers, 16, 16, 2, uniform_counts);
    MsLinaPack out = {0};
    ms_lina_pack(m, r, t, 30000000, factor, &out, error);
    return out;
}

static void
test_packing(void)
{
    GError *error = NULL;
    /* Small experts (d_ffn 256): the all-to-all across nodes dominates, so Lina doubles the
     * experts per GPU; at the layout chosen one chunk's compute outlasts its all-to-all, and at
     * the one before it did not. */
    g_autofree char *small = g_strconcat(uniform_model, "d_ffn = 256\n", NULL);
    MsLinaPack auto_pack = pack(small, 0, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(auto_pack.factor > 1);
    CU_ASSERT_EQUAL(auto_pack.ep * auto_pack.factor, 16);
    CU_ASSERT_TRUE(auto_pack.compute_s >= auto_pack.a2a_s);
    CU_ASSERT_STRING_EQUAL(auto_pack.why, "one chunk's expert compute outlasts its all-to-all");
    MsLinaPack before = pack(small, auto_pack.factor / 2, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(before.compute_s < before.a2a_s);
    /* Large experts (d_ffn 65536): compute outlasts the all-to-all from the start. */
    g_autofree char *large = g_strconcat(uniform_model, "d_ffn = 65536\n", NULL);
    MsLinaPack none = pack(large, 0, &error);
    CU_ASSERT_EQUAL(none.factor, 1);
    CU_ASSERT_EQUAL(none.ep, 16);
    CU_ASSERT_TRUE(none.compute_s >= none.a2a_s);
    /* Off and forced. */
    MsLinaPack off = pack(small, 1, &error);
    CU_ASSERT_EQUAL(off.ep, 16);
    CU_ASSERT_STRING_EQUAL(off.why, "packing off (pack=1)");
    MsLinaPack forced = pack(small, 4, &error);
    CU_ASSERT_EQUAL(forced.ep, 4);
    CU_ASSERT_EQUAL(forced.factor, 4);
    pack(small, 3, &error);
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy lina: pack=3 does not divide the expert-parallel degree 16");
    /* 800 layers: dense states 53.9 GB and one expert per layer 26.8 GB fit 80 GiB; two
     * experts per layer would not, so packing stops although the all-to-all dominates. */
    g_autofree char *deep =
        g_strconcat("[model]\nformat = 1\nname = deep\nlayers = 800\nd_model = 1024\n"
                    "d_ffn = 1024\nexperts = 16\ntop_k = 2\nheads = 8\nseq_len = 256\n"
                    "tokens_per_gpu = 2048\n",
                    NULL);
    MsLinaPack mem = pack(deep, 0, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(mem.factor, 1);
    CU_ASSERT_TRUE(mem.compute_s < mem.a2a_s);
    CU_ASSERT_STRING_EQUAL(mem.why, "twice the experts would not fit the GPU memory");
    /* 600 such layers: 40.4 GB dense and two experts per layer 40.3 GB fit 80 GiB (85.9 GB),
     * and packing goes to 2, where compute outlasts the all-to-all. A shared expert per layer (20.1
     * GB more) or an untied embedding of 200000 x 1024 (3.3 GB beside the head's 3.3 GB) are states
     * too, and with either of them two experts per layer no longer fit. */
    static const char deep600[] = "[model]\nformat = 1\nname = deep\nlayers = 600\n"
                                  "d_model = 1024\nd_ffn = 1024\nexperts = 16\ntop_k = 2\n"
                                  "heads = 8\nseq_len = 256\ntokens_per_gpu = 2048\n";
    static const struct {
        const char *extra;
        guint factor;
    } states[] = {
        {"", 2},
        {"shared_experts = 1\n", 1},
        {"vocab = 200000\ntie_embeddings = true\n", 2},
        {"vocab = 200000\ntie_embeddings = false\n", 1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(states); i++) {
        g_autofree char *text = g_strconcat(deep600, states[i].extra, NULL);
        MsLinaPack got = pack(text, 0, &error);
        g_assert_no_error(error);
        CU_ASSERT_EQUAL(got.factor, states[i].factor);
        if (states[i].factor == 1) {
            CU_ASSERT_STRING_EQUAL(got.why, "twice the experts would not fit the GPU memory");
        } else {
            CU_ASSERT_STRING_EQUAL(got.why, "one chunk's expert compute outlasts its all-to-all");
        }
    }
}

static void
test_plan_meta(void)
{
    g_autofree char *small = g_strconcat(uniform_model, "d_ffn = 256\n", NULL);
    g_autoptr(MsModel) m = fx_model(small);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100-2node");
    g_autoptr(MsRouting) r = fx_routing(2, 16, 16, 2, uniform_counts);
    GError *error = NULL;
    g_autoptr(MsPolicy) p = ms_policy_parse("lina", &error);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    g_autoptr(MsSchedule) s = ms_policy_plan(p, &in, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    MsLinaPack want = pack(small, 0, &error);
    g_autofree char *ep = g_strdup_printf("%u", want.ep);
    g_autofree char *factor = g_strdup_printf("%u", want.factor);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "ep"), ep);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.pack"), factor);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "policy"), "lina");
    /* Replicas of packed experts synchronise their gradients: groups of 16 / ep ranks. */
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    guint replica = 0;
    for (guint k = 0; k < ar->len; k++) {
        MsCollInfo c;
        ms_schedule_coll(s, g_array_index(ar, guint32, k), &c);
        replica += c.n_ranks == 16 / want.ep;
    }
    CU_ASSERT_TRUE(replica > 0);
    g_autoptr(MsPolicy) bad = ms_policy_parse("lina:a2a_chunk=1KB", &error);
    MsPlanConfig cfg;
    CU_ASSERT_FALSE(ms_policy_configure(bad, &in, &cfg, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy lina: a2a_chunk=1000B is below 64 KiB");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"imminent flags on the ops before backward all-to-alls", test_flags},
        {"partitioning and per-chunk pipelining", test_pipelining},
        {"no allreduce where an all-to-all waits or runs", test_gate},
        {"simulated: the gate holds, concurrent breaks it", test_gate_simulated},
        {"all-to-all estimate in closed form", test_a2a_estimate},
        {"packing decisions", test_packing},
        {"packing in the plan", test_plan_meta},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"lina", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
