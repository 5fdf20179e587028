/* commands: entry points of the commands listed in commands.c. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

G_END_DECLS
