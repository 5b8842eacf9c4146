// What a site's inserted lines do, run by a small interpreter of the PTX they use, for a warp
// of lanes in lockstep: the trace words, the tickets (activemask, ballot, match, a writing lane's
// atomic), each lane's chunk of slots, the ticket written at the lane's next recorded site, the
// record bytes (ids packed with bfi and mov.b64 {lo, hi}, head last) and the wait streak.
// Expectations are written from trace.hpp's contract and docs/check.md's rules, not from the
// emitter: a packing mistake, a ticket handed to the wrong lane, two lanes in one chunk, a
// record written past the capacity or a poll recorded twice shows here and not only on the GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <algorithm>
#include <map>
#include <random>
#include <regex>
#include <sstream>

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

// A warp's state: the trace's six words, the slots (their ticket words in them) and counters,
// each lane's registers.
struct Warp {
  uint64_t words[6] = {kRecordsAt, 0, 0, 0, kCountersAt, 1};  // capacity set by the constructor
  std::vector<uint32_t> counters;  // word 4's: [0] the next chunk, [1] dropped, [ticket_counter_word(k)] cluster k's tickets
  std::vector<uint8_t> mem;        // the record slots
  std::vector<std::map<std::string, uint64_t>> regs;
  std::vector<bool> active;
  std::vector<std::string> ran;  // each instruction the warp ran (any lane), in order

  explicit Warp(int lanes, uint64_t capacity, int clusters = 1)
      : counters(instrument::ticket_counter_word(clusters), 0), mem(capacity * instrument::kRecordBytes, 0),
        regs(lanes), active(lanes, true) {
    words[1] = capacity;
    words[5] = static_cast<uint64_t>(clusters);
    for (int l = 0; l < lanes; ++l) regs[l]["%tid.x"] = static_cast<uint64_t>(l), regs[l]["%ctaid.x"] = 7, regs[l]["pmap"] = kMapAt;
  }
  Record record(size_t slot) const {
    Record r;
    std::memcpy(&r, mem.data() + slot * sizeof r, sizeof r);
    return r;
  }
  size_t slots() const { return mem.size() / instrument::kRecordBytes; }
  uint32_t chunks() const { return counters[0]; }
  // A slot's ticket word as stored (trace.hpp, Order: bytes 8..11 of a record's slot).
  uint32_t raw_word(size_t s) const {
    uint32_t w;
    std::memcpy(&w, mem.data() + s * instrument::kRecordBytes + instrument::kTicketWordAt, 4);
    return w;
  }
  // A slot's ticket word, an absolute one as its ticket (stored plus one), kNoTicket where it has
  // none: a slot not written, a chunk's header, a map's second half, a word that reads 0.
  uint32_t word(size_t s) const {
    const uint16_t op = record(s).op;
    if (op == 0 || op == static_cast<uint16_t>(TraceOp::lane_ids) || op == static_cast<uint16_t>(TraceOp::tensor_map_hi))
      return instrument::kNoTicket;
    const uint32_t w = raw_word(s);
    if (w == 0) return instrument::kNoTicket;
    return w == instrument::kNoTicket || w >= instrument::kRelativeTicket ? w : w - 1;
  }
  // Tickets the clusters' lanes reserved (trace.hpp: kTicketReservation at a time).
  uint32_t reserved(int cluster = 0) const { return counters[instrument::ticket_counter_word(cluster)]; }
  // Records made: those written (a tensor operation three, with its map's halves or without)
  // and those counted past the capacity (counter 1).
  size_t made() const {
    size_t n = counters[1];
    for (size_t s = 0; s < slots(); ++s) {
      const Record r = record(s);
      if (r.op == 0 || r.op == static_cast<uint16_t>(TraceOp::lane_ids)) continue;
      n += (r.flags & instrument::kFlagMapCached) ? 3 : 1;
    }
    return n;
  }
  // A slot's record with the ids of its chunk's header (trace.hpp: the chunk's first slot).
  Record with_ids(size_t slot) const {
    Record r = record(slot), header = record(slot - slot % instrument::kChunkRecords);
    EXPECT_EQ(header.op, static_cast<uint16_t>(TraceOp::lane_ids)) << "slot " << slot << ": its chunk has no header";
    std::memcpy(&r.ctaid_x, &header.ctaid_x, offsetof(Record, values) - offsetof(Record, ctaid_x));
    return r;
  }
  // The records in the order their tickets give (trace.hpp): each ticketed slot by its ticket;
  // a tensor operation's map halves carry the last of its three, and the halves and the
  // operation take all three in slot order. (A
  // tensor operation without its halves, kFlagMapCached, is left as it is: the tests that
  // make one read its slots.)
  // A slot's record's last ticket, kNoTicket where none came (trace.hpp, Order): an absolute
  // word (bit 31 clear) is its reservation's first ticket, at the reservation's first record,
  // which takes three where it is a tensor operation (its map's first half, or the operation
  // itself with kFlagMapCached); a relative word (bit 31 set) names that record's slot from bit
  // 5 and holds its own last ticket less the reservation's first less one below.
  // A tensor operation that wrote its halves keeps a relative word in its own record and an
  // absolute one (its anchor's) at its first half: the first half stands for the three.
  uint32_t ticket(size_t s) const {
    const bool halves_before = s >= 2 && record(s - 2).op == static_cast<uint16_t>(TraceOp::tensor_map_lo);
    if (halves_before && instrument::is_tensor_operation(static_cast<TraceOp>(record(s).op))) return instrument::kNoTicket;
    uint32_t word = this->word(s);
    if (record(s).op == static_cast<uint16_t>(TraceOp::tensor_map_lo) && this->word(s + 2) != instrument::kNoTicket)
      word = this->word(s + 2);
    if (word == instrument::kNoTicket) return word;
    if (word < 0x80000000u) {
      const Record r = record(s);
      const bool three = r.op == static_cast<uint16_t>(TraceOp::tensor_map_lo) ||
                         (instrument::is_tensor_operation(static_cast<TraceOp>(r.op)) && (r.flags & instrument::kFlagMapCached));
      return word + (three ? 2 : 0);
    }
    const size_t anchor = (word >> 5) & ((1u << 26) - 1);
    const uint32_t first = anchor < slots() ? this->word(anchor) : instrument::kNoTicket;
    if (first == instrument::kNoTicket || first >= 0x80000000u) return instrument::kNoTicket;
    return first + (word & 31) + 1;
  }
  std::vector<Record> in_order() const {
    std::vector<std::pair<uint32_t, size_t>> by_ticket;
    for (size_t s = 0; s < slots(); ++s)
      if (ticket(s) != instrument::kNoTicket) by_ticket.push_back({ticket(s), s});
    std::sort(by_ticket.begin(), by_ticket.end());
    std::vector<Record> out;
    for (auto [ticket, s] : by_ticket) {
      out.push_back(with_ids(s));
      if (record(s).op == static_cast<uint16_t>(TraceOp::tensor_map_lo)) out.push_back(with_ids(s + 1)), out.push_back(with_ids(s + 2));
    }
    return out;
  }
  // Slots written with a record (not a chunk's header).
  size_t slots_written() const {
    size_t n = 0;
    for (size_t s = 0; s < slots(); ++s)
      n += record(s).op != 0 && record(s).op != static_cast<uint16_t>(TraceOp::lane_ids);
    return n;
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
    ASSERT_TRUE(std::regex_match(line, m, stmt)) << line;
    const bool neg = m[1] == "!";
    const std::string guard = m[2], op = m[3];
    const auto ops = operands(m[4]);
    auto val = [&](int lane, const std::string& x) -> uint64_t {
      if (x.rfind("0x", 0) == 0 || x.rfind("0X", 0) == 0) return std::stoull(x.substr(2), nullptr, 16);
      if (std::isdigit(static_cast<unsigned char>(x[0])) || x[0] == '-') return static_cast<uint64_t>(std::stoll(x));
      if (x[0] == '!') return !w.regs[lane].at(x.substr(1));
      if (x == "%lanemask_gt") return ~((2ull << lane) - 1) & 0xFFFFFFFF;
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
      } else if (op == "atom.global.add.u32") {  // [reg]: one of word 4's counters
        const uint64_t addr = val(l, ops[1].substr(1, ops[1].size() - 2));
        ASSERT_TRUE(addr >= kCountersAt && addr % 4 == 0 && (addr - kCountersAt) / 4 < w.counters.size()) << line;
        uint32_t& counter = w.counters[(addr - kCountersAt) / 4];
        ASSERT_NE(addr, kCountersAt + 4) << "counter 1 counts the records dropped, with red: " << line;
        r[ops[0]] = counter;
        counter += static_cast<uint32_t>(v(2));
      } else if (op == "red.global.add.u32") {  // [reg+4]: counter 1, the records dropped
        const auto [base, off] = at(ops[0]);
        const uint64_t addr = r[base] + off;
        ASSERT_EQ(addr, kCountersAt + 4) << line;
        w.counters[1] += static_cast<uint32_t>(v(1));
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
        ASSERT_GE(r[base] + off, w.words[0]) << "a store before the slots: " << line;
        const uint64_t addr = r[base] + off - w.words[0];
        std::vector<uint64_t> vals;
        int bytes = 8;
        if (op == "st.global.v2.b64") {
          auto parts = operands(ops[1].substr(1, ops[1].size() - 2));
          vals = {val(l, parts[0]), val(l, parts[1])};
        } else if (op == "st.global.u32") {  // an anchor's ticket word
          ASSERT_EQ(addr % instrument::kRecordBytes, instrument::kTicketWordAt) << line;
          vals = {v(1)};
          bytes = 4;
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
  std::vector<std::string> exit() const {  // the lines before the entry's `ret`
    std::vector<std::string> out;
    std::istringstream in(r.text);
    std::string l;
    bool on = false;
    while (std::getline(in, l)) {
      on = on || l.find("// __tmakit: ") != std::string::npos;
      if (on && l.find("ret;") != std::string::npos) break;
      if (on) out.push_back(l);
    }
    EXPECT_FALSE(out.empty()) << "no exit lines before the ret";
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
  run(w, lines_of_site(in.r.text, kLoad));
  run(w, in.exit());
  Record want{};
  want.ctaid_x = 0x01020304, want.ctaid_y = 0x1112, want.ctaid_z = 0x2122;
  want.tid_x = 0x3132, want.tid_y = 0x4142, want.tid_z = 0x5152, want.cluster_ctarank = 0x6162;
  want.clusterid_x = 0x71727374, want.clusterid_y = 0x8182, want.clusterid_z = 0x9192;
  // mbarrier.init, then the tensor load's map halves and its own record: four tickets, one chunk,
  // whose first slot is its header: the lane's ids, which the records leave zero.
  const std::pair<uint32_t, TraceOp> heads[4] = {{kInit, TraceOp::mbar_init}, {kLoad, TraceOp::tensor_map_lo},
                                                 {kLoad, TraceOp::tensor_map_hi}, {kLoad, TraceOp::tensor_load}};
  EXPECT_EQ(w.made(), 4u);
  EXPECT_EQ(w.chunks(), 1u);
  const Record header = w.record(0);
  want.site = kInit;
  want.op = static_cast<uint16_t>(TraceOp::lane_ids);
  EXPECT_EQ(std::memcmp(&header, &want, 32), 0) << "the chunk's header";
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
    // A record leaves its ids to the header, but for its ticket word (bytes 8..11).
    const std::vector<uint8_t> zeros(32 - 12, 0);
    EXPECT_EQ(std::memcmp(w.mem.data() + (k + 1) * instrument::kRecordBytes + 12, zeros.data(), zeros.size()), 0)
        << "a record leaves its ids to the header";
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
      std::memcpy(&v, got_all[1 + half].values + 8 * k, 8);
      EXPECT_EQ(v, 0x4D41500000000000ull | (64 * half + 8 * k)) << half << " " << k;
    }
}

// A reservation's first ticket (its atomic's answer) is read, and written to its first
// record's ticket word, only when the lane leaves the reservation (reserves again, or returns),
// not at the record: a record's writing never waits for the atomic. The records after it in the
// reservation hold relative words naming it, written with them; a site that records nothing
// takes no ticket.
TEST(InstrumentRecordBytes, AReservationsFirstTicketIsWrittenWhenTheLaneLeavesIt) {
  Instrumented in;
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  w.counters[instrument::ticket_counter_word(0)] = 7;  // seven tickets taken before
  run(w, in.prologue());
  run(w, lines_of_site(in.r.text, kInit));
  EXPECT_EQ(w.record(1).op, static_cast<uint16_t>(TraceOp::mbar_init));
  EXPECT_EQ(w.word(1), instrument::kNoTicket) << "written at the site itself";
  w.regs[0]["%p2"] = 0;
  run(w, lines_of_site(in.r.text, kInit));  // a site that records nothing
  EXPECT_EQ(w.word(2), instrument::kNoTicket);
  w.regs[0]["%p2"] = 1;
  run(w, lines_of_site(in.r.text, kInit));  // the reservation's second record: relative to the first
  EXPECT_EQ(w.word(1), instrument::kNoTicket) << "the first ticket still unread";
  EXPECT_EQ(w.word(2), 0x80000000u | 1u << 5) << "slot 1's reservation, one ticket past its first";
  run(w, in.exit());
  EXPECT_EQ(w.word(1), 7u);
  EXPECT_EQ(w.raw_word(1), 8u) << "an absolute word is the first ticket plus one: 0 is none";
  EXPECT_EQ(w.ticket(1), 7u);
  EXPECT_EQ(w.ticket(2), 8u);
  run(w, in.exit());  // again: the same word
  EXPECT_EQ(w.word(1), 7u);
  EXPECT_EQ(w.word(3), instrument::kNoTicket);
  EXPECT_EQ(w.word(0), instrument::kNoTicket) << "a chunk's header has no ticket";
  EXPECT_EQ(w.made(), 2u);
  EXPECT_EQ(w.reserved(), 7 + instrument::kTicketReservation) << "one reservation for both";
}

// A barrier's record writes the lane's reservation's first ticket as well (a lane that hangs at
// the barrier has its records before it ordered), and the barrier ends the reservation: the
// lane's next record reserves afresh, and writes the barrier's reservation's first ticket.
TEST(InstrumentRecordBytes, ABarriersRecordWritesTheReservationsFirstTicket) {
  const char* module = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k()
{
	.reg .pred %p<4>;
	.shared .align 8 .b64 bar[1];
	@%p2 mbarrier.init.shared::cta.b64 [bar], 32;
	barrier.cluster.wait;
	@%p2 mbarrier.init.shared::cta.b64 [bar], 32;
	ret;
}
)";
  const Instrumented in(module);
  ASSERT_EQ(in.r.status, 0);
  ASSERT_EQ(in.r.sites.size(), 3u);
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  w.counters[instrument::ticket_counter_word(0)] = 40;
  run(w, in.prologue());
  run(w, lines_of_site(in.r.text, 0));
  EXPECT_EQ(w.word(1), instrument::kNoTicket);
  run(w, lines_of_site(in.r.text, 1));  // the barrier: the second record of the reservation
  EXPECT_EQ(w.record(2).op, static_cast<uint16_t>(TraceOp::cluster_wait));
  EXPECT_EQ(w.word(1), 40u) << "written at the barrier";
  EXPECT_EQ(w.ticket(2), 41u);
  run(w, lines_of_site(in.r.text, 2));  // after the barrier: a fresh reservation
  EXPECT_EQ(w.reserved(), 40 + 2 * instrument::kTicketReservation);
  EXPECT_EQ(w.word(3), instrument::kNoTicket);
  run(w, in.exit());
  EXPECT_EQ(w.ticket(3), 48u);
  EXPECT_LT(w.ticket(2), w.ticket(3));
}

// An instruction the trace does not hold that can order the lane after other threads (a warp's
// exchange of values, an atomic, an acquire or volatile load, a fence, bar.warp.sync) ends the
// lane's reservation right after it (trace.hpp, Order: the lane's next record reserves afresh);
// an ordinary load, store or arithmetic does not.
TEST(InstrumentRecordBytes, AnInstructionThatOrdersTheLaneAfterOthersEndsItsReservation) {
  const char* module = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 p)
{
	.reg .pred %p<4>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar[1];
	ld.param.u64 %rd1, [p];
	@%p2 mbarrier.init.shared::cta.b64 [bar], 32;
	shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;
	elect.sync %r3|%p1, -1;
	atom.global.add.u32 %r4, [%rd1], 1;
	ld.acquire.gpu.global.u32 %r5, [%rd1];
	ld.global.u32 %r6, [%rd1];
	add.u32 %r7, %r6, 1;
	bar.warp.sync -1;
	fence.acq_rel.gpu;
	st.global.u32 [%rd1], %r7;
	vote.sync.any.pred %p3, %p2, -1;
	ld.volatile.global.u32 %r8, [%rd1];
	red.global.add.u32 [%rd1], 1;
	ret;
}
)";
  const Instrumented in(module);
  ASSERT_EQ(in.r.status, 0);
  ASSERT_EQ(in.r.sites.size(), 1u);
  const std::string ended = "or.b32 %__tmakit_pending, %__tmakit_pending, " + std::to_string(1u << 31) + ";";
  const std::map<std::string, bool> ends = {
      {"ld.param.u64", false}, {"shfl.sync", true}, {"elect.sync", true}, {"atom.global", true},
      {"ld.acquire", true},    {"ld.global", false}, {"add.u32 %r7", false}, {"bar.warp.sync", true},
      {"fence.acq_rel", true}, {"st.global", false}, {"vote.sync", true},    {"ld.volatile", true},
      {"red.global", true}};
  std::vector<std::string> lines;
  std::istringstream text(in.r.text);
  for (std::string l; std::getline(text, l);) lines.push_back(l.substr(std::min(l.size(), l.find_first_not_of(" \t"))));
  size_t seen = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i)
    for (const auto& [start, want] : ends)
      if (lines[i].rfind(start, 0) == 0 && lines[i].find("__tmakit") == std::string::npos) {  // the module's own
        ++seen;
        EXPECT_EQ(lines[i + 1] == ended, want) << lines[i] << " is followed by: " << lines[i + 1];
      }
  EXPECT_EQ(seen, ends.size());
}

// A lane's chunk holds its header and kChunkRecords - 1 records: the record after them takes a
// new chunk, and so does a tensor operation (three slots) that would not fit in what is left.
TEST(InstrumentRecordBytes, ALaneTakesANewChunkWhenItsOwnIsFull) {
  Instrumented in;
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  w.counters[0] = 2;  // chunks 0 and 1 are other lanes'
  run(w, in.prologue());
  constexpr uint32_t C = instrument::kChunkRecords;
  w = Warp(1, 5 * C);
  w.regs[0]["%p2"] = 1;
  w.counters[0] = 2;
  run(w, in.prologue());
  for (uint32_t i = 0; i < C - 1; ++i) run(w, lines_of_site(in.r.text, kInit));  // a full chunk
  EXPECT_EQ(w.chunks(), 3u);
  run(w, lines_of_site(in.r.text, kInit));  // the next record: a new chunk
  EXPECT_EQ(w.chunks(), 4u);
  EXPECT_EQ(w.record(3 * C).op, static_cast<uint16_t>(TraceOp::lane_ids));
  EXPECT_EQ(w.record(3 * C + 1).op, static_cast<uint16_t>(TraceOp::mbar_init));
  for (uint32_t i = 0; i < C - 3; ++i) run(w, lines_of_site(in.r.text, kInit));  // one slot left
  run(w, lines_of_site(in.r.text, kLoad));  // a new chunk for its three
  run(w, lines_of_site(in.r.text, kInit));
  run(w, in.exit());
  EXPECT_EQ(w.chunks(), 5u);
  EXPECT_EQ(w.slots_written(), 2 * (C - 1) - 1 + 4);
  for (uint32_t s = 0; s < 2 * C; ++s) EXPECT_EQ(w.record(s).op, 0) << s;
  EXPECT_EQ(w.record(4 * C - 1).op, 0) << "the slot the tensor operation did not fit in";
  EXPECT_EQ(w.record(4 * C).op, static_cast<uint16_t>(TraceOp::lane_ids));
  EXPECT_EQ(w.record(4 * C + 1).op, static_cast<uint16_t>(TraceOp::tensor_map_lo));
  EXPECT_EQ(w.record(4 * C + 4).op, static_cast<uint16_t>(TraceOp::mbar_init));
  const std::vector<Record> order = w.in_order();
  ASSERT_EQ(order.size(), 2 * (C - 1) - 1 + 4);
  EXPECT_EQ(order[2 * (C - 1) - 1].op, static_cast<uint16_t>(TraceOp::tensor_map_lo));
  EXPECT_EQ(order[2 * (C - 1) + 1].op, static_cast<uint16_t>(TraceOp::tensor_load));
  EXPECT_EQ(order.back().op, static_cast<uint16_t>(TraceOp::mbar_init));
}

// Each recording lane reserves its own tickets (kTicketReservation at a time): they follow on
// from where the counter stood (in lane order here, where the lanes' atomics land in that
// order), each lane's records in a chunk
// of its own; lanes whose guard is false write nothing; past the capacity nothing is written but
// the counter still counts every record. Where every recording lane's values agree, one warp record stands for
// them all: the highest lane's ids, kFlagWarp, the lanes' mask at the site's lanes_at.
TEST(InstrumentRecordBytes, EachRecordingLaneReservesItsTickets) {
  Instrumented in;
  ASSERT_GT(in.r.sites[kWait].lanes_at, 0u);
  for (bool same : {false, true})
    for (uint32_t start : {0u, 5u}) {
      SCOPED_TRACE(testing::Message() << "start " << start << (same ? ", same parity" : ", parity by lane"));
      Warp w(32, 32 * instrument::kChunkRecords);
      w.counters[instrument::ticket_counter_word(0)] = start;
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
      run(w, in.exit());
      const size_t n = same ? 1 : voters.size();
      ASSERT_EQ(w.made(), n);
      // A reservation a writing lane (a warp record's writer's last ticket is the other voters' next).
      EXPECT_EQ(w.reserved(), start + n * instrument::kTicketReservation);
      EXPECT_EQ(w.chunks(), n) << "a chunk a writing lane";
      const std::vector<Record> order = w.in_order();
      ASSERT_EQ(order.size(), n);
      for (size_t i = 0; i < n; ++i) {
        const Record& r = order[i];
        // Each writing lane's own reservation, taken in lane order here.
        EXPECT_EQ(w.word(i * instrument::kChunkRecords + 1), start + i * instrument::kTicketReservation) << i;
        EXPECT_EQ(r.op, static_cast<uint16_t>(TraceOp::mbar_try_wait)) << i;
        EXPECT_EQ(r.tid_x, same ? voters.back() : voters[i]) << i;  // a warp record: its highest voter's
        EXPECT_EQ((r.flags & instrument::kFlagWarp) != 0, same) << i;
        EXPECT_NE(r.flags & instrument::kFlagWaitComplete, 0) << i;
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
    run(w, in.exit());
    ASSERT_EQ(w.made(), 4u);
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
    run(w, in.exit());
    ASSERT_EQ(w.made(), 1u);
    ASSERT_EQ(w.in_order().size(), 1u);
    EXPECT_EQ(w.in_order()[0].tid_x, 31);  // written by the highest voter
    uint32_t lanes = 0;
    std::memcpy(&lanes, w.mem.data() + instrument::kRecordBytes + in.r.sites[kInit].lanes_at, 4);
    EXPECT_EQ(lanes, mask);
  }
  // Three records a lane for a tensor operation: each lane's three are together.
  {
    Warp w(4, kRoom);
    for (int l = 0; l < 4; ++l) w.regs[l]["%p2"] = l != 1;
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kLoad));
    run(w, in.exit());
    ASSERT_EQ(w.made(), 9u);
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
  Warp full(32, 2 * instrument::kChunkRecords);
  for (int l = 0; l < 32; ++l) full.regs[l]["%r1"] = l & 1, full.regs[l]["%p3"] = 1, full.active[l] = l % 3 != 0;
  run(full, in.prologue());
  run(full, lines_of_site(in.r.text, kWait));
  run(full, in.exit());
  EXPECT_EQ(full.made(), 21u);
  EXPECT_EQ(full.chunks(), 21u);
  EXPECT_EQ(full.slots_written(), 2u);
  EXPECT_EQ(full.in_order().size(), 2u);
  // Twice more: the 19 lanes past the capacity take no chunk again, write nothing and are
  // counted each time; the two with chunks below it go on in them.
  for (int again = 0; again < 2; ++again) run(full, lines_of_site(in.r.text, kWait));
  run(full, in.exit());
  EXPECT_EQ(full.made(), 63u);
  EXPECT_EQ(full.counters[1], 57u);
  // Only the lanes that write reserve tickets (a wait's record reserves afresh each time): the
  // others write nothing again and need none.
  EXPECT_EQ(full.reserved(), 2 * 3 * instrument::kTicketReservation);
  EXPECT_EQ(full.chunks(), 21u);
  EXPECT_EQ(full.slots_written(), 6u);
  EXPECT_EQ(full.in_order().size(), 6u);
  // Tracing off (no records address): nothing reserved, nothing written.
  Warp off(32, kRoom);
  off.words[0] = 0;
  for (int l = 0; l < 32; ++l) off.regs[l]["%p2"] = 1;
  run(off, in.prologue());
  run(off, lines_of_site(in.r.text, kInit));
  run(off, in.exit());
  EXPECT_EQ(off.made(), 0u);
  EXPECT_EQ(off.chunks(), 0u);
}

// A warp record stands for each of its voters, so the order puts it after each voter's earlier
// records and before its later ones, whichever lane's reservation is older: its writer reserves
// afresh and the other voters' next records do. Lane 1 records alone, lane 0 alone (a newer
// reservation), both (one warp record, written by lane 1, the highest voter, whose reservation
// is the older), then each alone again.
TEST(InstrumentRecordBytes, AWarpRecordStandsBetweenEachVotersEarlierAndLaterRecords) {
  Instrumented in;
  Warp w(2, kRoom);
  run(w, in.prologue());
  auto record_in = [&](bool lane1, bool lane0) {
    w.regs[0]["%p2"] = lane0, w.regs[1]["%p2"] = lane1;
    run(w, lines_of_site(in.r.text, kInit));
  };
  // Slots 1.. are lane 1's (its chunk is chunk 0, taken first), C + 1.. lane 0's.
  record_in(true, false);   // lane 1's first: slot 1
  record_in(false, true);   // lane 0's first: slot C + 1
  record_in(true, true);    // the warp record: lane 1 writes it, at slot 2
  const uint64_t reserved = w.reserved();
  record_in(false, true);   // lane 0's next: slot C + 2, the ticket kept for it
  EXPECT_EQ(w.reserved(), reserved) << "a voter's next record after a warp record takes no atomic";
  record_in(false, true);   // lane 0's one after: slot C + 3, a reservation of its own
  EXPECT_GT(w.reserved(), reserved);
  record_in(true, false);   // lane 1's next: slot 3
  run(w, in.exit());
  constexpr uint32_t C = instrument::kChunkRecords;
  ASSERT_EQ(w.made(), 6u);
  uint32_t lanes = 0;
  std::memcpy(&lanes, w.mem.data() + 2 * instrument::kRecordBytes + in.r.sites[kInit].lanes_at, 4);
  ASSERT_EQ(lanes, 3u) << "slot 2 is the warp record of both lanes";
  for (size_t s : {1u, 2u, 3u, C + 1, C + 2, C + 3}) ASSERT_NE(w.ticket(s), instrument::kNoTicket) << s;
  EXPECT_GE(w.word(C + 2), 0x80000000u) << "a relative ticket word";
  EXPECT_LT(w.ticket(1), w.ticket(2)) << "lane 1: its first record, then the warp's";
  EXPECT_LT(w.ticket(2), w.ticket(3)) << "lane 1: the warp's record, then its next";
  EXPECT_LT(w.ticket(C + 1), w.ticket(2)) << "lane 0: its first record, then the warp's";
  EXPECT_LT(w.ticket(2), w.ticket(C + 2)) << "lane 0: the warp's record, then its next";
  EXPECT_LT(w.ticket(C + 2), w.ticket(C + 3)) << "lane 0: the kept ticket, then its own reservation's";
  EXPECT_NE(w.ticket(3), w.ticket(C + 2)) << "the writer's own tickets are not the ones kept for the others";
}

// The order the tickets give keeps each lane's program order, whatever mix of records it makes:
// on its own (alone, or lanes whose values differ), in a warp record standing for several lanes
// (written by another lane, from another reservation), after a wait. Random runs of inits and
// waits by random subsets of a warp's four lanes (the others diverged); for each lane, the
// records that stand for it, step by step, must have rising tickets.
TEST(InstrumentRecordBytes, TicketsKeepEachLanesProgramOrderWhateverTheMixOfRecords) {
  Instrumented in;
  std::mt19937 rng(20261127);
  constexpr int kLanes = 4;
  for (int trial = 0; trial < 300; ++trial) {
    Warp w(kLanes, 64 * instrument::kChunkRecords);
    for (int l = 0; l < kLanes; ++l) w.regs[l]["%p2"] = 1, w.regs[l]["%p3"] = 1, w.regs[l]["%r1"] = 0;
    run(w, in.prologue());
    std::vector<std::vector<size_t>> slots_of(kLanes);  // each lane's records, in its program order
    std::vector<bool> written(w.slots(), false);
    const int steps = 5 + static_cast<int>(rng() % 30);
    for (int step = 0; step < steps; ++step) {
      uint32_t who = 0;
      while (who == 0) who = rng() % (1u << kLanes);
      const bool wait = rng() % 3 == 0;
      const bool differ = rng() % 4 == 0;  // each lane its own parity: one record a lane
      for (int l = 0; l < kLanes; ++l) w.active[l] = (who >> l) & 1, w.regs[l]["%r1"] = differ ? l & 1 : 0;
      run(w, lines_of_site(in.r.text, wait ? kWait : kInit));
      // The new records: each stands for its lanes (a warp record's mask, else its writer).
      for (size_t s = 0; s < w.slots(); ++s) {
        const Record r = w.record(s);
        if (written[s] || r.op == 0 || r.op == static_cast<uint16_t>(TraceOp::lane_ids)) continue;
        written[s] = true;
        uint32_t lanes = 0;
        if (r.flags & instrument::kFlagWarp)
          std::memcpy(&lanes, w.mem.data() + s * instrument::kRecordBytes + in.r.sites[wait ? kWait : kInit].lanes_at, 4);
        else
          lanes = 1u << w.with_ids(s).tid_x;
        for (int l = 0; l < kLanes; ++l)
          if ((lanes >> l) & 1) slots_of[l].push_back(s);
      }
    }
    for (int l = 0; l < kLanes; ++l) w.active[l] = true;
    run(w, in.exit());
    for (int l = 0; l < kLanes; ++l)
      for (size_t k = 1; k < slots_of[l].size(); ++k) {
        const size_t a = slots_of[l][k - 1], b = slots_of[l][k];
        ASSERT_NE(w.ticket(a), instrument::kNoTicket) << "trial " << trial;
        ASSERT_LT(w.ticket(a), w.ticket(b)) << "trial " << trial << ", lane " << l << ": slot " << a << " then " << b;
      }
  }
}

// Where no lane of the warp records, the record's work is branched around: a failed poll not
// recorded, a false guard and tracing off read no special register (%clusterid, %tid, ...: each
// read is slow) and take no ticket, and the poll is still counted.
TEST(InstrumentRecordBytes, ASiteWhereNoLaneRecordsSkipsTheRecord) {
  Instrumented in;
  auto specials = [](const Warp& w) {  // mov.u32 %__tmakit_rN, %clusterid.x; and the like
    static const std::regex special(R"(mov\.u32 %__tmakit_r\d+, %(clusterid|nclusterid|ctaid|tid|cluster_ctarank)\.?[xyz]?;)");
    return std::count_if(w.ran.begin(), w.ran.end(), [](const std::string& l) { return std::regex_search(l, special); });
  };
  Warp w(32, kRoom);
  for (int l = 0; l < 32; ++l) w.regs[l]["%p2"] = 1, w.regs[l]["%r1"] = 0, w.regs[l]["%p3"] = 0;
  run(w, in.prologue());
  w.ran.clear();
  run(w, lines_of_site(in.r.text, kWait));  // a failed poll: counted, not recorded
  EXPECT_EQ(w.made(), 0u);
  EXPECT_EQ(specials(w), 0) << "a special register read where nothing is recorded";
  // The records address and guard, the guard kept for the count, the wait's operands taken
  // before it runs, the count's check, the vote, the branch and the count's update: at most 11
  // (the recorded success below runs more than four times as many). The pending ticket is left
  // for the next recorded site.
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
    run(w, in.exit());
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
  run(one, in.exit());
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
// (x + nx * (y + ny * z)); 0 traces all. A warp of a cluster outside writes and reserves nothing.
TEST(InstrumentRecordBytes, OnlyTheClustersOfWord3Record) {
  Instrumented in;
  auto run_in = [&](uint32_t cx, uint32_t cy, uint64_t word3) {
    Warp w(4, kRoom);
    w.words[3] = word3;
    for (int l = 0; l < 4; ++l) {
      w.regs[l]["%p2"] = 1;
      w.regs[l]["%clusterid.x"] = cx, w.regs[l]["%clusterid.y"] = cy;
      w.regs[l]["%nclusterid.x"] = 3, w.regs[l]["%nclusterid.y"] = 2;
    }
    run(w, in.prologue());
    run(w, lines_of_site(in.r.text, kInit));
    return w.made();
  };
  EXPECT_EQ(run_in(2, 1, 0), 1u);                      // no filter: traced (one warp record)
  const uint64_t four_to_six = 4 | uint64_t{6} << 32;  // clusters 4 and 5
  EXPECT_EQ(run_in(1, 1, four_to_six), 1u);            // 1 + 3 * 1 = 4: in
  EXPECT_EQ(run_in(2, 1, four_to_six), 1u);            // 5: in
  EXPECT_EQ(run_in(0, 2, four_to_six), 0u);            // 6: out
  EXPECT_EQ(run_in(0, 1, four_to_six), 0u);            // 3: out
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

// Words 4 and 5: each traced cluster takes its tickets from a counter of its own (the k-th
// traced: counter 2 + k); a cluster past the counters there are takes the last one's. The
// function's prologue looks the counter up; its sites use it.
TEST(InstrumentRecordBytes, EachClusterTakesTicketsFromItsOwnCounter) {
  Instrumented in;
  auto counters_after = [&](uint32_t cluster, int inits) {
    Warp w(1, kRoom, 3);  // one lane: its records share one reservation (a warp record of
                          // several lanes reserves afresh: AWarpRecordStandsBetween...)
    w.words[3] = 4 | uint64_t{8} << 32;  // --ctas 4-7: cluster 4 is the first traced
    for (int l = 0; l < 1; ++l) {
      w.regs[l]["%p2"] = 1;
      w.regs[l]["%clusterid.x"] = cluster, w.regs[l]["%nclusterid.x"] = 8, w.regs[l]["%nclusterid.y"] = 1;
    }
    run(w, in.prologue());
    for (int i = 0; i < inits; ++i) run(w, lines_of_site(in.r.text, kInit));
    run(w, in.exit());
    // The lane wrote them all, in its one chunk, in program order.
    EXPECT_EQ(w.chunks(), 1u);
    EXPECT_EQ(w.slots_written(), static_cast<size_t>(inits));
    for (int s = 0; s < inits; ++s) EXPECT_EQ(w.ticket(1 + s), static_cast<uint32_t>(s)) << s;
    // Each cluster's counter on a line of its own: the words between them stay untouched.
    std::vector<uint32_t> tickets;
    for (size_t i = 2; i < w.counters.size(); ++i)
      if (i % instrument::kCounterLineWords == 0) tickets.push_back(w.counters[i]);
      else EXPECT_EQ(w.counters[i], 0u) << "word " << i << ", between the counters";
    return tickets;
  };
  // One reservation of kTicketReservation tickets from the cluster's own counter.
  constexpr uint32_t R = instrument::kTicketReservation;
  EXPECT_EQ(counters_after(6, 2), (std::vector<uint32_t>{0, 0, R}));  // cluster 6, the third traced
  EXPECT_EQ(counters_after(4, 1), (std::vector<uint32_t>{R, 0, 0}));  // cluster 4, the first
  EXPECT_EQ(counters_after(7, 3), (std::vector<uint32_t>{0, 0, R}));  // the fourth: on the last
}

// A tensor operation writes its map's halves where its site last read another map address (or
// none since the function began, or since a tensormap fence of the thread's): else only its own
// record, flagged kFlagMapCached, in one slot. It takes three tickets of the lane's reservation
// either way; its first slot holds the last of them.
TEST(InstrumentRecordBytes, ATensorOperationWritesItsMapOnceASiteAndAddress) {
  Instrumented in;
  Warp w(1, kRoom);
  w.regs[0]["%p2"] = 1;
  run(w, in.prologue());
  auto load = [&] { run(w, lines_of_site(in.r.text, kLoad)); };
  const auto lo = static_cast<uint16_t>(TraceOp::tensor_map_lo), op = static_cast<uint16_t>(TraceOp::tensor_load);
  load();  // slots 1..3: the halves, then the operation
  load();  // slot 4: the operation alone
  EXPECT_EQ(w.record(1).op, lo);
  EXPECT_EQ(w.record(3).op, op);
  EXPECT_EQ(w.record(3).flags, 0);
  EXPECT_EQ(w.record(4).op, op);
  EXPECT_EQ(w.record(4).flags, instrument::kFlagMapCached);
  EXPECT_EQ(w.made(), 6u) << "three tickets for each";
  w.regs[0]["pmap"] = kMapAt + 128;  // another map
  load();  // slots 5..7
  EXPECT_EQ(w.record(5).op, lo);
  EXPECT_EQ(w.record(7).flags, 0);
  load();  // slot 8
  EXPECT_EQ(w.record(8).flags, instrument::kFlagMapCached);
  run(w, lines_of_site(in.r.text, kFence));  // a tensormap fence: the cache is emptied
  load();  // slots 10..12 (the fence's record is slot 9)
  EXPECT_EQ(w.record(10).op, lo);
  EXPECT_EQ(w.record(12).op, op);
  EXPECT_EQ(w.record(12).flags, 0);
  run(w, in.exit());
  EXPECT_EQ(w.made(), 16u);
  // Reservations of kTicketReservation (8): the first two operations take 0..5 of the first; the
  // third needs three more than it has left, so it reserves 8..15; the fourth takes 11..13, the
  // fence 14, and ends the reservation (a tensormap fence orders the lane after others): the
  // last operation reserves 16. Each record's last ticket, from the words at its first slot:
  static_assert(instrument::kTicketReservation == 8);
  const uint32_t last_tickets[][2] = {{1, 2}, {4, 5}, {5, 10}, {8, 13}, {9, 14}, {10, 18}};
  for (const auto& [slot, ticket] : last_tickets) EXPECT_EQ(w.ticket(slot), ticket) << "slot " << slot;
  // the reservations' first records hold their first tickets, the others words relative to them.
  for (const auto& [slot, first] : {std::pair{1, 0u}, {5, 8u}, {10, 16u}}) EXPECT_EQ(w.word(slot), first) << slot;
  for (int slot : {4, 8, 9}) EXPECT_GE(w.word(slot), 0x80000000u) << slot;
  // Lanes that disagree: the whole warp writes the halves where any lane must.
  Warp two(2, kRoom);
  for (int l = 0; l < 2; ++l) two.regs[l]["%p2"] = 1;
  run(two, in.prologue());
  run(two, lines_of_site(in.r.text, kLoad));
  two.regs[1]["pmap"] = kMapAt + 256;  // lane 1's map changed, lane 0's did not
  run(two, lines_of_site(in.r.text, kLoad));
  EXPECT_EQ(two.slots_written(), 12u) << "three a lane, twice";
  EXPECT_EQ(two.made(), 12u);
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
  run(w, in.exit());
  const std::vector<std::pair<TraceOp, bool>> want = {
      {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, false},
      {TraceOp::mbar_init, false},    {TraceOp::mbar_try_wait, true}, {TraceOp::mbar_try_wait, true}};
  ASSERT_EQ(w.made(), want.size());
  const std::vector<Record> order = w.in_order();
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Record& r = order[i];
    EXPECT_EQ(r.op, static_cast<uint16_t>(want[i].first)) << i;
    EXPECT_EQ((r.flags & instrument::kFlagWaitComplete) != 0, want[i].second) << i;
  }
}

}  // namespace
