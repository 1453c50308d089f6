#include "options.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bsprun {

namespace {

int parse_nprocs(const std::string &option, const std::string &value) {
    unsigned long long n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    const bool digits = !value.empty() && end == value.data() + value.size();
    if (digits && (ec == std::errc::result_out_of_range ||
                   (ec == std::errc() && n > static_cast<unsigned long long>(kMaxProcesses)))) {
        throw UsageError(option + " " + value + ": at most " + std::to_string(kMaxProcesses) +
                         " processes are supported");
    }
    if (ec != std::errc() || !digits || n < 1) {
        throw UsageError(option + " expects a positive number of processes, not '" + value + "'");
    }
    return static_cast<int>(n);
}

double parse_seconds(const std::string &option, const std::string &value) {
    char *end = nullptr;
    errno = 0;
    double s = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || errno != 0 || !std::isfinite(s) || s <= 0) {
        throw UsageError(option + " expects a positive number of seconds, not '" + value + "'");
    }
    if (s > kMaxSeconds) {
        throw UsageError(option + " " + value + ": at most " +
                         std::to_string(static_cast<long long>(kMaxSeconds)) + " seconds");
    }
    return s;
}

std::vector<std::string> split_hosts(const std::string &list) {
    std::vector<std::string> hosts;
    std::stringstream in(list);
    std::string h;
    while (std::getline(in, h, ',')) {
        if (h.empty()) {
            throw UsageError("--hosts '" + list + "' has an empty entry");
        }
        hosts.push_back(h);
    }
    if (hosts.empty()) {
        throw UsageError("--hosts needs at least one host");
    }
    return hosts;
}

}  // namespace

std::vector<std::string> read_hostfile(const std::string &path) {
    std::ifstream in(path);
    if (!in) {
        throw UsageError("cannot read host file '" + path + "': " + std::strerror(errno));
    }
    std::vector<std::string> hosts;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (auto hash = line.find('#'); hash != std::string::npos) {
            line.erase(hash);
        }
        std::stringstream words(line);
        std::string host, extra;
        if (!(words >> host)) {
            continue;
        }
        if (words >> extra) {
            throw UsageError("host file '" + path + "' line " + std::to_string(number) +
                             ": one host name per line, found '" + extra + "' after '" + host +
                             "'");
        }
        hosts.push_back(host);
    }
    if (hosts.empty()) {
        throw UsageError("host file '" + path + "' lists no host");
    }
    return hosts;
}

Options parse_options(const std::vector<std::string> &args) {
    Options o;
    bool have_hosts = false;
    std::size_t i = 0;
    auto value_of = [&](const std::string &option) -> std::string {
        if (i + 1 >= args.size()) {
            throw UsageError(option + " needs a value");
        }
        return args[++i];
    };
    for (; i < args.size(); ++i) {
        std::string a = args[i];
        std::optional<std::string> inline_value;
        if (a.starts_with("--")) {
            if (auto eq = a.find('='); eq != std::string::npos) {
                inline_value = a.substr(eq + 1);
                a = a.substr(0, eq);
            }
        }
        auto value = [&]() { return inline_value ? *inline_value : value_of(a); };
        if (a == "--") {
            ++i;
            break;
        }
        if (a.empty() || a[0] != '-') {
            break;
        }
        if (a == "-n" || a == "-np" || a == "-npes" || a == "--np" || a == "--nprocs" ||
            a == "--npes") {
            o.nprocs = parse_nprocs(a, value());
        } else if (a.size() > 2 && a.starts_with("-n") &&
                   std::isdigit(static_cast<unsigned char>(a[2]))) {
            o.nprocs = parse_nprocs("-n", a.substr(2));
        } else if (a == "--hosts" || a == "-H") {
            if (have_hosts) {
                throw UsageError("give the hosts once (--hosts or --hostfile)");
            }
            o.hosts = split_hosts(value());
            have_hosts = true;
        } else if (a == "--hostfile" || a == "-f") {
            if (have_hosts) {
                throw UsageError("give the hosts once (--hosts or --hostfile)");
            }
            o.hosts = read_hostfile(value());
            have_hosts = true;
        } else if (a == "--launch") {
            o.launch = value();
            if (o.launch->find_first_not_of(" \t") == std::string::npos) {
                throw UsageError("--launch needs a command prefix, e.g. 'ssh {host}'");
            }
        } else if (a == "--map") {
            std::string m = value();
            if (m == "rr" || m == "round-robin") {
                o.mapping = Mapping::round_robin;
            } else if (m == "block") {
                o.mapping = Mapping::block;
            } else {
                throw UsageError("--map expects 'rr' (round-robin) or 'block', not '" + m + "'");
            }
        } else if (a == "--rendezvous") {
            o.rendezvous = value();
        } else if (a == "--timeout") {
            o.timeout = parse_seconds(a, value());
        } else if (a == "--grace") {
            o.grace = parse_seconds(a, value());
        } else if (a == "-l" || a == "--label") {
            o.label = true;
        } else if (a == "-v" || a == "--verbose") {
            o.verbose = true;
        } else if (a == "--show") {
            o.show = true;
        } else if (a == "--version") {
            o.version = true;
        } else if (a == "-h" || a == "--help") {
            o.help = true;
        } else {
            throw UsageError("unknown option '" + args[i] + "'");
        }
        if (inline_value && (a == "-l" || a == "--label" || a == "-v" || a == "--verbose" ||
                             a == "--show" || a == "--version" || a == "--help")) {
            throw UsageError("option '" + a + "' takes no value");
        }
    }
    o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())),
                     args.end());
    if (o.help || o.version) {
        return o;
    }
    if (o.command.empty()) {
        throw UsageError("no program to run");
    }
    if (o.nprocs == 0) {
        if (o.hosts.empty()) {
            throw UsageError("say how many processes to start with -n P");
        }
        if (o.hosts.size() > static_cast<std::size_t>(kMaxProcesses)) {
            throw UsageError("the host list has " + std::to_string(o.hosts.size()) +
                             " entries: one process per entry would be more than the " +
                             std::to_string(kMaxProcesses) + " processes supported (give -n P)");
        }
        o.nprocs = static_cast<int>(o.hosts.size());
    }
    return o;
}

const char *usage_text() {
    return "usage: bsprun [options] [--] program [arguments...]\n"
           "  -n, -np, -npes P       start P processes, 1..65535 (default: one per host)\n"
           "  -H, --hosts h1,h2,...  hosts to run on (default: this machine only)\n"
           "  -f, --hostfile FILE    hosts to run on, one per line\n"
           "  --launch 'PREFIX'      command prefix starting a process on {host}\n"
           "                         (default with hosts: 'ssh {host}'; also {pid})\n"
           "  --map rr|block         processes to hosts round-robin (default) or in blocks\n"
           "  --rendezvous ADDR      unix, tcp, tcp:HOST, tcp:HOST:PORT or unix:/PATH\n"
           "  --timeout S            end the job after S seconds (exit status 124)\n"
           "  --grace S              seconds between ending the job and SIGKILL (default 3)\n"
           "  -l, --label            prefix every output line with [pid]\n"
           "  -v, --verbose          print the job layout; the runtime reports its transport\n"
           "  --show                 print the commands that would run, run nothing\n"
           "  --version, -h/--help\n"
           "Standard input goes to process 0. See Documentation/launch.rst.\n";
}

}  // namespace bsprun
