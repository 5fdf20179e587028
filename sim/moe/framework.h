/* framework: the host-side work of the framework that runs an MoE layer, as time the GPU waits
 * for: per compute op (the framework's dispatch on top of the kernel launch), per MoE layer, per
 * local expert (a Python loop over experts), per host synchronisation (device-to-host reads of
 * counts, as dropless dispatch needs) and per token (a loop over tokens). Figures come from the
 * model file, else a calibration fitted from a profile; named frameworks give the structure
 * their code has (how many synchronisations an MoE layer makes), and no time: no public
 * measurement gives one, so every time defaults to 0 (docs/models.md). The layer, expert, sync
 * and token figures are the forward pass's, which Python runs; backward runs in the autograd
 * engine, where only the per-op figure applies. Seconds throughout. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    MS_FRAMEWORK_CUSTOM, /* nothing assumed: every figure from the file or a calibration */
    MS_FRAMEWORK_DEEPSPEED,
    MS_FRAMEWORK_MEGATRON,
    MS_FRAMEWORK_TUTEL,
    MS_FRAMEWORK_VLLM,
    MS_FRAMEWORK_N,
} MsFrameworkKind;

/* A plain value record. Times are seconds per occurrence, >= 0. */
typedef struct {
    MsFrameworkKind kind;
    double op_s;     /* per compute op */
    double layer_s;  /* per forward MoE layer */
    double expert_s; /* per local expert of a forward MoE layer */
    double sync_s;   /* per host synchronisation */
    guint syncs;     /* host synchronisations per forward MoE layer */
    double token_s;  /* per token a GPU routes through a forward MoE layer */
} MsFramework;

/* Largest time a figure may have: one second per op or layer is a unit mistake (ms for us). */
#define MS_FRAMEWORK_MAX_S 1.0
/* Most synchronisations per MoE layer a framework makes. */
#define MS_FRAMEWORK_MAX_SYNCS 64u

/* The names by value, NULL-terminated (the choice table of the model file's framework). */
extern const char *const ms_framework_names[MS_FRAMEWORK_N + 1];

/* "custom", "deepspeed", "megatron", "tutel", "vllm"; "?" out of range. */
const char *ms_framework_name(MsFrameworkKind kind);
gboolean ms_framework_from_name(const char *name, MsFrameworkKind *out);
/* "custom, deepspeed, megatron, tutel or vllm", for messages; static. */
const char *ms_framework_names_text(void);
/* A framework's defaults for a layer that drops tokens beyond a capacity (dropless FALSE) or not:
 * its host synchronisations per forward MoE layer (read from its code, cited in framework.c) and
 * every time 0. */
void ms_framework_defaults(MsFrameworkKind kind, gboolean dropless, MsFramework *out);
/* Host seconds of one forward MoE layer on a GPU hosting local_experts experts
 * and routing tokens tokens: layer + local_experts x expert + syncs x sync + tokens x token. */
double ms_framework_layer_s(const MsFramework *f, guint local_experts, guint64 tokens);
/* Whether any time is set (a framework without one adds nothing to a schedule). */
gboolean ms_framework_has_time(const MsFramework *f);
/* FALSE (with a message naming the figure) when a time is not finite, negative or above
 * MS_FRAMEWORK_MAX_S, or syncs above MS_FRAMEWORK_MAX_SYNCS. */
gboolean ms_framework_check(const MsFramework *f, char **problem);

G_END_DECLS
