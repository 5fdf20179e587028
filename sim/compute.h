/* compute: the GPU compute model, a roofline per kernel: launch + max(flops / (peak x eff(tokens)),
 * bytes / hbm), with peak that of the datatype the kernels compute in, eff a calibrated curve
 * over token counts or a constant default, and a slowdown while NCCL kernels run concurrently. Time
 * is MsTime (ps); flops and bytes per kernel. Ignores caches, clocks, tensor-core shape
 * quantisation beyond what the curve captures, and contention between concurrent compute kernels.
 */
#pragma once

#include <glib.h>

#include "sim/base/dtype.h"
#include "sim/base/units.h"
#include "sim/schedule/schedule.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_COMPUTE_ERROR (ms_compute_error_quark())
GQuark ms_compute_error_quark(void);
typedef enum {
    MS_COMPUTE_ERROR_INVALID, /* a GPU spec, curve or factor that makes no model */
} MsComputeError;

/* Efficiency used without calibration: 0.70 of peak. The Vidur A100 profiles (validate/data)
 * run Mixtral-expert GEMMs (4096 x 28672 and 14336 x 4096, fp16) mostly at 205-235 TFLOP/s of 312
 * (0.66-0.75) for 256 or more tokens, and a whole expert FFN at about 0.70: with 0.70 the model's
 * median error over those token counts is 2.3%. Fewer tokens are bound by reading the weights,
 * which the memory term models without any efficiency. */
#define MS_COMPUTE_DEFAULT_EFFICIENCY 0.70
/* Largest efficiency a curve may hold: above 1 only to absorb a peak quoted too low. */
#define MS_COMPUTE_EFFICIENCY_MAX 1.5
/* Largest overlap slowdown accepted: compute 10x slower next to NCCL is a broken measurement. */
#define MS_COMPUTE_SLOWDOWN_MAX 10.0

typedef struct _MsComputeModel MsComputeModel;

/* A model of one GPU (the numbers are copied). Returns NULL with MS_COMPUTE_ERROR_INVALID when
 * peak_flops or hbm_bandwidth is not a positive finite number or launch_overhead is
 * MS_TIME_NEVER. */
MsComputeModel *ms_compute_model_new(const MsGpuSpec *spec, GError **error);
void ms_compute_model_free(MsComputeModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsComputeModel, ms_compute_model_free)

/* Prices kernels at the GPU's dense peak for dtype (ms_gpu_spec_peak; fp16/bf16, the spec's
 * peak_flops, until set). FALSE with MS_COMPUTE_ERROR_INVALID, naming the GPU and the peak_DTYPE
 * key its file lacks, when the GPU has no figure for dtype; the model is then unchanged. */
gboolean ms_compute_model_set_dtype(MsComputeModel *model, MsDtype dtype, GError **error);
MsDtype ms_compute_model_dtype(const MsComputeModel *model);
/* Sets the dtype the schedule's metadata names ("dtype", written by the planner); a schedule
 * without one (written before datatypes were recorded) keeps the fp16/bf16 peak. FALSE with
 * MS_COMPUTE_ERROR_INVALID for an unknown name or a GPU without that peak. */
gboolean ms_compute_model_apply_schedule(MsComputeModel *model, const MsSchedule *s,
                                         GError **error);

/* Replaces the efficiency with a curve over token counts (copied): tokens strictly increasing and
 * > 0, efficiencies in (0, 1.5], interpolated by ms_log_interp with log_y. n == 0 restores the
 * constant default. Returns FALSE with MS_COMPUTE_ERROR_INVALID (naming the index) and leaves the
 * model unchanged on bad input. */
gboolean ms_compute_model_set_curve(MsComputeModel *model, const double *tokens,
                                    const double *efficiency, guint n, GError **error);
/* Sets the factor (>= 1, <= 10) by which kernel time grows while NCCL kernels run on the same
 * GPU; 1.0 by default. Returns FALSE with MS_COMPUTE_ERROR_INVALID otherwise. */
gboolean ms_compute_model_set_overlap_slowdown(MsComputeModel *model, double factor,
                                               GError **error);
double ms_compute_model_overlap_slowdown(const MsComputeModel *model);
/* Makes the GPU a straggler: every kernel body (not its launch or host time) takes factor (>= 1,
 * <= 10) times its time, as on a GPU whose clocks are throttled or that is simply slower than
 * its peers; 1.0 by default. Returns FALSE with MS_COMPUTE_ERROR_INVALID otherwise. */
gboolean ms_compute_model_set_pace(MsComputeModel *model, double factor, GError **error);
/* Replaces the per-kernel launch overhead (a calibration may measure it). */
void ms_compute_model_set_launch(MsComputeModel *model, MsTime launch);
MsTime ms_compute_model_launch(const MsComputeModel *model);
MsFlops ms_compute_model_peak(const MsComputeModel *model);
MsBandwidth ms_compute_model_hbm(const MsComputeModel *model);

/* Efficiency at a token count; tokens == 0 means the kernel has no token dimension and gets the
 * efficiency of the largest calibrated token count (the default when uncalibrated). */
double ms_compute_efficiency(const MsComputeModel *model, guint64 tokens);

/* launch + max(flops / (peak x eff(tokens)), bytes / hbm), rounded to the picosecond. flops and
 * bytes of 0 give the launch overhead alone; flops must be finite and >= 0. */
MsTime ms_compute_time(const MsComputeModel *model, double flops, guint64 bytes, guint64 tokens);
/* The same kernel while NCCL kernels run concurrently: its body (not the launch) is stretched by
 * the overlap slowdown. */
MsTime ms_compute_time_overlapped(const MsComputeModel *model, double flops, guint64 bytes,
                                  guint64 tokens);

/* The time of one compute op of a schedule: a host op (MS_ROLE_HOST) takes its host time alone
 * (it launches no kernel); any other op takes launch + its host time + the kernel body, the body
 * stretched by the overlap slowdown when overlapped (NCCL kernels running on the GPU). The
 * efficiency curve is indexed by one GEMM's rows: the op's gemm_m when set (an expert op's GEMMs
 * each have one expert's tokens), else its tokens. */
MsTime ms_compute_op_time(const MsComputeModel *model, const MsOpInfo *op, gboolean overlapped);
/* Its two parts, seconds: fixed, what the op takes whatever runs beside it (the launch and the
 * host time; a host op's all), and body, the kernel alone, which the overlap slowdown stretches
 * for as long as NCCL kernels run (sim/engine.c pro-rates it). */
void ms_compute_op_parts(const MsComputeModel *model, const MsOpInfo *op, double *fixed_s,
                         double *body_s);

/* Cost of one expert's forward for tokens tokens: up projection (d_model x d_ffn, two such
 * matrices when gated), activation, down projection (d_ffn x d_model). flops = 2 tokens d_model
 * d_ffn per matrix; bytes = dtype_bytes x (weights + input + up output + activation read/write +
 * output). tokens == 0 costs nothing. */
void ms_compute_expert_ffn_cost(guint64 tokens, guint64 d_model, guint64 d_ffn, gboolean gated,
                                guint dtype_bytes, double *flops, guint64 *bytes);
/* ms_compute_time of that cost (one op: a calibrated curve is fitted on whole expert FFNs);
 * 0 for tokens == 0 (an expert without tokens launches nothing). */
MsTime ms_compute_expert_ffn_time(const MsComputeModel *model, guint64 tokens, guint64 d_model,
                                  guint64 d_ffn, gboolean gated, guint dtype_bytes);

/* Piecewise-linear interpolation of y over log(x) through n points (x strictly increasing, > 0),
 * clamped to y[0] / y[n-1] outside [x[0], x[n-1]]; with log_y, log(y) is interpolated instead
 * (y > 0), which follows efficiencies proportional to a power of x exactly, as in the memory-bound
 * regime where efficiency grows linearly with tokens. n must be >= 1. */
double ms_log_interp(const double *x, const double *y, guint n, double xq, gboolean log_y);

G_END_DECLS
