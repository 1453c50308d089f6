// An emulation of the PMI2 server side of Slurm's slurmstepd (src/plugins/mpi/pmi2), for
// tests that run the tasks of an srun step without Slurm. It speaks the wire protocol of
// libpmi2 on each task's descriptor (PMI_FD): one PMI-1 line "cmd=init pmi_version=2
// pmi_subversion=0" answered by "cmd=response_to_init rc=0 pmi_version=2
// pmi_subversion=0", then messages of a 6-character decimal length (space-padded) and a
// body "cmd=NAME;key=value;...;" in which a ';' of a value is doubled. It serves fullinit,
// job-getid, kvs-put, kvs-fence (a barrier of every task: the puts become visible), kvs-get,
// finalize and abort; anything else is answered with rc=14 (PMI2_ERR_OTHER).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace pmi2 {

// One PMI2 command or response: its name and its key=value pairs in order.
struct Command {
    std::string name;
    std::vector<std::pair<std::string, std::string>> pairs;
    // The value of key, or nullptr.
    const std::string *find(std::string_view key) const;
    bool operator==(const Command &) const = default;
};

inline constexpr std::size_t kLengthField = 6;
inline constexpr std::size_t kMaxKey = 64;
inline constexpr std::size_t kMaxValue = 1024;
inline constexpr std::size_t kMaxMessage = 64 * 1024;

// The body of a message (without the length field). Throws std::invalid_argument when
// the first pair is not cmd=NAME, a pair has no '=', a key is longer than kMaxKey bytes, a
// value longer than kMaxValue, or the body does not end with ';'.
Command parse(std::string_view body);
// The whole message: length field and body. Throws std::invalid_argument for keys or
// values parse() would refuse, or a message longer than kMaxMessage.
std::string encode(const Command &command);

class Server {
  public:
    // Serves ntasks tasks of the job jobid on a thread until it is destroyed.
    Server(int ntasks, std::string jobid);
    ~Server();
    Server(const Server &) = delete;
    Server &operator=(const Server &) = delete;

    // The descriptor to give task rank as PMI_FD (its end of a socket pair).
    int task_fd(int rank) const { return task_ends_[static_cast<std::size_t>(rank)]; }
    // The variables srun's pmi2 plugin sets for task rank (PMI_FD=3 is where the test
    // harness puts task_fd).
    std::vector<std::string> task_environment(int rank) const;
    // The key-value space as committed by the fences so far.
    std::map<std::string, std::string> kvs() const;
    // Commands received, "RANK NAME", in order.
    std::vector<std::string> log() const;

  private:
    struct Task;
    void run();
    void serve(std::size_t rank);
    void handle(std::size_t rank, const Command &c);
    void reply(std::size_t rank, const Command &c);

    const int ntasks_;
    const std::string jobid_;
    std::vector<int> task_ends_;
    std::vector<Task> tasks_;
    int stop_ = -1;
    mutable std::mutex mutex_;
    std::map<std::string, std::string> kvs_, pending_;
    std::vector<std::string> log_;
    std::thread thread_;
};

}  // namespace pmi2
