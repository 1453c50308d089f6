// xdp_attach: see xdp_attach.hpp.
#include "xdp_attach.hpp"

#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <xdp/libxdp.h>

#include <cstring>

namespace bsp::xdp {
namespace {

struct MultiDeleter {
    void operator()(xdp_multiprog *m) const { xdp_multiprog__close(m); }
};
using Multiprog = std::unique_ptr<xdp_multiprog, MultiDeleter>;

xdp_attach_mode mode_of(bool skb_mode) {
    return skb_mode ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

// The dispatcher (or legacy single program) on @ifindex, or null if none.
Multiprog multiprog_of(int ifindex) {
    Multiprog mp(xdp_multiprog__get_from_ifindex(ifindex));
    if (libxdp_get_error(mp.get())) {
        (void)mp.release();
        return nullptr;
    }
    return mp;
}

// The program named @name under @mp, or null.
xdp_program *find(xdp_multiprog *mp, const char *name) {
    if (xdp_multiprog__is_legacy(mp)) {
        xdp_program *p = xdp_multiprog__main_prog(mp);
        return p && std::strcmp(xdp_program__name(p), name) == 0 ? p : nullptr;
    }
    for (xdp_program *p = xdp_multiprog__next_prog(nullptr, mp); p;
         p = xdp_multiprog__next_prog(p, mp))
        if (std::strcmp(xdp_program__name(p), name) == 0)
            return p;
    return nullptr;
}

}  // namespace

void ProgDeleter::operator()(xdp_program *p) const {
    xdp_program__close(p);
}

std::string errno_text(int err) {
    return std::strerror(err < 0 ? -err : err);
}

int ifindex_of(const std::string &dev) {
    unsigned idx = if_nametoindex(dev.c_str());
    if (idx == 0)
        throw Error("no such network device: " + dev);
    return static_cast<int>(idx);
}

void require_bpffs() {
    constexpr long kBpfFsMagic = 0xcafe4a11;
    struct statfs fs {};
    if (statfs("/sys/fs/bpf", &fs) != 0 || fs.f_type != kBpfFsMagic)
        throw Error(
            "bpffs is not mounted at /sys/fs/bpf (note: 'ip netns exec' remounts /sys; "
            "join the namespace with 'nsenter --net=/run/netns/NAME' instead)");
}

std::string netns_id() {
    struct stat st {};
    if (stat("/proc/self/ns/net", &st) != 0)
        throw Error("cannot stat /proc/self/ns/net");
    return std::to_string(st.st_ino);
}

Program attach(bpf_object *obj, const char *prog_name, int ifindex, bool skb_mode) {
    DECLARE_LIBXDP_OPTS(xdp_program_opts, popts, .obj = obj, .prog_name = prog_name);
    Program prog(xdp_program__create(&popts));
    if (long perr = libxdp_get_error(prog.get())) {
        (void)prog.release();
        throw Error("cannot prepare the XDP program: " + errno_text(static_cast<int>(perr)));
    }
    int err = xdp_program__attach(prog.get(), ifindex, mode_of(skb_mode), 0);
    if (err) {
        char name[IF_NAMESIZE] = "?";
        if_indextoname(static_cast<unsigned>(ifindex), name);
        throw Error("cannot attach XDP to " + std::string(name) + ": " + errno_text(err));
    }
    return prog;
}

void undo_attach(xdp_program *prog, int ifindex, bool skb_mode) {
    xdp_program__detach(prog, ifindex, mode_of(skb_mode), 0);
}

bool attached(int ifindex, const char *prog_name) {
    Multiprog mp = multiprog_of(ifindex);
    return mp && find(mp.get(), prog_name);
}

void detach(const std::string &dev, const char *prog_name, const std::string &what) {
    int ifindex = ifindex_of(dev);
    Multiprog mp = multiprog_of(ifindex);
    if (!mp)
        throw Error("no XDP program on " + dev);
    xdp_program *found = find(mp.get(), prog_name);
    if (!found)
        throw Error(what + " is not attached to " + dev);
    int err = xdp_program__detach(found, ifindex, xdp_multiprog__attach_mode(mp.get()), 0);
    if (err)
        throw Error("cannot detach " + what + " from " + dev + ": " + errno_text(err));
}

}  // namespace bsp::xdp
