/* nccl_p2p: how NCCL cuts one send of a grouped send/receive (an all-to-all): the channels it
 * spreads the bytes over, the chunk each kernel step moves, the network message of a proxy step
 * and the protocol, per release (group.cc until 2.12, enqueue.cc after; proxy.cc, init.cc).
 * 2.8 and 2.9 cut sends as 2.10 does (v2.8.4 src/group.cc:140-149, 221-230).
 * Buffers registered by the user (one step per part from 2.22) and NCCL_CHUNK_SIZE are not
 * modelled; the default buffer sizes of x86 hosts are. */
#include "nccl_private.h"

#define KIB 1024u

static guint64
div_up(guint64 a, guint64 b)
{
    return (a + b - 1) / b;
}

/* getP2pChunkSize / calcP2pChunkSize (v2.10 src/group.cc:141-150, v2.18 enqueue.cc:601-609):
 * the largest of minSize and bytes / minChannels, split further while above maxSize and
 * channels remain, aligned up to minSize. */
static guint64
piece_size(guint64 bytes, guint ch_min, guint ch_max, guint64 min_size, guint64 max_size)
{
    guint64 size = MAX(min_size, div_up(bytes, ch_min));
    guint ch = ch_min;
    while (size > max_size && ch <= ch_max / 2) {
        ch *= 2;
        size = div_up(bytes, ch);
    }
    return div_up(size, min_size) * min_size;
}

/* comm->p2pChunkSize from 2.16.2: 128 KiB across nodes (NCCL_P2P_NET_CHUNKSIZE), 512 KiB on
 * one node whose GPUs all reach each other over NVLink (NCCL_P2P_NVL_CHUNKSIZE), 128 KiB else
 * (NCCL_P2P_PCI_CHUNKSIZE) (v2.18 src/init.cc:508-524). */
static guint64
p2p_chunk(const MsNcclComm *c)
{
    return c->n_nodes > 1 || !c->intra_nvlink ? 128 * KIB : 512 * KIB;
}

/* Before 2.22: the send is cut into pieces of one size, piece k on channel k mod perPeer. */
static void
pieces(const MsNcclComm *c, guint64 nbytes, gboolean same_node, MsNcclP2p *out, guint64 *piece,
       guint64 *step)
{
    guint v = c->version, per = c->p2p_channels_per_peer, n = c->n_ranks;
    guint ch_min = per, ch_max = per;
    /* "one channel per operation" and "avoid 8+ operations per channel" (v2.10 group.cc:226-231);
     * from 2.18.3 only on one node (v2.18 enqueue.cc:626-632). */
    if (v < V(2, 18, 3) || c->n_nodes == 1) {
        while (ch_min * n > c->p2p_channels && ch_min > 1) {
            ch_min /= 2;
        }
        while (ch_max * n > c->p2p_channels * 4 && ch_max > 1) {
            ch_max /= 2;
        }
    }
    guint64 chunk;
    if (v < V(2, 13, 0)) {
        /* Pieces of 512 KiB .. 2 MiB (stepSize, SENDRECV_SLICEFACTOR x stepSize), steps of
         * 4 MiB / 8 / 4 = 128 KiB (v2.10 group.cc:249, proxy.cc:261). */
        *piece = piece_size(nbytes, ch_min, ch_max, 512 * KIB, 2048 * KIB);
        chunk = 128 * KIB;
    } else {
        /* The split's step: NCCL_BUFFSIZE / 8 until 2.15, p2pChunkSize from 2.16.2; pieces of
         * step/8 (step/2 across nodes from 2.20.3) .. step across nodes, 32 x step on one
         * (v2.18 enqueue.cc:667-668, v2.20.3 enqueue.cc). */
        guint64 split = v < V(2, 16, 0) ? 512 * KIB : p2p_chunk(c);
        guint64 min = c->n_nodes > 1 && v >= V(2, 20, 0) ? split / 2 : split / 8;
        guint64 max = c->n_nodes > 1 ? split : 32 * split;
        *piece = piece_size(nbytes, ch_min, ch_max, min, max);
        /* Kernel step: 512 KiB, 128 KiB across nodes in 2.13 (v2.13.4 proxy.cc:438-439) and
         * 2.14-2.15 (NCCL_P2P_NET_CHUNKSIZE, v2.14.3 proxy.cc), p2pChunkSize from 2.16.2. */
        chunk = v < V(2, 16, 0) ? (c->n_nodes > 1 ? 128 * KIB : 512 * KIB) : p2p_chunk(c);
    }
    guint64 first = MIN(nbytes, *piece);
    out->channels = (guint)MIN(MAX(div_up(nbytes, *piece), 1), per);
    /* LL for a piece of at most NCCL_P2P_LL_THRESHOLD = 16 KiB from 2.14.3 on connections with LL
     * buffers, which network ones lack by default (v2.18 enqueue.cc:348-370, init.cc:542). */
    out->proto = v >= V(2, 14, 0) && same_node && first <= 16 * KIB ? MS_NCCL_PROTO_LL
                                                                    : MS_NCCL_PROTO_SIMPLE;
    *step = chunk;
    *piece = first;
}

/* From 2.22.3: parts of one send over nParts channels, 4 KiB aligned (v2.22 enqueue.cc:836-889,
 * include/device.h:231-232). */
static void
parts(const MsNcclComm *c, guint64 nbytes, gboolean same_node, MsNcclP2p *out, guint64 *part,
      guint64 *step)
{
    guint v = c->version, ch_max = c->p2p_channels_per_peer, ch_min = ch_max;
    while (ch_min * c->n_ranks > c->p2p_channels && ch_min > 1) {
        ch_min /= 2; /* v2.22 enqueue.cc:1006-1009 */
    }
    guint64 chunk = p2p_chunk(c);
    guint64 min = c->n_nodes > 1 ? chunk / 2 : chunk / 8;
    guint64 max = c->n_nodes > 1 ? chunk : 32 * chunk;
    guint n = (guint)MIN(ch_min, MAX(div_up(nbytes, min), 1));
    guint64 size = MAX(min, div_up(nbytes, n));
    while (size > max && n <= ch_max / 2) {
        n *= 2;
        size = div_up(nbytes, n);
    }
    out->channels = n;
    /* LL up to nChannelsMax x 16 KiB in 2.22-2.28 (v2.22 enqueue.cc:836), nChannels x 16 KiB
     * from 2.29.2 (v2.30 enqueue.cc:932). */
    guint64 ll_max = (v >= V(2, 29, 0) ? n : ch_max) * 16ull * KIB;
    out->proto = same_node && nbytes <= ll_max ? MS_NCCL_PROTO_LL : MS_NCCL_PROTO_SIMPLE;
    *part = MIN(nbytes, div_up(div_up(nbytes, n), 4 * KIB) * 4 * KIB);
    *step = chunk;
}

void
ms_nccl_p2p(const MsNcclComm *comm, guint64 nbytes, gboolean same_node, MsNcclP2p *out)
{
    g_return_if_fail(comm != NULL && out != NULL);
    *out = (MsNcclP2p){0};
    guint v = comm->version;
    guint64 piece, step;
    if (v < V(2, 22, 0)) {
        pieces(comm, nbytes, same_node, out, &piece, &step);
    } else {
        parts(comm, nbytes, same_node, out, &piece, &step);
    }
    gboolean network = !same_node && comm->n_nodes > 1;
    if (out->proto == MS_NCCL_PROTO_LL) {
        /* An LL step is 512 KiB / 8 of lines, half of them data (v2.18
         * src/collectives/device/primitives.h:49-51). */
        step = 32 * KIB;
    }
    out->chunk = MAX(MIN(step, piece), MIN(nbytes, 1));
    if (network) {
        /* A network connection sends a quarter of the step below one step of bytes, half below
         * eight (v2.9.9 proxy.cc:251-270, v2.10 proxy.cc:263-281, v2.18 proxy.cc:605-618, v2.22
         * enqueue.cc:855-860); until 2.21 the piece is compared, from 2.22 the whole send. 2.8
         * always sends whole steps (v2.8.4 proxy.cc:225-252 divides by the step alone). */
        guint64 size = v < V(2, 22, 0) ? piece : nbytes;
        guint64 msg = v < V(2, 9, 0)    ? step
                      : size < step     ? step / 4
                      : size < 8 * step ? step / 2
                                        : step;
        out->message = MAX(MIN(msg, piece), MIN(nbytes, 1));
    }
    /* At most 8 operations per channel at a time: NCCL_MAX_WORK_ELEMENTS (v2.10
     * include/devcomm.h), 8 sends and 8 receives of NCCL_MAX_WORK_ELEMENTS_P2P (v2.12-v2.21),
     * NCCL_MAX_DEV_WORK_P2P_PER_BATCH (v2.22 include/device.h:342). */
    out->peers_per_channel = 8;
    NcclHw hw = network ? NCCL_HW_NET : comm->intra_nvlink ? NCCL_HW_NVLINK : NCCL_HW_PCI;
    out->latency_us = nccl_hw_latency(v, hw, MS_NCCL_ALGO_RING, out->proto);
}
