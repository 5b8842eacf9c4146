// Records the driver's verdict on random tensor-map arguments (§1.3, §1.4, §1.5, H17).
// About half of the sets are valid; each other set breaks exactly one rule, named
// in "intended_rule" by the validator's rule id (src/tensor_map/rules.cpp), "none" for
// valid sets. Every set is encoded by the driver (through tmakit::gpu::encode) and
// written as one JSON line: the map in the scenario `tensor_maps` form plus "driver"
// (the CUresult name) and "intended_rule". Every set follows from the seed.
// Usage: record_driver_verdicts OUT.jsonl [COUNT] [SEED]
//          the general sets (tests/vectors/driver_verdicts.jsonl: seed 20261122, 2400)
//        record_driver_verdicts im2col OUT.jsonl [IM2COL] [WIDE] [SEED]
//          im2col and im2col_wide sets and their corners (im2col_verdicts.cpp;
//          tests/vectors/driver_verdicts_im2col.jsonl: 1200, 600, seed 20260514)
// TMAKIT_DRY_RUN=1 writes the sets without a GPU ("driver": "DRY_RUN").
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tmakit/gpu/encode.hpp"
#include "verdict_draws.hpp"

using namespace tmakit;
using namespace tmakit::gpu_tools::verdicts;

namespace tmakit::gpu_tools::verdicts {

void Recorder::emit(const TensorMap& m, const std::string& rule) {
  CUtensorMap cm{};  // 128-byte aligned by its type
  CUresult r = dry_ ? CUDA_ERROR_NOT_SUPPORTED : gpu::encode(m, &cm);
  nlohmann::json j = gpu_tools::map_json(m);
  j["driver"] = dry_ ? "DRY_RUN" : gpu::result_name(r);
  j["intended_rule"] = rule;
  out_ << j.dump() << "\n";
  auto& t = tally_[rule];
  t.first++;
  t.second += r != CUDA_SUCCESS;
  ++written_;
}

void Recorder::print_tally(const char* what, const char* path) const {
  std::printf("%s: %d sets written to %s\n%-28s %6s %8s\n", what, written_, path, "intended rule", "sets",
              "refused");
  for (auto& [rule, t] : tally_) std::printf("%-28s %6d %8d\n", rule.c_str(), t.first, t.second);
}

namespace {

// The general sets (tests/vectors/driver_verdicts.jsonl): random tiled and im2col maps,
// then the targeted probes of docs/hardware-notes.md items 1-5.
void record_general(Recorder& rec, int count) {
  rec.emit(limit_case(false), "none");
  rec.emit(limit_case(true), "map.box-bytes-limit");
  // Does the byte limit divide box[0] by an (ignored) elementStrides[0]? uint8 {256, 228, 8}
  // with elementStrides[0] = 2 is 233,472 bytes if it does, 466,944 if not.
  for (uint32_t e0 = 2; e0 <= 8; e0 *= 2) {
    TensorMap m = limit_case(false);
    m.box = {256, 228, 4 * e0, 1, 1};
    m.element_strides = {e0, 1, 1, 1, 1};
    rec.emit(m, "map.box-bytes-limit");
  }
  while (rec.written() < count) {
    const bool im2col = chance(0.3);
    TensorMap m = im2col ? valid_im2col() : valid_tiled();
    if (chance(0.5)) {
      rec.emit(m, "none");
      continue;
    }
    for (int attempt = 0; attempt < 20; ++attempt) {
      TensorMap t = m;
      std::string rule = break_one(t, irand(0, 17));  // rules 0..17: the sets as recorded
      if (!rule.empty()) {
        rec.emit(t, rule);
        break;
      }
    }
  }
  // Targeted probes for what the random sets left open (docs/hardware-notes.md):
  // (a) the byte limit's per-dimension count: floor or ceil of box / elementStrides, dim 0 included?
  for (int n = 0; n < 150; ++n) {
    TensorMap m;
    m.data_type = static_cast<DataType>(irand(0, 12));
    const int eb = elem_bytes(m.data_type);
    m.rank = irand(2, 5);
    m.box[0] = uint32_t(irand(1, 256 * eb / 16) * 16 / eb);
    if (m.box[0] > 256) m.box[0] = 256 / (16 / eb) * (16 / eb);
    for (int i = 1; i < m.rank; ++i) m.box[i] = irand(1, 256);
    for (int i = 0; i < m.rank; ++i) m.element_strides[i] = chance(0.5) ? 1 : irand(2, 8);
    // keep only sets where the floor and ceil readings fall on different sides of the limit
    uint64_t fl = eb, ce = eb;
    for (int i = 0; i < m.rank; ++i) {
      fl *= m.box[i] / m.element_strides[i];
      ce *= (m.box[i] + m.element_strides[i] - 1) / m.element_strides[i];
    }
    if (!(fl <= kMaxBoxBytes && ce > kMaxBoxBytes)) { --n; continue; }
    random_extents(m, 16);
    m.global_address = base_address;
    rec.emit(m, box_bytes(m) > kMaxBoxBytes ? "map.box-bytes-limit" : "none");
  }
  // (b) im2col boxes over spatial extents near 2^31 and 2^32 (X + upper - lower in 32 bits?)
  for (int n = 0; n < 80; ++n) {
    TensorMap m = valid_im2col();
    const int s = irand(0, m.rank - 3);
    const uint64_t anchors[] = {1ull << 31, (1ull << 31) + 1, (1ull << 32) - 1, 1ull << 32};
    m.dims[s + 1] = anchors[irand(0, 3)] - uint64_t(irand(0, 3));
    const int lim = m.rank == 3 ? 32768 : (m.rank == 4 ? 128 : 16);
    m.pixel_box_lower[s] = irand(-std::min(lim, 8), std::min(lim - 1, 8));
    m.pixel_box_upper[s] = irand(-std::min(lim, 8), std::min(lim - 1, 8));
    rec.emit(m, int64_t(m.dims[s + 1]) - 1 + m.pixel_box_upper[s] < m.pixel_box_lower[s] ? "map.im2col-box-empty" : "none");
  }
  // (c) interleave 16B / 32B against every swizzle and several inner box widths
  for (int n = 0; n < 120; ++n) {
    TensorMap m = valid_tiled();
    m.interleave = static_cast<Interleave>(irand(1, 2));
    m.rank = std::max(m.rank, 3);
    for (int i = 1; i < m.rank; ++i) if (!m.box[i]) m.box[i] = 1;
    m.swizzle = static_cast<Swizzle>(irand(0, 3));
    const int eb = elem_bytes(m.data_type);
    const int widths[] = {8, 16, 32, 64, 128, 256};
    int w = widths[irand(0, 5)];
    m.box[0] = std::max(1, w / eb);
    m.element_strides[0] = 1;
    fit_box_limit(m);
    random_extents(m, 32);
    m.global_address = base_address + 32 * urand(0, 8);
    const bool span_ok = m.swizzle == Swizzle::none || int(m.box[0]) * eb <= span_of(m.swizzle);
    const char* rule = m.interleave == Interleave::b32 && m.swizzle != Swizzle::b32 ? "map.interleave-swizzle"
                       : (int(m.box[0]) * eb) % 16 != 0 ? "none"
                       : !span_ok ? "map.swizzle-span" : "none";
    rec.emit(m, rule);
  }
}

}  // namespace
}  // namespace tmakit::gpu_tools::verdicts

int main(int argc, char** argv) {
  const bool im2col = argc > 1 && std::string(argv[1]) == "im2col";
  const int first = im2col ? 2 : 1;  // OUT.jsonl
  if (argc <= first) {
    std::fprintf(stderr, "usage: %s OUT.jsonl [COUNT] [SEED]\n       %s im2col OUT.jsonl [IM2COL] [WIDE] [SEED]\n",
                 argv[0], argv[0]);
    return 2;
  }
  auto arg = [&](int i, unsigned long long fallback) {
    return argc > first + i ? std::strtoull(argv[first + i], nullptr, 0) : fallback;
  };
  rng.seed(im2col ? arg(3, 20260514) : arg(2, 20261122));
  void* mem = nullptr;
  const bool dry = std::getenv("TMAKIT_DRY_RUN") != nullptr;  // no GPU: tests the generator only
  if (dry) mem = reinterpret_cast<void*>(0x7f0000000000ull);
  else if (cudaMalloc(&mem, 1 << 20) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  base_address = round_up(reinterpret_cast<uint64_t>(mem), 1024);
  Recorder rec(argv[first], dry);
  if (!rec.ok()) {
    std::fprintf(stderr, "cannot write %s\n", argv[first]);
    return 1;
  }
  if (im2col) record_im2col(rec, int(arg(1, 1200)), int(arg(2, 600)));
  else record_general(rec, int(arg(1, 2400)));
  rec.print_tally("driver verdicts", argv[first]);
  return 0;
}
