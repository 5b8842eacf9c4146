// The tiled-mode walk over the rows of a planned box (tile_plan.hpp): row groups, global
// windows, the row locator and the stream prefetcher, and the swizzled row copies into and
// out of shared memory (§2.1 item 5, §3.1). Templates and small inline functions, so the
// model's inner loops stay in one translation unit (fast/tile.cpp). The speed code (the stream
// predictor, prefetches, the whole-row path) lives here, apart from the plain reference walk
// (src/model/tile_reference.cpp). Internal to the model.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "../tile_plan.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/model/swizzle.hpp"

namespace tmakit::model::tile_walk {

// The row groups of the box: one group per (k2, k3, k4), in shared-memory order
// (row r = k1 + N1 * (k2 + N2 * ...), §2.1 item 5). `base` is the global address
// of g0 = g1 = 0 for the group (sum of g[i] * stride[i], i >= 2), kept as a
// running sum modulo 2^128 (negative g wrap; in-bound rows come out right).
class GroupCursor {
 public:
  explicit GroupCursor(const Plan& p) : p_(p), base_(p.global_address) {
    for (int i = 2; i < tensor_map::kMaxRank; ++i) base_ += u128(__int128(p.c[i])) * p.stride[i];
  }
  bool in() const {
    for (int i = 2; i < tensor_map::kMaxRank; ++i)
      if (k_[i] < p_.in_lo[i] || k_[i] >= p_.in_hi[i]) return false;
    return true;
  }
  u128 base() const { return base_; }
  void next() {
    for (int i = 2; i < tensor_map::kMaxRank; ++i) {
      if (++k_[i] < p_.n[i]) {
        base_ += u128(p_.e[i]) * p_.stride[i];
        return;
      }
      k_[i] = 0;
      base_ -= u128(p_.n[i] - 1) * p_.e[i] * p_.stride[i];
    }
  }

 private:
  const Plan& p_;
  std::array<uint32_t, 5> k_{};
  u128 base_;
};

// Calls f(r, in_bounds, row_base, span) for every shared row r, where row_base
// is the global address of g0 = 0 in that row (valid when the outer
// coordinates are in bounds) and span = locate(row_base): the host pointer of
// the row's contiguous in-bound part, or null. Rows of one group lie a fixed
// step apart, so prefetch(base) runs kAhead rows before a row is needed.
template <class Locate, class Prefetch, class F>
void for_each_row(const Plan& p, Locate&& locate, Prefetch&& prefetch, F&& f) {
  constexpr uint32_t kAhead = 16;
  const u128 step = u128(p.e[1]) * p.stride[1];
  const uint32_t lo = p.in_lo[1], hi = p.in_hi[1];
  GroupCursor group(p);
  for (uint64_t r = 0; r < p.rows; group.next()) {
    const bool group_in = group.in();
    u128 base = group.base() + u128(__int128(p.c[1])) * p.stride[1];
    if (group_in)
      for (uint32_t k = lo; k < std::min(hi, lo + kAhead); ++k) prefetch(base + k * step);
    for (uint32_t k1 = 0; k1 < p.n[1]; ++k1, ++r, base += step) {
      const bool in = group_in && k1 >= lo && k1 < hi;
      if (in && k1 + kAhead < hi) prefetch(base + kAhead * step);
      f(r, in, base, in ? locate(base) : nullptr);
    }
  }
}

// The allocation of the last hit is kept, so a box costs one search.
template <class Mem, class Ptr>
class GlobalWindow {
 public:
  explicit GlobalWindow(Mem& g) : g_(g) {}
  // [addr, addr + n) when it lies inside one allocation, else nullptr.
  Ptr get(u128 addr, uint64_t n) {
    if (addr >= lo_ && addr + n <= hi_) return base_ + uint64_t(addr - lo_);
    if (addr + n > u128(UINT64_MAX)) return nullptr;
    for (const Allocation& a : g_.allocations()) {
      const u128 lo = a.base, hi = lo + a.bytes.size();
      if (a.bytes.empty() || addr < lo || addr + n > hi) continue;
      lo_ = lo;
      hi_ = hi;
      base_ = g_.find(a.base, a.bytes.size());
      return base_ + uint64_t(addr - lo);
    }
    return nullptr;
  }
 private:
  Mem& g_;
  u128 lo_ = 1, hi_ = 0;
  Ptr base_ = nullptr;
};

// Finds a row's in-bound part (§2.1: k0 in [k_lo, k_hi)) in global memory:
// the host pointer when it is contiguous (E0 = 1) and inside one allocation,
// else null (the copy then goes element by element and names a missing
// element). prefetch() starts loading a row that will be needed soon.
template <class Window, bool kForWrite>
class RowLocator {
  using Ptr = decltype(std::declval<Window&>().get(0, 0));

 public:
  RowLocator(const Plan& p, Window& win)
      : win_(win), contiguous_(p.e[0] == 1 && p.k_lo < p.k_hi),
        offset_(u128(uint64_t(p.c[0] + p.k_lo)) * uint64_t(p.eb)), len_((p.k_hi - p.k_lo) * uint32_t(p.eb)) {
    // When every in-bound byte of the box lies in one allocation (the usual
    // case), rows are found by subtraction instead of a search per row.
    if (!contiguous_) return;
    const auto [lo, hi] = in_bound_extent(p);
    if (hi == lo) return;  // no in-bound row
    if (auto* a = win.get(lo, uint64_t(hi - lo)))
      direct_ = reinterpret_cast<uintptr_t>(a) - uint64_t(lo - offset_);  // host address of base 0, mod 2^64
  }
  Ptr operator()(u128 base) const {
    if (direct_) return reinterpret_cast<Ptr>(direct_ + uint64_t(base));
    return contiguous_ ? win_.get(base + offset_, len_) : nullptr;
  }
  void prefetch(u128 base) const {
    const auto* a = (*this)(base);
    if (!a) return;
    for (uint32_t i = 0; i < len_; i += 64) __builtin_prefetch(a + i, kForWrite);
    __builtin_prefetch(a + len_ - 1, kForWrite);
  }

 private:
  Window& win_;
  bool contiguous_;
  u128 offset_;
  uint32_t len_;
  uintptr_t direct_ = 0;
};

// Boxes walked along dimension 0 (x, x + box[0], x + 2 box[0], ...: a GEMM's
// K loop, the benchmark's sweep) form streams: every row of the next box
// continues a row of this one. Each row is its own short stream a page or more
// away from the next row's, too many for the CPU's prefetchers to follow, so
// from DRAM such a walk waits on one cache miss after another. A box whose
// first byte is where an earlier box's first row ended continues a stream; for
// its rows the bytes kBoxesAhead boxes further along are prefetched (into L2),
// in place of the box's own next rows. Measured in docs/benchmarks.md. The
// state only steers prefetches, never the bytes moved; thread_local because a
// model runs on one thread and several threads may run models.
class StreamPredictor {
 public:
  static constexpr uint32_t kBoxesAhead = 3;
  // True when `start` continues a stream; either way, start + row_bytes is
  // where this box's successor would begin.
  bool continues(const void* start, uint32_t row_bytes) {
    const auto a = reinterpret_cast<uintptr_t>(start);
    for (uintptr_t& next : next_)
      if (next == a) {
        next = a + row_bytes;
        return true;
      }
    next_[victim_] = a + row_bytes;
    victim_ = (victim_ + 1) % next_.size();
    return false;
  }

 private:
  std::array<uintptr_t, 4> next_{};  // a few streams at once: a GEMM walks A and B
  size_t victim_ = 0;
};
inline thread_local StreamPredictor t_streams;

// The common case, a box wholly inside the tensor (every k in bounds, E0 = 1)
// and inside one allocation: every row is one contiguous global run, so rows
// are reached by pointer steps and no row needs a bounds test. Calls
// row(r, host pointer of row r) in shared-row order and returns true; returns
// false, having done nothing, when the box is not of this kind.
template <bool kForWrite, class Window, class F>
bool for_each_whole_row(const Plan& p, Window& win, F&& row) {
  if (p.e[0] != 1) return false;
  for (int i = 0; i < tensor_map::kMaxRank; ++i)
    if (p.in_lo[i] != 0 || p.in_hi[i] != p.n[i]) return false;
  const auto [lo, hi] = in_bound_extent(p);
  auto* const host = win.get(lo, uint64_t(hi - lo));
  if (!host) return false;
  // A stream prefetches each row's continuation (when the allocation has it),
  // other boxes their own rows kAhead rows before they are copied.
  const uint64_t run_ahead = uint64_t(StreamPredictor::kBoxesAhead) * p.row_bytes;
  const bool stream = t_streams.continues(host, p.row_bytes) && win.get(lo, uint64_t(hi - lo) + run_ahead);
  const uint64_t step = uint64_t(p.e[1]) * p.stride[1];
  constexpr uint32_t kAhead = 16;
  const uint64_t ahead = stream ? run_ahead : kAhead * step;
  const uint32_t last_prefetched = stream ? p.n[1] : p.n[1] - std::min(p.n[1], kAhead);
  std::array<uint32_t, 5> k{};
  uint64_t group = 0;  // host offset of row k1 = 0 of the current (k2, k3, k4)
  for (uint64_t r = 0;;) {
    auto* src = host + group;
    for (uint32_t k1 = 0; k1 < p.n[1]; ++k1, ++r, src += step) {
      if (k1 < last_prefetched) {
        // Locality 2: into L2 (prefetcht1); the whole box's rows would not fit in L1.
        for (uint32_t i = 0; i < p.row_bytes; i += 64) __builtin_prefetch(src + ahead + i, kForWrite, 2);
        __builtin_prefetch(src + ahead + p.row_bytes - 1, kForWrite, 2);
      }
      row(r, src);
    }
    int i = 2;
    for (; i < tensor_map::kMaxRank; ++i) {
      const uint64_t d = uint64_t(p.e[i]) * p.stride[i];
      if (++k[i] < p.n[i]) {
        group += d;
        break;
      }
      k[i] = 0;
      group -= uint64_t(p.n[i] - 1) * d;
    }
    if (i == tensor_map::kMaxRank) return true;
  }
}

// Copy `len` bytes from src to row-relative bytes [rel, rel + len) of the shared
// row starting at absolute offset `row`, swizzled (one memcpy per granule).
inline void put(const Plan& p, uint8_t* smem, uint32_t row, uint32_t rel, const uint8_t* src, uint32_t len) {
  uint32_t a = row + rel;
  if (p.chunk_mask && len == 128 && (a & 127) == 0) {  // one whole line (§3.1): the common case
    const uint32_t x = ((a >> 7) & p.chunk_mask) << 4;
    for (uint32_t j = 0; j < 128; j += 16) std::memcpy(smem + a + (j ^ x), src + j, 16);
    return;
  }
  if (p.granule == 0) {
    std::memcpy(smem + a, src, len);
    return;
  }
  if (p.chunk_mask && ((a | len) & 15) == 0) {  // whole 16-byte chunks (§3.1): the fast path
    while (len) {
      // One 128-byte line at a time: its chunks all XOR with the same bits.
      const uint32_t x = ((a >> 7) & p.chunk_mask) << 4;
      const uint32_t n = std::min(len, 128 - (a & 127));
      uint8_t* line = smem + (a & ~127u);
      if (n == 128) {  // a whole line: a fixed trip count the compiler unrolls
        for (uint32_t j = 0; j < 128; j += 16) std::memcpy(line + (j ^ x), src + j, 16);
        src += 128;
      } else {
        for (uint32_t j = a & 127; j < (a & 127) + n; j += 16, src += 16) std::memcpy(line + (j ^ x), src, 16);
      }
      a += n;
      len -= n;
    }
    return;
  }
  while (len) {
    const uint32_t n = std::min(len, p.granule - (a & (p.granule - 1)));
    std::memcpy(smem + swizzle_address(p.swz, a), src, n);
    a += n;
    src += n;
    len -= n;
  }
}

// The reverse of put: shared row bytes [rel, rel + len) to dst.
inline void take(const Plan& p, const uint8_t* smem, uint32_t row, uint32_t rel, uint8_t* dst, uint32_t len) {
  uint32_t a = row + rel;
  if (p.chunk_mask && len == 128 && (a & 127) == 0) {
    const uint32_t x = ((a >> 7) & p.chunk_mask) << 4;
    for (uint32_t j = 0; j < 128; j += 16) std::memcpy(dst + j, smem + a + (j ^ x), 16);
    return;
  }
  if (p.granule == 0) {
    std::memcpy(dst, smem + a, len);
    return;
  }
  if (p.chunk_mask && ((a | len) & 15) == 0) {
    while (len) {
      const uint32_t x = ((a >> 7) & p.chunk_mask) << 4;
      const uint32_t n = std::min(len, 128 - (a & 127));
      const uint8_t* line = smem + (a & ~127u);
      if (n == 128) {
        for (uint32_t j = 0; j < 128; j += 16) std::memcpy(dst + j, line + (j ^ x), 16);
        dst += 128;
      } else {
        for (uint32_t j = a & 127; j < (a & 127) + n; j += 16, dst += 16) std::memcpy(dst, line + (j ^ x), 16);
      }
      a += n;
      len -= n;
    }
    return;
  }
  while (len) {
    const uint32_t n = std::min(len, p.granule - (a & (p.granule - 1)));
    std::memcpy(dst, smem + swizzle_address(p.swz, a), n);
    a += n;
    dst += n;
    len -= n;
  }
}

}  // namespace tmakit::model::tile_walk
