/* fuzz: what every fuzz target shares: libFuzzer's entry point, and the check that a refusal
 * comes with a message (a parser that fails without saying why is a finding, like a crash). */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const guint8 *data, size_t size);

/* Aborts unless *error is set and has a message; clears it. With MOESIM_FUZZ_VERBOSE set the
 * message is printed, to see what a seed reaches. */
static inline void
fuzz_refused(GError **error)
{
    if (*error == NULL || (*error)->message[0] == '\0') {
        abort();
    }
    if (g_getenv("MOESIM_FUZZ_VERBOSE")) {
        fprintf(stderr, "refused: %s\n", (*error)->message);
    }
    g_clear_error(error);
}
