// Scenarios for the (H100) questions of tma-semantics.md §14 that the recorded
// categories do not already settle (docs/hardware-notes.md, "§14 answers").
// Each is small and deterministic; `engine_vectors record questions` runs them
// on the GPU engine and writes scenario + the hardware's bytes, or the fault or
// hang, to tests/vectors/questions/<id>.json; tests/scenario/test_question_vectors.cpp
// replays them through the model.
#include "question_common.hpp"

namespace tmakit::gpu_tools {
namespace questions {
namespace {

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
}  // namespace
}  // namespace questions

std::vector<Case> question_cases() {
  using namespace questions;
  g_out.clear();
  q1(), q4(), q6(), q7_q8(), q11_q12(), q13(), q16(), q17(), q18(), q19(), q20(), q21(), q22(), q24(), q25(), q26();
  return g_out;
}

}  // namespace tmakit::gpu_tools
