// Recorded fault vectors (tests/vectors/faults/*.json, written by
// tools/gpu/engine_vectors on an H100): scenarios the hardware answered with a
// fault. The model must refuse every one with an error that names the rule the
// hazard breaks, and must accept the same scenario once that one thing is put
// right (so each vector breaks exactly its rule).
//
// hazard (tma-semantics.md §0) | fault on sm_90         | the model's rule
// H9  c[0] × elemBytes % 16    | illegal-instruction    | coord.inner-align
// H14 negative store/reduce    | illegal-instruction    | coord.store-negative
// H15 smem 16..112 mod 128     | misaligned-address     | tensor.smem-align
// H7  INT64 .and/.or/.xor      | illegal-instruction    | tensor.reduce-int64-bitwise
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "vector_files.hpp"
#include "tmakit/scenario/scenario.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Expectation {
  const char* fault;
  const char* rule;
};
const std::map<std::string, Expectation> kByHazard = {
    {"H9", {"illegal-instruction", "coord.inner-align"}},
    {"H14", {"illegal-instruction", "coord.store-negative"}},
    {"H15", {"misaligned-address", "tensor.smem-align"}},
    {"H7", {"illegal-instruction", "tensor.reduce-int64-bitwise"}},
};

std::vector<VectorFile> load_all() { return load_vector_folder("faults"); }

// The model's verdict: the rule of the error it raised, or "" when it ran the scenario.
std::string model_rule(const json& sc, const fs::path& dir) {
  try {
    scenario::run(scenario::from_json(sc, dir));
  } catch (const DiagnosticError& e) {
    return e.diagnostic().rule;
  }
  return "";
}

// The same scenario with the one hazard put right.
json repaired(const std::string& hazard, json sc) {
  auto& sym = sc["symbols"];
  if (hazard == "H9") {  // innermost coordinate down to a 16-byte multiple
    auto t = tensor_map::parse_data_type(sc["tensor_maps"]["map0"]["data_type"].get<std::string>());
    const int q = 16 / tensor_map::element_bytes(*t);
    sym["c0"] = sym["c0"].get<int>() / q * q;
  } else if (hazard == "H14") {  // negative starts up to 0
    for (auto& [name, v] : sym.items())
      if (name[0] == 'c' && v.is_number_integer() && v.get<int>() < 0) v = 0;
  } else if (hazard == "H15") {  // shared operand down to its 128-byte boundary
    const int off = std::stoi(sym["smem"].get<std::string>().substr(7));
    sym["smem"] = "shared:" + std::to_string(off / 128 * 128);
  } else if (hazard == "H7") {  // the same bitwise op on UINT64 works (H7)
    sc["tensor_maps"]["map0"]["data_type"] = "uint64";
  }
  return sc;
}

TEST(FaultVectors, EnoughOfEachHazard) {
  std::map<std::string, int> n;
  for (const auto& v : load_all()) ++n[v.j.value("hazard", "")];
  for (const auto& [hazard, e] : kByHazard) EXPECT_GE(n[hazard], 5) << hazard << " has too few recorded fault vectors";
}

TEST(FaultVectors, HardwareFaultMatchesTheSettledFact) {
  for (const auto& v : load_all()) {
    ASSERT_EQ(v.j.at("format"), "tmakit-vector/1") << v.file;
    const std::string hazard = v.j.at("hazard");
    ASSERT_TRUE(kByHazard.count(hazard)) << v.file << ": unknown hazard " << hazard;
    EXPECT_EQ(v.j.at("expected_fault").get<std::string>(), kByHazard.at(hazard).fault) << v.file.filename();
  }
}

TEST(FaultVectors, ModelRefusesEachWithTheHazardsRule) {
  std::map<std::string, std::map<std::string, int>> table;  // hardware fault -> model rule -> count
  for (const auto& v : load_all()) {
    const std::string hazard = v.j.at("hazard");
    const std::string rule = model_rule(v.j.at("scenario"), v.file.parent_path());
    EXPECT_EQ(rule, kByHazard.at(hazard).rule) << v.file.filename() << " (" << hazard << ")";
    ++table[v.j.at("expected_fault").get<std::string>()][rule.empty() ? "(accepted)" : rule];
  }
  for (const auto& [fault, rules] : table)
    for (const auto& [rule, n] : rules) std::printf("%-20s -> %-28s x%d\n", fault.c_str(), rule.c_str(), n);
}

TEST(FaultVectors, ModelAcceptsEachOnceTheHazardIsRepaired) {
  for (const auto& v : load_all()) {
    const std::string hazard = v.j.at("hazard");
    EXPECT_EQ(model_rule(repaired(hazard, v.j.at("scenario")), v.file.parent_path()), "")
        << v.file.filename() << ": still refused after repairing " << hazard;
  }
}

}  // namespace
