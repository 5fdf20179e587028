/* file_claims: a list of the files a command reads and writes, under one lock (a sweep opens its
 * inputs on worker threads). A file is the same as another when device and inode agree, or, for
 * an output not there yet, when the resolved paths (symbolic links and ".." followed) agree. */
#include "file_claims.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(ms_file_claims_error_quark, ms_file_claims_error)

typedef enum { INPUT, CLAIMED, OPEN, DONE } Role;

typedef struct {
    Role role;
    gboolean has_id; /* dev and ino are known (the file exists or existed when claimed) */
    dev_t dev;
    ino_t ino;
    char *resolved; /* the absolute path with links followed, or "-" */
    char *path;     /* as the command named it, for messages */
} Claim;

static GMutex lock;
static gboolean enabled;
static GPtrArray *claims; /* Claim * */

static void
claim_free(gpointer data)
{
    Claim *c = data;
    g_free(c->resolved);
    g_free(c->path);
    g_free(c);
}

void
ms_file_claims_enable(gboolean on)
{
    g_mutex_lock(&lock);
    enabled = on;
    g_clear_pointer(&claims, g_ptr_array_unref);
    claims = g_ptr_array_new_with_free_func(claim_free);
    g_mutex_unlock(&lock);
}

/* The absolute path of path with links followed; for a file not there yet, its folder's resolved
 * path and its own name; the path as given when even the folder is not there (opening fails). */
static char *
resolve(const char *path)
{
    char buf[PATH_MAX];
    if (realpath(path, buf)) {
        return g_strdup(buf);
    }
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *base = g_path_get_basename(path);
    if (realpath(dir, buf)) {
        return g_build_filename(buf, base, NULL);
    }
    return g_strdup(path);
}

static gboolean
same(const Claim *c, gboolean has_id, dev_t dev, ino_t ino, const char *resolved)
{
    return (c->has_id && has_id && c->dev == dev && c->ino == ino) ||
           strcmp(c->resolved, resolved) == 0;
}

/* " (also named X)" when the other claim spelt the file otherwise, else "". */
static char *
also_named(const Claim *c, const char *path)
{
    return strcmp(c->path, path) == 0 ? g_strdup("") : g_strdup_printf(" (also named %s)", c->path);
}

static gboolean
claim_output(const char *path, gboolean update, gboolean opening, GError **error)
{
    gboolean is_stdout = strcmp(path, "-") == 0;
    struct stat st;
    gboolean exists = !is_stdout && stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        return TRUE;
    }
    g_autofree char *resolved = is_stdout ? g_strdup("-") : resolve(path);
    for (guint i = 0; i < claims->len; i++) {
        Claim *c = claims->pdata[i];
        if (!same(c, exists, exists ? st.st_dev : 0, exists ? st.st_ino : 0, resolved)) {
            continue;
        }
        g_autofree char *named = also_named(c, path);
        if (c->role == INPUT) {
            if (update) {
                continue;
            }
            g_set_error(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_INPUT,
                        "%s: is both an input and an output of this command%s; an output never "
                        "replaces an input: write it to another file",
                        path, named);
            return FALSE;
        }
        if (c->role == CLAIMED && opening) {
            c->role = OPEN;
            return TRUE;
        }
        g_set_error(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT,
                    "%s: is already an output of this command%s: give each output its own file",
                    is_stdout ? "standard output" : path, named);
        return FALSE;
    }
    Claim *c = g_new0(Claim, 1);
    c->role = opening ? OPEN : CLAIMED;
    c->has_id = exists;
    if (exists) {
        c->dev = st.st_dev;
        c->ino = st.st_ino;
    }
    c->resolved = g_steal_pointer(&resolved);
    c->path = g_strdup(path);
    g_ptr_array_add(claims, c);
    return TRUE;
}

static gboolean
locked_claim(const char *path, gboolean update, gboolean opening, GError **error)
{
    g_return_val_if_fail(path != NULL, FALSE);
    g_mutex_lock(&lock);
    gboolean ok = !enabled || claim_output(path, update, opening, error);
    g_mutex_unlock(&lock);
    return ok;
}

gboolean
ms_file_claims_output(const char *path, gboolean update, GError **error)
{
    return locked_claim(path, update, FALSE, error);
}

gboolean
ms_file_claims_open_output(const char *path, gboolean update, GError **error)
{
    return locked_claim(path, update, TRUE, error);
}

void
ms_file_claims_output_done(const char *path)
{
    g_return_if_fail(path != NULL);
    g_mutex_lock(&lock);
    if (enabled) {
        g_autofree char *resolved = strcmp(path, "-") == 0 ? g_strdup("-") : resolve(path);
        struct stat st;
        gboolean exists = strcmp(path, "-") != 0 && stat(path, &st) == 0;
        for (guint i = 0; i < claims->len; i++) {
            Claim *c = claims->pdata[i];
            if (c->role == OPEN && strcmp(c->resolved, resolved) == 0) {
                /* The new file replaced the old: a second output must still find it. */
                c->role = DONE;
                c->has_id = exists;
                c->dev = exists ? st.st_dev : 0;
                c->ino = exists ? st.st_ino : 0;
            }
        }
    }
    g_mutex_unlock(&lock);
}

gboolean
ms_file_claims_input(const char *path, const struct stat *st, GError **error)
{
    g_return_val_if_fail(path != NULL && st != NULL, FALSE);
    if (!S_ISREG(st->st_mode)) {
        return TRUE;
    }
    g_mutex_lock(&lock);
    gboolean ok = TRUE;
    if (enabled) {
        g_autofree char *resolved = resolve(path);
        gboolean known = FALSE;
        for (guint i = 0; i < claims->len && ok; i++) {
            Claim *c = claims->pdata[i];
            if (!same(c, TRUE, st->st_dev, st->st_ino, resolved)) {
                continue;
            }
            if (c->role == CLAIMED || c->role == OPEN) {
                g_autofree char *named = also_named(c, path);
                g_set_error(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT,
                            "%s: is both an input and an output of this command%s; an output "
                            "never replaces an input: write it to another file",
                            path, named);
                ok = FALSE;
            }
            known = known || c->role == INPUT;
        }
        if (ok && !known) {
            Claim *c = g_new0(Claim, 1);
            c->role = INPUT;
            c->has_id = TRUE;
            c->dev = st->st_dev;
            c->ino = st->st_ino;
            c->resolved = g_steal_pointer(&resolved);
            c->path = g_strdup(path);
            g_ptr_array_add(claims, c);
        }
    }
    g_mutex_unlock(&lock);
    return ok;
}
