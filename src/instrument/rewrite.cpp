// instrument_module: lint gate → parse_module → one walk over the pieces that plans each
// site, follows functions, `.file` and `.loc`, and collects insertions → the text with the
// insertions spliced in. Insertions are whole lines where the instruction has its line to
// itself (every compiler output in tests/corpus/); otherwise they go on its line between
// `/*tmakit:*/` and `/*:tmakit*/`, so they can always be told from the original.
#include <algorithm>
#include <sstream>

#include "site.hpp"
#include "tmakit/ptx/lint.hpp"

namespace tmakit::instrument {
namespace {

using ptx::Piece;

struct Insertion {
  size_t at;
  std::string text;
};

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

class Splicer {
 public:
  explicit Splicer(std::string_view text) : t_(text) {}

  // Lines before the statement starting at `b`.
  void before(size_t b, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    size_t ls = line_start(b);
    std::string_view ind = t_.substr(ls, b - ls);
    if (!blank(ind)) return inline_at(b, lines);
    std::string s;
    for (const auto& l : lines) s += l + "\n" + std::string(ind);
    add(b, std::move(s));
  }

  // Lines after the statement ending at `e` (just past its `;` or `{`); `ind` indents them.
  void after(size_t e, const std::vector<std::string>& lines, std::string_view ind) {
    if (lines.empty()) return;
    size_t eol = t_.find('\n', e);
    std::string_view rest = t_.substr(e, (eol == std::string_view::npos ? t_.size() : eol) - e);
    size_t slash = rest.find("//");
    if (eol == std::string_view::npos || !blank(rest.substr(0, slash)) || rest.find("/*") < slash)
      return inline_at(e, lines);
    std::string s;
    for (const auto& l : lines) s += std::string(ind) + l + "\n";
    add(eol + 1, std::move(s));
  }

  std::string_view indentation(size_t b) const {
    size_t ls = line_start(b);
    std::string_view ind = t_.substr(ls, b - ls);
    return blank(ind) ? ind : "\t";
  }

  std::string text() {
    std::stable_sort(ins_.begin(), ins_.end(), [](const Insertion& a, const Insertion& b) { return a.at < b.at; });
    std::string out;
    size_t done = 0;
    for (const Insertion& i : ins_) {
      out.append(t_.substr(done, i.at - done));
      out += i.text;
      done = i.at;
    }
    out.append(t_.substr(done));
    return out;
  }

 private:
  size_t line_start(size_t b) const {
    size_t nl = t_.rfind('\n', b ? b - 1 : 0);
    return b == 0 || nl == std::string_view::npos ? 0 : nl + 1;
  }
  void inline_at(size_t at, const std::vector<std::string>& lines) {
    std::string s = "/*tmakit:*/";
    for (const auto& l : lines)
      if (l.substr(0, 2) != "//") s += " " + l;  // a line comment would swallow the rest of the line
    add(at, s + " /*:tmakit*/");
  }
  void add(size_t at, std::string s) { ins_.push_back({at, std::move(s)}); }

  std::string_view t_;
  std::vector<Insertion> ins_;
};

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t k = 0;
  while (k < s.size()) {
    while (k < s.size() && (std::isspace(static_cast<unsigned char>(s[k])) || s[k] == ',')) ++k;
    size_t b = k;
    if (k < s.size() && s[k] == '"') {
      k = s.find('"', k + 1);
      k = k == std::string_view::npos ? s.size() : k + 1;
    } else {
      while (k < s.size() && !std::isspace(static_cast<unsigned char>(s[k])) && s[k] != ',') ++k;
    }
    if (k > b) out.push_back(s.substr(b, k - b));
  }
  return out;
}

int number(std::string_view w) {
  int v = 0;
  for (char c : w) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return w.empty() ? -1 : v;
}

// A fresh register prefix: "__tmakit", or "__tmakitN" where the module already uses it.
std::string fresh_prefix(std::string_view text) {
  for (int n = 0;; ++n) {
    std::string p = "__tmakit" + (n ? std::to_string(n) : std::string());
    if (text.find(p + "_") == std::string_view::npos) return p;
  }
}

}  // namespace

Result instrument_module(std::string_view text, const std::string& file, OpSet ops) {
  Result out;
  ptx::LintResult lint = ptx::lint_module(text, file);
  if (lint.unusable || lint.errors()) {
    for (auto& d : lint.diags)
      if (d.severity != Severity::warning) out.diags.push_back(d);
    out.status = lint.unusable ? 2 : 1;
    return out;
  }
  if (text.find(kTraceSymbol) != std::string_view::npos) {
    out.diags.error("instrument.already", "the module already names `" + std::string(kTraceSymbol) +
                                              "`: it is instrumented already (instrument the original)", file);
    out.status = 2;
    return out;
  }
  Diagnostics diags;
  ptx::ModuleText m = ptx::parse_module(text, file, diags);
  const std::string prefix = fresh_prefix(text);

  Splicer splice(text);
  // .file index → name. nvcc writes its .file lines after the functions that name them.
  std::unordered_map<int, std::string> files;
  for (const Piece& p : m.pieces) {
    auto w = p.kind == Piece::Kind::directive ? words(p.text) : std::vector<std::string_view>{};
    if (w.size() >= 3 && w[0] == ".file" && number(w[1]) >= 0) {
      std::string name(w[2]);
      if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
      files[number(w[1])] = name;
    }
  }
  const ptx::Function* fn = nullptr;
  size_t next_fn = 0, fn_open = 0;
  detail::RegCounts fn_regs;
  bool addressed = false, pending_header = false;
  int depth = 0;
  std::string loc_file;
  int loc_line = 0, loc_col = 0;
  size_t at = 0;  // byte offset of the current piece
  for (const Piece& p : m.pieces) {
    const size_t begin = at, end = at + p.text.size();
    at = end;
    switch (p.kind) {
      case Piece::Kind::header:
        pending_header = depth == 0 && (p.text.find(".entry") != std::string::npos ||
                                        p.text.find(".func") != std::string::npos);
        continue;
      case Piece::Kind::open:
        if (depth++ == 0 && pending_header && next_fn < m.module.functions.size()) {
          fn = &m.module.functions[next_fn++];
          fn_open = end;
          fn_regs = {};
          loc_file.clear(), loc_line = loc_col = 0;
        }
        pending_header = false;
        continue;
      case Piece::Kind::close:
        if (--depth == 0 && fn) {
          splice.after(fn_open, detail::declare_registers(fn_regs, prefix), "\t");
          fn = nullptr;
        }
        continue;
      case Piece::Kind::directive: {
        auto w = words(p.text);
        if (w.size() >= 2 && w[0] == ".address_size" && w[1] == "64") {
          addressed = true;
          splice.after(end, {".weak .global .align 8 .u64 " + std::string(kTraceSymbol) + "[" +
                             std::to_string(kTraceWords) + "];"}, "");
        } else if (w.size() >= 3 && w[0] == ".loc") {
          auto f = files.find(number(w[1]));
          loc_file = f == files.end() ? "" : f->second;
          loc_line = number(w[2]);
          loc_col = w.size() >= 4 ? std::max(number(w[3]), 0) : 0;
        }
        continue;
      }
      case Piece::Kind::instruction:
        break;
      default:
        continue;
    }
    if (!fn) continue;
    const std::string where = file + ":" + std::to_string(p.statement.line) + ":" + std::to_string(p.statement.column);
    auto plan = detail::plan_site(p, fn->symbols, ops, out.diags, where);
    if (!plan) continue;
    const uint32_t id = static_cast<uint32_t>(out.sites.size());
    detail::Code code = detail::emit_site(*plan, id, prefix);
    fn_regs.at_least(code.regs);
    splice.before(begin, code.before);
    splice.after(end, code.after, splice.indentation(begin));
    Site s;
    s.id = id;
    s.op = plan->op;
    s.form = plan->form;
    s.function = fn->name;
    s.ptx_line = p.line;
    if (loc_line > 0) s.file = loc_file, s.line = loc_line, s.column = loc_col;
    s.text = p.text;
    s.after = plan->after;
    for (const auto& e : plan->entries) s.fields.push_back(e.field);
    out.sites.push_back(std::move(s));
  }
  if (out.diags.has_errors()) {
    out.status = 2;
    out.sites.clear();
    return out;
  }
  if (!addressed) {
    out.diags.error("instrument.address-size",
                    "the module has no `.address_size 64`: the trace is written through 64-bit addresses", file);
    out.status = 2;
    out.sites.clear();
    return out;
  }
  out.text = splice.text();
  return out;
}

}  // namespace tmakit::instrument
