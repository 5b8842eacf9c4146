// Issue 24, item 1: everything a user reads comes from this repository. No message (a string
// literal of the product's sources) and no page of docs/ or README.md may cite a document the
// user does not have: the private spec's section signs (§3.1), its fact tags (H6) and its
// "[I]" marks, its file names, or a scenario-format.md outside docs/. The GPU names H100/H200
// are not tags. tools/gpu (the hardware recorders) is left out: its "H9"… are the keys of the
// recorded vectors under tests/vectors/faults/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = TMAKIT_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What cites an outside document; `docs_page` allows scenario-format.md (a page of docs/ itself).
std::string citation(const std::string& text, bool docs_page) {
  static const std::regex tags(R"(§\s?\d|(^|[^A-Za-z0-9_#-])H\d{1,2}([^0-9A-Za-z]|$)|\[I\]|tma-semantics|shared/spec)");
  std::smatch m;
  if (std::regex_search(text, m, tags)) return m.str();
  if (!docs_page) {
    static const std::regex format(R"((^|[^/A-Za-z])scenario-format\.md)");
    if (std::regex_search(text, m, format)) return m.str();
  }
  return {};
}

// The string literals of a C++ file (ordinary ones; raw strings are not used for messages).
std::vector<std::pair<int, std::string>> literals(const std::string& src) {
  std::vector<std::pair<int, std::string>> out;
  int line = 1;
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\n') ++line;
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {  // a comment to the end of the line
      while (i < src.size() && src[i] != '\n') ++i;
      ++line;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      for (i += 2; i + 1 < src.size() && !(src[i] == '*' && src[i + 1] == '/'); ++i)
        if (src[i] == '\n') ++line;
      ++i;
      continue;
    }
    if (c == '\'') {  // a character literal: '"' must not open a string
      for (++i; i < src.size() && src[i] != '\''; ++i)
        if (src[i] == '\\') ++i;
      continue;
    }
    if (c != '"') continue;
    std::string lit;
    for (++i; i < src.size() && src[i] != '"' && src[i] != '\n'; ++i) {
      if (src[i] == '\\' && i + 1 < src.size()) lit += src[i++];
      lit += src[i];
    }
    out.emplace_back(line, lit);
  }
  return out;
}

std::vector<std::string> scan() {
  std::vector<std::string> found;
  for (const char* dir : {"src", "include", "tools", "python"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), kRoot);
      if (rel.string().rfind("tools/gpu/", 0) == 0) continue;
      const std::string ext = e.path().extension();
      const std::string text = read(e.path());
      if (ext == ".py" || ext == ".pyi") {  // docstrings and messages alike: the whole file
        std::istringstream in(text);
        std::string l;
        for (int n = 1; std::getline(in, l); ++n)
          if (auto c = citation(l, false); !c.empty()) found.push_back(rel.string() + ":" + std::to_string(n) + ": " + c);
      } else if (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h") {
        for (const auto& [n, lit] : literals(text))
          if (auto c = citation(lit, false); !c.empty())
            found.push_back(rel.string() + ":" + std::to_string(n) + ": \"" + lit + "\"");
      }
    }
  }
  std::vector<fs::path> pages = {kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "docs"))
    if (e.path().extension() == ".md" || e.path().extension() == ".svg") pages.push_back(e.path());
  for (const auto& e : fs::directory_iterator(kRoot / "docs" / "gallery")) pages.push_back(e.path());
  for (const auto& p : pages) {
    std::istringstream in(read(p));
    std::string l;
    const bool in_docs = p.parent_path().filename() == "docs";
    for (int n = 1; std::getline(in, l); ++n)
      if (auto c = citation(l, in_docs); !c.empty())
        found.push_back(fs::relative(p, kRoot).string() + ":" + std::to_string(n) + ": " + c);
  }
  return found;
}

TEST(SelfContained, TheDetectorSeesEveryKindOfCitation) {
  for (const char* s : {"(§3.1)", "(H6)", "H17, HW1", "inferred [I]", "see tma-semantics.md", "../shared/spec/x"})
    EXPECT_NE(citation(s, true), "") << s;
  EXPECT_NE(citation("(scenario-format.md)", false), "");
  EXPECT_EQ(citation("(scenario-format.md)", true), "");
  EXPECT_EQ(citation("docs/scenario-format.md", false), "");
  for (const char* s : {"NVIDIA H100 80GB HBM3", "the H200", "HW5", "#h100-oob-nan", "SHA256", "0x7FF7"})
    EXPECT_EQ(citation(s, false), "") << s;
  const auto lits = literals("f(\"a (H6)\"); // \"(§1)\" \n char q = '\"'; g(\"b\\\" (§2.1)\");");
  ASSERT_EQ(lits.size(), 2u);
  EXPECT_NE(citation(lits[0].second, false), "");
  EXPECT_NE(citation(lits[1].second, false), "");
}

TEST(SelfContained, NoMessageOrDocCitesADocumentOutsideTheRepository) {
  const auto found = scan();
  std::string list;
  for (const auto& f : found) list += "  " + f + "\n";
  EXPECT_TRUE(found.empty()) << found.size() << " citations of documents outside the repository:\n" << list;
}

TEST(SelfContained, TheScenarioFormatAndTheHardwareFactsAreDocumentedHere) {
  const std::string format = read(kRoot / "docs" / "scenario-format.md");
  EXPECT_NE(format.find("tmakit-scenario/1"), std::string::npos);
  for (const char* field : {"`format`", "`target`", "`ptx_version`", "`cluster.ctas`", "`shared_bytes`", "`global.NAME`",
                            "`shared_init`", "`tensor_maps.NAME`", "`symbols`", "`program`", "`outputs`", "splitmix64"})
    EXPECT_NE(format.find(field), std::string::npos) << field;
  const std::string notes = read(kRoot / "docs" / "hardware-notes.md");
  for (const char* anchor : {"h100-store-whole-chunks", "h100-smem-128-alignment", "h100-inner-coordinate-fault",
                             "h100-negative-store-fault", "h100-int64-bitwise-fault", "h100-driver-limits"})
    EXPECT_NE(notes.find(std::string("<a id=\"") + anchor + "\"></a>"), std::string::npos) << anchor;
}

}  // namespace
