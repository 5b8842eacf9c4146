// Shared by the instrument tests: the corpus, ptxas, and the two independent readings of an
// instrumented module that the tests compare against the instrumenter's own account.
#pragma once
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
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
// A module of one kernel `k` with the predicates, registers and mbarrier `bar` the small tests
// use: `body` its instructions (each line tab-indented, newline-ended), `after` what follows it.
inline std::string small_kernel(const std::string& body, const std::string& after = "") {
  return ".version 8.6\n.target sm_90a\n.address_size 64\n\n.visible .entry k()\n{\n\t.reg .pred %p<4>;\n"
         "\t.reg .b32 %r<8>;\n\t.shared .align 8 .b64 bar[1];\n" + body + "}\n" + after;
}

inline std::string strip_inserted(const std::string& text) {
  // Found by hand, not with std::regex: its matcher recurses once a character, and an inserted
  // span of a site is thousands of characters on one line (a stack overflow under ASan).
  std::string t;
  for (size_t at = 0, from = 0;;) {
    const size_t open = text.find("/*tmakit:*/", from);
    if (open == std::string::npos) {
      t.append(text, at, std::string::npos);
      break;
    }
    const size_t close = text.find("/*:tmakit*/", open);
    if (close == std::string::npos || text.find('\n', open) < close) {  // no span on this line
      from = open + 1;
      continue;
    }
    t.append(text, at, open - at);
    at = from = close + std::string_view("/*:tmakit*/").size();
  }
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

// One function of a module as the line reader below sees it.
struct TextFunction {
  std::string name;
  bool entry = false, visible = false;
  std::vector<std::string> lines;  // its body
};

// The functions with bodies, by braces counted per line (PTX's `{…}` vector operands open and
// close on their line; a comment's braces are not counted).
inline std::vector<TextFunction> text_functions(const std::string& text) {
  static const std::regex head(R"(\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+))");
  std::vector<TextFunction> out;
  std::istringstream in(text);
  std::string line;
  int depth = 0;
  std::optional<TextFunction> pending;
  bool inside = false;
  while (std::getline(in, line)) {
    std::string code = line.substr(0, line.find("//"));
    std::smatch m;
    if (depth == 0 && std::regex_search(code, m, head)) {
      pending = TextFunction{m[2], m[1] == "entry", code.find(".visible") != std::string::npos ||
                                                        code.find(".weak") != std::string::npos};
    }
    for (char c : code) {
      if (c == '{' && depth++ == 0 && pending) {
        out.push_back(*pending), pending.reset(), inside = true;
      } else if (c == '}' && --depth == 0) {
        inside = false;
      }
    }
    if (depth == 0 && code.find(';') != std::string::npos) pending.reset();  // a declaration
    if (inside) out.back().lines.push_back(line);
  }
  return out;
}

// The functions whose ordinary shared loads and stores get records (docs/check.md, "What is
// recorded"): those a kernel (or a function visible outside the module) reaches when what it
// reaches moves shared memory through the async proxy (a bulk or tensor copy or reduction:
// not a prefetch, commit_group or wait_group) or calls something unknown (a register, a name not defined here; printf,
// assert and the device heap excepted).
inline std::set<std::string> shared_traced_functions(const std::vector<TextFunction>& fns) {
  static const std::regex bulk(R"(\b(cp\.async\.bulk|cp\.reduce\.async\.bulk)\.(?!commit_group|wait_group|prefetch))");
  static const std::regex call(R"(\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([%\w$]+))");
  std::map<std::string, const TextFunction*> by_name;
  for (const auto& f : fns) by_name[f.name] = &f;
  std::map<std::string, std::vector<std::string>> callees;
  std::map<std::string, bool> wild;  // moves shared memory asynchronously, or calls the unknown
  for (const auto& f : fns) {
    std::string body;
    for (const auto& l : f.lines) body += l.substr(0, l.find("//")) + "\n";
    bool w = std::regex_search(body, bulk) || (f.visible && !f.entry);
    for (auto it = std::sregex_iterator(body.begin(), body.end(), call); it != std::sregex_iterator(); ++it) {
      const std::string c = (*it)[1];
      if (c == "vprintf" || c == "__assertfail" || c == "malloc" || c == "free") continue;
      if (c[0] == '%' || !by_name.count(c)) w = true;
      else callees[f.name].push_back(c);
    }
    wild[f.name] = w;
  }
  std::set<std::string> traced;
  for (const auto& f : fns) {
    if (!f.entry && !f.visible) continue;
    std::set<std::string> reach{f.name};
    std::vector<std::string> todo{f.name};
    bool needs = false;
    while (!todo.empty()) {
      std::string g = todo.back();
      todo.pop_back();
      needs |= wild[g];
      for (const auto& c : callees[g])
        if (reach.insert(c).second) todo.push_back(c);
    }
    if (needs) traced.insert(reach.begin(), reach.end());
  }
  return traced;
}

// The instructions a record goes with, by a regex over the module's lines (one statement a
// line, as every compiler writes them). `set`: "all", "copies" or "barriers". Ordinary shared
// loads and stores and CTA barriers only with "all", in the functions that record them.
inline size_t count_families(const std::string& text, const std::string& set) {
  static const std::string g = R"(^\s*(?:@!?[%\w$]+\s+)?)";
  static const std::regex copies(g + R"((cp\.async\.bulk|cp\.reduce\.async\.bulk|tensormap\.(replace|cp_fenceproxy))\b)");
  static const std::regex barriers(
      g + R"((mbarrier\.(init|arrive|arrive_drop|expect_tx|complete_tx|test_wait|try_wait|inval)\b|fence\.proxy\.|fence\.mbarrier_init|barrier\.cluster\.(arrive|wait)\b))");
  static const std::regex stores(g + R"(st(\.[\w:]+)*\.shared(::\w+)?(\.[\w:]+)*\s)");
  static const std::regex async_stores(g + R"(st\.(async|bulk)\b)");
  static const std::regex loads(g + R"(ld(\.[\w:]+)*\.shared(::\w+)?(\.[\w:]+)*\s)");
  // CTA barriers go with the shared accesses (not bar.warp.sync, not barrier.cluster.*).
  static const std::regex cta_barriers(g + R"((bar|barrier)(\.cta)?\.(sync|arrive|red)\b)");
  const auto fns = text_functions(text);
  const auto traced = shared_traced_functions(fns);
  size_t n = 0;
  for (const auto& f : fns) {
    for (const auto& line : f.lines) {
      bool c = std::regex_search(line, copies), b = std::regex_search(line, barriers);
      bool s = (std::regex_search(line, stores) && !std::regex_search(line, async_stores)) ||
               std::regex_search(line, loads) || std::regex_search(line, cta_barriers);
      n += set == "copies" ? c : set == "barriers" ? b : (c || b || (s && traced.count(f.name)));
    }
  }
  return n;
}

// The inserted lines of site `id` (from its `// __tmakit site ID:` comment to the next site's).
inline std::vector<std::string> lines_of_site(const std::string& text, uint32_t id) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  bool on = false;
  while (std::getline(in, l)) {
    if (l.find("// __tmakit site ") != std::string::npos)
      on = l.find("// __tmakit site " + std::to_string(id) + ":") != std::string::npos;
    if (l.find("ret; // __tmakit") != std::string::npos) on = false;  // the sites' path ends: the plain copy follows
    if (on && l.find("__tmakit") != std::string::npos) out.push_back(l);
  }
  return out;
}

// Records the instrumented text writes: the reads of the SM's clock into an inserted register
// (trace.hpp, Order), one a site (a tensor operation's map halves share its record's); the
// module's own reads of %clock64 are not counted.
inline size_t count_records(const std::string& text) {
  const std::string read = ", %clock64;", into = "mov.u64 %__tmakit_d";
  size_t n = 0;
  for (size_t k = text.find(read); k != std::string::npos; k = text.find(read, k + 1)) {
    size_t reg = k;  // back over the register's number
    while (reg > 0 && std::isdigit(static_cast<unsigned char>(text[reg - 1]))) --reg;
    n += reg < k && reg >= into.size() && text.compare(reg - into.size(), into.size(), into) == 0;
  }
  return n;
}

}  // namespace instrument_test
