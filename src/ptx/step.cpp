// The decoder (step.hpp): the one place after the parser that reads qualifier text and
// operand names, each by the name the table gives its slot or operand.
#include "tmakit/ptx/step.hpp"

#include <stdexcept>

namespace tmakit::ptx {
namespace {

Space space_of(std::string_view q) {
  if (q == ".global") return Space::global;
  if (q == ".shared::cluster") return Space::shared_cluster;
  return Space::shared_cta;  // ".shared", ".shared::cta", or an absent (default) space
}

LoadMode load_mode_of(std::string_view q) {
  if (q == ".tile::gather4") return LoadMode::gather4;
  if (q == ".tile::scatter4") return LoadMode::scatter4;
  if (q == ".im2col") return LoadMode::im2col;
  if (q == ".im2col::w") return LoadMode::im2col_w;
  if (q == ".im2col::w::128") return LoadMode::im2col_w_128;
  if (q == ".im2col_no_offs") return LoadMode::im2col_no_offs;
  return LoadMode::tile;
}

Scope scope_of(const spec::Selection& sel) { return sel.get("scope") == ".cluster" ? Scope::cluster : Scope::cta; }

struct Decoder {
  const Instruction& inst;
  const spec::Selection& sel = inst.sel;

  std::optional<Operand> opt(std::string_view name) const {
    if (const Operand* o = inst.operand(name)) return *o;
    return std::nullopt;
  }
  Operand req(std::string_view name) const {
    if (const Operand* o = inst.operand(name)) return *o;
    // The parser checked every required operand against the table: this is a table bug.
    throw std::logic_error("ptx::decode: " + std::string(inst.form().id) + " has no operand " + std::string(name));
  }
  spec::RedOp red_op() const { return *spec::parse_red_op(sel.get("redOp").substr(1)); }

  Body body() const {
    using spec::Op;
    const std::string_view opcode = inst.form().opcode;
    switch (inst.op()) {
      case Op::bulk_copy:
        return BulkCopy{space_of(sel.get("dst")), space_of(sel.get("src")), sel.has(".multicast::cluster"),
                        req("dstMem"), req("srcMem"), req("size"), opt("mbar"), opt("ctaMask"), opt("cache-policy"),
                        opt("byteMask")};
      case Op::bulk_reduce:
        return BulkReduce{space_of(sel.get("dst")), red_op(), *spec::parse_red_type(sel.get("type").substr(1)),
                          sel.has(".noftz"), req("dstMem"), req("srcMem"), req("size"), opt("mbar"), opt("cache-policy")};
      case Op::bulk_prefetch: return BulkPrefetch{req("srcMem"), req("size"), opt("cache-policy")};
      case Op::tensor_load: case Op::tensor_store: case Op::tensor_reduce: case Op::tensor_prefetch: {
        TensorCopy t;
        t.kind = inst.op() == Op::tensor_load    ? TensorCopy::Kind::load
                 : inst.op() == Op::tensor_store ? TensorCopy::Kind::store
                 : inst.op() == Op::tensor_reduce ? TensorCopy::Kind::reduce
                                                  : TensorCopy::Kind::prefetch;
        t.dim = sel.dim();
        t.mode = load_mode_of(sel.get("load_mode"));
        t.dst = space_of(sel.get("dst").empty() ? ".global" : sel.get("dst"));
        t.multicast = sel.has(".multicast::cluster");
        t.cta_group = sel.has(".cta_group::2") ? 2 : sel.has(".cta_group::1") ? 1 : 0;
        if (t.kind == TensorCopy::Kind::reduce) t.red = red_op();
        t.tensor = req("[tensorMap, tensorCoords]");
        t.dstMem = opt("dstMem");
        t.srcMem = opt("srcMem");
        t.mbar = opt("mbar");
        t.ctaMask = opt("ctaMask");
        t.im2colInfo = opt("im2colInfo");
        t.policy = opt("cache-policy");
        return t;
      }
      case Op::commit_group: return CommitGroup{};
      case Op::wait_group: return WaitGroup{sel.has(".read"), req("N")};
      case Op::mbar_init: return MbarInit{req("addr"), req("count")};
      case Op::mbar_arrive: {
        MbarArrive a;
        a.drop = opcode.starts_with("mbarrier.arrive_drop");
        a.expect_tx = opcode.ends_with(".expect_tx");
        a.no_complete = opcode.ends_with(".noComplete");
        a.space = space_of(sel.get("state_space"));
        a.scope = scope_of(sel);
        a.state = req("state");
        a.addr = req("addr");
        a.count = opt("count");
        a.txCount = opt("txCount");
        return a;
      }
      case Op::mbar_expect_tx: case Op::mbar_complete_tx:
        return MbarTx{inst.op() == Op::mbar_complete_tx, space_of(sel.get("state_space")), req("addr"), req("txCount")};
      case Op::mbar_test_wait: case Op::mbar_try_wait: {
        MbarWait w;
        w.blocking = inst.op() == Op::mbar_try_wait;
        w.parity = inst.operand("phaseParity") != nullptr;
        w.scope = scope_of(sel);
        w.waitComplete = req("waitComplete");
        w.addr = req("addr");
        w.phase = req(w.parity ? "phaseParity" : "state");
        w.suspendTimeHint = opt("suspendTimeHint");
        return w;
      }
      case Op::mbar_pending_count: return MbarPendingCount{req("count"), req("state")};
      case Op::mbar_inval: return MbarInval{req("addr")};
      case Op::fence: {
        Fence f;
        if (inst.form().id == "fence.mbarrier_init") {
          f.kind = Fence::Kind::mbarrier_init;
        } else if (!sel.get("state_space").empty()) {
          f.space = space_of(sel.get("state_space"));
        }
        return f;
      }
      case Op::cluster_barrier: return ClusterBarrier{inst.form().id == "barrier.cluster.wait"};
      case Op::store: {
        const std::string_view type = sel.get("type");  // .b8 .b16 .b32 .b64
        const int bytes = type == ".b8" ? 1 : type == ".b16" ? 2 : type == ".b32" ? 4 : 8;
        return Store{space_of(sel.get("state_space")), bytes, req("addr"), req("value")};
      }
      case Op::tensormap: return TensormapOp{};
    }
    throw std::logic_error("ptx::decode: unknown operation");
  }
};

}  // namespace

Step decode(Instruction inst) {
  Body body = Decoder{inst}.body();
  std::string mnemonic = spec::canonical_mnemonic(inst.sel);
  return Step{std::move(inst), std::move(body), std::move(mnemonic)};
}

namespace {

using Role = OperandSlot::Role;

struct SlotList {
  std::vector<OperandSlot> out;
  void value(std::string_view n, Operand& o) { out.push_back({n, &o, Role::value}); }
  void value(std::string_view n, std::optional<Operand>& o) {
    if (o) value(n, *o);
  }
  void address(std::string_view n, Operand& o, Space s) { out.push_back({n, &o, Role::address, s}); }
  void address(std::string_view n, std::optional<Operand>& o, Space s) {
    if (o) address(n, *o, s);
  }
  void destination(std::string_view n, Operand& o) { out.push_back({n, &o, Role::destination}); }

  void operator()(BulkCopy& b) {
    address("dstMem", b.dstMem, b.dst);
    address("srcMem", b.srcMem, b.src);
    value("size", b.size);
    // A copy into shared::cta signals a barrier there; every other one names it in the cluster.
    address("mbar", b.mbar, b.dst == Space::shared_cta ? Space::shared_cta : Space::shared_cluster);
    value("ctaMask", b.ctaMask);
    value("cache-policy", b.policy);
    value("byteMask", b.byteMask);
  }
  void operator()(BulkReduce& b) {
    address("dstMem", b.dstMem, b.dst);
    address("srcMem", b.srcMem, Space::shared_cta);
    value("size", b.size);
    address("mbar", b.mbar, Space::shared_cluster);
    value("cache-policy", b.policy);
  }
  void operator()(BulkPrefetch& b) {
    address("srcMem", b.srcMem, Space::global);
    value("size", b.size);
    value("cache-policy", b.policy);
  }
  void operator()(TensorCopy& t) {
    address("dstMem", t.dstMem, t.dst);
    out.push_back({"[tensorMap, tensorCoords]", &t.tensor, Role::tensor});
    address("srcMem", t.srcMem, Space::shared_cta);
    address("mbar", t.mbar, t.dst);
    if (t.im2colInfo) out.push_back({"im2colInfo", &*t.im2colInfo, Role::vector});
    value("ctaMask", t.ctaMask);
    value("cache-policy", t.policy);
  }
  void operator()(CommitGroup&) {}
  void operator()(WaitGroup& w) { value("N", w.n); }
  void operator()(MbarInit& m) {
    address("addr", m.addr, Space::shared_cta);
    value("count", m.count);
  }
  void operator()(MbarArrive& a) {
    destination("state", a.state);
    address("addr", a.addr, a.space);
    value("count", a.count);
    value("txCount", a.txCount);
  }
  void operator()(MbarTx& m) {
    address("addr", m.addr, m.space);
    value("txCount", m.txCount);
  }
  void operator()(MbarWait& w) {
    destination("waitComplete", w.waitComplete);
    address("addr", w.addr, Space::shared_cta);
    value(w.parity ? "phaseParity" : "state", w.phase);
    value("suspendTimeHint", w.suspendTimeHint);
  }
  void operator()(MbarPendingCount& c) {
    destination("count", c.count);
    value("state", c.state);
  }
  void operator()(MbarInval& m) { address("addr", m.addr, Space::shared_cta); }
  void operator()(Fence&) {}
  void operator()(ClusterBarrier&) {}
  void operator()(Store& st) {
    address("addr", st.addr, st.space);
    value("value", st.value);
  }
  void operator()(TensormapOp&) {}
};

}  // namespace

std::vector<OperandSlot> operand_slots(Step& step) {
  SlotList list;
  std::visit(list, step.body);
  return std::move(list.out);
}

std::vector<const Operand*> destinations(const Step& step) {
  if (const auto* a = std::get_if<MbarArrive>(&step.body)) return {&a->state};
  if (const auto* w = std::get_if<MbarWait>(&step.body)) return {&w->waitComplete};
  if (const auto* c = std::get_if<MbarPendingCount>(&step.body)) return {&c->count};
  return {};
}

std::string_view name(LoadMode m) {
  switch (m) {
    case LoadMode::tile: return ".tile";
    case LoadMode::gather4: return ".tile::gather4";
    case LoadMode::scatter4: return ".tile::scatter4";
    case LoadMode::im2col: return ".im2col";
    case LoadMode::im2col_w: return ".im2col::w";
    case LoadMode::im2col_w_128: return ".im2col::w::128";
    case LoadMode::im2col_no_offs: return ".im2col_no_offs";
  }
  return "";
}

std::string_view name(Space s) {
  switch (s) {
    case Space::global: return ".global";
    case Space::shared_cta: return ".shared::cta";
    case Space::shared_cluster: return ".shared::cluster";
  }
  return "";
}

}  // namespace tmakit::ptx
