/* nccl_fit: calibrates the nccl network model on measured collectives (nccl-tests logs, the cuda
 * backend's sweeps): a handful of physical factors instead of per-size tables, so that what is
 * fitted on one allocation carries to others of the same machine. NCCL chooses its algorithm and
 * protocol by its own model, not by what the machine delivers, so the choice stays NCCL's; what
 * is fitted is how the machine departs from NCCL's predictions: one factor on every latency the
 * model charges, and per protocol the fraction of the predicted bandwidth it delivers. Each
 * measured time t is modelled as latency_scale x L + B / efficiency(protocol), with L and B the
 * latency and the byte-moving parts of the simulated call; the factors come from a linear
 * least-squares fit of the relative error, with their standard errors. Rows of runs whose threads
 * each drove G > 1 GPUs are modelled as max(that, G x host cost) (sim/net/host_loop.h), and the
 * host cost is a further factor when some row is bound by it; it stays the base's (the topology's
 * launch overhead unless set) with a NAN error when none is. Where some rows span nodes and others
 * do not, the network's efficiency (the fraction of NCCL's figure its links deliver) is fitted
 * too, by search, the linear fit redone at each candidate; rows that all span nodes leave it the
 * base's (it and the protocols' efficiencies would scale the same bytes). */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

#define MS_NCCL_FIT_ERROR (ms_nccl_fit_error_quark())
GQuark ms_nccl_fit_error_quark(void);
typedef enum {
    MS_NCCL_FIT_ERROR_NO_DATA, /* no collective row to fit, or too few for the factors */
    MS_NCCL_FIT_ERROR_SPEC,    /* the base spec is not of the nccl model */
} MsNcclFitError;

typedef struct {
    MsNetSpec spec;          /* the base spec with the fitted factors */
    double latency_scale_se; /* standard errors; NAN when not fitted */
    double efficiency_se[MS_NCCL_N_PROTOS];
    double host_us_se;                  /* of spec.host_us, microseconds; NAN when not fitted */
    double net_efficiency_se;           /* of spec.net_efficiency; NAN when not fitted */
    guint net_rows;                     /* rows whose ranks span nodes */
    guint rows;                         /* rows fitted */
    guint proto_rows[MS_NCCL_N_PROTOS]; /* of them, device-bound, per protocol NCCL chose */
    guint host_rows; /* of them, bound by the host's calls (one thread driving several GPUs) */
    double median_before, median_after; /* relative time error of the rows, before and after */
} MsNcclFit;

/* Fits base (kind nccl) on the collective and send/receive rows of set, placed on topo as the
 * calibration places them. A protocol no device-bound row used keeps its efficiency and a NAN
 * error. FALSE
 * with MS_NCCL_FIT_ERROR, or the simulation's error naming the row. */
gboolean ms_nccl_fit(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base,
                     MsNcclFit *out, GError **error);

/* Whether ms_nccl_fit fits on the row: a collective or send/receive of some bytes among at
 * least two ranks, with a measured time. */
gboolean ms_nccl_fit_uses(const MsMeasurement *m);

/* One line per fitted factor with its error, e.g. "latency_scale 1.42 +- 0.05". Free with
 * g_free. */
char *ms_nccl_fit_describe(const MsNcclFit *fit);

G_END_DECLS
