/* commands: entry points of the commands listed in commands.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int ms_cmd_trace(int argc, char **argv);

G_END_DECLS
