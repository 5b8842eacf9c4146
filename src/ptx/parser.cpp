// A small hand-written parser for one PTX instruction line. The grammar is only
// what these instructions use: guard, dotted mnemonic, and operands that are
// values, `_`, `[addr]`, `[map, {coords}]` or `{vector}`.
#include <cctype>
#include <charconv>

#include "tmakit/ptx/instruction.hpp"

namespace tmakit::ptx {
namespace {

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  size_t pos() const { return i_; }
  int column() const { return static_cast<int>(i_) + 1; }
  std::string_view take_while(auto pred) {
    size_t start = i_;
    while (i_ < s_.size() && pred(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$'; }

// An identifier; a '-' between letters is taken as part of it, because the ISA's own
// examples name an operand `cache-policy` (documented in docs/ptx.md).
std::string_view take_identifier(Cursor& c, std::string_view text) {
  size_t start = c.pos();
  c.take_while(ident_char);
  while (c.peek() == '-' && c.pos() + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[c.pos() + 1]))) {
    c.eat('-');
    c.take_while(ident_char);
  }
  return text.substr(start, c.pos() - start);
}

struct ParseError {
  std::string message;
  int column;
};

std::optional<int64_t> parse_integer(std::string_view t) {
  bool neg = false;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) {
    neg = t[0] == '-';
    t.remove_prefix(1);
  }
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.remove_suffix(1);  // PTX's unsigned suffix
  if (t.empty()) return std::nullopt;
  uint64_t v = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;
  if (neg) {
    if (v > (1ull << 63)) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  return static_cast<int64_t>(v);  // values above 2^63 wrap, as a 64-bit register would hold them
}

// One term: identifier or integer.
Expr parse_term(Cursor& c, std::string_view text) {
  c.skip_space();
  int col = c.column();
  if (ident_start(c.peek())) return {std::string(take_identifier(c, text)), 0};
  auto tok = c.take_while([](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '+'; });
  auto v = parse_integer(tok);
  if (!v) throw ParseError{"expected a symbol or an integer, got `" + std::string(tok) + "`", col};
  return {"", *v};
}

// sym, imm, sym+imm, sym-imm
Expr parse_expr(Cursor& c, std::string_view text) {
  Expr e = parse_term(c, text);
  c.skip_space();
  while (c.peek() == '+' || c.peek() == '-') {
    bool minus = c.peek() == '-';
    int col = c.column();
    c.eat(c.peek());
    Expr rhs = parse_term(c, text);
    if (!rhs.is_immediate()) throw ParseError{"only `symbol+integer` address arithmetic is supported", col};
    e.offset = minus ? e.offset - rhs.offset : e.offset + rhs.offset;
    c.skip_space();
  }
  return e;
}

std::vector<Expr> parse_brace_list(Cursor& c, std::string_view text) {
  std::vector<Expr> out;
  if (!c.eat('{')) throw ParseError{"expected `{`", c.column()};
  c.skip_space();
  if (c.eat('}')) return out;
  while (true) {
    out.push_back(parse_expr(c, text));
    if (c.eat('}')) return out;
    if (!c.eat(',')) throw ParseError{"expected `,` or `}` in a vector", c.column()};
  }
}

Operand parse_operand(Cursor& c, std::string_view text) {
  c.skip_space();
  Operand op;
  op.column = c.column();
  if (c.peek() == '[') {
    c.eat('[');
    op.expr = parse_expr(c, text);
    if (c.eat(',')) {
      op.kind = Operand::Kind::tensor;
      if (op.expr.is_immediate() || op.expr.offset != 0)
        throw ParseError{"a tensor operand starts with the tensor map's name", op.column};
      op.map = op.expr.symbol;
      op.expr = {};
      c.skip_space();
      op.elems = parse_brace_list(c, text);
    } else {
      op.kind = Operand::Kind::address;
    }
    if (!c.eat(']')) throw ParseError{"expected `]`", c.column()};
    return op;
  }
  if (c.peek() == '{') {
    op.kind = Operand::Kind::vector;
    op.elems = parse_brace_list(c, text);
    return op;
  }
  if (c.peek() == '_') {
    Cursor probe = c;
    probe.eat('_');
    if (!ident_char(probe.peek())) {
      c = probe;
      op.kind = Operand::Kind::sink;
      return op;
    }
  }
  op.kind = Operand::Kind::value;
  op.expr = parse_expr(c, text);
  return op;
}

const char* kind_name(Operand::Kind k) {
  switch (k) {
    case Operand::Kind::value: return "a value";
    case Operand::Kind::address: return "an address [..]";
    case Operand::Kind::tensor: return "a tensor operand [map, {..}]";
    case Operand::Kind::vector: return "a vector {..}";
    case Operand::Kind::sink: return "`_`";
  }
  return "?";
}

const char* expected_name(spec::OperandKind k) {
  switch (k) {
    case spec::OperandKind::address: return "an address [..]";
    case spec::OperandKind::tensor: return "a tensor operand [map, {..}]";
    case spec::OperandKind::vector: return "a vector {..}";
    case spec::OperandKind::value: return "a value";
    case spec::OperandKind::state: return "a register or `_`";
    case spec::OperandKind::sink: return "`_` (a remote arrive returns no state)";
    case spec::OperandKind::predicate: return "a predicate register";
  }
  return "?";
}

bool kind_fits(spec::OperandKind want, const Operand& got) {
  using K = spec::OperandKind;
  switch (want) {
    case K::address: return got.kind == Operand::Kind::address;
    case K::tensor: return got.kind == Operand::Kind::tensor;
    case K::vector: return got.kind == Operand::Kind::vector;
    case K::value: return got.kind == Operand::Kind::value;
    case K::state: return got.kind == Operand::Kind::sink || (got.kind == Operand::Kind::value && !got.expr.is_immediate() && got.expr.offset == 0);
    case K::sink: return got.kind == Operand::Kind::sink;
    case K::predicate: return got.kind == Operand::Kind::value && !got.expr.is_immediate() && got.expr.offset == 0;
  }
  return false;
}

std::string at(const std::string& where, int col) {
  return where.empty() ? "col " + std::to_string(col) : where + ":" + std::to_string(col);
}

}  // namespace

std::string Expr::str() const {
  if (symbol.empty()) return std::to_string(offset);
  if (offset == 0) return symbol;
  return symbol + (offset > 0 ? "+" : "") + std::to_string(offset);
}

std::string Operand::str() const {
  auto list = [](const std::vector<Expr>& v) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
    return s + "}";
  };
  switch (kind) {
    case Kind::value: return expr.str();
    case Kind::address: return "[" + expr.str() + "]";
    case Kind::tensor: return "[" + map + ", " + list(elems) + "]";
    case Kind::vector: return list(elems);
    case Kind::sink: return "_";
  }
  return "";
}

const Operand* Instruction::operand(std::string_view name) const {
  for (size_t i = 0; i < operands.size(); ++i)
    if (operand_specs[i]->name == name) return &operands[i];
  return nullptr;
}

std::optional<Instruction> parse_instruction(std::string_view text, Diagnostics& diags, const std::string& where) {
  // Drop a trailing // comment.
  if (auto cpos = text.find("//"); cpos != std::string_view::npos) text = text.substr(0, cpos);
  Instruction inst;
  inst.text = std::string(text);
  Cursor c(text);
  try {
    c.skip_space();
    if (c.eat('@')) {
      Guard g;
      g.negated = c.peek() == '!';
      if (g.negated) c.eat('!');
      int col = c.column();
      g.predicate = std::string(c.take_while(ident_char));
      if (g.predicate.empty()) throw ParseError{"expected a predicate after `@`", col};
      inst.guard = g;
    }
    c.skip_space();
    int mcol = c.column();
    std::string_view mnemonic = c.take_while([](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == ':' || ch == '_';
    });
    if (mnemonic.empty()) throw ParseError{"expected an instruction", mcol};
    auto sel = spec::match(mnemonic, diags, at(where, mcol));
    if (!sel) return std::nullopt;
    inst.sel = std::move(*sel);
    // Operands up to `;`.
    c.skip_space();
    if (c.peek() != ';') {
      while (true) {
        inst.operands.push_back(parse_operand(c, text));
        if (c.eat(',')) continue;
        break;
      }
    }
    if (!c.eat(';')) throw ParseError{"expected `;` after the operands", c.column()};
    c.skip_space();
    if (!c.done()) throw ParseError{"unexpected text after `;`", c.column()};
  } catch (const ParseError& e) {
    diags.error("ptx.syntax", e.message, at(where, e.column));
    return std::nullopt;
  }

  // Operands against the table.
  auto specs = spec::operands_of(inst.sel);
  size_t required = 0;
  for (auto* s : specs)
    if (!s->optional) ++required;
  const std::string mn = std::string(inst.form().opcode);
  if (inst.operands.size() < required || inst.operands.size() > specs.size()) {
    std::string names;
    for (auto* s : specs) names += (names.empty() ? "" : ", ") + std::string(s->name) + (s->optional ? "?" : "");
    diags.error("ptx.operand-count",
                canonical_mnemonic(inst.sel) + " takes " +
                    (required == specs.size() ? std::to_string(required)
                                              : std::to_string(required) + " to " + std::to_string(specs.size())) +
                    " operands (" + names + "), got " + std::to_string(inst.operands.size()),
                at(where, 1));
    return std::nullopt;
  }
  bool ok = true;
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const spec::Operand& s = *specs[i];
    const Operand& o = inst.operands[i];
    inst.operand_specs.push_back(&s);
    if (!kind_fits(s.kind, o)) {
      diags.error("ptx.operand-kind",
                  "operand " + std::to_string(i + 1) + " (" + std::string(s.name) + ") must be " + expected_name(s.kind) +
                      ", got " + kind_name(o.kind) + " `" + o.str() + "`",
                  at(where, o.column));
      ok = false;
      continue;
    }
    if (!s.discard && o.kind == Operand::Kind::sink) {
      diags.error("ptx.operand-kind",
                  "operand " + std::to_string(i + 1) + " (" + std::string(s.name) + ") of " +
                      std::string(inst.form().opcode) + " must be a register; `_` may not discard it",
                  at(where, o.column));
      ok = false;
      continue;
    }
    if (s.immediate && !o.expr.is_immediate()) {
      diags.error("ptx.operand-kind",
                  "operand " + std::to_string(i + 1) + " (" + std::string(s.name) + ") of " +
                      std::string(inst.form().opcode) + " must be an integer constant, got `" + o.str() + "`",
                  at(where, o.column));
      ok = false;
      continue;
    }
    int want = spec::vector_length(inst.sel, s);
    if ((s.kind == spec::OperandKind::tensor || s.kind == spec::OperandKind::vector) &&
        static_cast<int>(o.elems.size()) != want) {
      diags.error("ptx.vector-length",
                  std::string(s.name) + " needs " + std::to_string(want) + " elements for " +
                      canonical_mnemonic(inst.sel) + ", got " + std::to_string(o.elems.size()),
                  at(where, o.column));
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return inst;
}

Diagnostics check(const Instruction& inst, const spec::Target& target, spec::PtxVersion version) {
  Diagnostics d = spec::check_target(inst.sel, target, version);
  Diagnostics c = spec::check_combination(inst.sel);
  d.insert(d.end(), c.begin(), c.end());
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const spec::Operand& s = *inst.operand_specs[i];
    if (version < s.since)
      d.error("ptx.ptx-version", "operand " + std::string(s.name) + " of " + std::string(inst.form().opcode) +
                                     " needs PTX ISA " + s.since.str() + "; the program uses " + version.str());
  }
  return d;
}

std::string print(const Instruction& inst) {
  std::string s;
  if (inst.guard) s += "@" + std::string(inst.guard->negated ? "!" : "") + inst.guard->predicate + " ";
  s += spec::canonical_mnemonic(inst.sel);
  for (size_t i = 0; i < inst.operands.size(); ++i) s += (i ? ", " : " ") + inst.operands[i].str();
  return s + ";";
}

}  // namespace tmakit::ptx
