/* Tests of node-limited routing: the header's node limit (text keys, the binary form's 0x03
 * record, its checks), readers and writers refusing a token that reaches too many nodes with
 * the file and line, the generator's DeepSeek-V3 selection against closed forms (max_nodes=1
 * keeps every token on one node; top-1 choices follow the popularity exactly; uniform popularity
 * spreads evenly over nodes and experts), and the nodes-reached statistics. */
#include "ms_test.h"
#include "traces/trace_gen.h"
#include "traces/trace_reader.h"
#include "traces/trace_stats.h"
#include "traces/trace_writer.h"

/* Lines 1-7: 8 experts on 4 nodes (2 each), a token's 2 experts on one of them. */
#define HEADER "moe-trace 1\nexperts 8\nlayers 2\nranks 1\ntop_k 2\nexpert_nodes 4\nmax_nodes 1\n"

static MsTraceReader *
open_bytes(const void *data, gsize len, const char *source, GError **error)
{
    g_autoptr(GBytes) bytes = g_bytes_new(data, len);
    return ms_trace_reader_open_bytes(bytes, source, error);
}

/* Reads every iteration; returns the first error (NULL when the trace is good). */
static GError *
read_all(const void *data, gsize len, const char *source, guint64 *tokens)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = open_bytes(data, len, source, &error);
    *tokens = 0;
    if (r == NULL) {
        return error;
    }
    MsRouting *it = NULL;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        *tokens += ms_routing_total_tokens(it);
        ms_routing_free(it);
    }
    return error;
}

static void
test_header(void)
{
    const char *text = HEADER "t 0 0 0 0 1 4 5\n";
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = open_bytes(text, strlen(text), "t.trace", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const MsTraceHeader *h = ms_trace_reader_header(r);
    CU_ASSERT_EQUAL(h->expert_nodes, 4);
    CU_ASSERT_EQUAL(h->max_nodes, 1);

    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"moe-trace 1\nexperts 8\nlayers 2\nranks 1\ntop_k 2\nmax_nodes 2\nt 0 0 0 0 1 2 3\n",
         MS_TRACE_ERROR_HEADER,
         "t.trace:7: max_nodes is given without expert_nodes: a node limit needs both"},
        {"moe-trace 1\nexperts 8\nlayers 2\nranks 1\ntop_k 2\nexpert_nodes 3\nmax_nodes 2\n",
         MS_TRACE_ERROR_LIMIT, "expert_nodes = 3 does not divide experts = 8 into equal blocks"},
        {"moe-trace 1\nexperts 8\nlayers 2\nranks 1\ntop_k 2\nexpert_nodes 4\nmax_nodes 5\n",
         MS_TRACE_ERROR_LIMIT, "max_nodes = 5 exceeds expert_nodes = 4"},
        {"moe-trace 1\nexperts 8\nlayers 2\nranks 1\ntop_k 3\nexpert_nodes 4\nmax_nodes 1\n",
         MS_TRACE_ERROR_LIMIT,
         "top_k = 3 experts do not fit on max_nodes = 1 nodes of 2 experts each"},
        {"moe-trace 1\nexperts 8\nexpert_nodes 0\n", MS_TRACE_ERROR_LIMIT,
         "t.trace:3: expert_nodes = 0 is outside 1..65536"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(MsTraceReader) bad =
            open_bytes(cases[i].text, strlen(cases[i].text), "t.trace", &error);
        CU_ASSERT_PTR_NULL(bad);
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, cases[i].code, cases[i].needle);
    }
}

/* A token whose experts span 2 nodes is refused wherever it is read or written. */
static void
test_violation(void)
{
    guint64 tokens = 0;
    const char *good = HEADER "t 0 0 0 0 1 2 3\nt 0 1 0 6 7 0 1\n";
    CU_ASSERT_PTR_NULL(read_all(good, strlen(good), "t.trace", &tokens));
    CU_ASSERT_EQUAL(tokens, 2);
    /* Line 10, layer 0: experts 0 and 2, on nodes 0 and 1. */
    const char *bad = HEADER "t 0 0 0 0 1 2 3\nt 0 1 0 6 7 0 1\nt 0 2 0 0 2 4 5\n";
    GError *error = read_all(bad, strlen(bad), "t.trace", &tokens);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                    "t.trace:10: layer 0: the token's experts sit on 2 nodes, more than max_nodes "
                    "= 1 (expert_nodes = 4, 2 experts each)");
    /* Count records cannot be checked against the limit: they say nothing of single tokens. */
    const char *counts = HEADER "c 0 0 0 0 1\nc 0 0 0 2 1\nc 0 1 0 4 1\nc 0 1 0 6 1\n";
    CU_ASSERT_PTR_NULL(read_all(counts, strlen(counts), "t.trace", &tokens));

    /* The writer refuses it too, and a good token round-trips through both forms. */
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 8, 2, 1, 2);
    h.expert_nodes = 4;
    h.max_nodes = 1;
    for (int f = 0; f < 2; f++) {
        MsTraceFormat format = f ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT;
        g_autofree char *path = g_build_filename(ms_test_tmpdir(), f ? "n.bin" : "n.trace", NULL);
        g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, format, &h, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        const guint32 ok[] = {0, 1, 7, 6}, wide[] = {0, 1, 2, 6};
        CU_ASSERT_TRUE(ms_trace_writer_write_token(w, 0, 0, 0, ok, &error));
        CU_ASSERT_FALSE(ms_trace_writer_write_token(w, 0, 1, 0, wide, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                        "layer 1: the token's experts sit on 2 nodes, more than max_nodes = 1");
        CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
        g_autofree char *data = NULL;
        gsize len = 0;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
        g_autoptr(MsTraceReader) r = open_bytes(data, len, path, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_TRUE(ms_trace_header_equal(ms_trace_reader_header(r), &h));
        if (f == 0) {
            CU_ASSERT_PTR_NOT_NULL(strstr(data, "\nexpert_nodes 4\nmax_nodes 1\n"));
        }
    }
}

/* The binary form's node limit: tag 0x03 right after the generator, nowhere else. */
static void
test_binary(void)
{
    /* magic, version 1, experts 8, layers 1, ranks 1, top_k 2, tokens 0, generator "", then
     * 0x03 expert_nodes 4 max_nodes 1, a token (iteration 0, id 0, rank 0, ids 0 and 1 packed
     * in 3 bits each: 0b001000 = 0x08), the end record (1 record). */
    static const char good[] = "\x89MOE\r\n\x1a\n\x01\0\0\0\x08\x01\x01\x02\x00\x00"
                               "\x03\x04\x01"
                               "\x02\x00\x00\x00\x08"
                               "\x00\x01";
    guint64 tokens = 0;
    CU_ASSERT_PTR_NULL(read_all(good, sizeof(good) - 1, "t.bin", &tokens));
    CU_ASSERT_EQUAL(tokens, 1);
    /* Ids 0 and 2 (0b010000 = 0x10) sit on nodes 0 and 1. */
    char wide[sizeof(good)];
    memcpy(wide, good, sizeof(good));
    wide[25] = 0x10;
    GError *error = read_all(wide, sizeof(good) - 1, "t.bin", &tokens);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                    "t.bin:offset 21: layer 0: the token's experts sit on 2 nodes");
    /* The limit among the records, and a file ending inside it. */
    static const char late[] = "\x89MOE\r\n\x1a\n\x01\0\0\0\x08\x01\x01\x02\x00\x00"
                               "\x02\x00\x00\x00\x08"
                               "\x03\x04\x01";
    error = read_all(late, sizeof(late) - 1, "t.bin", &tokens);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_FORMAT,
                    "t.bin:offset 23: node limit (tag 0x03) among the records");
    error = read_all(good, 19, "t.bin", &tokens);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_TRUNCATED,
                    "t.bin:offset 19: file ends inside the node limit");
}

static MsTraceGen *
gen_of(const char *spec)
{
    MsTraceGenParams p;
    GError *error = NULL;
    if (!ms_trace_gen_params_parse(spec, &p, &error)) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_clear_error(&error);
        return NULL;
    }
    MsTraceGen *g = ms_trace_gen_new(&p, &error);
    CU_ASSERT_PTR_NULL(error);
    return g;
}

static void
test_gen_params(void)
{
    MsTraceGenParams p;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_params_parse(
        "experts=256,top_k=8,expert_nodes=8,max_nodes=4,ranks=4", &p, &error));
    CU_ASSERT_EQUAL(p.expert_nodes, 8);
    CU_ASSERT_EQUAL(p.max_nodes, 4);
    g_autofree char *spec = ms_trace_gen_params_to_spec(&p);
    CU_ASSERT_TRUE(g_str_has_suffix(spec, ",records=tokens,expert_nodes=8,max_nodes=4"));
    MsTraceGenParams back;
    CU_ASSERT_TRUE(ms_trace_gen_params_parse(spec, &back, &error));
    CU_ASSERT_EQUAL(back.expert_nodes, 8);
    CU_ASSERT_EQUAL(back.max_nodes, 4);
    g_autoptr(MsTraceGen) g = ms_trace_gen_new(&p, &error);
    CU_ASSERT_EQUAL(ms_trace_gen_header(g)->expert_nodes, 8);
    CU_ASSERT_EQUAL(ms_trace_gen_header(g)->max_nodes, 4);
    /* Without a limit the spec, and so every trace generated before, is unchanged. */
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("", &p, &error));
    g_autofree char *plain = ms_trace_gen_params_to_spec(&p);
    CU_ASSERT_PTR_NULL(strstr(plain, "nodes"));

    static const struct {
        const char *spec;
        int code;
        const char *needle;
    } cases[] = {
        {"max_nodes=2", MS_TRACE_GEN_ERROR_CONFLICT,
         "node-limited routing: max_nodes is given without expert_nodes"},
        {"expert_nodes=2", MS_TRACE_GEN_ERROR_CONFLICT, "expert_nodes is given without"},
        {"experts=16,expert_nodes=3,max_nodes=1", MS_TRACE_GEN_ERROR_CONFLICT,
         "expert_nodes = 3 does not divide experts = 16"},
        {"experts=16,top_k=4,expert_nodes=8,max_nodes=1", MS_TRACE_GEN_ERROR_CONFLICT,
         "top_k = 4 experts do not fit on max_nodes = 1 nodes of 2 experts each"},
        {"expert_nodes=4,max_nodes=8", MS_TRACE_GEN_ERROR_CONFLICT,
         "max_nodes = 8 exceeds expert_nodes = 4"},
        {"expert_nodes=4,max_nodes=0", MS_TRACE_GEN_ERROR_VALUE, "max_nodes=0: 0 out of range"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        CU_ASSERT_FALSE(ms_trace_gen_params_parse(cases[i].spec, &p, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, cases[i].code, cases[i].needle);
    }
}

/* Generates one iteration of spec and returns the loads of each layer, [layer][expert] (caller
 * frees; each layer has its own popularity order), with the most nodes a token reached. */
static guint64 *
loads_of(const char *spec, guint *max_reached, guint64 *assignments)
{
    g_autoptr(MsTraceGen) g = gen_of(spec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const MsTraceHeader *h = ms_trace_gen_header(g);
    MsRouting *r = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(g, &r, NULL));
    guint64 *loads = g_new0(guint64, (gsize)h->layers * h->experts);
    *max_reached = 0;
    *assignments = 0;
    guint32 ids[MS_TRACE_MAX_TOP_K];
    for (guint32 l = 0; l < h->layers; l++) {
        for (guint32 e = 0; e < h->experts; e++) {
            loads[(gsize)l * h->experts + e] = ms_routing_expert_load(r, l, e);
            *assignments += ms_routing_expert_load(r, l, e);
        }
        for (guint32 rank = 0; rank < h->ranks; rank++) {
            for (guint32 t = 0; t < ms_routing_n_tokens(r, rank); t++) {
                const guint16 *e = ms_routing_token_experts(r, rank, t, l);
                for (guint i = 0; i < h->top_k; i++) {
                    ids[i] = e[i];
                }
                guint n = ms_trace_nodes_reached(h->experts, h->expert_nodes, ids, h->top_k);
                *max_reached = MAX(*max_reached, n);
            }
        }
    }
    ms_routing_free(r);
    return loads;
}

static int
cmp_desc(const void *a, const void *b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
    return x > y ? -1 : x < y;
}

static void
test_gen_closed_forms(void)
{
    guint reached = 0;
    guint64 total = 0;
    /* max_nodes = 1: every token's 4 experts on one of the 8 nodes (8 experts each). */
    g_autofree guint64 *one = loads_of("experts=64,top_k=4,expert_nodes=8,max_nodes=1,ranks=4,"
                                       "tokens=512,layers=4,corr=0.5",
                                       &reached, &total);
    CU_ASSERT_EQUAL(reached, 1);

    /* Top-1: the best affinity u^(1/p) falls on rank i with probability p_i exactly, and the
     * node limit cannot change a top-1 choice (the best node holds the best expert). Zipf 1
     * over 8 experts: p_i = (1 / (i+1)) / H_8; 4 ranks x 16384 tokens = 65536 choices a layer,
     * each layer's sorted shares within 5 standard errors. */
    g_autofree guint64 *top1 =
        loads_of("experts=8,top_k=1,expert_nodes=4,max_nodes=1,ranks=4,tokens=16384,layers=3",
                 &reached, &total);
    CU_ASSERT_EQUAL(reached, 1);
    double harmonic = 0, per_layer = (double)total / 3;
    for (guint i = 0; i < 8; i++) {
        harmonic += 1.0 / (i + 1);
    }
    for (guint l = 0; l < 3; l++) {
        qsort(top1 + l * 8, 8, sizeof(guint64), cmp_desc);
        for (guint i = 0; i < 8; i++) {
            double p = 1.0 / (i + 1) / harmonic, share = (double)top1[l * 8 + i] / per_layer;
            double se = sqrt(p * (1 - p) / per_layer);
            if (fabs(share - p) > 5 * se) {
                fprintf(stderr, "\n  layer %u rank %u: share %.5f, expected %.5f (se %.5f)\n", l, i,
                        share, p, se);
                CU_FAIL("top-1 share off the Zipf law");
            }
        }
    }

    /* Uniform popularity, DeepSeek-V3's shape scaled down (64 experts on 8 nodes, top-8, at
     * most 4 nodes): by symmetry every expert takes 1/64 of the choices and every node 1/8;
     * 8 ranks x 1024 tokens x 2 layers x 8 = 131072 choices, each share within 5 standard
     * errors (binomial; the choices of one token are not independent, which only narrows the
     * node shares). */
    g_autofree guint64 *flat = loads_of("experts=64,top_k=8,expert_nodes=8,max_nodes=4,zipf=0,"
                                        "ranks=8,tokens=1024,layers=2",
                                        &reached, &total);
    CU_ASSERT(reached <= 4 && reached >= 2);
    for (guint e = 0; e < 64; e++) {
        double share = (double)(flat[e] + flat[64 + e]) / (double)total, p = 1.0 / 64;
        CU_ASSERT(fabs(share - p) < 5 * sqrt(p * (1 - p) / (double)total));
    }
    for (guint node = 0; node < 8; node++) {
        guint64 sum = 0;
        for (guint e = node * 8; e < node * 8 + 8; e++) {
            sum += flat[e] + flat[64 + e];
        }
        double share = (double)sum / (double)total;
        CU_ASSERT(fabs(share - 0.125) < 5 * sqrt(0.125 * 0.875 / (double)total));
    }
}

/* A small routing with known spans: 8 experts on 4 nodes, top-2, 1 layer. */
static void
test_stats(void)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 8, 1, 1, 2);
    GError *error = NULL;
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, &error);
    const guint32 paths[][2] = {{0, 1}, {2, 3}, {0, 7}, {4, 6}, {5, 4}};
    for (guint t = 0; t < G_N_ELEMENTS(paths); t++) {
        CU_ASSERT_TRUE(ms_routing_add_token(r, t, 0, paths[t], &error));
    }
    CU_ASSERT_TRUE_FATAL(ms_routing_seal(r, &error));
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(&h);
    CU_ASSERT_EQUAL(ms_trace_stats_expert_nodes(s), 0);
    guint n = 0;
    CU_ASSERT_PTR_NULL(ms_trace_stats_nodes_histogram(s, &n));
    CU_ASSERT_FALSE(ms_trace_stats_set_expert_nodes(s, 3, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "expert nodes = 3 does not divide experts = 8");
    CU_ASSERT_TRUE(ms_trace_stats_set_expert_nodes(s, 4, &error));
    ms_trace_stats_add(s, r);
    /* Spans: {0,1} node 0; {2,3} node 1; {0,7} nodes 0, 3; {4,6} nodes 2, 3; {5,4} node 2. */
    MsTraceLayerStats l;
    ms_trace_stats_layer(s, 0, &l);
    CU_ASSERT_TRUE(l.has_nodes);
    CU_ASSERT_DOUBLE_EQUAL(l.nodes_mean, 7.0 / 5, 1e-12);
    CU_ASSERT_EQUAL(l.nodes_max, 2);
    const guint64 *hist = ms_trace_stats_nodes_histogram(s, &n);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    CU_ASSERT_EQUAL(hist[0], 0);
    CU_ASSERT_EQUAL(hist[1], 3);
    CU_ASSERT_EQUAL(hist[2], 2);
    CU_ASSERT_EQUAL(hist[3] + hist[4], 0);
    /* A trace that declares its layout is counted without being asked. */
    h.expert_nodes = 4;
    h.max_nodes = 2;
    g_autoptr(MsTraceStats) declared = ms_trace_stats_new(&h);
    CU_ASSERT_EQUAL(ms_trace_stats_expert_nodes(declared), 4);
}

static void
test_cli(void)
{
    g_autofree char *out = NULL, *err = NULL;
    const char *info[] = {"trace", "info",
                          "gen:experts=32,top_k=4,expert_nodes=4,max_nodes=1,ranks=2,tokens=64,"
                          "layers=2",
                          NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(info, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "nodes reached by a token's top_k experts (experts on 4 "
                                       "nodes, 8 each, max_nodes 1 declared)"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(out, "tokens x layers reaching 1, 2, ... nodes: 1.0000 0.0000 0.0000 0.0000"));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    const char *json[] = {"trace", "info",   "sample:tiny", "--expert-nodes",
                          "2",     "--json", "-",           NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(json, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"nodes_reached\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"nodes_mean\""));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    const char *bad[] = {"trace", "info", "sample:tiny", "--expert-nodes", "3", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(bad, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--expert-nodes: expert nodes = 3 does not divide"));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "cli.trace", NULL);
    const char *gen[] = {"trace", "gen",   "--experts", "16", "--expert-nodes", "4", "--max-nodes",
                         "2",     "--out", path,        NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(gen, &out, &err), 0);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nexpert_nodes 4\nmax_nodes 2\n"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"header keys and their checks", test_header},
        {"a token beyond the limit, read and written", test_violation},
        {"binary node limit record", test_binary},
        {"generator keys and errors", test_gen_params},
        {"generator closed forms", test_gen_closed_forms},
        {"nodes reached", test_stats},
        {"moesim trace info and gen", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_nodes", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
