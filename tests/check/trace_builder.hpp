// Shared by the check tests: a trace written as a GPU would write it. The module is
// instrumented by the real instrumenter (its site table is the real one); the records are
// written here from what the hardware would do (site, CTA, thread, operand values), placing
// each value at the offset the site table gives, independently of the replay's decoder.
#pragma once
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tmakit/check/replay.hpp"
#include "tmakit/instrument/instrument.hpp"

namespace check_test {

namespace fs = std::filesystem;
using tmakit::instrument::Record;
using tmakit::instrument::Site;

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The instrumented kernel of tests/check/kernels/NAME, once per test program.
inline const tmakit::instrument::Result& kernel(const std::string& name) {
  static std::map<std::string, tmakit::instrument::Result> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    const fs::path p = fs::path(TMAKIT_SOURCE_DIR) / "tests/check/kernels" / name;
    it = cache.emplace(name, tmakit::instrument::instrument_module(read(p), p.string())).first;
  }
  return it->second;
}

// A 2-D float32 tile map at a device address, and a descriptor of 128 bytes that stands for
// what the driver wrote for it (the replay only compares the bytes).
struct Map {
  uint64_t address = 0x7f1200000000ull;
  uint64_t dims[2] = {256, 256};
  uint64_t stride = 1024;
  uint32_t box[2] = {32, 32};
  std::string swizzle = "128b";
  uint8_t seed = 1;
  std::array<uint8_t, 128> descriptor() const {
    std::array<uint8_t, 128> d{};
    for (int i = 0; i < 128; ++i) d[i] = static_cast<uint8_t>(i * 7 + seed);
    return d;
  }
  uint32_t box_bytes() const { return box[0] * box[1] * 4; }
  nlohmann::json json() const {
    return {{"encode", "tiled"}, {"data_type", "float32"}, {"global_address", address},
            {"dims", {dims[0], dims[1]}}, {"strides", {stride}}, {"box", {box[0], box[1]}},
            {"interleave", "none"}, {"swizzle", swizzle}, {"l2_promotion", "none"}, {"oob_fill", "none"}};
  }
};

class Trace {
 public:
  explicit Trace(const std::string& kernel_file = "pipeline.ptx") : k_(kernel(kernel_file)) {
    EXPECT_EQ(k_.status, 0) << "the test kernel must instrument cleanly";
    meta_ = {{"format", "tmakit-trace/1"}, {"kernel", "check_cases"}, {"grid", {1, 1, 1}}, {"block", {128, 1, 1}},
             {"cluster", {1, 1, 1}}, {"dynamic_smem", 0}, {"outcome", "completed"}, {"driver_result", "CUDA_SUCCESS"},
             {"records", 0}, {"next", nullptr}, {"capacity", 1 << 16}, {"target", "sm_90a"}};
  }

  nlohmann::json& meta() { return meta_; }

  // The site at PTX line `.loc LINE` of the kernel (the tests name sites by their source line).
  uint32_t site(int line) const {
    for (const Site& s : k_.sites)
      if (s.line == line) return s.id;
    ADD_FAILURE() << "no site at line " << line;
    return 0;
  }

  // The site whose instruction text holds `text` (for kernels whose `.loc` lines are a library's).
  uint32_t site_with(const std::string& text) const {
    for (const Site& s : k_.sites)
      if (s.text.find(text) != std::string::npos) return s.id;
    ADD_FAILURE() << "no site holds " << text;
    return 0;
  }

  // One record: `values` gives each field by name (every element of a vector field in order).
  Trace& rec(int line, int cta, int thread, const std::map<std::string, std::vector<int64_t>>& values,
             bool wait_ok = false) {
    return rec_at(site(line), cta, thread, values, wait_ok);
  }
  Trace& rec_at(uint32_t site_id, int cta, int thread, const std::map<std::string, std::vector<int64_t>>& values,
                bool wait_ok = false) {
    const Site& s = k_.sites[site_id];
    const int line = s.line;
    Record r{};
    r.site = s.id;
    r.op = static_cast<uint16_t>(s.op);
    r.flags = wait_ok ? 1 : 0;
    r.tid_x = static_cast<uint16_t>(thread);
    r.cluster_ctarank = static_cast<uint16_t>(cta);
    r.ctaid_x = static_cast<uint32_t>(cta);
    for (const auto& [name, vals] : values) {
      const tmakit::instrument::Field* f = nullptr;
      for (const auto& x : s.fields)
        if (x.name == name) f = &x;
      if (!f) {
        ADD_FAILURE() << "site at line " << line << " has no field " << name;
        continue;
      }
      for (size_t k = 0; k < vals.size() && k < f->count; ++k)
        std::memcpy(reinterpret_cast<uint8_t*>(&r) + f->offset + f->stride * k, &vals[k], f->bytes);
    }
    records_.push_back(r);
    return *this;
  }

  // Marks the last record a warp record standing for `lanes` (trace.hpp, kFlagWarp), the mask
  // at its site's lanes_at, as the instrumented code writes it when the lanes' values agree.
  Trace& warp(uint32_t lanes) {
    Record& r = records_.back();
    const Site& s = k_.sites[r.site];
    EXPECT_GT(s.lanes_at, 0u) << "site " << r.site << " has no lanes_at";
    r.flags |= tmakit::instrument::kFlagWarp;
    std::memcpy(reinterpret_cast<uint8_t*>(&r) + s.lanes_at, &lanes, 4);
    return *this;
  }

  // Moves the last `n` records to cluster (x, 0, 0) (%clusterid.x; each record's CTA keeps its rank).
  Trace& in_cluster(uint32_t x, size_t n) {
    for (size_t k = records_.size() - std::min(n, records_.size()); k < records_.size(); ++k) records_[k].clusterid_x = x;
    return *this;
  }
  size_t size() const { return records_.size(); }

  // The two companion records of a tensor operation: the map's 128 bytes.
  Trace& map_bytes(int line, int cta, int thread, const std::array<uint8_t, 128>& bytes) {
    return map_bytes_at(site(line), cta, thread, bytes);
  }
  Trace& map_bytes_at(uint32_t site_id, int cta, int thread, const std::array<uint8_t, 128>& bytes) {
    for (uint16_t half = 0; half < 2; ++half) {
      Record r{};
      r.site = site_id;
      r.op = static_cast<uint16_t>(25 + half);
      r.tid_x = static_cast<uint16_t>(thread);
      r.cluster_ctarank = static_cast<uint16_t>(cta);
      r.ctaid_x = static_cast<uint32_t>(cta);
      std::memcpy(r.values, bytes.data() + 64 * half, 64);
      records_.push_back(r);
    }
    return *this;
  }

  Trace& hole() {
    records_.push_back(Record{});
    return *this;
  }

  Trace& encoded(const Map& m) {
    std::string hex;
    for (uint8_t b : m.descriptor()) {
      static const char* digits = "0123456789abcdef";
      hex += digits[b >> 4];
      hex += digits[b & 15];
    }
    nlohmann::json line = {{"kind", "call"}, {"call", "cuTensorMapEncodeTiled"}, {"map", m.json()},
                           {"descriptor", hex}, {"driver_code", 0}};
    maps_ += line.dump() + "\n";
    return *this;
  }

  std::string bin() const {
    return std::string(reinterpret_cast<const char*>(records_.data()), records_.size() * sizeof(Record));
  }
  std::string meta_text() {
    meta_["records"] = records_.size();
    return meta_.dump();
  }
  std::string sites_text() const { return tmakit::instrument::sites_json(k_.sites); }
  const std::string& maps_text() const { return maps_; }

  tmakit::check::TraceDir parsed() { return tmakit::check::parse_trace_dir(meta_text(), bin(), sites_text(), maps_); }
  tmakit::check::Report replay() { return tmakit::check::replay(parsed()); }

  // The directory as the capture writes it.
  void write(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "meta.json") << meta_text();
    std::ofstream(dir / "trace.bin", std::ios::binary) << bin();
    std::ofstream(dir / "sites.json") << sites_text();
    std::ofstream(dir / "maps.jsonl") << maps_;
  }

 private:
  const tmakit::instrument::Result& k_;
  nlohmann::json meta_;
  std::vector<Record> records_;
  std::string maps_;
};

// Shared-window offsets the tests use: the buffer at 0, the barrier at 65536.
inline constexpr int64_t kBuf = 0, kBar = 65536;

// The sites of tests/check/kernels/pipeline.ptx, by their `.loc` line.
inline constexpr int64_t kMapAddr = 0x7f1100000000;  // where the kernel's map lives (its param's generic address)
inline constexpr int kInit = 10, kFenceInit = 11, kClusterArrive = 12, kClusterWait = 13;
inline constexpr int kArriveTx = 20, kLoad = 21, kWaitParity = 22, kLdShared = 23;
inline constexpr int kStShared = 30, kFenceAsync = 31, kStore = 32, kCommit = 33, kWaitRead = 34;
inline constexpr int kMulticast = 40, kRemoteArrive = 42, kReplace = 50, kAcquire = 51, kLoadFromReg = 52;
inline constexpr int kBulk = 60, kArrive = 61, kTestWait = 62;
// CTA barriers: bar.sync 0 (__syncthreads), barrier.sync.aligned 1, COUNT, bar.arrive 1, 64,
// bar.red.popc.u32 on barrier 2.
inline constexpr int kBarSync = 70, kBarSyncCount = 71, kBarArrive = 72, kBarRed = 73;

// Threads `who` of CTA `cta` meet at bar.sync 0: what each did before is ordered before what any does after.
inline void sync(Trace& t, std::initializer_list<int> who, int cta = 0) {
  for (int thread : who) t.rec(kBarSync, cta, thread, {{"id", {0}}});
}

// Thread 0 of CTA `cta`: init the barrier, arm it with `expect` bytes, load one box of `m`.
inline Trace& produce(Trace& t, const Map& m, int64_t expect, int64_t init_count = 1, int cta = 0,
                      int64_t dst = kBuf, std::vector<int64_t> coords = {0, 0}) {
  t.rec(kInit, cta, 0, {{"addr", {kBar}}, {"count", {init_count}}});
  t.rec(kFenceInit, cta, 0, {});
  t.rec(kArriveTx, cta, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {expect}}});
  t.map_bytes(kLoad, cta, 0, m.descriptor());
  t.rec(kLoad, cta, 0, {{"dstMem", {dst}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", coords}, {"mbar", {kBar}}});
  return t;
}

// The rules of a report's findings, in order.
inline std::vector<std::string> rules(const tmakit::check::Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(f.rule);
  return out;
}

inline const tmakit::check::Finding* finding(const tmakit::check::Report& r, const std::string& rule) {
  for (const auto& f : r.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

}  // namespace check_test
