/* output_file: the one place moesim writes the files a user names. Every write is checked, and so
 * are the flush, the sync and the close: the first failure is kept, later writes are skipped, and
 * closing reports it naming the path ("standard output" for "-"). A regular file, or a path not
 * there yet, is written to a temporary file beside it (TARGET.tmp-XXXXXX) that is renamed over it
 * only when complete, so that a failed or stopped command leaves the earlier file as it was; a
 * device, FIFO or socket (/dev/null, a pipe) is written in place and never replaced. Each output
 * is claimed first (file_claims.h): an output that is one of the command's inputs, or a second
 * output on one file, is refused when it is opened. Knows nothing of formats. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_OUTPUT_FILE_ERROR (ms_output_file_error_quark())
GQuark ms_output_file_error_quark(void);
typedef enum {
    MS_OUTPUT_FILE_ERROR_IO, /* could not be created, written, flushed, synced, closed or renamed */
} MsOutputFileError;

typedef enum {
    MS_OUTPUT_REPLACE = 0,       /* the file's content is replaced when the output is complete */
    MS_OUTPUT_IN_PLACE = 1 << 0, /* written in place as it goes (a journal that may be watched),
                                  * emptied first, created when absent */
    MS_OUTPUT_APPEND = 1 << 1,   /* as MS_OUTPUT_IN_PLACE, but appended to */
    MS_OUTPUT_UPDATE = 1 << 2,   /* may be a file the command read: its own earlier output, which
                                  * it updates (a resumed sweep's table) */
} MsOutputFlags;

typedef struct _MsOutputFile MsOutputFile;

/* Opens path for writing ("-": standard output, written through stdio's stdout so that it keeps
 * its order with the text printed there). NULL with MS_OUTPUT_FILE_ERROR, or the claim's
 * MS_FILE_CLAIMS_ERROR, and a message "PATH: problem". */
MsOutputFile *ms_output_file_open(const char *path, MsOutputFlags flags, GError **error);

/* Appends bytes; a failure is kept for ms_output_file_close (and ms_output_file_flush). */
void ms_output_file_write(MsOutputFile *f, const void *data, gsize len);
void ms_output_file_printf(MsOutputFile *f, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Hands what is buffered to the file now (a journal's row, a trace written as a run goes).
 * FALSE with the first failure so far; the output must then be freed, not closed. */
gboolean ms_output_file_flush(MsOutputFile *f, GError **error);

/* Completes the output: flushes, syncs a file that replaces an earlier one (so that a crash
 * cannot leave an empty file in its place), closes and renames the temporary file over the
 * target. FALSE with the first failure, the temporary file removed and the target untouched.
 * Frees f either way. */
gboolean ms_output_file_close(MsOutputFile *f, GError **error);

/* Abandons an output not closed: the temporary file is removed, the target untouched. */
void ms_output_file_free(MsOutputFile *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsOutputFile, ms_output_file_free)

/* Writes len bytes of data as the whole of path (open, write, close). */
gboolean ms_output_file_set_contents(const char *path, MsOutputFlags flags, const void *data,
                                     gsize len, GError **error);

/* Flushes standard output and reports whether everything written to it arrived: FALSE with
 * MS_OUTPUT_FILE_ERROR "standard output: ..." when a write failed (a full disk, a closed pipe).
 * The text a command prints goes there; moesim's main calls this before it exits. */
gboolean ms_output_file_finish_stdout(GError **error);

G_END_DECLS
