// Queries on the table of forms: matching written qualifiers to a form, and
// what a target or PTX version lacks for it.
#include "tmakit/spec/forms.hpp"

#include <algorithm>
#include <map>

namespace tmakit::spec {
namespace {

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    out.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

std::string quote(std::string_view s) { return "`" + std::string(s) + "`"; }

const Qualifier* find_choice(const Slot& slot, std::string_view text) {
  for (const auto& c : slot.choices)
    if (c.text == text) return &c;
  return nullptr;
}

// Try to place the written qualifiers into the slots of one form.
struct Attempt {
  Selection sel;
  Diagnostics errors;
};

Attempt attempt(const Form& f, const std::vector<std::string>& quals, const std::string& where) {
  Attempt a;
  a.sel.form = &f;
  a.sel.chosen.assign(f.slots.size(), {});
  a.sel.written = quals;
  std::vector<size_t> position(f.slots.size(), 0);
  for (size_t i = 0; i < quals.size(); ++i) {
    const std::string& qtext = quals[i];
    bool placed = false;
    for (size_t s = 0; s < f.slots.size() && !placed; ++s) {
      const Qualifier* c = find_choice(f.slots[s], qtext);
      if (!c) continue;
      placed = true;
      if (a.sel.chosen[s] == c->text) {
        a.errors.error("ptx.duplicate-qualifier", "qualifier " + quote(qtext) + " is written twice", where);
      } else if (!a.sel.chosen[s].empty()) {
        a.errors.error("ptx.conflicting-qualifiers",
                       quote(a.sel.chosen[s]) + " and " + quote(qtext) + " both fill ." +
                           std::string(f.slots[s].name) + "; only one may be given",
                       where);
      } else {
        a.sel.chosen[s] = c->text;
        position[s] = i + 1;
      }
    }
    if (!placed)
      a.errors.error("ptx.unknown-qualifier",
                     quote(qtext) + " is not a qualifier of " + std::string(f.opcode) + " in form " +
                         std::string(f.id) + " (" + std::string(f.summary) + ")",
                     where);
  }
  size_t last_ordered = 0;
  std::string_view last_name;
  for (size_t s = 0; s < f.slots.size(); ++s) {
    const Slot& slot = f.slots[s];
    if (slot.required && a.sel.chosen[s].empty()) {
      std::string alts;
      for (const auto& c : slot.choices) alts += (alts.empty() ? "" : " | ") + std::string(c.text);
      a.errors.error("ptx.missing-qualifier",
                     std::string(f.opcode) + " needs ." + std::string(slot.name) + " (" + alts + ")", where);
    }
    if (slot.ordered && position[s]) {
      if (position[s] < last_ordered)
        a.errors.error("ptx.qualifier-order",
                       "." + std::string(slot.name) + " " + quote(a.sel.chosen[s]) + " must come after ." +
                           std::string(last_name),
                       where);
      last_ordered = position[s];
      last_name = slot.name;
    }
  }
  return a;
}

}  // namespace

std::string ValueRule::str() const {
  std::string s = multiple_of > 1 ? "a multiple of " + std::to_string(multiple_of) : "a value";
  if (min == max) return std::to_string(min);
  if (min != INT64_MIN || max != INT64_MAX)
    s += " in [" + (min == INT64_MIN ? std::string("-inf") : std::to_string(min)) + ", " +
         (max == INT64_MAX ? std::string("inf") : std::to_string(max)) + "]";
  return s;
}

const Form* find_form(std::string_view id) {
  for (const auto& f : forms())
    if (f.id == id) return &f;
  return nullptr;
}

bool reduction_allowed(std::string_view form_id, RedOp op, RedType type) {
  for (const auto& p : reduction_pairs())
    if (p.form_id == form_id && p.op == op && p.type == type) return true;
  return false;
}

std::string_view Selection::get(std::string_view slot) const {
  if (!form) return {};
  for (size_t s = 0; s < form->slots.size(); ++s)
    if (form->slots[s].name == slot) return chosen[s].empty() ? form->slots[s].implied : chosen[s];
  return {};
}

bool Selection::has(std::string_view qualifier) const {
  if (std::find(chosen.begin(), chosen.end(), qualifier) != chosen.end()) return true;
  // An implied default counts as present (an absent load mode is .tile).
  if (!form) return false;
  for (size_t s = 0; s < form->slots.size(); ++s)
    if (chosen[s].empty() && form->slots[s].implied == qualifier) return true;
  return false;
}

int Selection::dim() const {
  std::string_view d = get("dim");
  return d.size() == 3 ? d[1] - '0' : 0;
}

std::optional<Selection> match(std::string_view mnemonic, Diagnostics& diags, const std::string& where) {
  auto tokens = split_dots(mnemonic);
  // The longest dotted prefix that is an opcode of the table.
  size_t best_len = 0;
  std::string_view opcode;
  for (const auto& f : forms()) {
    auto op_tokens = split_dots(f.opcode);
    if (op_tokens.size() > tokens.size() || op_tokens.size() <= best_len) continue;
    if (std::equal(op_tokens.begin(), op_tokens.end(), tokens.begin())) {
      best_len = op_tokens.size();
      opcode = f.opcode;
    }
  }
  if (best_len == 0) {
    diags.error("ptx.unknown-instruction", quote(mnemonic) + " is not an instruction tmakit knows", where);
    return std::nullopt;
  }
  std::vector<std::string> quals;
  for (size_t i = best_len; i < tokens.size(); ++i) {
    if (tokens[i].empty()) {
      diags.error("ptx.syntax", "empty qualifier in " + quote(mnemonic), where);
      return std::nullopt;
    }
    quals.push_back("." + std::string(tokens[i]));
  }
  std::optional<Attempt> best;
  for (const auto& f : forms()) {
    if (f.opcode != opcode) continue;
    Attempt a = attempt(f, quals, where);
    if (!best || a.errors.size() < best->errors.size()) best = std::move(a);
    if (best->errors.empty()) break;
  }
  if (!best->errors.empty()) {
    diags.insert(diags.end(), best->errors.begin(), best->errors.end());
    return std::nullopt;
  }
  return best->sel;
}

Diagnostics check_target(const Selection& sel, const Target& target, PtxVersion version) {
  Diagnostics d;
  const Form& f = *sel.form;
  const std::string ctx = "; this program targets " + target.str() + " with PTX ISA " + version.str();
  if (version < target.min_ptx())
    d.error("ptx.target-version",
            "target " + target.str() + " needs PTX ISA " + target.min_ptx().str() + " or later, got " + version.str());
  if (version < f.since)
    d.error("ptx.ptx-version",
            std::string(f.opcode) + " (form " + std::string(f.id) + ") needs PTX ISA " + f.since.str() + ctx);
  if (!f.targets.holds(target, version))
    d.error("ptx.target", std::string(f.opcode) + " needs " + f.targets.str() + ctx);
  for (size_t s = 0; s < f.slots.size(); ++s) {
    if (sel.chosen[s].empty()) continue;
    const Qualifier* q = find_choice(f.slots[s], sel.chosen[s]);
    if (version < q->since)
      d.error("ptx.ptx-version", quote(q->text) + " needs PTX ISA " + q->since.str() + ctx);
    if (!q->targets.holds(target, version))
      d.error("ptx.target", quote(q->text) + " needs " + q->targets.str() + ctx);
    if (!q->advised.empty() && !q->advised.holds(target, version))
      d.warning("ptx.advised-target",
                quote(q->text) + " is advised only on " + q->advised.str() +
                    " and may be substantially slower on " + target.str());
  }
  return d;
}

Diagnostics check_combination(const Selection& sel) {
  Diagnostics d;
  const Form& f = *sel.form;
  for (const auto& c : f.constraints) {
    // Written qualifiers only: an implied default (.tile, .release, .cta) neither triggers nor meets
    // a constraint (ptxas: "Modifier '.release' requires scope" when .cta is only implied).
    auto written = [&](std::string_view q) { return std::find(sel.chosen.begin(), sel.chosen.end(), q) != sel.chosen.end(); };
    if (!written(c.if_chosen)) continue;
    bool ok = std::any_of(c.needs.begin(), c.needs.end(), written);
    if (!ok) {
      std::string alts;
      for (auto n : c.needs) alts += (alts.empty() ? "" : " | ") + std::string(n);
      // "got" names what fills the slot the needed qualifiers belong to (.dim, .type, ...).
      std::string_view got;
      for (const auto& slot : f.slots)
        if (find_choice(slot, c.needs.front())) got = sel.get(slot.name);
      d.error(std::string(c.rule), quote(c.if_chosen) + " needs " + alts + ", got " + quote(got.empty() ? "(none)" : got));
    }
  }
  if (f.op == Op::bulk_reduce) {
    auto op = parse_red_op(sel.get("redOp").substr(1));
    auto type = parse_red_type(sel.get("type").substr(1));
    if (op && type) {
      const ReductionPair* pair = nullptr;
      for (const auto& p : reduction_pairs())
        if (p.form_id == f.id && p.op == *op && p.type == *type) pair = &p;
      const bool noftz = sel.has(".noftz");
      if (!pair)
        d.error("ptx.reduction-type", "." + std::string(name(*op)) + " is not defined for ." +
                                          std::string(name(*type)) + " in " + std::string(f.id) + "");
      else if (pair->noftz && !noftz)
        d.error("ptx.reduction-noftz", "." + std::string(name(*op)) + "." + std::string(name(*type)) +
                                           " must be written .add.noftz");
      else if (!pair->noftz && noftz)
        d.error("ptx.reduction-noftz", ".noftz applies only to .add.f16 and .add.bf16");
    }
  }
  return d;
}

std::vector<const Operand*> operands_of(const Selection& sel) {
  std::vector<const Operand*> out;
  for (const auto& op : sel.form->operands) {
    if (!op.when.empty() && std::none_of(op.when.begin(), op.when.end(), [&](auto w) { return sel.has(w); }))
      continue;
    out.push_back(&op);
  }
  return out;
}

int vector_length(const Selection& sel, const Operand& op) {
  switch (op.length) {
    case Length::none: return 0;
    case Length::dim: return sel.dim();
    case Length::coords: return sel.has(".tile::gather4") || sel.has(".tile::scatter4") ? 5 : sel.dim();
    case Length::im2col_info: return sel.has(".im2col") ? sel.dim() - 2 : 2;
  }
  return 0;
}

std::string canonical_mnemonic(const Selection& sel) {
  std::string s(sel.form->opcode);
  for (auto c : sel.chosen) s += c;
  return s;
}

}  // namespace tmakit::spec
