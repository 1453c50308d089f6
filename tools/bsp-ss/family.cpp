#include "family.hpp"

#include <linux/bsp.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace bsp_ss {

std::optional<int> parse_family_text(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.remove_suffix(1);
    if (text.empty() || text.size() > 3)
        return std::nullopt;
    int v = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + (c - '0');
    }
    if (v < 1 || v > 255)
        return std::nullopt;
    return v;
}

FamilyInEffect read_family(const std::string &path) {
    FamilyInEffect r;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            r.family = AF_BSP;
            return r;
        }
        r.error = "cannot open " + path + ": " + std::strerror(errno);
        return r;
    }
    char buf[16];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    int read_errno = errno;
    ::close(fd);
    if (n < 0) {
        r.error = "cannot read " + path + ": " + std::strerror(read_errno);
        return r;
    }
    std::string_view text(buf, size_t(n));
    auto f = parse_family_text(text);
    if (!f) {
        r.error = path + " does not hold a family number: '" + std::string(text) + "'";
        return r;
    }
    r.family = *f;
    r.from_sysfs = true;
    return r;
}

}  // namespace bsp_ss
