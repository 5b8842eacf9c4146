// The site table: each site's PTX line holds its instruction, and in a -lineinfo module its
// file:line is the `.loc` in force there, read here by a regex over the original text and
// resolved through its `.file` lines. The CLI writes the same table as OUT.sites.json.
#include <gtest/gtest.h>

#include <map>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

struct Loc {
  std::string file;
  int line = 0;
};

// The `.loc` in force at each line: the last one above it in the same function.
std::vector<Loc> locs_by_line(const std::vector<std::string>& ls) {
  static const std::regex file_re(R"(^\s*\.file\s+(\d+)\s+\"([^\"]*)\")");
  static const std::regex loc_re(R"(^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+)");
  static const std::regex fn_re(R"(\.(entry|func)\s)");
  std::map<int, std::string> files;
  for (const auto& l : ls) {
    std::smatch m;
    if (std::regex_search(l, m, file_re)) files[std::stoi(m[1])] = m[2];
  }
  std::vector<Loc> out(ls.size() + 1);
  Loc cur;
  for (size_t i = 0; i < ls.size(); ++i) {
    std::smatch m;
    if (std::regex_search(ls[i], fn_re)) cur = {};
    if (std::regex_search(ls[i], m, loc_re)) cur = {files[std::stoi(m[1])], std::stoi(m[2])};
    out[i + 1] = cur;  // 1-based
  }
  return out;
}

TEST(InstrumentSites, LocOfALineinfoModule) {
  for (const char* file : {"nvcc-lineinfo/test_pipeline.sm_90a.ptx", "nvrtc/nvrtc_kernels.lineinfo.sm_90a.ptx",
                           "nvcc-G/test_pipeline.sm_90a.ptx"}) {
    SCOPED_TRACE(file);
    const std::string text = read(kCorpus / file);
    auto r = instrument::instrument_module(text, file);
    ASSERT_EQ(r.status, 0);
    ASSERT_FALSE(r.sites.empty());
    auto ls = lines(text);
    auto locs = locs_by_line(ls);
    size_t with_loc = 0;
    for (const auto& s : r.sites) {
      ASSERT_GE(s.ptx_line, 1);
      ASSERT_LE(s.ptx_line, static_cast<int>(ls.size()));
      EXPECT_NE(ls[s.ptx_line - 1].find(s.text), std::string::npos) << s.ptx_line;
      EXPECT_EQ(s.file, locs[s.ptx_line].file) << s.ptx_line << ": " << s.text;
      EXPECT_EQ(s.line, locs[s.ptx_line].line) << s.ptx_line << ": " << s.text;
      with_loc += s.line > 0;
    }
    EXPECT_EQ(with_loc, r.sites.size());  // every instruction of a -lineinfo module has a .loc before it
  }
}

TEST(InstrumentSites, NoLocWithoutLineinfo) {
  auto r = instrument::instrument_module(read(kCorpus / "nvcc/test_pipeline.sm_90a.ptx"), "p.ptx");
  ASSERT_EQ(r.status, 0);
  ASSERT_FALSE(r.sites.empty());
  for (const auto& s : r.sites) {
    EXPECT_EQ(s.line, 0);
    EXPECT_TRUE(s.file.empty());
    EXPECT_FALSE(s.function.empty());
  }
}

TEST(InstrumentSites, JsonCarriesTheTable) {
  auto r = instrument::instrument_module(read(kCorpus / "nvcc-lineinfo/test_pipeline.sm_90a.ptx"), "p.ptx");
  ASSERT_EQ(r.status, 0);
  auto j = nlohmann::json::parse(instrument::sites_json(r.sites));
  EXPECT_EQ(j["record_bytes"], 128);
  EXPECT_EQ(j["trace_symbol"], "__tmakit_trace");
  ASSERT_EQ(j["sites"].size(), r.sites.size());
  for (size_t i = 0; i < r.sites.size(); ++i) {
    const auto& s = j["sites"][i];
    EXPECT_EQ(s["id"], i);
    EXPECT_EQ(s["op"], std::string(instrument::to_string(r.sites[i].op)));
    EXPECT_EQ(s["ptx_line"], r.sites[i].ptx_line);
    EXPECT_EQ(s["loc"]["file"], r.sites[i].file);
    EXPECT_EQ(s["loc"]["line"], r.sites[i].line);
    EXPECT_EQ(s["fields"].size(), r.sites[i].fields.size());
  }
}

}  // namespace
