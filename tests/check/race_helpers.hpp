// Shared by the race check's tests (test_races.cpp, test_race_walk.cpp): the records a GPU
// would write for the pipeline.ptx sites the races are made of.
#pragma once
#include "trace_builder.hpp"

namespace check_test {

inline constexpr int64_t kEmpty = kBar + 8;  // a second mbarrier: consumers release the buffer on it
inline constexpr int64_t kOut = 8192;        // the epilogue's buffer

inline bool is_race_rule(const std::string& rule) {
  return rule == "check.race-raw" || rule == "check.race-war" || rule == "check.race-waw" ||
         rule == "model.missing-proxy-fence";
}

inline std::vector<std::string> race_rules(const tmakit::check::Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings)
    if (is_race_rule(f.rule)) out.push_back(f.rule);
  return out;
}

inline void wait_full(Trace& t, int thread, int64_t parity = 0, int cta = 0) {
  t.rec(kWaitParity, cta, thread, {{"addr", {kBar}}, {"phaseParity", {parity}}}, true);
}
inline void read(Trace& t, int thread, int64_t at, int64_t bytes = 16, int cta = 0) {
  t.rec(kLdShared, cta, thread, {{"addr", {at}}, {"size", {bytes}}});
}
inline void write(Trace& t, int thread, int64_t at, int64_t bytes = 16) {
  t.rec(kStShared, 0, thread, {{"addr", {at}}, {"size", {bytes}}});
}
inline void fence(Trace& t, int thread) { t.rec(kFenceAsync, 0, thread, {}); }
inline void store_tile(Trace& t, const Map& m, int thread, int64_t src) {
  t.map_bytes(kStore, 0, thread, m.descriptor());
  t.rec(kStore, 0, thread, {{"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 32}}, {"srcMem", {src}}});
  t.rec(kCommit, 0, thread, {});
}
inline void wait_reads(Trace& t, int thread) { t.rec(kWaitRead, 0, thread, {{"N", {0}}}); }
// Thread 0 arms the full barrier again and loads the next box into the same buffer.
inline void load_again(Trace& t, const Map& m) {
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});
  t.map_bytes(kLoad, 0, 0, m.descriptor());
  t.rec(kLoad, 0, 0, {{"dstMem", {kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 32}}, {"mbar", {kBar}}});
}

}  // namespace check_test
