// tmakit-ptxas: the ptxas `tmakit check` puts in Triton's way (TRITON_PTXAS_PATH, docs/check.md).
// Triton writes its PTX to a file and runs `ptxas ... --gpu-name=sm_90a IN.ptx -o OUT`; this
// program instruments IN.ptx (tmakit::instrument), adds `__tmakit_module_id` after the trace
// declaration (contract item 7: the FNV-1a of the instrumented text), stores the site table and
// the instrumented text as $TMAKIT_CHECK_DIR/modules/<id>.sites.json and .ptx, and runs the real
// ptxas on the instrumented file with the same arguments. On any failure to instrument, or when
// the real ptxas refuses the instrumented module, it runs the real ptxas on the original input:
// the program never breaks because of tmakit. Every other call (`--version`) goes straight on.
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

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tmakit/check/capture.hpp"
#include "tmakit/instrument/instrument.hpp"

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

// The instrumented input beside the original, its site table in the check folder; the path of
// the instrumented file, or empty (and why) when the input stays as it is.
fs::path instrument_input(const fs::path& input, const fs::path& check_dir, std::string& why) {
  std::ifstream in(input, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  if (!in) return why = "cannot read " + input.string(), fs::path{};
  auto res = tmakit::instrument::instrument_module(s.str(), input.string());
  if (res.status != 0) {
    why = res.diags.empty() ? "not instrumented" : tmakit::format(res.diags.front());
    return {};
  }
  if (res.sites.empty()) return why = "no bulk-copy or barrier operation to trace", fs::path{};
  uint64_t id = 0;
  auto text = tmakit::check::add_module_id(res.text, &id);
  if (!text) return why = "no trace declaration in the instrumented text", fs::path{};
  const fs::path modules = check_dir / "modules";
  std::error_code ec;
  fs::create_directories(modules, ec);
  const std::string base = fmt::format("{:016x}", id);
  const fs::path out = input.string() + ".tmakit.ptx";
  if (!write_file(modules / (base + ".sites.json"), tmakit::instrument::sites_json(res.sites)) ||
      !write_file(modules / (base + ".ptx"), *text) || !write_file(out, *text))
    return why = "cannot write the instrumented module or its site table", fs::path{};
  return out;
}

// `tmakit-ptxas --tmakit-embed IN.ptx OUT.ptx` (cmake/TmakitInstrument.cmake): OUT is IN
// instrumented, with its site table in a last comment line `// tmakit-sites: {...}` that the
// preload library reads when the program loads the text. Exit 1 (lint's diagnostics printed)
// when IN cannot be instrumented: the build stops there.
int embed(const fs::path& in, const fs::path& out) {
  std::ifstream f(in, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  if (!f) return std::fprintf(stderr, "tmakit-ptxas: cannot read %s\n", in.c_str()), 2;
  auto res = tmakit::instrument::instrument_module(s.str(), in.string());
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

  std::string why;
  const fs::path instrumented = instrument_input(args[input], check_dir, why);
  if (instrumented.empty()) {
    std::fprintf(stderr, "tmakit check: %s is assembled as it is, not instrumented: %s\n", args[input].c_str(),
                 why.c_str());
    return run(ptxas, args);
  }
  std::vector<std::string> changed = args;
  changed[input] = instrumented.string();
  int status = run(ptxas, changed);
  std::error_code ec;
  fs::remove(instrumented, ec);
  if (status != 0) {
    std::fprintf(stderr, "tmakit check: %s refused the instrumented %s (status %d); assembling the original\n",
                 ptxas.c_str(), args[input].c_str(), status);
    status = run(ptxas, args);
  }
  return status;
}
