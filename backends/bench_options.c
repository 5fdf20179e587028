/* bench_options: the range of every number `moesim bench` takes, each option's text parsed
 * against it, and the run-time limit of the concurrency benchmark's loop. */
#include "bench_options.h"

#include <string.h>

#include "sim/base/units.h"
#include "sim/calib/meas_csv.h"

#define WHERE "`moesim bench`"
#define LOOP_WHERE "a concurrency or overlap run"
#define LOOP_KEY "allreduce calls"
#define SIZE_REASON                                                                                \
    "the send and receive buffers of the largest size, twice over in a concurrency run, fit in "   \
    "an 80 GiB GPU"

static const char *const dtypes[] = {"bf16", "fp16", "bfloat16", "half", NULL};

static const MsRange fields[] = {
    {WHERE, "--iters", MS_RANGE_COUNT, 1, MS_BENCH_MAX_ITERS,
     "timed calls per size (nccl-tests' -n); 10^5 calls of a 16 GiB allreduce take hours"},
    {WHERE, "--warmup", MS_RANGE_COUNT, 0, MS_BENCH_MAX_ITERS,
     "untimed calls before them (nccl-tests' -w); as --iters"},
    {WHERE, "--minbytes", MS_RANGE_BYTES, 1, (double)MS_BENCH_MAX_BYTES,
     "the sweep's smallest size (nccl-tests' -b); " SIZE_REASON},
    {WHERE, "--maxbytes", MS_RANGE_BYTES, 1, (double)MS_BENCH_MAX_BYTES,
     "the largest (nccl-tests' -e), at least --minbytes; at most 4096 sizes in all"},
    {WHERE, "--tokens", MS_RANGE_COUNT, 1, MS_BENCH_MAX_TOKENS,
     "each token count of the GEMM sweep, increasing, at most 4096; at 2^20 tokens a gated "
     "d_ffn 14336 expert's up projection alone writes 56 GiB"},
    {WHERE, "--d-model", MS_RANGE_COUNT, 1, MS_BENCH_MAX_DIM,
     "the expert's width; 2^18 is 18 times Mixtral-8x7B's widest (d_ffn 14336)"},
    {WHERE, "--d-ffn", MS_RANGE_COUNT, 1, MS_BENCH_MAX_DIM, "as --d-model"},
    {WHERE, "--concurrency-sizes", MS_RANGE_BYTES, 1, (double)MS_BENCH_MAX_BYTES,
     "each all-to-all size, increasing, at most 4096; " SIZE_REASON},
    {WHERE, "--background", MS_RANGE_BYTES, 2, (double)MS_BENCH_MAX_BYTES,
     "the allreduce looping under them, at least one bf16 element; " SIZE_REASON},
    {WHERE, "--channels", MS_RANGE_COUNT, 1, MS_MEAS_MAX_CHANNELS,
     "NCCL_MIN/MAX_NCHANNELS, NCCL's MAXCHANNELS (64 since 2.19); without it NCCL's choice"},
    {WHERE, "--qps", MS_RANGE_COUNT, 1, MS_MEAS_MAX_QPS,
     "NCCL_IB_QPS_PER_CONNECTION, NCCL_IB_MAX_QPS (128); without it NCCL's default"},
    {WHERE, "--dtype", MS_RANGE_CHOICE, 0, G_N_ELEMENTS(dtypes) - 2,
     "of the GEMMs and the collectives; bfloat16 and half are nccl-tests' spellings of bf16 and "
     "fp16",
     dtypes},
    {LOOP_WHERE, LOOP_KEY, MS_RANGE_COUNT, 1, MS_BENCH_MAX_LOOP,
     "the --background allreduce's calls looping under one size's all-to-alls or one kernel's "
     "calls, sized from their times: more means a --background too small for them"},
    {NULL},
};

static const MsRangeTable table = {"Benchmark options (`moesim bench`)", fields};

const MsRangeTable *
ms_bench_ranges(void)
{
    return &table;
}

/* One value of r from text; item > 0 names it within a list. Sizes may be bare digits, as in
 * nccl-tests' -b 8. */
static gboolean
parse_value(const MsRange *r, const char *text, guint item, double *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    gboolean ok;
    if (r->unit == MS_RANGE_BYTES && *text && strspn(text, "0123456789") == strlen(text)) {
        guint64 v = 0;
        ok = ms_parse_uint(text, 0, G_MAXUINT64, &v, &local) &&
             ms_range_check(r, (double)v, text, &local);
        *out = (double)v;
    } else {
        ok = ms_range_parse(r, text, out, &local);
    }
    if (!ok) {
        return item ? ms_bench_spec_error(error, "%s: item %u: %s", r->key, item, local->message)
                    : ms_bench_spec_error(error, "%s: %s", r->key, local->message);
    }
    return TRUE;
}

/* A comma-separated, strictly increasing list of r's values. */
static GArray *
parse_list(const MsRange *r, const char *text, GError **error)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    if (items[0] == NULL) {
        ms_bench_spec_error(error, "%s: no value in '%s'", r->key, text);
        return NULL;
    }
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; items[i]; i++) {
        const char *item = g_strstrip(items[i]);
        double v = 0;
        if (!parse_value(r, item, i + 1, &v, error)) {
            return NULL;
        }
        double last = values->len ? g_array_index(values, double, values->len - 1) : -1;
        if (values->len && v <= last) {
            ms_bench_spec_error(error, "%s: item %u, %.0f, does not increase after %.0f", r->key,
                                i + 1, v, last);
            return NULL;
        }
        g_array_append_val(values, v);
    }
    if (values->len > MS_BENCH_MAX_POINTS) {
        ms_bench_spec_error(error, "%s: %u values, at most %u", r->key, values->len,
                            MS_BENCH_MAX_POINTS);
        return NULL;
    }
    return g_steal_pointer(&values);
}

static gboolean
set_list(MsBenchSpec *spec, const MsRange *r, const char *text, GError **error)
{
    g_autoptr(GArray) values = parse_list(r, text, error);
    if (values == NULL) {
        return FALSE;
    }
    gboolean tokens = strcmp(r->key, "--tokens") == 0;
    GArray *into = tokens ? spec->tokens : spec->concurrency_sizes;
    g_array_set_size(into, 0);
    for (guint i = 0; i < values->len; i++) {
        double v = g_array_index(values, double, i);
        if (tokens) {
            guint32 t = (guint32)v;
            g_array_append_val(into, t);
        } else {
            guint64 b = (guint64)v;
            g_array_append_val(into, b);
        }
    }
    return TRUE;
}

gboolean
ms_bench_option_set(MsBenchSpec *spec, const char *option, const char *text, GError **error)
{
    const MsRange *r = NULL;
    for (const MsRange *f = fields; f->key && r == NULL; f++) {
        r = strcmp(f->where, WHERE) == 0 && strcmp(f->key, option) == 0 ? f : NULL;
    }
    g_return_val_if_fail(r != NULL && text != NULL, FALSE);
    if (strcmp(option, "--tokens") == 0 || strcmp(option, "--concurrency-sizes") == 0) {
        return set_list(spec, r, text, error);
    }
    double v = 0;
    if (!parse_value(r, text, 0, &v, error)) {
        return FALSE;
    }
    const struct {
        const char *option;
        guint32 *u32;
        guint64 *u64;
    } targets[] = {
        {"--iters", &spec->iters, NULL},
        {"--warmup", &spec->warmup, NULL},
        {"--minbytes", NULL, &spec->min_bytes},
        {"--maxbytes", NULL, &spec->max_bytes},
        {"--d-model", NULL, &spec->d_model},
        {"--d-ffn", NULL, &spec->d_ffn},
        {"--background", NULL, &spec->background_bytes},
        {"--channels", &spec->channels, NULL},
        {"--qps", &spec->qps, NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
        if (strcmp(option, targets[i].option) == 0) {
            if (targets[i].u32) {
                *targets[i].u32 = (guint32)v;
            } else {
                *targets[i].u64 = (guint64)v;
            }
            return TRUE;
        }
    }
    /* --dtype: nccl-tests' spellings stand for moesim's. */
    g_free(spec->dtype);
    spec->dtype = g_strdup(dtypes[(guint)v % 2]);
    return TRUE;
}

gboolean
ms_bench_loop_check(double calls, const char *timed, guint64 background, GError **error)
{
    const MsRange *r = ms_range_find(fields, LOOP_WHERE, LOOP_KEY);
    g_autofree char *text = g_strdup_printf("%.0f", calls);
    g_autoptr(GError) local = NULL;
    if (ms_range_check(r, calls, text, &local)) {
        return TRUE;
    }
    return ms_bench_spec_error(error,
                               "%s: %s: %s needs that many calls of the %" G_GUINT64_FORMAT
                               " B allreduce to loop under it: give a larger --background",
                               LOOP_KEY, local->message, timed, background);
}
