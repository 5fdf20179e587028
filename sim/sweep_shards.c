/* sweep_shards: shard arithmetic, the batch script and the merge of shard tables. */
#include "sweep_shards.h"

#include <string.h>

#include "sim/base/units.h"
#include "sim/sweep_grid.h"

G_DEFINE_QUARK(ms_sweep_shards_error_quark, ms_sweep_shards_error)

gboolean
ms_sweep_shard_parse(const char *text, guint *shard, guint *shards, GError **error)
{
    guint64 a, b;
    g_auto(GStrv) parts = g_strsplit(text, "/", 2);
    if (g_strv_length(parts) != 2 || !ms_parse_uint(parts[1], 1, MS_SWEEP_MAX_SHARDS, &b, NULL) ||
        !ms_parse_uint(parts[0], 0, b - 1, &a, NULL)) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_VALUE,
                    "sweep: --shard '%s': expected I/N with 0 <= I < N", text);
        return FALSE;
    }
    *shard = (guint)a;
    *shards = (guint)b;
    return TRUE;
}

gboolean
ms_sweep_shard_has(guint point, guint shard, guint shards)
{
    return point % shards == shard;
}

guint
ms_sweep_shard_size(guint n_points, guint shard, guint shards)
{
    return n_points > shard ? (n_points - shard + shards - 1) / shards : 0;
}

char *
ms_sweep_shard_file(guint shard)
{
    return g_strdup_printf("shard-%u.csv", shard);
}

char *
ms_sweep_slurm_script(const char *script, const char *dir, guint shards, const char *command)
{
    g_autofree char *qdir = g_shell_quote(dir);
    return g_strdup_printf("#!/bin/sh\n"
                           "# moesim sweep as a Slurm array job: each task runs one shard of the "
                           "grid.\n"
                           "# Submit with: sbatch %s\n"
                           "# When all tasks are done: moesim sweep --merge %s\n"
                           "#SBATCH --job-name=moesim-sweep\n"
                           "#SBATCH --array=0-%u\n"
                           "#SBATCH --ntasks=1\n"
                           "#SBATCH --output=%s/slurm-%%a.log\n"
                           "exec %s --shard \"$SLURM_ARRAY_TASK_ID/%u\"\n",
                           script, qdir, shards - 1, dir, command, shards);
}

GPtrArray *
ms_sweep_shard_files(const char *dir, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GDir) d = g_dir_open(dir, 0, &local);
    if (d == NULL) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "%s", local->message);
        return NULL;
    }
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        if (g_str_has_prefix(name, "shard-") && g_str_has_suffix(name, ".csv")) {
            g_ptr_array_add(files, g_build_filename(dir, name, NULL));
        }
    }
    g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
    return files;
}

typedef struct {
    guint point;
    char *line;
} Row;

static int
cmp_row(gconstpointer a, gconstpointer b)
{
    const Row *x = a, *y = b;
    return x->point < y->point ? -1 : x->point > y->point;
}

static void
row_clear(gpointer p)
{
    g_free(((Row *)p)->line);
}

/* Appends the rows of one shard file; header holds the first file's header line. */
static gboolean
read_shard(const char *path, const char *first, char **header, GArray *rows, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    if (lines[0] == NULL || !g_str_has_prefix(lines[0], "point,")) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                    "%s:1: not a sweep CSV (no 'point' column)", path);
        return FALSE;
    }
    if (*header && strcmp(*header, lines[0]) != 0) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                    "%s:1: columns differ from %s's", path, first);
        return FALSE;
    }
    if (*header == NULL) {
        *header = g_strdup(lines[0]);
    }
    for (guint i = 1; lines[i]; i++) {
        if (lines[i][0] == '\0') {
            continue;
        }
        guint64 point;
        g_autofree char *field = g_strndup(lines[i], strcspn(lines[i], ","));
        if (!ms_parse_uint(field, 0, MS_SWEEP_MAX_POINTS, &point, NULL)) {
            g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                        "%s:%u: bad point index '%s'", path, i + 1, field);
            return FALSE;
        }
        Row r = {(guint)point, g_strdup(lines[i])};
        g_array_append_val(rows, r);
    }
    return TRUE;
}

gboolean
ms_sweep_merge_csv(const char *const *inputs, const char *output, guint *n_rows, GError **error)
{
    g_autofree char *header = NULL;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    g_array_set_clear_func(rows, row_clear);
    for (guint f = 0; inputs[f]; f++) {
        if (!read_shard(inputs[f], inputs[0], &header, rows, error)) {
            return FALSE;
        }
    }
    g_array_sort(rows, cmp_row);
    for (guint i = 1; i < rows->len; i++) {
        if (g_array_index(rows, Row, i).point == g_array_index(rows, Row, i - 1).point) {
            g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                        "point %u is in two shard files", g_array_index(rows, Row, i).point);
            return FALSE;
        }
    }
    GString *out = g_string_new(header);
    g_string_append_c(out, '\n');
    for (guint i = 0; i < rows->len; i++) {
        g_string_append_printf(out, "%s\n", g_array_index(rows, Row, i).line);
    }
    g_autoptr(GError) local = NULL;
    gboolean ok = g_file_set_contents(output, out->str, out->len, &local);
    g_string_free(out, TRUE);
    if (!ok) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    *n_rows = rows->len;
    return TRUE;
}
