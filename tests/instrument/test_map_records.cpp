// The tensor map's bytes beside each tensor operation (trace.hpp: tensor_map_lo/hi, ops 25/26)
// and the ordinary shared loads (shared_load, op 27): where the bytes are read from, where
// they land in the record, that the three records take one chunk's atomic and one clock read,
// stored in the operation's record alone, and that ptxas
// accepts the result. Expectations come from docs/check.md's record table, not from the code.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

const char* const kModule = R"(.version 8.6
.target sm_90a
.address_size 64

.global .align 64 .b8 cmap[128];

.visible .entry k(.param .align 64 .b8 pmap[128], .param .u64 gmap)
{
	.reg .pred %p<4>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<6>;
	.shared .align 8 .b64 bar[2];
	.shared .align 128 .b8 buf[4096];
	.shared .align 128 .b8 smap[128];
	ld.param.u64 %rd1, [gmap];
	mov.u32 %r1, bar;
	mov.u32 %r2, buf;
	mov.u64 %rd2, pmap;
	cvta.param.u64 %rd3, %rd2;
	@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [%rd3, {%r4, %r5}], [bar];
	cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [cmap, {%r4}], [bar];
	cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r4, %r5}], [buf];
	tensormap.replace.tile.global_address.shared::cta.b1024.b64 [smap], %rd1;
	tensormap.replace.tile.global_dim.global.b1024.b32 [%rd1], 1, %r6;
	tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [smap], 128;
	ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r2+32];
	ld.volatile.shared.b64 %rd4, [buf];
	ld.param.u64 %rd5, [gmap];
	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r2];
	ret;
}
)";

struct MapRead {
  std::string space;           // the ld's state space ("" generic)
  std::vector<std::string> at; // the addresses, in order
  std::vector<std::pair<int, int>> stores;  // (record number 0..2, offset) of the stores of loaded values
  std::vector<uint64_t> heads;              // the first-word values of its records, in order
  int atomics = 0, chunk_atomics = 0;       // atom.* lines; those that take a chunk (counter 0, add 1)
  int clock_reads = 0;                      // mov.u64 %__tmakit_dN, %clock64
  std::vector<std::pair<int, int>> clocks;  // (record number, offset) of the stores of the clock read
  std::vector<int> after_clock;             // the offsets stored after the clock read, in order
  std::vector<int> last_store;              // the offsets the site's last store writes
  bool map_cache = false;  // reads the function's map cache: writes the halves once a site and address
};

// A reading of one site's lines: which loads, which stores into which of its records.
MapRead read_site(const std::vector<std::string>& lines) {
  static const std::regex ld(R"(@%__tmakit_p\d+ ld(\.\w+)?\.b64 (%__tmakit_d\d+), \[([^\]]+)\];)");
  // A store into the record: one value, or two 8-byte ones side by side (v2.b64).
  static const std::regex st(R"(@%__tmakit_p\d+ st\.global\.(v2\.)?b\d+ \[%__tmakit_d1(?:\+(\d+))?\], \{?([^,;}]+)(?:, ([^;}]+))?\}?;)");
  // A head put in a register: as it is, or chosen by a predicate (a tensor operation's:
  // kFlagMapCached or not; the first value).
  static const std::regex head_reg(R"((?:mov\.b64 (%__tmakit_d\d+), (\d+)|selp\.b64 (%__tmakit_d\d+), (\d+), \d+, %__tmakit_p\d+);)");
  // The chunk counter (trace.hpp: word 4's counter 0) and the atomics on it.
  static const std::regex counters(R"(ld\.const\.u64 (%__tmakit_d\d+), \[__tmakit_trace\+32\];)");
  static const std::regex atom(R"(atom\.global\.add\.u32 %__tmakit_r\d+, \[(%__tmakit_d\d+)\], (\d+);)");
  static const std::regex clock(R"(mov\.u64 (%__tmakit_d\d+), %clock64;)");
  const uint64_t header = uint64_t(instrument::TraceOp::lane_ids) << 32;  // a new chunk's first word
  MapRead m;
  int record = 0;
  std::vector<std::string> loaded;  // the registers loaded since the last store of them
  std::string counter, clock_reg;
  std::map<std::string, uint64_t> heads_in;  // registers holding a head
  for (const std::string& l : lines) {
    std::smatch g;
    if (std::regex_search(l, g, counters)) counter = g[1];
    if (l.find("atom.") != std::string::npos) ++m.atomics;
    if (std::regex_search(l, g, atom) && g[1] == counter && g[2] == "1") ++m.chunk_atomics;
    if (std::regex_search(l, g, clock)) ++m.clock_reads, clock_reg = g[1];
    if (std::regex_search(l, g, ld)) m.space = g[1], loaded.push_back(g[2]), m.at.push_back(g[3]);
    auto stored = [&](int offset, const std::string& reg) {
      if (std::find(loaded.begin(), loaded.end(), reg) != loaded.end()) m.stores.push_back({record, offset});
    };
    if (std::regex_search(l, g, st)) {
      const int at = g[2].matched ? std::stoi(g[2]) : 0;
      std::vector<std::pair<int, std::string>> values = {{at, g[3]}};
      if (g[1].matched) values.push_back({at + 8, g[4]});
      m.last_store.clear();
      for (const auto& [offset, value] : values) {
        stored(offset, value);
        m.last_store.push_back(offset);
        if (!clock_reg.empty()) m.after_clock.push_back(offset);
        if (!clock_reg.empty() && value == clock_reg) m.clocks.push_back({record, offset});
        if (offset != 0) continue;
        const uint64_t h = std::isdigit(static_cast<unsigned char>(value[0])) ? std::stoull(value)
                           : heads_in.count(value)                             ? heads_in[value]
                                                                               : header;
        if (h >> 32 != header >> 32) m.heads.push_back(h);
      }
      loaded.clear();
    }
    if (std::regex_search(l, g, head_reg)) heads_in[(g[1].matched ? g[1] : g[3]).str()] = std::stoull(g[1].matched ? g[2] : g[4]);
    if (l.find("ld.local.u64 %__tmakit_d") != std::string::npos && l.find("[__tmakit_lane+") != std::string::npos)
      m.map_cache = true;
    if (l.find("add.u64 %__tmakit_d1, %__tmakit_d1, 128;") != std::string::npos) ++record;
  }
  return m;
}

uint64_t head(uint32_t site, instrument::TraceOp op) { return site | uint64_t(op) << 32; }

TEST(InstrumentMapRecords, EveryTensorOperationCarriesItsMapsBytes) {
  auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  EXPECT_EQ(strip_inserted(r.text), kModule);
  EXPECT_EQ(count_records(r.text), r.sites.size());  // one clock read a site, for three records here

  // site → (ld space, the map's base as written)
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"@%p1 cp.async.bulk.tensor.2d", {"", "%rd3"}},           // a generic address in a register
      {"cp.async.bulk.tensor.1d", {".global", "cmap"}},         // a variable: read in its own space
      {"cp.async.bulk.tensor.2d.global", {"", "%rd1"}},         // a store's map, generic too
      {"tensormap.replace.tile.global_address", {".shared", "smap"}},
      {"tensormap.replace.tile.global_dim", {".global", "%rd1"}},
      {"tensormap.cp_fenceproxy", {".shared", "smap"}},         // the bytes it installs (its src)
  };
  size_t seen = 0;
  for (const auto& s : r.sites) {
    const auto it = std::find_if(expected.begin(), expected.end(),
                                 [&](const auto& e) { return s.text.rfind(e.first, 0) == 0; });
    MapRead m = read_site(lines_of_site(r.text, s.id));
    // No atomic but the chunk's, whatever the site records (trace.hpp: a record's place is its
    // lane's chunk, its order its clock); one clock read, after every value the record holds:
    // only the clock and the head are stored after it, the head in the last store.
    EXPECT_EQ(m.atomics, 1) << s.text;
    EXPECT_EQ(m.chunk_atomics, 1) << s.text;
    EXPECT_EQ(m.clock_reads, 1) << s.text;
    std::vector<int> after = m.after_clock;
    std::sort(after.begin(), after.end());
    EXPECT_EQ(after, (std::vector<int>{0, static_cast<int>(instrument::kClockAt)})) << s.text;
    EXPECT_NE(std::find(m.last_store.begin(), m.last_store.end(), 0), m.last_store.end()) << s.text << ": the head last";
    if (it == expected.end()) {
      EXPECT_EQ(m.clocks, (std::vector<std::pair<int, int>>{{0, static_cast<int>(instrument::kClockAt)}})) << s.text;
      EXPECT_TRUE(m.at.empty()) << s.text;
      continue;
    }
    ++seen;
    SCOPED_TRACE(s.text);
    // The operation's record (the third) holds the clock; its map's halves share it.
    EXPECT_EQ(m.clocks, (std::vector<std::pair<int, int>>{{2, static_cast<int>(instrument::kClockAt)}}));
    // A tensor operation writes its halves once a site and map address; tensormap.replace and
    // cp_fenceproxy change a map: theirs are written every time.
    EXPECT_EQ(m.map_cache, s.text.rfind("tensormap.", 0) != 0);
    EXPECT_EQ(m.space, it->second.first);
    ASSERT_EQ(m.at.size(), 16u);  // 128 bytes, 8 at a time
    ASSERT_EQ(m.stores.size(), 16u);
    for (int k = 0; k < 16; ++k) {
      EXPECT_EQ(m.at[k], it->second.second + (k ? "+" + std::to_string(8 * k) : ""));
      // bytes 0..63 in the first record's values, 64..127 in the second's: values start at 32
      EXPECT_EQ(m.stores[k], std::make_pair(k / 8, 32 + 8 * (k % 8)));
    }
    ASSERT_EQ(m.heads.size(), 3u);
    EXPECT_EQ(m.heads[0], head(s.id, instrument::TraceOp::tensor_map_lo));
    EXPECT_EQ(m.heads[1], head(s.id, instrument::TraceOp::tensor_map_hi));
    EXPECT_EQ(m.heads[2], head(s.id, s.op));
  }
  EXPECT_EQ(seen, expected.size());

  // Only where tracing is on: every map load is guarded by the record's own predicate.
  EXPECT_EQ(r.text.find("\tld.b64 %__tmakit"), std::string::npos);

  if (have_ptxas()) {
    std::string log;
    EXPECT_EQ(ptxas(r.text, "sm_90a", fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "map_records", &log), 0)
        << log;
  }
}

TEST(InstrumentMapRecords, SharedLoadsRecordAddressAndBytes) {
  auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0);
  std::vector<const instrument::Site*> loads;
  for (const auto& s : r.sites)
    if (s.op == instrument::TraceOp::shared_load) loads.push_back(&s);
  // ld.shared.v4.u32 and ld.volatile.shared.b64; not ld.param, not ldmatrix
  ASSERT_EQ(loads.size(), 2u);
  const std::pair<const char*, int> want[] = {{"ld.shared.v4.u32", 16}, {"ld.volatile.shared.b64", 8}};
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(loads[i]->text);
    EXPECT_EQ(loads[i]->text.rfind(want[i].first, 0), 0u);
    ASSERT_EQ(loads[i]->fields.size(), 2u);
    EXPECT_EQ(loads[i]->fields[0].name, "addr");
    EXPECT_EQ(loads[i]->fields[0].offset, 32u);  // values[0..7]
    EXPECT_EQ(loads[i]->fields[1].name, "size");
    EXPECT_EQ(loads[i]->fields[1].offset, 40u);  // values[8..15]
    auto l = lines_of_site(r.text, loads[i]->id);
    std::string all;
    for (auto& x : l) all += x + "\n";
    EXPECT_NE(all.find("st.global.b32 [%__tmakit_d1+40], " + std::to_string(want[i].second) + ";"), std::string::npos);
  }
  // [%r2+32]: the 32-bit register plus the offset, in 32 bits, before the load runs; stored in
  // the field's low half.
  auto first = lines_of_site(r.text, loads[0]->id);
  std::string all;
  for (auto& x : first) all += x + "\n";
  std::smatch g;
  ASSERT_TRUE(std::regex_search(all, g, std::regex(R"(add\.u32 (%__tmakit_r\d+), %r2, 32;)"))) << all;
  EXPECT_NE(all.find("st.global.b32 [%__tmakit_d1+32], " + g[1].str() + ";"), std::string::npos) << all;
  EXPECT_LT(r.text.find(g[0].str()), r.text.find("\tld.shared.v4.u32"));

  // --ops copies and barriers leave loads alone; --ops copies keeps the map records.
  auto copies = instrument::instrument_module(kModule, "k.ptx", instrument::OpSet::copies);
  for (const auto& s : copies.sites) EXPECT_NE(s.op, instrument::TraceOp::shared_load);
  EXPECT_TRUE(std::regex_search(copies.text, std::regex(R"( ld\.global\.b64 %__tmakit_d\d+, \[cmap\+8\];)")));
  auto barriers = instrument::instrument_module(kModule, "k.ptx", instrument::OpSet::barriers);
  EXPECT_TRUE(barriers.sites.empty());
}

}  // namespace
