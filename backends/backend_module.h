/* backend_module: backends whose libraries only some commands need (the CUDA runtime, cuBLAS and
 * NCCL: tenths of a second to load) live in modules loaded at run time, moesim-NAME.so, so that
 * every other command starts without them. A module exports MS_BACKEND_MODULE_SYMBOL, an
 * MsBackendModule naming the interface and the moesim version it was built for and its hooks.
 * Where a module is looked for, in order: the folder in $MOESIM_BACKEND_DIR when set (a build
 * tree's tests), the folder of the running program (a build tree keeps modules beside moesim),
 * and MOESIM_MODULE_DIR relative to that folder (an installed tree: libdir/moesim). */
#pragma once

#include <glib.h>

#include "backends/executor.h"

G_BEGIN_DECLS

#define MS_BACKEND_MODULE_ERROR (ms_backend_module_error_quark())
GQuark ms_backend_module_error_quark(void);
typedef enum {
    MS_BACKEND_MODULE_ERROR_NOT_FOUND, /* no moesim-NAME.so in any folder searched */
    MS_BACKEND_MODULE_ERROR_LOAD,      /* found, but the dynamic loader refused it */
    MS_BACKEND_MODULE_ERROR_MISMATCH,  /* a module of another moesim or interface version */
} MsBackendModuleError;

/* The interface a module is built against: raised whenever MsExecBackend, MsExecOptions or a
 * hook's contract changes. */
#define MS_BACKEND_MODULE_ABI 1u
#define MS_BACKEND_MODULE_SYMBOL "moesim_backend_module"
#define MS_BACKEND_MODULE_ENV "MOESIM_BACKEND_DIR"

typedef struct {
    guint32 abi;         /* MS_BACKEND_MODULE_ABI of its build */
    const char *version; /* MOESIM_VERSION of its build */
    gsize hooks_size;    /* sizeof (MsExecBackend) in its build */
    const MsExecBackend *hooks;
} MsBackendModule;

/* The hooks of backend name from its module, loaded the first time (and kept loaded for the life
 * of the process); later calls return the same hooks. NULL with MS_BACKEND_MODULE_ERROR: _NOT_FOUND
 * naming every folder searched, _LOAD with the loader's reason (a library it needs missing, say),
 * _MISMATCH naming both versions, each message naming the backend and the file. */
const MsExecBackend *ms_backend_module_load(const char *name, GError **error);

/* The file a module of backend name has in folder dir ("DIR/moesim-NAME.so"). Free with g_free. */
char *ms_backend_module_path(const char *dir, const char *name);

G_END_DECLS
