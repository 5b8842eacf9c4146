// `tmakit run scenario.json -o DIR`: execute a scenario on the reference model.
#include <cstdio>

#include "commands.hpp"
#include "numbers.hpp"
#include "output_files.hpp"
#include "tmakit/scenario/scenario.hpp"

namespace tmakit::cli {

// --engine gpu|both (gpu_engine_option.cpp).
int run_on_gpu_engine(const scenario::Scenario& s, const std::string& engine, const std::string& file,
                      const std::string& out_dir, const scenario::RunOptions& opts);

namespace {

struct RunArgs {
  std::string file, out_dir, target, ptx_version, engine = "model";
  std::optional<std::string> seed;  // read exactly (numbers.hpp): CLI11 would wrap "-1"
  bool trace = false, files_anywhere = false;
};

int run_scenario(const RunArgs& a) {
  scenario::Scenario s;
  scenario::RunOptions opts;
  try {
    opts.seed = parse_integer<uint64_t>("--seed", a.seed);
    s = scenario::load_file(a.file, {.files_anywhere = a.files_anywhere});
    if (!a.target.empty()) {
      auto t = spec::parse_target(a.target);
      if (!t) throw scenario::InputError({Severity::error, "cli.target", "unknown target " + a.target, "--target"});
      opts.target = t;
    }
    if (!a.ptx_version.empty()) {
      auto v = spec::parse_ptx_version(a.ptx_version);
      if (!v) throw scenario::InputError({Severity::error, "cli.ptx-version", "bad PTX version " + a.ptx_version, "--ptx-version"});
      opts.ptx_version = v;
    }
  } catch (const DiagnosticError& e) {
    std::fprintf(stderr, "%s\n", located(a.file, e.diagnostic()).c_str());
    return 2;
  }
  if (a.trace) opts.trace = [](const std::string& line) { std::printf("trace: %s\n", line.c_str()); };
  if (a.engine != "model") return run_on_gpu_engine(s, a.engine, a.file, a.out_dir, opts);
  scenario::RunResult r;
  try {
    r = scenario::run(s, opts);
  } catch (const scenario::InputError& e) {
    std::fprintf(stderr, "%s\n", located(a.file, e.diagnostic()).c_str());
    return 2;
  } catch (const DiagnosticError& e) {
    std::fprintf(stderr, "%s\n", located(a.file, e.diagnostic()).c_str());
    return 1;
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "%s\n", located(a.file, w).c_str());
  if (!a.out_dir.empty()) {
    std::vector<OutputFile> files;
    for (auto& [name, bytes] : r.outputs) files.push_back({name + ".bin", std::move(bytes)});
    if (auto err = write_output_folder(a.out_dir, files, "-o")) {
      std::fprintf(stderr, "%s\n", format(*err).c_str());
      return 2;
    }
  }
  std::printf("ok: %zu steps, %zu outputs%s%s\n", s.program.size(), r.outputs.size(),
              a.out_dir.empty() ? "" : " written to ", a.out_dir.c_str());
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("run", "Run a scenario on the reference model");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("scenario", args->file, "scenario JSON file")->required();
  cmd->add_option("-o,--output,--out", args->out_dir,
                  "write each output as DIR/NAME.bin, all or none (DIR: new, empty, or an earlier run's outputs)");
  cmd->add_flag("--allow-files-anywhere", args->files_anywhere,
                "let init files lie outside the scenario's folder (absolute paths, ..)");
  cmd->add_option("--seed", args->seed, "complete in-flight operations in a random order drawn from this seed");
  cmd->add_flag("--trace", args->trace, "print one line per issue and completion event");
  cmd->add_option("--target", args->target, "override the scenario's target (sm_90a, ...)");
  cmd->add_option("--ptx-version", args->ptx_version, "override the scenario's PTX ISA version");
  cmd->add_option("--engine", args->engine, "model (default), gpu, or both (compare byte for byte)")
      ->check(CLI::IsMember({"model", "gpu", "both"}));
  cmd->callback([args, &status] { status = run_scenario(*args); });
}

}  // namespace tmakit::cli
