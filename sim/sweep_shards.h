/* sweep_shards: a sweep split across the tasks of a Slurm array job. Shard I of N holds the
 * points p with p % N == I and writes them to shard-I.csv; the array job's batch script runs one
 * shard per task, and its manifest records what the job must produce, so that merging (which
 * joins the shard files into the table one local run writes, in point order) can name every
 * shard that did not finish instead of merging a short table. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_SWEEP_SHARDS_ERROR (ms_sweep_shards_error_quark())
GQuark ms_sweep_shards_error_quark(void);
typedef enum {
    MS_SWEEP_SHARDS_ERROR_VALUE, /* a shard spec that is not I/N with 0 <= I < N */
    MS_SWEEP_SHARDS_ERROR_IO,
    MS_SWEEP_SHARDS_ERROR_MERGE,      /* shard files that do not make one table */
    MS_SWEEP_SHARDS_ERROR_OPTION,     /* a batch option moesim cannot pass on */
    MS_SWEEP_SHARDS_ERROR_MANIFEST,   /* no manifest, or one that is not a sweep's */
    MS_SWEEP_SHARDS_ERROR_INCOMPLETE, /* shards that did not finish */
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

/* An array job, every path absolute: tasks may start anywhere on the cluster. */
typedef struct {
    const char *script;  /* where the batch script is written */
    const char *dir;     /* the sweep's folder: shard tables, logs */
    const char *workdir; /* the tasks' working directory (--chdir): where the sweep was written
                          * from, so that relative input paths mean what they meant there */
    guint shards;
    guint cpus;                 /* --cpus-per-task (a task's worker threads); 0: not asked */
    const char *const *options; /* more sbatch options, NULL-terminated (may be NULL) */
    const char *command;        /* shell-quoted command line of a task, without --shard */
} MsSweepSlurmJob;

/* The batch script: #SBATCH lines (job name, the array, one task, --chdir, logs named
 * slurm-JOB_TASK.log in dir so that a resubmission keeps the earlier logs, --cpus-per-task, then
 * the options as given) and the task's command with --shard "$SLURM_ARRAY_TASK_ID/N". Free with
 * g_free. */
char *ms_sweep_slurm_script(const MsSweepSlurmJob *job);
/* Whether an sbatch option can be passed on: it starts with '-', holds no control character,
 * and is not --array (the shards are moesim's). FALSE with _OPTION quoting it. */
gboolean ms_sweep_slurm_option_check(const char *option, GError **error);

/* What an array job must produce: its shard count, its points and the table's header. */
typedef struct {
    guint shards, points;
    char *header;
} MsSweepManifest;

/* Writes the manifest (JSON, format "moesim-sweep-manifest") to path; _IO. */
gboolean ms_sweep_manifest_write(const char *path, const MsSweepManifest *manifest, GError **error);
/* Reads one; _MANIFEST for a missing file ("no manifest": shards are merged only with one) or
 * one that is not a manifest, naming the file. Clear with ms_sweep_manifest_clear. */
gboolean ms_sweep_manifest_load(const char *path, MsSweepManifest *manifest, GError **error);
void ms_sweep_manifest_clear(MsSweepManifest *manifest);

/* Merges the shard tables of a job in dir (shard-I.csv for every shard of the manifest) into
 * output. Every shard must be there with exactly its points and the manifest's header; when some
 * are not, nothing is written and FALSE comes with _INCOMPLETE naming each (no table, how many
 * of its points a .part holds, or which points its table lacks), and failed (when not NULL)
 * holds their numbers, for resubmitting them alone. _MERGE for a shard table that holds points
 * of another shard or columns of another sweep. *rows: the rows written. */
gboolean ms_sweep_merge_job(const char *dir, const MsSweepManifest *manifest, const char *output,
                            guint *rows, GArray *failed, GError **error);

/* The shard-*.csv files of dir, sorted by name; NULL with _IO when dir cannot be read. Free with
 * g_ptr_array_unref. */
GPtrArray *ms_sweep_shard_files(const char *dir, GError **error);
/* Merges the shard tables inputs (NULL-terminated) into output in point order; refuses files
 * that are not sweep tables, have different columns or a bad point index (_MERGE, naming
 * file:line), and a point given twice. *rows: the rows written. */
gboolean ms_sweep_merge_csv(const char *const *inputs, const char *output, guint *rows,
                            GError **error);

G_END_DECLS
