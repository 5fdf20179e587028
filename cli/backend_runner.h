/* backend_runner: the cpu and cuda backends as runners (sim/runner.h), so that a scenario
 * executes its schedules on real hardware without the simulator knowing backends/ exists. The
 * adapter lives here because the command line is the only layer above both. */
#pragma once

#include <glib.h>

#include "sim/runner.h"

G_BEGIN_DECLS

/* A runner called backend whose executions are ms_backend_execute(backend, ...) with the
 * scenario's topology (it sizes the cpu backend's busy work). An unknown backend name is
 * reported by the first execution, with the list of the known ones. */
MsRunner *ms_backend_runner_new(const char *backend);

G_END_DECLS
