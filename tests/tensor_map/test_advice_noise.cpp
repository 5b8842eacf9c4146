// Issue 24, item 2: a note belongs to a map only where it could matter to that map. The
// shared-memory alignment note concerns where a load puts the box; a map the driver refuses is
// never loaded, so it must not carry the note (it sat beside every refusal under tmakit watch).
#include <gtest/gtest.h>

#include <algorithm>

#include "maps.hpp"

namespace tmakit::tensor_map::testing {
namespace {

bool has(const Diagnostics& d, const char* rule) {
  return std::any_of(d.begin(), d.end(), [&](const Diagnostic& x) { return x.rule == rule; });
}

TEST(AdviceNoise, AMapThatCanBeUsedIsToldItsSharedMemoryAlignment) {
  const auto d = validate(tiled_base(), kSm90a);
  ASSERT_FALSE(d.has_errors());
  EXPECT_TRUE(has(d, "map.smem-alignment"));
}

TEST(AdviceNoise, ARefusedMapCarriesOnlyWhatConcernsItsRefusal) {
  TensorMap m = tiled_rank3_u8();
  m.box[0] = 8;  // 8 bytes: map.box-inner-bytes, the watch log's most common refusal
  const auto d = validate(m, kSm90a);
  ASSERT_TRUE(has(d, "map.box-inner-bytes"));
  EXPECT_FALSE(has(d, "map.smem-alignment"));
  TensorMap far = tiled_base();
  far.global_address = 8;  // misaligned: also refused
  EXPECT_FALSE(has(validate(far, kSm90a), "map.smem-alignment"));
}

}  // namespace
}  // namespace tmakit::tensor_map::testing
