// Runs an SPMD function on P Runtime instances in P threads over the loopback test
// double. A Misuse in any thread tears the job down (as the launcher would); the
// outcome of every process is returned for exact assertions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "loopback_transport.hpp"
#include "misuse.hpp"
#include "runtime.hpp"

namespace bsp::test {

struct Outcome {
    std::string error;  // Misuse message, "torn down", or empty
    std::unique_ptr<LoopbackTransport> transport;
};

inline std::vector<Outcome> run_spmd(int nprocs, const std::function<void(rt::Runtime &)> &fn,
                                     rt::MessagingConfig cfg = {}, std::size_t max_message = 4096) {
    LoopbackHub hub(nprocs);
    std::vector<Outcome> out(static_cast<std::size_t>(nprocs));
    std::vector<std::thread> threads;
    for (int p = 0; p < nprocs; ++p) {
        out[static_cast<std::size_t>(p)].transport =
            std::make_unique<LoopbackTransport>(hub, p, max_message);
        threads.emplace_back([&, p] {
            auto &o = out[static_cast<std::size_t>(p)];
            try {
                rt::Runtime r(p, nprocs, nprocs > 1 ? o.transport.get() : nullptr, cfg);
                fn(r);
            } catch (const rt::Misuse &m) {
                o.error = m.what();
                hub.tear_down();
            } catch (const rt::TornDown &) {
                o.error = "torn down";
            } catch (const std::exception &e) {
                o.error = std::string("exception: ") + e.what();
                hub.tear_down();
            }
        });
    }
    for (auto &t : threads)
        t.join();
    return out;
}

// The one Misuse message of a failed run ("" if none), checking that every other
// process was torn down rather than failing on its own.
inline std::string single_error(const std::vector<Outcome> &out) {
    std::string msg;
    int errors = 0;
    for (const auto &o : out) {
        if (!o.error.empty() && o.error != "torn down") {
            msg = o.error;
            ++errors;
        }
    }
    return errors == 1 ? msg : "errors: " + std::to_string(errors);
}

}  // namespace bsp::test
