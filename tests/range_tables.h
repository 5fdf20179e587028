/* range_tables: every table of field ranges moesim has (sim/base/ranges.h), collected for the
 * documentation that test_bad_inputs renders into docs/bad-inputs.md and for the walk of
 * test_input_ranges. A parser with a table adds it here; the policy parameters, which carry their
 * ranges in their own specs (sim/policy/policy.h), are rendered from those. */
#pragma once

#include <glib.h>

#include "backends/bench_options.h"
#include "sim/base/ranges.h"
#include "sim/calib/calibration.h"
#include "sim/moe/model.h"
#include "sim/net/flowfile.h"
#include "sim/policy/policy.h"
#include "topologies/topology.h"
#include "traces/trace.h"
#include "traces/trace_import_fw.h"
#include "validate/measurement.h"
#include "validate/nccl_tests.h"

/* NULL-terminated, in the documentation's order. */
static inline const MsRangeTable *const *
range_tables(void)
{
    static const MsRangeTable *tables[11];
    if (tables[0] == NULL) {
        const MsRangeTable *all[] = {
            ms_topology_ranges(),    ms_model_ranges(),           ms_calibration_ranges(),
            ms_trace_ranges(),       ms_trace_import_fw_ranges(), ms_flow_list_ranges(),
            ms_measurement_ranges(), ms_nccl_tests_ranges(),      ms_bench_ranges(),
        };
        for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
            tables[i] = all[i];
        }
    }
    return tables;
}

/* The unit column; a choice lists its spellings (free with g_free). */
static inline char *
range_unit_name(const MsRange *r)
{
    static const char *const names[] = {
        [MS_RANGE_COUNT] = "count",         [MS_RANGE_NUMBER] = "number",
        [MS_RANGE_BYTES] = "size",          [MS_RANGE_TIME] = "time",
        [MS_RANGE_BANDWIDTH] = "bandwidth", [MS_RANGE_FLOPS] = "compute rate",
        [MS_RANGE_BOOLEAN] = "boolean",
    };
    if (r->unit != MS_RANGE_CHOICE) {
        return g_strdup(names[r->unit]);
    }
    GString *s = g_string_new("one of");
    for (guint i = 0; r->names[i]; i++) {
        g_string_append_printf(s, "%s `%s`", i ? "," : "", r->names[i]);
    }
    return g_string_free(s, FALSE);
}

/* The numeric parameters of a policy spec as a range (TIME bounds in seconds); FALSE for the
 * others (booleans, choices). */
static inline gboolean
range_of_param(const MsParamSpec *ps, MsRange *out)
{
    static const int units[] = {
        [MS_PARAM_BYTES] = MS_RANGE_BYTES,
        [MS_PARAM_UINT] = MS_RANGE_COUNT,
        [MS_PARAM_DOUBLE] = MS_RANGE_NUMBER,
        [MS_PARAM_TIME] = MS_RANGE_TIME,
    };
    if (ps->kind != MS_PARAM_BYTES && ps->kind != MS_PARAM_UINT && ps->kind != MS_PARAM_DOUBLE &&
        ps->kind != MS_PARAM_TIME) {
        return FALSE;
    }
    *out = (MsRange){"", ps->key, (MsRangeUnit)units[ps->kind], ps->min, ps->max, ps->help};
    if (ps->kind == MS_PARAM_TIME) {
        out->min = 0; /* times are never negative (sim/base/units.h) */
    }
    return TRUE;
}

static inline void
render_row(GString *md, const char *where, const MsRange *r)
{
    g_autofree char *lo = ms_range_format(r, r->min);
    g_autofree char *hi = ms_range_format(r, r->max);
    g_autofree char *unit = range_unit_name(r);
    gboolean code = r->unit == MS_RANGE_CHOICE;
    g_string_append_printf(md, "| %s | `%s` | %s | %s%s%s | %s%s%s | %s |\n", where, r->key, unit,
                           code ? "`" : "", lo, code ? "`" : "", code ? "`" : "", hi,
                           code ? "`" : "", r->reason);
}

/* The section of docs/bad-inputs.md with every table. */
static inline void
render_ranges(GString *md)
{
    g_string_append(
        md, "\n## Ranges of every number\n\n"
            "Every number an input carries is checked against a range when it is read, and the "
            "ranges are\nchosen so that nothing computed from accepted values can overflow (a "
            "conversion from floating\npoint to an integer saturates in any case, "
            "`ms_u64_saturate`). The tables below are generated\nfrom the very tables the "
            "parsers check against, and `tests/test_input_ranges.c` walks them: for\nevery "
            "bound, the bound itself is accepted and the nearest value past it is refused. "
            "Bounds\nare inclusive; a bound that depends on another field is in the last "
            "column. Booleans and choices\nare in the tables too: a boolean is `true` or "
            "`false` (`yes`/`no` and `1`/`0` also), a choice\none of its spellings, each of "
            "which the walk accepts, and anything else is refused.\n");
    for (const MsRangeTable *const *t = range_tables(); *t; t++) {
        g_string_append_printf(md,
                               "\n### %s\n\n| where | key | unit | min | max | why |\n"
                               "| --- | --- | --- | --- | --- | --- |\n",
                               (*t)->input);
        for (const MsRange *r = (*t)->fields; r->key; r++) {
            render_row(md, r->where, r);
        }
    }
    g_string_append(md, "\n### Policy parameters (`--policy NAME:key=value`)\n\n"
                        "Parameters every policy takes come first; booleans and choices are "
                        "left out.\n\n"
                        "| policy | key | unit | min | max | what |\n"
                        "| --- | --- | --- | --- | --- | --- |\n");
    MsRange r;
    for (const MsParamSpec *ps = ms_policy_common_params(); ps->key; ps++) {
        if (range_of_param(ps, &r)) {
            render_row(md, "any", &r);
        }
    }
    for (const char *const *name = ms_policy_names(); *name; name++) {
        for (const MsParamSpec *ps = ms_policy_class(*name)->params; ps && ps->key; ps++) {
            if (range_of_param(ps, &r)) {
                render_row(md, *name, &r);
            }
        }
    }
}
