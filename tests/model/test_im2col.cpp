// im2col modes (§4, H11): the GLUON Hopper vectors of §4.2, the ::w examples of
// PTX-T 5.5.5.4, random loads and stores against a naive reference written here
// (the filter bases come from an enumeration of the bounding-box lattice, not from
// a wrap-and-carry walk), properties of the walk, and every diagnostic it raises.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/im2col.hpp"
#include "tmakit/model/memory.hpp"

namespace {

using tmakit::DiagnosticError;
using namespace tmakit::model;
using namespace tmakit::tensor_map;
using Coords = std::vector<int32_t>;

// §3.1 for the 16-byte-chunk modes: chunk j of line l goes to j ^ (l mod 2 / 4 / 8).
uint32_t ref_swizzle(Swizzle s, uint32_t a) {
  const uint32_t m = s == Swizzle::b32 ? 2 : s == Swizzle::b64 ? 4 : s == Swizzle::b128 ? 8 : 1;
  return (a & ~0x70u) | ((((a >> 4) & 7) ^ ((a >> 7) % m)) << 4);
}
uint32_t ref_span(Swizzle s) { return s == Swizzle::b32 ? 32 : s == Swizzle::b64 ? 64 : s == Swizzle::b128 ? 128 : 0; }

std::string rule_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule;
  }
  return "ok";
}

// A dense NDHWC tensor: dims {C, W, (H), (D), N}, rows of C elements padded to 16 bytes.
struct Tensor {
  GlobalMemory g;
  TensorMap map;
  std::vector<uint8_t>* bytes = nullptr;
  Tensor(DataType t, std::vector<uint64_t> dims, Encode e = Encode::im2col) {
    map.encode = e;
    map.data_type = t;
    map.rank = int(dims.size());
    const uint64_t eb = uint64_t(element_bytes(t));
    uint64_t stride = (dims[0] * eb + 15) / 16 * 16;
    for (int i = 0; i < map.rank; ++i) {
      map.dims[i] = dims[i];
      if (i) map.strides[i - 1] = stride, stride *= dims[i];
    }
    map.global_address = g.allocate("T", stride, 1024);
    bytes = &g.allocation("T")->bytes;
  }
  // Byte offset of element (c, spatial..., n) in the tensor.
  uint64_t offset(int64_t c, const std::vector<int64_t>& spatial, int64_t n) const {
    uint64_t o = uint64_t(c) * uint64_t(element_bytes(map.data_type)) + uint64_t(n) * map.strides[map.rank - 2];
    for (size_t k = 0; k < spatial.size(); ++k) o += uint64_t(spatial[k]) * map.strides[k];
    return o;
  }
};

// ---- §4.2's GLUON vectors (f32, N=2, H=4, W=4, C=32, pixel value 16n + 4h + w + 1) ----

struct Gluon : Tensor {
  Gluon(uint64_t n) : Tensor(DataType::float32, {32, 4, 4, n}) {
    map.swizzle = Swizzle::b128;
    map.channels_per_pixel = 32;
    map.pixels_per_column = 16;
    for (int64_t in = 0; in < int64_t(n); ++in)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 4; ++w)
          for (int64_t c = 0; c < 32; ++c) {
            const float v = float(16 * in + 4 * h + w + 1);
            std::memcpy(bytes->data() + offset(c, {w, h}, in), &v, 4);
          }
  }
  // The first channel of each row; every channel of a row must hold the same value.
  std::vector<float> load(Coords c, std::array<int64_t, 3> off = {}) {
    std::vector<uint8_t> smem(4096, 0xEE);
    Im2colInfo info;
    info.offsets = off;
    im2col_load(map, c, info, g, smem, 0);
    std::vector<float> first;
    for (uint32_t p = 0; p < 16; ++p) {
      float v0;
      std::memcpy(&v0, smem.data() + ref_swizzle(Swizzle::b128, p * 128), 4);
      for (uint32_t k = 1; k < 32; ++k) {
        float v;
        std::memcpy(&v, smem.data() + ref_swizzle(Swizzle::b128, p * 128 + k * 4), 4);
        EXPECT_EQ(v, v0) << "row " << p << " channel " << k;
      }
      first.push_back(v0);
    }
    return first;
  }
};

TEST(Im2colGluon, PaddedCornersWrapIntoTheNextImage) {
  Gluon t(2);
  t.map.pixel_box_lower = {-1, -1};
  t.map.pixel_box_upper = {-1, -1};
  EXPECT_EQ(t.load({0, 2, 1, 0}),
            (std::vector<float>{7, 0, 9, 10, 11, 0, 0, 0, 0, 0, 17, 18, 19, 0, 21, 22}));
}

TEST(Im2colGluon, UnpaddedBoxCrossesFromImage0IntoImage1) {
  Gluon t(2);
  std::vector<float> want;
  for (int v = 8; v <= 23; ++v) want.push_back(float(v));
  EXPECT_EQ(t.load({0, 3, 1, 0}), want);
}

TEST(Im2colGluon, OffsetsMoveThePixelReadNotTheWalk) {
  Gluon t(1);
  t.map.pixel_box_lower = {-1, -1};
  t.map.pixel_box_upper = {-1, -1};
  EXPECT_EQ(t.load({0, -1, -1, 0}), (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11}));
  std::vector<float> all;
  for (int v = 1; v <= 16; ++v) all.push_back(float(v));
  EXPECT_EQ(t.load({0, -1, -1, 0}, {1, 1, 0}), all);
}

// ---- the naive reference: the bounding-box lattice, enumerated -------------

struct Pixel {
  int64_t n, d, h, w;
};

// Every filter base of images n0 .. n0 + images - 1, in (n, d, h, w) order, w fastest:
// along each spatial dim the lattice lower, lower + s, ... <= X - 1 + upper (§4.1, §4.2).
std::vector<Pixel> lattice(const TensorMap& m, int64_t n0, int64_t images) {
  const int sp = m.rank - 2;
  auto axis = [&](int k) {
    std::vector<int64_t> v;
    if (k >= sp) return std::vector<int64_t>{0};
    for (int64_t x = m.pixel_box_lower[k]; x <= int64_t(m.dims[k + 1]) - 1 + m.pixel_box_upper[k];
         x += m.element_strides[k + 1])
      v.push_back(x);
    return v;
  };
  std::vector<Pixel> out;
  for (int64_t n = n0; n < n0 + images; ++n)
    for (int64_t d : axis(2))
      for (int64_t h : axis(1))
        for (int64_t w : axis(0)) out.push_back({n, d, h, w});
  return out;
}

// The P filter bases from `start` on (start on the lattice).
std::vector<Pixel> bases_from(const TensorMap& m, Pixel start) {
  const auto all = lattice(m, start.n, int64_t(m.pixels_per_column) + 1);
  size_t i = 0;
  while (!(all[i].n == start.n && all[i].d == start.d && all[i].h == start.h && all[i].w == start.w)) ++i;
  return {all.begin() + i, all.begin() + i + m.pixels_per_column};
}

std::vector<uint8_t> ref_load(const Tensor& t, Coords c, std::array<int64_t, 3> off, uint32_t dst, size_t smem_size,
                              const std::vector<uint8_t>& before) {
  const TensorMap& m = t.map;
  const int sp = m.rank - 2, eb = element_bytes(m.data_type);
  Pixel start{c[m.rank - 1], sp > 2 ? c[3] : 0, sp > 1 ? c[2] : 0, c[1]};
  std::vector<uint8_t> out = before;
  out.resize(smem_size);
  const uint32_t pitch = std::max<uint32_t>(m.channels_per_pixel * eb, ref_span(m.swizzle));
  const auto bases = bases_from(m, start);
  for (uint32_t p = 0; p < bases.size(); ++p) {
    const Pixel b = bases[p];
    std::vector<int64_t> px = {b.w + off[0], b.h + off[1], b.d + off[2]};
    px.resize(sp);
    bool in = b.n >= 0 && b.n < int64_t(m.dims[m.rank - 1]);
    for (int k = 0; k < sp; ++k) in = in && px[k] >= 0 && px[k] < int64_t(m.dims[k + 1]);
    for (uint32_t k = 0; k < m.channels_per_pixel; ++k) {
      const int64_t ch = c[0] + k;
      const bool e_in = in && ch >= 0 && ch < int64_t(m.dims[0]);
      for (int byte = 0; byte < eb; ++byte) {
        const uint8_t fill = m.oob_fill == OobFill::zero ? 0 : (eb == 1 ? 0xF7 : byte % 2 ? 0x7F : 0xF7);  // H4
        const uint8_t v = e_in ? (*t.bytes)[t.offset(ch, px, b.n) + byte] : fill;
        out[ref_swizzle(m.swizzle, dst + p * pitch + k * eb + byte)] = v;
      }
    }
  }
  return out;
}

// Random maps, corners, strides, offsets, channel starts (negative and past C), batch
// starts (including n = N) and swizzles: the model's bytes equal the naive reference's.
TEST(Im2colLoad, RandomCasesMatchTheNaiveReference) {
  std::mt19937 rng(2024);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const DataType types[] = {DataType::uint8, DataType::float16, DataType::bfloat16, DataType::float32, DataType::float64};
  for (int iter = 0; iter < 300; ++iter) {
    const DataType type = types[pick(0, 4)];
    const int rank = pick(3, 5), eb = element_bytes(type);
    std::vector<uint64_t> dims = {uint64_t(pick(1, 4) * 16 / eb)};
    for (int k = 0; k < rank - 2; ++k) dims.push_back(uint64_t(pick(1, 6)));
    dims.push_back(uint64_t(pick(1, 3)));
    Tensor t(type, dims);
    for (auto& b : *t.bytes) b = uint8_t(rng());
    TensorMap& m = t.map;
    const Swizzle swz = std::array{Swizzle::none, Swizzle::b32, Swizzle::b64, Swizzle::b128}[pick(0, 3)];
    m.swizzle = swz;
    const uint32_t max_row = swz == Swizzle::none ? 128 : ref_span(swz);
    m.channels_per_pixel = uint32_t(pick(1, int(max_row / 16)) * 16 / eb);
    m.pixels_per_column = uint32_t(pick(1, 40));
    m.oob_fill = (type != DataType::uint8 && pick(0, 1)) ? OobFill::nan_request_zero_fma : OobFill::zero;
    const int lim = rank == 5 ? 2 : 3;
    for (int k = 0; k < rank - 2; ++k) {
      m.element_strides[k + 1] = uint32_t(pick(1, 3));
      m.pixel_box_lower[k] = pick(-lim, 1);
      m.pixel_box_upper[k] = pick(-lim, 1);
      if (int64_t(dims[k + 1]) - 1 + m.pixel_box_upper[k] < m.pixel_box_lower[k]) m.pixel_box_upper[k] = 0,
                                                                                  m.pixel_box_lower[k] = 0;
    }
    // A filter base on the lattice of the box.
    Coords c(rank);
    c[0] = pick(-2, 4) * 16 / eb;
    for (int k = 0; k < rank - 2; ++k) {
      const int64_t n_pts = (int64_t(dims[k + 1]) - 1 + m.pixel_box_upper[k] - m.pixel_box_lower[k]) /
                                m.element_strides[k + 1] + 1;
      c[k + 1] = int32_t(m.pixel_box_lower[k] + pick(0, int(n_pts - 1)) * int64_t(m.element_strides[k + 1]));
    }
    c[rank - 1] = pick(-1, int(dims[rank - 1]));
    std::array<int64_t, 3> off{};
    for (int k = 0; k < rank - 2; ++k) off[k] = pick(0, 2);
    Im2colInfo info;
    info.offsets = off;
    const uint32_t dst = uint32_t(pick(0, 3)) * 128;
    std::vector<uint8_t> smem(dst + 48 * 256 + 1024);
    for (auto& b : smem) b = uint8_t(rng());
    const auto want = ref_load(t, c, off, dst, smem.size(), smem);
    im2col_load(m, c, info, t.g, smem, dst);
    ASSERT_EQ(smem, want) << "case " << iter << " rank " << rank << " type " << name(type) << " swizzle "
                          << name(swz);
    EXPECT_EQ(im2col_bytes(m, info), uint64_t(m.pixels_per_column) * m.channels_per_pixel * eb);  // §4.2
  }
}

TEST(Im2colLoad, Tfloat32MapsRoundInBoundElementsOnly) {
  // H3: round to nearest even on bit 13; ties 0x...1000 go to the even neighbour. The OOB
  // row (w = -1) keeps the OOB-NaN fill (H4) unrounded.
  Tensor t(DataType::tfloat32, {4, 2, 1});
  t.map.channels_per_pixel = 4;
  t.map.pixels_per_column = 2;
  t.map.pixel_box_lower = {-1};
  t.map.oob_fill = OobFill::nan_request_zero_fma;
  const uint32_t in[4] = {0x3F801000, 0x3F803000, 0x3F800FFF, 0x7F800000};
  std::memcpy(t.bytes->data(), in, 16);
  std::vector<uint8_t> smem(32);
  im2col_load(t.map, Coords{0, -1, 0}, {}, t.g, smem, 0);
  uint32_t got[8];
  std::memcpy(got, smem.data(), 32);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(got[k], 0x7FF77FF7u) << k;
  EXPECT_EQ(got[4], 0x3F800000u);
  EXPECT_EQ(got[5], 0x3F804000u);
  EXPECT_EQ(got[6], 0x3F800000u);
  EXPECT_EQ(got[7], 0x7F800000u);  // +inf unchanged
}

// ---- properties of the walk -------------------------------------------------

// Started at the lower corner of image 0 with P = every lattice pixel of every image, the walk
// visits each pixel of the bounding box exactly once per channel group, in (n, d, h, w) order.
TEST(Im2colWalk, VisitsEachBoxPixelOncePerChannelGroupInOrder) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 100; ++iter) {
    const int rank = pick(3, 5);
    std::vector<uint64_t> dims = {64};
    for (int k = 0; k < rank - 2; ++k) dims.push_back(uint64_t(pick(1, 5)));
    dims.push_back(uint64_t(pick(1, 3)));
    Tensor t(DataType::uint8, dims);
    TensorMap& m = t.map;
    m.channels_per_pixel = 16;
    for (int k = 0; k < rank - 2; ++k) {
      m.element_strides[k + 1] = uint32_t(pick(1, 3));
      m.pixel_box_lower[k] = pick(-2, 0);
      m.pixel_box_upper[k] = pick(-1, 2);
      if (int64_t(dims[k + 1]) - 1 + m.pixel_box_upper[k] < m.pixel_box_lower[k]) m.pixel_box_upper[k] = 0;
    }
    const auto box = lattice(m, 0, int64_t(dims[rank - 1]));
    m.pixels_per_column = uint32_t(box.size());
    if (box.size() > 1024) continue;
    for (int32_t group = 0; group < 4; ++group) {
      Coords c(rank, 0);
      c[0] = group * 16;
      for (int k = 0; k < rank - 2; ++k) c[k + 1] = m.pixel_box_lower[k];
      const auto rows = im2col_rows(m, c, Im2colInfo{});
      ASSERT_EQ(rows.size(), box.size());
      for (size_t p = 0; p < rows.size(); ++p) {
        EXPECT_EQ(rows[p].row, p);
        EXPECT_EQ(rows[p].c, c[0]);
        EXPECT_FALSE(rows[p].halo);
        EXPECT_EQ(rows[p].n, box[p].n);
        EXPECT_EQ(rows[p].d, box[p].d);
        EXPECT_EQ(rows[p].h, box[p].h);
        ASSERT_EQ(rows[p].w, box[p].w) << "iteration " << iter << " row " << p;
        const bool in = box[p].w >= 0 && box[p].w < int64_t(dims[1]) && (rank < 4 || (box[p].h >= 0 && box[p].h < int64_t(dims[2]))) &&
                        (rank < 5 || (box[p].d >= 0 && box[p].d < int64_t(dims[3])));
        EXPECT_EQ(rows[p].in_bounds, in);
      }
    }
  }
}

TEST(Im2colWalk, RunningPastTheLastImageIsOutOfBounds) {
  Tensor t(DataType::uint8, {16, 2, 1});
  t.map.channels_per_pixel = 16;
  t.map.pixels_per_column = 4;
  const auto rows = im2col_rows(t.map, Coords{0, 0, 0}, Im2colInfo{});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].n, 1);  // §4.2 step 3: N is the last carry
  EXPECT_FALSE(rows[2].in_bounds);
  EXPECT_TRUE(rows[1].in_bounds);
}

// The H100 steps n by elementStrides[rank - 1] on the carry (tests/vectors/im2col_load/0080),
// not by 1 as §4.2 step 3 assumed.
TEST(Im2colWalk, TheCarryIntoNStepsByItsElementStride) {
  Tensor t(DataType::uint8, {16, 2, 5});
  t.map.channels_per_pixel = 16;
  t.map.pixels_per_column = 6;
  t.map.element_strides[2] = 2;
  const auto rows = im2col_rows(t.map, Coords{0, 0, 1}, Im2colInfo{});
  ASSERT_EQ(rows.size(), 6u);
  const int64_t want_n[] = {1, 1, 3, 3, 5, 5}, want_w[] = {0, 1, 0, 1, 0, 1};
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(rows[p].n, want_n[p]) << "row " << p;
    EXPECT_EQ(rows[p].w, want_w[p]) << "row " << p;
    EXPECT_EQ(rows[p].in_bounds, want_n[p] < 5) << "row " << p;
  }
}

// ---- .im2col::w and ::w::128 (sm_100+, §4.4) -------------------------------

// PTX-T 5.5.5.4 example 1 read outermost-first (n 7, h 2, w -1, c 0): W = 9, corners -1 / 0,
// stride 2. Buffer 1 (wHalo 1, wOffset 0) holds w = -1, 1, 3, 5, 7 and the halo 9; buffer 2
// (wHalo 0, wOffset 1) holds w = 0, 2, 4, 6, 8: the three taps of a stride-2 convolution.
TEST(Im2colWide, PtxExampleOneBuffers) {
  Tensor t(DataType::float16, {128, 9, 67, 64}, Encode::im2col_wide);
  TensorMap& m = t.map;
  m.swizzle = Swizzle::b128;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 5;
  m.pixel_box_lower_w = -1;
  m.pixel_box_upper_w = 0;
  m.element_strides = {1, 2, 1, 1, 1};
  auto ws = [&](int64_t halo, int64_t off) {
    Im2colInfo info{Im2colMode::w, {}, halo, off};
    std::vector<int64_t> w;
    for (const auto& r : im2col_rows(m, Coords{0, -1, 2, 7}, info)) {
      EXPECT_EQ(r.h, 2);
      EXPECT_EQ(r.n, 7);
      w.push_back(r.halo ? -100 - r.w : r.w);  // halo rows marked
    }
    return w;
  };
  EXPECT_EQ(ws(1, 0), (std::vector<int64_t>{-1, 1, 3, 5, 7, -109}));
  EXPECT_EQ(ws(0, 1), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(im2col_bytes(m, {Im2colMode::w, {}, 1, 0}), 6u * 64 * 2);
  // Past the box the W walk wraps to the (shifted) lower corner and carries into n.
  m.pixels_per_column = 7;
  const auto rows = im2col_rows(m, Coords{0, -1, 2, 7}, {Im2colMode::w, {}, 1, 0});
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[5].w, -1);
  EXPECT_EQ(rows[5].n, 8);
  EXPECT_EQ(rows[6].w, 1);
  EXPECT_TRUE(rows[7].halo);
  EXPECT_EQ(rows[7].w, 3);
  EXPECT_FALSE(rows[5].halo);
}

TEST(Im2colWide, W128LoadsFourGroupsOf32EachFollowedByTheHalo) {
  Tensor t(DataType::bfloat16, {64, 200, 3, 2}, Encode::im2col_wide);
  TensorMap& m = t.map;
  m.swizzle = Swizzle::b128;
  m.wide_mode = WideMode::w128;
  m.channels_per_pixel = 64;
  const Im2colInfo info{Im2colMode::w128, {}, 2, 0};
  const auto rows = im2col_rows(m, Coords{0, 0, 1, 0}, info);
  ASSERT_EQ(rows.size(), 128u + 4 * 2);
  for (int g = 0; g < 4; ++g) {
    for (int i = 0; i < 32; ++i) {
      const auto& r = rows[size_t(g * 34 + i)];
      EXPECT_FALSE(r.halo);
      EXPECT_EQ(r.w, g * 32 + i);
    }
    EXPECT_TRUE(rows[size_t(g * 34 + 32)].halo);
    EXPECT_EQ(rows[size_t(g * 34 + 32)].w, g * 32 + 32);
    EXPECT_EQ(rows[size_t(g * 34 + 33)].w, g * 32 + 33);
  }
  EXPECT_EQ(im2col_bytes(m, info), 136u * 128);
  EXPECT_EQ(im2col_footprint(m, info), 136u * 128);
}

TEST(Im2colWide, LoadPlacesHaloRowsRightAfterTheMainRows) {
  Tensor t(DataType::uint8, {16, 8, 1}, Encode::im2col_wide);
  TensorMap& m = t.map;
  m.swizzle = Swizzle::b64;  // §1.5: ::w maps are swizzled
  m.channels_per_pixel = 16;
  m.pixels_per_column = 3;
  for (size_t i = 0; i < t.bytes->size(); ++i) (*t.bytes)[i] = uint8_t(i / 16 + 1);  // pixel w holds w + 1
  std::vector<uint8_t> smem(1024, 0xEE);
  im2col_load(m, Coords{0, 4, 0}, {Im2colMode::w, {}, 2, 0}, t.g, smem, 0);
  // Rows of 16 bytes at a 64-byte pitch (H2): w = 4, 5, 6, then halo 7 and 8 (8 is OOB: zero).
  const uint8_t want[5] = {5, 6, 7, 8, 0};
  for (uint32_t r = 0; r < 5; ++r)
    for (uint32_t b = 0; b < 16; ++b) ASSERT_EQ(smem[ref_swizzle(Swizzle::b64, r * 64 + b)], want[r]) << r;
}

// ---- stores and reductions (.im2col_no_offs, §4.3) --------------------------

TEST(Im2colStore, WritesEachInBoundRowAndSkipsImagesPastN) {
  Tensor t(DataType::uint16, {8, 3, 2, 2});  // C 8 (16 bytes), W 3, H 2, N 2
  TensorMap& m = t.map;
  m.channels_per_pixel = 8;
  m.pixels_per_column = 10;  // from (w 1, h 1, n 1): two pixels of image 1, then eight past N
  std::fill(t.bytes->begin(), t.bytes->end(), 0xAA);
  std::vector<uint8_t> smem(10 * 16);
  for (size_t i = 0; i < smem.size(); ++i) smem[i] = uint8_t(i);
  im2col_store(m, Coords{0, 1, 1, 1}, smem, 0, t.g);
  // Bases from (w 1, h 1, n 1): (1,1,1) (2,1,1) then n = 2 (past N): 2 rows written.
  std::vector<uint8_t> want(t.bytes->size(), 0xAA);
  std::memcpy(want.data() + t.offset(0, {1, 1}, 1), smem.data(), 16);
  std::memcpy(want.data() + t.offset(0, {2, 1}, 1), smem.data() + 16, 16);
  EXPECT_EQ(*t.bytes, want);
}

TEST(Im2colStore, TheLastInBoundChunkIsWrittenWhole) {
  // H6 carried over (Q20 decision): C = 20 uint8 channels in 32-byte pixel rows, 32 channels per
  // row: channels 20..31 share the 16-byte chunk [16, 32) with channel 19 and are written too.
  Tensor t(DataType::uint8, {20, 4, 1});
  TensorMap& m = t.map;
  m.channels_per_pixel = 32;
  m.pixels_per_column = 2;
  std::fill(t.bytes->begin(), t.bytes->end(), 0xAA);
  std::vector<uint8_t> smem(64);
  for (size_t i = 0; i < smem.size(); ++i) smem[i] = uint8_t(i + 1);
  im2col_store(m, Coords{0, 2, 0}, smem, 0, t.g);
  std::vector<uint8_t> want(t.bytes->size(), 0xAA);
  std::memcpy(want.data() + 2 * 32, smem.data(), 32);
  std::memcpy(want.data() + 3 * 32, smem.data() + 32, 32);
  EXPECT_EQ(*t.bytes, want);
}

TEST(Im2colReduce, AddsTheRowsIntoTheTensor) {
  Tensor t(DataType::uint32, {4, 4, 1});
  TensorMap& m = t.map;
  m.channels_per_pixel = 4;
  m.pixels_per_column = 3;
  m.swizzle = Swizzle::b32;  // rows of 16 bytes at a 32-byte pitch, chunks swapped on odd lines
  for (size_t i = 0; i < t.bytes->size(); i += 4) (*t.bytes)[i] = 100;
  std::vector<uint8_t> smem(128, 0);
  for (uint32_t p = 0; p < 3; ++p)
    for (uint32_t k = 0; k < 4; ++k) smem[ref_swizzle(Swizzle::b32, p * 32 + k * 4)] = uint8_t(10 * p + k);
  im2col_reduce(m, Coords{0, 1, 0}, tmakit::spec::RedOp::add, smem, 0, t.g);
  for (uint32_t w = 0; w < 4; ++w)
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t v;
      std::memcpy(&v, t.bytes->data() + w * 16 + k * 4, 4);
      EXPECT_EQ(v, w >= 1 ? 100 + 10 * (w - 1) + k : 100) << w << "," << k;
    }
}

// ---- diagnostics -------------------------------------------------------------

struct Diag : ::testing::Test {
  Tensor t{DataType::float16, {8, 8, 8, 2}};
  std::vector<uint8_t> smem = std::vector<uint8_t>(8192);
  void SetUp() override {
    t.map.channels_per_pixel = 8;
    t.map.pixels_per_column = 8;
    t.map.pixel_box_lower = {-1, -1};
    t.map.pixel_box_upper = {-1, -1};
  }
  std::string load(Coords c, Im2colInfo info = {}, uint32_t dst = 0) {
    return rule_of([&] { im2col_load(t.map, c, info, t.g, smem, dst); });
  }
};

TEST_F(Diag, OffsetRangesPerRank) {
  EXPECT_EQ(load({0, 0, 0, 0}, {Im2colMode::im2col, {255, 0, 0}}), "ok");  // rank 4: [0, 255] (§4.1)
  EXPECT_EQ(load({0, 0, 0, 0}, {Im2colMode::im2col, {0, 256, 0}}), "tensor.im2col-offset-range");
  EXPECT_EQ(load({0, 0, 0, 0}, {Im2colMode::im2col, {-1, 0, 0}}), "tensor.im2col-offset-range");
  Tensor r3(DataType::float16, {8, 8, 2});
  r3.map.channels_per_pixel = 8, r3.map.pixels_per_column = 8;
  EXPECT_EQ(rule_of([&] { im2col_check(r3.map, Coords{0, 0, 0}, {Im2colMode::im2col, {65535}}); }), "ok");
  EXPECT_EQ(rule_of([&] { im2col_check(r3.map, Coords{0, 0, 0}, {Im2colMode::im2col, {65536}}); }),
            "tensor.im2col-offset-range");
  Tensor r5(DataType::float16, {8, 4, 4, 4, 2});
  r5.map.channels_per_pixel = 8, r5.map.pixels_per_column = 8;
  EXPECT_EQ(rule_of([&] { im2col_check(r5.map, Coords{0, 0, 0, 0, 0}, {Im2colMode::im2col, {0, 0, 31}}); }), "ok");
  EXPECT_EQ(rule_of([&] { im2col_check(r5.map, Coords{0, 0, 0, 0, 0}, {Im2colMode::im2col, {0, 0, 32}}); }),
            "tensor.im2col-offset-range");
}

TEST_F(Diag, FilterBaseOutsideTheBox) {
  // W = 8, corners -1 / -1: the base ranges over [-1, 6] (§4.1).
  EXPECT_EQ(load({0, -1, 6, 0}), "ok");
  EXPECT_EQ(load({0, -2, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(load({0, 7, 0, 0}), "tensor.im2col-base-outside-box");
  EXPECT_EQ(load({0, 0, 7, 0}), "tensor.im2col-base-outside-box");
  // Channel and batch coordinates are plain starts: any value, OOB filled.
  EXPECT_EQ(load({-8, 0, 0, 5}), "ok");
}

TEST_F(Diag, MapsTheWalkDoesNotTake) {
  TensorMap keep = t.map;
  t.map.encode = Encode::tiled;
  EXPECT_EQ(load({0, 0, 0, 0}), "model.map-unsupported");
  t.map = keep;
  // Interleaved maps walk one slice per row over dimensions 0..rank-3, C in one slice or
  // across several (hardware-notes.md "interleave decisions" item 9; the walk itself is
  // tests/model/test_interleave_im2col.cpp).
  t.map.interleave = Interleave::b16;
  EXPECT_EQ(load({0, 0, 0, 0}), "ok");
  t.map.dims[0] = 16;
  EXPECT_EQ(load({0, 0, 0, 0}), "ok");
  t.map = keep;
  t.map.data_type = DataType::u4_align8b;
  EXPECT_EQ(load({0, 0, 0, 0}), "model.map-unsupported");
  t.map = keep;
  t.map.channels_per_pixel = 0;
  EXPECT_EQ(load({0, 0, 0, 0}), "model.map-unsupported");
  t.map = keep;
  t.map.pixels_per_column = 1025;
  EXPECT_EQ(load({0, 0, 0, 0}), "model.map-unsupported");
  t.map = keep;
  t.map.element_strides[1] = 9;
  EXPECT_EQ(load({0, 0, 0, 0}), "model.map-unsupported");
  t.map = keep;
  EXPECT_EQ(load({0, 0, 0}), "model.coord-count");
}

TEST_F(Diag, MemoryFaults) {
  EXPECT_EQ(load({0, 0, 0, 0}, {}, 8192 - 8 * 16), "ok");
  EXPECT_EQ(load({0, 0, 0, 0}, {}, 8192 - 7 * 16), "model.shared-range");
  t.map.global_address += t.bytes->size() - 64;  // the tensor now runs past its allocation
  EXPECT_EQ(load({0, 0, 0, 0}), "model.global-fault");  // pixel (w 4, h 0) is the first one past it
}

TEST(Im2colWideDiag, HaloOffsetModeAndBox) {
  Tensor t(DataType::float16, {64, 16, 2, 1}, Encode::im2col_wide);
  TensorMap& m = t.map;
  m.swizzle = Swizzle::b128;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 4;
  auto check = [&](Coords c, Im2colInfo info) { return rule_of([&] { im2col_check(m, c, info); }); };
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w, {}, 511, 31}), "ok");
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w, {}, 512, 0}), "tensor.im2col-offset-range");
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w, {}, 0, 32}), "tensor.im2col-offset-range");
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w128, {}, 0, 0}), "tensor.map-kind");  // a W map
  m.wide_mode = WideMode::w128;
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w128, {}, 31, 0}), "ok");
  EXPECT_EQ(check({0, 0, 0, 0}, {Im2colMode::w128, {}, 32, 0}), "tensor.im2col-offset-range");
  // PTX-T 5.5.5.1: the W coordinate may lie left of the box, not right of it.
  EXPECT_EQ(check({0, -40, 0, 0}, {Im2colMode::w128, {}, 0, 0}), "ok");
  EXPECT_EQ(check({0, 15, 0, 0}, {Im2colMode::w128, {}, 0, 0}), "ok");
  EXPECT_EQ(check({0, 16, 0, 0}, {Im2colMode::w128, {}, 0, 0}), "tensor.im2col-base-outside-box");
}

TEST(Im2colMode, LoadModes) {
  // Every decoded load mode: the three im2col walks, and none for the tiled modes.
  EXPECT_EQ(im2col_mode_of(tmakit::ptx::LoadMode::im2col), Im2colMode::im2col);
  EXPECT_EQ(im2col_mode_of(tmakit::ptx::LoadMode::im2col_no_offs), Im2colMode::im2col);
  EXPECT_EQ(im2col_mode_of(tmakit::ptx::LoadMode::im2col_w), Im2colMode::w);
  EXPECT_EQ(im2col_mode_of(tmakit::ptx::LoadMode::im2col_w_128), Im2colMode::w128);
  for (auto m : {tmakit::ptx::LoadMode::tile, tmakit::ptx::LoadMode::gather4, tmakit::ptx::LoadMode::scatter4})
    EXPECT_FALSE(im2col_mode_of(m).has_value());
}

}  // namespace
