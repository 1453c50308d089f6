#include "slurm_pmi.hpp"

#include <slurm/pmi2.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace bsp::launch {

namespace {

void check(int rc, const std::string &what) {
    if (rc != PMI2_SUCCESS) {
        throw std::runtime_error("bsp: Slurm's PMI2: " + what + " failed (PMI2 error " +
                                 std::to_string(rc) + ")");
    }
}

}  // namespace

bool Pmi2Session::available() {
    const char *fd = std::getenv("PMI_FD");
    const char *port = std::getenv("PMI_PORT");
    return (fd != nullptr && *fd != '\0') || (port != nullptr && *port != '\0');
}

Pmi2Session::Pmi2Session() {
    int spawned = 0, appnum = 0;
    check(PMI2_Init(&spawned, &size_, &rank_, &appnum), "PMI2_Init");
    open_ = true;
}

Pmi2Session::~Pmi2Session() {
    if (open_) {
        PMI2_Finalize();
    }
}

void Pmi2Session::put(const std::string &key, const std::string &value) {
    check(PMI2_KVS_Put(key.c_str(), value.c_str()), "PMI2_KVS_Put(" + key + ")");
}

void Pmi2Session::fence() {
    check(PMI2_KVS_Fence(), "PMI2_KVS_Fence");
}

std::string Pmi2Session::get(const std::string &key, int from) {
    std::vector<char> value(PMI2_MAX_VALLEN + 1, '\0');
    int length = 0;
    check(PMI2_KVS_Get(nullptr, from, key.c_str(), value.data(), PMI2_MAX_VALLEN, &length),
          "PMI2_KVS_Get(" + key + ")");
    if (length < 0 || length > PMI2_MAX_VALLEN) {
        throw std::runtime_error("bsp: Slurm's PMI2: the value of " + key + " is too long");
    }
    return std::string(value.data(), static_cast<std::size_t>(length));
}

void Pmi2Session::finalize() {
    if (open_) {
        open_ = false;
        check(PMI2_Finalize(), "PMI2_Finalize");
    }
}

}  // namespace bsp::launch
