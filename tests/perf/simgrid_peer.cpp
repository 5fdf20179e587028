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
    int chain = -1;
};

static std::vector<Flow> flows;
static std::vector<sg4::SemaphorePtr> ready; /* per chain head with dependencies */
static std::vector<sg4::Host *> hosts;

/* Signals every successor outside the flow's own chain. */
static void
release(const Flow &f)
{
    for (int s : f.succ) {
        if (flows[s].chain != f.chain) {
            ready[s]->release();
        }
    }
}

/* Sends the flows of one dependency chain in order. */
static void
chain_actor(std::vector<int> chain)
{
    const Flow &head = flows[chain[0]];
    for (size_t i = 0; i < head.deps.size(); i++) {
        ready[chain[0]]->acquire();
    }
    for (int id : chain) {
        Flow &f = flows[id];
        if (f.start > sg4::Engine::get_clock()) {
            sg4::this_actor::sleep_until(f.start);
        }
        sg4::Comm::sendto(hosts[f.src], hosts[f.dst], (uint64_t)f.bytes);
        f.end = sg4::Engine::get_clock();
        release(f);
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

    /* Chains: follow unique successors that have a unique dependency. */
    ready.resize(n_flows);
    std::vector<int> batch;
    int n_chains = 0;
    for (size_t i = 0; i < n_flows; i++) {
        Flow &f = flows[i];
        bool continues = f.deps.size() == 1 && flows[f.deps[0]].succ.size() == 1;
        if (continues) {
            continue;
        }
        if (f.deps.empty() && f.succ.empty()) {
            f.chain = -2;
            batch.push_back((int)i);
            continue;
        }
        std::vector<int> chain{(int)i};
        f.chain = n_chains;
        for (int cur = (int)i; flows[cur].succ.size() == 1;) {
            int next = flows[cur].succ[0];
            if (flows[next].deps.size() != 1) {
                break;
            }
            flows[next].chain = n_chains;
            chain.push_back(next);
            cur = next;
        }
        for (int id : chain) {
            if (!flows[id].deps.empty()) {
                ready[id] = sg4::Semaphore::create(0);
            }
        }
        sg4::Actor::create("chain" + std::to_string(n_chains), hosts[f.src], chain_actor, chain);
        n_chains++;
    }
    for (size_t i = 0; i < n_flows; i++) {
        if (!flows[i].deps.empty() && !ready[i]) {
            ready[i] = sg4::Semaphore::create(0);
        }
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
