// The random case generators of record_vectors (its .cu file launches them): each case is a small
// valid program of one category with its map, shared-memory layout and the reference's bytes.
#include "record_vectors.hpp"

namespace tmakit::gpu_tools::record {
namespace {

// ---- case generators ------------------------------------------------------------

int span_of(Swizzle s) { return swizzle_span_bytes(s); }

// Edge values per element size (floats of that width, then integers).
std::vector<uint64_t> edge_pool(DataType t) {
  switch (t) {
    case DataType::float16:
      return {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7FFF, 0xFE01, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x0400};
    case DataType::bfloat16:
      return {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7FFF, 0xFF81, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x0080};
    case DataType::float32: case DataType::float32_ftz: case DataType::tfloat32: case DataType::tfloat32_ftz:
      return {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FFFFFFF, 0xFF800001, 0x00000001,
              0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F801000, 0x3F803000, 0x3F802FFF};
    case DataType::float64:
      return {0, 0x8000000000000000ull, 0x7FF0000000000000ull, 0x7FF8000000000000ull, 0x0000000000000001ull,
              0x3FF0000000000000ull};
    case DataType::uint32: case DataType::int32:
      return {0, 1, 2, 3, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
    case DataType::uint64: case DataType::int64:
      return {0, 1, 2, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFull, 0x100000000ull};
    default:
      return {0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF};
  }
}
void fill_edges(std::vector<uint8_t>& v, DataType t, double p) {
  const int eb = elem_bytes(t);
  auto pool = edge_pool(t);
  for (size_t i = 0; i + eb <= v.size(); i += eb)
    if (chance(p)) {
      uint64_t x = pool[irand(0, int(pool.size()) - 1)];
      if (chance(0.2)) x = urand64() % 4;  // tiny values: inc/dec edges, d == s
      std::memcpy(&v[i], &x, eb);
    }
}

// A random tiled map of `type` whose box moves at most `max_box_bytes`.
uint64_t tensor_bytes(const TensorMap& m) {
  uint64_t last = uint64_t(m.dims[0]) * elem_bytes(m.data_type);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return round_up(last, 16);
}
// Row strides: dense rows rounded to 16 bytes, half of them padded by 16..64 bytes.
void set_strides(TensorMap& m) {
  uint64_t prev = round_up(m.dims[0] * elem_bytes(m.data_type), 16);
  for (int i = 0; i + 1 < m.rank; ++i) {
    m.strides[i] = prev + (chance(0.5) ? 16 * irand(1, 4) : 0);
    prev = m.strides[i] * m.dims[i + 1];
  }
}

TensorMap random_map(DataType type, int rank, bool allow_es, int max_box_bytes, bool allow_nan,
                     int max_tensor_bytes = 6144) {
  TensorMap m;
  m.encode = tensor_map::Encode::tiled;
  m.data_type = type;
  m.rank = rank;
  const int eb = elem_bytes(type);
  m.swizzle = static_cast<Swizzle>(irand(0, 3));
  int max_inner = m.swizzle == Swizzle::none ? 256 : span_of(m.swizzle);
  max_inner = std::min(max_inner, 256 * eb);
  m.box[0] = uint32_t(irand(1, max_inner / 16) * 16 / eb);
  for (int i = 1; i < rank; ++i) {
    m.box[i] = uint32_t(irand(1, rank <= 2 ? 12 : 4));
    m.element_strides[i] = allow_es && chance(0.35) ? irand(2, chance(0.8) ? 3 : 8) : 1;
    if (m.element_strides[i] > 1) m.box[i] *= chance(0.5) ? m.element_strides[i] : 1;  // sometimes not a multiple
  }
  if (allow_es && chance(0.1)) m.element_strides[0] = irand(2, 4);  // H16: ignored
  // shrink to the byte budget (footprint, swizzle padding included)
  for (int guard = 0; guard < 100 && box_geom(m).footprint() > uint64_t(max_box_bytes); ++guard) {
    int i = rank > 1 && chance(0.7) ? irand(1, rank - 1) : 0;
    if (i == 0 && m.box[0] * eb > 16) m.box[0] = std::max<uint32_t>(16 / eb, m.box[0] / 2 / (16 / eb) * (16 / eb));
    else if (i > 0 && m.box[i] > 1) m.box[i] /= 2;
  }
  // global extents: sometimes smaller than the box (H5), sometimes larger
  for (int i = 0; i < rank; ++i) {
    uint32_t b = m.box[i];
    m.dims[i] = chance(0.25) ? uint64_t(irand(1, std::max<int>(1, b))) : uint64_t(irand(int(b), int(b) * 2 + 3));
  }
  set_strides(m);
  // keep the tensor small (a few KB): shrink extents until it fits
  for (int guard = 0; guard < 200 && tensor_bytes(m) > uint64_t(max_tensor_bytes); ++guard) {
    int i = irand(0, rank - 1);
    if (m.dims[i] > 1) m.dims[i] = std::max<uint64_t>(1, m.dims[i] * 2 / 3);
    set_strides(m);
  }
  m.l2_promotion = static_cast<tensor_map::L2Promotion>(irand(0, 3));
  m.oob_fill = allow_nan && is_float_type(type) && chance(0.5) ? OobFill::nan_request_zero_fma : OobFill::zero;
  return m;
}
// c[0] × elemBytes a multiple of 16 (H9); may be negative or past the extent on loads.
void random_coords(const TensorMap& m, int32_t* c, bool nonneg) {
  const int eb = elem_bytes(m.data_type), q = 16 / eb;
  const int lo0 = nonneg ? 0 : -int(m.box[0]) / q - 2;
  c[0] = q * irand(lo0, int(m.dims[0]) / q + (nonneg ? 0 : 1));
  for (int i = 1; i < m.rank; ++i) c[i] = irand(nonneg ? 0 : -int(m.box[i]) - 1, int(m.dims[i]) + (nonneg ? -1 : 1));
  if (nonneg)
    for (int i = 0; i < m.rank; ++i) c[i] = std::max(0, c[i]);
}

void set_region(Case& k, uint32_t data_off, uint64_t footprint, uint64_t prefill_seed, bool random_prefill = true) {
  Job& j = k.job;
  j.bar_off = 0;  // the barrier sits at window offset 0; data from 1024 on
  j.region_off = 1024;
  j.data_off = data_off;
  j.region_bytes = round_up(data_off + footprint, 128) + 128 - j.region_off;
  k.shared_bytes = j.region_off + j.region_bytes;
  k.prefill.clear();
  for (int r = 0; r < k.ctas; ++r) {
    auto p = random_bytes(prefill_seed + 1000003ull * r, j.region_bytes);
    k.prefill.insert(k.prefill.end(), p.begin(), p.end());
  }
  k.shared_init = json::array();
  for (int r = 0; r < k.ctas; ++r)
    k.shared_init.push_back({{"cta", r}, {"offset", j.region_off}, {"bytes", j.region_bytes},
                             {"init", {{"random", prefill_seed + 1000003ull * r}}}});
  (void)random_prefill;
}

void set_global_random(Case& k, uint64_t bytes, uint64_t seed) {
  k.global = random_bytes(seed, bytes);
  k.global_init = {{"random", seed}};
}

void coords_symbols(Case& k) {
  for (int i = 0; i < k.map.rank; ++i) k.symbols["c" + std::to_string(i)] = k.job.c[i];
}

// Program text for the mbarrier part of a single-CTA load.
void load_program(Case& k, const std::string& copy) {
  k.program.push_back("mbarrier.init.shared::cta.b64 [mbar], 1;");
  k.program.push_back("fence.mbarrier_init.release.cluster;");
  k.program.push_back("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(k.job.tx_bytes) + ";");
  k.program.push_back(copy);
  k.program.push_back("mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;");
}

}  // namespace

Case make_tile_load(int idx, uint64_t seed) {
  Case k;
  k.category = "tile_load";
  // every type (all 13 plain ones, tf32 included), ranks 1..5
  DataType t = static_cast<DataType>(idx % 13);
  int rank = 1 + (idx / 13) % 5;
  k.map = random_map(t, rank, true, 4096, true);
  k.has_map = true;
  k.map_offset = 16 * irand(0, 4);
  uint64_t gbytes = k.map_offset + tensor_bytes(k.map) + 64;
  set_global_random(k, gbytes, seed);
  if (is_float_type(t) && chance(0.4)) {  // edge values (tf32 rounding, NaN payloads, subnormals)
    fill_edges(k.global, t, 0.6);
    k.global_init = {{"hex", hex(k.global)}};
  }
  random_coords(k.map, k.job.c, false);
  BoxGeom g = box_geom(k.map);
  k.job.kind = kTileLoad;
  k.job.form = irand(0, 2);
  k.job.tx_bytes = uint32_t(g.bytes());
  set_region(k, 1024 + 128 * irand(0, 7), g.footprint(), seed ^ 0xABCDEFull);  // every 128-byte phase
  k.symbols["smem"] = "shared:" + std::to_string(k.job.data_off);
  k.symbols["mbar"] = "shared:0";
  coords_symbols(k);
  std::string dst = k.job.form == 0 ? ".shared::cta" : ".shared::cluster";
  std::string hint = k.job.form == 2 ? ".L2::cache_hint" : "";
  std::string ptx = "cp.async.bulk.tensor" + dim(rank) + dst + ".global.tile.mbarrier::complete_tx::bytes" + hint +
                    " [smem], [map0, " + coords_text(rank) + "], [mbar]" + (k.job.form == 2 ? ", policy;" : ";");
  if (k.job.form == 2) k.symbols["policy"] = "0x14f0000000000000";
  load_program(k, ptx);
  // reference
  std::vector<uint8_t> win(k.shared_bytes, 0);
  std::copy(k.prefill.begin(), k.prefill.end(), win.begin() + k.job.region_off);
  ref_load(k.map, k.global, k.map_offset, k.job.c, k.job.data_off, win);
  k.want.assign(win.begin() + k.job.region_off, win.end());
  return k;
}

Case make_tile_store(int idx, uint64_t seed, bool reduce) {
  Case k;
  k.category = reduce ? "tile_reduce" : "tile_store";
  DataType t;
  int op = 0;
  if (!reduce) {
    t = static_cast<DataType>(idx % 13);
  } else {
    // §6.1 op × type, with H13's FTZ/TF32 f32 adds; INT64 and/or/xor fault (H7), skipped.
    static const std::vector<std::pair<int, DataType>> combos = [] {
      std::vector<std::pair<int, DataType>> v;
      for (DataType d : {DataType::uint32, DataType::int32, DataType::uint64, DataType::float32, DataType::float32_ftz,
                         DataType::tfloat32, DataType::tfloat32_ftz, DataType::float16, DataType::bfloat16})
        v.push_back({0, d});
      for (int o : {1, 2})
        for (DataType d : {DataType::uint32, DataType::int32, DataType::uint64, DataType::int64, DataType::float16,
                           DataType::bfloat16})
          v.push_back({o, d});
      v.push_back({3, DataType::uint32});
      v.push_back({4, DataType::uint32});
      for (int o : {5, 6, 7})
        for (DataType d : {DataType::uint32, DataType::int32, DataType::uint64}) v.push_back({o, d});
      return v;
    }();
    auto [o, d] = combos[idx % combos.size()];
    op = o;
    t = d;
  }
  int rank = 1 + (idx / 7) % 5;
  k.map = random_map(t, rank, !reduce, 2048, false, reduce ? 2048 : 4096);
  k.has_map = true;
  k.op = op;
  k.map_offset = 16 * irand(0, 4);
  uint64_t gbytes = k.map_offset + tensor_bytes(k.map) + 64;  // slack: H6 chunk writes stay inside A
  set_global_random(k, gbytes, seed);
  random_coords(k.map, k.job.c, true);  // H14: non-negative starts only
  BoxGeom g = box_geom(k.map);
  k.job.kind = reduce ? kTileReduce : kTileStore;
  set_region(k, 1024 + 128 * irand(0, 7), g.footprint(), seed ^ 0x5151ull);
  if (reduce) {  // edge values in both operands, written out as hex
    fill_edges(k.global, t, 0.7);
    k.global_init = {{"hex", hex(k.global)}};
    fill_edges(k.prefill, t, 0.7);
    k.shared_init = json::array({{{"cta", 0}, {"offset", k.job.region_off}, {"init", {{"hex", hex(k.prefill)}}}}});
  }
  k.output_global = true;
  k.symbols["smem"] = "shared:" + std::to_string(k.job.data_off);
  coords_symbols(k);
  k.program.push_back("fence.proxy.async.shared::cta;");
  if (reduce)
    k.program.push_back("cp.reduce.async.bulk.tensor" + dim(rank) + ".global.shared::cta." + kOpNames[op] +
                        ".tile.bulk_group [map0, " + coords_text(rank) + "], [smem];");
  else
    k.program.push_back("cp.async.bulk.tensor" + dim(rank) + ".global.shared::cta.tile.bulk_group [map0, " +
                        coords_text(rank) + "], [smem];");
  k.program.push_back("cp.async.bulk.commit_group;");
  k.program.push_back("cp.async.bulk.wait_group 0;");
  if (!reduce) {
    std::vector<uint8_t> win(k.shared_bytes, 0);
    std::copy(k.prefill.begin(), k.prefill.end(), win.begin() + k.job.region_off);
    k.want = k.global;
    ref_store(k.map, k.want, k.map_offset, k.job.c, k.job.data_off, win);
  }
  return k;
}

Case make_bulk(int idx, uint64_t seed) {
  Case k;
  k.category = "bulk_copy";
  const bool to_shared = idx % 2 == 0;
  uint32_t size = 16 * irand(1, 256);
  uint32_t goff = 16 * irand(0, 64);
  uint32_t soff = 1024 + 16 * irand(0, 64);
  set_global_random(k, goff + size + 16 * irand(0, 8), seed);
  k.job.kind = to_shared ? kBulkLoad : kBulkStore;
  k.job.form = to_shared ? irand(0, 1) : 0;
  k.job.bulk_size = size;
  k.job.tx_bytes = size;
  set_region(k, soff, size, seed ^ 0x7777ull);
  k.symbols["smem"] = "shared:" + std::to_string(soff);
  k.symbols["gaddr"] = "global:A+" + std::to_string(goff);
  if (to_shared) {
    k.job.gsrc = reinterpret_cast<const uint8_t*>(uintptr_t(goff));
    k.symbols["mbar"] = "shared:0";
    std::string dst = k.job.form == 0 ? ".shared::cta" : ".shared::cluster";
    load_program(k, "cp.async.bulk" + dst + ".global.mbarrier::complete_tx::bytes [smem], [gaddr], " +
                        std::to_string(size) + ", [mbar];");
    std::vector<uint8_t> win(k.prefill);
    std::copy(k.global.begin() + goff, k.global.begin() + goff + size, win.begin() + (soff - 1024));
    k.want = win;
  } else {
    k.job.gdst = reinterpret_cast<uint8_t*>(uintptr_t(goff));
    k.output_global = true;
    k.program.push_back("fence.proxy.async.shared::cta;");
    k.program.push_back("cp.async.bulk.global.shared::cta.bulk_group [gaddr], [smem], " + std::to_string(size) + ";");
    k.program.push_back("cp.async.bulk.commit_group;");
    k.program.push_back("cp.async.bulk.wait_group 0;");
    k.want = k.global;
    std::copy(k.prefill.begin() + (soff - 1024), k.prefill.begin() + (soff - 1024) + size, k.want.begin() + goff);
  }
  return k;
}

Case make_multicast(int idx, uint64_t seed) {
  Case k;
  k.category = "multicast";
  k.ctas = idx % 2 == 0 ? 2 : 4;
  const bool tile = (idx / 2) % 2 == 0;
  uint16_t mask;
  do mask = uint16_t(irand(1, (1 << k.ctas) - 1)); while (!mask);
  k.job.mask = mask;
  uint64_t footprint;
  if (tile) {
    DataType t = static_cast<DataType>(irand(0, 12));
    k.map = random_map(t, 2, false, 2048, true);
    k.has_map = true;
    k.map_offset = 16 * irand(0, 4);
    set_global_random(k, k.map_offset + tensor_bytes(k.map) + 64, seed);
    random_coords(k.map, k.job.c, false);
    BoxGeom g = box_geom(k.map);
    footprint = g.footprint();
    k.job.kind = kMcastTile;
    k.job.tx_bytes = uint32_t(g.bytes());
  } else {
    uint32_t size = 16 * irand(1, 128);
    uint32_t goff = 16 * irand(0, 32);
    set_global_random(k, goff + size + 64, seed);
    k.job.kind = kMcastBulk;
    k.job.bulk_size = k.job.tx_bytes = size;
    k.job.gsrc = reinterpret_cast<const uint8_t*>(uintptr_t(goff));
    k.symbols["gaddr"] = "global:A+" + std::to_string(goff);
    footprint = size;
  }
  set_region(k, 1024 + 128 * irand(0, 7), footprint, seed ^ 0x3131ull);
  k.symbols["smem"] = "shared:" + std::to_string(k.job.data_off);
  k.symbols["mbar"] = "shared:0";
  k.symbols["ctaMask"] = "0x" + [&] { char b[8]; std::snprintf(b, sizeof b, "%x", mask); return std::string(b); }();
  if (tile) coords_symbols(k);
  const std::string tx = std::to_string(k.job.tx_bytes);
  for (int r = 0; r < k.ctas; ++r) k.program.push_back(step(r, "mbarrier.init.shared::cta.b64 [mbar], 1;"));
  for (int r = 0; r < k.ctas; ++r) k.program.push_back(step(r, "fence.mbarrier_init.release.cluster;"));
  for (int r = 0; r < k.ctas; ++r) k.program.push_back(step(r, "barrier.cluster.arrive.release.aligned;"));
  for (int r = 0; r < k.ctas; ++r) k.program.push_back(step(r, "barrier.cluster.wait.acquire.aligned;"));
  for (int r = 0; r < k.ctas; ++r)
    if ((mask >> r) & 1)
      k.program.push_back(step(r, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + tx + ";"));
  if (tile)
    k.program.push_back(step(0, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes."
                                "multicast::cluster [smem], [map0, {c0, c1}], [mbar], ctaMask;"));
  else
    k.program.push_back(step(0, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                                "[smem], [gaddr], " + std::to_string(k.job.bulk_size) + ", [mbar], ctaMask;"));
  for (int r = 0; r < k.ctas; ++r)
    if ((mask >> r) & 1)
      k.program.push_back(step(r, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [mbar], 0;"));
  // reference: every CTA in the mask gets the same bytes (H12), the others keep the pre-fill
  k.want = k.prefill;
  std::vector<uint8_t> win(k.shared_bytes, 0);
  std::copy(k.prefill.begin(), k.prefill.begin() + k.job.region_bytes, win.begin() + k.job.region_off);
  for (int r = 0; r < k.ctas; ++r) {
    if (!((mask >> r) & 1)) continue;
    std::fill(win.begin(), win.end(), 0);
    std::copy(k.prefill.begin() + size_t(r) * k.job.region_bytes, k.prefill.begin() + size_t(r + 1) * k.job.region_bytes,
              win.begin() + k.job.region_off);
    if (tile) ref_load(k.map, k.global, k.map_offset, k.job.c, k.job.data_off, win);
    else std::copy(k.global.begin() + (uintptr_t)k.job.gsrc, k.global.begin() + (uintptr_t)k.job.gsrc + k.job.bulk_size,
                   win.begin() + k.job.data_off);
    std::copy(win.begin() + k.job.region_off, win.end(), k.want.begin() + size_t(r) * k.job.region_bytes);
  }
  return k;
}

}  // namespace tmakit::gpu_tools::record
