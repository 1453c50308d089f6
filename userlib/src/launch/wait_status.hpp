// Turning a waitpid() status into the exit status a shell would report and into words.
#pragma once

#include <string>

namespace bsp::launch {

// 128+signal for a process killed by a signal, else its exit code.
int shell_status(int wstatus);
// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
std::string describe_wait_status(int wstatus);

}  // namespace bsp::launch
