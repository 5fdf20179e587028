/* sweep_shards: a sweep split across the tasks of a Slurm array job. Shard I of N holds the
 * points p with p % N == I and writes them to shard-I.csv; the array job's batch script runs one
 * shard per task; merging joins the shard files into the table one local run writes, in point
 * order. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_SWEEP_SHARDS_ERROR (ms_sweep_shards_error_quark())
GQuark ms_sweep_shards_error_quark(void);
typedef enum {
    MS_SWEEP_SHARDS_ERROR_VALUE, /* a shard spec that is not I/N with 0 <= I < N */
    MS_SWEEP_SHARDS_ERROR_IO,
    MS_SWEEP_SHARDS_ERROR_MERGE, /* shard files that do not make one table */
} MsSweepShardsError;

/* The most shards (array tasks) a sweep is split into. */
#define MS_SWEEP_MAX_SHARDS 100000u

/* Parses "I/N" (0 <= I < N <= MS_SWEEP_MAX_SHARDS); FALSE with _VALUE quoting the text. */
gboolean ms_sweep_shard_parse(const char *text, guint *shard, guint *shards, GError **error);
/* Whether point belongs to shard of shards, and how many of n_points do. */
gboolean ms_sweep_shard_has(guint point, guint shard, guint shards);
guint ms_sweep_shard_size(guint n_points, guint shard, guint shards);
/* "shard-I.csv": the file a shard writes into the sweep's folder. Free with g_free. */
char *ms_sweep_shard_file(guint shard);

/* The batch script of an array job of `shards` tasks, each running `command` (a shell-quoted
 * command line) with --shard "$SLURM_ARRAY_TASK_ID/N"; script is where it is written, dir the
 * sweep's folder (both as the user gave them). Free with g_free. */
char *ms_sweep_slurm_script(const char *script, const char *dir, guint shards, const char *command);

/* The shard-*.csv files of dir, sorted by name; NULL with _IO when dir cannot be read. Free with
 * g_ptr_array_unref. */
GPtrArray *ms_sweep_shard_files(const char *dir, GError **error);
/* Merges the shard tables inputs (NULL-terminated) into output in point order; refuses files
 * that are not sweep tables, have different columns or a bad point index (_MERGE, naming
 * file:line), and a point given twice. *rows: the rows written. */
gboolean ms_sweep_merge_csv(const char *const *inputs, const char *output, guint *rows,
                            GError **error);

G_END_DECLS
