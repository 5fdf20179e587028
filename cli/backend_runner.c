/* backend_runner: one ms_backend_execute per execution. */
#include "backend_runner.h"

#include "backends/executor.h"

static MsRecords *
backend_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                GError **error)
{
    /* Real execution of the same schedule: the records have the simulated run's format. */
    MsExecOptions exec = {.topology = topo};
    return ms_backend_execute(data, s, topo, &exec, error);
}

MsRunner *
ms_backend_runner_new(const char *backend)
{
    return ms_runner_new(backend, backend_execute, g_strdup(backend), g_free);
}
