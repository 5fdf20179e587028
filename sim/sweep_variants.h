/* sweep_variants: a sweep's points applied to loaded inputs. Everything a point needs besides its
 * routing is loaded or built once, in the calling thread, before any point runs: the topologies
 * and models the axes name, their variants (a preset with another node count, a model with
 * another expert count: built in memory from the text the input was loaded from), and the
 * policies (with the chunk of a chunk axis, which every policy of the grid must take). A point's
 * scenario then only borrows them, so the workers that run points share read-only objects and load
 * nothing. */
#pragma once

#include <glib.h>

#include "sim/inputs.h"
#include "sim/routing_source.h"
#include "sim/scenario.h"
#include "sim/sweep_grid.h"

G_BEGIN_DECLS

#define MS_SWEEP_VARIANTS_ERROR (ms_sweep_variants_error_quark())
GQuark ms_sweep_variants_error_quark(void);
typedef enum {
    MS_SWEEP_VARIANTS_ERROR_AXIS,  /* an axis that does not fit the inputs: routing keys with a
                                    * trace, chunk with a policy that takes none */
    MS_SWEEP_VARIANTS_ERROR_VALUE, /* an input that has no key for the axis to vary */
} MsSweepVariantsError;

typedef struct _MsSweepVariants MsSweepVariants;

/* Loads and builds what the points of grid need on top of base (both borrowed: they must
 * outlive the variants). Fails with the first input that cannot be loaded or built (the message
 * names the axis value and the input's own error), MS_SWEEP_VARIANTS_ERROR_AXIS when a routing
 * axis meets a trace file or sample or a chunk axis a policy that takes no chunk, or _VALUE when an
 * input has no key for nodes= or experts= (an explicit topology, say), or MS_WHAT_IF_ERROR for a
 * straggler value that is not GPU=FACTOR[,...] of the GPUs the points use or a slow-link value
 * that is not LINK=FACTOR[,...] of the topology's limited links (_AXIS when a slow-link axis
 * meets a topology or nodes axis), or MS_NET_MODEL_ERROR for a net value that is not a --net
 * spec or that a topology of the grid cannot run. settings (may be NULL: no notes, every GPU) gives
 * the rank map a straggler's GPU must be among and the notes a straggler's and a slow link's are
 * added to. */
MsSweepVariants *ms_sweep_variants_new(const MsInputs *base, const MsSweepGrid *grid,
                                       const MsScenario *settings, GError **error);
void ms_sweep_variants_free(MsSweepVariants *variants);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSweepVariants, ms_sweep_variants_free)

/* The scenario of a point: settings (runner, mode, iterations, warm-up, seed, cancel) from
 * settings, overridden by the point's mode, iterations and seed; topology, model, calibration and
 * policy borrowed from variants (a slow-link value's own copy of the topology), a straggler value's
 * pace, the notes of both (settings' and theirs), a net value's spec;
 * the routing borrowed from base, or made for the point (routing axes) and returned in *routing for
 * the caller to free after the run (NULL otherwise). Thread safe. FALSE only when a routing value
 * is refused (MS_TRACE_GEN_ERROR). */
gboolean ms_sweep_variants_point(const MsSweepVariants *variants, guint point,
                                 const MsScenario *settings, MsScenario *sc,
                                 MsRoutingSource **routing, GError **error);

/* Makes every point's routing (its routing axes' keys on the base's) and, when generated, the
 * generator for the point's model, topology, mode, iterations and seed (settings overridden as
 * in ms_sweep_variants_point), so that a value that cannot be generated (hot=2) is refused before
 * any point runs: MS_TRACE_GEN_ERROR prefixed with "sweep: point N (KEY=VALUE ...): ". */
gboolean ms_sweep_variants_check(const MsSweepVariants *variants, const MsScenario *settings,
                                 GError **error);

/* The text of an INI file with `key = value` set in [group] (the key must be there already) and
 * the `name` key of [name_group] set to name; NULL with MS_SWEEP_VARIANTS_ERROR_VALUE when group
 * holds no such key. What a variant is loaded from. Free with g_free. */
char *ms_sweep_variants_ini_with(const char *text, gsize len, const char *group, const char *key,
                                 const char *value, const char *name_group, const char *name,
                                 GError **error);

G_END_DECLS
