/* flowfile: parsing and replaying flow lists. Parsing is line by line with every field checked;
 * dependencies may point forward and are resolved once the whole file is read, then checked for
 * cycles (Kahn's algorithm, sim/base/graph.h) so that a replay can never wait forever. */
#include "flowfile.h"

#include <math.h>
#include <string.h>

#include "sim/base/graph.h"
#include "sim/base/input_file.h"
#include "sim/base/ranges.h"

G_DEFINE_QUARK(ms_flowfile_error_quark, ms_flowfile_error)

/* Every number a flow line carries (docs/bad-inputs.md is generated from this table, and
 * tests/test_input_ranges.c walks it). */
static const MsRange fields[] = {
    {"a flow line", "bytes", MS_RANGE_BYTES, 0, (double)MS_BYTES_MAX,
     "as every size moesim reads; 0 is a flow that only pays its latency"},
    {"a flow line", "start", MS_RANGE_TIME, 0, 1e6,
     "11.6 days, far inside the clock's 213 days, so that what follows the start fits too"},
    {"a flow line", "weight", MS_RANGE_NUMBER, 1e-6, 1e6,
     "a flow's share against others on a link; 12 decades keep the solver's levels finite"},
    {NULL},
};

static const MsRangeTable ranges = {"Flow lists", fields};

const MsRangeTable *
ms_flow_list_ranges(void)
{
    return &ranges;
}

static const MsRange *
F(const char *key)
{
    return ms_range_find(fields, "a flow line", key);
}

typedef struct {
    const char *id;
    guint32 src, dst;
    guint64 bytes;
    MsTime start;
    double weight;
    guint32 dep_off;
    guint32 n_deps;
    guint32 line;
} Flow;

struct _MsFlowList {
    const MsTopology *topo;
    GArray *flows; /* Flow */
    GArray *deps;  /* guint32 flow indices */
    GStringChunk *strings;
};

MsFlowList *
ms_flow_list_new(const MsTopology *topo)
{
    MsFlowList *l = g_new0(MsFlowList, 1);
    l->topo = topo;
    l->flows = g_array_new(FALSE, FALSE, sizeof(Flow));
    l->deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    l->strings = g_string_chunk_new(4096);
    return l;
}

void
ms_flow_list_free(MsFlowList *l)
{
    if (l == NULL) {
        return;
    }
    g_array_unref(l->flows);
    g_array_unref(l->deps);
    g_string_chunk_free(l->strings);
    g_free(l);
}

guint
ms_flow_list_add(MsFlowList *l, const char *id, guint src, guint dst, guint64 bytes, MsTime start,
                 double weight, const guint *deps, guint n_deps)
{
    Flow f = {
        .id = id ? g_string_chunk_insert(l->strings, id) : NULL,
        .src = src,
        .dst = dst,
        .bytes = bytes,
        .start = start,
        .weight = weight > 0 ? weight : 1.0,
        .dep_off = l->deps->len,
        .n_deps = n_deps,
    };
    for (guint i = 0; i < n_deps; i++) {
        guint32 d = deps[i];
        g_array_append_val(l->deps, d);
    }
    g_array_append_val(l->flows, f);
    return l->flows->len - 1;
}

#define FLOW(l, i) (&g_array_index((l)->flows, Flow, (i)))

guint
ms_flow_list_len(const MsFlowList *l)
{
    return l->flows->len;
}

const char *
ms_flow_list_id(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->id;
}

guint
ms_flow_list_src(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->src;
}

guint
ms_flow_list_dst(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->dst;
}

guint64
ms_flow_list_bytes(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->bytes;
}

MsTime
ms_flow_list_start(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->start;
}

double
ms_flow_list_weight(const MsFlowList *l, guint i)
{
    return FLOW(l, i)->weight;
}

const guint *
ms_flow_list_deps(const MsFlowList *l, guint i, guint *n_deps)
{
    *n_deps = FLOW(l, i)->n_deps;
    /* With no dependencies at all the array's data is NULL: no pointer arithmetic on it. */
    return *n_deps ? (const guint *)&g_array_index(l->deps, guint32, FLOW(l, i)->dep_off) : NULL;
}

/* --- parsing --- */

typedef struct {
    MsFlowList *list;
    const char *source;
    guint line;
    GHashTable *index;  /* id -> index + 1 */
    GPtrArray *pending; /* per flow: dependency names (char**) until resolved */
} Parser;

static gboolean fail(Parser *p, GError **error, gint code, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
fail(Parser *p, GError **error, gint code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_FLOWFILE_ERROR, code, "%s:%u: %s", p->source, p->line, msg);
    return FALSE;
}

static gboolean
device(Parser *p, const char *field, const char *text, guint32 *out, GError **error)
{
    const MsTopology *topo = p->list->topo;
    guint d;
    if (ms_topology_find_device(topo, text, &d)) {
        *out = d;
        return TRUE;
    }
    guint64 rank;
    if (ms_parse_uint(text, 0, G_MAXUINT32, &rank, NULL)) {
        if (rank < ms_topology_n_gpus(topo)) {
            *out = ms_topology_gpu_device(topo, (guint)rank);
            return TRUE;
        }
        return fail(p, error, MS_FLOWFILE_ERROR_UNKNOWN,
                    "%s: GPU rank %s out of range (topology '%s' has %u GPUs)", field, text,
                    ms_topology_name(topo), ms_topology_n_gpus(topo));
    }
    return fail(p, error, MS_FLOWFILE_ERROR_UNKNOWN,
                "%s: unknown device '%s' in topology '%s' (try `moesim topo show %s --links`)",
                field, text, ms_topology_name(topo), ms_topology_name(topo));
}

/* A flow between devices without a route is refused here, where its line is known, rather than
 * when the replay reaches it. */
static gboolean
reachable(Parser *p, const Flow *f, GError **error)
{
    g_autoptr(GError) local = NULL;
    guint n = 0;
    if (f->src != f->dst && !ms_topology_route(p->list->topo, f->src, f->dst, &n, &local)) {
        return fail(p, error, MS_FLOWFILE_ERROR_UNREACHABLE, "%s", local->message);
    }
    return TRUE;
}

static gboolean
parse_option(Parser *p, const char *opt, Flow *f, gboolean *weight_given, char ***after,
             GError **error)
{
    g_autoptr(GError) local = NULL;
    if (g_str_has_prefix(opt, "weight=")) {
        if (*weight_given) {
            return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "weight= given twice");
        }
        *weight_given = TRUE;
        if (!ms_range_parse(F("weight"), opt + 7, &f->weight, &local)) {
            return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "weight: %s", local->message);
        }
        return TRUE;
    }
    if (g_str_has_prefix(opt, "after=")) {
        if (*after) {
            return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "after= given twice");
        }
        char **names = g_strsplit(opt + 6, ",", -1);
        guint n = g_strv_length(names);
        if (n == 0) {
            g_strfreev(names);
            return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "after: no flow id");
        }
        if (n > MS_FLOWFILE_MAX_DEPS) {
            g_strfreev(names);
            return fail(p, error, MS_FLOWFILE_ERROR_LIMIT, "after: %u flow ids, at most %u allowed",
                        n, MS_FLOWFILE_MAX_DEPS);
        }
        for (guint i = 0; i < n; i++) {
            if (names[i][0] == '\0') {
                g_strfreev(names);
                return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "after: empty flow id in '%s'",
                            opt + 6);
            }
        }
        *after = names;
        return TRUE;
    }
    return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX,
                "unknown option '%s' (expected weight=W or after=ID[,ID...])", opt);
}

static gboolean
parse_line(Parser *p, char *line, GError **error)
{
    char *hash = strchr(line, '#');
    if (hash) {
        *hash = '\0';
    }
    g_auto(GStrv) tok = g_strsplit_set(g_strstrip(line), " \t", -1);
    /* g_strsplit_set keeps empty strings between repeated separators: compact them. */
    guint n = 0;
    for (guint i = 0; tok[i]; i++) {
        if (tok[i][0]) {
            char *t = tok[i];
            tok[i] = NULL;
            tok[n++] = t;
        } else {
            g_free(tok[i]);
            tok[i] = NULL;
        }
    }
    if (n == 0) {
        return TRUE;
    }
    if (n < 5) {
        return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX,
                    "expected: ID SRC DST BYTES START [weight=W] [after=ID,...]; got %u field%s", n,
                    n == 1 ? "" : "s");
    }
    if (p->list->flows->len >= MS_FLOWFILE_MAX_FLOWS) {
        return fail(p, error, MS_FLOWFILE_ERROR_LIMIT, "more than %u flows", MS_FLOWFILE_MAX_FLOWS);
    }
    Flow f = {.weight = 1.0, .line = p->line};
    if (g_hash_table_contains(p->index, tok[0])) {
        guint j = GPOINTER_TO_UINT(g_hash_table_lookup(p->index, tok[0])) - 1;
        guint first = FLOW(p->list, j)->line;
        return fail(p, error, MS_FLOWFILE_ERROR_DUPLICATE, "flow id '%s' already used at line %u",
                    tok[0], first);
    }
    if (!device(p, "source", tok[1], &f.src, error) ||
        !device(p, "destination", tok[2], &f.dst, error) || !reachable(p, &f, error)) {
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    double bytes = 0, start = 0;
    if (!ms_range_parse(F("bytes"), tok[3], &bytes, &local)) {
        return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "bytes: %s", local->message);
    }
    if (!ms_range_parse(F("start"), tok[4], &start, &local)) {
        return fail(p, error, MS_FLOWFILE_ERROR_SYNTAX, "start: %s", local->message);
    }
    /* Both in range: exact below 2^53 bytes, and far from the clock's end. */
    f.bytes = (guint64)bytes;
    f.start = ms_time_from_s(start);
    char **after = NULL;
    gboolean weight_given = FALSE;
    for (guint i = 5; i < n; i++) {
        if (!parse_option(p, tok[i], &f, &weight_given, &after, error)) {
            g_strfreev(after);
            return FALSE;
        }
    }
    guint idx =
        ms_flow_list_add(p->list, tok[0], f.src, f.dst, f.bytes, f.start, f.weight, NULL, 0);
    FLOW(p->list, idx)->line = p->line;
    g_hash_table_insert(p->index, (gpointer)FLOW(p->list, idx)->id, GUINT_TO_POINTER(idx + 1));
    g_ptr_array_add(p->pending, after);
    return TRUE;
}

static const guint32 *
flow_deps(gconstpointer data, guint32 i, guint *n)
{
    const MsFlowList *l = data;
    const Flow *f = FLOW(l, i);
    *n = f->n_deps;
    return f->n_deps ? &g_array_index(l->deps, guint32, f->dep_off) : NULL;
}

/* The message spells out the cycle (at most 8 ids of it), starting from a flow on it. */
static gboolean
report_cycle(Parser *p, const GArray *cycle, GError **error)
{
    const MsFlowList *l = p->list;
    guint32 first = g_array_index(cycle, guint32, 0);
    g_autoptr(GString) chain = g_string_new(FLOW(l, first)->id);
    for (guint k = 1; k <= cycle->len; k++) {
        guint32 j = g_array_index(cycle, guint32, k % cycle->len);
        if (k <= 8 || k == cycle->len) {
            g_string_append_printf(chain, " after %s", FLOW(l, j)->id);
        } else if (k == 9) {
            g_string_append(chain, " after ...");
        }
    }
    p->line = FLOW(l, first)->line;
    return fail(p, error, MS_FLOWFILE_ERROR_CYCLE,
                "flow '%s' depends on itself through its after= chain (%s)", FLOW(l, first)->id,
                chain->str);
}

/* Resolves dependency names to indices, then verifies the graph is acyclic. */
static gboolean
resolve(Parser *p, GError **error)
{
    MsFlowList *l = p->list;
    guint n = l->flows->len;
    for (guint i = 0; i < n; i++) {
        char **names = p->pending->pdata[i];
        Flow *f = FLOW(l, i);
        f->dep_off = l->deps->len;
        f->n_deps = names ? g_strv_length(names) : 0;
        for (guint k = 0; k < f->n_deps; k++) {
            guint j = GPOINTER_TO_UINT(g_hash_table_lookup(p->index, names[k]));
            if (j == 0) {
                p->line = f->line;
                return fail(p, error, MS_FLOWFILE_ERROR_UNKNOWN, "after: unknown flow id '%s'",
                            names[k]);
            }
            guint32 d = j - 1;
            g_array_append_val(l->deps, d);
        }
    }
    g_autoptr(MsGraph) g = ms_graph_new(n, flow_deps, l);
    g_autoptr(GArray) cycle = NULL;
    return ms_graph_sort(g, NULL, &cycle) || report_cycle(p, cycle, error);
}

static void
free_names(gpointer p)
{
    g_strfreev(p);
}

MsFlowList *
ms_flow_list_load_data(const char *data, gsize len, const char *source, const MsTopology *topo,
                       GError **error)
{
    g_autoptr(MsFlowList) list = ms_flow_list_new(topo);
    Parser p = {list, source ? source : "<flows>", 0, g_hash_table_new(g_str_hash, g_str_equal),
                g_ptr_array_new_with_free_func(free_names)};
    gboolean ok = TRUE;
    const char *pos = data, *end = data + len;
    const char *nul = memchr(data, '\0', len);
    if (nul) {
        guint line = 1;
        for (const char *c = data; c < nul; c++) {
            line += *c == '\n';
        }
        g_set_error(error, MS_FLOWFILE_ERROR, MS_FLOWFILE_ERROR_SYNTAX,
                    "%s:%u: contains a NUL byte (binary file?)", p.source, line);
        ok = FALSE;
    }
    while (ok && pos < end) {
        const char *nl = memchr(pos, '\n', end - pos);
        const char *stop = nl ? nl : end;
        p.line++;
        g_autofree char *line = g_strndup(pos, stop - pos);
        pos = nl ? nl + 1 : end;
        ok = parse_line(&p, line, error);
    }
    ok = ok && resolve(&p, error);
    g_hash_table_unref(p.index);
    g_ptr_array_unref(p.pending);
    return ok ? g_steal_pointer(&list) : NULL;
}

MsFlowList *
ms_flow_list_load_file(const char *path, const MsTopology *topo, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, MS_INPUT_FLOWS, &data, &len, &local)) {
        g_set_error(error, MS_FLOWFILE_ERROR, MS_FLOWFILE_ERROR_IO, "%s", local->message);
        return NULL;
    }
    return ms_flow_list_load_data(data, len, path, topo, error);
}

/* --- replay --- */

typedef struct {
    const MsFlowList *list;
    MsSim *sim;
    guint32 handler;
    guint *waiting;
    MsGraph *graph;
    MsTime *begin, *end;
    gboolean failed;
    GError *error;
} Run;

static void flow_finished(Run *run, guint i);

static void
start(Run *run, guint i)
{
    const Flow *f = FLOW(run->list, i);
    run->begin[i] = ms_sim_now(run->sim);
    if (f->src == f->dst) {
        flow_finished(run, i);
        return;
    }
    if (!run->failed && !ms_sim_transfer(run->sim, f->src, f->dst, f->bytes, f->weight,
                                         run->handler, i, &run->error)) {
        if (f->id) {
            g_prefix_error(&run->error, "flow '%s': ", f->id);
        } else {
            g_prefix_error(&run->error, "flow %u: ", i);
        }
        run->failed = TRUE;
    }
}

static void
start_at(MsSim *sim, gpointer ctx, guint64 i)
{
    start(ctx, (guint)i);
}

static void
flow_finished(Run *run, guint i)
{
    MsTime now = ms_sim_now(run->sim);
    run->end[i] = now;
    guint n_succ = 0;
    const guint32 *succ = ms_graph_successors(run->graph, i, &n_succ);
    for (guint e = 0; e < n_succ; e++) {
        guint s = succ[e];
        if (--run->waiting[s] == 0) {
            MsTime t = MAX(now, FLOW(run->list, s)->start);
            ms_sim_at(run->sim, t, start_at, run, s);
        }
    }
}

static void
transfer_done(MsSim *sim, gpointer ctx, guint64 i)
{
    flow_finished(ctx, (guint)i);
}

gboolean
ms_flow_list_run(const MsFlowList *l, MsSim *sim, MsTime *begin, MsTime *end, GError **error)
{
    guint n = l->flows->len;
    Run run = {.list = l, .sim = sim, .begin = begin, .end = end};
    run.waiting = g_new(guint, MAX(n, 1));
    run.graph = ms_graph_new(n, flow_deps, l);
    for (guint i = 0; i < n; i++) {
        run.waiting[i] = FLOW(l, i)->n_deps;
        begin[i] = end[i] = MS_TIME_NEVER;
    }
    run.handler = ms_sim_add_handler(sim, transfer_done, &run);
    for (guint i = 0; i < n; i++) {
        if (run.waiting[i] == 0) {
            ms_sim_at(sim, MAX(FLOW(l, i)->start, ms_sim_now(sim)), start_at, &run, i);
        }
    }
    gboolean ok = ms_sim_run(sim, error);
    ms_sim_remove_handler(sim, run.handler);
    if (ok && run.failed) {
        g_propagate_error(error, run.error);
        run.error = NULL;
        ok = FALSE;
    }
    g_clear_error(&run.error);
    g_free(run.waiting);
    ms_graph_free(run.graph);
    return ok;
}
