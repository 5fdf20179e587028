/* runner: a name, an execute function and its data. */
#include "runner.h"

struct _MsRunner {
    char *name;
    MsRunnerFn execute;
    gpointer data;
    GDestroyNotify free_data;
    gboolean pure;
};

MsRunner *
ms_runner_new(const char *name, MsRunnerFn execute, gpointer data, GDestroyNotify free_data)
{
    g_return_val_if_fail(name != NULL && execute != NULL, NULL);
    MsRunner *r = g_new0(MsRunner, 1);
    r->name = g_strdup(name);
    r->execute = execute;
    r->data = data;
    r->free_data = free_data;
    return r;
}

void
ms_runner_free(MsRunner *r)
{
    if (r == NULL) {
        return;
    }
    if (r->free_data) {
        r->free_data(r->data);
    }
    g_free(r->name);
    g_free(r);
}

const char *
ms_runner_name(const MsRunner *r)
{
    return r->name;
}

void
ms_runner_set_pure(MsRunner *r, gboolean pure)
{
    r->pure = pure;
}

gboolean
ms_runner_pure(const MsRunner *r)
{
    return r->pure;
}

MsRecords *
ms_runner_execute(const MsRunner *r, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                  const MsRunWhatIf *what_if, GError **error)
{
    return r->execute(r->data, s, topo, detail, what_if, error);
}
