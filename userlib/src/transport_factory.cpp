#include "transport_factory.hpp"

#include <optional>
#include <string>

#include "afbsp_transport.hpp"
#include "codec.hpp"
#include "heap_policy.hpp"
#include "shm_transport.hpp"
#include "udp_transport.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint32_t kOfferMagic = 0x324e5442;  // "BTN2"

// What one process can offer: an AF_BSP endpoint and/or UDP rails (blob per kind; an
// empty blob means "not available here"), and its host identity for shared memory (empty:
// no shared memory).
struct Offer {
    std::vector<std::byte> afbsp;
    std::vector<std::byte> udp;
    std::string host;
};

std::vector<std::byte> encode(const Offer &o) {
    std::vector<std::byte> b;
    Writer w(b);
    w.put<std::uint32_t>(kOfferMagic);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(o.afbsp.size()));
    w.bytes(o.afbsp);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(o.udp.size()));
    w.bytes(o.udp);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(o.host.size()));
    w.bytes(std::as_bytes(std::span(o.host.data(), o.host.size())));
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
    n = r.get<std::uint32_t>();
    auto h = r.bytes(n);
    o.host.assign(reinterpret_cast<const char *>(h.data()), h.size());
    return o;
}

}  // namespace

namespace {

std::unique_ptr<Transport> open_remote(TransportChoice choice, launch::Session &session,
                                       std::optional<AfBspEndpoint> &afbsp,
                                       std::optional<UdpEndpoint> &udp,
                                       const std::vector<Offer> &offers) {
    std::vector<std::vector<std::byte>> afbsp_blobs, udp_blobs;
    bool all_afbsp = true, all_udp = true;
    std::size_t missing_afbsp = 0, missing_udp = 0;
    for (std::size_t p = 0; p < offers.size(); ++p) {
        const Offer &o = offers[p];
        if (o.afbsp.empty() && all_afbsp) {
            all_afbsp = false;
            missing_afbsp = p;
        }
        if (o.udp.empty() && all_udp) {
            all_udp = false;
            missing_udp = p;
        }
        afbsp_blobs.push_back(o.afbsp);
        udp_blobs.push_back(o.udp);
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

}  // namespace

std::unique_ptr<Transport> open_transport(TransportChoice choice, launch::Session &session) {
    keep_heap_memory();
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
    // Shared memory between the processes of one host: by default (auto) when the
    // transport is chosen automatically, with BSP_SHM=1 also under an explicit one.
    const ShmSettings shm = shm_settings_from_environment();
    if (shm.mode == ShmSettings::Mode::On ||
        (shm.mode == ShmSettings::Mode::Auto && choice == TransportChoice::Auto)) {
        mine.host = shm_host_identity(session.pid(), session.nprocs());
    }
    auto all = session.allgather(encode(mine));
    std::vector<Offer> offers;
    for (std::size_t p = 0; p < all.size(); ++p) {
        offers.push_back(decode(all[p], p));
    }
    // Every process computes the same: whether any two processes share a host (then all
    // take part in the shared-memory set-up), and which processes share ours.
    const auto me = static_cast<std::size_t>(session.pid());
    bool any_shm = false;
    std::vector<bool> local(offers.size(), false);
    bool all_local = true;
    for (std::size_t p = 0; p < offers.size(); ++p) {
        for (std::size_t q = p + 1; q < offers.size() && !any_shm; ++q) {
            any_shm = !offers[p].host.empty() && offers[p].host == offers[q].host;
        }
        local[p] = p == me || (!offers[me].host.empty() && offers[p].host == offers[me].host);
        all_local = all_local && local[p];
    }
    if (!any_shm) {
        return open_remote(choice, session, afbsp, udp, offers);
    }
    std::unique_ptr<Transport> remote;
    if (!all_local) {
        remote = open_remote(choice, session, afbsp, udp, offers);
    }
    return open_shm_transport(session, local, std::move(remote), shm);
}

}  // namespace bsp::rt
