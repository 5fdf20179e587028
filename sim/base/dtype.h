/* dtype: the datatypes a model computes in and moves: fp32, tf32 (fp32 storage, tensor-core math
 * on reduced mantissas), fp16, bf16 and fp8. Each has a storage size in bytes (activations,
 * weights, gradients and all-to-all payloads) and a name, the spelling of model and topology
 * files (docs/models.md, docs/topology.md). Knows nothing of rates: a GPU's peak per datatype is
 * the topology's business. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Values are stable: tables indexed by them (a GPU's peaks) follow this order. */
typedef enum {
    MS_DTYPE_FP32,
    MS_DTYPE_FP16,
    MS_DTYPE_BF16,
    MS_DTYPE_TF32,
    MS_DTYPE_FP8,
    MS_DTYPE_N,
} MsDtype;

/* The names by value, NULL-terminated (the choice table of the model file's dtype). */
extern const char *const ms_dtype_names[MS_DTYPE_N + 1];

/* "fp32", "fp16", "bf16", "tf32", "fp8"; "?" out of range. */
const char *ms_dtype_name(MsDtype dtype);
/* Storage bytes per element: 4, 2, 2, 4 (tf32 is stored as fp32), 1; 0 out of range. */
guint ms_dtype_bytes(MsDtype dtype);
/* FALSE for an unknown name. */
gboolean ms_dtype_from_name(const char *name, MsDtype *out);
/* "fp32, fp16, bf16, tf32 or fp8", for messages; static. */
const char *ms_dtype_names_text(void);

G_END_DECLS
