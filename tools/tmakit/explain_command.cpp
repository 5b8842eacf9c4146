// `tmakit explain RULE`: what a rule id from any tmakit message means (docs/explain.md). The text
// comes from the project's docs, embedded at build time (src/explain), and the tensor-map rule table.
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "tmakit/explain/explain.hpp"

namespace tmakit::cli {

void add_explain_command(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("explain",
                                 "What a rule id printed by tmakit means: the rule, its source, what the H100 "
                                 "showed (with the recorded vectors) and the fix");
  auto rule = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  cmd->add_option("rule", *rule, "the id in square brackets at the end of a message, e.g. map.box-inner-bytes");
  cmd->add_flag("--list", *list, "every rule id the docs explain, one a line");
  cmd->callback([rule, list, &status] {
    if (*list) {
      for (const auto& r : explain::documented_rules()) std::printf("%s\n", r.c_str());
      status = 0;
      return;
    }
    if (rule->empty()) {
      std::fprintf(stderr, "tmakit explain: error: name a rule id (tmakit explain --list prints them all)\n");
      status = 2;
      return;
    }
    std::string id = *rule;  // "[map.box-inner-bytes]" as copied from a message works too
    if (id.size() > 2 && id.front() == '[' && id.back() == ']') id = id.substr(1, id.size() - 2);
    auto e = explain::explain(id);
    if (!e) {
      std::fprintf(stderr,
                   "tmakit explain: error: no rule '%s' in tmakit's docs (tmakit explain --list prints every rule "
                   "id)\n",
                   id.c_str());
      status = 2;
      return;
    }
    std::fputs(explain::format(*e).c_str(), stdout);
    status = 0;
  });
}

}  // namespace tmakit::cli
