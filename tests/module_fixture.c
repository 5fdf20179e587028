/* A backend module for the loader's tests, built three ways (tests/meson.build): moesim-fake, a
 * well-formed module whose hooks are named "fake"; moesim-stale, built for another module
 * interface; moesim-nosym, a shared object without the entry point. Its hooks are never run. */
#include "config.h"

#include <gmodule.h>

#include "backends/backend_module.h"

#ifndef FIXTURE_NO_ENTRY

static const MsExecBackend hooks = {.name = "fake", .per_rank = TRUE};

#ifdef FIXTURE_STALE
#define FIXTURE_ABI (MS_BACKEND_MODULE_ABI + 1)
#define FIXTURE_VERSION "0.0.0-stale"
#else
#define FIXTURE_ABI MS_BACKEND_MODULE_ABI
#define FIXTURE_VERSION MOESIM_VERSION
#endif

G_MODULE_EXPORT const MsBackendModule moesim_backend_module = {
    .abi = FIXTURE_ABI,
    .version = FIXTURE_VERSION,
    .hooks_size = sizeof(MsExecBackend),
    .hooks = &hooks,
};

#else

/* Something to export, so that the object is a valid module without the entry point. */
G_MODULE_EXPORT const int moesim_fixture_without_entry = 1;

#endif
