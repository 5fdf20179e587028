/* Tests of the simulation core: events ordered by (time, insertion), events scheduled for the
 * current instant, the instant-end call, one bandwidth solve per instant, run_until, transfer
 * handlers and their errors, statistics. */
#include "ms_test.h"
#include "sim/sim.h"
#include "topologies/topology.h"

static MsTopology *topo; /* dgx-a100-2node */

static int
suite_init(void)
{
    topo = ms_topology_load("dgx-a100-2node", NULL);
    return topo ? 0 : 1;
}

static int
suite_clean(void)
{
    g_clear_pointer(&topo, ms_topology_free);
    return 0;
}

typedef struct {
    GArray *order; /* arg of each event run, in run order */
    GArray *when;  /* ms_sim_now() when it ran */
} Log;

static void
log_init(Log *l)
{
    l->order = g_array_new(FALSE, FALSE, sizeof(guint64));
    l->when = g_array_new(FALSE, FALSE, sizeof(MsTime));
}

static void
log_clear(Log *l)
{
    g_array_unref(l->order);
    g_array_unref(l->when);
}

static void
record(MsSim *sim, gpointer ctx, guint64 arg)
{
    Log *l = ctx;
    MsTime now = ms_sim_now(sim);
    g_array_append_val(l->order, arg);
    g_array_append_val(l->when, now);
}

static guint64
at(const GArray *a, guint i)
{
    return g_array_index(a, guint64, i);
}

static void
test_order(void)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    Log l;
    log_init(&l);
    const MsTime times[] = {5, 1, 3, 1, 5, 0, 3, 1};
    for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
        ms_sim_at(sim, times[i], record, &l, i);
    }
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    const guint64 want[] = {5, 1, 3, 7, 2, 6, 0, 4};
    CU_ASSERT_EQUAL_FATAL(l.order->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT_EQUAL(at(l.order, i), want[i]);
        CU_ASSERT_EQUAL(g_array_index(l.when, MsTime, i), times[want[i]]);
    }
    CU_ASSERT_EQUAL(ms_sim_now(sim), 5);
    log_clear(&l);

    /* Many events on few distinct times: time never decreases; ties keep insertion order. */
    g_autoptr(MsSim) big = ms_sim_new(topo);
    log_init(&l);
    g_autoptr(GRand) rand = g_rand_new_with_seed(42);
    for (guint i = 0; i < 5000; i++) {
        ms_sim_at(big, g_rand_int_range(rand, 0, 50) * MS_PS_PER_NS, record, &l, i);
    }
    CU_ASSERT_TRUE(ms_sim_run(big, NULL));
    CU_ASSERT_EQUAL_FATAL(l.order->len, 5000);
    guint bad = 0;
    for (guint i = 1; i < 5000; i++) {
        MsTime t0 = g_array_index(l.when, MsTime, i - 1), t1 = g_array_index(l.when, MsTime, i);
        bad += t1 < t0 || (t1 == t0 && at(l.order, i) < at(l.order, i - 1));
    }
    CU_ASSERT_EQUAL(bad, 0);
    MsSimStats st;
    ms_sim_stats(big, &st);
    CU_ASSERT_EQUAL(st.queue_events, 5000);
    CU_ASSERT_EQUAL(st.events, 5000);
    log_clear(&l);
}

/* An event may schedule more for the current instant: they run in this instant, after what was
 * already queued for it, before anything later. */
typedef struct {
    Log log;
} Chain;

static void
spawn(MsSim *sim, gpointer ctx, guint64 arg)
{
    Chain *c = ctx;
    record(sim, &c->log, arg);
    if (arg == 1) {
        ms_sim_at(sim, ms_sim_now(sim), record, &c->log, 10);
        ms_sim_at(sim, ms_sim_now(sim) + 1, record, &c->log, 11);
        ms_sim_at(sim, ms_sim_now(sim), spawn, c, 12);
    } else if (arg == 12) {
        ms_sim_at(sim, ms_sim_now(sim), record, &c->log, 13);
    }
}

static void
test_same_instant(void)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    Chain c;
    log_init(&c.log);
    ms_sim_at(sim, 100, spawn, &c, 1);
    ms_sim_at(sim, 100, record, &c.log, 2);
    ms_sim_at(sim, 101, record, &c.log, 3);
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    const guint64 want[] = {1, 2, 10, 12, 13, 3, 11};
    const MsTime when[] = {100, 100, 100, 100, 100, 101, 101};
    CU_ASSERT_EQUAL_FATAL(c.log.order->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT_EQUAL(at(c.log.order, i), want[i]);
        CU_ASSERT_EQUAL(g_array_index(c.log.when, MsTime, i), when[i]);
    }
    log_clear(&c.log);
}

/* The instant-end call: recorded as 99, it schedules 5 for the same instant. */
static void
instant_end(MsSim *sim, gpointer ctx, guint64 arg)
{
    CU_ASSERT_EQUAL(arg, 0);
    record(sim, ctx, 99);
    ms_sim_at(sim, ms_sim_now(sim), record, ctx, 5);
}

/* Records 1, asks for the instant's end (twice: one call) and schedules 2 for the instant. */
static void
ask_end(MsSim *sim, gpointer ctx, guint64 arg)
{
    record(sim, ctx, arg);
    ms_sim_at_instant_end(sim, instant_end, ctx);
    ms_sim_at_instant_end(sim, instant_end, ctx);
    ms_sim_at(sim, ms_sim_now(sim), record, ctx, 2);
}

/* The instant-end call runs once, after every event of its instant (those already queued and
 * those they add), and what it schedules for the instant runs after it, before the next one. */
static void
test_instant_end(void)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    Log l;
    log_init(&l);
    ms_sim_at(sim, 100, ask_end, &l, 1);
    ms_sim_at(sim, 100, record, &l, 3);
    ms_sim_at(sim, 101, record, &l, 4);
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    const guint64 want[] = {1, 3, 2, 99, 5, 4};
    const MsTime when[] = {100, 100, 100, 100, 100, 101};
    CU_ASSERT_EQUAL_FATAL(l.order->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT_EQUAL(at(l.order, i), want[i]);
        CU_ASSERT_EQUAL(g_array_index(l.when, MsTime, i), when[i]);
    }
    log_clear(&l);
}

typedef struct {
    guint32 handler;
    guint64 bytes;
    guint dst;
} Starter;

static void
start_transfer(MsSim *sim, gpointer ctx, guint64 arg)
{
    Starter *s = ctx;
    CU_ASSERT_TRUE(ms_sim_transfer(sim, ms_topology_gpu_device(topo, 0),
                                   ms_topology_gpu_device(topo, s->dst + (guint)arg), s->bytes, 1.0,
                                   s->handler, arg, NULL));
}

static void
record_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    record(sim, ctx, arg);
}

/* Four transfers through gpu0's NIC started by one event or by four events of the same instant:
 * the same single solve, the same completion times (4 x S at 25 GB/s after the latency). */
static void
test_one_solve_per_instant(void)
{
    MsSimStats st[3];
    MsTime end[3][4];
    for (guint mode = 0; mode < 3; mode++) {
        g_autoptr(MsSim) sim = ms_sim_new(topo);
        ms_sim_set_check_invariants(sim, TRUE);
        Log l;
        log_init(&l);
        Starter s = {ms_sim_add_handler(sim, record_done, &l), 25000000, 8};
        for (guint k = 0; k < 4; k++) {
            if (mode == 0) {
                start_transfer(sim, &s, k);
            } else {
                /* mode 2: one nanosecond apart, four instants */
                ms_sim_at(sim, mode == 1 ? 0 : k * MS_PS_PER_NS, start_transfer, &s, k);
            }
        }
        CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
        ms_sim_stats(sim, &st[mode]);
        CU_ASSERT_EQUAL_FATAL(l.order->len, 4);
        for (guint k = 0; k < 4; k++) {
            end[mode][at(l.order, k)] = g_array_index(l.when, MsTime, k);
        }
        log_clear(&l);
    }
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, 0, 8, &n, NULL);
    double a = ms_time_to_s(ms_topology_route_latency(topo, route, n));
    for (guint k = 0; k < 4; k++) {
        MS_ASSERT_REL(ms_time_to_s(end[0][k]), a + 4 * 25e6 / 25e9, 1e-9);
        CU_ASSERT_EQUAL(end[1][k], end[0][k]);
    }
    CU_ASSERT_EQUAL(st[0].net.solves, st[1].net.solves);
    /* One solve when the four become active together, one when they leave together. */
    CU_ASSERT_EQUAL(st[0].net.solves, 2);
    CU_ASSERT_EQUAL(st[0].net.flows_started, 4);
    CU_ASSERT_EQUAL(st[0].net.flows_completed, 4);
    CU_ASSERT_EQUAL(st[0].queue_events, 0);
    CU_ASSERT_EQUAL(st[1].queue_events, 4);
    CU_ASSERT_EQUAL(st[1].events, 4 + st[1].net.events);
    CU_ASSERT_EQUAL(st[1].net.events, 8); /* 4 activations, 4 completions */
    CU_ASSERT_TRUE(st[2].net.solves > st[1].net.solves);
}

static void
test_run_until(void)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    Log l;
    log_init(&l);
    ms_sim_at(sim, 0, record, &l, 0);
    ms_sim_at(sim, 10, record, &l, 10);
    ms_sim_at(sim, 20, record, &l, 20);
    ms_sim_at(sim, 30, record, &l, 30);
    /* Strictly before the limit; the clock stops at the limit. */
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 0, NULL));
    CU_ASSERT_EQUAL(l.order->len, 0);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 20, NULL));
    CU_ASSERT_EQUAL(l.order->len, 2);
    CU_ASSERT_EQUAL(ms_sim_now(sim), 20);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 20, NULL));
    CU_ASSERT_EQUAL(l.order->len, 2);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 15, NULL)); /* a limit in the past does nothing */
    CU_ASSERT_EQUAL(l.order->len, 2);
    CU_ASSERT_EQUAL(ms_sim_now(sim), 20);
    /* New events may be scheduled at the current time, and run with the next call. */
    ms_sim_at(sim, 20, record, &l, 21);
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 25, NULL));
    CU_ASSERT_EQUAL_FATAL(l.order->len, 4);
    CU_ASSERT_EQUAL(at(l.order, 2), 20);
    CU_ASSERT_EQUAL(at(l.order, 3), 21);
    CU_ASSERT_EQUAL(ms_sim_now(sim), 25);
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_EQUAL(l.order->len, 5);
    CU_ASSERT_EQUAL(ms_sim_now(sim), 30);
    /* Nothing left: the clock stays at the last event. */
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 100, NULL));
    CU_ASSERT_EQUAL(ms_sim_now(sim), 30);
    log_clear(&l);
}

/* Stopping in the middle of a transfer changes nothing about when it ends. */
static void
test_run_until_mid_transfer(void)
{
    MsTime end[2];
    for (guint stop = 0; stop < 2; stop++) {
        g_autoptr(MsSim) sim = ms_sim_new(topo);
        Log l;
        log_init(&l);
        Starter s = {ms_sim_add_handler(sim, record_done, &l), 25000000, 8};
        start_transfer(sim, &s, 0);
        ms_sim_at(sim, ms_time_from_us(300), start_transfer, &s, 1);
        if (stop) {
            CU_ASSERT_TRUE(ms_sim_run_until(sim, ms_time_from_us(500), NULL));
            CU_ASSERT_EQUAL(l.order->len, 0);
            CU_ASSERT_EQUAL(ms_network_n_live_flows(ms_sim_network(sim)), 2);
            MS_ASSERT_REL(
                ms_network_link_rate(ms_sim_network(sim),
                                     ms_topology_gpu_route(topo, 0, 8, &(guint){0}, NULL)[1]),
                25e9, 1e-12);
        }
        CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
        CU_ASSERT_EQUAL_FATAL(l.order->len, 2);
        end[stop] = g_array_index(l.when, MsTime, 1);
        log_clear(&l);
    }
    CU_ASSERT_EQUAL(end[0], end[1]);
}

static void
count_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    guint64 *sum = ctx;
    *sum += arg;
}

static void
test_handlers(void)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    CU_ASSERT_PTR_EQUAL(ms_sim_topology(sim), topo);
    CU_ASSERT_EQUAL(ms_network_n_links(ms_sim_network(sim)), ms_topology_n_links(topo));
    guint64 a = 0, b = 0;
    guint32 ha = ms_sim_add_handler(sim, count_done, &a);
    guint32 hb = ms_sim_add_handler(sim, count_done, &b);
    CU_ASSERT_NOT_EQUAL(ha, hb);
    guint g0 = ms_topology_gpu_device(topo, 0), g1 = ms_topology_gpu_device(topo, 1);
    guint64 big_arg = (G_GUINT64_CONSTANT(1) << 40) - 1;
    CU_ASSERT_TRUE(ms_sim_transfer(sim, g0, g1, 1000, 1.0, ha, 5, NULL));
    CU_ASSERT_TRUE(ms_sim_transfer(sim, g1, g0, 1000, 2.0, hb, big_arg, NULL));
    CU_ASSERT_TRUE(ms_sim_transfer(sim, g0, g1, 0, 1.0, ha, 7, NULL));
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_EQUAL(a, 12);
    CU_ASSERT_EQUAL(b, big_arg);
    /* A removed handler's id is reused. */
    ms_sim_remove_handler(sim, ha);
    guint32 hc = ms_sim_add_handler(sim, count_done, &b);
    CU_ASSERT_EQUAL(hc, ha);
    CU_ASSERT_TRUE(ms_sim_transfer(sim, g0, g1, 1000, 1.0, hc, 1, NULL));
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_EQUAL(a, 12);
    CU_ASSERT_EQUAL(b, big_arg + 1);
}

static void
test_transfer_errors(void)
{
    GError *error = NULL;
    /* g1 links to switch x, but GPUs do not forward: g0 cannot reach x. */
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "tests", "data", "unreachable.ini", NULL);
    g_autoptr(MsTopology) u = ms_topology_load(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    g_autoptr(MsSim) sim = ms_sim_new(u);
    guint64 sum = 0;
    guint32 h = ms_sim_add_handler(sim, count_done, &sum);
    guint g0 = 0, x = 0;
    CU_ASSERT_TRUE(ms_topology_find_device(u, "g0", &g0) && ms_topology_find_device(u, "x", &x));
    CU_ASSERT_FALSE(ms_sim_transfer(sim, g0, x, 1000, 1.0, h, 1, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNREACHABLE,
                    "no route from g0 to x");
    CU_ASSERT_TRUE(ms_sim_run(sim, NULL));
    CU_ASSERT_EQUAL(sum, 0);
    MsSimStats st;
    ms_sim_stats(sim, &st);
    CU_ASSERT_EQUAL(st.net.flows_started, 0);
}

static void
start_petabyte(MsSim *sim, gpointer ctx, guint64 arg)
{
    guint g0 = ms_topology_gpu_device(topo, 0), g8 = ms_topology_gpu_device(topo, 8);
    CU_ASSERT_TRUE(ms_sim_transfer(sim, g0, g8, MS_BYTES_MAX, 1.0, (guint32)arg, 1, NULL));
}

/* Regression: a transfer ending beyond 2^64 ps saturated at the clock's end and the run spun
 * there forever; a delay added to a late clock wrapped around into the past (a GLib critical,
 * the event dropped and the step time silently wrong). Both now stop the run with an error. */
static void
test_clock_end(void)
{
    GError *error = NULL;
    Log l;
    log_init(&l);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_after(sim, 5, record, &l, 1);
    ms_sim_after(sim, MS_TIME_NEVER, record, &l, 2);
    CU_ASSERT_FALSE(ms_sim_run(sim, &error));
    MS_ASSERT_ERROR(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK, "the end of the clock");
    CU_ASSERT_EQUAL_FATAL(l.order->len, 1);
    CU_ASSERT_EQUAL(g_array_index(l.when, MsTime, 0), 5);
    /* A run that stops short of the end is fine. */
    CU_ASSERT_TRUE(ms_sim_run_until(sim, 1000, NULL));
    log_clear(&l);

    /* 1 PiB over a 25 GB/s NIC takes 45036 s: started 1000 s before the end, it cannot finish. */
    g_autoptr(MsSim) late = ms_sim_new(topo);
    guint64 done = 0;
    guint32 h = ms_sim_add_handler(late, count_done, &done);
    ms_sim_at(late, MS_SIM_CLOCK_END - 1000 * MS_PS_PER_S, start_petabyte, NULL, h);
    CU_ASSERT_FALSE(ms_sim_run(late, &error));
    MS_ASSERT_ERROR(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK, "the end of the clock");
    CU_ASSERT_EQUAL(done, 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"events ordered by time, then insertion", test_order},
        {"events scheduled for the current instant", test_same_instant},
        {"the instant-end call", test_instant_end},
        {"one bandwidth solve per instant", test_one_solve_per_instant},
        {"run_until runs events strictly before the limit", test_run_until},
        {"run_until in the middle of a transfer", test_run_until_mid_transfer},
        {"transfer handlers", test_handlers},
        {"transfer without a route", test_transfer_errors},
        {"runs stop at the clock's end", test_clock_end},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sim", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
