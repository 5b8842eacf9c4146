// The linter: module reader → instruction parser → table checks, plus operand
// register types and two straight-line hazards (docs/lint.md).
#include "tmakit/ptx/lint.hpp"
#include "tmakit/ptx/step.hpp"

#include <algorithm>
#include <charconv>

#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/module.hpp"

namespace tmakit::ptx {
namespace {

bool starts_token(std::string_view m, std::string_view op) {
  return m.substr(0, op.size()) == op && (m.size() == op.size() || m[op.size()] == '.');
}

// The opcodes the linter checks: every opcode of the table but ordinary `st`.
const std::vector<std::string_view>& linted_opcodes() {
  static const std::vector<std::string_view> ops = [] {
    std::vector<std::string_view> v;
    for (const auto& f : spec::forms())
      if (f.op != spec::Op::store && std::find(v.begin(), v.end(), f.opcode) == v.end()) v.push_back(f.opcode);
    return v;
  }();
  return ops;
}

std::string_view first_token(std::string_view m) { return m.substr(0, m.find('.')); }

// A branch, call or return ends straight-line code.
bool control_flow(std::string_view m) {
  auto t = first_token(m);
  return t == "bra" || t == "brx" || t == "call" || t == "ret" || t == "exit";
}

// An ordinary (generic-proxy) store to shared memory: st[.qualifiers].shared[::cta|::cluster].type.
bool shared_store(std::string_view m) {
  if (first_token(m) != "st" || starts_token(m, "st.async") || starts_token(m, "st.bulk")) return false;
  for (size_t k = m.find(".shared"); k != std::string_view::npos; k = m.find(".shared", k + 1)) {
    size_t end = k + 7;
    if (end == m.size() || m[end] == '.' || m[end] == ':') return true;
  }
  return false;
}

// The first `[...]` of a statement with spaces removed: the address an ordinary store writes.
std::string first_address(std::string_view text) {
  size_t open = text.find('['), close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  std::string out;
  for (char c : text.substr(open + 1, close - open - 1))
    if (c != ' ' && c != '\t' && c != '\n') out += c;
  return out;
}

std::string quote(std::string_view s) { return "`" + std::string(s) + "`"; }

class Linter {
 public:
  Linter(std::string file, const LintOptions& opt, LintResult& out) : file_(std::move(file)), opt_(opt), out_(out) {}

  void statement(const Statement& s, const Function& f, const Module& m) {
    if (&f != fn_ || f.line != fn_line_) {  // a new function: nothing carries over
      fn_ = &f;
      fn_line_ = f.line;
      reset();
    }
    if (s.kind == Statement::Kind::label) return reset();
    std::string_view mn = s.mnemonic();
    if (control_flow(mn)) return reset();
    if (shared_store(mn)) return ordinary_store(s);
    if (!linted_mnemonic(mn)) return;
    if (!resolve(m)) return;
    ++out_.instructions;
    Diagnostics d;
    auto inst = parse_instruction(s.text, d, "@");
    for (auto& x : d) {  // "@:COL" → file:line:col
      int col = 1;
      std::from_chars(x.where.data() + 2, x.where.data() + x.where.size(), col);
      x.where = where(s, static_cast<size_t>(std::max(col, 1) - 1));
      out_.diags.push_back(std::move(x));
    }
    if (!inst) return;
    operands(*inst, s, f, m);
    const Step step = decode(*inst);  // the hazards and notes read the decoded step, not qualifier text
    checks(*inst, step, s, m);
    hazards(step, s);
  }

 private:
  std::string where(int line, int col) const { return file_ + ":" + std::to_string(line) + ":" + std::to_string(col); }
  std::string where(const Statement& s, size_t offset) const {
    auto [line, col] = s.position(offset);
    return where(line, col);
  }
  void note(std::string message, std::string at) {
    out_.diags.push_back({Severity::note, "", std::move(message), std::move(at)});
  }

  // The target and PTX version to check against, once per module.
  bool resolve(const Module& m) {
    if (resolved_) return !out_.unusable;
    resolved_ = true;
    target_ = opt_.arch ? opt_.arch : m.target;
    version_ = opt_.version ? opt_.version : m.version;
    if (!target_) {
      out_.unusable = true;
      out_.diags.error("lint.no-target",
                       m.target_text.empty()
                           ? "the module has no `.target` directive; give --arch"
                           : "`.target " + m.target_text + "` is not a target tmakit knows (sm_90 and later); give --arch",
                       where(std::max(m.target_line, 1), 1));
    }
    if (!version_) {
      out_.unusable = true;
      out_.diags.error("lint.no-version", "the module has no `.version` directive; give --ptx-version",
                       where(std::max(m.version_line, 1), 1));
    }
    return !out_.unusable;
  }

  const Symbol* lookup(std::string_view name, const Function& f, const Module& m) const {
    if (const Symbol* s = f.symbols.find(name)) return s;
    return m.globals.find(name);
  }

  // A register's type against the operand: value operands are integer or bit registers
  // of exactly the table's width; predicates are .pred (ptxas: "Arguments mismatch").
  void operand_symbol(const Expr& e, std::string_view role, const spec::Operand& op, bool address, int width,
                      const Statement& s, const Operand& written, const Function& f, const Module& m) {
    const std::string at = where(s, static_cast<size_t>(written.column - 1));
    if (e.is_immediate()) {
      if (!address && !op.values.holds(e.offset))
        out_.diags.error("ptx.operand-value",
                         std::string(role) + " must be " + op.values.str() + ", got " + std::to_string(e.offset), at);
      return;
    }
    const Symbol* sym = lookup(e.symbol, f, m);
    if (!sym) {
      out_.diags.error("ptx.unknown-symbol", quote(e.symbol) + " (" + std::string(role) + ") is not declared", at);
      return;
    }
    if (sym->space != ".reg") return;  // a variable's address
    const ValueType t = sym->type;
    std::string want;
    if (op.kind == spec::OperandKind::predicate) {
      if (t.kind != 'p') want = "a .pred register";
    } else if (address && (t.kind == 'p' || t.kind == 'f' || t.bits < 32)) {
      want = "a 32- or 64-bit integer or bit-size register";  // ptxas takes some 16-bit ones; docs/lint.md
    } else if (!address && (t.kind == 'p' || t.kind == 'f' || t.bits != width)) {
      want = "a " + std::to_string(width) + "-bit integer or bit-size register";
    }
    if (want.empty()) return;
    out_.diags.error("ptx.operand-type",
                     std::string(role) + " must be " + want + ", got " + quote(e.symbol) + " of type " + t.str(), at);
    note(quote(e.symbol) + " is declared " + t.str() + " here", where(sym->line, 1));
  }

  void operands(const Instruction& inst, const Statement& s, const Function& f, const Module& m) {
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      const Operand& o = inst.operands[i];
      const spec::Operand& op = *inst.operand_specs[i];
      const std::string role(op.name);
      switch (o.kind) {
        case Operand::Kind::value: operand_symbol(o.expr, role, op, false, op.bits, s, o, f, m); break;
        case Operand::Kind::address:
          if (o.expr.is_immediate()) {
            out_.diags.error("ptx.address-immediate",
                             role + " " + quote(o.str()) + " is an immediate address; ptxas allows those only for .local",
                             where(s, static_cast<size_t>(o.column - 1)));
            break;
          }
          operand_symbol(o.expr, role, op, true, 0, s, o, f, m);
          break;
        case Operand::Kind::tensor:
          operand_symbol({o.map, 0}, "tensorMap", op, true, 0, s, o, f, m);
          // Coordinates are .s32 (PTX-BT "tensorCoords"), im2colInfo elements 16-bit.
          for (const auto& e : o.elems) operand_symbol(e, "tensorCoords", op, false, 32, s, o, f, m);
          break;
        case Operand::Kind::vector:
          for (const auto& e : o.elems) operand_symbol(e, role, op, false, op.bits, s, o, f, m);
          break;
        case Operand::Kind::sink: break;
      }
    }
  }

  // Target, PTX version and combination checks; notes say where the target and version come from.
  void checks(const Instruction& inst, const Step& step, const Statement& s, const Module& m) {
    Diagnostics d = check(inst, *target_, *version_);
    const size_t mn_offset = s.text.find(s.mnemonic());
    for (auto& x : d) {
      size_t offset = mn_offset;
      // Point at the qualifier the message names first (`.tile::gather4`).
      if (size_t q = x.message.find("`."); q != std::string::npos) {
        size_t e = x.message.find('`', q + 1);
        std::string_view qual = std::string_view(x.message).substr(q + 1, e - q - 1);
        std::string_view mn = s.mnemonic();
        for (size_t k = mn.find(qual); k != std::string_view::npos; k = mn.find(qual, k + 1))
          if (k + qual.size() == mn.size() || mn[k + qual.size()] == '.') {
            offset = mn_offset + k;
            break;
          }
      }
      x.where = where(s, offset);
      out_.diags.push_back(x);
      if (x.rule == "ptx.target") {
        note(opt_.arch ? "the target " + target_->str() + " comes from --arch"
                       : "the module's `.target " + m.target_text + "` is here",
             where(std::max(m.target_line, 1), 1));
      } else if (x.rule == "ptx.ptx-version") {
        const auto* copy = std::get_if<BulkCopy>(&step.body);
        const auto* tensor = std::get_if<TensorCopy>(&step.body);
        const bool cta_dst = (copy && copy->dst == Space::shared_cta) ||
                             (tensor && tensor->kind == TensorCopy::Kind::load && tensor->dst == Space::shared_cta);
        if (cta_dst && *version_ < inst.form().since)
          note("before PTX ISA " + inst.form().since.str() +
                   ", write `.shared::cluster`: an address in the executing CTA's shared memory is valid there too",
               where(s, mn_offset));
        note(opt_.version ? "the PTX ISA version " + version_->str() + " comes from --ptx-version"
                          : "the module's `.version " + version_->str() + "` is here; raise it to use this",
             where(std::max(m.version_line, 1), 1));
      } else if (x.rule == "ptx.advised-target") {
        note("the ISA advises .multicast::cluster on arch-specific (a) or family (f) targets; "
             "this module targets " + target_->str(), where(std::max(m.target_line, 1), 1));
      }
    }
  }

  // ---- straight-line hazards ----

  struct BulkRead {
    std::string address;  // srcMem as written
    std::string at;
    int line = 0;
    long group = -1;  // the commit_group that closed it (-1: not yet committed)
  };

  void reset() {
    last_store_.clear();
    bulk_reads_.clear();
  }

  void ordinary_store(const Statement& s) {
    last_store_ = where(s, 0);
    reused(first_address(s.text), s, "an ordinary store");
  }

  // A write to shared memory that a pending bulk store may still be reading.
  void reused(const std::string& address, const Statement& s, std::string_view what) {
    for (const auto& r : bulk_reads_) {
      if (r.address != address || address.empty()) continue;
      out_.diags.warning("lint.bulk-store-reuse",
                         std::string(what) + " writes [" + address + "] while a bulk store may still be reading it",
                         where(s, 0));
      note("the bulk store that reads [" + address + "] is here; wait with `cp.async.bulk.wait_group.read` "
           "(after its commit_group) before reusing the buffer", r.at);
      return;
    }
  }

  void hazards(const Step& step, const Statement& s) {
    const auto& b = step.body;
    const std::string opcode(step.inst.form().opcode);
    if (const auto* f = std::get_if<Fence>(&b); f && f->kind == Fence::Kind::proxy_async && f->space != Space::global)
      last_store_.clear();
    if (std::holds_alternative<CommitGroup>(b)) {
      ++groups_;
      for (auto& r : bulk_reads_)
        if (r.group < 0) r.group = groups_;
    }
    if (const auto* w = std::get_if<WaitGroup>(&b)) {
      // At most N groups stay pending: the newest N (PTX-G).
      const long n = w->n.expr.offset;
      std::erase_if(bulk_reads_, [&](const BulkRead& r) { return r.group >= 0 && r.group <= groups_ - n; });
    }
    // A bulk copy's shared::cta source (read through the async proxy), whether a bulk group
    // completes it, and its shared-memory destination.
    const Operand* src = nullptr;
    const Operand* dst = nullptr;
    bool bulk_group = false;
    if (const auto* c = std::get_if<BulkCopy>(&b)) {
      if (c->src == Space::shared_cta) src = &c->srcMem;
      bulk_group = c->dst == Space::global;
      if (c->dst != Space::global) dst = &c->dstMem;
    } else if (const auto* r = std::get_if<BulkReduce>(&b)) {
      src = &r->srcMem;
      bulk_group = r->dst == Space::global;
      if (r->dst != Space::global) dst = &r->dstMem;
    } else if (const auto* t = std::get_if<TensorCopy>(&b)) {
      if (t->kind == TensorCopy::Kind::store || t->kind == TensorCopy::Kind::reduce) src = &*t->srcMem, bulk_group = true;
      if (t->kind == TensorCopy::Kind::load) dst = &*t->dstMem;
    } else {
      return;
    }
    if (src) {
      if (!last_store_.empty()) {
        out_.diags.warning("lint.proxy-fence",
                           opcode + " reads shared memory through the async proxy after an "
                           "ordinary st.shared with no fence.proxy.async between them; it may read stale data",
                           where(s, 0));
        note("the ordinary store is here; put `fence.proxy.async.shared::cta;` after it", last_store_);
        last_store_.clear();  // one warning per store
      }
      if (bulk_group) bulk_reads_.push_back({src->expr.str(), where(s, 0), s.line});
    }
    if (dst) reused(dst->expr.str(), s, opcode);
  }

  std::string file_;
  const LintOptions& opt_;
  LintResult& out_;
  bool resolved_ = false;
  std::optional<spec::Target> target_;
  std::optional<spec::PtxVersion> version_;
  const Function* fn_ = nullptr;
  int fn_line_ = -1;
  std::string last_store_;  // where the last unfenced ordinary shared store is
  std::vector<BulkRead> bulk_reads_;
  long groups_ = 0;
};

}  // namespace

size_t LintResult::errors() const {
  return std::count_if(diags.begin(), diags.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}
size_t LintResult::warnings() const {
  return std::count_if(diags.begin(), diags.end(), [](const Diagnostic& d) { return d.severity == Severity::warning; });
}

bool linted_mnemonic(std::string_view mnemonic) {
  for (auto op : linted_opcodes())
    if (starts_token(mnemonic, op)) return true;
  return false;
}

LintResult lint_module(std::string_view text, const std::string& file, const LintOptions& options) {
  LintResult out;
  Linter linter(file, options, out);
  Diagnostics reader;
  Module m = read_module(text, file, reader, [&](const Statement& s, const Function& f, const Module& mod) {
    linter.statement(s, f, mod);
  });
  out.diags.insert(out.diags.end(), reader.begin(), reader.end());
  // A module with no instruction still needs a target to be judged.
  if (out.instructions == 0 && !out.unusable) {
    if (!options.arch && !m.target) out.unusable = true;
    if (!options.version && !m.version) out.unusable = true;
    if (out.unusable)
      out.diags.error("lint.no-target",
                      "the module names no known `.target` and `.version`; give --arch and --ptx-version", file + ":1:1");
  }
  return out;
}

}  // namespace tmakit::ptx
