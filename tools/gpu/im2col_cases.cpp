// Random im2col scenarios for the recorded vectors (`engine_vectors record
// im2col_load|im2col_store`): every plain element type, ranks 3-5, swizzles,
// both fills, corners, traversal strides, offsets, channel starts inside and
// past C (and below 0), bases off the stride lattice, n past the batch, the
// .shared::cta / .shared::cluster / hinted / multicast forms, and
// .im2col_no_offs stores and reductions. Maps are drawn at random and kept only
// when the validator (which agrees with all 2,750 recorded driver verdicts)
// accepts them, so the driver should accept every one.
#include <algorithm>
#include <random>

#include "cases.hpp"
#include "map_json.hpp"
#include "tmakit/spec/target.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools {
namespace {

using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;

uint64_t round16(uint64_t v) { return (v + 15) / 16 * 16; }

// §4.1: corners in [-32768, 32767] (rank 3), [-128, 127] (rank 4), [-16, 15] (rank 5);
// small ones are what convolutions use. Offsets: [0, 65535] / [0, 255] / [0, 31].
int max_offset(int rank) { return rank == 3 ? 65535 : rank == 4 ? 255 : 31; }

uint64_t tensor_bytes(const TensorMap& m) {
  uint64_t last = m.dims[0] * elem_bytes(m.data_type);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return round16(last);
}

// A random im2col map whose rows fit `max_rows_bytes` of shared memory. `store`:
// the bounding box inside the tensor (§4.3: lower >= 0, upper <= 0).
TensorMap random_im2col_map(DataType t, int rank, bool store, uint32_t max_rows_bytes) {
  static const spec::Target sm90 = *spec::parse_target("sm_90a");
  for (;;) {
    TensorMap m;
    m.encode = Encode::im2col;
    m.data_type = t;
    m.rank = rank;
    const int eb = elem_bytes(t);
    m.swizzle = static_cast<Swizzle>(irand(0, 3));
    const int span = swizzle_span_bytes(m.swizzle);
    const int max_row = std::min(span ? span : 256, 256 * eb);  // §1.4: <= 256 channels
    const uint32_t row = 16u * irand(1, max_row / 16);          // rows of whole 16-byte chunks
    m.channels_per_pixel = row / eb;
    const uint32_t pitch = std::max<uint32_t>(row, span);
    m.pixels_per_column = irand(1, std::max<int>(1, std::min<int>(64, max_rows_bytes / pitch)));
    // C: around the channels one load reads (sometimes fewer: OOB channels).
    m.dims[0] = std::max<uint64_t>(1, chance(0.3) ? irand(1, m.channels_per_pixel) : m.channels_per_pixel * irand(1, 2) + irand(0, 3));
    for (int i = 1; i + 1 < rank; ++i) m.dims[i] = irand(1, rank == 5 ? 4 : 7);
    m.dims[rank - 1] = irand(1, 3);
    for (int k = 0; k + 2 < rank; ++k) {
      if (store) {
        m.pixel_box_lower[k] = irand(0, 1);
        m.pixel_box_upper[k] = -irand(0, 1);
      } else {
        m.pixel_box_lower[k] = irand(-2, 1);
        m.pixel_box_upper[k] = irand(-2, 1);
      }
      m.element_strides[k + 1] = chance(0.3) ? irand(2, 3) : 1;  // §4.2 item 4: traversal strides
    }
    if (chance(0.15)) m.element_strides[0] = irand(2, 4);         // ignored (§4.2 item 4)
    if (chance(0.15)) m.element_strides[rank - 1] = irand(2, 3);  // N is never strided
    uint64_t prev = round16(m.dims[0] * eb);
    for (int i = 0; i + 1 < rank; ++i) {
      m.strides[i] = prev + (chance(0.3) ? 16 * irand(1, 3) : 0);
      prev = m.strides[i] * m.dims[i + 1];
    }
    m.l2_promotion = static_cast<tensor_map::L2Promotion>(irand(0, 3));
    m.oob_fill = !store && is_float_type(t) && chance(0.5) ? OobFill::nan_request_zero_fma : OobFill::zero;
    m.global_address = 256;  // the validator checks 16-byte alignment only
    if (tensor_bytes(m) > 8192) continue;
    if (!tensor_map::validate(m, sm90).has_errors()) return m;
  }
}

// The filter base along spatial dim k: inside [lower, X - 1 + upper] (§4.1), on the
// stride lattice from lower most of the time, off it sometimes (Q19 decision 2).
int32_t random_base(const TensorMap& m, int k) {
  const int lo = m.pixel_box_lower[k], hi = int(m.dims[k + 1]) - 1 + m.pixel_box_upper[k];
  const int es = int(m.element_strides[k + 1]);
  if (es > 1 && chance(0.7)) return lo + es * irand(0, std::max(0, (hi - lo) / es));
  return irand(lo, hi);
}

std::string hex_sym(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The coordinate operand {c, w, (h), (d), n} as symbols c0..c4 and the im2colInfo.
std::string coords_operand(ScenarioJson& s, const TensorMap& m, const std::vector<int32_t>& c) {
  std::string t = "[map0, {";
  for (int i = 0; i < m.rank; ++i) {
    s.sym("c" + std::to_string(i), c[i]);
    t += (i ? ", c" : "c") + std::to_string(i);
  }
  return t + "}]";
}

Case make_load(int idx, uint64_t seed) {
  const DataType t = kPlainTypes[idx % std::size(kPlainTypes)];
  const int rank = 3 + (idx / 13) % 3;
  const int form = irand(0, 9);  // 0-3 shared::cta, 4-5 shared::cluster, 6-7 + hint, 8 cta + hint, 9 multicast
  const int ctas = form == 9 ? 2 : 1;
  TensorMap m = random_im2col_map(t, rank, false, 4096);
  const int eb = elem_bytes(t), q = 16 / eb;
  std::vector<int32_t> c(rank);
  // Channel start on its 16-byte granule (H9-like; a misaligned start is question Q19's),
  // inside C, past it, or below 0 (OOB channels, Q19 decision 3).
  const int r = irand(0, 9);
  c[0] = r < 4 ? 0 : r < 7 ? q * irand(0, std::max(0, int(m.dims[0]) - 1) / q)
                   : r < 9 ? q * (int(m.dims[0]) / q + irand(0, 1)) : -q * irand(1, 2);
  for (int k = 0; k + 2 < rank; ++k) c[k + 1] = random_base(m, k);
  c[rank - 1] = chance(0.15) ? int(m.dims[rank - 1]) + irand(0, 1) : chance(0.05) ? -1 : irand(0, int(m.dims[rank - 1]) - 1);
  std::vector<int64_t> off(rank - 2);
  for (auto& o : off) o = chance(0.5) ? irand(0, std::min(3, max_offset(rank))) : 0;

  const uint64_t offset = 16 * irand(0, 4);
  const uint32_t pitch = m.row_pitch();
  const uint64_t bytes = m.bytes_per_box(), footprint = uint64_t(m.pixels_per_column) * pitch;
  const uint32_t dst = 1024 + 128 * irand(0, 7);  // every 128-byte phase of the swizzle pattern
  const uint32_t region = uint32_t((dst + footprint + 127) / 128 * 128 + 128 - 1024);
  ScenarioJson s(1024 + region, ctas);
  s.add_global("A", offset + tensor_bytes(m) + 64, {{"random", seed}});
  s.add_map("map0", m, "A", offset);
  for (int k = 0; k < ctas; ++k) s.add_shared_init(k, 1024, region, {{"random", seed ^ (0x5A5A + k)}});
  s.sym("smem", "shared:" + std::to_string(dst));
  s.sym("mbar", "shared:0");
  const std::string operand = coords_operand(s, m, c);
  const std::string info = coord_list(off);
  const bool hint = form >= 6 && form <= 8;
  if (hint) s.sym("policy", hex_sym(form == 6 ? 0x12F0000000000000ull : 0x14F0000000000000ull));
  const std::string dspace = form <= 3 || form == 8 ? ".shared::cta" : ".shared::cluster";
  const std::string head = "cp.async.bulk.tensor" + dim_suffix(rank) + dspace + ".global.im2col.mbarrier::complete_tx::bytes";
  if (chance(0.2)) {  // an im2col prefetch first (no effect on the bytes, §2.7), sometimes hinted
    const bool pf_hint = chance(0.5);
    if (pf_hint) s.sym("pf_policy", hex_sym(0x14F0000000000000ull));
    s.step("cp.async.bulk.prefetch.tensor" + dim_suffix(rank) + ".L2.global.im2col" + (pf_hint ? ".L2::cache_hint " : " ") +
           operand + ", " + info + (pf_hint ? ", pf_policy;" : ";"));
  }
  if (form == 9) {  // multicast from rank 0 to a random non-empty mask (H12)
    const int mask = irand(1, 3);
    s.sym("ctaMask", mask);
    for (int k = 0; k < 2; ++k) s.step(k, 0, "mbarrier.init.shared::cta.b64 [mbar], 1;");
    for (int k = 0; k < 2; ++k) s.step(k, 0, "fence.mbarrier_init.release.cluster;");
    for (int k = 0; k < 2; ++k)
      if (mask >> k & 1) s.step(k, 0, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(bytes) + ";");
    s.step(0, 0, head + ".multicast::cluster [smem], " + operand + ", [mbar], " + info + ", ctaMask;");
    for (int k = 0; k < 2; ++k)
      if (mask >> k & 1) s.step(k, 0, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [mbar], 0;");
    for (int k = 0; k < 2; ++k) s.out_shared("tile" + std::to_string(k), k, 1024, region);
  } else {
    load_steps(s, head + (hint ? ".L2::cache_hint" : "") + " [smem], " + operand + ", [mbar], " + info +
                      (hint ? ", policy;" : ";"),
               bytes);
    s.out_shared("tile", 0, 1024, region);
  }
  return {"", "", "", s.json()};
}

// §6.1 (op, map type) pairs of tensor reductions; INT64 and/or/xor fault (H7).
Case make_store(int idx, uint64_t seed) {
  static const DataType kTypes[] = {DataType::uint8,   DataType::uint16,  DataType::uint32,  DataType::int64,
                                    DataType::float16, DataType::float32, DataType::float64, DataType::bfloat16,
                                    DataType::tfloat32};
  const bool reduce = idx % 5 >= 3;  // 60% stores, 40% reductions
  const RedPair red = kRed[idx % std::size(kRed)];
  const DataType t = reduce ? red.t : kTypes[idx % std::size(kTypes)];
  const int rank = 3 + (idx / 5) % 3;
  TensorMap m = random_im2col_map(t, rank, true, 4096);
  const int eb = elem_bytes(t), q = 16 / eb;
  std::vector<int32_t> c(rank);
  c[0] = chance(0.8) ? q * irand(0, std::max(0, int(m.dims[0]) - 1) / q) : q * (int(m.dims[0]) / q);
  for (int k = 0; k + 2 < rank; ++k) c[k + 1] = std::max(0, random_base(m, k));  // H14: non-negative
  c[rank - 1] = chance(0.15) ? int(m.dims[rank - 1]) : irand(0, int(m.dims[rank - 1]) - 1);

  const uint64_t offset = 16 * irand(0, 4);
  const uint64_t footprint = uint64_t(m.pixels_per_column) * m.row_pitch();
  const uint32_t src = 1024 + 128 * irand(0, 7);
  const uint32_t region = uint32_t((src + footprint + 127) / 128 * 128 + 128 - 1024);
  ScenarioJson s(1024 + region);
  // Slack after the tensor: H6's 16-byte chunks stay inside the allocation.
  s.add_global("A", offset + tensor_bytes(m) + 64, {{"random", seed}});
  s.add_map("map0", m, "A", offset);
  s.add_shared_init(0, 1024, region, {{"random", seed ^ 0x3C3C}});
  s.sym("smem", "shared:" + std::to_string(src));
  const std::string operand = coords_operand(s, m, c);
  const bool hint = chance(0.2);
  if (hint) s.sym("policy", hex_sym(0x12F0000000000000ull));
  s.step("fence.proxy.async.shared::cta;");
  const std::string tail = std::string(".im2col_no_offs.bulk_group") + (hint ? ".L2::cache_hint " : " ") + operand +
                           ", [smem]" + (hint ? ", policy;" : ";");
  if (reduce)
    s.step("cp.reduce.async.bulk.tensor" + dim_suffix(rank) + ".global.shared::cta." + red.op + tail);
  else
    s.step("cp.async.bulk.tensor" + dim_suffix(rank) + ".global.shared::cta" + tail);
  s.step("cp.async.bulk.commit_group;");
  s.step("cp.async.bulk.wait_group 0;");
  s.out_global("A", "A");
  return {"", "", "", s.json()};
}

std::vector<Case> make_all(int count, uint64_t seed, Case (*make)(int, uint64_t)) {
  return numbered_cases(count, seed, make);
}

}  // namespace

std::vector<Case> numbered_cases(int count, uint64_t seed, Case (*make)(int, uint64_t)) {
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) {
    case_rng().seed(seed * 1000003ull + i);  // each case reproducible on its own
    Case k = make(i, seed * 100000ull + i);
    char id[16];
    std::snprintf(id, sizeof id, "%04d", i);
    k.id = id;
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<Case> im2col_load_cases(int count, uint64_t seed) { return make_all(count, seed, make_load); }
std::vector<Case> im2col_store_cases(int count, uint64_t seed) { return make_all(count, seed, make_store); }

// ---- ScenarioJson ----

ScenarioJson::ScenarioJson(uint32_t shared_bytes, int ctas) {
  j_["format"] = "tmakit-scenario/1";
  j_["target"] = "sm_90a";
  j_["ptx_version"] = "8.7";
  if (ctas > 1) j_["cluster"] = {{"ctas", ctas}};
  j_["shared_bytes"] = shared_bytes;
  j_["global"] = nlohmann::json::object();
  j_["shared_init"] = nlohmann::json::array();
  j_["symbols"] = nlohmann::json::object();
  j_["program"] = nlohmann::json::array();
  j_["outputs"] = nlohmann::json::array();
}
void ScenarioJson::add_global(const std::string& name, uint64_t bytes, nlohmann::json init) {
  j_["global"][name] = {{"bytes", bytes}, {"align", 256}, {"init", std::move(init)}};
}
void ScenarioJson::add_map(const std::string& name, const TensorMap& m, const std::string& global, uint64_t offset) {
  j_["tensor_maps"][name] = global.empty() ? map_json(m) : map_json(m, global, offset);
}
void ScenarioJson::add_shared_init(int cta, uint32_t offset, uint32_t bytes, nlohmann::json init) {
  nlohmann::json r = {{"cta", cta}, {"offset", offset}, {"init", std::move(init)}};
  if (bytes) r["bytes"] = bytes;
  j_["shared_init"].push_back(r);
}
void ScenarioJson::out_shared(const std::string& name, int cta, uint32_t offset, uint32_t bytes) {
  j_["outputs"].push_back({{"name", name}, {"shared", {{"cta", cta}, {"offset", offset}, {"bytes", bytes}}}});
}
void ScenarioJson::out_global(const std::string& name, const std::string& global) {
  j_["outputs"].push_back({{"name", name}, {"global", global}});
}

std::string coord_list(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}
std::string dim_suffix(int rank) { return "." + std::to_string(rank) + "d"; }

void load_steps(ScenarioJson& s, const std::string& copy, uint64_t tx, const std::string& mbar) {
  s.step("mbarrier.init.shared::cta.b64 [" + mbar + "], 1;");
  s.step("fence.mbarrier_init.release.cluster;");
  s.step("mbarrier.arrive.expect_tx.shared::cta.b64 _, [" + mbar + "], " + std::to_string(tx) + ";");
  s.step(copy);
  s.step("mbarrier.try_wait.parity.shared::cta.b64 p, [" + mbar + "], 0;");
}

}  // namespace tmakit::gpu_tools
