// Each subcommand of `tmakit` lives in a file of its own and registers itself here.
// A command's callback stores its exit status: 0 ok, 1 diagnosed error, 2 unusable input.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "tmakit/diag.hpp"
#include <filesystem>
#include <vector>

namespace tmakit::cli {

// "FILE: WHERE: error: MESSAGE [rule]", without FILE twice where the diagnostic's place is FILE itself.
inline std::string located(const std::string& file, const Diagnostic& d) {
  const std::string text = format(d);
  if (d.where == file || d.where.rfind(file + ":", 0) == 0) return text;
  return file + ": " + text;
}

void add_map_command(CLI::App& app, int& status);   // map_command.cpp
void add_run_command(CLI::App& app, int& status);   // run_command.cpp
void add_docs_command(CLI::App& app, int& status);  // docs_command.cpp
void add_layout_command(CLI::App& app, int& status);  // layout_command.cpp
void add_lint_command(CLI::App& app, int& status);  // lint_command.cpp
void add_watch_command(CLI::App& app, int& status);  // watch_command.cpp
// Takes `-- CMD ARGS...` of `tmakit watch` out of argv before CLI11 parses it.
void split_watch_command(std::vector<char*>& args);
void add_instrument_command(CLI::App& app, int& status);  // instrument_command.cpp
void add_check_command(CLI::App& app, int& status);  // check_command.cpp
void add_explain_command(CLI::App& app, int& status);  // explain_command.cpp
// `tmakit check --replay DIR [--json] [--strict]` (check_replay.cpp): 0 no error (with `strict`: no
// finding), 1 errors (or, with `strict`, warnings), 2 unusable input.
int check_replay(const std::filesystem::path& dir, bool json, bool strict = false);

}  // namespace tmakit::cli
