// Shared by the instrument tests: the corpus, ptxas, and the two independent readings of an
// instrumented module that the tests compare against the instrumenter's own account.
#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace instrument_test {

namespace fs = std::filesystem;
inline const fs::path kCorpus = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus";
inline const char* const kPtxas = "/usr/local/cuda/bin/ptxas";

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

struct CorpusModule {
  std::string file, target;
};

// The corpus modules ptxas accepts, with their targets (tests/corpus/verdicts.jsonl).
inline std::vector<CorpusModule> accepted_modules() {
  std::vector<CorpusModule> out;
  std::ifstream in(kCorpus / "verdicts.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["ptxas"] == 0) out.push_back({j["file"], j["target"]});
  }
  return out;
}

inline bool have_ptxas() { return access(kPtxas, X_OK) == 0; }

// ptxas's exit status on `text` for `target`; its messages go to `log`.
inline int ptxas(const std::string& text, const std::string& target, const fs::path& dir, std::string* log = nullptr) {
  fs::create_directories(dir);
  const fs::path in = dir / "m.ptx", err = dir / "ptxas.log";
  write(in, text);
  std::string cmd = std::string(kPtxas) + " -arch=" + target + " " + in.string() + " -o /dev/null 2>" + err.string();
  int rc = std::system(cmd.c_str());
  if (log) *log = read(err);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The module with everything the instrumenter inserted taken out: the spans it puts on a
// line shared with other statements (`/*tmakit:*/ ... /*:tmakit*/`), then every line that
// names the fresh prefix. Written from the documented form of the output, not from the code.
inline std::string strip_inserted(const std::string& text) {
  static const std::regex inline_span(R"(/\*tmakit:\*/[^\n]*?/\*:tmakit\*/)");
  std::string t = std::regex_replace(text, inline_span, "");
  std::string out;
  size_t k = 0;
  while (k < t.size()) {
    size_t nl = t.find('\n', k);
    size_t end = nl == std::string::npos ? t.size() : nl + 1;
    std::string_view l(t.data() + k, end - k);
    if (l.find("__tmakit") == std::string_view::npos) out.append(l);
    k = end;
  }
  return out;
}

// The instructions a record goes with, by a regex over the module's lines (one statement a
// line, as every compiler writes them). `set`: "all", "copies" or "barriers".
inline size_t count_families(const std::string& text, const std::string& set) {
  static const std::string g = R"(^\s*(?:@!?[%\w$]+\s+)?)";
  static const std::regex copies(g + R"((cp\.async\.bulk|cp\.reduce\.async\.bulk|tensormap\.(replace|cp_fenceproxy))\b)");
  static const std::regex barriers(
      g + R"((mbarrier\.(init|arrive|arrive_drop|expect_tx|complete_tx|test_wait|try_wait|inval)\b|fence\.proxy\.|fence\.mbarrier_init|barrier\.cluster\.(arrive|wait)\b))");
  static const std::regex stores(g + R"(st(\.[\w:]+)*\.shared(::\w+)?(\.[\w:]+)*\s)");
  static const std::regex async_stores(g + R"(st\.(async|bulk)\b)");
  static const std::regex loads(g + R"(ld(\.[\w:]+)*\.shared(::\w+)?(\.[\w:]+)*\s)");
  size_t n = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    bool c = std::regex_search(line, copies), b = std::regex_search(line, barriers);
    bool s = (std::regex_search(line, stores) && !std::regex_search(line, async_stores)) || std::regex_search(line, loads);
    n += set == "copies" ? c : set == "barriers" ? b : (c || b || s);
  }
  return n;
}

// Records the instrumented text writes: its reservations of a record index.
inline size_t count_records(const std::string& text) {
  size_t n = 0;
  const std::string next = "[__tmakit_trace+16]";
  for (size_t k = text.find("atom.global.add.u64"); k != std::string::npos; k = text.find("atom.global.add.u64", k + 1))
    n += text.compare(text.find('[', k), next.size(), next) == 0;
  return n;
}

}  // namespace instrument_test
