/* Tests of policy: the registry and the rules of each class, "NAME:key=value" parsing with every
 * error, typed values and defaults, the shared parameters, the path from policy to schedule, a
 * class outside the registry (modes, rules, per-layer hook), and the capabilities. */
#include "plan_fixture.h"
#include "sim/net/collective.h"

static MsPolicy *
parse_ok(const char *spec)
{
    GError *error = NULL;
    MsPolicy *p = ms_policy_parse(spec, &error);
    if (error) {
        fprintf(stderr, "\n  %s: %s\n", spec, error->message);
        g_clear_error(&error);
    }
    return p;
}

/* The shipped policies in registry order, with the online rules each chooses. */
static const struct {
    const char *name;
    MsDispatchOrder order;
    MsAllreduceGate gate;
} shipped[] = {
    {"fifo", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    {"concurrent", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    {"priority", MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_NONE},
    {"lina", MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A},
    {"schemoe", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    {"deepspeed", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    {"tutel", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    {"fastermoe", MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
};

static void
test_registry(void)
{
    const char *const *names = ms_policy_names();
    CU_ASSERT_EQUAL_FATAL(g_strv_length((char **)names), G_N_ELEMENTS(shipped));
    for (guint i = 0; names[i]; i++) {
        const MsPolicyClass *c = ms_policy_class(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_STRING_EQUAL(c->name, names[i]);
        CU_ASSERT_STRING_EQUAL(names[i], shipped[i].name);
        CU_ASSERT_EQUAL(c->rules.order, shipped[i].order);
        CU_ASSERT_EQUAL(c->rules.allreduce_gate, shipped[i].gate);
        g_autoptr(MsPolicy) p = parse_ok(names[i]);
        CU_ASSERT_PTR_NOT_NULL(p);
    }
    CU_ASSERT_PTR_NULL(ms_policy_class("lina2"));
    CU_ASSERT_STRING_EQUAL(ms_policy_common_params()[0].key, "a2a");
}

static void
test_values(void)
{
    g_autoptr(MsPolicy) lina = parse_ok(" lina : chunk = 16MiB, pack=2 ,placement=static ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lina);
    CU_ASSERT_STRING_EQUAL(ms_policy_name(lina), "lina");
    CU_ASSERT_STRING_EQUAL(ms_policy_spec(lina), "lina:chunk=16MiB,pack=2,placement=static");
    CU_ASSERT_EQUAL(ms_policy_get_bytes(lina, "chunk"), 16u << 20);
    CU_ASSERT_EQUAL(ms_policy_get_uint(lina, "pack"), 2);
    CU_ASSERT_EQUAL(ms_policy_get_uint(lina, "path"), 3);
    CU_ASSERT_STRING_EQUAL(ms_policy_get_choice(lina, "placement"), "static");
    CU_ASSERT_STRING_EQUAL(ms_policy_get_choice(lina, "weights"), "auto");
    CU_ASSERT_TRUE(ms_policy_given(lina, "pack"));
    CU_ASSERT_FALSE(ms_policy_given(lina, "path"));
    CU_ASSERT_FALSE(ms_policy_given(lina, "nonsense"));
    g_autoptr(MsPolicy) prio = parse_ok("priority");
    CU_ASSERT_EQUAL(ms_policy_get_bytes(prio, "chunk"), 30000000);
    g_autoptr(MsPolicy) sm = parse_ok("schemoe:r=4,compress=0.25,compress_cost=2ps,pipe=yes");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sm);
    CU_ASSERT_EQUAL(ms_policy_get_uint(sm, "r"), 4);
    CU_ASSERT_EQUAL(ms_policy_get_double(sm, "compress"), 0.25);
    MS_ASSERT_REL(ms_policy_get_seconds(sm, "compress_cost"), 2e-12, 1e-9);
    CU_ASSERT_TRUE(ms_policy_get_bool(sm, "pipe"));
    g_autoptr(MsPolicy) fifo = parse_ok("fifo:a2a=2dh,window=2,allreduce=hier");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fifo);
    CU_ASSERT_STRING_EQUAL(ms_policy_get_choice(fifo, "a2a"), "2dh");
    CU_ASSERT_EQUAL(ms_policy_get_uint(fifo, "window"), 2);
}

static void
test_parse_errors(void)
{
    static const struct {
        const char *spec;
        int code;
        const char *needle;
    } cases[] = {
        {"lna", MS_POLICY_ERROR_UNKNOWN,
         "unknown policy 'lna' (known: fifo, concurrent, priority, lina, schemoe, deepspeed, "
         "tutel, "
         "fastermoe)"},
        {":chunk=1MB", MS_POLICY_ERROR_UNKNOWN, "unknown policy ''"},
        {"lina:chunck=1MB", MS_POLICY_ERROR_PARAM,
         "policy lina: unknown parameter 'chunck' (lina takes: chunk, a2a_chunk, pack, path,"},
        {"fifo:chunk=1MB", MS_POLICY_ERROR_PARAM,
         "policy fifo: unknown parameter 'chunk' (fifo takes: a2a, window, allreduce)"},
        {"lina:chunk=1MB,chunk=2MB", MS_POLICY_ERROR_PARAM,
         "policy lina: parameter 'chunk' given twice"},
        {"lina:chunk", MS_POLICY_ERROR_PARAM, "policy lina: 'chunk' is not key=value"},
        {"lina:chunk=", MS_POLICY_ERROR_PARAM, "policy lina: 'chunk=' is not key=value"},
        {"lina:chunk=1MB,", MS_POLICY_ERROR_PARAM, "policy lina: '' is not key=value"},
        {"lina:chunk=30", MS_POLICY_ERROR_VALUE, "policy lina: chunk=30: size '30' has no unit"},
        {"priority:chunk=1KB", MS_POLICY_ERROR_VALUE,
         "policy priority: chunk=1KB: 1KB is out of range [65536 B, 1000000000000 B]"},
        {"schemoe:r=0", MS_POLICY_ERROR_VALUE, "policy schemoe: r=0: "},
        {"schemoe:compress=1.5", MS_POLICY_ERROR_VALUE, "policy schemoe: compress=1.5: "},
        {"schemoe:compress_cost=2", MS_POLICY_ERROR_VALUE, "policy schemoe: compress_cost=2: "},
        {"schemoe:compress_cost=2ms", MS_POLICY_ERROR_VALUE, "is out of range (at most 1e-06 s)"},
        {"schemoe:pipe=maybe", MS_POLICY_ERROR_VALUE,
         "policy schemoe: pipe=maybe: 'maybe' is not a boolean"},
        {"lina:placement=fancy", MS_POLICY_ERROR_VALUE,
         "policy lina: placement=fancy: 'fancy' is not one of dynamic, static"},
        {"lina:path=5", MS_POLICY_ERROR_VALUE, "policy lina: path=5: "},
        {"concurrent:a2a=ring", MS_POLICY_ERROR_VALUE, "'ring' is not one of direct, 2dh, pipe"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsPolicy) p = ms_policy_parse(cases[i].spec, &error);
        CU_ASSERT_PTR_NULL(p);
        if (error && strstr(error->message, cases[i].needle) == NULL) {
            fprintf(stderr, "\n  case %u (%s): '%s'\n", i, cases[i].spec, error->message);
        }
        MS_ASSERT_ERROR(error, MS_POLICY_ERROR, cases[i].code, cases[i].needle);
    }
}

static const char model_text[] = "[model]\nformat = 1\nname = p8\nlayers = 2\nd_model = 64\n"
                                 "d_ffn = 128\nexperts = 8\ntop_k = 2\ntop_k_infer = 1\n"
                                 "heads = 4\nseq_len = 16\ntokens_per_gpu = 16\n";

static guint32
counts(guint layer, guint src, guint e)
{
    return 4;
}

static void
test_configure_and_plan(void)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    g_autoptr(MsRouting) r = fx_routing(2, 8, 8, 2, counts);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    g_autoptr(MsPolicy) p = parse_ok("concurrent:a2a=pipe,window=3,allreduce=hier");
    MsPlanConfig cfg;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_policy_configure(p, &in, &cfg, &error));
    CU_ASSERT_EQUAL(cfg.a2a_algo, MS_COLL_ALGO_PIPE);
    CU_ASSERT_EQUAL(cfg.window, 3);
    CU_ASSERT_EQUAL(cfg.allreduce_algo, MS_COLL_ALGO_HIER);
    CU_ASSERT_TRUE(cfg.split_allreduce);
    CU_ASSERT_STRING_EQUAL(cfg.policy, "concurrent");
    ms_plan_config_clear(&cfg);
    g_autoptr(MsSchedule) s = ms_policy_plan(p, &in, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(s), "concurrent");
    MsDispatchRules rules = ms_schedule_rules(s);
    CU_ASSERT_EQUAL(rules.order, MS_DISPATCH_ORDER_READY);
    CU_ASSERT_EQUAL(rules.allreduce_gate, MS_ALLREDUCE_GATE_NONE);
    /* The rules come from the class: lina's are written into its schedules. */
    g_autoptr(MsPolicy) lina = parse_ok("lina:pack=1");
    g_autoptr(MsSchedule) ls = ms_policy_plan(lina, &in, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
    rules = ms_schedule_rules(ls);
    CU_ASSERT_EQUAL(rules.order, MS_DISPATCH_ORDER_PRIORITY);
    CU_ASSERT_EQUAL(rules.allreduce_gate, MS_ALLREDUCE_GATE_A2A);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "policy"),
                           "concurrent:a2a=pipe,window=3,allreduce=hier");
    g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, -2);
    MsCollInfo c;
    ms_schedule_coll(s, g_array_index(fd, guint32, 0), &c);
    CU_ASSERT_EQUAL(c.algo, MS_COLL_ALGO_PIPE);
    CU_ASSERT_EQUAL(c.window, 3);
    /* A routing of the wrong shape is refused before any policy work. */
    in.mode = MS_PLAN_INFER;
    CU_ASSERT_PTR_NULL(ms_policy_plan(p, &in, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH, "top_k_infer");
}

/* A class outside the registry, as a new policy starts: training only, priority order with
 * Lina's gate, every MoE layer in `k` pipelined chunks. */
static const MsParamSpec k_params[] = {
    {"k", MS_PARAM_UINT, "2", 1, 8, NULL, "chunks per MoE layer"},
    {NULL},
};

static void
k_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    out->chunks = ms_policy_get_uint(policy, "k");
    out->pipeline = TRUE;
}

static const MsPolicyClass trainonly = {
    .name = "trainonly",
    .summary = "a test class",
    .params = k_params,
    .modes = MS_POLICY_MODE(MS_PLAN_TRAIN),
    .rules = {MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A},
    .moe_layer = k_layer,
};

static void
test_class_and_capabilities(void)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    g_autoptr(MsRouting) r = fx_routing(2, 8, 8, 2, counts);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    GError *error = NULL;
    g_autoptr(MsPolicy) p = ms_policy_new(&trainonly, "k=3", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_EQUAL(ms_policy_get_class(p), &trainonly);
    CU_ASSERT_STRING_EQUAL(ms_policy_spec(p), "trainonly:k=3");
    CU_ASSERT_TRUE(ms_policy_plans_mode(p, MS_PLAN_TRAIN));
    CU_ASSERT_FALSE(ms_policy_plans_mode(p, MS_PLAN_INFER));
    CU_ASSERT_EQUAL(ms_policy_path_history(p, MS_PLAN_TRAIN), 0);
    g_autoptr(MsSchedule) s = ms_policy_plan(p, &in, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(s), "trainonly");
    MsDispatchRules rules = ms_schedule_rules(s);
    CU_ASSERT_EQUAL(rules.order, MS_DISPATCH_ORDER_PRIORITY);
    CU_ASSERT_EQUAL(rules.allreduce_gate, MS_ALLREDUCE_GATE_A2A);
    for (gint layer = 0; layer < 2; layer++) {
        g_autoptr(GArray) fd = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, layer);
        CU_ASSERT_EQUAL(fd->len, 3);
        CU_ASSERT_EQUAL(fx_count_ops(s, 0, layer, MS_ROLE_EXPERT, MS_PHASE_FORWARD), 3);
    }
    in.mode = MS_PLAN_INFER;
    g_autoptr(MsRouting) r1 = fx_routing(2, 8, 8, 1, counts);
    in.routing = r1;
    MsPlanConfig cfg;
    CU_ASSERT_FALSE(ms_policy_configure(p, &in, &cfg, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy trainonly does not plan inference (mode infer)");
    CU_ASSERT_PTR_NULL(ms_policy_new(&trainonly, "k=9", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "policy trainonly: k=9:");
    /* The shipped policies plan both modes but FasterMoE (a training system); only Lina's dynamic
     * inference needs token paths. */
    for (const char *const *name = ms_policy_names(); *name; name++) {
        g_autoptr(MsPolicy) q = parse_ok(*name);
        CU_ASSERT_TRUE(ms_policy_plans_mode(q, MS_PLAN_TRAIN));
        CU_ASSERT_EQUAL(ms_policy_plans_mode(q, MS_PLAN_INFER), strcmp(*name, "fastermoe") != 0);
        CU_ASSERT_EQUAL(ms_policy_path_history(q, MS_PLAN_TRAIN), 0);
        CU_ASSERT_EQUAL(ms_policy_path_history(q, MS_PLAN_INFER), strcmp(*name, "lina") ? 0 : 3);
    }
    g_autoptr(MsPolicy) two = parse_ok("lina:path=2");
    CU_ASSERT_EQUAL(ms_policy_path_history(two, MS_PLAN_INFER), 2);
    g_autoptr(MsPolicy) fixed = parse_ok("lina:placement=static");
    CU_ASSERT_EQUAL(ms_policy_path_history(fixed, MS_PLAN_INFER), 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"registry", test_registry},
        {"values and defaults", test_values},
        {"every parse error", test_parse_errors},
        {"configure and plan", test_configure_and_plan},
        {"a class of its own, and capabilities", test_class_and_capabilities},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"policy", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
