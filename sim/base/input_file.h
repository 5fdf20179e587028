/* input_file: the one place moesim opens the files a user names. Each kind of input has a size
 * limit and a reason for it (docs/bad-inputs.md lists them); before anything is read, the file is
 * checked to be a regular file (a device, FIFO or folder has no end to read to, or blocks) and, for
 * the kinds read whole, to be within the kind's limit. Streamed kinds (traces) are only checked
 * to be regular files, or standard input where the kind documents "-". Each file read is recorded
 * as an input of the command (file_claims.h): one that is an output the command is writing is
 * refused. A UTF-8 byte order mark at the start of a file is read past (not for standard input).
 * Knows nothing of formats. */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

#define MS_INPUT_FILE_ERROR (ms_input_file_error_quark())
GQuark ms_input_file_error_quark(void);
typedef enum {
    MS_INPUT_FILE_ERROR_NOENT,       /* no such file */
    MS_INPUT_FILE_ERROR_IO,          /* could not be opened or read */
    MS_INPUT_FILE_ERROR_NOT_REGULAR, /* a folder, device, FIFO or socket */
    MS_INPUT_FILE_ERROR_TOO_LARGE,   /* more bytes than the kind's limit */
} MsInputFileError;

typedef enum {
    MS_INPUT_TOPOLOGY,
    MS_INPUT_MODEL,
    MS_INPUT_CALIBRATION,
    MS_INPUT_SCHEDULE,
    MS_INPUT_RESULT,
    MS_INPUT_BASELINE,
    MS_INPUT_MEASUREMENT,
    MS_INPUT_FLOWS,
    MS_INPUT_SWEEP_CSV,
    MS_INPUT_SWEEP_MANIFEST,
    MS_INPUT_TRACE,
    MS_INPUT_TRACE_IMPORT,
    MS_INPUT_N_KINDS,
} MsInputKind;

/* A kind of input as the documentation states it (a plain value record of constants). */
typedef struct {
    const char *name;    /* in messages: "a topology file" */
    const char *read_by; /* the commands and options that read it, for the documentation */
    guint64 max_bytes;   /* 0: streamed, any length */
    gboolean stdin_ok;   /* "-" reads standard input */
    const char *reason;  /* why the limit is what it is */
} MsInputKindInfo;

const MsInputKindInfo *ms_input_kind_info(MsInputKind kind);

/* Opens path for streaming: "-" is standard input where the kind allows it (returned as stdin,
 * which the caller must not close), anything else must be a regular file within the kind's limit
 * if it has one. Opening never blocks (a FIFO is refused, not waited on). Returns NULL with
 * MS_INPUT_FILE_ERROR and a message "PATH: problem" naming the limit where one was passed. */
FILE *ms_input_file_open(const char *path, MsInputKind kind, GError **error);

/* Reads the whole of path (a regular file within the kind's limit: never more than the limit
 * plus one byte is read, also when the file grows while it is read) into *data, NUL-terminated,
 * to be freed with g_free; *len (may be NULL) is its length. FALSE with MS_INPUT_FILE_ERROR as
 * ms_input_file_open. Kinds without a limit cannot be read whole (a programmer error). */
gboolean ms_input_file_read(const char *path, MsInputKind kind, char **data, gsize *len,
                            GError **error);

G_END_DECLS
