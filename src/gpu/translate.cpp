// Scenario → GPU step records. Every operand is resolved here, as the model's
// runner resolves it (src/scenario/runner.cpp): symbols, `sym+imm`, shared
// offsets and ranks, global allocations (their device bases are added by the
// worker). Nothing is validated beyond what the translation needs: on the GPU
// engine the hardware is the judge, so an instruction the model calls undefined
// (H7, H9, H14, H15) still runs, and faults there.
#include <charconv>
#include <map>

#include "engine_translate.hpp"
#include "tmakit/ptx/instruction.hpp"

namespace tmakit::gpu::detail {
namespace {

[[noreturn]] void unsupported(const std::string& what, const std::string& where) {
  throw DiagnosticError({Severity::error, "gpu.unsupported", what + " (docs/gpu-engine.md lists what the GPU engine runs)", where});
}
[[noreturn]] void bad_operand(const std::string& what, const std::string& where) {
  throw DiagnosticError({Severity::error, "gpu.operand", what, where});
}

struct Sym {
  enum Kind { integer, shared, cluster, global } kind = integer;
  int64_t v = 0;   // integer, shared offset, or offset into `alloc`
  int rank = -1;   // cluster: the CTA rank
  int alloc = -1;  // global: the allocation's index
};

// scenario-format.md `symbols`, parsed by the scenario layer; globals become allocation indices.
Sym gpu_symbol(const nlohmann::json& v, const std::string& where, const scenario::Scenario& s) {
  scenario::SymbolValue sv = scenario::parse_symbol(v, where, s);
  switch (sv.kind) {
    case scenario::SymbolValue::Kind::integer: return {Sym::integer, sv.v};
    case scenario::SymbolValue::Kind::shared: return {Sym::shared, sv.v};
    case scenario::SymbolValue::Kind::cluster: return {Sym::cluster, sv.v, sv.rank};
    case scenario::SymbolValue::Kind::global: break;
  }
  int alloc = 0;
  while (s.globals[alloc].name != sv.global) ++alloc;
  return {Sym::global, sv.v, -1, alloc};
}

class Translator {
 public:
  explicit Translator(const scenario::Scenario& s) : s_(s) {}

  Plan run() {
    p_.scenario = &s_;
    if (s_.ctas < 1 || s_.ctas > kMaxCtas) unsupported("a cluster of " + std::to_string(s_.ctas) + " CTAs", "scenario.cluster");
    for (const auto& [name, v] : s_.symbols) syms_[name] = gpu_symbol(v, "scenario.symbols." + name, s_);
    for (const auto& [name, src] : s_.maps) {
      int alloc = -1;
      if (!src.global.empty()) {
        for (size_t i = 0; i < s_.globals.size(); ++i)
          if (s_.globals[i].name == src.global) alloc = static_cast<int>(i);
        if (alloc < 0)
          throw scenario::InputError({Severity::error, "scenario.field", "no global allocation named \"" + src.global + "\"",
                                      "scenario.tensor_maps." + name + ".global"});
      }
      map_index_[name] = static_cast<uint32_t>(p_.maps.size());
      p_.map_names.push_back(name);
      tensor_map::TensorMap m = src.map;
      if (alloc >= 0) m.global_address = src.offset;
      p_.maps.push_back(m);
      p_.map_alloc.push_back(alloc);
    }
    for (const auto& si : s_.shared_init) touch(si.offset, si.bytes);
    for (const auto& o : s_.outputs)
      if (o.shared) touch(o.offset, o.bytes);

    std::vector<std::optional<ptx::Instruction>> program;
    for (size_t i = 0; i < s_.program.size(); ++i) {
      const auto& st = s_.program[i];
      const std::string where = where_of(i);
      if (st.call) {  // a libcu++ call: its arrival token lives in a register
        if (!st.call->token.empty()) reg(st.call->token);
        program.emplace_back();
        continue;
      }
      Diagnostics d;
      auto inst = ptx::parse_instruction(st.ptx, d, where);
      if (!inst) throw DiagnosticError(d.front());
      for (const auto& diag : ptx::check(*inst, s_.target, s_.ptx_version))
        if (diag.severity == Severity::error) throw DiagnosticError({diag.severity, diag.rule, diag.message, where});
      // Destinations (predicates, state tokens) and guards live in registers at run time.
      for (size_t k = 0; k < inst->operands.size(); ++k) {
        const auto* spec = inst->operand_specs[k];
        if (spec && (spec->kind == spec::OperandKind::state || spec->kind == spec::OperandKind::predicate) &&
            inst->operands[k].kind == ptx::Operand::Kind::value)
          reg(inst->operands[k].expr.symbol);
      }
      if (inst->guard) reg(inst->guard->predicate);
      program.push_back(std::move(*inst));
    }
    int max_thread = 0;
    for (size_t i = 0; i < program.size(); ++i) {
      const auto& st = s_.program[i];
      if (st.cta < 0 || st.cta >= s_.ctas)
        bad_operand("step names CTA " + std::to_string(st.cta) + " of a cluster of " + std::to_string(s_.ctas), where_of(i));
      if (st.thread < 0 || st.thread > 255) unsupported("thread " + std::to_string(st.thread) + " (the GPU engine runs threads 0..255)", where_of(i));
      max_thread = std::max(max_thread, st.thread);
      p_.steps.push_back(st.call ? translate_call(*st.call, st.cta, st.thread, where_of(i))
                                 : translate(*program[i], st.cta, st.thread, where_of(i)));
      p_.step_alloc.push_back(step_alloc_);
    }
    p_.threads = (max_thread / 32 + 1) * 32;
    if (need_ > s_.shared_bytes) need_ = s_.shared_bytes;  // the program's own range errors are the hardware's
    p_.shared_need = static_cast<uint32_t>((need_ + 15) / 16 * 16);
    return std::move(p_);
  }

 private:
  static std::string where_of(size_t i) { return "program[" + std::to_string(i) + "]"; }

  void touch(uint64_t off, uint64_t bytes) { need_ = std::max(need_, off + bytes); }

  int reg(const std::string& name) {
    auto it = regs_.find(name);
    if (it != regs_.end()) return it->second;
    if (static_cast<int>(p_.reg_init.size()) >= kMaxRegs) unsupported("more than 64 predicate/state symbols", "scenario");
    unsigned long long init = 0;
    if (auto s = syms_.find(name); s != syms_.end() && s->second.kind == Sym::integer) init = static_cast<unsigned long long>(s->second.v);
    regs_[name] = static_cast<int>(p_.reg_init.size());
    p_.reg_init.push_back(init);
    return regs_[name];
  }
  bool dynamic(const std::string& name) const { return regs_.count(name) != 0; }

  Sym eval(const ptx::Expr& e, const std::string& where) const {
    if (e.is_immediate()) return {Sym::integer, e.offset};
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
  int64_t integer(const ptx::Operand* o, const std::string& what, const std::string& where) const {
    Sym v = eval(o->expr, where);
    if (v.kind != Sym::integer) bad_operand(what + " must be an integer", where);
    return v.v;
  }
  uint32_t u32(const ptx::Operand* o, const std::string& what, const std::string& where) const {
    int64_t v = integer(o, what, where);
    if (v < 0 || v > 0xffffffffll) bad_operand(what + " = " + std::to_string(v) + " is not a u32", where);
    return static_cast<uint32_t>(v);
  }
  // A .shared::cta operand: an offset in the executing CTA's window.
  uint32_t shared_cta(const ptx::Operand* o, int cta, const std::string& what, const std::string& where) {
    Sym v = eval(o->expr, where);
    if (v.kind == Sym::cluster && v.rank != cta)
      bad_operand(what + " is a .shared::cta operand but names CTA " + std::to_string(v.rank) + "'s memory", where);
    if (v.kind != Sym::shared && v.kind != Sym::cluster) bad_operand(what + " must be a shared address", where);
    if (v.v < 0 || v.v >= static_cast<int64_t>(s_.shared_bytes))
      bad_operand(what + " at shared offset " + std::to_string(v.v) + " is outside the window", where);
    return static_cast<uint32_t>(v.v);
  }
  // A .shared::cluster operand: (rank or kSelf, offset).
  std::pair<uint8_t, uint32_t> shared_cluster(const ptx::Operand* o, int cta, const std::string& what, const std::string& where) {
    Sym v = eval(o->expr, where);
    if (v.kind != Sym::shared && v.kind != Sym::cluster) bad_operand(what + " must be a shared address", where);
    if (v.v < 0 || v.v >= static_cast<int64_t>(s_.shared_bytes))
      bad_operand(what + " at shared offset " + std::to_string(v.v) + " is outside the window", where);
    uint8_t rank = v.kind == Sym::cluster && v.rank != cta ? static_cast<uint8_t>(v.rank) : kSelf;
    return {rank, static_cast<uint32_t>(v.v)};
  }
  // A global address: the allocation's offset (the worker adds the device base), or a raw integer.
  uint64_t global(const ptx::Operand* o, const std::string& what, const std::string& where) {
    Sym v = eval(o->expr, where);
    if (v.kind == Sym::shared || v.kind == Sym::cluster) bad_operand(what + " must be a global address", where);
    step_alloc_ = v.alloc;
    return static_cast<uint64_t>(v.v);
  }

  Step translate(const ptx::Instruction& inst, int cta, int thread, const std::string& where) {
    step_alloc_ = -1;
    Step st;
    st.cta = static_cast<uint8_t>(cta);
    st.thread = static_cast<uint8_t>(thread);
    if (inst.guard) {
      st.guard_reg = static_cast<int16_t>(regs_.at(inst.guard->predicate));
      st.guard_negated = inst.guard->negated;
    }
    const auto& sel = inst.sel;
    const std::string_view id = inst.form().id;
    const bool hint = sel.has(".L2::cache_hint");
    if (hint) {
      st.flags |= kHint;
      st.policy = static_cast<uint64_t>(integer(inst.operand("cache-policy"), "cache-policy", where));
    }
    using spec::Op;
    switch (inst.op()) {
      case Op::tensor_load: case Op::tensor_store: case Op::tensor_reduce: case Op::tensor_prefetch:
        tensor(inst, st, cta, where);
        break;
      case Op::bulk_copy: bulk(inst, st, cta, where); break;
      case Op::bulk_reduce: bulk_reduce(inst, st, cta, where); break;
      case Op::bulk_prefetch:
        st.code = kBulkPrefetch;
        st.gaddr = global(inst.operand("srcMem"), "srcMem", where);
        st.size = u32(inst.operand("size"), "size", where);
        break;
      case Op::commit_group: st.code = kCommitGroup; break;
      case Op::wait_group: {
        st.code = kWaitGroup;
        st.size = u32(inst.operand("N"), "N", where);
        if (st.size > 7) unsupported("wait_group N = " + std::to_string(st.size) + " (N is compiled in: 0..7)", where);
        if (sel.has(".read")) st.flags |= kRead;
        break;
      }
      case Op::mbar_init:
        st.code = kMbarInit;
        st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
        st.size = u32(inst.operand("count"), "count", where);
        touch(st.smem, 8);
        break;
      case Op::mbar_arrive: arrive(inst, st, cta, where); break;
      case Op::mbar_expect_tx: case Op::mbar_complete_tx: {
        st.code = inst.op() == Op::mbar_expect_tx ? kMbarExpectTx : kMbarCompleteTx;
        if (sel.get("state_space") == ".shared::cluster") {
          st.flags |= kRemote;
          std::tie(st.smem_rank, st.smem) = shared_cluster(inst.operand("addr"), cta, "addr", where);
        } else {
          st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
        }
        st.size = u32(inst.operand("txCount"), "txCount", where);
        touch(st.smem, 8);
        break;
      }
      case Op::mbar_test_wait: case Op::mbar_try_wait: {
        st.code = inst.op() == Op::mbar_try_wait ? kMbarTryWait : kMbarTestWait;
        if (id.find(".parity") != std::string_view::npos) st.flags |= kParity;
        if (sel.get("scope") == ".cluster") st.flags |= kClusterScope;
        st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
        touch(st.smem, 8);
        const ptx::Operand* v = inst.operand(st.flags & kParity ? "phaseParity" : "state");
        if (!v->expr.is_immediate() && dynamic(v->expr.symbol) && v->expr.offset == 0)
          st.src_reg = static_cast<int16_t>(regs_.at(v->expr.symbol));
        else
          st.value = static_cast<uint64_t>(integer(v, "state", where));
        const ptx::Operand* dst = inst.operand("waitComplete");
        if (dst && dst->kind == ptx::Operand::Kind::value) st.dst_reg = static_cast<int16_t>(regs_.at(dst->expr.symbol));
        break;
      }
      case Op::mbar_inval:
        st.code = kMbarInval;
        st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
        break;
      case Op::mbar_pending_count: unsupported("mbarrier.pending_count", where);
      case Op::tensormap: unsupported(std::string(inst.form().opcode), where);
      case Op::fence:
        if (id == "fence.proxy.async") {
          st.code = kFenceProxyAsync;
          if (sel.get("state_space") == ".global") st.flags |= kSpaceGlobal;
          else if (sel.get("state_space") == ".shared::cluster") st.flags |= kSpaceCluster;
        } else {
          st.code = kFenceMbarInit;
        }
        break;
      case Op::cluster_barrier:
        // The sequencer already orders every step (release/acquire at GPU scope);
        // executing the program's own barrier.cluster would mix with the kernel's.
        st.code = kNop;
        break;
      case Op::store: {
        const std::string_view type = sel.get("type");
        st.size = type == ".b8" ? 1 : type == ".b16" ? 2 : type == ".b32" ? 4 : 8;
        st.value = static_cast<uint64_t>(integer(inst.operand("value"), "value", where));
        if (id == "st.global") {
          st.code = kStGlobal;
          st.gaddr = global(inst.operand("addr"), "addr", where);
        } else {
          st.code = kStShared;
          st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
          touch(st.smem, st.size);
        }
        break;
      }
    }
    return st;
  }

  // A libcu++ call (scenario-format.md): one record, which the kernel runs through the
  // <cuda/barrier> function itself. As for PTX steps nothing is validated beyond what the
  // record needs (the model's libcudacxx.* rules are not applied: the hardware judges).
  Step translate_call(const model::LibCall& c, int cta, int thread, const std::string& where) {
    step_alloc_ = -1;
    Step st;
    st.cta = static_cast<uint8_t>(cta);
    st.thread = static_cast<uint8_t>(thread);
    auto operand = [&](const char* key) {
      ptx::Operand o;
      o.expr = c.args.at(key);
      return o;
    };
    auto num = [&](const char* key) {
      const ptx::Operand o = operand(key);
      return u32(&o, key, where);
    };
    const ptx::Operand bar = operand("barrier");
    st.smem = shared_cta(&bar, cta, "barrier", where);
    touch(st.smem, 8);
    using K = model::CallKind;
    switch (c.kind) {
      case K::barrier_init: st.code = kLibBarrierInit, st.size = num("expected"); break;
      case K::memcpy_async_tx: {
        st.code = kLibMemcpyAsyncTx;
        st.mbar = st.smem;
        const ptx::Operand dest = operand("dest"), src = operand("src");
        st.smem = shared_cta(&dest, cta, "dest", where);
        st.gaddr = global(&src, "src", where);
        st.size = num("size");
        st.value = num("alignment");  // aligned_size_t<Alignment> is a template argument: 16 .. 4096 compiled in
        if (st.value < 16 || st.value > 4096 || (st.value & (st.value - 1)))
          unsupported("memcpy_async_tx with alignment " + std::to_string(st.value) + " (16 .. 4096, powers of two)", where);
        touch(st.smem, st.size);
        break;
      }
      case K::barrier_arrive_tx: st.code = kLibArriveTx, st.value = num("arrive_count"), st.size = num("tx_count"); break;
      case K::barrier_expect_tx: st.code = kLibExpectTx, st.size = num("tx_count"); break;
      case K::barrier_arrive: st.code = kLibArrive, st.size = c.args.count("count") ? num("count") : 1; break;
      case K::barrier_wait: st.code = kLibWait, st.src_reg = static_cast<int16_t>(regs_.at(c.token)); break;
      case K::barrier_arrive_and_wait: st.code = kLibArriveAndWait; break;
    }
    if ((c.kind == K::barrier_arrive || c.kind == K::barrier_arrive_tx) && !c.token.empty())
      st.dst_reg = static_cast<int16_t>(regs_.at(c.token));
    return st;
  }

  void tensor(const ptx::Instruction& inst, Step& st, int cta, const std::string& where) {
    const auto& sel = inst.sel;
    const std::string_view mode = sel.get("load_mode");
    // sm_90 modes: .tile, .im2col (loads, prefetch), .im2col_no_offs (stores, reductions).
    if (mode != ".tile" && mode != ".im2col" && mode != ".im2col_no_offs")
      unsupported(std::string(mode) + " tensor copies", where);
    if (!sel.get("cta_group").empty()) unsupported(".cta_group (sm_100)", where);
    if (mode != ".tile") st.flags |= kIm2col;
    if (const ptx::Operand* info = inst.operand("im2colInfo"); info && mode == ".im2col") {
      // 16-bit registers in PTX (§4.1): the value range per rank is the hardware's to judge.
      if (info->elems.size() > 3) bad_operand("im2colInfo has more than 3 offsets", where);
      for (size_t i = 0; i < info->elems.size(); ++i) {
        Sym v = eval(info->elems[i], where);
        if (v.kind != Sym::integer || v.v < 0 || v.v > 0xffff)
          bad_operand("im2colInfo[" + std::to_string(i) + "] is not a .u16 value", where);
        st.off[i] = static_cast<uint16_t>(v.v);
      }
    }
    const ptx::Operand& t = *inst.operand("[tensorMap, tensorCoords]");
    auto it = map_index_.find(t.map);
    if (it == map_index_.end()) bad_operand("`" + t.map + "` is not a tensor map of the scenario", where);
    st.map = it->second;
    const tensor_map::TensorMap& map = p_.maps[st.map];
    st.dim = static_cast<uint8_t>(sel.dim());
    if (t.elems.size() != st.dim || st.dim < 1 || st.dim > 5) unsupported("a coordinate vector of " + std::to_string(t.elems.size()), where);
    for (size_t i = 0; i < t.elems.size(); ++i) {
      Sym v = eval(t.elems[i], where);
      if (v.kind != Sym::integer || v.v < INT32_MIN || v.v > INT32_MAX)
        bad_operand("tensorCoords[" + std::to_string(i) + "] is not an .s32 value", where);
      st.c[i] = static_cast<int32_t>(v.v);
    }
    const uint64_t footprint = map.smem_footprint();
    switch (inst.op()) {
      case spec::Op::tensor_load:
        if (inst.form().id == "tensor.load.shared::cta") {
          st.code = kTensorLoadCta;
          st.smem = shared_cta(inst.operand("dstMem"), cta, "dstMem", where);
          st.mbar = shared_cta(inst.operand("mbar"), cta, "mbar", where);
        } else {
          st.code = kTensorLoadCluster;
          std::tie(st.smem_rank, st.smem) = shared_cluster(inst.operand("dstMem"), cta, "dstMem", where);
          std::tie(st.mbar_rank, st.mbar) = shared_cluster(inst.operand("mbar"), cta, "mbar", where);
          if (sel.has(".multicast::cluster")) {
            st.flags |= kMulticast;
            st.mask = static_cast<uint16_t>(integer(inst.operand("ctaMask"), "ctaMask", where));
          }
        }
        touch(st.smem, footprint);
        touch(st.mbar, 8);
        break;
      case spec::Op::tensor_store: case spec::Op::tensor_reduce:
        st.code = inst.op() == spec::Op::tensor_store ? kTensorStore : kTensorReduce;
        st.smem = shared_cta(inst.operand("srcMem"), cta, "srcMem", where);
        if (st.code == kTensorReduce) st.red = static_cast<uint8_t>(*spec::parse_red_op(sel.get("redOp").substr(1)));
        touch(st.smem, footprint);
        break;
      default: st.code = kTensorPrefetch; break;
    }
  }

  void bulk(const ptx::Instruction& inst, Step& st, int cta, const std::string& where) {
    const std::string_view id = inst.form().id;
    st.size = u32(inst.operand("size"), "size", where);
    if (id == "bulk.global.shared::cta") {
      if (inst.sel.has(".cp_mask")) unsupported(".cp_mask (sm_100)", where);
      st.code = kBulkStore;
      st.smem = shared_cta(inst.operand("srcMem"), cta, "srcMem", where);
      st.gaddr = global(inst.operand("dstMem"), "dstMem", where);
      touch(st.smem, st.size);
      return;
    }
    if (id == "bulk.shared::cta.global") {
      st.code = kBulkLoadCta;
      st.smem = shared_cta(inst.operand("dstMem"), cta, "dstMem", where);
      st.mbar = shared_cta(inst.operand("mbar"), cta, "mbar", where);
    } else {
      std::tie(st.smem_rank, st.smem) = shared_cluster(inst.operand("dstMem"), cta, "dstMem", where);
      std::tie(st.mbar_rank, st.mbar) = shared_cluster(inst.operand("mbar"), cta, "mbar", where);
      if (id == "bulk.shared::cluster.shared::cta") {
        st.code = kBulkCopyPeer;
        st.smem2 = shared_cta(inst.operand("srcMem"), cta, "srcMem", where);
        touch(st.smem2, st.size);
      } else {
        st.code = kBulkLoadCluster;
        if (inst.sel.has(".multicast::cluster")) {
          st.flags |= kMulticast;
          st.mask = static_cast<uint16_t>(integer(inst.operand("ctaMask"), "ctaMask", where));
        }
      }
    }
    if (st.code != kBulkCopyPeer) st.gaddr = global(inst.operand("srcMem"), "srcMem", where);
    touch(st.smem, st.size);
    touch(st.mbar, 8);
  }

  void bulk_reduce(const ptx::Instruction& inst, Step& st, int cta, const std::string& where) {
    const auto& sel = inst.sel;
    const std::string op = std::string(sel.get("redOp")) + (sel.has(".noftz") ? ".noftz" : "");
    const std::string type(sel.get("type"));
    st.size = u32(inst.operand("size"), "size", where);
    int code = -1;
    if (inst.form().id == "bulk-reduce.global.shared::cta") {
      st.code = kBulkReduceGlobal;
#define TK_MATCH(name, OP, TYPE, ...) \
  if (op == OP && type == TYPE) code = kG_##name;
      TMAKIT_GPU_BULK_RED_GLOBAL(TK_MATCH)
#undef TK_MATCH
      st.gaddr = global(inst.operand("dstMem"), "dstMem", where);
      st.smem = shared_cta(inst.operand("srcMem"), cta, "srcMem", where);
      touch(st.smem, st.size);
    } else {
      st.code = kBulkReduceCluster;
#define TK_MATCH(name, OP, TYPE, ...) \
  if (op == OP && type == TYPE) code = kC_##name;
      TMAKIT_GPU_BULK_RED_CLUSTER(TK_MATCH)
#undef TK_MATCH
      std::tie(st.smem_rank, st.smem) = shared_cluster(inst.operand("dstMem"), cta, "dstMem", where);
      std::tie(st.mbar_rank, st.mbar) = shared_cluster(inst.operand("mbar"), cta, "mbar", where);
      st.smem2 = shared_cta(inst.operand("srcMem"), cta, "srcMem", where);
      touch(st.smem, st.size);
      touch(st.smem2, st.size);
    }
    if (code < 0) unsupported("the reduction " + op + type + " for this direction", where);
    st.red = static_cast<uint8_t>(code);
  }

  void arrive(const ptx::Instruction& inst, Step& st, int cta, const std::string& where) {
    const std::string_view id = inst.form().id;
    if (id.find("noComplete") != std::string_view::npos) unsupported("mbarrier.arrive.noComplete", where);
    st.code = kMbarArrive;
    if (id.rfind("mbarrier.arrive_drop", 0) == 0) st.flags |= kDrop;
    if (inst.sel.get("scope") == ".cluster") st.flags |= kClusterScope;
    if (id.ends_with(".remote")) {
      st.flags |= kRemote;
      std::tie(st.smem_rank, st.smem) = shared_cluster(inst.operand("addr"), cta, "addr", where);
    } else {
      st.smem = shared_cta(inst.operand("addr"), cta, "addr", where);
    }
    touch(st.smem, 8);
    if (id.find("expect_tx") != std::string_view::npos) {
      st.flags |= kExpectTx;
      st.size = u32(inst.operand("txCount"), "txCount", where);
    } else if (const ptx::Operand* c = inst.operand("count")) {
      st.flags |= kHasCount;
      st.size = u32(c, "count", where);
    }
    const ptx::Operand* dst = inst.operand("state");
    if (dst && dst->kind == ptx::Operand::Kind::value) st.dst_reg = static_cast<int16_t>(regs_.at(dst->expr.symbol));
  }

  const scenario::Scenario& s_;
  Plan p_;
  std::map<std::string, Sym> syms_;
  std::map<std::string, int> regs_;
  std::map<std::string, uint32_t> map_index_;
  uint64_t need_ = 0;
  int step_alloc_ = -1;
};

}  // namespace

Plan translate(const scenario::Scenario& s) { return Translator(s).run(); }

}  // namespace tmakit::gpu::detail
