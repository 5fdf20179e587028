/* sweep: the worker pool over prepared points, and the table of their rows. */
#include "sweep.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/input_file.h"
#include "sim/base/output_file.h"
#include "sim/base/units.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_shards.h"
#include "sim/sweep_variants.h"

G_DEFINE_QUARK(ms_sweep_error_quark, ms_sweep_error)

struct _MsSweep {
    const MsInputs *base;
    MsScenario settings;
    MsSweepGrid *grid;
    MsSweepVariants *variants;
    char **rows; /* per point: its table row, NULL until it ran */
    guint n_rows;
    gboolean ran;
    MsOutputFile *journal; /* rows as they finish, or NULL */
    char *journal_path;
    gboolean journal_failed;
    GMutex lock;
};

MsSweep *
ms_sweep_new(const MsInputs *base, const MsScenario *settings)
{
    MsSweep *sw = g_new0(MsSweep, 1);
    sw->base = base;
    sw->settings = *settings;
    sw->grid = ms_sweep_grid_new();
    g_mutex_init(&sw->lock);
    return sw;
}

void
ms_sweep_free(MsSweep *sw)
{
    if (sw == NULL) {
        return;
    }
    for (guint i = 0; i < sw->n_rows; i++) {
        g_free(sw->rows[i]);
    }
    g_free(sw->rows);
    if (sw->journal) {
        ms_output_file_free(sw->journal);
    }
    g_free(sw->journal_path);
    ms_sweep_variants_free(sw->variants);
    ms_sweep_grid_free(sw->grid);
    g_mutex_clear(&sw->lock);
    g_free(sw);
}

gboolean
ms_sweep_add_axis(MsSweep *sw, const char *spec, GError **error)
{
    g_return_val_if_fail(sw->variants == NULL, FALSE);
    return ms_sweep_grid_add_axis(sw->grid, spec, error);
}

const MsSweepGrid *
ms_sweep_grid(const MsSweep *sw)
{
    return sw->grid;
}

guint
ms_sweep_n_points(const MsSweep *sw)
{
    return ms_sweep_grid_n_points(sw->grid);
}

gboolean
ms_sweep_prepare(MsSweep *sw, GError **error)
{
    /* GLib registers the resources compiled into moesim (shipped topologies, models, samples) on
     * the first lookup, and a lookup from another thread while that runs finds no resource
     * (gresource.c empties its list of pending resources before it makes them, and a second
     * thread that sees the list empty goes on): a worker opening a shipped sample then crashed
     * now and then. Any lookup registers them all, so one is made here, before the workers. */
    g_resources_get_info("/", G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL);
    if (sw->variants) {
        return TRUE;
    }
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(sw->base, sw->grid, &sw->settings, error);
    if (v == NULL || !ms_sweep_variants_check(v, &sw->settings, error)) {
        return FALSE;
    }
    sw->variants = g_steal_pointer(&v);
    sw->n_rows = ms_sweep_n_points(sw);
    sw->rows = g_new0(char *, MAX(sw->n_rows, 1));
    return TRUE;
}

static gboolean resume_error(GError **error, const char *path, guint line, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
resume_error(GError **error, const char *path, guint line, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_RESUME,
                "%s:%u: %s: not rows of this sweep to resume from", path, line, msg);
    return FALSE;
}

/* Keeps one row of a previous run after checking it is this grid's, of this shard. */
static gboolean
resume_row(MsSweep *sw, const char *line, guint shard, guint shards, const char *path, guint number,
           guint *kept, GError **error)
{
    g_autoptr(GPtrArray) f = ms_sweep_csv_split(line);
    guint n_axes = ms_sweep_grid_n_axes(sw->grid);
    guint64 p = 0;
    if (f->len != 1 + n_axes + g_strv_length((char **)ms_sweep_csv_metrics()) ||
        !ms_parse_uint(f->pdata[0], 0, sw->n_rows ? sw->n_rows - 1 : 0, &p, NULL) ||
        sw->n_rows == 0) {
        return resume_error(error, path, number, "not a row of this grid's points");
    }
    if (!ms_sweep_shard_has((guint)p, shard, shards)) {
        return resume_error(error, path, number, "point %u is not one of shard %u of %u", (guint)p,
                            shard, shards);
    }
    for (guint a = 0; a < n_axes; a++) {
        const char *want = ms_sweep_grid_value(sw->grid, (guint)p, a);
        if (strcmp(f->pdata[1 + a], want) != 0) {
            return resume_error(error, path, number, "point %u has %s=%s, this grid %s=%s",
                                (guint)p, ms_sweep_grid_key(sw->grid, a),
                                (const char *)f->pdata[1 + a], ms_sweep_grid_key(sw->grid, a),
                                want);
        }
    }
    if (sw->rows[p] && strcmp(sw->rows[p], line) != 0) {
        return resume_error(error, path, number, "point %u has another row already", (guint)p);
    }
    if (sw->rows[p] == NULL) {
        sw->rows[p] = g_strdup(line);
        (*kept)++;
    }
    return TRUE;
}

gboolean
ms_sweep_resume(MsSweep *sw, const char *path, guint shard, guint shards, guint *kept,
                GError **error)
{
    g_return_val_if_fail(sw->rows && !sw->ran, FALSE);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, MS_INPUT_SWEEP_CSV, &text, NULL, &local)) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autofree char *header = ms_sweep_csv_header(sw->grid);
    if (lines[0] == NULL || strcmp(lines[0], header) != 0) {
        return resume_error(error, path, 1, "its columns are not this grid's (%s)", header);
    }
    for (guint i = 1; lines[i]; i++) {
        if (lines[i][0] && !resume_row(sw, lines[i], shard, shards, path, i + 1, kept, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
io_error(GError **error, GError *local)
{
    g_set_error_literal(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, local->message);
    g_error_free(local);
    return FALSE;
}

gboolean
ms_sweep_open_journal(MsSweep *sw, const char *path, gboolean append, GError **error)
{
    g_return_val_if_fail(sw->journal == NULL, FALSE);
    gboolean keep = append && g_file_test(path, G_FILE_TEST_EXISTS);
    /* Written in place as points finish, so that a stopped sweep leaves its rows there; a
     * resumed sweep read it before. */
    GError *local = NULL;
    MsOutputFile *f = ms_output_file_open(
        path, (keep ? MS_OUTPUT_APPEND : MS_OUTPUT_IN_PLACE) | MS_OUTPUT_UPDATE, &local);
    if (f == NULL) {
        return io_error(error, local);
    }
    if (!keep) {
        g_autofree char *header = ms_sweep_csv_header(sw->grid);
        ms_output_file_printf(f, "%s\n", header);
    }
    if (!ms_output_file_flush(f, &local)) {
        ms_output_file_free(f);
        return io_error(error, local);
    }
    sw->journal = f;
    g_free(sw->journal_path);
    sw->journal_path = g_strdup(path);
    return TRUE;
}

gboolean
ms_sweep_close_journal(MsSweep *sw, GError **error)
{
    if (sw->journal == NULL) {
        return TRUE;
    }
    GError *local = NULL;
    MsOutputFile *f = g_steal_pointer(&sw->journal);
    if (sw->journal_failed) {
        /* The failure was reported when it happened. */
        ms_output_file_free(f);
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO,
                    "%s: the rows could not all be written", sw->journal_path);
        return FALSE;
    }
    return ms_output_file_close(f, &local) || io_error(error, local);
}

/* Appends a finished row to the journal (under the sweep's lock). */
static void
journal_row(MsSweep *sw, const char *row, GError **error)
{
    if (sw->journal == NULL || sw->journal_failed) {
        return;
    }
    GError *local = NULL;
    ms_output_file_printf(sw->journal, "%s\n", row);
    if (!ms_output_file_flush(sw->journal, &local)) {
        sw->journal_failed = TRUE;
        io_error(error, local);
    }
}

typedef struct {
    MsSweep *sw;
    const gint *cancel;
    guint done, total;
    GError *error;
    MsSweepProgressFn progress;
    gpointer ctx;
} Run;

static MsResult *
run_point(MsSweep *sw, guint point, const gint *cancel, GError **error)
{
    MsScenario sc;
    g_autoptr(MsRoutingSource) routing = NULL;
    if (!ms_sweep_variants_point(sw->variants, point, &sw->settings, &sc, &routing, error)) {
        return NULL;
    }
    sc.cancel = cancel;
    return ms_scenario_run(&sc, error);
}

static void
work(gpointer data, gpointer user)
{
    Run *run = user;
    MsSweep *sw = run->sw;
    guint point = GPOINTER_TO_UINT(data) - 1;
    GError *error = NULL;
    char *row = NULL;
    if (!(run->cancel && g_atomic_int_get(run->cancel))) {
        g_autoptr(MsResult) res = run_point(sw, point, run->cancel, &error);
        row = res ? ms_sweep_csv_row(sw->grid, point, res) : NULL;
    }
    g_mutex_lock(&sw->lock);
    sw->rows[point] = row;
    if (row) {
        GError *jerr = NULL;
        journal_row(sw, row, &jerr);
        if (jerr && run->error == NULL) {
            run->error = g_steal_pointer(&jerr);
        }
        g_clear_error(&jerr);
    }
    if (error && run->error == NULL &&
        !g_error_matches(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_CANCELLED)) {
        g_prefix_error(&error, "sweep point %u: ", point);
        run->error = g_steal_pointer(&error);
    }
    run->done++;
    if (run->progress) {
        run->progress(run->done, run->total, run->ctx);
    }
    g_mutex_unlock(&sw->lock);
    g_clear_error(&error);
}

gboolean
ms_sweep_run(MsSweep *sw, guint jobs, guint shard, guint shards, const gint *cancel,
             MsSweepProgressFn progress, gpointer ctx, GError **error)
{
    g_return_val_if_fail(shards > 0 && shard < shards && !sw->ran, FALSE);
    if (!ms_sweep_prepare(sw, error)) {
        return FALSE;
    }
    sw->ran = TRUE;
    guint n = sw->n_rows;
    Run run = {sw, cancel, 0, 0, NULL, progress, ctx};
    for (guint i = 0; i < n; i++) {
        run.total += ms_sweep_shard_has(i, shard, shards) && sw->rows[i] == NULL;
    }
    GThreadPool *pool =
        g_thread_pool_new(work, &run, jobs ? (gint)jobs : (gint)g_get_num_processors(), TRUE, NULL);
    for (guint i = 0; i < n; i++) {
        if (ms_sweep_shard_has(i, shard, shards) && sw->rows[i] == NULL) {
            g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
        }
    }
    g_thread_pool_free(pool, FALSE, TRUE);
    if (run.error) {
        g_propagate_error(error, run.error);
        return FALSE;
    }
    return TRUE;
}

const char *
ms_sweep_row(const MsSweep *sw, guint point)
{
    return point < sw->n_rows ? sw->rows[point] : NULL;
}

guint
ms_sweep_n_done(const MsSweep *sw)
{
    guint done = 0;
    for (guint p = 0; p < sw->n_rows; p++) {
        done += sw->rows[p] != NULL;
    }
    return done;
}

gboolean
ms_sweep_write_csv(const MsSweep *sw, const char *path, GError **error)
{
    g_autofree char *header = ms_sweep_csv_header(sw->grid);
    GString *s = g_string_new(header);
    g_string_append_c(s, '\n');
    for (guint p = 0; p < sw->n_rows; p++) {
        if (sw->rows[p]) {
            g_string_append_printf(s, "%s\n", sw->rows[p]);
        }
    }
    g_autoptr(GError) local = NULL;
    /* A resumed sweep's table replaces the one it resumed from. */
    gboolean ok = ms_output_file_set_contents(path, MS_OUTPUT_UPDATE, s->str, s->len, &local);
    g_string_free(s, TRUE);
    if (!ok) {
        g_set_error(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "%s", local->message);
    }
    return ok;
}
