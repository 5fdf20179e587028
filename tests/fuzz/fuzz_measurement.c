/* Fuzz target: measurement files (ms_measurement_set_read_data): nccl-tests logs, Vidur profile
 * CSVs and moesim's CSV, recognised by content. The first byte picks the file name, which is the
 * nccl-tests reader's hint for the collective, and with its bit 2 a shape of 16 ranks, 8 per node
 * (what logs without '#  Rank' lines, srun --label excerpts, need). Rows that load are written as a
 * moesim CSV and read back: the second write must give the same bytes and a failed read must leave
 * the set as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "validate/measurement.h"
#include "validate/moesim_csv.h"

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    static const char *const names[] = {"all_reduce_perf.log", "alltoall_perf.log",
                                        "sendrecv_perf.log", "measurements.csv"};
    if (size == 0) {
        return 0;
    }
    const char *source = names[data[0] % G_N_ELEMENTS(names)];
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    MsMeasurementReadOptions opts = {0, 0, notes};
    if (data[0] & 4) {
        opts.ranks = 16;
        opts.ranks_per_node = 8;
    }
    if (!ms_measurement_set_read_data_with(set, (const char *)data + 1, size - 1, source, &opts,
                                           &error)) {
        if (ms_measurement_set_size(set) != 0) {
            abort();
        }
        fuzz_refused(&error);
        return 0;
    }
    gsize len = 0, len2 = 0;
    g_autofree char *csv = ms_moesim_csv_write(set, &len);
    g_autoptr(MsMeasurementSet) back = ms_measurement_set_new();
    if (!ms_measurement_set_read_data(back, csv, len, "back.csv", &error) ||
        ms_measurement_set_size(back) != ms_measurement_set_size(set)) {
        abort();
    }
    g_autofree char *csv2 = ms_moesim_csv_write(back, &len2);
    if (len != len2 || memcmp(csv, csv2, len) != 0) {
        abort();
    }
    return 0;
}
