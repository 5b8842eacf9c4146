// tmakit-ptxas: the ptxas `tmakit check` puts in Triton's way (TRITON_PTXAS_PATH, docs/check.md).
// Triton writes its PTX to a file and runs `ptxas ... --gpu-name=sm_90a IN.ptx -o OUT`; this
// program instruments IN.ptx (tmakit::instrument), adds `__tmakit_module_id` after the trace
// declaration (contract item 7: the FNV-1a of the instrumented text), stores the site table and
// the instrumented text as $TMAKIT_CHECK_DIR/modules/<id>.sites.json and .ptx, and runs the real
// ptxas on the instrumented file with the same arguments. On any failure to instrument, or when
// the real ptxas refuses the instrumented module, it runs the real ptxas on the original input:
// the program never breaks because of tmakit. Every other call (`--version`) goes straight on.
// Under `tmakit check --ptx-filter CMD` the input first goes through CMD, and the filter's text
// stands for the input from then on (the original is assembled only if ptxas refuses that text).
//
// The real ptxas is the one Triton would have run: $TMAKIT_REAL_PTXAS (tmakit check saves the
// user's TRITON_PTXAS_PATH there; _BLACKWELL for ptxas-blackwell), else Triton's own
// (<triton>/backends/nvidia/bin/ptxas, found by asking the parent Python process's interpreter
// where the `triton` package is), else `ptxas` on PATH, else /usr/local/cuda/bin/ptxas.
// Invoked as `ptxas-blackwell` (a link), it stands for Triton's ptxas-blackwell (sm_100 and up).
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check_session.hpp"  // check_wants_plain_copy: the same choice as for modules the program loads
#include "tmakit/check/capture.hpp"
#include "tmakit/check/ptx_filter.hpp"
#include "tmakit/instrument/instrument.hpp"
#include "tmakit/terminal_text.hpp"

namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Triton's bundled tool, from the interpreter of the Python process that runs us. The
// interpreter runs from an argument vector (no shell: its path may hold any character),
// without LD_PRELOAD (the watch library has nothing to do there); the tool's name is
// passed as an argument too, never spliced into the script.
fs::path triton_bundled(const std::string& tool) {
  std::error_code ec;
  const fs::path python = fs::read_symlink(fmt::format("/proc/{}/exe", getppid()), ec);
  if (ec || python.filename().string().find("python") == std::string::npos) return {};
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return {};
  }
  if (pid == 0) {
    ::dup2(out[1], 1);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::unsetenv("LD_PRELOAD");
    const char* script =
        "import importlib.util as u, os, sys; s = u.find_spec('triton'); "
        "print(os.path.join(os.path.dirname(s.origin), 'backends', 'nvidia', 'bin', sys.argv[1]) if s else '')";
    execl(python.c_str(), python.c_str(), "-c", script, tool.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(n));  // one path; the rest is drained
  ::close(out[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return {};
  text = text.substr(0, text.find('\n'));
  return text;
}

fs::path real_ptxas(bool blackwell) {
  const fs::path self = fs::weakly_canonical("/proc/self/exe");
  auto usable = [&](const fs::path& p) {
    std::error_code ec;
    return executable(p) && fs::weakly_canonical(p, ec) != self;
  };
  if (fs::path p = env(blackwell ? "TMAKIT_REAL_PTXAS_BLACKWELL" : "TMAKIT_REAL_PTXAS"); usable(p)) return p;
  if (fs::path p = triton_bundled(blackwell ? "ptxas-blackwell" : "ptxas"); usable(p)) return p;
  std::istringstream path(env("PATH"));
  for (std::string dir; std::getline(path, dir, ':');)
    if (fs::path p = fs::path(dir) / "ptxas"; usable(p)) return p;
  return "/usr/local/cuda/bin/ptxas";
}

int run(const fs::path& program, std::vector<std::string> args) {
  args.insert(args.begin(), program.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv(program.c_str(), argv.data());
    std::fprintf(stderr, "tmakit-ptxas: cannot run %s: %s\n", program.c_str(), std::strerror(errno));
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

bool write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

std::string read_file(const fs::path& p, bool* ok) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  *ok = static_cast<bool>(in);
  return s.str();
}

void say(const std::string& text) { std::fprintf(stderr, "%s\n", tmakit::terminal_line(text, 400).c_str()); }

// The input as `tmakit check --ptx-filter` makes it: INPUT.tmakit-filtered.ptx when the filter
// changed it, the input itself otherwise (said, with why, when the filter failed).
fs::path filter_input(const fs::path& input) {
  const auto filter = tmakit::check::ptx_filter_from_environment();
  if (!filter) return input;
  bool ok = false;
  const std::string text = read_file(input, &ok);
  if (!ok) return input;
  auto out = tmakit::check::run_ptx_filter(*filter, text, tmakit::instrument::kMaxModuleBytes);
  if (!out.ptx) {
    say(fmt::format("tmakit check: {}: the PTX filter `{}` failed: {}; the module is used as it was [check.ptx-filter]",
                    input.string(), filter->command, out.why));
    return input;
  }
  if (*out.ptx == text) return input;
  const fs::path filtered = input.string() + ".tmakit-filtered.ptx";
  if (!write_file(filtered, *out.ptx)) {
    say(fmt::format("tmakit check: {}: cannot write the PTX filter's text to {}; the module is used as it was "
                    "[check.ptx-filter]", input.string(), filtered.string()));
    return input;
  }
  say(fmt::format("tmakit check: {}: the PTX filter `{}` changed it ({} lines, {} before); its text stands in the "
                  "module's place", input.string(), filter->command, std::count(out.ptx->begin(), out.ptx->end(), '\n'),
                  std::count(text.begin(), text.end(), '\n')));
  return filtered;
}

// The instrumented input (the text of `source`: the input or the filter's text) beside the
// input, its site table in the check folder; the path of the instrumented file, or empty (and
// why) when the input stays as it is.
fs::path instrument_input(const fs::path& input, const fs::path& source, const fs::path& check_dir, std::string& why) {
  bool ok = false;
  const std::string text = read_file(source, &ok);
  if (!ok) return why = "cannot read " + source.string(), fs::path{};
  auto res = tmakit::instrument::instrument_module(text, input.string(), tmakit::instrument::OpSet::all,
                                                     tmakit::watch::check_wants_plain_copy());
  if (res.status != 0) {
    why = res.diags.empty() ? "not instrumented" : tmakit::format(res.diags.front());
    return {};
  }
  if (res.sites.empty()) return why = "no bulk-copy or barrier operation to trace", fs::path{};
  uint64_t id = 0;
  auto with_id = tmakit::check::add_module_id(res.text, &id);
  if (!with_id) return why = "no trace declaration in the instrumented text", fs::path{};
  const fs::path modules = check_dir / "modules";
  std::error_code ec;
  fs::create_directories(modules, ec);
  const std::string base = fmt::format("{:016x}", id);
  const fs::path out = input.string() + ".tmakit.ptx";
  if (!write_file(modules / (base + ".sites.json"), tmakit::instrument::sites_json(res.sites)) ||
      !write_file(modules / (base + ".ptx"), *with_id) || !write_file(out, *with_id))
    return why = "cannot write the instrumented module or its site table", fs::path{};
  return out;
}

// `tmakit-ptxas --tmakit-embed IN.ptx OUT.ptx` (cmake/TmakitInstrument.cmake): OUT is IN
// instrumented, with its site table in a last comment line `// tmakit-sites: {...}` that the
// preload library reads when the program loads the text. Exit 1 (lint's diagnostics printed)
// when IN cannot be instrumented: the build stops there.
int embed(const fs::path& in, const fs::path& out) {
  bool ok = false;
  const std::string text = read_file(in, &ok);
  if (!ok) return std::fprintf(stderr, "tmakit-ptxas: cannot read %s\n", in.c_str()), 2;
  auto res = tmakit::instrument::instrument_module(text, in.string(), tmakit::instrument::OpSet::all,
                                                     tmakit::watch::check_wants_plain_copy());
  for (const auto& d : res.diags) std::fprintf(stderr, "%s\n", tmakit::format(d).c_str());
  if (res.status != 0) return std::fprintf(stderr, "tmakit-ptxas: %s cannot be instrumented\n", in.c_str()), 1;
  const std::string sites = nlohmann::json::parse(tmakit::instrument::sites_json(res.sites)).dump();
  const fs::path tmp = out.string() + ".tmp";
  if (!write_file(tmp, res.text + "\n// tmakit-sites: " + sites + "\n"))
    return std::fprintf(stderr, "tmakit-ptxas: cannot write %s\n", tmp.c_str()), 2;
  std::error_code ec;
  fs::rename(tmp, out, ec);
  return ec ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--tmakit-embed") return embed(argv[2], argv[3]);
  const bool blackwell = fs::path(argv[0]).filename().string().find("blackwell") != std::string::npos;
  const fs::path ptxas = real_ptxas(blackwell);
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string check_dir = env("TMAKIT_CHECK_DIR");
  int input = -1;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].size() > 4 && args[i].ends_with(".ptx") && (i == 0 || args[i - 1] != "-o")) input = static_cast<int>(i);
  if (check_dir.empty() || input < 0) return run(ptxas, args);

  // The filter's text, when there is one, is what "the original" means below.
  const fs::path source = filter_input(args[input]);
  std::vector<std::string> plain = args;
  plain[input] = source.string();
  std::error_code ec;
  std::string why;
  const fs::path instrumented = instrument_input(args[input], source, check_dir, why);
  int status = 0;
  if (instrumented.empty()) {
    std::fprintf(stderr, "tmakit check: %s is assembled as it is, not instrumented: %s\n", args[input].c_str(),
                 why.c_str());
    status = run(ptxas, plain);
  } else {
    std::vector<std::string> changed = args;
    changed[input] = instrumented.string();
    status = run(ptxas, changed);
    fs::remove(instrumented, ec);
    if (status != 0) {
      std::fprintf(stderr, "tmakit check: %s refused the instrumented %s (status %d); assembling the %s\n",
                   ptxas.c_str(), args[input].c_str(), status, source == args[input] ? "original" : "PTX filter's text");
      status = run(ptxas, plain);
    }
  }
  if (source != args[input]) {
    fs::remove(source, ec);
    if (status != 0) {
      say(fmt::format("tmakit check: {} refused the PTX filter's text of {} (status {}); assembling the original "
                      "[check.ptx-filter]", ptxas.string(), args[input], status));
      status = run(ptxas, args);
    }
  }
  return status;
}
