// libFuzzer target: an engine pair (A sends, B receives, both directions allowed) driven by
// the input as a script of operations: submit messages, move queued packets between the two
// with loss, duplication, reordering or byte mutation, inject raw byte sequences as packets,
// advance time, complete supersteps, take rails down and up.
//
// Checked: no crash or sanitizer report; every message completed at most once; engine budgets
// respected; and, unless an injected forged packet was accepted, every delivered message is
// intact, in order and delivered once, and one missing before the last one delivered failed
// at its sender (a channel reset or restart dropped it).
//
// Bounded run (make check): build/fuzz/fuzz/engine_fuzz -max_total_time=30 -max_len=4096
// (200000 runs take about 2 minutes on the 2-core VM and ran clean.)
// Longer run:   build/fuzz/fuzz/engine_fuzz -max_total_time=3600 -max_len=4096 corpus/
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}

namespace {

struct Pkt {
    int rail;
    std::vector<uint8_t> bytes;
};

struct Side {
    int id;
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
    std::deque<Pkt> out;  // packets sent, not yet moved
    std::map<void *, std::vector<uint8_t>> msgs;
    std::map<std::pair<int, uint32_t>, std::vector<uint8_t>> slots;
    std::vector<std::vector<uint8_t>> delivered;
    std::map<void *, int> done;
    uint64_t serial = 0;
};

[[noreturn]] void fail(const char *why) {
    std::fprintf(stderr, "engine_fuzz invariant violated: %s\n", why);
    std::abort();
}

void cb_xmit(void *ctx, const bspe_xmit *x) {
    auto *s = static_cast<Side *>(ctx);
    Pkt p{x->rail, std::vector<uint8_t>(BSPE_HDR_LEN + x->len)};
    std::memcpy(p.bytes.data(), x->hdr, BSPE_HDR_LEN);
    if (x->len) {
        auto it = s->msgs.find(x->msg);
        if (it == s->msgs.end() || x->off + x->len > it->second.size())
            fail("xmit of bytes outside a live message");
        std::memcpy(p.bytes.data() + BSPE_HDR_LEN, it->second.data() + x->off, x->len);
    }
    bspe_seal(s->ep, p.bytes.data(), p.bytes.data() + BSPE_HDR_LEN, x->len);
    if (s->out.size() < 4096)
        s->out.push_back(std::move(p));
}

int cb_rx(void *ctx, const bspe_rx_frag *f) {
    auto *s = static_cast<Side *>(ctx);
    auto &b = s->slots[{f->chan, f->slot}];
    if (f->first)
        b.assign(f->msg_len, 0);
    if (b.size() != f->msg_len || f->off + f->len > b.size())
        fail("rx_data outside its message");
    if (f->len)
        std::memcpy(b.data() + f->off, f->data, f->len);
    return 0;
}

void cb_deliver(void *ctx, const bspe_delivery *d) {
    auto *s = static_cast<Side *>(ctx);
    auto it = s->slots.find({d->chan, d->slot});
    std::vector<uint8_t> v;
    if (it != s->slots.end()) {
        v = std::move(it->second);
        s->slots.erase(it);
    }
    if (v.size() != d->msg_len)
        fail("delivered length differs from reassembled bytes");
    s->delivered.push_back(std::move(v));
}

void cb_abort(void *ctx, int chan, uint32_t slot) {
    static_cast<Side *>(ctx)->slots.erase({chan, slot});
}

void cb_complete(void *ctx, void *msg, int status) {
    auto *s = static_cast<Side *>(ctx);
    if (s->done.count(msg))
        fail("message completed twice");
    s->done[msg] = status;
    s->msgs.erase(msg);
}

void cb_timer(void *, uint64_t) {}

void *cb_chan_alloc(void *, size_t size) {
    return std::calloc(1, size);
}
void cb_chan_free(void *, void *mem, size_t) {
    std::free(mem);
}
const bspe_ops kOps = {cb_xmit, cb_rx,         cb_deliver,   cb_abort, cb_complete, cb_timer,
                       nullptr, cb_chan_alloc, cb_chan_free, nullptr,  nullptr};

// The bytes of message k: its first 4 bytes are k, so that no two are alike (the check at
// the end tells which messages are missing by their bytes).
std::vector<uint8_t> pattern(uint64_t k, size_t len) {
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; i++)
        v[i] = i < 4 ? static_cast<uint8_t>(k >> (8 * i)) : static_cast<uint8_t>(k * 131 + i * 7);
    return v;
}

struct Reader {
    const uint8_t *p;
    size_t n;
    uint8_t u8() {
        if (!n)
            return 0;
        n--;
        return *p++;
    }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bspe_cfg cfg;
    bspe_cfg_default(&cfg);
    cfg.nrails = 2;
    cfg.max_chans = 2;
    cfg.frag_size = 64;
    cfg.max_msg = 4096;
    cfg.snd_wnd = 16;
    cfg.rcv_wnd = 16;
    cfg.msg_wnd = 4;
    cfg.sndbuf_pkts = 24;
    cfg.rcvbuf = 8192;
    cfg.rtt_init_ns = 1000;
    cfg.rtt_min_ns = 100;
    cfg.rtt_max_ns = 1000000;
    cfg.rto_min_ns = 20000;
    cfg.prod_max_ns = 100000;
    cfg.unreach_ns = 10000000;
    cfg.flags = BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM;
    Side s[2];
    for (int i = 0; i < 2; i++) {
        bspe_cfg c = cfg;
        c.node = static_cast<uint32_t>(i);
        c.port = 1;
        s[i].id = i;
        s[i].mem.assign(bspe_mem_size(&c) / 8 + 1, 0);
        s[i].ep = bspe_init(s[i].mem.data(), s[i].mem.size() * 8, &c, &kOps, &s[i]);
        if (!s[i].ep)
            fail("init");
        bspe_chan_open(s[i].ep, static_cast<uint32_t>(1 - i), 1, BSPE_CHAN_GROUP, nullptr);
    }
    Reader r{data, size};
    uint64_t now = 1;
    uint32_t epoch = 0;
    bool forged = false;
    std::vector<std::vector<uint8_t>> sent_ab;
    std::vector<void *> sent_ck;  // the cookie of each of sent_ab
    std::vector<std::unique_ptr<int>> cookies;
    for (int steps = 0; r.n && steps < 2000; steps++) {
        uint8_t op = r.u8();
        int from = op & 1;
        Side &a = s[from], &b = s[1 - from];
        switch ((op >> 1) % 8) {
            case 0: {  // submit a message
                uint16_t len = static_cast<uint16_t>(4 + r.u16() % 2996);
                cookies.push_back(std::make_unique<int>(0));
                void *ck = cookies.back().get();
                a.msgs[ck] = pattern(a.serial, len);
                int rc = bspe_send(a.ep, 0, ck, len, r.u8() & 3, now);
                if (rc == 0) {
                    a.serial++;
                    if (from == 0) {
                        sent_ab.push_back(pattern(a.serial - 1, len));
                        sent_ck.push_back(ck);
                    }
                } else {
                    a.msgs.erase(ck);
                }
                break;
            }
            case 1:
            case 2: {  // move up to k packets, with loss/dup/reorder chosen by input
                int k = r.u8() % 16 + 1;
                for (int i = 0; i < k && !a.out.empty(); i++) {
                    uint8_t how = r.u8();
                    Pkt p = std::move(a.out.front());
                    a.out.pop_front();
                    if (how % 8 == 0)
                        continue;  // lost
                    if (how % 8 == 1 && !a.out.empty()) {
                        std::swap(p, a.out.front());  // reorder
                        a.out.push_back(std::move(p));
                        continue;
                    }
                    bspe_rx(b.ep, static_cast<uint8_t>(p.rail), p.bytes.data(),
                            static_cast<uint32_t>(p.bytes.size()), now);
                    if (how % 8 == 2)  // duplicate
                        bspe_rx(b.ep, static_cast<uint8_t>(p.rail), p.bytes.data(),
                                static_cast<uint32_t>(p.bytes.size()), now);
                }
                break;
            }
            case 3: {  // inject raw bytes as a packet
                uint16_t len = r.u16() % 1500;
                std::vector<uint8_t> raw(len);
                for (auto &x : raw)
                    x = r.u8();
                bspe_hello_info hi;
                if (bspe_hello_parse(raw.data(), len, &hi, nullptr) == 0 && hi.rail >= hi.nrails)
                    fail("hello parse accepted a rail beyond nrails");
                if (bspe_pkt_type(raw.data(), len) > BSPE_T_MAX)
                    fail("packet type beyond the defined ones");
                if (bspe_rx(b.ep, r.u8() & 1, raw.data(), len, now) == 0)
                    forged = true;
                break;
            }
            case 4: {  // mutate a queued packet's header field and deliver it
                if (a.out.empty())
                    break;
                Pkt p = a.out.front();
                size_t at = r.u8() % BSPE_HDR_LEN;
                p.bytes[at] ^= r.u8();
                if (r.u8() & 1)  // re-checksum so the mutation reaches the field checks
                    bspe_seal(a.ep, p.bytes.data(), p.bytes.data() + BSPE_HDR_LEN,
                              static_cast<uint32_t>(p.bytes.size() - BSPE_HDR_LEN));
                if (bspe_rx(b.ep, static_cast<uint8_t>(p.rail), p.bytes.data(),
                            static_cast<uint32_t>(p.bytes.size()), now) == 0)
                    forged = true;
                break;
            }
            case 5:  // time passes
                now += 1 + r.u16() * 16ULL;
                bspe_timer(s[0].ep, now);
                bspe_timer(s[1].ep, now);
                break;
            case 6:  // superstep completes on both (only when both directions are drained)
                if (s[0].msgs.empty() && s[1].msgs.empty()) {
                    epoch++;
                    bspe_superstep_done(s[0].ep, epoch, now);
                    bspe_superstep_done(s[1].ep, epoch, now);
                }
                break;
            case 7: {  // rail down / up
                uint8_t v = r.u8();
                bspe_rail_set(a.ep, static_cast<uint32_t>(1 - from), v & 1, (v >> 1) & 1, now);
                break;
            }
        }
        for (auto &x : s) {
            if (x.ep->outstanding > cfg.sndbuf_pkts)
                fail("send budget exceeded");
            bspe_rx_consumed(x.ep, 1u << 30, now);
        }
    }
    // In order and at most once each, intact; a message may be missing before the last one
    // delivered only if its sender saw it fail (a channel reset or restart dropped it): checked
    // after bspe_fini, which fails what is left.
    std::vector<void *> skipped;
    if (!forged) {
        if (s[1].delivered.size() > sent_ab.size())
            fail("more messages delivered than sent");
        size_t j = 0;
        for (const auto &d : s[1].delivered) {
            while (j < sent_ab.size() && sent_ab[j] != d)
                skipped.push_back(sent_ck[j++]);
            if (j == sent_ab.size())
                fail("delivered message differs from the ones sent, or out of order");
            j++;
        }
    }
    for (auto &x : s)
        bspe_fini(x.ep);
    for (auto &x : s)
        if (!x.msgs.empty())
            fail("message never completed after fini");
    for (void *ck : skipped) {
        auto it = s[0].done.find(ck);
        if (it == s[0].done.end() || it->second == 0)
            fail("a message completed with status 0 was never delivered");
    }
    return 0;
}
