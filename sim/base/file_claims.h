/* file_claims: the files a command reads and those it writes, known by device and inode (and by
 * their resolved path while an output is not there yet), so that an output never replaces one of
 * the command's inputs and two outputs never share a file. Every input is opened by input_file
 * and every output by output_file, which ask here; a command may also claim its outputs as soon
 * as it has parsed its options, so that a clash is refused before any work is done.
 * Only regular files (and paths not there yet) are claimed: a device, FIFO or socket (/dev/null,
 * a pipe) is read or written in place and replaces nothing. moesim's main turns the checks on
 * (one command per process); a process that has not (a library test) gets no checks. */
#pragma once

#include <glib.h>
#include <sys/stat.h>

G_BEGIN_DECLS

#define MS_FILE_CLAIMS_ERROR (ms_file_claims_error_quark())
GQuark ms_file_claims_error_quark(void);
typedef enum {
    MS_FILE_CLAIMS_ERROR_INPUT,  /* an output is one of the inputs */
    MS_FILE_CLAIMS_ERROR_OUTPUT, /* an input, or a second output, is an output being written */
} MsFileClaimsError;

/* Turns the checks on or off; either way forgets every claim (tests start afresh). */
void ms_file_claims_enable(gboolean on);

/* Claims path as an output ("-" is standard output), before it is opened. FALSE with
 * MS_FILE_CLAIMS_ERROR_INPUT when it is a file the command has read (unless update: the command
 * updates its own earlier output, as `sweep --resume` does), MS_FILE_CLAIMS_ERROR_OUTPUT when
 * another output has it. The message names path and, where it was spelt otherwise, the other. */
gboolean ms_file_claims_output(const char *path, gboolean update, GError **error);

/* As ms_file_claims_output for an output being opened now: a claim of the same file made with
 * ms_file_claims_output and not opened yet is taken over; an output opened before is refused. */
gboolean ms_file_claims_open_output(const char *path, gboolean update, GError **error);

/* The output at path is complete (in place under its name): it may be read back now. */
void ms_file_claims_output_done(const char *path);

/* An input about to be read: path opened, st its fstat. FALSE with MS_FILE_CLAIMS_ERROR_OUTPUT
 * when an output claimed or being written is that file; otherwise it is recorded as an input. */
gboolean ms_file_claims_input(const char *path, const struct stat *st, GError **error);

G_END_DECLS
