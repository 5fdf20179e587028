/* net_model: how collectives become flows on the network. Two models, chosen by name:
 *   flow  a flow per algorithm step over the topology's links at their nominal bandwidth, each
 *         paying its route's latency, every flow an equal share (moesim's first model, kept as
 *         the reference the engine's exactness is checked with);
 *   nccl  NCCL as it runs (sim/net/nccl.h): links at the bandwidth NCCL's detection counts, the
 *         algorithm, protocol and channels NCCL's tuning picks at each size with its latencies,
 *         a flow per connection, and each network link shared among connections by the bytes of
 *         their messages (an RDMA NIC serves the queue pairs with work one message at a time).
 * Specs: "flow", or "nccl[:key=value,...]" (docs/collectives.md lists the keys). */
#pragma once

#include <glib.h>

#include "sim/net/nccl.h"
#include "sim/sim.h"

G_BEGIN_DECLS

#define MS_NET_MODEL_ERROR (ms_net_model_error_quark())
GQuark ms_net_model_error_quark(void);
typedef enum {
    MS_NET_MODEL_ERROR_SPEC, /* an unknown model or key, a bad value */
} MsNetModelError;

typedef enum {
    MS_NET_FLOW,
    MS_NET_NCCL,
} MsNetKind;

/* How a network link shares its bandwidth among NCCL connections: a connection's weight is
 * (message bytes / MS_NET_REFERENCE_MESSAGE) ^ exponent. 1: one message per connection in turn
 * (the default); 0: every connection an equal share. */
#define MS_NET_REFERENCE_MESSAGE (G_GUINT64_CONSTANT(64) * 1024)

typedef struct {
    MsNetKind kind;
    MsNcclConfig nccl;
    double message_exponent; /* in [0, 1] */
    /* What a calibration fits (validate/nccl_fit.h), 1 in NCCL's own model: a factor on every
     * latency NCCL's tuning model charges, and per protocol the fraction of NCCL's predicted
     * bandwidth the machine delivers. */
    double latency_scale;                      /* in [0, 100] */
    double proto_efficiency[MS_NCCL_N_PROTOS]; /* each in [0.01, 1.5] */
    /* The fraction of NCCL's figure the network's links deliver (NIC and fabric links): what a
     * cluster's network gives below the rate its NICs report to NCCL. NCCL's choices and its
     * predicted times stay those of the reported rate; the flows move at this fraction of it.
     * Key net_efficiency, in [0.01, 1.5]. */
    double net_efficiency;
    /* The host time of one NCCL call on one GPU inside a group, microseconds, where one thread
     * drives several GPUs (sim/net/host_loop.h); negative (the default): the topology's
     * [gpu] launch_overhead. Key host_us, in [0, 10^4]. */
    double host_us;
    /* How an allreduce NCCL runs as a tree moves (key tree): FALSE (edges, the default) a
     * connection per tree edge, channel and direction; TRUE (ring-flows, the model before the
     * tree's own pattern) the ring's flows at the tree's predicted bandwidth. */
    gboolean tree_ring_flows;
} MsNetSpec;

/* The default spec: the flow model, every factor 1. Initialise specs with it. */
void ms_net_spec_init(MsNetSpec *spec);
/* Parses a spec. FALSE with MS_NET_MODEL_ERROR_SPEC naming the model, key or value. */
gboolean ms_net_spec_parse(const char *text, MsNetSpec *out, GError **error);
/* The spec in its parseable form, every key given explicitly shown ("nccl:version=2.10.3"); a
 * version of patch 99, which "2.10" alone parses to, is printed "2.10". */
char *ms_net_spec_to_string(const MsNetSpec *spec);

typedef struct _MsNetModel MsNetModel;

/* A model of spec for a topology (borrowed: it must outlive the model). FALSE/NULL with the NCCL
 * model's error when the topology's GPUs are not modelled (an unknown architecture). */
MsNetModel *ms_net_model_new(const MsNetSpec *spec, const MsTopology *topo, GError **error);
void ms_net_model_free(MsNetModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsNetModel, ms_net_model_free)

const MsNetSpec *ms_net_model_spec(const MsNetModel *model);
MsNetKind ms_net_model_kind(const MsNetModel *model);
/* The NCCL release the model runs at (the spec's, or the default for the topology's GPUs and for
 * version=log); meaningful under nccl only. */
guint ms_net_model_nccl_version(const MsNetModel *model);

/* The bandwidth the model gives topology link l, bytes/s (INFINITY for an unlimited link): the
 * nominal figure for the flow model; for nccl, NCCL's count of it where that is lower (NVLink per
 * link per architecture and version, PCIe by lanes and generation). */
double ms_net_model_link_bandwidth(const MsNetModel *model, guint link);
/* Gives every link of the simulation's network the model's bandwidth, its NIC and fabric links
 * times the spec's net_efficiency. Call before any flow. */
void ms_net_model_apply(const MsNetModel *model, MsSim *sim);

/* NCCL's communicator over these topology ranks (NULL = 0..n-1), made once per distinct rank set
 * and kept by the model. NULL with the NCCL model's error; never for the flow model's calls
 * (which have no communicator: NULL without an error). */
const MsNcclComm *ms_net_model_comm(MsNetModel *model, const guint *ranks, guint n, GError **error);

/* The route NCCL's transports take from device src to device dst: the topology's, except that
 * under the nccl model two GPUs of one node whose route leaves NVLink (PCIe, a CPU link) talk
 * through the GPU both have direct NVLinks to, when there is one (NCCL's P2P via an intermediate
 * GPU, PATH_NVB, since 2.8.3; the widest such GPU, the lowest-numbered among equals). The array
 * is owned by the model; NULL with MS_TOPOLOGY_ERROR_UNREACHABLE when there is no route. */
const guint32 *ms_net_model_route(MsNetModel *model, guint src, guint dst, guint *n_links,
                                  GError **error);

/* The route of a point-to-point send (an all-to-all's): ms_net_model_route's, except that under
 * the nccl model from 2.12.7 a send to another node goes through PXN: over NVLink to the GPU of
 * its own node on the destination's rail (the same local index), which posts it on its NIC, when
 * that NIC is not the sender's. (NCCL's PXN also merges the messages of up to 8 GPUs per remote
 * rank and channel into one queue pair; that is not modelled.) */
const guint32 *ms_net_model_p2p_route(MsNetModel *model, guint src, guint dst, guint *n_links,
                                      GError **error);

/* A number the model keeps per communicator and channel count for its collectives (the flow
 * model's bus bandwidth of NCCL's rings over them): NAN until the caller stores it. */
double *ms_net_model_ring_slot(MsNetModel *model, const MsNcclComm *comm, guint channels);

/* Share weight of a connection whose network messages carry message bytes. */
double ms_net_model_message_weight(const MsNetModel *model, guint64 message);

G_END_DECLS
