#include "transport_factory.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#ifdef BSP_HAVE_ENGINE
#include "udp_transport.hpp"
#endif

namespace bsp::rt {

namespace {

// AF_BSP is usable when the module is loaded (its family parameter is visible).
bool afbsp_module_loaded() {
    return access("/sys/module/af_bsp/parameters/family", R_OK) == 0;
}

}  // namespace

std::unique_ptr<Transport> open_transport(TransportChoice choice, launch::Session &session) {
    if (choice == TransportChoice::AfBsp)
        throw std::runtime_error(
            "BSP_TRANSPORT=afbsp: the AF_BSP transport is not part of this build of libbsp "
            "(see Documentation/bsplib.rst)");
    if (choice == TransportChoice::Auto && afbsp_module_loaded()) {
        // The module is there but this libbsp cannot drive it yet: use UDP.
    }
#ifdef BSP_HAVE_ENGINE
    return open_udp_transport(session);
#else
    (void)session;
    throw std::runtime_error("no transport: libbsp was built without the protocol engine");
#endif
}

}  // namespace bsp::rt
