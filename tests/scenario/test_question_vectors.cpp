// The §14 question vectors (tests/vectors/questions/*.json, written on an H100 by
// `engine_vectors record questions`, docs/hardware-notes.md "§14 answers"): one
// scenario each, with the bytes the hardware produced or the fault it raised.
// The model must reproduce the bytes, or, where the hardware shows behaviour
// that a program may not rely on (undefined by PTX, timing-dependent), refuse
// the scenario with the rule listed below; the notes say what the H100 did.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Vectors the model answers with an error instead of bytes (the rule it must name).
// Everything not listed must agree byte for byte.
const std::map<std::string, std::string> kModelRefuses = {
    // Q16: tx-count past ±(2^20 - 1) is undefined (§8.1).
    {"q16_tx_1048576", "mbarrier.tx-range"},
    {"q16_tx_1048577", "mbarrier.tx-range"},
    // Q17: (op, type) pairs outside §6.1's table.
    {"q17_tensor_add_int64", "tensor.reduce-type"},
    {"q17_tensor_add_float64", "tensor.reduce-type"},
    {"q17_tensor_min_float32", "tensor.reduce-type"},
    {"q17_tensor_add_uint16", "model.reduce-type"},
    // Q19: a filter base outside the bounding box (§13 item 6); interleaved im2col (not modelled).
    {"q19_base_past_upper", "tensor.im2col-base-outside-box"},
    {"q19_base_below_lower", "tensor.im2col-base-outside-box"},
    {"q19_stride_example", "tensor.im2col-base-outside-box"},
    {"q19_interleave16", "model.map-unsupported"},
    // Q21: the model checks an im2col prefetch's operands like a load's.
    {"q21_prefetch_im2col_outside_box", "tensor.im2col-base-outside-box"},
    // Q22: a copy past the CTA's shared memory.
    {"q22_past_shared", "model.shared-range"},
};

struct Vector {
  fs::path file;
  json j;
};
std::vector<Vector> load_all() {
  std::vector<Vector> out;
  fs::path dir = fs::path(TMAKIT_SOURCE_DIR) / "tests" / "vectors" / "questions";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") {
      std::ifstream in(e.path());
      out.push_back({e.path(), json::parse(in)});
    }
  std::sort(out.begin(), out.end(), [](const Vector& a, const Vector& b) { return a.file < b.file; });
  return out;
}

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

TEST(QuestionVectors, EveryH100QuestionWithAScenarioIsRecorded) {
  std::map<std::string, int> n;
  for (const auto& v : load_all()) {
    ASSERT_EQ(v.j.at("format"), "tmakit-vector/1") << v.file;
    ++n[v.j.at("question").get<std::string>()];
    EXPECT_TRUE(v.j.contains("expected") != v.j.contains("expected_fault")) << v.file.filename();
  }
  // The questions docs/hardware-notes.md answers with a question vector.
  for (const char* q : {"Q1", "Q4", "Q6", "Q7", "Q8", "Q11", "Q12", "Q13", "Q16", "Q17", "Q18", "Q19", "Q20", "Q21",
                        "Q22", "Q24", "Q25", "Q26"})
    EXPECT_GE(n[q], 1) << q;
}

TEST(QuestionVectors, ModelReproducesTheHardwareOrNamesTheRule) {
  int agreed = 0, refused = 0;
  for (const auto& v : load_all()) {
    const std::string id = v.file.stem().string();
    std::optional<scenario::RunResult> r;
    std::string rule;
    try {
      r = scenario::run(scenario::from_json(v.j.at("scenario"), v.file.parent_path()));
    } catch (const DiagnosticError& e) {
      rule = e.diagnostic().rule;
    }
    if (auto it = kModelRefuses.find(id); it != kModelRefuses.end()) {
      EXPECT_EQ(rule, it->second) << id << ": the model should refuse it with " << it->second;
      refused += rule == it->second;
      continue;
    }
    if (v.j.contains("expected_fault")) {
      ADD_FAILURE() << id << ": the H100 answered " << v.j["expected_fault"] << " but no model rule is listed";
      continue;
    }
    if (!r) {
      ADD_FAILURE() << id << ": the model refused (" << rule << ") a case the hardware ran";
      continue;
    }
    bool same = true;
    for (const auto& [name, bytes] : r->outputs) {
      const auto want = from_hex(v.j.at("expected").at(name).get<std::string>());
      ASSERT_EQ(want.size(), bytes.size()) << id << " output " << name;
      auto d = std::mismatch(want.begin(), want.end(), bytes.begin());
      if (d.first != want.end()) {
        ADD_FAILURE() << id << " output " << name << ": first difference at byte " << (d.first - want.begin())
                      << ": hardware 0x" << std::hex << int(*d.first) << ", model 0x" << int(*d.second) << std::dec;
        same = false;
      }
    }
    agreed += same;
  }
  std::printf("question vectors: %d agree byte for byte, %d refused with the listed rule\n", agreed, refused);
}

}  // namespace
