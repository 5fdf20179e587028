/* commands: entry points of the commands listed in commands.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* moesim topo list | show NAME|FILE (cmd_topo.c) */
int ms_cmd_topo(int argc, char **argv);

G_END_DECLS
