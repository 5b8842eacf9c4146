// `tmakit check [--timeout S] [--log FILE] [--save-trace DIR] [--ptx-filter CMD] [--quiet] [--target T] -- CMD [ARGS...]`
// runs CMD with the preload library (as `tmakit watch` does) in check mode: the PTX the program
// loads is instrumented, every launch of an instrumented kernel is traced, waited for and
// replayed on the model, and the report goes to stderr (docs/check.md). Unlike watch, tmakit
// stays the parent: it kills a process whose launch hung (once the library has reported the
// hang) and prints the run's summary. `tmakit check --replay DIR [--json]` replays a saved trace
// (check_replay.cpp).
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "numbers.hpp"
#include "tmakit/check/ptx_filter.hpp"
#include "tmakit/instrument/trace.hpp"
#include "tmakit/terminal_text.hpp"
#include "watch_launch.hpp"

namespace tmakit::cli {
namespace {

namespace fs = std::filesystem;

struct CheckOptions {
  double timeout = 10;
  // Numbers as typed, read exactly (numbers.hpp): CLI11 would wrap "-1" to 2^64 - 1.
  std::string launches = "0";  // checked launches per kernel; 0: all
  std::string capacity;  // records in the trace buffer (128 bytes each); empty: the library's default
  std::string records = "auto";  // --records auto | device | host (capture.hpp's RecordsIn)
  std::string plain_copy = "auto";  // --plain-copy auto | on | off (docs/check.md, "How the module is changed")
  std::string ctas;                  // --ctas FIRST[-LAST]: the clusters traced (empty: all)
  std::string log, save_trace, replay, target = "sm_90a";
  std::optional<std::string> ptx_filter;  // --ptx-filter CMD (docs/check.md, "Mutation testing")
  bool quiet = false, json = false;
  bool strict = false;  // warnings, too, make the exit status 1
  bool no_replay = false;  // --no-replay: traces saved (--save-trace), not replayed
};

// tmakit-ptxas (tools/check/): TMAKIT_PTXAS_WRAPPER, beside tmakit, the build tree's tools/check.
fs::path find_ptxas_wrapper() {
  if (const char* env = std::getenv("TMAKIT_PTXAS_WRAPPER"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& p : {self.parent_path() / "tmakit-ptxas", self.parent_path() / ".." / "check" / "tmakit-ptxas"})
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec);
  return {};
}

// Puts the ptxas wrapper in Triton's way (docs/check.md, "Triton"): RUN/bin/ptxas and
// RUN/bin/ptxas-blackwell link to it; Triton's variables point there (the user's own choice is
// kept for the wrapper as TMAKIT_REAL_PTXAS*); a fresh Triton cache, so every kernel is compiled
// (and instrumented) in this run and no instrumented cubin is left in the user's cache.
void set_ptxas_wrapper_environment(const fs::path& run_dir) {
  const fs::path wrapper = find_ptxas_wrapper();
  if (wrapper.empty()) {
    fmt::print(stderr, "tmakit check: tmakit-ptxas was not found beside tmakit; Triton's kernels are not "
                       "instrumented (set TMAKIT_PTXAS_WRAPPER)\n");
    return;
  }
  std::error_code ec;
  fs::create_directories(run_dir / "bin", ec);
  fs::create_symlink(wrapper, run_dir / "bin" / "ptxas", ec);
  fs::create_symlink(wrapper, run_dir / "bin" / "ptxas-blackwell", ec);
  const std::pair<const char*, const char*> vars[] = {{"TRITON_PTXAS_PATH", "TMAKIT_REAL_PTXAS"},
                                                      {"TRITON_PTXAS_BLACKWELL_PATH", "TMAKIT_REAL_PTXAS_BLACKWELL"},
                                                      {"TRITON_PTXAS-BLACKWELL_PATH", "TMAKIT_REAL_PTXAS_BLACKWELL"}};
  for (const auto& [triton, real] : vars) {
    if (const char* user = std::getenv(triton); user != nullptr && *user != '\0') setenv(real, user, 1);
    const bool blackwell = std::string_view(triton).find("BLACKWELL") != std::string_view::npos;
    setenv(triton, (run_dir / "bin" / (blackwell ? "ptxas-blackwell" : "ptxas")).c_str(), 1);
  }
  setenv("TRITON_CACHE_DIR", (run_dir / "triton-cache").c_str(), 1);
}

// --ptx-filter CMD: its words, and its program found (a path, or a name on PATH) before the
// command runs; false after saying why.
bool usable_ptx_filter(const std::string& command) {
  const auto words = check::split_filter_command(command);
  std::string why;
  if (words.empty()) {
    why = "the command is empty; give the filter's program and its arguments, separated by spaces";
  } else if (words[0].find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::is_regular_file(words[0], ec) || ::access(words[0].c_str(), X_OK) != 0)
      why = fmt::format("{} is not a program this user can run; name an executable file", words[0]);
  } else {
    bool found = false;
    const char* path = std::getenv("PATH");
    std::string_view dirs = path != nullptr ? path : "";
    while (!found && !dirs.empty()) {
      const size_t colon = dirs.find(':');
      const fs::path p = fs::path(std::string(dirs.substr(0, colon))) / words[0];
      std::error_code ec;
      found = fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
      dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    }
    if (!found) why = fmt::format("{} is not found on PATH; name the program by its path", words[0]);
  }
  if (why.empty()) return true;
  fmt::print(stderr, "tmakit check: --ptx-filter: error: {} [cli.ptx-filter]\n", terminal_line(why));
  return false;
}

std::optional<std::vector<std::string>>& separated_command() {
  static std::optional<std::vector<std::string>> command;
  return command;
}

std::atomic<pid_t> g_child{0};
std::atomic<pid_t> g_hung{0};  // the process whose launch hung (the library's SIGUSR1 says which)

void on_hang(int, siginfo_t* info, void*) {
  const pid_t hung = info->si_value.sival_int > 0 ? info->si_value.sival_int : info->si_pid;
  g_hung.store(hung);
  kill(hung, SIGKILL);
}

void forward(int sig) {
  if (pid_t c = g_child.load(); c > 0) kill(c, sig);
}

struct Summary {
  int launches = 0, completed = 0, hung = 0, faulted = 0, findings = 0, errors = 0, unchecked = 0;
  int incomplete = 0;  // launches whose replay skipped checks (records dropped, clusters not replayed)
  int unreplayed = 0;  // launches recorded under --no-replay
  int records_lost = 0;  // launches whose records in device memory could not be read (a fault)
};

Summary read_summary(const fs::path& run_dir) {
  Summary s;
  std::ifstream in(run_dir / "launches.jsonl");
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    ++s.launches;
    const std::string outcome = j.value("outcome", "");
    s.completed += outcome == "completed";
    s.hung += outcome == "timeout";
    s.faulted += outcome == "fault";
    s.findings += j.value("findings", 0);
    s.errors += j.value("errors", j.value("findings", 0));  // a record without the split counts all as errors
    s.records_lost += j.value("records_lost", false);  // --no-replay or not: --records auto runs again
    if (!j.value("replayed", true)) {
      ++s.unreplayed;
      continue;
    }
    s.unchecked += j.value("replay_status", -1) == 2 || j.value("replay_status", -1) < 0;
    s.incomplete += j.value("skipped", 0) > 0;
  }
  return s;
}

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// The folder the library shares with this process: its traces, launches.jsonl, the ptxas
// wrapper's modules/. Removed at the end unless the user asked for the traces.
fs::path make_run_dir() {
  std::string tmpl = (fs::temp_directory_path() / "tmakit-check-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return {};
  return tmpl;
}

int run_check(const CheckOptions& o, const std::vector<std::string>& command) {
  if (command.empty()) {
    fmt::print(stderr, "tmakit check: error: no command given (tmakit check [options] -- CMD [ARGS...], or "
                       "tmakit check --replay DIR)\n");
    return 2;
  }
  uint64_t launches = 0, capacity = 0;
  try {
    launches = parse_integer<uint64_t>("--launches", o.launches);
    if (!o.capacity.empty()) capacity = parse_integer<uint64_t>("--capacity", o.capacity, Range{1024, tmakit::instrument::kMaxCapacity});
  } catch (const DiagnosticError& e) {
    fmt::print(stderr, "tmakit check: {}\n", format(e.diagnostic()));
    return 2;
  }
  if (!(o.timeout > 0) || o.timeout > 86400) {
    fmt::print(stderr, "tmakit check: --timeout: error: {} is not a number of seconds in (0, 86400]\n", o.timeout);
    return 2;
  }
  if (o.ptx_filter && !usable_ptx_filter(*o.ptx_filter)) return 2;
  if (o.no_replay && o.save_trace.empty()) {
    fmt::print(stderr, "tmakit check: --no-replay: error: the traces would be deleted when the program ends; name a "
                       "folder to keep them in with --save-trace DIR [cli.options]\n");
    return 2;
  }
  // --ctas FIRST[-LAST]: clusters by linear %clusterid, LAST included (without clusters: CTAs).
  std::string ctas_env;
  if (!o.ctas.empty()) {
    const size_t dash = o.ctas.find('-');
    try {
      const auto first = parse_integer<uint64_t>("--ctas", o.ctas.substr(0, dash), Range{0, uint64_t{1} << 31});
      const auto last = dash == std::string::npos
                            ? first
                            : parse_integer<uint64_t>("--ctas", o.ctas.substr(dash + 1), Range{static_cast<int64_t>(first), uint64_t{1} << 31});
      ctas_env = fmt::format("{}-{}", first, last + 1);
    } catch (const DiagnosticError& e) {
      fmt::print(stderr, "tmakit check: {} (--ctas FIRST or FIRST-LAST: clusters by linear index, LAST included)\n",
                 format(e.diagnostic()));
      return 2;
    }
  }
  const fs::path run_dir = make_run_dir();
  if (run_dir.empty()) {
    fmt::print(stderr, "tmakit check: error: cannot create a folder in {}: {}\n", fs::temp_directory_path().string(),
               std::strerror(errno));
    return 2;
  }
  std::error_code ec;
  auto give_up = [&] {
    fs::remove_all(run_dir, ec);
    return 2;
  };
  // The library reads the maps the program encodes from the watch log: always keep one.
  const std::string log = o.log.empty() ? (run_dir / "maps.jsonl").string() : o.log;
  if (!set_preload_environment("check", {.log = log, .quiet = o.quiet, .target = o.target})) return give_up();
  if (!o.save_trace.empty()) {
    fs::create_directories(o.save_trace, ec);
    if (!fs::is_directory(o.save_trace) || ::access(o.save_trace.c_str(), W_OK | X_OK) != 0) {
      const std::string why = ec ? ec.message() : !fs::is_directory(o.save_trace) ? "it is not a folder"
                                                                                 : std::strerror(errno);
      fmt::print(stderr, "tmakit check: --save-trace: error: cannot write traces to the folder {}: {}; name a folder "
                         "you can write [cli.output]\n", o.save_trace, why);
      return give_up();
    }
    setenv("TMAKIT_CHECK_SAVE", fs::absolute(o.save_trace).c_str(), 1);
  }
  setenv("TMAKIT_CHECK_DIR", run_dir.c_str(), 1);
  setenv("TMAKIT_CHECK_TIMEOUT", fmt::format("{}", o.timeout).c_str(), 1);
  setenv("TMAKIT_CHECK_LAUNCHES", std::to_string(launches).c_str(), 1);
  if (capacity) setenv("TMAKIT_CHECK_CAPACITY", std::to_string(capacity).c_str(), 1);
  else unsetenv("TMAKIT_CHECK_CAPACITY");
  if (o.no_replay) setenv("TMAKIT_CHECK_NO_REPLAY", "1", 1);
  else unsetenv("TMAKIT_CHECK_NO_REPLAY");
  if (ctas_env.empty()) unsetenv("TMAKIT_CHECK_CTAS");
  else setenv("TMAKIT_CHECK_CTAS", ctas_env.c_str(), 1);
  setenv("TMAKIT_CHECK_PLAIN_COPY", o.plain_copy.c_str(), 1);
  setenv("TMAKIT_CHECK_CLI", fs::read_symlink("/proc/self/exe", ec).c_str(), 1);
  setenv("TMAKIT_CHECK_PARENT_PID", std::to_string(getpid()).c_str(), 1);
  // Only --ptx-filter sets a filter: one left in the environment from elsewhere never edits modules.
  if (o.ptx_filter) setenv(check::kEnvPtxFilter, o.ptx_filter->c_str(), 1);
  else unsetenv(check::kEnvPtxFilter);
  set_ptxas_wrapper_environment(run_dir);

  struct sigaction hang{};
  hang.sa_sigaction = on_hang;
  hang.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGUSR1, &hang, nullptr);
  // The program, run under the library; the summary of its launches.
  auto run_program = [&](const char* records) {
    setenv("TMAKIT_CHECK_RECORDS", records, 1);
    const pid_t child = fork();
    if (child < 0) {
      fmt::print(stderr, "tmakit check: error: cannot start {}: {}\n", command[0], std::strerror(errno));
      return -1;
    }
    if (child == 0) {
      signal(SIGUSR1, SIG_DFL);
      _exit(exec_command("check", command));
    }
    g_child.store(child);
    signal(SIGINT, forward);
    signal(SIGTERM, forward);
    int st = 0;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  };
  int status = run_program(o.records.c_str());
  if (status < 0) return give_up();
  // --records auto: device memory, unless a launch lost its records there (a fault makes
  // device memory unreadable): then the program runs once more with host-mapped records.
  if (o.records == "auto") {
    if (const int lost = read_summary(run_dir).records_lost; lost > 0) {
      fmt::print(stderr, "tmakit check: {} lost {} in device memory; running the program again with the records in "
                         "host-mapped memory (--records host)\n", plural(lost, "launch", "launches"), lost == 1 ? "its records" : "their records");
      fs::remove(run_dir / "launches.jsonl", ec);
      g_hung.store(0);
      status = run_program("host");
      if (status < 0) return give_up();
    }
  }

  const Summary s = read_summary(run_dir);
  if (g_hung.load() != 0) status = 124;  // as timeout(1): a launch did not finish
  // Errors make a clean exit 1; warnings only with --strict (a warning must never fail a correct program).
  else if (status == 0 && (s.errors > 0 || (o.strict && s.findings > 0))) status = 1;
  // Nothing found, but not everything was checked: not a clean bill of health.
  else if (status == 0 && s.incomplete > 0) status = 3;
  if (!o.quiet || s.findings > 0 || s.hung > 0 || s.faulted > 0) {
    const std::string launches = plural(s.launches, "launch", "launches"),
                      outcomes = fmt::format("({} completed, {} hung, {} faulted)", s.completed, s.hung, s.faulted);
    std::string line = s.launches == 0 ? "no instrumented kernel was launched"
                       : s.unreplayed > 0
                           ? fmt::format("{} recorded {}, not replayed (--no-replay: replay each with tmakit check "
                                         "--replay DIR/launch-<n>)", launches, outcomes)
                           : fmt::format("{} checked {}, {}", launches, outcomes, plural(s.findings, "finding", "findings"));
    if (s.unchecked > 0) line += fmt::format("; {} could not be replayed", s.unchecked);
    if (s.incomplete > 0) line += fmt::format("; {} checked incompletely (their reports say which checks were skipped)", plural(s.incomplete, "launch was", "launches were"));
    if (!o.save_trace.empty() && s.launches > 0) line += fmt::format("; traces in {}", o.save_trace);
    fmt::print(stderr, "tmakit check: {}; exit status {}\n", line, status);
  }
  fs::remove_all(run_dir, ec);
  return status;
}

}  // namespace

void split_check_command(std::vector<char*>& args) {
  if (auto command = split_command_after_dashes(args, {"--timeout", "--launches", "--capacity", "--records", "--log", "--save-trace", "--replay", "--target",
                                                      "--ptx-filter", "--ctas", "--plain-copy"}))
    separated_command() = std::move(command);
}

void add_check_command(CLI::App& app, int& status) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Run a program and check its kernels' bulk copies on the model (tmakit check [options] -- CMD "
               "[ARGS...]), or replay a saved trace (tmakit check --replay DIR)");
  cmd->add_option("--timeout", o->timeout, "seconds a launch may run before it counts as hung (default 10)");
  cmd->add_option("--launches", o->launches,
                  "check the first N launches of each kernel; later ones run unchecked, recording nothing (default 0: all)");
  cmd->add_option("--capacity", o->capacity,
                  "records the trace buffer holds (128 bytes each; default 4194304 = 512 MiB in device memory, 262144 "
                  "= 32 MiB with --records host); records past it are counted, not kept (1024 to 67108864)");
  cmd->add_option("--records", o->records,
                  "where kernels write their records: device (device memory, copied after each launch: fast), host "
                  "(host-mapped memory: slow, but readable after a fault), auto (default: device, and the program "
                  "runs again with host when a fault made a launch's records unreadable)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  cmd->add_option("--ctas", o->ctas,
                  "trace only the clusters FIRST to LAST (FIRST or FIRST-LAST, by linear cluster index; a launch "
                  "without clusters has one CTA a cluster); the others run untraced (default: all)");
  cmd->add_option("--plain-copy", o->plain_copy,
                  "whether instrumented functions also keep their body as compiled, which calls that record nothing "
                  "run (auto, the default: where --launches or --ctas leaves calls unrecorded; on; off: the checked "
                  "launches run faster, the unchecked ones slower)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--log", o->log, "also keep the watch log of tensor-map calls in FILE (JSON Lines)");
  cmd->add_option("--save-trace", o->save_trace, "keep each launch's trace in DIR/launch-<n>/");
  cmd->add_option("--ptx-filter", o->ptx_filter,
                  "pass every PTX module through CMD (its words split at spaces; PTX on its standard input, the PTX to "
                  "use on its standard output) before it is instrumented; where CMD fails the module is used as it was");
  cmd->add_flag("--quiet", o->quiet, "no watch warnings; no summary when nothing was found");
  cmd->add_option("--target", o->target, "the target (default sm_90a)");
  cmd->add_option("--replay", o->replay, "replay a saved trace directory instead of running a command");
  cmd->add_flag("--json", o->json, "with --replay: the report as JSON");
  cmd->add_flag("--strict", o->strict, "warnings, too, make the exit status 1 (by default only errors do)");
  cmd->add_flag("--no-replay", o->no_replay,
                "record each checked launch and keep its trace (with --save-trace DIR) without replaying it: nothing "
                "is checked now; replay later with tmakit check --replay DIR/launch-<n>");
  cmd->prefix_command();
  cmd->footer("The command and its arguments follow the options, after --. Exit status: the program's; 1 when it "
              "exited 0 but errors were reported (warnings too with --strict); 3 when it exited 0, nothing was found, but checks were skipped (records dropped, clusters not replayed); 124 when a launch hung; 2 unusable input (docs/check.md).");
  cmd->callback([o, cmd, &status] {
    if (!o->replay.empty()) {
      status = check_replay(o->replay, o->json, o->strict);
      return;
    }
    const auto& separated = separated_command();
    status = run_check(*o, separated ? *separated : cmd->remaining());
  });
}

}  // namespace tmakit::cli
