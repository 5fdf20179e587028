/* model_private: the body of MsModel, shared by model.c (the [model] group), model_costs.c (the
 * cost formulas) and model_groups.c (the [group NAME] sections). Not for other modules. */
#pragma once

#include "sim/base/ini.h"
#include "sim/moe/model.h"

struct _MsModel {
    MsModelSpec spec;
    char *source;
    char *name;
    char *description;
    guint ep_line;            /* line of the file's ep key (0: not given) */
    gboolean *is_moe;         /* per layer */
    gint *moe_index;          /* per layer, -1 for dense */
    guint *moe_layer;         /* per MoE index */
    guint64 attention_params; /* the file's override, 0: the Q, K, V, O formula */
    double attention_flops;   /* per token, forward */
    double dense_flops;       /* per token, forward */
    /* Layer groups: none (n_groups 0), or every layer in exactly one. */
    guint n_groups;
    MsModel *groups;    /* [n_groups]: the model as each group's layers see it */
    guint *layer_group; /* [layers] */
    /* In a group's view: its name and layers; the arrays and strings above are the model's. */
    gboolean is_view;
    MsModelGroup group;
};

/* Forward flops per token of attention and the dense FFN from the spec's dimensions. */
void model_derive_flops(MsModel *m);

/* Reads the [group NAME] sections of ini after the [model] group: FALSE with MS_INI_ERROR_VALUE
 * naming FILE:LINE, the group, the key and the value for layers that are not a range of the
 * model's, overlap another group or leave a layer out, and for a value out of its [model] range. */
gboolean model_read_groups(MsModel *m, const MsIni *ini, GError **error);
