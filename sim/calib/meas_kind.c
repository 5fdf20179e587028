/* meas_kind: names of the measured operation kinds (see meas_kind.h). */
#include "meas_kind.h"

#include <string.h>

static const char *const kind_names[MS_MEASUREMENT_N_KINDS] = {
    "allreduce",     "alltoall", "allgather",
    "reducescatter", "sendrecv", "gemm",
    "elementwise",   "launch",   "alltoall_under_allreduce",
};

const char *
ms_measurement_kind_name(MsMeasurementKind kind)
{
    g_return_val_if_fail(kind < MS_MEASUREMENT_N_KINDS, "?");
    return kind_names[kind];
}

gboolean
ms_measurement_kind_from_name(const char *name, MsMeasurementKind *out)
{
    for (guint i = 0; name && i < MS_MEASUREMENT_N_KINDS; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (MsMeasurementKind)i;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_measurement_kind_is_comm(MsMeasurementKind kind)
{
    return kind <= MS_MEASUREMENT_SENDRECV;
}

gboolean
ms_measurement_kind_is_network(MsMeasurementKind kind)
{
    return ms_measurement_kind_is_comm(kind) || kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE;
}
