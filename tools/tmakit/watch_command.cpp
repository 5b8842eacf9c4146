// `tmakit watch [--log FILE] [--strict] [--quiet] [--target T] -- CMD [ARGS...]`:
// runs CMD with the preload library libtmakit_watch.so (docs/watch.md), which sees
// every tensor-map call CMD makes and checks it. tmakit replaces itself with CMD
// (exec), so CMD keeps tmakit's pid, signals and exit status; the summary comes
// from the library at CMD's exit.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tmakit/spec/target.hpp"
#include "watch_launch.hpp"

namespace tmakit::cli {
namespace {

namespace fs = std::filesystem;

struct WatchOptions {
  std::string log;
  bool strict = false;
  bool quiet = false;
  std::string target = "sm_90a";
};

}  // namespace

// The library beside the CLI: TMAKIT_WATCH_LIBRARY, the CLI's own folder, the
// install layout (<bindir>/<relative libdir>), then the build tree.
std::string find_watch_library() {
  if (const char* env = std::getenv("TMAKIT_WATCH_LIBRARY"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(self.parent_path() / "libtmakit_watch.so");
    candidates.push_back(self.parent_path() / TMAKIT_WATCH_RELATIVE_LIBDIR / "libtmakit_watch.so");
  }
  candidates.emplace_back(TMAKIT_WATCH_BUILD_PATH);
  for (const auto& p : candidates)
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  return {};
}

namespace {

// Why `path` cannot be the preload library, or "": the dynamic loader ignores a preload it
// cannot load (a wrong path, not a library) with a warning and runs the command unwatched,
// so the library is checked before anything runs: a regular ELF shared object that reads
// the watch's own environment (TMAKIT_WATCH_ROOT_PID), i.e. libtmakit_watch.so.
std::string not_the_watch_library(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  struct stat st{};
  std::string why;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) why = "it is not a regular file";
  else if (st.st_size > (off_t{1} << 30)) why = "it is larger than any build of the library (1 GiB)";
  void* map = why.empty() && st.st_size >= 64 ? ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                                                       MAP_PRIVATE, fd, 0)
                                              : MAP_FAILED;
  ::close(fd);
  if (!why.empty()) return why;
  if (map == MAP_FAILED) return "it is not an ELF shared library";
  const auto* bytes = static_cast<const unsigned char*>(map);
  const auto size = static_cast<size_t>(st.st_size);
  constexpr std::string_view kMark = "TMAKIT_WATCH_ROOT_PID";
  if (std::memcmp(bytes, "\x7f" "ELF", 4) != 0 || bytes[16] != 3 /* ET_DYN */ || bytes[17] != 0)
    why = "it is not an ELF shared library";
  else if (::memmem(bytes, size, kMark.data(), kMark.size()) == nullptr)
    why = "it is a shared library, but not libtmakit_watch.so";
  ::munmap(map, size);
  return why;
}

}  // namespace

bool set_preload_environment(std::string_view who, const PreloadOptions& o) {
  if (!spec::parse_target(o.target)) {
    fmt::print(stderr, "tmakit {}: --target: error: unknown target \"{}\" (e.g. sm_90a, sm_100a) [cli.target]\n", who,
               o.target);
    return false;
  }
  const std::string library = find_watch_library();
  if (library.empty()) {
    fmt::print(stderr, "tmakit {}: error: libtmakit_watch.so was not found beside tmakit; set "
                       "TMAKIT_WATCH_LIBRARY to its path [watch.library]\n", who);
    return false;
  }
  if (const std::string why = not_the_watch_library(library); !why.empty()) {
    fmt::print(stderr, "tmakit {}: error: the preload library {} cannot be used: {}; nothing was run. Set "
                       "TMAKIT_WATCH_LIBRARY to the path of libtmakit_watch.so, or unset it to use the one beside "
                       "tmakit [watch.library]\n", who, library, why);
    return false;
  }
  if (library.find_first_of(": ") != std::string::npos) {
    fmt::print(stderr, "tmakit {}: error: the library path \"{}\" holds a ':' or a space, which LD_PRELOAD "
                       "cannot carry [watch.library]\n", who, library);
    return false;
  }
  if (!o.log.empty()) {
    // A fresh log for this run (the library appends, from every process of the run);
    // an absolute path, since the command may change its directory. Never through a
    // symlink, and only a regular file is emptied (docs/security.md, "Outputs").
    const int fd = ::open(o.log.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    struct stat st{};
    const int err = fd < 0 ? errno : ::fstat(fd, &st) != 0 ? errno : 0;
    const std::string why = err == ELOOP ? fmt::format("{} is a symbolic link, which tmakit does not follow", o.log)
                            : err != 0   ? fmt::format("cannot create {}: {}", o.log, std::strerror(err))
                            : !S_ISREG(st.st_mode) ? fmt::format("{} is not a regular file", o.log)
                            : ::ftruncate(fd, 0) != 0 ? fmt::format("cannot empty {}: {}", o.log, std::strerror(errno))
                                                      : "";
    if (fd >= 0) ::close(fd);
    if (!why.empty()) {
      fmt::print(stderr, "tmakit {}: --log: error: {}; name a regular file [cli.output]\n", who, why);
      return false;
    }
    std::error_code ec;
    setenv("TMAKIT_WATCH_LOG", fs::absolute(o.log, ec).c_str(), 1);
  } else {
    unsetenv("TMAKIT_WATCH_LOG");
  }
  const char* old = std::getenv("LD_PRELOAD");
  std::string preload = library + (old != nullptr && *old != '\0' ? std::string(":") + old : "");
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("TMAKIT_WATCH_STRICT", o.strict ? "1" : "0", 1);
  setenv("TMAKIT_WATCH_QUIET", o.quiet ? "1" : "0", 1);
  setenv("TMAKIT_WATCH_TARGET", o.target.c_str(), 1);
  setenv("TMAKIT_WATCH_ROOT_PID", std::to_string(getpid()).c_str(), 1);
  return true;
}

std::optional<std::vector<std::string>> split_command_after_dashes(std::vector<char*>& args,
                                                                  std::initializer_list<std::string_view> valued) {
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      std::vector<std::string> command(args.begin() + static_cast<long>(i) + 1, args.end());
      args.resize(i);
      return command;
    }
    if (a.empty() || a[0] != '-') return std::nullopt;  // the command starts here: its own "--" stays its own
    for (std::string_view v : valued)
      if (a == v) ++i;  // the option's value
  }
  return std::nullopt;
}

int exec_command(std::string_view who, const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  const int err = errno;
  fmt::print(stderr, "tmakit {}: error: cannot run {}: {}\n", who, command[0], std::strerror(err));
  return err == ENOENT ? 127 : 126;  // as env(1) and the shells say it
}

namespace {

int run_watch(const WatchOptions& o, const std::vector<std::string>& command) {
  if (command.empty()) {
    fmt::print(stderr, "tmakit watch: error: no command given (tmakit watch [options] -- CMD [ARGS...])\n");
    return 2;
  }
  if (!set_preload_environment("watch", {.log = o.log, .strict = o.strict, .quiet = o.quiet, .target = o.target}))
    return 2;
  return exec_command("watch", command);
}

// The command after "--", taken out of argv before CLI11 parses it (CLI11 would treat
// what follows "--" as its own positionals); empty optional when there was no "--".
std::optional<std::vector<std::string>>& separated_command() {
  static std::optional<std::vector<std::string>> command;
  return command;
}

}  // namespace

void split_watch_command(std::vector<char*>& args) {
  if (args.size() >= 2 && std::string_view(args[1]) == "check") return split_check_command(args);
  if (args.size() < 2 || std::string_view(args[1]) != "watch") return;
  if (auto command = split_command_after_dashes(args, {"--log", "--target"})) separated_command() = std::move(command);
}

void add_watch_command(CLI::App& app, int& status) {
  auto o = std::make_shared<WatchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "watch", "Run a program and check every tensor map it encodes (tmakit watch [options] -- CMD [ARGS...])");
  cmd->add_option("--log", o->log, "write one JSON Lines record per tensor-map call to FILE");
  cmd->add_flag("--strict", o->strict,
                "return CUDA_ERROR_INVALID_VALUE from a call the driver accepts but tmakit flags "
                "(any error or warning)");
  cmd->add_flag("--quiet", o->quiet, "say only refusals and disagreements (no warnings, no summary)");
  cmd->add_option("--target", o->target, "the target maps are validated for (default sm_90a)");
  // The command is everything after "--" (split_watch_command), verbatim; without a
  // "--", everything from the first argument that is not one of the options above.
  cmd->prefix_command();
  cmd->footer("The command and its arguments follow the options, after --.");
  cmd->callback([o, cmd, &status] {
    const auto& separated = separated_command();
    status = run_watch(*o, separated ? *separated : cmd->remaining());
  });
}

}  // namespace tmakit::cli
