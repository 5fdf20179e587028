/* output_file: a buffer over a descriptor (or over stdout), the first errno of any step kept, and
 * the temporary-file-then-rename dance for regular files. */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_claims.h"

G_DEFINE_QUARK(ms_output_file_error_quark, ms_output_file_error)

/* What a failure whose errno stdio did not keep says. */
#define UNKNOWN "a write failed, so the output is incomplete"

/* Hand the buffer to the file past this many bytes: few system calls, little memory. */
#define DRAIN_AT (1u << 16)

struct _MsOutputFile {
    char *path;   /* as the command named it: messages name it */
    char *target; /* renamed over at the end, or NULL when written in place */
    char *temp;   /* the temporary file written, or NULL */
    int fd;       /* -1 when closed or standard output */
    gboolean is_stdout;
    gboolean sync; /* replaces an earlier file: synced before the rename */
    GString *buf;
    int err;          /* the first errno, 0 while all is well, -1 when stdio did not keep it */
    const char *what; /* what failed: "write", "replace" */
};

static void
fail(MsOutputFile *f, const char *what, int err)
{
    if (f->err == 0) {
        f->err = err ? err : -1;
        f->what = what;
    }
}

static gboolean
report(const MsOutputFile *f, GError **error)
{
    if (f->err == 0) {
        return TRUE;
    }
    const char *name = f->is_stdout ? "standard output" : f->path;
    if (strcmp(f->what, "replace") == 0) {
        g_set_error(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO,
                    "%s: cannot replace it with %s: %s", name, f->temp, g_strerror(f->err));
    } else {
        g_set_error(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, "%s: cannot %s: %s", name,
                    f->what, f->err > 0 ? g_strerror(f->err) : UNKNOWN);
    }
    return FALSE;
}

static void
drain(MsOutputFile *f)
{
    if (f->err || f->buf->len == 0) {
        g_string_truncate(f->buf, 0);
        return;
    }
    if (f->is_stdout) {
        errno = 0;
        if (fwrite(f->buf->str, 1, f->buf->len, stdout) != f->buf->len) {
            fail(f, "write", errno);
            clearerr(stdout);
        }
    } else {
        gsize done = 0;
        while (done < f->buf->len) {
            ssize_t n = write(f->fd, f->buf->str + done, f->buf->len - done);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                fail(f, "write", n < 0 ? errno : EIO);
                break;
            }
            done += (gsize)n;
        }
    }
    g_string_truncate(f->buf, 0);
}

/* stdio keeps only that a write failed; the errno is known when the failure is the flush's. The
 * error is then cleared: it is this output's to report, not also the command's at its end. */
static void
flush_stdout(MsOutputFile *f)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fail(f, "write", errno);
        clearerr(stdout);
    }
}

static MsOutputFile *
open_failed(const char *path, const char *what, int err, GError **error)
{
    g_set_error(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, "%s: cannot %s: %s", path,
                what, g_strerror(err));
    return NULL;
}

/* Opens f->fd for path (not "-"): in place for what is not a regular file and for appending,
 * else a temporary file beside the target. FALSE with error. */
static gboolean
open_fd(MsOutputFile *f, const char *path, MsOutputFlags flags, GError **error)
{
    struct stat st;
    gboolean exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        open_failed(path, "write", EISDIR, error);
        return FALSE;
    }
    if ((exists && !S_ISREG(st.st_mode)) || (flags & (MS_OUTPUT_IN_PLACE | MS_OUTPUT_APPEND))) {
        int mode = exists && !S_ISREG(st.st_mode) ? 0
                   : (flags & MS_OUTPUT_APPEND)   ? O_CREAT | O_APPEND
                                                  : O_CREAT | O_TRUNC;
        f->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | mode, 0666);
        if (f->fd < 0) {
            open_failed(path, "write", errno, error);
            return FALSE;
        }
        return TRUE;
    }
    /* A link to a file: the file it names is replaced, the link stays. */
    char resolved[PATH_MAX];
    f->target = g_strdup(exists && realpath(path, resolved) ? resolved : path);
    f->temp = g_strconcat(f->target, ".tmp-XXXXXX", NULL);
    f->fd = g_mkstemp_full(f->temp, O_WRONLY | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        int e = errno;
        g_clear_pointer(&f->temp, g_free);
        open_failed(path, "write", e, error);
        return FALSE;
    }
    if (exists) {
        /* The new file keeps the permissions of the one it replaces. */
        (void)fchmod(f->fd, st.st_mode & 07777);
        f->sync = TRUE;
    }
    return TRUE;
}

MsOutputFile *
ms_output_file_open(const char *path, MsOutputFlags flags, GError **error)
{
    g_return_val_if_fail(path != NULL && *path, NULL);
    if (!ms_file_claims_open_output(path, (flags & MS_OUTPUT_UPDATE) != 0, error)) {
        return NULL;
    }
    MsOutputFile *f = g_new0(MsOutputFile, 1);
    f->path = g_strdup(path);
    f->fd = -1;
    f->is_stdout = strcmp(path, "-") == 0;
    if (!f->is_stdout && !open_fd(f, path, flags, error)) {
        ms_file_claims_output_done(path);
        ms_output_file_free(f);
        return NULL;
    }
    f->buf = g_string_sized_new(DRAIN_AT + 4096);
    return f;
}

void
ms_output_file_write(MsOutputFile *f, const void *data, gsize len)
{
    g_return_if_fail(f != NULL);
    if (f->err) {
        return;
    }
    g_string_append_len(f->buf, data, (gssize)len);
    if (f->buf->len >= DRAIN_AT) {
        drain(f);
    }
}

void
ms_output_file_printf(MsOutputFile *f, const char *format, ...)
{
    g_return_if_fail(f != NULL);
    if (f->err) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    g_string_append_vprintf(f->buf, format, ap);
    va_end(ap);
    if (f->buf->len >= DRAIN_AT) {
        drain(f);
    }
}

gboolean
ms_output_file_flush(MsOutputFile *f, GError **error)
{
    g_return_val_if_fail(f != NULL, FALSE);
    drain(f);
    if (f->err == 0 && f->is_stdout) {
        flush_stdout(f);
    }
    return report(f, error);
}

gboolean
ms_output_file_close(MsOutputFile *f, GError **error)
{
    g_return_val_if_fail(f != NULL, FALSE);
    drain(f);
    if (f->is_stdout) {
        if (f->err == 0) {
            flush_stdout(f);
        }
    } else {
        if (f->sync && f->err == 0 && fsync(f->fd) != 0) {
            fail(f, "write", errno);
        }
        if (close(f->fd) != 0) {
            fail(f, "write", errno);
        }
        f->fd = -1;
        if (f->temp && f->err == 0 && g_rename(f->temp, f->target) != 0) {
            fail(f, "replace", errno);
        }
        if (f->temp && f->err == 0) {
            g_clear_pointer(&f->temp, g_free);
        }
    }
    gboolean ok = report(f, error);
    ms_output_file_free(f);
    return ok;
}

void
ms_output_file_free(MsOutputFile *f)
{
    if (f == NULL) {
        return;
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    if (f->temp) {
        g_unlink(f->temp);
        g_free(f->temp);
    }
    if (f->buf) {
        ms_file_claims_output_done(f->path);
        g_string_free(f->buf, TRUE);
    }
    g_free(f->target);
    g_free(f->path);
    g_free(f);
}

gboolean
ms_output_file_set_contents(const char *path, MsOutputFlags flags, const void *data, gsize len,
                            GError **error)
{
    MsOutputFile *f = ms_output_file_open(path, flags, error);
    if (f == NULL) {
        return FALSE;
    }
    ms_output_file_write(f, data, len);
    return ms_output_file_close(f, error);
}

gboolean
ms_output_file_finish_stdout(GError **error)
{
    errno = 0;
    int flushed = fflush(stdout);
    int e = errno;
    if (flushed == 0 && !ferror(stdout)) {
        return TRUE;
    }
    clearerr(stdout);
    g_set_error(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO,
                "standard output: cannot write: %s", flushed != 0 && e ? g_strerror(e) : UNKNOWN);
    return FALSE;
}
