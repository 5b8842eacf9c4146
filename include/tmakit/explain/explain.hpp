// `tmakit explain RULE` and tmakit.explain(rule): what a rule id printed by any message means,
// drawn from the project's own docs (embedded in the library at build time, so one copy of the
// text: docs/*.md) and from the tensor-map rule table: what the rule says, its source (the PTX ISA,
// cuda.h, CCCL), what the H100 showed with the recorded vectors that prove it, and the fix.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::explain {

// One mention of a rule in a doc: a table row (header → cell) or a paragraph.
struct Mention {
  std::string page;     // "docs/diagnostics.md"
  std::string section;  // the heading above it
  std::vector<std::pair<std::string, std::string>> cells;  // table rows; empty for a paragraph
  std::string text;     // a paragraph's text
};

struct Explanation {
  std::string rule;
  std::vector<Mention> mentions;
  std::vector<std::string> evidence;  // "h100-…: the fact's text" from docs/hardware-notes.md
  std::string fix;                    // the docs' fix for it; empty where none is written
};

// Nothing when no doc names the rule.
std::optional<Explanation> explain(std::string_view rule);
// The text `tmakit explain` prints.
std::string format(const Explanation& e);
// Every rule id the docs' tables name (`family.name` in a row's first cell).
std::vector<std::string> documented_rules();

// The embedded docs (generated rule_docs.cpp): page name and its text.
struct Page {
  const char* name;
  std::string_view text;
};
std::vector<Page> pages();

}  // namespace tmakit::explain
