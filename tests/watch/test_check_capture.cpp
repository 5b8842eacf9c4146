// tmakit::check's capture (include/tmakit/check/capture.hpp) on the stand-in libcuda
// (stand_in_check.cpp: host-mapped memory is plain memory, a module's globals are fields of
// the stand-in's module). The expectations are trace.hpp's layout and docs/check.md's trace
// directory, read back independently here. Also the PTX filter's command words (ptx_filter.hpp).
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tmakit/check/capture.hpp"
#include "tmakit/check/ptx_filter.hpp"
#include "tmakit/instrument/instrument.hpp"

namespace {

namespace fs = std::filesystem;
using tmakit::instrument::Record;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kModule = std::string(TMAKIT_SOURCE_DIR) + "/tests/corpus/nvcc/test_debug_wait.sm_90a.ptx";

// The stand-in driver; the modules a test loads are unloaded when it ends (as a program would).
struct Stand {
  tmakit::check::DriverCalls driver = tmakit::check::driver_calls_from_libcuda();
  int (*load_data)(CUmodule*, const void*) = nullptr;
  int (*unload)(CUmodule) = nullptr;
  std::vector<CUmodule> loaded;
  Stand() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h) load_data = reinterpret_cast<int (*)(CUmodule*, const void*)>(dlsym(h, "cuModuleLoadData"));
    if (h) unload = reinterpret_cast<int (*)(CUmodule)>(dlsym(h, "cuModuleUnload"));
  }
  ~Stand() {
    for (CUmodule m : loaded)
      if (unload) unload(m);
  }
  int load(CUmodule* m, const void* image) {
    const int r = load_data(m, image);
    if (r == 0) loaded.push_back(*m);
    return r;
  }
};

Record record(uint32_t site, uint16_t op, uint32_t cta) {
  Record r{};
  r.site = site;
  r.op = op;
  r.ctaid_x = cta;
  for (int i = 0; i < 96; ++i) r.values[i] = static_cast<uint8_t>(site * 7 + i);
  return r;
}

// The test module, instrumented and loaded into the stand-in (empty where that failed).
CUmodule load_instrumented(Stand& s) {
  auto inst = tmakit::instrument::instrument_module(read_file(kModule), kModule);
  CUmodule m = nullptr;
  if (inst.status != 0 || s.load(&m, inst.text.c_str()) != 0) ADD_FAILURE() << "the instrumented module did not load";
  return m;
}

// The address of a loaded module's trace words, as the device sees them.
CUdeviceptr trace_words(Stand& s, CUmodule m) {
  CUdeviceptr words = 0;
  size_t bytes = 0;
  EXPECT_EQ(s.driver.module_get_global(&words, &bytes, m, "__tmakit_trace"), 0);
  EXPECT_EQ(bytes, 48u);
  return words;
}

TEST(CheckCapture, AttachSetsTheTraceWordsAndResetZeroes) {
  Stand s;
  ASSERT_TRUE(s.driver.complete()) << "the stand-in libcuda must be on LD_LIBRARY_PATH";
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 64, &why);
  ASSERT_TRUE(t) << why;
  ASSERT_TRUE(t->attach(m, &why)) << why;

  // The words, read through the driver as the device would see them.
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[0], t->device_address());
  EXPECT_EQ(w[1], 64u);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[3], 0u);  // every cluster traced
  // --ctas 2-5: clusters [2, 6) in word 3 from the next attach; (0, 0) is every cluster again.
  t->trace_clusters(2, 6);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 2u | uint64_t{6} << 32);
  t->trace_clusters(0, 0);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 0u);

  // The device's part, by hand: records 0, 2 and 5 written, 1/3/4 holes, next = 6.
  auto* recs = reinterpret_cast<Record*>(static_cast<uintptr_t>(w[0]));
  recs[0] = record(3, 10, 0);
  recs[2] = record(4, 4, 1);
  recs[5] = record(5, 15, 1);
  w[2] = 6;
  ASSERT_EQ(s.driver.memcpy_htod(words, w, sizeof w), 0);

  auto written = t->written();
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(written[0].site, 3u);
  EXPECT_EQ(written[1].op, 4u);
  EXPECT_EQ(written[2].ctaid_x, 1u);
  EXPECT_EQ(std::memcmp(&written[1], &recs[2], sizeof(Record)), 0);
  EXPECT_EQ(t->read_next(), std::optional<uint64_t>(6));
  EXPECT_EQ(t->snapshot(6).size(), 6u);
  EXPECT_EQ(t->snapshot(std::nullopt).size(), 6u);  // one past the last written record
  EXPECT_EQ(t->snapshot(1000).size(), 64u);         // dropped records past the capacity

  t->reset();  // snapshot(1000) was given: every record is cleared
  EXPECT_TRUE(t->written().empty());

  // A launch that wrote records 0..2 (next = 3): the next reset clears them.
  recs[0] = record(1, 10, 0);
  recs[1] = record(2, 11, 0);
  recs[2] = record(3, 12, 0);
  EXPECT_EQ(t->snapshot(3).size(), 3u);
  t->reset();
  EXPECT_TRUE(t->written().empty());
  // A hang (next unknown): the reset clears the whole buffer, the last record too.
  recs[63] = record(4, 15, 2);
  EXPECT_EQ(t->snapshot(std::nullopt).size(), 64u);
  t->reset();
  EXPECT_TRUE(t->written().empty());
  // No snapshot since the last reset: everything is cleared as well.
  recs[40] = record(5, 15, 2);
  t->reset();
  EXPECT_TRUE(t->written().empty());
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[0], t->device_address());  // still attached
}

TEST(CheckCapture, ModuleWithoutTraceIsNotAttached) {
  Stand s;
  CUmodule m = nullptr;
  const std::string plain = read_file(kModule);
  ASSERT_EQ(s.load(&m, plain.c_str()), 0);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 8, &why);
  ASSERT_TRUE(t) << why;
  EXPECT_FALSE(t->attach(m, &why));
  EXPECT_NE(why.find("__tmakit_trace"), std::string::npos) << why;
  EXPECT_NE(why.find("CUDA_ERROR_NOT_FOUND"), std::string::npos) << why;
}

TEST(CheckCapture, RefusesAnIncompleteDriverAndAZeroCapacity) {
  std::string why;
  EXPECT_FALSE(tmakit::check::TraceBuffer::create({}, 8, &why));
  EXPECT_NE(why.find("cuMemHostAlloc"), std::string::npos);
  Stand s;
  EXPECT_FALSE(tmakit::check::TraceBuffer::create(s.driver, 0, &why));
  EXPECT_NE(why.find("capacity 0"), std::string::npos) << why;
}

TEST(CheckCapture, TraceDirectoryAsTheContractSays) {
  const fs::path dir = fs::temp_directory_path() / ("tmakit-capture-" + std::to_string(getpid())) / "launch-0";
  std::vector<Record> recs = {record(1, 10, 0), Record{}, record(2, 4, 3)};
  tmakit::check::LaunchInfo info;
  info.kernel = "_Z1kv";
  info.grid[0] = 4;
  info.block[0] = 128;
  info.cluster[1] = 2;
  info.dynamic_smem = 1024;
  info.outcome = "timeout";
  info.driver_result = "CUDA_ERROR_NOT_READY";
  info.timeout_s = 2.5;
  tmakit::check::write_trace_dir(dir, info, recs, 16, R"({"version":1,"sites":[]})", "{\"kind\":\"call\"}\n",
                                 "// ptx\n");
  auto meta = nlohmann::json::parse(read_file(dir / "meta.json"));
  EXPECT_EQ(meta["format"], "tmakit-trace/1");
  EXPECT_EQ(meta["kernel"], "_Z1kv");
  EXPECT_EQ(meta["grid"], nlohmann::json::parse("[4,1,1]"));
  EXPECT_EQ(meta["block"], nlohmann::json::parse("[128,1,1]"));
  EXPECT_EQ(meta["cluster"], nlohmann::json::parse("[1,2,1]"));
  EXPECT_EQ(meta["dynamic_smem"], 1024);
  EXPECT_EQ(meta["outcome"], "timeout");
  EXPECT_EQ(meta["driver_result"], "CUDA_ERROR_NOT_READY");
  EXPECT_EQ(meta["records"], 3);
  EXPECT_TRUE(meta["next"].is_null());
  EXPECT_EQ(meta["capacity"], 16);
  EXPECT_EQ(meta["timeout_s"], 2.5);
  EXPECT_EQ(meta["target"], "sm_90a");
  const std::string bin = read_file(dir / "trace.bin");
  ASSERT_EQ(bin.size(), 3 * 128u);
  EXPECT_EQ(std::memcmp(bin.data() + 256, &recs[2], 128), 0);
  EXPECT_EQ(bin[128 + 4], 0);  // the hole stays a hole
  EXPECT_EQ(read_file(dir / "sites.json"), R"({"version":1,"sites":[]})");
  EXPECT_EQ(read_file(dir / "maps.jsonl"), "{\"kind\":\"call\"}\n");
  EXPECT_EQ(read_file(dir / "module.ptx"), "// ptx\n");
  // Written again: replaced whole, no temporary left beside it.
  info.outcome = "completed";
  info.next = 3;
  tmakit::check::write_trace_dir(dir, info, recs, 16, "{}", "", "");
  EXPECT_FALSE(fs::exists(dir / "module.ptx"));
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "meta.json"))["next"], 3);
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir / "meta.json")).contains("timeout_s"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.parent_path()), fs::directory_iterator()), 1);
  fs::remove_all(dir.parent_path());
}

TEST(CheckCapture, ModuleIdLineAfterTheTraceDeclaration) {
  auto inst = tmakit::instrument::instrument_module(read_file(kModule), kModule);
  ASSERT_EQ(inst.status, 0);
  uint64_t id = 0;
  auto with_id = tmakit::check::add_module_id(inst.text, &id);
  ASSERT_TRUE(with_id);
  // FNV-1a of the instrumented text, computed here independently.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : inst.text) h = (h ^ c) * 0x100000001b3ull;
  EXPECT_EQ(id, h);
  const size_t decl = with_id->find("__tmakit_trace[6];");
  const size_t line = with_id->find('\n', decl) + 1;
  EXPECT_EQ(with_id->substr(line, with_id->find('\n', line) - line),
            ".global .align 8 .u64 __tmakit_module_id = " + std::to_string(h) + ";");
  // Taking the line out gives the text back.
  std::string back = *with_id;
  back.erase(line, with_id->find('\n', line) + 1 - line);
  EXPECT_EQ(back, inst.text);
  EXPECT_FALSE(tmakit::check::add_module_id(read_file(kModule), nullptr));  // not instrumented
}

// `check --ptx-filter CMD`: the words the preload library runs (test_check_ptx_filter.cpp runs them).
TEST(PtxFilterCommand, WordsAreSplitAtSpacesAndTabsOnly) {
  using V = std::vector<std::string>;
  EXPECT_EQ(tmakit::check::split_filter_command("python3 m.py filter expect-long16"),
            (V{"python3", "m.py", "filter", "expect-long16"}));
  EXPECT_EQ(tmakit::check::split_filter_command("  a\t\tb  "), (V{"a", "b"}));
  EXPECT_EQ(tmakit::check::split_filter_command("sh -c 'x y'"), (V{"sh", "-c", "'x", "y'"}));  // no quoting
  EXPECT_TRUE(tmakit::check::split_filter_command(" \t ").empty());
}

}  // namespace

// Records in device memory: nothing reaches the host until collect(); a finished launch brings
// the records below its next index, a running one (a hang) brings them through the trace's own
// stream, a fault none. reset() zeroes what the last launch wrote, on the device.
TEST(CheckCapture, DeviceRecordsComeBackThroughCollect) {
  Stand s;
  ASSERT_TRUE(s.driver.device_complete()) << "the stand-in libcuda must answer the device-memory calls";
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 64, &why, tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->where(), tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[0], t->device_address());
  EXPECT_EQ(w[4], 0u);  // one counter: plan_clusters was not called

  // The device's part, by hand: records 0..3 written, next = 4.
  std::vector<Record> device(4);
  for (uint32_t i = 0; i < 4; ++i) device[i] = record(i + 1, 10 + i, i);
  ASSERT_EQ(s.driver.memcpy_htod(t->device_address(), device.data(), 4 * sizeof(Record)), 0);
  w[2] = 4;
  ASSERT_EQ(s.driver.memcpy_htod(words, w, sizeof w), 0);
  EXPECT_TRUE(t->written().empty());  // not yet on the host
  ASSERT_TRUE(t->collect(4, tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  auto got = t->snapshot(4);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(std::memcmp(got.data(), device.data(), 4 * sizeof(Record)), 0);

  // reset: the device's records and the next word are zero again, the host copy is gone.
  t->reset();
  std::vector<Record> back(4);
  ASSERT_EQ(s.driver.memcpy_dtoh(back.data(), t->device_address(), 4 * sizeof(Record)), 0);
  for (const Record& r : back) EXPECT_EQ(r.op, 0);
  EXPECT_TRUE(t->written().empty());
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[2], 0u);

  // A running launch: the next word is read on the trace's stream, then the records below it.
  ASSERT_EQ(s.driver.memcpy_htod(t->device_address(), device.data(), 3 * sizeof(Record)), 0);
  w[2] = 3;
  ASSERT_EQ(s.driver.memcpy_htod(words, w, sizeof w), 0);
  ASSERT_TRUE(t->collect(std::nullopt, tmakit::check::LaunchEnd::running, 1, &why)) << why;
  EXPECT_EQ(t->snapshot(std::nullopt).size(), 3u);
  EXPECT_EQ(t->written()[2].site, 3u);

  // A fault: nothing can be read, and the reason says where the records were.
  t->reset();
  EXPECT_FALSE(t->collect(std::nullopt, tmakit::check::LaunchEnd::faulted, 1, &why));
  EXPECT_NE(why.find("device memory"), std::string::npos) << why;
  EXPECT_TRUE(t->snapshot(std::nullopt).empty());
}

// Device records with a counter a cluster: words 4 and 5 name the counters and the region
// (capacity / clusters); collect() brings each region's first `count` records, one cluster
// after another, and counts what a full region dropped; reset() zeroes them and the counters.
TEST(CheckCapture, EachClusterCountsIntoItsOwnRegion) {
  Stand s;
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 64, &why, tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t) << why;
  t->plan_clusters(4);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  ASSERT_NE(w[4], 0u);
  EXPECT_EQ(w[5], 16u);  // 64 records, 4 clusters
  t->reset();
  // Cluster 0 wrote 2 records, cluster 2 wrote 3 and reserved 20 (4 past its region), 1 and 3 none.
  const uint64_t counts[4] = {2, 0, 20, 0};
  ASSERT_EQ(s.driver.memcpy_htod(w[4], counts, sizeof counts), 0);
  std::vector<Record> region0 = {record(1, 10, 0), record(2, 11, 0)}, region2(16);
  for (uint32_t i = 0; i < 16; ++i) region2[i] = record(10 + i, 15, 2);
  ASSERT_EQ(s.driver.memcpy_htod(w[0], region0.data(), 2 * sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_htod(w[0] + 32 * sizeof(Record), region2.data(), 16 * sizeof(Record)), 0);
  EXPECT_EQ(t->read_next(), std::optional<uint64_t>(22));
  ASSERT_TRUE(t->collect(22, tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(4));
  auto got = t->snapshot(22);
  ASSERT_EQ(got.size(), 18u);  // 2 + 16, cluster by cluster
  EXPECT_EQ(got[1].site, 2u);
  EXPECT_EQ(got[2].site, 10u);
  EXPECT_EQ(got[17].site, 25u);
  // reset: the regions' records and the counters are zero again.
  t->reset();
  std::vector<Record> back(64);
  ASSERT_EQ(s.driver.memcpy_dtoh(back.data(), w[0], 64 * sizeof(Record)), 0);
  for (const Record& r : back) EXPECT_EQ(r.op, 0);
  uint64_t zero[4];
  ASSERT_EQ(s.driver.memcpy_dtoh(zero, w[4], sizeof zero), 0);
  for (uint64_t c : zero) EXPECT_EQ(c, 0u);
  // More clusters than records: one counter again.
  t->plan_clusters(65);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[4], 0u);
  EXPECT_FALSE(t->dropped());
}
