// Misuse of the BSPlib API: the exception every check throws, carrying the message that
// ends the program ("bsp_put on process 1: bad pid 7 (nprocs is 4)").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace bsp::rt {

class Misuse : public std::runtime_error {
  public:
    Misuse(std::string_view call, int pid, std::string_view reason);
    const std::string &call() const { return call_; }
    const std::string &reason() const { return reason_; }

  private:
    std::string call_;
    std::string reason_;
};

// The job is being torn down (another process aborted or died): nothing to report.
class TornDown : public std::runtime_error {
  public:
    TornDown() : std::runtime_error("job torn down") {}
};

// A message from a peer that violates the messaging-layer format: an internal error.
class ProtocolError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace bsp::rt
