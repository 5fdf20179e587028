/* Tests of plan: op counts per layer and rank, all-to-all bytes equal to the routing's matrix,
 * capacity padding and drop counts in closed form, gradient buckets, backward = 2 x forward
 * flops, chunking and compression, expert-parallel groups, inference placements, and every
 * error. */
#include "plan_fixture.h"
#include "sim/compute.h"
#include "sim/net/collective.h"

/* 3 layers, the middle one MoE; 8 experts, top-2; d_model 64 in bf16 = 128-byte tokens. */
static const char model_text[] = "[model]\n"
                                 "format = 1\n"
                                 "name = t3\n"
                                 "layers = 3\n"
                                 "moe_layers = 1\n"
                                 "d_model = 64\n"
                                 "d_ffn = 128\n"
                                 "experts = 8\n"
                                 "top_k = 2\n"
                                 "top_k_infer = 1\n"
                                 "heads = 4\n"
                                 "seq_len = 16\n"
                                 "tokens_per_gpu = 16\n"
                                 "grad_bucket = 40000B\n";
#define TOKEN_BYTES 128

static MsModel *
model_with(const char *extra)
{
    g_autofree char *text = g_strconcat(model_text, extra ? extra : "", NULL);
    return fx_model(text);
}

/* Tokens rank src routes to expert e in training: 2 x ((src + 2e) % 4 + 1): even ranks route
 * 16 tokens (32 choices), odd ranks 24 (48). */
static guint32
train_count(guint layer, guint src, guint e)
{
    return 2 * ((src + 2 * e) % 4 + 1);
}

/* Top-1 inference: half of that (whole tokens). */
static guint32
infer_count(guint layer, guint src, guint e)
{
    return train_count(layer, src, e) / 2;
}

static MsSchedule *
build(const MsModel *m, const MsRouting *r, MsPlanMode mode, const MsPlanConfig *cfg,
      GError **error)
{
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    return ms_plan_build(m, r, t, mode, cfg, error);
}

static MsSchedule *
build_ok(const MsModel *m, const MsRouting *r, MsPlanMode mode, const MsPlanConfig *cfg)
{
    GError *error = NULL;
    MsSchedule *s = build(m, r, mode, cfg, &error);
    if (error) {
        fprintf(stderr, "\n  plan: %s\n", error->message);
        g_clear_error(&error);
    }
    return s;
}

/* The per-layer hooks of these tests: fixed_layer gives the MsMoeLayerPlan it points to;
 * bytes_layer derives the chunks from the largest sender and its chunk_bytes. */
static void
fixed_layer(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    *out = *(const MsMoeLayerPlan *)data;
}

static void
bytes_layer(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    *out = *(const MsMoeLayerPlan *)data;
    out->chunks = ms_plan_chunks_for(layer->most_wire_bytes, out->chunk_bytes);
}

static void
set_layers(MsPlanConfig *cfg, MsMoeLayerFn fn, const MsMoeLayerPlan *want)
{
    cfg->moe_layer = fn;
    cfg->hook_data = want;
}

/* A training step of the 3-layer model (plus extra model lines) under train_count's routing. */
static MsSchedule *
train_step(const char *extra, const MsPlanConfig *cfg)
{
    g_autoptr(MsModel) m = model_with(extra);
    g_autoptr(MsRouting) r = fx_routing(1, 8, 8, 2, train_count);
    MsPlanConfig plain;
    ms_plan_config_init(&plain);
    MsSchedule *s = build_ok(m, r, MS_PLAN_TRAIN, cfg ? cfg : &plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s;
}

static void
test_op_counts(void)
{
    g_autoptr(MsSchedule) s = train_step(NULL, NULL);
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 2);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(s), "fifo");
    for (guint rank = 0; rank < 8; rank++) {
        for (MsPhase ph = MS_PHASE_FORWARD; ph <= MS_PHASE_BACKWARD; ph++) {
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 0, MS_ROLE_ATTENTION, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 0, MS_ROLE_DENSE_FFN, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_ATTENTION, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_GATE, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_DISPATCH, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_EXPERT, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_COMBINE, ph), 1);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_DENSE_FFN, ph), 0);
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 2, MS_ROLE_DENSE_FFN, ph), 1);
        }
        /* 14 compute ops (7 forward, 7 backward) in program order: priorities 0..13. */
        guint n = 0;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
        gint64 want = 0;
        for (guint k = 0; k < n; k++) {
            MsOpInfo i = fx_op(s, ops[k]);
            if (i.kind == MS_OP_COMPUTE) {
                CU_ASSERT_EQUAL(i.priority, want);
                want++;
            }
        }
        CU_ASSERT_EQUAL(want, 14);
    }
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "ep"), "8");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "mode"), "train");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "0");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "model"), "t3");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "topology"), "dgx-a100");
    MsOpInfo first = fx_op(s, 0);
    CU_ASSERT_STRING_EQUAL(first.label, "L0.fwd.attn");
}

/* Bytes of every gradient allreduce of a schedule. */
static guint64
allreduce_bytes(const MsSchedule *s)
{
    guint64 sum = 0;
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    for (guint k = 0; k < ar->len; k++) {
        MsCollInfo c;
        ms_schedule_coll(s, g_array_index(ar, guint32, k), &c);
        sum += c.bytes;
    }
    return sum;
}

/* Two shared experts (DeepSeekMoE): one dense FFN of 2 x 128 on every rank's tokens in the MoE
 * layer, forward and backward, 2 x 2 x 64 x 256 = 65536 flops per token forward; the dispatch
 * waits for the gate, not for it, and the expert op follows it on the stream; its 32768
 * weights (65536 bf16 bytes) join the dense gradients. An untied embedding adds its
 * 100 x 64 x 2 bytes. */
static void
test_shared_experts(void)
{
    g_autoptr(MsSchedule) plain = train_step(NULL, NULL);
    g_autoptr(MsSchedule) s = train_step("shared_experts = 2\n", NULL);
    for (guint rank = 0; rank < 8; rank++) {
        guint64 tokens = rank % 2 ? 24 : 16;
        for (MsPhase ph = MS_PHASE_FORWARD; ph <= MS_PHASE_BACKWARD; ph++) {
            CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_DENSE_FFN, ph), 1);
        }
        guint n = 0;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
        guint32 shared = G_MAXUINT32, gate = G_MAXUINT32;
        for (guint k = 0; k < n; k++) {
            MsOpInfo i = fx_op(s, ops[k]);
            if (i.layer != 1 || i.phase != MS_PHASE_FORWARD) {
                continue;
            }
            if (i.role == MS_ROLE_GATE) {
                gate = ops[k];
            } else if (i.role == MS_ROLE_DENSE_FFN) {
                shared = ops[k];
                CU_ASSERT_STRING_EQUAL(i.label, "L1.fwd.shared");
                MS_ASSERT_REL(i.flops, (double)tokens * 65536, 1e-12);
                CU_ASSERT_EQUAL(i.tokens, tokens);
            } else if (i.role == MS_ROLE_DISPATCH) {
                CU_ASSERT_EQUAL(i.n_deps, 1);
                CU_ASSERT_EQUAL(i.deps[0], gate);
            } else if (i.role == MS_ROLE_EXPERT) {
                CU_ASSERT_TRUE(shared != G_MAXUINT32 && i.priority > fx_op(s, shared).priority);
            }
        }
        CU_ASSERT_NOT_EQUAL(shared, G_MAXUINT32);
    }
    CU_ASSERT_EQUAL(allreduce_bytes(s), allreduce_bytes(plain) + 65536);
    g_autoptr(MsSchedule) tied = train_step("vocab = 100\n", NULL);
    g_autoptr(MsSchedule) untied = train_step("vocab = 100\ntie_embeddings = false\n", NULL);
    CU_ASSERT_EQUAL(allreduce_bytes(untied), allreduce_bytes(tied) + 100 * 64 * 2);
}

/* Bytes of one collective's matrix cell. */
static guint64
cell(const MsSchedule *s, guint32 coll, guint src, guint dst)
{
    MsCollInfo c;
    ms_schedule_coll(s, coll, &c);
    return c.matrix[(gsize)src * c.n_ranks + dst];
}

/* Framework overheads: every compute op carries the per-op host time; each forward MoE layer gets
 * one host op per rank between its gate and its dispatch, lasting layer + local experts x expert
 * + syncs x sync + tokens x token (closed form); backward gets none; no time, no host op. */
static void
test_framework_host(void)
{
    g_autoptr(MsSchedule) plain = train_step(NULL, NULL);
    for (guint32 op = 0; op < ms_schedule_n_ops(plain); op++) {
        MsOpInfo i = fx_op(plain, op);
        CU_ASSERT_NOT_EQUAL(i.role, MS_ROLE_HOST);
        CU_ASSERT_EQUAL(i.host_s, 0);
    }
    g_autoptr(MsSchedule) s =
        train_step("framework = deepspeed\nhost_op = 20us\nhost_moe_layer = 9.7ms\n"
                   "host_expert = 0.65ms\nhost_sync = 30us\nhost_token = 1us\n",
                   NULL);
    CU_ASSERT_EQUAL(ms_schedule_n_ops(s), ms_schedule_n_ops(plain) + 8);
    for (guint rank = 0; rank < 8; rank++) {
        CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_HOST, MS_PHASE_FORWARD), 1);
        CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_HOST, MS_PHASE_BACKWARD), 0);
    }
    guint hosts = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        if (i.kind != MS_OP_COMPUTE) {
            continue;
        }
        if (i.role != MS_ROLE_HOST) {
            MS_ASSERT_REL(i.host_s, 20e-6, 1e-12);
            continue;
        }
        hosts++;
        /* One expert per GPU (8 on 8); even ranks route 16 tokens, odd ones 24; DeepSpeed
         * synchronises once per layer (its capacity is read back on the host). */
        double tokens = i.rank % 2 ? 24 : 16;
        MS_ASSERT_REL(i.host_s, 9.7e-3 + 0.65e-3 + 30e-6 + tokens * 1e-6, 1e-12);
        CU_ASSERT_EQUAL(i.experts, 1);
        CU_ASSERT_STRING_EQUAL(i.label, "L1.fwd.host");
        /* Between the gate and the dispatch: it depends on the gate, the dispatch on it. */
        CU_ASSERT_EQUAL(i.n_deps, 1);
        CU_ASSERT_EQUAL(fx_op(s, i.deps[0]).role, MS_ROLE_GATE);
        guint found = 0;
        for (guint32 o = 0; o < ms_schedule_n_ops(s); o++) {
            MsOpInfo d = fx_op(s, o);
            for (guint k = 0;
                 d.role == MS_ROLE_DISPATCH && d.phase == MS_PHASE_FORWARD && k < d.n_deps; k++) {
                found += d.deps[k] == op;
            }
        }
        CU_ASSERT_EQUAL(found, 1);
    }
    CU_ASSERT_EQUAL(hosts, 8);
    /* A named framework alone sets structure, not time: nothing is added. */
    g_autoptr(MsSchedule) named = train_step("framework = megatron\n", NULL);
    CU_ASSERT_EQUAL(ms_schedule_n_ops(named), ms_schedule_n_ops(plain));
}

static void
test_a2a_bytes(void)
{
    g_autoptr(MsSchedule) s = train_step(NULL, NULL);
    /* One expert per rank (ep 8): expert e lives on rank e. The dispatch and the combine's
     * gradient go the routed way, the combine and the dispatch's gradient back. */
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    g_autoptr(GArray) fc = fx_colls(s, MS_ROLE_COMBINE, MS_PHASE_FORWARD, 1);
    g_autoptr(GArray) bc = fx_colls(s, MS_ROLE_COMBINE, MS_PHASE_BACKWARD, 1);
    g_autoptr(GArray) bd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_BACKWARD, 1);
    CU_ASSERT_EQUAL_FATAL(fd->len, 1);
    CU_ASSERT_EQUAL_FATAL(fc->len, 1);
    CU_ASSERT_EQUAL_FATAL(bc->len, 1);
    CU_ASSERT_EQUAL_FATAL(bd->len, 1);
    for (guint src = 0; src < 8; src++) {
        for (guint e = 0; e < 8; e++) {
            guint64 want = (guint64)train_count(0, src, e) * TOKEN_BYTES;
            CU_ASSERT_EQUAL(cell(s, g_array_index(fd, guint32, 0), src, e), want);
            CU_ASSERT_EQUAL(cell(s, g_array_index(bc, guint32, 0), src, e), want);
            CU_ASSERT_EQUAL(cell(s, g_array_index(fc, guint32, 0), e, src), want);
            CU_ASSERT_EQUAL(cell(s, g_array_index(bd, guint32, 0), e, src), want);
        }
    }
    /* The expert op of rank e computes what it received: every source's tokens for expert e. */
    for (guint e = 0; e < 8; e++) {
        guint64 recv = 0;
        for (guint src = 0; src < 8; src++) {
            recv += train_count(0, src, e);
        }
        guint n = 0;
        const guint32 *ops = ms_schedule_rank_ops(s, e, &n);
        for (guint k = 0; k < n; k++) {
            MsOpInfo i = fx_op(s, ops[k]);
            if (i.role == MS_ROLE_EXPERT && i.phase == MS_PHASE_FORWARD) {
                CU_ASSERT_EQUAL(i.tokens, recv);
                CU_ASSERT_EQUAL(i.flops, (double)recv * 2 * 2 * 64 * 128);
                CU_ASSERT_EQUAL(i.experts, 1);
                CU_ASSERT_EQUAL(i.gemm_m, recv);
                CU_ASSERT_EQUAL(i.gemm_n, 128);
                CU_ASSERT_EQUAL(i.gemm_k, 64);
                double fl = 0;
                guint64 by = 0;
                ms_compute_expert_ffn_cost(recv, 64, 128, FALSE, 2, &fl, &by);
                CU_ASSERT_EQUAL(i.bytes, (double)by);
            }
        }
    }
}

static void
test_capacity(void)
{
    /* capacity 1.25: even ranks route 16 tokens: C = 2 x floor(1.25 x ceil(16 / 8)) = 4;
     * odd ranks 24 tokens: C = 2 x floor(1.25 x 3) = 6. */
    g_autoptr(MsSchedule) s = train_step("capacity_factor = 1.25\n", NULL);
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    guint64 dropped = 0;
    for (guint src = 0; src < 8; src++) {
        guint64 c = src % 2 ? 6 : 4;
        for (guint e = 0; e < 8; e++) {
            CU_ASSERT_EQUAL(cell(s, g_array_index(fd, guint32, 0), src, e), c * TOKEN_BYTES);
            guint64 x = train_count(0, src, e);
            dropped += x > c ? x - c : 0;
        }
    }
    /* Closed form: counts 2, 4, 6, 8 per source, each twice; even: drops 2 + 4 twice = 12;
     * odd: 2 twice = 4; 4 x 12 + 4 x 4 = 64. */
    CU_ASSERT_EQUAL(dropped, 64);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "64");
}

/* Sum of compute flops of a phase over all ranks. */
static double
phase_flops(const MsSchedule *s, MsPhase phase)
{
    double sum = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        sum += i.kind == MS_OP_COMPUTE && i.phase == phase ? i.flops : 0;
    }
    return sum;
}

static void
test_backward_twice_forward(void)
{
    g_autoptr(MsSchedule) s = train_step("vocab = 100\n", NULL);
    double fwd = phase_flops(s, MS_PHASE_FORWARD), bwd = phase_flops(s, MS_PHASE_BACKWARD);
    CU_ASSERT_TRUE(fwd > 0);
    MS_ASSERT_REL(bwd, 2 * fwd, 1e-12);
    g_autoptr(MsSchedule) s3 = train_step("vocab = 100\nbackward_factor = 3\n", NULL);
    MS_ASSERT_REL(phase_flops(s3, MS_PHASE_BACKWARD), 3 * phase_flops(s3, MS_PHASE_FORWARD), 1e-12);
}

static void
test_buckets(void)
{
    /* Gradients in backward order (bf16, 2 bytes each): layer 2 dense FFN 2x64x128 = 16384
     * elements, attention 64 x 256 = 16384; layer 1 gate 512, attention 16384; layer 0 FFN
     * 16384, attention 16384. Bucket 40000 B: 32768 + 32768 closes the first (65536 B), then
     * 1024 + 32768 + 32768 (66560 B), then the last attention alone (32768 B). */
    g_autoptr(MsSchedule) s = train_step(NULL, NULL);
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    static const guint64 want[] = {65536, 66560, 32768};
    static const gint layer[] = {2, 0, 0};
    static const MsRole last[] = {MS_ROLE_ATTENTION, MS_ROLE_DENSE_FFN, MS_ROLE_ATTENTION};
    CU_ASSERT_EQUAL_FATAL(ar->len, 3);
    for (guint k = 0; k < 3; k++) {
        MsCollInfo c;
        ms_schedule_coll(s, g_array_index(ar, guint32, k), &c);
        CU_ASSERT_EQUAL(c.bytes, want[k]);
        CU_ASSERT_EQUAL(c.n_ranks, 8);
        CU_ASSERT_EQUAL(fx_op(s, c.ops[0]).layer, layer[k]);
        /* Each waits for the last contributing backward op of its rank. */
        MsOpInfo i = fx_op(s, c.ops[3]);
        CU_ASSERT_EQUAL(i.n_deps, 1);
        MsOpInfo d = fx_op(s, i.deps[0]);
        CU_ASSERT_EQUAL(d.rank, 3);
        CU_ASSERT_EQUAL(d.role, last[k]);
    }
    /* Partitioned into 16 KiB chunks: ceil(65536 / 16384) = 4 equal chunks, and so on. */
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    cfg.allreduce_chunk = 16384;
    g_autoptr(MsSchedule) sc = train_step(NULL, &cfg);
    g_autoptr(GArray) arc = fx_colls(sc, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    CU_ASSERT_EQUAL(arc->len, 4 + 5 + 2);
    MsCollInfo c;
    ms_schedule_coll(sc, g_array_index(arc, guint32, 4), &c);
    CU_ASSERT_EQUAL(c.bytes, 66560 / 5);
    CU_ASSERT_EQUAL(fx_op(sc, c.ops[0]).chunk, 0);
}

static void
test_chunks_and_groups(void)
{
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    const MsMoeLayerPlan three = {.chunks = 3, .pipeline = TRUE};
    set_layers(&cfg, fixed_layer, &three);
    g_autoptr(MsSchedule) s = train_step("ep = 4\n", &cfg);
    /* Two expert-parallel groups of 4 ranks, 3 chunks each: 6 dispatch collectives. */
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    CU_ASSERT_EQUAL_FATAL(fd->len, 6);
    for (guint g = 0; g < 2; g++) {
        for (guint i = 0; i < 4; i++) {
            for (guint j = 0; j < 4; j++) {
                guint src = g * 4 + i;
                /* Rank g*4 + j hosts experts 2j and 2j+1. */
                guint64 x = train_count(0, src, 2 * j) + train_count(0, src, 2 * j + 1);
                guint64 sum = 0;
                for (guint c = 0; c < 3; c++) {
                    MsCollInfo ci;
                    ms_schedule_coll(s, g_array_index(fd, guint32, c * 2 + g), &ci);
                    CU_ASSERT_EQUAL(ci.ranks[0], g * 4);
                    sum += ci.matrix[i * 4 + j];
                }
                CU_ASSERT_EQUAL(sum, x * TOKEN_BYTES);
            }
        }
    }
    for (guint rank = 0; rank < 8; rank++) {
        CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_EXPERT, MS_PHASE_FORWARD), 3);
        CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_DISPATCH, MS_PHASE_BACKWARD), 3);
    }
    MsCollInfo c0;
    ms_schedule_coll(s, g_array_index(fd, guint32, 1), &c0);
    CU_ASSERT_STRING_EQUAL(c0.label, "L1.fwd.dispatch.c0.g1");
    /* Expert gradients (2 experts x 2 x 64 x 128 x 2 B = 65536 B) among the two replicas of
     * each rank's experts: ranks {i, i + 4}. */
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    guint replicas = 0;
    for (guint k = 0; k < ar->len; k++) {
        MsCollInfo ci;
        ms_schedule_coll(s, g_array_index(ar, guint32, k), &ci);
        if (ci.n_ranks == 2) {
            CU_ASSERT_EQUAL(ci.ranks[1], ci.ranks[0] + 4);
            CU_ASSERT_EQUAL(ci.bytes, 65536);
            replicas++;
        }
    }
    CU_ASSERT_EQUAL(replicas, 4);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "ep"), "4");
}

static void
test_a2a_chunk_bytes(void)
{
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    /* The largest off-rank sender: odd ranks send 48 - own 2 x ((r + 2r) % 4 + 1)... computed
     * here: most = max over ranks of off-rank tokens x 128 B; chunk = most / 2.5 -> 3 chunks. */
    guint64 most = 0;
    for (guint src = 0; src < 8; src++) {
        guint64 off = 0;
        for (guint e = 0; e < 8; e++) {
            off += e == src ? 0 : train_count(0, src, e);
        }
        most = MAX(most, off * TOKEN_BYTES);
    }
    const MsMoeLayerPlan bytes = {.chunk_bytes = most * 2 / 5};
    set_layers(&cfg, bytes_layer, &bytes);
    g_autoptr(MsSchedule) s = train_step(NULL, &cfg);
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    CU_ASSERT_EQUAL(fd->len, 3);
    /* Not pipelined: one expert op waits for every chunk. */
    CU_ASSERT_EQUAL(fx_count_ops(s, 0, 1, MS_ROLE_EXPERT, MS_PHASE_FORWARD), 1);
}

/* What the hook was asked, layer by layer. */
static MsMoeLayer asked[4];
static guint n_asked;

/* MoE layer m gets m + 2 chunks; only the second is pipelined. */
static void
per_layer(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    g_assert(n_asked < G_N_ELEMENTS(asked));
    asked[n_asked++] = *layer;
    out->chunks = layer->moe + 2;
    out->pipeline = layer->moe == 1;
}

/* The hook is asked once per MoE layer, in order, with what the builder knows of it, and each
 * layer gets its own decisions. */
static void
test_per_layer_hook(void)
{
    /* Layers 0 and 2 are MoE layers. */
    g_auto(GStrv) parts = g_strsplit(model_text, "moe_layers = 1\n", 2);
    g_autofree char *text = g_strjoin("moe_layers = 0, 2\n", parts[0], parts[1], NULL);
    g_autoptr(MsModel) m = fx_model(text);
    g_autoptr(MsRouting) r = fx_routing(2, 8, 8, 2, train_count);
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    set_layers(&cfg, per_layer, NULL);
    n_asked = 0;
    g_autoptr(MsSchedule) s = build_ok(m, r, MS_PLAN_TRAIN, &cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(n_asked, 2);
    guint64 most = 0;
    for (guint src = 0; src < 8; src++) {
        guint64 off = 0;
        for (guint e = 0; e < 8; e++) {
            off += e == src ? 0 : train_count(0, src, e);
        }
        most = MAX(most, off * TOKEN_BYTES);
    }
    for (guint k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(asked[k].moe, k);
        CU_ASSERT_EQUAL(asked[k].layer, 2 * k);
        CU_ASSERT_EQUAL(asked[k].mode, MS_PLAN_TRAIN);
        CU_ASSERT_PTR_EQUAL(asked[k].model, m);
        CU_ASSERT_PTR_NOT_NULL(asked[k].traffic);
        CU_ASSERT_EQUAL(asked[k].most_wire_bytes, most);
    }
    g_autoptr(GArray) d0 = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    g_autoptr(GArray) d2 = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 2);
    CU_ASSERT_EQUAL(d0->len, 2);
    CU_ASSERT_EQUAL(d2->len, 3);
    /* Layer 0 is not pipelined: one expert op; layer 2 is: one per chunk, both ways. */
    CU_ASSERT_EQUAL(fx_count_ops(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD), 1);
    CU_ASSERT_EQUAL(fx_count_ops(s, 0, 2, MS_ROLE_EXPERT, MS_PHASE_FORWARD), 3);
    CU_ASSERT_EQUAL(fx_count_ops(s, 0, 2, MS_ROLE_EXPERT, MS_PHASE_BACKWARD), 3);
    CU_ASSERT_EQUAL(fx_count_ops(s, 0, 0, MS_ROLE_DISPATCH, MS_PHASE_BACKWARD), 2);
    /* Without a hook: whole all-to-alls. */
    ms_plan_config_init(&cfg);
    g_autoptr(MsSchedule) whole = build_ok(m, r, MS_PLAN_TRAIN, &cfg);
    g_autoptr(GArray) w2 = fx_colls(whole, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 2);
    CU_ASSERT_EQUAL(w2->len, 1);
    CU_ASSERT_EQUAL(ms_plan_chunks_for(10, 0), 1);
    CU_ASSERT_EQUAL(ms_plan_chunks_for(0, 4), 1);
    CU_ASSERT_EQUAL(ms_plan_chunks_for(8, 4), 2);
    CU_ASSERT_EQUAL(ms_plan_chunks_for(9, 4), 3);
}

static void
test_compression(void)
{
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    const MsMoeLayerPlan two = {.chunks = 2, .pipeline = TRUE};
    set_layers(&cfg, fixed_layer, &two);
    cfg.compress_ratio = 0.5;
    g_autoptr(MsSchedule) s = train_step(NULL, &cfg);
    for (MsPhase ph = MS_PHASE_FORWARD; ph <= MS_PHASE_BACKWARD; ph++) {
        CU_ASSERT_EQUAL(fx_count_ops(s, 2, 1, MS_ROLE_COMPRESS, ph), 4);
        CU_ASSERT_EQUAL(fx_count_ops(s, 2, 1, MS_ROLE_DECOMPRESS, ph), 4);
    }
    /* On the wire: half the bytes of each chunk (a share x cut in two: x/2 + x%2 tokens). */
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    guint64 x = train_count(0, 3, 5);
    CU_ASSERT_EQUAL(cell(s, g_array_index(fd, guint32, 0), 3, 5),
                    (x / 2 + x % 2) * TOKEN_BYTES / 2);
    /* A memory-bound compression reads the chunk and writes half of it: 1.5 x its bytes. */
    guint n = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, 3, &n);
    guint64 sent = 0;
    for (guint e = 0; e < 8; e++) {
        guint64 t = train_count(0, 3, e);
        sent += t / 2 + t % 2;
    }
    gboolean seen = FALSE;
    for (guint k = 0; k < n && !seen; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        if (i.role == MS_ROLE_COMPRESS && i.phase == MS_PHASE_FORWARD && i.chunk == 0) {
            CU_ASSERT_EQUAL(i.bytes, 1.5 * (double)(sent * TOKEN_BYTES));
            CU_ASSERT_STRING_EQUAL(i.label, "L1.fwd.compress.c0");
            seen = TRUE;
        }
    }
    CU_ASSERT_TRUE(seen);
}

static void
test_inference(void)
{
    g_autoptr(MsModel) m = model_with(NULL);
    g_autoptr(MsRouting) r = fx_routing(1, 8, 8, 1, infer_count);
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    g_autoptr(MsSchedule) s = build_ok(m, r, MS_PLAN_INFER, &cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(phase_flops(s, MS_PHASE_BACKWARD), 0);
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    CU_ASSERT_EQUAL(ar->len, 0);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "mode"), "infer");
    for (guint rank = 0; rank < 8; rank++) {
        CU_ASSERT_EQUAL(fx_count_ops(s, rank, 1, MS_ROLE_DISPATCH, MS_PHASE_FORWARD), 1);
    }

    /* A placement with expert 0 on ranks 0 and 1 (even split) and the rest static. */
    cfg.n_layers = 1;
    cfg.layers = g_new0(MsLayerPlacement, 1);
    MsPlacement *pl = ms_placement_new(8, 8, 8);
    ms_placement_add(pl, 0, 0, 0);
    ms_placement_add(pl, 0, 0, 1);
    for (guint e = 1; e < 8; e++) {
        ms_placement_add(pl, 0, e, e);
    }
    cfg.layers[0].placement = pl;
    cfg.layers[0].moves_p1 = g_new0(guint64, 64);
    cfg.layers[0].moves_p1[0 * 8 + 1] = 1000;
    cfg.layers[0].plan_bytes = 512;
    cfg.layers[0].replan = TRUE;
    cfg.layers[0].replan_bytes = 256;
    g_autoptr(MsSchedule) d = build_ok(m, r, MS_PLAN_INFER, &cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(ms_schedule_n_streams(d), 4); /* compute, comm, weights, planner */
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(d, 2), "weights");
    CU_ASSERT_EQUAL(fx_count_ops(d, 0, 1, MS_ROLE_REPLAN, MS_PHASE_OTHER), 2);
    CU_ASSERT_EQUAL(fx_count_ops(d, 0, 1, MS_ROLE_WEIGHTS, MS_PHASE_OTHER), 1);
    g_autoptr(GArray) fd = fx_colls(d, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 1);
    for (guint src = 0; src < 8; src++) {
        guint64 x = infer_count(0, src, 0);
        CU_ASSERT_EQUAL(cell(d, g_array_index(fd, guint32, 0), src, 0) +
                            cell(d, g_array_index(fd, guint32, 0), src, 1),
                        (x + infer_count(0, src, 1)) * TOKEN_BYTES);
    }
    /* The dispatch waits for the replan after the gate and for the weights of its rank. */
    MsCollInfo c;
    ms_schedule_coll(d, g_array_index(fd, guint32, 0), &c);
    MsOpInfo op = fx_op(d, c.ops[1]);
    gboolean replan = FALSE, weights = FALSE;
    for (guint k = 0; k < op.n_deps; k++) {
        MsOpInfo dep = fx_op(d, op.deps[k]);
        replan |= dep.role == MS_ROLE_REPLAN && dep.rank == 1;
        weights |= dep.role == MS_ROLE_WEIGHTS && dep.rank == 1;
    }
    CU_ASSERT_TRUE(replan);
    CU_ASSERT_TRUE(weights);
    ms_plan_config_clear(&cfg);
}

static void
expect_error(const MsModel *m, const MsRouting *r, MsPlanMode mode, const MsPlanConfig *cfg,
             int code, const char *needle)
{
    GError *error = NULL;
    g_autoptr(MsSchedule) s = build(m, r, mode, cfg, &error);
    CU_ASSERT_PTR_NULL(s);
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, code, needle);
}

/* The count in "... hold about N ops" or "... at least N ops". */
static guint64
count_in(const GError *error, const char *before)
{
    const char *at = error ? strstr(error->message, before) : NULL;
    return at ? g_ascii_strtoull(at + strlen(before), NULL, 10) : 0;
}

/* The bound that needs no routing refuses what the planner refuses, with the planner's count when
 * every all-to-all is one chunk (the default configuration), and admits the inference that the
 * planner builds. */
static void
check_ops_bound(const MsModel *big, const MsRouting *deep, const MsPlanConfig *cfg)
{
    GError *early = NULL, *late = NULL, *error = NULL;
    CU_ASSERT_FALSE(ms_plan_check_ops(big, 8, MS_PLAN_TRAIN, &early));
    CU_ASSERT_PTR_NULL(build(big, deep, MS_PLAN_TRAIN, cfg, &late));
    guint64 bound = count_in(early, "at least "), about = count_in(late, "about ");
    CU_ASSERT_TRUE(bound > MS_PLAN_MAX_OPS);
    CU_ASSERT_EQUAL(bound, about);
    MS_ASSERT_ERROR(early, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "a train schedule of big on 8 ranks would hold at least");
    g_clear_error(&late);
    CU_ASSERT_TRUE(ms_plan_check_ops(big, 8, MS_PLAN_INFER, &error));
    g_assert_no_error(error);
    g_autoptr(MsSchedule) s = build_ok(big, deep, MS_PLAN_INFER, cfg);
    CU_ASSERT_PTR_NOT_NULL(s);
}

static guint32
four_experts(guint layer, guint src, guint e)
{
    return e < 4 ? 4 : 0;
}

/* Regression: clearing re-initialised the configuration by allocating a fresh metadata array,
 * so every planned iteration leaked one (valgrind: definitely lost in every `moesim run`). */
static void
test_config_owns_nothing_after_clear(void)
{
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    CU_ASSERT_PTR_NULL(cfg.meta);
    ms_plan_config_add_meta(&cfg, "chunk", "30MB");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg.meta);
    CU_ASSERT_EQUAL(cfg.meta->len, 2);
    ms_plan_config_clear(&cfg);
    CU_ASSERT_PTR_NULL(cfg.meta);
    CU_ASSERT_PTR_NULL(cfg.layers);
    CU_ASSERT_STRING_EQUAL(cfg.policy, "fifo");
    ms_plan_config_add_meta(&cfg, "k", "v");
    CU_ASSERT_EQUAL(cfg.meta->len, 2);
    ms_plan_config_clear(&cfg);
}

static void
test_errors(void)
{
    g_autoptr(MsModel) m = model_with(NULL);
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    g_autoptr(MsRouting) two = fx_routing(2, 8, 8, 2, train_count);
    expect_error(m, two, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_MISMATCH,
                 "the trace has 2 MoE layers but model t3 has 1");
    g_autoptr(MsRouting) ranks = fx_routing(1, 16, 8, 2, train_count);
    expect_error(m, ranks, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_MISMATCH,
                 "the trace has 16 ranks but topology dgx-a100 (GPUs) has 8");
    /* Fewer ranks than GPUs: the schedule runs on the first GPUs, one rank each. */
    g_autoptr(MsRouting) four = fx_routing(1, 4, 8, 2, train_count);
    g_autoptr(MsSchedule) s4 = build_ok(m, four, MS_PLAN_TRAIN, &cfg);
    CU_ASSERT_EQUAL(ms_schedule_n_ranks(s4), 4);
    for (guint32 op = 0; op < ms_schedule_n_ops(s4); op++) {
        MsOpInfo i;
        ms_schedule_op(s4, op, &i);
        CU_ASSERT_TRUE(i.rank < 4);
    }
    g_autoptr(MsRouting) good = fx_routing(1, 8, 8, 2, train_count);
    expect_error(m, good, MS_PLAN_INFER, &cfg, MS_PLAN_ERROR_MISMATCH,
                 "the trace has 2 choices per token (top_k) but model t3 (top_k_infer in "
                 "inference) has 1");
    g_autoptr(MsModel) m4 = fx_model("[model]\nformat = 1\nname = e4\nlayers = 1\nd_model = 64\n"
                                     "d_ffn = 64\nexperts = 4\ntop_k = 2\nheads = 1\n"
                                     "seq_len = 8\ntokens_per_gpu = 8\n");
    expect_error(m4, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_MISMATCH,
                 "the trace has 8 experts but model e4 has 4");
    MsMoeLayerPlan many = {.chunks = 5000, .chunk_bytes = 65536};
    set_layers(&cfg, fixed_layer, &many);
    expect_error(m, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_LIMIT,
                 "all-to-all chunks of 65536 bytes cut layer 1's all-to-all into 5000 chunks (at "
                 "most 4096): use a larger chunk");
    many.chunk_bytes = 0;
    expect_error(m, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_LIMIT,
                 "the policy cut layer 1's all-to-all into 5000 chunks (1 to 4096)");
    many.chunks = 0;
    expect_error(m, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_LIMIT,
                 "the policy cut layer 1's all-to-all into 0 chunks (1 to 4096)");
    set_layers(&cfg, NULL, NULL);
    cfg.allreduce_chunk = 8;
    expect_error(m, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_LIMIT,
                 "allreduce chunks of 8 bytes cut a 65536-byte gradient bucket into 8192");
    cfg.allreduce_chunk = 0;
    cfg.ep = 3;
    expect_error(m, good, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_INVALID,
                 "expert-parallel degree 3 must divide both the 8 GPUs and the 8 experts");
    cfg.ep = 0;
    g_autoptr(MsRouting) inf = fx_routing(1, 8, 8, 1, infer_count);
    cfg.n_layers = 1;
    cfg.layers = g_new0(MsLayerPlacement, 1);
    cfg.layers[0].placement = ms_placement_new(8, 8, 8);
    expect_error(m, inf, MS_PLAN_INFER, &cfg, MS_PLAN_ERROR_INVALID,
                 "the inference placement of MoE layer 0 does not give each of the 8 experts");
    ms_plan_config_clear(&cfg);
    g_autoptr(MsModel) big =
        fx_model("[model]\nformat = 1\nname = big\nlayers = 4096\nd_model = 64\nd_ffn = 64\n"
                 "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
                 "grad_bucket = 1B\n");
    g_autoptr(MsRouting) deep = fx_routing(4096, 8, 8, 2, four_experts);
    expect_error(big, deep, MS_PLAN_TRAIN, &cfg, MS_PLAN_ERROR_LIMIT,
                 "the schedule would hold about");
    check_ops_bound(big, deep, &cfg);
    ms_plan_config_clear(&cfg);
    MsPlanMode mode = MS_PLAN_TRAIN;
    CU_ASSERT_TRUE(ms_plan_mode_from_name("infer", &mode));
    CU_ASSERT_EQUAL(mode, MS_PLAN_INFER);
    CU_ASSERT_FALSE(ms_plan_mode_from_name("inference", &mode));
    CU_ASSERT_STRING_EQUAL(ms_plan_mode_name(MS_PLAN_TRAIN), "train");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"op counts per layer and rank", test_op_counts},
        {"shared experts and an untied embedding", test_shared_experts},
        {"all-to-all bytes equal the routing's matrix", test_a2a_bytes},
        {"framework host time per op and per MoE layer", test_framework_host},
        {"capacity padding and drops in closed form", test_capacity},
        {"backward costs backward_factor x forward", test_backward_twice_forward},
        {"gradient buckets in backward order", test_buckets},
        {"chunks, expert-parallel groups and replica allreduce", test_chunks_and_groups},
        {"all-to-all chunk count from the largest sender", test_a2a_chunk_bytes},
        {"the per-layer hook", test_per_layer_hook},
        {"compression tasks and wire bytes", test_compression},
        {"inference: forward only, placements and their ops", test_inference},
        {"a cleared configuration owns nothing", test_config_owns_nothing_after_clear},
        {"errors", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"plan", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
