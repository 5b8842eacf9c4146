// lintfuzz: generate and mutate instruction lines from the table, ask ptxas and
// `tmakit lint` (the same library call) about each, and report where they differ.
// scripts/ptxas-agreement.sh runs it for sm_90, sm_90a and sm_100a.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>

#include "generate.hpp"
#include "tmakit/ptx/lint.hpp"
#include "wrap.hpp"

using namespace tmakit;
using Verdicts = std::vector<std::optional<std::string>>;  // per line: the first rejection message

namespace {

struct PtxasLine {
  int line = 0;
  bool fatal = false;
  std::string message;
};

// "ptxas FILE, line 13; error   : MESSAGE"
std::optional<PtxasLine> parse_ptxas(const std::string& s) {
  size_t at = s.find(", line ");
  if (s.rfind("ptxas", 0) != 0 || at == std::string::npos) return std::nullopt;
  PtxasLine p;
  p.line = std::atoi(s.c_str() + at + 7);
  size_t semi = s.find("; ", at);
  if (semi == std::string::npos) return std::nullopt;
  std::string kind = s.substr(semi + 2, s.find(' ', semi + 2) - semi - 2);
  if (kind != "error" && kind != "fatal") return std::nullopt;
  p.fatal = kind == "fatal";
  size_t colon = s.find(": ", semi);
  p.message = colon == std::string::npos ? s : s.substr(colon + 2);
  while (!p.message.empty() && (p.message.back() == '\n' || p.message.back() == '\r')) p.message.pop_back();
  return p;
}

// ptxas on `text`, from an argument vector (no shell: the paths may hold any character),
// its output and error read together; the input goes to a fresh file (mkstemps, never a
// name planted in /tmp).
std::pair<int, std::vector<std::string>> run_ptxas(const std::string& ptxas, const std::string& target,
                                                   const std::string& text) {
  std::string file = "/tmp/lintfuzz-XXXXXX.ptx";
  const int in = ::mkstemps(file.data(), 4);
  if (in < 0) return {-1, {}};
  std::FILE* f = ::fdopen(in, "w");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  int out[2];
  if (::pipe(out) != 0) return std::remove(file.c_str()), std::pair<int, std::vector<std::string>>{-1, {}};
  const std::string arch = "-arch=" + target;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    ::execlp(ptxas.c_str(), ptxas.c_str(), arch.c_str(), file.c_str(), "-o", "/dev/null", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::vector<std::string> lines;
  std::FILE* p = ::fdopen(out[0], "r");
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) lines.emplace_back(buf);
  if (p) std::fclose(p);
  int status = -1;
  if (pid > 0) ::waitpid(pid, &status, 0);
  std::remove(file.c_str());
  return {status, lines};
}

// ptxas's verdict on each line. One call covers many lines, since ptxas names the line of each
// error; a fatal parse error stops it, so that line is blanked and the rest asked again, and
// output that names no line of the batch is narrowed down by halves.
Verdicts ptxas_verdicts(const std::string& ptxas, const std::string& version, const std::string& target,
                        std::vector<std::string> lines) {
  Verdicts v(lines.size());
  while (true) {
    auto [rc, out] = run_ptxas(ptxas, target, lintfuzz::wrap_module(version, target, lines));
    if (rc == 0) return v;
    bool placed = false, fatal = false;
    for (const auto& s : out) {
      auto p = parse_ptxas(s);
      if (!p) continue;
      int idx = p->line - lintfuzz::kFirstLine;
      if (idx < 0 || idx >= static_cast<int>(lines.size()) || lines[idx].empty()) continue;
      if (!v[idx]) v[idx] = p->message;
      placed = true;
      if (p->fatal) lines[idx].clear(), fatal = true;
    }
    if (fatal) continue;
    if (placed) return v;
    // Nothing attributable to a line: split.
    if (lines.size() == 1) {
      v[0] = out.empty() ? "rejected" : out.front();
      return v;
    }
    size_t half = lines.size() / 2;
    std::vector<std::string> a(lines.begin(), lines.begin() + half), b(lines.begin() + half, lines.end());
    Verdicts va = ptxas_verdicts(ptxas, version, target, a), vb = ptxas_verdicts(ptxas, version, target, b);
    for (size_t i = 0; i < lines.size(); ++i) {
      auto& src = i < half ? va[i] : vb[i - half];
      if (!v[i] && src) v[i] = src;
    }
    return v;
  }
}

// tmakit lint's verdict on each line of the same module: the first error's rule and message.
Verdicts lint_verdicts(const std::string& version, const std::string& target, const std::vector<std::string>& lines) {
  Verdicts v(lines.size());
  auto r = ptx::lint_module(lintfuzz::wrap_module(version, target, lines), "fuzz.ptx");
  for (const auto& d : r.diags) {
    if (d.severity != Severity::error) continue;
    int line = std::atoi(d.where.c_str() + d.where.find(':') + 1);
    int idx = line - lintfuzz::kFirstLine;
    if (idx >= 0 && idx < static_cast<int>(lines.size()) && !v[idx]) v[idx] = d.rule + "\t" + d.message;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lintfuzz: agreement of tmakit lint with ptxas on generated and mutated lines"};
  std::string target_text = "sm_90a", ptxas = "/usr/local/cuda/bin/ptxas", out_path, sample_path;
  int count = 10000, batch = 1000, sample = 0;
  uint32_t seed = 1;
  app.add_option("--target", target_text, "sm_90, sm_90a, sm_100a, ...");
  app.add_option("--count", count, "lines to generate");
  app.add_option("--seed", seed, "generator seed");
  app.add_option("--ptxas", ptxas, "the ptxas to compare with");
  app.add_option("--batch", batch, "lines per ptxas call");
  app.add_option("--out", out_path, "write every line's two verdicts here (JSON lines)");
  app.add_option("--sample", sample, "also append the first N lines with ptxas's verdict to --sample-out");
  app.add_option("--sample-out", sample_path, "the recorded sample (tests/vectors/ptxas_sample.jsonl)");
  CLI11_PARSE(app, argc, argv);
  auto target = spec::parse_target(target_text);
  if (!target) {
    std::fprintf(stderr, "lintfuzz: unknown target %s\n", target_text.c_str());
    return 2;
  }
  auto cases = lintfuzz::generate(*target, count, seed);
  std::map<std::string, std::vector<size_t>> by_version;
  for (size_t i = 0; i < cases.size(); ++i) by_version[cases[i].version].push_back(i);
  Verdicts px(cases.size()), lt(cases.size());
  for (const auto& [version, idx] : by_version) {
    for (size_t start = 0; start < idx.size(); start += batch) {
      std::vector<std::string> lines;
      for (size_t k = start; k < std::min(idx.size(), start + batch); ++k) lines.push_back(cases[idx[k]].line);
      Verdicts a = ptxas_verdicts(ptxas, version, target_text, lines), b = lint_verdicts(version, target_text, lines);
      for (size_t k = 0; k < lines.size(); ++k) px[idx[start + k]] = a[k], lt[idx[start + k]] = b[k];
    }
  }
  std::ofstream out;
  if (!out_path.empty()) out.open(out_path);
  std::ofstream samples;
  if (sample > 0 && !sample_path.empty()) samples.open(sample_path, std::ios::app);
  size_t agree = 0, stricter = 0, looser = 0, rejected = 0;
  std::map<std::string, std::pair<int, std::string>> kinds;  // disagreement kind → count, example
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    nlohmann::json j = {{"target", target_text}, {"version", c.version}, {"line", c.line},
                        {"ptxas", px[i] ? "reject" : "accept"}, {"ptxas_message", px[i].value_or("")}};
    if (static_cast<int>(i) < sample && samples) samples << j.dump() << "\n";
    j["mutation"] = c.mutation;
    j["tmakit"] = lt[i] ? "reject" : "accept";
    const std::string verdict = lt[i].value_or("");
    const std::string rule = verdict.substr(0, verdict.find('\t'));
    j["tmakit_rule"] = rule;
    j["tmakit_message"] = verdict.find('\t') == std::string::npos ? "" : verdict.substr(verdict.find('\t') + 1);
    if (out) out << j.dump() << "\n";
    rejected += px[i].has_value();
    if (px[i].has_value() == lt[i].has_value()) {
      ++agree;
      continue;
    }
    std::string kind = lt[i] ? "tmakit stricter: " + rule + " (ptxas accepts)" : "tmakit looser: ptxas says " + *px[i];
    (lt[i] ? stricter : looser)++;
    auto& k = kinds[kind];
    if (k.first++ == 0) k.second = ".version " + c.version + ": " + c.line;
  }
  std::printf("%s: %zu lines (ptxas rejects %zu), agree %zu (%.2f%%), tmakit stricter %zu, tmakit looser %zu\n",
              target_text.c_str(), cases.size(), rejected, agree, 100.0 * agree / cases.size(), stricter, looser);
  for (const auto& [kind, k] : kinds) std::printf("  %5d  %s\n         e.g. %s\n", k.first, kind.c_str(), k.second.c_str());
  return 0;
}
