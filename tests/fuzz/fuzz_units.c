/* Fuzz target: the unit-suffixed value parsers (sim/base/units.h). The first byte picks the parser,
 * the rest is the text. Besides crashes it checks each parser's contract: an accepted value lies
 * in its documented range, a refused one leaves the output untouched and carries a message. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim/base/units.h"

static void
check(gboolean ok, gboolean in_range, GError *error)
{
    if (ok ? !in_range || error != NULL : error == NULL || error->message[0] == '\0') {
        abort();
    }
    g_clear_error(&error);
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    g_autofree char *text = g_strndup((const char *)data + 1, size - 1);
    GError *error = NULL;
    char buf[64];
    switch (data[0] % 6) {
    case 0: {
        MsBandwidth bw = -1;
        gboolean ok = ms_parse_bandwidth(text, &bw, &error);
        check(ok, ok ? bw > 0 && bw <= 1e18 : bw == -1, error);
        ms_format_bandwidth(bw, buf, sizeof buf);
        break;
    }
    case 1: {
        MsTime t = 7;
        gboolean ok = ms_parse_time(text, &t, &error);
        check(ok, ok ? t <= 1000000 * MS_PS_PER_S : t == 7, error);
        ms_format_time(t, buf, sizeof buf);
        break;
    }
    case 2: {
        MsFlops f = -1;
        gboolean ok = ms_parse_flops(text, &f, &error);
        check(ok, ok ? f > 0 && f <= 1e21 : f == -1, error);
        break;
    }
    case 3: {
        guint64 b = G_MAXUINT64;
        gboolean ok = ms_parse_bytes(text, &b, &error);
        check(ok, ok ? b <= MS_BYTES_MAX : b == G_MAXUINT64, error);
        ms_format_bytes(b, buf, sizeof buf);
        break;
    }
    case 4: {
        double d = 42;
        gboolean ok = ms_parse_double(text, -1e6, 1e6, &d, &error);
        check(ok, ok ? d >= -1e6 && d <= 1e6 : d == 42, error);
        break;
    }
    default: {
        guint64 u = 7;
        gboolean ok = ms_parse_uint(text, 1, 1000000, &u, &error);
        check(ok, ok ? u >= 1 && u <= 1000000 : u == 7, error);
        break;
    }
    }
    return 0;
}
