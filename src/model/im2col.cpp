// im2col walks (§4, H11): the filter base steps along W, wrapping to the lower
// corner and carrying into H, D and N (by N's element stride); each step fills one shared row with the
// channels of one input pixel. The contract is in im2col.hpp.
#include "tmakit/model/im2col.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "tmakit/diag.hpp"
#include "tmakit/model/numerics.hpp"
#include "tmakit/model/reduce.hpp"
#include "tmakit/model/swizzle.hpp"

namespace tmakit::model {
namespace {

using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::TensorMap;
using u128 = unsigned __int128;

constexpr uint32_t kMaxChannels = 256;        // §1.4 channelsPerPixel <= 256
constexpr uint32_t kMaxPixels = 1024;         // §1.4 pixelsPerColumn <= 1024
constexpr uint32_t kMaxElementStride = 8;     // §1.3 elementStrides <= 8
constexpr uint32_t kW128Pixels = 128;         // §4.4: ::w::128 always reads 128 pixels
constexpr uint32_t kW128Group = 32;           // §4.4: ... with a halo after every 32
constexpr int64_t kMaxHaloW = 511;            // §4.4: wHalo in [0, 512) for ::w
constexpr int64_t kMaxHaloW128 = 31;          //        and [0, 32) for ::w::128
constexpr int64_t kMaxWOffset = 31;           // §4.4: wOffset in [0, 32)
constexpr uint32_t kMaxRowBytes = kMaxChannels * 8;

// §4.1: im2col offsets share 16 bits: [0, 65535] (rank 3), [0, 255] (rank 4), [0, 31] (rank 5).
int64_t max_offset(int rank) { return rank == 3 ? 65535 : rank == 4 ? 255 : 31; }

const char* mode_name(Im2colMode m) {
  return m == Im2colMode::im2col ? ".im2col" : m == Im2colMode::w ? ".im2col::w" : ".im2col::w::128";
}
const char* dim_name(int k, bool sliced = false) {
  if (sliced) return k == 0 ? "C" : k == 1 ? "W" : "H";
  return k == 0 ? "W" : k == 1 ? "H" : "D";
}

[[noreturn]] void unsupported(const std::string& why) { fail("model.map-unsupported", "im2col: " + why); }

// What the walk needs from the map and the instruction. Spatial index k is tensor
// dimension k + 1 (W, H, D); N is dimension rank - 1.
// Interleaved maps (Q26, docs/hardware-notes.md "interleave decisions" item 9) walk
// differently on the H100: every row is one 16/32-byte slice (eb = the slice, cpp = 1,
// C = 1), the walked dimensions are tensor dimensions 0..rank-3 (C counted in slices, W,
// H; corners, offsets and element strides entry k apply to dimension k), dimension
// rank-2 stays at its coordinate (bounds-checked, never walked) and the carry goes into N.
struct Geometry {
  Im2colMode mode;
  bool sliced = false;  // interleaved: the walk above
  int first = 1;        // tensor dimension of spatial index 0: 1, or 0 when sliced
  int64_t fixed_coord = 0, fixed_size = 1;  // sliced: dimension rank-2
  uint64_t fixed_stride = 0;
  int rank, spatial, walked;  // spatial dims; dims the base walks (all, or W only in ::w modes)
  int eb;
  uint64_t address;
  int64_t C, N;
  uint64_t n_stride;
  int64_t n_step;  // elementStrides[rank - 1]: the carry into n steps by it (im2col_load/0080)
  std::array<int64_t, 3> size{}, lower{}, upper{}, step{}, off{};
  std::array<uint64_t, 3> stride{};
  int64_t w_shift;                       // ::w modes: wOffset (§4.4); 0 for .im2col
  uint32_t cpp, main_rows, group, halo;  // a halo of `halo` rows follows every `group` main rows
  uint32_t row_bytes, pitch;
  tensor_map::Swizzle swz;
  uint64_t rows() const { return main_rows + uint64_t(main_rows / group) * halo; }
};

Geometry make_geometry(const TensorMap& m, std::span<const int32_t> coords, const Im2colInfo& info) {
  const bool wide = info.mode != Im2colMode::im2col;
  if (m.encode != (wide ? Encode::im2col_wide : Encode::im2col))
    unsupported(fmt::format("{} needs an {} map, got {}", mode_name(info.mode),
                            wide ? "im2col_wide" : "im2col", tensor_map::name(m.encode)));
  if (wide && (m.wide_mode == tensor_map::WideMode::w128) != (info.mode == Im2colMode::w128))
    fail("tensor.map-kind", fmt::format("{} needs an im2col_wide map of mode {}, but the map's mode is {}",
                                        mode_name(info.mode), info.mode == Im2colMode::w128 ? "w128" : "w",
                                        tensor_map::name(m.wide_mode)));
  if (m.rank < 3 || m.rank > tensor_map::kMaxRank)
    unsupported(fmt::format("rank {} is outside 3..5 (NWC, NHWC, NDHWC)", m.rank));
  if (coords.size() != size_t(m.rank))
    fail("model.coord-count", fmt::format("im2col: {} coordinates for a rank-{} map", coords.size(), m.rank));
  Geometry g{};
  g.mode = info.mode;
  g.eb = tensor_map::is_packed(m.data_type) ? 0 : tensor_map::element_bytes(m.data_type);
  if (g.eb == 0)
    unsupported(fmt::format("data type {} is a packed type (sm_100 and later)", tensor_map::name(m.data_type)));
  g.cpp = m.channels_per_pixel;
  if (g.cpp < 1 || g.cpp > kMaxChannels)
    unsupported(fmt::format("channels_per_pixel = {} is outside 1..256", g.cpp));
  if (m.interleave != tensor_map::Interleave::none) {
    // Q26 (probe tools/gpu/probe_interleave_im2col.cu): rows of one slice, channelsPerPixel
    // ignored. ::w modes (sm_100) were never run with interleave.
    if (wide) unsupported(fmt::format("interleave {} with {} (sm_100) was never measured", tensor_map::name(m.interleave),
                                      mode_name(info.mode)));
    g.sliced = true;
    g.first = 0;
    g.eb = int(m.slice_bytes());
    g.cpp = 1;
  }
  g.main_rows = info.mode == Im2colMode::w128 ? kW128Pixels : m.pixels_per_column;
  if (g.main_rows < 1 || g.main_rows > kMaxPixels)
    unsupported(fmt::format("pixels_per_column = {} is outside 1..1024", g.main_rows));
  g.rank = m.rank;
  g.spatial = m.rank - 2;
  g.walked = wide ? 1 : g.spatial;
  g.address = m.global_address;
  g.C = g.sliced ? 1 : int64_t(m.dims[0]);
  g.N = int64_t(m.dims[m.rank - 1]);
  g.n_stride = m.stride_bytes(m.rank - 1);
  g.n_step = m.element_strides[m.rank - 1];
  if (g.n_step < 1 || g.n_step > kMaxElementStride)
    unsupported(fmt::format("element_strides[{}] = {} is outside 1..8", m.rank - 1, g.n_step));
  for (int k = 0; k < g.spatial; ++k) {
    const int t = k + g.first;  // tensor dimension
    g.size[k] = int64_t(m.dims[t]);
    g.stride[k] = t == 0 ? uint64_t(g.eb) : m.stride_bytes(t);  // sliced: slice k0 at k0 × slice
    const uint32_t es = m.element_strides[t];
    if (es < 1 || es > kMaxElementStride)
      unsupported(fmt::format("element_strides[{}] = {} is outside 1..8", t, es));
    g.step[k] = es;  // §4.2 item 4: traversal strides of W, H, D
  }
  if (g.sliced) {
    g.fixed_coord = coords[g.rank - 2];
    g.fixed_size = int64_t(m.dims[g.rank - 2]);
    g.fixed_stride = m.stride_bytes(g.rank - 2);
  }
  g.group = g.main_rows;
  if (!wide) {
    for (int k = 0; k < g.spatial; ++k) {
      g.lower[k] = m.pixel_box_lower[k];  // H11: entry 0 is W
      g.upper[k] = m.pixel_box_upper[k];
      g.off[k] = info.offsets[k];
      if (info.offsets[k] < 0 || info.offsets[k] > max_offset(g.rank))
        fail("tensor.im2col-offset-range",
             fmt::format("im2col offset {} (i2cOff{}) = {} is outside [0, {}] for a rank-{} map", k,
                         dim_name(k, g.sliced), info.offsets[k], max_offset(g.rank), g.rank));
    }
  } else {
    const int64_t max_halo = info.mode == Im2colMode::w ? kMaxHaloW : kMaxHaloW128;
    if (info.w_halo < 0 || info.w_halo > max_halo)
      fail("tensor.im2col-offset-range", fmt::format("wHalo = {} is outside [0, {}] for {}", info.w_halo,
                                                     max_halo, mode_name(info.mode)));
    if (info.w_offset < 0 || info.w_offset > kMaxWOffset)
      fail("tensor.im2col-offset-range",
           fmt::format("wOffset = {} is outside [0, {}]", info.w_offset, kMaxWOffset));
    // §4.4: wOffset shifts both W corners (and the W coordinate, in walk()).
    g.lower[0] = int64_t(m.pixel_box_lower_w) + info.w_offset;
    g.upper[0] = int64_t(m.pixel_box_upper_w) + info.w_offset;
    g.w_shift = info.w_offset;
    g.halo = uint32_t(info.w_halo);
    if (info.mode == Im2colMode::w128) g.group = kW128Group;
  }
  // §4.1, §13 item 6: the filter base starts inside the bounding box [lower, X - 1 + upper];
  // in ::w modes the W coordinate may lie left of the box (PTX-T 5.5.5.1), never right of it.
  // Sliced maps: the H100 raised an illegal instruction for a C, W or (rank 5) H base outside
  // its box (c = -4, c = C, w = W, w = -1, h = H: tests/vectors/logs/q26-im2col-probe).
  for (int k = 0; k < g.walked; ++k) {
    const int64_t start = coords[k + g.first] + g.w_shift;
    const int64_t last = g.size[k] - 1 + g.upper[k];
    if ((!wide && start < g.lower[k]) || start > last)
      fail("tensor.im2col-base-outside-box",
           fmt::format("{} coordinate coords[{}] = {}{} lies outside the bounding box [{}, {}] = [lower, dims[{}] - 1 + "
                       "upper]{}",
                       dim_name(k, g.sliced), k + g.first, coords[k + g.first],
                       wide ? fmt::format(" (+ wOffset {})", info.w_offset) : "",
                       wide ? std::string("-inf") : std::to_string(g.lower[k]), last, k + g.first,
                       wide ? " (::w modes allow only the left side)" : ""));
  }
  g.row_bytes = g.cpp * uint32_t(g.eb);
  // H2; sliced rows are dense (one slice apart) and then swizzled, as interleaved tiled rows.
  g.pitch = g.sliced ? g.row_bytes : std::max(g.row_bytes, swizzle_span_bytes(m.swizzle));
  g.swz = m.swizzle;
  return g;
}

// §4.2 step 3: the filter base advances along W, wraps to the lower corner past
// X - 1 + upper and carries into the next walked dimension, and finally into n.
void advance(const Geometry& g, std::array<int64_t, 3>& base, int64_t& n) {
  for (int k = 0; k < g.walked; ++k) {
    base[k] += g.step[k];
    if (base[k] <= g.size[k] - 1 + g.upper[k]) return;
    base[k] = g.lower[k];
  }
  // The H100 steps n by elementStrides[rank - 1], not by 1 as §4.2 step 3 assumed
  // (tests/vectors/im2col_load/0080: N = 3, stride 2, a W wrap from n = 1 lands on n = 3, OOB).
  n += g.n_step;
}

// Calls f(row) for every shared row in order: main rows, with halo rows after each group.
template <class F>
void walk(const Geometry& g, std::span<const int32_t> coords, F&& f) {
  std::array<int64_t, 3> base{};
  for (int k = 0; k < g.spatial; ++k) base[k] = coords[k + g.first];
  base[0] += g.w_shift;  // §4.4: wOffset moves the W coordinate with the corners
  int64_t n = coords[g.rank - 1];
  uint32_t row = 0;
  auto emit = [&](const std::array<int64_t, 3>& at, bool halo) {
    Im2colRow r;
    r.row = row++;
    r.n = n;
    r.c = g.sliced ? 0 : coords[0];
    r.halo = halo;
    std::array<int64_t, 3> px{};
    bool in = n >= 0 && n < g.N && (!g.sliced || (g.fixed_coord >= 0 && g.fixed_coord < g.fixed_size));
    for (int k = 0; k < g.spatial; ++k) {
      px[k] = at[k] + g.off[k];  // §4.2 step 2: base + offsets
      in = in && px[k] >= 0 && px[k] < g.size[k];
    }
    r.w = px[0], r.h = px[1], r.d = px[2];
    r.in_bounds = in;
    f(r);
  };
  for (uint32_t p = 0; p < g.main_rows; ++p) {
    emit(base, false);
    if ((p + 1) % g.group == 0)
      for (uint32_t k = 1; k <= g.halo; ++k) {
        std::array<int64_t, 3> at = base;
        at[0] += int64_t(k) * g.step[0];
        emit(at, true);
      }
    advance(g, base, n);
  }
}

// In-bound channels of a row, relative to c: [lo, hi) with 0 <= c + k < C; empty for OOB pixels.
std::pair<uint32_t, uint32_t> channel_range(const Geometry& g, const Im2colRow& r) {
  if (!r.in_bounds) return {0, 0};
  const int64_t lo = std::clamp<int64_t>(-r.c, 0, g.cpp);
  const int64_t hi = std::clamp<int64_t>(g.C - r.c, lo, g.cpp);
  return {uint32_t(lo), uint32_t(hi)};
}

// Global address of channel c + k of the row's pixel (§2.1 item 4 over C, W, H, D, N).
u128 element_address(const Geometry& g, const Im2colRow& r, uint32_t k) {
  const std::array<int64_t, 3> px{r.w, r.h, r.d};
  u128 a = g.address + u128(uint64_t(r.c + k)) * uint64_t(g.eb) + u128(uint64_t(r.n)) * g.n_stride +
           u128(uint64_t(g.fixed_coord)) * g.fixed_stride;
  for (int i = 0; i < g.spatial; ++i) a += u128(uint64_t(px[i])) * g.stride[i];
  return a;
}

template <class Mem>
auto find(Mem& mem, u128 a, uint64_t n) -> decltype(mem.find(0, 0)) {
  if (a + n > u128(UINT64_MAX)) return nullptr;
  return mem.find(uint64_t(a), n);
}

std::string hex(u128 a) {
  if (a >> 64) return fmt::format("0x{:x}{:016x}", uint64_t(a >> 64), uint64_t(a));
  return fmt::format("0x{:x}", uint64_t(a));
}

// Host pointer of global address g.address when the tensor's whole extent (the last
// element's end) lies in one allocation, the usual case: rows are then found by
// arithmetic instead of a search. Null otherwise.
template <class Mem>
auto whole_tensor(Mem& mem, const TensorMap& m, const Geometry& g) -> decltype(mem.find(0, 0)) {
  u128 end = g.address + uint64_t(g.eb);
  for (int i = 0; i < g.rank; ++i)
    end += u128(m.dims[i] ? m.dims[i] - 1 : 0) * (i == 0 ? uint64_t(g.eb) : m.stride_bytes(i));  // sliced: slices
  return find(mem, g.address, uint64_t(std::min<u128>(end - g.address, UINT64_MAX)));
}

// Host bytes of the row's channels [lo, hi); a missing element is a fault naming it.
template <class Mem, class Ptr>
Ptr row_bytes_at(Mem& mem, Ptr whole, const Geometry& g, const Im2colRow& r, uint32_t lo, uint32_t hi,
                 const char* what) {
  const u128 at = element_address(g, r, lo);
  if (whole) return whole + uint64_t(at - g.address);  // in-bound elements lie inside the extent
  if (Ptr p = find(mem, at, uint64_t(hi - lo) * g.eb)) return p;
  for (uint32_t k = lo; k < hi; ++k) {
    const u128 a = element_address(g, r, k);
    if (!find(mem, a, g.eb))
      fail("model.global-fault",
           fmt::format("im2col {}: in-bound element (c {}, w {}, h {}, d {}, n {}) of shared row {} at global address {} "
                       "({} bytes) is not inside any allocation (map global_address {})",
                       what, r.c + k, r.w, r.h, r.d, r.n, r.row, hex(a), g.eb, hex(g.address)));
  }
  fail("model.global-fault", fmt::format("im2col {}: the channels of shared row {} span two allocations", what, r.row));
}

void check_fits(const Geometry& g, size_t smem_size, uint32_t offset, const char* what) {
  // As for tiled boxes: a swizzle moves chunks inside their span, so the end is rounded up to it.
  uint64_t end = uint64_t(offset) + (g.rows() - 1) * g.pitch + g.row_bytes;
  if (const uint64_t span = swizzle_span_bytes(g.swz)) end = (end + span - 1) / span * span;
  if (end > smem_size)
    fail("model.shared-range",
         fmt::format("im2col {}: {} rows of pitch {} at shared offset {} need bytes up to {}, shared memory has {}", what,
                     g.rows(), g.pitch, offset, end, smem_size));
}

// Shared row bytes [rel, rel + len) of the row at absolute offset `row`, in pieces that the
// swizzle moves as a unit: f(physical offset, piece start relative to rel, piece length).
// `granule` = swizzle_granule_bytes(swz), hoisted out of the row loop.
template <class F>
void for_each_piece(tensor_map::Swizzle swz, uint32_t granule, uint32_t row, uint32_t rel, uint32_t len, F&& f) {
  if (granule == 0) return f(row + rel, 0u, len);
  for (uint32_t done = 0; done < len;) {
    const uint32_t a = row + rel + done;
    const uint32_t n = std::min(len - done, granule - (a & (granule - 1)));
    f(swizzle_address(swz, a), done, n);
    done += n;
  }
}

// Store and reduce share the element set: the in-bound channels of each in-bound row, plus the
// rest of the 16-byte global chunk that holds the last one (H6; the Q20 decision). apply(dst, row,
// rel, len) moves shared row bytes [rel, rel + len) onto the global bytes at dst.
template <class Apply>
void write_rows(const TensorMap& m, std::span<const int32_t> coords, std::span<const uint8_t> smem,
                uint32_t src_offset, GlobalMemory& mem, const char* what, Apply&& apply) {
  const Im2colInfo no_offs{};  // .im2col_no_offs: the load walk with offsets 0 (§4.3)
  const Geometry g = make_geometry(m, coords, no_offs);
  check_fits(g, smem.size(), src_offset, what);
  uint8_t* whole = whole_tensor(mem, m, g);
  walk(g, coords, [&](const Im2colRow& r) {
    const auto [lo, hi] = channel_range(g, r);
    if (lo >= hi) return;
    const u128 last_end = element_address(g, r, hi - 1) + uint64_t(g.eb);
    const u128 chunk_end = (last_end + 15) & ~u128(15);
    uint32_t ext = 0;
    while (hi + ext < g.cpp && last_end + u128(ext + 1) * uint64_t(g.eb) <= chunk_end &&
           find(mem, last_end + u128(ext) * uint64_t(g.eb), g.eb))
      ++ext;
    uint8_t* dst = row_bytes_at(mem, whole, g, r, lo, hi, what);
    apply(dst, src_offset + r.row * g.pitch, lo * uint32_t(g.eb), (hi - lo + ext) * uint32_t(g.eb));
  });
}

void take(tensor_map::Swizzle swz, const uint8_t* smem, uint32_t row, uint32_t rel, uint8_t* dst, uint32_t len) {
  for_each_piece(swz, swizzle_granule_bytes(swz), row, rel, len, [&](uint32_t phys, uint32_t at, uint32_t n) { std::memcpy(dst + at, smem + phys, n); });
}

}  // namespace

std::optional<Im2colMode> im2col_mode_of(ptx::LoadMode mode) {
  switch (mode) {
    case ptx::LoadMode::im2col: case ptx::LoadMode::im2col_no_offs: return Im2colMode::im2col;
    case ptx::LoadMode::im2col_w: return Im2colMode::w;
    case ptx::LoadMode::im2col_w_128: return Im2colMode::w128;
    default: return std::nullopt;
  }
}

void im2col_check(const TensorMap& map, std::span<const int32_t> coords, const Im2colInfo& info) {
  (void)make_geometry(map, coords, info);
}

std::vector<Im2colRow> im2col_rows(const TensorMap& map, std::span<const int32_t> coords, const Im2colInfo& info) {
  const Geometry g = make_geometry(map, coords, info);
  std::vector<Im2colRow> rows;
  rows.reserve(g.rows());
  walk(g, coords, [&](const Im2colRow& r) { rows.push_back(r); });
  return rows;
}

uint64_t im2col_row_count(const TensorMap& map, const Im2colInfo& info) {
  const uint64_t main = info.mode == Im2colMode::w128 ? kW128Pixels : map.pixels_per_column;
  const uint64_t groups = info.mode == Im2colMode::w128 ? kW128Pixels / kW128Group : 1;
  const uint64_t halo = info.mode == Im2colMode::im2col ? 0 : uint64_t(std::max<int64_t>(info.w_halo, 0));
  return main + groups * halo;
}

uint64_t im2col_bytes(const TensorMap& map, const Im2colInfo& info) {
  return im2col_row_count(map, info) * map.row_bytes();  // §4.2: full rows, OOB included
}

uint64_t im2col_footprint(const TensorMap& map, const Im2colInfo& info) {
  // To the end of the last swizzle span, as TensorMap::smem_footprint: dense interleaved
  // rows (one slice each) can end inside a span, and the XOR moves chunks anywhere in it.
  const uint64_t bytes = im2col_row_count(map, info) * map.row_pitch();
  const uint64_t span = uint64_t(tensor_map::swizzle_span(map.swizzle));
  return span ? (bytes + span - 1) / span * span : bytes;
}

std::pair<uint64_t, uint64_t> im2col_global_extent(const TensorMap& map, std::span<const int32_t> coords,
                                                   const Im2colInfo& info) {
  const Geometry g = make_geometry(map, coords, info);
  u128 lo = ~u128(0), hi = 0;
  walk(g, coords, [&](const Im2colRow& r) {
    const auto [a, b] = channel_range(g, r);
    if (a >= b) return;
    lo = std::min(lo, element_address(g, r, a));
    hi = std::max(hi, element_address(g, r, b - 1) + uint64_t(g.eb));
  });
  if (hi == 0 || hi > u128(UINT64_MAX)) return {0, 0};
  return {uint64_t(lo) & ~15ull, (uint64_t(hi) + 15) & ~15ull};
}

void im2col_load(const TensorMap& map, std::span<const int32_t> coords, const Im2colInfo& info, const GlobalMemory& mem,
                 std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  const Geometry g = make_geometry(map, coords, info);
  check_fits(g, cta_smem.size(), dst_offset, "load");
  // The fill of OOB channels and pixels, as in tile mode: zeros or the OOB-NaN (H4).
  std::array<uint8_t, kMaxRowBytes> fill{};
  if (map.oob_fill == tensor_map::OobFill::nan_request_zero_fma)
    for (size_t i = 0; i < fill.size(); ++i) fill[i] = oob_nan_byte(g.eb, int(i % g.eb));
  const bool tf32 = map.data_type == DataType::tfloat32 || map.data_type == DataType::tfloat32_ftz;  // H3
  uint8_t* smem = cta_smem.data();
  const uint32_t granule = swizzle_granule_bytes(g.swz);
  auto put = [&](uint32_t row, uint32_t rel, const uint8_t* src, uint32_t len) {
    for_each_piece(g.swz, granule, row, rel, len, [&](uint32_t phys, uint32_t at, uint32_t n) { std::memcpy(smem + phys, src + at, n); });
  };
  const uint32_t eb = uint32_t(g.eb);
  const uint8_t* whole = whole_tensor(mem, map, g);
  walk(g, coords, [&](const Im2colRow& r) {
    const uint32_t row = dst_offset + r.row * g.pitch;
    const auto [lo, hi] = channel_range(g, r);
    if (lo >= hi) return put(row, 0, fill.data(), g.row_bytes);
    if (lo) put(row, 0, fill.data(), lo * eb);
    const uint8_t* src = row_bytes_at(mem, whole, g, r, lo, hi, "load");
    uint32_t words[kMaxChannels];
    if (tf32) {  // f32 elements, rounded on the way (H3); a slice holds 4 or 8 of them
      std::memcpy(words, src, (hi - lo) * eb);
      for (uint32_t& w : std::span(words, (hi - lo) * eb / 4)) w = tf32_round(w);
      src = reinterpret_cast<const uint8_t*>(words);
    }
    put(row, lo * eb, src, (hi - lo) * eb);
    if (hi < g.cpp) put(row, hi * eb, fill.data(), (g.cpp - hi) * eb);
  });
}

void im2col_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                  uint32_t src_offset, GlobalMemory& g) {
  // H3: a plain copy for every type.
  write_rows(map, coords, cta_smem, src_offset, g, "store", [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    take(map.swizzle, cta_smem.data(), row, rel, dst, len);
  });
}

void im2col_reduce(const TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                   std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g) {
  const spec::RedType type = red_type_for_map(map.data_type);
  const uint32_t eb = uint32_t(tensor_map::element_bytes(map.data_type));
  write_rows(map, coords, cta_smem, src_offset, g, "reduce", [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    uint8_t tmp[kMaxRowBytes];
    take(map.swizzle, cta_smem.data(), row, rel, tmp, len);
    reduce_elements(op, type, dst, tmp, len / eb);
  });
}

}  // namespace tmakit::model
