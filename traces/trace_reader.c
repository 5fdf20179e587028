/* trace_reader: assembles the record stream of a text or binary trace into iterations. To know
 * that an iteration has ended it reads the first record of the next one, which it keeps aside;
 * apart from that record and one MsRouting it holds nothing, whatever the length of the file. */
#include "trace_reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/input_file.h"
#include "trace_binary.h"
#include "trace_gen.h"
#include "trace_text.h"
#include "traces/ms_traces_resources.h"

#define SAMPLE_PREFIX "/moesim/traces/"
#define SAMPLE_SUFFIX ".trace"
/* A generated sample: a recipe of generator keys (traces/samples/README.md) rather than data. */
#define RECIPE_SUFFIX ".gen"

struct _MsTraceReader {
    char *source;
    MsTraceFormat format;
    MsTraceHeader header;
    FILE *file;
    gboolean own_file;
    GBytes *bytes; /* a sample's data, read through fmemopen */
    MsTraceText *text;
    MsTraceBinary *bin;
    MsTraceGen *gen;
    MsTraceRecord pending; /* first record of the next iteration */
    guint32 *pending_ids;
    guint64 pending_pos;
    gboolean has_pending;
    gboolean done;
    gboolean failed;
};

void
ms_trace_reader_free(MsTraceReader *r)
{
    if (r == NULL) {
        return;
    }
    ms_trace_text_free(r->text);
    ms_trace_binary_free(r->bin);
    ms_trace_gen_free(r->gen);
    if (r->file && r->own_file) {
        fclose(r->file);
    }
    if (r->bytes) {
        g_bytes_unref(r->bytes);
    }
    g_free(r->pending_ids);
    g_free(r->source);
    g_free(r);
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
ms_trace_sample_names(void)
{
    char **children =
        g_resource_enumerate_children(ms_traces_get_resource(), SAMPLE_PREFIX, 0, NULL);
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; children && children[i]; i++) {
        const char *suffix = g_str_has_suffix(children[i], SAMPLE_SUFFIX)   ? SAMPLE_SUFFIX
                             : g_str_has_suffix(children[i], RECIPE_SUFFIX) ? RECIPE_SUFFIX
                                                                            : NULL;
        if (suffix) {
            g_ptr_array_add(names, g_strndup(children[i], strlen(children[i]) - strlen(suffix)));
        }
    }
    g_strfreev(children);
    g_ptr_array_sort(names, compare_names);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* Reads r->bytes through a memory stream, so bytes take the same path as a file. */
static gboolean
open_bytes(MsTraceReader *r, const char *name, GError **error)
{
    gsize size = 0;
    gconstpointer data = g_bytes_get_data(r->bytes, &size);
    r->file = fmemopen((void *)(data ? data : ""), size, "r");
    r->own_file = TRUE;
    if (r->file == NULL) {
        int e = errno;
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, "cannot open %s: %s", name,
                    g_strerror(e));
        return FALSE;
    }
    return TRUE;
}

static GBytes *
lookup_sample(const char *name, const char *suffix)
{
    g_autofree char *path = g_strconcat(SAMPLE_PREFIX, name, suffix, NULL);
    return strchr(name, '/') ? NULL
                             : g_resource_lookup_data(ms_traces_get_resource(), path, 0, NULL);
}

/* The generator keys of a recipe: its lines joined by ',', '#' comments and blank lines left out.
 */
static char *
recipe_spec(GBytes *bytes)
{
    gsize size = 0;
    const char *data = g_bytes_get_data(bytes, &size);
    g_autofree char *text = g_strndup(data, size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GString *spec = g_string_new(NULL);
    for (guint i = 0; lines[i]; i++) {
        g_strstrip(lines[i]);
        if (lines[i][0] != '\0' && lines[i][0] != '#') {
            g_string_append_printf(spec, "%s%s", spec->len ? "," : "", lines[i]);
        }
    }
    return g_string_free(spec, FALSE);
}

static gboolean
open_recipe(MsTraceReader *r, const char *name, GBytes *bytes, GError **error)
{
    g_autofree char *spec = recipe_spec(bytes);
    MsTraceGenParams params;
    if (!ms_trace_gen_params_parse(spec, &params, error) ||
        (r->gen = ms_trace_gen_new(&params, error)) == NULL) {
        g_prefix_error(error, "sample '%s': ", name);
        return FALSE;
    }
    r->format = MS_TRACE_FORMAT_GENERATED;
    r->header = *ms_trace_gen_header(r->gen);
    return TRUE;
}

static gboolean
open_sample(MsTraceReader *r, const char *name, gboolean *generated, GError **error)
{
    g_autoptr(GBytes) recipe = lookup_sample(name, RECIPE_SUFFIX);
    if (recipe && g_bytes_get_size(recipe) > 0) {
        *generated = TRUE;
        return open_recipe(r, name, recipe, error);
    }
    r->bytes = lookup_sample(name, SAMPLE_SUFFIX);
    if (r->bytes == NULL || g_bytes_get_size(r->bytes) == 0) {
        g_auto(GStrv) names = ms_trace_sample_names();
        g_autofree char *list = g_strjoinv(", ", names);
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_UNKNOWN,
                    "unknown sample '%s' (shipped samples: %s)", name, list);
        return FALSE;
    }
    g_autofree char *what = g_strdup_printf("sample '%s'", name);
    return open_bytes(r, what, error);
}

static gboolean
open_file(MsTraceReader *r, const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    r->file = ms_input_file_open(path, MS_INPUT_TRACE, &local);
    r->own_file = r->file != stdin;
    if (r->file == NULL) {
        g_set_error_literal(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, local->message);
        return FALSE;
    }
    return TRUE;
}

/* Tells binary from text by the first byte, reads the header and sizes the pending record. */
static gboolean
read_header(MsTraceReader *r, GError **error)
{
    int c = getc(r->file);
    if (c != EOF) {
        ungetc(c, r->file);
    }
    const char *name = strcmp(r->source, "-") == 0 ? "<stdin>" : r->source;
    gboolean ok;
    if (c == (guchar)MS_TRACE_BINARY_MAGIC[0]) {
        r->format = MS_TRACE_FORMAT_BINARY;
        r->bin = ms_trace_binary_new(r->file, name);
        ok = ms_trace_binary_read_header(r->bin, &r->header, error);
    } else {
        r->format = MS_TRACE_FORMAT_TEXT;
        r->text = ms_trace_text_new(r->file, name);
        ok = ms_trace_text_read_header(r->text, &r->header, error);
    }
    if (ok) {
        r->pending_ids = g_new(guint32, ms_trace_header_path_len(&r->header));
    }
    return ok;
}

MsTraceReader *
ms_trace_reader_open(const char *source, GError **error)
{
    g_return_val_if_fail(source != NULL, NULL);
    g_autoptr(MsTraceReader) r = g_new0(MsTraceReader, 1);
    r->source = g_strdup(source);
    if (g_str_has_prefix(source, "gen:")) {
        MsTraceGenParams params;
        if (!ms_trace_gen_params_parse(source + 4, &params, error)) {
            return NULL;
        }
        r->gen = ms_trace_gen_new(&params, error);
        if (r->gen == NULL) {
            return NULL;
        }
        r->format = MS_TRACE_FORMAT_GENERATED;
        r->header = *ms_trace_gen_header(r->gen);
        return g_steal_pointer(&r);
    }
    gboolean generated = FALSE;
    gboolean ok = g_str_has_prefix(source, "sample:")
                      ? open_sample(r, source + 7, &generated, error)
                      : open_file(r, source, error);
    if (!ok || (!generated && !read_header(r, error))) {
        return NULL;
    }
    return g_steal_pointer(&r);
}

MsTraceReader *
ms_trace_reader_open_bytes(GBytes *bytes, const char *source, GError **error)
{
    g_return_val_if_fail(bytes != NULL && source != NULL, NULL);
    g_autoptr(MsTraceReader) r = g_new0(MsTraceReader, 1);
    r->source = g_strdup(source);
    r->bytes = g_bytes_ref(bytes);
    if (!open_bytes(r, source, error) || !read_header(r, error)) {
        return NULL;
    }
    return g_steal_pointer(&r);
}

const MsTraceHeader *
ms_trace_reader_header(const MsTraceReader *r)
{
    return &r->header;
}

MsTraceFormat
ms_trace_reader_format(const MsTraceReader *r)
{
    return r->format;
}

const char *
ms_trace_reader_source(const MsTraceReader *r)
{
    return r->source;
}

static MsTraceRead
read_record(MsTraceReader *r, MsTraceRecord *rec, guint64 *pos, GError **error)
{
    MsTraceRead got = r->text ? ms_trace_text_read_record(r->text, rec, error)
                              : ms_trace_binary_read_record(r->bin, rec, error);
    *pos = r->text ? ms_trace_text_position(r->text) : ms_trace_binary_position(r->bin);
    return got;
}

static void
prefix_error(const MsTraceReader *r, guint64 pos, GError **error)
{
    if (r->text) {
        ms_trace_text_prefix_error(r->text, pos, error);
    } else {
        ms_trace_binary_prefix_error(r->bin, pos, error);
    }
}

static gboolean
add_record(MsRouting *routing, const MsTraceRecord *rec, GError **error)
{
    if (rec->kind == MS_TRACE_RECORD_COUNT) {
        return ms_routing_add_count(routing, rec->layer, rec->rank, rec->expert, rec->tokens,
                                    error);
    }
    return ms_routing_add_token(routing, rec->token_id, rec->rank, rec->experts, error);
}

static void
keep_pending(MsTraceReader *r, const MsTraceRecord *rec, guint64 pos)
{
    r->pending = *rec;
    if (rec->kind == MS_TRACE_RECORD_TOKEN) {
        memcpy(r->pending_ids, rec->experts,
               ms_trace_header_path_len(&r->header) * sizeof(guint32));
        r->pending.experts = r->pending_ids;
    }
    r->pending_pos = pos;
    r->has_pending = TRUE;
}

/* Adds records to routing until the iteration changes or the trace ends. rec (which may be the
 * pending record) is added before anything else is read, so keep_pending cannot overwrite it. */
static gboolean
fill_iteration(MsTraceReader *r, MsRouting *routing, MsTraceRecord *rec, guint64 *pos,
               GError **error)
{
    guint64 iteration = ms_routing_iteration(routing);
    for (;;) {
        if (!add_record(routing, rec, error)) {
            prefix_error(r, *pos, error);
            return FALSE;
        }
        guint64 next_pos = 0;
        MsTraceRead got = read_record(r, rec, &next_pos, error);
        if (got == MS_TRACE_READ_ERROR) {
            return FALSE;
        }
        if (got == MS_TRACE_READ_END) {
            r->done = TRUE;
            return TRUE;
        }
        if (rec->iteration != iteration) {
            if (rec->iteration < iteration) {
                g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_ORDER,
                            "iteration %" G_GUINT64_FORMAT " follows iteration %" G_GUINT64_FORMAT
                            ": iterations must not decrease",
                            rec->iteration, iteration);
                prefix_error(r, next_pos, error);
                return FALSE;
            }
            keep_pending(r, rec, next_pos);
            return TRUE;
        }
        *pos = next_pos;
    }
}

static gboolean
next_from_file(MsTraceReader *r, MsRouting **out, GError **error)
{
    MsTraceRecord rec;
    guint64 pos = 0;
    if (r->has_pending) {
        rec = r->pending;
        pos = r->pending_pos;
        r->has_pending = FALSE;
    } else {
        MsTraceRead got = read_record(r, &rec, &pos, error);
        if (got != MS_TRACE_READ_RECORD) {
            r->done = TRUE;
            return FALSE;
        }
    }
    g_autoptr(MsRouting) routing = ms_routing_new(&r->header, rec.iteration, error);
    if (routing == NULL) {
        prefix_error(r, pos, error);
        return FALSE;
    }
    if (!fill_iteration(r, routing, &rec, &pos, error)) {
        return FALSE;
    }
    if (!ms_routing_seal(routing, error)) {
        prefix_error(r, pos, error);
        return FALSE;
    }
    *out = g_steal_pointer(&routing);
    return TRUE;
}

gboolean
ms_trace_reader_next_iteration(MsTraceReader *r, MsRouting **out, GError **error)
{
    g_return_val_if_fail(r != NULL && out != NULL, FALSE);
    *out = NULL;
    if (r->failed) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "%s: reading stopped at an earlier error", r->source);
        return FALSE;
    }
    if (r->done) {
        return FALSE;
    }
    GError *local = NULL;
    gboolean ok = r->gen ? ms_trace_gen_next(r->gen, out, &local) : next_from_file(r, out, &local);
    if (local) {
        r->failed = TRUE;
        g_propagate_error(error, local);
        return FALSE;
    }
    if (!ok) {
        r->done = TRUE;
    }
    return ok;
}
