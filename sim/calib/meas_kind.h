/* meas_kind: the kinds of measured operation (collectives, point-to-point, GEMM, elementwise
 * kernels, launches, an all-to-all while an allreduce loops on another communicator) shared by
 * measurements (validate/measurement.h) and by the calibration that corrects their simulated
 * counterparts. Names are the ones files use. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    MS_MEASUREMENT_ALLREDUCE,
    MS_MEASUREMENT_ALLTOALL,
    MS_MEASUREMENT_ALLGATHER,
    MS_MEASUREMENT_REDUCESCATTER,
    MS_MEASUREMENT_SENDRECV,
    MS_MEASUREMENT_GEMM,
    MS_MEASUREMENT_ELEMENTWISE, /* a memory-bound kernel such as the expert activation */
    MS_MEASUREMENT_LAUNCH,      /* an empty kernel: the launch overhead */
    /* An all-to-all timed while an allreduce (of background_bytes, meas_csv.h) loops on another
     * communicator and stream over the same ranks: what NIC arbitration costs it. */
    MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
    MS_MEASUREMENT_N_KINDS,
} MsMeasurementKind;

/* "allreduce", "alltoall", "allgather", "reducescatter", "sendrecv", "gemm", "elementwise",
 * "launch", "alltoall_under_allreduce". from_name returns FALSE for anything else. */
const char *ms_measurement_kind_name(MsMeasurementKind kind);
gboolean ms_measurement_kind_from_name(const char *name, MsMeasurementKind *out);
/* TRUE for the kinds of one collective or transfer alone (allreduce .. sendrecv): those a
 * calibration has per-collective figures for. */
gboolean ms_measurement_kind_is_comm(MsMeasurementKind kind);
/* TRUE for every kind that moves bytes over NCCL: those and alltoall_under_allreduce. */
gboolean ms_measurement_kind_is_network(MsMeasurementKind kind);

G_END_DECLS
