// Internal to the check layer: the replay of one cluster's records on one engine
// (cluster.cpp: ordering and stepping; cluster_hang.cpp: a hang explained at the end; rules.cpp:
// what only the trace can say).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "decode.hpp"

namespace tmakit::check::detail {

// Findings gathered across clusters, merged by (rule, site, key): `key` tells apart findings of
// one rule at one site that name different other places (the race check's pairs of sites);
// `count` occurrences are added at once.
class FindingSink {
 public:
  explicit FindingSink(const TraceDir& t) : trace_(&t) {}
  // The trace whose record numbers the next findings give (a compact trace's clusters are
  // expanded one at a time, TraceDir::compact).
  void reading(const TraceDir& t) { trace_ = &t; }
  void add(const std::string& rule, Severity sev, const std::string& message, std::optional<size_t> record,
           int count = 1, const std::string& key = {});
  std::vector<Finding> take() { return std::move(findings_); }
  bool has(const std::string& rule, uint32_t site) const { return index_.count({rule, site, ""}) != 0; }

 private:
  const TraceDir* trace_;
  std::vector<Finding> findings_;
  std::map<std::tuple<std::string, int64_t, std::string>, size_t> index_;
};

// "file:line" of a record's site: its user frame, as findings are placed (the innermost .loc outside
// library headers, instrument::user_frame), else the PTX line.
std::string site_place(const TraceDir& t, uint32_t site);

// A thread of one cluster as one number, ordered as Who is within a cluster (CTA, then thread).
inline uint32_t thread_key(const Who& w) { return static_cast<uint32_t>(w.cta) << 16 | static_cast<uint32_t>(w.thread); }

class ClusterReplay {
 public:
  ClusterReplay(const TraceDir& t, std::vector<size_t> records, const ReplayOptions& opt, FindingSink& sink,
                Report& report);
  void run();
  // Read by the race check (races.hpp) after run(): whether shared addresses carry the CTA rank,
  // and each tensor operation's map.
  bool ranked() const { return ranked_; }
  const std::vector<EncodedMap>& maps() const { return maps_; }
  const std::map<size_t, size_t>& tensor_maps() const { return map_of_; }

 private:
  // Ordering: each thread's records in index order; a thread whose wait the model cannot
  // satisfy yet holds its later records until another thread's step unblocks it.
  bool process(size_t idx);  // false: a blocking wait the model cannot satisfy yet
  bool process_record(size_t idx);
  void retry();
  void end_of_trace();
  bool step(const ptx::Step& step, size_t idx, bool hold);
  void failed_poll(size_t idx);  // the hardware's failed poll, a fact the model must agree with
  std::string where(size_t idx) const;
  std::optional<size_t> record_in(const std::string& place) const;
  std::vector<size_t> failing_last_waits() const;
  std::string behind_the_wait(size_t wait_record, const std::vector<size_t>& final_waits) const;
  std::string warp_wide_after(const Who& w, uint32_t site, const std::map<Who, size_t>& waiting) const;
  std::string timeout_text() const;  // " within 5.000 s", or ""


  // Rules only the trace can check (rules.cpp), called before the record is stepped.
  void scan_maps();  // first pass: each tensor op's map, global ranges, last records, ranked_
  using Building = std::map<std::pair<int, uint64_t>, tensor_map::TensorMap>;
  void follow_replace(size_t idx, std::optional<size_t> before, bool blank, Building& building,
                      std::map<uint64_t, size_t>& replaced);
  void follow_install(size_t idx, std::optional<size_t> source, const std::array<uint8_t, 128>& bytes,
                      Building& building, std::map<uint64_t, size_t>& replaced,
                      std::map<std::array<uint8_t, 128>, size_t>& by_bytes);
  void before_copy(size_t idx);        // init fence, tensormap fence, swizzle phase
  void note_fence(size_t idx);         // fence.mbarrier_init, barrier.cluster, tensormap acquire
  void shared_load(size_t idx);        // read before the wait, wrong parity
  void before_wait(size_t idx, const ptx::Step& step);
  void remote_use(size_t idx, int barrier_cta, uint32_t offset);
  bool valid(size_t map);
  void explain_fault();

  const TraceDir& t_;
  std::vector<size_t> records_;
  const ReplayOptions& opt_;
  FindingSink& sink_;
  Report& report_;
  int ctas_ = 1;
  std::unique_ptr<model::Engine> engine_;
  GlobalSpace global_;
  std::unique_ptr<Decoder> decoder_;
  bool incomplete_ = false;
  bool ranked_ = false;      // shared addresses carry the CTA rank (split_shared; found by scan_maps)  // a record could not be decoded (an unknown map, memory past the budget)

  std::vector<EncodedMap> maps_;           // t_.maps, then maps derived by tensormap.replace
  std::map<size_t, size_t> map_of_;        // tensor-op record -> index in maps_
  std::map<size_t, bool> valid_;           // map index -> the validator accepts it
  std::map<uint32_t, size_t> last_of_;     // each thread's last record, by thread_key
  std::map<Who, std::deque<size_t>> held_;
  mutable std::vector<std::string> places_;  // where(): each site's place, made once
  std::unordered_map<uint32_t, size_t> previous_;
  // Per barrier (CTA, offset): the arrives whose effect may come later than their record
  // (recorded before they ran, or remote), in record order (failed_poll()).
  std::map<std::pair<int, uint32_t>, std::vector<size_t>> uncertain_arrives_;  // each thread's record replayed last, by thread_key

  // Rule state, by record index (the trace's total order).
  struct Wait {
    size_t record;
    int64_t parity;
    uint64_t phase;
    bool at_once;  // the parity named a phase already complete when the wait began
  };
  std::map<std::tuple<Who, int, uint32_t>, Wait> last_wait_;     // (thread, barrier CTA, offset)
  std::map<std::pair<int, uint32_t>, size_t> inits_;            // barrier -> its mbarrier.init record
  std::map<std::pair<int, uint32_t>, size_t> arms_;             // barrier -> the last expect-tx on it
  std::map<int, size_t> init_fence_, cluster_arrive_, cluster_wait_;  // per CTA, the latest
  std::map<uint64_t, size_t> map_written_;                      // tensor-map address -> replace record
  std::map<std::pair<int, uint64_t>, size_t> map_acquired_;     // (CTA, map address) -> its latest acquire fence
  // Swizzled boxes that landed 128- but not swizzle-atom-aligned, by (CTA, first byte): warned
  // (check.swizzle-phase) only when a generic ld.shared reads them. wgmma and the copy engine read
  // by the same address bits the copy wrote with, so a box only they read is no finding.
  struct Misphased {
    uint32_t end, atom;
    size_t copy;  // the tensor load's record
    bool warned = false;
  };
  std::map<std::pair<int, uint32_t>, Misphased> misphased_;
  void generic_read_of_misphased(size_t idx, int cta, uint32_t begin, uint32_t end);
};

}  // namespace tmakit::check::detail
