/* Fuzz target: calibration files (ms_calibration_load_data). A file that loads is written out and
 * loaded again: the two texts must be the same bytes (the writer's promise that a file read back
 * writes the same bytes), and a compute model must build from it for an A100. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim/calib/calibration.h"

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    GError *error = NULL;
    g_autoptr(MsCalibration) cal =
        ms_calibration_load_data((const char *)data, size, "fuzz.ini", &error);
    if (cal == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    gsize len = 0, len2 = 0;
    g_autofree char *text = ms_calibration_to_data(cal, &len);
    g_autoptr(MsCalibration) back = ms_calibration_load_data(text, len, "back.ini", &error);
    if (back == NULL) {
        abort();
    }
    g_autofree char *text2 = ms_calibration_to_data(back, &len2);
    if (len != len2 || memcmp(text, text2, len) != 0) {
        abort();
    }
    const MsGpuSpec a100 = {"A100", 312e12, 2.0e12, 80ull << 30, 4000000};
    g_autoptr(MsComputeModel) model = ms_calibration_compute_model(cal, &a100, &error);
    if (model == NULL) {
        g_clear_error(&error);
    }
    for (guint k = 0; k < MS_MEASUREMENT_SENDRECV + 1; k++) {
        double eff = ms_calibration_collective_efficiency(cal, k, 1u << 20);
        if (!(eff > 0) || !isfinite(eff)) {
            abort();
        }
    }
    return 0;
}
