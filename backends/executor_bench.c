/* executor_bench: the microbenchmark spec (defaults, option parsing, checks, JSON form), the pairs
 * measured per link class, the expert kernel shapes, NCCL's settings as environment variables and
 * nccl-tests' bandwidth figures. */
#include "executor_bench.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "sim/base/json_input.h"
#include "sim/base/json_output.h"
#include "sim/base/units.h"
#include "sim/calib/meas_csv.h"
#include "sim/net/collective.h"

G_DEFINE_QUARK(ms_bench_error_quark, ms_bench_error)

static const char *const what_names[] = {"p2p",    "alltoall",    "allreduce", "gemm",
                                         "launch", "concurrency", "overlap"};

static void
pair_clear(gpointer data)
{
    g_free(((MsBenchPair *)data)->label);
}

MsBenchSpec *
ms_bench_spec_new(void)
{
    MsBenchSpec *s = g_new0(MsBenchSpec, 1);
    s->what = MS_BENCH_ALL;
    s->min_bytes = 8;
    s->max_bytes = 128u << 20;
    s->step_factor = 2;
    s->iters = 20;
    s->warmup = 5;
    s->dtype = g_strdup("bf16");
    s->world = s->ranks_per_node = 1;
    s->d_model = 4096;
    s->d_ffn = 14336;
    s->gated = TRUE;
    s->tokens = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 t = 1; t <= 8192; t *= 2) {
        g_array_append_val(s->tokens, t);
    }
    s->pairs = g_array_new(FALSE, FALSE, sizeof(MsBenchPair));
    g_array_set_clear_func(s->pairs, pair_clear);
    s->concurrency_sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint64 v = 1u << 20; v <= (64u << 20); v *= 4) {
        g_array_append_val(s->concurrency_sizes, v);
    }
    s->background_bytes = 25u << 20;
    return s;
}

void
ms_bench_spec_free(MsBenchSpec *spec)
{
    if (spec == NULL) {
        return;
    }
    g_free(spec->dtype);
    g_array_unref(spec->tokens);
    g_array_unref(spec->pairs);
    g_array_unref(spec->concurrency_sizes);
    g_free(spec);
}

gboolean
ms_bench_spec_error(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error_literal(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, msg);
    return FALSE;
}

gboolean
ms_bench_parse_what(const char *list, guint32 *what, GError **error)
{
    g_auto(GStrv) items = g_strsplit(list, ",", -1);
    guint32 w = 0;
    for (guint i = 0; items[i]; i++) {
        const char *item = g_strstrip(items[i]);
        guint k = 0;
        while (k < G_N_ELEMENTS(what_names) && strcmp(item, what_names[k]) != 0) {
            k++;
        }
        if (strcmp(item, "all") == 0) {
            w |= MS_BENCH_ALL;
        } else if (k < G_N_ELEMENTS(what_names)) {
            w |= 1u << k;
        } else {
            return ms_bench_spec_error(error,
                                       "--what: unknown benchmark '%s' (p2p, alltoall, allreduce, "
                                       "gemm, launch, concurrency, overlap or all)",
                                       item);
        }
    }
    if (w == 0) {
        return ms_bench_spec_error(error, "--what: no benchmark named in '%s'", list);
    }
    *what = w;
    return TRUE;
}

/* The concurrency benchmark's sizes and NCCL's settings. */
static gboolean
check_concurrency(const MsBenchSpec *s, GError **error)
{
    GArray *c = s->concurrency_sizes;
    if ((s->what & MS_BENCH_CONCURRENCY) && c->len == 0) {
        return ms_bench_spec_error(error,
                                   "concurrency sizes: the benchmark needs at least one size");
    }
    for (guint k = 0; k < c->len; k++) {
        guint64 v = g_array_index(c, guint64, k);
        if (v == 0 || v > MS_BENCH_MAX_BYTES || (k && v <= g_array_index(c, guint64, k - 1)) ||
            k >= MS_BENCH_MAX_POINTS) {
            return ms_bench_spec_error(error,
                                       "concurrency sizes: %" G_GUINT64_FORMAT
                                       " (item %u) is not increasing within 1 to %" G_GUINT64_FORMAT
                                       " bytes",
                                       v, k + 1, MS_BENCH_MAX_BYTES);
        }
    }
    if (s->background_bytes < 2 || s->background_bytes > MS_BENCH_MAX_BYTES) {
        return ms_bench_spec_error(error,
                                   "background allreduce: %" G_GUINT64_FORMAT
                                   " bytes is not within 2 to %" G_GUINT64_FORMAT
                                   " (one element or more)",
                                   s->background_bytes, MS_BENCH_MAX_BYTES);
    }
    if (s->channels > MS_MEAS_MAX_CHANNELS) {
        return ms_bench_spec_error(error, "channels: %u is not within 1 to %u (0: NCCL's own)",
                                   s->channels, MS_MEAS_MAX_CHANNELS);
    }
    if (s->qps > MS_MEAS_MAX_QPS) {
        return ms_bench_spec_error(
            error,
            "queue pairs per connection: %u is not within 1 to %u (0: NCCL's "
            "default)",
            s->qps, MS_MEAS_MAX_QPS);
    }
    return TRUE;
}

static gboolean
check_sweep(const MsBenchSpec *s, GError **error)
{
    if (s->min_bytes == 0 || s->min_bytes > s->max_bytes || s->max_bytes > MS_BENCH_MAX_BYTES) {
        return ms_bench_spec_error(error,
                                   "sizes: %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                                   " bytes is not a range within 1 to %" G_GUINT64_FORMAT,
                                   s->min_bytes, s->max_bytes, MS_BENCH_MAX_BYTES);
    }
    if (!(s->step_factor > 1) || s->step_factor > 1024) {
        return ms_bench_spec_error(error, "step factor: %g is not in (1, 1024]", s->step_factor);
    }
    g_autoptr(GArray) sizes = ms_bench_sizes(s);
    if (sizes->len > MS_BENCH_MAX_POINTS) {
        return ms_bench_spec_error(error, "sizes: more than %u steps", MS_BENCH_MAX_POINTS);
    }
    return TRUE;
}

gboolean
ms_bench_spec_check(const MsBenchSpec *s, GError **error)
{
    if (s->what == 0 || (s->what & ~(guint32)MS_BENCH_ALL)) {
        return ms_bench_spec_error(error, "what: 0x%x names no known benchmark", s->what);
    }
    if (s->iters == 0 || s->iters > MS_BENCH_MAX_ITERS || s->warmup > MS_BENCH_MAX_ITERS) {
        return ms_bench_spec_error(error, "iterations: %u (warm-up %u) not in 1 to %u", s->iters,
                                   s->warmup, MS_BENCH_MAX_ITERS);
    }
    if (g_strcmp0(s->dtype, "bf16") != 0 && g_strcmp0(s->dtype, "fp16") != 0) {
        return ms_bench_spec_error(error, "dtype: '%s' is not bf16 or fp16", s->dtype);
    }
    if (s->world == 0 || s->ranks_per_node == 0 || s->ranks_per_node > s->world) {
        return ms_bench_spec_error(error, "ranks: %u with %u per node", s->world,
                                   s->ranks_per_node);
    }
    if (s->d_model == 0 || s->d_ffn == 0 || s->d_model > MS_BENCH_MAX_DIM ||
        s->d_ffn > MS_BENCH_MAX_DIM) {
        return ms_bench_spec_error(error,
                                   "expert: d_model %" G_GUINT64_FORMAT ", d_ffn %" G_GUINT64_FORMAT
                                   " not in 1 to %u",
                                   s->d_model, s->d_ffn, MS_BENCH_MAX_DIM);
    }
    if ((s->what & (MS_BENCH_GEMM | MS_BENCH_OVERLAP)) && s->tokens->len == 0) {
        return ms_bench_spec_error(error, "tokens: the GEMM sweep needs at least one token count");
    }
    for (guint k = 0; k < s->tokens->len; k++) {
        guint32 t = g_array_index(s->tokens, guint32, k);
        if (t == 0 || t > MS_BENCH_MAX_TOKENS ||
            (k && t <= g_array_index(s->tokens, guint32, k - 1))) {
            return ms_bench_spec_error(error,
                                       "tokens: %u (item %u) is not increasing within 1 to %u", t,
                                       k + 1, MS_BENCH_MAX_TOKENS);
        }
    }
    for (guint k = 0; k < s->pairs->len; k++) {
        const MsBenchPair *p = &g_array_index(s->pairs, MsBenchPair, k);
        if (p->a >= s->world || p->b >= s->world || p->a == p->b) {
            return ms_bench_spec_error(error, "pair %u: ranks %u and %u of %u", k, p->a, p->b,
                                       s->world);
        }
    }
    return check_sweep(s, error) && check_concurrency(s, error);
}

GArray *
ms_bench_sizes(const MsBenchSpec *spec)
{
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
    guint64 v = spec->min_bytes;
    while (v && v <= spec->max_bytes && sizes->len <= MS_BENCH_MAX_POINTS) {
        g_array_append_val(sizes, v);
        guint64 next = (guint64)((double)v * spec->step_factor);
        v = next > v ? next : v + 1;
    }
    return sizes;
}

/* --- NCCL's settings --- */

#define MIN_CHANNELS "NCCL_MIN_NCHANNELS"
#define MAX_CHANNELS "NCCL_MAX_NCHANNELS"
#define QPS "NCCL_IB_QPS_PER_CONNECTION"
/* NCCL's older names of the channel bounds (graph/connect.cc: NCHANNELS overrides them). */
static const char *const legacy[] = {"NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS"};

/* A count in [1, max] from variable name (set), into out. */
static gboolean
env_count(const char *name, const char *value, guint max, guint32 *out, GError **error)
{
    guint64 v = 0;
    if (!ms_parse_uint(value, 1, max, &v, NULL)) {
        return ms_bench_spec_error(error, "environment: %s='%s' is not a count from 1 to %u", name,
                                   value, max);
    }
    *out = (guint32)v;
    return TRUE;
}

gboolean
ms_bench_nccl_env(MsBenchSpec *spec, const char *const *envp, GError **error)
{
    g_auto(GStrv) own = envp ? NULL : g_get_environ();
    char **env = envp ? (char **)envp : own;
    if (spec->channels == 0) {
        for (guint k = 0; k < G_N_ELEMENTS(legacy); k++) {
            const char *v = g_environ_getenv(env, legacy[k]);
            if (v) {
                return ms_bench_spec_error(
                    error,
                    "environment: %s='%s' bounds NCCL's channels under its older "
                    "name: give --channels N (which sets " MIN_CHANNELS " and " MAX_CHANNELS
                    " alike) so that the rows record it",
                    legacy[k], v);
            }
        }
        const char *lo = g_environ_getenv(env, MIN_CHANNELS);
        const char *hi = g_environ_getenv(env, MAX_CHANNELS);
        guint32 a = 0, b = 0;
        if ((lo && !env_count(MIN_CHANNELS, lo, MS_MEAS_MAX_CHANNELS, &a, error)) ||
            (hi && !env_count(MAX_CHANNELS, hi, MS_MEAS_MAX_CHANNELS, &b, error))) {
            return FALSE;
        }
        if ((lo || hi) && a != b) {
            return ms_bench_spec_error(
                error,
                "environment: " MIN_CHANNELS "=%s and " MAX_CHANNELS
                "=%s leave NCCL a range of channel counts, which a row cannot "
                "record: set both alike or give --channels N",
                lo ? lo : "(unset)", hi ? hi : "(unset)");
        }
        spec->channels = a;
    }
    const char *qps = g_environ_getenv(env, QPS);
    return spec->qps || qps == NULL || env_count(QPS, qps, MS_MEAS_MAX_QPS, &spec->qps, error);
}

char **
ms_bench_nccl_assignments(const MsBenchSpec *spec)
{
    GPtrArray *a = g_ptr_array_new();
    if (spec->channels) {
        g_ptr_array_add(a, g_strdup_printf(MIN_CHANNELS "=%u", spec->channels));
        g_ptr_array_add(a, g_strdup_printf(MAX_CHANNELS "=%u", spec->channels));
    }
    if (spec->qps) {
        g_ptr_array_add(a, g_strdup_printf(QPS "=%u", spec->qps));
    }
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* Variable name holds want (0: is unset) in env. */
static gboolean
env_holds(char **env, const char *name, guint32 want, guint max, GError **error)
{
    const char *v = g_environ_getenv(env, name);
    guint32 have = 0;
    if (v == NULL ? want == 0 : env_count(name, v, max, &have, NULL) && have == want) {
        return TRUE;
    }
    g_autofree char *asked = want ? g_strdup_printf("%u", want) : g_strdup("unset (NCCL's own)");
    return ms_bench_spec_error(
        error,
        "environment: %s is %s%s%s here but %s in the benchmark: every rank's "
        "process must carry the same NCCL settings (moesim bench sets them from "
        "--channels and --qps; under srun every task runs the same command)",
        name, v ? "'" : "unset", v ? v : "", v ? "'" : "", asked);
}

gboolean
ms_bench_nccl_env_check(const MsBenchSpec *spec, const char *const *envp, GError **error)
{
    g_auto(GStrv) own = envp ? NULL : g_get_environ();
    char **env = envp ? (char **)envp : own;
    for (guint k = 0; spec->channels == 0 && k < G_N_ELEMENTS(legacy); k++) {
        if (!env_holds(env, legacy[k], 0, MS_MEAS_MAX_CHANNELS, error)) {
            return FALSE;
        }
    }
    return env_holds(env, MIN_CHANNELS, spec->channels, MS_MEAS_MAX_CHANNELS, error) &&
           env_holds(env, MAX_CHANNELS, spec->channels, MS_MEAS_MAX_CHANNELS, error) &&
           env_holds(env, QPS, spec->qps, MS_MEAS_MAX_QPS, error);
}

guint
ms_bench_csv_version(const MsBenchSpec *spec)
{
    return (spec->what & (MS_BENCH_CONCURRENCY | MS_BENCH_OVERLAP)) || spec->channels || spec->qps
               ? 2
               : 1;
}

/* --- JSON --- */

GBytes *
ms_bench_spec_to_bytes(const MsBenchSpec *s)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_int(b, "what", s->what);
    ms_json_member_int(b, "min_bytes", (gint64)s->min_bytes);
    ms_json_member_int(b, "max_bytes", (gint64)s->max_bytes);
    json_builder_set_member_name(b, "step_factor");
    json_builder_add_double_value(b, s->step_factor);
    ms_json_member_int(b, "iters", s->iters);
    ms_json_member_int(b, "warmup", s->warmup);
    json_builder_set_member_name(b, "dtype");
    json_builder_add_string_value(b, s->dtype);
    ms_json_member_int(b, "world", s->world);
    ms_json_member_int(b, "ranks_per_node", s->ranks_per_node);
    ms_json_member_int(b, "d_model", (gint64)s->d_model);
    ms_json_member_int(b, "d_ffn", (gint64)s->d_ffn);
    json_builder_set_member_name(b, "gated");
    json_builder_add_boolean_value(b, s->gated);
    json_builder_set_member_name(b, "tokens");
    json_builder_begin_array(b);
    for (guint k = 0; k < s->tokens->len; k++) {
        json_builder_add_int_value(b, g_array_index(s->tokens, guint32, k));
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "pairs");
    json_builder_begin_array(b);
    for (guint k = 0; k < s->pairs->len; k++) {
        const MsBenchPair *p = &g_array_index(s->pairs, MsBenchPair, k);
        json_builder_begin_object(b);
        ms_json_member_int(b, "a", p->a);
        ms_json_member_int(b, "b", p->b);
        ms_json_member_int(b, "ranks_per_node", p->ranks_per_node);
        json_builder_set_member_name(b, "label");
        json_builder_add_string_value(b, p->label);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "concurrency_sizes");
    json_builder_begin_array(b);
    for (guint k = 0; k < s->concurrency_sizes->len; k++) {
        json_builder_add_int_value(b, (gint64)g_array_index(s->concurrency_sizes, guint64, k));
    }
    json_builder_end_array(b);
    ms_json_member_int(b, "background_bytes", (gint64)s->background_bytes);
    ms_json_member_int(b, "channels", s->channels);
    ms_json_member_int(b, "qps", s->qps);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    char *text = json_to_string(root, FALSE);
    return g_bytes_new_take(text, strlen(text));
}

/* An integer member in [0, max]. */
static gboolean
get_uint(JsonObject *o, const char *name, guint64 max, guint64 *out, GError **error)
{
    JsonNode *n = json_object_get_member(o, name);
    if (n == NULL || json_node_get_value_type(n) != G_TYPE_INT64 || json_node_get_int(n) < 0 ||
        (guint64)json_node_get_int(n) > max) {
        return ms_bench_spec_error(
            error, "spec: '%s' is missing or not an integer in 0 to %" G_GUINT64_FORMAT, name, max);
    }
    *out = (guint64)json_node_get_int(n);
    return TRUE;
}

static gboolean
get_u32(JsonObject *o, const char *name, guint32 *out, GError **error)
{
    guint64 v = 0;
    if (!get_uint(o, name, G_MAXUINT32, &v, error)) {
        return FALSE;
    }
    *out = (guint32)v;
    return TRUE;
}

static gboolean
read_lists(JsonObject *o, MsBenchSpec *s, GError **error)
{
    JsonArray *tokens = json_object_get_array_member(o, "tokens");
    JsonArray *pairs = json_object_get_array_member(o, "pairs");
    JsonArray *sizes = json_object_get_array_member(o, "concurrency_sizes");
    g_array_set_size(s->concurrency_sizes, 0);
    for (guint k = 0; k < json_array_get_length(sizes); k++) {
        JsonNode *n = json_array_get_element(sizes, k);
        if (json_node_get_value_type(n) != G_TYPE_INT64 || json_node_get_int(n) < 0) {
            return ms_bench_spec_error(error, "spec: concurrency size %u is not a size in bytes",
                                       k);
        }
        guint64 v = (guint64)json_node_get_int(n);
        g_array_append_val(s->concurrency_sizes, v);
    }
    g_array_set_size(s->tokens, 0);
    for (guint k = 0; k < json_array_get_length(tokens); k++) {
        JsonNode *n = json_array_get_element(tokens, k);
        if (json_node_get_value_type(n) != G_TYPE_INT64) {
            return ms_bench_spec_error(error, "spec: token count %u is not an integer", k);
        }
        guint32 t = (guint32)CLAMP(json_node_get_int(n), 0, G_MAXUINT32);
        g_array_append_val(s->tokens, t);
    }
    for (guint k = 0; k < json_array_get_length(pairs); k++) {
        JsonObject *p = json_array_get_object_element(pairs, k);
        MsBenchPair pair = {0};
        if (p == NULL || !get_u32(p, "a", &pair.a, error) || !get_u32(p, "b", &pair.b, error) ||
            !get_u32(p, "ranks_per_node", &pair.ranks_per_node, error) ||
            !json_object_has_member(p, "label")) {
            return ms_bench_spec_error(error, "spec: pair %u is malformed", k);
        }
        pair.label = g_strdup(json_object_get_string_member(p, "label"));
        g_array_append_val(s->pairs, pair);
    }
    return TRUE;
}

static gboolean
read_spec(JsonObject *o, MsBenchSpec *s, GError **error)
{
    guint64 d_model = 0, d_ffn = 0;
    if (!get_u32(o, "what", &s->what, error) ||
        !get_uint(o, "min_bytes", MS_BENCH_MAX_BYTES, &s->min_bytes, error) ||
        !get_uint(o, "max_bytes", MS_BENCH_MAX_BYTES, &s->max_bytes, error) ||
        !get_u32(o, "iters", &s->iters, error) || !get_u32(o, "warmup", &s->warmup, error) ||
        !get_u32(o, "world", &s->world, error) ||
        !get_u32(o, "ranks_per_node", &s->ranks_per_node, error) ||
        !get_uint(o, "d_model", MS_BENCH_MAX_DIM, &d_model, error) ||
        !get_uint(o, "d_ffn", MS_BENCH_MAX_DIM, &d_ffn, error) ||
        !get_uint(o, "background_bytes", MS_BENCH_MAX_BYTES, &s->background_bytes, error) ||
        !get_u32(o, "channels", &s->channels, error) || !get_u32(o, "qps", &s->qps, error)) {
        return FALSE;
    }
    s->d_model = d_model;
    s->d_ffn = d_ffn;
    JsonNode *step = json_object_get_member(o, "step_factor");
    JsonNode *dtype = json_object_get_member(o, "dtype");
    JsonNode *gated = json_object_get_member(o, "gated");
    if (step == NULL || json_node_get_value_type(step) != G_TYPE_DOUBLE || dtype == NULL ||
        json_node_get_value_type(dtype) != G_TYPE_STRING || gated == NULL ||
        json_node_get_value_type(gated) != G_TYPE_BOOLEAN ||
        !JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, "tokens")) ||
        !JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, "pairs")) ||
        !JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, "concurrency_sizes"))) {
        return ms_bench_spec_error(error, "spec: step_factor, dtype, gated, tokens, pairs or "
                                          "concurrency_sizes malformed");
    }
    s->step_factor = json_node_get_double(step);
    g_free(s->dtype);
    s->dtype = g_strdup(json_node_get_string(dtype));
    s->gated = json_node_get_boolean(gated);
    return read_lists(o, s, error);
}

MsBenchSpec *
ms_bench_spec_from_bytes(GBytes *bytes, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    gsize len = 0;
    const char *text = g_bytes_get_data(bytes, &len);
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_data(parser, text ? text : "", len, NULL, &local) ||
        !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        ms_bench_spec_error(error, "spec: not a JSON object%s%s", local ? ": " : "",
                            local ? local->message : "");
        return NULL;
    }
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    if (!read_spec(json_node_get_object(json_parser_get_root(parser)), s, error) ||
        !ms_bench_spec_check(s, error)) {
        return NULL;
    }
    return g_steal_pointer(&s);
}

/* --- pairs --- */

static guint
ranks_per_node(const char *const *hosts, guint world)
{
    guint most = 1;
    for (guint r = 0; r < world; r++) {
        guint same = 0;
        for (guint q = 0; q < world; q++) {
            same += g_strcmp0(hosts[r], hosts[q]) == 0;
        }
        most = MAX(most, same);
    }
    return most;
}

/* The class of the narrowest link from GPU 0 to GPU r. */
static const char *
route_class(const MsTopology *topo, guint r, GError **error)
{
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, 0, r, &n, error);
    if (route == NULL) {
        return NULL;
    }
    const MsLink *narrow = NULL;
    for (guint k = 0; k < n; k++) {
        const MsLink *l = ms_topology_link(topo, route[k]);
        if (narrow == NULL || l->bandwidth < narrow->bandwidth) {
            narrow = l;
        }
    }
    return narrow ? ms_link_class_name(narrow->klass) : NULL;
}

static void
add_pair(MsBenchSpec *spec, guint b, gboolean same_node, const char *label)
{
    for (guint k = 0; k < spec->pairs->len; k++) {
        if (strcmp(g_array_index(spec->pairs, MsBenchPair, k).label, label) == 0) {
            return;
        }
    }
    MsBenchPair p = {0, b, same_node ? 2 : 1, g_strdup(label)};
    g_array_append_val(spec->pairs, p);
}

gboolean
ms_bench_plan_pairs(MsBenchSpec *spec, const MsTopology *topo, const char *const *hosts,
                    guint world, GError **error)
{
    if (topo && ms_topology_n_gpus(topo) < world) {
        return ms_bench_spec_error(error, "--topology: '%s' has %u GPUs, the run %u ranks",
                                   ms_topology_name(topo), ms_topology_n_gpus(topo), world);
    }
    spec->world = world;
    spec->ranks_per_node = ranks_per_node(hosts, world);
    g_array_set_size(spec->pairs, 0);
    for (guint r = 1; r < world; r++) {
        gboolean same = g_strcmp0(hosts[0], hosts[r]) == 0;
        const char *label = same ? "same-node" : "cross-node";
        if (topo && (label = route_class(topo, r, error)) == NULL) {
            return FALSE;
        }
        add_pair(spec, r, same, label);
    }
    return TRUE;
}

/* --- kernels and figures --- */

void
ms_bench_expert_kernels(const MsBenchSpec *spec, guint32 tokens, MsBenchKernel out[3])
{
    guint64 up = spec->gated ? 2 * spec->d_ffn : spec->d_ffn;
    guint es = 2; /* bf16 and fp16, the two element types a spec allows (ms_bench_spec_check) */
    out[0] = (MsBenchKernel){MS_MEASUREMENT_GEMM, tokens, up, spec->d_model, 0, "mlp_up_proj"};
    out[1] = (MsBenchKernel){MS_MEASUREMENT_ELEMENTWISE,
                             tokens,
                             spec->d_ffn,
                             0,
                             (guint64)es * tokens * (up + spec->d_ffn),
                             "mlp_act"};
    out[2] = (MsBenchKernel){MS_MEASUREMENT_GEMM, tokens, spec->d_model,
                             spec->d_ffn,         0,      "mlp_down_proj"};
}

void
ms_bench_bandwidth(MsMeasurementKind kind, guint64 bytes, double seconds, guint ranks,
                   double *algbw, double *busbw)
{
    *algbw = seconds > 0 ? (double)bytes / seconds : 0;
    double factor = 1;
    if (kind == MS_MEASUREMENT_ALLREDUCE) {
        factor = ms_coll_busbw_factor(MS_COLL_ALLREDUCE, ranks);
    } else if (kind == MS_MEASUREMENT_ALLTOALL) {
        factor = ms_coll_busbw_factor(MS_COLL_ALLTOALL, ranks);
    }
    *busbw = *algbw * factor;
}
