/* what_if: the specs of the simulator's what-ifs, NAME=FACTOR[,...], read into what the engine
 * and the topology take: a straggler's pace per GPU (the engine's MsEngineOptions.pace), a slow
 * link's bandwidth. Shared by the command line (--straggler, --slow-link) and a sweep's
 * straggler and slow-link axes, so that both read a value the same way and refuse it with the
 * same message. */
#pragma once

#include <glib.h>

#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_WHAT_IF_ERROR (ms_what_if_error_quark())
GQuark ms_what_if_error_quark(void);
typedef enum {
    MS_WHAT_IF_ERROR_SPEC, /* a malformed item, a factor out of range, an unknown GPU or link */
} MsWhatIfError;

/* One NAME=FACTOR item of option's list: the name (newly allocated, not empty) and a factor in
 * [1, MS_COMPUTE_SLOWDOWN_MAX]; FALSE with an error naming option, the item, the form expected
 * and what the factor means. */
gboolean ms_what_if_split(const char *option, const char *item, const char *form,
                          const char *meaning, char **name, double *factor, GError **error);

/* GPU=FACTOR[,...] (option names it in messages) for a run on gpus GPUs: *pace gets one factor
 * per GPU up to the last one named (1 for those not named), notes a note per straggler (g_free'd
 * strings appended). FALSE with the error, *pace left NULL. */
gboolean ms_what_if_stragglers(const char *option, const char *text, guint gpus, GArray **pace,
                               GPtrArray *notes, GError **error);

/* LINK=FACTOR[,...] (option names it in messages): each named link of topo at 1/FACTOR of its
 * bandwidth (ms_topology_slow_link), notes a note per link (g_free'd strings appended). FALSE
 * with the error for a malformed item, a factor out of range, a link topo does not have or one
 * of unlimited bandwidth (it never limits a flow); the links before it are slowed already. */
gboolean ms_what_if_slow_links(const char *option, const char *text, MsTopology *topo,
                               GPtrArray *notes, GError **error);

G_END_DECLS
