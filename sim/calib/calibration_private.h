/* calibration_private: the calibration's fields, shared by the in-memory model (calibration.c) and
 * its file reader and writer (calibration_file.c). Nothing else includes this. */
#pragma once

#include "sim/calib/calibration.h"

#define N_COLLECTIVES (MS_MEASUREMENT_SENDRECV + 1)

typedef struct {
    gboolean present;
    MsCalibrationLink link;
} LinkEntry;

typedef struct {
    gboolean present;
    guint ranks, per_node; /* 0, 0: the entry for any configuration */
    MsTime alpha;
    MsEffTable *table; /* NULL: no size table */
} CollectiveEntry;

struct _MsCalibration {
    char *topology;
    GPtrArray *sources; /* char*, NULL-terminated */
    LinkEntry links[MS_LINK_N_CLASSES];
    CollectiveEntry collectives[N_COLLECTIVES];
    GArray *configs[N_COLLECTIVES]; /* CollectiveEntry per (ranks, per_node), sorted */
    gboolean has_gemm;
    MsGemmCurve *curve; /* NULL: default efficiency */
    double slowdown;
    MsTime launch; /* MS_TIME_NEVER: not recorded */
    gboolean has_framework;
    MsFramework framework;
    guint framework_points; /* layers the figures were fitted on; 0 when not recorded */
};
