/* Tests of the backend module loader: a well-formed module loads once and stays loaded; a missing
 * module names every folder searched; a file that is no shared object, one without the entry point
 * and one built for another interface are refused with their own messages; and, through moesim,
 * an unloadable or missing cuda module is a clear error with exit 2 while other commands run. The
 * fixtures (tests/module_fixture.c) sit beside this program, the second folder searched. */
#include <glib/gstdio.h>
#include <sys/wait.h>

#include "backends/backend_module.h"
#include "backends/registry.h"
#include "ms_test.h"

static void
test_load(void)
{
    GError *error = NULL;
    const MsExecBackend *fake = ms_backend_module_load("fake", &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fake);
    CU_ASSERT_STRING_EQUAL(fake->name, "fake");
    CU_ASSERT_TRUE(fake->per_rank);
    /* Loaded once: the same hooks again. */
    CU_ASSERT_PTR_EQUAL(ms_backend_module_load("fake", &error), fake);
    g_autofree char *path = ms_backend_module_path("/some/dir", "fake");
    CU_ASSERT_STRING_EQUAL(path, "/some/dir/moesim-fake.so");
}

static void
test_refusals(void)
{
    GError *error = NULL;
    /* Searched: $MOESIM_BACKEND_DIR, this program's folder, the install folder next to it. */
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    g_autofree char *here = g_path_get_dirname(exe);
    g_setenv(MS_BACKEND_MODULE_ENV, ms_test_tmpdir(), TRUE);
    CU_ASSERT_PTR_NULL(ms_backend_module_load("absent", &error));
    g_autofree char *where = g_strdup_printf("(%s, %s, %s/", ms_test_tmpdir(), here, here);
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_NOT_FOUND, where);
    CU_ASSERT_PTR_NULL(ms_backend_module_load("absent", &error));
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_NOT_FOUND,
                    "backend 'absent': its module moesim-absent.so is in none of the folders "
                    "searched");
    /* The first folder that has the file decides: a text file there is not skipped. */
    g_autofree char *junk = ms_test_write_tmp("moesim-junk.so", "not a shared object\n");
    CU_ASSERT_PTR_NULL(ms_backend_module_load("junk", &error));
    g_autofree char *cannot = g_strdup_printf("backend 'junk': cannot load its module %s: ", junk);
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_LOAD, cannot);
    g_unsetenv(MS_BACKEND_MODULE_ENV);
    CU_ASSERT_PTR_NULL(ms_backend_module_load("nosym", &error));
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_LOAD,
                    "moesim-nosym.so is not a moesim backend module (it has no "
                    "moesim_backend_module)");
    CU_ASSERT_PTR_NULL(ms_backend_module_load("stale", &error));
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_MISMATCH,
                    "moesim-stale.so was built for moesim 0.0.0-stale (module interface 2)");
    /* A module whose hooks carry another name than the file's. */
    g_autofree char *fake = ms_backend_module_path(here, "fake");
    g_autofree char *other = g_build_filename(ms_test_tmpdir(), "moesim-other.so", NULL);
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(fake, &data, &len, NULL));
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(other, data, (gssize)len, NULL));
    g_setenv(MS_BACKEND_MODULE_ENV, ms_test_tmpdir(), TRUE);
    CU_ASSERT_PTR_NULL(ms_backend_module_load("other", &error));
    MS_ASSERT_ERROR(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_MISMATCH,
                    "backend 'other': ");
    g_unsetenv(MS_BACKEND_MODULE_ENV);
}

/* moesim itself: an unloadable cuda module, or none where moesim looks, is an error with exit 2
 * naming the file; commands that do not execute never notice. */
static void
test_command(void)
{
    const MsBackendInfo *info = ms_backend_find("cuda", NULL);
    if (!ms_backend_in_build(info)) {
        fprintf(stderr, " (built without the cuda module: skipped) ");
        return;
    }
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "broken", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(dir, 0700), 0);
    g_autofree char *bad = g_build_filename(dir, "moesim-cuda.so", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(bad, "garbage", -1, NULL));
    g_autofree char *schedule = g_build_filename(ms_test_tmpdir(), "s.json", NULL);
    const char *plan[] = {"plan",          "--topology", "h200",   "--model",
                          "switch-base-8", "--out",      schedule, NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(plan, &out, &err), 0);
    g_setenv(MS_BACKEND_MODULE_ENV, dir, TRUE);
    const char *exec[] = {"exec", "--backend", "cuda", schedule, NULL};
    g_clear_pointer(&err, g_free);
    g_clear_pointer(&out, g_free);
    CU_ASSERT_EQUAL(ms_test_run_moesim(exec, &out, &err), 2);
    g_autofree char *needle =
        g_strdup_printf("moesim: backend 'cuda': cannot load its module %s: ", bad);
    CU_ASSERT_TRUE(err && strstr(err, needle));
    const char *bench[] = {"bench", NULL};
    g_clear_pointer(&err, g_free);
    g_clear_pointer(&out, g_free);
    CU_ASSERT_EQUAL(ms_test_run_moesim(bench, &out, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, needle));
    const char *topo[] = {"topo", "list", NULL};
    g_clear_pointer(&err, g_free);
    g_clear_pointer(&out, g_free);
    CU_ASSERT_EQUAL(ms_test_run_moesim(topo, &out, &err), 0);
    CU_ASSERT_TRUE(out && strstr(out, "h200"));
    /* A moesim copied away from its module, the variable naming an empty folder: not found. */
    g_autofree char *empty = g_build_filename(ms_test_tmpdir(), "empty", NULL);
    g_autofree char *copy = g_build_filename(ms_test_tmpdir(), "moesim", NULL);
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(empty, 0700), 0);
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(ms_test_moesim(), &data, &len, NULL));
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(copy, data, (gssize)len, NULL));
    CU_ASSERT_EQUAL_FATAL(g_chmod(copy, 0700), 0);
    g_setenv(MS_BACKEND_MODULE_ENV, empty, TRUE);
    const char *argv[] = {copy, "exec", "--backend", "cuda", schedule, NULL};
    g_clear_pointer(&err, g_free);
    g_clear_pointer(&out, g_free);
    int status = 0;
    CU_ASSERT_TRUE_FATAL(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                      &err, &status, NULL));
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    g_autofree char *missing = g_strdup_printf(
        "moesim: backend 'cuda': its module moesim-cuda.so is in none of the folders searched (%s, "
        "%s, %s/",
        empty, ms_test_tmpdir(), ms_test_tmpdir());
    if (err == NULL || strstr(err, missing) == NULL) {
        fprintf(stderr, "\n  stderr '%s' lacks '%s'\n", err, missing);
        CU_FAIL("missing module message");
    }
    g_unsetenv(MS_BACKEND_MODULE_ENV);
}

int
main(int argc, char **argv)
{
    /* This program's own folder holds the fixtures; the build root's setting would come first. */
    g_unsetenv(MS_BACKEND_MODULE_ENV);
    static const MsTestCase tests[] = {
        {"a module loads once", test_load},
        {"missing, broken, foreign and stale modules", test_refusals},
        {"moesim with a broken cuda module", test_command},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"backend module", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
