// A module kept whole as verbatim pieces (parse_module) and printed back (print_module):
// the base for tools that rewrite modules, such as an instrumenter that inserts
// instructions. Whatever the reader does not understand stays a piece of its own, in place.
#include "reader.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/ptx/lint.hpp"
#include "tmakit/ptx/module.hpp"

namespace tmakit::ptx {
namespace {

int lines_in(std::string_view s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

ModuleText parse_module(std::string_view text, const std::string& file, Diagnostics& diags) {
  ModuleText out;
  size_t done = 0;  // the pieces cover [0, done)
  int line = 1;
  auto add = [&](Piece::Kind kind, size_t begin, size_t end) -> Piece& {
    Piece p;
    p.kind = kind;
    p.text = std::string(text.substr(begin, end - begin));
    p.line = line;
    line += lines_in(p.text);
    done = end;
    out.pieces.push_back(std::move(p));
    return out.pieces.back();
  };
  out.module = detail::read_module(
      text, file, diags, [](const Statement&, const Function&, const Module&) {},
      [&](Piece::Kind kind, size_t begin, size_t end, const Statement* s) {
        // Spans arrive in order and never overlap; what lies between them is trivia.
        if (begin < done || end < begin) return;  // defensive: a span the reader reported twice
        if (begin > done) add(Piece::Kind::trivia, done, begin);
        Piece& p = add(kind, begin, end);
        if (s) p.statement = *s;
      });
  if (done < text.size()) add(Piece::Kind::trivia, done, text.size());
  return out;
}

std::string print_module(const ModuleText& m, bool canonical) {
  std::string out;
  for (const Piece& p : m.pieces) {
    if (canonical && p.kind == Piece::Kind::instruction && linted_mnemonic(p.statement.mnemonic())) {
      Diagnostics ignored;  // an instruction that does not parse is written as it was
      if (auto inst = parse_instruction(p.statement.text, ignored)) {
        out += print(*inst);
        continue;
      }
    }
    out += p.text;
  }
  return out;
}

}  // namespace tmakit::ptx
