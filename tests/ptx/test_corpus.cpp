// The corpus of real modules (tests/corpus/, written by scripts/corpus.sh): PTX from nvcc
// (plain, -lineinfo, -G), NVRTC, Triton 3.6 and CuTe DSL, plus a few broken on purpose, with
// ptxas 13.0's verdict on each (tests/corpus/verdicts.jsonl). Lint must agree with every
// verdict, and parse_module → print_module must give back modules ptxas assembles.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/lint.hpp"
#include "tmakit/ptx/module.hpp"

using namespace tmakit;
namespace fs = std::filesystem;

namespace {

const fs::path kCorpus = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus";
const char* const kPtxas = "/usr/local/cuda/bin/ptxas";

struct Verdict {
  std::string file, target, first_error;
  int ptxas = 0;
};

std::vector<Verdict> verdicts() {
  std::vector<Verdict> out;
  std::ifstream in(kCorpus / "verdicts.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    out.push_back({j["file"], j["target"], j["first_error"], j["ptxas"]});
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `tmakit lint`'s exit status for a module (tools/tmakit/lint_command.cpp): 2 unusable, 1 errors, 0 clean.
int lint_status(const ptx::LintResult& r) { return r.unusable ? 2 : r.errors() ? 1 : 0; }

std::string first_error(const ptx::LintResult& r) {
  for (const auto& d : r.diags)
    if (d.severity == Severity::error) return format(d);
  return "";
}

}  // namespace

// Every compiler's folder is there, every module has a verdict and every verdict a module.
TEST(Corpus, EveryCompilerAndEveryModuleHasAVerdict) {
  std::set<std::string> on_disk, recorded;
  for (const auto& e : fs::recursive_directory_iterator(kCorpus))
    if (e.path().extension() == ".ptx") on_disk.insert(fs::relative(e.path(), kCorpus).generic_string());
  for (const auto& v : verdicts()) recorded.insert(v.file);
  EXPECT_EQ(on_disk, recorded) << "run scripts/corpus.sh --only verdicts";
  std::map<std::string, int> per_folder;
  for (const auto& f : recorded) ++per_folder[f.substr(0, f.find('/'))];
  for (const char* folder : {"nvcc", "nvcc-lineinfo", "nvcc-G", "nvrtc", "triton", "cutedsl", "broken"})
    EXPECT_GE(per_folder[folder], 1) << folder;
  EXPECT_GE(recorded.size(), 40u);
}

// Lint accepts exactly the modules ptxas accepts. The modules of the broken/ folder are
// rejected by both; lint's first error must be on ptxas's line.
TEST(Corpus, LintAgreesWithPtxasOnEveryModule) {
  size_t accepted = 0, rejected = 0, checked = 0;
  for (const auto& v : verdicts()) {
    const std::string text = read(kCorpus / v.file);
    ASSERT_FALSE(text.empty()) << v.file;
    auto r = ptx::lint_module(text, v.file);
    checked += r.instructions;
    if (v.ptxas == 0) {
      ++accepted;
      EXPECT_EQ(lint_status(r), 0) << v.file << ": ptxas accepts it; lint says " << first_error(r);
      continue;
    }
    ++rejected;
    EXPECT_EQ(lint_status(r), 1) << v.file << ": ptxas rejects it (" << v.first_error << ")";
    // ptxas: "ptxas FILE, line N; error ...". Lint: "FILE:LINE:COL: error: ...".
    const auto at = v.first_error.find(", line ");
    ASSERT_NE(at, std::string::npos) << v.first_error;
    const std::string line = v.first_error.substr(at + 7, v.first_error.find(';', at) - at - 7);
    if (v.first_error.find("Parsing error near '.section'") != std::string::npos) {
      // ptxas names the next section; lint the one that never closes. Both are sections.
      EXPECT_NE(first_error(r).find("`.section"), std::string::npos) << first_error(r);
    } else {
      EXPECT_NE(first_error(r).find(v.file + ":" + line + ":"), std::string::npos)
          << first_error(r) << " vs " << v.first_error;
    }
  }
  EXPECT_GE(accepted, 40u);
  EXPECT_GE(rejected, 3u);
  EXPECT_GE(checked, 3000u);  // instructions of the table's families: lint read the bodies
}

// parse_module keeps everything: the pieces print back byte for byte, and each kind of piece
// is what its text says it is.
TEST(Corpus, ModulesPrintBackByteForByte) {
  for (const auto& v : verdicts()) {
    const std::string text = read(kCorpus / v.file);
    Diagnostics d;
    ptx::ModuleText m = ptx::parse_module(text, v.file, d);
    EXPECT_EQ(ptx::print_module(m), text) << v.file;
    if (v.ptxas != 0) continue;
    EXPECT_TRUE(d.empty()) << v.file << ": " << format(d.front());
    int line = 1;
    for (const auto& p : m.pieces) {
      ASSERT_EQ(p.line, line) << v.file;
      for (char c : p.text) line += c == '\n';
      ASSERT_FALSE(p.text.empty()) << v.file << ":" << p.line;
      using K = ptx::Piece::Kind;
      switch (p.kind) {
        case K::trivia: {
          // Only white space and comments.
          std::string rest = p.text;
          for (size_t k; (k = rest.find("//")) != std::string::npos;) rest.erase(k, rest.find('\n', k) - k);
          for (size_t k; (k = rest.find("/*")) != std::string::npos;) rest.erase(k, rest.find("*/", k) + 2 - k);
          EXPECT_EQ(rest.find_first_not_of(" \t\r\n"), std::string::npos) << v.file << ":" << p.line;
          break;
        }
        case K::section: EXPECT_EQ(p.text.substr(0, 8), ".section") << v.file << ":" << p.line; break;
        case K::open: EXPECT_EQ(p.text, "{"); break;
        case K::close: EXPECT_EQ(p.text, "}"); break;
        case K::label: EXPECT_EQ(p.text.back(), ':') << v.file << ":" << p.line; break;
        case K::instruction: EXPECT_EQ(p.text.back(), ';') << v.file << ":" << p.line; break;
        case K::directive: EXPECT_EQ(p.text[0], '.') << v.file << ":" << p.line; break;
        case K::header: EXPECT_NE(p.text.find("."), std::string::npos); break;
      }
    }
  }
}

// The canonical printer on real compilers' instructions: every instruction of the table's
// families, reprinted, parses back to the same instruction, and the rest of the module is
// untouched; the reprinted module lints as the original did.
TEST(Corpus, CanonicalReprintKeepsEveryInstruction) {
  size_t reprinted = 0;
  for (const auto& v : verdicts()) {
    if (v.ptxas != 0) continue;
    const std::string text = read(kCorpus / v.file);
    Diagnostics d;
    ptx::ModuleText m = ptx::parse_module(text, v.file, d);
    const std::string canonical = ptx::print_module(m, true);
    ptx::ModuleText again = ptx::parse_module(canonical, v.file, d);
    ASSERT_EQ(again.pieces.size(), m.pieces.size()) << v.file;
    for (size_t i = 0; i < m.pieces.size(); ++i) {
      const auto& a = m.pieces[i];
      const auto& b = again.pieces[i];
      ASSERT_EQ(a.kind, b.kind) << v.file << ":" << a.line;
      if (a.kind != ptx::Piece::Kind::instruction || !ptx::linted_mnemonic(a.statement.mnemonic())) {
        EXPECT_EQ(a.text, b.text) << v.file << ":" << a.line;
        continue;
      }
      Diagnostics da, db;
      auto ia = ptx::parse_instruction(a.statement.text, da);
      auto ib = ptx::parse_instruction(b.statement.text, db);
      ASSERT_TRUE(ia && ib) << v.file << ":" << a.line << ": " << a.text;
      EXPECT_EQ(ptx::print(*ia), ptx::print(*ib)) << v.file << ":" << a.line;
      EXPECT_EQ(b.text, ptx::print(*ia));
      ++reprinted;
    }
    auto r = ptx::lint_module(canonical, v.file);
    EXPECT_EQ(lint_status(r), 0) << v.file << ": " << first_error(r);
  }
  EXPECT_GE(reprinted, 3000u);
}

// Where ptxas is installed: it assembles every module printed back, verbatim and canonical.
TEST(Corpus, PtxasAssemblesPrintedModules) {
  if (!fs::exists(kPtxas)) GTEST_SKIP() << "no ptxas at " << kPtxas << "; Corpus.CanonicalReprintKeepsEveryInstruction covers the rest";
  const fs::path dir = fs::temp_directory_path() / ("tmakit_corpus_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& v : verdicts()) {
    if (v.ptxas != 0) continue;
    Diagnostics d;
    ptx::ModuleText m = ptx::parse_module(read(kCorpus / v.file), v.file, d);
    const fs::path out = dir / "printed.ptx";
    std::ofstream(out, std::ios::binary) << ptx::print_module(m, true);
    const std::string cmd = std::string(kPtxas) + " -arch=" + v.target + " " + out.string() + " -o /dev/null 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string msg;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) msg += buf;
    const int status = ::pclose(p);
    EXPECT_EQ(WEXITSTATUS(status), 0) << v.file << " printed canonically: " << msg;
  }
  fs::remove_all(dir);
}
