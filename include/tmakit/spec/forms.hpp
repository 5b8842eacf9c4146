// The one table of instruction forms. Every form of the bulk-copy families and
// of the instructions a program needs around them is one row: its qualifier
// slots (with the PTX version and targets each qualifier needs), its operands,
// and the reduction op × type pairs. The PTX parser, the validator, the model's
// dispatch, the docs matrix and the tests all read this table; no other file
// spells an instruction.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/spec/reduction.hpp"
#include "tmakit/spec/target.hpp"

namespace tmakit::spec {

// What the model does with a form.
enum class Op : uint8_t {
  bulk_copy, bulk_reduce, bulk_prefetch, tensor_load, tensor_store, tensor_reduce, tensor_prefetch,
  commit_group, wait_group,
  mbar_init, mbar_arrive, mbar_expect_tx, mbar_complete_tx, mbar_test_wait, mbar_try_wait,
  mbar_pending_count, mbar_inval,
  fence, cluster_barrier, store,
  tensormap  // tensormap.replace / tensormap.cp_fenceproxy: checked by the front end, not modelled
};

struct Qualifier {
  std::string_view text;   // ".tile::gather4"
  PtxVersion since{};      // the PTX version that introduced it (0.0 = with the form)
  TargetReq targets{};     // targets it needs beyond the form's own
  TargetReq advised{};     // the ISA advises it only on these targets (a lint warning elsewhere)
};

struct Slot {
  std::string_view name;           // the ISA syntax's name: "dim", "dst", "load_mode", ...
  std::vector<Qualifier> choices;
  bool required = false;
  std::string_view implied;        // the choice an absent optional slot means (".tile", ".release")
  bool ordered = false;            // must appear after the previous ordered slot (dst before src)
};

enum class OperandKind : uint8_t {
  address,    // [sym], [sym+imm]
  tensor,     // [tensorMap, {c0, ...}]
  vector,     // {a, b, ...}
  value,      // register, symbol or immediate
  state,      // destination: a register, or `_` (sink)
  sink,       // destination that must be `_` (remote arrive)
  predicate,  // destination predicate (waitComplete)
};

// Length rule of a vector operand.
enum class Length : uint8_t { none, dim, coords /* dim, or 5 for gather4/scatter4 */, im2col_info };

// The immediate values ptxas accepts for an operand (the linter checks them; the model checks
// the values a program computes at run time by its own rules, §7).
struct ValueRule {
  int64_t min = INT64_MIN, max = INT64_MAX;
  int64_t multiple_of = 1;
  bool holds(int64_t v) const { return v >= min && v <= max && v % multiple_of == 0; }
  std::string str() const;  // "a multiple of 16 in [0, 1048560]"
};

struct Operand {
  std::string_view name;              // the ISA's operand name: "dstMem", "ctaMask"
  OperandKind kind = OperandKind::value;
  int bits = 32;                      // width of a value operand (16 for ctaMask, 64 for policy)
  std::vector<std::string_view> when; // present only when one of these qualifiers is chosen
  bool optional = false;              // may be left out (arrive's count, suspendTimeHint)
  Length length = Length::none;
  PtxVersion since{};                 // operand introduced later than the form
  bool immediate = false;             // must be an integer constant (wait_group's N, tensormap's ord)
  bool discard = true;                // a `state` destination may be `_` (not pending_count's count)
  ValueRule values{};                 // what an immediate may be
};

// "If qualifier `if_chosen` is present, one of `needs` must be too" (e.g. gather4 needs .2d).
struct Constraint {
  std::string_view if_chosen;
  std::vector<std::string_view> needs;
  std::string_view rule;
};

struct Form {
  std::string_view id;        // stable: "tensor.load.shared::cta"
  std::string_view opcode;    // "cp.async.bulk.tensor"
  Op op;
  std::vector<Slot> slots;    // in the ISA's syntax order, which is also the canonical print order
  std::vector<Operand> operands;
  PtxVersion since;
  TargetReq targets;
  std::vector<Constraint> constraints;
  std::string_view source;    // spec label: "PTX-BT"
  std::string_view summary;
};

std::span<const Form> forms();
const Form* find_form(std::string_view id);

// Which op × type pairs a reduction form takes (§6.1, §6.2). For the tensor
// form the type comes from the map; `noftz` says the pair is written .add.noftz.
struct ReductionPair {
  std::string_view form_id;
  RedOp op;
  RedType type;
  bool noftz = false;
};
std::span<const ReductionPair> reduction_pairs();
bool reduction_allowed(std::string_view form_id, RedOp op, RedType type);

// The qualifiers of one written instruction, matched against the forms.
struct Selection {
  const Form* form = nullptr;
  std::vector<std::string_view> chosen;  // per slot of form: the qualifier text, or empty
  std::vector<std::string> written;      // the qualifiers in the order they were written
  // The choice for a slot by name, or the slot's implied default, or "".
  std::string_view get(std::string_view slot) const;
  bool has(std::string_view qualifier) const;
  int dim() const;  // from ".Nd", 0 when the form has no dim slot
};

// Match "cp.async.bulk.tensor.2d.shared::cta.global..." (no guard, no operands)
// to a form. On failure the diagnostics name the rule and what would be valid.
std::optional<Selection> match(std::string_view mnemonic, Diagnostics& diags, const std::string& where = {});

// What a target and PTX version lack for this selection (empty when it is fine).
// Advisory mismatches come as warnings (rule "ptx.advised-target").
Diagnostics check_target(const Selection& sel, const Target& target, PtxVersion version);
// Constraint and reduction-pair checks of the qualifier combination.
Diagnostics check_combination(const Selection& sel);

// The operands this selection takes, in order.
std::vector<const Operand*> operands_of(const Selection& sel);
// The required length of a vector operand under this selection.
int vector_length(const Selection& sel, const Operand& op);

// Canonical text of the mnemonic: opcode then chosen qualifiers in slot order.
std::string canonical_mnemonic(const Selection& sel);

// The Markdown instruction matrix (docs/instructions.md), generated from the table.
std::string instruction_matrix_markdown();

}  // namespace tmakit::spec
