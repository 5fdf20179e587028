/* coll_names: names of collective operations and algorithms (see coll_names.h). */
#include "coll_names.h"

static const char *const op_names[] = {"alltoall", "allreduce", "reducescatter", "allgather", NULL};
static const char *const algo_names[] = {"auto", "direct", "2dh", "pipe", "ring", "hier", "deepep"};

const char *
ms_coll_op_name(MsCollOp op)
{
    return op < G_N_ELEMENTS(op_names) - 1 ? op_names[op] : "?";
}

const char *const *
ms_coll_op_names(void)
{
    return op_names;
}

gboolean
ms_coll_op_from_name(const char *name, MsCollOp *out)
{
    for (guint i = 0; i < G_N_ELEMENTS(op_names) - 1; i++) {
        if (g_strcmp0(name, op_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_coll_op_from_alias(const char *name, MsCollOp *out)
{
    if (name == NULL) {
        return FALSE;
    }
    /* "All_Reduce_perf" -> "allreduce": nccl-tests names its binaries after NCCL's calls. */
    g_autoptr(GString) key = g_string_new(NULL);
    for (const char *c = name; *c; c++) {
        if (*c != '_' && *c != '-') {
            g_string_append_c(key, g_ascii_tolower(*c));
        }
    }
    if (g_str_has_suffix(key->str, "perf")) {
        g_string_truncate(key, key->len - 4);
    }
    return ms_coll_op_from_name(key->str, out);
}

const char *
ms_coll_algo_name(MsCollAlgo algo)
{
    return algo < G_N_ELEMENTS(algo_names) ? algo_names[algo] : "?";
}

gboolean
ms_coll_algo_from_name(const char *name, MsCollAlgo *out)
{
    for (guint i = 0; i < G_N_ELEMENTS(algo_names); i++) {
        if (g_strcmp0(name, algo_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}
