// One GPU step record per decoded step (ptx/step.hpp) or libcu++ call: the operation's code,
// flags and operands, each operand evaluated by the translator (translator.hpp).
#include "translator.hpp"

namespace tmakit::gpu::detail {

Step Translator::translate(const ptx::Step& step, int cta, int thread, const std::string& where) {
  step_alloc_ = -1;
  Step st;
  st.cta = static_cast<uint8_t>(cta);
  st.thread = static_cast<uint8_t>(thread);
  if (const auto& g = step.guard()) {
    st.guard_reg = static_cast<int16_t>(regs_.at(g->predicate));
    st.guard_negated = g->negated;
  }
  std::visit([&](const auto& body) { op(body, st, cta, where); }, step.body);
  if (st.code == kNop && std::holds_alternative<ptx::TensormapOp>(step.body))
    unsupported(std::string(step.inst.form().opcode), where);
  return st;
}

// .L2::cache_hint: the policy operand, present exactly when the hint is chosen.
void Translator::policy(const std::optional<ptx::Operand>& p, Step& st, const std::string& where) {
  if (!p) return;
  st.flags |= kHint;
  st.policy = static_cast<uint64_t>(integer(*p, "cache-policy", where));
}

void Translator::op(const ptx::BulkPrefetch& b, Step& st, int, const std::string& where) {
  policy(b.policy, st, where);
  st.code = kBulkPrefetch;
  st.gaddr = global(b.srcMem, "srcMem", where);
  st.size = u32(b.size, "size", where);
}
void Translator::op(const ptx::CommitGroup&, Step& st, int, const std::string&) { st.code = kCommitGroup; }
void Translator::op(const ptx::WaitGroup& w, Step& st, int, const std::string& where) {
  st.code = kWaitGroup;
  st.size = u32(w.n, "N", where);
  if (st.size > 7) unsupported("wait_group N = " + std::to_string(st.size) + " (N is compiled in: 0..7)", where);
  if (w.read) st.flags |= kRead;
}
void Translator::op(const ptx::MbarInit& m, Step& st, int cta, const std::string& where) {
  st.code = kMbarInit;
  st.smem = shared_cta(m.addr, cta, "addr", where);
  st.size = u32(m.count, "count", where);
  touch(st.smem, 8);
}
void Translator::op(const ptx::MbarTx& m, Step& st, int cta, const std::string& where) {
  st.code = m.complete ? kMbarCompleteTx : kMbarExpectTx;
  if (m.space == ptx::Space::shared_cluster) {
    st.flags |= kRemote;
    std::tie(st.smem_rank, st.smem) = shared_cluster(m.addr, cta, "addr", where);
  } else {
    st.smem = shared_cta(m.addr, cta, "addr", where);
  }
  st.size = u32(m.txCount, "txCount", where);
  touch(st.smem, 8);
}
void Translator::op(const ptx::MbarWait& w, Step& st, int cta, const std::string& where) {
  st.code = w.blocking ? kMbarTryWait : kMbarTestWait;
  if (w.parity) st.flags |= kParity;
  if (w.scope == ptx::Scope::cluster) st.flags |= kClusterScope;
  st.smem = shared_cta(w.addr, cta, "addr", where);
  touch(st.smem, 8);
  const ptx::Operand& v = w.phase;
  if (!v.expr.is_immediate() && dynamic(v.expr.symbol) && v.expr.offset == 0)
    st.src_reg = static_cast<int16_t>(regs_.at(v.expr.symbol));
  else
    st.value = static_cast<uint64_t>(integer(v, "state", where));
  if (w.waitComplete.kind == ptx::Operand::Kind::value)
    st.dst_reg = static_cast<int16_t>(regs_.at(w.waitComplete.expr.symbol));
}
void Translator::op(const ptx::MbarInval& m, Step& st, int cta, const std::string& where) {
  st.code = kMbarInval;
  st.smem = shared_cta(m.addr, cta, "addr", where);
}
void Translator::op(const ptx::MbarPendingCount&, Step&, int, const std::string& where) {
  unsupported("mbarrier.pending_count", where);
}
void Translator::op(const ptx::TensormapOp&, Step& st, int, const std::string&) { st.code = kNop; }  // refused by translate()
void Translator::op(const ptx::Fence& f, Step& st, int, const std::string&) {
  if (f.kind == ptx::Fence::Kind::mbarrier_init) {
    st.code = kFenceMbarInit;
    return;
  }
  st.code = kFenceProxyAsync;
  if (f.space == ptx::Space::global) st.flags |= kSpaceGlobal;
  else if (f.space == ptx::Space::shared_cluster) st.flags |= kSpaceCluster;
}
// The sequencer already orders every step (release/acquire at GPU scope); executing the
// program's own barrier.cluster would mix with the kernel's.
void Translator::op(const ptx::ClusterBarrier&, Step& st, int, const std::string&) { st.code = kNop; }
void Translator::op(const ptx::Store& w, Step& st, int cta, const std::string& where) {
  st.size = static_cast<uint32_t>(w.bytes);
  st.value = static_cast<uint64_t>(integer(w.value, "value", where));
  if (w.space == ptx::Space::global) {
    st.code = kStGlobal;
    st.gaddr = global(w.addr, "addr", where);
  } else {
    st.code = kStShared;
    st.smem = shared_cta(w.addr, cta, "addr", where);
    touch(st.smem, st.size);
  }
}

// A libcu++ call (scenario-format.md): one record, which the kernel runs through the
// <cuda/barrier> function itself. As for PTX steps nothing is validated beyond what the
// record needs (the model's libcudacxx.* rules are not applied: the hardware judges).
Step Translator::translate_call(const model::LibCall& c, int cta, int thread, const std::string& where) {
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
    return u32(o, key, where);
  };
  const ptx::Operand bar = operand("barrier");
  st.smem = shared_cta(bar, cta, "barrier", where);
  touch(st.smem, 8);
  using K = model::CallKind;
  switch (c.kind) {
    case K::barrier_init: st.code = kLibBarrierInit, st.size = num("expected"); break;
    case K::memcpy_async_tx: {
      st.code = kLibMemcpyAsyncTx;
      st.mbar = st.smem;
      const ptx::Operand dest = operand("dest"), src = operand("src");
      st.smem = shared_cta(dest, cta, "dest", where);
      st.gaddr = global(src, "src", where);
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

void Translator::op(const ptx::TensorCopy& t, Step& st, int cta, const std::string& where) {
  using ptx::LoadMode;
  policy(t.policy, st, where);
  // sm_90 modes: .tile, .im2col (loads, prefetch), .im2col_no_offs (stores, reductions).
  if (t.mode != LoadMode::tile && t.mode != LoadMode::im2col && t.mode != LoadMode::im2col_no_offs)
    unsupported(std::string(ptx::name(t.mode)) + " tensor copies", where);
  if (t.cta_group) unsupported(".cta_group (sm_100)", where);
  if (t.mode != LoadMode::tile) st.flags |= kIm2col;
  if (t.im2colInfo && t.mode == LoadMode::im2col) {
    const ptx::Operand& info = *t.im2colInfo;
    // 16-bit registers in PTX (§4.1): the value range per rank is the hardware's to judge.
    if (info.elems.size() > 3) bad_operand("im2colInfo has more than 3 offsets", where);
    for (size_t i = 0; i < info.elems.size(); ++i) {
      Sym v = eval(info.elems[i], where);
      if (v.kind != SymKind::integer || v.v < 0 || v.v > 0xffff)
        bad_operand("im2colInfo[" + std::to_string(i) + "] is not a .u16 value", where);
      st.off[i] = static_cast<uint16_t>(v.v);
    }
  }
  auto it = map_index_.find(t.tensor.map);
  if (it == map_index_.end()) bad_operand("`" + t.tensor.map + "` is not a tensor map of the scenario", where);
  st.map = it->second;
  const tensor_map::TensorMap& map = p_.maps[st.map];
  st.dim = static_cast<uint8_t>(t.dim);
  const auto& coords = t.tensor.elems;
  if (coords.size() != st.dim || st.dim < 1 || st.dim > 5) unsupported("a coordinate vector of " + std::to_string(coords.size()), where);
  for (size_t i = 0; i < coords.size(); ++i) {
    Sym v = eval(coords[i], where);
    if (v.kind != SymKind::integer || v.v < INT32_MIN || v.v > INT32_MAX)
      bad_operand("tensorCoords[" + std::to_string(i) + "] is not an .s32 value", where);
    st.c[i] = static_cast<int32_t>(v.v);
  }
  const uint64_t footprint = map.smem_footprint();
  switch (t.kind) {
    case ptx::TensorCopy::Kind::load:
      if (t.dst == ptx::Space::shared_cta) {
        st.code = kTensorLoadCta;
        st.smem = shared_cta(*t.dstMem, cta, "dstMem", where);
        st.mbar = shared_cta(*t.mbar, cta, "mbar", where);
      } else {
        st.code = kTensorLoadCluster;
        std::tie(st.smem_rank, st.smem) = shared_cluster(*t.dstMem, cta, "dstMem", where);
        std::tie(st.mbar_rank, st.mbar) = shared_cluster(*t.mbar, cta, "mbar", where);
        if (t.multicast) {
          st.flags |= kMulticast;
          st.mask = static_cast<uint16_t>(integer(*t.ctaMask, "ctaMask", where));
        }
      }
      touch(st.smem, footprint);
      touch(st.mbar, 8);
      break;
    case ptx::TensorCopy::Kind::store: case ptx::TensorCopy::Kind::reduce:
      st.code = t.kind == ptx::TensorCopy::Kind::store ? kTensorStore : kTensorReduce;
      st.smem = shared_cta(*t.srcMem, cta, "srcMem", where);
      if (st.code == kTensorReduce) st.red = static_cast<uint8_t>(*t.red);
      touch(st.smem, footprint);
      break;
    case ptx::TensorCopy::Kind::prefetch: st.code = kTensorPrefetch; break;
  }
}

void Translator::op(const ptx::BulkCopy& b, Step& st, int cta, const std::string& where) {
  policy(b.policy, st, where);
  st.size = u32(b.size, "size", where);
  if (b.dst == ptx::Space::global) {
    if (b.byteMask) unsupported(".cp_mask (sm_100)", where);
    st.code = kBulkStore;
    st.smem = shared_cta(b.srcMem, cta, "srcMem", where);
    st.gaddr = global(b.dstMem, "dstMem", where);
    touch(st.smem, st.size);
    return;
  }
  if (b.dst == ptx::Space::shared_cta) {
    st.code = kBulkLoadCta;
    st.smem = shared_cta(b.dstMem, cta, "dstMem", where);
    st.mbar = shared_cta(*b.mbar, cta, "mbar", where);
  } else {
    std::tie(st.smem_rank, st.smem) = shared_cluster(b.dstMem, cta, "dstMem", where);
    std::tie(st.mbar_rank, st.mbar) = shared_cluster(*b.mbar, cta, "mbar", where);
    if (b.src == ptx::Space::shared_cta) {
      st.code = kBulkCopyPeer;
      st.smem2 = shared_cta(b.srcMem, cta, "srcMem", where);
      touch(st.smem2, st.size);
    } else {
      st.code = kBulkLoadCluster;
      if (b.multicast) {
        st.flags |= kMulticast;
        st.mask = static_cast<uint16_t>(integer(*b.ctaMask, "ctaMask", where));
      }
    }
  }
  if (st.code != kBulkCopyPeer) st.gaddr = global(b.srcMem, "srcMem", where);
  touch(st.smem, st.size);
  touch(st.mbar, 8);
}

void Translator::op(const ptx::BulkReduce& b, Step& st, int cta, const std::string& where) {
  policy(b.policy, st, where);
  const std::string op = "." + std::string(spec::name(b.red)) + (b.noftz ? ".noftz" : "");
  const std::string type = "." + std::string(spec::name(b.type));
  st.size = u32(b.size, "size", where);
  int code = -1;
  if (b.dst == ptx::Space::global) {
    st.code = kBulkReduceGlobal;
#define TK_MATCH(name, OP, TYPE, ...) \
if (op == OP && type == TYPE) code = kG_##name;
    TMAKIT_GPU_BULK_RED_GLOBAL(TK_MATCH)
#undef TK_MATCH
    st.gaddr = global(b.dstMem, "dstMem", where);
    st.smem = shared_cta(b.srcMem, cta, "srcMem", where);
    touch(st.smem, st.size);
  } else {
    st.code = kBulkReduceCluster;
#define TK_MATCH(name, OP, TYPE, ...) \
if (op == OP && type == TYPE) code = kC_##name;
    TMAKIT_GPU_BULK_RED_CLUSTER(TK_MATCH)
#undef TK_MATCH
    std::tie(st.smem_rank, st.smem) = shared_cluster(b.dstMem, cta, "dstMem", where);
    std::tie(st.mbar_rank, st.mbar) = shared_cluster(*b.mbar, cta, "mbar", where);
    st.smem2 = shared_cta(b.srcMem, cta, "srcMem", where);
    touch(st.smem, st.size);
    touch(st.smem2, st.size);
  }
  if (code < 0) unsupported("the reduction " + op + type + " for this direction", where);
  st.red = static_cast<uint8_t>(code);
}

void Translator::op(const ptx::MbarArrive& a, Step& st, int cta, const std::string& where) {
  if (a.no_complete) unsupported("mbarrier.arrive.noComplete", where);
  st.code = kMbarArrive;
  if (a.drop) st.flags |= kDrop;
  if (a.scope == ptx::Scope::cluster) st.flags |= kClusterScope;
  if (a.space == ptx::Space::shared_cluster) {
    st.flags |= kRemote;
    std::tie(st.smem_rank, st.smem) = shared_cluster(a.addr, cta, "addr", where);
  } else {
    st.smem = shared_cta(a.addr, cta, "addr", where);
  }
  touch(st.smem, 8);
  if (a.expect_tx) {
    st.flags |= kExpectTx;
    st.size = u32(*a.txCount, "txCount", where);
  } else if (a.count) {
    st.flags |= kHasCount;
    st.size = u32(*a.count, "count", where);
  }
  if (a.state.kind == ptx::Operand::Kind::value) st.dst_reg = static_cast<int16_t>(regs_.at(a.state.expr.symbol));
}

}  // namespace tmakit::gpu::detail
