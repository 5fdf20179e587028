/* gate_report: the figures a gate compared, kept for the reports CI systems read: JSON (format
 * "moesim-check") and JUnit XML (a test case per figure, a failure per regression), written
 * beside the text the command prints. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "validate/gate.h"

G_BEGIN_DECLS

typedef struct _MsGateReport MsGateReport;

/* A report of a check of the baseline at path with tolerance (a fraction). */
MsGateReport *ms_gate_report_new(const char *path, double tolerance);
void ms_gate_report_free(MsGateReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsGateReport, ms_gate_report_free)

/* Adds a figure (copied); fits MsGateFigureFn with the report as ctx. */
void ms_gate_report_add(const MsGateFigure *figure, gpointer report);

/* {"schema": "moesim.check/1", "format": "moesim-check", "version": 1, "baseline", "tolerance" (a
 * fraction), "figures": N, "regressed": N, "improved": N, "scenarios": [{"name", "figures":
 * [{"metric", "expected_us", "measured_us", "change", "verdict": "ok"|"regressed"|"improved"}]}]},
 * scenarios in baseline order. */
JsonNode *ms_gate_report_to_json(const MsGateReport *report);
/* JUnit XML: one test suite (the baseline), a test case per figure (class name: the scenario,
 * name: the figure) with a <failure> for each regression; improved figures say so in their
 * <system-out>. Free with g_free. */
char *ms_gate_report_to_junit(const MsGateReport *report);

G_END_DECLS
