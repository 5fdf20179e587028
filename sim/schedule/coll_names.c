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
