/* cpu_options: the cpu backend's registration: what it is (for help), its options record made from
 * --time-scale and --max-memory, and the note its runs carry. */
#include "cpu_backend.h"

#include <math.h>
#include <string.h>

#include "sim/base/units.h"

/* The largest time scale: a modelled millisecond becomes 1000 s of busy work. */
#define MAX_TIME_SCALE 1e6

static const MsBackendOption options[] = {
    {"time-scale", "X", "cpu: busy work lasts the modelled time x this (default 1)"},
    {"max-memory", "SIZE", "cpu: limit on rank buffers (default 4GiB)"},
    {NULL},
};
enum { OPT_TIME_SCALE, OPT_MAX_MEMORY };

gboolean
ms_cpu_options_resolve(const MsCpuOptions *record, MsCpuOptions *out, GError **error)
{
    static const MsCpuOptions defaults = {0};
    *out = record ? *record : defaults;
    if (!isfinite(out->time_scale) || out->time_scale < 0 || out->time_scale > MAX_TIME_SCALE) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS,
                    "time scale: %g is not in [0, %g]", out->time_scale, MAX_TIME_SCALE);
        return FALSE;
    }
    if (out->time_scale == 0) {
        out->time_scale = 1.0;
    }
    if (out->max_memory == 0) {
        out->max_memory = MS_CPU_DEFAULT_MAX_MEMORY;
    }
    return TRUE;
}

static gboolean
parse_time_scale(const char *text, double *out, GError **error)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v) || v <= 0 || v > MAX_TIME_SCALE) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS,
                    "--time-scale: '%s' is not a number in (0, %g]", text, MAX_TIME_SCALE);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

/* A bare integer is bytes ("4096"), anything else needs a unit ("64KiB", "4G"). */
static gboolean
parse_max_memory(const char *text, guint64 *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    gboolean digits = g_ascii_isdigit(text[0]) && strspn(text, "0123456789") == strlen(text);
    gboolean ok = digits ? ms_parse_uint(text, 0, MS_BYTES_MAX, out, &local)
                         : ms_parse_bytes(text, out, &local);
    if (!ok) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS, "--max-memory: %s",
                    local->message);
        return FALSE;
    }
    if (*out == 0) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_OPTIONS,
                    "--max-memory: '%s' must be more than 0", text);
        return FALSE;
    }
    return TRUE;
}

static gpointer
cpu_parse(const char *const *values, GError **error)
{
    g_autofree MsCpuOptions *o = g_new0(MsCpuOptions, 1);
    if ((values[OPT_TIME_SCALE] &&
         !parse_time_scale(values[OPT_TIME_SCALE], &o->time_scale, error)) ||
        (values[OPT_MAX_MEMORY] &&
         !parse_max_memory(values[OPT_MAX_MEMORY], &o->max_memory, error))) {
        return NULL;
    }
    return g_steal_pointer(&o);
}

static char *
cpu_describe(gconstpointer record)
{
    MsCpuOptions o;
    ms_cpu_options_resolve(record, &o, NULL); /* a record the run accepted */
    return g_strdup_printf("cpu backend: compute ops are busy work of the modelled time x %g and "
                           "transfers host memory copies; times do not measure a GPU",
                           o.time_scale);
}

const MsBackendInfo ms_cpu_backend_info = {
    .name = "cpu",
    .summary = "every rank a thread: all-to-alls copy their real bytes between rank buffers,\n"
               "allreduces sum floats, compute is busy work of the modelled time; checks\n"
               "that every op runs once, after its dependencies, in the dispatcher's order\n",
    .options = options,
    .parse = cpu_parse,
    .describe = cpu_describe,
    .hooks = &ms_cpu_backend,
};
