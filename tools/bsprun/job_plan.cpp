#include "job_plan.hpp"

#include <algorithm>

#include "launch_environment.hpp"

namespace bsprun {

namespace env = bsp::launch::env;

namespace {

std::string basename_of(const std::string &path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string substitute(std::string word, const std::string &host, int pid) {
    for (auto [key, value] : {std::pair<std::string, std::string>{"{host}", host},
                              std::pair<std::string, std::string>{"{pid}", std::to_string(pid)}}) {
        for (std::size_t at = word.find(key); at != std::string::npos;
             at = word.find(key, at + value.size())) {
            word.replace(at, key.size(), value);
        }
    }
    return word;
}

std::vector<std::string> launch_words(const Options &options) {
    if (options.launch) {
        return split_words(*options.launch);
    }
    if (!options.hosts.empty()) {
        return {"ssh", "{host}"};
    }
    return {};
}

bool is_remote_shell(const std::vector<std::string> &words) {
    if (words.empty()) {
        return false;
    }
    std::string b = basename_of(words[0]);
    return b == "ssh" || b == "rsh";
}

}  // namespace

bool wants_tcp_rendezvous(const Options &options) {
    if (options.rendezvous) {
        return options.rendezvous->starts_with("tcp");
    }
    return is_remote_shell(launch_words(options));
}

std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) {
                words.push_back(word);
                word.clear();
                in_word = false;
            }
            continue;
        }
        in_word = true;
        if (c == '\'') {
            auto close = text.find('\'', i + 1);
            if (close == std::string_view::npos) {
                throw UsageError("unterminated ' in '" + std::string(text) + "'");
            }
            word += text.substr(i + 1, close - i - 1);
            i = close;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < text.size() && text[j] != '"'; ++j) {
                if (text[j] == '\\' && j + 1 < text.size() &&
                    std::string_view("\"\\$`").find(text[j + 1]) != std::string_view::npos) {
                    ++j;
                }
                word += text[j];
            }
            if (j >= text.size()) {
                throw UsageError("unterminated \" in '" + std::string(text) + "'");
            }
            i = j;
        } else if (c == '\\') {
            if (i + 1 >= text.size()) {
                throw UsageError("trailing \\ in '" + std::string(text) + "'");
            }
            word += text[++i];
        } else {
            word += c;
        }
    }
    if (in_word) {
        words.push_back(word);
    }
    return words;
}

std::string shell_quote(std::string_view word) {
    bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("@%_+=:,./-").find(c) != std::string_view::npos;
    });
    if (plain) {
        return std::string(word);
    }
    std::string q = "'";
    for (char c : word) {
        if (c == '\'') {
            q += "'\\''";
        } else {
            q += c;
        }
    }
    return q + "'";
}

std::size_t host_index(int pid, int nprocs, std::size_t hosts, Mapping mapping) {
    if (mapping == Mapping::round_robin) {
        return static_cast<std::size_t>(pid) % hosts;
    }
    return static_cast<std::size_t>(pid) * hosts / static_cast<std::size_t>(nprocs);
}

JobPlan plan_job(const Options &options, const std::string &rendezvous, const std::string &cwd) {
    JobPlan plan;
    std::vector<std::string> prefix = launch_words(options);
    plan.remote_shell = is_remote_shell(prefix);
    std::vector<std::string> hosts = options.hosts;
    if (!prefix.empty() && hosts.empty()) {
        hosts.push_back("localhost");
    }
    for (int pid = 0; pid < options.nprocs; ++pid) {
        ProcessCommand p;
        p.pid = pid;
        std::vector<std::string> vars = {
            std::string(env::kPid) + "=" + std::to_string(pid),
            std::string(env::kNprocs) + "=" + std::to_string(options.nprocs),
            std::string(env::kRendezvous) + "=" + rendezvous,
        };
        if (!hosts.empty()) {
            p.host = hosts[host_index(pid, options.nprocs, hosts.size(), options.mapping)];
            vars.push_back(std::string(env::kHost) + "=" + p.host);
        }
        if (options.verbose) {
            vars.push_back(std::string(env::kVerbose) + "=1");
        }
        if (prefix.empty()) {
            p.env = vars;
            p.argv = options.command;
        } else {
            for (const auto &w : prefix) {
                p.argv.push_back(substitute(w, p.host, pid));
            }
            if (plan.remote_shell) {
                // ssh joins its arguments with spaces for the remote shell: quote them. The
                // job secret is the first line of the standard input (never in an argv).
                std::string remote = "cd " + shell_quote(cwd) + " 2>/dev/null; " +
                                     std::string(kReadSecret) + " && exec env";
                for (const auto &v : vars) {
                    remote += " " + shell_quote(v);
                }
                for (const auto &w : options.command) {
                    remote += " " + shell_quote(w);
                }
                remote += std::string("; ") + kNoSecret;
                p.argv.push_back(remote);
            } else {
                p.argv.push_back("env");
                p.argv.insert(p.argv.end(), vars.begin(), vars.end());
                p.argv.insert(p.argv.end(), options.command.begin(), options.command.end());
            }
        }
        plan.processes.push_back(std::move(p));
    }
    return plan;
}

std::string show_line(const ProcessCommand &process) {
    std::string line;
    for (const auto &v : process.env) {
        line += shell_quote(v) + " ";
    }
    for (std::size_t i = 0; i < process.argv.size(); ++i) {
        line += (i ? " " : "") + shell_quote(process.argv[i]);
    }
    return line;
}

}  // namespace bsprun
