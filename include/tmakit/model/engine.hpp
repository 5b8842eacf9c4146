// The engine: one cluster of CTAs with shared memory, global memory, tensor
// maps, mbarriers, bulk async-groups and the operations in flight. Steps are
// executed one at a time; asynchronous operations complete when a wait needs
// them or at the end, in issue order or, with a seed, in a random order.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "tmakit/model/mbarrier.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/ptx/step.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

// What a symbol or operand evaluates to.
struct Value {
  enum class Kind { integer, shared, cluster, global } kind = Kind::integer;
  int64_t v = 0;  // integer value, shared offset, or global address
  int rank = 0;   // CTA rank of a shared::cluster address
  std::string str() const;
};

struct EngineConfig {
  int ctas = 1;
  uint32_t shared_bytes = 232448;
  spec::Target target{90, spec::Suffix::a};
  spec::PtxVersion ptx_version = spec::kNewestPtx;
  std::optional<uint64_t> seed;                        // random completion order
  std::function<void(const std::string&)> trace;       // one line per issue and completion event
};

class Engine {
 public:
  explicit Engine(EngineConfig cfg);

  GlobalMemory& global() { return global_; }
  SharedMemory& shared(int cta) { return smem_.at(cta); }
  const SharedMemory& shared(int cta) const { return smem_.at(cta); }
  void define_map(const std::string& name, const tensor_map::TensorMap& map);
  void set_symbol(const std::string& name, Value v) { symbols_[name] = v; }
  std::optional<Value> symbol(const std::string& name) const;

  // Execute one decoded step. `where` names it in diagnostics ("program[3] (cta 0)").
  // Throws DiagnosticError on undefined behaviour, a fault, or a deadlock.
  void step(const ptx::Step& step, int cta, int thread, const std::string& where);
  // The same for an instruction not yet decoded (decoded on each call: tests, one-off steps).
  void step(const ptx::Instruction& inst, int cta, int thread, const std::string& where) {
    step(ptx::decode(inst), cta, thread, where);
  }
  // End of the program: retry blocked waits, complete everything in flight, and
  // report deadlocks and barriers whose transaction counts do not balance.
  void finish();

  // For drivers that order the threads themselves (tmakit check replays a trace): execute
  // one step unless it is a blocking wait the model cannot satisfy yet; then nothing is
  // held and false is returned (in-flight operations feeding the barrier may have completed).
  bool try_step(const ptx::Step& step, int cta, int thread, const std::string& where);
  // For the same drivers: the hardware saw this wait (try_wait/test_wait) return false. While
  // the model would let it pass, the operations in flight that feed its barrier complete (in
  // completion order), so that the model's state agrees with the hardware's: a failed poll on a
  // parity that names the phase before the current one says the current phase, too, had
  // completed. False when no such choice makes the wait fail (the model cannot agree); the
  // barrier is then left as it was found after the completions.
  bool observe_failed_wait(const ptx::Step& step, int cta, const std::string& where);
  // A clock the driver advances (tmakit check: the record being replayed, plus one): each
  // barrier notes when its last phase completed (MBarrier::completed_at).
  void set_clock(uint64_t clock) { clock_ = clock; }
  // The barrier at shared offset `offset` of `cta`, or nullptr when none was ever touched.
  const MBarrier* find_barrier(int cta, uint32_t offset) const;
  // The description of an operation in flight that still writes any of the shared bytes
  // [begin, end) of `cta` (nullopt when none does), and the barriers it signals.
  struct InFlightWriter {
    std::string desc;
    std::vector<std::pair<int, uint32_t>> barriers;  // (cta, offset)
  };
  std::optional<InFlightWriter> in_flight_writer(int cta, uint64_t begin, uint64_t end) const;

  const EngineConfig& config() const { return cfg_; }
  // Warnings gathered while running (advisory targets, ...).
  const Diagnostics& warnings() const { return warnings_; }

 private:
  struct Range {
    enum Space { shared, global } space;
    int cta;  // shared only
    uint64_t begin, end;
    // The bytes of [begin, end) the operation really touches where that is less (a tiled
    // box's rows, tile_global_spans): sorted, disjoint; null = all of them.
    std::shared_ptr<const std::vector<std::pair<uint64_t, uint64_t>>> spans = nullptr;
    bool overlaps(const Range& o) const;
  };
  struct BarrierRef {
    int cta;
    uint32_t offset;
    bool operator<(const BarrierRef& o) const { return cta != o.cta ? cta < o.cta : offset < o.offset; }
  };
  struct Op {
    int id = 0;
    std::string desc;                 // "program[2] (cta 0): cp.async.bulk.tensor..."
    std::vector<Range> reads, writes;
    std::vector<std::pair<BarrierRef, uint64_t>> signals;  // complete_tx on completion
    std::function<void()> read;       // bulk-group ops: capture the sources (wait_group.read)
    std::function<void()> write;      // perform the writes
    bool read_done = false;
    bool atomic = false;              // a reduction: per-element atomic (§6.3), may overlap another reduction
    int group_owner = -1;             // bulk-group ops: index into threads_
  };
  struct Group {
    std::vector<int> ops;
  };
  struct ThreadState {
    int cta, thread;
    std::vector<int> uncommitted;
    std::deque<Group> groups;      // committed, oldest first
    std::deque<Group> read_only;   // popped by wait_group.read: sources read, writes pending
  };
  struct Blocked {
    ptx::Step step;
    int thread;
    std::string where;
  };

  // A step's CTA, target and PTX version, checked before it runs (warnings kept).
  void admit(const ptx::Step& step, int cta, const std::string& where);
  // Evaluation of operands.
  Value eval(const ptx::Expr& e, const std::string& where) const;
  Value eval(const ptx::Operand& o, const std::string& where) const { return eval(o.expr, where); }
  int64_t integer(const ptx::Operand& o, const std::string& what, const std::string& where) const;
  uint32_t shared_cta_address(const ptx::Operand& o, int cta, const std::string& what, const std::string& where) const;
  std::pair<int, uint32_t> cluster_address(const ptx::Operand& o, int cta, const std::string& what,
                                           const std::string& where) const;
  uint64_t global_address(const ptx::Operand& o, const std::string& what, const std::string& where) const;
  // Where a copy into shared memory lands: the destination CTAs (one, or each CTA of a
  // multicast ctaMask), the CTA-relative destination offset and the mbarrier's offset.
  // mbar_ctas[i] is the CTA whose barrier (at offset mbar) destination ctas[i] signals:
  // ctas[i] itself, or its peer under .cta_group::2 (§10.2).
  struct Landing {
    std::vector<int> ctas, mbar_ctas;
    uint32_t dst = 0, mbar = 0;
  };
  // dstMem and mbar in the executing CTA (cta_window: a .shared::cta destination) or in the
  // cluster; ctaMask for multicast; pair for .cta_group::2.
  Landing landing(const ptx::Operand& dst, const ptx::Operand& mbar, const std::optional<ptx::Operand>& cta_mask,
                  bool pair, int cta, bool cta_window, const char* mbar_rule, const std::string& where) const;
  void store_symbol(const ptx::Operand& o, int64_t value);

  // Operations of each family (one file each: bulk.cpp, tensor.cpp, barrier ops here).
  // `desc` is the step's description in messages about the operation in flight.
  void bulk_copy(const ptx::BulkCopy& s, const std::string& desc, int cta, int thread, const std::string& where);
  void bulk_reduce(const ptx::BulkReduce& s, const std::string& desc, int cta, int thread, const std::string& where);
  void tensor_op(const ptx::TensorCopy& s, const std::string& desc, int cta, int thread, const std::string& where);
  void mbarrier_op(const ptx::Step& step, int cta, const std::string& where);
  void plain_store(const ptx::Store& s, int cta, const std::string& where);
  bool execute(const ptx::Step& step, int cta, int thread, const std::string& where);  // false: blocked
  bool guard_holds(const ptx::Step& step, const std::string& where) const;  // logs a step it skips
  bool wait_satisfied(const ptx::MbarWait& w, int cta, const std::string& where, bool complete_ops);
  // Completes the first (in completion order) operation in flight that signals `ref`; false: none.
  bool complete_one_feeding(BarrierRef ref);

  // In flight.
  int issue(Op op, int cta, int thread, bool bulk_group);
  void complete(int op_id);
  void read_sources(int op_id);
  ThreadState& thread_state(int cta, int thread);
  int thread_index(int cta, int thread);
  void check_shared_range(int cta, uint64_t offset, uint64_t bytes, const std::string& what, const std::string& where) const;
  void check_no_conflict(const Op& op, const std::string& where) const;
  void check_barrier_overwrite(const Range& r, const std::string& where);
  MBarrier& barrier(BarrierRef ref, const std::string& where);
  std::vector<int> order(std::vector<int> ids);  // completion order: issue order or seeded shuffle
  void log(const std::string& line) const { if (cfg_.trace) cfg_.trace(line); }
  void retry_blocked();
  std::string deadlock_report(const Blocked& b, int cta);

  EngineConfig cfg_;
  GlobalMemory global_;
  std::vector<SharedMemory> smem_;
  std::map<std::string, tensor_map::TensorMap> maps_;
  std::map<std::string, Value> symbols_;
  std::map<BarrierRef, MBarrier> barriers_;
  std::map<int, Op> in_flight_;
  std::vector<ThreadState> threads_;
  std::vector<std::vector<Range>> unfenced_;  // per CTA: shared bytes written by st.shared since fence.proxy.async
  std::map<int, std::deque<Blocked>> backlog_;  // per CTA: the blocked wait, then the steps held behind it
  std::map<BarrierRef, std::vector<std::string>> barrier_history_;  // every op issued against a barrier
  Diagnostics warnings_;
  int next_op_ = 1;
  uint64_t clock_ = 0;
  std::unordered_set<std::string> clean_forms_;  // admit(): instructions the checks passed
  std::mt19937_64 rng_;
};

}  // namespace tmakit::model
