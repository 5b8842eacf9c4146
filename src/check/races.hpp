// Internal to the check layer: races between a thread's ordinary shared-memory accesses and
// the copy engine's, judged by the order the program's synchronisation guarantees rather than
// by the order the trace happened to record (races.cpp; docs/check-replay.md, "Races").
#pragma once
#include <vector>

#include "cluster.hpp"

namespace tmakit::check::detail {

// One cluster's records (all of them, CTA barriers included), after `replay` ran on them: its
// findings (check.race-raw, check.race-war, check.race-waw, and model.missing-proxy-fence where a
// store is ordered before a copy through no proxy fence) go to `sink`, merged by their site and
// the other side's source line; a finding the replay already made at the same place (the model's in-flight and fence
// checks, check.read-before-wait, check.wrong-parity) is not made again.
void find_races(const TraceDir& t, const std::vector<size_t>& records, const ClusterReplay& replay,
                const ReplayOptions& options, FindingSink& sink, Report& report);

}  // namespace tmakit::check::detail
