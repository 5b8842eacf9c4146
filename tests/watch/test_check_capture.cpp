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

constexpr uint32_t C = tmakit::instrument::kChunkRecords;
constexpr size_t kIdsAt = offsetof(Record, ctaid_x), kIdsBytes = offsetof(Record, values) - kIdsAt;  // bytes 8..31

// A record of `site` and `op` with `lane`'s ids, as that lane would write it.
Record of_lane(const Record& lane, uint32_t site, uint16_t op) {
  Record r = record(site, op, 0);
  std::memcpy(reinterpret_cast<char*>(&r) + kIdsAt, reinterpret_cast<const char*>(&lane) + kIdsAt, kIdsBytes);
  return r;
}

// The device's part of one launch, by hand (trace.hpp): slots in chunks of C, each record's
// ticket word in its slot (kNoTicket where none came), the counters (chunks taken, records
// dropped, then each cluster's tickets at ticket_counter_word). A record goes in with its ids in its chunk's header (the chunk's first
// slot, op lane_ids) and zero in its own slot but for the ticket word, as the device writes it;
// `wanted` keeps it whole, as the host should give it back.
struct ByHand {
  std::vector<Record> slots, wanted;
  std::vector<uint32_t> counters;
  ByHand(size_t n, size_t clusters) : slots(n), wanted(n), counters(tmakit::instrument::ticket_counter_word(clusters), 0) {}
  uint32_t& tickets(size_t cluster) { return counters[tmakit::instrument::ticket_counter_word(cluster)]; }
  void put(size_t slot, const Record& r, uint32_t ticket) {
    const size_t chunk = slot - slot % C;
    ASSERT_NE(slot, chunk) << "a chunk's first slot is its header";
    Record header{};
    header.op = static_cast<uint16_t>(tmakit::instrument::TraceOp::lane_ids);
    std::memcpy(reinterpret_cast<char*>(&header) + kIdsAt, reinterpret_cast<const char*>(&r) + kIdsAt, kIdsBytes);
    slots[chunk] = header;
    wanted[slot] = slots[slot] = r;
    std::memset(reinterpret_cast<char*>(&slots[slot]) + kIdsAt, 0, kIdsBytes);
    // An absolute word is the ticket plus one (trace.hpp).
    const uint32_t word = ticket == tmakit::instrument::kNoTicket || (ticket & tmakit::instrument::kRelativeTicket) ? ticket : ticket + 1;
    std::memcpy(reinterpret_cast<char*>(&slots[slot]) + tmakit::instrument::kTicketWordAt, &word, 4);
  }
};

// Two lanes of cluster 0 and one of cluster 1, each in its own chunk: lane A in chunk 1, lane B
// in chunk 0, cluster 1's lane in chunk 2. Tickets give the order: A's second record came
// first, then B's first, then A's first, then a tensor operation of A's (three records, the
// first of its three tickets at its first); B's second record's ticket never came (it hung right after).
// Sites name the expected position.
ByHand two_lanes_and_a_cluster() {
  using tmakit::instrument::TraceOp;
  ByHand h(3 * C, 2);
  Record a = in_cluster(0, 0, 0), b = a;
  b.tid_x = 32;  // lane B: another warp's
  h.put(C + 1, of_lane(a, 3, 10), 2);
  h.put(C + 2, of_lane(a, 1, 11), 0);
  h.put(C + 3, of_lane(a, 4, static_cast<uint16_t>(TraceOp::tensor_map_lo)), 3);  // tickets 3, 4, 5
  h.put(C + 4, of_lane(a, 5, static_cast<uint16_t>(TraceOp::tensor_map_hi)), tmakit::instrument::kNoTicket);
  h.put(C + 5, of_lane(a, 6, static_cast<uint16_t>(TraceOp::tensor_load)), tmakit::instrument::kNoTicket);
  h.put(1, of_lane(b, 2, 12), 1);
  h.put(2, of_lane(b, 7, 15), tmakit::instrument::kNoTicket);
  h.put(2 * C + 1, in_cluster(8, 13, 1), 0);
  h.counters[0] = 3;
  h.tickets(0) = 7;
  h.tickets(1) = 1;
  return h;
}
constexpr uint32_t kTwoLanesRecords = 8;
const Record kZeroRecord{};

void expect_sites_in_order(const std::vector<Record>& got, uint32_t n) {
  ASSERT_EQ(got.size(), n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(got[i].site, i + 1) << i;
}

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
  EXPECT_EQ(w[2], 0u);  // unused: the ticket words are in the slots
  EXPECT_EQ(w[3], 0u);  // every cluster traced
  EXPECT_EQ(w[4], t->counters_address());
  EXPECT_EQ(w[5], 1u);  // one ticket counter: plan_clusters was not called
  // --ctas 2-5: clusters [2, 6) in word 3 from the next attach; (0, 0) is every cluster again.
  t->trace_clusters(2, 6);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 2u | uint64_t{6} << 32);
  t->trace_clusters(0, 0);
  t->plan_clusters(2);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[3], 0u);
  EXPECT_EQ(w[5], 2u);

  // The slots and counters start as zero.
  const auto* counters = reinterpret_cast<uint32_t*>(static_cast<uintptr_t>(w[4]));
  const auto* slots = reinterpret_cast<Record*>(static_cast<uintptr_t>(w[0]));
  for (uint32_t i = 0; i < 3 * C; ++i) ASSERT_EQ(slots[i].op, 0) << i;
  const size_t counter_words = tmakit::instrument::ticket_counter_word(2);  // two clusters planned
  for (size_t i = 0; i < counter_words; ++i) ASSERT_EQ(counters[i], 0u) << i;

  // Host-mapped memory: what the device writes is there at once.
  const ByHand h = two_lanes_and_a_cluster();
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(w[0])), h.slots.data(), 3 * C * sizeof(Record));
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(w[4])), h.counters.data(), h.counters.size() * 4);
  expect_sites_in_order(t->written(), kTwoLanesRecords);
  EXPECT_EQ(t->read_next(), std::optional<uint64_t>(8));  // 7 + 1 tickets
  EXPECT_FALSE(t->dropped());  // not collected
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::faulted, 1, &why)) << why;  // host-mapped: readable after a fault
  expect_sites_in_order(t->written(), kTwoLanesRecords);
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(0));
  EXPECT_EQ(std::memcmp(&t->written()[1], &h.wanted[1], sizeof(Record)), 0);

  // reset: the chunks the launch took (their ticket words too) and the counters are clear again.
  t->reset();
  EXPECT_TRUE(t->written().empty());
  for (uint32_t i = 0; i < 3 * C; ++i) EXPECT_EQ(std::memcmp(&slots[i], &kZeroRecord, sizeof(Record)), 0) << i;
  for (size_t i = 0; i < counter_words; ++i) EXPECT_EQ(counters[i], 0u) << i;
  // No collect since the last reset: every slot is cleared, the last one too.
  const_cast<Record*>(slots)[3 * C - 1] = record(4, 15, 2);
  t->reset();
  EXPECT_TRUE(t->written().empty());
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
  t->plan_clusters(2);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[0], t->device_address());
  EXPECT_EQ(w[5], 2u);

  auto write = [&](const ByHand& h) {
    ASSERT_EQ(s.driver.memcpy_htod(w[0], h.slots.data(), h.slots.size() * sizeof(Record)), 0);
    ASSERT_EQ(s.driver.memcpy_htod(w[4], h.counters.data(), h.counters.size() * 4), 0);
  };
  ByHand h = two_lanes_and_a_cluster();
  h.tickets(1) = 3;  // cluster 1 made three records; two were dropped past the capacity
  h.counters[tmakit::instrument::kDroppedCounter] = 2;
  write(h);
  EXPECT_TRUE(t->written().empty());  // not yet on the host
  EXPECT_EQ(t->read_next(), std::optional<uint64_t>(10));  // the tickets reserved
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  expect_sites_in_order(t->written(), kTwoLanesRecords);
  EXPECT_EQ(t->made(), std::optional<uint64_t>(10));
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(2));

  // A chunk taken after the collect (a launch no one collected, records written after a copy):
  // the chunk counter says so, and reset clears it too; else its records would come back with
  // the next launch that reuses it.
  Record late = in_cluster(9, 10, 0);
  const uint32_t late_ticket = 4, chunks_now = 4;
  std::memcpy(reinterpret_cast<char*>(&late) + tmakit::instrument::kTicketWordAt, &late_ticket, 4);
  ASSERT_EQ(s.driver.memcpy_htod(w[0] + (3 * C + 5) * sizeof(Record), &late, sizeof late), 0);
  ASSERT_EQ(s.driver.memcpy_htod(w[4], &chunks_now, 4), 0);
  // reset: the device's slots (their ticket words too) and counters are zero again, the host copy gone.
  t->reset();
  std::vector<Record> back(4 * C);
  std::vector<uint32_t> counters(tmakit::instrument::ticket_counter_word(2));
  ASSERT_EQ(s.driver.memcpy_dtoh(back.data(), w[0], 4 * C * sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_dtoh(counters.data(), w[4], counters.size() * 4), 0);
  for (const Record& r : back) EXPECT_EQ(std::memcmp(&r, &kZeroRecord, sizeof r), 0);
  for (uint32_t c : counters) EXPECT_EQ(c, 0u);
  EXPECT_TRUE(t->written().empty());

  // A running launch: the counters are read on the trace's stream, then the chunks they count.
  // A chunk the counter does not count yet is not read.
  h = two_lanes_and_a_cluster();
  h.counters[0] = 2;  // cluster 1's chunk (2) was taken after the counters were read
  write(h);
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::running, 1, &why)) << why;
  expect_sites_in_order(t->written(), kTwoLanesRecords - 1);

  // A fault: nothing can be read, and the reason says where the records were.
  t->reset();
  EXPECT_FALSE(t->collect(tmakit::check::LaunchEnd::faulted, 1, &why));
  EXPECT_NE(why.find("device memory"), std::string::npos) << why;
  EXPECT_TRUE(t->written().empty());
}

// Chunks past the capacity: counted by the chunk counter, never read; the records in them are
// counted as dropped (tickets less records kept). plan_clusters never asks for more counters
// than records.
TEST(CheckCapture, ChunksPastTheCapacityAreDropped) {
  Stand s;
  CUmodule m = load_instrumented(s);
  ASSERT_TRUE(m);
  std::string why;
  auto t = tmakit::check::TraceBuffer::create(s.driver, 2 * C, &why, tmakit::check::RecordsIn::device);
  ASSERT_TRUE(t) << why;
  t->plan_clusters(4);
  ASSERT_TRUE(t->attach(m, &why)) << why;
  const CUdeviceptr words = trace_words(s, m);
  uint64_t w[6];
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[5], 4u);
  // Two chunks fit; five were taken. Cluster 2 made C + 4 records, C - 1 of them in chunk 1 (after
  // its header); cluster 0 made 2, in chunk 0.
  ByHand h(2 * C, 4);
  h.put(1, in_cluster(1, 10, 0), 0);
  h.put(2, in_cluster(2, 10, 0), 1);
  for (uint32_t i = 0; i < C - 1; ++i) h.put(C + 1 + i, in_cluster(3 + i, 11, 2), i);
  h.counters = {5, 5, 2, 0, C + 4, 0};  // counter 1: the five records past the capacity
  ASSERT_EQ(s.driver.memcpy_htod(w[0], h.slots.data(), 2 * C * sizeof(Record)), 0);
  ASSERT_EQ(s.driver.memcpy_htod(w[4], h.counters.data(), h.counters.size() * 4), 0);
  ASSERT_TRUE(t->collect(tmakit::check::LaunchEnd::finished, 1, &why)) << why;
  expect_sites_in_order(t->written(), C + 1);
  EXPECT_EQ(t->dropped(), std::optional<uint64_t>(5));
  t->plan_clusters(3 * C);  // more counters than records: as many as records
  ASSERT_TRUE(t->attach(m, &why)) << why;
  ASSERT_EQ(s.driver.memcpy_dtoh(w, words, sizeof w), 0);
  EXPECT_EQ(w[5], 2 * C);
}

// Ticket words (trace.hpp, Order): a reservation's first record holds its first ticket (an
// absolute word; a tensor operation's first slot, which takes three); each later record taking
// tickets from it a relative word, bit 31 set, the first record's slot from bit 5 and its last
// ticket less the first less one below. The voters of a shared warp record take the writer's
// reservation's last ticket, all of them (ties go by slot). A relative word whose first record
// has no absolute word has no ticket, and goes after the ticketed records.
TEST(CheckCapture, RelativeTicketsFollowTheirReservationsFirstRecord) {
  using tmakit::instrument::TraceOp;
  ByHand h(4 * C, 1);
  Record a = in_cluster(0, 0, 0), b = a, c = a, d = a;
  b.tid_x = 1, c.tid_x = 2, d.tid_x = 3;
  const auto relative = [](uint32_t slot, uint32_t low) { return 0x80000000u | slot << 5 | low; };
  const auto op = [](TraceOp o) { return static_cast<uint16_t>(o); };
  h.put(1, of_lane(a, 0, 11), 10);                     // A's record before: ticket 10
  h.put(2, of_lane(a, 1, 11), 20);                     // A: the warp record of A, B and C, reserving 20..27
  h.put(3, of_lane(a, 2, 11), relative(2, 0));         // A's next: 21
  h.put(C + 1, of_lane(b, 4, 11), relative(2, 6));     // B's next: the reservation's last, 27
  h.put(2 * C + 1, of_lane(c, 5, 11), relative(2, 6)); // C's next: 27 as well, after B's by slot
  h.put(3 * C + 1, of_lane(d, 3, 11), 25);             // another lane's, between A's next and the kept one
  h.put(2 * C + 3, of_lane(c, 6, 11), 28);             // after the kept one
  h.put(4, of_lane(a, 7, op(TraceOp::tensor_map_lo)), 29);    // a tensor operation first: 29, 30, 31
  h.put(5, of_lane(a, 8, op(TraceOp::tensor_map_hi)), tmakit::instrument::kNoTicket);
  h.put(6, of_lane(a, 9, op(TraceOp::tensor_load)), tmakit::instrument::kNoTicket);
  h.put(7, of_lane(a, 10, 11), relative(4, 3));        // place 4 of that reservation: 33
  // A tensor operation taking places 5..7 that writes its halves: its relative word is in its
  // own record, the halves' slots hold none (kNoTicket, 0): 34, 35, 36.
  // (One site's three records.)
  h.put(8, of_lane(a, 11, op(TraceOp::tensor_map_lo)), tmakit::instrument::kNoTicket);
  h.put(9, of_lane(a, 11, op(TraceOp::tensor_map_hi)), 0);
  h.put(10, of_lane(a, 11, op(TraceOp::tensor_load)), relative(4, 6));
  h.put(C + 2, of_lane(b, 12, 11), relative(C + 3, 0));  // slot C + 3 holds no record: no ticket, last
  h.put(3 * C + 2, of_lane(d, 13, 11), relative(C + 1, 0));  // its first record's word is relative: none
  // A word that reads 0 (not written, or not seen yet by a copy made while the kernel ran) is no
  // ticket, not ticket 0: an absolute word is the ticket plus one.
  h.put(3 * C + 3, of_lane(d, 14, 11), 0);
  std::memset(reinterpret_cast<char*>(&h.slots[3 * C + 3]) + tmakit::instrument::kTicketWordAt, 0, 4);
  const std::vector<Record> got = tmakit::check::in_ticket_order(h.slots.data(), h.slots.size());
  const uint32_t want_sites[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11, 11, 12, 13, 14};
  ASSERT_EQ(got.size(), std::size(want_sites));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].site, want_sites[i]) << i;
  EXPECT_EQ(got[11].op, op(TraceOp::tensor_map_lo));
  EXPECT_EQ(got[13].op, op(TraceOp::tensor_load));
}

// The host's side of the device's shortcuts (trace.hpp): ids from each chunk's header; a tensor
// operation flagged kFlagMapCached gets copies of the map halves its thread last wrote at the
// same site, in the place of its first two tickets; one with no such halves is left out, and so
// is a record whose chunk has no header.
TEST(CheckCapture, HeadersAndCachedMapHalvesAreExpandedInOrder) {
  using tmakit::instrument::TraceOp;
  const auto op = [](TraceOp o) { return static_cast<uint16_t>(o); };
  ByHand h(3 * C, 1);
  Record lane = in_cluster(0, 0, 0);
  lane.ctaid_x = 5, lane.tid_x = 33;
  auto as_lane = [&](uint32_t site, TraceOp o) { return of_lane(lane, site, op(o)); };
  // Site 9 writes its halves (tickets 0, 1, 2), then twice not (tickets 3..5 and 6..8); site 10
  // never wrote its halves (tickets 9..11). Each ticket word holds the first of the three (each
  // operation its reservation's first record).
  Record lo = as_lane(9, TraceOp::tensor_map_lo), hi = as_lane(9, TraceOp::tensor_map_hi);
  for (int i = 0; i < 64; ++i) lo.values[i] = static_cast<uint8_t>(i), hi.values[i] = static_cast<uint8_t>(64 + i);
  h.put(1, lo, 0);
  h.put(2, hi, tmakit::instrument::kNoTicket);
  h.put(3, as_lane(9, TraceOp::tensor_load), tmakit::instrument::kNoTicket);
  Record cached = as_lane(9, TraceOp::tensor_load);
  cached.flags = tmakit::instrument::kFlagMapCached;
  cached.values[0] = 0xAB;  // tells the two cached operations apart
  h.put(5, cached, 3);
  cached.values[0] = 0xCD;
  h.put(C + 1, cached, 6);  // the lane's next chunk
  Record unknown = as_lane(10, TraceOp::tensor_store);
  unknown.flags = tmakit::instrument::kFlagMapCached;
  h.put(4, unknown, 9);
  // A record in a chunk whose header is missing.
  h.put(2 * C + 1, as_lane(11, TraceOp::mbar_arrive), 12);
  h.slots[2 * C] = Record{};

  const std::vector<Record> got = tmakit::check::in_ticket_order(h.slots.data(), h.slots.size());
  ASSERT_EQ(got.size(), 9u);
  const TraceOp want_ops[9] = {TraceOp::tensor_map_lo, TraceOp::tensor_map_hi, TraceOp::tensor_load,
                               TraceOp::tensor_map_lo, TraceOp::tensor_map_hi, TraceOp::tensor_load,
                               TraceOp::tensor_map_lo, TraceOp::tensor_map_hi, TraceOp::tensor_load};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].op, op(want_ops[i])) << i;
    EXPECT_EQ(got[i].site, 9u) << i;
    EXPECT_EQ(got[i].flags, 0) << i << ": the cached flag never leaves the host";
    EXPECT_EQ(got[i].ctaid_x, 5u) << i;
    EXPECT_EQ(got[i].tid_x, 33) << i;
  }
  for (size_t i : {3, 6}) {
    EXPECT_EQ(std::memcmp(got[i].values, lo.values, 64), 0) << i;
    EXPECT_EQ(std::memcmp(got[i + 1].values, hi.values, 64), 0) << i;
  }
  EXPECT_EQ(got[5].values[0], 0xAB);
  EXPECT_EQ(got[8].values[0], 0xCD);
}
