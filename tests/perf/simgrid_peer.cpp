/* simgrid_peer: replays a flow scenario written by bench_net on SimGrid's CM02 max-min network
 * model, so that moesim's predictions and speed can be compared with a reference flow-level
 * simulator in the same run. Built only when SimGrid is found (meson feature 'peer').
 *
 * Input (text): "links N" then N lines "bandwidth_Bps latency_s"; "hosts H"; "flows F" then F
 * lines "src dst bytes start_s n_links l1 .. ln n_deps d1 .. dn" (hosts and links are indices,
 * dependencies are indices of earlier flows). Output: one line per flow with its completion time
 * in seconds (%.17g), then "wall SECONDS" and "cpu SECONDS" (process CPU time) of the
 * simulation, platform set-up included. */
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Flow {
    int src, dst;
    double bytes, start;
    std::vector<int> links, deps, succ;
    double end = -1;
    int parent = -1; /* the dependency whose chain this flow continues */
    int next = -1;   /* the flow that continues this one's chain */
};

static std::vector<Flow> flows;
static std::vector<sg4::SemaphorePtr> ready; /* per flow waiting for other chains */
static std::vector<sg4::Host *> hosts;

/* Signals every successor that does not continue the flow's chain. */
static void
release(int id)
{
    for (int s : flows[id].succ) {
        if (flows[s].parent != id) {
            ready[s]->release();
        }
    }
}

/* Sends the flows of one dependency chain in order, each after its dependencies in other
 * chains. */
static void
chain_actor(std::vector<int> chain)
{
    for (int id : chain) {
        Flow &f = flows[id];
        for (size_t k = f.parent >= 0 ? 1 : 0; k < f.deps.size(); k++) {
            ready[id]->acquire();
        }
        if (f.start > sg4::Engine::get_clock()) {
            sg4::this_actor::sleep_until(f.start);
        }
        sg4::Comm::sendto(hosts[f.src], hosts[f.dst], (uint64_t)f.bytes);
        f.end = sg4::Engine::get_clock();
        release(id);
    }
}

/* Flows with neither dependencies nor successors: start them all, then wait for all. */
static void
batch_actor(std::vector<int> ids)
{
    std::vector<sg4::CommPtr> comms;
    comms.reserve(ids.size());
    for (int id : ids) {
        const Flow &f = flows[id];
        if (f.start > sg4::Engine::get_clock()) {
            sg4::this_actor::sleep_until(f.start);
        }
        comms.push_back(sg4::Comm::sendto_async(hosts[f.src], hosts[f.dst], (uint64_t)f.bytes));
    }
    sg4::Comm::wait_all(comms);
    for (size_t i = 0; i < ids.size(); i++) {
        flows[ids[i]].end = comms[i]->get_finish_time();
    }
}

int
main(int argc, char **argv)
{
    sg4::Engine e(&argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: simgrid_peer SCENARIO\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    std::string word;
    size_t n_links, n_hosts, n_flows;
    in >> word >> n_links;
    std::vector<std::pair<double, double>> links(n_links);
    for (auto &l : links) {
        in >> l.first >> l.second;
    }
    in >> word >> n_hosts >> word >> n_flows;
    flows.resize(n_flows);
    for (size_t i = 0; i < n_flows; i++) {
        Flow &f = flows[i];
        size_t k;
        in >> f.src >> f.dst >> f.bytes >> f.start >> k;
        f.links.resize(k);
        for (auto &l : f.links) {
            in >> l;
        }
        in >> k;
        f.deps.resize(k);
        for (auto &d : f.deps) {
            in >> d;
            flows[d].succ.push_back((int)i);
        }
    }
    if (!in) {
        std::fprintf(stderr, "simgrid_peer: malformed scenario %s\n", argv[1]);
        return 2;
    }

    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();
    auto *zone = sg4::create_full_zone("world");
    for (size_t h = 0; h < n_hosts; h++) {
        hosts.push_back(zone->create_host("h" + std::to_string(h), 1e9));
    }
    std::vector<sg4::Link *> sglinks;
    for (size_t l = 0; l < n_links; l++) {
        sglinks.push_back(zone->create_link("l" + std::to_string(l), links[l].first)
                              ->set_latency(links[l].second)
                              ->seal());
    }
    std::map<std::pair<int, int>, bool> routed;
    for (const Flow &f : flows) {
        if (f.src == f.dst || routed[{f.src, f.dst}]) {
            continue;
        }
        routed[{f.src, f.dst}] = true;
        std::vector<sg4::LinkInRoute> route;
        for (int l : f.links) {
            route.emplace_back(sglinks[l]);
        }
        zone->add_route(hosts[f.src]->get_netpoint(), hosts[f.dst]->get_netpoint(), nullptr,
                        nullptr, route, false);
    }
    zone->seal();

    /* Chains: a flow continues the chain of one of its dependencies that no other flow
     * continues, preferably one leaving the same host (a ring connection's earlier step), so
     * that a chain is one actor sending in order; its other dependencies signal a semaphore. */
    ready.resize(n_flows);
    std::vector<int> batch, heads;
    for (size_t i = 0; i < n_flows; i++) {
        Flow &f = flows[i];
        if (f.deps.empty() && f.succ.empty()) {
            batch.push_back((int)i);
            continue;
        }
        for (int d : f.deps) {
            if (flows[d].next < 0 && (f.parent < 0 || flows[d].src == f.src)) {
                f.parent = d;
            }
        }
        if (f.parent >= 0) {
            flows[f.parent].next = (int)i;
        } else {
            heads.push_back((int)i);
        }
        if (f.deps.size() > (f.parent >= 0 ? 1u : 0u)) {
            ready[i] = sg4::Semaphore::create(0);
        }
    }
    for (int head : heads) {
        std::vector<int> chain;
        for (int id = head; id >= 0; id = flows[id].next) {
            chain.push_back(id);
        }
        sg4::Actor::create("chain" + std::to_string(head), hosts[flows[head].src], chain_actor,
                           chain);
    }
    if (!batch.empty()) {
        sg4::Actor::create("batch", hosts[flows[batch[0]].src], batch_actor, batch);
    }
    e.run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
    for (const Flow &f : flows) {
        std::printf("%.17g\n", f.end);
    }
    std::printf("wall %.6f\ncpu %.6f\n", wall, cpu);
    return 0;
}
