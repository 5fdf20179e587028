/* chrome_trace_fixture: the small schedule and records the Chrome trace tests write: two GPUs,
 * a stream whose name needs every kind of JSON escape, an all-to-all, an allreduce, dependencies
 * across streams and a link series. */
#pragma once

#include "ms_test.h"
#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"

/* A stream name that needs every kind of escape: quotes, a backslash, a newline, a tab, a control
 * character, and non-ASCII text. */
#define ODD_STREAM "co\"mm\\ \n\t\x01 é"

/* r0: compute c1 [0,10]; all-to-all r0 [12,20] after c1 (another stream), r1 [15,20]; r1: compute
 * c2 [20,30] after its all-to-all; allreduce of 1000 bytes on both [30,40]. r0 sends 100 bytes to
 * r1 and keeps 7; r1 sends 200. util.nic: 0 at 0, 0.5 at 12, 0 at 20 us. */
static inline void
fx_trace_build(MsSchedule **s_out, MsRecords **r_out)
{
    static guint32 both[2] = {0, 1};
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, ODD_STREAM, MS_STREAM_COMM);
    ms_schedule_set_meta(s, "model", "tiny");
    guint32 c1 = ms_schedule_add_compute(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1,
                                         "L0.fwd.expert \"q\" \xff");
    guint64 m[4] = {7, 100, 200, 0};
    guint32 x[2], ar[2];
    ms_schedule_add_alltoall(s, 1, both, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "L0.fwd.dispatch", x);
    guint32 c2 =
        ms_schedule_add_compute(s, 1, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "L0.fwd.exp");
    ms_schedule_add_allreduce(s, 1, both, 2, 1000, 4, MS_PHASE_BACKWARD, 0, -1, "ar", ar);
    ms_schedule_add_dep(s, x[0], c1);
    ms_schedule_add_dep(s, c2, x[1]);
    ms_schedule_add_dep(s, ar[1], c2);
    MsRecords *r = ms_records_new(ms_schedule_n_ops(s), "test");
    ms_records_set(r, c1, 0, ms_time_from_us(10));
    ms_records_set(r, x[0], ms_time_from_us(12), ms_time_from_us(20));
    ms_records_set(r, x[1], ms_time_from_us(15), ms_time_from_us(20));
    ms_records_set(r, c2, ms_time_from_us(20), ms_time_from_us(30));
    ms_records_set(r, ar[0], ms_time_from_us(30), ms_time_from_us(40));
    ms_records_set(r, ar[1], ms_time_from_us(30), ms_time_from_us(40));
    ms_records_sample(r, "util.nic", 0, 0);
    ms_records_sample(r, "util.nic", ms_time_from_us(12), 0.5);
    ms_records_sample(r, "util.nic", ms_time_from_us(20), 0);
    *s_out = s;
    *r_out = r;
}
