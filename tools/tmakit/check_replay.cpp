// `tmakit check --replay DIR [--json]`: a trace directory (docs/check-replay.md) replayed on the
// model and reported. Exit 0 clean, 1 findings (errors or warnings), 2 unusable input.
// `tmakit check` itself (the capture half, `-- CMD`) lives in check_command.cpp; until that file
// registers the subcommand, the weak add_check_command below gives `check --replay` alone.
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "tmakit/check/replay.hpp"

namespace tmakit::cli {

int check_replay(const std::filesystem::path& dir, bool json) {
  check::Report report;
  try {
    report = check::replay(check::load_trace_dir(dir));
  } catch (const check::TraceError& e) {
    std::fprintf(stderr, "%s: error: %s [check.trace-dir]\n", dir.string().c_str(), e.what());
    return 2;
  }
  const std::string out = json ? check::to_json(report).dump(1) + "\n" : check::to_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return report.clean() ? 0 : 1;
}

__attribute__((weak)) void add_check_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("check", "Replay a kernel's trace on the model (docs/check-replay.md)");
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--replay", *dir, "a trace directory (meta.json, trace.bin, sites.json, maps.jsonl)")->required();
  cmd->add_flag("--json", *json, "the report as JSON");
  cmd->callback([dir, json, &status] { status = check_replay(*dir, *json); });
}

}  // namespace tmakit::cli
