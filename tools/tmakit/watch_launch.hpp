// What `tmakit watch` and `tmakit check` share (watch_command.cpp): finding the preload
// library, the environment that activates it, and taking `-- CMD ARGS...` out of argv.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::cli {

// libtmakit_watch.so: TMAKIT_WATCH_LIBRARY, beside tmakit, the install layout, the build tree.
std::string find_watch_library();

struct PreloadOptions {
  std::string log;  // the JSON Lines log (truncated here); empty: none
  bool strict = false, quiet = false;
  std::string target = "sm_90a";
};
// Sets LD_PRELOAD and TMAKIT_WATCH_* for a command run next; false (after saying why on
// stderr, "tmakit WHO: ...") when the library or the log cannot be had.
bool set_preload_environment(std::string_view who, const PreloadOptions& o);

// Replaces this process with `command` (execvp); returns only when that fails, after saying
// why on stderr ("tmakit WHO: error: cannot run ..."), with 127 (not found) or 126, as env(1)
// and the shells say it.
int exec_command(std::string_view who, const std::vector<std::string>& command);

// argv[2...]: options (those in `valued` take a value), then "--" and the command, which is
// taken out of args and returned verbatim; nullopt (args untouched) when there is no "--"
// before the first argument that is not an option.
std::optional<std::vector<std::string>> split_command_after_dashes(std::vector<char*>& args,
                                                                  std::initializer_list<std::string_view> valued);
// `tmakit check`'s (check_command.cpp); called by split_watch_command.
void split_check_command(std::vector<char*>& args);

}  // namespace tmakit::cli
