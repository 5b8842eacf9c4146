// Tensor maps a kernel builds itself (docs/check-replay.md, "Maps built on the device"):
// the replace fields as the PTX ISA numbers them, and a Triton-style build (a zeroed copy in
// shared memory, a replace per field, tensormap.cp_fenceproxy, the acquire fence, a load
// through the installed map) replayed as the program's own map.
#include <gtest/gtest.h>

#include "../../src/check/device_maps.hpp"
#include "trace_builder.hpp"

namespace {

using namespace check_test;
namespace tm = tmakit::tensor_map;
using tmakit::check::detail::apply_replace;
using tmakit::check::detail::blank_device_map;
using tmakit::check::detail::replaced_field;

// The PTX ISA's .elemtype numbers (tma-semantics.md §1.2: they differ from the driver's at 8-10).
TEST(CheckDeviceMaps, ElemtypeFollowsThePtxNumbering) {
  const std::pair<uint64_t, tm::DataType> table[] = {
      {0, tm::DataType::uint8},       {1, tm::DataType::uint16},   {2, tm::DataType::uint32},
      {3, tm::DataType::int32},       {4, tm::DataType::uint64},   {5, tm::DataType::int64},
      {6, tm::DataType::float16},     {7, tm::DataType::float32},  {8, tm::DataType::float32_ftz},
      {9, tm::DataType::float64},     {10, tm::DataType::bfloat16}, {11, tm::DataType::tfloat32},
      {12, tm::DataType::tfloat32_ftz}};
  for (auto [ptx, type] : table) {
    tm::TensorMap m = blank_device_map();
    EXPECT_FALSE(apply_replace(m, ".elemtype", 0, ptx));
    EXPECT_EQ(m.data_type, type) << "PTX .elemtype " << ptx;
  }
  tm::TensorMap m = blank_device_map();
  EXPECT_TRUE(apply_replace(m, ".elemtype", 0, 16));
  EXPECT_TRUE(apply_replace(m, ".swizzle_mode", 0, 4));  // 96B: sm_103a, not modelled
  EXPECT_TRUE(apply_replace(m, ".fill_mode", 0, 2));
  EXPECT_TRUE(apply_replace(m, ".box_dim", 5, 64));
  EXPECT_TRUE(apply_replace(m, ".global_stride", 4, 64));
}

TEST(CheckDeviceMaps, FieldsAndOrdinals) {
  tm::TensorMap m = blank_device_map();
  EXPECT_FALSE(apply_replace(m, ".rank", 0, 2));  // stored as rank - 1
  EXPECT_EQ(m.rank, 3);
  EXPECT_FALSE(apply_replace(m, ".global_dim", 2, 7));
  EXPECT_FALSE(apply_replace(m, ".box_dim", 1, 16));
  EXPECT_FALSE(apply_replace(m, ".global_stride", 1, 4096));  // the stride of dimension 2, bytes
  EXPECT_FALSE(apply_replace(m, ".element_stride", 0, 2));
  EXPECT_FALSE(apply_replace(m, ".interleave_layout", 0, 2));
  EXPECT_FALSE(apply_replace(m, ".swizzle_mode", 0, 1));
  EXPECT_FALSE(apply_replace(m, ".fill_mode", 0, 1));
  EXPECT_FALSE(apply_replace(m, ".global_address", 0, 0x7f0000001000));
  EXPECT_EQ(m.dims[2], 7u);
  EXPECT_EQ(m.box[1], 16u);
  EXPECT_EQ(m.strides[1], 4096u);
  EXPECT_EQ(m.element_strides[0], 2u);
  EXPECT_EQ(m.interleave, tm::Interleave::b32);
  EXPECT_EQ(m.swizzle, tm::Swizzle::b32);
  EXPECT_EQ(m.oob_fill, tm::OobFill::nan_request_zero_fma);
  EXPECT_EQ(m.global_address, 0x7f0000001000u);
  // The 128-byte swizzle's atomicity (sm_100a): 1 = 32B atoms, 0 back to plain 128B.
  EXPECT_FALSE(apply_replace(m, ".swizzle_mode", 0, 3));
  EXPECT_FALSE(apply_replace(m, ".swizzle_atomicity", 0, 1));
  EXPECT_EQ(m.swizzle, tm::Swizzle::b128_atom_32b);
  EXPECT_FALSE(apply_replace(m, ".swizzle_atomicity", 0, 0));
  EXPECT_EQ(m.swizzle, tm::Swizzle::b128);
  EXPECT_EQ(replaced_field("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], 0, %r2;"), ".box_dim");
  EXPECT_EQ(replaced_field("tensormap.replace.tile.global_dim.global.b1024.b32 [%rd1], 1, %r6;"), ".global_dim");
  EXPECT_EQ(replaced_field("tensormap.cp_fenceproxy.global.shared::cta [%rd3], [%rd1], 128;"), "");
}

// tests/check/kernels/device_map.ptx, by its .loc lines.
constexpr int kZero = 10, kAddress = 11, kRank = 12, kBox0 = 13, kBox1 = 14, kDim0 = 15, kDim1 = 16, kStride = 17,
              kEstride0 = 18, kEstride1 = 19, kType = 20, kInterleave = 21, kSwizzle = 22, kFill = 23;
constexpr int kInstall = 30, kAcquire = 31, kInit = 40, kArmTx = 41, kLoad = 42, kWait = 43;
constexpr int64_t kMapCopy = 16384;               // the shared copy the replaces edit
constexpr int64_t kScratch = 0x7f1600000100;      // where cp_fenceproxy installs it
constexpr int64_t kTensor = 0x7f1200000000;       // the f16 tensor: 256 rows of 256

std::array<uint8_t, 128> hardware_bytes(uint8_t seed) {  // stands for bytes the hardware wrote
  std::array<uint8_t, 128> b{};
  for (int i = 0; i < 128; ++i) b[i] = static_cast<uint8_t>(i * 13 + seed) | 1;
  return b;
}

struct Build {
  int64_t row_bytes = 512;  // the .global_stride the kernel writes
  bool acquire = true;
  bool zeroed = true;       // the copy was zero-filled before the first replace
};

Trace device_built(const Build& b) {
  Trace t("device_map.ptx");
  t.meta()["kernel"] = "device_map";
  t.rec(kZero, 0, 0, {{"addr", {kMapCopy}}, {"size", {4}}});
  const std::pair<int, std::vector<int64_t>> replaces[] = {
      {kAddress, {kTensor}}, {kRank, {1}},      {kBox0, {0, 64}},       {kBox1, {1, 64}},     {kDim0, {0, 256}},
      {kDim1, {1, 256}},     {kStride, {0, b.row_bytes}}, {kEstride0, {0, 1}}, {kEstride1, {1, 1}}, {kType, {6}},
      {kInterleave, {0}},    {kSwizzle, {3}},   {kFill, {0}}};
  uint8_t seed = 1;
  for (const auto& [line, v] : replaces) {
    // The companions hold the map before this replace: zeros first, then what the last wrote.
    t.map_bytes(line, 0, 0, seed == 1 && b.zeroed ? std::array<uint8_t, 128>{} : hardware_bytes(seed));
    if (v.size() == 1) t.rec(line, 0, 0, {{"addr", {kMapCopy}}, {"new_val", {v[0]}}});
    else t.rec(line, 0, 0, {{"addr", {kMapCopy}}, {"ord", {v[0]}}, {"new_val", {v[1]}}});
    ++seed;
  }
  const auto installed = hardware_bytes(200);
  for (int lane = 0; lane < 32; ++lane) {  // .sync.aligned: every lane of the warp
    t.map_bytes(kInstall, 0, lane, installed);
    t.rec(kInstall, 0, lane, {{"dst", {kScratch}}, {"src", {kMapCopy}}, {"size", {128}}});
  }
  if (b.acquire) t.rec(kAcquire, 0, 0, {{"addr", {kScratch}}, {"size", {128}}});
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kArmTx, 0, 0, {{"addr", {kBar}}, {"txCount", {64 * 64 * 2}}});
  t.map_bytes(kLoad, 0, 0, installed);
  t.rec(kLoad, 0, 0, {{"dstMem", {kBuf}}, {"tensorMap", {kScratch}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}});
  t.rec(kWait, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  return t;
}

TEST(CheckDeviceMaps, TritonStyleBuildReplaysAsTheKernelsOwnMap) {
  auto r = device_built({}).replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_EQ(r.clusters_replayed, 1) << tmakit::check::to_text(r);
  for (const auto& n : r.notes) EXPECT_EQ(n.find("not replayed"), std::string::npos) << n;
  // The load and its barrier were stepped: the map had the right box (8 KiB armed, 8 KiB delivered).
  EXPECT_GE(r.replayed, 3u);
}

TEST(CheckDeviceMaps, ABadFieldIsReportedByTheRuleTheMapBreaks) {
  auto r = device_built({.row_bytes = 520}).replay();  // a row stride not a multiple of 16
  ASSERT_EQ(rules(r), std::vector<std::string>{"map.global-stride-align"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoad);
  EXPECT_NE(r.findings[0].message.find("built on the device"), std::string::npos) << r.findings[0].message;
}

TEST(CheckDeviceMaps, UsedWithoutTheAcquireFence) {
  auto r = device_built({.acquire = false}).replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.tensormap-fence-missing"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoad);
}

TEST(CheckDeviceMaps, AnEditOfBytesNoMapExplainsStaysUnknown) {
  // Not zeroed and not a program's map: the replay cannot know the fields it did not see.
  auto r = device_built({.zeroed = false}).replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.map-unknown"}) << tmakit::check::to_text(r);
}

}  // namespace
