// A BSP program run over the simulator (see bsp_workload.hpp).
#include "bsp_workload.hpp"

#include <cstring>

namespace bspsim {

namespace {

constexpr uint32_t kHdr = 12;  // tag, superstep, index/count

std::vector<uint8_t> payload(char tag, int s, uint32_t v, int src, int dst, uint32_t size) {
    auto d = Sim::pattern(src, dst, (uint64_t(s) << 32) | v, std::max(size, kHdr));
    d[0] = static_cast<uint8_t>(tag);
    uint32_t su = static_cast<uint32_t>(s);
    std::memcpy(&d[1], &su, 4);
    std::memcpy(&d[5], &v, 4);
    return d;
}

}  // namespace

Workload total_exchange(int supersteps, int msgs_per_pair, uint32_t size) {
    Workload w;
    w.name = "total exchange";
    w.supersteps = supersteps;
    w.plan = [=](int, int, int) { return std::vector<uint32_t>(msgs_per_pair, size); };
    return w;
}

Workload cyclic_shift(int supersteps, int msgs, uint32_t size, int p) {
    Workload w;
    w.name = "cyclic shift";
    w.supersteps = supersteps;
    w.plan = [=](int, int i, int j) {
        return j == (i + 1) % p ? std::vector<uint32_t>(msgs, size) : std::vector<uint32_t>{};
    };
    return w;
}

Workload lu_like(int supersteps, int msgs, uint32_t size, int p) {
    Workload w;
    w.name = "LU-like";
    w.supersteps = supersteps;
    int cols = p >= 4 ? p / 2 : p;
    w.plan = [=](int s, int i, int j) {
        int ri = i / cols, ci = i % cols, rj = j / cols, cj = j % cols;
        bool east = rj == ri && cj == ci + 1;
        bool south = cj == ci && rj == ri + 1;
        // wavefront: in odd supersteps east, in even supersteps south, plus a trickle back
        bool west = rj == ri && cj + 1 == ci;
        if ((s % 2 == 1 && east) || (s % 2 == 0 && south))
            return std::vector<uint32_t>(msgs, size);
        if (west)
            return std::vector<uint32_t>(1, size);
        return std::vector<uint32_t>{};
    };
    return w;
}

BspRun::BspRun(Sim &sim, Workload w) : sim_(sim), w_(std::move(w)) {
    int p = sim_.nodes();
    st_.resize(p);
    for (auto &ns : st_) {
        ns.counts.assign(w_.supersteps + 2, std::vector<int>(p, -1));
        ns.data_got.assign(w_.supersteps + 2, std::vector<int>(p, 0));
    }
    for (int i = 0; i < p; i++)
        sim_.node(i).on_deliver = [this](Node &n, const Delivered &d) { on_deliver(n, d); };
}

void BspRun::on_deliver(Node &n, const Delivered &d) {
    if (d.data.size() < kHdr)
        return;
    uint32_t s, v;
    std::memcpy(&s, &d.data[1], 4);
    std::memcpy(&v, &d.data[5], 4);
    NodeState &ns = st_[n.id()];
    if (s >= ns.counts.size())
        return;
    if (d.data[0] == 'S')
        ns.counts[s][d.src] = static_cast<int>(v);
    else
        ns.data_got[s][d.src]++;
    int id = n.id();
    sim_.at(sim_.now(), [this, id] { progress(id); });
}

void BspRun::enter_barrier(int i, int s) {
    NodeState &ns = st_[i];
    ns.barrier = s;
    bool final = s > w_.supersteps;
    for (int j = 0; j < sim_.nodes(); j++) {
        if (j == i)
            continue;
        uint32_t n = final ? 0 : static_cast<uint32_t>(w_.plan(s, i, j).size());
        sim_.send(i, j, payload('S', s, n, i, j, kHdr),
                  BSPE_SEND_SYNC | (final ? BSPE_SEND_LAST : 0));
    }
    // Every member's barrier message is expected, as libbsp's messaging layer expects its
    // barrier partners' (bspe_expect): a lost packet of one is prodded for after a round trip
    // instead of waiting for its sender's timeout.
    Node &node = sim_.node(i);
    for (int j = 0; j < sim_.nodes(); j++)
        if (j != i && ns.counts[s][j] < 0)
            bspe_expect(node.ep(), node.chan_to(j), 1, BSPE_EXPECT_SYNC, sim_.now());
}

void BspRun::progress(int i) {
    NodeState &ns = st_[i];
    Node &node = sim_.node(i);
    int p = sim_.nodes();
    for (;;) {
        if (ns.barrier) {
            int s = ns.barrier;
            for (int j = 0; j < p; j++)
                if (j != i && ns.counts[s][j] < 0)
                    return;
            ns.barrier = 0;
            ns.epoch = s;
            ns.in_data = true;
            bspe_superstep_done(node.ep(), static_cast<uint32_t>(s), sim_.now());
            for (int j = 0; j < p; j++)
                if (j != i)
                    bspe_expect(node.ep(), node.chan_to(j), static_cast<uint32_t>(ns.counts[s][j]),
                                0, sim_.now());
            if (s <= w_.supersteps) {
                for (int k = 1; k < p; k++) {
                    int j = (i + k) % p;
                    auto sizes = w_.plan(s, i, j);
                    for (size_t m = 0; m < sizes.size(); m++) {
                        data_msgs_++;
                        sim_.send(i, j, payload('D', s, static_cast<uint32_t>(m), i, j, sizes[m]),
                                  m + 1 == sizes.size() ? BSPE_SEND_LAST : 0);
                    }
                }
            }
            continue;
        }
        if (ns.in_data) {
            int s = ns.epoch;
            for (int j = 0; j < p; j++)
                if (j != i && ns.data_got[s][j] < ns.counts[s][j])
                    return;
            ns.in_data = false;
            if (s > w_.supersteps) {
                ns.done = true;
                finish_time_ = std::max(finish_time_, sim_.now());
                return;
            }
            enter_barrier(i, s + 1);
            continue;
        }
        return;
    }
}

bool BspRun::finished() const {
    for (const auto &ns : st_)
        if (!ns.done)
            return false;
    return true;
}

bool BspRun::run(uint64_t horizon) {
    for (int i = 0; i < sim_.nodes(); i++) {
        int id = i;
        sim_.at(sim_.now(), [this, id] {
            enter_barrier(id, 1);
            progress(id);
        });
    }
    sim_.run_until_idle(horizon);
    return finished() && sim_.pending() == 0;
}

}  // namespace bspsim
