/* layer_file: per-layer tables read back: the JSON and CSV that `moesim run --layers` writes
 * (moesim-layers 1, sim/out/layers.h), and PyTorch profiler traces (validate/kineto.h), each
 * recognised from its text. Several files merge into one table (a profiler writes one trace per
 * rank). Every problem names the file (and line, for CSV), the field and the value. */
#pragma once

#include <glib.h>

#include "sim/out/layers.h"

G_BEGIN_DECLS

#define MS_LAYER_FILE_ERROR (ms_layer_file_error_quark())
GQuark ms_layer_file_error_quark(void);
typedef enum {
    MS_LAYER_FILE_ERROR_FORMAT, /* none of the formats, or another version */
    MS_LAYER_FILE_ERROR_VALUE,  /* a field missing, of the wrong type, or out of range */
} MsLayerFileError;

/* Appends path's rows to t: a moesim-layers JSON or CSV, or a PyTorch profiler trace (read
 * with opts, NULL for the defaults of kineto.h). Returns FALSE with MS_INPUT_FILE_ERROR (path
 * unreadable, not a regular file, over the limit of result files), MS_LAYER_FILE_ERROR or the
 * Kineto reader's error; t keeps the rows it had then. */
typedef struct _MsKinetoOptions MsKinetoOptions;
gboolean ms_layer_file_load(MsLayerTable *t, const char *path, const MsKinetoOptions *opts,
                            GError **error);
/* The same from text in memory; source names it in messages. */
gboolean ms_layer_file_read(MsLayerTable *t, const char *data, gsize len, const char *source,
                            const MsKinetoOptions *opts, GError **error);

G_END_DECLS
