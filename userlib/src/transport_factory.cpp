#include "transport_factory.hpp"

#include <optional>
#include <string>

#include "afbsp_transport.hpp"
#include "codec.hpp"
#include "udp_transport.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint32_t kOfferMagic = 0x4e525442;  // "BTRN"

// What one process can offer: an AF_BSP endpoint and/or UDP rails (blob per kind; an
// empty blob means "not available here").
struct Offer {
    std::vector<std::byte> afbsp;
    std::vector<std::byte> udp;
};

std::vector<std::byte> encode(const Offer &o) {
    std::vector<std::byte> b;
    Writer w(b);
    w.put<std::uint32_t>(kOfferMagic);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(o.afbsp.size()));
    w.bytes(o.afbsp);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(o.udp.size()));
    w.bytes(o.udp);
    return b;
}

Offer decode(std::span<const std::byte> b, std::size_t pid) {
    Reader r(b);
    if (r.get<std::uint32_t>() != kOfferMagic) {
        throw std::runtime_error("process " + std::to_string(pid) +
                                 " runs a different libbsp (transport offer not understood)");
    }
    Offer o;
    auto n = r.get<std::uint32_t>();
    auto a = r.bytes(n);
    o.afbsp.assign(a.begin(), a.end());
    n = r.get<std::uint32_t>();
    auto u = r.bytes(n);
    o.udp.assign(u.begin(), u.end());
    return o;
}

}  // namespace

std::unique_ptr<Transport> open_transport(TransportChoice choice, launch::Session &session) {
    // Every process prepares what it can, the offers are exchanged, and all processes
    // take the same decision: AF_BSP when requested, or (auto) when every process has it.
    std::optional<AfBspEndpoint> afbsp;
    std::string afbsp_error;
    if (choice != TransportChoice::Udp) {
        try {
            afbsp.emplace(session.nprocs() - 1);
        } catch (const std::exception &e) {
            afbsp_error = e.what();
        }
    }
    if (choice == TransportChoice::AfBsp && !afbsp) {
        throw std::runtime_error("BSP_TRANSPORT=afbsp: " + afbsp_error);
    }
    std::optional<UdpEndpoint> udp;
    if (choice != TransportChoice::AfBsp) {
        udp.emplace();
    }
    Offer mine;
    if (afbsp) {
        mine.afbsp = afbsp->blob();
    }
    if (udp) {
        mine.udp = udp->blob();
    }
    auto all = session.allgather(encode(mine));
    std::vector<std::vector<std::byte>> afbsp_blobs, udp_blobs;
    bool all_afbsp = true, all_udp = true;
    std::size_t missing_afbsp = 0, missing_udp = 0;
    for (std::size_t p = 0; p < all.size(); ++p) {
        Offer o = decode(all[p], p);
        if (o.afbsp.empty() && all_afbsp) {
            all_afbsp = false;
            missing_afbsp = p;
        }
        if (o.udp.empty() && all_udp) {
            all_udp = false;
            missing_udp = p;
        }
        afbsp_blobs.push_back(std::move(o.afbsp));
        udp_blobs.push_back(std::move(o.udp));
    }
    if (choice == TransportChoice::AfBsp) {
        if (!all_afbsp) {
            throw std::runtime_error("BSP_TRANSPORT=afbsp: process " +
                                     std::to_string(missing_afbsp) + " has no AF_BSP socket");
        }
        return open_afbsp_transport(std::move(*afbsp), session, afbsp_blobs);
    }
    if (choice == TransportChoice::Auto && all_afbsp && afbsp) {
        return open_afbsp_transport(std::move(*afbsp), session, afbsp_blobs);
    }
    if (!all_udp) {
        throw std::runtime_error("process " + std::to_string(missing_udp) +
                                 " offers no UDP rails (set BSP_TRANSPORT the same way for "
                                 "every process)");
    }
    return open_udp_transport(std::move(*udp), session, udp_blobs);
}

}  // namespace bsp::rt
