// bsp-xdp: attaches the AF_BSP XDP pre-filter (ebpf/xdp_bsp.bpf.c) to the rails of
// this network namespace and shows its counters.
//
//   bsp-xdp attach DEV [--skb] [--steer]
//   bsp-xdp detach DEV
//   bsp-xdp stats
//
// The program goes through libxdp's dispatcher, so it shares a rail with the
// fault injector (tools/bsp-fault). Its maps are pinned by name in
// /sys/fs/bpf/bsp_xdp/<netns inode>/, shared by every rail of the namespace; the
// state map is handed to af_bsp.ko (socket option BSP_XDP_STATE), which keeps
// it current (Documentation/admin-guide.rst, "XDP pre-filter").
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <linux/bsp.h>

#include "bsp_xdp.h"
#include "xdp_attach.hpp"
#include "xdp_bsp.skel.h"

namespace {

constexpr const char *kPinRoot = "/sys/fs/bpf/bsp_xdp";
constexpr const char *kProgName = "xdp_bsp_filter";

using bsp::xdp::errno_text;
using bsp::xdp::Error;
using bsp::xdp::Fd;

// One directory of pinned maps per network namespace.
std::string pin_dir() {
    return std::string(kPinRoot) + "/" + bsp::xdp::netns_id();
}

int afbsp_family() {
    std::ifstream in(BSP_FAMILY_PARAM_PATH);
    int family = 0;
    if (!(in >> family))
        throw Error("af_bsp is not loaded (" + std::string(BSP_FAMILY_PARAM_PATH) + ")");
    return family;
}

// Hands the state map to the module (or takes it back with -1).
void set_module_state(int map_fd) {
    Fd sock(socket(afbsp_family(), SOCK_RDM, 0));
    if (sock.get() < 0)
        throw Error("cannot open an AF_BSP socket: " + errno_text(errno));
    if (setsockopt(sock.get(), SOL_BSP, BSP_XDP_STATE, &map_fd, sizeof(map_fd)) != 0)
        throw Error("af_bsp refused the XDP state map: " + errno_text(errno));
}

struct SkelDeleter {
    void operator()(xdp_bsp *s) const { xdp_bsp__destroy(s); }
};

// Number of online CPUs the steering may use (the cpumap's entries 0..n-1).
unsigned steer_cpus() {
    int n = get_nprocs();
    if (n < 2)
        return 0;
    return static_cast<unsigned>(n > BSP_XDP_MAX_CPUS ? BSP_XDP_MAX_CPUS : n);
}

void configure(const std::string &dir, bool steer) {
    Fd conf(bpf_obj_get((dir + "/bsp_xdp_conf").c_str()));
    Fd cpus(bpf_obj_get((dir + "/bsp_xdp_cpus").c_str()));
    if (conf.get() < 0 || cpus.get() < 0)
        throw Error("pinned maps missing in " + dir);
    bsp_xdp_conf c{};
    c.ncpus = steer ? steer_cpus() : 0;
    for (__u32 i = 0; i < c.ncpus; i++) {
        bpf_cpumap_val v{};
        v.qsize = 2048;
        if (bpf_map_update_elem(cpus.get(), &i, &v, 0))
            throw Error("cannot set up the cpumap entry of CPU " + std::to_string(i) + ": " +
                        errno_text(errno));
    }
    __u32 zero = 0;
    if (bpf_map_update_elem(conf.get(), &zero, &c, 0))
        throw Error("cannot write the configuration: " + errno_text(errno));
}

void cmd_attach(const std::string &dev, bool skb_mode, bool steer) {
    bsp::xdp::require_bpffs();
    int ifindex = bsp::xdp::ifindex_of(dev);
    afbsp_family();
    if (bsp::xdp::attached(ifindex, kProgName))
        throw Error("the pre-filter is already attached to " + dev);
    std::string dir = pin_dir();
    mkdir(kPinRoot, 0700);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("cannot create " + dir + ": " + errno_text(errno));

    LIBBPF_OPTS(bpf_object_open_opts, oopts, .pin_root_path = dir.c_str());
    std::unique_ptr<xdp_bsp, SkelDeleter> skel(xdp_bsp__open_opts(&oopts));
    if (!skel)
        throw Error("cannot open the XDP program: " + errno_text(errno));
    bsp::xdp::Program prog = bsp::xdp::attach(skel->obj, kProgName, ifindex, skb_mode);
    try {
        configure(dir, steer);
        Fd state(bpf_obj_get((dir + "/bsp_xdp_state").c_str()));
        if (state.get() < 0)
            throw Error("state map missing in " + dir);
        set_module_state(state.get());
    } catch (const Error &) {
        bsp::xdp::undo_attach(prog.get(), ifindex, skb_mode);
        throw;
    }
    unsigned ncpus = steer ? steer_cpus() : 0;
    std::string how = ncpus ? "steering over " + std::to_string(ncpus) + " CPUs" : "no steering";
    std::printf("attached to %s (%s mode, %s), maps in %s\n", dev.c_str(),
                skb_mode ? "skb" : "native", how.c_str(), dir.c_str());
}

// Any device of this namespace that still has the pre-filter?
bool attached_anywhere() {
    struct FreeList {
        void operator()(struct if_nameindex *l) const { if_freenameindex(l); }
    };
    std::unique_ptr<struct if_nameindex, FreeList> list(if_nameindex());
    if (!list)
        return false;
    for (struct if_nameindex *i = list.get(); i->if_index; i++)
        if (bsp::xdp::attached(static_cast<int>(i->if_index), kProgName))
            return true;
    return false;
}

void remove_pins(const std::string &dir) {
    for (const char *m :
         {"bsp_xdp_state", "bsp_xdp_counters", "bsp_xdp_conf", "bsp_xdp_cpus", "bsp_xdp_cpu_hits"})
        unlink((dir + "/" + m).c_str());
    rmdir(dir.c_str());
}

void cmd_detach(const std::string &dev) {
    bsp::xdp::require_bpffs();
    bsp::xdp::detach(dev, kProgName, "the pre-filter");
    if (!attached_anywhere()) {
        // the last rail: the module gives the state back, the pins go
        try {
            set_module_state(-1);
        } catch (const Error &) {
            // af_bsp unloaded: it released the map already
        }
        remove_pins(pin_dir());
    }
}

void cmd_stats() {
    bsp::xdp::require_bpffs();
    std::string dir = pin_dir();
    Fd counters(bpf_obj_get((dir + "/bsp_xdp_counters").c_str()));
    if (counters.get() < 0)
        throw Error("the pre-filter is not attached in this namespace (" + dir + ")");
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        throw Error("cannot count the possible CPUs");
    std::vector<bsp_xdp_counters> per(static_cast<std::size_t>(ncpu));
    __u32 zero = 0;
    if (bpf_map_lookup_elem(counters.get(), &zero, per.data()))
        throw Error("cannot read the counters: " + errno_text(errno));
    bsp_xdp_counters sum{};
    for (const auto &c : per) {
        const auto *in = reinterpret_cast<const __u64 *>(&c);
        auto *out = reinterpret_cast<__u64 *>(&sum);
        for (std::size_t i = 0; i < BSP_XDP_NCOUNTERS; i++)
            out[i] += in[i];
    }
    std::printf(
        "seen %llu\nhello %llu\npassed %llu\nsteered %llu\ndrop_short %llu\ndrop_version %llu\n"
        "drop_type %llu\ndrop_cluster %llu\ndrop_addr %llu\ndrop_no_port %llu\n"
        "inactive %llu\n",
        static_cast<unsigned long long>(sum.seen), static_cast<unsigned long long>(sum.hello),
        static_cast<unsigned long long>(sum.passed), static_cast<unsigned long long>(sum.steered),
        static_cast<unsigned long long>(sum.drop_short),
        static_cast<unsigned long long>(sum.drop_version),
        static_cast<unsigned long long>(sum.drop_type),
        static_cast<unsigned long long>(sum.drop_cluster),
        static_cast<unsigned long long>(sum.drop_addr),
        static_cast<unsigned long long>(sum.drop_no_port),
        static_cast<unsigned long long>(sum.inactive));
    Fd hits(bpf_obj_get((dir + "/bsp_xdp_cpu_hits").c_str()));
    if (hits.get() < 0)
        return;
    for (__u32 i = 0; i < BSP_XDP_MAX_CPUS; i++) {
        __u64 n = 0;
        if (bpf_map_lookup_elem(hits.get(), &i, &n) == 0 && n)
            std::printf("cpu %u steered %llu\n", i, static_cast<unsigned long long>(n));
    }
}

[[noreturn]] void usage() {
    std::fputs(
        "usage: bsp-xdp attach DEV [--skb] [--steer]\n"
        "       bsp-xdp detach DEV\n"
        "       bsp-xdp stats\n",
        stderr);
    std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty())
        usage();
    const std::string &cmd = args[0];
    try {
        if (cmd == "attach" && args.size() >= 2) {
            bool skb = false, steer = false;
            for (std::size_t i = 2; i < args.size(); i++) {
                if (args[i] == "--skb")
                    skb = true;
                else if (args[i] == "--steer")
                    steer = true;
                else
                    usage();
            }
            cmd_attach(args[1], skb, steer);
        } else if (cmd == "detach" && args.size() == 2) {
            cmd_detach(args[1]);
        } else if (cmd == "stats" && args.size() == 1) {
            cmd_stats();
        } else {
            usage();
        }
    } catch (const Error &e) {
        std::fprintf(stderr, "bsp-xdp %s: %s\n", cmd.c_str(), e.what());
        return 1;
    }
    return 0;
}
