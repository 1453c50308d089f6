// The p x p communication matrix of a superstep: bit (i, j) is set when process i has
// data or get requests for process j. Each process contributes its own row; the barrier
// ORs the rows of every process together ([DHS99], section 3, step 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bsp::rt {

class BitMatrix {
  public:
    explicit BitMatrix(int n = 0) : n_(n), bits_(static_cast<std::size_t>(n) * n, 0) {}
    int size() const { return n_; }
    bool get(int i, int j) const { return bits_[idx(i, j)] != 0; }
    void set(int i, int j) { bits_[idx(i, j)] = 1; }
    void or_row(int i, const std::vector<std::uint8_t> &row) {
        for (int j = 0; j < n_; ++j) {
            bits_[idx(i, j)] |= row[static_cast<std::size_t>(j)];
        }
    }
    int fan_in(int j) const {
        int c = 0;
        for (int i = 0; i < n_; ++i) {
            c += get(i, j) ? 1 : 0;
        }
        return c;
    }
    int fan_out(int i) const {
        int c = 0;
        for (int j = 0; j < n_; ++j) {
            c += get(i, j) ? 1 : 0;
        }
        return c;
    }

  private:
    std::size_t idx(int i, int j) const { return static_cast<std::size_t>(i) * n_ + j; }
    int n_;
    std::vector<std::uint8_t> bits_;
};

}  // namespace bsp::rt
