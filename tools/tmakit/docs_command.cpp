// `tmakit docs instructions`: print a generated document (docs/instructions.md).
#include <cstdio>

#include "commands.hpp"
#include "tmakit/spec/forms.hpp"

namespace tmakit::cli {

void add_docs_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("docs", "Print a document generated from the table of forms");
  static std::string which;
  cmd->add_option("which", which, "instructions")->required()->check(CLI::IsMember({"instructions"}));
  cmd->callback([&status] {
    std::fputs(spec::instruction_matrix_markdown().c_str(), stdout);
    status = 0;
  });
}

}  // namespace tmakit::cli
