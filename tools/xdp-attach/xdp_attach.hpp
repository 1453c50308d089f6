// xdp_attach: what the two XDP loaders (bsp-fault and bsp-xdp) share: attaching
// one program of a BPF object to a rail through libxdp's multi-program
// dispatcher, finding and detaching it again by name, and the checks and
// paths around that (bpffs, the network namespace of pinned maps).
#pragma once

#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>

struct bpf_object;
struct xdp_program;
struct xdp_multiprog;

namespace bsp::xdp {

// Every failure: the message is what the tool prints after its own name.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// strerror of an errno value given either sign.
std::string errno_text(int err);

// An owned file descriptor (closed on destruction; negative means none).
class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() {
        if (fd_ >= 0)
            close(fd_);
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

struct ProgDeleter {
    void operator()(xdp_program *p) const;
};
using Program = std::unique_ptr<xdp_program, ProgDeleter>;

// The interface index of @dev in this network namespace (throws if none).
int ifindex_of(const std::string &dev);

// Throws unless bpffs is mounted at /sys/fs/bpf ("ip netns exec" hides it).
void require_bpffs();

// The inode of this process's network namespace: pinned maps are shared by
// every namespace that mounts this bpffs, interface indexes are not.
std::string netns_id();

// Attaches program @prog_name of @obj (opened, not loaded) to @ifindex through
// the dispatcher, in skb (generic) or native mode. Throws on failure.
Program attach(bpf_object *obj, const char *prog_name, int ifindex, bool skb_mode);

// Detaches what attach() returned (used to undo an attach that failed later).
void undo_attach(xdp_program *prog, int ifindex, bool skb_mode);

// Is a program named @prog_name attached to @ifindex (alone or under the
// dispatcher)?
bool attached(int ifindex, const char *prog_name);

// Detaches the program named @prog_name from @dev; @what names it in errors
// ("the fault injector"). Throws if it is not attached.
void detach(const std::string &dev, const char *prog_name, const std::string &what);

}  // namespace bsp::xdp
