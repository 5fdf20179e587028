/* spans: unions of time intervals. */
#include "spans.h"

static int
cmp_span(gconstpointer x, gconstpointer y)
{
    const MsSpan *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

MsTime
ms_spans_merge(GArray *spans)
{
    if (spans->len == 0) {
        return 0;
    }
    g_array_sort(spans, cmp_span);
    MsSpan *s = (MsSpan *)spans->data;
    guint w = 0;
    for (guint i = 1; i < spans->len; i++) {
        if (s[i].a <= s[w].b) {
            s[w].b = MAX(s[w].b, s[i].b);
        } else {
            s[++w] = s[i];
        }
    }
    g_array_set_size(spans, w + 1);
    MsTime total = 0;
    for (guint i = 0; i <= w; i++) {
        total += s[i].b - s[i].a;
    }
    return total;
}
