// Random libcu++ cases for the recorded vectors (`engine_vectors record memcpy_async_tx`,
// seed page 004, spec §12): one CTA, a cuda::barrier at shared offset 0, one or two
// phases. Each phase issues 1-4 cuda::device::memcpy_async_tx copies of 16 B .. 48 KiB
// (log-uniform sizes; aligned_size_t<16> mostly, 32..256 sometimes), from any of the
// participating threads, and in half of the phases 1-2 tensor tile loads on the same
// barrier. 1-4 threads arrive: thread A with barrier_arrive_tx(bar, count, tx) (counts
// 1-3, so both of CCCL's lowerings appear), the others with bar.arrive(count); a part of
// the bytes is sometimes armed by another thread's barrier_expect_tx; the last arrival is
// sometimes a bar.arrive_and_wait(). Every thread then waits on its token. Half of the
// cases put fence.mbarrier_init after init, half rely on the CTA's ordering as the seed
// example does. Shared memory from 1024 starts as random bytes, so bytes the copies must
// not touch are checked too; the barrier's own bytes are not an output.
#include <algorithm>
#include <cmath>

#include "cases.hpp"
#include "tmakit/spec/target.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools {
namespace {

using nlohmann::json;
using tensor_map::DataType;
using tensor_map::TensorMap;

constexpr uint32_t kGlobalBytes = 192 * 1024;  // G: the copies' sources
constexpr uint32_t kSharedLimit = 200 * 1024;  // below the 227 KiB of an H100 CTA

// A 2-D tiled map on T (16 KiB), validated as the driver would (sm_90).
TensorMap random_map() {
  static const spec::Target sm90 = *spec::parse_target("sm_90a");
  static constexpr DataType kTypes[] = {DataType::uint8, DataType::bfloat16, DataType::float32};
  for (;;) {
    TensorMap m;
    m.data_type = kTypes[irand(0, 2)];
    m.rank = 2;
    const int eb = elem_bytes(m.data_type);
    m.swizzle = chance(0.5) ? tensor_map::Swizzle::b128 : tensor_map::Swizzle::none;
    m.box[0] = (16 / eb) * irand(1, m.swizzle == tensor_map::Swizzle::b128 ? 8 : 16);  // inner box ≤ the span
    m.box[1] = irand(1, 16);
    m.dims[0] = m.box[0] + irand(0, 64);
    m.dims[1] = irand(1, 32);
    m.strides[0] = (m.dims[0] * eb + 15) / 16 * 16;
    m.global_address = 256;
    if (m.strides[0] * m.dims[1] > 16384) continue;
    if (!tensor_map::validate(m, sm90).has_errors()) return m;
  }
}

uint32_t log_uniform_size(uint32_t align) {
  const double bytes = 16.0 * std::pow(2.0, std::uniform_real_distribution<double>(0.0, std::log2(48.0 * 1024 / 16))(case_rng()));
  return std::max<uint32_t>(align, static_cast<uint32_t>(bytes) / align * align);
}

json call(const char* name, int thread, json keys) {
  keys["cta"] = 0;
  keys["thread"] = thread;
  keys["call"] = name;
  return keys;
}

Case make(int, uint64_t seed) {
  ScenarioJson s(kSharedLimit);
  s.add_global("G", kGlobalBytes, {{"random", seed}});
  s.sym("bar", "shared:0");
  s.sym("G", "global:G");
  s.sym("smem", "shared:0");  // destinations: smem+OFF, OFF >= 1024
  const bool tensors = chance(0.6);
  TensorMap tmap;
  if (tensors) {
    tmap = random_map();
    s.add_global("T", 16384, {{"random", seed ^ 0x5a5a}});
    s.add_map("tmap", tmap, "T");
  }
  uint32_t next = 1024;  // bump allocator for destinations
  int expected = 0;
  std::vector<json> program;
  const int phases = chance(0.3) ? 2 : 1;
  for (int phase = 0; phase < phases; ++phase) {
    // Participants: thread A (barrier_arrive_tx) and 0-3 others, distinct ids in 0..127.
    std::vector<int> threads = {irand(0, 127)};
    const int others = irand(0, 3);
    while (static_cast<int>(threads.size()) < 1 + others) {
      const int t = irand(0, 127);
      if (std::find(threads.begin(), threads.end(), t) == threads.end()) threads.push_back(t);
    }
    std::vector<int> counts(threads.size());
    for (auto& c : counts) c = irand(1, 3);
    // The last other thread of the first phase may arrive with arrive_and_wait (count 1).
    const bool and_wait = phase == 0 && threads.size() > 1 && chance(0.3);
    if (and_wait) counts.back() = 1;
    if (phase == 0) {
      for (int c : counts) expected += c;
      program.push_back(call("cuda::barrier::init", threads[0], {{"barrier", "bar"}, {"expected", expected}}));
      if (chance(0.5)) program.push_back({{"cta", 0}, {"thread", threads[0]}, {"ptx", "fence.mbarrier_init.release.cluster;"}});
    } else {
      // The second phase expects as many arrivals: one from each other thread, the rest from A.
      if (static_cast<int>(threads.size()) > expected) threads.resize(static_cast<size_t>(expected));
      counts.assign(threads.size(), 1);
      counts[0] = expected - static_cast<int>(threads.size()) + 1;
    }
    uint64_t total = 0;
    std::vector<json> issues;
    const int copies = irand(1, 4);
    for (int k = 0; k < copies; ++k) {
      const uint32_t align = chance(0.8) ? 16 : 16u << irand(1, 4);
      uint32_t size = log_uniform_size(align);
      next = (next + align - 1) / align * align + 16 * irand(0, 4) / align * align;
      if (next + size > kSharedLimit - 24 * 1024) size = align;  // room left for the tensor boxes
      const uint32_t src = static_cast<uint32_t>(irand(0, static_cast<int>((kGlobalBytes - size) / align))) * align;
      issues.push_back(call("cuda::device::memcpy_async_tx", threads[irand(0, static_cast<int>(threads.size()) - 1)],
                            {{"dest", "smem+" + std::to_string(next)}, {"src", "G+" + std::to_string(src)},
                             {"size", size}, {"alignment", align}, {"barrier", "bar"}}));
      next += size;
      total += size;
    }
    if (tensors && chance(0.8)) {
      const TensorMap& m = tmap;
      const int q = 16 / elem_bytes(m.data_type);  // inner coordinate × elemBytes on 16 bytes (H9)
      for (int k = irand(1, 2); k > 0; --k) {
        next = (next + 1023) / 1024 * 1024;
        const int x = irand(-static_cast<int>(m.box[0]) / 2, static_cast<int>(m.dims[0])) / q * q;
        const int y = irand(-2, static_cast<int>(m.dims[1]));
        issues.push_back({{"cta", 0}, {"thread", threads[irand(0, static_cast<int>(threads.size()) - 1)]},
                          {"ptx", "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [smem+" +
                                      std::to_string(next) + "], [tmap, {" + std::to_string(x) + ", " + std::to_string(y) +
                                      "}], [bar];"}});
        next += static_cast<uint32_t>(m.smem_footprint());
        total += m.bytes_per_box();
      }
    }
    std::shuffle(issues.begin(), issues.end(), case_rng());
    uint64_t part = threads.size() > 1 && chance(0.3) ? total / 2 / 16 * 16 : 0;
    if (part) program.push_back(call("cuda::device::barrier_expect_tx", threads[1], {{"barrier", "bar"}, {"tx_count", part}}));
    program.insert(program.end(), issues.begin(), issues.end());
    const std::string tag = "p" + std::to_string(phase) + "_";
    std::vector<json> arrivals;
    arrivals.push_back(call("cuda::device::barrier_arrive_tx", threads[0],
                            {{"barrier", "bar"}, {"arrive_count", counts[0]}, {"tx_count", total - part},
                             {"token", tag + std::to_string(threads[0])}}));
    for (size_t k = 1; k < threads.size(); ++k)
      if (!(and_wait && k + 1 == threads.size()))
        arrivals.push_back(call("cuda::barrier::arrive", threads[k],
                                {{"barrier", "bar"}, {"count", counts[k]}, {"token", tag + std::to_string(threads[k])}}));
    std::shuffle(arrivals.begin(), arrivals.end(), case_rng());
    program.insert(program.end(), arrivals.begin(), arrivals.end());
    // A wait blocks its CTA on the model (and, with the sequencer, on the GPU engine):
    // every arrival of the phase comes first; arrive_and_wait is the last arrival.
    if (and_wait) program.push_back(call("cuda::barrier::arrive_and_wait", threads.back(), {{"barrier", "bar"}}));
    for (size_t k = 0; k < threads.size(); ++k)
      if (!(and_wait && k + 1 == threads.size()))
        program.push_back(call("cuda::barrier::wait", threads[k], {{"barrier", "bar"}, {"token", tag + std::to_string(threads[k])}}));
  }
  const uint32_t region = (next + 15) / 16 * 16 - 1024;
  s.add_shared_init(0, 1024, region, {{"random", seed ^ 0xc0ffee}});
  s.out_shared("smem", 0, 1024, region);
  json j = s.json();
  j["shared_bytes"] = std::min<uint32_t>(kSharedLimit, (next + 1023) / 1024 * 1024);
  for (auto& step : program) j["program"].push_back(step);
  return {"", "", "", j};
}

}  // namespace

std::vector<Case> memcpy_async_tx_cases(int count, uint64_t seed) { return numbered_cases(count, seed, make); }

}  // namespace tmakit::gpu_tools
