// The picture against the model: random valid maps load a tensor whose element
// values encode their own coordinates (model::tile_load / im2col_load); every
// chunk of the SVG is parsed back and its label and kind must match what the
// model actually put at that shared offset. Plus worked examples from §3.1/H2/H4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "tmakit/layout/render.hpp"
#include "tmakit/model/im2col.hpp"
#include "tmakit/model/tile.hpp"
#include "xml.hpp"

namespace tmakit::layout {
namespace {

namespace tm = tensor_map;
using Coord = std::vector<int64_t>;

constexpr uint8_t kSentinel = 0xA5;  // shared bytes the load must not touch (padding, past the box)

// A rank-R tensor in global memory whose element g holds 1 + its linear index.
struct Tensor {
  model::GlobalMemory mem;
  uint64_t base = 0;
};

uint64_t linear(const tm::TensorMap& m, const Coord& g) {
  uint64_t l = 0;
  for (int i = m.rank - 1; i >= 0; --i) l = l * m.dims[i] + uint64_t(g[i]);
  return l;
}

Tensor make_tensor(tm::TensorMap& m) {
  Tensor t;
  const int eb = tm::element_bytes(m.data_type);
  const uint64_t bytes = m.rank == 1 ? m.dims[0] * eb : m.strides[m.rank - 2] * m.dims[m.rank - 1];
  t.base = t.mem.allocate("T", bytes);
  m.global_address = t.base;
  uint8_t* p = t.mem.find(t.base, bytes);
  Coord g(size_t(m.rank), 0);
  for (;;) {
    uint64_t at = uint64_t(g[0]) * eb;
    for (int i = 1; i < m.rank; ++i) at += uint64_t(g[i]) * m.strides[i - 1];
    const uint64_t v = 1 + linear(m, g);
    std::memcpy(p + at, &v, size_t(eb));  // little endian, as the engine's memory
    int i = 0;
    while (i < m.rank && uint64_t(++g[i]) == m.dims[i]) g[i++] = 0;
    if (i == m.rank) break;
  }
  return t;
}

Coord decode(const tm::TensorMap& m, uint64_t v) {
  Coord g(size_t(m.rank));
  v -= 1;
  for (int i = 0; i < m.rank; ++i) g[i] = int64_t(v % m.dims[i]), v /= m.dims[i];
  return g;
}

bool in_bounds(const tm::TensorMap& m, const Coord& g) {
  for (int i = 0; i < m.rank; ++i)
    if (g[i] < 0 || uint64_t(g[i]) >= m.dims[i]) return false;
  return true;
}

Coord parse_label(const std::string& s) {
  Coord c;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    c.push_back(std::stoll(s.substr(i, j - i)));
    i = j == std::string::npos ? s.size() : j + 1;
  }
  return c;
}

// Checks every chunk of the SVG against the shared bytes the model wrote, and
// returns the in-bound elements found, so callers can check coverage too.
std::set<Coord> check_svg(const Placement& p, const std::vector<uint8_t>& smem, uint64_t fill_bits,
                          const std::string& ctx) {
  const tm::TensorMap& m = p.map;
  const uint32_t eb = uint32_t(tm::element_bytes(m.data_type));
  test::XmlNode root;
  try {
    root = test::parse_xml(render_svg(p));
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << ": " << e.what();
    return {};
  }
  EXPECT_EQ(root.name, "svg") << ctx;
  std::vector<const test::XmlNode*> chunks;
  root.find_all("g", "chunk", chunks);
  EXPECT_EQ(chunks.size(), size_t(p.lines_shown) * 8) << ctx;
  std::set<Coord> found;
  for (const test::XmlNode* c : chunks) {
    const uint32_t off = uint32_t(std::stoul(c->attr("data-offset")));
    const std::string kind = c->attr("data-kind");
    std::vector<const test::XmlNode*> labels;
    c->find_all("text", "label", labels);
    const std::string where = ctx + " chunk at " + std::to_string(off) + " (" + kind + ")";
    std::set<Coord> decoded;
    uint32_t fills = 0, untouched = 0;
    for (uint32_t b = 0; b < 16; b += eb) {
      uint64_t v = 0;
      std::memcpy(&v, smem.data() + off + b, eb);
      if (std::all_of(smem.begin() + off + b, smem.begin() + off + b + eb, [](uint8_t x) { return x == kSentinel; }))
        ++untouched;
      else if (v == fill_bits)
        ++fills;
      else
        decoded.insert(decode(m, v));
    }
    if (kind == "padding" || kind == "unused") {
      EXPECT_TRUE(labels.empty()) << where;
      EXPECT_EQ(untouched, 16 / eb) << where << ": the model wrote bytes the picture calls " << kind;
      continue;
    }
    if (labels.size() != 1) {
      ADD_FAILURE() << where << ": " << labels.size() << " labels";
      continue;
    }
    // The label names the first element; the chunk holds it and the next 16 / eb - 1 along dimension 0.
    const Coord first = parse_label(labels[0]->text);
    EXPECT_EQ(first.size(), size_t(m.rank)) << where;
    std::set<Coord> expect;
    for (uint32_t i = 0; i < 16 / eb && first.size() == size_t(m.rank); ++i) {
      Coord g = first;
      g[0] += int64_t(i) * m.traversal_stride(0);
      if (in_bounds(m, g)) expect.insert(g);
    }
    EXPECT_EQ(decoded, expect) << where << " labelled " << labels[0]->text;
    EXPECT_EQ(untouched, 0u) << where;
    EXPECT_EQ(fills, 16 / eb - expect.size()) << where;
    const char* want = expect.empty() ? "oob" : expect.size() == 16 / eb ? "data" : "partial";
    EXPECT_EQ(kind, want) << where;
    found.insert(decoded.begin(), decoded.end());
  }
  return found;
}

// H4: the OOB-NaN fill is 0x7FF7 repeated to the element width.
uint64_t fill_bits(const tm::TensorMap& m) {
  uint64_t v = 0;
  if (m.oob_fill == tm::OobFill::nan_request_zero_fma)
    for (int i = 0; i < tm::element_bytes(m.data_type) / 2; ++i) v |= uint64_t(0x7FF7) << (16 * i);
  return v;
}

// A random valid tiled map: element sizes 2..8 (values up to 40000 fit uint16),
// any swizzle of §3.1 or §3.4 with the inner row within its span (§1.3).
tm::TensorMap random_tile_map(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const tm::DataType types[] = {tm::DataType::uint16, tm::DataType::uint32, tm::DataType::float32,
                                tm::DataType::uint64, tm::DataType::float64};
  const tm::Swizzle swz[] = {tm::Swizzle::none, tm::Swizzle::b32, tm::Swizzle::b64, tm::Swizzle::b128,
                             tm::Swizzle::b128_atom_32b, tm::Swizzle::b128_atom_32b_flip_8b, tm::Swizzle::b128_atom_64b};
  for (;;) {
    tm::TensorMap m;
    m.data_type = types[pick(0, 4)];
    m.swizzle = swz[pick(0, 6)];
    m.rank = pick(1, 5);
    const int eb = tm::element_bytes(m.data_type);
    const int span = tm::swizzle_span(m.swizzle);
    m.box[0] = uint32_t(pick(1, span ? span / 16 : 8) * 16 / eb);  // §1.3: box[0] × eb a multiple of 16
    m.dims[0] = uint64_t(pick(1, 40));
    m.element_strides[0] = uint32_t(pick(1, 3));  // ignored without interleave (H16)
    uint64_t total = m.dims[0];
    for (int i = 1; i < m.rank; ++i) {
      m.dims[i] = uint64_t(pick(1, 7));
      m.box[i] = uint32_t(pick(1, 6));
      m.element_strides[i] = uint32_t(pick(1, 3));
      total *= m.dims[i];
      const uint64_t prev = i == 1 ? (m.dims[0] * eb + 15) / 16 * 16 : m.strides[i - 2] * m.dims[i - 1];
      m.strides[i - 1] = prev + 16 * uint64_t(pick(0, 1));
    }
    if (pick(0, 1)) m.oob_fill = tm::OobFill::nan_request_zero_fma;
    if (total >= 40000) continue;  // 2-byte values must stay below the sentinel 0xA5A5 and the NaN pattern
    if (!tm::validate(m, spec::Target{100, spec::Suffix::a}).has_errors()) return m;
  }
}

TEST(LayoutVsModel, RandomTileMapsLabelEveryChunkWithWhatTheModelLoads) {
  std::mt19937 rng(20240608);
  for (int iter = 0; iter < 300; ++iter) {
    tm::TensorMap m = random_tile_map(rng);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int eb = tm::element_bytes(m.data_type);
    std::vector<int32_t> c(size_t(m.rank));
    c[0] = pick(-3, 4) * (16 / eb);  // H9: c0 × eb a multiple of 16
    for (int i = 1; i < m.rank; ++i) c[i] = pick(-3, int(m.dims[i]) + 1);
    const uint32_t offset = 128 * uint32_t(pick(0, 15));
    Tensor t = make_tensor(m);
    std::vector<uint8_t> smem(offset + m.smem_footprint() + 256, kSentinel);
    model::tile_load(m, c, t.mem, smem, offset);
    const Placement p = place_tile(m, c, offset, 1u << 20);
    const std::string ctx = "iter " + std::to_string(iter) + " " + headline(p) + " swizzle " +
                            std::string(tm::name(m.swizzle));
    const std::set<Coord> found = check_svg(p, smem, fill_bits(m), ctx);
    // Coverage: the pictured chunks hold every in-bound element of the box (§2.1).
    std::set<Coord> want;
    for (uint64_t r = 0; r < m.rows(); ++r) {
      Coord g(size_t(m.rank));
      uint64_t rest = r;
      for (int i = 1; i < m.rank; ++i) {
        g[i] = c[i] + int64_t(rest % m.elements(i)) * m.element_strides[i];
        rest /= m.elements(i);
      }
      for (uint32_t k = 0; k < m.box[0]; ++k) {
        g[0] = c[0] + k;
        if (in_bounds(m, g)) want.insert(g);
      }
    }
    EXPECT_EQ(found, want) << ctx;
    if (HasFailure()) break;  // one map's report is enough to debug
  }
}

TEST(LayoutVsModel, Im2colRowsLabelTheChannelsAndPixelsTheModelLoads) {
  std::mt19937 rng(77);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 60; ++iter) {
    tm::TensorMap m;
    m.encode = tm::Encode::im2col;
    m.data_type = pick(0, 1) ? tm::DataType::float32 : tm::DataType::uint16;
    m.rank = pick(3, 5);
    const int eb = tm::element_bytes(m.data_type);
    m.swizzle = pick(0, 1) ? tm::Swizzle::none : tm::Swizzle::b64;
    m.channels_per_pixel = uint32_t(pick(1, 4) * 16 / eb);
    m.dims[0] = uint64_t(pick(1, 3) * 16 / eb);
    for (int i = 1; i < m.rank; ++i) m.dims[i] = uint64_t(pick(2, 5));
    m.strides[0] = m.dims[0] * eb;
    for (int i = 2; i < m.rank; ++i) m.strides[i - 1] = m.strides[i - 2] * m.dims[i - 1];
    for (int k = 0; k < m.rank - 2; ++k) {
      m.pixel_box_lower[k] = -pick(0, 1);
      m.pixel_box_upper[k] = -pick(0, 1);
      m.element_strides[k + 1] = uint32_t(pick(1, 2));
    }
    m.pixels_per_column = uint32_t(pick(1, 40));
    if (tm::validate(m, spec::Target{90, spec::Suffix::a}).has_errors()) continue;
    std::vector<int32_t> c(size_t(m.rank));
    c[0] = pick(0, 1) * (16 / eb);
    for (int k = 0; k < m.rank - 2; ++k) c[k + 1] = m.pixel_box_lower[k];
    c[m.rank - 1] = pick(0, int(m.dims[m.rank - 1]) - 1);
    model::Im2colInfo info;
    for (int k = 0; k < m.rank - 2; ++k) info.offsets[k] = pick(0, 1);
    Tensor t = make_tensor(m);
    const uint32_t offset = 128 * uint32_t(pick(0, 7));
    std::vector<uint8_t> smem(offset + model::im2col_footprint(m, info) + 256, kSentinel);
    model::im2col_load(m, c, info, t.mem, smem, offset);
    const Placement p = place_im2col(m, c, info, offset, 1u << 20);
    check_svg(p, smem, fill_bits(m), "im2col iter " + std::to_string(iter) + " " + headline(p));
    EXPECT_EQ(p.walk.size(), m.pixels_per_column);
    if (HasFailure()) break;
  }
}

// A tiled map of the worked examples.
tm::TensorMap tile_map(tm::DataType type, int rank, std::array<uint64_t, 5> dims, std::array<uint64_t, 4> strides,
                       std::array<uint32_t, 5> box, tm::Swizzle swizzle = tm::Swizzle::none) {
  tm::TensorMap m;
  m.data_type = type;
  m.rank = rank;
  m.dims = dims;
  m.strides = strides;
  m.box = box;
  m.swizzle = swizzle;
  return m;
}

// §3.1 worked by hand: with 128B swizzle, physical chunk j of the line at
// absolute offset a holds logical chunk j ^ ((a >> 7) & 7). A float16 row of
// 64 elements is one line, so chunk j of row r starts at x = 8 × (j ^ ((3 + r) & 7))
// when the box starts at 0x180 (phase 3 of 8).
TEST(LayoutExamples, Swizzle128bPhaseThreeFollowsTheXorOfTheLineIndex) {
  const tm::TensorMap m = tile_map(tm::DataType::float16, 2, {64, 8}, {128}, {64, 8}, tm::Swizzle::b128);
  const std::vector<int32_t> c{0, 0};
  const Placement p = place_tile(m, c, 0x180);
  EXPECT_EQ(p.phase, 3u);
  EXPECT_EQ(p.period_lines, 8u);
  ASSERT_EQ(p.lines_shown, 8u);
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t j = 0; j < 8; ++j) {
      const Chunk& ch = p.chunks[r * 8 + j];
      EXPECT_EQ(ch.offset, 0x180 + r * 128 + j * 16);
      EXPECT_EQ(ch.first[0], 8 * (j ^ ((3 + r) & 7))) << "row " << r << " chunk " << j;
      EXPECT_EQ(ch.first[1], r);
      EXPECT_EQ(ch.kind, ChunkKind::data);
    }
  EXPECT_NE(swizzle_line(p).find("phase 3 of 8"), std::string::npos) << swizzle_line(p);
}

// H2: a 16-byte row under the 64B swizzle takes a 64-byte slot, so a line holds
// two rows and six of its eight chunks are padding; H4 names the NaN fill.
TEST(LayoutExamples, NarrowRowIsPaddedToTheSpanAndOobFillIsNamed) {
  tm::TensorMap m = tile_map(tm::DataType::float32, 2, {10, 6}, {48}, {4, 8}, tm::Swizzle::b64);
  m.oob_fill = tm::OobFill::nan_request_zero_fma;
  const std::vector<int32_t> c{8, 0};
  const Placement p = place_tile(m, c, 0);
  EXPECT_EQ(p.pitch, 64u);
  EXPECT_EQ(p.lines_shown, 4u);  // 8 rows × 64 bytes
  int padding = 0, partial = 0, oob = 0;
  for (const Chunk& ch : p.chunks) {
    padding += ch.kind == ChunkKind::padding;
    partial += ch.kind == ChunkKind::partial;  // x = 8, 9 in bounds, 10, 11 not (dims[0] = 10)
    oob += ch.kind == ChunkKind::oob;          // rows y = 6, 7 (dims[1] = 6)
  }
  EXPECT_EQ(padding, 24);
  EXPECT_EQ(partial, 6);
  EXPECT_EQ(oob, 2);
  EXPECT_EQ(p.fill, "NaN 0x7ff77ff7");
}

TEST(LayoutRender, TextAndJsonCarryTheSameChunksAsTheSvg) {
  const tm::TensorMap m = tile_map(tm::DataType::uint32, 3, {24, 5, 3}, {96, 480}, {8, 2, 2}, tm::Swizzle::b32);
  const std::vector<int32_t> c{16, 4, 2};
  const Placement p = place_tile(m, c, 256);
  const nlohmann::json j = render_json(p);
  const std::string text = render_text(p);
  ASSERT_EQ(j["chunks"].size(), p.chunks.size());
  for (size_t i = 0; i < p.chunks.size(); ++i) {
    const auto& e = j["chunks"][i];
    EXPECT_EQ(e["offset"], p.chunks[i].offset);
    EXPECT_EQ(e["kind"], std::string(name(p.chunks[i].kind)));
    if (p.chunks[i].kind == ChunkKind::data) {
      EXPECT_NE(text.find(chunk_label(p, p.chunks[i])), std::string::npos) << chunk_label(p, p.chunks[i]);
    }
  }
  EXPECT_EQ(j["format"], "tmakit-layout/1");
  EXPECT_EQ(j["swizzle_phase"], 0);  // 256 mod 256 (§3.1: 32B repeats every 2 lines)
}

// Q26: with interleave every step along dimension 0 is a whole slice. A global memory
// whose every 16-byte chunk starts with its own offset lets each pictured chunk be
// checked against the model's load: a data chunk labelled (s, g1, g2, ...) holds the
// bytes of slice s at base + s × slice + Σ g_i × strides[i-1] (its second half for the
// second chunk of a 32-byte slice), an OOB chunk the zero fill; dimension rank-2 is
// walked once (every label carries its coordinate).
TEST(LayoutVsModel, InterleavedTileMapsLabelEveryChunkWithItsSlice) {
  std::mt19937 rng(2611);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 120; ++iter) {
    tm::TensorMap m;
    m.data_type = iter % 3 == 0 ? tm::DataType::uint8 : iter % 3 == 1 ? tm::DataType::uint16 : tm::DataType::float32;
    m.rank = 3 + iter % 3;
    m.interleave = iter % 2 ? tm::Interleave::b32 : tm::Interleave::b16;
    const uint32_t slice = m.interleave == tm::Interleave::b16 ? 16 : 32;
    m.swizzle = static_cast<tm::Swizzle>(pick(0, 3));
    m.box[0] = uint32_t(16 / tm::element_bytes(m.data_type) * pick(1, 3));
    m.element_strides[0] = uint32_t(pick(1, 2));
    m.dims[0] = uint64_t(pick(1, 8));
    uint64_t prev = m.dims[0] * slice;
    for (int i = 1; i < m.rank; ++i) {
      m.dims[i] = uint64_t(pick(1, 4));
      m.box[i] = uint32_t(pick(1, 3));
      m.strides[i - 1] = prev + 32 * uint64_t(pick(0, 1));
      prev = m.strides[i - 1] * m.dims[i];
    }
    model::GlobalMemory g;
    m.global_address = g.allocate("A", prev + 64, 1024);
    auto& bytes = g.allocation("A")->bytes;
    for (uint64_t a = 0; a < bytes.size(); a += 16) std::memcpy(&bytes[a], &a, 8), std::memset(&bytes[a + 8], 0xEE, 8);
    std::vector<int32_t> c(size_t(m.rank));
    for (int i = 0; i < m.rank; ++i) c[i] = pick(-1, int(m.dims[i]));
    const uint32_t offset = 128 * uint32_t(pick(0, 7));
    std::vector<uint8_t> smem(offset + m.smem_footprint() + 256, kSentinel);
    model::tile_load(m, c, g, smem, offset);
    const Placement p = place_tile(m, c, offset, 1u << 20);
    const std::string ctx = "iter " + std::to_string(iter) + " " + headline(p);
    EXPECT_EQ(p.unit_bytes, int(slice)) << ctx;
    uint32_t data = 0;
    for (const Chunk& ch : p.chunks) {
      if (ch.kind == ChunkKind::unused || ch.kind == ChunkKind::padding) continue;
      ASSERT_EQ(ch.elements, 1u) << ctx << " chunk " << ch.offset;  // one slice (or half of one) per chunk
      EXPECT_EQ(ch.first[m.rank - 2], c[size_t(m.rank - 2)]) << ctx;  // walked once
      uint64_t got = 0;
      std::memcpy(&got, &smem[ch.offset], 8);
      if (ch.kind == ChunkKind::oob) {
        EXPECT_EQ(got, 0u) << ctx << " chunk " << ch.offset;
        continue;
      }
      uint64_t want = uint64_t(ch.first[0]) * slice + (ch.logical - offset) % slice;
      for (int i = 1; i < m.rank; ++i) want += uint64_t(ch.first[size_t(i)]) * m.strides[size_t(i - 1)];
      EXPECT_EQ(got, want) << ctx << " chunk " << ch.offset;
      ++data;
    }
    EXPECT_EQ(uint64_t(data + std::count_if(p.chunks.begin(), p.chunks.end(),
                                            [](const Chunk& ch) { return ch.kind == ChunkKind::oob; })) *
                  16,
              m.bytes_per_box())
        << ctx;  // every slice byte is pictured once
  }
}

TEST(LayoutErrors, UnsupportedInputNamesTheRule) {
  tm::TensorMap m = tile_map(tm::DataType::float32, 2, {8, 8}, {32}, {8, 8});
  const std::vector<int32_t> one{0};
  auto rule_of = [&](auto&& f) {
    try {
      f();
    } catch (const DiagnosticError& e) {
      return e.diagnostic().rule;
    }
    return std::string("none");
  };
  EXPECT_EQ(rule_of([&] { place_tile(m, one, 0); }), "layout.coord-count");
  const std::vector<int32_t> two{0, 0};
  EXPECT_EQ(rule_of([&] { place_tile(m, two, 64); }), "layout.smem-align");  // H15: 128
  EXPECT_EQ(rule_of([&] { place_tile(m, two, 128); }), "none");
  m.data_type = tm::DataType::u4_align8b;
  EXPECT_EQ(rule_of([&] { place_tile(m, two, 0); }), "layout.unsupported");
  tm::TensorMap slices = tile_map(tm::DataType::uint16, 3, {8, 4, 2}, {16, 64}, {8, 4, 2});
  slices.interleave = tm::Interleave::b16;
  const std::vector<int32_t> three{0, 0, 0};
  EXPECT_EQ(rule_of([&] { place_tile(slices, three, 0); }), "none");  // Q26: drawn as slices
  tm::TensorMap i2c;
  i2c.encode = tm::Encode::im2col;
  i2c.data_type = tm::DataType::uint16;
  i2c.rank = 3;
  i2c.dims = {4, 4, 1};
  i2c.strides = {64, 256};
  i2c.channels_per_pixel = 8;
  i2c.pixels_per_column = 4;
  i2c.interleave = tm::Interleave::b16;
  EXPECT_EQ(rule_of([&] { place_im2col(i2c, three, model::Im2colInfo{}, 0); }), "layout.unsupported");
}

}  // namespace
}  // namespace tmakit::layout
