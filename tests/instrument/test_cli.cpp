// `tmakit instrument IN -o OUT [--ops ...]`: 0 with OUT and OUT.sites.json written; 1 for a
// module lint rejects, 2 for unusable input, and then nothing written.
#include <gtest/gtest.h>

#include "helpers.hpp"

using namespace instrument_test;

namespace {

const fs::path kTmakit = fs::path(TMAKIT_BINARY_DIR) / "tools/tmakit/tmakit";

struct Run {
  int status;
  std::string err;
};

Run tmakit(const std::string& args, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt";
  std::string cmd = kTmakit.string() + " " + args + " 2>" + err.string();
  int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read(err)};
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "cli" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(InstrumentCli, WritesTheModuleAndItsSiteTable) {
  auto d = fresh_dir("ok");
  const fs::path in = kCorpus / "nvcc-lineinfo/test_pipeline.sm_90a.ptx", out = d / "out.ptx";
  auto r = tmakit("instrument " + in.string() + " -o " + out.string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(strip_inserted(read(out)), read(in));
  auto j = nlohmann::json::parse(read(d / "out.ptx.sites.json"));
  EXPECT_EQ(j["sites"].size(), count_families(read(in), "all"));
  EXPECT_TRUE(j["sites"][0].contains("loc"));

  auto c = tmakit("instrument " + in.string() + " -o " + out.string() + " --ops copies", d);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(nlohmann::json::parse(read(d / "out.ptx.sites.json"))["sites"].size(), count_families(read(in), "copies"));
  for (const auto& e : fs::directory_iterator(d))  // no temporary left beside the outputs
    EXPECT_EQ(e.path().filename().string().find(".tmakit-"), std::string::npos) << e.path();
}

TEST(InstrumentCli, BadInputWritesNothing) {
  struct Case {
    std::string name, input, args;
    int status;
    std::string says;
  };
  auto d = fresh_dir("bad");
  write(d / "notes.txt", "this is not PTX\n");
  write(d / "empty.ptx", "");
  std::vector<Case> cases = {
      {"not PTX", (d / "notes.txt").string(), "", 2, "lint.no-target"},
      {"empty", (d / "empty.ptx").string(), "", 2, "lint.no-target"},
      {"missing", (d / "missing.ptx").string(), "", 2, "missing.ptx"},
      {"a folder", d.string(), "", 2, ""},
      {"lint error", (kCorpus / "broken/triton_missing_completion.sm_90a.ptx").string(), "", 1, "ptx.missing-qualifier"},
      {"unclosed section", (kCorpus / "broken/triton_unclosed_section.sm_90a.ptx").string(), "", 1, "module.brace"},
      {"bad --ops", (kCorpus / "nvcc/test_pipeline.sm_90a.ptx").string(), "--ops some", 2, "--ops"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path out = d / "out.ptx";
    auto r = tmakit("instrument " + c.input + " -o " + out.string() + " " + c.args, d);
    EXPECT_EQ(r.status, c.status) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(d / "out.ptx.sites.json"));
  }
  // An instrumented module is refused (its records would be counted twice).
  const fs::path once = d / "once.ptx";
  ASSERT_EQ(tmakit("instrument " + (kCorpus / "nvcc/test_pipeline.sm_90a.ptx").string() + " -o " + once.string(), d).status, 0);
  auto twice = tmakit("instrument " + once.string() + " -o " + (d / "twice.ptx").string(), d);
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.err.find("instrument.already"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(d / "twice.ptx"));
}

}  // namespace
