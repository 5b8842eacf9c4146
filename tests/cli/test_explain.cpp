// `tmakit explain RULE` (issue 24, item 1): every rule id a message can print is explained from
// the project's own docs, with its source, the H100's evidence where there is some, and a fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../layout/run.hpp"

namespace tmakit::cli::test {
namespace {

namespace fs = std::filesystem;
using layout::test::kSource;
using layout::test::kTmakit;
using layout::test::run;

// The rule ids the sources hand to a diagnostic: the first argument of error/warning/note/fail/
// add/unusable/bad_file, or the rule of a braced Diagnostic{severity, "rule", ...}.
std::set<std::string> rule_ids_in_sources() {
  static const std::regex call(
      R"re(\b(?:fail|error|warning|note|add|unusable|bad_file)\(\s*"([a-z][a-z0-9_]*\.[a-z0-9][a-z0-9.-]*)")re");
  static const std::regex brace(R"re(\{\s*(?:Severity::[a-z]+|[A-Z]),\s*"([a-z][a-z0-9_]*\.[a-z0-9][a-z0-9.-]*)")re");
  std::set<std::string> ids;
  for (const char* dir : {"src", "tools/tmakit", "tools/check", "python/src"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(kSource) / dir)) {
      const auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu") continue;
      std::ifstream in(e.path());
      std::stringstream s;
      s << in.rdbuf();
      const std::string text = s.str();
      for (const auto* re : {&call, &brace})
        for (std::sregex_iterator it(text.begin(), text.end(), *re), end; it != end; ++it) ids.insert((*it)[1]);
    }
  return ids;
}

TEST(Explain, EveryRuleIdAMessageCanPrintIsExplained) {
  const auto ids = rule_ids_in_sources();
  ASSERT_GT(ids.size(), 150u);  // the enumeration itself works
  for (const char* id : {"map.box-inner-bytes", "coord.inner-align", "bulk.size-align", "mbarrier.init-valid"})
    EXPECT_TRUE(ids.count(id)) << id;
  std::string missing;
  for (const auto& id : ids) {
    auto r = run(kTmakit + " explain " + id);
    if (r.status != 0 || r.out.rfind(id + "\n", 0) != 0) missing += "  " + id + ": " + r.out.substr(0, 120) + "\n";
  }
  EXPECT_TRUE(missing.empty()) << "not explained:\n" << missing;
}

TEST(Explain, AMapRuleSaysWhoRefusesItItsSourceAndTheFix) {
  auto r = run(kTmakit + " explain map.box-inner-bytes");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the driver refuses such a map"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuTensorMapEncodeTiled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Fix: make box[0] × element size a multiple of 16 bytes"), std::string::npos) << r.out;
  // Copied with its brackets from a message, the id works as well.
  EXPECT_EQ(run(kTmakit + " explain '[map.box-inner-bytes]'").out, r.out);
}

TEST(Explain, AHardwareFaultRuleShowsWhatTheH100DidAndTheVectorsThatProveIt) {
  auto r = run(kTmakit + " explain coord.inner-align");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("What the H100 showed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h100-inner-coordinate-fault: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tests/vectors/faults/h9_"), std::string::npos) << r.out;
  // And each named vector exists.
  EXPECT_TRUE(fs::exists(fs::path(kSource) / "tests/vectors/faults/h9_00.json"));
  auto s = run(kTmakit + " explain tensor.smem-align");
  EXPECT_NE(s.out.find("h100-smem-128-alignment"), std::string::npos) << s.out;
}

TEST(Explain, AnUnknownRuleIsUnusableInputWithAPointerToTheList) {
  auto r = run(kTmakit + " explain map.no-such-rule");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no rule 'map.no-such-rule'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--list"), std::string::npos) << r.out;
  auto l = run(kTmakit + " explain --list");
  EXPECT_EQ(l.status, 0);
  EXPECT_NE(l.out.find("\nmap.smem-alignment\n"), std::string::npos);
}

}  // namespace
}  // namespace tmakit::cli::test
