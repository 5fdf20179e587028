/* vidur: readers of the Vidur profiling CSVs (microsoft/vidur data/profiling; the A100 files ship
 * in validate/data). Network profiles give one row per line (time_stats.<op>.median in ms, size
 * in bytes, num_workers, devices_per_node); the MLP compute profile gives three rows per line
 * (mlp_up_proj and mlp_down_proj GEMMs, mlp_act elementwise), fp16. Other operators of the
 * compute profile (attention, norms, embedding) are not MoE expert work and are ignored. Errors
 * are MS_MEASUREMENT_ERROR as "SOURCE:LINE: column: problem". */
#pragma once

#include <glib.h>

#include "validate/measurement.h"

G_BEGIN_DECLS

/* Appends the rows of a network profile. The operation comes from the single
 * time_stats.<op>.median column: all_reduce, all_gather, reduce_scatter, all_to_all or
 * send_recv; a `collective` column, when present, must name the same one. Returns FALSE with
 * _MISSING for a missing column, _SYNTAX for a line with the wrong number of fields, _VALUE for a
 * bad value or an operation moesim does not model. */
gboolean ms_vidur_read_network(MsMeasurementSet *set, const char *data, gsize len,
                               const char *source, GError **error);

/* Appends the MLP rows of a compute profile: per line, with t = num_tensor_parallel_workers
 * (1 when absent), d = n_embd and f = n_expanded_embd / t, the up projection m = num_tokens,
 * k = d, n = f (2 f when use_gated_mlp), the activation (m rows of f, reading 2 f or f and
 * writing f elements) and the down projection k = f, n = d. Errors as above; t must divide
 * n_expanded_embd. */
gboolean ms_vidur_read_compute(MsMeasurementSet *set, const char *data, gsize len,
                               const char *source, GError **error);

G_END_DECLS
