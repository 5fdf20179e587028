/* Tests of trace_gen: spec parsing and its errors, determinism, and that the generated statistics
 * match the parameters (hottest share, Zipf closed form, path correlation, drift). */
#include "ms_test.h"
#include "traces/trace_gen.h"
#include "traces/trace_stats.h"
#include "traces/trace_writer.h"

static void
test_params(void)
{
    MsTraceGenParams p;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("", &p, &error));
    CU_ASSERT_EQUAL(p.ranks, 16);
    CU_ASSERT_EQUAL(p.experts, 16);
    CU_ASSERT_EQUAL(p.layers, 12);
    CU_ASSERT_EQUAL(p.top_k, 2);
    CU_ASSERT_EQUAL(p.tokens, 256);
    CU_ASSERT_EQUAL(p.iterations, 1);
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_ZIPF);
    CU_ASSERT_EQUAL(p.zipf, 1.0);
    CU_ASSERT_EQUAL(p.seed, 1);
    CU_ASSERT_FALSE(p.counts);
    const char *spec = "ranks=16,experts=16,layers=12,top_k=2,tokens=2048,zipf=1.1,corr=0.6,"
                       "drift=0.05,iterations=4,seed=18446744073709551615,records=counts";
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_params_parse(spec, &p, &error));
    CU_ASSERT_EQUAL(p.tokens, 2048);
    CU_ASSERT_EQUAL(p.zipf, 1.1);
    CU_ASSERT_EQUAL(p.corr, 0.6);
    CU_ASSERT_EQUAL(p.drift, 0.05);
    CU_ASSERT_EQUAL(p.iterations, 4);
    CU_ASSERT_EQUAL(p.seed, G_MAXUINT64);
    CU_ASSERT_TRUE(p.counts);
    g_autofree char *canon = ms_trace_gen_params_to_spec(&p);
    CU_ASSERT_STRING_EQUAL(canon, "ranks=16,experts=16,layers=12,top_k=2,tokens=2048,"
                                  "iterations=4,zipf=1.1,corr=0.6,drift=0.05,"
                                  "seed=18446744073709551615,records=counts");
    MsTraceGenParams back;
    CU_ASSERT_TRUE(ms_trace_gen_params_parse(canon, &back, &error));
    /* Field by field: memcmp would also compare the padding after skew, which holds whatever
     * the stack held and made this check fail at random. */
    CU_ASSERT_TRUE(p.ranks == back.ranks && p.experts == back.experts && p.layers == back.layers &&
                   p.top_k == back.top_k && p.tokens == back.tokens &&
                   p.iterations == back.iterations && p.skew == back.skew && p.zipf == back.zipf &&
                   p.hot == back.hot && p.corr == back.corr && p.drift == back.drift &&
                   p.seed == back.seed && p.counts == back.counts);
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("hot=0.123456789012345,corr=0.1", &p, &error));
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_HOT);
    g_autofree char *hot = ms_trace_gen_params_to_spec(&p);
    CU_ASSERT_PTR_NOT_NULL(strstr(hot, ",hot=0.123456789012345,corr=0.1,"));
    CU_ASSERT_TRUE(ms_trace_gen_params_parse(hot, &back, &error));
    CU_ASSERT_EQUAL(back.hot, p.hot);
    ms_trace_gen_params_init(&p);
    CU_ASSERT_TRUE(ms_trace_gen_params_set(&p, "experts", "64", &error));
    CU_ASSERT_EQUAL(p.experts, 64);
    CU_ASSERT_FALSE(ms_trace_gen_params_set(&p, "expert", "64", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                    "unknown generator key 'expert' (known: ranks, experts, layers");
    CU_ASSERT_PTR_NULL(error);
}

static void
test_param_errors(void)
{
    static const struct {
        const char *spec;
        int code;
        const char *needle;
    } cases[] = {
        {"rank=4", MS_TRACE_GEN_ERROR_KEY, "unknown generator key 'rank'"},
        {"ranks", MS_TRACE_GEN_ERROR_KEY, "generator spec item 'ranks' is not KEY=VALUE"},
        {"ranks=4,,seed=2", MS_TRACE_GEN_ERROR_KEY, "generator spec item '' is not KEY=VALUE"},
        {"=4", MS_TRACE_GEN_ERROR_KEY, "item '=4' is not KEY=VALUE"},
        {"seed=1,seed=2", MS_TRACE_GEN_ERROR_KEY, "generator key 'seed' given twice"},
        {"ranks=abc", MS_TRACE_GEN_ERROR_VALUE, "ranks=abc: 'abc' is not a non-negative integer"},
        {"ranks=0", MS_TRACE_GEN_ERROR_VALUE, "ranks=0: 0 out of range"},
        {"experts=70000", MS_TRACE_GEN_ERROR_VALUE, "experts=70000: 70000 out of range"},
        {"layers=5000", MS_TRACE_GEN_ERROR_VALUE, "layers=5000"},
        {"top_k=65", MS_TRACE_GEN_ERROR_VALUE, "top_k=65"},
        {"tokens=0", MS_TRACE_GEN_ERROR_VALUE, "tokens=0"},
        {"iterations=0", MS_TRACE_GEN_ERROR_VALUE, "iterations=0"},
        {"zipf=-1", MS_TRACE_GEN_ERROR_VALUE, "zipf=-1"},
        {"zipf=65", MS_TRACE_GEN_ERROR_VALUE, "zipf=65"},
        {"hot=0", MS_TRACE_GEN_ERROR_VALUE, "hot=0"},
        {"corr=1.5", MS_TRACE_GEN_ERROR_VALUE, "corr=1.5"},
        {"drift=x", MS_TRACE_GEN_ERROR_VALUE, "drift=x"},
        {"seed=-1", MS_TRACE_GEN_ERROR_VALUE, "seed=-1"},
        {"records=paths", MS_TRACE_GEN_ERROR_VALUE, "records=paths: expected 'tokens' or 'counts'"},
        {"zipf=1,hot=0.2", MS_TRACE_GEN_ERROR_CONFLICT, "give one of zipf, hot and ratio, not two"},
        {"zipf=1,hot=0.2,ratio=3", MS_TRACE_GEN_ERROR_CONFLICT, "not all three"},
        {"corr=0.2,persist=0.4", MS_TRACE_GEN_ERROR_CONFLICT, "give either corr or persist"},
        {"ratio=0.5", MS_TRACE_GEN_ERROR_VALUE, "ratio=0.5"},
        {"persist=1.5", MS_TRACE_GEN_ERROR_VALUE, "persist=1.5"},
        {"experts=4,top_k=5", MS_TRACE_GEN_ERROR_CONFLICT, "top_k=5 exceeds experts=4"},
        {"experts=65536,layers=4096,ranks=2,top_k=1", MS_TRACE_GEN_ERROR_LIMIT,
         "layers x ranks x experts = 4096 x 2 x 65536"},
        {"tokens=67108864", MS_TRACE_GEN_ERROR_LIMIT,
         "ranks x tokens x layers x top_k = 25769803776 expert choices per iteration exceeds "
         "the limit of 268435456"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        MsTraceGenParams p;
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_trace_gen_params_parse(cases[i].spec, &p, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, cases[i].code, cases[i].needle);
    }
}

static MsTraceGen *
gen_of(const char *spec)
{
    MsTraceGenParams p;
    GError *error = NULL;
    g_assert(ms_trace_gen_params_parse(spec, &p, &error));
    MsTraceGen *g = ms_trace_gen_new(&p, &error);
    CU_ASSERT_PTR_NULL(error);
    return g;
}

/* The bytes of the trace spec generates, written in format. */
static GBytes *
generate_bytes(const char *spec, MsTraceFormat format)
{
    g_autoptr(MsTraceGen) g = gen_of(spec);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "g.trace", NULL);
    g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, format, ms_trace_gen_header(g), NULL);
    MsRouting *r = NULL;
    while (ms_trace_gen_next(g, &r, NULL)) {
        g_assert(ms_trace_writer_write_routing(w, r, NULL));
        ms_routing_free(r);
    }
    g_assert(ms_trace_writer_close(w, NULL));
    char *data = NULL;
    gsize len = 0;
    g_assert(g_file_get_contents(path, &data, &len, NULL));
    return g_bytes_new_take(data, len);
}

static void
test_determinism(void)
{
    const char *a = "ranks=4,experts=8,layers=3,tokens=64,iterations=3,corr=0.5,drift=0.3,seed=7";
    const char *b = "ranks=4,experts=8,layers=3,tokens=64,iterations=3,corr=0.5,drift=0.3,seed=8";
    for (int f = 0; f < 2; f++) {
        MsTraceFormat format = f ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT;
        g_autoptr(GBytes) x = generate_bytes(a, format);
        g_autoptr(GBytes) y = generate_bytes(a, format);
        g_autoptr(GBytes) z = generate_bytes(b, format);
        CU_ASSERT_TRUE(g_bytes_equal(x, y));
        CU_ASSERT_FALSE(g_bytes_equal(x, z));
        CU_ASSERT_TRUE(g_bytes_get_size(x) > 1000);
    }
}

/* The exact draws pin every trace: these SHA-256 digests of the text form were recorded with the
 * sampler that bisected its cumulative tables, before the guide tables, and the same bytes come
 * from `moesim trace gen SPEC -o -`. They cover top_k 1, 2, 3 (a total that is not a power of
 * two), empty intervals (zipf=20 leaves the coldest experts no share), drift, correlation, the
 * node limit and counts mode. */
static void
test_golden_digests(void)
{
    static const struct {
        const char *spec, *sha256;
    } cases[] = {
        {"ranks=3,experts=16,layers=4,top_k=1,tokens=50,iterations=3,corr=0.4,drift=0.2,seed=11",
         "e964d52de9ace4e0749859de4285c7fd2338f5fb87719838f934e37287ba99c9"},
        {"ranks=2,experts=12,layers=3,top_k=3,tokens=40,iterations=2,zipf=20,corr=0.3,drift=0.1,"
         "seed=5",
         "8d6ba55933114fdd16920a3d89f306b6fd5d3b1e0dca64e53ee6421643d9202d"},
        {"ranks=2,experts=16,layers=2,top_k=4,tokens=30,iterations=2,expert_nodes=4,max_nodes=2,"
         "corr=0.5,seed=3",
         "8fa160e041a9ad2365b40a120ac4c8cf725e2b864c41dbd98d065b9ea34ed251"},
        {"ranks=4,experts=64,layers=2,top_k=2,tokens=300,iterations=2,zipf=1.2,corr=0.2,"
         "records=counts,seed=9",
         "62b16a022ffff22f0f0ad3bc175bbd3fd7352a67b43df15108d0b86760db131a"},
        /* Node-limited routing, recorded before its logs were bounded first and taken for the
         * few candidates only: DeepSeek-V3's shape (q = 2 best per node), q = 3 with zero
         * popularities (-inf keys), q = 1, and counts drawn from the pool of paths. */
        {"ranks=3,experts=256,layers=3,top_k=8,tokens=200,iterations=2,hot=0.005859375,corr=0.5,"
         "drift=0.02,expert_nodes=8,max_nodes=4,seed=21",
         "3d0ebe312ebd4996ecc704bb55e4f562cb07da5b002a87265177894ea6205463"},
        {"ranks=2,experts=48,layers=3,top_k=6,tokens=120,iterations=2,zipf=20,corr=0.3,"
         "expert_nodes=6,max_nodes=2,seed=4",
         "2b22c40ebca8f90b971dc6ba8aa6c5da9f0e609a5aab8b7b9bf1150aeb188ea2"},
        {"ranks=2,experts=32,layers=2,top_k=4,tokens=100,iterations=2,corr=0.6,expert_nodes=8,"
         "max_nodes=4,seed=8",
         "b8e47db6d1a7ee146138a3394628541b2944d6ad9a101d32149ea044a0b5da9a"},
        {"ranks=8,experts=256,layers=2,top_k=8,tokens=4096,hot=0.005859375,corr=0.5,"
         "records=counts,expert_nodes=8,max_nodes=4,seed=2",
         "969f35285a6a388161eee701c5116acffd9f933136d49fe6cf236e63e3a8b7e4"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GBytes) text = generate_bytes(cases[i].spec, MS_TRACE_FORMAT_TEXT);
        g_autofree char *got = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, text);
        if (g_strcmp0(got, cases[i].sha256) != 0) {
            fprintf(stderr, "%s: sha256 %s, want %s\n", cases[i].spec, got, cases[i].sha256);
        }
        CU_ASSERT_STRING_EQUAL(got, cases[i].sha256);
    }
}

static void
test_shape(void)
{
    g_autoptr(MsTraceGen) g = gen_of("ranks=3,experts=6,layers=2,top_k=3,tokens=5,iterations=2");
    const MsTraceHeader *h = ms_trace_gen_header(g);
    CU_ASSERT_EQUAL(h->ranks, 3);
    CU_ASSERT_EQUAL(h->tokens_per_rank, 5);
    CU_ASSERT_STRING_EQUAL(h->generator,
                           "moesim trace gen ranks=3,experts=6,layers=2,top_k=3,tokens=5,"
                           "iterations=2,zipf=1,corr=0,drift=0,seed=1,records=tokens");
    MsRouting *r = NULL;
    for (guint it = 0; it < 2; it++) {
        CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(g, &r, NULL));
        CU_ASSERT_EQUAL(ms_routing_iteration(r), it);
        CU_ASSERT_TRUE(ms_routing_has_paths(r));
        CU_ASSERT_EQUAL(ms_routing_n_tokens(r, 2), 5);
        CU_ASSERT_EQUAL(ms_routing_token_id(r, 2, 4), 14);
        ms_routing_free(r);
    }
    r = GINT_TO_POINTER(1);
    CU_ASSERT_FALSE(ms_trace_gen_next(g, &r, NULL));
    CU_ASSERT_PTR_NULL(r);
    /* records=counts: the same counts without paths. */
    g_autoptr(MsTraceGen) t = gen_of("ranks=2,experts=8,layers=3,tokens=40,corr=0.4,seed=5");
    g_autoptr(MsTraceGen) c =
        gen_of("ranks=2,experts=8,layers=3,tokens=40,corr=0.4,seed=5,records=counts");
    MsRouting *rt = NULL, *rc = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(t, &rt, NULL));
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(c, &rc, NULL));
    CU_ASSERT_FALSE(ms_routing_has_paths(rc));
    ms_routing_drop_paths(rt);
    CU_ASSERT_TRUE(ms_routing_equal(rt, rc));
    ms_routing_free(rt);
    ms_routing_free(rc);
}

/* Hottest expert's share at each layer of the next iteration: the mean over layers and the
 * largest deviation from want. */
static double
measured_hot(MsTraceGen *g, double want, double *worst)
{
    MsRouting *r = NULL;
    g_assert(ms_trace_gen_next(g, &r, NULL));
    const MsTraceHeader *h = ms_routing_header(r);
    guint32 layers = h->layers;
    double sum = 0;
    *worst = 0;
    for (guint32 l = 0; l < layers; l++) {
        guint64 max = 0, total = 0;
        for (guint32 e = 0; e < h->experts; e++) {
            guint64 load = ms_routing_expert_load(r, l, e);
            max = MAX(max, load);
            total += load;
        }
        double share = (double)max / (double)total;
        sum += share;
        *worst = MAX(*worst, fabs(share - want));
    }
    ms_routing_free(r);
    return sum / layers;
}

static void
test_hot_share(void)
{
    /* 16 ranks x 2048 tokens = 32768 tokens a layer: the share's standard error is ~0.002. */
    static const char *const specs[] = {
        "ranks=16,experts=16,layers=4,tokens=2048,hot=0.3,seed=3",
        "ranks=16,experts=16,layers=4,tokens=2048,hot=0.3,corr=0.6,seed=4",
        "ranks=16,experts=64,layers=4,top_k=4,tokens=2048,hot=0.1,corr=0.3,seed=5",
        "ranks=16,experts=5,layers=4,tokens=2048,hot=0.35,corr=0.5,seed=6",
    };
    static const double want[] = {0.3, 0.3, 0.1, 0.35};
    for (guint i = 0; i < G_N_ELEMENTS(specs); i++) {
        g_autoptr(MsTraceGen) g = gen_of(specs[i]);
        CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_hot_share(g), want[i], 1e-9);
        double worst = 0;
        double mean = measured_hot(g, want[i], &worst);
        CU_ASSERT_DOUBLE_EQUAL(mean, want[i], 0.01);
        CU_ASSERT(worst < 0.02);
    }
}

static void
test_zipf_closed_form(void)
{
    /* top-1 over 4 experts, exponent 1: p = (1, 1/2, 1/3, 1/4) / (25/12); hottest 12/25. */
    g_autoptr(MsTraceGen) g = gen_of("ranks=16,experts=4,layers=3,top_k=1,tokens=2048,zipf=1");
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_hot_share(g), 0.48, 1e-12);
    CU_ASSERT_EQUAL(ms_trace_gen_zipf(g), 1.0);
    double worst = 0;
    CU_ASSERT_DOUBLE_EQUAL(measured_hot(g, 0.48, &worst), 0.48, 0.01);
    /* A steep law is capped: an expert is chosen at most once per token, so with top-2 no
     * share exceeds 1/2, and uniform popularity gives exactly 1/experts. */
    g_autoptr(MsTraceGen) steep = gen_of("experts=8,zipf=20");
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_hot_share(steep), 0.5, 1e-12);
    g_autoptr(MsTraceGen) flat = gen_of("experts=8,zipf=0");
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_hot_share(flat), 0.125, 1e-12);
    /* hot is solved for an exponent. */
    g_autoptr(MsTraceGen) h = gen_of("experts=4,top_k=1,hot=0.48");
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_zipf(h), 1.0, 1e-9);
}

static void
test_unreachable_hot(void)
{
    MsTraceGenParams p;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("experts=16,top_k=2,hot=0.6", &p, &error));
    CU_ASSERT_PTR_NULL(ms_trace_gen_new(&p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "hot=0.6 is unreachable: with experts=16, top_k=2 and corr=0 the hottest "
                    "expert's share lies in 0.0625..0.5");
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("experts=16,hot=0.05", &p, &error));
    CU_ASSERT_PTR_NULL(ms_trace_gen_new(&p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "hot=0.05 is unreachable");
    p.ranks = 0;
    CU_ASSERT_PTR_NULL(ms_trace_gen_new(&p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT, "ranks = 0 is outside");
    /* Parameters filled in by code get the same range checks as parsed ones. */
    static const struct {
        const char *field;
        double value;
        const char *needle;
    } bad[] = {
        {"corr", 2, "corr=2 is outside 0..1"},
        {"drift", -0.5, "drift=-0.5 is outside 0..1"},
        {"zipf", NAN, "zipf=nan is outside 0..64"},
        {"hot", 1.5, "hot=1.5 is outside"},
        {"tokens", 0, "tokens=0 is outside 1..67108864"},
        {"iterations", 0, "iterations=0 is outside"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        ms_trace_gen_params_init(&p);
        if (strcmp(bad[i].field, "corr") == 0) {
            p.corr = bad[i].value;
        } else if (strcmp(bad[i].field, "drift") == 0) {
            p.drift = bad[i].value;
        } else if (strcmp(bad[i].field, "zipf") == 0) {
            p.zipf = bad[i].value;
        } else if (strcmp(bad[i].field, "hot") == 0) {
            p.skew = MS_TRACE_GEN_SKEW_HOT;
            p.hot = bad[i].value;
        } else if (strcmp(bad[i].field, "tokens") == 0) {
            p.tokens = 0;
        } else {
            p.iterations = 0;
        }
        CU_ASSERT_PTR_NULL(ms_trace_gen_new(&p, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, bad[i].needle);
    }
}

static void
path_stats(const char *spec, MsTraceLayerStats *out)
{
    g_autoptr(MsTraceGen) g = gen_of(spec);
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(ms_trace_gen_header(g));
    MsRouting *r = NULL;
    while (ms_trace_gen_next(g, &r, NULL)) {
        ms_trace_stats_add(s, r);
        ms_routing_free(r);
    }
    ms_trace_stats_summary(s, out);
}

static void
test_correlation(void)
{
    MsTraceLayerStats one, none, some;
    path_stats("ranks=8,experts=16,layers=6,tokens=1024,zipf=1,corr=1,seed=2", &one);
    path_stats("ranks=8,experts=16,layers=6,tokens=1024,zipf=1,corr=0,seed=2", &none);
    path_stats("ranks=8,experts=16,layers=6,tokens=1024,zipf=1,corr=0.5,seed=2", &some);
    CU_ASSERT_TRUE(one.has_paths && none.has_paths && some.has_paths);
    CU_ASSERT_DOUBLE_EQUAL(one.path_consistency, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(none.path_consistency, none.path_baseline, 0.02);
    /* In between it rises with corr (slowly for top-2: a token in expert e's group follows the
     * group of its primary, which is e only half the time). */
    CU_ASSERT(some.path_consistency > none.path_consistency + 0.03);
    CU_ASSERT(some.path_consistency < one.path_consistency - 0.3);
    /* top-1: a follower repeats its group of one, so consistency is corr + (1-corr) x baseline
     * (its group's top expert is the followed one). */
    MsTraceLayerStats k1;
    path_stats("ranks=8,experts=16,layers=4,top_k=1,tokens=2048,zipf=0,corr=0.7,seed=3", &k1);
    CU_ASSERT_DOUBLE_EQUAL(k1.path_consistency, 0.7 + 0.3 / 16, 0.02);
}

/* Hottest expert of every layer in each of the iterations of spec; counts the (iteration, layer)
 * pairs whose hottest expert differs from the first iteration's. */
static guint
hottest_changes(const char *spec)
{
    g_autoptr(MsTraceGen) g = gen_of(spec);
    const MsTraceHeader *h = ms_trace_gen_header(g);
    g_autofree guint32 *first = g_new(guint32, h->layers);
    MsRouting *r = NULL;
    guint changes = 0, it = 0;
    while (ms_trace_gen_next(g, &r, NULL)) {
        for (guint32 l = 0; l < h->layers; l++) {
            guint32 best = 0;
            for (guint32 e = 1; e < h->experts; e++) {
                if (ms_routing_expert_load(r, l, e) > ms_routing_expert_load(r, l, best)) {
                    best = e;
                }
            }
            if (it == 0) {
                first[l] = best;
            }
            changes += best != first[l];
        }
        ms_routing_free(r);
        it++;
    }
    return changes;
}

/* ratio and persist are targets: the solved exponent and corr reproduce them in expectation, and a
 * generated trace measures them within sampling noise. */
static void
test_ratio_persist(void)
{
    /* top-1: no cap, so the ratio of ranks 0 and n-1 is n^s exactly. */
    g_autoptr(MsTraceGen) r4 = gen_of("experts=4,top_k=1,ratio=4.02");
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_zipf(r4), log(4.02) / log(4), 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_ratio(r4), 4.02, 1e-9);
    /* Lina's published statistics on 16 experts; top-1 persistence is path_cons for top-1. */
    const char *lina = "ranks=16,experts=16,layers=6,top_k=1,tokens=4096,ratio=5.56,persist=0.4194,"
                       "seed=3";
    g_autoptr(MsTraceGen) g = gen_of(lina);
    double t1 = 0, t2 = 0;
    ms_trace_gen_expected_persistence(g, &t1, &t2);
    CU_ASSERT_DOUBLE_EQUAL(t1, 0.4194, 1e-9);
    CU_ASSERT(t2 > t1 && t2 < 0.6);
    /* The closed form for top-1: a group of rank i keeps c + (1-c) p_i on its own next expert. */
    double c = ms_trace_gen_corr(g), s = ms_trace_gen_zipf(g), sum = 0, p[16], want = 0;
    for (guint i = 0; i < 16; i++) {
        p[i] = pow(i + 1, -s);
        sum += p[i];
    }
    for (guint i = 0; i < 16; i++) {
        p[i] /= sum;
    }
    for (guint i = 0; i < 16; i++) {
        double other = (1 - c) * p[i == 0 ? 1 : 0];
        want += p[i] * MAX(c + (1 - c) * p[i], other);
    }
    CU_ASSERT_DOUBLE_EQUAL(want, 0.4194, 1e-9);
    MsTraceLayerStats st;
    path_stats(lina, &st);
    CU_ASSERT_DOUBLE_EQUAL(st.path_consistency, t1, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(st.path_top2, t2, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(st.max_min, 5.56, 0.4);
    /* top-2: the exponent depends on corr and persistence on the exponent; both targets hold. */
    g_autoptr(MsTraceGen) k2 = gen_of("experts=16,top_k=2,hot=0.12,persist=0.3");
    ms_trace_gen_expected_persistence(k2, &t1, &t2);
    CU_ASSERT_DOUBLE_EQUAL(t1, 0.3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gen_expected_hot_share(k2), 0.12, 1e-9);
    /* Round trip of the targets. */
    MsTraceGenParams prm, back;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("ratio=5.56,persist=0.4194", &prm, &error));
    g_autofree char *spec = ms_trace_gen_params_to_spec(&prm);
    CU_ASSERT_PTR_NOT_NULL(strstr(spec, ",ratio=5.56,persist=0.4194,"));
    CU_ASSERT_TRUE(ms_trace_gen_params_parse(spec, &back, &error));
    CU_ASSERT_TRUE(back.skew == MS_TRACE_GEN_SKEW_RATIO && back.ratio == 5.56 &&
                   back.follow == MS_TRACE_GEN_FOLLOW_PERSIST && back.persist == 0.4194);
    /* Unreachable targets name the key and the reachable range. */
    CU_ASSERT_TRUE(
        ms_trace_gen_params_parse("experts=4,top_k=1,ratio=4.02,persist=0.4194", &prm, &error));
    CU_ASSERT_PTR_NULL(ms_trace_gen_new(&prm, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "persist=0.4194 is unreachable: with experts=4, top_k=1 and exponent");
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("experts=1,top_k=1,ratio=2", &prm, &error));
    CU_ASSERT_PTR_NULL(ms_trace_gen_new(&prm, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "ratio=2 is unreachable: with experts=1, top_k=1 and corr=0 the most over the "
                    "least popular expert's share lies in 1..1");
}

static void
test_drift(void)
{
    const char *base = "ranks=8,experts=16,layers=6,tokens=512,hot=0.3,iterations=6,seed=9";
    g_autofree char *still = g_strconcat(base, ",drift=0", NULL);
    g_autofree char *moving = g_strconcat(base, ",drift=0.5", NULL);
    CU_ASSERT_EQUAL(hottest_changes(still), 0);
    CU_ASSERT(hottest_changes(moving) >= 10);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"spec parsing", test_params},
        {"spec errors", test_param_errors},
        {"same seed same bytes", test_determinism},
        {"golden digests of the draws", test_golden_digests},
        {"shape, ids and records=counts", test_shape},
        {"hottest share matches hot", test_hot_share},
        {"Zipf closed form and cap", test_zipf_closed_form},
        {"unreachable hot share", test_unreachable_hot},
        {"path correlation", test_correlation},
        {"ratio and persist targets", test_ratio_persist},
        {"drift", test_drift},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_gen", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
