/* Fuzz target: schedule JSON (ms_schedule_from_json). A schedule that loads must serialise and
 * load back to the same JSON, and small ones are executed by the engine on a 16-GPU machine with
 * invariant checks on: a loaded schedule may be refused by the dispatcher (stuck, unknown policy)
 * but must never break an engine invariant, crash or hang. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim/engine.h"
#include "sim/base/json_input.h"
#include "sim/schedule/schedule.h"

/* Executed only when this small, to keep an iteration fast. */
#define RUN_MAX_OPS 512

static char *
to_text(const MsSchedule *s)
{
    g_autoptr(JsonNode) root = ms_schedule_to_json(s);
    return json_to_string(root, FALSE);
}

static void
run(const MsSchedule *s)
{
    static MsTopology *topo;
    if (topo == NULL) {
        topo = ms_topology_load("dgx-a100-2node", NULL);
    }
    if (ms_schedule_n_ops(s) > RUN_MAX_OPS || ms_schedule_n_ranks(s) > ms_topology_n_gpus(topo)) {
        return;
    }
    MsEngineOptions opts = {.check_invariants = TRUE};
    GError *error = NULL;
    g_autoptr(MsRecords) records = ms_engine_run(s, topo, &opts, &error);
    if (records == NULL &&
        (error == NULL || g_error_matches(error, MS_ENGINE_ERROR, MS_ENGINE_ERROR_INVARIANT))) {
        abort();
    }
    g_clear_error(&error);
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!ms_json_input_load_data(parser, (const char *)data, size, "fuzz.json", NULL)) {
        return 0;
    }
    GError *error = NULL;
    g_autoptr(MsSchedule) s =
        ms_schedule_from_json(json_parser_get_root(parser), "fuzz.json", &error);
    if (s == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    g_autofree char *text = to_text(s);
    g_autoptr(JsonParser) again = json_parser_new();
    if (!json_parser_load_from_data(again, text, -1, NULL)) {
        abort();
    }
    g_autoptr(MsSchedule) back = ms_schedule_from_json(json_parser_get_root(again), "back", NULL);
    if (back == NULL) {
        abort();
    }
    g_autofree char *text2 = to_text(back);
    if (strcmp(text, text2) != 0) {
        abort();
    }
    run(s);
    return 0;
}
