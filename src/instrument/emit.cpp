// The PTX that writes one record (the layout is trace.hpp's). Every line uses only fresh
// registers, the module's `__tmakit_trace` and the instruction's own operands, and every
// store is guarded by a predicate that is false when the instruction's own guard is, when
// tracing is off (no records address) and when the buffer is full.
#include <string>

#include "site.hpp"

namespace tmakit::instrument::detail {
namespace {

class Writer {
 public:
  Writer(const std::string& prefix) : x_("%" + prefix + "_") {}

  std::string d(int i) { return bank(x_ + "d", i, regs_.d); }
  std::string r(int i) { return bank(x_ + "r", i, regs_.r); }
  std::string h(int i) { return bank(x_ + "h", i, regs_.h); }
  std::string p(int i) { return bank(x_ + "p", i, regs_.p); }
  const RegCounts& regs() const { return regs_; }

 private:
  static std::string bank(const std::string& name, int i, int& count) {
    count = std::max(count, i + 1);
    return name + std::to_string(i);
  }
  std::string x_;
  RegCounts regs_;
};

std::string trace(size_t word) {
  return "[" + std::string(kTraceSymbol) + (word ? "+" + std::to_string(word * 8) : "") + "]";
}

std::string store(const std::string& on, const std::string& rec, uint32_t offset, uint32_t bytes, const std::string& v) {
  return "@" + on + " st.global.b" + std::to_string(bytes * 8) + " [" + rec + "+" + std::to_string(offset) + "], " +
         v + ";";
}

// The record's ids: the special registers, each moved to a 32-bit register and stored with
// its field's width.
void ids(Writer& w, std::vector<std::string>& out, const std::string& on, const std::string& rec) {
  struct Id {
    const char* reg;
    uint32_t offset, bytes;
  };
  static constexpr Id kIds[] = {
      {"%ctaid.x", 8, 4},  {"%ctaid.y", 12, 2},         {"%ctaid.z", 14, 2},     {"%tid.x", 16, 2},
      {"%tid.y", 18, 2},   {"%tid.z", 20, 2},           {"%cluster_ctarank", 22, 2}, {"%clusterid.x", 24, 4},
      {"%clusterid.y", 28, 2}, {"%clusterid.z", 30, 2},
  };
  for (const Id& id : kIds) {
    out.push_back("mov.u32 " + w.r(0) + ", " + id.reg + ";");
    out.push_back(store(on, rec, id.offset, id.bytes, w.r(0)));
  }
}

// The map's 128 bytes as two records (tensor_map_lo, tensor_map_hi) at `rec` and the next;
// leaves `rec` at the record after them. Loaded 8 bytes at a time from the map's own address
// (a map is 64-byte aligned; 8-byte loads need no more than a misplaced one has), only where the
// record is written, so a kernel run without tracing reads nothing extra.
void map_records(Writer& w, std::vector<std::string>& out, const MapRead& m, uint32_t id, const std::string& on,
                 const std::string& rec, const std::string& tmp) {
  std::string base = m.at.name.empty() ? "" : m.at.name;
  auto at = [&](int64_t byte) {
    int64_t off = m.at.value + byte;
    if (base.empty()) return "[" + std::to_string(off) + "]";
    return "[" + base + (off ? "+" + std::to_string(off) : "") + "]";
  };
  for (TraceOp half : {TraceOp::tensor_map_lo, TraceOp::tensor_map_hi}) {
    const int64_t first = half == TraceOp::tensor_map_lo ? 0 : static_cast<int64_t>(kMapHalfBytes);
    ids(w, out, on, rec);
    for (uint32_t k = 0; k < kMapHalfBytes; k += 8) {
      out.push_back("@" + on + " ld" + m.space + ".b64 " + tmp + ", " + at(first + k) + ";");
      out.push_back(store(on, rec, static_cast<uint32_t>(kValuesOffset) + k, 8, tmp));
    }
    out.push_back(store(on, rec, 0, 8, std::to_string(id | uint64_t(half) << 32)));
    out.push_back("add.u64 " + rec + ", " + rec + ", " + std::to_string(kRecordBytes) + ";");
  }
}

}  // namespace

Code emit_site(const Plan& plan, uint32_t id, const std::string& prefix) {
  Writer w(prefix);
  Code c;
  auto& pre = c.before;
  auto& rec_lines = plan.after ? c.after : c.before;
  const std::string base = w.d(0), rec = w.d(1), on = w.p(0), write = w.p(1);

  pre.push_back("// " + prefix + " site " + std::to_string(id) + ": " + std::string(to_string(plan.op)));
  // Taken before the instruction, which may write its own guard (a try_wait's predicate).
  pre.push_back("ld.global.u64 " + base + ", " + trace(kTraceRecordsWord) + ";");
  if (plan.guard.empty())
    pre.push_back("setp.ne.u64 " + on + ", " + base + ", 0;");
  else
    pre.push_back("setp.ne.and.u64 " + on + ", " + base + ", 0, " + (plan.guard_negated ? "!" : "") + plan.guard + ";");

  // Each value as a store operand. Addresses and, where the record follows the instruction,
  // the registers it reads are taken before it runs: it may overwrite them (`arrive %rd1, [%rd1]`).
  int next_d = 2, next_r = 1, next_h = 0;
  std::vector<std::vector<std::string>> operands;
  for (const Entry& e : plan.entries) {
    auto& vals = operands.emplace_back();
    for (const Source& s : e.elems) {
      if (s.kind == Source::Kind::imm) {
        vals.push_back(std::to_string(s.value));
      } else if (s.kind == Source::Kind::reg && (!plan.after || e.output)) {
        vals.push_back(s.name);
      } else if (s.kind == Source::Kind::reg) {
        std::string t = s.bits == 64 ? w.d(next_d++) : s.bits == 16 ? w.h(next_h++) : w.r(next_r++);
        pre.push_back("mov.b" + std::to_string(s.bits == 64 || s.bits == 16 ? s.bits : 32) + " " + t + ", " + s.name + ";");
        vals.push_back(t);
      } else {  // address: base (a register, widened, or a variable's address) plus offset
        std::string t = w.d(next_d++);
        if (s.name.empty()) pre.push_back("mov.u64 " + t + ", " + std::to_string(s.value) + ";");
        else if (!s.base_is_reg) pre.push_back("mov.u64 " + t + ", " + s.name + ";");
        else if (s.bits == 64) pre.push_back("mov.b64 " + t + ", " + s.name + ";");
        else pre.push_back("cvt.u64.u" + std::to_string(s.bits) + " " + t + ", " + s.name + ";");
        if (!s.name.empty() && s.value) pre.push_back("add.s64 " + t + ", " + t + ", " + std::to_string(s.value) + ";");
        vals.push_back(t);
      }
    }
  }

  // Reserve a record (three for a tensor operation: its map's two halves, then its own, kept
  // together in index order); past the capacity nothing is written (the counter still counts).
  const int records = plan.map ? 3 : 1;
  const std::string cap = w.d(next_d++);
  rec_lines.push_back("@" + on + " atom.global.add.u64 " + rec + ", " + trace(kTraceNextWord) + ", " +
                      std::to_string(records) + ";");
  rec_lines.push_back("ld.global.u64 " + cap + ", " + trace(kTraceCapacityWord) + ";");
  if (records == 1) {
    rec_lines.push_back("setp.lt.and.u64 " + write + ", " + rec + ", " + cap + ", " + on + ";");
  } else {
    const std::string last = w.d(next_d++);
    rec_lines.push_back("add.u64 " + last + ", " + rec + ", " + std::to_string(records) + ";");
    rec_lines.push_back("setp.le.and.u64 " + write + ", " + last + ", " + cap + ", " + on + ";");
  }
  rec_lines.push_back("mad.lo.u64 " + rec + ", " + rec + ", " + std::to_string(kRecordBytes) + ", " + base + ";");
  if (plan.map) map_records(w, rec_lines, *plan.map, id, write, rec, w.d(next_d++));
  ids(w, rec_lines, write, rec);
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const Field& f = plan.entries[i].field;
    for (size_t k = 0; k < operands[i].size(); ++k) {
      const Source& s = plan.entries[i].elems[k];
      // A register narrower than its field is stored with its own width (the rest stays 0).
      uint32_t bytes = s.kind == Source::Kind::reg ? std::min<uint32_t>(f.bytes, s.bits / 8) : f.bytes;
      rec_lines.push_back(store(write, rec, f.offset + static_cast<uint32_t>(k) * f.stride, bytes, operands[i][k]));
    }
  }
  // The first 8 bytes last: site, op and flags in one store, so a record whose op is set is whole
  // as far as this thread's stores reach the host in order.
  const uint64_t head = id | uint64_t(plan.op) << 32;
  std::string head_value = std::to_string(head);
  if (!plan.wait_result.empty()) {
    head_value = cap;
    rec_lines.push_back("selp.b64 " + cap + ", " + std::to_string(head | uint64_t(kFlagWaitComplete) << 48) + ", " +
                        std::to_string(head) + ", " + plan.wait_result + ";");
  }
  rec_lines.push_back(store(write, rec, 0, 8, head_value));
  c.regs = w.regs();
  return c;
}

std::vector<std::string> declare_registers(const RegCounts& regs, const std::string& prefix) {
  std::vector<std::string> out;
  auto bank = [&](const char* type, const char* b, int n) {
    if (n) out.push_back(std::string(".reg .") + type + " %" + prefix + "_" + b + "<" + std::to_string(n) + ">;");
  };
  bank("b64", "d", regs.d);
  bank("b32", "r", regs.r);
  bank("b16", "h", regs.h);
  bank("pred", "p", regs.p);
  return out;
}

}  // namespace tmakit::instrument::detail
