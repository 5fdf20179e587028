/* sweep_shards: shard arithmetic, the batch script and the merge of shard tables. */
#include "sweep_shards.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "sim/base/input_file.h"
#include "sim/base/json_input.h"
#include "sim/base/json_output.h"
#include "sim/base/output_file.h"
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
ms_sweep_slurm_script(const MsSweepSlurmJob *job)
{
    g_autofree char *qdir = g_shell_quote(job->dir);
    g_autofree char *qscript = g_shell_quote(job->script);
    GString *s = g_string_new("#!/bin/sh\n");
    g_string_append(s,
                    "# moesim sweep as a Slurm array job: each task runs one shard of the grid.\n");
    g_string_append_printf(s, "# Submit with: sbatch %s\n", qscript);
    g_string_append_printf(s, "# When all tasks are done: moesim sweep --merge %s\n", qdir);
    g_string_append(s, "# It names the tasks that did not finish; resubmit only those with\n");
    g_string_append_printf(s, "#   sbatch --array=I,J,... %s\n", qscript);
    g_string_append(s, "# (a task keeps the rows its shard already has and runs the rest).\n");
    g_string_append(s, "#SBATCH --job-name=moesim-sweep\n");
    g_string_append_printf(s, "#SBATCH --array=0-%u\n", job->shards - 1);
    g_string_append(s, "#SBATCH --ntasks=1\n");
    /* sbatch reads these paths as they are written: no quoting, and no blanks allowed. */
    g_string_append_printf(s, "#SBATCH --chdir=%s\n", job->workdir);
    g_string_append_printf(s, "#SBATCH --output=%s/slurm-%%A_%%a.log\n", job->dir);
    if (job->cpus) {
        g_string_append_printf(s, "#SBATCH --cpus-per-task=%u\n", job->cpus);
    }
    for (guint i = 0; job->options && job->options[i]; i++) {
        g_string_append_printf(s, "#SBATCH %s\n", job->options[i]);
    }
    g_string_append_printf(s, "exec %s --shard \"$SLURM_ARRAY_TASK_ID/%u\"\n", job->command,
                           job->shards);
    return g_string_free(s, FALSE);
}

gboolean
ms_sweep_slurm_option_check(const char *option, GError **error)
{
    gboolean control = FALSE;
    for (const char *c = option; *c; c++) {
        control |= g_ascii_iscntrl(*c);
    }
    if (option[0] != '-' || control) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_OPTION,
                    "sweep: --slurm-opt '%s': expected an sbatch option on one line, e.g. "
                    "--time=02:00:00",
                    option);
        return FALSE;
    }
    if (g_str_has_prefix(option, "--array") || g_str_has_prefix(option, "-a")) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_OPTION,
                    "sweep: --slurm-opt '%s': the array is the sweep's shards (--slurm N)", option);
        return FALSE;
    }
    return TRUE;
}

#define MANIFEST_FORMAT "moesim-sweep-manifest"

gboolean
ms_sweep_manifest_write(const char *path, const MsSweepManifest *m, GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, MANIFEST_FORMAT);
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, 1);
    json_builder_set_member_name(b, "shards");
    json_builder_add_int_value(b, m->shards);
    json_builder_set_member_name(b, "points");
    json_builder_add_int_value(b, m->points);
    json_builder_set_member_name(b, "header");
    json_builder_add_string_value(b, m->header);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autoptr(GError) local = NULL;
    if (!ms_json_write_file(path, root, TRUE, MS_OUTPUT_REPLACE, &local)) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}

void
ms_sweep_manifest_clear(MsSweepManifest *m)
{
    g_clear_pointer(&m->header, g_free);
}

/* An integer member from 1 to max, or 0. */
static guint
member_count(JsonObject *o, const char *key, guint64 max)
{
    JsonNode *n = json_object_get_member(o, key);
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64) {
        return 0;
    }
    gint64 v = json_node_get_int(n);
    return v >= 1 && (guint64)v <= max ? (guint)v : 0;
}

gboolean
ms_sweep_manifest_load(const char *path, MsSweepManifest *m, GError **error)
{
    memset(m, 0, sizeof *m);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MANIFEST,
                    "%s: no manifest: --merge joins the shards of an array job written by "
                    "moesim sweep --slurm",
                    path);
        return FALSE;
    }
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_file(p, path, MS_INPUT_SWEEP_MANIFEST, &local)) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MANIFEST, "%s",
                    local->message);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(p);
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    const char *header = o ? json_object_get_string_member_with_default(o, "header", NULL) : NULL;
    guint shards = o ? member_count(o, "shards", MS_SWEEP_MAX_SHARDS) : 0;
    guint points = o ? member_count(o, "points", MS_SWEEP_MAX_POINTS) : 0;
    if (o == NULL ||
        g_strcmp0(json_object_get_string_member_with_default(o, "format", ""), MANIFEST_FORMAT) ||
        header == NULL || !g_str_has_prefix(header, "point,") || shards == 0 || points == 0 ||
        shards > points) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MANIFEST,
                    "%s: not a sweep manifest (format %s with shards, points and header)", path,
                    MANIFEST_FORMAT);
        return FALSE;
    }
    m->shards = shards;
    m->points = points;
    m->header = g_strdup(header);
    return TRUE;
}

/* g_ptr_array_sort passes pointers to the elements, not the elements. */
static int
compare_paths(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
    g_ptr_array_sort(files, compare_paths);
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
    if (!ms_input_file_read(path, MS_INPUT_SWEEP_CSV, &text, NULL, &local)) {
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

static gboolean write_rows(const char *header, GArray *rows, const char *output, guint *n_rows,
                           GError **error);

/* Rows of a .part table (lines after the header), 0 when there is none. */
static guint
part_rows(const char *path)
{
    g_autofree char *text = NULL;
    if (!ms_input_file_read(path, MS_INPUT_SWEEP_CSV, &text, NULL, NULL)) {
        return 0;
    }
    guint n = 0;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 1; lines[0] && lines[i]; i++) {
        n += lines[i][0] != '\0';
    }
    return n;
}

/* Why shard s is not complete in dir (NULL when it is); its rows are appended to rows. */
static char *
check_shard(const char *dir, const MsSweepManifest *m, guint s, GArray *rows, GError **error)
{
    g_autofree char *name = ms_sweep_shard_file(s);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    guint want = ms_sweep_shard_size(m->points, s, m->shards);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_autofree char *part = g_strconcat(path, ".part", NULL);
        return g_file_test(part, G_FILE_TEST_EXISTS)
                   ? g_strdup_printf("shard %u: no %s; %s.part holds %u of its %u points", s, name,
                                     name, part_rows(part), want)
                   : g_strdup_printf("shard %u: no %s (the task did not run or did not start)", s,
                                     name);
    }
    g_autofree char *header = g_strdup(m->header);
    guint first = rows->len;
    if (!read_shard(path, "the manifest", &header, rows, error)) {
        return NULL;
    }
    guint got = 0;
    for (guint i = first; i < rows->len; i++) {
        guint p = g_array_index(rows, Row, i).point;
        if (p >= m->points || !ms_sweep_shard_has(p, s, m->shards)) {
            g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                        "%s: point %u is not one of shard %u of %u", path, p, s, m->shards);
            return NULL;
        }
        got++;
    }
    return got < want
               ? g_strdup_printf("shard %u: %s holds %u of its %u points", s, name, got, want)
               : NULL;
}

gboolean
ms_sweep_merge_job(const char *dir, const MsSweepManifest *m, const char *output, guint *n_rows,
                   GArray *failed, GError **error)
{
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    g_array_set_clear_func(rows, row_clear);
    g_autoptr(GPtrArray) why = g_ptr_array_new_with_free_func(g_free);
    for (guint s = 0; s < m->shards; s++) {
        GError *local = NULL;
        char *reason = check_shard(dir, m, s, rows, &local);
        if (local) {
            g_propagate_error(error, local);
            return FALSE;
        }
        if (reason) {
            g_ptr_array_add(why, reason);
            if (failed) {
                g_array_append_val(failed, s);
            }
        }
    }
    if (why->len) {
        g_ptr_array_add(why, NULL);
        g_autofree char *list = g_strjoinv("; ", (char **)why->pdata);
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_INCOMPLETE,
                    "%s: %u of %u shards did not finish: %s", dir, why->len - 1, m->shards, list);
        return FALSE;
    }
    return write_rows(m->header, rows, output, n_rows, error);
}

/* Sorts rows by point, refuses a point given twice, and writes header and rows to output. */
static gboolean
write_rows(const char *header, GArray *rows, const char *output, guint *n_rows, GError **error)
{
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
    gboolean ok =
        ms_output_file_set_contents(output, MS_OUTPUT_REPLACE, out->str, out->len, &local);
    g_string_free(out, TRUE);
    if (!ok) {
        g_set_error(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    *n_rows = rows->len;
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
    return write_rows(header, rows, output, n_rows, error);
}
