/* Tests of the link timeline: the per-flow rate steps a network's solves produce on one link in a
 * closed-form case (two flows sharing a link, a third joining, then leaving), the overlap
 * window, the CSV and its errors, the chart's script. */
#include <math.h>
#include <string.h>

#include "ms_test.h"
#include "sim/net/network.h"
#include "sim/out/link_timeline.h"
#include "sim/out/plot.h"

typedef struct {
    MsNetwork *net;
    MsLinkTimeline *tl;
    GArray *sharing;
} Rig;

static void
label(gpointer ctx, guint64 cookie, char **op, char **kind, char **conn)
{
    (void)ctx;
    *op = g_strdup(cookie < 2 ? "a2a L0" : "allreduce b0");
    *kind = g_strdup(cookie < 2 ? "alltoall" : "allreduce");
    *conn = g_strdup_printf("flow %" G_GUINT64_FORMAT, cookie);
}

static void
observe(gpointer ctx, MsTime now, const guint32 *links, guint n)
{
    Rig *r = ctx;
    for (guint i = 0; i < n; i++) {
        if (links[i] == 0) {
            g_array_set_size(r->sharing, 0);
            ms_network_link_sharing(r->net, 0, r->sharing);
            ms_link_timeline_observe(r->tl, now, (MsLinkFlow *)r->sharing->data, r->sharing->len,
                                     label, NULL);
        }
    }
}

static void
ignore_done(gpointer ctx, guint64 cookie, MsTime now)
{
    (void)ctx;
    (void)cookie;
    (void)now;
}

/* Link 0 of 10 GB/s. Flows 0 and 1 (10 MB each) start at 0: 5 GB/s each. Flow 2 (2 MB) joins at
 * 1 ms, when 0 and 1 have 5 MB left: 10/3 GB/s each, so 2 ends at 1.6 ms; 0 and 1, with 3 MB
 * left, go back to 5 GB/s and end at 2.2 ms. */
static MsLinkTimeline *
three_flows(void)
{
    double bw[1] = {10e9};
    Rig r = {ms_network_new(1, bw), ms_link_timeline_new(0, "a->b", 10e9),
             g_array_new(FALSE, FALSE, sizeof(MsLinkFlow))};
    ms_network_set_link_observer(r.net, observe, &r);
    static const guint32 link = 0;
    ms_network_start(r.net, 0, 0, &link, 1, 10000000, 1.0, 0);
    ms_network_start(r.net, 0, 0, &link, 1, 10000000, 1.0, 1);
    MsTime now = 0, join = ms_time_from_us(1000);
    gboolean joined = FALSE;
    for (;;) {
        if (!joined && now >= join) {
            ms_network_start(r.net, now, 0, &link, 1, 2000000, 1.0, 2);
            joined = TRUE;
        }
        while (ms_network_advance(r.net, now, ignore_done, NULL)) {
        }
        MsTime t = ms_network_next_time(r.net, now);
        t = joined ? t : MIN(t, join);
        if (t == MS_TIME_NEVER) {
            break;
        }
        now = t;
    }
    ms_network_free(r.net);
    g_array_unref(r.sharing);
    return r.tl;
}

static void
test_closed_form(void)
{
    g_autoptr(MsLinkTimeline) tl = three_flows();
    CU_ASSERT_EQUAL(ms_link_timeline_n_series(tl), 3);
    /* 0 and 1: 5, 10/3, 5, 0; 2: 10/3, 0. */
    CU_ASSERT_EQUAL(ms_link_timeline_n_steps(tl), 10);
    const double us[] = {0, 500, 1000, 1300, 1600, 2000, 2200, 2300};
    const double want[3][8] = {
        {5, 5, 10.0 / 3, 10.0 / 3, 5, 5, 0, 0},
        {5, 5, 10.0 / 3, 10.0 / 3, 5, 5, 0, 0},
        {0, 0, 10.0 / 3, 10.0 / 3, 0, 0, 0, 0},
    };
    for (guint s = 0; s < 3; s++) {
        for (guint k = 0; k < G_N_ELEMENTS(us); k++) {
            /* Completion times are rounded up to the picosecond: look 1 ns after each. */
            double got = ms_link_timeline_rate_at(tl, s, ms_time_from_us(us[k] + 1e-3)) / 1e9;
            CU_ASSERT_DOUBLE_EQUAL(got, want[s][k], 1e-9);
        }
    }
    MsTime t;
    guint series;
    double rate;
    ms_link_timeline_step(tl, ms_link_timeline_n_steps(tl) - 1, &t, &series, &rate);
    MS_ASSERT_REL(ms_time_to_us(t), 2200, 1e-9);
    CU_ASSERT_EQUAL(rate, 0);
    CU_ASSERT_STRING_EQUAL(ms_link_timeline_op(tl, 2), "allreduce b0");
    CU_ASSERT_STRING_EQUAL(ms_link_timeline_kind(tl, 0), "alltoall");
    CU_ASSERT_STRING_EQUAL(ms_link_timeline_conn(tl, 1), "flow 1");
    /* Steps are in time order. */
    MsTime prev = 0;
    for (guint i = 0; i < ms_link_timeline_n_steps(tl); i++) {
        ms_link_timeline_step(tl, i, &t, &series, &rate);
        CU_ASSERT_TRUE(t >= prev);
        prev = t;
    }
}

static void
test_overlap(void)
{
    g_autoptr(MsLinkTimeline) tl = three_flows();
    MsTime from, to;
    const char *op = NULL;
    CU_ASSERT_TRUE(ms_link_timeline_overlap(tl, "alltoall", "allreduce", &from, &to, &op));
    CU_ASSERT_STRING_EQUAL(op, "a2a L0");
    CU_ASSERT_EQUAL(from, 0);
    MS_ASSERT_REL(ms_time_to_us(to), 2200, 1e-9);
    CU_ASSERT_TRUE(ms_link_timeline_overlap(tl, "allreduce", "alltoall", &from, &to, &op));
    CU_ASSERT_STRING_EQUAL(op, "allreduce b0");
    MS_ASSERT_REL(ms_time_to_us(from), 1000, 1e-9);
    CU_ASSERT_FALSE(ms_link_timeline_overlap(tl, "alltoall", "reducescatter", &from, &to, &op));
}

static void
test_csv(void)
{
    g_autoptr(MsLinkTimeline) tl = three_flows();
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "tl.csv", NULL);
    g_autoptr(GError) error = NULL;
    CU_ASSERT_TRUE(ms_link_timeline_write_csv(tl, path, &error));
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_STRING_EQUAL(lines[0], "# moesim-link-timeline 1 link a->b capacity_GBps 10.000000");
    CU_ASSERT_STRING_EQUAL(lines[1], "time_us,flow,rate_GBps,op,kind,connection");
    CU_ASSERT_STRING_EQUAL(lines[2], "0.000000,0,5.000000000,a2a L0,alltoall,flow 0");
    CU_ASSERT_STRING_EQUAL(lines[5], "1000.000000,1,3.333333333,a2a L0,alltoall,flow 1");
    CU_ASSERT_EQUAL(g_strv_length(lines), 2 + 10 + 1); /* the last line ends the file */
    g_autofree char *bad = g_build_filename(ms_test_tmpdir(), "missing", "tl.csv", NULL);
    CU_ASSERT_FALSE(ms_link_timeline_write_csv(tl, bad, &error));
    MS_ASSERT_ERROR(error, MS_LINK_TIMELINE_ERROR, MS_LINK_TIMELINE_ERROR_IO, "missing");
}

/* The chart's script holds one band per flow, a key entry per op with its flow count, the
 * most of its flows moving at once, the window's span; it is written whether or not gnuplot can
 * render it. */
static void
test_plot_script(void)
{
    g_autoptr(MsLinkTimeline) tl = three_flows();
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "tl.png", NULL);
    g_autoptr(GError) error = NULL;
    gboolean ok =
        ms_link_timeline_plot(tl, path, "t", ms_time_from_us(1000), MS_TIME_NEVER, &error);
    CU_ASSERT_TRUE(ok || g_error_matches(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT));
    g_autofree char *gp = g_strconcat(path, ".gp", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(gp, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "alltoall: a2a L0 (up to 2 flows at once)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "allreduce: allreduce b0 (up to 1 flows at once)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set xrange [0:1200]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d2 << EOD"));
    CU_ASSERT_PTR_NULL(strstr(text, "$d3 << EOD"));
    /* The third band (the allreduce) stacks on the two others: 20/3 to 10 GB/s at the join. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "0 6.666666667 10\n"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"two flows, a third joining: closed-form steps", test_closed_form},
        {"the first op overlapping another kind", test_overlap},
        {"CSV: header, rows, unwritable path", test_csv},
        {"stacked chart script", test_plot_script},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"link_timeline", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
