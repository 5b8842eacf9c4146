// Child processes of `tmakit check`'s preload library and of tmakit-ptxas (the replay, the PTX
// filter): started with posix_spawn (no fork of a program that may hold GPU state and threads),
// with an environment that no longer activates tmakit, and waited for without ever blocking
// past a deadline.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tmakit::check {

// This process's environment without LD_PRELOAD and TMAKIT_CHECK_DIR: a child of the checked
// program is not itself watched or checked.
std::vector<std::string> child_environment();

// Where the child's standard streams go: a descriptor of this process each (dup2'd onto 0, 1
// and 2 in the child), or -1 to leave the stream as this process has it.
struct ChildStreams {
  int in = -1, out = -1, err = -1;
};

// Starts argv[0] (looked up on PATH when it has no '/', as execvp does) with argv and
// child_environment(). `own_group`: the child leads a process group of its own, so that it and
// whatever it starts can be killed together. The child's pid, or nullopt and why (a sentence).
std::optional<pid_t> spawn_child(const std::vector<std::string>& argv, const ChildStreams& streams, bool own_group,
                                 std::string* why);

// How a child ended.
struct ChildEnd {
  enum class How { exited, signalled, unknown } how = How::unknown;  // unknown: reaped by someone else
  int code = 0;                                                       // the exit status or the signal
};
// waitpid, repeated on EINTR. A program that ignores SIGCHLD (or reaps every child itself) takes
// the status away: How::unknown.
ChildEnd wait_child(pid_t pid);
// As wait_child, but gives up at `deadline`: nullopt while the child still runs.
std::optional<ChildEnd> wait_child_until(pid_t pid, std::chrono::steady_clock::time_point deadline);

}  // namespace tmakit::check
