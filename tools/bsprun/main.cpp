// bsprun: starts a BSP program as P processes on this machine, on a list of hosts
// through a launch prefix (ssh, ip netns exec, ...). See Documentation/launch.rst.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "options.hpp"
#include "supervisor.hpp"

#ifndef BSPRUN_VERSION
#define BSPRUN_VERSION "unknown"
#endif

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    bsprun::Options options;
    try {
        options = bsprun::parse_options(args);
    } catch (const bsprun::UsageError &e) {
        std::cerr << "bsprun: " << e.what() << "\n"
                  << "Try 'bsprun --help'.\n";
        return 2;
    }
    if (options.help) {
        std::cout << bsprun::usage_text();
        return 0;
    }
    if (options.version) {
        std::cout << "bsprun (AF_BSP) " BSPRUN_VERSION "\n";
        return 0;
    }
    try {
        bsprun::Supervisor supervisor(std::move(options));
        return supervisor.run();
    } catch (const bsprun::UsageError &e) {
        std::cerr << "bsprun: " << e.what() << "\n"
                  << "Try 'bsprun --help'.\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "bsprun: " << e.what() << "\n";
        return 1;
    }
}
