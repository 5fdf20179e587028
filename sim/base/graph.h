/* graph: the dependency graphs of schedules and flow lists, as one helper. Nodes are 0 .. n-1;
 * the caller keeps each node's dependency list (the nodes it waits for) and the graph borrows it
 * through a callback, adding what dependency lists lack: successor lists (compressed rows, built
 * in two passes over the edges), Kahn's topological order, and, when there is a cycle, the cycle
 * itself. Knows nothing of what the nodes are. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The dependencies of node: *n_deps of them (the pointer may be NULL when there are none). Each
 * must be a node of the graph. Called twice per node while the graph is built and again to walk a
 * cycle; must give the same list every time. */
typedef const guint32 *(*MsGraphDepsFn)(gconstpointer data, guint32 node, guint *n_deps);

typedef struct _MsGraph MsGraph;

/* Builds the successor lists of n_nodes nodes. deps and data are borrowed: data must outlive the
 * graph and keep its dependency lists unchanged. A dependency out of range is a programmer error
 * (NULL with a critical). */
MsGraph *ms_graph_new(guint n_nodes, MsGraphDepsFn deps, gconstpointer data);
void ms_graph_free(MsGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsGraph, ms_graph_free)

guint ms_graph_n_nodes(const MsGraph *g);
guint ms_graph_n_edges(const MsGraph *g);
/* The nodes that depend on node, each once per dependency, in increasing order (node ids). */
const guint32 *ms_graph_successors(const MsGraph *g, guint32 node, guint *n);

/* Kahn's algorithm: nodes whose dependencies are all placed are placed next, in the order they
 * became free (nodes without dependencies in id order first). TRUE when every node is placed:
 * order (n_nodes entries, may be NULL) holds them. FALSE when some cannot be, because they lie on
 * a cycle or wait for one: cycle (may be NULL) then gets a new array (guint32) of the nodes of one
 * cycle, each waiting for the next and the last for the first. The cycle is the one reached from
 * the lowest unplaced node by following, from each node, its first unplaced dependency. */
gboolean ms_graph_sort(const MsGraph *g, guint32 *order, GArray **cycle);

G_END_DECLS
