/* ms_test: CUnit runner and helpers shared by the test programs. */
#include "ms_test.h"

#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *tmpdir;

static void
remove_tree(const char *path)
{
    GDir *dir = g_dir_open(path, 0, NULL);
    if (dir) {
        const char *name;
        while ((name = g_dir_read_name(dir)) != NULL) {
            g_autofree char *child = g_build_filename(path, name, NULL);
            if (g_file_test(child, G_FILE_TEST_IS_DIR) &&
                !g_file_test(child, G_FILE_TEST_IS_SYMLINK)) {
                remove_tree(child);
            } else {
                g_unlink(child);
            }
        }
        g_dir_close(dir);
    }
    g_rmdir(path);
}

static void
cleanup_tmpdir(void)
{
    if (tmpdir && !g_getenv("MS_TEST_KEEP_TMP")) {
        remove_tree(tmpdir);
    }
}

const char *
ms_test_tmpdir(void)
{
    if (tmpdir == NULL) {
        tmpdir = g_dir_make_tmp("moesim-test-XXXXXX", NULL);
        g_assert(tmpdir != NULL);
        atexit(cleanup_tmpdir);
    }
    return tmpdir;
}

char *
ms_test_write_tmp(const char *name, const char *text)
{
    char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

gboolean
ms_test_output_temp_exists(const char *path)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *prefix = g_strconcat(base, ".tmp-", NULL);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
        if (g_str_has_prefix(name, prefix)) {
            return TRUE;
        }
    }
    return FALSE;
}

const char *
ms_test_moesim(void)
{
    const char *bin = g_getenv("MOESIM_BIN");
    return bin ? bin : "./moesim";
}

const char *
ms_test_srcdir(void)
{
    const char *dir = g_getenv("MOESIM_SRCDIR");
    return dir ? dir : ".";
}

int
ms_test_run_moesim(const char *const *args, char **out, char **err)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)ms_test_moesim());
    for (guint i = 0; args[i]; i++) {
        g_ptr_array_add(argv, (gpointer)args[i]);
    }
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autoptr(GError) error = NULL;
    gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                               err, &status, &error);
    g_ptr_array_free(argv, TRUE);
    if (!ok) {
        fprintf(stderr, "cannot run %s: %s\n", ms_test_moesim(), error->message);
        return -1;
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return -1;
}

void
ms_test_run_clear(MsTestRun *r)
{
    g_free(r->out);
    g_free(r->err);
}

MsTestRun
ms_test_moesim_run(const char *first, ...)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        g_ptr_array_add(args, (gpointer)a);
    }
    va_end(ap);
    g_ptr_array_add(args, NULL);
    MsTestRun r = {0};
    r.rc = ms_test_run_moesim((const char *const *)args->pdata, &r.out, &r.err);
    return r;
}

int
ms_test_main(int argc, char **argv, const MsTestSuite *suites)
{
    (void)argc;
    (void)argv;
    if (CU_initialize_registry() != CUE_SUCCESS) {
        return 1;
    }
    for (const MsTestSuite *s = suites; s->name; s++) {
        CU_pSuite suite = CU_add_suite(s->name, s->init, s->clean);
        if (suite == NULL) {
            CU_cleanup_registry();
            return 1;
        }
        for (const MsTestCase *t = s->tests; t->name; t++) {
            if (CU_add_test(suite, t->name, t->func) == NULL) {
                CU_cleanup_registry();
                return 1;
            }
        }
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
                      CU_get_number_of_suites_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (failed) {
        return 1;
    }
    return ran == 0 ? 77 : 0;
}

double
ms_test_time_factor(void)
{
    const char *v = g_getenv("MOESIM_TEST_TIME_FACTOR");
    double f = v ? g_ascii_strtod(v, NULL) : 1.0;
    return f >= 1.0 && f <= 1000.0 ? f : 1.0;
}
