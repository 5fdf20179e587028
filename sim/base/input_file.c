/* input_file: checks before reading (open without blocking, fstat the descriptor that is then read,
 * so the file checked is the file read), the kinds' limits, and a bounded read. */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_claims.h"
#include "units.h"

G_DEFINE_QUARK(ms_input_file_error_quark, ms_input_file_error)

#define MiB (G_GUINT64_CONSTANT(1) << 20)
#define GiB (G_GUINT64_CONSTANT(1) << 30)

/* A UTF-8 byte order mark, which some editors write first: every text moesim reads is UTF-8
 * (or ASCII) already, so the mark is read past as nothing. */
#define BOM "\xef\xbb\xbf"

static const MsInputKindInfo kinds[MS_INPUT_N_KINDS] = {
    [MS_INPUT_TOPOLOGY] = {"a topology file", "`--topology`, `topo show`", 64 * MiB, FALSE,
                           "an explicit description of the largest cluster moesim models (65536 "
                           "GPUs, a NIC each, 8192 NVSwitch nodes under 256 leaves) is 22 MB; "
                           "[device] and [link] groups are counted before parsing (at most "
                           "262144 and 524288)"},
    [MS_INPUT_MODEL] = {"a model file", "`--model`, `model show`", 1 * MiB, FALSE,
                        "a model file is one [model] group of at most 27 keys; the shipped ones "
                        "are under 1.3 KB"},
    [MS_INPUT_CALIBRATION] = {"a calibration file", "`--calibration`", 16 * MiB, FALSE,
                              "1000 times the calibration fitted on all the shipped Vidur A100 "
                              "data (15 KB); lists hold at most 4096 items"},
    [MS_INPUT_SCHEDULE] = {"a schedule", "`exec`", 256 * MiB, FALSE,
                           "read whole into a JSON tree of about 8 times its size (a 170 MB "
                           "schedule of 300,000 ops peaks at 1.35 GB); a Mixtral 8x7B step "
                           "under lina on 128 GPUs is 74 MB"},
    [MS_INPUT_RESULT] = {"a result file",
                         "`validate --simulated/--measured`; per-layer tables and profiler "
                         "traces of `validate --layers` and `calibrate --layers`",
                         1 * GiB, FALSE,
                         "read whole into a JSON tree of about 9 times its size (a 51 MB result "
                         "read twice peaks at 946 MB); the 128-GPU Mixtral step's is 51 MB"},
    [MS_INPUT_BASELINE] = {"a baseline", "`check --baseline`", 16 * MiB, FALSE,
                           "a baseline holds one summary per scenario; the shipped one is 2 KB"},
    [MS_INPUT_MEASUREMENT] = {"a measurement file", "`calibrate`, `validate --measured`", 256 * MiB,
                              FALSE,
                              "read whole; the largest real profile shipped is 1.2 MB, an "
                              "nccl-tests log a few hundred KB"},
    [MS_INPUT_FLOWS] = {"a flow list", "`flows`", 1 * GiB, FALSE,
                        "read whole; about 25 million flows of 40 bytes a line, more than the "
                        "16.8 million of the largest collective bench_net replays"},
    [MS_INPUT_SWEEP_CSV] = {"a sweep CSV", "`sweep --merge`, `sweep --resume`", 256 * MiB, FALSE,
                            "read whole; a grid has at most 100000 points (MS_SWEEP_MAX_POINTS) "
                            "of a row each, a few hundred bytes, so 2.6 KB a row still fits"},
    [MS_INPUT_SWEEP_MANIFEST] = {"a sweep manifest", "`sweep --merge`", 1 * MiB, FALSE,
                                 "five members (format, version, shards, points and the "
                                 "table's header line); the README's sweep's is 292 bytes"},
    [MS_INPUT_TRACE] = {"a trace", "`--trace`, `trace info`", 0, TRUE,
                        "streamed one iteration at a time, so any length; `-` is standard input"},
    [MS_INPUT_TRACE_IMPORT] = {"a file to import", "`trace import`", 0, FALSE,
                               "streamed row by row, so any length"},
};

const MsInputKindInfo *
ms_input_kind_info(MsInputKind kind)
{
    g_return_val_if_fail(kind < MS_INPUT_N_KINDS, NULL);
    return &kinds[kind];
}

static const char *
file_type(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a plain file";
}

static void
too_large(const char *path, const MsInputKindInfo *k, guint64 size, GError **error)
{
    char limit[32];
    ms_format_bytes(k->max_bytes, limit, sizeof limit);
    if (size) {
        g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_TOO_LARGE,
                    "%s: %" G_GUINT64_FORMAT " bytes, more than the %s limit for %s", path, size,
                    limit, k->name);
    } else {
        g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_TOO_LARGE,
                    "%s: more than the %s limit for %s", path, limit, k->name);
    }
}

/* Opens path and checks what it is; returns the descriptor, or -1 with error set. */
static int
open_checked(const char *path, const MsInputKindInfo *k, guint64 *size, GError **error)
{
    /* O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one for ever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, MS_INPUT_FILE_ERROR,
                    e == ENOENT ? MS_INPUT_FILE_ERROR_NOENT : MS_INPUT_FILE_ERROR_IO,
                    "%s: cannot open: %s", path, g_strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_IO, "%s: cannot stat: %s", path,
                    g_strerror(e));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOT_REGULAR,
                    "%s: not a regular file (%s); %s must be a regular file%s", path,
                    file_type(st.st_mode), k->name, k->stdin_ok ? ", or - for standard input" : "");
        return -1;
    }
    if (k->max_bytes && (guint64)st.st_size > k->max_bytes) {
        close(fd);
        too_large(path, k, (guint64)st.st_size, error);
        return -1;
    }
    /* An output of the command being written to this very file would replace it. */
    if (!ms_file_claims_input(path, &st, error)) {
        close(fd);
        return -1;
    }
    /* Regular files ignore O_NONBLOCK, but reads should not depend on that. */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) {
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    *size = (guint64)st.st_size;
    return fd;
}

FILE *
ms_input_file_open(const char *path, MsInputKind kind, GError **error)
{
    g_return_val_if_fail(path != NULL && kind < MS_INPUT_N_KINDS, NULL);
    const MsInputKindInfo *k = &kinds[kind];
    if (k->stdin_ok && strcmp(path, "-") == 0) {
        return stdin;
    }
    guint64 size = 0;
    int fd = open_checked(path, k, &size, error);
    if (fd < 0) {
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        int e = errno;
        close(fd);
        g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_IO, "%s: cannot open: %s", path,
                    g_strerror(e));
        return NULL;
    }
    /* Past a byte order mark; a regular file can be read again from its start otherwise. */
    char head[3];
    if (fread(head, 1, 3, f) != 3 || memcmp(head, BOM, 3) != 0) {
        rewind(f);
    }
    return f;
}

gboolean
ms_input_file_read(const char *path, MsInputKind kind, char **data, gsize *len, GError **error)
{
    g_return_val_if_fail(path != NULL && data != NULL && kind < MS_INPUT_N_KINDS, FALSE);
    const MsInputKindInfo *k = &kinds[kind];
    g_return_val_if_fail(k->max_bytes > 0, FALSE);
    guint64 size = 0;
    int fd = open_checked(path, k, &size, error);
    if (fd < 0) {
        return FALSE;
    }
    /* The size fstat gave plus one byte, to see the end; more only if the file grew. */
    gsize cap = (gsize)size + 1, n = 0;
    char *buf = g_malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (n > k->max_bytes) {
                break;
            }
            cap = (gsize)MIN((guint64)cap * 2, k->max_bytes + 1);
            buf = g_realloc(buf, cap + 1);
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            int e = errno;
            close(fd);
            g_free(buf);
            g_set_error(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_IO, "%s: cannot read: %s",
                        path, g_strerror(e));
            return FALSE;
        }
        if (got == 0) {
            break;
        }
        n += (gsize)got;
    }
    close(fd);
    if (n > k->max_bytes) {
        g_free(buf);
        too_large(path, k, 0, error);
        return FALSE;
    }
    if (n >= 3 && memcmp(buf, BOM, 3) == 0) {
        n -= 3;
        memmove(buf, buf + 3, n);
    }
    buf[n] = '\0';
    *data = buf;
    if (len) {
        *len = n;
    }
    return TRUE;
}
