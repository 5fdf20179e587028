/* Tests of the flow network without a topology: closed-form completion times, fair sharing with
 * arrivals and departures, latency, unlimited links, invariants. */
#include "ms_test.h"
#include "sim/net/network.h"

typedef struct {
    GArray *done_at; /* MsTime indexed by cookie */
} Record;

static void
on_done(gpointer ctx, guint64 cookie, MsTime now)
{
    Record *r = ctx;
    if (cookie >= r->done_at->len) {
        g_array_set_size(r->done_at, cookie + 1);
    }
    g_array_index(r->done_at, MsTime, cookie) = now;
}

typedef struct {
    MsTime at;
    guint32 *links;
    guint n;
    guint64 bytes;
    double weight;
    MsTime latency;
} Start;

/* A minimal event loop: starts flows at their times, advances the network in between. */
static void
drive(MsNetwork *net, const Start *starts, guint n_starts, Record *rec)
{
    MsTime now = 0;
    guint next = 0;
    for (;;) {
        while (next < n_starts && starts[next].at <= now) {
            const Start *s = &starts[next];
            ms_network_start(net, now, s->latency, s->links, s->n, s->bytes, s->weight, next);
            next++;
        }
        while (ms_network_advance(net, now, on_done, rec)) {
        }
        MsTime t = ms_network_next_time(net, now);
        if (next < n_starts) {
            t = MIN(t, starts[next].at);
        }
        if (t == MS_TIME_NEVER) {
            break;
        }
        now = t;
    }
}

static MsTime
done(Record *r, guint i)
{
    return g_array_index(r->done_at, MsTime, i);
}

static void
test_single_flow(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    guint32 l0 = 0;
    Start s[] = {{0, &l0, 1, 1000000, 1.0, ms_time_from_us(1.5)}};
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 1, &rec);
    /* 1.5 us latency + 1 MB at 1 GB/s = 1001.5 us */
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(1001.5));
    g_array_unref(rec.done_at);
}

static void
test_late_arrival_gets_fair_share(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    ms_network_set_check_invariants(net, TRUE);
    guint32 l0 = 0;
    Start s[] = {
        {0, &l0, 1, 1000000, 1.0, 0},
        {ms_time_from_us(500), &l0, 1, 1000000, 1.0, 0},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 2, &rec);
    /* Alone for 500 us (half done), then both at 0.5 GB/s: the first needs 1000 us more; the second
     * then has 0.5 MB left alone: 500 us. */
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(1500));
    CU_ASSERT_EQUAL(done(&rec, 1), ms_time_from_us(2000));
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    MsNetworkStats st;
    ms_network_stats(net, &st);
    CU_ASSERT_EQUAL(st.flows_started, 2);
    CU_ASSERT_EQUAL(st.flows_completed, 2);
    CU_ASSERT_EQUAL(st.peak_live_flows, 2);
    g_array_unref(rec.done_at);
}

/* Two links in sequence: A carries f0 and f1, B carries f1 and f2; checks the completion times
 * (us) of flows of the given sizes started together, with the invariants on. */
static void
check_two_links(double bw_a, double bw_b, const guint64 bytes[3], const double done_us[3])
{
    double bw[2] = {bw_a, bw_b};
    g_autoptr(MsNetwork) net = ms_network_new(2, bw);
    ms_network_set_check_invariants(net, TRUE);
    guint32 a = 0, b = 1, ab[2] = {0, 1};
    Start s[] = {
        {0, &a, 1, bytes[0], 1.0, 0},
        {0, ab, 2, bytes[1], 1.0, 0},
        {0, &b, 1, bytes[2], 1.0, 0},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 3, &rec);
    for (guint i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(done(&rec, i), ms_time_from_us(done_us[i]));
    }
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    g_array_unref(rec.done_at);
}

/* A 10 GB/s, B 4 GB/s: f0 8 GB/s, f1 2, f2 2: f0 and f1 finish at 1 ms together; f2 then runs
 * alone at 4 GB/s for its last 2 MB: 0.5 ms more. */
static void
test_two_bottlenecks_timing(void)
{
    const guint64 bytes[3] = {8000000, 2000000, 4000000};
    const double done_us[3] = {1000, 1000, 1500};
    check_two_links(10e9, 4e9, bytes, done_us);
}

static void
test_weighted_flows(void)
{
    double bw[1] = {3e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    guint32 l0 = 0;
    Start s[] = {
        {0, &l0, 1, 2000000, 2.0, 0},
        {0, &l0, 1, 1000000, 1.0, 0},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 2, &rec);
    /* 2 GB/s and 1 GB/s: both done at 1 ms. */
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(1000));
    CU_ASSERT_EQUAL(done(&rec, 1), ms_time_from_us(1000));
    g_array_unref(rec.done_at);
}

static void
test_unlimited_and_empty(void)
{
    double bw[2] = {INFINITY, 1e9};
    g_autoptr(MsNetwork) net = ms_network_new(2, bw);
    guint32 inf = 0, both[2] = {0, 1};
    Start s[] = {
        {0, &inf, 1, 5000000, 1.0, ms_time_from_us(2)},
        {0, both, 2, 0, 1.0, ms_time_from_us(3)},
        {0, both, 2, 1000, 1.0, ms_time_from_us(1)},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 3, &rec);
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(2));
    CU_ASSERT_EQUAL(done(&rec, 1), ms_time_from_us(3));
    CU_ASSERT_EQUAL(done(&rec, 2), ms_time_from_us(1) + ms_time_from_us(1));
    CU_ASSERT_EQUAL(ms_network_n_live_flows(net), 0);
    CU_ASSERT_EQUAL(ms_network_link_rate(net, 0), 0);
    g_array_unref(rec.done_at);
}

static void
test_bandwidth_change(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    guint32 l0 = 0;
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    ms_network_start(net, 0, 0, &l0, 1, 1000000, 1.0, 0);
    ms_network_advance(net, 0, on_done, &rec);
    CU_ASSERT_EQUAL(ms_network_next_time(net, 0), ms_time_from_us(1000));
    MsTime half = ms_time_from_us(500);
    ms_network_set_link_bandwidth(net, 0, half, 0.5e9);
    /* Half the bytes left at half the rate: 1000 us more. */
    CU_ASSERT_EQUAL(ms_network_next_time(net, half), ms_time_from_us(1500));
    MS_ASSERT_REL(ms_network_link_rate(net, 0), 0.5e9, 1e-12);
    g_array_unref(rec.done_at);
}

/* Two flows share a 1 GB/s link; at 500 us the first is cancelled with 0.75 MB left (it moved
 * 0.25 MB at 0.5 GB/s) and never reported; the second then runs alone: 0.75 MB at 1 GB/s, done at
 * 1250 us. A flow cancelled in its latency keeps all its bytes and its activation time, and
 * leaves its link's pending count; a cancelled id is no longer live; a flow started with what a
 * cancelled one had left ends when it would have. */
static void
test_cancel(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    ms_network_set_check_invariants(net, TRUE);
    guint32 l0 = 0;
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    guint32 a = ms_network_start(net, 0, 0, &l0, 1, 1000000, 1.0, 0);
    ms_network_start(net, 0, 0, &l0, 1, 1000000, 1.0, 1);
    guint32 c = ms_network_start(net, 0, ms_time_from_us(800), &l0, 1, 4000, 1.0, 2);
    ms_network_advance(net, 0, on_done, &rec);
    MsTime half = ms_time_from_us(500);
    CU_ASSERT_EQUAL(ms_network_next_time(net, 0), ms_time_from_us(800));
    double left = 0;
    MsTime active_at = 0;
    CU_ASSERT_TRUE(ms_network_cancel(net, a, half, &left, &active_at));
    MS_ASSERT_REL(left, 750000, 1e-9);
    CU_ASSERT_EQUAL(active_at, 0);
    CU_ASSERT_TRUE(ms_network_cancel(net, c, half, &left, &active_at));
    CU_ASSERT_EQUAL(left, 4000);
    CU_ASSERT_EQUAL(active_at, ms_time_from_us(800));
    CU_ASSERT_FALSE(ms_network_cancel(net, c, half, &left, &active_at));
    CU_ASSERT_EQUAL(ms_network_link_flows(net, 0), 1);
    CU_ASSERT_EQUAL(ms_network_n_live_flows(net), 1);
    MsTime end = ms_network_next_time(net, half);
    CU_ASSERT_EQUAL(end, ms_time_from_us(1250));
    ms_network_advance(net, end, on_done, &rec);
    CU_ASSERT_EQUAL(rec.done_at->len, 2);
    CU_ASSERT_EQUAL(done(&rec, 1), end);
    CU_ASSERT_EQUAL(done(&rec, 0), 0); /* never reported */
    CU_ASSERT_EQUAL(ms_network_next_time(net, end), MS_TIME_NEVER);
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    /* A flow resumes what a cancelled one had left, to the fraction of a byte: 1 MB alone at
     * 1 GB/s, cancelled at 300.0005 us with 699999.5 bytes left and started again at once, ends
     * at 1000 us as if never stopped. */
    MsTime at = end + ms_time_from_us(300.0005);
    guint32 d = ms_network_start(net, end, 0, &l0, 1, 1000000, 1.0, 3);
    ms_network_advance(net, end, on_done, &rec);
    ms_network_next_time(net, end);
    CU_ASSERT_TRUE(ms_network_cancel(net, d, at, &left, &active_at));
    MS_ASSERT_REL(left, 699999.5, 1e-12);
    ms_network_resume(net, at, 0, &l0, 1, left, 1.0, 4);
    ms_network_advance(net, at, on_done, &rec);
    MsTime resumed = ms_network_next_time(net, at);
    CU_ASSERT_EQUAL(resumed, end + ms_time_from_us(1000));
    ms_network_advance(net, resumed, on_done, &rec);
    CU_ASSERT_EQUAL(done(&rec, 4), resumed);
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    g_array_unref(rec.done_at);
}

typedef struct {
    guint calls;
    guint links;
} Observed;

static void
observe(gpointer ctx, MsTime now, const guint32 *links, guint n)
{
    Observed *o = ctx;
    o->calls++;
    o->links += n;
}

static void
test_observer_and_stats(void)
{
    double bw[3] = {1e9, 1e9, 1e9};
    g_autoptr(MsNetwork) net = ms_network_new(3, bw);
    Observed obs = {0, 0};
    ms_network_set_link_observer(net, observe, &obs);
    guint32 r01[2] = {0, 1}, r2 = 2;
    Start s[] = {
        {0, r01, 2, 1000, 1.0, 0},
        {0, &r2, 1, 1000, 1.0, 0},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 2, &rec);
    /* One solve at start touching all three links, one at the joint finish. */
    CU_ASSERT_EQUAL(obs.calls, 2);
    CU_ASSERT_EQUAL(obs.links, 6);
    CU_ASSERT_TRUE(ms_network_memory(net) > 0);
    g_array_unref(rec.done_at);
}

/* One link, four flows of 1, 2, 3 and 4 MB started together: one bottleneck group whose level
 * rises at each completion. Shares 1/4, 1/3, 1/2, 1 GB/s give completions at 4, 7, 9, 10 ms. */
static void
test_group_clock(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    ms_network_set_check_invariants(net, TRUE);
    guint32 l0 = 0;
    Start s[] = {
        {0, &l0, 1, 3000000, 1.0, 0},
        {0, &l0, 1, 1000000, 1.0, 0},
        {0, &l0, 1, 4000000, 1.0, 0},
        {0, &l0, 1, 2000000, 1.0, 0},
    };
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 4, &rec);
    CU_ASSERT_EQUAL(done(&rec, 1), ms_time_from_us(4000));
    CU_ASSERT_EQUAL(done(&rec, 3), ms_time_from_us(7000));
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(9000));
    CU_ASSERT_EQUAL(done(&rec, 2), ms_time_from_us(10000));
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    MsNetworkStats st;
    ms_network_stats(net, &st);
    /* One re-key of the group per solve, not one per flow (the last completion leaves nothing
     * to solve). */
    CU_ASSERT_EQUAL(st.solves, 4);
    CU_ASSERT_EQUAL(st.group_changes, 4);
    CU_ASSERT_EQUAL(st.rate_changes, 4 + 3 + 2 + 1);
    g_array_unref(rec.done_at);
}

/* A flow changes bottleneck mid-way and carries its remaining bytes. A 10 GB/s, B 8 GB/s. Until
 * f2 (2 MB) finishes at 0.5 ms, B holds f1 and f2 at 4 and f0 takes the 6 left on A. Then f1 is
 * limited by A: f0 and f1 at 5. f1 (6 MB) has 4 MB left: done at 1.3 ms; f0 (8 MB) has 5 MB
 * left, moves 4 by then, and its last 1 MB at 10 GB/s takes 0.1 ms: done at 1.4 ms. */
static void
test_flow_changes_group(void)
{
    const guint64 bytes[3] = {8000000, 6000000, 2000000};
    const double done_us[3] = {1400, 1300, 500};
    check_two_links(10e9, 8e9, bytes, done_us);
}

static void
test_link_rates(void)
{
    double bw[2] = {10e9, 8e9};
    g_autoptr(MsNetwork) net = ms_network_new(2, bw);
    guint32 a = 0, ab[2] = {0, 1};
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    ms_network_start(net, 0, 0, &a, 1, 1000000, 1.0, 0);
    ms_network_start(net, 0, 0, ab, 2, 1000000, 3.0, 1);
    ms_network_advance(net, 0, on_done, &rec);
    ms_network_next_time(net, 0);
    /* Weights 1 and 3 on A: 2.5 and 7.5 GB/s; B carries the second flow only. */
    MS_ASSERT_REL(ms_network_link_rate(net, 0), 10e9, 1e-12);
    MS_ASSERT_REL(ms_network_link_rate(net, 1), 7.5e9, 1e-12);
    MS_ASSERT_REL(ms_network_link_bandwidth(net, 1), 8e9, 1e-12);
    CU_ASSERT_EQUAL(ms_network_n_links(net), 2);
    CU_ASSERT_EQUAL(ms_network_n_live_flows(net), 2);
    g_array_unref(rec.done_at);
}

/* The rate of the flow of a cookie among a link's sharing flows; -1 when it is not listed. */
static double
sharing_rate(MsNetwork *net, guint link, guint64 cookie, guint *listed)
{
    g_autoptr(GArray) fl = g_array_new(FALSE, FALSE, sizeof(MsLinkFlow));
    *listed = ms_network_link_sharing(net, link, fl);
    CU_ASSERT_EQUAL(*listed, fl->len);
    double rate = -1;
    for (guint i = 0; i < fl->len; i++) {
        const MsLinkFlow *f = &g_array_index(fl, MsLinkFlow, i);
        if (f->cookie == cookie) {
            CU_ASSERT_EQUAL(rate, -1); /* listed once */
            rate = f->rate;
        }
    }
    return rate;
}

/* The textbook case: x crosses A (10 GB/s) and B (4 GB/s), y only A, z only B. B is the
 * bottleneck of x and z (2 GB/s each), y takes what A has left (8 GB/s). A fourth flow still in
 * its latency is not listed; an unlimited link lists nothing; a finished flow leaves. */
static void
test_link_sharing(void)
{
    double bw[3] = {10e9, 4e9, INFINITY};
    g_autoptr(MsNetwork) net = ms_network_new(3, bw);
    guint32 ab[3] = {0, 1, 2}, a = 0, b = 1;
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    ms_network_start(net, 0, 0, ab, 3, 4000000, 1.0, 10);
    ms_network_start(net, 0, 0, &a, 1, 16000000, 1.0, 11);
    ms_network_start(net, 0, 0, &b, 1, 2000000, 1.0, 12);
    ms_network_start(net, 0, ms_time_from_us(5000), &a, 1, 1000, 1.0, 13);
    ms_network_advance(net, 0, on_done, &rec);
    g_autoptr(GArray) fl = g_array_new(FALSE, FALSE, sizeof(MsLinkFlow));
    /* Before the first solve the flows are listed at rate 0. */
    CU_ASSERT_EQUAL(ms_network_link_sharing(net, 0, fl), 2);
    CU_ASSERT_EQUAL(g_array_index(fl, MsLinkFlow, 0).rate, 0);
    ms_network_next_time(net, 0);
    guint n = 0;
    MS_ASSERT_REL(sharing_rate(net, 0, 10, &n), 2e9, 1e-12);
    MS_ASSERT_REL(sharing_rate(net, 0, 11, &n), 8e9, 1e-12);
    CU_ASSERT_EQUAL(sharing_rate(net, 0, 13, &n), -1);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ms_network_link_flows(net, 0), 3); /* the pending one counted there */
    MS_ASSERT_REL(sharing_rate(net, 1, 10, &n), 2e9, 1e-12);
    MS_ASSERT_REL(sharing_rate(net, 1, 12, &n), 2e9, 1e-12);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(sharing_rate(net, 2, 10, &n), -1);
    CU_ASSERT_EQUAL(n, 0);
    /* z ends at 1 ms (2 MB at 2 GB/s): x alone on B would take A's fair half (5 GB/s), more than
     * B's 4, so B still binds it at 4 GB/s and y gets A's remaining 6. */
    MsTime t = ms_network_next_time(net, 0);
    CU_ASSERT_EQUAL(t, ms_time_from_us(1000));
    ms_network_advance(net, t, on_done, &rec);
    ms_network_next_time(net, t);
    MS_ASSERT_REL(sharing_rate(net, 0, 10, &n), 4e9, 1e-12);
    MS_ASSERT_REL(sharing_rate(net, 0, 11, &n), 6e9, 1e-12);
    MS_ASSERT_REL(sharing_rate(net, 1, 10, &n), 4e9, 1e-12);
    CU_ASSERT_EQUAL(sharing_rate(net, 1, 12, &n), -1);
    CU_ASSERT_EQUAL(n, 1);
    g_array_unref(rec.done_at);
}

/* Runs a skewed all-to-all-v on 6 senders x 6 receivers (one link each) with the given solver
 * budget; returns the completion times and fills the stats. */
static GArray *
skewed_exchange(guint budget, MsNetworkStats *st)
{
    double bw[12];
    for (guint l = 0; l < 12; l++) {
        bw[l] = l == 7 ? 12.5e9 : 25e9;
    }
    g_autoptr(MsNetwork) net = ms_network_new(12, bw);
    ms_network_set_solver_budget(net, budget);
    ms_network_set_check_invariants(net, TRUE);
    static guint32 routes[36][2];
    Start s[36];
    guint n = 0;
    for (guint i = 0; i < 6; i++) {
        for (guint j = 0; j < 6; j++) {
            routes[n][0] = i;
            routes[n][1] = 6 + j;
            /* Receiver j gets about 1/(j+1) of the bytes; equal sizes make simultaneous ends. */
            guint64 bytes = (guint64)(1 + (i * 7 + j * 3) % 4) * 4000000 / (j + 1);
            s[n] =
                (Start){0, routes[n], 2, bytes, (i + j) % 3 == 0 ? 2.0 : 1.0, ms_time_from_us(1)};
            n++;
        }
    }
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, n, &rec);
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    ms_network_stats(net, st);
    return rec.done_at;
}

/* The propagation and the progressive-filling repair give the same completion times (to the
 * picosecond rounding of event times). */
static void
test_solver_budget(void)
{
    MsNetworkStats sf, sp;
    g_autoptr(GArray) fill = skewed_exchange(0, &sf);
    g_autoptr(GArray) prop = skewed_exchange(24, &sp);
    CU_ASSERT_EQUAL(sf.solver_propagations, 0);
    CU_ASSERT(sp.solver_propagations > 0);
    CU_ASSERT_EQUAL_FATAL(fill->len, 36);
    CU_ASSERT_EQUAL_FATAL(prop->len, 36);
    for (guint i = 0; i < 36; i++) {
        MsTime a = g_array_index(fill, MsTime, i), b = g_array_index(prop, MsTime, i);
        CU_ASSERT(a > ms_time_from_us(1) && (a > b ? a - b : b - a) <= 2 * MS_NETWORK_TIME_SLACK);
    }
}

/* The invariant checks report time going backwards with the two times. */
static void
test_invariant_time(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    ms_network_set_check_invariants(net, TRUE);
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    ms_network_advance(net, 100, on_done, &rec);
    CU_ASSERT_TRUE(ms_network_check(net, NULL));
    ms_network_advance(net, 50, on_done, &rec);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_network_check(net, &error));
    MS_ASSERT_ERROR(error, MS_NETWORK_ERROR, MS_NETWORK_ERROR_INVARIANT,
                    "time went backwards from 100 to 50 ps");
    g_array_unref(rec.done_at);
}

/* Advancing past a completion (skipping the event) is the caller's error; with checks on, the
 * flow that finishes late is reported with the bytes it had left (negative: it overran). */
static void
test_invariant_bytes(void)
{
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new(1, bw);
    ms_network_set_check_invariants(net, TRUE);
    guint32 l0 = 0;
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    ms_network_start(net, 0, 0, &l0, 1, 1000000, 1.0, 0);
    ms_network_advance(net, 0, on_done, &rec);
    CU_ASSERT_EQUAL(ms_network_next_time(net, 0), ms_time_from_us(1000));
    ms_network_advance(net, ms_time_from_us(1500), on_done, &rec);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_network_check(net, &error));
    MS_ASSERT_ERROR(error, MS_NETWORK_ERROR, MS_NETWORK_ERROR_INVARIANT,
                    "flow 0 finished with -500000 of 1000000 bytes not moved");
    g_array_unref(rec.done_at);
}

/* A sharing model that is the max-min solver on half of every capacity: the network must take
 * every capacity, solve and level through the interface it was given. */
static const MsShareClass *maxmin_share;

static guint32
half_add_constraint(gpointer s, double capacity)
{
    return maxmin_share->add_constraint(s, capacity / 2);
}

static void
test_share_model(void)
{
    maxmin_share = ms_share_lookup("maxmin");
    CU_ASSERT_PTR_NOT_NULL_FATAL(maxmin_share);
    CU_ASSERT_PTR_EQUAL(ms_share_lookup(MS_SHARE_DEFAULT), maxmin_share);
    CU_ASSERT_PTR_NULL(ms_share_lookup("per-packet"));
    CU_ASSERT_PTR_EQUAL(ms_share_nth(0), maxmin_share);
    guint n = 0;
    while (ms_share_nth(n)) {
        CU_ASSERT_PTR_EQUAL(ms_share_lookup(ms_share_nth(n)->name), ms_share_nth(n));
        n++;
    }
    CU_ASSERT(n >= 1);

    MsShareClass half = *maxmin_share;
    half.name = "half";
    half.add_constraint = half_add_constraint;
    double bw[1] = {1e9};
    g_autoptr(MsNetwork) net = ms_network_new_shared(1, bw, &half);
    CU_ASSERT_PTR_EQUAL(ms_network_share(net), &half);
    guint32 l0 = 0;
    /* Two equal flows on a link the model sees at 0.5 GB/s: 1 MB each at 0.25 GB/s, 4 ms. */
    Start s[] = {{0, &l0, 1, 1000000, 1.0, 0}, {0, &l0, 1, 1000000, 1.0, 0}};
    Record rec = {g_array_new(FALSE, TRUE, sizeof(MsTime))};
    drive(net, s, 2, &rec);
    CU_ASSERT_EQUAL(done(&rec, 0), ms_time_from_us(4000));
    CU_ASSERT_EQUAL(done(&rec, 1), ms_time_from_us(4000));
    g_array_unref(rec.done_at);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"single flow: latency + size/bandwidth", test_single_flow},
        {"late arrival gets its fair share", test_late_arrival_gets_fair_share},
        {"two bottlenecks over time", test_two_bottlenecks_timing},
        {"weighted flows", test_weighted_flows},
        {"unlimited links and empty flows", test_unlimited_and_empty},
        {"bandwidth change re-times flows", test_bandwidth_change},
        {"a cancelled flow leaves the sharing", test_cancel},
        {"link observer and stats", test_observer_and_stats},
        {"one group, rising level", test_group_clock},
        {"flow changes bottleneck group", test_flow_changes_group},
        {"link rates and weights", test_link_rates},
        {"flows sharing a link and their rates", test_link_sharing},
        {"propagation and fill repair agree", test_solver_budget},
        {"invariant: time order", test_invariant_time},
        {"invariant: bytes moved", test_invariant_bytes},
        {"sharing models: registry, a network made with one", test_share_model},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"network", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
