// Which instructions get a record, and which values their records hold. Instructions of the
// table's families are read with the PTX parser, so their operands are the table's (names,
// kinds, widths); ordinary shared stores and loads, CTA barriers and the fence.proxy forms
// outside the table are read here, by their written text.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "site.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/lint.hpp"

namespace tmakit::instrument::detail {
namespace {

using spec::Op;

struct Kind {
  TraceOp op = TraceOp::none;
  bool copy = false;  // OpSet::copies covers it (else OpSet::barriers)
};

Kind kind_of(const spec::Form& f) {
  switch (f.op) {
    case Op::bulk_copy: return {TraceOp::bulk_copy, true};
    case Op::bulk_reduce: return {TraceOp::bulk_reduce, true};
    case Op::bulk_prefetch: return {TraceOp::bulk_prefetch, true};
    case Op::tensor_load: return {TraceOp::tensor_load, true};
    case Op::tensor_store: return {TraceOp::tensor_store, true};
    case Op::tensor_reduce: return {TraceOp::tensor_reduce, true};
    case Op::tensor_prefetch: return {TraceOp::tensor_prefetch, true};
    case Op::commit_group: return {TraceOp::commit_group, true};
    case Op::wait_group: return {TraceOp::wait_group, true};
    case Op::tensormap:
      return {f.id == "tensormap.cp_fenceproxy" ? TraceOp::tensormap_cp_fenceproxy : TraceOp::tensormap_replace, true};
    case Op::mbar_init: return {TraceOp::mbar_init};
    case Op::mbar_arrive: return {TraceOp::mbar_arrive};
    case Op::mbar_expect_tx: return {TraceOp::mbar_expect_tx};
    case Op::mbar_complete_tx: return {TraceOp::mbar_complete_tx};
    case Op::mbar_test_wait: return {TraceOp::mbar_test_wait};
    case Op::mbar_try_wait: return {TraceOp::mbar_try_wait};
    case Op::mbar_inval: return {TraceOp::mbar_inval};
    case Op::fence:
      return {f.id == "fence.mbarrier_init" ? TraceOp::fence_mbarrier_init : TraceOp::fence_proxy_async};
    case Op::cluster_barrier:
      return {f.id == "barrier.cluster.wait" ? TraceOp::cluster_wait : TraceOp::cluster_arrive};
    case Op::mbar_pending_count:  // reads a state token, touches no barrier: nothing to replay
    case Op::store:               // ordinary stores are read by their text (shared_store_bytes)
      return {};
  }
  return {};
}

bool covers(OpSet ops, bool copy) { return ops == OpSet::all || (ops == OpSet::copies) == copy; }

std::vector<std::string_view> qualifiers(std::string_view mnemonic) {
  std::vector<std::string_view> out;
  size_t k = 0;
  while (k <= mnemonic.size()) {
    size_t dot = std::min(mnemonic.find('.', k), mnemonic.size());
    out.push_back(mnemonic.substr(k, dot - k));
    k = dot + 1;
  }
  return out;
}

// The bytes an ordinary shared access writes or reads (`st[.volatile|.relaxed…].shared[::cta|::cluster][.vN].TYPE`,
// `ld…` likewise; `verb` is "st" or "ld"), 0 for a type not read here; nullopt when the mnemonic is no
// ordinary shared access. st.async and st.bulk are the async proxy's own stores: not ordinary;
// ldmatrix and ldu are other mnemonics, so never match.
std::optional<uint32_t> shared_access_bytes(std::string_view mnemonic, std::string_view verb) {
  auto q = qualifiers(mnemonic);
  if (q.empty() || q[0] != verb) return std::nullopt;
  if (std::find(q.begin(), q.end(), "async") != q.end() || std::find(q.begin(), q.end(), "bulk") != q.end())
    return std::nullopt;
  bool shared = false;
  uint32_t lanes = 1, bits = 0;
  for (std::string_view w : q) {
    if (w.substr(0, 6) == "shared" && (w.size() == 6 || w.substr(6, 2) == "::")) shared = true;
    else if (w.size() >= 2 && w[0] == 'v' && std::isdigit(static_cast<unsigned char>(w[1]))) lanes = std::stoul(std::string(w.substr(1)));
    else if (w.size() >= 2 && std::string_view("bsuf").find(w[0]) != std::string_view::npos) {
      uint32_t b = 0;
      auto [end, ec] = std::from_chars(w.data() + 1, w.data() + w.size(), b);
      if (ec == std::errc() && std::string_view(end, w.data() + w.size() - end) == "x2") b *= 2;  // f16x2
      if (ec == std::errc()) bits = b;
    } else if (w == "bf16") bits = 16;
    else if (w == "bf16x2") bits = 32;
  }
  if (!shared) return std::nullopt;
  return lanes * bits / 8;
}

// A CTA barrier (`bar{.cta}.sync|arrive|red…`, `barrier{.cta}.sync|arrive|red{.aligned}…`):
// its record's operation, or none (`bar.warp.sync`; `barrier.cluster.*` is the table's).
TraceOp cta_barrier(std::string_view mnemonic) {
  auto q = qualifiers(mnemonic);
  if (q.size() < 2 || (q[0] != "bar" && q[0] != "barrier")) return TraceOp::none;
  const std::string_view verb = q[1] == "cta" && q.size() > 2 ? q[2] : q[1];
  if (verb == "sync") return TraceOp::bar_sync;
  if (verb == "arrive") return TraceOp::bar_arrive;
  if (verb == "red") return TraceOp::bar_red;
  return TraceOp::none;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::optional<int64_t> integer(std::string_view s) {
  std::string t = trim(s);
  bool neg = !t.empty() && t[0] == '-';
  std::string_view v = std::string_view(t).substr(neg ? 1 : 0);
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) base = 16, v.remove_prefix(2);
  if (!v.empty() && (v.back() == 'U' || v.back() == 'u')) v.remove_suffix(1);
  uint64_t x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x, base);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return neg ? -static_cast<int64_t>(x) : static_cast<int64_t>(x);
}

// A name as an address base: a register (with its width) or a variable.
Source address(const std::string& base, int64_t offset, const ptx::SymbolTable& regs) {
  Source s{Source::Kind::address, base, 64, false, offset};
  if (const ptx::Symbol* sym = regs.find(base); sym && sym->space == ".reg") s.base_is_reg = true, s.bits = sym->type.bits;
  return s;
}

// A value operand: an immediate, a register, or a variable (its address).
Source value(const ptx::Expr& e, int bits, const ptx::SymbolTable& regs) {
  if (e.is_immediate()) return {Source::Kind::imm, "", bits, false, e.offset};
  if (const ptx::Symbol* sym = regs.find(e.symbol); sym && sym->space == ".reg")
    return {Source::Kind::reg, e.symbol, sym->type.bits, true, 0};
  return address(e.symbol, e.offset, regs);
}

// The state space a tensor operand's map is loaded from: a register holds a generic address
// (the PTX ISA's tensorMap operand); a variable is read in its own space (a kernel's
// `.param` CUtensorMap by ld.param), a name not declared in the function as .global.
std::string map_space(const Source& at, const ptx::SymbolTable& regs) {
  if (at.base_is_reg) return "";
  if (at.name.empty()) return "";
  const ptx::Symbol* sym = regs.find(at.name);
  if (!sym) return ".global";
  if (sym->space == ".param" || sym->space == ".const" || sym->space == ".global") return sym->space;
  return sym->space == ".shared" ? ".shared" : ".global";
}

uint32_t bytes_of(const Source& s, int spec_bits) {
  if (s.kind == Source::Kind::address) return 8;
  return static_cast<uint32_t>(std::clamp(s.kind == Source::Kind::reg ? s.bits : spec_bits, 8, 64) / 8);
}

// `[base+off]` as written, by its text.
std::optional<Source> address_text(std::string_view text, const ptx::SymbolTable& regs) {
  std::string a = trim(text.substr(1, text.size() - 2));
  if (auto imm = integer(a)) return Source{Source::Kind::address, "", 64, false, *imm};
  size_t sign = a.find_first_of("+-", 1);
  std::string base = trim(std::string_view(a).substr(0, sign));
  int64_t off = 0;
  if (sign != std::string::npos) {
    std::string rest = a.substr(sign + 1);
    auto v = integer(rest);
    if (!v) return std::nullopt;
    off = a[sign] == '-' ? -*v : *v;
  }
  return address(base, off, regs);
}

// The operands after the mnemonic, split at top-level commas.
std::vector<std::string> operand_texts(std::string_view text) {
  std::vector<std::string> out;
  size_t semi = text.rfind(';');
  text = text.substr(0, semi == std::string_view::npos ? text.size() : semi);
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) out.push_back(trim(cur)), cur.clear();
    else cur += c;
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

void guard_from_text(std::string_view text, Plan& p) {
  if (text.empty() || text[0] != '@') return;
  size_t end = text.find_first_of(" \t\n");
  std::string_view g = text.substr(1, end - 1);
  p.guard_negated = !g.empty() && g[0] == '!';
  p.guard = std::string(g.substr(p.guard_negated ? 1 : 0));
}

// Offsets in Record::values: scalars take 8 bytes, vectors 4 an element, each entry 8-aligned.
bool lay_out(Plan& p, Diagnostics& diags, const std::string& where) {
  uint32_t at = kValuesOffset;
  for (Entry& e : p.entries) {
    e.field.offset = at;
    e.field.count = static_cast<uint32_t>(e.elems.size());
    at += (e.field.stride * e.field.count + 7) / 8 * 8;
  }
  if (at > kRecordBytes) {
    diags.error("instrument.record-size",
                "the operands need " + std::to_string(at - kValuesOffset) + " bytes of a record's " +
                    std::to_string(kRecordBytes - kValuesOffset),
                where);
    return false;
  }
  return true;
}

// An instruction of the table's families, read by the parser.
std::optional<Plan> plan_table(const ptx::Statement& s, const ptx::SymbolTable& regs, OpSet ops,
                               Diagnostics& diags, const std::string& where) {
  Diagnostics d;
  auto inst = ptx::parse_instruction(s.text, d, where);
  if (!inst) {
    diags.error("instrument.parse", "`" + s.text + "` does not parse, so it cannot be instrumented", where);
    for (auto& x : d) diags.push_back(x);
    return std::nullopt;
  }
  Kind k = kind_of(inst->form());
  if (k.op == TraceOp::none || !covers(ops, k.copy)) return std::nullopt;
  Plan p;
  p.op = k.op;
  p.form = std::string(inst->form().id);
  if (inst->guard) p.guard = inst->guard->predicate, p.guard_negated = inst->guard->negated;
  for (size_t i = 0; i < inst->operands.size(); ++i) {
    const ptx::Operand& o = inst->operands[i];
    const spec::Operand& spec = *inst->operand_specs[i];
    if (o.kind == ptx::Operand::Kind::sink) continue;
    Entry e;
    e.field.name = std::string(spec.name);
    switch (spec.kind) {
      case spec::OperandKind::address:
        e.elems.push_back(address(o.expr.symbol, o.expr.offset, regs));
        e.field.bytes = 8;
        break;
      case spec::OperandKind::tensor: {
        Entry map;
        map.field.name = "tensorMap";
        map.elems.push_back(address(o.map, 0, regs));
        p.map = MapRead{map.elems.back(), map_space(map.elems.back(), regs)};
        p.entries.push_back(map);
        e.field.name = "tensorCoords";
        [[fallthrough]];
      }
      case spec::OperandKind::vector:
        e.field.stride = 4;
        e.field.bytes = static_cast<uint32_t>(std::min(spec.bits, 32) / 8);
        for (const ptx::Expr& x : o.elems) e.elems.push_back(value(x, spec.bits, regs));
        break;
      case spec::OperandKind::predicate:  // waitComplete: a flag of the record, not a value
        p.wait_result = o.expr.symbol;
        p.after = true;
        continue;
      case spec::OperandKind::state:
      case spec::OperandKind::sink:
        e.output = true;
        p.after = true;
        [[fallthrough]];
      case spec::OperandKind::value:
        e.elems.push_back(value(o.expr, spec.bits, regs));
        e.field.bytes = bytes_of(e.elems.back(), spec.bits);
        break;
    }
    p.entries.push_back(std::move(e));
  }
  // tensormap.replace changes a map in global or shared memory (its `addr`: the bytes before the
  // change); tensormap.cp_fenceproxy installs the map at `src` in shared memory.
  if (k.op == TraceOp::tensormap_replace && !p.entries.empty() && p.entries[0].field.name == "addr")
    p.map = MapRead{p.entries[0].elems[0], s.text.find(".shared::cta") != std::string::npos ? ".shared" : ".global"};
  if (k.op == TraceOp::tensormap_cp_fenceproxy && p.entries.size() >= 2 && p.entries[1].field.name == "src")
    p.map = MapRead{p.entries[1].elems[0], ".shared"};
  if (!lay_out(p, diags, where)) return std::nullopt;
  return p;
}

// A CTA barrier, read by its text: the barrier's number and, where the instruction names one,
// the thread count (`bar.red`'s destination and predicate are left out). Recorded before the
// instruction (bar.red's result is not needed), with `--ops all` only: what it orders is the
// ordinary shared accesses, recorded with that set alone.
std::optional<Plan> plan_cta_barrier(const ptx::Statement& s, TraceOp op, const ptx::SymbolTable& regs,
                                     Diagnostics& diags, const std::string& where) {
  Plan p;
  p.op = op;
  guard_from_text(s.text, p);
  std::string_view rest = s.text;
  rest.remove_prefix(std::min(rest.size(), rest.find(s.mnemonic()) + s.mnemonic().size()));
  std::vector<std::string> operands = operand_texts(rest);
  if (op == TraceOp::bar_red && operands.size() >= 2)  // d, a{, b}, {!}c
    operands = std::vector<std::string>(operands.begin() + 1, operands.end() - 1);
  const char* names[] = {"id", "count"};
  for (size_t k = 0; k < operands.size() && k < 2; ++k) {
    Source src;
    if (auto imm = integer(operands[k])) {
      src = {Source::Kind::imm, "", 32, false, *imm};
    } else if (const ptx::Symbol* sym = regs.find(operands[k]); sym && sym->space == ".reg") {
      src = {Source::Kind::reg, operands[k], sym->type.bits, true, 0};
    } else {
      continue;  // an operand form not read here: the record goes without it
    }
    Entry e;
    e.field.name = names[k];
    e.field.bytes = bytes_of(src, 32);
    e.elems.push_back(src);
    p.entries.push_back(e);
  }
  if (!lay_out(p, diags, where)) return std::nullopt;
  return p;
}

// An ordinary shared store or a fence.proxy form outside the table, read by its text: the
// address it names and, for a store, the bytes it writes; for a fence, its immediates.
std::optional<Plan> plan_text(const ptx::Statement& s, const ptx::SymbolTable& regs, OpSet ops,
                              Diagnostics& diags, const std::string& where) {
  std::string_view mn = s.mnemonic();
  if (const TraceOp bar = cta_barrier(mn); bar != TraceOp::none)
    return ops == OpSet::all ? plan_cta_barrier(s, bar, regs, diags, where) : std::nullopt;
  auto store = shared_access_bytes(mn, "st");
  const auto load = store ? std::nullopt : shared_access_bytes(mn, "ld");
  if (load) store = load;  // a load is planned as a store is: its address and its bytes
  const bool fence = mn.substr(0, 12) == "fence.proxy.";
  if (!store && !fence) return std::nullopt;
  if (store ? ops != OpSet::all : ops == OpSet::copies) return std::nullopt;
  Plan p;
  p.op = load ? TraceOp::shared_load : store ? TraceOp::shared_store : TraceOp::fence_proxy_other;
  guard_from_text(s.text, p);
  std::string_view rest = s.text;
  rest.remove_prefix(std::min(rest.size(), rest.find(mn) + mn.size()));
  for (const std::string& o : operand_texts(rest)) {
    if (o.size() >= 2 && o.front() == '[' && o.back() == ']') {
      auto a = address_text(o, regs);
      if (!a) continue;  // an address form not read here: the record goes without it
      Entry e;
      e.field.name = "addr";
      e.elems.push_back(*a);
      p.entries.push_back(e);
      if (store) break;  // the value stored is not recorded (a load's destination comes first, unbracketed)
    } else if (auto imm = integer(o); imm && fence) {
      Entry e;
      e.field.name = "size";
      e.field.bytes = 4;
      e.elems.push_back({Source::Kind::imm, "", 32, false, *imm});
      p.entries.push_back(e);
    }
  }
  if (store) {
    Entry e;
    e.field.name = "size";
    e.field.bytes = 4;
    e.elems.push_back({Source::Kind::imm, "", 32, false, static_cast<int64_t>(*store)});
    p.entries.push_back(e);
  }
  if (!lay_out(p, diags, where)) return std::nullopt;
  return p;
}

}  // namespace

void RegCounts::at_least(const RegCounts& o) {
  d = std::max(d, o.d), r = std::max(r, o.r), h = std::max(h, o.h), p = std::max(p, o.p);
}

std::optional<Plan> plan_site(const ptx::Piece& piece, const ptx::SymbolTable& regs, OpSet ops, Diagnostics& diags,
                              const std::string& where) {
  if (piece.kind != ptx::Piece::Kind::instruction) return std::nullopt;
  const ptx::Statement& s = piece.statement;
  if (ptx::linted_mnemonic(s.mnemonic())) return plan_table(s, regs, ops, diags, where);
  return plan_text(s, regs, ops, diags, where);
}

}  // namespace tmakit::instrument::detail
