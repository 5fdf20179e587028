/* bench_zfp: what ScheMoE's ZFP compression of all-to-all data costs and gains, measured with the
 * real ZFP library on activation-like tensors, set up as ScheMoE's code sets it
 * (schemoe/custom/compressor/zfpc.cpp): fp32 values (zfp_type_float), a 2D field of d_model x
 * tokens, fixed-rate mode at 8 bits per value (ZfpCompressor's default rate). Tensors: hidden
 * states after a LayerNorm (per channel a Gaussian with its own scale and bias, a few outlier
 * channels 20x larger, as transformer activations have). Prints per shape the compressed over
 * original size, the error over the data's standard deviation, and the CPU time per input byte
 * of compression and decompression (serial execution: the median of 5 runs); the figures are
 * ScheMoE policy's defaults (docs/policies.md). Asserts nothing about time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zfp.h>

#include "ms_bench.h"

#define RATE 8.0 /* bits per value: ZfpCompressor(comm, compress_rate = 8.0) */
#define RUNS 5

/* xorshift64*: a deterministic Gaussian source (Box-Muller). */
static guint64 state = 0x9e3779b97f4a7c15u;

static double
uniform01(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return ((state * 0x2545f4914f6cdd1dull) >> 11) * (1.0 / 9007199254740992.0);
}

static double
gaussian(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2 * log(u + 1e-300)) * cos(2 * G_PI * v);
}

/* tokens x d LayerNorm outputs: channel c has scale g_c ~ |N(1, 0.25)| and bias b_c ~ N(0, 0.1);
 * one channel in 128 is an outlier with 20x the scale. */
static float *
activations(guint d, guint tokens)
{
    g_autofree double *g = g_new(double, d), *b = g_new(double, d);
    for (guint c = 0; c < d; c++) {
        g[c] = fabs(1 + 0.25 * gaussian()) * (c % 128 == 7 ? 20 : 1);
        b[c] = 0.1 * gaussian();
    }
    float *x = g_new(float, (gsize)d *tokens);
    for (guint t = 0; t < tokens; t++) {
        for (guint c = 0; c < d; c++) {
            x[(gsize)t * d + c] = (float)(g[c] * gaussian() + b[c]);
        }
    }
    return x;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double ratio, bits, error, compress_ns, decompress_ns;
} Figures;

/* Compresses and decompresses x (d x tokens) RUNS times, as zfpc.cpp does. */
static gboolean
measure(float *x, guint d, guint tokens, Figures *f)
{
    gsize n = (gsize)d * tokens, in_bytes = n * sizeof(float);
    g_autofree float *y = g_new(float, n);
    double ct[RUNS], dt[RUNS];
    gsize length = 0;
    for (guint run = 0; run < RUNS; run++) {
        zfp_field *field = zfp_field_2d(x, zfp_type_float, d, tokens);
        zfp_stream *zfp = zfp_stream_open(NULL);
        zfp_stream_set_rate(zfp, RATE, zfp_type_float, 2, zfp_false);
        gsize cap = zfp_stream_maximum_size(zfp, field);
        void *buf = g_malloc(cap);
        bitstream *bs = stream_open(buf, cap);
        zfp_stream_set_bit_stream(zfp, bs);
        double t0 = ms_bench_cpu_seconds();
        length = zfp_compress(zfp, field);
        double t1 = ms_bench_cpu_seconds();
        zfp_field *out = zfp_field_2d(y, zfp_type_float, d, tokens);
        zfp_stream_rewind(zfp);
        gsize back = zfp_decompress(zfp, out);
        double t2 = ms_bench_cpu_seconds();
        zfp_field_free(out);
        stream_close(bs);
        zfp_stream_close(zfp);
        zfp_field_free(field);
        g_free(buf);
        if (length == 0 || back == 0) {
            return FALSE;
        }
        ct[run] = (t1 - t0) * 1e9 / (double)in_bytes;
        dt[run] = (t2 - t1) * 1e9 / (double)in_bytes;
    }
    qsort(ct, RUNS, sizeof(double), cmp_double);
    qsort(dt, RUNS, sizeof(double), cmp_double);
    double se = 0, sum = 0, sum2 = 0;
    for (gsize i = 0; i < n; i++) {
        double e = (double)y[i] - (double)x[i];
        se += e * e;
        sum += x[i];
        sum2 += (double)x[i] * x[i];
    }
    double var = sum2 / n - (sum / n) * (sum / n);
    f->ratio = (double)length / (double)in_bytes;
    f->bits = 8.0 * (double)length / (double)n;
    f->error = sqrt(se / n) / sqrt(var);
    f->compress_ns = ct[RUNS / 2];
    f->decompress_ns = dt[RUNS / 2];
    return TRUE;
}

int
main(void)
{
    /* ScheMoE's shapes: CT-MoE's d_model 1024 and the ablation layer's 8192, and a chunk of the
     * tokens one GPU sends (pre_test.py's 8 x 2048 tokens x capacity 1.2 x top-2 over r = 4). */
    static const struct {
        guint d, tokens;
        const char *what;
    } shapes[] = {
        {1024, 8192, "CT-MoE hidden states"},
        {8192, 1024, "ablation layer hidden states"},
        {1024, 2048, "one ScheMoE chunk of CT-MoE"},
    };
    printf("ZFP %s, fixed rate %.0f bits per fp32 value, 2D field d_model x tokens, serial\n",
           ZFP_VERSION_STRING, RATE);
    printf("%-30s %6s %6s %8s %8s %10s %12s %12s\n", "tensor", "d", "tokens", "ratio", "bits",
           "rmse/std", "compress", "decompress");
    for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
        g_autofree float *x = activations(shapes[i].d, shapes[i].tokens);
        Figures f;
        if (!measure(x, shapes[i].d, shapes[i].tokens, &f)) {
            fprintf(stderr, "bench_zfp: zfp failed on %s\n", shapes[i].what);
            return 1;
        }
        printf("%-30s %6u %6u %8.4f %8.3f %10.4f %9.3f ns/B %9.3f ns/B\n", shapes[i].what,
               shapes[i].d, shapes[i].tokens, f.ratio, f.bits, f.error, f.compress_ns,
               f.decompress_ns);
    }
    printf("ratio: compressed over original bytes (fp32 in); times: CPU per input byte, median "
           "of %d\n",
           RUNS);
    return 0;
}
