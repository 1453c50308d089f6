#include "wait_status.hpp"

#include <sys/wait.h>

#include <cstring>

namespace bsp::launch {

int shell_status(int wstatus) {
    if (WIFSIGNALED(wstatus)) {
        return 128 + WTERMSIG(wstatus);
    }
    if (WIFEXITED(wstatus)) {
        return WEXITSTATUS(wstatus);
    }
    return 1;
}

std::string describe_wait_status(int wstatus) {
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        const char *name = ::sigdescr_np(sig);
        std::string s = "was killed by signal " + std::to_string(sig);
        if (name != nullptr) {
            s += std::string(" (") + name + ")";
        }
        if (WCOREDUMP(wstatus)) {
            s += ", core dumped";
        }
        return s;
    }
    if (WIFEXITED(wstatus)) {
        return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
    }
    return "stopped";
}

}  // namespace bsp::launch
