/* backend_runner: one ms_backend_execute per execution. */
#include "backend_runner.h"

#include "backends/executor.h"
#include "sim/scenario.h"

static MsRecords *
backend_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                const MsRunWhatIf *what_if, GError **error)
{
    if (what_if && (what_if->pace || what_if->net)) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    what_if->pace
                        ? "a straggler slows the simulator's GPUs: the %s backend runs real ones"
                        : "a network model is the simulator's: the %s backend runs a real network",
                    (const char *)data);
        return NULL;
    }
    /* Real execution of the same schedule: the records have the simulated run's format. */
    MsExecOptions exec = {.topology = topo};
    return ms_backend_execute(data, s, topo, &exec, error);
}

MsRunner *
ms_backend_runner_new(const char *backend)
{
    return ms_runner_new(backend, backend_execute, g_strdup(backend), g_free);
}
