/* Tests of the backend registry: the table (cpu first, cuda), lookups and their errors, where hooks
 * come from (built in, a module, a backend this build lacks), options by name and the records their
 * parsers make, the descriptions, and registrations that keep their promises (summaries that fit
 * the help, distinct option names, microbenchmarks exactly where hooks have them). */
#include "backends/backend_module.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_options.h"
#include "backends/registry.h"
#include "ms_test.h"

static void
test_table(void)
{
    const MsBackendInfo *const *list = ms_backend_list();
    CU_ASSERT_PTR_EQUAL(list[0], &ms_cpu_backend_info);
    CU_ASSERT_PTR_EQUAL(list[1], &ms_cuda_backend_info);
    CU_ASSERT_PTR_NULL(list[2]);
    GError *error = NULL;
    CU_ASSERT_PTR_EQUAL(ms_backend_find("cuda", &error), &ms_cuda_backend_info);
    CU_ASSERT_PTR_NULL(ms_backend_find("gpu", &error));
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                    "unknown backend 'gpu' (known: cpu, cuda)");
    CU_ASSERT_PTR_NULL(ms_backend_find(NULL, &error));
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                    "unknown backend '(null)'");
    CU_ASSERT_TRUE(ms_backend_in_build(&ms_cpu_backend_info));
}

/* Every registration keeps the promises of registry.h. */
static void
test_registrations(void)
{
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
        const char *texts[] = {(*b)->summary, (*b)->bench_summary};
        for (guint t = 0; t < G_N_ELEMENTS(texts); t++) {
            if (texts[t] == NULL) {
                continue;
            }
            CU_ASSERT_TRUE(g_str_has_suffix(texts[t], "\n"));
            g_auto(GStrv) lines = g_strsplit(texts[t], "\n", -1);
            for (guint k = 0; lines[k]; k++) {
                CU_ASSERT_TRUE(strlen(lines[k]) <= 80);
            }
        }
        for (const MsBackendOption *o = (*b)->options; o && o->name; o++) {
            CU_ASSERT_FALSE(g_str_has_prefix(o->name, "-"));
            CU_ASSERT_PTR_NOT_NULL(o->arg);
            CU_ASSERT_PTR_NOT_NULL(o->help);
            /* Shared names are allowed, but not within one backend. */
            CU_ASSERT_EQUAL(ms_backend_option_index(*b, o->name), o - (*b)->options);
            g_hash_table_add(names, (gpointer)o->name);
        }
        g_autofree char *note = ms_backend_describe(*b, NULL);
        CU_ASSERT_TRUE(g_str_has_prefix(note, (*b)->name));
        /* What the loaded hooks have matches what the registration says. */
        const MsExecBackend *hooks = ms_backend_hooks(*b, NULL);
        if (hooks) {
            CU_ASSERT_STRING_EQUAL(hooks->name, (*b)->name);
            CU_ASSERT_EQUAL(hooks->bench != NULL, (*b)->bench_summary != NULL);
            CU_ASSERT_EQUAL(hooks->options_size != 0, (*b)->parse != NULL);
        } else {
            CU_ASSERT_FALSE(ms_backend_in_build(*b));
        }
    }
    /* None is one of moesim exec's own options. */
    const char *own[] = {"backend", "json", "chrome-trace", "csv", "topology", "timeout", "worker"};
    for (guint k = 0; k < G_N_ELEMENTS(own); k++) {
        CU_ASSERT_FALSE(g_hash_table_contains(names, own[k]));
    }
    g_hash_table_unref(names);
}

/* Built in, in a module this build made, in one it did not. */
static void
test_hooks(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_EQUAL(ms_backend_hooks(&ms_cpu_backend_info, &error), &ms_cpu_backend);
    MsBackendInfo absent = {.name = "absent",
                            .in_module = TRUE,
                            .built = FALSE,
                            .missing = "its toolkit was not found"};
    CU_ASSERT_FALSE(ms_backend_in_build(&absent));
    CU_ASSERT_PTR_NULL(ms_backend_hooks(&absent, &error));
    MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                    "backend 'absent': this moesim was built without it (its toolkit was not "
                    "found)");
    /* The loader's fixture (tests/module_fixture.c), beside this program. */
    MsBackendInfo fake = {.name = "fake", .in_module = TRUE, .built = TRUE};
    const MsExecBackend *hooks = ms_backend_hooks(&fake, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hooks);
    CU_ASSERT_STRING_EQUAL(hooks->name, "fake");
    /* No parse hook: no record, no error; no describe hook: the name. */
    gpointer rec = &fake;
    CU_ASSERT_TRUE(ms_backend_parse_options(&fake, NULL, &rec, &error));
    CU_ASSERT_PTR_NULL(rec);
    g_autofree char *note = ms_backend_describe(&fake, NULL);
    CU_ASSERT_STRING_EQUAL(note, "fake backend");
}

/* The cuda registration, which needs no GPU: --dtype, its record and the record's checks. */
static void
test_cuda_options(void)
{
    const MsBackendInfo *info = &ms_cuda_backend_info;
    CU_ASSERT_TRUE(info->in_module);
    CU_ASSERT_PTR_NULL(info->hooks);
    CU_ASSERT_PTR_NOT_NULL(info->bench_summary);
    gint d = ms_backend_option_index(info, "dtype");
    CU_ASSERT_TRUE_FATAL(d >= 0);
    const char *values[2] = {NULL, NULL};
    GError *error = NULL;
    gpointer rec = NULL;
    CU_ASSERT_TRUE_FATAL(ms_backend_parse_options(info, values, &rec, &error));
    /* no --dtype: the schedule's */
    CU_ASSERT_EQUAL(((const MsCudaOptions *)rec)->dtype, MS_CUDA_SCHEDULE);
    CU_ASSERT_EQUAL(ms_cuda_options_dtype(rec), MS_DTYPE_N);
    g_free(rec);
    static const struct {
        const char *name;
        MsCudaDtype record;
        MsDtype dtype;
    } overrides[] = {{"fp32", MS_CUDA_FP32, MS_DTYPE_FP32},
                     {"tf32", MS_CUDA_TF32, MS_DTYPE_TF32},
                     {"fp16", MS_CUDA_FP16, MS_DTYPE_FP16},
                     {"bf16", MS_CUDA_BF16, MS_DTYPE_BF16}};
    for (guint k = 0; k < G_N_ELEMENTS(overrides); k++) {
        values[d] = overrides[k].name;
        CU_ASSERT_TRUE_FATAL(ms_backend_parse_options(info, values, &rec, &error));
        CU_ASSERT_EQUAL(((const MsCudaOptions *)rec)->dtype, overrides[k].record);
        CU_ASSERT_EQUAL(ms_cuda_options_dtype(rec), overrides[k].dtype);
        g_free(rec);
    }
    values[d] = "fp8";
    CU_ASSERT_FALSE(ms_backend_parse_options(info, values, &rec, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_ERROR, MS_CUDA_ERROR_OPTIONS,
                    "--dtype: 'fp8' is not fp32, tf32, fp16 or bf16");
    MsCudaOptions out, bad = {.dtype = (MsCudaDtype)9};
    CU_ASSERT_TRUE(ms_cuda_options_resolve(NULL, &out, &error));
    CU_ASSERT_EQUAL(out.dtype, MS_CUDA_SCHEDULE);
    CU_ASSERT_FALSE(ms_cuda_options_resolve(&bad, &out, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_ERROR, MS_CUDA_ERROR_OPTIONS,
                    "dtype: 9 is not a datatype of the cuda backend");
    g_autofree char *note = ms_backend_describe(info, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "per-op times from CUDA events"));
    /* Where this build made the module, it loads on a machine without a GPU. */
    const MsExecBackend *hooks = ms_backend_hooks(info, &error);
    if (ms_backend_in_build(info)) {
        CU_ASSERT_PTR_NULL(error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(hooks);
        CU_ASSERT_TRUE(hooks->per_rank);
        CU_ASSERT_PTR_NOT_NULL(hooks->devices);
        CU_ASSERT_EQUAL(hooks->options_size, sizeof(MsCudaOptions));
    } else {
        CU_ASSERT_PTR_NULL(hooks);
        MS_ASSERT_ERROR(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND, "built without it");
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the table and lookups", test_table},
        {"registrations keep their promises", test_registrations},
        {"hooks: built in, from a module, absent", test_hooks},
        {"the cuda registration without a GPU", test_cuda_options},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"registry", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
