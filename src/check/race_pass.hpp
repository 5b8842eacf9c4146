// Internal to the check layer: the walk of the race check (races.cpp) and its report
// (race_report.cpp) over one cluster's records; races.hpp says what it finds.
#pragma once
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "race_memory.hpp"
#include "race_order.hpp"
#include "races.hpp"

namespace tmakit::check::detail {

// A copy the walk met: its record, and the mbarriers it completes on (CTA, offset).
struct RaceCopy {
  size_t record;
  std::vector<std::pair<int, uint32_t>> barriers;
};

class RacePass {
 public:
  RacePass(const TraceDir& t, const ClusterReplay& replay, const ReplayOptions& opt, FindingSink& sink, Report& report)
      : t_(t), replay_(replay), opt_(opt), sink_(sink), report_(report),
        ctas_(static_cast<int>(t.meta.cluster[0] * t.meta.cluster[1] * t.meta.cluster[2])),
        order_(t.meta.block[0] * t.meta.block[1] * t.meta.block[2]),
        memory_(ctas_, opt.max_race_ranges, opt.max_race_reads) {}

  void run(const std::vector<size_t>& records);

 private:
  bool process(size_t idx, uint32_t th, bool force);
  void hold(uint32_t th, size_t idx);
  void retry();
  void flush();
  void access(size_t idx, uint32_t th, bool write);
  void copy(size_t idx, uint32_t th, instrument::TraceOp op);
  bool mbarrier(size_t idx, uint32_t th, instrument::TraceOp op, bool force);
  const ptx::Step* step(uint32_t site);
  std::optional<std::pair<uint64_t, uint64_t>> tensor_extent(size_t idx, const ptx::TensorCopy& tc);
  std::pair<int, uint32_t> shared(uint64_t address, int own) const;
  void found(const std::vector<Conflict>& conflicts);
  void emit();
  std::string place(size_t idx) const;

  const TraceDir& t_;
  const ClusterReplay& replay_;
  const ReplayOptions& opt_;
  FindingSink& sink_;
  Report& report_;
  int ctas_;
  Order order_;
  SharedHistory memory_;
  std::vector<RaceCopy> copies_;
  std::map<uint32_t, std::deque<size_t>> held_;  // thread -> its records waiting behind a wait
  std::map<int, int> held_in_cta_;
  std::map<uint32_t, std::optional<ptx::Step>> steps_;
  struct Pair {
    size_t at, other;
    bool at_copy;  // found at the copy's issue (else at the thread's access)
    std::string rule, message;
    int count = 0;
  };
  std::map<std::tuple<std::string, uint32_t, uint32_t>, Pair> pairs_;
  std::vector<Conflict> conflicts_;
};

}  // namespace tmakit::check::detail
