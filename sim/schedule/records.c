/* records: per-op start/end times of one execution, plus named run figures. */
#include "records.h"

G_DEFINE_QUARK(ms_records_error_quark, ms_records_error)

struct _MsRecords {
    guint n;
    MsTime *start, *end;
    char *backend;
    GPtrArray *keys;         /* stat names in insertion order, NULL-terminated */
    GArray *values;          /* double */
    GPtrArray *series_names; /* NULL-terminated */
    GPtrArray *series;       /* Series* */
};

typedef struct {
    GArray *t; /* MsTime */
    GArray *v; /* double */
} Series;

static void
series_free(gpointer p)
{
    Series *s = p;
    g_array_unref(s->t);
    g_array_unref(s->v);
    g_free(s);
}

MsRecords *
ms_records_new(guint n_ops, const char *backend)
{
    MsRecords *r = g_new0(MsRecords, 1);
    r->n = n_ops;
    r->start = g_new(MsTime, MAX(n_ops, 1));
    r->end = g_new(MsTime, MAX(n_ops, 1));
    for (guint i = 0; i < n_ops; i++) {
        r->start[i] = r->end[i] = MS_TIME_NEVER;
    }
    r->backend = g_strdup(backend);
    r->keys = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r->keys, NULL);
    r->values = g_array_new(FALSE, FALSE, sizeof(double));
    r->series_names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r->series_names, NULL);
    r->series = g_ptr_array_new_with_free_func(series_free);
    return r;
}

void
ms_records_free(MsRecords *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->start);
    g_free(r->end);
    g_free(r->backend);
    g_ptr_array_unref(r->keys);
    g_array_unref(r->values);
    g_ptr_array_unref(r->series_names);
    g_ptr_array_unref(r->series);
    g_free(r);
}

void
ms_records_set(MsRecords *r, guint32 op, MsTime start, MsTime end)
{
    g_return_if_fail(op < r->n && end >= start);
    r->start[op] = start;
    r->end[op] = end;
}

guint
ms_records_n_ops(const MsRecords *r)
{
    return r->n;
}

MsTime
ms_records_start(const MsRecords *r, guint32 op)
{
    g_return_val_if_fail(op < r->n, MS_TIME_NEVER);
    return r->start[op];
}

MsTime
ms_records_end(const MsRecords *r, guint32 op)
{
    g_return_val_if_fail(op < r->n, MS_TIME_NEVER);
    return r->end[op];
}

const char *
ms_records_backend(const MsRecords *r)
{
    return r->backend;
}

void
ms_records_set_stat(MsRecords *r, const char *key, double value)
{
    for (guint i = 0; i + 1 < r->keys->len; i++) {
        if (g_strcmp0(r->keys->pdata[i], key) == 0) {
            g_array_index(r->values, double, i) = value;
            return;
        }
    }
    r->keys->pdata[r->keys->len - 1] = g_strdup(key);
    g_ptr_array_add(r->keys, NULL);
    g_array_append_val(r->values, value);
}

gboolean
ms_records_get_stat(const MsRecords *r, const char *key, double *value)
{
    for (guint i = 0; i + 1 < r->keys->len; i++) {
        if (g_strcmp0(r->keys->pdata[i], key) == 0) {
            *value = g_array_index(r->values, double, i);
            return TRUE;
        }
    }
    return FALSE;
}

const char *const *
ms_records_stat_keys(const MsRecords *r)
{
    return (const char *const *)r->keys->pdata;
}

static Series *
find_series(const MsRecords *r, const char *name)
{
    for (guint i = 0; i < r->series->len; i++) {
        if (g_strcmp0(r->series_names->pdata[i], name) == 0) {
            return r->series->pdata[i];
        }
    }
    return NULL;
}

void
ms_records_sample(MsRecords *r, const char *series, MsTime t, double value)
{
    Series *s = find_series(r, series);
    if (s == NULL) {
        s = g_new0(Series, 1);
        s->t = g_array_new(FALSE, FALSE, sizeof(MsTime));
        s->v = g_array_new(FALSE, FALSE, sizeof(double));
        g_ptr_array_add(r->series, s);
        r->series_names->pdata[r->series_names->len - 1] = g_strdup(series);
        g_ptr_array_add(r->series_names, NULL);
    }
    guint n = s->t->len;
    if (n && g_array_index(s->t, MsTime, n - 1) == t) {
        /* Several changes at one instant: the last value is the one that holds. */
        g_array_index(s->v, double, n - 1) = value;
        return;
    }
    g_array_append_val(s->t, t);
    g_array_append_val(s->v, value);
}

const char *const *
ms_records_series_names(const MsRecords *r)
{
    return (const char *const *)r->series_names->pdata;
}

gboolean
ms_records_series(const MsRecords *r, const char *series, const MsTime **times,
                  const double **values, guint *n)
{
    Series *s = find_series(r, series);
    if (s == NULL) {
        return FALSE;
    }
    *times = (const MsTime *)s->t->data;
    *values = (const double *)s->v->data;
    *n = s->t->len;
    return TRUE;
}

void
ms_records_normalise(MsRecords *r)
{
    MsTime t0 = MS_TIME_NEVER;
    for (guint i = 0; i < r->n; i++) {
        t0 = MIN(t0, r->start[i]);
    }
    if (t0 == MS_TIME_NEVER || t0 == 0) {
        return;
    }
    for (guint i = 0; i < r->n; i++) {
        if (r->start[i] != MS_TIME_NEVER) {
            r->start[i] -= t0;
            r->end[i] -= t0;
        }
    }
}
