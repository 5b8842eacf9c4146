// Tiled-mode walk (§2.1-§2.3, §3): rows of the box, each split into its fill
// parts and its in-bound part; the in-bound part of a row is contiguous in
// global memory when E[0] = 1 and moves with one memcpy per swizzle granule.
#include "tmakit/model/tile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "tmakit/diag.hpp"
#include "tmakit/model/numerics.hpp"
#include "tmakit/model/packed.hpp"
#include "tmakit/model/reduce.hpp"
#include "tmakit/model/swizzle.hpp"

namespace tmakit::model {
namespace {

using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::Interleave;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;
using u128 = unsigned __int128;

constexpr uint32_t kMaxBox = 256;                     // boxDim[i] <= 256 (§1.3)
constexpr uint32_t kMaxElementStride = 8;             // elementStrides[i] <= 8 (§1.3)
constexpr uint32_t kMaxRowBytes = kMaxBox * 32;       // 256 elements of at most 32 bytes (interleave 32B slices)

int element_size(DataType t) {
  switch (t) {
    case DataType::uint8: return 1;
    case DataType::uint16:
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::uint32:
    case DataType::int32:
    case DataType::float32:
    case DataType::float32_ftz:
    case DataType::tfloat32:
    case DataType::tfloat32_ftz: return 4;
    case DataType::uint64:
    case DataType::int64:
    case DataType::float64: return 8;
    default: return 0;  // packed types (§2.5, sm_100+): not walked by this model
  }
}

// Fill sources indexed by row-relative byte offset. Rows start on element
// boundaries and every fill run starts on one, so a 2-periodic pattern is in phase.
const uint8_t* fill_bytes(OobFill fill, int elem_bytes) {
  static const auto zeros = std::array<uint8_t, kMaxRowBytes>{};
  static const auto nan = [] {
    std::array<uint8_t, kMaxRowBytes> a{};
    for (size_t i = 0; i < a.size(); ++i) a[i] = oob_nan_byte(2, int(i % 2));
    return a;
  }();
  static const auto nan8 = [] {
    std::array<uint8_t, kMaxRowBytes> a{};
    a.fill(oob_nan_byte(1, 0));
    return a;
  }();
  if (fill == OobFill::zero) return zeros.data();
  return elem_bytes == 1 ? nan8.data() : nan.data();  // H4
}

struct Plan {
  const char* what;
  int rank, eb;
  uint64_t global_address;
  std::array<int64_t, 5> c{};
  std::array<uint32_t, 5> n{}, e{};
  std::array<uint64_t, 5> dims{}, stride{};
  uint32_t row_bytes, pitch;
  uint64_t rows;
  Swizzle swz;
  uint32_t granule;     // swizzle_granule_bytes (0 = no swizzle)
  uint32_t chunk_mask;  // §3.1 modes: a' = a ^ (((a >> 7) & chunk_mask) << 4); 0 otherwise
  uint32_t k_lo, k_hi;  // k0 range whose g0 lies in [0, dims[0])
  std::array<uint32_t, 5> in_lo{}, in_hi{};  // per dimension: k range whose g lies in [0, dims[i])
};

// The k in [0, n) with 0 <= c + k * e < d (§2.1 items 2-3), as [lo, hi).
std::pair<uint32_t, uint32_t> in_bounds_k(int64_t c, uint32_t e, uint64_t d, uint32_t n) {
  const int64_t lo = c >= 0 ? 0 : (-c + e - 1) / e;
  const int64_t hi = c >= int64_t(d) ? 0 : (int64_t(d) - c + e - 1) / e;
  const uint32_t h = uint32_t(std::min<int64_t>(hi, n));
  return {uint32_t(std::min<int64_t>(lo, h)), h};
}

[[noreturn]] void unsupported(const char* what, const std::string& why) {
  fail("model.map-unsupported", fmt::format("tile {}: {}", what, why));
}

Plan make_plan(const TensorMap& m, std::span<const int32_t> coords, size_t smem_size,
               uint32_t offset, const char* what) {
  Plan p{};
  p.what = what;
  if (m.encode != Encode::tiled) unsupported(what, "the map is not a tiled map (§2.1 item 8)");
  if (m.rank < 1 || m.rank > tensor_map::kMaxRank)
    unsupported(what, fmt::format("rank {} is outside 1..5 (§1.3)", m.rank));
  if (coords.size() != size_t(m.rank))
    fail("model.coord-count",
         fmt::format("tile {}: {} coordinates for a rank-{} map (§2.1)", what, coords.size(), m.rank));
  p.eb = element_size(m.data_type);
  if (p.eb == 0)
    unsupported(what, fmt::format("data type {} is a packed type (sm_100+, §2.5)", tensor_map::name(m.data_type)));
  p.rank = m.rank;
  p.global_address = m.global_address;
  const bool interleaved = m.interleave != Interleave::none;
  // Q26 (docs/hardware-notes.md, interleave decisions): with interleave an element of
  // dimension 0 is a whole slice of 16 or 32 bytes, whatever the data type (g0 counts
  // slices, address g0 × slice, bounded by dims[0]); dimension rank-2 is walked once
  // (k = 0: its coordinate and bounds apply, its box and element stride do not); the
  // slices land densely in shared memory (no H2 row padding), swizzled as usual.
  int once = -1;
  if (interleaved) {
    if (p.rank < 3) unsupported(what, fmt::format("interleave {} needs rank 3..5 (§2.4), got rank {}",
                                                  tensor_map::name(m.interleave), p.rank));
    p.eb = int(m.slice_bytes());
    once = p.rank - 2;
  }
  for (int i = 0; i < p.rank; ++i) {
    if (m.box[i] < 1 || m.box[i] > kMaxBox)
      unsupported(what, fmt::format("box[{}] = {} is outside 1..256 (§1.3)", i, m.box[i]));
    const uint32_t es = m.element_strides[i];
    if (es < 1 || es > kMaxElementStride)
      unsupported(what, fmt::format("element_strides[{}] = {} is outside 1..8 (§1.3)", i, es));
    // elementStrides[0] is ignored without interleave (§1.3, H16).
    p.e[i] = (i == 0 && !interleaved) ? 1 : es;
    p.n[i] = i == once ? 1 : (m.box[i] + p.e[i] - 1) / p.e[i];  // §2.1 item 1
    p.c[i] = coords[i];
    p.dims[i] = m.dims[i];
    p.stride[i] = i == 0 ? uint64_t(p.eb) : m.strides[i - 1];
  }
  p.swz = m.swizzle;
  p.granule = swizzle_granule_bytes(m.swizzle);
  p.chunk_mask = m.swizzle == Swizzle::b32 ? 1 : m.swizzle == Swizzle::b64 ? 3 : m.swizzle == Swizzle::b128 ? 7 : 0;
  p.row_bytes = p.n[0] * uint32_t(p.eb);
  p.pitch = interleaved ? p.row_bytes : std::max(p.row_bytes, swizzle_span_bytes(m.swizzle));  // H2
  p.rows = 1;
  for (int i = 1; i < p.rank; ++i) p.rows *= p.n[i];

  // The box must lie in the CTA's shared memory; a swizzle moves 16-byte chunks
  // only inside their aligned span (32/64/128 bytes, §3.1), so check to the end of
  // the last span (the H100 ran 32B-swizzled boxes that end 32 bytes into a line).
  uint64_t end = uint64_t(offset) + (p.rows - 1) * p.pitch + p.row_bytes;
  if (p.granule) {
    const uint64_t span = std::max<uint64_t>(swizzle_span_bytes(m.swizzle), 16);
    end = (end + span - 1) / span * span;
  }
  if (end > smem_size)
    fail("model.shared-range",
         fmt::format("tile {}: box at shared offset {} needs bytes up to {} ({} rows of pitch {}), "
                     "shared memory has {}",
                     what, offset, end, p.rows, p.pitch, smem_size));

  // Dimensions past the rank walk once, in bounds, so the row loops need no rank test.
  for (int i = p.rank; i < tensor_map::kMaxRank; ++i) p.n[i] = p.e[i] = 1, p.dims[i] = 1;
  for (int i = 0; i < tensor_map::kMaxRank; ++i)
    std::tie(p.in_lo[i], p.in_hi[i]) = in_bounds_k(p.c[i], p.e[i], p.dims[i], p.n[i]);
  p.k_lo = p.in_lo[0];
  p.k_hi = p.in_hi[0];
  return p;
}

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

int64_t g0_of(const Plan& p, uint32_t k0) { return p.c[0] + int64_t(k0) * p.e[0]; }
u128 element_address(const Plan& p, u128 base, uint32_t k0) {
  return base + u128(uint64_t(g0_of(p, k0))) * uint64_t(p.eb);
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

// Global bytes [lo, hi) from the first to the last in-bound element of the box
// (§2.1 items 2-3); lo == hi when no element is in bounds.
std::pair<u128, u128> in_bound_extent(const Plan& p) {
  u128 lo = p.global_address, hi = lo;
  for (int i = 0; i < tensor_map::kMaxRank; ++i) {
    if (p.in_lo[i] >= p.in_hi[i]) return {lo, lo};
    lo += u128(uint64_t(p.c[i] + int64_t(p.in_lo[i]) * p.e[i])) * p.stride[i];
    hi += u128(uint64_t(p.c[i] + int64_t(p.in_hi[i] - 1) * p.e[i])) * p.stride[i];
  }
  return {lo, hi + uint64_t(p.eb)};
}

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

std::string hex(u128 a) {
  if (a >> 64) return fmt::format("0x{:x}{:016x}", uint64_t(a >> 64), uint64_t(a));
  return fmt::format("0x{:x}", uint64_t(a));
}

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
thread_local StreamPredictor t_streams;

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

[[noreturn]] void global_fault(const Plan& p, uint64_t row, uint32_t k0, u128 addr) {
  std::string coords = fmt::format("{}", g0_of(p, k0));
  for (int i = 1; i < p.rank; ++i) {  // row = k1 + N1 * (k2 + ...) (§2.1 item 5)
    coords += fmt::format(", {}", p.c[i] + int64_t(row % p.n[i]) * p.e[i]);
    row /= p.n[i];
  }
  fail("model.global-fault",
       fmt::format("tile {}: in-bound element ({}) at global address {} ({} bytes) is not inside "
                   "any allocation (map global_address {})",
                   p.what, coords, hex(addr), p.eb, hex(p.global_address)));
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

// Store and reduce share the element set: the in-bound elements of each row plus
// the H6 extension. apply(gdst, row, rel, len) moves shared row bytes
// [rel, rel + len) onto global bytes gdst.
template <class Apply>
void write_box(const Plan& p, uint32_t src_offset, GlobalMemory& g, Apply&& apply) {
  GlobalWindow<GlobalMemory, uint8_t*> win(g);
  const uint32_t eb = uint32_t(p.eb);
  if (p.k_lo >= p.k_hi) return;  // no row has an in-bound element
  // A box wholly in bounds has no H6 extension: its rows end inside the tensor.
  if (for_each_whole_row<true>(p, win, [&](uint64_t r, uint8_t* dst) {
        apply(dst, src_offset + uint32_t(r * p.pitch), 0, p.row_bytes);
      }))
    return;
  const RowLocator<decltype(win), true> locate(p, win);
  auto prefetch = [&](u128 base) { locate.prefetch(base); };
  for_each_row(p, locate, prefetch, [&](uint64_t r, bool in, u128 base, uint8_t* span) {
    if (!in) return;
    const uint32_t row = src_offset + uint32_t(r * p.pitch);
    // H6: the 16-byte global chunk holding the last in-bound element's bytes is
    // written whole.
    const u128 last_end = element_address(p, base, p.k_hi - 1) + eb;
    const u128 chunk_end = (last_end + 15) & ~u128(15);
    if (span) {
      // Extension elements are written only where their bytes exist (the
      // address right after an allocation's end lies in no other allocation).
      const uint32_t max_ext = std::min<uint32_t>(uint32_t((chunk_end - last_end) / eb), p.n[0] - p.k_hi);
      uint32_t ext = 0;
      if (max_ext && win.get(last_end, uint64_t(max_ext) * eb))
        ext = max_ext;
      else
        while (ext < max_ext && win.get(last_end + u128(ext) * eb, eb)) ++ext;
      apply(span, row, p.k_lo * eb, (p.k_hi - p.k_lo + ext) * eb);
      return;
    }
    // Element by element: strided dimension 0 (interleave), or a fault to name.
    for (uint32_t k0 = p.k_lo; k0 < p.k_hi; ++k0) {
      const u128 a = element_address(p, base, k0);
      uint8_t* dst = win.get(a, eb);
      if (!dst) global_fault(p, r, k0, a);
      apply(dst, row, k0 * eb, eb);
    }
    for (uint32_t k0 = p.k_hi; k0 < p.n[0]; ++k0) {
      const u128 a = element_address(p, base, k0);
      if (a + eb > chunk_end) break;
      uint8_t* dst = win.get(a, eb);
      if (!dst) break;
      apply(dst, row, k0 * eb, eb);
    }
  });
}

}  // namespace

void tile_load(const TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
               std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  if (tensor_map::is_packed(map.data_type)) return packed_load(map, coords, g, cta_smem, dst_offset);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), dst_offset, "load");
  const uint8_t* fill = fill_bytes(map.oob_fill, p.eb);
  // H3: TFLOAT32 maps round on load (FLOAT32_FTZ loads are plain copies).
  const bool tf32 = map.data_type == DataType::tfloat32 || map.data_type == DataType::tfloat32_ftz;
  const uint32_t eb = uint32_t(p.eb);
  uint8_t* smem = cta_smem.data();
  GlobalWindow<const GlobalMemory, const uint8_t*> win(g);
  if (!tf32 && for_each_whole_row<false>(p, win, [&](uint64_t r, const uint8_t* src) {
        put(p, smem, dst_offset + uint32_t(r * p.pitch), 0, src, p.row_bytes);
      }))
    return;
  const RowLocator<decltype(win), false> locate(p, win);
  auto prefetch = [&](u128 base) { locate.prefetch(base); };
  for_each_row(p, locate, prefetch, [&](uint64_t r, bool in, u128 base, const uint8_t* src) {
    const uint32_t row = dst_offset + uint32_t(r * p.pitch);
    if (!in || p.k_lo >= p.k_hi) {
      put(p, smem, row, 0, fill, p.row_bytes);
      return;
    }
    const uint32_t b_lo = p.k_lo * eb, b_hi = p.k_hi * eb;
    if (b_lo) put(p, smem, row, 0, fill, b_lo);
    if (src) {
      put(p, smem, row, b_lo, src, b_hi - b_lo);
    } else {
      for (uint32_t k0 = p.k_lo; k0 < p.k_hi; ++k0) {
        const u128 a = element_address(p, base, k0);
        const uint8_t* s = win.get(a, eb);
        if (!s) global_fault(p, r, k0, a);
        put(p, smem, row, k0 * eb, s, eb);
      }
    }
    if (b_hi < p.row_bytes) put(p, smem, row, b_hi, fill, p.row_bytes - b_hi);
    if (tf32) {  // every 4-byte element of the in-bound part (an interleaved slice holds several)
      for (uint32_t b = b_lo; b < b_hi; b += 4) {
        uint8_t* e = smem + swizzle_address(p.swz, row + b);
        uint32_t bits;
        std::memcpy(&bits, e, 4);
        bits = tf32_round(bits);
        std::memcpy(e, &bits, 4);
      }
    }
  });
}

void tile_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                uint32_t src_offset, GlobalMemory& g) {
  if (tensor_map::is_packed(map.data_type)) return packed_store(map, coords, cta_smem, src_offset, g);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "store");
  const uint8_t* smem = cta_smem.data();
  // H3: a plain copy for every type.
  write_box(p, src_offset, g, [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    take(p, smem, row, rel, dst, len);
  });
}

void tile_reduce(const TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                 std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g) {
  const spec::RedType type = red_type_for_map(map.data_type);
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "reduce");
  const uint8_t* smem = cta_smem.data();
  write_box(p, src_offset, g, [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    uint8_t tmp[kMaxRowBytes];
    take(p, smem, row, rel, tmp, len);
    reduce_elements(op, type, dst, tmp, len / uint32_t(element_size(map.data_type)));  // p.eb is a slice when interleaved
  });
}

}  // namespace tmakit::model
