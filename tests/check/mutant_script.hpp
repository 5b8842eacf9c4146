// Running the mutant scripts of tests/gpu/check (cutlass_mutants.py, triton_tutorial_mutants.py) as
// `tmakit check --ptx-filter` runs them, and comparing a module with its mutant: shared by their
// tests (CheckCutlassMutants, CheckTritonTutorialMutants). No GPU: the scripts need only Python.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>

#include "trace_builder.hpp"

namespace check_test {

struct ScriptRun {
  int status = -1;
  std::string out, err;
};

// `ENV python3 SCRIPT ARGS < INPUT` (ENV: assignments such as `X=/tmp/y`, or empty).
inline ScriptRun run_script(const fs::path& script, const std::string& args, const std::string& input = "",
                            const std::string& env = "") {
  const fs::path dir = fs::temp_directory_path() / ("tmakit-mutant-script-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / "in.ptx", out = dir / "out.txt", err = dir / "err.txt";
  std::ofstream(in, std::ios::binary) << input;
  const std::string cmd = env + (env.empty() ? "" : " ") + "python3 '" + script.string() + "' " + args + " < '" +
                          in.string() + "' > '" + out.string() + "' 2> '" + err.string() + "'";
  const int st = std::system(cmd.c_str());
  ScriptRun r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read(out);
  r.err = read(err);
  fs::remove_all(dir);
  return r;
}

// Matches of `re` in `text`, `^` and `$` at every line.
inline int count_matches(const std::string& text, const std::string& re) {
  const std::regex r(re, std::regex::multiline);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

// Lines removed plus lines added from `a` to `b`, counted as multisets of lines (the mutations
// insert and delete whole lines).
inline int lines_changed(const std::string& a, const std::string& b) {
  auto counts = [](const std::string& text) {
    std::map<std::string, int> n;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) ++n[l];
    return n;
  };
  auto x = counts(a), y = counts(b);
  int d = 0;
  for (const auto& [l, n] : x) d += std::abs(n - (y.count(l) ? y[l] : 0));
  for (const auto& [l, n] : y)
    if (!x.count(l)) d += n;
  return d;
}

// One mutant of a committed excerpt: regexes with their match counts before and after the
// filter, and how many lines it may change.
struct Mutant {
  const char* name;
  const fs::path* excerpt;
  std::vector<std::pair<std::string, int>> before, after;  // regex, matches in the excerpt / the mutant
  int changed;                                               // lines removed + lines added
};

// `SCRIPT filter NAME` on the excerpt: exit 0, every count as the mutant says; the mutant's text.
inline std::string expect_mutant(const fs::path& script, const Mutant& m, const std::string& before) {
  for (const auto& [re, n] : m.before) EXPECT_EQ(count_matches(before, re), n) << re;
  const ScriptRun r = run_script(script, std::string("filter ") + m.name, before);
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& [re, n] : m.after) EXPECT_EQ(count_matches(r.out, re), n) << re;
  EXPECT_EQ(lines_changed(before, r.out), m.changed);
  return r.out;
}

}  // namespace check_test
