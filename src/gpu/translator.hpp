// The GPU engine's translator (translate.cpp: the program, its symbols and registers, operand
// evaluation; translate_steps.cpp: one device record per decoded step). Internal to src/gpu.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "engine_translate.hpp"
#include "tmakit/ptx/step.hpp"

namespace tmakit::gpu::detail {

[[noreturn]] void unsupported(const std::string& what, const std::string& where);
[[noreturn]] void bad_operand(const std::string& what, const std::string& where);

using Sym = scenario::Symbol;
using SymKind = scenario::SymbolValue::Kind;

class Translator {
 public:
  explicit Translator(scenario::Program program) { p_.program = std::move(program); }

  Plan run();  // translate.cpp

 private:
  static std::string where_of(size_t i) { return "program[" + std::to_string(i) + "]"; }

  void touch(uint64_t off, uint64_t bytes) { need_ = std::max(need_, off + bytes); }

  int reg(const std::string& name) {
    auto it = regs_.find(name);
    if (it != regs_.end()) return it->second;
    if (static_cast<int>(p_.reg_init.size()) >= kMaxRegs) unsupported("more than 64 predicate/state symbols", "scenario");
    unsigned long long init = 0;
    if (auto s = syms_.find(name); s != syms_.end() && s->second.kind == SymKind::integer) init = static_cast<unsigned long long>(s->second.v);
    regs_[name] = static_cast<int>(p_.reg_init.size());
    p_.reg_init.push_back(init);
    return regs_[name];
  }
  bool dynamic(const std::string& name) const { return regs_.count(name) != 0; }

  Sym eval(const ptx::Expr& e, const std::string& where) const {
    if (e.is_immediate()) return {SymKind::integer, e.offset};
    if (dynamic(e.symbol))
      unsupported("`" + e.symbol + "` is written by a step; the GPU engine reads such symbols only as guards and wait states", where);
    auto it = syms_.find(e.symbol);
    if (it == syms_.end()) {
      if (map_index_.count(e.symbol)) bad_operand("tensor map `" + e.symbol + "` used as a value", where);
      bad_operand("unknown symbol `" + e.symbol + "`", where);
    }
    Sym v = it->second;
    v.v += e.offset;
    return v;
  }
  int64_t integer(const ptx::Operand& o, const std::string& what, const std::string& where) const {
    Sym v = eval(o.expr, where);
    if (v.kind != SymKind::integer) bad_operand(what + " must be an integer", where);
    return v.v;
  }
  uint32_t u32(const ptx::Operand& o, const std::string& what, const std::string& where) const {
    int64_t v = integer(o, what, where);
    if (v < 0 || v > 0xffffffffll) bad_operand(what + " = " + std::to_string(v) + " is not a u32", where);
    return static_cast<uint32_t>(v);
  }
  // A .shared::cta operand: an offset in the executing CTA's window.
  uint32_t shared_cta(const ptx::Operand& o, int cta, const std::string& what, const std::string& where) {
    Sym v = eval(o.expr, where);
    if (v.kind == SymKind::cluster && v.rank != cta)
      bad_operand(what + " is a .shared::cta operand but names CTA " + std::to_string(v.rank) + "'s memory", where);
    if (v.kind != SymKind::shared && v.kind != SymKind::cluster) bad_operand(what + " must be a shared address", where);
    if (v.v < 0 || v.v >= static_cast<int64_t>(p_.program.shared_bytes))
      bad_operand(what + " at shared offset " + std::to_string(v.v) + " is outside the window", where);
    return static_cast<uint32_t>(v.v);
  }
  // A .shared::cluster operand: (rank or kSelf, offset).
  std::pair<uint8_t, uint32_t> shared_cluster(const ptx::Operand& o, int cta, const std::string& what, const std::string& where) {
    Sym v = eval(o.expr, where);
    if (v.kind != SymKind::shared && v.kind != SymKind::cluster) bad_operand(what + " must be a shared address", where);
    if (v.v < 0 || v.v >= static_cast<int64_t>(p_.program.shared_bytes))
      bad_operand(what + " at shared offset " + std::to_string(v.v) + " is outside the window", where);
    uint8_t rank = v.kind == SymKind::cluster && v.rank != cta ? static_cast<uint8_t>(v.rank) : kSelf;
    return {rank, static_cast<uint32_t>(v.v)};
  }
  // A global address: the allocation's offset (the worker adds the device base), or a raw integer.
  uint64_t global(const ptx::Operand& o, const std::string& what, const std::string& where) {
    Sym v = eval(o.expr, where);
    if (v.kind == SymKind::shared || v.kind == SymKind::cluster) bad_operand(what + " must be a global address", where);
    step_alloc_ = v.alloc;
    return static_cast<uint64_t>(v.v);
  }

  // translate_steps.cpp: one GPU record per decoded step or libcu++ call.
  Step translate(const ptx::Step& step, int cta, int thread, const std::string& where);
  Step translate_call(const model::LibCall& c, int cta, int thread, const std::string& where);
  void policy(const std::optional<ptx::Operand>& p, Step& st, const std::string& where);
  void op(const ptx::BulkCopy& b, Step& st, int cta, const std::string& where);
  void op(const ptx::BulkReduce& b, Step& st, int cta, const std::string& where);
  void op(const ptx::BulkPrefetch& b, Step& st, int cta, const std::string& where);
  void op(const ptx::TensorCopy& t, Step& st, int cta, const std::string& where);
  void op(const ptx::CommitGroup&, Step& st, int, const std::string&);
  void op(const ptx::WaitGroup& w, Step& st, int, const std::string& where);
  void op(const ptx::MbarInit& m, Step& st, int cta, const std::string& where);
  void op(const ptx::MbarArrive& a, Step& st, int cta, const std::string& where);
  void op(const ptx::MbarTx& m, Step& st, int cta, const std::string& where);
  void op(const ptx::MbarWait& w, Step& st, int cta, const std::string& where);
  void op(const ptx::MbarPendingCount&, Step&, int, const std::string& where);
  void op(const ptx::MbarInval& m, Step& st, int cta, const std::string& where);
  void op(const ptx::Fence& f, Step& st, int, const std::string&);
  void op(const ptx::ClusterBarrier&, Step& st, int, const std::string&);
  void op(const ptx::Store& w, Step& st, int cta, const std::string& where);
  void op(const ptx::TensormapOp&, Step& st, int, const std::string&);

  Plan p_;
  std::map<std::string, Sym> syms_;
  std::map<std::string, int> regs_;
  std::map<std::string, uint32_t> map_index_;
  uint64_t need_ = 0;
  int step_alloc_ = -1;
};

}  // namespace tmakit::gpu::detail
