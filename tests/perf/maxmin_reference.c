/* maxmin_reference: an independent, slow, obviously exact replay of a bench_net scenario, to tell
 * which of moesim and SimGrid is off when they disagree. At every event it solves max-min
 * fairness from scratch by progressive filling (raise every unfrozen flow's rate together; the
 * link whose fair share of what is left is the smallest saturates and freezes its flows), in
 * doubles, sharing no code with moesim's solver. A flow takes part once its start time plus the
 * latencies of its links have passed, as in moesim and SimGrid's CM02.
 *
 *   maxmin_reference SCENARIO UNTIL_S
 *
 * SCENARIO is what `bench_net --child SCEN GPUS BUDGET SCENARIO ENDS` writes for the SimGrid peer
 * (tests/perf/simgrid_peer.cpp has the format); flows with dependencies are refused. Prints
 * "FLOW END_S" for every flow that ends before UNTIL_S. The work per event is every flow and
 * every link: keep UNTIL_S short on large scenarios. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    guint n_links, n_flows;
    double *capacity; /* [link] B/s */
    guint *route_at;  /* [flow + 1]: the flow's links are routes[route_at[f] .. route_at[f+1]) */
    guint *routes;
    double *bytes;     /* [flow] */
    double *active_at; /* [flow] start + route latency */
} Scenario;

static void
scenario_clear(Scenario *sc)
{
    g_free(sc->capacity);
    g_free(sc->route_at);
    g_free(sc->routes);
    g_free(sc->bytes);
    g_free(sc->active_at);
}

static gboolean
read_scenario(const char *path, Scenario *sc)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        return FALSE;
    }
    char word[16];
    guint hosts = 0;
    gboolean ok = fscanf(in, "%15s %u", word, &sc->n_links) == 2;
    sc->capacity = g_new(double, sc->n_links);
    g_autofree double *latency = g_new(double, sc->n_links);
    for (guint l = 0; ok && l < sc->n_links; l++) {
        ok = fscanf(in, "%lf %lf", &sc->capacity[l], &latency[l]) == 2 && sc->capacity[l] > 0;
    }
    ok = ok && fscanf(in, "%15s %u %15s %u", word, &hosts, word, &sc->n_flows) == 4;
    sc->route_at = g_new0(guint, sc->n_flows + 1);
    sc->bytes = g_new(double, sc->n_flows);
    sc->active_at = g_new(double, sc->n_flows);
    GArray *routes = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint f = 0; ok && f < sc->n_flows; f++) {
        guint src, dst, hops, deps;
        double start;
        ok = fscanf(in, "%u %u %lf %lf %u", &src, &dst, &sc->bytes[f], &start, &hops) == 5;
        sc->active_at[f] = start;
        for (guint k = 0; ok && k < hops; k++) {
            guint l;
            ok = fscanf(in, "%u", &l) == 1 && l < sc->n_links;
            if (ok) {
                g_array_append_val(routes, l);
                sc->active_at[f] += latency[l];
            }
        }
        ok = ok && fscanf(in, "%u", &deps) == 1 && deps == 0;
        sc->route_at[f + 1] = routes->len;
    }
    fclose(in);
    sc->routes = (guint *)g_array_free(routes, FALSE);
    return ok;
}

/* A candidate bottleneck: a link and its fair share when offered; stale once the link changed. */
typedef struct {
    double share;
    guint link, version;
} Candidate;

typedef struct {
    const Scenario *sc;
    guint *count, *version, *first, *members; /* per link: unfrozen flows, and their list */
    double *left;                             /* per link: capacity not yet given out */
    gboolean *frozen;
    GArray *heap; /* of Candidate, a binary min-heap on share */
} Solver;

static Candidate *
at(Solver *s, guint i)
{
    return &g_array_index(s->heap, Candidate, i);
}

static void
swap(Solver *s, guint i, guint j)
{
    Candidate t = *at(s, i);
    *at(s, i) = *at(s, j);
    *at(s, j) = t;
}

static void
offer(Solver *s, guint l)
{
    if (s->count[l] == 0) {
        return;
    }
    Candidate c = {s->left[l] / s->count[l], l, ++s->version[l]};
    g_array_append_val(s->heap, c);
    for (guint i = s->heap->len - 1; i > 0 && at(s, (i - 1) / 2)->share > at(s, i)->share;
         i = (i - 1) / 2) {
        swap(s, i, (i - 1) / 2);
    }
}

static Candidate
take_smallest(Solver *s)
{
    Candidate top = *at(s, 0);
    *at(s, 0) = *at(s, s->heap->len - 1);
    g_array_set_size(s->heap, s->heap->len - 1);
    for (guint i = 0;;) {
        guint m = i, a = 2 * i + 1, b = a + 1;
        m = a < s->heap->len && at(s, a)->share < at(s, m)->share ? a : m;
        m = b < s->heap->len && at(s, b)->share < at(s, m)->share ? b : m;
        if (m == i) {
            return top;
        }
        swap(s, i, m);
        i = m;
    }
}

/* Progressive filling over the active flows; rate[f] for each of them. */
static void
solve(Solver *s, const gboolean *active, double *rate)
{
    const Scenario *sc = s->sc;
    for (guint l = 0; l < sc->n_links; l++) {
        s->count[l] = 0;
        s->left[l] = sc->capacity[l];
    }
    for (guint f = 0; f < sc->n_flows; f++) {
        for (guint k = sc->route_at[f]; active[f] && k < sc->route_at[f + 1]; k++) {
            s->count[sc->routes[k]]++;
        }
    }
    s->first[0] = 0;
    for (guint l = 0; l < sc->n_links; l++) {
        s->first[l + 1] = s->first[l] + s->count[l];
    }
    g_autofree guint *fill = g_memdup2(s->first, sizeof(guint) * sc->n_links);
    for (guint f = 0; f < sc->n_flows; f++) {
        s->frozen[f] = !active[f];
        for (guint k = sc->route_at[f]; active[f] && k < sc->route_at[f + 1]; k++) {
            s->members[fill[sc->routes[k]]++] = f;
        }
    }
    for (guint l = 0; l < sc->n_links; l++) {
        offer(s, l);
    }
    while (s->heap->len > 0) {
        Candidate c = take_smallest(s);
        guint l = c.link;
        if (c.version != s->version[l] || s->count[l] == 0) {
            continue;
        }
        double share = s->left[l] / s->count[l];
        for (guint j = s->first[l]; j < s->first[l + 1]; j++) {
            guint f = s->members[j];
            if (s->frozen[f]) {
                continue;
            }
            s->frozen[f] = TRUE;
            rate[f] = share;
            for (guint k = sc->route_at[f]; k < sc->route_at[f + 1]; k++) {
                guint m = sc->routes[k];
                s->left[m] -= share;
                s->count[m]--;
                if (m != l) {
                    offer(s, m);
                }
            }
        }
    }
}

int
main(int argc, char **argv)
{
    Scenario sc = {0};
    if (argc != 3 || !read_scenario(argv[1], &sc)) {
        fprintf(stderr, "usage: maxmin_reference SCENARIO UNTIL_S (a scenario without "
                        "dependencies, as bench_net writes it for the SimGrid peer)\n");
        scenario_clear(&sc);
        return 2;
    }
    double until = g_ascii_strtod(argv[2], NULL);
    Solver s = {&sc,
                g_new(guint, sc.n_links),
                g_new0(guint, sc.n_links),
                g_new(guint, sc.n_links + 1),
                g_new(guint, sc.route_at[sc.n_flows]),
                g_new(double, sc.n_links),
                g_new(gboolean, sc.n_flows),
                g_array_new(FALSE, FALSE, sizeof(Candidate))};
    g_autofree gboolean *active = g_new0(gboolean, sc.n_flows);
    g_autofree gboolean *done = g_new0(gboolean, sc.n_flows);
    g_autofree double *rate = g_new0(double, sc.n_flows);
    g_autofree double *left = g_memdup2(sc.bytes, sizeof(double) * sc.n_flows);
    double now = 0;
    guint events = 0;
    for (;;) {
        for (guint f = 0; f < sc.n_flows; f++) {
            active[f] = !done[f] && sc.active_at[f] <= now;
        }
        solve(&s, active, rate);
        double next = INFINITY;
        for (guint f = 0; f < sc.n_flows; f++) {
            double t = active[f] ? now + left[f] / rate[f] : done[f] ? INFINITY : sc.active_at[f];
            next = MIN(next, t);
        }
        if (!(next < until)) {
            break;
        }
        for (guint f = 0; f < sc.n_flows; f++) {
            if (active[f]) {
                left[f] -= rate[f] * (next - now);
                /* what rounding leaves of a flow that ends now */
                if (left[f] <= sc.bytes[f] * 1e-12 + 1e-9) {
                    done[f] = TRUE;
                    printf("%u %.17g\n", f, next);
                }
            }
        }
        now = next;
        events++;
    }
    fprintf(stderr, "maxmin_reference: %u events up to %.9g s\n", events, now);
    g_free(s.count);
    g_free(s.version);
    g_free(s.first);
    g_free(s.members);
    g_free(s.left);
    g_free(s.frozen);
    g_array_unref(s.heap);
    scenario_clear(&sc);
    return 0;
}
