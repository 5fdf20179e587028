/* Tests of the command line's short options as a whole: every command's and subcommand's option
 * table, read from its --help-all, gives each letter one meaning across moesim, and `bench` and
 * `collective` use nccl-tests' letters (its src/common.cu) only with nccl-tests' meaning. */
#include "ms_test.h"

/* nccl-tests' short options and what each means there; meaning is NULL where moesim's two
 * nccl-tests-like commands have no option of that meaning, so the letter must stay unused. */
static const struct {
    char letter;
    const char *meaning; /* moesim's long option of the same meaning, or NULL */
} nccl_tests_letters[] = {
    {'t', NULL},         /* threads per process */
    {'g', "ranks"},      /* GPUs (per thread: one process per GPU in moesim) */
    {'b', "minbytes"},   /* */
    {'e', "maxbytes"},   /* */
    {'i', "stepbytes"},  /* */
    {'f', "stepfactor"}, /* */
    {'n', "iters"},      /* timed iterations */
    {'m', NULL},         /* aggregated iterations */
    {'w', "warmup"},     /* warm-up iterations */
    {'p', NULL},         /* parallel init */
    {'c', NULL},         /* data check */
    {'o', NULL},         /* reduction op (moesim's --op is the collective, not the redop) */
    {'d', "dtype"},      /* datatype */
    {'r', NULL},         /* root */
    {'z', NULL},         /* blocking */
    {'y', NULL},         /* stream null */
    {'T', NULL},         /* timeout */
    {'G', NULL},         /* CUDA graph launches */
    {'C', NULL},         /* report CPU time */
    {'a', NULL},         /* average over ranks */
    {'F', NULL},         /* output file */
};

/* Long names of one meaning across commands: the benchmark's --iters and the simulator's
 * --iterations both count the iterations run. */
static const char *
meaning(const char *name)
{
    return strcmp(name, "iters") == 0 ? "iterations" : name;
}

typedef struct {
    GHashTable *first; /* letter (as a string) -> "long\tcommand" of its first use */
    GString *problems; /* one line per clash */
    guint options;     /* short options seen */
} Table;

static void
table_init(Table *t)
{
    t->first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    t->problems = g_string_new(NULL);
    t->options = 0;
}

static void
table_clear(Table *t)
{
    g_hash_table_destroy(t->first);
    g_string_free(t->problems, TRUE);
}

/* Records the options of one --help-all text of command `where`; nccl_like: bench or collective. */
static void
table_add_help(Table *t, const char *where, const char *help, gboolean nccl_like)
{
    g_auto(GStrv) lines = g_strsplit(help, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        const char *s = lines[i];
        while (*s == ' ') {
            s++;
        }
        /* "-t, --topology=T   ..." */
        if (s[0] != '-' || !g_ascii_isalnum(s[1]) || s[2] != ',' || strncmp(s + 3, " --", 3)) {
            continue;
        }
        char letter = s[1];
        const char *name = s + 6;
        gsize len = strcspn(name, "= \t");
        g_autofree char *lng = g_strndup(name, len);
        if (letter == 'h' && strcmp(lng, "help") == 0) {
            continue;
        }
        t->options++;
        char key[2] = {letter, 0};
        const char *seen = g_hash_table_lookup(t->first, key);
        if (seen == NULL) {
            g_hash_table_insert(t->first, g_strdup(key), g_strdup_printf("%s\t%s", lng, where));
        } else {
            g_auto(GStrv) was = g_strsplit(seen, "\t", 2);
            if (strcmp(meaning(was[0]), meaning(lng)) != 0) {
                g_string_append_printf(t->problems, "-%c is --%s in '%s' but --%s in '%s'\n",
                                       letter, was[0], was[1], lng, where);
            }
        }
        for (guint k = 0; nccl_like && k < G_N_ELEMENTS(nccl_tests_letters); k++) {
            const char *want = nccl_tests_letters[k].meaning;
            if (nccl_tests_letters[k].letter == letter &&
                (want == NULL || strcmp(meaning(want), meaning(lng)) != 0)) {
                g_string_append_printf(t->problems, "-%c is --%s in '%s' but %s in nccl-tests\n",
                                       letter, lng, where, want ? want : "something moesim lacks");
            }
        }
    }
}

static char *
help_of(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = ms_test_run_moesim(args, &out, &err);
    if (rc != 0) {
        fprintf(stderr, "\n  moesim %s %s: exit %d\n%s", args[0], args[1] ? args[1] : "", rc, err);
    }
    CU_ASSERT_EQUAL(rc, 0);
    g_free(err);
    return out ? out : g_strdup("");
}

/* The names listed under "HEADING:" in a help text (two-space indented lines). */
static GPtrArray *
listed(const char *help, const char *heading)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *at = strstr(help, heading);
    if (at == NULL) {
        return names;
    }
    g_auto(GStrv) lines = g_strsplit(at, "\n", -1);
    for (guint i = 1; lines[i] && g_str_has_prefix(lines[i], "  "); i++) {
        g_auto(GStrv) words = g_strsplit_set(g_strstrip(lines[i]), " ", 2);
        g_ptr_array_add(names, g_strdup(words[0]));
    }
    return names;
}

/* Every command (from `moesim --help`) and subcommand (from a command's "Subcommands:"). */
static void
test_no_clash(void)
{
    Table t;
    table_init(&t);
    g_autofree char *top = help_of((const char *[]){"--help", NULL});
    g_autoptr(GPtrArray) commands = listed(top, "Commands:");
    CU_ASSERT_TRUE(commands->len >= 14);
    guint tables = 0;
    for (guint c = 0; c < commands->len; c++) {
        const char *cmd = g_ptr_array_index(commands, c);
        gboolean nccl_like = strcmp(cmd, "bench") == 0 || strcmp(cmd, "collective") == 0;
        g_autofree char *help = help_of((const char *[]){cmd, "--help", NULL});
        g_autoptr(GPtrArray) subs = listed(help, "Subcommands:");
        if (subs->len == 0) {
            g_autofree char *all = help_of((const char *[]){cmd, "--help-all", NULL});
            table_add_help(&t, cmd, all, nccl_like);
            tables++;
        }
        for (guint s = 0; s < subs->len; s++) {
            const char *sub = g_ptr_array_index(subs, s);
            g_autofree char *where = g_strdup_printf("%s %s", cmd, sub);
            g_autofree char *sub_help = help_of((const char *[]){cmd, sub, "--help-all", NULL});
            table_add_help(&t, where, sub_help, FALSE);
            tables++;
        }
    }
    CU_ASSERT_TRUE(tables >= 16);
    CU_ASSERT_TRUE(t.options >= 30);
    if (t.problems->len) {
        fprintf(stderr, "\n%s", t.problems->str);
    }
    CU_ASSERT_EQUAL(t.problems->len, 0);
    table_clear(&t);
}

/* The checker itself finds a clash, an nccl-tests letter in another meaning, and one it lacks. */
static void
test_checker(void)
{
    Table t;
    table_init(&t);
    table_add_help(&t, "a", "  -h, --help   Show\n  -t, --topology=T   x\n  -n, --iterations=N\n",
                   FALSE);
    table_add_help(&t, "b", "  -t, --topology=T\n  -n, --iters=N  same meaning\n", TRUE);
    CU_ASSERT_STRING_EQUAL(t.problems->str,
                           "-t is --topology in 'b' but something moesim lacks in nccl-tests\n");
    g_string_truncate(t.problems, 0);
    table_add_help(&t, "c", "  -t, --tolerance=X\n  -g, --ranks=N\n  -o, --op=OP\n", TRUE);
    CU_ASSERT_STRING_EQUAL(t.problems->str,
                           "-t is --topology in 'a' but --tolerance in 'c'\n"
                           "-t is --tolerance in 'c' but something moesim lacks in nccl-tests\n"
                           "-o is --op in 'c' but something moesim lacks in nccl-tests\n");
    CU_ASSERT_EQUAL(t.options, 7);
    table_clear(&t);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the checker finds clashes", test_checker},
        {"one meaning per short option across commands; nccl-tests' letters", test_no_clash},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli_options", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
