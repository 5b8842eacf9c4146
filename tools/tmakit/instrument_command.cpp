// `tmakit instrument IN -o OUT`: write IN with trace records beside its bulk-copy, mbarrier,
// fence and shared-store instructions, and OUT.sites.json, the site table (docs/check.md).
// Exit 0 written, 1 the module has lint errors, 2 unusable input; nothing is written unless 0.
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "output_files.hpp"
#include "tmakit/instrument/instrument.hpp"
#include "tmakit/files.hpp"

namespace tmakit::cli {
namespace {

int run(const std::string& in, const std::string& out, const std::string& ops_name, bool plain_copy) {
  // Both names are judged before anything is read or written.
  if (out.empty() || out.back() == '/') {
    std::fprintf(stderr, "%s\n", tmakit::format(Diagnostic{Severity::error, "cli.output",
                                                            "\"" + out + "\" names no file; give the instrumented "
                                                            "module's path, as in -o kernel.tmakit.ptx", "-o"})
                                     .c_str());
    return 2;
  }
  for (const std::string& file : {out + ".sites.json", out})
    if (auto why = not_replaceable(file)) {
      std::fprintf(stderr, "%s\n", tmakit::format(Diagnostic{Severity::error, "cli.output-exists",
                                                              file + " exists and is " + *why +
                                                                  "; tmakit replaces only a regular file, so name "
                                                                  "another file", "-o"})
                                       .c_str());
      return 2;
    }
  std::string text;
  try {  // a regular file of bounded size (docs/security.md)
    const std::vector<uint8_t> bytes =
        read_regular_file(in, std::nullopt, instrument::kMaxModuleBytes, in, "PTX module", "cli.file");
    text.assign(bytes.begin(), bytes.end());
  } catch (const DiagnosticError& e) {
    std::fprintf(stderr, "%s\n", tmakit::format(e.diagnostic()).c_str());
    return 2;
  }
  const auto ops = ops_name == "copies" ? instrument::OpSet::copies
                   : ops_name == "barriers" ? instrument::OpSet::barriers : instrument::OpSet::all;
  instrument::Result r = instrument::instrument_module(text, in, ops, plain_copy);
  for (const auto& d : r.diags) std::fprintf(stderr, "%s\n", tmakit::format(d).c_str());
  if (r.status) {
    std::fprintf(stderr, "tmakit instrument: %s not instrumented; nothing written\n", in.c_str());
    return r.status;
  }
  // The site table first: if the module cannot be written after it, the table is taken back.
  const std::string sites = out + ".sites.json";
  if (auto e = write_output_file(sites, instrument::sites_json(r.sites), "-o")) {
    std::fprintf(stderr, "%s\n", tmakit::format(*e).c_str());
    return 2;
  }
  if (auto e = write_output_file(out, r.text, "-o")) {
    std::error_code ignored;
    std::filesystem::remove(sites, ignored);
    std::fprintf(stderr, "%s\n", tmakit::format(*e).c_str());
    return 2;
  }
  return 0;
}

}  // namespace

void add_instrument_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("instrument", "Add trace records beside the TMA, mbarrier and fence instructions of a PTX module");
  static std::string in, out, ops = "all";
  static bool plain_copy = false;
  cmd->add_option("input", in, "PTX module")->required();
  cmd->add_option("-o,--output", out, "instrumented module (its site table goes to OUTPUT.sites.json)")->required();
  cmd->add_option("--ops", ops, "all, copies or barriers")->check(CLI::IsMember({"all", "copies", "barriers"}));
  cmd->add_flag("--plain-copy", plain_copy,
                "keep each function's body as compiled too, run where a call records nothing (no records address)");
  cmd->callback([&status] { status = run(in, out, ops, plain_copy); });
}

}  // namespace tmakit::cli
