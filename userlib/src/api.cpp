// The C ABI of BSPlib (bsp.h): process-wide state between bsp_begin and bsp_end, the
// checks that depend on it (calls outside bsp_begin/bsp_end, missing bsp_end), and the
// translation of every Misuse into an abort of the whole program. The int entry points
// are here; the BSP_WIDE_TYPES ones (api_wide.cpp) share the calls of c_api.hpp.
#include <poll.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bsp.h"
#include "c_api.hpp"
#include "launch/session.hpp"
#include "misuse.hpp"
#include "profile.hpp"
#include "runtime.hpp"
#include "runtime_config.hpp"
#include "transport_factory.hpp"

namespace {

using bsp::rt::Misuse;

enum class Phase { Before, Running, Ending, Ended };

// The first nprocs processes of a launched job, when bsp_begin asked for fewer processes
// than the job has: the transport sees only them; the others left in bsp_begin.
class FirstProcesses final : public bsp::launch::Session {
  public:
    FirstProcesses(bsp::launch::Session &job, int nprocs) : job_(job), nprocs_(nprocs) {}
    int pid() const override { return job_.pid(); }
    int nprocs() const override { return nprocs_; }
    std::string_view job_secret() const override { return job_.job_secret(); }
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
        auto all = job_.allgather(mine);
        all.resize(static_cast<std::size_t>(nprocs_));
        return all;
    }
    int control_fd() const override { return job_.control_fd(); }
    [[noreturn]] void abort(std::string_view message) override {
        job_.abort(message);
        std::_Exit(EXIT_FAILURE);  // not reached: Session::abort never returns
    }
    void finish() override { job_.finish(); }

  private:
    bsp::launch::Session &job_;
    int nprocs_;
};

struct State {
    Phase phase = Phase::Before;
    bool init_called = false;
    std::unique_ptr<bsp::launch::Session> session;
    // Joined from the environment (bsprun, Slurm), not forked by spawn_local.
    bool launched = false;
    // What the runtime uses: the session, or its first processes (FirstProcesses).
    std::unique_ptr<bsp::launch::Session> first;
    std::unique_ptr<bsp::rt::Transport> transport;
    std::unique_ptr<bsp::rt::Runtime> runtime;
    std::unique_ptr<bsp::rt::Profile> profile;  // BSP_PROFILE
    int pid = -1;
};

State &state() {
    static State *s = new State;  // never destroyed: usable from atexit handlers
    return *s;
}

[[noreturn]] void die(const std::string &message) {
    State &s = state();
    std::fflush(stdout);
    if (s.session) {
        s.session->abort(message);
    }
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(EXIT_FAILURE);
}

// The job is being ended by another process (an abort or a death): leave quietly through
// the session, which exits with the job's status (and, in process 0 of spawn_local, waits
// for the other processes first).
[[noreturn]] void torn_down() {
    std::fflush(nullptr);
    if (state().session) {
        state().session->abort("");
    }
    std::_Exit(EXIT_FAILURE);
}

// Runs one API call, turning errors into the end of the program.
template <typename F>
auto guarded(const char *call, F &&f) -> decltype(f()) {
    try {
        return f();
    } catch (const Misuse &m) {
        die(m.what());
    } catch (const bsp::rt::TornDown &) {
        torn_down();
    } catch (const std::exception &e) {
        die(Misuse(call, state().pid, e.what()).what());
    }
}

// An error every process of a job detects in the same way: process 0 reports it and the
// others wait (bounded) for the job to be torn down, so the program ends with one message
// naming process 0 whatever the order in which processes get there.
[[noreturn]] void collective_error(const Misuse &m) {
    State &s = state();
    if (s.pid != 0 && s.session && s.session->control_fd() >= 0) {
        pollfd p{s.session->control_fd(), POLLIN, 0};
        if (poll(&p, 1, 10000) > 0) {
            torn_down();
        }
    }
    die(m.what());
}

bsp::rt::Runtime &running(const char *call) {
    State &s = state();
    switch (s.phase) {
        case Phase::Running:
            return *s.runtime;
        case Phase::Before:
            throw Misuse(call, -1, "called before bsp_begin");
        case Phase::Ending:
        case Phase::Ended:
            break;
    }
    throw Misuse(call, s.pid, "called after bsp_end");
}

void check_end_at_exit() {
    State &s = state();
    if (s.phase == Phase::Running) {
        die(Misuse("bsp_end", s.pid, "the process is ending without calling bsp_end").what());
    }
}

// BSP_NPROCS (empty: unset), else the online processors. A malformed value ends the
// program: bsp_begin(bsp_nprocs()) would otherwise start some other number of processes.
int available_processors() {
    if (const char *v = std::getenv("BSP_NPROCS"); v && *v) {
        // At most 65535: the UDP transport's limit, as bsprun's -n.
        if (auto n = bsp::rt::parse_integer(v, 1, 65535)) {
            return static_cast<int>(*n);
        }
        throw Misuse(
            "bsp_nprocs", -1,
            std::string("BSP_NPROCS=") + v + " is invalid (expected 1 to 65535 processes)");
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

// The number of processes process 0 asked for: the argument of bsp_begin counts on
// process 0 only (BSPedupack's programs read it there, the others pass what their global
// holds, often 0). One allgather of the launched job.
int asked_by_process0(bsp::launch::Session &session, int maxprocs) {
    std::vector<std::byte> mine(4);
    const auto v = static_cast<std::uint32_t>(maxprocs);
    for (int i = 0; i < 4; ++i) {
        mine[static_cast<std::size_t>(i)] = static_cast<std::byte>(v >> (8 * i));
    }
    auto all = session.allgather(mine);
    if (all.empty() || all[0].size() != 4) {
        throw std::runtime_error("process 0 sent no process count to bsp_begin");
    }
    std::uint32_t p0 = 0;
    for (int i = 0; i < 4; ++i) {
        p0 |= static_cast<std::uint32_t>(all[0][static_cast<std::size_t>(i)]) << (8 * i);
    }
    return static_cast<int>(p0);
}

// A process beyond the number process 0 asked for: it takes part in the job's collectives
// of bsp_begin (the transport's address exchange, when the processes that remain are
// more than one), waits for the job's end and exits with status 0.
[[noreturn]] void leave_quietly(State &s, int asked) {
    if (asked > 1) {
        s.session->allgather({});
    }
    s.session->finish();
    s.phase = Phase::Ended;
    std::fflush(nullptr);
    std::exit(EXIT_SUCCESS);
}

void begin(int maxprocs) {
    State &s = state();
    if (s.phase == Phase::Running) {
        throw Misuse("bsp_begin", s.pid,
                     "called twice (only one bsp_begin/bsp_end pair is allowed)");
    }
    if (s.phase != Phase::Before) {
        throw Misuse("bsp_begin", s.pid,
                     "called after bsp_end (only one bsp_begin/bsp_end pair is allowed)");
    }
    std::string error;
    bsp::rt::RuntimeConfig cfg = bsp::rt::config_from_environment(&error);
    if (!s.session) {
        s.session = bsp::launch::Session::join_from_environment();
        s.launched = s.session != nullptr;
    }
    if (s.launched) {
        s.pid = s.session->pid();
    }
    if (maxprocs < 1 && (!s.launched || s.pid == 0)) {
        throw Misuse("bsp_begin", s.launched ? 0 : -1,
                     "maxprocs is " + std::to_string(maxprocs) + ", must be >= 1");
    }
    if (s.launched) {
        if (!error.empty()) {
            collective_error(Misuse("bsp_begin", s.pid, error));
        }
        const int asked = asked_by_process0(*s.session, maxprocs);
        if (asked < s.session->nprocs()) {
            if (s.pid >= asked) {
                leave_quietly(s, asked);
            }
            s.first = std::make_unique<FirstProcesses>(*s.session, asked);
        }
    } else {
        // Started directly: report before forking, as the only process.
        if (!error.empty()) {
            throw Misuse("bsp_begin", 0, error);
        }
        if (maxprocs > 1) {
            s.session = bsp::launch::Session::spawn_local(maxprocs);
        }
    }
    bsp::launch::Session *job = s.first ? s.first.get() : s.session.get();
    const int pid = job ? job->pid() : 0;
    const int nprocs = job ? job->nprocs() : 1;
    s.pid = pid;
    if (nprocs > 1) {
        try {
            s.transport = bsp::rt::open_transport(cfg.transport, *job);
        } catch (const bsp::rt::TornDown &) {
            throw;
        } catch (const std::exception &e) {
            collective_error(Misuse("bsp_begin", pid, e.what()));
        }
    }
    s.runtime = std::make_unique<bsp::rt::Runtime>(pid, nprocs, s.transport.get(), cfg.messaging);
    if (const char *path = std::getenv("BSP_PROFILE"); path && *path) {
        s.profile = std::make_unique<bsp::rt::Profile>(
            std::string(path) + "." + std::to_string(pid), pid, nprocs);
        s.runtime->attach_profile(s.profile.get());
    }
    s.phase = Phase::Running;
    std::atexit(check_end_at_exit);
    if (cfg.verbose && pid == 0) {
        std::fprintf(stderr, "bsp: nprocs=%d transport=%s schedule=%s (%s)\n", nprocs,
                     s.transport ? s.transport->name().c_str() : "none",
                     std::string(bsp::rt::schedule_name(cfg.messaging.schedule)).c_str(),
                     s.transport ? s.transport->description().c_str() : "single process");
    }
}

void end() {
    State &s = state();
    bsp::rt::Runtime &rt = running("bsp_end");
    rt.sync("bsp_end", bsp::rt::SyncKind::End);
    if (s.profile) {
        s.profile->close();
    }
    s.phase = Phase::Ending;
    if (s.transport && std::getenv("BSP_STATS")) {
        // The messaging layer's bounded stash (Documentation/bsplib.rst, BSP_STATS).
        const auto &st = rt.messaging().stash_stats();
        std::fprintf(stderr,
                     "bsp: messaging stats of process %d: stash_dropped %llu "
                     "stash_dropped_bytes %llu stash_peak_bytes %llu\n",
                     s.pid, static_cast<unsigned long long>(st.dropped),
                     static_cast<unsigned long long>(st.dropped_bytes),
                     static_cast<unsigned long long>(st.peak_bytes));
    }
    if (s.transport) {
        s.transport->serve_in_background();
    }
    if (s.session) {
        s.session->finish();
    }
    if (s.transport) {
        s.transport->shutdown();
    }
    s.phase = Phase::Ended;
    if (s.pid != 0) {
        // As in the standard: after bsp_end only process 0 continues.
        std::fflush(nullptr);
        std::exit(EXIT_SUCCESS);
    }
}

}  // namespace

extern "C" {

void bsp_init(void (*spmd_part)(void), int argc, char **argv) {
    (void)argc;
    (void)argv;
    guarded("bsp_init", [&] {
        State &s = state();
        if (s.phase != Phase::Before) {
            throw Misuse("bsp_init", s.pid, "called after bsp_begin");
        }
        if (spmd_part == nullptr) {
            throw Misuse("bsp_init", -1, "the SPMD function is NULL");
        }
        s.init_called = true;
        // Started by a launcher: every process runs main, but only process 0 runs the
        // sequential part; the others run the SPMD function and stop.
        s.session = bsp::launch::Session::join_from_environment();
        s.launched = s.session != nullptr;
        if (s.session && s.session->pid() != 0) {
            s.pid = s.session->pid();
            spmd_part();
            if (s.phase == Phase::Running) {
                throw Misuse("bsp_end", s.pid, "the process is ending without calling bsp_end");
            }
            std::fflush(nullptr);
            std::exit(EXIT_SUCCESS);
        }
    });
}

void bsp_begin(int maxprocs) {
    guarded("bsp_begin", [&] { begin(maxprocs); });
}
void bsp_end(void) {
    const void *caller = __builtin_return_address(0);
    guarded("bsp_end", [&] {
        if (state().profile) {
            state().profile->set_location(caller);
        }
        end();
    });
}

int bsp_pid(void) {
    return guarded("bsp_pid", [] { return running("bsp_pid").pid(); });
}

int bsp_nprocs(void) {
    return guarded("bsp_nprocs", [] {
        State &s = state();
        if (s.phase == Phase::Before) {
            return s.session ? s.session->nprocs() : available_processors();
        }
        return running("bsp_nprocs").nprocs();
    });
}

double bsp_time(void) {
    return guarded("bsp_time", [] { return running("bsp_time").time(); });
}

void bsp_sync(void) {
    const void *caller = __builtin_return_address(0);
    guarded("bsp_sync", [&] {
        if (state().profile) {
            state().profile->set_location(caller);
        }
        running("bsp_sync").sync("bsp_sync");
    });
}

void bsp_abort(const char *format, ...) {
    char buf[4096] = "";
    if (format) {
        va_list ap;
        va_start(ap, format);
        std::vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);
    }
    std::string msg(buf);
    while (!msg.empty() && msg.back() == '\n') {
        msg.pop_back();
    }
    die(msg);
}

void bsp_push_reg(const void *ident, int size) {
    bsp::capi::push_reg("bsp_push_reg", ident, size);
}
void bsp_pushregister(const void *ident, int size) {
    bsp::capi::push_reg("bsp_pushregister", ident, size);
}

void bsp_pop_reg(const void *ident) {
    guarded("bsp_pop_reg", [&] { running("bsp_pop_reg").pop_reg("bsp_pop_reg", ident); });
}

void bsp_popregister(const void *ident) {
    guarded("bsp_popregister",
            [&] { running("bsp_popregister").pop_reg("bsp_popregister", ident); });
}

void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes) {
    bsp::capi::put("bsp_put", pid, src, dst, offset, nbytes, false);
}
void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes) {
    bsp::capi::put("bsp_hpput", pid, src, dst, offset, nbytes, true);
}
void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes) {
    bsp::capi::get("bsp_get", pid, src, offset, dst, nbytes);
}
void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes) {
    bsp::capi::get("bsp_hpget", pid, src, offset, dst, nbytes);
}

void bsp_set_tagsize(int *tag_nbytes) {
    bsp::capi::set_tagsize("bsp_set_tagsize", tag_nbytes);
}
void bsp_set_tag_size(int *tag_nbytes) {
    bsp::capi::set_tagsize("bsp_set_tag_size", tag_nbytes);
}

void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes) {
    bsp::capi::send("bsp_send", pid, tag, payload, payload_nbytes);
}

void bsp_qsize(int *nmessages, int *accum_nbytes) {
    bsp::capi::qsize("bsp_qsize", nmessages, accum_nbytes);
}
void bsp_bsmp_info(int *nmessages, int *accum_nbytes) {
    bsp::capi::qsize("bsp_bsmp_info", nmessages, accum_nbytes);
}

void bsp_get_tag(int *status, void *tag) {
    bsp::capi::get_tag("bsp_get_tag", status, tag);
}

void bsp_move(void *payload, int reception_nbytes) {
    bsp::capi::move("bsp_move", payload, reception_nbytes);
}

int bsp_hpmove(void **tag_ptr, void **payload_ptr) {
    return bsp::capi::hpmove<int>("bsp_hpmove", tag_ptr, payload_ptr);
}

}  // extern "C"

namespace bsp::capi {

bool sync_ready(const char *call, bool ready) {
    const void *caller = __builtin_return_address(0);
    return guarded(call, [&] {
        if (state().profile) {
            state().profile->set_location(caller);
        }
        bsp::rt::Runtime &rt = running(call);
        rt.sync(call, bsp::rt::SyncKind::Sync, ready);
        return rt.all_ready();
    });
}

int pid(const char *call) {
    return guarded(call, [&] { return running(call).pid(); });
}

int nprocs(const char *call) {
    return guarded(call, [&] { return running(call).nprocs(); });
}

void misuse(const char *call, const std::string &reason) {
    guarded(call, [&] { throw Misuse(call, running(call).pid(), reason); });
    std::_Exit(EXIT_FAILURE);  // not reached: guarded ends the program on Misuse
}

void push_reg(const char *call, const void *ident, std::int64_t size) {
    guarded(call, [&] { running(call).push_reg(call, ident, size); });
}

void put(const char *call, int pid, const void *src, void *dst, std::int64_t offset,
         std::int64_t nbytes, bool hp) {
    guarded(call, [&] { running(call).put(call, pid, src, dst, offset, nbytes, hp); });
}

void get(const char *call, int pid, const void *src, std::int64_t offset, void *dst,
         std::int64_t nbytes) {
    guarded(call, [&] { running(call).get(call, pid, src, offset, dst, nbytes); });
}

void send(const char *call, int pid, const void *tag, const void *payload, std::int64_t nbytes) {
    guarded(call, [&] { running(call).send(call, pid, tag, payload, nbytes); });
}

void move(const char *call, void *payload, std::int64_t reception_nbytes) {
    guarded(call, [&] { running(call).move(call, payload, reception_nbytes); });
}

template <typename T>
void set_tagsize(const char *call, T *tag_nbytes) {
    guarded(call, [&] {
        bsp::rt::Runtime &rt = running(call);
        if (tag_nbytes == nullptr) {
            throw Misuse(call, rt.pid(), "tag size pointer is NULL");
        }
        // The previous size is at most Runtime::kMaxTagBytes: it fits an int.
        *tag_nbytes = static_cast<T>(rt.set_tagsize(call, *tag_nbytes));
    });
}

template <typename T>
void qsize(const char *call, T *nmessages, T *accum_nbytes) {
    guarded(call, [&] {
        bsp::rt::Runtime &rt = running(call);
        if (nmessages == nullptr) {
            throw Misuse(call, rt.pid(), "message count pointer is NULL");
        }
        if (accum_nbytes == nullptr) {
            throw Misuse(call, rt.pid(), "byte count pointer is NULL");
        }
        std::int64_t n = 0, bytes = 0;
        rt.qsize(&n, &bytes);
        const T rn = reported<T>(call, rt.pid(), n, "the queue holds", "messages");
        const T rb = reported<T>(call, rt.pid(), bytes, "the queue holds", "payload bytes");
        *nmessages = rn;
        *accum_nbytes = rb;
    });
}

template <typename T>
void get_tag(const char *call, T *status, void *tag) {
    guarded(call, [&] {
        bsp::rt::Runtime &rt = running(call);
        if (status == nullptr) {
            throw Misuse(call, rt.pid(), "status pointer is NULL");
        }
        if (tag == nullptr && rt.queue_tagsize() > 0) {
            throw Misuse(
                call, rt.pid(),
                "tag pointer is NULL but the tag size is " + std::to_string(rt.queue_tagsize()));
        }
        const std::int64_t len = rt.get_tag(tag);
        *status = reported<T>(call, rt.pid(), len, "the first message has", "payload bytes");
    });
}

template <typename T>
T hpmove(const char *call, void **tag_ptr, void **payload_ptr) {
    return guarded(call, [&] {
        bsp::rt::Runtime &rt = running(call);
        if (tag_ptr == nullptr) {
            throw Misuse(call, rt.pid(), "tag pointer is NULL");
        }
        if (payload_ptr == nullptr) {
            throw Misuse(call, rt.pid(), "payload pointer is NULL");
        }
        // Checked before the message leaves the queue: an error leaves it in place.
        const std::int64_t len = rt.get_tag(nullptr);
        const T result = reported<T>(call, rt.pid(), len, "the first message has", "payload bytes");
        rt.hpmove(tag_ptr, payload_ptr);
        return result;
    });
}

template void set_tagsize<int>(const char *, int *);
template void set_tagsize<std::int64_t>(const char *, std::int64_t *);
template void qsize<int>(const char *, int *, int *);
template void qsize<std::int64_t>(const char *, std::int64_t *, std::int64_t *);
template void get_tag<int>(const char *, int *, void *);
template void get_tag<std::int64_t>(const char *, std::int64_t *, void *);
template int hpmove<int>(const char *, void **, void **);
template std::int64_t hpmove<std::int64_t>(const char *, void **, void **);

}  // namespace bsp::capi
