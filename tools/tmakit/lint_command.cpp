// `tmakit lint FILE.ptx...`: check the bulk-copy, mbarrier, fence and tensormap
// instructions of whole PTX modules (docs/lint.md). Exit 0 clean, 1 errors, 2 unusable input.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tmakit/terminal_text.hpp"
#include "tmakit/ptx/lint.hpp"
#include "tmakit/files.hpp"

namespace tmakit::cli {
namespace {

// The largest module read: nvcc's biggest outputs are tens of MiB; this bounds the rest.
constexpr uint64_t kMaxModuleBytes = uint64_t{256} << 20;

// "file:line:col" → its three parts (the file name may itself hold ':').
nlohmann::json place(const std::string& where) {
  nlohmann::json j;
  size_t c2 = where.rfind(':');
  size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : where.rfind(':', c2 - 1);
  if (c1 == std::string::npos) return {{"file", where}};
  j["file"] = where.substr(0, c1);
  j["line"] = std::atoi(where.c_str() + c1 + 1);
  j["column"] = std::atoi(where.c_str() + c2 + 1);
  return j;
}

nlohmann::json to_json(const Diagnostics& diags) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : diags) {
    nlohmann::json j = place(d.where);
    j["message"] = d.message;
    if (d.severity == Severity::note && !out.empty()) {
      out.back()["notes"].push_back(j);
      continue;
    }
    j["severity"] = to_string(d.severity);
    j["rule"] = d.rule;
    j["notes"] = nlohmann::json::array();
    out.push_back(j);
  }
  return out;
}

}  // namespace

void add_lint_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("lint", "Check the TMA, mbarrier, fence and tensormap instructions of PTX modules");
  static std::vector<std::string> files;
  static std::string arch, ptx_version, output = "text";
  // Not CLI11's ExistingFile: read_regular_file says what is wrong with a path, with a rule id.
  cmd->add_option("files", files, "PTX modules")->required();
  cmd->add_option("--arch", arch, "target to check against instead of the module's .target (e.g. sm_90a)");
  cmd->add_option("--ptx-version", ptx_version, "PTX ISA version instead of the module's .version (e.g. 8.6)");
  cmd->add_option("--format", output, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([&status] {
    ptx::LintOptions opt;
    if (!arch.empty() && !(opt.arch = spec::parse_target(arch))) {
      std::fprintf(stderr, "tmakit lint: error: --arch %s is not a target tmakit knows (sm_90, sm_90a, sm_100a, ...) "
                           "[cli.target]\n",
                   terminal_clip(arch).c_str());
      status = 2;
      return;
    }
    if (!ptx_version.empty() && !(opt.version = spec::parse_ptx_version(ptx_version))) {
      std::fprintf(stderr, "tmakit lint: error: --ptx-version %s is not a PTX ISA version (e.g. 8.6) [cli.ptx-version]\n",
                   terminal_clip(ptx_version).c_str());
      status = 2;
      return;
    }
    nlohmann::json report = nlohmann::json::array();
    size_t errors = 0, warnings = 0;
    bool unusable = false;
    for (const auto& file : files) {
      std::string text;
      try {  // a regular file of bounded size: never a device read forever (docs/security.md)
        const std::vector<uint8_t> bytes = read_regular_file(file, std::nullopt, kMaxModuleBytes, file,
                                                                       "PTX module", "cli.file");
        text.assign(bytes.begin(), bytes.end());
      } catch (const DiagnosticError& e) {
        std::fprintf(stderr, "%s\n", tmakit::format(e.diagnostic()).c_str());
        unusable = true;
        continue;
      }
      ptx::LintResult r = ptx::lint_module(text, file, opt);
      errors += r.errors();
      warnings += r.warnings();
      unusable |= r.unusable;
      if (output == "json") {
        report.push_back({{"file", file}, {"instructions", r.instructions}, {"errors", r.errors()},
                          {"warnings", r.warnings()}, {"unusable", r.unusable}, {"diagnostics", to_json(r.diags)}});
      } else {
        for (const auto& d : r.diags) std::fprintf(stderr, "%s\n", tmakit::format(d).c_str());
      }
    }
    if (output == "json") std::printf("%s\n", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    else if (errors || warnings)
      std::fprintf(stderr, "%zu error%s, %zu warning%s\n", errors, errors == 1 ? "" : "s", warnings,
                   warnings == 1 ? "" : "s");
    status = unusable ? 2 : errors ? 1 : 0;
  });
}

}  // namespace tmakit::cli
