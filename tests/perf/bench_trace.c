/* bench_trace: throughput of writing and reading traces in the text and binary forms (records/s,
 * MB/s) and the peak resident memory of each, for a synthetic trace 1x, 10x and 100x as long.
 * Each measurement runs in its own child process so that VmHWM (from /proc/self/status) is the
 * peak of that measurement alone: it must stay flat as the trace grows, because the reader holds
 * one iteration at a time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ms_bench.h"
#include "traces/trace_gen.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

/* One iteration: 16 ranks x 512 tokens, 12 MoE layers, top-2 over 16 experts. */
#define BASE_SPEC "ranks=16,experts=16,layers=12,top_k=2,tokens=512,zipf=1.1,corr=0.6,drift=0.05"
#define BASE_ITERATIONS 2

typedef struct {
    gboolean ok;
    double seconds;
    guint64 records;
    guint64 bytes;
    guint64 hwm_kib;
} Result;

static Result
write_trace(const char *path, MsTraceFormat format, guint iterations)
{
    Result res = {0};
    g_autofree char *spec = g_strdup_printf(BASE_SPEC ",iterations=%u", iterations);
    MsTraceGenParams params;
    g_autoptr(GError) error = NULL;
    if (!ms_trace_gen_params_parse(spec, &params, &error)) {
        return res;
    }
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&params, &error);
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(path, format, ms_trace_gen_header(gen), &error);
    if (w == NULL) {
        return res;
    }
    gint64 spent = 0;
    MsRouting *r = NULL;
    while (ms_trace_gen_next(gen, &r, &error)) {
        gint64 t0 = g_get_monotonic_time(); /* time the writer only, not the generator */
        gboolean ok = ms_trace_writer_write_routing(w, r, &error);
        spent += g_get_monotonic_time() - t0;
        ms_routing_free(r);
        if (!ok) {
            return res;
        }
    }
    gint64 t0 = g_get_monotonic_time();
    res.ok = error == NULL && ms_trace_writer_close(w, &error);
    spent += g_get_monotonic_time() - t0;
    res.seconds = spent * 1e-6;
    res.records = ms_trace_writer_records(w);
    res.bytes = ms_trace_writer_bytes(w);
    return res;
}

static Result
read_trace(const char *path)
{
    Result res = {0};
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(MsTraceReader) reader = ms_trace_reader_open(path, &error);
    if (reader == NULL) {
        return res;
    }
    MsRouting *r = NULL;
    guint64 checksum = 0;
    while (ms_trace_reader_next_iteration(reader, &r, &error)) {
        res.records += ms_routing_total_tokens(r);
        checksum += ms_routing_count(r, 0, 0, 0);
        ms_routing_free(r);
    }
    res.seconds = (g_get_monotonic_time() - t0) * 1e-6;
    res.ok = error == NULL && checksum > 0;
    GStatBuf st;
    res.bytes = g_stat(path, &st) == 0 ? (guint64)st.st_size : 0;
    return res;
}

/* Runs one measurement in a child process and returns what it reports through a pipe. */
static Result
in_child(const char *path, MsTraceFormat format, guint iterations, gboolean reading)
{
    Result res = {0};
    int fds[2];
    if (pipe(fds) != 0) {
        return res;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        Result r = reading ? read_trace(path) : write_trace(path, format, iterations);
        r.hwm_kib = ms_bench_status_kib("VmHWM:");
        ssize_t n = write(fds[1], &r, sizeof(r));
        _exit(n == (ssize_t)sizeof(r) ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &res, sizeof(res)) != (ssize_t)sizeof(res)) {
        res.ok = FALSE;
    }
    close(fds[0]);
    int status = 0;
    if (pid > 0) {
        waitpid(pid, &status, 0);
    }
    return res;
}

static void
print_row(guint scale, const char *form, const char *op, const Result *r)
{
    printf("%5ux  %-6s  %-5s  %10" G_GUINT64_FORMAT
           "  %9.1f  %7.3f  %12.0f  %8.1f  %9" G_GUINT64_FORMAT "\n",
           scale, form, op, r->records, r->bytes / 1e6, r->seconds,
           r->seconds > 0 ? r->records / r->seconds : 0,
           r->seconds > 0 ? r->bytes / 1e6 / r->seconds : 0, r->hwm_kib);
}

int
main(int argc, char **argv)
{
    guint max_scale = argc > 1 ? (guint)atoi(argv[1]) : 100;
    g_autofree char *dir = g_dir_make_tmp("moesim-bench-XXXXXX", NULL);
    if (dir == NULL || max_scale == 0) {
        fprintf(stderr, "usage: bench_trace [MAX_SCALE (default 100)]\n");
        return 2;
    }
    printf("trace: %s, %u iterations at 1x (8192 tokens each)\n", BASE_SPEC, BASE_ITERATIONS);
    printf("%6s  %-6s  %-5s  %10s  %9s  %7s  %12s  %8s  %9s\n", "scale", "form", "op", "records",
           "MB", "seconds", "records/s", "MB/s", "VmHWM KiB");
    int rc = 0;
    for (guint scale = 1; scale <= max_scale; scale *= 10) {
        static const MsTraceFormat forms[] = {MS_TRACE_FORMAT_TEXT, MS_TRACE_FORMAT_BINARY};
        for (guint f = 0; f < G_N_ELEMENTS(forms); f++) {
            g_autofree char *path = g_strdup_printf("%s/x%u.%s", dir, scale, f ? "bin" : "txt");
            const char *name = ms_trace_format_name(forms[f]);
            Result w = in_child(path, forms[f], BASE_ITERATIONS * scale, FALSE);
            Result r = in_child(path, forms[f], 0, TRUE);
            if (!w.ok || !r.ok || w.records != r.records) {
                fprintf(stderr, "bench_trace: %s %ux failed\n", name, scale);
                rc = 1;
            }
            print_row(scale, name, "write", &w);
            print_row(scale, name, "read", &r);
            g_remove(path);
        }
    }
    g_rmdir(dir);
    printf("VmHWM is each process's peak resident memory: flat across 1x/10x/100x means memory is\n"
           "bounded by one iteration, not by the length of the trace.\n");
    return rc;
}
