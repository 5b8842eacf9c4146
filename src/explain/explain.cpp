// Rule explanations read from the embedded docs (include/tmakit/explain/explain.hpp). A rule's
// rows are the Markdown table rows whose first cell names it in backticks; paragraphs that start
// with it in bold backticks count too. Evidence: the hardware-notes.md anchors a row links to.
#include "tmakit/explain/explain.hpp"

#include <fmt/format.h>

#include <regex>
#include <set>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::explain {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// The cells of a table row "| a | b |" ('|' inside backticks does not split).
std::vector<std::string> cells_of(std::string_view row) {
  std::vector<std::string> out;
  std::string cur;
  bool code = false;
  for (size_t i = 1; i < row.size(); ++i) {
    char c = row[i];
    if (c == '`') code = !code;
    if (c == '|' && !code) {
      out.emplace_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

bool names_rule(std::string_view cell, std::string_view rule) {
  const std::string tick = "`" + std::string(rule) + "`";
  return cell.find(tick) != std::string_view::npos;
}

const Page* page_named(const std::vector<Page>& ps, std::string_view name) {
  for (const auto& p : ps)
    if (name == p.name) return &p;
  return nullptr;
}

// The fact under <a id="ANCHOR"></a> in hardware-notes.md, as one line.
std::string fact(std::string_view notes, const std::string& anchor) {
  const std::string mark = "<a id=\"" + anchor + "\"></a>";
  size_t at = notes.find(mark);
  if (at == std::string_view::npos) return {};
  const size_t line_start = notes.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
  if (notes.substr(line_start, 1) == "|") {  // a question's table row: its answer and its vectors
    const size_t end = notes.find('\n', at);
    auto cs = cells_of(notes.substr(line_start, end == std::string_view::npos ? end : end - line_start));
    if (cs.size() < 2) return {};
    return cs[1] + (cs.size() > 2 && !cs[2].empty() ? " Vectors: " + cs[2] + "." : "");
  }
  at += mark.size();
  std::string out;
  for (auto line : lines_of(notes.substr(at))) {
    if (line.find("<a id=") != std::string_view::npos && !out.empty()) break;
    if (trim(line).empty()) {
      if (out.empty()) continue;
      break;
    }
    std::string_view t = trim(line);
    if (t.rfind("- ", 0) == 0) t.remove_prefix(2);
    if (out.empty() && t.rfind("**" + anchor + ".**", 0) == 0) t.remove_prefix(anchor.size() + 5);
    if (!out.empty()) out += ' ';
    out += trim(t);
    if (line.find("<a id=") != std::string_view::npos) break;
  }
  return out;
}

}  // namespace

std::optional<Explanation> explain(std::string_view rule) {
  static const std::regex ok("[a-z0-9][a-z0-9_]*\\.[a-z0-9.-]+");
  if (!std::regex_match(rule.begin(), rule.end(), ok)) return std::nullopt;
  const auto ps = pages();
  Explanation e;
  e.rule = rule;
  std::set<std::string> anchors;
  static const std::regex link("hardware-notes\\.md#([a-z0-9-]+)|\\b(Q[0-9]{1,2})\\b");
  auto collect = [&](const std::string& s) {
    for (std::sregex_iterator it(s.begin(), s.end(), link), end; it != end; ++it) {
      std::string a = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
      for (auto& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      anchors.insert(a);
    }
  };
  std::vector<Mention> passing;  // rows and lines that name the rule without being about it
  for (const auto& p : ps) {
    std::string section;
    std::vector<std::string> header;
    auto ls = lines_of(p.text);
    for (size_t i = 0; i < ls.size(); ++i) {
      std::string_view l = ls[i];
      if (l.rfind("#", 0) == 0) {
        section = std::string(trim(l.substr(l.find_first_not_of('#'))));
        header.clear();
        continue;
      }
      if (l.rfind("|", 0) == 0) {
        auto cs = cells_of(l);
        if (i + 1 < ls.size() && ls[i + 1].rfind("| ---", 0) == 0) {
          header = cs;
          continue;
        }
        if (cs.empty() || cs[0].rfind("---", 0) == 0) continue;
        if (!names_rule(cs[0], rule)) {
          if (names_rule(l, rule)) {
            Mention m{std::string("docs/") + p.name, section, {}, {}};
            for (size_t k = 0; k < cs.size(); ++k)
              m.cells.emplace_back(k < header.size() ? header[k] : fmt::format("column {}", k + 1), cs[k]);
            passing.push_back(std::move(m));
          }
          continue;
        }
        Mention m{std::string("docs/") + p.name, section, {}, {}};
        for (size_t k = 0; k < cs.size(); ++k) {
          std::string h = k < header.size() ? header[k] : fmt::format("column {}", k + 1);
          if (k == 0 && cs[0] == "`" + std::string(rule) + "`") continue;
          if (h == "fix" && e.fix.empty()) e.fix = cs[k];
          m.cells.emplace_back(h, cs[k]);
          collect(cs[k]);
        }
        const bool only_fix = m.cells.size() == 1 && m.cells[0].first == "fix";  // printed as "Fix:" below
        if (!only_fix) e.mentions.push_back(std::move(m));
        continue;
      }
      // "- **`rule`** ..." paragraphs (with their continuation lines).
      std::string_view t = trim(l);
      if (t.rfind("- **`" + std::string(rule) + "`**", 0) == 0) {
        std::string text(t.substr(2));
        for (size_t k = i + 1; k < ls.size() && !trim(ls[k]).empty() && trim(ls[k]).rfind("- ", 0) != 0 &&
                               ls[k].rfind("|", 0) != 0 && ls[k].rfind("#", 0) != 0;
             ++k)
          text += " " + std::string(trim(ls[k]));
        collect(text);
        e.mentions.push_back({std::string("docs/") + p.name, section, {}, std::move(text)});
      } else if (!t.empty() && names_rule(t, rule)) {
        passing.push_back({std::string("docs/") + p.name, section, {}, std::string(t)});
      }
    }
  }
  if (e.mentions.empty()) {
    for (const auto& m : passing) {
      for (const auto& [h, c] : m.cells) collect(c);
      collect(m.text);
    }
    e.mentions = std::move(passing);
  }
  if (const auto* r = tensor_map::find_map_rule(rule)) {
    collect(std::string(r->section));
    if (e.mentions.empty())
      e.mentions.push_back({"src/tensor_map/rule_table.cpp", "", {}, std::string(r->summary)});
  }
  if (e.mentions.empty() && e.fix.empty()) return std::nullopt;
  if (const Page* notes = page_named(ps, "hardware-notes.md"))
    for (const auto& a : anchors) {
      std::string f = fact(notes->text, a);
      if (!f.empty()) e.evidence.push_back(a + ": " + f);
    }
  return e;
}

std::string format(const Explanation& e) {
  std::string out = e.rule + "\n";
  if (const auto* r = tensor_map::find_map_rule(e.rule))
    out += fmt::format("  {} ({}): {}\n", to_string(r->severity),
                       r->driver_enforced ? "the driver refuses such a map" : "tmakit's own check; the driver accepts the map",
                       r->summary);
  for (const auto& m : e.mentions) {
    out += fmt::format("\n  {}{}{}\n", m.page, m.section.empty() ? "" : ", ", m.section);
    if (!m.text.empty()) out += "    " + m.text + "\n";
    for (const auto& [h, c] : m.cells)
      if (!c.empty()) out += fmt::format("    {}: {}\n", h, c);
  }
  if (!e.evidence.empty()) {
    out += "\n  What the H100 showed (docs/hardware-notes.md):\n";
    for (const auto& v : e.evidence) out += "    " + v + "\n";
  }
  if (!e.fix.empty()) out += "\n  Fix: " + e.fix + "\n";
  return out;
}

std::vector<std::string> documented_rules() {
  static const std::regex id("`([a-z][a-z0-9_]*\\.[a-z0-9][a-z0-9.-]*)`");
  std::set<std::string> out;
  for (const auto& p : pages())
    for (auto l : lines_of(p.text)) {
      if (l.rfind("| `", 0) != 0) continue;
      auto cs = cells_of(l);
      if (cs.empty()) continue;
      for (std::sregex_iterator it(cs[0].begin(), cs[0].end(), id), end; it != end; ++it) out.insert((*it)[1]);
    }
  for (const auto& r : tensor_map::map_rules()) out.insert(std::string(r.id));
  return {out.begin(), out.end()};
}

}  // namespace tmakit::explain
