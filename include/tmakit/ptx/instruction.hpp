// One PTX instruction of the table's families, parsed: its form and chosen
// qualifiers (a spec::Selection), its guard and its operands as written.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/spec/forms.hpp"

namespace tmakit::ptx {

// `sym`, `sym+imm`, `sym-imm` or `imm`.
struct Expr {
  std::string symbol;  // empty: an immediate
  int64_t offset = 0;
  bool is_immediate() const { return symbol.empty(); }
  std::string str() const;
};

struct Operand {
  enum class Kind { value, address, tensor, vector, sink } kind = Kind::value;
  Expr expr;                // value, address
  std::string map;          // tensor: the tensor map's name
  std::vector<Expr> elems;  // vector elements, tensor coordinates
  int column = 0;           // 1-based column where the operand starts
  std::string str() const;
};

struct Guard {
  std::string predicate;
  bool negated = false;
};

struct Instruction {
  spec::Selection sel;
  std::optional<Guard> guard;
  std::vector<Operand> operands;                 // as written
  std::vector<const spec::Operand*> operand_specs;  // the table's operand for each written one
  std::string text;                              // the source text

  const spec::Form& form() const { return *sel.form; }
  spec::Op op() const { return sel.form->op; }
  // The written operand the table calls `name` ("dstMem", "ctaMask"), or nullptr.
  const Operand* operand(std::string_view name) const;
};

// Parses one instruction ("@p cp.async.bulk...;"), checking the qualifier set,
// the operand count, kinds and vector lengths against the table. `where` prefixes
// the diagnostics; column numbers are appended as ":col".
std::optional<Instruction> parse_instruction(std::string_view text, Diagnostics& diags, const std::string& where = {});

// Target, PTX version, constraint and reduction-pair checks (spec::check_target/check_combination),
// plus operands introduced after the form (e.g. arrive's count needs PTX 7.8).
Diagnostics check(const Instruction& inst, const spec::Target& target, spec::PtxVersion version);

// Canonical text: qualifiers in the table's slot order, operands spaced ", ".
std::string print(const Instruction& inst);

}  // namespace tmakit::ptx
