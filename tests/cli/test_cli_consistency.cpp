// Issue 24, item 6: the small inconsistencies of the command line. `--swizzle 128` as Python
// takes it, `tmakit --version`, `-o`/`--output` on every command that writes, one file prefix per
// message, and no empty parentheses where no GPU was found.
#include <gtest/gtest.h>

#include "../layout/run.hpp"

namespace tmakit::cli::test {
namespace {

using layout::test::kSource;
using layout::test::kTmakit;
using layout::test::quote;
using layout::test::run;
using layout::test::TempDir;

const std::string kMap = " --type bfloat16 --dims 256,64 --strides 512 --box 64,8";

TEST(CliConsistency, AByteCountNamesItsSwizzleInterleaveAndPromotion) {
  auto named = run(kTmakit + " map" + kMap + " --swizzle 128b --l2 256b --layout");
  auto counted = run(kTmakit + " map" + kMap + " --swizzle 128 --l2 256 --layout");
  ASSERT_EQ(named.status, 0) << named.out;
  EXPECT_EQ(counted.status, 0) << counted.out;
  EXPECT_EQ(counted.out, named.out);
  auto bad = run(kTmakit + " map" + kMap + " --swizzle 100");
  EXPECT_EQ(bad.status, 2) << bad.out;  // still refused, under its own spelling
  EXPECT_NE(bad.out.find("100b"), std::string::npos) << bad.out;
}

TEST(CliConsistency, VersionIsPrinted) {
  auto r = run(kTmakit + " --version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("tmakit 0.", 0), 0u) << r.out;
}

TEST(CliConsistency, RunAndLayoutBothTakeDashOAndOutput) {
  TempDir d("consistency");
  const std::string scenario = quote(kSource + "/examples/quickstart/scenario.json");
  auto a = run(kTmakit + " run " + scenario + " --output " + quote((d.path / "a").string()));
  EXPECT_EQ(a.status, 0) << a.out;
  auto b = run(kTmakit + " run " + scenario + " -o " + quote((d.path / "b").string()));
  EXPECT_EQ(b.status, 0) << b.out;
  auto c = run(kTmakit + " layout" + kMap + " --swizzle 128b --coords 0,0 --output " + quote((d.path / "c.svg").string()));
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_TRUE(std::filesystem::exists(d.path / "c.svg"));
}

TEST(CliConsistency, AMissingScenarioIsNamedOnce) {
  auto r = run(kTmakit + " run nonexist.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("nonexist.json: nonexist.json"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("nonexist.json: error: ", 0), 0u) << r.out;  // the place once, then the message
}

TEST(CliConsistency, NoEmptyParenthesesWithoutAGpu) {
  auto r = run(kTmakit + " run " + quote(kSource + "/examples/quickstart/scenario.json") + " --engine both");
  EXPECT_EQ(r.out.find("()"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tmakit::cli::test
