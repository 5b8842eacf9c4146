// One random instruction text of a form of the table: qualifiers drawn from its slots, operands
// built from its operand list. Used by the printer's round trip (test_parser.cpp) and the
// decoder's slot test (test_step.cpp).
#pragma once
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>

#include "tmakit/spec/forms.hpp"

namespace tmakit::ptx::test {

// nullopt when the drawn qualifiers are a combination the table refuses (draw again).
inline std::optional<std::string> random_instruction(const spec::Form& f, std::mt19937& rng) {
  std::string text(f.opcode);
  for (const auto& s : f.slots) {
    if (!s.required && rng() % 2) continue;
    text += s.choices[rng() % s.choices.size()].text;
  }
  Diagnostics d;
  auto sel = spec::match(text, d);
  if (!sel) {
    ADD_FAILURE() << "the table does not match its own qualifiers: " << text;
    return std::nullopt;
  }
  if (spec::check_combination(*sel).has_errors()) return std::nullopt;
  std::string ops;
  int n = 0;
  for (const auto* o : spec::operands_of(*sel)) {
    if (o->optional && rng() % 2) break;
    std::string s;
    int len = spec::vector_length(*sel, *o);
    auto vec = [&] {
      std::string v = "{";
      for (int k = 0; k < len; ++k) v += (k ? ", " : "") + std::string("r") + std::to_string(k);
      return v + "}";
    };
    switch (o->kind) {
      case spec::OperandKind::address: s = "[a" + std::to_string(n) + "+16]"; break;
      case spec::OperandKind::tensor: s = "[map, " + vec() + "]"; break;
      case spec::OperandKind::vector: s = vec(); break;
      case spec::OperandKind::sink: s = "_"; break;
      case spec::OperandKind::state: s = o->discard && rng() % 2 ? "_" : "st"; break;
      case spec::OperandKind::predicate: s = "p"; break;
      case spec::OperandKind::value: s = o->immediate || rng() % 2 ? "-32" : "v" + std::to_string(n); break;
    }
    ops += (n++ ? ", " : " ") + s;
  }
  return text + ops + ";";
}

}  // namespace tmakit::ptx::test
