/* kineto: reading a PyTorch profiler trace. Events are checked as they are read (a complete
 * event needs numeric ts and dur); launches are joined to kernels by correlation id, ranges to
 * launches by thread and time; layers, per-op rows and what moesim does not model follow. The
 * format: PyTorch's export_chrome_trace (torch/autograd/profiler.py) writing Kineto's
 * ChromeTraceLogger output, as in the traces HolisticTraceAnalysis's tests hold. */
#include "kineto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/units.h"

G_DEFINE_QUARK(ms_kineto_error_quark, ms_kineto_error)

typedef enum { EV_RANGE, EV_RUNTIME, EV_KERNEL, EV_COPY, EV_OTHER } EvClass;

typedef struct {
    const char *name, *cat;
    double ts, dur;
    gint64 pid, tid; /* -1 when not an integer (e.g. "Spans") */
    gint64 corr;     /* args.correlation, -1 when none */
    EvClass klass;
    JsonObject *args; /* may be NULL */
    guint index;      /* in traceEvents, for messages */
} Ev;

typedef struct {
    GArray *evs;      /* Ev, the complete events */
    GHashTable *rt;   /* correlation -> runtime Ev index + 1 */
    GArray *kernels;  /* guint, Ev indices of kernels and copies with a runtime launch */
    GArray *launches; /* guint, runtime Ev indices, sorted by (pid, tid, ts) */
    GArray *steps;    /* guint, Ev indices of the ProfilerStep#N ranges */
    double t0;
    gint64 rank;
    guint devices;
} Trace;

static void
trace_clear(Trace *tr)
{
    g_clear_pointer(&tr->evs, g_array_unref);
    g_clear_pointer(&tr->rt, g_hash_table_unref);
    g_clear_pointer(&tr->kernels, g_array_unref);
    g_clear_pointer(&tr->launches, g_array_unref);
    g_clear_pointer(&tr->steps, g_array_unref);
}

static gboolean G_GNUC_PRINTF(4, 5)
    fail(GError **error, MsKinetoError code, const char *source, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_KINETO_ERROR, code, "%s: %s", source, msg);
    return FALSE;
}

gboolean
ms_kineto_sniff(const char *data, gsize len)
{
    gsize i = 0;
    while (i < len && g_ascii_isspace(data[i])) {
        i++;
    }
    if (i >= len || data[i] != '{') {
        return FALSE;
    }
    /* The key may come after the header fields (schemaVersion, deviceProperties ...). */
    gsize look = MIN(len, (gsize)1 << 20);
    return g_strstr_len(data, (gssize)look, "\"traceEvents\"") != NULL;
}

static gboolean
number(JsonObject *o, const char *key, double *out)
{
    JsonNode *n = json_object_get_member(o, key);
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n)) {
        return FALSE;
    }
    GType t = json_node_get_value_type(n);
    if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE) {
        return FALSE;
    }
    *out = json_node_get_double(n);
    return isfinite(*out);
}

static gint64
integer_or(JsonObject *o, const char *key, gint64 dflt)
{
    JsonNode *n = o ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64) {
        return dflt;
    }
    return json_node_get_int(n);
}

static const char *
string_or(JsonObject *o, const char *key, const char *dflt)
{
    JsonNode *n = o ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING) {
        return dflt;
    }
    return json_node_get_string(n);
}

static EvClass
classify(const char *cat)
{
    if (!strcmp(cat, "user_annotation") || !strcmp(cat, "python_function") ||
        !strcmp(cat, "cpu_op")) {
        return EV_RANGE;
    }
    if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
        return EV_RUNTIME;
    }
    if (!strcmp(cat, "kernel")) {
        return EV_KERNEL;
    }
    if (!strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset")) {
        return EV_COPY;
    }
    return EV_OTHER;
}

static int
cmp_launch(gconstpointer x, gconstpointer y, gpointer data)
{
    const Ev *evs = data;
    const Ev *a = &evs[*(const guint *)x], *b = &evs[*(const guint *)y];
    if (a->pid != b->pid) {
        return a->pid < b->pid ? -1 : 1;
    }
    if (a->tid != b->tid) {
        return a->tid < b->tid ? -1 : 1;
    }
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Reads every complete event; a malformed one is an error naming its index. */
static gboolean
trace_read(Trace *tr, JsonNode *root, const char *source, GError **error)
{
    JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *evn = top ? json_object_get_member(top, "traceEvents") : NULL;
    if (evn == NULL || !JSON_NODE_HOLDS_ARRAY(evn)) {
        return fail(error, MS_KINETO_ERROR_FORMAT, source,
                    "not a PyTorch profiler trace: no traceEvents array");
    }
    JsonNode *dist = json_object_get_member(top, "distributedInfo");
    tr->rank = dist && JSON_NODE_HOLDS_OBJECT(dist)
                   ? integer_or(json_node_get_object(dist), "rank", -1)
                   : -1;
    JsonNode *dev = json_object_get_member(top, "deviceProperties");
    tr->devices =
        dev && JSON_NODE_HOLDS_ARRAY(dev) ? json_array_get_length(json_node_get_array(dev)) : 0;
    JsonArray *a = json_node_get_array(evn);
    tr->evs = g_array_new(FALSE, FALSE, sizeof(Ev));
    tr->rt = g_hash_table_new(g_int64_hash, g_int64_equal);
    tr->kernels = g_array_new(FALSE, FALSE, sizeof(guint));
    tr->launches = g_array_new(FALSE, FALSE, sizeof(guint));
    tr->steps = g_array_new(FALSE, FALSE, sizeof(guint));
    tr->t0 = INFINITY;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *n = json_array_get_element(a, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
        if (o == NULL) {
            return fail(error, MS_KINETO_ERROR_VALUE, source, "traceEvents[%u] is not an object",
                        i);
        }
        if (strcmp(string_or(o, "ph", ""), "X") != 0) {
            continue; /* metadata, instants, flows, counters */
        }
        Ev e = {.name = string_or(o, "name", NULL), .cat = string_or(o, "cat", ""), .index = i};
        if (e.name == NULL || !number(o, "ts", &e.ts) || !number(o, "dur", &e.dur) || e.dur < 0) {
            return fail(error, MS_KINETO_ERROR_VALUE, source,
                        "traceEvents[%u]: a complete event (ph X) needs a string name and "
                        "finite ts and dur >= 0",
                        i);
        }
        JsonNode *args = json_object_get_member(o, "args");
        e.args = args && JSON_NODE_HOLDS_OBJECT(args) ? json_node_get_object(args) : NULL;
        e.pid = integer_or(o, "pid", -1);
        e.tid = integer_or(o, "tid", -1);
        e.corr = integer_or(e.args, "correlation", -1);
        e.klass = classify(e.cat);
        tr->t0 = MIN(tr->t0, e.ts);
        g_array_append_val(tr->evs, e);
    }
    Ev *evs = (Ev *)tr->evs->data;
    for (guint i = 0; i < tr->evs->len; i++) {
        if (evs[i].klass == EV_RANGE && g_str_has_prefix(evs[i].name, "ProfilerStep#")) {
            g_array_append_val(tr->steps, i);
        }
        if (evs[i].klass == EV_RUNTIME && evs[i].corr >= 0) {
            g_hash_table_insert(tr->rt, &evs[i].corr, GUINT_TO_POINTER(i + 1));
            g_array_append_val(tr->launches, i);
        }
    }
    for (guint i = 0; i < tr->evs->len; i++) {
        if ((evs[i].klass == EV_KERNEL || evs[i].klass == EV_COPY) && evs[i].corr >= 0 &&
            g_hash_table_contains(tr->rt, &evs[i].corr)) {
            g_array_append_val(tr->kernels, i);
        }
    }
    g_array_sort_with_data(tr->launches, cmp_launch, evs);
    return TRUE;
}

/* The runtime events of (pid, tid) that start in [a, b]: [*lo, *hi) of tr->launches. */
static void
launches_in(const Trace *tr, gint64 pid, gint64 tid, double a, double b, guint *lo, guint *hi)
{
    const Ev *evs = (const Ev *)tr->evs->data;
    const guint *l = (const guint *)tr->launches->data;
    guint n = tr->launches->len, x = 0, y = n;
    /* First index not before (pid, tid, a). */
    while (x < y) {
        guint mid = x + (y - x) / 2;
        const Ev *m = &evs[l[mid]];
        gboolean before =
            m->pid < pid || (m->pid == pid && (m->tid < tid || (m->tid == tid && m->ts < a)));
        if (before) {
            x = mid + 1;
        } else {
            y = mid;
        }
    }
    *lo = x;
    while (x < n && evs[l[x]].pid == pid && evs[l[x]].tid == tid && evs[l[x]].ts <= b) {
        x++;
    }
    *hi = x;
}

/* The kernel (or copy) a runtime event launched, -1 when none. */
static GHashTable *
kernel_of_launch(const Trace *tr)
{
    const Ev *evs = (const Ev *)tr->evs->data;
    GHashTable *h = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint k = 0; k < tr->kernels->len; k++) {
        guint ki = g_array_index(tr->kernels, guint, k);
        guint ri = GPOINTER_TO_UINT(g_hash_table_lookup(tr->rt, &evs[ki].corr)) - 1;
        g_hash_table_insert(h, GUINT_TO_POINTER(ri + 1), GUINT_TO_POINTER(ki + 1));
    }
    return h;
}

static gboolean
name_has(const char *name, const char *const *needles)
{
    g_autofree char *low = g_ascii_strdown(name, -1);
    for (guint i = 0; needles[i]; i++) {
        if (strstr(low, needles[i])) {
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean
is_nccl(const char *name)
{
    static const char *const n[] = {"nccl", NULL};
    return name_has(name, n);
}

/* GEMM kernels by the names cuBLAS, CUTLASS, rocBLAS/Tensile and Triton MoE kernels carry. */
static gboolean
is_gemm(const char *name)
{
    static const char *const n[] = {"gemm",  "cutlass", "xmma",      "cublas", "cijk_",
                                    "wgmma", "matmul",  "fused_moe", "_mma",   NULL};
    return name_has(name, n);
}

static gboolean
is_sync(const char *name)
{
    static const char *const n[] = {"synchronize", NULL};
    return name_has(name, n);
}

typedef struct {
    double a, b;
} Span;

static int
cmp_kernel_ts(gconstpointer x, gconstpointer y, gpointer data)
{
    const Ev *evs = data;
    double a = evs[*(const guint *)x].ts, b = evs[*(const guint *)y].ts;
    return a < b ? -1 : a > b;
}

static int
cmp_span(gconstpointer x, gconstpointer y)
{
    const Span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

static double
busy(GArray *spans)
{
    if (spans->len == 0) {
        return 0;
    }
    g_array_sort(spans, cmp_span);
    const Span *s = (const Span *)spans->data;
    double total = 0, a = s[0].a, b = s[0].b;
    for (guint i = 1; i < spans->len; i++) {
        if (s[i].a <= b) {
            b = MAX(b, s[i].b);
        } else {
            total += b - a;
            a = s[i].a;
            b = s[i].b;
        }
    }
    return total + (b - a);
}

/* What a layer range launched, split into parts. */
typedef struct {
    double end;                     /* the later of the range's end and its last kernel's */
    double part[MS_LAYER_N_PARTS];  /* busy time per part */
    double kernels_busy, copies_us; /* all kernels; device copies among them */
    guint syncs;                    /* host synchronisations inside the range */
    double sync_us;
} LayerWork;

static void
layer_work(const Trace *tr, GHashTable *k_of, const Ev *r, LayerWork *w)
{
    const Ev *evs = (const Ev *)tr->evs->data;
    guint lo, hi;
    memset(w, 0, sizeof *w);
    w->end = r->ts + r->dur;
    launches_in(tr, r->pid, r->tid, r->ts, r->ts + r->dur, &lo, &hi);
    g_autoptr(GArray) ks = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = lo; i < hi; i++) {
        guint ri = g_array_index(tr->launches, guint, i);
        if (is_sync(evs[ri].name)) {
            w->syncs++;
            w->sync_us += evs[ri].dur;
        }
        guint ki = GPOINTER_TO_UINT(g_hash_table_lookup(k_of, GUINT_TO_POINTER(ri + 1)));
        if (ki) {
            ki--;
            g_array_append_val(ks, ki);
        }
    }
    /* Parts by kernel order (the gate's own projection is a GEMM too):
     *   c0 the first NCCL kernel; e0 the first GEMM after it (without NCCL kernels: the second
     *   GEMM, the first being the gate's); c1 the first NCCL kernel after e0.
     *   before c0 and e0: gate; NCCL before e0: dispatch; from e0 to c1: expert (its GEMMs and
     *   the activation and gathers between them); NCCL from c1: combine; the rest after c1:
     *   other. Device copies count in other wherever they fall. */
    g_array_sort_with_data(ks, cmp_kernel_ts, (gpointer)evs);
    double c0 = INFINITY, e0 = INFINITY, c1 = INFINITY;
    guint gemms = 0;
    for (guint i = 0; i < ks->len; i++) {
        const Ev *k = &evs[g_array_index(ks, guint, i)];
        if (k->klass != EV_KERNEL) {
            continue;
        }
        if (is_nccl(k->name) && isinf(c0)) {
            c0 = k->ts;
        }
        if (is_gemm(k->name) && !is_nccl(k->name)) {
            gemms++;
            if (isinf(e0) && ((isfinite(c0) && k->ts >= c0) || (isinf(c0) && gemms == 2))) {
                e0 = k->ts;
            }
        }
        if (is_nccl(k->name) && isfinite(e0) && k->ts >= e0 && isinf(c1)) {
            c1 = k->ts;
        }
    }
    GArray *spans[MS_LAYER_N_PARTS];
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        spans[p] = g_array_new(FALSE, FALSE, sizeof(Span));
    }
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Span));
    g_autoptr(GArray) copies = g_array_new(FALSE, FALSE, sizeof(Span));
    for (guint i = 0; i < ks->len; i++) {
        const Ev *k = &evs[g_array_index(ks, guint, i)];
        Span sp = {k->ts, k->ts + k->dur};
        MsLayerPart part;
        gboolean nccl = k->klass == EV_KERNEL && is_nccl(k->name);
        if (k->klass == EV_COPY) {
            part = MS_LAYER_OTHER;
            g_array_append_val(copies, sp);
        } else if (nccl) {
            part = k->ts < e0 ? MS_LAYER_DISPATCH : MS_LAYER_COMBINE;
        } else if (k->ts < MIN(c0, e0)) {
            part = MS_LAYER_GATE;
        } else if (k->ts >= e0 && k->ts < c1) {
            part = MS_LAYER_EXPERT;
        } else {
            part = MS_LAYER_OTHER;
        }
        g_array_append_val(spans[part], sp);
        g_array_append_val(all, sp);
        w->end = MAX(w->end, sp.b);
    }
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        w->part[p] = busy(spans[p]);
        g_array_unref(spans[p]);
    }
    w->kernels_busy = busy(all);
    w->copies_us = busy(copies);
}

static gboolean
phase_of(const char *text, MsPhase *out)
{
    if (text == NULL || *text == '\0' || !strcmp(text, "fwd") || !strcmp(text, "forward")) {
        *out = MS_PHASE_FORWARD;
        return TRUE;
    }
    if (!strcmp(text, "bwd") || !strcmp(text, "backward")) {
        *out = MS_PHASE_BACKWARD;
        return TRUE;
    }
    return FALSE;
}

/* ProfilerStep#N ranges: the step a time falls in, -1 when none (steps do not overlap). */
static gint64
step_of(const Trace *tr, double ts)
{
    const Ev *evs = (const Ev *)tr->evs->data;
    for (guint i = 0; i < tr->steps->len; i++) {
        const Ev *e = &evs[g_array_index(tr->steps, guint, i)];
        if (ts >= e->ts && ts < e->ts + e->dur) {
            return g_ascii_strtoll(e->name + strlen("ProfilerStep#"), NULL, 10);
        }
    }
    return -1;
}

gboolean
ms_kineto_read_layers(JsonNode *root, const char *source, const MsKinetoOptions *opts,
                      MsLayerTable *t, GError **error)
{
    const char *pattern =
        opts && opts->layer_pattern ? opts->layer_pattern : MS_KINETO_LAYER_PATTERN;
    g_autoptr(GError) local = NULL;
    g_autoptr(GRegex) re = g_regex_new(pattern, G_REGEX_OPTIMIZE, 0, &local);
    if (re == NULL || g_regex_get_capture_count(re) < 1) {
        return fail(error, MS_KINETO_ERROR_PATTERN, source, "layer pattern '%s': %s", pattern,
                    re ? "needs a group (...) for the layer number" : local->message);
    }
    Trace tr = {0};
    if (!trace_read(&tr, root, source, error)) {
        trace_clear(&tr);
        return FALSE;
    }
    guint gpu = tr.rank >= 0 ? (guint)tr.rank : (opts && opts->gpu > 0 ? (guint)opts->gpu : 0);
    g_autoptr(GHashTable) k_of = kernel_of_launch(&tr);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    const Ev *evs = (const Ev *)tr.evs->data;
    guint layers = 0, syncs = 0;
    double copies = 0, sync_us = 0;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < tr.evs->len; i++) {
        const Ev *r = &evs[i];
        g_autoptr(GMatchInfo) m = NULL;
        if (r->klass != EV_RANGE || !strcmp(r->cat, "cpu_op") ||
            !g_regex_match(re, r->name, 0, &m)) {
            continue;
        }
        g_autofree char *num = g_match_info_fetch(m, 1);
        g_autofree char *ph = g_regex_get_capture_count(re) >= 2 ? g_match_info_fetch(m, 2) : NULL;
        guint64 layer = 0;
        MsLayerRow row = {.gpu = gpu};
        if (!ms_parse_uint(num, 0, 4095, &layer, NULL) || !phase_of(ph, &row.phase)) {
            ok = fail(error, MS_KINETO_ERROR_VALUE, source,
                      "traceEvents[%u] '%s': the pattern's groups give layer '%s' and phase '%s' "
                      "(a layer is 0 to 4095, a phase fwd, forward, bwd or backward)",
                      r->index, r->name, num ? num : "", ph ? ph : "");
            break;
        }
        row.layer = (gint32)layer;
        gint64 step = step_of(&tr, r->ts);
        g_autofree char *key = g_strdup_printf("%" G_GUINT64_FORMAT ".%d", layer, row.phase);
        guint count = GPOINTER_TO_UINT(g_hash_table_lookup(seen, key));
        g_hash_table_replace(seen, g_strdup(key), GUINT_TO_POINTER(count + 1));
        row.iteration = step >= 0 ? (guint32)MIN(step, G_MAXUINT32) : count;
        LayerWork w;
        layer_work(&tr, k_of, r, &w);
        row.start_us = r->ts - tr.t0;
        row.layer_us = w.end - r->ts;
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            row.part_us[p] = w.part[p];
        }
        /* The GPU idle inside the layer is waiting for the host: the framework's time. */
        row.part_us[MS_LAYER_HOST] = MAX(0.0, row.layer_us - w.kernels_busy);
        row.busy_us = row.layer_us;
        /* Ranges of one layer in one step (micro-batches of gradient accumulation) add up. */
        ms_layer_table_accumulate(t, &row);
        layers++;
        syncs += w.syncs;
        sync_us += w.sync_us;
        copies += w.copies_us;
    }
    trace_clear(&tr);
    if (!ok) {
        return FALSE;
    }
    if (layers == 0) {
        return fail(error, MS_KINETO_ERROR_EMPTY, source,
                    "no range matches the layer pattern '%s': annotate each layer with "
                    "torch.profiler.record_function(f\"L{i}.fwd\") or give --layer-pattern",
                    pattern);
    }
    if (copies > 0) {
        g_autofree char *text = g_strdup_printf(
            "%.3f us per layer of device copies (gpu_memcpy, gpu_memset): moesim models no "
            "host-device copy",
            copies / layers);
        ms_layer_table_set_meta(t, "unmodelled.device copies", text);
    }
    if (syncs > 0) {
        g_autofree char *text = g_strdup_printf(
            "%.3f per layer, %.3f us each (cuda*Synchronize): moesim has them only as the "
            "framework's host_syncs x host_sync",
            (double)syncs / layers, sync_us / syncs);
        ms_layer_table_set_meta(t, "measured.host synchronisations", text);
    }
    ms_layer_table_set_meta(t, "backend", "pytorch-profiler");
    return TRUE;
}

/* --- per-op rows --- */

static const char *
dtype_of(const char *torch)
{
    static const struct {
        const char *torch, *ours;
    } map[] = {
        {"float", "fp32"},
        {"c10::Half", "fp16"},
        {"c10::BFloat16", "bf16"},
        {"double", "fp64"},
        {"Float", "fp32"},
        {"Half", "fp16"},
        {"BFloat16", "bf16"},
        {"c10::Float8_e4m3fn", "fp8_e4m3"},
        {"c10::Float8_e5m2", "fp8_e5m2"},
        {"Byte", "uint8"},
        {"Char", "int8"},
        {"Int", "int32"},
        {"Long", "int64"},
    };
    for (guint i = 0; torch && i < G_N_ELEMENTS(map); i++) {
        if (!strcmp(torch, map[i].torch)) {
            return map[i].ours;
        }
    }
    return NULL;
}

/* Input Dims[i] as a list of integers; FALSE when absent or malformed. */
static gboolean
dims(JsonObject *args, guint i, gint64 *out, guint *n)
{
    JsonNode *d = args ? json_object_get_member(args, "Input Dims") : NULL;
    if (d == NULL || !JSON_NODE_HOLDS_ARRAY(d) ||
        i >= json_array_get_length(json_node_get_array(d))) {
        return FALSE;
    }
    JsonNode *e = json_array_get_element(json_node_get_array(d), i);
    if (!JSON_NODE_HOLDS_ARRAY(e)) {
        return FALSE;
    }
    JsonArray *a = json_node_get_array(e);
    *n = MIN(json_array_get_length(a), 8u);
    for (guint k = 0; k < *n; k++) {
        JsonNode *v = json_array_get_element(a, k);
        if (!JSON_NODE_HOLDS_VALUE(v) || json_node_get_value_type(v) != G_TYPE_INT64 ||
            json_node_get_int(v) < 1) {
            return FALSE;
        }
        out[k] = json_node_get_int(v);
    }
    return TRUE;
}

static const char *
input_type(JsonObject *args, guint i)
{
    JsonNode *d = args ? json_object_get_member(args, "Input type") : NULL;
    if (d == NULL || !JSON_NODE_HOLDS_ARRAY(d) ||
        i >= json_array_get_length(json_node_get_array(d))) {
        return NULL;
    }
    JsonNode *e = json_array_get_element(json_node_get_array(d), i);
    return JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING
               ? json_node_get_string(e)
               : NULL;
}

/* m, n, k of a GEMM op from its input shapes; FALSE for shapes that are not a GEMM. */
static gboolean
gemm_shape(const Ev *e, guint64 *m, guint64 *n, guint64 *k, const char **dtype)
{
    gint64 a[8], b[8];
    guint na = 0, nb = 0;
    guint first = !strcmp(e->name, "aten::addmm") ? 1 : 0; /* addmm(bias, a, b) */
    if (!dims(e->args, first, a, &na) || !dims(e->args, first + 1, b, &nb) || na < 2 || nb < 1) {
        return FALSE;
    }
    *dtype = dtype_of(input_type(e->args, first));
    guint64 rows = 1;
    for (guint i = 0; i + 1 < na; i++) {
        rows *= (guint64)a[i];
    }
    if (!strcmp(e->name, "aten::linear")) {
        /* linear(x [..., k], w [n, k]) */
        if (nb != 2 || b[1] != a[na - 1]) {
            return FALSE;
        }
        *m = rows, *k = (guint64)a[na - 1], *n = (guint64)b[0];
        return *dtype != NULL;
    }
    /* mm(a [m, k], b [k, n]); bmm(a [B, m, k], b [B, k, n]): B m rows. */
    if (nb < 2 || b[nb - 2] != a[na - 1]) {
        return FALSE;
    }
    *m = rows, *k = (guint64)a[na - 1], *n = (guint64)b[nb - 1];
    return *dtype != NULL;
}

static gboolean
collective_kind(const char *name, MsMeasurementKind *out)
{
    static const struct {
        const char *name;
        MsMeasurementKind kind;
    } map[] = {
        {"all_to_all", MS_MEASUREMENT_ALLTOALL},
        {"all_to_allv", MS_MEASUREMENT_ALLTOALL},
        {"allreduce", MS_MEASUREMENT_ALLREDUCE},
        {"all_reduce", MS_MEASUREMENT_ALLREDUCE},
        {"all_gather", MS_MEASUREMENT_ALLGATHER},
        {"_allgather_base", MS_MEASUREMENT_ALLGATHER},
        {"allgather", MS_MEASUREMENT_ALLGATHER},
        {"reduce_scatter", MS_MEASUREMENT_REDUCESCATTER},
        {"_reduce_scatter_base", MS_MEASUREMENT_REDUCESCATTER},
    };
    for (guint i = 0; name && i < G_N_ELEMENTS(map); i++) {
        if (!strcmp(name, map[i].name)) {
            *out = map[i].kind;
            return TRUE;
        }
    }
    return FALSE;
}

/* Busy time of the kernels launched inside range e (its own thread), 0 when none. */
static double
kernels_of(const Trace *tr, GHashTable *k_of, const Ev *e, gboolean nccl_only)
{
    const Ev *evs = (const Ev *)tr->evs->data;
    guint lo, hi;
    launches_in(tr, e->pid, e->tid, e->ts, e->ts + e->dur, &lo, &hi);
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(Span));
    for (guint i = lo; i < hi; i++) {
        guint ri = g_array_index(tr->launches, guint, i);
        guint ki = GPOINTER_TO_UINT(g_hash_table_lookup(k_of, GUINT_TO_POINTER(ri + 1)));
        if (ki && evs[ki - 1].klass == EV_KERNEL && (!nccl_only || is_nccl(evs[ki - 1].name))) {
            Span s = {evs[ki - 1].ts, evs[ki - 1].ts + evs[ki - 1].dur};
            g_array_append_val(spans, s);
        }
    }
    return busy(spans);
}

gboolean
ms_kineto_read_measurements(JsonNode *root, const char *source, MsMeasurementSet *set, guint *added,
                            GError **error)
{
    Trace tr = {0};
    *added = 0;
    if (!trace_read(&tr, root, source, error)) {
        trace_clear(&tr);
        return FALSE;
    }
    g_autoptr(GHashTable) k_of = kernel_of_launch(&tr);
    const Ev *evs = (const Ev *)tr.evs->data;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < tr.evs->len; i++) {
        const Ev *e = &evs[i];
        MsMeasurement row = {.ranks = 1,
                             .ranks_per_node = 1,
                             .label = e->name,
                             .source = source,
                             .min_s = NAN,
                             .median_s = NAN,
                             .mean_s = NAN};
        MsMeasurementKind kind;
        if (e->klass == EV_RUNTIME && !strcmp(e->name, "cudaLaunchKernel") && e->dur > 0) {
            row.kind = MS_MEASUREMENT_LAUNCH;
            row.seconds = e->dur * 1e-6;
            row.label = "";
        } else if (!strcmp(e->cat, "cpu_op") &&
                   (!strcmp(e->name, "aten::mm") || !strcmp(e->name, "aten::addmm") ||
                    !strcmp(e->name, "aten::bmm") || !strcmp(e->name, "aten::linear"))) {
            if (!gemm_shape(e, &row.m, &row.n, &row.k, &row.dtype)) {
                continue;
            }
            row.kind = MS_MEASUREMENT_GEMM;
            row.seconds = kernels_of(&tr, k_of, e, FALSE) * 1e-6;
        } else if (!strcmp(e->cat, "cpu_op") && !strcmp(e->name, "record_param_comms") &&
                   collective_kind(string_or(e->args, "Collective name", NULL), &kind)) {
            gint64 nelems = integer_or(e->args, "In msg nelems", 0);
            gint64 group = integer_or(e->args, "Group size", 0);
            const char *dt = dtype_of(string_or(e->args, "dtype", NULL));
            guint size = ms_dtype_size(dt);
            if (nelems <= 0 || group < 1 || group > (1 << 20) || size == 0) {
                continue;
            }
            row.kind = kind;
            row.bytes = (guint64)nelems * size;
            row.ranks = (guint32)group;
            row.ranks_per_node = tr.devices ? MIN((guint32)group, tr.devices) : (guint32)group;
            row.dtype = dt;
            row.label = "";
            row.seconds = kernels_of(&tr, k_of, e, TRUE) * 1e-6;
        } else {
            continue;
        }
        if (!(row.seconds > 0)) {
            continue; /* nothing launched on the GPU (a view, a CPU tensor) */
        }
        ok = ms_measurement_set_add(set, &row, error);
        *added += ok;
    }
    trace_clear(&tr);
    return ok;
}
