/* schedule_private: the in-memory layout of a schedule, shared by schedule.c (building,
 * validation, reading), schedule_json.c (serialisation) and schedule_digest.c (the work's
 * digest). */
#pragma once

#include "schedule.h"

typedef struct {
    guint32 rank;
    guint8 stream;
    guint8 kind, role, phase, compute;
    guint32 flags;
    gint64 priority;
    gint32 layer, chunk;
    const char *label; /* in the schedule's string chunk */
    GArray *deps;      /* guint32, may be NULL */
    double flops, bytes, host;
    guint32 tokens, m, n, k, count, experts;
    guint32 coll;
} Op;

typedef struct {
    guint8 kind, algo;
    guint32 window;
    guint n;
    guint32 *ranks, *ops;
    guint64 bytes;
    guint64 *matrix;
    guint64 *rdma;      /* deepep all-to-all: the RDMA leg's bytes per pair */
    gboolean returning; /* deepep: tokens return home (the combine's direction) */
    const char *label;
} Coll;

typedef struct {
    char *name;
    MsStreamKind kind;
} Stream;

struct _MsSchedule {
    guint n_ranks;
    GArray *ops;         /* Op */
    GArray *colls;       /* Coll */
    GArray *streams;     /* Stream */
    GPtrArray *rank_ops; /* per rank: GArray of guint32 */
    GPtrArray *meta_keys;
    GHashTable *meta;
    char *policy;
    MsDispatchRules rules;
    GStringChunk *strings;
};

#define SCHED_OP(s, i) (&g_array_index((s)->ops, Op, (i)))
#define SCHED_COLL(s, i) (&g_array_index((s)->colls, Coll, (i)))

/* Adds a comm op for participant p of collective c (used by both builders and the loader). */
guint32 ms_schedule_add_comm_op(MsSchedule *s, guint32 coll, guint rank, guint stream, MsRole role,
                                MsPhase phase, gint layer, gint chunk, const char *label);
/* Creates an empty collective record; returns its id. */
guint32 ms_schedule_new_coll(MsSchedule *s, MsCollKind kind, guint8 algo, guint32 window,
                             const guint32 *ranks, guint n, const char *label);
