// What a site's inserted lines do, run by a small interpreter of the PTX they use, for a warp
// of lanes in lockstep: the trace words, the warp's one reservation (activemask, ballot, atom,
// shfl), the record bytes (ids packed with bfi and mov.b64 {lo, hi}, head last) and the wait
// streak. Expectations are written from trace.hpp's Record and docs/check.md's rules, not from
// the emitter: a packing mistake, an index handed to the wrong lane, a record written past the
// capacity or a poll recorded twice shows here and not only on the GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

using instrument::Record;
using instrument::TraceOp;

const char* const kModule = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 pmap[128])
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar[1];
	.shared .align 128 .b8 buf[1024];
	@%p2 mbarrier.init.shared::cta.b64 [bar], 32;
	@%p2 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [pmap, {%r4}], [bar];
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r1;
	ret;
}
)";
constexpr uint32_t kInit = 0, kLoad = 1, kWait = 2;  // the sites, in module order

// Where the interpreter puts `__tmakit_trace` and the per-cluster counters (word 4).
constexpr uint64_t kTraceAt = 0x7000000, kCountersAt = 0x8000000;

// A warp's state: the trace's six words, the records buffer, each lane's registers.
struct Warp {
  uint64_t words[6] = {0x100000, 0, 0, 0, 0, 0};  // records at 0x100000; capacity, next set by the test
  std::map<uint64_t, uint64_t> counters;          // word 4's counters, by index
  std::vector<uint8_t> mem;                       // the records
  std::vector<std::map<std::string, uint64_t>> regs;
  std::vector<bool> active;

  explicit Warp(int lanes, uint64_t capacity) : mem(capacity * instrument::kRecordBytes, 0), regs(lanes), active(lanes, true) {
    words[1] = capacity;
    for (int l = 0; l < lanes; ++l) regs[l]["%tid.x"] = static_cast<uint64_t>(l), regs[l]["%ctaid.x"] = 7;
  }
  Record record(size_t i) const {
    Record r;
    std::memcpy(&r, mem.data() + i * sizeof r, sizeof r);
    return r;
  }
};

std::vector<std::string> operands(std::string s) {  // "a, {b, c}, [d+8]" → a | {b, c} | [d+8]
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur), cur.clear();
      continue;
    }
    if (c != ' ' || !cur.empty()) cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Runs `lines` for every active lane of `w`, one instruction at a time for the whole warp.
void run(Warp& w, const std::vector<std::string>& lines) {
  static const std::regex stmt(R"(^\s*(?:@(!?)(\S+)\s+)?([a-z][\w.:]*)\s+(.*);\s*$)");
  const int lanes = static_cast<int>(w.regs.size());
  for (const std::string& line : lines) {
    std::smatch m;
    if (line.find("//") != std::string::npos && line.find("//") < line.find_first_not_of(" \t") + 1) continue;
    ASSERT_TRUE(std::regex_match(line, m, stmt)) << line;
    const bool neg = m[1] == "!";
    const std::string guard = m[2], op = m[3];
    const auto ops = operands(m[4]);
    auto val = [&](int lane, const std::string& x) -> uint64_t {
      if (x.rfind("0x", 0) == 0 || x.rfind("0X", 0) == 0) return std::stoull(x.substr(2), nullptr, 16);
      if (std::isdigit(static_cast<unsigned char>(x[0])) || x[0] == '-') return static_cast<uint64_t>(std::stoll(x));
      if (x[0] == '!') return !w.regs[lane].at(x.substr(1));
      if (x == "%lanemask_lt") return (1ull << lane) - 1;
      auto it = w.regs[lane].find(x);
      return it == w.regs[lane].end() ? 0 : it->second;  // special registers not set read 0
    };
    auto runs = [&](int lane) { return w.active[lane] && (guard.empty() || (val(lane, guard) != 0) != neg); };
    uint32_t mask = 0;
    for (int l = 0; l < lanes; ++l) mask |= w.active[l] ? 1u << l : 0;
    // Warp-wide instructions: their result needs every lane's operand first.
    if (op == "vote.sync.ballot.b32") {
      uint64_t bits = 0;
      for (int l = 0; l < lanes; ++l) if (runs(l) && val(l, ops[1])) bits |= 1ull << l;
      for (int l = 0; l < lanes; ++l) if (runs(l)) w.regs[l][ops[0]] = bits;
      continue;
    }
    if (op == "match.all.sync.b32" || op == "match.all.sync.b64") {  // d|p, a, membermask
      const auto bar = ops[0].find('|');
      const std::string d = ops[0].substr(0, bar), pred = ops[0].substr(bar + 1);
      for (int l = 0; l < lanes; ++l) {
        if (!runs(l)) continue;
        const uint64_t members = val(l, ops[2]);
        bool same = true;
        for (int k = 0; k < lanes; ++k)
          if (members >> k & 1) {
            ASSERT_TRUE(runs(k)) << "lane " << k << " is in the member mask but does not run: " << line;
            uint64_t a = val(k, ops[1]), b = val(l, ops[1]);
            if (op.back() == '2') a &= 0xFFFFFFFF, b &= 0xFFFFFFFF;
            same = same && a == b;
          }
        w.regs[l][d] = same ? members : 0;
        w.regs[l][pred] = same;
      }
      continue;
    }
    if (op == "shfl.sync.idx.b32") {
      std::vector<uint64_t> src(lanes);
      for (int l = 0; l < lanes; ++l) src[l] = val(l, ops[1]);
      for (int l = 0; l < lanes; ++l) {  // idx mode: c's low five bits clamp the source lane (no segments)
        if (!runs(l)) continue;
        const uint64_t c = val(l, ops[3]), j = val(l, ops[2]) & 31;
        ASSERT_EQ(c >> 5, 0u) << line;
        w.regs[l][ops[0]] = src[j <= (c & 31) ? j : static_cast<uint64_t>(l)] & 0xFFFFFFFF;
      }
      continue;
    }
    for (int l = 0; l < lanes; ++l) {
      if (!runs(l)) continue;
      auto& r = w.regs[l];
      auto v = [&](size_t i) { return val(l, ops[i]); };
      auto at = [&](const std::string& a) {  // [base+off]
        std::string in = a.substr(1, a.size() - 2);
        size_t plus = in.find('+');
        std::string base = in.substr(0, plus);
        uint64_t off = plus == std::string::npos ? 0 : std::stoull(in.substr(plus + 1));
        return std::make_pair(base, off);
      };
      if (op == "ld.global.u64") {
        auto [base, off] = at(ops[1]);
        ASSERT_EQ(base, "__tmakit_trace") << line;
        r[ops[0]] = w.words[off / 8];
      } else if (op.rfind("ld.", 0) == 0 && op.substr(op.size() - 4) == ".b64") {  // a map's bytes: its offset, tagged
        r[ops[0]] = 0x4D41500000000000ull | at(ops[1]).second;
      } else if (op == "mov.u64" && ops[1] == "__tmakit_trace") {
        r[ops[0]] = kTraceAt;
      } else if (op == "atom.global.add.u64") {  // [reg]: word 2, or one of word 4's counters
        const uint64_t addr = val(l, ops[1].substr(1, ops[1].size() - 2));
        uint64_t& counter = addr == kTraceAt + 16 ? w.words[2] : w.counters[(addr - kCountersAt) / 8];
        ASSERT_TRUE(addr == kTraceAt + 16 || (w.words[4] == kCountersAt && addr >= kCountersAt && addr % 8 == 0)) << line;
        r[ops[0]] = counter;
        counter += v(2);
      } else if (op.rfind("setp.", 0) == 0) {
        static const std::regex setp(R"(setp\.(ne|eq|lt|le|ge)(?:\.(and|or))?\.[us](32|64))");
        std::smatch s;
        ASSERT_TRUE(std::regex_match(op, s, setp)) << line;
        uint64_t a = v(1), b = v(2);
        if (s[3] == "32") a &= 0xFFFFFFFF, b &= 0xFFFFFFFF;
        bool c = s[1] == "ne" ? a != b : s[1] == "eq" ? a == b : s[1] == "lt" ? a < b : s[1] == "ge" ? a >= b : a <= b;
        if (s[2] == "and") c = c && v(3);
        if (s[2] == "or") c = c || v(3);
        r[ops[0]] = c;
      } else if (op == "and.pred") {
        r[ops[0]] = v(1) && v(2);
      } else if (op == "or.pred") {
        r[ops[0]] = v(1) || v(2);
      } else if (op == "not.pred") {
        r[ops[0]] = !v(1);
      } else if (op == "or.b64") {
        r[ops[0]] = v(1) | v(2);
      } else if (op == "cvt.u32.u16") {
        r[ops[0]] = v(1) & 0xFFFF;
      } else if (op == "activemask.b32") {
        r[ops[0]] = mask;
      } else if (op == "and.b32") {
        r[ops[0]] = v(1) & v(2) & 0xFFFFFFFF;
      } else if (op == "popc.b32") {
        r[ops[0]] = static_cast<uint64_t>(__builtin_popcount(static_cast<uint32_t>(v(1))));
      } else if (op == "brev.b32") {
        uint32_t x = static_cast<uint32_t>(v(1)), y = 0;
        for (int k = 0; k < 32; ++k) y |= ((x >> k) & 1u) << (31 - k);
        r[ops[0]] = y;
      } else if (op == "clz.b32") {
        uint32_t x = static_cast<uint32_t>(v(1));
        r[ops[0]] = x ? static_cast<uint64_t>(__builtin_clz(x)) : 32;
      } else if (op == "mul.wide.u32") {
        r[ops[0]] = (v(1) & 0xFFFFFFFF) * (v(2) & 0xFFFFFFFF);
      } else if (op == "add.u64" || op == "add.s64") {
        r[ops[0]] = v(1) + v(2);
      } else if (op == "mad.lo.u64") {
        r[ops[0]] = v(1) * v(2) + v(3);
      } else if (op == "mul.lo.u64") {
        r[ops[0]] = v(1) * v(2);
      } else if (op == "sub.u32") {
        r[ops[0]] = (v(1) - v(2)) & 0xFFFFFFFF;
      } else if (op == "mad.lo.u32") {
        r[ops[0]] = (v(1) * v(2) + v(3)) & 0xFFFFFFFF;
      } else if (op == "cvt.u64.u32") {
        r[ops[0]] = v(1) & 0xFFFFFFFF;
      } else if (op == "selp.b64" || op == "selp.b32" || op == "selp.u32") {
        r[ops[0]] = v(3) ? v(1) : v(2);
      } else if (op == "bfi.b32") {  // bfi d, a, b, pos, len: b with bits [pos, pos+len) from a
        const uint64_t pos = v(3), len = v(4), field = ((1ull << len) - 1) << pos;
        r[ops[0]] = ((v(2) & ~field) | ((v(1) << pos) & field)) & 0xFFFFFFFF;
      } else if (op == "mov.b64" && ops[0][0] == '{') {  // unpack
        auto parts = operands(ops[0].substr(1, ops[0].size() - 2));
        r[parts[0]] = v(1) & 0xFFFFFFFF, r[parts[1]] = v(1) >> 32;
      } else if (op == "mov.b64" && ops[1][0] == '{') {  // pack
        auto parts = operands(ops[1].substr(1, ops[1].size() - 2));
        r[ops[0]] = (val(l, parts[0]) & 0xFFFFFFFF) | val(l, parts[1]) << 32;
      } else if (op.rfind("mov.", 0) == 0) {
        r[ops[0]] = v(1);
      } else if (op.rfind("st.global.", 0) == 0) {
        auto [base, off] = at(ops[0]);
        const uint64_t addr = r[base] + off - w.words[0];
        std::vector<uint64_t> vals;
        int bytes = 8;
        if (op == "st.global.v2.b64") {
          auto parts = operands(ops[1].substr(1, ops[1].size() - 2));
          vals = {val(l, parts[0]), val(l, parts[1])};
        } else {
          vals = {v(1)};
          bytes = std::stoi(op.substr(op.rfind(".b") + 2)) / 8;
        }
        for (size_t k = 0; k < vals.size(); ++k) {
          ASSERT_LE(addr + k * 8 + bytes, w.mem.size()) << "a store past the buffer: " << line;
          std::memcpy(w.mem.data() + addr + k * 8, &vals[k], bytes);
        }
      } else {
        FAIL() << "not interpreted: " << line;
      }
    }
  }
}

struct Instrumented {
  instrument::Result r;
  Instrumented() : r(instrument::instrument_module(kModule, "k.ptx")) {}
  std::vector<std::string> prologue() const {  // the lines after the entry's `{` that name the prefix
    std::vector<std::string> out;
    std::istringstream in(r.text);
    std::string l;
    bool body = false;
    while (std::getline(in, l)) {
      if (l == "{") body = true;
      else if (body && l.find("__tmakit site") != std::string::npos) break;
      else if (body && l.find("__tmakit") != std::string::npos && l.find(".reg") == std::string::npos) out.push_back(l);
    }
    return out;
  }
};

TEST(InstrumentRecordBytes, IdsAndHeadLandInTheirFields) {
  Instrumented in;
  ASSERT_EQ(in.r.status, 0) << (in.r.diags.empty() ? "" : format(in.r.diags[0]));
  ASSERT_EQ(in.r.sites.size(), 3u);
  Warp w(1, 8);
  w.regs[0] = {{"%ctaid.x", 0x01020304}, {"%ctaid.y", 0x1112}, {"%ctaid.z", 0x2122}, {"%tid.x", 0x3132},
               {"%tid.y", 0x4142}, {"%tid.z", 0x5152}, {"%cluster_ctarank", 0x6162}, {"%clusterid.x", 0x71727374},
               {"%clusterid.y", 0x8182}, {"%clusterid.z", 0x9192}, {"%p2", 1}};
  run(w, in.prologue());
  run(w, lines_of_site(in.r.text, kInit));
  run(w, lines_of_site(in.r.text, kLoad));
  Record want{};
  want.ctaid_x = 0x01020304, want.ctaid_y = 0x1112, want.ctaid_z = 0x2122;
  want.tid_x = 0x3132, want.tid_y = 0x4142, want.tid_z = 0x5152, want.cluster_ctarank = 0x6162;
  want.clusterid_x = 0x71727374, want.clusterid_y = 0x8182, want.clusterid_z = 0x9192;
  // mbarrier.init, then the tensor load's map halves and its own record.
  const std::pair<uint32_t, TraceOp> heads[4] = {{kInit, TraceOp::mbar_init}, {kLoad, TraceOp::tensor_map_lo},
                                                 {kLoad, TraceOp::tensor_map_hi}, {kLoad, TraceOp::tensor_load}};
  EXPECT_EQ(w.words[2], 4u);
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    want.site = heads[k].first;
    want.op = static_cast<uint16_t>(heads[k].second);
    // The init's values are the same in every recording lane (here one): a warp record. A
    // tensor operation (three records a lane) never is.
    want.flags = heads[k].second == TraceOp::mbar_init ? instrument::kFlagWarp : 0;
    Record got = w.record(k);
    // Bytes 0..31 (head and ids) exactly; the values are the table's business (other tests).
    EXPECT_EQ(std::memcmp(&got, &want, 32), 0) << "site " << got.site << " op " << got.op << " ctaid " << std::hex
                                                << got.ctaid_x << " " << got.ctaid_y << " " << got.ctaid_z << " tid "
                                                << got.tid_x << " " << got.tid_y << " " << got.tid_z << " cluster "
                                                << got.clusterid_x << " " << got.clusterid_y << " " << got.clusterid_z;
  }
  // The map's halves: bytes 0..63 and 64..127 of the map (read here as their offsets, tagged).
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < 8; ++k) {
      uint64_t v;
      std::memcpy(&v, w.record(1 + half).values + 8 * k, 8);
      EXPECT_EQ(v, 0x4D41500000000000ull | (64 * half + 8 * k)) << half << " " << k;
    }
}

// One reservation a warp: the recording lanes' records are consecutive, in lane order, from
// where the counter stood; lanes whose guard is false write nothing; past the capacity nothing
// is written but the counter still counts every record. Where every recording lane's values
// agree, one warp record stands for them all: the lowest lane's ids, kFlagWarp, the lanes' mask
// at the site's lanes_at.
TEST(InstrumentRecordBytes, AWarpReservesOnceForItsRecordingLanes) {
  Instrumented in;
  ASSERT_GT(in.r.sites[kWait].lanes_at, 0u);
  for (bool same : {false, true})
    for (uint64_t start : {0u, 5u}) {
      SCOPED_TRACE(testing::Message() << "start " << start << (same ? ", same parity" : ", parity by lane"));
      Warp w(32, 64);
      w.words[2] = start;
      std::vector<int> voters;
      uint32_t mask = 0;
      for (int l = 0; l < 32; ++l) {
        w.regs[l]["%r1"] = same ? 1 : l & 1;  // the wait's phaseParity
        w.regs[l]["%p3"] = 1;                 // the poll succeeded in every lane
      }
      for (int l = 0; l < 32; ++l)
        if (l != 29) voters.push_back(l), mask |= 1u << l;
      w.active[29] = false;  // a lane that is elsewhere (diverged, or exited) takes no part
      run(w, in.prologue());
      run(w, lines_of_site(in.r.text, kWait));
      const size_t n = same ? 1 : voters.size();
      ASSERT_EQ(w.words[2], start + n);
      for (size_t i = 0; i < start; ++i) EXPECT_EQ(w.record(i).op, 0) << i;
      for (size_t i = 0; i < n; ++i) {
        const Record r = w.record(start + i);
        EXPECT_EQ(r.op, static_cast<uint16_t>(TraceOp::mbar_try_wait)) << i;
        EXPECT_EQ(r.tid_x, voters[i]) << i;
        EXPECT_EQ((r.flags & instrument::kFlagWarp) != 0, same) << i;
        EXPECT_NE(r.flags & instrument::kFlagWaitComplete, 0) << i;
        uint32_t lanes = 0;
        std::memcpy(&lanes, reinterpret_cast<const uint8_t*>(&r) + in.r.sites[kWait].lanes_at, 4);
        EXPECT_EQ(lanes, same ? mask : 0u) << i;
      }
      EXPECT_EQ(w.record(start + n).op, 0);
    }
  // A poll that succeeded in some lanes and failed in others: the outcome differs, one record a lane.
  {
    Warp w(4, 64);
    for (int l = 0; l < 4; ++l) w.regs[l]["%r1"] = 0, w.regs[l]["%p3"] = l < 2;
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kWait));
    ASSERT_EQ(w.words[2], 4u);
    for (int l = 0; l < 4; ++l) EXPECT_EQ(w.record(l).flags, l < 2 ? instrument::kFlagWaitComplete : 0) << l;
  }
  // The init's values are the same in every lane whose guard holds: one warp record for them.
  {
    Warp w(32, 64);
    uint32_t mask = 0;
    for (int l = 0; l < 32; ++l) w.regs[l]["%p2"] = l % 3 != 0, mask |= l % 3 ? 1u << l : 0;
    run(w, lines_of_site(in.r.text, kInit));
    ASSERT_EQ(w.words[2], 1u);
    EXPECT_EQ(w.record(0).tid_x, 1);
    uint32_t lanes = 0;
    std::memcpy(&lanes, w.mem.data() + in.r.sites[kInit].lanes_at, 4);
    EXPECT_EQ(lanes, mask);
  }
  // Three records a lane for a tensor operation: each lane's three are together.
  Warp w(4, 64);
  for (int l = 0; l < 4; ++l) w.regs[l]["%p2"] = l != 1;
  run(w, lines_of_site(in.r.text, kLoad));
  ASSERT_EQ(w.words[2], 9u);
  const int lane_of[3] = {0, 2, 3};
  for (int i = 0; i < 9; ++i) {
    const Record r = w.record(i);
    EXPECT_EQ(r.tid_x, lane_of[i / 3]) << i;
    EXPECT_EQ(r.op, static_cast<uint16_t>(i % 3 == 0 ? TraceOp::tensor_map_lo : i % 3 == 1 ? TraceOp::tensor_map_hi
                                                                                           : TraceOp::tensor_load))
        << i;
  }
  // A capacity of 10 and 21 voters whose values differ: 10 written, 21 counted.
  Warp full(32, 10);
  for (int l = 0; l < 32; ++l) full.regs[l]["%r1"] = l & 1, full.regs[l]["%p3"] = 1, full.active[l] = l % 3 != 0;
  run(full, in.prologue());
  run(full, lines_of_site(in.r.text, kWait));
  EXPECT_EQ(full.words[2], 21u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(full.record(i).op, static_cast<uint16_t>(TraceOp::mbar_try_wait)) << i;
  // Tracing off (no records address): nothing reserved, nothing written.
  Warp off(32, 10);
  off.words[0] = 0;
  for (int l = 0; l < 32; ++l) off.regs[l]["%p2"] = 1;
  std::vector<std::string> lines = lines_of_site(in.r.text, kInit);
  run(off, lines);
  EXPECT_EQ(off.words[2], 0u);
}

// `tmakit check --ctas`: word 3 names the clusters traced, [low, high) by linear %clusterid
// (x + nx * (y + ny * z)); 0 traces all. A warp of a cluster outside writes and reserves nothing.
TEST(InstrumentRecordBytes, OnlyTheClustersOfWord3Record) {
  Instrumented in;
  auto run_in = [&](uint32_t cx, uint32_t cy, uint64_t word3) {
    Warp w(4, 64);
    w.words[3] = word3;
    for (int l = 0; l < 4; ++l) {
      w.regs[l]["%p2"] = 1;
      w.regs[l]["%clusterid.x"] = cx, w.regs[l]["%clusterid.y"] = cy;
      w.regs[l]["%nclusterid.x"] = 3, w.regs[l]["%nclusterid.y"] = 2;
    }
    run(w, lines_of_site(in.r.text, kInit));
    return w.words[2];
  };
  EXPECT_EQ(run_in(2, 1, 0), 1u);                      // no filter: traced (one warp record)
  const uint64_t four_to_six = 4 | uint64_t{6} << 32;  // clusters 4 and 5
  EXPECT_EQ(run_in(1, 1, four_to_six), 1u);            // 1 + 3 * 1 = 4: in
  EXPECT_EQ(run_in(2, 1, four_to_six), 1u);            // 5: in
  EXPECT_EQ(run_in(0, 2, four_to_six), 0u);            // 6: out
  EXPECT_EQ(run_in(0, 1, four_to_six), 0u);            // 3: out
}

// Word 4: each traced cluster takes its indices from its own counter and writes in its own
// region of word 5 records (the k-th traced cluster: records from k × word 5), never past it.
TEST(InstrumentRecordBytes, EachClusterRecordsInItsOwnRegionWithWord4) {
  Instrumented in;
  Warp w(2, 64);
  w.words[3] = 4 | uint64_t{8} << 32;  // --ctas 4-7: cluster 4 is the first traced
  w.words[4] = kCountersAt;
  w.words[5] = 16;
  auto init_in = [&](uint32_t cluster) {
    for (int l = 0; l < 2; ++l) {
      w.regs[l]["%p2"] = 1;
      w.regs[l]["%clusterid.x"] = cluster, w.regs[l]["%nclusterid.x"] = 8, w.regs[l]["%nclusterid.y"] = 1;
    }
    run(w, lines_of_site(in.r.text, kInit));
  };
  init_in(6), init_in(6), init_in(4);
  EXPECT_EQ(w.counters[2], 2u);  // cluster 6, the third traced: two warp records
  EXPECT_EQ(w.counters[0], 1u);  // cluster 4
  EXPECT_EQ(w.words[2], 0u);     // the launch's counter is not used
  EXPECT_EQ(w.record(32).op, static_cast<uint16_t>(TraceOp::mbar_init));  // region 2 starts at 2 × 16
  EXPECT_EQ(w.record(33).op, static_cast<uint16_t>(TraceOp::mbar_init));
  EXPECT_EQ(w.record(0).op, static_cast<uint16_t>(TraceOp::mbar_init));
  EXPECT_EQ(w.record(1).op, 0);
  EXPECT_EQ(w.record(34).op, 0);
  // A full region: counted, not written (nothing lands in the next cluster's region).
  w.counters[1] = 16;
  init_in(5);
  EXPECT_EQ(w.counters[1], 17u);
  EXPECT_EQ(w.record(32 + 2).op, 0);
  for (size_t i = 16; i < 32; ++i) EXPECT_EQ(w.record(i).op, 0) << i;
}

// A wait loop: its first failed poll and its success are recorded, the polls between are not;
// any other record ends the streak, so the next failed poll is recorded again.
TEST(InstrumentRecordBytes, AWaitLoopIsRecordedAtItsFirstFailureAndItsSuccess) {
  Instrumented in;
  Warp w(1, 64);
  w.regs[0]["%p2"] = 1;
  run(w, in.prologue());
  auto poll = [&](bool done) {
    w.regs[0]["%p3"] = done;  // what the try_wait returned (its record is written after it)
    run(w, lines_of_site(in.r.text, kWait));
  };
  poll(false), poll(false), poll(false), poll(true);  // records: failed, succeeded
  poll(false), poll(false);                           // failed
  run(w, lines_of_site(in.r.text, kInit));           // an init: ends the streak
  poll(false), poll(false), poll(true);               // failed, succeeded
  const std::vector<std::pair<TraceOp, bool>> want = {
      {TraceOp::mbar_try_wait, false}, {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, false},
      {TraceOp::mbar_init, false},     {TraceOp::mbar_try_wait, false}, {TraceOp::mbar_try_wait, true}};
  ASSERT_EQ(w.words[2], want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Record r = w.record(i);
    EXPECT_EQ(r.op, static_cast<uint16_t>(want[i].first)) << i;
    EXPECT_EQ((r.flags & instrument::kFlagWaitComplete) != 0, want[i].second) << i;
  }
}

}  // namespace
