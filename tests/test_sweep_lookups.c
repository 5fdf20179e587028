/* Regression test of sweep: the README's sweep crashed now and then (exit 139, 3 runs in 60).
 * GLib registers the resources compiled into moesim (shipped topologies, models, samples) on the
 * first lookup, and a lookup from another thread while that runs finds no resource: gresource.c
 * empties its list of pending resources before it makes them, and a second thread that sees the
 * list empty returns at once. So the first lookup must not happen in a worker. This program
 * defines GLib's lookup entry points itself (calls from moesim's code bind to these, which
 * record the thread and call GLib's own), runs a sweep whose inputs are files except the routing,
 * a shipped sample, and asserts that the first lookup was made by the thread that ran the sweep.
 * It must be the only test of its process: a lookup before it would hide the bug. */
#include <dlfcn.h>
#include <gio/gio.h>

#include "sim/engine.h"
#include "sim/sweep.h"
#include "sweep_fixture.h"

static GThread *first_thread;
static gint lookups;

static void
note_lookup(void)
{
    if (g_atomic_int_add(&lookups, 1) == 0) {
        first_thread = g_thread_self();
    }
}

GResource *
g_static_resource_get_resource(GStaticResource *static_resource)
{
    static GResource *(*real)(GStaticResource *);
    note_lookup();
    if (real == NULL) {
        real = (GResource * (*)(GStaticResource *)) dlsym(RTLD_NEXT, __func__);
    }
    return real(static_resource);
}

gboolean
g_resources_get_info(const char *path, GResourceLookupFlags flags, gsize *size, guint32 *fl,
                     GError **error)
{
    static gboolean (*real)(const char *, GResourceLookupFlags, gsize *, guint32 *, GError **);
    note_lookup();
    if (real == NULL) {
        real = (gboolean(*)(const char *, GResourceLookupFlags, gsize *, guint32 *,
                            GError **))dlsym(RTLD_NEXT, __func__);
    }
    return real(path, flags, size, fl, error);
}

static void
test_first_lookup(void)
{
    g_autofree char *topo = ms_test_write_tmp(
        "two.ini", "[topology]\nformat = 1\nname = two\n[gpu]\nmodel = A100\npeak = 312TFLOPS\n"
                   "hbm = 2039GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 1\n"
                   "gpus_per_node = 2\nintra = nvswitch\nintra_bandwidth = 300GBps\n"
                   "intra_latency = 0.7us\n");
    /* The shape of the shipped sample "tiny": 2 ranks, 2 MoE layers of 4 experts, top-2. */
    g_autofree char *model = ms_test_write_tmp(
        "m4.ini", "[model]\nformat = 1\nname = m4\nlayers = 2\nd_model = 64\nd_ffn = 64\n"
                  "experts = 4\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 4\n");
    MsInputNames names = {.topology = topo, .model = model, .trace = "sample:tiny"};
    GError *error = NULL;
    g_autoptr(MsInputs) in = ms_inputs_load(&names, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL_FATAL(g_atomic_int_get(&lookups), 0);
    g_autoptr(MsRunner) runner = ms_engine_runner_new(NULL);
    MsScenario settings = {.runner = runner};
    g_autoptr(MsSweep) sw = ms_sweep_new(in, &settings);
    g_assert(ms_sweep_add_axis(sw, "seed=1,2,3,4,5,6,7,8", &error));
    CU_ASSERT_TRUE(ms_sweep_run(sw, 8, 0, 1, NULL, NULL, NULL, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_sweep_n_done(sw), 8);
    CU_ASSERT_TRUE(g_atomic_int_get(&lookups) > 0);
    CU_ASSERT_PTR_EQUAL(first_thread, g_thread_self());
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the first resource lookup is not a worker's", test_first_lookup},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_lookups", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
