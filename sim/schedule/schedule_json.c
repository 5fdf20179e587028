/* schedule_json: the schedule's JSON form (docs/schedule-format.md), version 2, reading version 1
 * too. Loading checks every field's type and range and names the op or collective index and the
 * field on error, then validates the whole schedule. */
#include "schedule_private.h"

#include <math.h>
#include <string.h>

#include "sim/base/json_input.h"
#include "sim/base/json_output.h"
#include "sim/schedule/coll_names.h"

#define FORMAT_NAME "moesim-schedule"

static void
op_to_json(const MsSchedule *s, guint32 i, JsonBuilder *b)
{
    const Op *o = SCHED_OP(s, i);
    json_builder_begin_object(b);
    ms_json_member_int(b, "id", i);
    ms_json_member_int(b, "rank", o->rank);
    ms_json_member_int(b, "stream", o->stream);
    ms_json_member_string(b, "kind", ms_op_kind_name(o->kind));
    ms_json_member_string(b, "role", ms_role_name(o->role));
    ms_json_member_string(b, "phase", ms_phase_name(o->phase));
    ms_json_member_int(b, "layer", o->layer);
    ms_json_member_int(b, "chunk", o->chunk);
    ms_json_member_string(b, "label", o->label);
    ms_json_member_int(b, "priority", o->priority);
    ms_json_member_int(b, "flags", o->flags);
    json_builder_set_member_name(b, "deps");
    json_builder_begin_array(b);
    for (guint k = 0; o->deps && k < o->deps->len; k++) {
        json_builder_add_int_value(b, g_array_index(o->deps, guint32, k));
    }
    json_builder_end_array(b);
    if (o->kind == MS_OP_COMM) {
        ms_json_member_int(b, "coll", o->coll);
    } else {
        ms_json_member_string(b, "compute", ms_compute_kind_name(o->compute));
        ms_json_member_double(b, "flops", o->flops);
        ms_json_member_double(b, "bytes", o->bytes);
        ms_json_member_int(b, "tokens", o->tokens);
        json_builder_set_member_name(b, "shape");
        json_builder_begin_array(b);
        json_builder_add_int_value(b, o->m);
        json_builder_add_int_value(b, o->n);
        json_builder_add_int_value(b, o->k);
        json_builder_add_int_value(b, o->count);
        json_builder_end_array(b);
        ms_json_member_int(b, "experts", o->experts);
        /* Only when set: schedules without framework overheads read as before. */
        if (o->host > 0) {
            ms_json_member_double(b, "host_us", o->host * 1e6);
        }
    }
    json_builder_end_object(b);
}

static void
matrix_to_json(JsonBuilder *b, const char *name, const guint64 *matrix, guint n)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; i < n; i++) {
        json_builder_begin_array(b);
        for (guint j = 0; j < n; j++) {
            json_builder_add_int_value(b, (gint64)matrix[(gsize)i * n + j]);
        }
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
}

static void
coll_to_json(const MsSchedule *s, guint32 c, JsonBuilder *b)
{
    const Coll *coll = SCHED_COLL(s, c);
    json_builder_begin_object(b);
    ms_json_member_int(b, "id", c);
    ms_json_member_string(b, "kind", ms_coll_kind_name(coll->kind));
    ms_json_member_string(b, "algo", ms_coll_algo_name(coll->algo));
    ms_json_member_int(b, "window", coll->window);
    ms_json_member_string(b, "label", coll->label);
    json_builder_set_member_name(b, "ranks");
    json_builder_begin_array(b);
    for (guint p = 0; p < coll->n; p++) {
        json_builder_add_int_value(b, coll->ranks[p]);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "ops");
    json_builder_begin_array(b);
    for (guint p = 0; p < coll->n; p++) {
        json_builder_add_int_value(b, coll->ops[p]);
    }
    json_builder_end_array(b);
    if (coll->kind == MS_COLL_KIND_ALLTOALL) {
        matrix_to_json(b, "matrix", coll->matrix, coll->n);
        if (coll->rdma) {
            matrix_to_json(b, "rdma", coll->rdma, coll->n);
            json_builder_set_member_name(b, "returning");
            json_builder_add_boolean_value(b, coll->returning);
        }
    } else {
        ms_json_member_int(b, "bytes", (gint64)coll->bytes);
    }
    json_builder_end_object(b);
}

JsonNode *
ms_schedule_to_json(const MsSchedule *s)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "format", FORMAT_NAME);
    ms_json_member_int(b, "version", MS_SCHEDULE_FORMAT);
    ms_json_member_int(b, "ranks", s->n_ranks);
    ms_json_member_string(b, "policy", s->policy);
    json_builder_set_member_name(b, "dispatch");
    json_builder_begin_object(b);
    ms_json_member_string(b, "order", ms_dispatch_order_name(s->rules.order));
    ms_json_member_string(b, "allreduce_gate", ms_allreduce_gate_name(s->rules.allreduce_gate));
    json_builder_end_object(b);
    json_builder_set_member_name(b, "meta");
    json_builder_begin_object(b);
    for (guint i = 0; i < s->meta_keys->len; i++) {
        const char *k = s->meta_keys->pdata[i];
        ms_json_member_string(b, k, g_hash_table_lookup(s->meta, k));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "streams");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->streams->len; i++) {
        const Stream *st = &g_array_index(s->streams, Stream, i);
        json_builder_begin_object(b);
        ms_json_member_string(b, "name", st->name);
        ms_json_member_string(b, "kind", ms_stream_kind_name(st->kind));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "ops");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->ops->len; i++) {
        op_to_json(s, i, b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "collectives");
    json_builder_begin_array(b);
    for (guint c = 0; c < s->colls->len; c++) {
        coll_to_json(s, c, b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

gboolean
ms_schedule_save(const MsSchedule *s, const char *path, GError **error)
{
    g_autoptr(JsonNode) root = ms_schedule_to_json(s);
    g_autoptr(GError) local = NULL;
    if (!ms_json_write_file(path, root, FALSE, MS_OUTPUT_REPLACE, &local)) {
        g_set_error_literal(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_IO, local->message);
        return FALSE;
    }
    return TRUE;
}

/* --- loading --- */

typedef struct {
    const char *source;
    const char *where; /* "op 12", "collective 3", "schedule" */
    GError **error;
} Ctx;

static gboolean bad(Ctx *c, const char *field, const char *format, ...) G_GNUC_PRINTF(3, 4);

static gboolean
bad(Ctx *c, const char *field, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(c->error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE, "%s: %s: field '%s': %s",
                c->source, c->where, field, msg);
    return FALSE;
}

static JsonNode *
member(Ctx *c, JsonObject *o, const char *field, JsonNodeType type)
{
    JsonNode *n = json_object_get_member(o, field);
    if (n == NULL) {
        bad(c, field, "missing");
        return NULL;
    }
    if (JSON_NODE_TYPE(n) != type) {
        bad(c, field, "wrong type (expected %s)",
            type == JSON_NODE_ARRAY    ? "an array"
            : type == JSON_NODE_OBJECT ? "an object"
                                       : "a value");
        return NULL;
    }
    return n;
}

static gboolean
get_int(Ctx *c, JsonObject *o, const char *field, gint64 min, gint64 max, gint64 *out)
{
    JsonNode *n = member(c, o, field, JSON_NODE_VALUE);
    if (n == NULL) {
        return FALSE;
    }
    if (json_node_get_value_type(n) != G_TYPE_INT64) {
        return bad(c, field, "not an integer");
    }
    gint64 v = json_node_get_int(n);
    if (v < min || v > max) {
        return bad(c, field,
                   "%" G_GINT64_FORMAT " out of range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                   v, min, max);
    }
    *out = v;
    return TRUE;
}

static gboolean
get_num(Ctx *c, JsonObject *o, const char *field, double *out)
{
    JsonNode *n = member(c, o, field, JSON_NODE_VALUE);
    if (n == NULL) {
        return FALSE;
    }
    GType t = json_node_get_value_type(n);
    if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE) {
        return bad(c, field, "not a number");
    }
    double v = json_node_get_double(n);
    if (!isfinite(v) || v < 0) {
        return bad(c, field, "%g is not a finite non-negative number", v);
    }
    *out = v;
    return TRUE;
}

static const char *
get_str(Ctx *c, JsonObject *o, const char *field)
{
    JsonNode *n = member(c, o, field, JSON_NODE_VALUE);
    if (n == NULL) {
        return NULL;
    }
    if (json_node_get_value_type(n) != G_TYPE_STRING) {
        bad(c, field, "not a string");
        return NULL;
    }
    return json_node_get_string(n);
}

/* Matches the field against the first n names of a NULL-terminated table (ALL: every one). */
#define ALL G_MAXUINT

static gboolean
get_name(Ctx *c, JsonObject *o, const char *field, const char *const *names, guint n, guint *out)
{
    const char *v = get_str(c, o, field);
    if (v == NULL) {
        return FALSE;
    }
    for (guint i = 0; i < n && names[i]; i++) {
        if (g_strcmp0(v, names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint i = 0; i < n && names[i]; i++) {
        g_string_append_printf(list, "%s%s", i ? ", " : "", names[i]);
    }
    return bad(c, field, "unknown value '%s' (expected one of: %s)", v, list->str);
}

static gboolean
load_op(Ctx *c, MsSchedule *s, JsonObject *o, guint32 index)
{
    gint64 id, rank, stream, layer, chunk, priority, flags;
    guint kind = 0, role = 0, phase = 0;
    if (!get_int(c, o, "id", index, index, &id) ||
        !get_int(c, o, "rank", 0, s->n_ranks - 1, &rank) ||
        !get_int(c, o, "stream", 0, MS_SCHEDULE_MAX_STREAMS - 1, &stream) ||
        !get_name(c, o, "kind", ms_kind_names(), ALL, &kind) ||
        !get_name(c, o, "role", ms_role_names(), ALL, &role) ||
        !get_name(c, o, "phase", ms_phase_names(), ALL, &phase) ||
        !get_int(c, o, "layer", -1, G_MAXINT32, &layer) ||
        !get_int(c, o, "chunk", -1, G_MAXINT32, &chunk) ||
        !get_int(c, o, "priority", G_MININT64, G_MAXINT64, &priority) ||
        !get_int(c, o, "flags", 0, G_MAXUINT32, &flags)) {
        return FALSE;
    }
    const char *label = get_str(c, o, "label");
    JsonNode *deps = member(c, o, "deps", JSON_NODE_ARRAY);
    if (label == NULL || deps == NULL) {
        return FALSE;
    }
    guint32 op;
    if (kind == MS_OP_COMM) {
        gint64 coll;
        if (!get_int(c, o, "coll", 0, G_MAXUINT32 - 1, &coll)) {
            return FALSE;
        }
        op = ms_schedule_add_comm_op(s, (guint32)coll, rank, stream, role, phase, layer, chunk,
                                     label);
    } else {
        guint compute = 0;
        double flops, bytes;
        gint64 tokens, experts;
        JsonNode *shape = member(c, o, "shape", JSON_NODE_ARRAY);
        if (!get_name(c, o, "compute", ms_compute_kind_names(), ALL, &compute) ||
            !get_num(c, o, "flops", &flops) || !get_num(c, o, "bytes", &bytes) ||
            !get_int(c, o, "tokens", 0, G_MAXUINT32, &tokens) ||
            !get_int(c, o, "experts", 0, G_MAXUINT32, &experts) || shape == NULL) {
            return FALSE;
        }
        JsonArray *sa = json_node_get_array(shape);
        if (json_array_get_length(sa) != 4) {
            return bad(c, "shape", "expected [m, n, k, count]");
        }
        guint32 dims[4];
        for (guint k = 0; k < 4; k++) {
            JsonNode *e = json_array_get_element(sa, k);
            if (JSON_NODE_TYPE(e) != JSON_NODE_VALUE ||
                json_node_get_value_type(e) != G_TYPE_INT64 || json_node_get_int(e) < 0 ||
                json_node_get_int(e) > G_MAXUINT32) {
                return bad(c, "shape", "element %u is not a non-negative 32-bit integer", k);
            }
            dims[k] = (guint32)json_node_get_int(e);
        }
        /* A calibrated GEMM table prices an op by its shape: flops with an empty shape would be
         * priced as no work at all there. */
        if (flops > 0 && !(dims[0] && dims[1] && dims[2] && dims[3])) {
            return bad(c, "shape", "[%u, %u, %u, %u] is empty but the op has %g flops", dims[0],
                       dims[1], dims[2], dims[3], flops);
        }
        op = ms_schedule_add_compute(s, rank, stream, role, phase, layer, chunk, label);
        ms_schedule_set_cost(s, op, compute, flops, bytes, (guint32)tokens);
        ms_schedule_set_shape(s, op, dims[0], dims[1], dims[2], dims[3], (guint32)experts);
        double host_us = 0;
        if (json_object_has_member(o, "host_us") && !get_num(c, o, "host_us", &host_us)) {
            return FALSE;
        }
        ms_schedule_set_host(s, op, host_us / 1e6);
    }
    ms_schedule_set_priority(s, op, priority);
    ms_schedule_set_flags(s, op, (guint32)flags);
    JsonArray *da = json_node_get_array(deps);
    for (guint k = 0; k < json_array_get_length(da); k++) {
        JsonNode *e = json_array_get_element(da, k);
        if (JSON_NODE_TYPE(e) != JSON_NODE_VALUE || json_node_get_value_type(e) != G_TYPE_INT64 ||
            json_node_get_int(e) < 0 || json_node_get_int(e) >= MS_SCHEDULE_MAX_OPS) {
            return bad(c, "deps", "element %u is not an op id", k);
        }
        ms_schedule_add_dep(s, op, (guint32)json_node_get_int(e));
    }
    return TRUE;
}

static gboolean
uint_elems(Ctx *c, const char *field, JsonArray *a, guint n, guint64 max, guint64 *out)
{
    if (json_array_get_length(a) != n) {
        return bad(c, field, "expected %u elements, found %u", n, json_array_get_length(a));
    }
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (JSON_NODE_TYPE(e) != JSON_NODE_VALUE || json_node_get_value_type(e) != G_TYPE_INT64 ||
            json_node_get_int(e) < 0 || (guint64)json_node_get_int(e) > max) {
            return bad(c, field, "element %u is not an integer in [0, %" G_GUINT64_FORMAT "]", i,
                       max);
        }
        out[i] = (guint64)json_node_get_int(e);
    }
    return TRUE;
}

static gboolean
uint_array(Ctx *c, JsonObject *o, const char *field, guint n, guint64 max, guint64 *out)
{
    JsonNode *node = member(c, o, field, JSON_NODE_ARRAY);
    return node && uint_elems(c, field, json_node_get_array(node), n, max, out);
}

static gboolean load_matrix(Ctx *c, JsonObject *o, const char *name, guint n, guint64 **out);

static gboolean
load_coll(Ctx *c, MsSchedule *s, JsonObject *o, guint32 index)
{
    gint64 id, window;
    guint kind = 0;
    if (!get_int(c, o, "id", index, index, &id) ||
        !get_name(c, o, "kind", ms_coll_op_names(), MS_COLL_KIND_N, &kind) ||
        !get_int(c, o, "window", 0, MS_SCHEDULE_MAX_RANKS, &window)) {
        return FALSE;
    }
    const char *algo_name = get_str(c, o, "algo");
    const char *label = get_str(c, o, "label");
    JsonNode *ranks_node = member(c, o, "ranks", JSON_NODE_ARRAY);
    if (algo_name == NULL || label == NULL || ranks_node == NULL) {
        return FALSE;
    }
    MsCollAlgo algo;
    if (!ms_coll_algo_from_name(algo_name, &algo)) {
        return bad(c, "algo", "unknown algorithm '%s'", algo_name);
    }
    /* An algorithm of the other kind would be run as something else without a word. */
    gboolean a2a_algo = algo == MS_COLL_ALGO_DIRECT || algo == MS_COLL_ALGO_2DH ||
                        algo == MS_COLL_ALGO_PIPE || algo == MS_COLL_ALGO_DEEPEP;
    gboolean ar_algo = algo == MS_COLL_ALGO_RING || algo == MS_COLL_ALGO_HIER;
    if ((kind == MS_COLL_KIND_ALLTOALL && ar_algo) ||
        (kind == MS_COLL_KIND_ALLREDUCE && a2a_algo)) {
        return bad(c, "algo", "'%s' is not an algorithm of %s (%s)", algo_name,
                   ms_coll_op_names()[kind],
                   kind == MS_COLL_KIND_ALLTOALL ? "auto, direct, 2dh, pipe or deepep"
                                                 : "auto, ring or hier");
    }
    guint n = json_array_get_length(json_node_get_array(ranks_node));
    if (n == 0 || n > s->n_ranks) {
        return bad(c, "ranks", "%u participants for a schedule of %u ranks", n, s->n_ranks);
    }
    g_autofree guint64 *ranks64 = g_new(guint64, n);
    g_autofree guint64 *ops64 = g_new(guint64, n);
    if (!uint_array(c, o, "ranks", n, s->n_ranks - 1, ranks64) ||
        !uint_array(c, o, "ops", n, MS_SCHEDULE_MAX_OPS, ops64)) {
        return FALSE;
    }
    g_autofree guint32 *ranks = g_new(guint32, n);
    for (guint i = 0; i < n; i++) {
        ranks[i] = (guint32)ranks64[i];
    }
    guint32 cid = ms_schedule_new_coll(s, kind, algo, (guint32)window, ranks, n, label);
    Coll *coll = SCHED_COLL(s, cid);
    for (guint i = 0; i < n; i++) {
        coll->ops[i] = (guint32)ops64[i];
    }
    if (kind == MS_COLL_KIND_ALLREDUCE) {
        gint64 bytes;
        if (!get_int(c, o, "bytes", 0, (gint64)MS_BYTES_MAX, &bytes)) {
            return FALSE;
        }
        coll->bytes = (guint64)bytes;
        return TRUE;
    }
    if (!load_matrix(c, o, "matrix", n, &coll->matrix)) {
        return FALSE;
    }
    if (algo != MS_COLL_ALGO_DEEPEP) {
        return TRUE;
    }
    JsonNode *ret = member(c, o, "returning", JSON_NODE_VALUE);
    if (ret == NULL) {
        return FALSE;
    }
    if (json_node_get_value_type(ret) != G_TYPE_BOOLEAN) {
        return bad(c, "returning", "expected true or false");
    }
    coll->returning = json_node_get_boolean(ret);
    return load_matrix(c, o, "rdma", n, &coll->rdma);
}

/* An n x n byte matrix, rows of n unsigned integers within MS_BYTES_MAX. */
static gboolean
load_matrix(Ctx *c, JsonObject *o, const char *name, guint n, guint64 **out)
{
    JsonNode *m = member(c, o, name, JSON_NODE_ARRAY);
    if (m == NULL) {
        return FALSE;
    }
    JsonArray *rows = json_node_get_array(m);
    if (json_array_get_length(rows) != n) {
        return bad(c, name, "expected %u rows", n);
    }
    /* Every row's shape is checked before the n x n matrix is allocated, so that its size is
     * bounded by the text's and not only by the participant count. */
    for (guint i = 0; i < n; i++) {
        JsonNode *row = json_array_get_element(rows, i);
        if (JSON_NODE_TYPE(row) != JSON_NODE_ARRAY) {
            return bad(c, name, "row %u is not an array", i);
        }
        if (json_array_get_length(json_node_get_array(row)) != n) {
            return bad(c, name, "row %u has %u elements, expected %u", i,
                       json_array_get_length(json_node_get_array(row)), n);
        }
    }
    *out = g_new(guint64, (gsize)n * n);
    for (guint i = 0; i < n; i++) {
        JsonNode *row = json_array_get_element(rows, i);
        g_autofree char *field = g_strdup_printf("%s row %u", name, i);
        gboolean ok =
            uint_elems(c, field, json_node_get_array(row), n, MS_BYTES_MAX, &(*out)[(gsize)i * n]);
        if (!ok) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Version 1 named the dispatcher's rules by the policy that chose them. These are all the names it
 * had, with the rules version 2 writes for those policies; no later policy needs a line here. */
static const struct {
    const char *policy;
    MsDispatchRules rules;
} version1_rules[] = {
    {"fifo", {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE}},
    {"concurrent", {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE}},
    {"priority", {MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_NONE}},
    {"lina", {MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A}},
    {"schemoe", {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE}},
};

/* The rules: version 2's "dispatch" object, or version 1's policy name. */
static gboolean
load_rules(Ctx *c, JsonObject *o, gint64 version, const char *policy, MsDispatchRules *out)
{
    if (version == 1) {
        GString *known = g_string_new(NULL);
        for (guint i = 0; i < G_N_ELEMENTS(version1_rules); i++) {
            if (strcmp(policy, version1_rules[i].policy) == 0) {
                *out = version1_rules[i].rules;
                g_string_free(known, TRUE);
                return TRUE;
            }
            g_string_append_printf(known, "%s%s", i ? ", " : "", version1_rules[i].policy);
        }
        bad(c, "policy",
            "version 1 names the dispatcher's rules by policy, and '%s' is none of %s (version "
            "2 gives the rules in 'dispatch')",
            policy, known->str);
        g_string_free(known, TRUE);
        return FALSE;
    }
    JsonNode *d = member(c, o, "dispatch", JSON_NODE_OBJECT);
    if (d == NULL) {
        return FALSE;
    }
    c->where = "dispatch";
    guint order = 0, gate = 0;
    if (!get_name(c, json_node_get_object(d), "order", ms_dispatch_order_names(), ALL, &order) ||
        !get_name(c, json_node_get_object(d), "allreduce_gate", ms_allreduce_gate_names(), ALL,
                  &gate)) {
        return FALSE;
    }
    c->where = "schedule";
    *out = (MsDispatchRules){order, gate};
    return TRUE;
}

MsSchedule *
ms_schedule_from_json(JsonNode *root, const char *source, GError **error)
{
    Ctx c = {source ? source : "<schedule>", "schedule", error};
    if (root == NULL || JSON_NODE_TYPE(root) != JSON_NODE_OBJECT) {
        g_set_error(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "%s: not a schedule (expected a JSON object)", c.source);
        return NULL;
    }
    JsonObject *o = json_node_get_object(root);
    const char *format = get_str(&c, o, "format");
    gint64 version, ranks;
    if (format == NULL || !get_int(&c, o, "version", 1, G_MAXINT32, &version)) {
        return NULL;
    }
    if (strcmp(format, FORMAT_NAME) != 0 || version > MS_SCHEDULE_FORMAT) {
        g_set_error(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_PARSE,
                    "%s: format '%s' version %" G_GINT64_FORMAT
                    " is not a moesim schedule version 1 to %d",
                    c.source, format, version, MS_SCHEDULE_FORMAT);
        return NULL;
    }
    if (!get_int(&c, o, "ranks", 1, MS_SCHEDULE_MAX_RANKS, &ranks)) {
        return NULL;
    }
    const char *policy = get_str(&c, o, "policy");
    JsonNode *meta = member(&c, o, "meta", JSON_NODE_OBJECT);
    JsonNode *streams = member(&c, o, "streams", JSON_NODE_ARRAY);
    JsonNode *ops = member(&c, o, "ops", JSON_NODE_ARRAY);
    JsonNode *colls = member(&c, o, "collectives", JSON_NODE_ARRAY);
    MsDispatchRules rules;
    if (policy == NULL || meta == NULL || streams == NULL || ops == NULL || colls == NULL ||
        !load_rules(&c, o, version, policy, &rules)) {
        return NULL;
    }
    g_autoptr(MsSchedule) s = ms_schedule_new((guint)ranks);
    ms_schedule_set_policy(s, policy);
    ms_schedule_set_rules(s, &rules);
    JsonObject *mo = json_node_get_object(meta);
    g_autoptr(GList) keys = json_object_get_members(mo);
    for (GList *k = keys; k; k = k->next) {
        const char *v = get_str(&c, mo, k->data);
        if (v == NULL) {
            return NULL;
        }
        ms_schedule_set_meta(s, k->data, v);
    }
    JsonArray *sa = json_node_get_array(streams);
    if (json_array_get_length(sa) == 0 || json_array_get_length(sa) > MS_SCHEDULE_MAX_STREAMS) {
        bad(&c, "streams", "between 1 and %u streams expected", MS_SCHEDULE_MAX_STREAMS);
        return NULL;
    }
    for (guint i = 0; i < json_array_get_length(sa); i++) {
        g_autofree char *where = g_strdup_printf("stream %u", i);
        c.where = where;
        JsonNode *e = json_array_get_element(sa, i);
        if (JSON_NODE_TYPE(e) != JSON_NODE_OBJECT) {
            bad(&c, "streams", "not an object");
            return NULL;
        }
        guint kind = 0;
        const char *name = get_str(&c, json_node_get_object(e), "name");
        if (name == NULL ||
            !get_name(&c, json_node_get_object(e), "kind", ms_kind_names(), ALL, &kind)) {
            return NULL;
        }
        ms_schedule_add_stream(s, name, kind);
    }
    JsonArray *oa = json_node_get_array(ops);
    if (json_array_get_length(oa) > MS_SCHEDULE_MAX_OPS) {
        bad(&c, "ops", "more than %u ops", MS_SCHEDULE_MAX_OPS);
        return NULL;
    }
    for (guint i = 0; i < json_array_get_length(oa); i++) {
        g_autofree char *where = g_strdup_printf("op %u", i);
        c.where = where;
        JsonNode *e = json_array_get_element(oa, i);
        if (JSON_NODE_TYPE(e) != JSON_NODE_OBJECT) {
            bad(&c, "ops", "not an object");
            return NULL;
        }
        if (!load_op(&c, s, json_node_get_object(e), i)) {
            return NULL;
        }
    }
    JsonArray *ca = json_node_get_array(colls);
    for (guint i = 0; i < json_array_get_length(ca); i++) {
        g_autofree char *where = g_strdup_printf("collective %u", i);
        c.where = where;
        JsonNode *e = json_array_get_element(ca, i);
        if (JSON_NODE_TYPE(e) != JSON_NODE_OBJECT) {
            bad(&c, "collectives", "not an object");
            return NULL;
        }
        if (!load_coll(&c, s, json_node_get_object(e), i)) {
            return NULL;
        }
    }
    g_autoptr(GError) local = NULL;
    if (!ms_schedule_validate(s, &local)) {
        g_set_error(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_INVALID, "%s: %s", c.source,
                    local->message);
        return NULL;
    }
    return g_steal_pointer(&s);
}

MsSchedule *
ms_schedule_load(const char *path, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_file(parser, path, MS_INPUT_SCHEDULE, &local)) {
        /* Every message names the file already (input_file.h, json_input.h). */
        gboolean io = local->code == MS_JSON_INPUT_ERROR_IO;
        g_set_error_literal(error, MS_SCHEDULE_ERROR,
                            io ? MS_SCHEDULE_ERROR_IO : MS_SCHEDULE_ERROR_PARSE, local->message);
        return NULL;
    }
    return ms_schedule_from_json(json_parser_get_root(parser), path, error);
}
