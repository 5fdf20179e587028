/* cuda_options: what every moesim knows of the cuda backend without loading it: its help, its
 * options record and the note its runs carry. */
#include "config.h"

#include "cuda_options.h"

G_DEFINE_QUARK(ms_cuda_error_quark, ms_cuda_error)

static const MsBackendOption options[] = {
    {"dtype", "T",
     "cuda: run GEMMs and allreduces at fp32, tf32, fp16 or bf16 rather than the schedule's dtype"},
    {NULL},
};
enum { OPT_DTYPE };

gboolean
ms_cuda_options_resolve(const MsCudaOptions *record, MsCudaOptions *out, GError **error)
{
    static const MsCudaOptions defaults = {0};
    *out = record ? *record : defaults;
    if (out->dtype > MS_CUDA_BF16) {
        g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_OPTIONS,
                    "dtype: %d is not a datatype of the cuda backend (0: the schedule's, 1-4: "
                    "fp32, tf32, fp16, bf16)",
                    (int)out->dtype);
        return FALSE;
    }
    return TRUE;
}

/* The override's names, by MsCudaDtype. */
static const char *const names[] = {NULL, "fp32", "tf32", "fp16", "bf16"};

MsDtype
ms_cuda_options_dtype(const MsCudaOptions *o)
{
    MsDtype d = MS_DTYPE_N;
    if (o->dtype != MS_CUDA_SCHEDULE && o->dtype <= MS_CUDA_BF16) {
        ms_dtype_from_name(names[o->dtype], &d);
    }
    return d;
}

static gpointer
cuda_parse(const char *const *values, GError **error)
{
    g_autofree MsCudaOptions *o = g_new0(MsCudaOptions, 1);
    const char *dtype = values[OPT_DTYPE];
    if (dtype == NULL) {
        return g_steal_pointer(&o);
    }
    for (guint d = MS_CUDA_FP32; d < G_N_ELEMENTS(names); d++) {
        if (g_strcmp0(dtype, names[d]) == 0) {
            o->dtype = (MsCudaDtype)d;
            return g_steal_pointer(&o);
        }
    }
    g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_OPTIONS,
                "--dtype: '%s' is not fp32, tf32, fp16 or bf16 (fp8: see docs/backends.md)", dtype);
    return NULL;
}

static char *
cuda_describe(gconstpointer record)
{
    return g_strdup("cuda backend: per-op times from CUDA events on each GPU, aligned across GPUs "
                    "by a collective at start");
}

const MsBackendInfo ms_cuda_backend_info = {
    .name = "cuda",
    .summary = "one process per GPU: cuBLAS GEMMs of the ops' shapes, NCCL all-to-all-v and\n"
               "allreduce, CUDA-event times. On one node the ranks are forked; under srun\n"
               "(SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) or torchrun (RANK, WORLD_SIZE,\n"
               "LOCAL_RANK) with MASTER_ADDR and MASTER_PORT every process runs this\n"
               "command and rank 0 coordinates and writes the outputs.\n",
    .bench_summary = "one process per GPU: point-to-point per link class, all-to-all and\n"
                     "allreduce sweeps (NCCL), expert GEMM sweeps (cuBLAS), launch overhead,\n"
                     "all-to-alls and expert kernels alone and under an allreduce on a\n"
                     "second communicator\n",
    .options = options,
    .parse = cuda_parse,
    .describe = cuda_describe,
    .in_module = TRUE,
    .built = MOESIM_HAVE_CUDA,
    .missing = "the CUDA toolkit, cuBLAS or NCCL was not found at build time; see meson option "
               "toolkit_dir",
};
