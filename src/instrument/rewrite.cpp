// instrument_module: lint gate → parse_module → one walk over the pieces that plans each
// site, follows functions and `.loc` (inlining.hpp), and collects insertions → the text with the
// insertions spliced in. Insertions are whole lines where the instruction has its line to
// itself (every compiler output in tests/corpus/); otherwise they go on its line between
// `/*tmakit:*/` and `/*:tmakit*/`, so they can always be told from the original.
#include <algorithm>
#include <array>
#include <set>
#include <sstream>
#include <unordered_map>

#include "inlining.hpp"
#include "site.hpp"
#include "tmakit/ptx/lint.hpp"

namespace tmakit::instrument {
namespace {

using ptx::Piece;

struct Insertion {
  size_t at;
  std::string text;
};

using detail::blank;

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

  // Whether the statement starting at `b` has its line to itself up to it (no code before it).
  bool own_line(size_t b) const { return blank(t_.substr(line_start(b), b - line_start(b))); }

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

// A fresh register prefix: "__tmakit", or "__tmakitN" where the module already uses it.
std::string fresh_prefix(std::string_view text) {
  for (int n = 0;; ++n) {
    std::string p = "__tmakit" + (n ? std::to_string(n) : std::string());
    if (text.find(p + "_") == std::string_view::npos) return p;
  }
}


// What decides whether a function's ordinary shared loads and stores are traced. Those records
// serve the checks between the generic and the async proxy (a bulk store of bytes written with
// no fence.proxy.async, a buffer overwritten while a store still reads it, a destination read
// before its wait); in a kernel that moves no shared memory through the async proxy they can
// find nothing, and they are most of a trace (a shared-memory transpose: one per element), so
// they are left out there (docs/check.md, "What is recorded").
struct FunctionFacts {
  bool entry = false, visible = false;
  bool async_shared = false;     // issues a bulk or tensor copy or reduction that reads or writes shared memory
  bool unknown_call = false;     // calls through a register, or a function this module does not define
  std::vector<std::string> callees;
};

bool moves_shared_async(TraceOp op) {
  switch (op) {
    case TraceOp::bulk_copy: case TraceOp::bulk_reduce:
    case TraceOp::tensor_load: case TraceOp::tensor_store: case TraceOp::tensor_reduce:
      return true;
    default:
      return false;
  }
}

// Waits for every lane its mask names (the lanes that never come make it wait for good).
bool warp_wide(std::string_view mn) {
  for (std::string_view f : {"elect.sync", "shfl.sync", "vote.sync", "match.", "redux.sync", "bar.warp.sync"})
    if (mn.starts_with(f)) return true;
  return false;
}

// `call[.uni] [(ret),] callee, (args)[, proto];`: notes the callee ("%r…" or an unknown name:
// anything may happen there). printf, assert and the device heap issue no bulk copies.
void note_call(const ptx::Statement& s, FunctionFacts& f) {
  std::string_view mn = s.mnemonic();
  if (mn != "call" && mn.substr(0, 5) != "call.") return;
  std::string_view rest = s.text;
  rest.remove_prefix(std::min(rest.size(), rest.find(mn) + mn.size()));
  auto skip_space = [&] {
    while (!rest.empty() && (std::isspace(static_cast<unsigned char>(rest[0])) || rest[0] == ',')) rest.remove_prefix(1);
  };
  skip_space();
  if (!rest.empty() && rest[0] == '(') rest.remove_prefix(std::min(rest.size(), rest.find(')') + 1));
  skip_space();
  size_t n = 0;
  while (n < rest.size() && !std::isspace(static_cast<unsigned char>(rest[n])) && rest[n] != ',' && rest[n] != ';') ++n;
  std::string callee(rest.substr(0, n));
  static const std::set<std::string> kHarmless = {"vprintf", "__assertfail", "malloc", "free"};
  if (callee.empty() || callee[0] == '%') f.unknown_call = true;
  else if (!kHarmless.count(callee)) f.callees.push_back(callee);
}

// Per function: are its shared accesses traced? Yes in every function a kernel reaches when
// that kernel reaches a bulk copy of shared memory or an unknown call, and in every function
// callable from outside the module (its callers are not known here).
std::vector<bool> shared_access_traced(const std::vector<ptx::Function>& fns, std::vector<FunctionFacts>& facts) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < fns.size(); ++i) index.emplace(fns[i].name, i);
  for (auto& f : facts)
    for (const auto& c : f.callees)
      if (!index.count(c)) f.unknown_call = true;
  std::vector<bool> traced(fns.size(), false);
  for (size_t e = 0; e < fns.size(); ++e) {
    if (!facts[e].entry && !facts[e].visible) continue;
    std::vector<size_t> reach{e}, todo{e};
    std::set<size_t> seen{e};
    bool needs = false;
    while (!todo.empty()) {
      const size_t f = todo.back();
      todo.pop_back();
      needs = needs || facts[f].async_shared || facts[f].unknown_call || (facts[f].visible && !facts[f].entry);
      for (const auto& c : facts[f].callees)
        if (auto it = index.find(c); it != index.end() && seen.insert(it->second).second)
          reach.push_back(it->second), todo.push_back(it->second);
    }
    if (needs)
      for (size_t f : reach) traced[f] = true;
  }
  return traced;
}
}  // namespace

Result instrument_module(std::string_view text, const std::string& file, OpSet ops, bool plain_copy) {
  Result out;
  const size_t statements = static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return c == ';' || c == '{' || c == '}' || c == ':'; }));
  if (text.size() > kMaxModuleBytes || statements > kMaxStatements) {
    out.diags.error("instrument.size",
                    text.size() > kMaxModuleBytes
                        ? "the module holds " + std::to_string(text.size()) + " bytes, more than the " +
                              std::to_string(kMaxModuleBytes) + " (64 MiB) tmakit instruments"
                        : "the module holds " + std::to_string(statements) + " statement marks (; { } :), more than "
                              "the " + std::to_string(kMaxStatements) + " tmakit instruments (memory is bounded by "
                              "them); split the module",
                    file);
    out.status = 2;
    return out;
  }
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
  detail::SourceLocations locs(m.pieces);
  // One walk plans every site and notes, per function, what the shared-access relevance needs
  // (its bulk copies and its calls); the sites are emitted after it.
  struct Pending {
    detail::Plan plan;
    size_t begin, end, fn;
    const Piece* piece;
    int loc = -1;  // in locs
  };
  std::vector<Pending> pending;
  std::vector<FunctionFacts> facts(m.module.functions.size());
  std::vector<size_t> fn_open(m.module.functions.size(), 0);
  // The plain copy of each function with sites (plain_body, below): where its body closes, its
  // labels, and the declarations at its top level, which the copy leaves out.
  std::vector<size_t> fn_close(m.module.functions.size(), 0);
  std::vector<std::set<std::string>> fn_labels(m.module.functions.size());
  std::vector<std::vector<std::pair<size_t, size_t>>> fn_decls(m.module.functions.size());
  // (function, offset after it) of each instruction past which a tensor map may have other bytes
  // for the same address: a tensormap fence or change, a call (the callee may make one).
  std::vector<std::pair<size_t, size_t>> map_changes;
  struct WarpWide {
    size_t fn, begin;
    int line;
    std::string text;
  };
  std::vector<WarpWide> warp_wides;  // in text order
  size_t next_fn = 0, current = SIZE_MAX;
  bool addressed = false, pending_header = false;
  std::string header;
  int depth = 0;
  size_t at = 0;  // byte offset of the current piece
  for (const Piece& p : m.pieces) {
    const size_t begin = at, end = at + p.text.size();
    at = end;
    switch (p.kind) {
      case Piece::Kind::header:
        pending_header = depth == 0 && (p.text.find(".entry") != std::string::npos ||
                                        p.text.find(".func") != std::string::npos);
        if (pending_header) header = p.text;
        continue;
      case Piece::Kind::open:
        if (depth++ == 0 && pending_header && next_fn < m.module.functions.size()) {
          current = next_fn++;
          fn_open[current] = end;
          facts[current].entry = m.module.functions[current].entry;
          facts[current].visible = header.find(".visible") != std::string::npos ||
                                   header.find(".weak") != std::string::npos;
          locs.start_function();
        }
        pending_header = false;
        continue;
      case Piece::Kind::close:
        if (--depth == 0 && current != SIZE_MAX) {
          fn_close[current] = begin;
          current = SIZE_MAX;
        }
        continue;
      case Piece::Kind::label:
        if (current != SIZE_MAX) fn_labels[current].insert(p.statement.text);
        continue;
      case Piece::Kind::directive: {
        auto w = words(p.text);
        if (w.size() >= 2 && w[0] == ".address_size" && w[1] == "64") {
          addressed = true;
          splice.after(end, {".weak .const .align 8 .u64 " + std::string(kTraceSymbol) + "[" +
                             std::to_string(kTraceWords) + "];"}, "");
        } else if (!w.empty() && w[0] == ".loc") {
          locs.directive(p.text);
        } else if (current != SIZE_MAX && depth == 1 && !w.empty() && detail::is_declaration(w[0])) {
          fn_decls[current].push_back({begin, end});
        }
        continue;
      }
      case Piece::Kind::instruction:
        break;
      default:
        continue;
    }
    if (current == SIZE_MAX) continue;
    const ptx::Function& fn = m.module.functions[current];
    note_call(p.statement, facts[current]);
    if (const std::string_view mn = p.statement.mnemonic();
        mn.starts_with("fence.proxy.tensormap") || mn.starts_with("tensormap.") || mn == "call" || mn == "call.uni")
      map_changes.push_back({current, end});
    if (warp_wide(p.statement.mnemonic())) warp_wides.push_back({current, begin, p.statement.line, p.text});
    const std::string where = file + ":" + std::to_string(p.statement.line) + ":" + std::to_string(p.statement.column);
    auto plan = detail::plan_site(p, fn.symbols, ops, out.diags, where);
    if (!plan) continue;
    if (moves_shared_async(plan->op)) facts[current].async_shared = true;
    Pending s{std::move(*plan), begin, end, current, &p, locs.current()};
    pending.push_back(std::move(s));
  }

  const std::vector<bool> shared_traced = shared_access_traced(m.module.functions, facts);
  std::vector<detail::RegCounts> fn_regs(m.module.functions.size());
  std::vector<bool> has_site(m.module.functions.size(), false);
  std::vector<int> map_entries(m.module.functions.size(), 0);
  std::vector<std::pair<size_t, size_t>> site_at;  // each site's (function, offset), in text order
  for (Pending& s : pending) {
    // CTA barriers go with the shared accesses: what they order, for the race check, is those.
    const bool shared_access = s.plan.op == TraceOp::shared_store || s.plan.op == TraceOp::shared_load ||
                               is_cta_barrier(s.plan.op);
    if (shared_access && !shared_traced[s.fn]) continue;
    const uint32_t id = static_cast<uint32_t>(out.sites.size());
    const int map_slot = detail::writes_map_once(s.plan) ? map_entries[s.fn]++ : -1;
    detail::Code code = detail::emit_site(s.plan, id, prefix, map_slot);
    fn_regs[s.fn].at_least(code.regs);
    has_site[s.fn] = true;
    splice.before(s.begin, code.before);
    splice.after(s.end, code.after, splice.indentation(s.begin));
    Site site;
    site.id = id;
    site.op = s.plan.op;
    site.form = s.plan.form;
    site.function = m.module.functions[s.fn].name;
    site.ptx_line = s.piece->line;
    locs.fill(s.loc, site);
    site.text = s.piece->text;
    site.after = s.plan.after;
    for (const auto& e : s.plan.entries) site.fields.push_back(e.field);
    site.lanes_at = detail::lanes_at(s.plan);
    out.sites.push_back(std::move(site));
    site_at.push_back({s.fn, s.begin});
  }
  // Each site's first warp-wide instruction before the function's next site (Site::warp_wide_line).
  for (size_t i = 0, k = 0; i < out.sites.size(); ++i) {
    const auto [fn, at] = site_at[i];
    const size_t until = i + 1 < site_at.size() && site_at[i + 1].first == fn ? site_at[i + 1].second : SIZE_MAX;
    while (k < warp_wides.size() && (warp_wides[k].fn < fn || (warp_wides[k].fn == fn && warp_wides[k].begin < at))) ++k;
    if (k < warp_wides.size() && warp_wides[k].fn == fn && warp_wides[k].begin < until)
      out.sites[i].warp_wide_line = warp_wides[k].line, out.sites[i].warp_wide_text = warp_wides[k].text;
  }
  for (const auto& [f, offset] : map_changes)
    if (map_entries[f]) splice.after(offset, detail::clear_map_cache(prefix, map_entries[f]), "\t");
  for (size_t f = 0; f < fn_open.size(); ++f) {
    if (!fn_open[f] || !has_site[f]) continue;
    // The plain copy, where the function's closing brace has its line to itself (every compiler
    // output): a call that records nothing runs it, not the sites (plain_body).
    const std::string plain = "$" + prefix + "_plain_" + std::to_string(f);
    const bool copied = plain_copy && fn_close[f] > fn_open[f] && splice.own_line(fn_close[f]);
    if (copied) {
      std::vector<std::string> lines = {"ret; // " + prefix};  // the sites' path ends here
      lines.push_back(plain + ":");
      for (std::string& l : detail::plain_body(text, fn_open[f], fn_close[f], fn_decls[f], fn_labels[f], prefix))
        lines.push_back(std::move(l));
      splice.before(fn_close[f], lines);
    }
    splice.after(fn_open[f], detail::function_prologue(fn_regs[f], prefix, map_entries[f], copied ? plain : ""), "\t");
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
