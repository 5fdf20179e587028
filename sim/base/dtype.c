/* dtype: names and storage sizes of the datatypes. */
#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    guint bytes;
} dtypes[MS_DTYPE_N] = {
    [MS_DTYPE_FP32] = {"fp32", 4}, [MS_DTYPE_FP16] = {"fp16", 2}, [MS_DTYPE_BF16] = {"bf16", 2},
    [MS_DTYPE_TF32] = {"tf32", 4}, [MS_DTYPE_FP8] = {"fp8", 1},
};

const char *const ms_dtype_names[MS_DTYPE_N + 1] = {"fp32", "fp16", "bf16", "tf32", "fp8", NULL};

const char *
ms_dtype_name(MsDtype dtype)
{
    return (guint)dtype < MS_DTYPE_N ? dtypes[dtype].name : "?";
}

guint
ms_dtype_bytes(MsDtype dtype)
{
    return (guint)dtype < MS_DTYPE_N ? dtypes[dtype].bytes : 0;
}

gboolean
ms_dtype_from_name(const char *name, MsDtype *out)
{
    for (guint i = 0; name && i < MS_DTYPE_N; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (MsDtype)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *
ms_dtype_names_text(void)
{
    return "fp32, fp16, bf16, tf32 or fp8";
}
