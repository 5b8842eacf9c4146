// Child processes of the preload library and tmakit-ptxas (include/tmakit/check/child.hpp).
#include "tmakit/check/child.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace tmakit::check {

std::vector<std::string> child_environment() {
  std::vector<std::string> keep;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0 && std::strncmp(*e, "TMAKIT_CHECK_DIR=", 17) != 0)
      keep.emplace_back(*e);
  return keep;
}

std::optional<pid_t> spawn_child(const std::vector<std::string>& argv, const ChildStreams& streams, bool own_group,
                                 std::string* why) {
  if (argv.empty() || argv[0].empty()) {
    if (why) *why = "no program to run";
    return std::nullopt;
  }
  std::vector<std::string> args = argv, env = child_environment();
  std::vector<char*> argp, envp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const int fds[3] = {streams.in, streams.out, streams.err};
  for (int target = 0; target < 3; ++target)
    if (fds[target] >= 0) posix_spawn_file_actions_adddup2(&fa, fds[target], target);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  pid_t pid = 0;
  // posix_spawnp searches PATH for a bare name, as execvp does; a name with '/' is taken as it is.
  const int e = posix_spawnp(&pid, args[0].c_str(), &fa, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (e != 0) {
    if (why) *why = fmt::format("cannot run {}: {}", args[0], std::strerror(e));
    return std::nullopt;
  }
  return pid;
}

namespace {

ChildEnd end_of(int status) {
  ChildEnd end;
  if (WIFEXITED(status)) end.how = ChildEnd::How::exited, end.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) end.how = ChildEnd::How::signalled, end.code = WTERMSIG(status);
  return end;
}

}  // namespace

ChildEnd wait_child(pid_t pid) {
  int st = 0;
  pid_t w;
  while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
  }
  return w == pid ? end_of(st) : ChildEnd{};
}

std::optional<ChildEnd> wait_child_until(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return end_of(st);
    if (w < 0 && errno != EINTR) return ChildEnd{};  // ECHILD: reaped by the program's own handler
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace tmakit::check
