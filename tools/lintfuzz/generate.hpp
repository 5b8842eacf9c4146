// The fuzz generator: instruction lines built from the table of forms, then mutated
// the ways people and compilers get them wrong.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tmakit/spec/target.hpp"

namespace tmakit::lintfuzz {

struct Case {
  std::string version;   // the module's .version
  std::string line;      // one instruction
  std::string mutation;  // "valid", or the mutations applied ("drop-qualifier+operand-type")
};

// `count` lines for `target`, each with a PTX version the target exists in.
std::vector<Case> generate(const spec::Target& target, int count, uint32_t seed);

}  // namespace tmakit::lintfuzz
