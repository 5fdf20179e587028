/* Validation suite (meson suite `validate`): the corpus of real nccl-tests logs in
 * validate/data/corpus (one folder per machine: topology.ini and its logs, sources in SOURCE.md).
 * Scores every log with moesim's nominal model and, per machine, with a calibration fitted on the
 * machine's smallest allocation (fewest GPUs) predicting its larger ones; prints median and p90
 * of the bus-bandwidth error per log, per machine and over the corpus. It asserts that every log
 * is read and scored, not an error bound: the model is being rebuilt, and the figures it prints
 * are the ones later work tightens (docs/calibration.md, section 6). */
#include "ms_test.h"
#include "validate/calibrate.h"
#include "validate/nccl_fit.h"

typedef struct {
    char *name;            /* file name inside the machine folder */
    char *path;            /* full path */
    char *unread;          /* the manifest's reason for the reader rejecting it, or NULL */
    MsMeasurementSet *set; /* rows, NULL when unread or not loadable */
    char *load_error;      /* why loading failed, NULL when it did not */
    guint ranks, per_node;
    guint nodes, gpus;  /* the shape its file name gives, "..._NODESxGPUS[_...].log" */
    guint nccl_version; /* from the log's "NCCL version" line, 0 when it has none */
} Log;

typedef struct {
    char *name;
    char *dir;
    GPtrArray *logs; /* Log *, sorted by name */
} Machine;

/* Bus bandwidths of the scored rows, predicted and measured. Every collective's bus bandwidth is
 * its size over its time times a factor of the collective and the ranks alone (nccl-tests
 * doc/PERFORMANCE.md), so size / time stands for it: the factor cancels in the relative error
 * |predicted / measured - 1| = |measured time / predicted time - 1|. */
typedef struct {
    GArray *pred, *meas; /* double */
    guint zero;          /* rows predicted to take no time: no bus bandwidth to compare */
} Score;

static char *corpus_dir;
static GKeyFile *manifest;
static GPtrArray *machines;

static void
log_free(gpointer p)
{
    Log *log = p;
    g_free(log->name);
    g_free(log->path);
    g_free(log->unread);
    g_free(log->load_error);
    g_clear_pointer(&log->set, ms_measurement_set_free);
    g_free(log);
}

static void
machine_free(gpointer p)
{
    Machine *m = p;
    g_free(m->name);
    g_free(m->dir);
    g_ptr_array_unref(m->logs);
    g_free(m);
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of a folder (directories or files ending in suffix). */
static GPtrArray *
list_dir(const char *dir, gboolean dirs, const char *suffix)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL) {
        return names;
    }
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        gboolean is_dir = g_file_test(path, G_FILE_TEST_IS_DIR);
        if (dirs ? is_dir : (!is_dir && g_str_has_suffix(name, suffix))) {
            g_ptr_array_add(names, g_strdup(name));
        }
    }
    g_dir_close(d);
    g_ptr_array_sort(names, compare_names);
    return names;
}

/* The shape a log's name states: "all_reduce_2x8.log", "all_reduce_1x2_docker.log" (SOURCE.md's
 * nodes x GPUs column); 0 x 0 when it states none. */
static void
name_shape(Log *log)
{
    g_autoptr(GRegex) re = g_regex_new("_([0-9]+)x([0-9]+)(_|\\.log$)", 0, 0, NULL);
    g_autoptr(GMatchInfo) m = NULL;
    if (g_regex_match(re, log->name, 0, &m)) {
        g_autofree char *n = g_match_info_fetch(m, 1), *g = g_match_info_fetch(m, 2);
        log->nodes = (guint)g_ascii_strtoull(n, NULL, 10);
        log->gpus = (guint)g_ascii_strtoull(g, NULL, 10);
    }
}

/* A log is one nccl-tests run: every row shares the configuration. Its name gives the reader the
 * shape, which logs without '#  Rank' lines (srun --label excerpts) need and the others must
 * agree with. */
static void
load_log(Log *log)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    MsMeasurementReadOptions opts = {log->nodes * log->gpus, log->gpus, notes};
    log->set = ms_measurement_set_load_with(log->path, &opts, &error);
    for (guint i = 0; i < notes->len; i++) {
        printf("\n  note: %s", (const char *)notes->pdata[i]);
    }
    if (log->set == NULL) {
        log->load_error = g_strdup(error->message);
        return;
    }
    for (guint i = 0; i < ms_measurement_set_size(log->set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(log->set, i);
        if (i == 0) {
            log->nccl_version = r->nccl_version; /* the reader's, from its "NCCL version" line */
            log->ranks = r->ranks;
            log->per_node = r->ranks_per_node;
        } else if (r->ranks != log->ranks || r->ranks_per_node != log->per_node) {
            log->load_error = g_strdup_printf("%s:%u: a second run (%ux%u) in a file of one",
                                              r->source, r->line, r->ranks, r->ranks_per_node);
            g_clear_pointer(&log->set, ms_measurement_set_free);
            return;
        }
    }
}

static Machine *
load_machine(const char *name)
{
    Machine *m = g_new0(Machine, 1);
    m->name = g_strdup(name);
    m->dir = g_build_filename(corpus_dir, name, NULL);
    m->logs = g_ptr_array_new_with_free_func(log_free);
    g_autoptr(GPtrArray) files = list_dir(m->dir, FALSE, ".log");
    for (guint i = 0; i < files->len; i++) {
        Log *log = g_new0(Log, 1);
        log->name = g_strdup(g_ptr_array_index(files, i));
        log->path = g_build_filename(m->dir, log->name, NULL);
        g_autofree char *key = g_strdup_printf("%s/%s", name, log->name);
        log->unread = g_key_file_get_string(manifest, "unread", key, NULL);
        name_shape(log);
        if (log->unread == NULL) {
            load_log(log);
        }
        g_autofree char *stated = g_key_file_get_string(manifest, "nccl", name, NULL);
        guint major = 0, minor = 0, patch = 0;
        if (log->nccl_version == 0 && stated &&
            sscanf(stated, "%u.%u.%u", &major, &minor, &patch) == 3) {
            log->nccl_version = MS_NCCL_VERSION(major, minor, patch);
        }
        g_ptr_array_add(m->logs, log);
    }
    return m;
}

static int
load_corpus(void)
{
    corpus_dir = g_build_filename(ms_test_srcdir(), "validate", "data", "corpus", NULL);
    g_autofree char *path = g_build_filename(corpus_dir, "corpus.ini", NULL);
    g_autoptr(GError) error = NULL;
    manifest = g_key_file_new();
    if (!g_key_file_load_from_file(manifest, path, G_KEY_FILE_NONE, &error)) {
        fprintf(stderr, "%s: %s\n", path, error->message);
        return 1;
    }
    machines = g_ptr_array_new_with_free_func(machine_free);
    g_autoptr(GPtrArray) names = list_dir(corpus_dir, TRUE, NULL);
    for (guint i = 0; i < names->len; i++) {
        g_ptr_array_add(machines, load_machine(g_ptr_array_index(names, i)));
    }
    return 0;
}

static int
free_corpus(void)
{
    g_clear_pointer(&machines, g_ptr_array_unref);
    g_clear_pointer(&manifest, g_key_file_free);
    g_clear_pointer(&corpus_dir, g_free);
    return 0;
}

static MsTopology *
load_topology(const Machine *m, GError **error)
{
    g_autofree char *path = g_build_filename(m->dir, "topology.ini", NULL);
    return ms_topology_load(path, error);
}

/* --- the corpus is complete and consistent ------------------------------------------------ */

/* Every machine has a topology that loads and logs; every log is listed in SOURCE.md; every
 * [unread] entry names a log of the corpus; every other log is read, one run per file. */
static void
test_manifest(void)
{
    g_autofree char *source_path = g_build_filename(corpus_dir, "SOURCE.md", NULL);
    g_autofree char *source = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(source_path, &source, NULL, NULL));
    CU_ASSERT(machines->len >= 10);
    for (guint i = 0; i < machines->len; i++) {
        const Machine *m = g_ptr_array_index(machines, i);
        g_autoptr(GError) error = NULL;
        g_autoptr(MsTopology) topo = load_topology(m, &error);
        if (topo == NULL) {
            fprintf(stderr, "\n  %s: %s\n", m->name, error->message);
        }
        CU_ASSERT_PTR_NOT_NULL(topo);
        CU_ASSERT(m->logs->len > 0);
        for (guint k = 0; k < m->logs->len; k++) {
            const Log *log = g_ptr_array_index(m->logs, k);
            /* The name's shape is what the log is scored on: it must fit the machine. */
            if (log->nodes == 0 || (topo && (log->nodes > ms_topology_n_nodes(topo) ||
                                             log->gpus > ms_topology_gpus_per_node(topo)))) {
                fprintf(stderr, "\n  %s/%s: shape %ux%u does not fit the topology\n", m->name,
                        log->name, log->nodes, log->gpus);
                CU_FAIL("a log whose name gives no shape, or one its topology cannot hold");
            }
            g_autofree char *cell = g_strdup_printf("`%s/%s`", m->name, log->name);
            if (strstr(source, cell) == NULL) {
                fprintf(stderr, "\n  SOURCE.md has no row for %s\n", cell);
                CU_FAIL("a log without its source");
            }
            if (log->unread == NULL && log->set == NULL) {
                fprintf(stderr, "\n  %s\n", log->load_error);
                CU_FAIL("a log of the corpus was not read");
            }
        }
    }
    gsize n = 0;
    g_auto(GStrv) keys = g_key_file_get_keys(manifest, "unread", &n, NULL);
    for (gsize k = 0; k < n; k++) {
        g_autofree char *path = g_build_filename(corpus_dir, keys[k], NULL);
        if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
            fprintf(stderr, "\n  [unread] %s: no such log\n", keys[k]);
            CU_FAIL("the manifest names a log that is not there");
        }
    }
}

/* The logs the reader cannot read today still fail, with the reader's format error; once the
 * reader learns them this fails, and they move into the scored set. */
static void
test_unread(void)
{
    guint unread = 0;
    for (guint i = 0; i < machines->len; i++) {
        const Machine *m = g_ptr_array_index(machines, i);
        for (guint k = 0; k < m->logs->len; k++) {
            const Log *log = g_ptr_array_index(m->logs, k);
            if (log->unread == NULL) {
                continue;
            }
            unread++;
            printf("\n  unread %s/%s: %s", m->name, log->name, log->unread);
            g_autoptr(GError) error = NULL;
            g_autoptr(MsMeasurementSet) set = ms_measurement_set_load(log->path, &error);
            CU_ASSERT_PTR_NULL(set);
            if (set != NULL) {
                fprintf(stderr, "\n  %s/%s is read now: list it as scored in corpus.ini\n", m->name,
                        log->name);
                continue;
            }
            MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_FORMAT,
                            "not a measurement format moesim knows");
        }
    }
    printf("\n  %u logs the reader rejects today (corpus.ini [unread])\n", unread);
}

/* --- scoring ------------------------------------------------------------------------------ */

static void
score_init(Score *s)
{
    s->pred = g_array_new(FALSE, FALSE, sizeof(double));
    s->meas = g_array_new(FALSE, FALSE, sizeof(double));
    s->zero = 0;
}

static void
score_clear(Score *s)
{
    g_clear_pointer(&s->pred, g_array_unref);
    g_clear_pointer(&s->meas, g_array_unref);
}

static void
score_add(Score *into, const Score *from)
{
    g_array_append_vals(into->pred, from->pred->data, from->pred->len);
    g_array_append_vals(into->meas, from->meas->data, from->meas->len);
    into->zero += from->zero;
}

/* Predicts every row of a log with a size (a 0-byte row has no bus bandwidth). */
static gboolean
score_log_net(const MsTopology *topo, const MsCalibration *cal, MsNetModel *net, const Log *log,
              Score *s, GError **error)
{
    for (guint i = 0; i < ms_measurement_set_size(log->set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(log->set, i);
        if (r->bytes == 0) {
            continue;
        }
        double t;
        if (!ms_calibrate_predict_net(topo, cal, net, r, &t, error)) {
            return FALSE;
        }
        if (!(t > 0)) {
            s->zero++;
            continue;
        }
        double bytes = (double)r->bytes, pred = bytes / t, meas = bytes / r->seconds;
        g_array_append_val(s->pred, pred);
        g_array_append_val(s->meas, meas);
    }
    return TRUE;
}

static gboolean
score_log(const MsTopology *topo, const MsCalibration *cal, const Log *log, Score *s,
          GError **error)
{
    return score_log_net(topo, cal, NULL, log, s, error);
}

/* The NCCL version a log is modelled with: its own, brought into the modelled range (the
 * corpus' 2.8 and 2.9 runs at their own release, its 2.6 runs as 2.8.0, the oldest modelled
 * release), or the default when the log does not say. */
static guint
modelled_version(const Log *log)
{
    return log->nccl_version == 0
               ? MS_NCCL_VERSION_DEFAULT
               : CLAMP(log->nccl_version, MS_NCCL_VERSION_MIN, MS_NCCL_VERSION_MAX);
}

/* Median and p90 of the relative bus-bandwidth error; FALSE when nothing was scored. */
static gboolean
score_stats(const Score *s, MsErrorStats *out)
{
    return s->pred->len > 0 &&
           ms_error_stats((const double *)s->pred->data, (const double *)s->meas->data,
                          s->pred->len, out, NULL);
}

static void
print_log_line(const char *what, const Log *log, const Score *s)
{
    MsErrorStats st;
    if (!score_stats(s, &st)) {
        printf("    %-9s %-34s %ux%u  nothing scored\n", what, log->name,
               log->per_node ? log->ranks / log->per_node : 0, log->per_node);
        return;
    }
    printf("    %-9s %-34s %3ux%-2u %4u points  median %7.2f%%  p90 %8.2f%%", what, log->name,
           log->ranks / log->per_node, log->per_node, st.n, 100 * st.median, 100 * st.p90);
    printf(s->zero ? "  (%u predicted at 0 s)\n" : "\n", s->zero);
}

/* One machine's results, for the table. */
typedef struct {
    const Machine *machine;
    guint logs;
    /* nccl_larger: the nominal nccl model on the points nccl_fitted predicts */
    Score nominal, calibrated, nccl, nccl_larger, nccl_fitted;
    char *fitted; /* the allocation(s) the calibration was fitted on, or why there is none */
} Result;

/* The fewest GPUs among the machine's read logs (0 when none is read). */
static guint
smallest_allocation(const Machine *m)
{
    guint fewest = 0;
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set && (fewest == 0 || log->ranks < fewest)) {
            fewest = log->ranks;
        }
    }
    return fewest;
}

/* Whether some read log has more GPUs than fewest. */
static gboolean
has_larger(const Machine *m, guint fewest)
{
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set && log->ranks > fewest) {
            return TRUE;
        }
    }
    return FALSE;
}

static void
nominal_machine(const Machine *m, Result *res)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = load_topology(m, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    guint fewest = smallest_allocation(m);
    gboolean fitted = fewest && has_larger(m, fewest);
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set == NULL) {
            continue;
        }
        Score one;
        score_init(&one);
        if (!score_log(topo, NULL, log, &one, &error)) {
            fprintf(stderr, "\n  %s/%s: %s\n", m->name, log->name, error->message);
            CU_FAIL("a log could not be predicted");
            g_clear_error(&error);
        }
        CU_ASSERT(one.pred->len > 0);
        print_log_line("nominal", log, &one);
        score_add(&res->nominal, &one);
        score_clear(&one);
        res->logs++;

        MsNetSpec spec;
        ms_net_spec_init(&spec);
        spec.kind = MS_NET_NCCL;
        spec.nccl.version = modelled_version(log);
        g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, &error);
        score_init(&one);
        if (net == NULL || !score_log_net(topo, NULL, net, log, &one, &error)) {
            fprintf(stderr, "\n  %s/%s: %s\n", m->name, log->name, error->message);
            CU_FAIL("a log could not be predicted with the nccl model");
            g_clear_error(&error);
        }
        print_log_line(log->nccl_version ? "nccl" : "nccl(2.18)", log, &one);
        score_add(&res->nccl, &one);
        if (fitted && log->ranks > fewest) {
            score_add(&res->nccl_larger, &one);
        }
        score_clear(&one);
    }
}

/* Rows of the logs of the smallest allocation; their configurations, e.g. "1x2, 2x1". */
static MsMeasurementSet *
fit_set(const Machine *m, guint fewest, GString *configs)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set == NULL || log->ranks != fewest) {
            continue;
        }
        g_autofree char *cfg = g_strdup_printf("%ux%u", log->ranks / log->per_node, log->per_node);
        if (strstr(configs->str, cfg) == NULL) {
            g_string_append_printf(configs, "%s%s", configs->len ? ", " : "", cfg);
        }
        for (guint i = 0; i < ms_measurement_set_size(log->set); i++) {
            g_assert(ms_measurement_set_add(set, ms_measurement_set_get(log->set, i), NULL));
        }
    }
    return set;
}

static void
calibrated_machine(const Machine *m, Result *res)
{
    guint fewest = smallest_allocation(m);
    if (fewest == 0 || !has_larger(m, fewest)) {
        res->fitted = g_strdup(fewest ? "one allocation only" : "no log read");
        return;
    }
    g_autoptr(GString) configs = g_string_new(NULL);
    g_autoptr(MsMeasurementSet) fit = fit_set(m, fewest, configs);
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = load_topology(m, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    if (!ms_calibrate(topo, fit, NULL, cal, NULL, &error)) {
        fprintf(stderr, "\n  %s: calibration on %s failed: %s\n", m->name, configs->str,
                error->message);
        CU_FAIL("calibration on the smallest allocation failed");
        res->fitted = g_strdup_printf("%s: fit failed", configs->str);
        return;
    }
    res->fitted = g_strdup_printf("%s (%u pts)", configs->str, ms_measurement_set_size(fit));
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set == NULL || log->ranks <= fewest) {
            continue;
        }
        Score one;
        score_init(&one);
        if (!score_log(topo, cal, log, &one, &error)) {
            fprintf(stderr, "\n  %s/%s: %s\n", m->name, log->name, error->message);
            CU_FAIL("a log could not be predicted with the calibration");
            g_clear_error(&error);
        }
        CU_ASSERT(one.pred->len > 0);
        print_log_line("calibr.", log, &one);
        score_add(&res->calibrated, &one);
        score_clear(&one);
    }
}

/* The nccl model with its factors fitted on the smallest allocation (nccl_fit.h), predicting
 * the larger ones; each log at its own release. */
static void
nccl_calibrated_machine(const Machine *m, Result *res)
{
    guint fewest = smallest_allocation(m);
    if (fewest == 0 || !has_larger(m, fewest)) {
        return;
    }
    g_autoptr(GString) configs = g_string_new(NULL);
    g_autoptr(MsMeasurementSet) fit_rows = fit_set(m, fewest, configs);
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = load_topology(m, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    const Log *first = NULL;
    for (guint k = 0; k < m->logs->len && first == NULL; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        first = log->set && log->ranks == fewest ? log : NULL;
    }
    MsNetSpec base;
    ms_net_spec_init(&base);
    base.kind = MS_NET_NCCL;
    base.nccl.version = modelled_version(first);
    MsNcclFit fit;
    if (!ms_nccl_fit(topo, fit_rows, &base, &fit, &error)) {
        fprintf(stderr, "\n  %s: nccl fit on %s failed: %s\n", m->name, configs->str,
                error->message);
        CU_FAIL("the nccl model's fit on the smallest allocation failed");
        return;
    }
    g_autofree char *text = ms_nccl_fit_describe(&fit);
    printf("  nccl fitted on %s:\n%s", configs->str, text);
    for (guint k = 0; k < m->logs->len; k++) {
        const Log *log = g_ptr_array_index(m->logs, k);
        if (log->set == NULL || log->ranks <= fewest) {
            continue;
        }
        MsNetSpec spec = fit.spec;
        spec.nccl.version = modelled_version(log);
        g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, &error);
        Score one;
        score_init(&one);
        if (net == NULL || !score_log_net(topo, NULL, net, log, &one, &error)) {
            fprintf(stderr, "\n  %s/%s: %s\n", m->name, log->name, error->message);
            CU_FAIL("a log could not be predicted with the fitted nccl model");
            g_clear_error(&error);
        }
        print_log_line("nccl fit", log, &one);
        score_add(&res->nccl_fitted, &one);
        score_clear(&one);
    }
}

/* Share of the scored points whose predicted bus bandwidth is above the measured one: an error
 * above 100% can only come from those, one below from either side. */
static double
share_faster(const Score *s)
{
    guint faster = 0;
    for (guint i = 0; i < s->pred->len; i++) {
        faster += g_array_index(s->pred, double, i) > g_array_index(s->meas, double, i);
    }
    return s->pred->len ? (double)faster / s->pred->len : 0;
}

/* "points | median | p90 | faster" cells, or dashes when nothing was scored. */
static char *
stat_cells(const Score *s)
{
    MsErrorStats st;
    if (!score_stats(s, &st)) {
        return g_strdup("- | - | - | -");
    }
    return g_strdup_printf("%u | %.1f%% | %.1f%% | %.0f%%", st.n, 100 * st.median, 100 * st.p90,
                           100 * share_faster(s));
}

static void
print_nccl_table(const Result *res, guint n, const Score *all_flow, const Score *all_nccl,
                 const Score *all_larger, const Score *all_fitted)
{
    printf("\n| machine | flow model points | median | p90 | faster | nccl model points | median | "
           "p90 | faster | nccl model, larger allocations | median | p90 | faster | nccl fitted "
           "on the smallest, the same points | median | p90 | faster |\n");
    printf(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
        "| --- | --- |\n");
    for (guint i = 0; i < n; i++) {
        g_autofree char *flow = stat_cells(&res[i].nominal);
        g_autofree char *nccl = stat_cells(&res[i].nccl);
        g_autofree char *larger = stat_cells(&res[i].nccl_larger);
        g_autofree char *fitted = stat_cells(&res[i].nccl_fitted);
        printf("| %s | %s | %s | %s | %s |\n", res[i].machine->name, flow, nccl, larger, fitted);
    }
    g_autofree char *flow = stat_cells(all_flow);
    g_autofree char *nccl = stat_cells(all_nccl);
    g_autofree char *larger = stat_cells(all_larger);
    g_autofree char *fitted = stat_cells(all_fitted);
    printf("| **corpus** | %s | %s | %s | %s |\n", flow, nccl, larger, fitted);
}

static void
print_table(const Result *res, guint n, const Score *all_nominal, const Score *all_calibrated)
{
    printf("\n| machine | logs | nominal points | median | p90 | faster | fitted on | predicted "
           "points | median | p90 | faster |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    guint logs = 0, zero = all_nominal->zero + all_calibrated->zero;
    for (guint i = 0; i < n; i++) {
        g_autofree char *nom = stat_cells(&res[i].nominal);
        g_autofree char *cal = stat_cells(&res[i].calibrated);
        printf("| %s | %u | %s | %s | %s |\n", res[i].machine->name, res[i].logs, nom,
               res[i].fitted, cal);
        logs += res[i].logs;
    }
    g_autofree char *nom = stat_cells(all_nominal);
    g_autofree char *cal = stat_cells(all_calibrated);
    printf("| **corpus** | %u | %s | smallest allocation of each | %s |\n", logs, nom, cal);
    printf("\n  bus-bandwidth error |predicted / measured - 1|; faster: share of points predicted "
           "above the measured bus bandwidth; rows predicted at 0 s (no bus bandwidth): %u\n",
           zero);
}

/* Every read log scored with the nominal model; every larger allocation with the machine's
 * smallest-allocation calibration; the table. */
static void
test_score(void)
{
    g_autofree Result *res = g_new0(Result, machines->len);
    Score all_nominal, all_calibrated, all_nccl, all_larger, all_fitted;
    score_init(&all_nominal);
    score_init(&all_calibrated);
    score_init(&all_nccl);
    score_init(&all_larger);
    score_init(&all_fitted);
    for (guint i = 0; i < machines->len; i++) {
        const Machine *m = g_ptr_array_index(machines, i);
        res[i].machine = m;
        score_init(&res[i].nominal);
        score_init(&res[i].calibrated);
        score_init(&res[i].nccl);
        score_init(&res[i].nccl_larger);
        score_init(&res[i].nccl_fitted);
        printf("\n  %s\n", m->name);
        nominal_machine(m, &res[i]);
        calibrated_machine(m, &res[i]);
        nccl_calibrated_machine(m, &res[i]);
        score_add(&all_nominal, &res[i].nominal);
        score_add(&all_calibrated, &res[i].calibrated);
        score_add(&all_nccl, &res[i].nccl);
        score_add(&all_larger, &res[i].nccl_larger);
        score_add(&all_fitted, &res[i].nccl_fitted);
    }
    print_table(res, machines->len, &all_nominal, &all_calibrated);
    print_nccl_table(res, machines->len, &all_nominal, &all_nccl, &all_larger, &all_fitted);
    for (guint i = 0; i < machines->len; i++) {
        score_clear(&res[i].nominal);
        score_clear(&res[i].calibrated);
        score_clear(&res[i].nccl);
        score_clear(&res[i].nccl_larger);
        score_clear(&res[i].nccl_fitted);
        g_free(res[i].fitted);
    }
    score_clear(&all_nominal);
    score_clear(&all_calibrated);
    score_clear(&all_nccl);
    score_clear(&all_larger);
    score_clear(&all_fitted);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the corpus is complete: topologies, sources, logs read", test_manifest},
        {"logs the reader rejects are still rejected", test_unread},
        {"every log scored, nominal and calibrated on the smallest allocation", test_score},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"validate_corpus", load_corpus, free_corpus, tests},
                                         {NULL}};
    return ms_test_main(argc, argv, suites);
}
