// What a site's inserted lines do, run by a small interpreter of the PTX they use, for a warp
// of lanes in lockstep: the trace words, the lane word the prologue sets, the warp's vote
// (activemask, ballot, match), each writing lane's chunk of slots (its atomic on counter 0), the
// record bytes (ids packed with bfi and mov.b64 {lo, hi}, the clock, head last), the records
// dropped past the capacity and the wait streak. The SM's cycle counter is the warp's own:
// one step an instruction, so a record's clock tells where in the warp's run it was read.
// Expectations are written from trace.hpp's contract and docs/check.md's rules, not from the
// emitter: a packing mistake, a clock read on the wrong side of its instruction, two lanes in
// one chunk, a map half away from its operation, a record written past the capacity or a poll
// recorded twice shows here and not only on the GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <tuple>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

using instrument::Record;
using instrument::TraceOp;

// docs/check.md: of a thread's failed polls since its last successful wait, the 16th is recorded.
constexpr uint32_t kFailedPollRecorded = 16;

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
	fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
	ret;
}
)";
constexpr uint32_t kInit = 0, kLoad = 1, kWait = 2, kFence = 3;  // the sites, in module order
constexpr uint64_t kMapAt = 0x5000;  // pmap's address
constexpr uint64_t kRoom = 4 * instrument::kChunkRecords;  // record slots: four chunks

// Where the interpreter puts `__tmakit_trace`, the record slots and the counters.
constexpr uint64_t kTraceAt = 0x7000000, kRecordsAt = 0x100000, kCountersAt = 0x8000000;

constexpr auto kHeader = static_cast<uint16_t>(TraceOp::lane_ids);
constexpr auto kMapLo = static_cast<uint16_t>(TraceOp::tensor_map_lo);
constexpr auto kMapHi = static_cast<uint16_t>(TraceOp::tensor_map_hi);

// A warp's state: the trace's six words, the slots and counters, each lane's registers, the
// warp's cycle counter.
struct Warp {
  uint64_t words[6] = {kRecordsAt, 0, 0, 0, kCountersAt, 0};  // capacity set by the constructor
  std::vector<uint32_t> counters;  // word 4's line: [0] the next chunk, [1] the records dropped
  std::vector<uint8_t> mem;        // the record slots
  std::vector<std::map<std::string, uint64_t>> regs;
  std::vector<bool> active;
  std::vector<std::string> ran;  // each instruction the warp ran (any lane), in order
  // %clock64: one step each instruction the warp issues, so a later read is strictly larger and
  // the lanes reading it in one instruction read the same. It starts just below 2^32, so that a
  // clock cut to 32 bits wraps within a few sites and breaks the order.
  uint64_t clock = 0xFFFFFF00u;
  // The sites' own instructions the warp ran (Instrumented::with_instruction), each with the
  // clock it ran at.
  std::vector<std::pair<std::string, uint64_t>> instructions;

  explicit Warp(int lanes, uint64_t capacity)
      : counters(instrument::kCounterWords, 0), mem(capacity * instrument::kRecordBytes, 0), regs(lanes),
        active(lanes, true) {
    words[1] = capacity;
    for (int l = 0; l < lanes; ++l) regs[l]["%tid.x"] = static_cast<uint64_t>(l), regs[l]["%ctaid.x"] = 7, regs[l]["pmap"] = kMapAt;
  }
  Record record(size_t slot) const {
    Record r;
    std::memcpy(&r, mem.data() + slot * sizeof r, sizeof r);
    return r;
  }
  size_t slots() const { return mem.size() / instrument::kRecordBytes; }
  uint32_t chunks() const { return counters[0]; }
  // A slot's clock as stored (trace.hpp, Order: bytes 8..15 of a record's slot).
  uint64_t clock_at(size_t s) const {
    uint64_t c;
    std::memcpy(&c, mem.data() + s * instrument::kRecordBytes + instrument::kClockAt, 8);
    return c;
  }
  // Whether bytes [from, to) of slot `s` are all zero.
  bool zero(size_t s, size_t from, size_t to) const {
    const uint8_t* at = mem.data() + s * instrument::kRecordBytes;
    return std::all_of(at + from, at + to, [](uint8_t b) { return b == 0; });
  }
  // Records made: those written (a tensor operation three, with its map's halves or without)
  // and those counted past the capacity (counter 1).
  size_t made() const {
    size_t n = counters[instrument::kDroppedCounter];
    for (size_t s = 0; s < slots(); ++s) {
      const Record r = record(s);
      if (r.op == 0 || r.op == kHeader) continue;
      n += (r.flags & instrument::kFlagMapCached) ? 3 : 1;
    }
    return n;
  }
  // A slot's record with the ids of its chunk's header (trace.hpp: the chunk's first slot).
  Record with_ids(size_t slot) const {
    Record r = record(slot), header = record(slot - slot % instrument::kChunkRecords);
    EXPECT_EQ(header.op, kHeader) << "slot " << slot << ": its chunk has no header";
    std::memcpy(&r.ctaid_x, &header.ctaid_x, offsetof(Record, values) - offsetof(Record, ctaid_x));
    return r;
  }
  // The written slots in the host's order (trace.hpp, Order), by a sort written here apart from
  // the host's (in_clock_order): the clusters one after another by %clusterid z, y, x, each
  // cluster's records by clock, ties by slot. A map half takes its operation's clock, the record
  // one (hi) or two (lo) slots after it (check_slots), so the halves stand just before it. (The
  // host puts a record without its clock after its cluster's clocked ones; the interpreter
  // leaves none: check_slots.)
  std::vector<size_t> order() const {
    using Key = std::tuple<uint16_t, uint16_t, uint32_t, uint64_t, size_t>;
    std::vector<Key> keys;
    for (size_t s = 0; s < slots(); ++s) {
      const Record r = record(s);
      if (r.op == 0 || r.op == kHeader) continue;
      const size_t clocked = r.op == kMapLo ? s + 2 : r.op == kMapHi ? s + 1 : s;
      const Record ids = with_ids(s);
      keys.emplace_back(ids.clusterid_z, ids.clusterid_y, ids.clusterid_x, clocked < slots() ? clock_at(clocked) : 0, s);
    }
    std::sort(keys.begin(), keys.end());
    std::vector<size_t> out;
    for (const Key& k : keys) out.push_back(std::get<4>(k));
    return out;
  }
  // The records in that order, with their ids. (A tensor operation without its halves,
  // kFlagMapCached, is left as it is: the tests that make one read its slots.)
  std::vector<Record> in_order() const {
    std::vector<Record> out;
    for (size_t s : order()) out.push_back(with_ids(s));
    return out;
  }
  // Slots written with a record (not a chunk's header).
  size_t slots_written() const {
    size_t n = 0;
    for (size_t s = 0; s < slots(); ++s) n += record(s).op != 0 && record(s).op != kHeader;
    return n;
  }
};

// What trace.hpp asks of the slots, whatever the run. A chunk's first slot, and only it, is its
// header. Each record holds a non-zero clock at kClockAt and leaves the rest of its ids (bytes
// 16..31) to the header. A map half holds no clock (bytes 8..31 zero) and stands just before its
// operation's record, lo then hi, in its chunk and at its site; a tensor operation has its
// halves just before it unless it says they are cached (kFlagMapCached). A lane fills its chunk
// in program order, so the clocks rise strictly along a chunk.
void check_slots(const Warp& w) {
  constexpr size_t C = instrument::kChunkRecords;
  for (size_t chunk = 0; chunk < w.slots(); chunk += C) {
    uint64_t last = 0;
    for (size_t s = chunk; s < chunk + C; ++s) {
      SCOPED_TRACE(testing::Message() << "slot " << s);
      const Record r = w.record(s);
      if (r.op == 0) continue;
      EXPECT_EQ(r.op == kHeader, s == chunk) << "a header at the chunk's first slot, nowhere else";
      if (r.op == kHeader) continue;
      if (r.op == kMapLo || r.op == kMapHi) {
        EXPECT_TRUE(w.zero(s, instrument::kClockAt, offsetof(Record, values))) << "a map half has no clock, no ids";
        const size_t op_at = s + (r.op == kMapLo ? 2 : 1);
        ASSERT_LT(op_at, chunk + C) << "a map half's operation is in its chunk";
        if (r.op == kMapLo) {
          EXPECT_EQ(w.record(s + 1).op, kMapHi);
        }
        const Record op = w.record(op_at);
        EXPECT_EQ(op.site, r.site);
        EXPECT_NE(op.op, kMapLo);
        EXPECT_NE(op.op, kMapHi);
        EXPECT_EQ(op.flags & instrument::kFlagMapCached, 0) << "an operation with halves says none are cached";
        continue;
      }
      const uint64_t clock = w.clock_at(s);
      EXPECT_NE(clock, 0u) << "a record without its clock";
      EXPECT_TRUE(w.zero(s, instrument::kClockAt + 8, offsetof(Record, values))) << "a record leaves its ids to the header";
      if (instrument::is_tensor_operation(static_cast<TraceOp>(r.op)) && !(r.flags & instrument::kFlagMapCached)) {
        ASSERT_GE(s, chunk + 3) << "a tensor operation's halves before it, in its chunk";
        EXPECT_EQ(w.record(s - 2).op, kMapLo);
        EXPECT_EQ(w.record(s - 1).op, kMapHi);
      }
      EXPECT_GT(clock, last) << "a lane's later record with a clock not above its earlier one's";
      last = clock;
    }
  }
}

// The records that stand for `lane`: a warp record for the lanes of its mask (at its site's
// lanes_at), any other for the lane that wrote it.
bool stands_for(const Warp& w, const instrument::Result& r, size_t s, int lane) {
  const Record rec = w.with_ids(s);
  if (!(rec.flags & instrument::kFlagWarp)) return rec.tid_x == lane;
  uint32_t lanes = 0;
  std::memcpy(&lanes, w.mem.data() + s * instrument::kRecordBytes + r.sites.at(rec.site).lanes_at, 4);
  return (lanes >> lane) & 1;
}

// The slots of `lane`'s records, in the host's order.
std::vector<size_t> lane_order(const Warp& w, const instrument::Result& r, int lane) {
  std::vector<size_t> out;
  for (size_t s : w.order())
    if (stands_for(w, r, s, lane)) out.push_back(s);
  return out;
}

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

// Runs `lines` for every active lane of `w`, one instruction at a time for the whole warp. A
// line that does not name the prefix is a site's own instruction (Instrumented::with_instruction):
// it does nothing here but take its step of the clock, which the warp notes.
void run(Warp& w, const std::vector<std::string>& lines) {
  static const std::regex stmt(R"(^\s*(?:@(!?)(\S+)\s+)?([a-z][\w.:]*)\s+(.*);\s*$)");
  static const std::regex label(R"(^\s*(\$\w+):\s*$)");
  const int lanes = static_cast<int>(w.regs.size());
  std::string skip_to;  // a taken bra.uni's label
  // A divergent bra: the lanes that take it wait at its label, the others run the lines between,
  // where no warp-wide instruction may be (it would run without them).
  std::map<std::string, std::vector<int>> parked;
  auto diverged = [&] {
    for (const auto& [at, who] : parked)
      if (!who.empty()) return true;
    return false;
  };
  for (const std::string& line : lines) {
    std::smatch m;
    if (line.find("//") != std::string::npos && line.find("//") < line.find_first_not_of(" \t") + 1) continue;
    if (std::regex_match(line, m, label)) {
      if (m[1] == skip_to) skip_to.clear();
      if (skip_to.empty())
        for (int l : parked[m[1]]) w.active[l] = true;
      parked.erase(m[1]);
      continue;
    }
    if (!skip_to.empty()) continue;
    ++w.clock;
    if (line.find("__tmakit") == std::string::npos) {
      w.instructions.push_back({line.substr(line.find_first_not_of(" \t")), w.clock});
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, stmt)) << line;
    const bool neg = m[1] == "!";
    const std::string guard = m[2], op = m[3];
    const auto ops = operands(m[4]);
    auto val = [&](int lane, const std::string& x) -> uint64_t {
      if (x.rfind("0x", 0) == 0 || x.rfind("0X", 0) == 0) return std::stoull(x.substr(2), nullptr, 16);
      if (std::isdigit(static_cast<unsigned char>(x[0])) || x[0] == '-') return static_cast<uint64_t>(std::stoll(x));
      if (x[0] == '!') return !w.regs[lane].at(x.substr(1));
      if (x == "%lanemask_gt") return ~((2ull << lane) - 1) & 0xFFFFFFFF;
      if (x == "%clock64") return w.clock;
      auto it = w.regs[lane].find(x);
      return it == w.regs[lane].end() ? 0 : it->second;  // special registers not set read 0
    };
    auto runs = [&](int lane) { return w.active[lane] && (guard.empty() || (val(lane, guard) != 0) != neg); };
    for (int l = 0; l < lanes; ++l)
      if (runs(l)) {
        w.ran.push_back(line);  // a predicated-off instruction does nothing
        break;
      }
    uint32_t mask = 0;
    for (int l = 0; l < lanes; ++l) mask |= w.active[l] ? 1u << l : 0;
    if (op == "bra") {
      for (int l = 0; l < lanes; ++l)
        if (runs(l)) parked[ops[0]].push_back(l);
      for (int l : parked[ops[0]]) w.active[l] = false;
      continue;
    }
    // Warp-wide instructions: their result needs every lane's operand first.
    const bool warp_wide = op == "bra.uni" || op.find(".sync") != std::string::npos || op.rfind("activemask", 0) == 0;
    ASSERT_FALSE(warp_wide && diverged()) << "a warp-wide instruction where lanes took a bra: " << line;
    if (op == "bra.uni") {  // uniform: every running lane agrees on the guard
      int taken = -1;
      for (int l = 0; l < lanes; ++l) {
        if (!w.active[l]) continue;
        const int t = runs(l);
        ASSERT_TRUE(taken == -1 || taken == t) << "a bra.uni the lanes disagree on: " << line;
        taken = t;
      }
      if (taken == 1) skip_to = ops[0];
      continue;
    }
    if (op == "bar.warp.sync") continue;  // the lanes run together here already
    if (op == "vote.sync.any.pred") {
      bool any = false;
      for (int l = 0; l < lanes; ++l) any = any || (runs(l) && val(l, ops[1]));
      for (int l = 0; l < lanes; ++l) if (runs(l)) w.regs[l][ops[0]] = any;
      continue;
    }
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
      if (op == "ld.const.u64" || op == "ld.const.u32") {  // a word, or its low half
        auto [base, off] = at(ops[1]);
        ASSERT_EQ(base, "__tmakit_trace") << line;
        ASSERT_EQ(off % 8, 0u) << line;
        r[ops[0]] = op == "ld.const.u64" ? w.words[off / 8] : w.words[off / 8] & 0xFFFFFFFF;
      } else if (op == "ld.local.u64" || op == "st.local.u64") {  // the function's lane words, per lane
        const auto [base, off] = at(op[0] == 'l' ? ops[1] : ops[0]);
        ASSERT_EQ(base, "__tmakit_lane") << line;
        if (op[0] == 'l') r[ops[0]] = r["local+" + std::to_string(off)];
        else r["local+" + std::to_string(off)] = v(1);
      } else if (op.rfind("ld.", 0) == 0 && op.substr(op.size() - 4) == ".b64") {  // a map's bytes: its offset, tagged
        r[ops[0]] = 0x4D41500000000000ull | at(ops[1]).second;
      } else if (op == "mov.u64" && ops[1] == "__tmakit_trace") {
        r[ops[0]] = kTraceAt;
      } else if (op == "atom.global.add.u32") {  // [reg]: counter 0, the next chunk, the one taken with an atomic
        const uint64_t addr = val(l, ops[1].substr(1, ops[1].size() - 2));
        ASSERT_EQ(addr, kCountersAt) << line;
        r[ops[0]] = w.counters[0];
        w.counters[0] += static_cast<uint32_t>(v(2));
      } else if (op == "red.global.add.u32") {  // [reg+4]: counter 1, the records dropped
        const auto [base, off] = at(ops[0]);
        const uint64_t addr = r[base] + off;
        ASSERT_EQ(addr, kCountersAt + 4 * instrument::kDroppedCounter) << line;
        w.counters[instrument::kDroppedCounter] += static_cast<uint32_t>(v(1));
      } else if (op.rfind("setp.", 0) == 0) {
        static const std::regex setp(R"(setp\.(ne|eq|lt|le|ge|gt)(?:\.(and|or))?\.([us])(32|64))");
        std::smatch s;
        ASSERT_TRUE(std::regex_match(op, s, setp)) << line;
        uint64_t a = v(1), b = v(2);
        if (s[4] == "32") a &= 0xFFFFFFFF, b &= 0xFFFFFFFF;
        if (s[3] == "s" && s[4] == "32") {  // signed: as 64-bit two's complement
          a = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(a)));
          b = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(b)));
        }
        const bool sgn = s[3] == "s";
        auto lt = [&](uint64_t x, uint64_t y) { return sgn ? static_cast<int64_t>(x) < static_cast<int64_t>(y) : x < y; };
        bool c = s[1] == "ne" ? a != b : s[1] == "eq" ? a == b : s[1] == "lt" ? lt(a, b) : s[1] == "ge" ? !lt(a, b)
               : s[1] == "gt" ? lt(b, a) : !lt(b, a);
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
      } else if (op == "or.b32") {
        r[ops[0]] = (v(1) | v(2)) & 0xFFFFFFFF;
      } else if (op == "shl.b64") {
        r[ops[0]] = v(1) << v(2);
      } else if (op == "shl.b32") {
        r[ops[0]] = (v(1) << v(2)) & 0xFFFFFFFF;
      } else if (op == "bfe.u32") {  // bfe d, a, pos, len
        r[ops[0]] = (v(1) & 0xFFFFFFFF) >> v(2) & ((1ull << v(3)) - 1);
      } else if (op == "cvt.u32.u16") {
        r[ops[0]] = v(1) & 0xFFFF;
      } else if (op == "activemask.b32") {
        r[ops[0]] = mask;
      } else if (op == "and.b32") {
        r[ops[0]] = v(1) & v(2) & 0xFFFFFFFF;
      } else if (op == "popc.b32") {
        r[ops[0]] = static_cast<uint64_t>(__builtin_popcount(static_cast<uint32_t>(v(1))));
      } else if (op == "bfind.u32") {  // the highest set bit's position, 0xFFFFFFFF for none
        uint32_t x = static_cast<uint32_t>(v(1));
        r[ops[0]] = x ? static_cast<uint64_t>(31 - __builtin_clz(x)) : 0xFFFFFFFFu;
      } else if (op == "mul.wide.u32") {
        r[ops[0]] = (v(1) & 0xFFFFFFFF) * (v(2) & 0xFFFFFFFF);
      } else if (op == "add.u64" || op == "add.s64") {
        r[ops[0]] = v(1) + v(2);
      } else if (op == "mad.lo.u64") {
        r[ops[0]] = v(1) * v(2) + v(3);
      } else if (op == "mul.lo.u64") {
        r[ops[0]] = v(1) * v(2);
      } else if (op == "sub.u64") {
        r[ops[0]] = v(1) - v(2);
      } else if (op == "min.u64") {
        r[ops[0]] = std::min(v(1), v(2));
      } else if (op == "min.u32") {
        r[ops[0]] = std::min(v(1) & 0xFFFFFFFF, v(2) & 0xFFFFFFFF);
      } else if (op == "mul.lo.u32") {
        r[ops[0]] = (v(1) * v(2)) & 0xFFFFFFFF;
      } else if (op == "add.u32") {
        r[ops[0]] = (v(1) + v(2)) & 0xFFFFFFFF;
      } else if (op == "mad.wide.u32") {
        r[ops[0]] = (v(1) & 0xFFFFFFFF) * (v(2) & 0xFFFFFFFF) + v(3);
      } else if (op == "sub.u32") {
        r[ops[0]] = (v(1) - v(2)) & 0xFFFFFFFF;
      } else if (op == "mad.lo.u32") {
        r[ops[0]] = (v(1) * v(2) + v(3)) & 0xFFFFFFFF;
      } else if (op == "cvt.u32.u64") {
        r[ops[0]] = v(1) & 0xFFFFFFFF;
      } else if (op == "cvt.u64.u32") {
        r[ops[0]] = v(1) & 0xFFFFFFFF;
      } else if (op == "selp.b64" || op == "selp.u64" || op == "selp.b32" || op == "selp.u32") {
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
        ASSERT_GE(r[base] + off, w.words[0]) << "a store before the slots: " << line;
        const uint64_t addr = r[base] + off - w.words[0];
        ASSERT_LT(addr, w.mem.size()) << "a store past the buffer: " << line;
        // The head (site, op, flags) is a slot's last store: a record whose op is set is whole.
        ASSERT_EQ(w.record(addr / instrument::kRecordBytes).op, 0) << "a store into a slot whose head is written: " << line;
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
          const uint64_t to = addr + k * 8;
          ASSERT_LE(to + bytes, w.mem.size()) << "a store past the buffer: " << line;
          std::memcpy(w.mem.data() + to, &vals[k], bytes);
        }
      } else {
        FAIL() << "not interpreted: " << line;
      }
    }
  }
}

struct Instrumented {
  instrument::Result r;
  explicit Instrumented(const char* module = kModule, bool plain_copy = false)
      : r(instrument::instrument_module(module, "k.ptx", instrument::OpSet::all, plain_copy)) {}
  std::vector<std::string> prologue() const {  // the lines after the entry's `{` that name the prefix
    std::vector<std::string> out;
    std::istringstream in(r.text);
    std::string l;
    bool body = false;
    while (std::getline(in, l)) {
      if (l == "{") body = true;
      else if (body && l.find("__tmakit site") != std::string::npos) break;
      else if (body && l.find("__tmakit") != std::string::npos && l.find(".reg") == std::string::npos &&
               l.find("\t.local ") == std::string::npos)
        out.push_back(l);
    }
    return out;
  }
  // Site `id`'s lines (lines_of_site) with its own instruction where it stands among them: after
  // them where the record is written before it, between them where the record follows it.
  std::vector<std::string> with_instruction(uint32_t id) const {
    std::vector<std::string> out;
    std::istringstream in(r.text);
    bool on = false, instruction = false;
    for (std::string l; std::getline(in, l);) {
      if (l.find("// __tmakit site ") != std::string::npos)
        on = l.find("// __tmakit site " + std::to_string(id) + ":") != std::string::npos;
      if (l.find("ret; // __tmakit") != std::string::npos) on = false;  // the plain copy follows
      if (!on) continue;
      if (l.find("__tmakit") != std::string::npos) out.push_back(l);
      else if (!instruction) out.push_back(l), instruction = true;
    }
    EXPECT_TRUE(instruction) << "site " << id << ": no instruction";
    return out;
  }
};


TEST(InstrumentRecordBytes, IdsAndHeadLandInTheirFields) {
  Instrumented in;
  ASSERT_EQ(in.r.status, 0) << (in.r.diags.empty() ? "" : format(in.r.diags[0]));
  ASSERT_EQ(in.r.sites.size(), 4u);
  Warp w(1, kRoom);
  w.regs[0] = {{"%ctaid.x", 0x01020304}, {"%ctaid.y", 0x1112}, {"%ctaid.z", 0x2122}, {"%tid.x", 0x3132},
               {"%tid.y", 0x4142}, {"%tid.z", 0x5152}, {"%cluster_ctarank", 0x6162}, {"%clusterid.x", 0x71727374},
               {"%clusterid.y", 0x8182}, {"%clusterid.z", 0x9192}, {"%p2", 1}, {"pmap", kMapAt}};
  run(w, in.prologue());
  run(w, lines_of_site(in.r.text, kInit));
  // The warp stalls before the load long enough for the clock to pass 2^32 in its record.
  ASSERT_LT(w.clock, (uint64_t{1} << 32) - 8);
  w.clock = (uint64_t{1} << 32) - 8;
  run(w, lines_of_site(in.r.text, kLoad));
  Record want{};
  want.ctaid_x = 0x01020304, want.ctaid_y = 0x1112, want.ctaid_z = 0x2122;
  want.tid_x = 0x3132, want.tid_y = 0x4142, want.tid_z = 0x5152, want.cluster_ctarank = 0x6162;
  want.clusterid_x = 0x71727374, want.clusterid_y = 0x8182, want.clusterid_z = 0x9192;
  // mbarrier.init, then the tensor load's map halves and its own record: four records, one
  // chunk, whose first slot is its header: the lane's ids, which the records leave zero.
  const std::pair<uint32_t, TraceOp> heads[4] = {{kInit, TraceOp::mbar_init}, {kLoad, TraceOp::tensor_map_lo},
                                                 {kLoad, TraceOp::tensor_map_hi}, {kLoad, TraceOp::tensor_load}};
  EXPECT_EQ(w.made(), 4u);
  EXPECT_EQ(w.chunks(), 1u);
  EXPECT_EQ(w.counters[instrument::kDroppedCounter], 0u);
  const Record header = w.record(0);
  want.site = kInit;
  want.op = kHeader;
  EXPECT_EQ(std::memcmp(&header, &want, 32), 0) << "the chunk's header";
  check_slots(w);
  const std::vector<Record> got_all = w.in_order();
  ASSERT_EQ(got_all.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    want.site = heads[k].first;
    want.op = static_cast<uint16_t>(heads[k].second);
    // The init's values are the same in every recording lane (here one): a warp record. A
    // tensor operation (three records a lane) never is.
    want.flags = heads[k].second == TraceOp::mbar_init ? instrument::kFlagWarp : 0;
    const Record& got = got_all[k];
    const Record slot = w.with_ids(k + 1);
    EXPECT_EQ(std::memcmp(&slot, &got, sizeof got), 0) << "a lane fills its chunk in program order";
    // A record leaves its ids to the header, but for its clock (bytes 8..15); a map half has none.
    EXPECT_TRUE(w.zero(k + 1, 16, 32)) << "a record leaves its ids to the header";
    EXPECT_EQ(w.clock_at(k + 1) != 0, k == 0 || k == 3);
    // Bytes 0..31 (head and ids) exactly; the values are the table's business (other tests).
    EXPECT_EQ(std::memcmp(&got, &want, 32), 0) << "site " << got.site << " op " << got.op << " ctaid " << std::hex
                                                << got.ctaid_x << " " << got.ctaid_y << " " << got.ctaid_z << " tid "
                                                << got.tid_x << " " << got.tid_y << " " << got.tid_z << " cluster "
                                                << got.clusterid_x << " " << got.clusterid_y << " " << got.clusterid_z;
  }
  // The clock is 64 bits, whole.
  EXPECT_LT(w.clock_at(1), uint64_t{1} << 32);
  EXPECT_GT(w.clock_at(4), uint64_t{1} << 32);
  // The map's halves: bytes 0..63 and 64..127 of the map (read here as their offsets, tagged).
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < 8; ++k) {
      uint64_t v;
      std::memcpy(&v, got_all[1 + half].values + 8 * k, 8);
      EXPECT_EQ(v, 0x4D41500000000000ull | (64 * half + 8 * k)) << half << " " << k;
    }
}

// A record's clock is read where the record is made (trace.hpp, Order): before the instruction
// where the record is written before it (a barrier's, so that every participant's record is
// below what follows the barrier), after it where the record follows it (a wait's, whose
// outcome it holds, and an arrive's, which holds the state it returned), so that it is above
// whatever the instruction waited for. Each site reads it once, into the operation's record, not
// into its map's halves. The site table says which side each record is on.
TEST(InstrumentRecordBytes, ARecordReadsTheClockOnItsSideOfTheInstruction) {
  const std::string barriers = small_kernel(
      "\t.reg .b64 %rd<4>;\n\t@%p2 mbarrier.init.shared::cta.b64 [bar], 32;\n\tbarrier.cluster.arrive;\n"
      "\tbarrier.cluster.wait;\n\tmbarrier.arrive.shared::cta.b64 %rd2, [bar];\n\tret;\n");
  struct Case {
    std::string module;
    std::vector<std::pair<TraceOp, bool>> sites;  // each site's op, and whether its record follows it
  };
  const Case cases[] = {
      {kModule,
       {{TraceOp::mbar_init, false}, {TraceOp::tensor_load, false}, {TraceOp::mbar_try_wait, true},
        {TraceOp::fence_proxy_other, false}}},
      {barriers,
       {{TraceOp::mbar_init, false}, {TraceOp::cluster_arrive, false}, {TraceOp::cluster_wait, false},
        {TraceOp::mbar_arrive, true}}},
  };
  for (const Case& c : cases) {
    Instrumented in(c.module.c_str());
    ASSERT_EQ(in.r.status, 0) << (in.r.diags.empty() ? "" : format(in.r.diags[0]));
    ASSERT_EQ(in.r.sites.size(), c.sites.size());
    Warp w(2, kRoom);
    for (int l = 0; l < 2; ++l) w.regs[l]["%p2"] = 1, w.regs[l]["%p3"] = 1;
    run(w, in.prologue());
    w.ran.clear();
    for (uint32_t id = 0; id < c.sites.size(); ++id) run(w, in.with_instruction(id));
    ASSERT_EQ(w.instructions.size(), c.sites.size());
    const auto clock_reads =
        std::count_if(w.ran.begin(), w.ran.end(), [](const std::string& l) { return l.find("%clock64") != std::string::npos; });
    EXPECT_EQ(clock_reads, static_cast<long>(c.sites.size())) << "one clock read a site";
    for (uint32_t id = 0; id < c.sites.size(); ++id) {
      const auto [op, after] = c.sites[id];
      SCOPED_TRACE(w.instructions[id].first);
      EXPECT_EQ(in.r.sites[id].op, op);
      EXPECT_EQ(in.r.sites[id].after, after);
      size_t records = 0;
      for (size_t s = 0; s < w.slots(); ++s) {
        const Record r = w.record(s);
        if (r.site != id || r.op != static_cast<uint16_t>(op)) continue;
        ++records;
        if (after) EXPECT_GT(w.clock_at(s), w.instructions[id].second) << "slot " << s << ": read before the instruction";
        else EXPECT_LT(w.clock_at(s), w.instructions[id].second) << "slot " << s << ": read after the instruction";
      }
      // A warp record where the lanes agree; a tensor operation's record a lane.
      EXPECT_EQ(records, op == TraceOp::tensor_load ? 2u : 1u);
    }
    check_slots(w);
  }
}

// A lane's chunk holds its header and kChunkRecords - 1 records: the record after them takes a
// new chunk, and so does a tensor operation (three slots) that would not fit in what is left.
// The order goes on from one chunk into the next.
TEST(InstrumentRecordBytes, ALaneTakesANewChunkWhenItsOwnIsFull) {
  Instrumented in;
  constexpr uint32_t C = instrument::kChunkRecords;
  Warp w(1, 5 * C);
  w.regs[0]["%p2"] = 1;
  w.counters[0] = 2;  // chunks 0 and 1 are other lanes'
  run(w, in.prologue());
  for (uint32_t i = 0; i < C - 1; ++i) run(w, lines_of_site(in.r.text, kInit));  // a full chunk
  EXPECT_EQ(w.chunks(), 3u);
  run(w, lines_of_site(in.r.text, kInit));  // the next record: a new chunk
  EXPECT_EQ(w.chunks(), 4u);
  EXPECT_EQ(w.record(3 * C).op, kHeader);
  EXPECT_EQ(w.record(3 * C + 1).op, static_cast<uint16_t>(TraceOp::mbar_init));
  for (uint32_t i = 0; i < C - 3; ++i) run(w, lines_of_site(in.r.text, kInit));  // one slot left
  run(w, lines_of_site(in.r.text, kLoad));  // a new chunk for its three
  run(w, lines_of_site(in.r.text, kInit));
  EXPECT_EQ(w.chunks(), 5u);
  EXPECT_EQ(w.slots_written(), 2 * (C - 1) - 1 + 4);
  for (uint32_t s = 0; s < 2 * C; ++s) EXPECT_EQ(w.record(s).op, 0) << s;
  EXPECT_EQ(w.record(4 * C - 1).op, 0) << "the slot the tensor operation did not fit in";
  EXPECT_EQ(w.record(4 * C).op, kHeader);
  EXPECT_EQ(w.record(4 * C + 1).op, kMapLo);
  EXPECT_EQ(w.record(4 * C + 4).op, static_cast<uint16_t>(TraceOp::mbar_init));
  check_slots(w);
  EXPECT_LT(w.clock_at(4 * C - 2), w.clock_at(4 * C + 3)) << "the new chunk's records after the old one's";
  const std::vector<size_t> order = w.order();
  ASSERT_EQ(order.size(), 2 * (C - 1) - 1 + 4);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "one lane: its slots in the order it wrote them";
  EXPECT_EQ(w.record(order[2 * (C - 1) - 1]).op, kMapLo);
  EXPECT_EQ(w.record(order[2 * (C - 1) + 1]).op, static_cast<uint16_t>(TraceOp::tensor_load));
  EXPECT_EQ(w.record(order.back()).op, static_cast<uint16_t>(TraceOp::mbar_init));
}

// Each recording lane writes in a chunk of its own, taken where the chunk counter stood (in lane
// order here, where the lanes' atomics land in that order); lanes whose guard is false write
// nothing; past the capacity nothing is written but counter 1 still counts every record. Where
// every recording lane's values agree, one warp record stands for them all: the highest lane's
// ids, kFlagWarp, the lanes' mask at the site's lanes_at. Records of one instruction read one
// clock, and the order puts them by slot.
TEST(InstrumentRecordBytes, EachRecordingLaneWritesInAChunkOfItsOwn) {
  Instrumented in;
  constexpr uint32_t C = instrument::kChunkRecords;
  ASSERT_GT(in.r.sites[kWait].lanes_at, 0u);
  for (bool same : {false, true})
    for (uint32_t start : {0u, 5u}) {
      SCOPED_TRACE(testing::Message() << "start " << start << (same ? ", same parity" : ", parity by lane"));
      Warp w(32, 40 * C);
      w.counters[0] = start;  // chunks other lanes took
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
      ASSERT_EQ(w.made(), n);
      EXPECT_EQ(w.chunks(), start + n) << "a chunk a writing lane";
      check_slots(w);
      const std::vector<size_t> order = w.order();
      ASSERT_EQ(order.size(), n);
      for (size_t i = 0; i < n; ++i) {
        // Each writing lane's own chunk, the first slot after its header.
        EXPECT_EQ(order[i], (start + i) * C + 1) << i;
        const Record r = w.with_ids(order[i]);
        EXPECT_EQ(r.op, static_cast<uint16_t>(TraceOp::mbar_try_wait)) << i;
        EXPECT_EQ(r.tid_x, same ? voters.back() : voters[i]) << i;  // a warp record: its highest voter's
        EXPECT_EQ((r.flags & instrument::kFlagWarp) != 0, same) << i;
        EXPECT_NE(r.flags & instrument::kFlagWaitComplete, 0) << i;
        EXPECT_EQ(w.clock_at(order[i]), w.clock_at(order[0])) << "read in one instruction";
        uint32_t lanes = 0;
        std::memcpy(&lanes, reinterpret_cast<const uint8_t*>(&r) + in.r.sites[kWait].lanes_at, 4);
        EXPECT_EQ(lanes, same ? mask : 0u) << i;
      }
      EXPECT_EQ(w.slots_written(), n);
    }
  // A poll that succeeded in some lanes and failed, for the recorded time, in others: the outcome
  // differs, one record a lane.
  {
    Warp w(4, kRoom);
    for (int l = 0; l < 4; ++l) w.regs[l]["%r1"] = 0, w.regs[l]["%p3"] = 0;
    run(w, in.prologue());
    for (uint32_t k = 1; k < kFailedPollRecorded; ++k) run(w, lines_of_site(in.r.text, kWait));
    ASSERT_EQ(w.made(), 0u) << "a failed poll before the recorded one";
    for (int l = 0; l < 4; ++l) w.regs[l]["%p3"] = l < 2;
    run(w, lines_of_site(in.r.text, kWait));
    ASSERT_EQ(w.made(), 4u);
    check_slots(w);
    const std::vector<Record> order = w.in_order();
    ASSERT_EQ(order.size(), 4u);
    for (int l = 0; l < 4; ++l) EXPECT_EQ(order[l].flags, l < 2 ? instrument::kFlagWaitComplete : 0) << l;
  }
  // The init's values are the same in every lane whose guard holds: one warp record for them.
  {
    Warp w(32, kRoom);
    uint32_t mask = 0;
    for (int l = 0; l < 32; ++l) w.regs[l]["%p2"] = l % 3 != 0, mask |= l % 3 ? 1u << l : 0;
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kInit));
    ASSERT_EQ(w.made(), 1u);
    ASSERT_EQ(w.in_order().size(), 1u);
    EXPECT_EQ(w.in_order()[0].tid_x, 31);  // written by the highest voter
    uint32_t lanes = 0;
    std::memcpy(&lanes, w.mem.data() + instrument::kRecordBytes + in.r.sites[kInit].lanes_at, 4);
    EXPECT_EQ(lanes, mask);
  }
  // Three records a lane for a tensor operation: each lane's three are together, the halves
  // before the operation.
  {
    Warp w(4, kRoom);
    for (int l = 0; l < 4; ++l) w.regs[l]["%p2"] = l != 1;
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kLoad));
    ASSERT_EQ(w.made(), 9u);
    check_slots(w);
    const std::vector<Record> order = w.in_order();
    ASSERT_EQ(order.size(), 9u);
    const int lane_of[3] = {0, 2, 3};
    for (int i = 0; i < 9; ++i) {
      const Record& r = order[i];
      EXPECT_EQ(r.tid_x, lane_of[i / 3]) << i;
      EXPECT_EQ(r.op, static_cast<uint16_t>(i % 3 == 0 ? TraceOp::tensor_map_lo : i % 3 == 1 ? TraceOp::tensor_map_hi
                                                                                             : TraceOp::tensor_load))
          << i;
    }
  }
  // A capacity of two chunks and 21 voters whose values differ: 2 written, 21 counted.
  Warp full(32, 2 * C);
  for (int l = 0; l < 32; ++l) full.regs[l]["%r1"] = l & 1, full.regs[l]["%p3"] = 1, full.active[l] = l % 3 != 0;
  run(full, in.prologue());
  run(full, lines_of_site(in.r.text, kWait));
  EXPECT_EQ(full.made(), 21u);
  EXPECT_EQ(full.chunks(), 21u);
  EXPECT_EQ(full.slots_written(), 2u);
  EXPECT_EQ(full.in_order().size(), 2u);
  // Twice more: the 19 lanes past the capacity take no chunk again, write nothing and are
  // counted each time; the two with chunks below it go on in them.
  for (int again = 0; again < 2; ++again) run(full, lines_of_site(in.r.text, kWait));
  EXPECT_EQ(full.made(), 63u);
  EXPECT_EQ(full.counters[instrument::kDroppedCounter], 57u);
  EXPECT_EQ(full.chunks(), 21u);
  EXPECT_EQ(full.slots_written(), 6u);
  check_slots(full);
  EXPECT_EQ(full.in_order().size(), 6u);
  // Tracing off (no records address): nothing written, no chunk taken, nothing counted.
  Warp off(32, kRoom);
  off.words[0] = 0;
  for (int l = 0; l < 32; ++l) off.regs[l]["%p2"] = 1;
  run(off, in.prologue());
  run(off, lines_of_site(in.r.text, kInit));
  EXPECT_EQ(off.made(), 0u);
  EXPECT_EQ(off.chunks(), 0u);
}

// A warp record stands for each of its voters, so the order puts it after each voter's earlier
// records and before its later ones, whichever lane writes it. Lane 1 records alone, lane 0
// alone, both (one warp record, written by lane 1, the highest voter), lane 0 twice alone, then
// lane 1 alone.
TEST(InstrumentRecordBytes, AWarpRecordStandsBetweenEachVotersEarlierAndLaterRecords) {
  Instrumented in;
  Warp w(2, kRoom);
  run(w, in.prologue());
  auto record_in = [&](bool lane1, bool lane0) {
    w.regs[0]["%p2"] = lane0, w.regs[1]["%p2"] = lane1;
    run(w, lines_of_site(in.r.text, kInit));
  };
  // Slots 1.. are lane 1's (its chunk is chunk 0, taken first), C + 1.. lane 0's.
  record_in(true, false);  // lane 1's first: slot 1
  record_in(false, true);  // lane 0's first: slot C + 1
  record_in(true, true);   // the warp record: lane 1 writes it, at slot 2
  record_in(false, true);  // lane 0's next: slot C + 2
  record_in(false, true);  // lane 0's one after: slot C + 3
  record_in(true, false);  // lane 1's next: slot 3
  constexpr size_t C = instrument::kChunkRecords;
  ASSERT_EQ(w.made(), 6u);
  uint32_t lanes = 0;
  std::memcpy(&lanes, w.mem.data() + 2 * instrument::kRecordBytes + in.r.sites[kInit].lanes_at, 4);
  ASSERT_EQ(lanes, 3u) << "slot 2 is the warp record of both lanes";
  check_slots(w);
  EXPECT_EQ(lane_order(w, in.r, 1), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(lane_order(w, in.r, 0), (std::vector<size_t>{C + 1, 2, C + 2, C + 3}));
}

// The clock order keeps each lane's program order, whatever mix of records it makes: on its own
// (alone, or lanes whose values differ), in a warp record standing for several lanes (written by
// another lane), after a wait, a tensor operation with its map's halves or without. Random runs
// of inits, waits and loads by random subsets of a warp's four lanes (the others diverged); for
// each lane, the records that stand for it, sorted as the host sorts them, must be the ones it
// made, in the order it made them, their clocks rising.
TEST(InstrumentRecordBytes, ClocksKeepEachLanesProgramOrderWhateverTheMixOfRecords) {
  Instrumented in;
  std::mt19937 rng(20261127);
  constexpr int kLanes = 4;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    Warp w(kLanes, 64 * instrument::kChunkRecords);
    for (int l = 0; l < kLanes; ++l) w.regs[l]["%p2"] = 1, w.regs[l]["%p3"] = 1, w.regs[l]["%r1"] = 0;
    run(w, in.prologue());
    std::vector<std::vector<size_t>> slots_of(kLanes);  // each lane's records, in its program order
    std::vector<bool> written(w.slots(), false);
    const int steps = 5 + static_cast<int>(rng() % 30);
    for (int step = 0; step < steps; ++step) {
      uint32_t who = 0;
      while (who == 0) who = rng() % (1u << kLanes);
      const uint32_t site = std::array{kInit, kInit, kWait, kLoad}[rng() % 4];
      const bool differ = rng() % 4 == 0;  // each lane its own parity: one record a lane
      for (int l = 0; l < kLanes; ++l) {
        w.active[l] = (who >> l) & 1, w.regs[l]["%r1"] = differ ? l & 1 : 0;
        if (rng() % 3 == 0) w.regs[l]["pmap"] = kMapAt + 128 * (rng() % 2);  // another map: its halves again
      }
      run(w, lines_of_site(in.r.text, site));
      // The new records, in slot order: a lane's own are in its program order.
      for (size_t s = 0; s < w.slots(); ++s) {
        const Record r = w.record(s);
        if (written[s] || r.op == 0 || r.op == kHeader) continue;
        written[s] = true;
        for (int l = 0; l < kLanes; ++l)
          if (stands_for(w, in.r, s, l)) slots_of[l].push_back(s);
      }
    }
    check_slots(w);
    if (testing::Test::HasFailure()) return;
    for (int l = 0; l < kLanes; ++l) {
      ASSERT_EQ(lane_order(w, in.r, l), slots_of[l]) << "lane " << l;
      uint64_t last = 0;
      for (size_t s : slots_of[l]) {
        const uint16_t op = w.record(s).op;
        if (op == kMapLo || op == kMapHi) continue;
        ASSERT_GT(w.clock_at(s), last) << "lane " << l << ": slot " << s;
        last = w.clock_at(s);
      }
    }
  }
}

// Where no lane of the warp records, the record's work is branched around: a failed poll not
// recorded, a false guard and tracing off read no special register (%clusterid, %tid, ...: each
// read is slow) and no clock and take no chunk, and the poll is still counted.
TEST(InstrumentRecordBytes, ASiteWhereNoLaneRecordsSkipsTheRecord) {
  Instrumented in;
  auto specials = [](const Warp& w) {  // mov.u32 %__tmakit_rN, %clusterid.x; and the like, and the clock
    static const std::regex special(
        R"(mov\.u(32|64) %__tmakit_[rd]\d+, %(clusterid|nclusterid|ctaid|tid|cluster_ctarank|clock64)\.?[xyz]?;)");
    return std::count_if(w.ran.begin(), w.ran.end(), [](const std::string& l) { return std::regex_search(l, special); });
  };
  Warp w(32, kRoom);
  for (int l = 0; l < 32; ++l) w.regs[l]["%p2"] = 1, w.regs[l]["%r1"] = 0, w.regs[l]["%p3"] = 0;
  run(w, in.prologue());
  w.ran.clear();
  run(w, lines_of_site(in.r.text, kWait));  // a failed poll: counted, not recorded
  EXPECT_EQ(w.made(), 0u);
  EXPECT_EQ(w.chunks(), 0u);
  EXPECT_EQ(specials(w), 0) << "a special register read where nothing is recorded";
  // The records address and guard, the guard kept for the count, the wait's operands taken
  // before it runs, the count's check, the vote, the branch and the count's update: at most 11
  // (the recorded success below runs more than four times as many).
  EXPECT_LE(w.ran.size(), 11u) << "a site that records nothing ran " << w.ran.size() << " instructions";
  for (uint32_t k = 2; k < kFailedPollRecorded; ++k) run(w, lines_of_site(in.r.text, kWait));
  EXPECT_EQ(w.made(), 0u);
  run(w, lines_of_site(in.r.text, kWait));  // the 16th: recorded
  EXPECT_EQ(w.made(), 1u);
  EXPECT_GT(specials(w), 0);
  w.ran.clear();
  run(w, lines_of_site(in.r.text, kWait));  // the 17th: not
  EXPECT_EQ(w.made(), 1u);
  for (int l = 0; l < 32; ++l) w.regs[l]["%p3"] = 1;
  w.ran.clear();
  run(w, lines_of_site(in.r.text, kWait));  // the success: recorded, the count starts again
  EXPECT_EQ(w.made(), 2u);
  EXPECT_GT(w.ran.size(), 4 * 10u);
  for (int l = 0; l < 32; ++l) w.regs[l]["%p2"] = 0;
  w.ran.clear();
  run(w, lines_of_site(in.r.text, kInit));  // a false guard: nothing recorded, nothing read
  EXPECT_EQ(w.made(), 2u);
  EXPECT_EQ(specials(w), 0);
  check_slots(w);
}

// A warp record stands for lanes whose values all agree. Each value the record holds is
// compared: an address by its base register (the offset is the instruction's), a 16-bit
// register widened, 32-bit values two to a comparison, 64-bit ones alone; a lone voter's record
// is a warp record without comparing anything. A lane that differs in any one value, whichever
// place it has in the pairs, makes the site a record a lane.
TEST(InstrumentRecordBytes, AWarpRecordComparesEveryValueItHolds) {
  static const char* kArrives = R"(
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k()
{
	.reg .b16 %rs<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%r5+16], %r6;
	mbarrier.arrive.shared::cta.b64 %rd2, [%rd1+8], 2;
	ret;
}
)";
  Instrumented in(kArrives);
  ASSERT_EQ(in.r.sites.size(), 2u);
  ASSERT_GT(in.r.sites[0].lanes_at, 0u);
  ASSERT_GT(in.r.sites[1].lanes_at, 0u);
  struct Case {
    const char* what;
    int site;
    const char* reg;  // the register lane 3 holds apart, or nullptr: all agree
    size_t records;
  };
  const Case cases[] = {
      {"all agree (32-bit base and count)", 0, nullptr, 1}, {"the 32-bit base differs", 0, "%r5", 4},
      {"the count differs", 0, "%r6", 4},                    {"all agree (64-bit base)", 1, nullptr, 1},
      {"the 64-bit base differs", 1, "%rd1", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Warp w(4, kRoom);
    for (int l = 0; l < 4; ++l) w.regs[l]["%r5"] = 0x400, w.regs[l]["%r6"] = 256, w.regs[l]["%rd1"] = 0x800;
    if (c.reg) w.regs[3][c.reg] += 64;
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, c.site));
    ASSERT_EQ(w.made(), c.records);
    const std::vector<Record> order = w.in_order();
    ASSERT_EQ(order.size(), c.records);
    for (size_t i = 0; i < c.records; ++i) EXPECT_EQ((order[i].flags & instrument::kFlagWarp) != 0, c.records == 1) << i;
  }
  // A lone voter (the other lanes elsewhere): a warp record of lane 2 alone.
  Warp one(4, kRoom);
  for (int l = 0; l < 4; ++l) one.regs[l]["%r5"] = 0x400 + 64 * l, one.regs[l]["%r6"] = 256, one.active[l] = l == 2;
  run(one, in.prologue());
  one.ran.clear();
  run(one, lines_of_site(in.r.text, 0));
  ASSERT_EQ(one.made(), 1u);
  const Record r = one.in_order().at(0);
  EXPECT_NE(r.flags & instrument::kFlagWarp, 0);
  EXPECT_EQ(r.tid_x, 2);
  uint32_t lanes = 0;
  std::memcpy(&lanes, reinterpret_cast<const uint8_t*>(&r) + in.r.sites[0].lanes_at, 4);
  EXPECT_EQ(lanes, 1u << 2);
  EXPECT_EQ(std::count_if(one.ran.begin(), one.ran.end(), [](const std::string& l) { return l.find("match.") != std::string::npos; }),
            0) << "a lone voter compares nothing";
}


// `tmakit check --ctas`: word 3 names the clusters traced, [low, high) by linear %clusterid
// (x + nx * (y + ny * z)); 0 traces all; with no counters address (word 4) tracing is off. The
// prologue says which in the lane word kLaneTraced (1: traced). A warp of a cluster outside
// writes nothing, takes no chunk and, where the buffer is full, is not counted among the records
// dropped; a traced one's are. The counters are one line: counter 0 the next chunk, 1 the records
// dropped, nothing else (trace.hpp).
TEST(InstrumentRecordBytes, OnlyTheClustersOfWord3Record) {
  Instrumented in;
  auto run_in = [&](uint32_t cx, uint32_t cy, uint64_t word3, bool full, uint64_t counters_at = kCountersAt) {
    Warp w(4, kRoom);
    w.words[3] = word3;
    w.words[4] = counters_at;
    if (full) w.counters[0] = kRoom / instrument::kChunkRecords;  // every chunk taken
    for (int l = 0; l < 4; ++l) {
      w.regs[l]["%p2"] = 1;
      w.regs[l]["%clusterid.x"] = cx, w.regs[l]["%clusterid.y"] = cy;
      w.regs[l]["%nclusterid.x"] = 3, w.regs[l]["%nclusterid.y"] = 2;
    }
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kInit));  // one warp record
    run(w, lines_of_site(in.r.text, kLoad));  // three records a lane
    std::vector<uint64_t> traced;
    for (int l = 0; l < 4; ++l) traced.push_back(w.regs[l]["local+0"]);
    EXPECT_TRUE(std::all_of(w.counters.begin() + 2, w.counters.end(), [](uint32_t c) { return c == 0; }))
        << "a counter past the two";
    check_slots(w);
    return std::tuple{traced, w.made(), w.slots_written(), w.counters[instrument::kDroppedCounter],
                      w.counters[0] - (full ? kRoom / instrument::kChunkRecords : 0)};
  };
  const std::vector<uint64_t> in_word(4, 1), out_word(4, 0);
  constexpr size_t kMade = 1 + 3 * 4;
  // The lanes' kLaneTraced words, the records made, written and dropped, the chunks taken.
  using Got = std::tuple<std::vector<uint64_t>, size_t, size_t, uint32_t, uint64_t>;
  EXPECT_EQ(run_in(2, 1, 0, false), (Got{in_word, kMade, kMade, 0, 4})) << "no filter: traced";
  const uint64_t four_to_six = 4 | uint64_t{6} << 32;  // clusters 4 and 5
  EXPECT_EQ(run_in(1, 1, four_to_six, false), (Got{in_word, kMade, kMade, 0, 4}));  // 1 + 3 * 1 = 4: in
  EXPECT_EQ(run_in(2, 1, four_to_six, false), (Got{in_word, kMade, kMade, 0, 4}));  // 5: in
  EXPECT_EQ(run_in(0, 2, four_to_six, false), (Got{out_word, 0, 0, 0, 0}));         // 6: out
  EXPECT_EQ(run_in(0, 1, four_to_six, false), (Got{out_word, 0, 0, 0, 0}));         // 3: out
  // The buffer full: a traced cluster's records are counted (each lane took a chunk past the
  // capacity once), an untraced one's are not.
  EXPECT_EQ(run_in(2, 1, four_to_six, true), (Got{in_word, kMade, 0, kMade, 4}));
  EXPECT_EQ(run_in(0, 1, four_to_six, true), (Got{out_word, 0, 0, 0, 0}));
  EXPECT_EQ(run_in(2, 1, 0, false, 0), (Got{out_word, 0, 0, 0, 0})) << "no counters address: tracing off";
}

// With the plain copy (tmakit check --launches, --ctas), a call that records nothing runs the
// function as compiled: its prologue branches to the copy, which holds the original body's
// instructions in their order with its labels renamed and no site of its own, where the records
// address is 0 (tracing off, or --launches past N) or word 3 leaves the cluster out; a traced
// cluster goes on to the sites. Without it, neither copy nor branch.
TEST(InstrumentRecordBytes, ACallThatRecordsNothingRunsThePlainCopy) {
  static const std::string kLoop = small_kernel(
      "\tmov.u32 %r1, 0;\n$L__loop:\n\tmbarrier.arrive.shared::cta.b64 _, [bar];\n\tadd.s32 %r1, %r1, 1;\n"
      "\tsetp.lt.s32 %p1, %r1, 4;\n\t@%p1 bra $L__loop;\n\tret;\n");
  const std::string plain = "$__tmakit_plain_0";
  {
    Instrumented none(kLoop.c_str());
    ASSERT_EQ(none.r.status, 0);
    EXPECT_EQ(none.r.text.find(plain), std::string::npos) << none.r.text;
  }
  Instrumented in(kLoop.c_str(), true);
  ASSERT_EQ(in.r.status, 0) << (in.r.diags.empty() ? "" : format(in.r.diags[0]));
  const std::string& t = in.r.text;
  // The copy: after the sites' path, every original instruction once more in its order, the
  // label renamed (the branch with it), the declarations not repeated, no site.
  const size_t copy = t.find(plain + ":");
  ASSERT_NE(copy, std::string::npos) << t;
  const std::string tail = t.substr(copy);
  const std::vector<std::string> body = {"mov.u32 %r1, 0;", "$L__loop___tmakit_plain:",
                                         "mbarrier.arrive.shared::cta.b64 _, [bar];", "add.s32 %r1, %r1, 1;",
                                         "setp.lt.s32 %p1, %r1, 4;", "@%p1 bra $L__loop___tmakit_plain;", "ret;"};
  size_t at = 0;
  for (const std::string& l : body) {
    at = tail.find(l, at);
    ASSERT_NE(at, std::string::npos) << "the copy lacks `" << l << "` in order:\n" << tail;
  }
  EXPECT_EQ(tail.find(".reg"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("__tmakit site"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("$L__loop:"), std::string::npos) << "the original label again:\n" << tail;
  // The sites' path ends before it: nothing falls through into the copy.
  EXPECT_NE(t.rfind("ret; // __tmakit", copy), std::string::npos);
  // The prologue's branch, by the trace words.
  auto branches = [&](uint64_t records, uint32_t cluster, uint64_t word3) {
    Warp w(4, kRoom);
    w.words[0] = records;
    w.words[3] = word3;
    for (int l = 0; l < 4; ++l) w.regs[l]["%clusterid.x"] = cluster, w.regs[l]["%nclusterid.x"] = 8, w.regs[l]["%nclusterid.y"] = 1;
    run(w, in.prologue());
    return std::count(w.ran.begin(), w.ran.end(), "\t@%__tmakit_p0 bra.uni " + plain + ";");
  };
  EXPECT_EQ(branches(kRecordsAt, 5, 0), 0) << "traced: the sites' path";
  EXPECT_EQ(branches(0, 5, 0), 1) << "no records address: the plain copy";
  EXPECT_EQ(branches(kRecordsAt, 5, 4 | uint64_t{6} << 32), 0) << "cluster 5 among 4 and 5: traced";
  EXPECT_EQ(branches(kRecordsAt, 6, 4 | uint64_t{6} << 32), 1) << "cluster 6 left out: the plain copy";
}


// A tensor operation writes its map's halves where its site last read another map address (or
// none since the function began, or since a tensormap fence of the thread's): else only its own
// record, flagged kFlagMapCached, in one slot. Either way it counts as three records made. The
// halves hold no clock: they take the operation's, just after them in the chunk.
TEST(InstrumentRecordBytes, ATensorOperationWritesItsMapOnceASiteAndAddress) {
  Instrumented in;
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  run(w, in.prologue());
  auto load = [&] { run(w, lines_of_site(in.r.text, kLoad)); };
  const auto op = static_cast<uint16_t>(TraceOp::tensor_load);
  load();  // slots 1..3: the halves, then the operation
  load();  // slot 4: the operation alone
  EXPECT_EQ(w.record(1).op, kMapLo);
  EXPECT_EQ(w.record(3).op, op);
  EXPECT_EQ(w.record(3).flags, 0);
  EXPECT_EQ(w.record(4).op, op);
  EXPECT_EQ(w.record(4).flags, instrument::kFlagMapCached);
  EXPECT_EQ(w.made(), 6u) << "three records each";
  w.regs[0]["pmap"] = kMapAt + 128;  // another map
  load();  // slots 5..7
  EXPECT_EQ(w.record(5).op, kMapLo);
  EXPECT_EQ(w.record(7).flags, 0);
  load();  // slot 8
  EXPECT_EQ(w.record(8).flags, instrument::kFlagMapCached);
  run(w, lines_of_site(in.r.text, kFence));  // a tensormap fence: the cache is emptied
  load();  // slots 10..12 (the fence's record is slot 9)
  EXPECT_EQ(w.record(10).op, kMapLo);
  EXPECT_EQ(w.record(12).op, op);
  EXPECT_EQ(w.record(12).flags, 0);
  EXPECT_EQ(w.made(), 16u);
  check_slots(w);
  for (size_t s : {1, 2, 5, 6, 10, 11}) EXPECT_EQ(w.clock_at(s), 0u) << "a map half's clock, slot " << s;
  // In the order, each operation after its own halves, the operations in program order.
  const std::vector<size_t> order = w.order();
  EXPECT_EQ(order, (std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  // Lanes that disagree: the whole warp writes the halves where any lane must.
  Warp two(2, kRoom);
  for (int l = 0; l < 2; ++l) two.regs[l]["%p2"] = 1;
  run(two, in.prologue());
  run(two, lines_of_site(in.r.text, kLoad));
  two.regs[1]["pmap"] = kMapAt + 256;  // lane 1's map changed, lane 0's did not
  run(two, lines_of_site(in.r.text, kLoad));
  EXPECT_EQ(two.slots_written(), 12u) << "three a lane, twice";
  EXPECT_EQ(two.made(), 12u);
  check_slots(two);
}

// A wait loop: its success is recorded, and of the failed polls since the thread's last
// successful wait only the 16th (a hung thread's last word); other sites do not reset the count.
TEST(InstrumentRecordBytes, AWaitLoopIsRecordedAtItsSuccessAndItsSixteenthFailure) {
  Instrumented in;
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  run(w, in.prologue());
  auto poll = [&](bool done, uint32_t times = 1) {
    w.regs[0]["%p3"] = done;  // what the try_wait returned (its record is written after it)
    for (uint32_t k = 0; k < times; ++k) run(w, lines_of_site(in.r.text, kWait));
  };
  poll(false, 3), poll(true);                       // records: succeeded
  poll(false, kFailedPollRecorded - 1), poll(true);  // succeeded
  poll(false, kFailedPollRecorded + 4);             // failed (the 16th)
  run(w, lines_of_site(in.r.text, kInit));          // an init: the count goes on
  poll(false, kFailedPollRecorded), poll(true);     // succeeded
  poll(true);                                       // succeeded
  const std::vector<std::pair<TraceOp, bool>> want = {
      {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, false},
      {TraceOp::mbar_init, false},    {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, true}};
  ASSERT_EQ(w.made(), want.size());
  check_slots(w);
  const std::vector<Record> order = w.in_order();
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Record& r = order[i];
    EXPECT_EQ(r.op, static_cast<uint16_t>(want[i].first)) << i;
    EXPECT_EQ((r.flags & instrument::kFlagWaitComplete) != 0, want[i].second) << i;
  }
}

}  // namespace
