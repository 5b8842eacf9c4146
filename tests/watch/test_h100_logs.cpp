// The logs `tmakit watch` wrote on the H100 (scripts/watch-device.sh, kept in
// tests/vectors/watch/h100/): every recorded call with a map is judged again by
// today's validator against the driver's recorded answer, and must get the same
// verdict and the same rules. A validator change that would have explained the
// H100's answers differently fails here, with no GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tmakit/tensor_map/json.hpp"
#include "tmakit/watch/call.hpp"

namespace tmakit::watch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::set<std::string> rules_of(const json& findings) {
  std::set<std::string> out;
  for (const auto& f : findings) out.insert(f["rule"].get<std::string>());
  return out;
}

TEST(H100WatchLogs, EveryRecordedCallIsJudgedTheSameToday) {
  const fs::path dir = fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/watch/h100";
  int checked = 0, refused = 0, flagged = 0;
  std::set<std::string> vias;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      json r = json::parse(line);
      if (r["kind"] != "call" || r["map"].is_null()) continue;
      const std::string where = entry.path().filename().string() + ":" + std::to_string(line_no);
      // Calls whose arguments broke a watch.* rule are replayed by test_watch.cpp's stand-in.
      bool argument_problem = false;
      for (const auto& f : r["findings"]) argument_problem |= f["rule"].get<std::string>().rfind("watch.", 0) == 0;
      if (argument_problem || r["call"] == "cuTensorMapReplaceAddress") continue;
      Capture c;
      c.map = tensor_map::map_from_json(r["map"], where).map;
      auto target = spec::parse_target(r["target"].get<std::string>());
      ASSERT_TRUE(target) << where;
      Judgement j = judge(c, r["driver_code"].get<int>(), *target, r.value("strict_refused", false));
      json today = json::array();
      for (const auto& d : j.findings) today.push_back({{"rule", d.rule}});
      EXPECT_EQ(verdict_name(j.verdict), r["verdict"].get<std::string>()) << where;
      // The shared-memory alignment note concerns using a map; a map with an error is never used,
      // so today's validator leaves the note off such maps (the logs were recorded with it).
      bool has_error = false;
      for (const auto& f : r["findings"]) has_error |= f.value("severity", "") == "error";
      json recorded = json::array();
      for (const auto& f : r["findings"])
        if (!(has_error && f["rule"] == "map.smem-alignment")) recorded.push_back(f);
      EXPECT_EQ(rules_of(today), rules_of(recorded)) << where;
      ++checked;
      refused += r["driver_code"] == 1;
      flagged += r["verdict"] == "flagged";
      vias.insert(r["via"].get<std::string>());
    }
  }
  EXPECT_GE(checked, 150);
  EXPECT_GT(refused, 20);
  EXPECT_GT(flagged, 2);
  // The four ways a program reaches the driver were all seen on the H100.
  EXPECT_EQ(vias, (std::set<std::string>{"linked", "dlsym", "cuGetProcAddress", "cudaGetDriverEntryPoint"}));
}

}  // namespace
}  // namespace tmakit::watch
