// `tmakit layout` end to end: the built binary's exit statuses (0 drawn, 1 the
// copy is invalid, 2 unusable input), that a failure writes nothing, and the
// scenario-step form with a multicast load drawn as one panel per destination CTA.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run.hpp"
#include "xml.hpp"

namespace tmakit::layout::test {
namespace {

namespace fs = std::filesystem;

const std::string kMap = "--type float32 --dims 64,64 --strides 256 --box 32,4 --swizzle 128b";

Ran layout(const std::string& args) { return run(quote(kTmakit) + " layout " + args); }

TEST(LayoutCli, DrawsAMapGivenByFlagsInEachFormat) {
  TempDir dir("cli");
  const fs::path svg = dir.path / "a.svg";
  Ran r = layout(kMap + " --coords 0,8 --smem-offset 1024 -o " + quote(svg.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  XmlNode root = parse_xml(read_file(svg));
  std::vector<const XmlNode*> chunks;
  root.find_all("g", "chunk", chunks);
  EXPECT_EQ(chunks.size(), 4 * 8u);  // 4 rows of 32 floats: one 128-byte line each
  Ran text = layout(kMap + " --coords 0,8 --format text");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("phase 0 of 8"), std::string::npos) << text.out;
  Ran json = layout(kMap + " --coords 0,8 --smem-offset 1152 --format json");
  ASSERT_EQ(json.status, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["swizzle_phase"], 1);  // (1152 mod 1024) / 128 (§3.1)
  // Line 1152 >> 7 = 9 XORs chunk indices with 9 & 7 = 1: chunk 0 holds logical chunk 1, x = 4 floats in.
  EXPECT_EQ(j["chunks"][0]["first"], nlohmann::json({4, 8}));
}

TEST(LayoutCli, InvalidCopiesExitOneAndUnusableInputTwoWritingNothing) {
  TempDir dir("cli");
  const fs::path out = dir.path / "never.svg";
  const std::string o = " -o " + quote(out.string());
  struct Case {
    std::string args;
    int status;
    std::string says;
  } cases[] = {
      {"--type float32 --dims 64,64 --strides 8 --box 32,4", 1, "map.global-stride-align"},
      {kMap + " --coords 3,0", 1, "coord.inner-align"},           // H9: 3 × 4 bytes
      {kMap + " --smem-offset 64", 1, "layout.smem-align"},        // H15
      {kMap + " --coords 0,0,0", 1, "coord.count"},
      {"--type float33 --dims 8", 2, "--type"},
      {kMap + " --format png", 2, "--format"},
      {kMap + " --max-lines 0", 2, "--max-lines"},
      {quote((dir.path / "missing.json").string()), 2, "cannot read"},
      {kMap + " --scenario x.json --step 0", 2, "--scenario"},
      {"--step 1", 2, "scenario"},  // --step needs --scenario (CLI11)
  };
  for (const Case& c : cases) {
    Ran r = layout(c.args + o);
    EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
  Ran r = layout(kMap + " -o " + quote((dir.path / "no" / "such" / "dir.svg").string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cannot write"), std::string::npos) << r.out;
}

TEST(LayoutCli, OutputIsWrittenWholeAndNeverThroughASymlink) {
  TempDir dir("cli");
  const fs::path out = dir.path / "a.svg", victim = dir.path / "victim", victim2 = dir.path / "victim2";
  std::ofstream(victim) << "precious";
  std::ofstream(victim2) << "precious";
  // Links planted at the name and at the temporary name the tool once used (FILE.tmp).
  fs::create_symlink(victim, dir.path / "a.svg.tmp");
  fs::create_symlink(victim2, out);
  // A link at the name is neither followed nor replaced: refused, left as it is.
  Ran r = layout(kMap + " -o " + quote(out.string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("is a symbolic link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[cli.output-exists]"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_symlink(out));
  EXPECT_EQ(read_file(victim2), "precious");
  // A regular file at the name is replaced whole; the link at FILE.tmp is not followed.
  fs::remove(out);
  std::ofstream(out) << "an older picture";
  r = layout(kMap + " -o " + quote(out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_NO_THROW(parse_xml(read_file(out)));
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) entries += e.path().filename().string()[0] == '.';
  EXPECT_EQ(entries, 0u) << "a temporary file was left behind";
}

// A 4-CTA cluster; the step multicasts to CTAs 0 and 2 (ctaMask 0x5, §10.1).
const char* kScenario = R"({"format": "tmakit-scenario/1", "cluster": {"ctas": 4}, "shared_bytes": 65536,
  "global": {"A": {"bytes": 16384}},
  "tensor_maps": {"tmap": {"encode": "tiled", "data_type": "float32", "global": "A", "offset": 0,
                           "dims": [64, 64], "strides": [256], "box": [32, 4], "swizzle": "128b"}},
  "symbols": {"sMem": "shared:1024", "mbar": "shared:0", "tc0": 0, "tc1": 8, "mask": "0x5"},
  "program": ["mbarrier.init.shared::cta.b64 [mbar], 1;",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [sMem+128], [tmap, {tc0, tc1}], [mbar], mask;",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sMem], [tmap, {tc0, nope}], [mbar];"]})";

TEST(LayoutCli, ScenarioStepMulticastDrawsOnePanelPerDestination) {
  TempDir dir("scen");
  const fs::path scen = dir.path / "s.json";
  std::ofstream(scen) << kScenario;
  const std::string s = " --scenario " + quote(scen.string());
  Ran json = layout(s + " --step 1 --format json");
  ASSERT_EQ(json.status, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["ctas"], nlohmann::json({0, 2}));
  EXPECT_EQ(j["smem_offset"], 1152);
  EXPECT_EQ(j["coords"], nlohmann::json({0, 8}));
  Ran svg = layout(s + " --step 1");
  ASSERT_EQ(svg.status, 0) << svg.out;
  std::vector<const XmlNode*> panels, chunks;
  const XmlNode root = parse_xml(svg.out);
  root.find_all("g", "panel", panels);
  root.find_all("g", "chunk", chunks);
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_EQ(panels[0]->attr("data-cta"), "0");
  EXPECT_EQ(panels[1]->attr("data-cta"), "2");
  EXPECT_EQ(chunks.size(), 2 * 4 * 8u);  // two panels of 4 lines

  Ran not_load = layout(s + " --step 0");
  EXPECT_EQ(not_load.status, 2);
  EXPECT_NE(not_load.out.find("layout.not-a-load"), std::string::npos) << not_load.out;
  Ran unknown = layout(s + " --step 2");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("`nope`"), std::string::npos) << unknown.out;
  Ran range = layout(s + " --step 3");
  EXPECT_EQ(range.status, 2);
  EXPECT_NE(range.out.find("0..2"), std::string::npos) << range.out;
}

}  // namespace
}  // namespace tmakit::layout::test
