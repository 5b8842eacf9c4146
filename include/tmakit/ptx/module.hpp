// A whole PTX module as compilers emit it (nvcc with and without -lineinfo/-G, NVRTC,
// Triton, CuTe DSL: tests/corpus/): directives, functions, declarations, labels, guarded
// instructions, `{ }` scopes, comments, strings and DWARF `.section` blocks. The reader
// makes one linear pass and hands each statement of a function body to a callback, so
// a module of tens of megabytes is never held twice. parse_module keeps a module whole
// instead, as pieces that print back byte for byte (for tools that rewrite modules).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/spec/target.hpp"

namespace tmakit::ptx {

// The type of a register or variable: ".b32" is {'b', 32}, ".pred" is {'p', 1}.
struct ValueType {
  char kind = 'b';  // 'b' bits, 'u' unsigned, 's' signed, 'f' float, 'p' predicate
  int bits = 32;
  std::string str() const;  // ".b32"
};
std::optional<ValueType> parse_value_type(std::string_view text);

struct Symbol {
  std::string space;  // ".reg", ".param", ".shared", ".global", ".const", ".local"
  ValueType type;
  int line = 0;       // where it is declared
};

// Names in scope. A register range `%r<100>` is kept as one entry, not expanded.
class SymbolTable {
 public:
  void declare(const std::string& name, const Symbol& s) { names_[name] = s; }
  void declare_range(const std::string& prefix, int count, const Symbol& s) { ranges_[prefix] = {count, s}; }
  const Symbol* find(std::string_view name) const;
  void clear() { names_.clear(), ranges_.clear(); }

 private:
  std::unordered_map<std::string, Symbol> names_;
  std::unordered_map<std::string, std::pair<int, Symbol>> ranges_;
};

struct Statement {
  enum class Kind { instruction, label } kind = Kind::instruction;
  std::string text;  // instruction: as written from its first character to `;`, comments blanked; label: the name
  int line = 0;      // 1-based place of its first character
  int column = 0;
  // The line and column of byte `offset` of `text` (statements may span lines).
  std::pair<int, int> position(size_t offset) const;
  // The mnemonic, without the guard ("cp.async.bulk.commit_group").
  std::string_view mnemonic() const;
};

struct Function {
  std::string name;
  int line = 0;
  bool entry = false;
  SymbolTable symbols;          // parameters and declarations of the body
  std::vector<Statement> body;  // filled only when read_module gets no callback
};

struct Module {
  std::string file;
  std::optional<spec::PtxVersion> version;
  int version_line = 0;
  std::optional<spec::Target> target;  // the first target of `.target` that tmakit knows
  std::string target_text;             // as written
  int target_line = 0;
  SymbolTable globals;
  std::vector<Function> functions;
};

struct Module;
// Called for each instruction and label of a function body, with the module read so far.
using StatementHandler = std::function<void(const Statement&, const Function&, const Module&)>;

// Reads a module. Problems that make the text unusable as a module (an unterminated
// comment or string, unbalanced braces at the top level) are errors with rule
// `module.*`; a missing `.version` or `.target` is left for the caller to judge.
Module read_module(std::string_view text, const std::string& file, Diagnostics& diags,
                   const StatementHandler& on_statement = {});

// One piece of a module's text. The pieces of a module, in order, cover it exactly.
struct Piece {
  enum class Kind {
    trivia,       // white space and comments between the others
    directive,    // a statement that is no instruction: .version, .target, .file, .loc, .pragma,
                  // declarations, prototypes, .alias, anything else that starts with `.`
    header,       // a function's header, from its first word to just before its `{`
    open,         // `{`: a function body or a nested scope
    close,        // `}`
    section,      // a whole `.section NAME { ... }` block (DWARF data), kept as one piece
    label,        // `name:`
    instruction,  // from its guard or mnemonic to its `;`
  } kind = Kind::trivia;
  std::string text;  // verbatim
  int line = 0;      // 1-based line of its first character
  Statement statement;  // instruction and label: as read_module's callback sees it
};

// A module kept whole: what read_module finds (bodies are not kept: the statements are in
// the pieces) and the pieces. Unknown directives and instructions are pieces like any
// other, so nothing the front end does not understand is lost or moved.
struct ModuleText {
  Module module;
  std::vector<Piece> pieces;
};

ModuleText parse_module(std::string_view text, const std::string& file, Diagnostics& diags);

// The module's text: the pieces' texts in order, so print_module(parse_module(x)) == x.
// With `canonical`, each instruction of the table's families that parses is written as
// ptx::print writes it (guard, qualifiers in the table's order, operands spaced ", ").
std::string print_module(const ModuleText& m, bool canonical = false);

}  // namespace tmakit::ptx
