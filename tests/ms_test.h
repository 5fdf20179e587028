/* ms_test: the small CUnit runner every test program uses. A test file defines its suites with
 * MS_TEST_SUITE and calls ms_test_main; the process exits non-zero when any test, assertion or
 * suite set-up fails, and 77 (skipped) when a suite asks for it (GPU tests without a device). */
#pragma once

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    void (*func)(void);
} MsTestCase;

typedef struct {
    const char *name;
    int (*init)(void);
    int (*clean)(void);
    const MsTestCase *tests; /* terminated by {NULL, NULL} */
} MsTestSuite;

/* Runs the suites (terminated by {NULL}); returns the process exit code. */
int ms_test_main(int argc, char **argv, const MsTestSuite *suites);

/* Path of the built moesim binary (from the MOESIM_BIN environment variable set by meson). */
const char *ms_test_moesim(void);

/* Runs moesim with the given NULL-terminated arguments; captures stdout/stderr (caller frees) and
 * returns the exit status, or -1 when it could not run. */
int ms_test_run_moesim(const char *const *args, char **out, char **err);

/* One run of moesim: its exit status (as ms_test_run_moesim) and what it printed. */
typedef struct {
    int rc;
    char *out, *err;
} MsTestRun;

void ms_test_run_clear(MsTestRun *r);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsTestRun, ms_test_run_clear)

/* ms_test_run_moesim with its arguments given as a NULL-terminated list. */
MsTestRun ms_test_moesim_run(const char *first, ...) G_GNUC_NULL_TERMINATED;

/* Source tree root (MOESIM_SRCDIR), for golden files and shipped data. */
const char *ms_test_srcdir(void);

/* The factor every wall-clock limit of a test is multiplied by: MOESIM_TEST_TIME_FACTOR (a number
 * >= 1; default 1), for machines slower or busier than the limits were made generous for. */
double ms_test_time_factor(void);

/* A fresh temporary directory for this test program, removed at exit. */
const char *ms_test_tmpdir(void);

/* Writes text into a file under ms_test_tmpdir() and returns its path (owned by the caller). */
char *ms_test_write_tmp(const char *name, const char *text);

/* Whether a temporary file that an output is written to before it takes path's place
 * (PATH.tmp-XXXXXX, sim/base/output_file.h) is there. */
gboolean ms_test_output_temp_exists(const char *path);

#define MS_ASSERT_REL(actual, expected, rel)                                                       \
    CU_ASSERT_DOUBLE_EQUAL((actual), (expected), fabs((double)(expected)) * (rel) + 1e-300)

/* Asserts that err (a GError*) is set with the given domain and code and that its message contains
 * needle; frees it. */
#define MS_ASSERT_ERROR(err, dom, cod, needle)                                                     \
    do {                                                                                           \
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);                                                         \
        CU_ASSERT_EQUAL((err)->domain, (dom));                                                     \
        CU_ASSERT_EQUAL((err)->code, (cod));                                                       \
        if (strstr((err)->message, (needle)) == NULL) {                                            \
            fprintf(stderr, "\n  message '%s' lacks '%s'\n", (err)->message, (needle));            \
            CU_FAIL("error message lacks expected text");                                          \
        }                                                                                          \
        g_clear_error(&(err));                                                                     \
    } while (0)
