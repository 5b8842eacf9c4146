// Internal to tools/gpu: the scenario builders shared by the question cases
// (question_cases.cpp: Q1-Q17, question_cases_late.cpp: Q18-Q26).
#pragma once
#include <climits>
#include <random>

#include "cases.hpp"
#include "map_json.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools::questions {

using nlohmann::json;
using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;

inline std::vector<Case> g_out;  // what question_cases() returns
inline void add(const std::string& id, const std::string& q, const std::string& title, const ScenarioJson& s) {
  g_out.push_back({id, q, title, s.json()});
}

inline TensorMap tiled(DataType t, std::vector<uint64_t> dims, std::vector<uint64_t> strides, std::vector<uint32_t> box,
                Swizzle sw = Swizzle::none, OobFill fill = OobFill::zero, std::vector<uint32_t> es = {}) {
  TensorMap m;
  m.encode = Encode::tiled;
  m.data_type = t;
  m.rank = int(dims.size());
  for (int i = 0; i < m.rank; ++i) {
    m.dims[i] = dims[i];
    m.box[i] = box[i];
    m.element_strides[i] = i < int(es.size()) ? es[i] : 1;
    if (i + 1 < m.rank) m.strides[i] = strides[i];
  }
  m.swizzle = sw;
  m.oob_fill = fill;
  return m;
}

// rank 3-5 im2col map: dims {C, W, (H), (D), N}, dense rows of C × elemBytes rounded to 16.
inline TensorMap im2col(DataType t, std::vector<uint64_t> dims, std::vector<int32_t> lower, std::vector<int32_t> upper,
                 uint32_t cpp, uint32_t pixels, OobFill fill = OobFill::zero, std::vector<uint32_t> es = {}) {
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = t;
  m.rank = int(dims.size());
  uint64_t prev = (dims[0] * elem_bytes(t) + 15) / 16 * 16;
  for (int i = 0; i < m.rank; ++i) {
    m.dims[i] = dims[i];
    m.element_strides[i] = i < int(es.size()) ? es[i] : 1;
    if (i + 1 < m.rank) {
      m.strides[i] = prev;
      prev *= dims[i + 1];
    }
  }
  for (size_t k = 0; k < lower.size(); ++k) m.pixel_box_lower[k] = lower[k], m.pixel_box_upper[k] = upper[k];
  m.channels_per_pixel = cpp;
  m.pixels_per_column = pixels;
  m.oob_fill = fill;
  return m;
}

inline uint64_t extent(const TensorMap& m) {
  uint64_t last = m.dims[0] * elem_bytes(m.data_type);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return (last + 15) / 16 * 16;
}

inline std::string tensor_operand(ScenarioJson& s, const std::string& map, const std::vector<int64_t>& c,
                           const std::string& prefix = "c") {
  std::string t = "[" + map + ", {";
  for (size_t i = 0; i < c.size(); ++i) {
    s.sym(prefix + std::to_string(i), c[i]);
    t += (i ? ", " : "") + prefix + std::to_string(i);
  }
  return t + "}]";
}

// Little-endian bytes of `values`, each `eb` wide, as hex.
inline std::string pack(const std::vector<uint64_t>& values, int eb) {
  std::vector<uint8_t> b(values.size() * eb);
  for (size_t i = 0; i < values.size(); ++i) std::memcpy(&b[i * eb], &values[i], eb);
  return hex(b);
}

// One tile (or im2col) load of `m` into shared offset 1024 (+ dst_extra), armed with the
// full count (§2.3); the output is the region 1024.. (pre-filled with random bytes).
inline ScenarioJson one_load(const TensorMap& m, const std::vector<int64_t>& c, json global_init, uint64_t seed,
                      uint32_t dst_extra = 0, const std::string& info = "", uint64_t global_bytes = 0) {
  const uint64_t foot = m.smem_footprint();
  const uint32_t region = uint32_t((dst_extra + foot + 127) / 128 * 128 + 128);
  ScenarioJson s(1024 + region);
  s.add_global("A", global_bytes ? global_bytes : extent(m) + 64, std::move(global_init));
  s.add_map("map0", m, "A");
  s.add_shared_init(0, 1024, region, {{"random", seed}});
  s.sym("smem", "shared:" + std::to_string(1024 + dst_extra));
  s.sym("mbar", "shared:0");
  const bool i2c = m.encode == Encode::im2col;
  const std::string op = tensor_operand(s, "map0", c);
  load_steps(s, "cp.async.bulk.tensor" + dim_suffix(m.rank) + ".shared::cta.global" + (i2c ? ".im2col" : ".tile") +
                    ".mbarrier::complete_tx::bytes [smem], " + op + ", [mbar]" + (i2c ? ", " + info : "") + ";",
             m.bytes_per_box());
  s.out_shared("tile", 0, 1024, region);
  return s;
}

// One tile or im2col_no_offs store / reduction (op "" = store) from shared 1024, output A.
inline ScenarioJson one_write(const TensorMap& m, const std::vector<int64_t>& c, const std::string& op, json shared_init,
                       json global_init, uint64_t global_bytes = 0) {
  const uint32_t region = uint32_t((m.smem_footprint() + 127) / 128 * 128 + 128);
  ScenarioJson s(1024 + region);
  s.add_global("A", global_bytes ? global_bytes : extent(m) + 64, std::move(global_init));
  s.add_map("map0", m, "A");
  s.add_shared_init(0, 1024, shared_init.contains("hex") ? 0 : region, std::move(shared_init));
  s.sym("smem", "shared:1024");
  const std::string mode = m.encode == Encode::im2col ? ".im2col_no_offs" : ".tile";
  const std::string operand = tensor_operand(s, "map0", c);
  s.step("fence.proxy.async.shared::cta;");
  if (op.empty())
    s.step("cp.async.bulk.tensor" + dim_suffix(m.rank) + ".global.shared::cta" + mode + ".bulk_group " + operand +
           ", [smem];");
  else
    s.step("cp.reduce.async.bulk.tensor" + dim_suffix(m.rank) + ".global.shared::cta." + op + mode + ".bulk_group " +
           operand + ", [smem];");
  s.step("cp.async.bulk.commit_group;");
  s.step("cp.async.bulk.wait_group 0;");
  s.out_global("A", "A");
  return s;
}

// ---- the edge values of Q7, Q8, Q17 ----

inline const std::vector<uint64_t> kF32Edges = {
    0x3F801000, 0x3F803000, 0x3F802FFF, 0x7F7FF000, 0x00001000, 0x00000FFF, 0x807FFFFF, 0x7FC00001,
    0xFF800001, 0x7F800000, 0xFF800000, 0x80000000, 0x3FFFFFFF, 0x00000001, 0x80000001, 0x7FFFFFFF};
inline const std::vector<uint64_t> kF16Edges = {0x0001, 0x83FF, 0x7C01, 0xFE01, 0x7FFF, 0x7C00, 0xFC00, 0x8000,
                                         0x3C00, 0x0400, 0x03FF, 0x7BFF, 0x7E00, 0x0000, 0x8001, 0xFFFF};
inline const std::vector<uint64_t> kBf16Edges = {0x0001, 0x807F, 0x7F81, 0xFFC1, 0x7FFF, 0x7F80, 0xFF80, 0x8000,
                                          0x3F80, 0x0080, 0x007F, 0x7F7F, 0x7FC0, 0x0000, 0x8001, 0xFFFF};
inline const std::vector<uint64_t> kF64Edges = {0x0000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x7FF0000000000001ull,
                                         0xFFF8000000000001ull, 0x7FF0000000000000ull, 0x8000000000000000ull,
                                         0x3FF0000000000000ull, 0x7FEFFFFFFFFFFFFFull};

inline std::vector<uint64_t> edges_for(DataType t) {
  switch (t) {
    case DataType::float16: return kF16Edges;
    case DataType::bfloat16: return kBf16Edges;
    case DataType::float64: return kF64Edges;
    default: return kF32Edges;
  }
}

// Q1: narrow rows under a swizzle; the padding bytes and the byte count.
// The late questions (question_cases_late.cpp).
void q18();
void q19();
void q20();
void q21();
void q22();
void q24();
void q25();
void q26();

}  // namespace tmakit::gpu_tools::questions
