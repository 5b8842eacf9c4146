// Scenarios for the (H100) questions of tma-semantics.md §14 that the recorded
// categories do not already settle (docs/hardware-notes.md, "§14 answers").
// Each is small and deterministic; `engine_vectors record questions` runs them
// on the GPU engine and writes scenario + the hardware's bytes, or the fault or
// hang, to tests/vectors/questions/<id>.json; tests/scenario/test_question_vectors.cpp
// replays them through the model.
#include <climits>
#include <random>

#include "cases.hpp"
#include "map_json.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools {
namespace {

using nlohmann::json;
using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;

std::vector<Case> g_out;
void add(const std::string& id, const std::string& q, const std::string& title, const ScenarioJson& s) {
  g_out.push_back({id, q, title, s.json()});
}

TensorMap tiled(DataType t, std::vector<uint64_t> dims, std::vector<uint64_t> strides, std::vector<uint32_t> box,
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
TensorMap im2col(DataType t, std::vector<uint64_t> dims, std::vector<int32_t> lower, std::vector<int32_t> upper,
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

uint64_t extent(const TensorMap& m) {
  uint64_t last = m.dims[0] * elem_bytes(m.data_type);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return (last + 15) / 16 * 16;
}

std::string tensor_operand(ScenarioJson& s, const std::string& map, const std::vector<int64_t>& c,
                           const std::string& prefix = "c") {
  std::string t = "[" + map + ", {";
  for (size_t i = 0; i < c.size(); ++i) {
    s.sym(prefix + std::to_string(i), c[i]);
    t += (i ? ", " : "") + prefix + std::to_string(i);
  }
  return t + "}]";
}

// Little-endian bytes of `values`, each `eb` wide, as hex.
std::string pack(const std::vector<uint64_t>& values, int eb) {
  std::vector<uint8_t> b(values.size() * eb);
  for (size_t i = 0; i < values.size(); ++i) std::memcpy(&b[i * eb], &values[i], eb);
  return hex(b);
}

// One tile (or im2col) load of `m` into shared offset 1024 (+ dst_extra), armed with the
// full count (§2.3); the output is the region 1024.. (pre-filled with random bytes).
ScenarioJson one_load(const TensorMap& m, const std::vector<int64_t>& c, json global_init, uint64_t seed,
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
ScenarioJson one_write(const TensorMap& m, const std::vector<int64_t>& c, const std::string& op, json shared_init,
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

const std::vector<uint64_t> kF32Edges = {
    0x3F801000, 0x3F803000, 0x3F802FFF, 0x7F7FF000, 0x00001000, 0x00000FFF, 0x807FFFFF, 0x7FC00001,
    0xFF800001, 0x7F800000, 0xFF800000, 0x80000000, 0x3FFFFFFF, 0x00000001, 0x80000001, 0x7FFFFFFF};
const std::vector<uint64_t> kF16Edges = {0x0001, 0x83FF, 0x7C01, 0xFE01, 0x7FFF, 0x7C00, 0xFC00, 0x8000,
                                         0x3C00, 0x0400, 0x03FF, 0x7BFF, 0x7E00, 0x0000, 0x8001, 0xFFFF};
const std::vector<uint64_t> kBf16Edges = {0x0001, 0x807F, 0x7F81, 0xFFC1, 0x7FFF, 0x7F80, 0xFF80, 0x8000,
                                          0x3F80, 0x0080, 0x007F, 0x7F7F, 0x7FC0, 0x0000, 0x8001, 0xFFFF};
const std::vector<uint64_t> kF64Edges = {0x0000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x7FF0000000000001ull,
                                         0xFFF8000000000001ull, 0x7FF0000000000000ull, 0x8000000000000000ull,
                                         0x3FF0000000000000ull, 0x7FEFFFFFFFFFFFFFull};

std::vector<uint64_t> edges_for(DataType t) {
  switch (t) {
    case DataType::float16: return kF16Edges;
    case DataType::bfloat16: return kBf16Edges;
    case DataType::float64: return kF64Edges;
    default: return kF32Edges;
  }
}

// Q1: narrow rows under a swizzle; the padding bytes and the byte count.
void q1() {
  const char* t = "row pitch, padding bytes and complete_tx when the inner row is narrower than the swizzle span";
  add("q01_narrow_128b_f16", "Q1", t,
      one_load(tiled(DataType::float16, {64, 16}, {128}, {32, 8}, Swizzle::b128), {0, 2}, {{"random", 101}}, 102));
  // Armed with more than the data bytes (16 more, or the padded footprint): a hang here
  // means the count is exactly the data bytes (completion at the data bytes shows >=).
  for (uint64_t tx : {528ull, 1024ull}) {
    json j = one_load(tiled(DataType::float16, {64, 16}, {128}, {32, 8}, Swizzle::b128), {0, 2}, {{"random", 101}}, 102).json();
    j["program"][2] = "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(tx) + ";";
    g_out.push_back({"q01_narrow_128b_f16_armed_" + std::to_string(tx), "Q1",
                     "the same box armed with " + std::to_string(tx) + " bytes (data: 512)", j});
  }
  add("q01_narrow_64b_u8", "Q1", t,
      one_load(tiled(DataType::uint8, {48, 8}, {48}, {16, 6}, Swizzle::b64), {16, 1}, {{"random", 103}}, 104, 128));
  add("q01_narrow_32b_f32_nan", "Q1", t,
      one_load(tiled(DataType::float32, {8, 6}, {32}, {4, 5}, Swizzle::b32, OobFill::nan_request_zero_fma), {-4, 3},
               {{"random", 105}}, 106, 384));
}

// Q4: complete_tx of im2col loads whose pixels run past the batch (n >= N).
void q4() {
  const char* t = "im2col load with n >= N: OOB rows filled and counted in complete_tx";
  TensorMap m = im2col(DataType::float16, {16, 4, 4, 2}, {0, 0}, {0, 0}, 16, 24, OobFill::nan_request_zero_fma);
  add("q04_im2col_into_n_past", "Q4", t, one_load(m, {0, 0, 2, 1}, {{"random", 401}}, 402, 0, "{0, 0}"));
  add("q04_im2col_all_past", "Q4", t, one_load(m, {0, 1, 1, 5}, {{"random", 403}}, 404, 0, "{1, 0}"));
  json j = one_load(m, {0, 0, 2, 1}, {{"random", 401}}, 402, 0, "{0, 0}").json();
  j["program"][2] = "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(m.bytes_per_box() + 16) + ";";
  g_out.push_back({"q04_im2col_into_n_past_armed_plus16", "Q4", "the n >= N load armed with 16 bytes more than its rows", j});
}

// Q6: the OOB-NaN of every float type (a partly OOB box).
void q6() {
  const DataType types[] = {DataType::float16,     DataType::bfloat16, DataType::float32,     DataType::float64,
                            DataType::float32_ftz, DataType::tfloat32, DataType::tfloat32_ftz};
  int i = 0;
  for (DataType t : types) {
    const int eb = elem_bytes(t), n = 32 / eb, q = 16 / eb;
    add(std::string("q06_nan_") + type_name(t), "Q6", "OOB-NaN bit pattern per float type",
        one_load(tiled(t, {uint64_t(n), 2}, {32}, {uint32_t(n), 4}, Swizzle::none, OobFill::nan_request_zero_fma),
                 {-q, 0}, {{"random", 600 + i}}, 650 + i));
    ++i;
  }
}

// Q7, Q8: tf32 / ftz maps and NaN payloads / subnormals on loads, stores, reductions.
void q7_q8() {
  struct Probe {
    const char* id;
    const char* q;
    DataType t;
    const char* op;  // "load", "store", or a reduction
  };
  const Probe probes[] = {
      {"q07_tf32_load", "Q7", DataType::tfloat32, "load"},       {"q07_tf32_store", "Q7", DataType::tfloat32, "store"},
      {"q07_tf32_reduce_add", "Q7", DataType::tfloat32, "add"},   {"q07_tf32ftz_load", "Q7", DataType::tfloat32_ftz, "load"},
      {"q07_tf32ftz_store", "Q7", DataType::tfloat32_ftz, "store"}, {"q08_f32ftz_load", "Q8", DataType::float32_ftz, "load"},
      {"q08_f32ftz_store", "Q8", DataType::float32_ftz, "store"},   {"q08_f32ftz_reduce_add", "Q8", DataType::float32_ftz, "add"},
      {"q08_tf32ftz_reduce_add", "Q8", DataType::tfloat32_ftz, "add"}, {"q08_f32_load", "Q8", DataType::float32, "load"},
      {"q08_f32_store", "Q8", DataType::float32, "store"},         {"q08_f16_load", "Q8", DataType::float16, "load"},
      {"q08_bf16_load", "Q8", DataType::bfloat16, "load"},         {"q08_f64_load", "Q8", DataType::float64, "load"},
      {"q08_f16_store", "Q8", DataType::float16, "store"},
  };
  for (const Probe& p : probes) {
    const int eb = elem_bytes(p.t);
    std::vector<uint64_t> v = edges_for(p.t), w = v;
    std::rotate(w.begin(), w.begin() + 3, w.end());  // the other reduction operand
    const uint32_t n = uint32_t(v.size());
    TensorMap m = tiled(p.t, {n}, {}, {n});
    const std::string title = std::string(type_name(p.t)) + " " + p.op + " of NaN payloads, subnormals, infinities and rounding ties";
    if (std::string(p.op) == "load")
      add(p.id, p.q, title, one_load(m, {0}, {{"hex", pack(v, eb)}}, 700));
    else
      add(p.id, p.q, title,
          one_write(m, {0}, std::string(p.op) == "store" ? "" : p.op, {{"hex", pack(v, eb)}},
                    {{"hex", pack(w, eb) + std::string(2 * (extent(m) + 64 - n * eb), '0')}}));
  }
}

// Q11, Q12: element strides.
void q11_q12() {
  add("q11_es0_ignored", "Q11", "elementStrides[0] = 4 without interleave",
      one_load(tiled(DataType::uint16, {64, 4}, {128}, {16, 4}, Swizzle::none, OobFill::zero, {4, 1}), {8, 0},
               {{"random", 1101}}, 1102));
  TensorMap m = tiled(DataType::uint32, {8, 10, 7}, {32, 320}, {8, 8, 5}, Swizzle::none, OobFill::zero, {1, 3, 2});
  add("q12_strides_inbound", "Q12", "traversal strides 3 and 2, boxes not multiples of them",
      one_load(m, {0, 1, 2}, {{"random", 1201}}, 1202));
  add("q12_strides_oob", "Q12", "traversal strides: the OOB test on the traversed coordinates",
      one_load(m, {0, 4, 3}, {{"random", 1203}}, 1204));
}

// Q13: coordinate arithmetic width. Stride 0 on dimension 1 (H17: accepted) lets a
// tensor of 2^32 - 1 rows live in 16 bytes, so rows near and past 2^31 can be read.
void q13() {
  const char* t = "coordinates near 2^31: c + k x E past INT32_MAX on a dimension of 2^32 - 1";
  TensorMap m = tiled(DataType::uint8, {16, 4294967295ull}, {0}, {16, 8});
  add("q13_rows_past_int32max", "Q13", t, one_load(m, {0, 2147483644}, {{"random", 1301}}, 1302, 0, "", 64));
  TensorMap s = tiled(DataType::uint8, {16, 4294967295ull}, {0}, {16, 16}, Swizzle::none, OobFill::zero, {1, 4});
  add("q13_strided_past_int32max", "Q13", t, one_load(s, {0, 2147483640}, {{"random", 1303}}, 1304, 0, "", 64));
  add("q13_int32min", "Q13", "the most negative coordinate", one_load(m, {0, INT32_MIN}, {{"random", 1305}}, 1306, 0, "", 64));
  add("q13_high_rows", "Q13", "rows between 2^31 and 2^32 - 1 cannot be named: the largest start, INT32_MAX - 3",
      one_load(m, {0, 2147483647 - 3}, {{"random", 1307}}, 1308, 0, "", 64));
  // Which part faults: the extent of dimension 1, or the size of a coordinate?
  int i = 0;
  for (uint64_t dim : {4294967295ull, 2147483648ull, 2147483647ull, 1073741824ull, 65536ull}) {
    TensorMap d = tiled(DataType::uint8, {16, dim}, {0}, {16, 8});
    add("q13_dim1_" + std::to_string(dim), "Q13", "dims[1] = " + std::to_string(dim) + " (stride 0), coordinates 0",
        one_load(d, {0, 0}, {{"random", 1310 + i}}, 1330 + i, 0, "", 64));
    ++i;
  }
  TensorMap small = tiled(DataType::uint8, {16, 8}, {0}, {16, 8});
  for (int64_t c : {int64_t(1) << 16, int64_t(1) << 20, int64_t(1) << 24, int64_t(1) << 30, int64_t(2147483640),
                    -(int64_t(1) << 16), -(int64_t(1) << 24), -(int64_t(1) << 30)}) {
    add("q13_c1_" + std::string(c < 0 ? "neg" : "") + std::to_string(c < 0 ? -c : c), "Q13",
        "dims {16, 8}, coordinate c[1] = " + std::to_string(c), one_load(small, {0, c}, {{"random", 1340 + i}}, 1360 + i, 0, "", 64));
    ++i;
  }
  for (int64_t c : {int64_t(1) << 20, -(int64_t(1) << 20), int64_t(2147483632)}) {
    add("q13_c0_" + std::string(c < 0 ? "neg" : "") + std::to_string(c < 0 ? -c : c), "Q13",
        "dims {16, 8}, coordinate c[0] = " + std::to_string(c), one_load(small, {c, 0}, {{"random", 1340 + i}}, 1360 + i, 0, "", 64));
    ++i;
  }
  // Where between 2^31 and 2^32 - 1 the extent starts to fault, and whether rows past
  // 2^31 of a wide-enough dimension are read (64-bit) or wrap to negative (32-bit, OOB).
  for (uint64_t dim : {2147483664ull, 3221225472ull, 4294967040ull, 4294967294ull}) {
    TensorMap d = tiled(DataType::uint8, {16, dim}, {0}, {16, 8});
    add("q13_dim1_" + std::to_string(dim), "Q13", "dims[1] = " + std::to_string(dim) + " (stride 0), coordinates 0",
        one_load(d, {0, 0}, {{"random", 1310 + i}}, 1330 + i, 0, "", 64));
    ++i;
  }
  TensorMap wide = tiled(DataType::uint8, {16, 2147483664ull}, {0}, {16, 8});
  add("q13_rows_cross_2p31", "Q13", "dims[1] = 2^31 + 16, rows 2^31 - 4 .. 2^31 + 3: c + k past INT32_MAX",
      one_load(wide, {0, 2147483644}, {{"random", 1392}}, 1393, 0, "", 64));
  TensorMap big = tiled(DataType::uint8, {16, 2147483647ull}, {0}, {16, 8});
  add("q13_dim1_2147483647_top", "Q13", "dims[1] = 2^31 - 1, rows 2^31 - 8 .. 2^31 - 1 (no overflow)",
      one_load(big, {0, 2147483640}, {{"random", 1390}}, 1391, 0, "", 64));
  // The same extent (2^31 + 16, stride 0) for a store, a reduction and a prefetch:
  // do they fault like loads (coord.extent-2p31)?
  add("q13x_store_dim1_2p31_16", "Q13", "tile store, dims[1] = 2^31 + 16 (stride 0), coordinates 0",
      one_write(wide, {0, 0}, "", {{"random", 1394}}, {{"random", 1395}}, 64));
  TensorMap wide32 = tiled(DataType::uint32, {4, 2147483664ull}, {0}, {4, 8});
  add("q13x_reduce_dim1_2p31_16", "Q13", "tile .add reduction (uint32), dims[1] = 2^31 + 16 (stride 0), coordinates 0",
      one_write(wide32, {0, 0}, "add", {{"random", 1396}}, {{"random", 1397}}, 64));
  ScenarioJson pf = one_load(small, {0, 0}, {{"random", 1398}}, 1399, 0, "", 64);
  json j = pf.json();
  j["tensor_maps"]["wide"] = map_json(wide, "A", 0);
  j["program"].insert(j["program"].begin(), "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [wide, {0, 0}];");
  g_out.push_back({"q13x_prefetch_dim1_2p31_16", "Q13", "tile prefetch of a map with dims[1] = 2^31 + 16, then a load", j});
}

// Q16: a copy completing before the arming arrive; tx counts at and past 2^20 - 1.
void q16() {
  {
    ScenarioJson s(4096);
    TensorMap m = tiled(DataType::uint32, {64, 8}, {256}, {64, 2});  // 512 bytes
    s.add_global("A", 2048, {{"random", 1601}});
    s.add_map("map0", m, "A");
    s.sym("bar1", "shared:0");
    s.sym("bar2", "shared:8");
    s.sym("flags", "shared:64");
    s.sym("ta", "shared:1024");
    s.sym("tb", "shared:2048");
    const std::string op = tensor_operand(s, "map0", {0, 3});
    const std::string load = "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes ";
    s.step("mbarrier.init.shared::cta.b64 [bar1], 1;");
    s.step("mbarrier.init.shared::cta.b64 [bar2], 1;");
    s.step("fence.mbarrier_init.release.cluster;");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar2], 512;");
    s.step(load + "[ta], " + op + ", [bar1];");  // bar1 not armed yet: its tx goes negative
    s.step(load + "[tb], " + op + ", [bar2];");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 p, [bar2], 0;");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar1], 512;");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 p, [bar1], 0;");
    s.step("mbarrier.test_wait.parity.shared::cta.b64 q0, [bar1], 0;");  // phase 0 done, phase 1 not:
    s.step("mbarrier.test_wait.parity.shared::cta.b64 q1, [bar1], 1;");  // completed exactly once
    s.step("@q0 st.shared.b32 [flags], 1;");
    s.step("@q1 st.shared.b32 [flags+4], 1;");
    s.out_shared("flags", 0, 64, 16);
    s.out_shared("tiles", 0, 1024, 1536);
    add("q16_complete_before_arm", "Q16", "a load completing on an unarmed barrier, then arrive.expect_tx", s);
  }
  for (uint64_t tx : {1048575ull, 1048576ull, 1048577ull}) {
    ScenarioJson s(2048);
    s.sym("mbar", "shared:0");
    s.sym("flags", "shared:64");
    s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
    s.step("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mbar], " + std::to_string(tx) + ";");
    s.step("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [mbar], " + std::to_string(tx) + ";");
    s.step("mbarrier.arrive.shared::cta.b64 _, [mbar];");
    s.step("mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 0;");
    s.step("@p st.shared.b32 [flags], 1;");
    s.step("@!p st.shared.b32 [flags], 2;");
    s.out_shared("flags", 0, 64, 16);
    add("q16_tx_" + std::to_string(tx), "Q16", "expect_tx then complete_tx of " + std::to_string(tx) + " bytes (range 2^20 - 1, §8.1)", s);
  }
}

// Q17: the non-tensor reductions of §6.2 on edge values, and tensor (op, type) pairs §6.1 calls invalid.
void q17() {
  struct Pair {
    const char* op;
    const char* type;
    int eb;
    DataType edges;  // the pool of edge values
  };
  const DataType I = DataType::uint32, L = DataType::uint64;
  const Pair pairs[] = {
      {"add", "u32", 4, I}, {"add", "s32", 4, I}, {"add", "u64", 8, L}, {"add", "f32", 4, DataType::float32},
      {"add", "f64", 8, DataType::float64}, {"add.noftz", "f16", 2, DataType::float16},
      {"add.noftz", "bf16", 2, DataType::bfloat16}, {"min", "u32", 4, I}, {"min", "s32", 4, I}, {"min", "u64", 8, L},
      {"min", "s64", 8, L}, {"min", "f16", 2, DataType::float16}, {"min", "bf16", 2, DataType::bfloat16},
      {"max", "u32", 4, I}, {"max", "s32", 4, I}, {"max", "u64", 8, L}, {"max", "s64", 8, L},
      {"max", "f16", 2, DataType::float16}, {"max", "bf16", 2, DataType::bfloat16}, {"inc", "u32", 4, I},
      {"dec", "u32", 4, I}, {"and", "b32", 4, I}, {"or", "b32", 4, I}, {"xor", "b32", 4, I}, {"and", "b64", 8, L},
      {"or", "b64", 8, L}, {"xor", "b64", 8, L}};
  const std::vector<uint64_t> ints = {0, 1, 2, 3, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 7, 0, 3, 2, 1, 0xFFFFFFFF, 4};
  const std::vector<uint64_t> longs = {0, 1, 2, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull,
                                       0xFFFFFFFFull, 0x100000000ull};
  int i = 0;
  for (const Pair& p : pairs) {
    std::vector<uint64_t> d = p.edges == I ? ints : p.edges == L ? longs : edges_for(p.edges);
    std::vector<uint64_t> s = d;
    std::mt19937_64 r(1700 + i++);
    std::shuffle(s.begin(), s.end(), r);
    const size_t bytes = d.size() * p.eb;  // 16 × 4, 8 × 8, 16 × 2: multiples of 16
    ScenarioJson sc(2048);
    sc.add_global("A", bytes, {{"hex", pack(d, p.eb)}});
    sc.add_shared_init(0, 1024, 0, {{"hex", pack(s, p.eb)}});
    sc.sym("smem", "shared:1024");
    sc.sym("gaddr", "global:A");
    sc.step("fence.proxy.async.shared::cta;");
    sc.step(std::string("cp.reduce.async.bulk.global.shared::cta.bulk_group.") + p.op + "." + p.type + " [gaddr], [smem], " +
            std::to_string(bytes) + ";");
    sc.step("cp.async.bulk.commit_group;");
    sc.step("cp.async.bulk.wait_group 0;");
    sc.out_global("A", "A");
    std::string op = p.op;
    for (char& ch : op) if (ch == '.') ch = '_';
    add(std::string("q17_bulk_") + op + "_" + p.type, "Q17",
        std::string("cp.reduce.async.bulk .") + p.op + "." + p.type + " on edge values", sc);
  }
  // NaN operands of f64 and f32 adds: which operand's bits come out (d is global, s shared).
  const std::vector<uint64_t> d64 = {0x7ff8000000000011ull, 0xfff8000000000033ull, 0x7ff0000000000055ull,
                                     0x7ff8000000000077ull, 0x7ff0000000000099ull, 0x7ff0000000000000ull,
                                     0xfff80000000000bbull, 0x3ff0000000000000ull};
  const std::vector<uint64_t> s64 = {0x7ff8000000000022ull, 0x7ff8000000000044ull, 0x7ff8000000000066ull,
                                     0x7ff0000000000088ull, 0xfff00000000000aaull, 0xfff0000000000000ull,
                                     0x3ff0000000000000ull, 0xfff00000000000ccull};
  std::vector<uint64_t> d32, s32;
  for (size_t k = 0; k < d64.size(); ++k) {  // the same pairs in f32, then swapped
    auto narrow = [](uint64_t x) { return (x >> 32 & 0x80000000u) | ((x >> 52 & 0x7ff) == 0x7ff ? 0x7f800000u : 0x3f800000u) |
                                          (x >> 29 & 0x00400000u) | (x & 0xff); };
    d32.push_back(narrow(d64[k])), s32.push_back(narrow(s64[k]));
  }
  for (size_t k = 0; k < d64.size(); ++k) d32.push_back(s32[k]), s32.push_back(d32[k]);
  for (bool f64 : {true, false}) {
    ScenarioJson sc(2048);
    sc.add_global("A", 64, {{"hex", f64 ? pack(d64, 8) : pack(d32, 4)}});
    sc.add_shared_init(0, 1024, 0, {{"hex", f64 ? pack(s64, 8) : pack(s32, 4)}});
    sc.sym("smem", "shared:1024");
    sc.sym("gaddr", "global:A");
    sc.step("fence.proxy.async.shared::cta;");
    sc.step(std::string("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.") + (f64 ? "f64" : "f32") +
            " [gaddr], [smem], 64;");
    sc.step("cp.async.bulk.commit_group;");
    sc.step("cp.async.bulk.wait_group 0;");
    sc.out_global("A", "A");
    add(std::string("q17_bulk_add_") + (f64 ? "f64" : "f32") + "_nan_pairs", "Q17",
        "cp.reduce.async.bulk .add: pairs of quiet/signalling NaNs, inf + -inf, NaN + 1", sc);
  }
  {
    TensorMap m = tiled(DataType::float64, {8}, {}, {8});
    add("q17_tensor_add_float64_nan_pairs", "Q17", "tensor .add on a float64 map with the NaN pairs",
        one_write(m, {0}, "add", {{"hex", pack(s64, 8)}}, {{"hex", pack(d64, 8) + std::string(128, '0')}}));
  }
  struct Bad {
    const char* op;
    DataType t;
  };
  for (Bad b : {Bad{"add", DataType::int64}, Bad{"add", DataType::float64}, Bad{"min", DataType::float32},
                Bad{"add", DataType::uint16}}) {
    const int eb = elem_bytes(b.t);
    const uint32_t n = 64 / eb;
    TensorMap m = tiled(b.t, {n}, {}, {n});
    add(std::string("q17_tensor_") + b.op + "_" + type_name(b.t), "Q17",
        std::string("tensor .") + b.op + " on a " + type_name(b.t) + " map (not in the §6.1 table)",
        one_write(m, {0}, b.op, {{"random", 1750}}, {{"random", 1751}}));
  }
}

// Q18: two tensor reductions of the same box in flight together.
void q18() {
  TensorMap m = tiled(DataType::uint32, {32, 4}, {128}, {32, 4});
  {
    ScenarioJson s(2048);
    s.add_global("A", 512, {{"random", 1801}});
    s.add_map("map0", m, "A");
    s.add_shared_init(0, 1024, 512, {{"random", 1802}});
    s.sym("smem", "shared:1024");
    const std::string op = tensor_operand(s, "map0", {0, 0});
    s.step("fence.proxy.async.shared::cta;");
    for (int k = 0; k < 4; ++k) s.step("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group " + op + ", [smem];");
    s.step("cp.async.bulk.commit_group;");
    s.step("cp.async.bulk.wait_group 0;");
    s.out_global("A", "A");
    add("q18_four_reductions_one_group", "Q18", "four .add reductions of one box in one bulk group (per-element atomicity)", s);
  }
  {
    ScenarioJson s(2048, 4);
    s.add_global("A", 512, {{"random", 1803}});
    s.add_map("map0", m, "A");
    for (int k = 0; k < 4; ++k) s.add_shared_init(k, 1024, 512, {{"random", 1804 + k}});
    s.sym("smem", "shared:1024");
    const std::string op = tensor_operand(s, "map0", {0, 0});
    for (int k = 0; k < 4; ++k) s.step(k, 0, "fence.proxy.async.shared::cta;");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group " + op + ", [smem];");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.async.bulk.commit_group;");
    for (int k = 0; k < 4; ++k) s.step(k, 0, "cp.async.bulk.wait_group 0;");
    s.out_global("A", "A");
    add("q18_four_ctas", "Q18", "four CTAs reduce (.add) into the same box at once", s);
  }
}

// Q19: im2col details the random vectors leave to chance.
void q19() {
  // PTX-T 5.5.4 example 2 read as (c, w, h, n): W = 9, corners 0 / -2, w = 7 lies past X - 1 + upper = 6.
  TensorMap ex2 = im2col(DataType::float32, {4, 9, 9, 1}, {0, 0}, {-2, -2}, 4, 16);
  add("q19_base_past_upper", "Q19", "filter base one past X - 1 + upper (PTX-T 5.5.4 example 2 read as c, w, h, n)",
      one_load(ex2, {0, 7, 4, 0}, {{"random", 1901}}, 1902, 0, "{0, 0}"));
  add("q19_base_below_lower", "Q19", "filter base one below the lower corner",
      one_load(im2col(DataType::float32, {4, 8, 1}, {-1}, {-1}, 4, 8), {0, -2, 0}, {{"random", 1903}}, 1904, 0, "{0}"));
  // The traversal-stride example: W = 8, corners -1 / -1, stride 2, start w = 7 (past 6).
  add("q19_stride_example", "Q19", "traversal stride 2, start w = 7 past X - 1 + upper = 6 (PTX-T 5.5.4 stride example)",
      one_load(im2col(DataType::float32, {4, 8, 8, 1}, {-1, -1}, {-1, -1}, 4, 12, OobFill::zero, {1, 2, 2, 1}),
               {0, 7, 7, 0}, {{"random", 1905}}, 1906, 0, "{0, 0}"));
  add("q19_off_lattice", "Q19", "stride 2 on W, base 0 off the lattice -1, 1, 3, ...",
      one_load(im2col(DataType::float32, {4, 8, 3, 1}, {-1, 0}, {0, 0}, 4, 14, OobFill::zero, {1, 2, 1, 1}),
               {0, 0, 0, 0}, {{"random", 1907}}, 1908, 0, "{0, 0}"));
  TensorMap ch = im2col(DataType::float16, {20, 4, 2}, {0}, {0}, 32, 6, OobFill::nan_request_zero_fma);
  add("q19_channels_past_c", "Q19", "channel range c .. c + 31 past C = 20 (NaN fill)",
      one_load(ch, {16, 0, 0}, {{"random", 1909}}, 1910, 0, "{1}"));
  add("q19_channel_negative", "Q19", "channel start -8: channels below 0",
      one_load(ch, {-8, 1, 0}, {{"random", 1911}}, 1912, 0, "{0}"));
  add("q19_channel_misaligned", "Q19", "channel start 4 (8 bytes): not on a 16-byte granule",
      one_load(ch, {4, 0, 0}, {{"random", 1913}}, 1914, 0, "{0}"));
  add("q19_rank5_d_wrap", "Q19", "rank 5: the walk wraps D and carries into n",
      one_load(im2col(DataType::uint8, {16, 2, 2, 3, 2}, {0, 0, 0}, {0, 0, -1}, 16, 20), {0, 1, 0, 1, 0},
               {{"random", 1915}}, 1916, 0, "{0, 0, 1}"));
  TensorMap il = im2col(DataType::uint16, {8, 4, 4, 1}, {0, 0}, {0, 0}, 8, 8);
  il.interleave = tensor_map::Interleave::b16;
  add("q19_interleave16", "Q19", "interleave 16B im2col map", one_load(il, {0, 0, 0, 0}, {{"random", 1917}}, 1918, 0, "{0, 0}"));
}

// Q20: .im2col_no_offs stores and reductions: a small walk that wraps W and H and crosses n.
void q20() {
  TensorMap m = im2col(DataType::uint32, {4, 4, 3, 2}, {1, 0}, {0, -1}, 4, 10);
  add("q20_store_walk", "Q20", ".im2col_no_offs store: W in [1, 3], H in [0, 1], crossing into n = 1",
      one_write(m, {0, 2, 1, 0}, "", {{"random", 2001}}, {{"random", 2002}}));
  add("q20_reduce_walk", "Q20", ".im2col_no_offs .add reduction, the same walk, running past N",
      one_write(m, {0, 1, 0, 1}, "add", {{"random", 2003}}, {{"random", 2004}}));
  add("q20_store_negative_n", "Q20", ".im2col_no_offs store starting at n = -1 (H14 for im2col?)",
      one_write(m, {0, 2, 1, -1}, "", {{"random", 2005}}, {{"random", 2006}}));
  TensorMap out = im2col(DataType::uint32, {4, 4, 3, 2}, {-1, 0}, {0, 0}, 4, 10);
  add("q20_store_box_outside", "Q20", ".im2col_no_offs store with lower corner -1 (§4.3 wants the box inside)",
      one_write(out, {0, 0, 0, 0}, "", {{"random", 2007}}, {{"random", 2008}}));
  // H9 for im2col stores: a channel start 8 bytes off the 16-byte grid (loads fault, Q19).
  TensorMap ch = im2col(DataType::uint8, {32, 4, 2, 1}, {0, 0}, {0, 0}, 16, 4);
  add("q20x_store_channel_8", "Q20", ".im2col_no_offs store starting at channel 8 of uint8 (H9 for stores?)",
      one_write(ch, {8, 0, 0, 0}, "", {{"random", 2009}}, {{"random", 2010}}));
}

// Q21: prefetches of nonsense: huge or misaligned coordinates, an unmapped tensor.
void q21() {
  TensorMap m = tiled(DataType::uint8, {64, 4}, {64}, {32, 2});
  auto with_prefetch = [&](const std::string& id, const std::string& title, const std::string& pf, TensorMap* bad) {
    ScenarioJson s = one_load(m, {16, 1}, {{"random", 2101}}, 2102);
    json j = s.json();
    if (bad) j["tensor_maps"]["bad"] = map_json(*bad);
    j["program"].insert(j["program"].begin(), pf);
    g_out.push_back({id, "Q21", title, j});
  };
  with_prefetch("q21_prefetch_huge_coords", "tile prefetch at (2^31 - 16, -2^31), then a load",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map0, {2147483632, -2147483648}];", nullptr);
  with_prefetch("q21_prefetch_misaligned", "tile prefetch with c[0] x elemBytes = 3 (H9 faults loads)",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map0, {3, 0}];", nullptr);
  TensorMap unmapped = m;
  unmapped.global_address = 0x7f0000000000ull;  // no allocation there
  with_prefetch("q21_prefetch_unmapped", "tile prefetch of a map whose tensor is not mapped",
                "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [bad, {0, 0}];", &unmapped);
  with_prefetch("q21_bulk_prefetch_unmapped", "cp.async.bulk.prefetch.L2 of an unmapped range",
                "cp.async.bulk.prefetch.L2.global [0x7f0000000000], 4096;", nullptr);
  TensorMap i2c = im2col(DataType::uint8, {16, 8, 1}, {0}, {0}, 16, 4);
  with_prefetch("q21_prefetch_im2col_outside_box", "im2col prefetch with the filter base outside the box",
                "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [bad, {0, 100, 0}], {0};", &i2c);
  g_out.back().scenario["tensor_maps"]["bad"] = map_json(i2c, "A", 0);
}

// Q22: bulk copies of size 0, and one larger than the CTA's shared memory.
void q22() {
  {
    ScenarioJson s(2048);
    s.add_global("A", 256, {{"random", 2201}});
    s.add_shared_init(0, 1024, 256, {{"random", 2202}});
    s.sym("smem", "shared:1024");
    s.sym("gaddr", "global:A+64");
    s.sym("mbar", "shared:0");
    s.sym("flags", "shared:64");
    s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
    s.step("fence.mbarrier_init.release.cluster;");
    s.step("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [smem], [gaddr], 0, [mbar];");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 0;");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;");
    s.step("fence.proxy.async.shared::cta;");
    s.step("cp.async.bulk.global.shared::cta.bulk_group [gaddr], [smem], 0;");
    s.step("cp.async.bulk.commit_group;");
    s.step("cp.async.bulk.wait_group 0;");
    s.step("@p st.shared.b32 [flags], 1;");
    s.out_shared("shared", 0, 64, 1216);
    s.out_global("A", "A");
    add("q22_size0", "Q22", "cp.async.bulk load and store of 0 bytes", s);
  }
  {
    ScenarioJson s(4096);
    s.add_global("A", 262144, {{"random", 2203}});
    s.sym("smem", "shared:1024");
    s.sym("gaddr", "global:A");
    s.sym("mbar", "shared:0");
    load_steps(s, "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [smem], [gaddr], 262144, [mbar];", 262144);
    s.out_shared("shared", 0, 1024, 1024);
    add("q22_past_shared", "Q22", "a 256 KiB bulk load into a CTA with 4 KiB of shared memory", s);
  }
}

// Q24: overlapping global addresses in one store: stride 0 and a stride smaller than the row.
void q24() {
  add("q24_store_stride0", "Q24", "tile store whose 4 rows all map to the same 32 bytes (stride 0)",
      one_write(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, "", {{"random", 2401}}, {{"random", 2402}}, 64));
  add("q24_store_overlap", "Q24", "tile store of 64-byte rows at a 16-byte stride",
      one_write(tiled(DataType::uint8, {64, 4}, {16}, {64, 4}), {0, 0}, "", {{"random", 2403}}, {{"random", 2404}}, 128));
  add("q24_reduce_stride0", "Q24", "tile .add reduction whose 4 rows hit the same elements",
      one_write(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, "add", {{"random", 2405}}, {{"random", 2406}}, 64));
  add("q24_load_stride0", "Q24", "tile load of 4 rows at stride 0",
      one_load(tiled(DataType::uint32, {8, 4}, {0}, {8, 4}), {0, 0}, {{"random", 2407}}, 2408, 0, "", 64));
}

// Q25: does wait_group(.read) wait for an mbarrier-completed tensor load?
void q25() {
  for (bool read : {true, false}) {
    TensorMap m = tiled(DataType::uint8, {256, 128}, {256}, {256, 128});  // 32 KiB: long enough to be in flight
    ScenarioJson s(1024 + 32768);
    s.add_global("A", 32768, {{"random", 2501}});
    s.add_map("map0", m, "A");
    s.sym("smem", "shared:1024");
    s.sym("mbar", "shared:0");
    s.sym("flags", "shared:64");
    s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
    s.step("fence.mbarrier_init.release.cluster;");
    s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 32768;");
    s.step("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], " +
           tensor_operand(s, "map0", {0, 0}) + ", [mbar];");
    s.step("cp.async.bulk.commit_group;");
    s.step(std::string("cp.async.bulk.wait_group") + (read ? ".read" : "") + " 0;");
    s.step("mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 0;");  // done already?
    s.step("@p st.shared.b32 [flags], 1;");
    s.step("@!p st.shared.b32 [flags], 2;");
    s.step("mbarrier.try_wait.parity.shared::cta.b64 q, [mbar], 0;");
    s.out_shared("flags", 0, 64, 16);
    add(std::string("q25_") + (read ? "wait_group_read" : "wait_group") + "_after_load", "Q25",
        std::string("a 32 KiB tensor load, commit_group, wait_group") + (read ? ".read" : "") +
            " 0, then test_wait: 1 = the load had completed, 2 = still in flight",
        s);
  }
  // The same with a 192 KiB box, and the control without commit/wait (is a load still in
  // flight when the next step runs?).
  for (int wait : {0, 1, 2}) {  // 0 none, 1 wait_group.read, 2 wait_group
    for (bool big : {false, true}) {
      if (!big && wait != 0) continue;
      const uint32_t planes = big ? 3 : 1, rows = big ? 256 : 128, bytes = 256 * rows * planes;
      TensorMap m = tiled(DataType::uint8, {256, rows, planes}, {256, 256ull * rows}, {256, rows, planes});
      ScenarioJson s(1024 + bytes);
      s.add_global("A", bytes, {{"random", 2510}});
      s.add_map("map0", m, "A");
      s.sym("smem", "shared:1024");
      s.sym("mbar", "shared:0");
      s.sym("flags", "shared:64");
      s.step("mbarrier.init.shared::cta.b64 [mbar], 1;");
      s.step("fence.mbarrier_init.release.cluster;");
      s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(bytes) + ";");
      s.step("cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], " +
             tensor_operand(s, "map0", {0, 0, 0}) + ", [mbar];");
      if (wait) {
        s.step("cp.async.bulk.commit_group;");
        s.step(std::string("cp.async.bulk.wait_group") + (wait == 1 ? ".read" : "") + " 0;");
      }
      s.step("mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 0;");
      s.step("@p st.shared.b32 [flags], 1;");
      s.step("@!p st.shared.b32 [flags], 2;");
      s.step("mbarrier.try_wait.parity.shared::cta.b64 q, [mbar], 0;");
      s.out_shared("flags", 0, 64, 16);
      const std::string what = wait == 0 ? "no_wait" : wait == 1 ? "wait_group_read" : "wait_group";
      add("q25_" + std::string(big ? "192k_" : "32k_") + what, "Q25",
          std::to_string(bytes / 1024) + " KiB tensor load, " + (wait ? "commit_group, " + what + " 0, " : "") +
              "then test_wait: 1 = completed, 2 = in flight",
          s);
    }
  }
}

// Q26: interleaved tiled loads.
void q26() {
  // Interleaved TILED loads (docs/hardware-notes.md "interleave decisions", settled by the
  // probe tools/gpu/probe_interleave.cu): an element of dimension 0 is a whole 16/32-byte
  // slice (dims[0], c[0], box[0] and elementStrides[0] count slices), dimension rank-2 is
  // walked once, slices land densely, complete_tx = slices × slice bytes. The tensor is
  // given room for every slice the walk can reach (`room`): the first recording's
  // allocations ended after dims[0] × elemBytes and the 32B load read past them.
  auto room = [](const TensorMap& m) {
    uint64_t last = m.dims[0] * m.slice_bytes();
    for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
    return (last + 31) / 32 * 32 + 64;
  };
  TensorMap a = tiled(DataType::uint16, {8, 6, 3}, {16, 96}, {8, 4, 2});
  a.interleave = tensor_map::Interleave::b16;
  add("q26_interleave16", "Q26", "interleave 16B tiled load: 8 slices of 16 bytes per row, dimension 1 walked once",
      one_load(a, {0, 1, 1}, {{"random", 2601}}, 2602, 0, "", room(a)));
  {  // armed with 128 bytes more than the 256 the load delivers: the phase never completes
    ScenarioJson over = one_load(a, {0, 1, 1}, {{"random", 2601}}, 2602, 0, "", room(a));
    json j = over.json();
    j["program"][2] = "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], 384;";
    g_out.push_back({"q26_interleave16_armed_384", "Q26", "interleave 16B load armed with 384 bytes (it delivers 256)", j});
  }
  TensorMap b = tiled(DataType::uint8, {32, 5, 3}, {32, 160}, {32, 4, 2}, Swizzle::b32);
  b.interleave = tensor_map::Interleave::b32;
  b.element_strides[0] = 2;
  add("q26_interleave32_es0", "Q26", "interleave 32B tiled load with elementStrides[0] = 2 (every other slice)",
      one_load(b, {0, 2, 1}, {{"random", 2603}}, 2604, 0, "", room(b)));
  b.element_strides[0] = 1;
  add("q26_interleave32", "Q26", "interleave 32B tiled load: 32 slices of 32 bytes per row",
      one_load(b, {0, 2, 1}, {{"random", 2605}}, 2606, 0, "", room(b)));
  add("q26_interleave32_past_allocation", "Q26",
      "interleave 32B load whose slices run past the allocation (sized for dims[0] × elemBytes)",
      one_load(b, {0, 2, 1}, {{"random", 2605}}, 2606));
  TensorMap r4 = tiled(DataType::uint32, {4, 5, 6, 7}, {64, 512, 4096}, {4, 3, 2, 5});
  r4.interleave = tensor_map::Interleave::b16;
  add("q26_rank4_walk_once", "Q26", "rank 4, box {4, 3, 2, 5}: dimension 2 walked once",
      one_load(r4, {0, 1, 1, 1}, {{"random", 2621}}, 2622, 0, "", room(r4)));
  TensorMap r5 = tiled(DataType::uint32, {4, 3, 4, 5, 3}, {64, 256, 2048, 16384}, {4, 2, 3, 2, 3});
  r5.interleave = tensor_map::Interleave::b16;
  add("q26_rank5_walk_once_oob", "Q26", "rank 5: dimension 3 walked once, out of bounds in dimension 4",
      one_load(r5, {0, 0, 1, 1, 2}, {{"random", 2623}}, 2624, 0, "", room(r5)));
  TensorMap d = tiled(DataType::uint32, {4, 16, 5}, {64, 1024}, {4, 8, 2}, Swizzle::b128);
  d.interleave = tensor_map::Interleave::b16;
  add("q26_s128_dense_rows", "Q26", "64-byte interleaved rows under 128B swizzle lie 64 bytes apart (no H2 padding)",
      one_load(d, {1, 0, 0}, {{"random", 2625}}, 2626, 128, "", room(d)));
  TensorMap f = tiled(DataType::float16, {8, 6, 5}, {128, 1024}, {8, 2, 2}, Swizzle::none, OobFill::nan_request_zero_fma);
  f.interleave = tensor_map::Interleave::b16;
  add("q26_nan_fill_c0_negative", "Q26", "float16, NaN fill, c[0] = -2 slices, dimension 2 out of bounds",
      one_load(f, {-2, 1, 4}, {{"random", 2627}}, 2628, 0, "", room(f)));
  TensorMap t = tiled(DataType::tfloat32, {8, 6, 5}, {256, 2048}, {8, 2, 2}, Swizzle::b32);
  t.interleave = tensor_map::Interleave::b32;
  add("q26_tf32_interleave32", "Q26", "tfloat32, interleave 32B: the tf32 rounding of every element of each slice",
      one_load(t, {1, 1, 1}, {{"random", 2629}}, 2630, 0, "", room(t)));
  // Stores and reductions with the same geometry (the probe measured loads only).
  TensorMap w = tiled(DataType::uint32, {6, 5, 4}, {96, 512}, {4, 2, 2});
  w.interleave = tensor_map::Interleave::b16;
  add("q26_store_interleave16", "Q26", "interleave 16B tile store: slices back to their addresses, OOB slices dropped",
      one_write(w, {3, 1, 2}, "", {{"random", 2631}}, {{"random", 2632}}, room(w)));
  add("q26_reduce_interleave16", "Q26", "interleave 16B tile reduction (.add, uint32)",
      one_write(w, {1, 2, 1}, "add", {{"random", 2633}}, {{"random", 2634}}, room(w)));
  // im2col with interleave: C beyond one slice.
  TensorMap i16 = im2col(DataType::uint16, {16, 4, 4, 1}, {0, 0}, {0, 0}, 8, 8);
  i16.interleave = tensor_map::Interleave::b16;
  add("q26_im2col_interleave16_c16", "Q26", "interleave 16B im2col map, C = 16 uint16 (two slices), 8 channels per pixel",
      one_load(i16, {8, 0, 0, 0}, {{"random", 2611}}, 2612, 0, "{1, 0}"));
  TensorMap i32 = im2col(DataType::uint8, {32, 4, 2, 2}, {0, 0}, {0, 0}, 32, 6);
  i32.interleave = tensor_map::Interleave::b32;
  i32.swizzle = Swizzle::b32;
  add("q26_im2col_interleave32", "Q26", "interleave 32B im2col map, 32 uint8 channels",
      one_load(i32, {0, 1, 1, 0}, {{"random", 2613}}, 2614, 0, "{0, 0}"));
}

}  // namespace

std::vector<Case> question_cases() {
  g_out.clear();
  q1(), q4(), q6(), q7_q8(), q11_q12(), q13(), q16(), q17(), q18(), q19(), q20(), q21(), q22(), q24(), q25(), q26();
  return g_out;
}

}  // namespace tmakit::gpu_tools
