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
#include <set>

#include "vector_files.hpp"
#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Vectors the model answers with an error instead of bytes (the rule it must name):
// the hardware faulted, or ran something PTX leaves undefined. Everything not listed
// in a table here must agree byte for byte.
const std::map<std::string, std::string> kModelRefuses = {
    // Q1, Q4: over-armed barriers hang on the H100 (so the count is exactly the data bytes).
    {"q01_narrow_128b_f16_armed_528", "model.deadlock"},
    {"q01_narrow_128b_f16_armed_1024", "model.deadlock"},
    {"q04_im2col_into_n_past_armed_plus16", "model.deadlock"},
    // Q13: extents above 2^31 raise an illegal instruction at the load (2^31 itself works).
    {"q13_rows_past_int32max", "coord.extent-2p31"},
    {"q13_strided_past_int32max", "coord.extent-2p31"},
    {"q13_int32min", "coord.extent-2p31"},
    {"q13_high_rows", "coord.extent-2p31"},
    {"q13_rows_cross_2p31", "coord.extent-2p31"},
    {"q13_dim1_2147483664", "coord.extent-2p31"},
    {"q13_dim1_3221225472", "coord.extent-2p31"},
    {"q13_dim1_4294967040", "coord.extent-2p31"},
    {"q13_dim1_4294967294", "coord.extent-2p31"},
    {"q13_dim1_4294967295", "coord.extent-2p31"},
    // ... and at a store, a reduction and a prefetch of such a map.
    {"q13x_store_dim1_2p31_16", "coord.extent-2p31"},
    {"q13x_reduce_dim1_2p31_16", "coord.extent-2p31"},
    {"q13x_prefetch_dim1_2p31_16", "coord.extent-2p31"},
    // Q16: a tx-count past 2^20 - 1 (§8.1): the H100 kernel dies (launch failure).
    {"q16_tx_1048576", "mbarrier.tx-range"},
    {"q16_tx_1048577", "mbarrier.tx-range"},
    // Q17: (op, map type) pairs outside §6.1; float64 .add runs on the H100 (an f64 add),
    // the others raise an illegal instruction.
    {"q17_tensor_add_int64", "tensor.reduce-type"},
    {"q17_tensor_add_float64", "tensor.reduce-type"},
    {"q17_tensor_add_float64_nan_pairs", "tensor.reduce-type"},
    {"q17_tensor_min_float32", "tensor.reduce-type"},
    {"q17_tensor_add_uint16", "model.reduce-type"},
    // Q19: a filter base outside the bounding box, a channel start off its 16-byte granule.
    {"q19_base_past_upper", "tensor.im2col-base-outside-box"},
    {"q19_base_below_lower", "tensor.im2col-base-outside-box"},
    {"q19_stride_example", "tensor.im2col-base-outside-box"},
    {"q19_channel_misaligned", "coord.inner-align"},
    // Q20: H14 and §4.3's box rule hold for .im2col_no_offs stores.
    {"q20_store_negative_n", "coord.store-negative"},
    {"q20_store_box_outside", "coord.im2col-store-box"},
    // H9 holds for .im2col_no_offs stores: a channel start 8 bytes off the granule faults.
    {"q20x_store_channel_8", "coord.inner-align"},
    // Q21: prefetches fault like loads on a misaligned c[0] or a base outside the box.
    {"q21_prefetch_misaligned", "coord.inner-align"},
    {"q21_prefetch_im2col_outside_box", "tensor.im2col-base-outside-box"},
    // Q22: a copy past the CTA's shared memory (illegal address).
    {"q22_past_shared", "model.shared-range"},
    // Q26: an interleaved load armed with more than its slices' bytes hangs; one whose slices
    // run past the allocation is undefined (the first recording faulted with an illegal
    // address, this one read whatever lay there).
    {"q26_interleave16_armed_384", "model.deadlock"},
    {"q26_interleave32_past_allocation", "model.global-fault"},
};

// Q25 scenarios whose flags depend on timing: the GPU engine's step handshakes outlast
// even a 192 KiB load, so test_wait saw it complete in every mode (tests/gpu/
// test_group_membership.cu settles Q25 without them). The model must run them.
const std::set<std::string> kTiming = {"q25_wait_group_read_after_load", "q25_wait_group_after_load", "q25_32k_no_wait",
                                       "q25_192k_no_wait", "q25_192k_wait_group_read", "q25_192k_wait_group"};


std::vector<VectorFile> load_all() { return load_vector_folder("questions"); }

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
    if (kTiming.count(id)) {
      EXPECT_TRUE(r.has_value()) << id << ": the model refused it (" << rule << ")";
      EXPECT_TRUE(v.j.contains("expected")) << id;
      continue;
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
