// The mutations of tests/gpu/check/cutedsl_mutants.py (docs/check.md, "CuTe DSL") on the PTX CuTe
// DSL made of the corpus's TMA copy kernel (tests/corpus/cutedsl/tma_copy.sm_90a.ptx): each edits
// the one line it names, as read here by regexes of this test's own; a module without those lines
// (the DSL's elementwise add) makes every mutation fail loudly rather than run the clean kernel.
// No GPU: the script needs only Python.
#include <regex>
#include <sstream>

#include "mutant_script.hpp"

namespace {

using namespace check_test;

const fs::path kScript = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/cutedsl_mutants.py";
const fs::path kCopy = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/cutedsl/tma_copy.sm_90a.ptx";
const fs::path kAdd = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/cutedsl/add.sm_90a.ptx";

// The 1-based number of the module's one line matching `re`.
int line_of(const std::string& text, const std::string& re) {
  const std::regex r(re);
  int n = 0, found = 0, count = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (std::regex_search(line, r)) found = n, ++count;
  }
  return count == 1 ? found : -count;
}

TEST(CheckCutedslMutants, EachMutationEditsTheOneLineItNames) {
  const std::string ptx = read(kCopy);
  // The box's byte count feeds the arrive that arms the load; the init's count sits right before it.
  const int tx = line_of(ptx, R"(^\s*mov\.b32\s+%r\d+, 8192;)");
  const int count = line_of(ptx, R"(^\s*mov\.b32\s+%r\d+, 1;)");
  const int wait = line_of(ptx, R"(mbarrier\.try_wait\.parity\.shared\.b64 P1, \[%r\d+\], 0, )");
  ASSERT_GT(tx, 0);
  ASSERT_GT(count, 0);
  ASSERT_GT(wait, 0);
  EXPECT_EQ(line_of(ptx, R"(^\s*mbarrier\.init\.shared\.b64)"), count + 1);
  EXPECT_EQ(line_of(ptx, R"(^\s*mbarrier\.arrive\.expect_tx\.shared\.b64)"), tx + 1);

  const ScriptRun r = run_script(kScript, "selftest '" + kCopy.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string n = std::to_string(tx);
  EXPECT_EQ(count_matches(r.out, "^clean: unchanged$"), 1) << r.out;
  EXPECT_EQ(count_matches(r.out, "^expect-long16: line " + n + R"(: mov\.b32\s+%r\d+, 8192; -> mov\.b32\s+%r\d+, 8208;$)"), 1)
      << r.out;
  EXPECT_EQ(count_matches(r.out, "^expect-short16: line " + n + R"(: mov\.b32\s+%r\d+, 8192; -> mov\.b32\s+%r\d+, 8176;$)"), 1)
      << r.out;
  EXPECT_EQ(count_matches(r.out, "^arrival-count-plus1: line " + std::to_string(count) +
                                     R"(: mov\.b32\s+%r\d+, 1; -> mov\.b32\s+%r\d+, 2;$)"),
            1)
      << r.out;
  EXPECT_EQ(count_matches(r.out, "^parity-flipped: line " + std::to_string(wait) +
                                     R"(: mbarrier\.try_wait\.parity\.shared\.b64 P1, \[%r\d+\], 0, 10000000; -> )"
                                     R"(mbarrier\.try_wait\.parity\.shared\.b64 P1, \[%r\d+\], 1, 10000000;$)"),
            1)
      << r.out;
}

TEST(CheckCutedslMutants, AModuleWithoutTheirLinesFailsEveryMutation) {
  const ScriptRun r = run_script(kScript, "selftest '" + kAdd.string() + "'");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(count_matches(r.out, "matches 0 times, not once$"), 4) << r.out;
}

}  // namespace
