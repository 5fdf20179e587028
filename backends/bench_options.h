/* bench_options: the numbers `moesim bench` takes and the limit it meets at run time, as a range
 * table (sim/base/ranges.h: docs/bad-inputs.md is generated from it and tests/test_input_ranges.c
 * walks it), and the parsing of each option's text into a spec against that table. */
#pragma once

#include <glib.h>

#include "backends/executor_bench.h"
#include "sim/base/ranges.h"

G_BEGIN_DECLS

/* The options' ranges ("--iters", "--concurrency-sizes" ... as the user types them), and the
 * concurrency benchmark's "allreduce calls". */
const MsRangeTable *ms_bench_ranges(void);

/* Sets spec's field of option (a key of ms_bench_ranges: --iters, --warmup, --minbytes,
 * --maxbytes, --tokens, --d-model, --d-ffn, --concurrency-sizes, --background, --channels, --qps,
 * --dtype) from text: a count in digits, a size in bytes or with a unit (8, 128M, 1GiB), a list
 * of them for --tokens and --concurrency-sizes (comma-separated, strictly increasing, at most
 * MS_BENCH_MAX_POINTS), and for --dtype bf16 or fp16 (nccl-tests' bfloat16 and half also). FALSE
 * with MS_BENCH_ERROR_SPEC as "OPTION: 'TEXT' out of range (must be between MIN and MAX)" (with
 * "item N" for a list) or naming what is wrong; spec unchanged then. Relations between fields
 * (--minbytes at most --maxbytes) are ms_bench_spec_check's. */
gboolean ms_bench_option_set(MsBenchSpec *spec, const char *option, const char *text,
                             GError **error);

/* The loop of calls calls of the background allreduce of background bytes under what the
 * concurrency or overlap benchmark times (timed: "the all-to-all of 1048576 B", "the kernel
 * mlp_up_proj at 256 tokens"): TRUE when calls is within the table's range (1 to
 * MS_BENCH_MAX_LOOP), else FALSE with MS_BENCH_ERROR_SPEC naming what is timed and the
 * allreduce's size and saying to give a larger --background. */
gboolean ms_bench_loop_check(double calls, const char *timed, guint64 background, GError **error);

G_END_DECLS
