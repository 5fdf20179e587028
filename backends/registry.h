/* registry: the backends this moesim knows, one line each in the table of registry.c. A backend
 * registers a description of itself: its name, what it runs on (for help), its own command-line
 * options with the parser that turns them into its options record, how it describes a run, and
 * where its hooks are: built in, or in a module loaded at run time (backend_module.h), so that
 * only a command that executes on it loads its libraries. Commands list, find and load backends
 * through this interface and name none of them. */
#pragma once

#include <glib.h>

#include "backends/executor.h"

G_BEGIN_DECLS

/* One option of a backend's own: `--NAME VALUE` on the command line of `moesim exec`. */
typedef struct {
    const char *name; /* without "--" */
    const char *arg;  /* the value's name in help: "X", "SIZE", "T" */
    const char *help; /* one line that names the default */
} MsBackendOption;

/* What a backend registers. A plain value record of static data. */
typedef struct {
    const char *name;
    /* What it runs on and how, for `moesim exec --help`: lines of at most 80 columns, each ending
     * in "\n", without indentation. */
    const char *summary;
    /* What `moesim bench` measures with it, likewise; NULL: it has no microbenchmarks. */
    const char *bench_summary;
    /* Its options, ended by {NULL}; NULL: none. Two backends may share an option name (each
     * parses the value given); a name must not be one of the commands' own options. */
    const MsBackendOption *options;
    /* Makes its options record (MsExecOptions.backend) from the values given, values[k] being the
     * text of options[k] or NULL when not given, with the defaults for the rest. Returns it (free
     * with g_free) or NULL with an error of the backend's own domain, "--NAME: 'TEXT' problem".
     * NULL hook: the backend takes no record. */
    gpointer (*parse)(const char *const *values, GError **error);
    /* One line on what the times of a run with record mean (record NULL: the defaults), for the
     * run's result notes. Free with g_free. */
    char *(*describe)(gconstpointer record);
    /* Where its hooks are: built in (hooks), or in the module moesim-NAME (in_module), which this
     * build made when built is TRUE and otherwise lacks for the reason in missing. */
    const MsExecBackend *hooks;
    gboolean in_module;
    gboolean built;
    const char *missing;
} MsBackendInfo;

/* Every registered backend, in table order, NULL-terminated; those this build lacks included. */
const MsBackendInfo *const *ms_backend_list(void);

/* TRUE when this build has the backend (built in, or its module built). */
gboolean ms_backend_in_build(const MsBackendInfo *info);

/* The backend named name. NULL with MS_EXECUTOR_ERROR_BACKEND for an unknown name (the message
 * lists the known ones). */
const MsBackendInfo *ms_backend_find(const char *name, GError **error);

/* Its hooks: built in, or loaded from its module the first time they are asked for (kept loaded
 * for the life of the process). NULL with MS_EXECUTOR_ERROR_BACKEND when this build lacks it (the
 * message says why), or the module loader's error. */
const MsExecBackend *ms_backend_hooks(const MsBackendInfo *info, GError **error);

/* The index of option name in info->options, or -1. */
gint ms_backend_option_index(const MsBackendInfo *info, const char *name);

/* Its options record from values (as MsBackendInfo.parse takes them) into *record (NULL for a
 * backend that takes none). FALSE with the parser's error. */
gboolean ms_backend_parse_options(const MsBackendInfo *info, const char *const *values,
                                  gpointer *record, GError **error);

/* info->describe(record), or "NAME backend" when it has no describe hook. Free with g_free. */
char *ms_backend_describe(const MsBackendInfo *info, gconstpointer record);

G_END_DECLS
