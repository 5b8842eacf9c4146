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

// A record of cluster `cluster` (x), as the device writes one.
Record in_cluster(uint32_t site, uint16_t op, uint32_t cluster) {
  Record r = record(site, op, cluster);
  r.clusterid_x = cluster;
  return r;
}

using tmakit::instrument::TraceOp;
constexpr uint16_t op_of(TraceOp o) { return static_cast<uint16_t>(o); }
constexpr uint32_t C = tmakit::instrument::kChunkRecords;
constexpr size_t kIdsAt = offsetof(Record, ctaid_x), kIdsBytes = offsetof(Record, values) - kIdsAt;  // bytes 8..31
static_assert(tmakit::instrument::kClockAt == kIdsAt && tmakit::instrument::kCounterWords == 32);

// A record of `site` and `op` with `lane`'s ids, as that lane would write it.
Record of_lane(const Record& lane, uint32_t site, uint16_t op) {
  Record r = record(site, op, 0);
  std::memcpy(reinterpret_cast<char*>(&r) + kIdsAt, reinterpret_cast<const char*>(&lane) + kIdsAt, kIdsBytes);
  return r;
}

// The device's part of one launch, by hand (trace.hpp): slots in chunks of C, each record's
// clock (8 bytes at kClockAt of its slot; 0 where a copy did not see it yet, and at a map's
// halves, which hold none), one line of counters (the chunks taken, the records dropped). A
// record goes in with its ids in its chunk's header (the chunk's first slot, op lane_ids) and
// zero in its own slot but for the clock, as the device writes it; `wanted` keeps it whole, as
// the host should give it back.
struct ByHand {
  std::vector<Record> slots, wanted;
  std::vector<uint32_t> counters = std::vector<uint32_t>(tmakit::instrument::kCounterWords, 0);
  explicit ByHand(size_t n) : slots(n), wanted(n) {}
  void put(size_t slot, const Record& r, uint64_t clock) {
    const size_t chunk = slot - slot % C;
    ASSERT_NE(slot, chunk) << "a chunk's first slot is its header";
    if (slots[chunk].op == 0) {  // the lane's first record in the chunk takes it
      Record header{};
      header.op = op_of(TraceOp::lane_ids);
      header.site = r.site;
      std::memcpy(reinterpret_cast<char*>(&header) + kIdsAt, reinterpret_cast<const char*>(&r) + kIdsAt, kIdsBytes);
      slots[chunk] = header;
    }
    ASSERT_EQ(std::memcmp(reinterpret_cast<const char*>(&slots[chunk]) + kIdsAt, reinterpret_cast<const char*>(&r) + kIdsAt,
                          kIdsBytes), 0) << "a chunk is one lane's";
    wanted[slot] = slots[slot] = r;
    std::memset(reinterpret_cast<char*>(&slots[slot]) + kIdsAt, 0, kIdsBytes);
    std::memcpy(reinterpret_cast<char*>(&slots[slot]) + tmakit::instrument::kClockAt, &clock, 8);
  }
  // An operation that reads a tensor map (a tensor operation, tensormap.replace) at `slot` + 2,
  // its map halves (the same site and lane; bytes `map`, `map` + 1, ...) just before it; the
  // halves hold no clock.
  void put_with_halves(size_t slot, const Record& operation, uint64_t clock, uint8_t map) {
    Record lo = operation, hi = operation;
    lo.op = op_of(TraceOp::tensor_map_lo), hi.op = op_of(TraceOp::tensor_map_hi);
    lo.flags = hi.flags = 0;
    std::memset(lo.values, 0, sizeof lo.values);
    std::memset(hi.values, 0, sizeof hi.values);
    for (int i = 0; i < 64; ++i) lo.values[i] = static_cast<uint8_t>(map + i), hi.values[i] = static_cast<uint8_t>(map + 64 + i);
    put(slot, lo, 0);
    put(slot + 1, hi, 0);
    put(slot + 2, operation, clock);
  }
};

// `got` holds the records of `h`'s slots `want`, in that order, each whole (its ids its chunk's
// header's, not its clock).
void expect_slots(const std::vector<Record>& got, const ByHand& h, const std::vector<size_t>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(std::memcmp(&got[i], &h.wanted[want[i]], sizeof(Record)), 0)
        << "record " << i << ": want slot " << want[i] << " (site " << h.wanted[want[i]].site << ", op "
        << h.wanted[want[i]].op << "), got site " << got[i].site << ", op " << got[i].op;
}

// Two lanes of cluster 0 and one of cluster 1, each in its own chunk: lane B in chunk 0, lane A
// in chunk 1, cluster 1's lane in chunk 2. Clocks give cluster 0's order: A's first (10); B's
// first and A's second (both 20: B's slot first); A's tensor load (25), its map halves (no
// clock) right before it; A's next (30), B's next (40); then the records whose clock a copy did
// not see (0), by slot: B's last, A's last. Cluster 1's record follows all of cluster 0's, its
// clock (1) the lowest notwithstanding.
ByHand two_lanes_and_a_cluster() {
  ByHand h(3 * C);
  Record a = in_cluster(0, 0, 0), b = a;
  b.tid_x = 32;  // lane B: another warp's
  h.put(C + 1, of_lane(a, 1, 10), 10);
  h.put(C + 2, of_lane(a, 3, 11), 20);
  h.put_with_halves(C + 3, of_lane(a, 4, op_of(TraceOp::tensor_load)), 25, 0x40);
  h.put(C + 6, of_lane(a, 5, 12), 30);
  h.put(C + 7, of_lane(a, 8, 15), 0);
  h.put(1, of_lane(b, 2, 12), 20);
  h.put(2, of_lane(b, 6, 11), 40);
  h.put(3, of_lane(b, 7, 15), 0);
  h.put(2 * C + 1, in_cluster(9, 13, 1), 1);
  h.counters[0] = 3;
  return h;
}
const std::vector<size_t> kTwoLanesOrder = {C + 1, 1, C + 2, C + 3, C + 4, C + 5, C + 6, 2, 3, C + 7, 2 * C + 1};
const Record kZeroRecord{};

TEST(CheckCapture, AttachSetsTheTraceWordsAndResetZeroes) {
  Stand s;
  ASSERT_TRUE(s.driver.complete()) << "the stand-in libcuda must be on LD_LIBRARY_PATH";
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 3 * C - 5, &why);  // rounded up to whole chunks
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->capacity(), 3 * C);
  ASSERT_TRUE(t->attach(m, &why)) << why;

  // The words, read through the driver as the device would see them.
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[0], t->device_address());
  EXPECT_EQ(w[1], 3 * C);
  EXPECT_EQ(w[2], 0u);  // unused
  EXPECT_EQ(w[3], 0u);  // every cluster traced
  EXPECT_EQ(w[4], t->counters_address());
  EXPECT_EQ(w[5], 0u);  // unused
  // --ctas 2-5: clusters [2, 6) in word 3 from the next attach; (0, 0) is every cluster again.
  t->trace_clusters(2, 6);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 2u | uint64_t{6} << 32);
  t->trace_clusters(0, 0);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 0u);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[5], 0u);

  // The slots and the counters' line start as zero.
  const auto* counters = reinterpret_cast<uint32_t*>(static_cast<uintptr_t>(w[4]));
  const auto* slots = reinterpret_cast<Record*>(static_cast<uintptr_t>(w[0]));
  for (uint32_t i = 0; i < 3 * C; ++i) ASSERT_EQ(slots[i].op, 0) << i;
  for (size_t i = 0; i < tmakit::instrument::kCounterWords; ++i) ASSERT_EQ(counters[i], 0u) << i;

  // Host-mapped memory: what the device writes is there at once.
  const ByHand h = two_lanes_and_a_cluster();
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(w[0])), h.slots.data(), 3 * C * sizeof(Record));
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(w[4])), h.counters.data(), h.counters.size() * 4);
  expect_slots(t->written(), h, kTwoLanesOrder);
  EXPECT_FALSE(t->made());  // not collected
  EXPECT_FALSE(t->dropped());
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::faulted, 1, &why)) << why;  // host-mapped: readable after a fault
  expect_slots(t->written(), h, kTwoLanesOrder);
  EXPECT_EQ(t->made(), std::optional<uint64_t>(kTwoLanesOrder.size()));
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(0));

  // reset: the chunks the launch took (their clocks too) and the counters are clear again.
  t->reset();
  EXPECT_TRUE(t->written().empty());
  EXPECT_FALSE(t->made());
  for (uint32_t i = 0; i < 3 * C; ++i) EXPECT_EQ(std::memcmp(&slots[i], &kZeroRecord, sizeof(Record)), 0) << i;
  for (size_t i = 0; i < tmakit::instrument::kCounterWords; ++i) EXPECT_EQ(counters[i], 0u) << i;
  // No collect since the last reset: every slot is cleared, the last one too.
  const_cast<Record*>(slots)[3 * C - 1] = record(4, 15, 2);
  t->reset();
  EXPECT_TRUE(t->written().empty());
  EXPECT_EQ(std::memcmp(&slots[3 * C - 1], &kZeroRecord, sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
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
  // One slot past the largest buffer: its last slot would read as "none pending" on the device.
  const uint64_t past = tmakit::instrument::kMaxCapacity + 1;
  EXPECT_FALSE(tmakit::check::TraceBuffer::create(s.driver, past, &why));
  EXPECT_NE(why.find("capacity " + std::to_string(past) + " records is out of range"), std::string::npos) << why;
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
// the chunks it took, a running one (a hang) brings them through the trace's own stream, a
// fault none. reset() clears what the last launch wrote, on the device.
TEST(CheckCapture, DeviceRecordsComeBackThroughCollect) {
  Stand s;
  ASSERT_TRUE(s.driver.device_complete()) << "the stand-in libcuda must answer the device-memory calls";
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 4 * C, &why, tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->where(), tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[0], t->device_address());
  EXPECT_EQ(w[4], t->counters_address());
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[5], 0u);

  auto write = [&](const ByHand& h) {
    ASSERT_EQ(s.driver.memcpy_htod(w[0], h.slots.data(), h.slots.size() * sizeof(Record)), 0);
    ASSERT_EQ(s.driver.memcpy_htod(w[4], h.counters.data(), h.counters.size() * 4), 0);
  };
  ByHand h = two_lanes_and_a_cluster();
  h.counters[tmakit::instrument::kDroppedCounter] = 2;  // two records made past the capacity
  write(h);
  EXPECT_TRUE(t->written().empty());  // not yet on the host
  EXPECT_FALSE(t->made());
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  expect_slots(t->written(), h, kTwoLanesOrder);
  EXPECT_EQ(t->made(), std::optional<uint64_t>(kTwoLanesOrder.size() + 2));  // those in the slots, and counter 1's
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(2));

  // A chunk taken after the collect (a launch no one collected, records written after a copy):
  // the chunk counter says so, and reset clears it too; else its records would come back with
  // the next launch that reuses it.
  Record late = in_cluster(9, 10, 0);
  const uint64_t late_clock = 77;
  const uint32_t chunks_now = 4;
  std::memcpy(reinterpret_cast<char*>(&late) + tmakit::instrument::kClockAt, &late_clock, 8);
  ASSERT_EQ(s.driver.memcpy_htod(w[0] + (3 * C + 5) * sizeof(Record), &late, sizeof late), 0);
  ASSERT_EQ(s.driver.memcpy_htod(w[4], &chunks_now, 4), 0);
  // reset: the device's slots (their clocks too) and counters are zero again, the host copy gone.
  t->reset();
  std::vector<Record> back(4 * C);
  std::vector<uint32_t> counters(tmakit::instrument::kCounterWords, 0xFFFFFFFFu);
  ASSERT_EQ(s.driver.memcpy_dtoh(back.data(), w[0], 4 * C * sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_dtoh(counters.data(), w[4], counters.size() * 4), 0);
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(std::memcmp(&back[i], &kZeroRecord, sizeof(Record)), 0) << i;
  for (size_t i = 0; i < counters.size(); ++i) EXPECT_EQ(counters[i], 0u) << i;
  EXPECT_TRUE(t->written().empty());
  EXPECT_FALSE(t->dropped());

  // A running launch: the counters are read on the trace's stream, then the chunks they count.
  // A chunk the counter does not count yet is not read.
  h = two_lanes_and_a_cluster();
  h.counters[0] = 2;  // cluster 1's chunk (2) was taken after the counters were read
  write(h);
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::running, 1, &why)) << why;
  std::vector<size_t> without_cluster_1 = kTwoLanesOrder;
  without_cluster_1.pop_back();
  expect_slots(t->written(), h, without_cluster_1);
  EXPECT_EQ(t->made(), std::optional<uint64_t>(without_cluster_1.size()));
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(0));

  // A fault: nothing can be read, and the reason says where the records were.
  t->reset();
  EXPECT_FALSE(t->collect(tmakit::check::LaunchEnd::faulted, 1, &why));
  EXPECT_NE(why.find("device memory"), std::string::npos) << why;
  EXPECT_TRUE(t->written().empty());
}

// Chunks past the capacity: counted by the chunk counter, never read; the records made in them
// are counted by counter 1, and those are the records dropped.
TEST(CheckCapture, ChunksPastTheCapacityAreDropped) {
  Stand s;
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 2 * C, &why, tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t) << why;
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[5], 0u);
  // Two chunks fit; five were taken. Cluster 2 made C - 1 records in chunk 1 (after its header),
  // at clocks below cluster 0's; cluster 0 made 8 in chunk 0: two, then a tensor load with its
  // map halves, then one that did not write them (made as three records, and given back as
  // three). Five more were made in the three chunks past the capacity.
  ByHand h(2 * C);
  h.put(1, in_cluster(1, 10, 0), 1000);
  h.put(2, in_cluster(2, 10, 0), 1001);
  h.put_with_halves(3, in_cluster(3, op_of(TraceOp::tensor_load), 0), 1002, 0x20);
  Record cached = in_cluster(3, op_of(TraceOp::tensor_load), 0);
  cached.flags = tmakit::instrument::kFlagMapCached;
  h.put(6, cached, 1003);
  Record lane_of_2 = in_cluster(0, 0, 2);
  for (uint32_t i = 0; i < C - 1; ++i) h.put(C + 1 + i, of_lane(lane_of_2, 3 + i, 11), 1 + i);
  h.counters[0] = 5;
  h.counters[tmakit::instrument::kDroppedCounter] = 5;
  ASSERT_EQ(s.driver.memcpy_htod(w[0], h.slots.data(), 2 * C * sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_htod(w[4], h.counters.data(), h.counters.size() * 4), 0);
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  const std::vector<Record> got = t->written();
  ASSERT_EQ(got.size(), 8 + (C - 1));
  // Cluster 0's, the cached load's halves copied from those before it.
  const std::vector<Record> cluster_0(got.begin(), got.begin() + 8);
  h.wanted[6].flags = 0;
  expect_slots(cluster_0, h, {1, 2, 3, 4, 5, 3, 4, 6});
  std::vector<size_t> want_2;
  for (uint32_t i = 0; i < C - 1; ++i) want_2.push_back(C + 1 + i);
  expect_slots(std::vector<Record>(got.begin() + 8, got.end()), h, want_2);
  EXPECT_EQ(t->made(), std::optional<uint64_t>(8 + (C - 1) + 5));
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(5));  // counter 1, nothing else
}

// The order (trace.hpp, Order; in_clock_order): the clusters one after another by %clusterid z,
// y, x, whatever their clocks and slots; within a cluster, by clock (all 64 bits), ties by
// slot; the records whose clock is 0 (a copy made while the kernel ran did not see it) after
// their cluster's clocked ones, by slot. A map's halves hold no clock and stay right before
// their operation (a tensor operation's, tensormap.replace's). Each record gets its chunk's
// header's ids; a record whose chunk has no header is left out, and so is every header.
// What a faulty kernel may leave where records belong (fuzz_slots found the first): a chunk
// header's op anywhere but a chunk's first slot, and a record's op where a header belongs. Neither
// is a record; the chunk without its header loses its records as one never headed does.
TEST(CheckCapture, HeadersOutOfPlaceAreNoRecords) {
  ByHand h(2 * C);
  Record a = in_cluster(0, 0, 0);
  h.put(1, of_lane(a, 1, 10), 10);
  h.put(2, of_lane(a, 2, 11), 20);
  h.put(3, of_lane(a, 3, 12), 30);
  h.slots[2].op = op_of(TraceOp::lane_ids);  // a header in the middle of chunk 0
  Record b = a;
  b.tid_x = 1;
  h.put(C + 1, of_lane(b, 4, 10), 5);
  h.slots[C] = h.slots[C + 1];  // chunk 1's first slot holds a record, not a header
  const std::vector<Record> got = tmakit::check::in_clock_order(h.slots.data(), h.slots.size());
  expect_slots(got, h, {1, 3});
}

TEST(CheckCapture, EachClusterInTurnByClockTiesBySlot) {
  ByHand h(8 * C);
  Record p1{}, p2{}, p3{}, q1{}, q2{}, r1{};
  // Cluster P (70000, 0, 0): three lanes, two CTAs (ranks 0 and 1).
  p1.clusterid_x = 70000, p1.ctaid_x = 140000, p1.tid_x = 0;
  p2 = p1, p2.tid_x = 64;
  p3 = p1, p3.ctaid_x = 140001, p3.cluster_ctarank = 1;
  // Cluster Q (0, 1, 0) and R (0, 0, 1): after P, though their clusterid.x is lower.
  q1.clusterid_y = 1, q1.ctaid_y = 1;
  q2 = q1, q2.tid_x = 128;
  r1.clusterid_z = 1, r1.ctaid_z = 1, r1.tid_y = 2;
  const uint64_t hi = uint64_t{1} << 32;
  h.put(1, of_lane(r1, 1, 11), 5);                                              // chunk 0: R's lane
  h.put(C + 1, of_lane(p2, 2, 11), hi + 0x10);                                  // chunk 1: p2
  h.put(C + 2, of_lane(p2, 3, 12), hi + 0x30);
  h.put(C + 3, of_lane(p2, 4, 15), 0);                                          // not seen yet
  h.put(2 * C + 1, of_lane(q1, 5, 11), 3);                                      // chunk 2: q1
  h.put(2 * C + 2, of_lane(q1, 6, 11), 7);
  h.put(3 * C + 1, of_lane(p1, 7, 10), hi + 0x10);                              // chunk 3: p1; p2's clock
  h.put_with_halves(3 * C + 2, of_lane(p1, 8, op_of(TraceOp::tensor_store)), hi + 0x20, 0x10);
  h.put(4 * C + 1, of_lane(p3, 10, 11), 0xFFFFFFF0u);                           // chunk 4: p3; below 2^32
  h.put_with_halves(4 * C + 2, of_lane(p3, 11, op_of(TraceOp::tensormap_replace)), hi + 0x30, 0x80);
  h.put(4 * C + 5, of_lane(p3, 12, 9), 2 * hi);
  h.put(5 * C + 1, of_lane(p1, 13, 9), hi + 0x40);                              // chunk 5: p1's next
  h.put(5 * C + 2, of_lane(p1, 9, 8), 0);                                       // not seen yet
  h.put(6 * C + 1, of_lane(p1, 14, 11), hi + 0x15);                             // chunk 6: its header not seen
  h.slots[6 * C] = Record{};
  h.put(7 * C + 1, of_lane(q2, 15, 11), 5);                                     // chunk 7: q2
  h.put(7 * C + 2, of_lane(q2, 16, 15), 0);
  const std::vector<Record> got = tmakit::check::in_clock_order(h.slots.data(), h.slots.size());
  expect_slots(got, h,
               {// P
                4 * C + 1, C + 1, 3 * C + 1, 3 * C + 2, 3 * C + 3, 3 * C + 4, C + 2, 4 * C + 2, 4 * C + 3, 4 * C + 4,
                5 * C + 1, 4 * C + 5, C + 3, 5 * C + 2,
                // Q
                2 * C + 1, 7 * C + 1, 2 * C + 2, 7 * C + 2,
                // R
                1});
  ASSERT_FALSE(got.empty());
  // The ids are the header's, where the slot held the clock.
  EXPECT_EQ(got[0].ctaid_x, 140001u);
  EXPECT_EQ(got[0].cluster_ctarank, 1);
  EXPECT_EQ(got[0].clusterid_x, 70000u);
  EXPECT_EQ(got.back().clusterid_z, 1);
  EXPECT_EQ(got.back().tid_y, 2);
  // Nothing from the slots but records: no header, no unused slot.
  for (const Record& r : got) EXPECT_NE(r.op, op_of(TraceOp::lane_ids));
  EXPECT_TRUE(tmakit::check::in_clock_order(h.slots.data(), 0).empty());
}

// The host's side of the device's shortcuts (trace.hpp): ids from each chunk's header; a tensor
// operation flagged kFlagMapCached gets copies of the map halves its thread last wrote at the
// same site, right before it in its clock's place; one whose thread wrote none there (another
// thread's do not count) is left out, and so is a record whose chunk has no header.
TEST(CheckCapture, HeadersAndCachedMapHalvesAreExpandedInOrder) {
  ByHand h(4 * C);
  Record lane = in_cluster(0, 0, 0), other = lane;
  lane.ctaid_x = 5, lane.tid_x = 33;
  other.ctaid_x = 5, other.tid_x = 64;
  auto load = [&](const Record& of, uint8_t tag, bool cached) {
    Record r = of_lane(of, 9, op_of(TraceOp::tensor_load));
    r.values[0] = tag;  // tells the operations apart
    if (cached) r.flags = tmakit::instrument::kFlagMapCached;
    return r;
  };
  // The lane at site 9: writes map 1's halves (100), then not (200), then map 2's halves (300),
  // then not, in its next chunk (400). Its store at site 10 never wrote halves there (150).
  h.put_with_halves(1, load(lane, 0x11, false), 100, 0x10);
  Record unknown = of_lane(lane, 10, op_of(TraceOp::tensor_store));
  unknown.flags = tmakit::instrument::kFlagMapCached;
  h.put(4, unknown, 150);
  h.put(5, load(lane, 0xAB, true), 200);
  h.put_with_halves(6, load(lane, 0x22, false), 300, 0x90);
  h.put(2 * C + 1, load(lane, 0xCD, true), 400);
  // Another thread: its records (50, 350) between the lane's; its cached load at site 9 (250)
  // has no halves of its own thread.
  h.put(C + 1, of_lane(other, 20, op_of(TraceOp::mbar_arrive)), 50);
  h.put(C + 2, load(other, 0xEE, true), 250);
  h.put(C + 3, of_lane(other, 21, op_of(TraceOp::mbar_arrive)), 350);
  // A record in a chunk whose header is missing.
  h.put(3 * C + 1, of_lane(lane, 11, op_of(TraceOp::mbar_arrive)), 120);
  h.slots[3 * C] = Record{};

  const std::vector<Record> got = tmakit::check::in_clock_order(h.slots.data(), h.slots.size());
  // What the host should make of each cached load: map 1's or map 2's halves as the lane wrote
  // them, then the load, its flag cleared.
  Record cached_1 = h.wanted[5], cached_2 = h.wanted[2 * C + 1];
  cached_1.flags = cached_2.flags = 0;
  const Record* want[] = {&h.wanted[C + 1],                                   // 50
                          &h.wanted[1], &h.wanted[2], &h.wanted[3],           // 100
                          &h.wanted[1], &h.wanted[2], &cached_1,              // 200
                          &h.wanted[6], &h.wanted[7], &h.wanted[8],           // 300
                          &h.wanted[C + 3],                                   // 350
                          &h.wanted[6], &h.wanted[7], &cached_2};             // 400
  ASSERT_EQ(got.size(), std::size(want));
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(std::memcmp(&got[i], want[i], sizeof(Record)), 0)
        << i << ": got site " << got[i].site << ", op " << got[i].op << ", values[0] " << int(got[i].values[0]);
  for (const Record& r : got) EXPECT_EQ(r.flags, 0) << "the cached flag never leaves the host";
  EXPECT_EQ(got[5].values[64 - 1], static_cast<uint8_t>(0x10 + 64 + 63));  // map 1's second half
  EXPECT_EQ(got[12].values[0], 0x90 + 64);                                   // map 2's second half
  EXPECT_EQ(got[6].values[0], 0xAB);
  EXPECT_EQ(got[13].values[0], 0xCD);
  EXPECT_EQ(got[13].ctaid_x, 5u);
  EXPECT_EQ(got[13].tid_x, 33);
}
