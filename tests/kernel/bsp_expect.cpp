// Guest program of the kernel_expect VM case: a superstep's messages from one peer, the last
// of which the XDP fault injector loses once. With BSP_EXPECT the receiver knows a message is
// missing and prods the sender (recovery by retx_prod); without it only the sender's timeout
// probe recovers it (retx_timeout). Prints the sender's engine counters.
//
//   bsp_expect recv PORT PEER_NODE PEER_PORT COUNT EXPECT(0|1)
//   bsp_expect send PEER_NODE PEER_PORT LOCAL_PORT COUNT
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ktest.hpp"

namespace {

constexpr size_t kSize = 100;

struct Group2 {
    uint32_t count, reserved;
    bsp_endpoint m[2];
};

// The two-member group {this socket, peer}: both sides list it in the same order.
void join(int fd, uint32_t a_node, uint16_t a_port, uint32_t b_node, uint16_t b_port) {
    Group2 g{};
    g.count = 2;
    g.m[0] = {a_node, a_port, 0};
    g.m[1] = {b_node, b_port, 0};
    if (setsockopt(fd, SOL_BSP, BSP_GROUP, &g, sizeof(g)) != 0) {
        std::perror("BSP_GROUP");
        std::exit(1);
    }
}

int do_recv(uint16_t port, uint32_t peer_node, uint16_t peer_port, uint32_t count, bool expect) {
    int fd = ktest::bound_socket(port);
    join(fd, peer_node, peer_port, ktest::node_id(), port);
    if (expect) {
        bsp_expect e{};
        e.peer = {peer_node, peer_port, 0};
        e.messages = count;
        e.bytes = uint64_t(count) * kSize;
        if (setsockopt(fd, SOL_BSP, BSP_EXPECT, &e, sizeof(e)) != 0) {
            std::perror("BSP_EXPECT");
            return 1;
        }
    }
    std::printf("ready\n");
    std::fflush(stdout);
    std::vector<uint8_t> buf(kSize + 1);
    for (uint32_t i = 0; i < count; ++i) {
        ssize_t r = recv(fd, buf.data(), buf.size(), 0);
        if (r != ssize_t(kSize) || ktest::verify(buf.data(), kSize, peer_node, i) >= 0) {
            std::fprintf(stderr, "message %u: %zd bytes or wrong content\n", i, r);
            return 1;
        }
    }
    std::printf("recv ok %u\n", count);
    std::fflush(stdout);
    // closing acknowledges everything received (CLOSE): the sender settles at once
    close(fd);
    return 0;
}

int do_send(uint32_t peer_node, uint16_t peer_port, uint16_t local_port, uint32_t count) {
    int fd = ktest::bound_socket(local_port);
    join(fd, peer_node, peer_port, ktest::node_id(), local_port);
    sockaddr_bsp to = ktest::addr(peer_node, peer_port);
    std::vector<uint8_t> m(kSize);
    for (uint32_t i = 0; i < count; ++i) {
        ktest::fill(m, ktest::node_id(), i);
        iovec iov = {m.data(), m.size()};
        alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(uint32_t))] = {};
        msghdr mh{};
        mh.msg_name = &to;
        mh.msg_namelen = sizeof(to);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        if (i + 1 == count) {  // the superstep's last message to this peer
            uint32_t flags = BSP_SEND_LAST;
            mh.msg_control = cbuf;
            mh.msg_controllen = sizeof(cbuf);
            cmsghdr *cm = CMSG_FIRSTHDR(&mh);
            cm->cmsg_level = SOL_BSP;
            cm->cmsg_type = BSP_CMSG_SEND;
            cm->cmsg_len = CMSG_LEN(sizeof(flags));
            std::memcpy(CMSG_DATA(cm), &flags, sizeof(flags));
        }
        if (sendmsg(fd, &mh, 0) != ssize_t(kSize)) {
            std::perror("sendmsg");
            return 1;
        }
    }
    // every message settled (bounded: 20 s)
    ktest::wait_settled(fd, 20000);
    bsp_proto_stats st{};
    socklen_t len = sizeof(st);
    if (getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &st, &len) != 0) {
        std::perror("BSP_PROTO_STATS");
        return 1;
    }
    std::printf("STATS msgs_tx=%llu retx_prod=%llu retx_timeout=%llu retx_hole=%llu\n",
                (unsigned long long)st.msgs_tx, (unsigned long long)st.retx_prod,
                (unsigned long long)st.retx_timeout, (unsigned long long)st.retx_hole);
    close(fd);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 7 && !strcmp(argv[1], "recv"))
        return do_recv(uint16_t(atoi(argv[2])), uint32_t(atoi(argv[3])), uint16_t(atoi(argv[4])),
                       uint32_t(atoi(argv[5])), atoi(argv[6]) != 0);
    if (argc == 6 && !strcmp(argv[1], "send"))
        return do_send(uint32_t(atoi(argv[2])), uint16_t(atoi(argv[3])), uint16_t(atoi(argv[4])),
                       uint32_t(atoi(argv[5])));
    std::fprintf(stderr,
                 "usage: bsp_expect recv PORT PEER_NODE PEER_PORT COUNT EXPECT |\n"
                 "       bsp_expect send PEER_NODE PEER_PORT LOCAL_PORT COUNT\n");
    return 2;
}
