// One instruction decoded once: the table's form, its qualifiers as enums and its operands
// in named slots. The engines (the model, the GPU engine's translator, the layout drawer, the
// check replay) consume a Step and never read qualifier or operand-name text again; `decode`
// is the one place that does, driven by the table's slot and operand names.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tmakit/ptx/instruction.hpp"
#include "tmakit/spec/reduction.hpp"

namespace tmakit::ptx {

enum class Space : uint8_t { global, shared_cta, shared_cluster };
enum class Scope : uint8_t { cta, cluster };
// A tensor copy's load mode; `.tile` is the default of an absent load_mode slot.
enum class LoadMode : uint8_t { tile, gather4, scatter4, im2col, im2col_w, im2col_w_128, im2col_no_offs };

// cp.async.bulk in its four directions (global → shared::cta / shared::cluster, shared::cta →
// shared::cluster, shared::cta → global).
struct BulkCopy {
  Space dst = Space::shared_cta, src = Space::global;
  bool multicast = false;  // .multicast::cluster: ctaMask present
  Operand dstMem, srcMem, size;
  std::optional<Operand> mbar, ctaMask, policy, byteMask;  // byteMask: .cp_mask
};

// cp.reduce.async.bulk: into another CTA's shared memory (mbarrier) or into global (bulk group).
struct BulkReduce {
  Space dst = Space::global;
  spec::RedOp red = spec::RedOp::add;
  spec::RedType type = spec::RedType::u32;
  bool noftz = false;
  Operand dstMem, srcMem, size;
  std::optional<Operand> mbar, policy;
};

struct BulkPrefetch {
  Operand srcMem, size;
  std::optional<Operand> policy;
};

// cp.async.bulk.tensor (loads, stores), cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor.
struct TensorCopy {
  enum class Kind : uint8_t { load, store, reduce, prefetch } kind = Kind::load;
  int dim = 1;
  LoadMode mode = LoadMode::tile;
  Space dst = Space::shared_cta;      // loads: shared_cta or shared_cluster; others: global
  bool multicast = false;
  int cta_group = 0;                  // 0: none, 1 or 2 (.cta_group::N)
  std::optional<spec::RedOp> red;     // reductions
  Operand tensor;                     // [tensorMap, {coords}]
  std::optional<Operand> dstMem, srcMem, mbar, ctaMask, im2colInfo, policy;
};

struct CommitGroup {};
struct WaitGroup {
  bool read = false;  // .read: until the sources have been read
  Operand n;
};

struct MbarInit {
  Operand addr, count;
};
// mbarrier.arrive / arrive_drop, with .expect_tx or .noComplete, local or remote.
struct MbarArrive {
  bool drop = false, expect_tx = false, no_complete = false;
  Space space = Space::shared_cta;  // shared_cluster: the remote forms (state is `_`)
  Scope scope = Scope::cta;
  Operand state, addr;
  std::optional<Operand> count, txCount;
};
// mbarrier.expect_tx and mbarrier.complete_tx.
struct MbarTx {
  bool complete = false;
  Space space = Space::shared_cta;
  Operand addr, txCount;
};
// mbarrier.test_wait / try_wait, by token or by parity.
struct MbarWait {
  bool blocking = false;  // try_wait (the model blocks; a test_wait never does)
  bool parity = false;    // .parity: `phase` is phaseParity, else the state token
  Scope scope = Scope::cta;
  Operand waitComplete, addr, phase;
  std::optional<Operand> suspendTimeHint;
};
struct MbarPendingCount {
  Operand count, state;
};
struct MbarInval {
  Operand addr;
};
struct Fence {
  enum class Kind : uint8_t { proxy_async, mbarrier_init } kind = Kind::proxy_async;
  std::optional<Space> space;  // fence.proxy.async's state space; none: every space
};
struct ClusterBarrier {
  bool wait = false;
};
// st.shared / st.global: an ordinary (generic-proxy) store.
struct Store {
  Space space = Space::shared_cta;
  int bytes = 4;
  Operand addr, value;
};
// tensormap.replace / tensormap.cp_fenceproxy: checked by the front end, not modelled.
struct TensormapOp {};

using Body = std::variant<BulkCopy, BulkReduce, BulkPrefetch, TensorCopy, CommitGroup, WaitGroup, MbarInit,
                          MbarArrive, MbarTx, MbarWait, MbarPendingCount, MbarInval, Fence, ClusterBarrier, Store,
                          TensormapOp>;

struct Step {
  Instruction inst;      // what it was decoded from: target checks, the source text
  Body body;
  std::string mnemonic;  // the canonical mnemonic, for descriptions ("cp.async.bulk.tensor.2d...")

  spec::Op op() const { return inst.op(); }
  const std::optional<Guard>& guard() const { return inst.guard; }
  template <class T> const T& as() const { return std::get<T>(body); }
  template <class T> T& as() { return std::get<T>(body); }
};

// Decodes a parsed instruction (every operand the table requires is present: the parser checked).
Step decode(Instruction inst);

// One operand slot of a decoded step, for engines that fill operands in themselves (the
// check replay puts a record's values there): the table's name of the operand, what it is,
// and for an address the state space the decoded qualifiers put it in.
struct OperandSlot {
  std::string_view name;  // "dstMem", "mbar", "[tensorMap, tensorCoords]", ...
  Operand* operand;
  enum class Role : uint8_t { value, address, tensor, vector, destination } role = Role::value;
  Space space = Space::global;  // addresses only
};
// Every operand of the step that is present, in the table's order.
std::vector<OperandSlot> operand_slots(Step& step);

// The operands a step writes: an arrive's state token, a wait's predicate, pending_count's
// count (a `_` sink included: callers skip those).
std::vector<const Operand*> destinations(const Step& step);

// The qualifier text of a load mode (".tile::gather4") and of a state space (".shared::cta").
std::string_view name(LoadMode m);
std::string_view name(Space s);

}  // namespace tmakit::ptx
