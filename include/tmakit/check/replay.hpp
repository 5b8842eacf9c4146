// `tmakit check --replay DIR`: a trace an instrumented kernel wrote (docs/check.md) read back,
// decoded into the model's operations and replayed on the engine, with the tensor maps the
// program encoded; the model's diagnostics come back at the user's source line
// (docs/check-replay.md).
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tmakit/instrument/instrument.hpp"
#include "tmakit/instrument/trace.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::check {

// An unusable trace directory: the message names the file, the record or line, and the field.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Companion records (the tensor map's 128 bytes) and shared loads: trace.hpp numbers them
// once the instrumenter writes them; the replay reads them by these codes.
inline constexpr uint16_t kOpTensorMapLo = 25, kOpTensorMapHi = 26, kOpSharedLoad = 27;

// Limits that keep the replay bounded whatever the input (docs/check-replay.md).
inline constexpr uint64_t kMaxRecords = 1u << 22;          // 512 MiB of trace.bin
// Records of single threads once warp records are expanded (1 GiB held in memory).
inline constexpr uint64_t kMaxLaneRecords = 1u << 23;
inline constexpr uint64_t kMaxSites = 1u << 20;
inline constexpr uint64_t kMaxMaps = 1u << 16;
inline constexpr uint64_t kMaxFileBytes = 512ull << 20;    // trace.bin
// The JSON files are held whole as parsed values, about ten bytes of memory per byte of
// text, so they get smaller limits: a site table of 32 MiB holds some 80,000 sites.
inline constexpr uint64_t kMaxSitesBytes = 32ull << 20;   // sites.json
inline constexpr uint64_t kMaxMapsBytes = 64ull << 20;    // maps.jsonl (read a line at a time)
inline constexpr uint64_t kMaxMetaBytes = 1ull << 20;     // meta.json

// meta.json (docs/check-replay.md).
struct LaunchMeta {
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1}, cluster{1, 1, 1};
  uint64_t dynamic_smem = 0;
  std::string outcome;        // completed | timeout | fault | launch_error
  std::string driver_result;  // CUDA_SUCCESS, CUDA_ERROR_ILLEGAL_INSTRUCTION, ...
  uint64_t records = 0;
  std::optional<uint64_t> next;  // the trace's next-index word, when it could be read
  uint64_t capacity = 0;
  std::optional<double> timeout_s;
  std::string target = "sm_90a";
  // `tmakit check --ctas`: the clusters that recorded, [first, end) by linear %clusterid.
  std::optional<std::array<uint32_t, 2>> clusters_traced;
  // Why the launch's records could not be read (records in device memory after a fault); empty
  // when they were. Every check is then skipped.
  std::string records_lost;
  // Records dropped, where each cluster had a region of its own (a cluster past its region
  // drops while others have room); absent: next - capacity, where that is positive.
  std::optional<uint64_t> dropped;
  uint64_t records_dropped() const { return dropped ? *dropped : next && *next > capacity ? *next - capacity : 0; }
  // Set where a cluster's records, warp records expanded, pass the bound on records of single
  // threads (kMaxLaneRecords): those of trace.bin past it, not read (expand_cluster).
  uint64_t not_expanded = 0;
};

// One map the program encoded (a line of maps.jsonl with a descriptor and a map).
struct EncodedMap {
  tensor_map::TensorMap map;
  std::array<uint8_t, 128> descriptor{};
  int line = 0;  // in maps.jsonl, 1-based
  // A map the kernel built or edited itself (tensormap.replace, then tensormap.cp_fenceproxy
  // where it was built in shared memory): where the last replace was ("file:line"); empty for
  // a map of maps.jsonl.
  std::string built_at;
};

struct TraceDir {
  std::filesystem::path dir;  // empty when parsed from memory
  LaunchMeta meta;
  std::vector<instrument::Record> records;  // index order; op 0 = a hole, kept
  std::vector<instrument::Site> sites;
  std::vector<EncodedMap> maps;
  std::string module_name = "module";  // "<module>.ptx:line" where a site has no .loc
  // sites.json's "cta_barriers": the instrumenter records CTA barriers (bar.sync, ...) beside the
  // ordinary shared accesses, so races between threads can be judged (older traces lack them).
  bool cta_barriers = false;
  // Where the whole trace's records of single threads would pass the bound (max_lane_records),
  // `records` keeps its warp records whole (kFlagWarp) and the replay expands one cluster at a
  // time (expand_cluster): each cluster is bounded on its own.
  bool compact = false;
  uint64_t max_lane_records = kMaxLaneRecords;
  uint64_t lane_records = 0;  // the records of threads the trace stands for (holes count one each)
};

// The trace `t` without its records: what each cluster's records go into (expand_cluster), made
// once for a replay rather than once a cluster.
TraceDir cluster_frame(const TraceDir& t);
// Puts the records `records` (indices into t.records, one cluster's, in order) into
// `into.records` in place of those it had, warp records expanded, up to t.max_lane_records (past
// it: into.meta.not_expanded, else 0).
void expand_cluster(const TraceDir& t, const std::vector<size_t>& records, TraceDir& into);

// Reads DIR/meta.json, trace.bin, sites.json and maps.jsonl (module.ptx, expect.json are not
// needed). Throws TraceError.
TraceDir load_trace_dir(const std::filesystem::path& dir, uint64_t max_lane_records = kMaxLaneRecords);
// The same from the files' bytes (tests, the fuzzer); `maps_jsonl` may be empty.
// `max_lane_records`: the bound on records of single threads a cluster (TraceDir::compact).
TraceDir parse_trace_dir(std::string_view meta_json, std::string_view trace_bin, std::string_view sites_json,
                         std::string_view maps_jsonl, uint64_t max_lane_records = kMaxLaneRecords);

struct ReplayOptions {
  // Clusters replayed (the others are counted, and skipped checks say so). Every cluster by
  // default: the records' own limit (kMaxRecords) bounds the work, about 2 s a million records.
  int max_clusters = 1 << 20;
  uint64_t max_global_bytes = 256ull << 20;  // model memory for global allocations, all clusters
  // The race check's bounds, a cluster (docs/check-replay.md, "Races"): shared byte ranges and
  // reads it keeps (about 100 and 24 bytes each), and clock entries (4 bytes each). Past one, a
  // note says so and later accesses (ranges, reads) or records (clocks) are not checked.
  uint64_t max_race_ranges = 1u << 20, max_race_reads = 1u << 22, max_race_clock_entries = 1u << 25;
};

struct Finding {
  std::string rule;      // the model's rule id, or check.*
  std::string severity;  // error | warning | note
  std::string message;
  uint32_t site = 0;
  // The place: the site's user frame (instrument::user_frame: the innermost source line outside
  // library headers), or "<module>.ptx" and the PTX line where the site has no .loc.
  std::string file;
  int line = 0, column = 0;
  // The site's source frames, innermost first: the instruction's own line, then where each
  // inlined function was inlined, out to the kernel's line; frames[frame] is the place. Empty
  // where the site has no .loc.
  std::vector<instrument::SourceFrame> frames;
  size_t frame = 0;
  int cta = -1;          // %cluster_ctarank, -1 when not one CTA's
  int thread = -1;       // linear %tid, -1 when not one thread's
  std::array<uint32_t, 3> cluster{0, 0, 0};  // %clusterid
  int count = 1;         // occurrences merged into this one (same rule and site)
};

struct Report {
  std::vector<Finding> findings;
  std::string kernel;              // meta's; the place of a finding that has no site
  std::string outcome;             // meta's
  std::string outcome_explained;   // hang: the barrier, phase, armed/delivered bytes, arrivals; fault: the last ops
  uint64_t records = 0, holes = 0, replayed = 0;
  int clusters = 0, clusters_replayed = 0;
  std::vector<std::string> notes;  // what was not replayed and why
  // The checks that were not made, each with why (records dropped past the capacity, clusters
  // not replayed, operations the model could not run): a clean report with skipped checks is
  // not a clean bill of health, and `tmakit check` says so in its exit status (docs/check.md).
  std::vector<std::string> skipped;
  bool clean() const;              // no error or warning
  bool has_errors() const;         // an error (warnings never fail a run without --strict)
};

Report replay(const TraceDir& trace, const ReplayOptions& options = {});

// "file:line:col: error: message [rule]" lines (clang's style), each followed by notes for the
// site's other frames ("note: inlined from HEADER:LINE:COL (function)", "note: called from ..."),
// then the report's notes and a summary line.
std::string to_text(const Report& report);
nlohmann::json to_json(const Report& report);

}  // namespace tmakit::check
