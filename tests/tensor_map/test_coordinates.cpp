// Instruction-time coordinate checks: §2.1 item 6 / H9, H14, PTX-R packed rules, §4.3.
#include <gtest/gtest.h>

#include <vector>

#include "maps.hpp"

namespace tmakit::tensor_map {
namespace {

using namespace testing;

bool fires(const Diagnostics& d, std::string_view rule) {
  for (const auto& x : d)
    if (x.rule == rule) return x.severity == Severity::error;
  return false;
}

Diagnostics check(const TensorMap& m, std::vector<int32_t> c, Direction dir = Direction::load,
                  spec::Target t = kSm90a) {
  return check_coordinates(m, c, dir, t);
}

TEST(Coordinates, CountMustEqualRank) {
  TensorMap m = tiled_base();
  EXPECT_TRUE(check(m, {0, 0}).empty());
  EXPECT_TRUE(fires(check(m, {0}), "coord.count"));
  EXPECT_TRUE(fires(check(m, {0, 0, 0}), "coord.count"));
}

// §2.1 item 6, H9: byte offsets 2, 8, -6, -8, 24, 500 faulted; 0, 16, -16, 2000 worked.
TEST(Coordinates, InnerAlignmentH9Examples) {
  const std::pair<DataType, int> sizes[] = {{DataType::uint8, 1}, {DataType::uint16, 2}, {DataType::float32, 4}};
  for (auto [type, size] : sizes) {
    TensorMap m = tiled_base();
    m.data_type = type;
    for (int bytes : {2, 8, -6, -8, 24, 500, 0, 16, -16, 2000}) {
      if (bytes % size) continue;  // not a whole element of this type
      bool ok = bytes % 16 == 0;
      for (Direction dir : {Direction::load, Direction::store}) {
        int32_t c0 = bytes / size;
        if (dir == Direction::store && c0 < 0) continue;  // H14 covers those
        Diagnostics d = check(m, {c0, 0}, dir);
        EXPECT_EQ(fires(d, "coord.inner-align"), !ok) << name(type) << " c0=" << c0;
        if (!ok) {
          EXPECT_EQ(d.front().where, "coords[0]");
          EXPECT_NE(d.front().message.find(std::to_string(bytes) + " bytes"), std::string::npos) << d.front().message;
        }
      }
    }
  }
}

TEST(Coordinates, InnerAlignmentBoundary) {
  TensorMap m = tiled_base();  // float32: 4 elements per 16 bytes
  EXPECT_FALSE(fires(check(m, {4, 0}), "coord.inner-align"));
  EXPECT_TRUE(fires(check(m, {5, 0}), "coord.inner-align"));
  EXPECT_TRUE(fires(check(m, {3, 0}), "coord.inner-align"));
  // Only the innermost coordinate matters; outer ones may be anything.
  EXPECT_TRUE(check(m, {0, -7}).empty());
  // The H100 faults prefetches and im2col channel starts alike (questions/q21_prefetch_misaligned,
  // q19_channel_misaligned).
  EXPECT_TRUE(fires(check(m, {5, 0}, Direction::prefetch), "coord.inner-align"));
  EXPECT_FALSE(fires(check(m, {8, 0}, Direction::prefetch), "coord.inner-align"));
  EXPECT_TRUE(fires(check(im2col_base(), {3, 0, 0, 0}), "coord.inner-align"));
  EXPECT_FALSE(fires(check(im2col_base(), {16, 0, 0, 0}), "coord.inner-align"));
}

// §14 Q13 on the H100: extents up to 2^31 work, 2^31 + 16 ... 2^32 - 1 raise an illegal
// instruction at the first load (the driver encodes them, H17).
TEST(Coordinates, ExtentAbove2p31Faults) {
  TensorMap m = tiled_base();
  m.dims[1] = uint64_t{1} << 31;
  EXPECT_FALSE(fires(check(m, {0, 0}), "coord.extent-2p31"));
  m.dims[1] += 16;
  Diagnostics d = check(m, {0, 0});
  ASSERT_TRUE(fires(d, "coord.extent-2p31"));
  for (const auto& x : d)
    if (x.rule == "coord.extent-2p31") EXPECT_EQ(x.where, "dims[1]");
  // tests/vectors/questions/q13x_*: stores, reductions and prefetches fault too.
  for (Direction dir : {Direction::store, Direction::reduce, Direction::prefetch})
    EXPECT_TRUE(fires(check(m, {0, 0}, dir), "coord.extent-2p31"));
}

TEST(Coordinates, StoresAndReductionsNeedNonNegativeStartH14) {
  TensorMap m = tiled_base();
  for (Direction dir : {Direction::store, Direction::reduce}) {
    EXPECT_FALSE(fires(check(m, {0, 0}, dir), "coord.store-negative"));
    Diagnostics d = check(m, {0, -1}, dir);
    ASSERT_TRUE(fires(d, "coord.store-negative"));
    EXPECT_EQ(d.front().where, "coords[1]");
    EXPECT_TRUE(fires(check(m, {-4, 0}, dir), "coord.store-negative"));
  }
  // Loads may start anywhere (§2.2).
  EXPECT_TRUE(check(m, {-4, -100}, Direction::load).empty());
}

TEST(Coordinates, PackedInnerCoordinateMultipleOf128) {
  TensorMap m = packed_base();
  EXPECT_FALSE(fires(check(m, {128, 0}, Direction::load, kSm100a), "coord.packed-inner-align"));
  EXPECT_TRUE(fires(check(m, {64, 0}, Direction::load, kSm100a), "coord.packed-inner-align"));
  EXPECT_TRUE(fires(check(m, {129, 0}, Direction::load, kSm100a), "coord.packed-inner-align"));
}

TEST(Coordinates, PackedDirections) {
  TensorMap m = packed_base();  // 16u6_align16b, 128b
  EXPECT_TRUE(fires(check(m, {0, 0}, Direction::reduce, kSm100a), "coord.packed-direction"));
  EXPECT_FALSE(fires(check(m, {0, 0}, Direction::store, kSm100a), "coord.packed-direction"));
  m.swizzle = Swizzle::b128_atom_64b;  // §1.3: stores only
  EXPECT_TRUE(fires(check(m, {0, 0}, Direction::load, kSm100a), "coord.packed-direction"));
  EXPECT_FALSE(fires(check(m, {0, 0}, Direction::store, kSm100a), "coord.packed-direction"));
  m = packed_base();
  m.data_type = DataType::u4_align16b;  // PTX-R: .b4x16_p64 is load only
  EXPECT_TRUE(fires(check(m, {0, 0}, Direction::store, kSm100a), "coord.packed-direction"));
  EXPECT_FALSE(fires(check(m, {0, 0}, Direction::load, kSm100a), "coord.packed-direction"));
}

TEST(Coordinates, Im2colStoreBoxInsideTensor) {
  TensorMap m = im2col_base();  // corners (-1, -1) / (-1, -1)
  Diagnostics d = check(m, {0, 0, 0, 0}, Direction::store);
  EXPECT_TRUE(fires(d, "coord.im2col-store-box"));  // lower < 0
  m.pixel_box_lower = {0, 0};
  m.pixel_box_upper = {0, 0};
  EXPECT_FALSE(fires(check(m, {0, 0, 0, 0}, Direction::store), "coord.im2col-store-box"));
  m.pixel_box_upper = {0, 1};
  d = check(m, {0, 0, 0, 0}, Direction::reduce);
  ASSERT_TRUE(fires(d, "coord.im2col-store-box"));
  EXPECT_EQ(d.front().where, "pixel_box_upper[1]");
  EXPECT_FALSE(fires(check(m, {0, 0, 0, 0}, Direction::load), "coord.im2col-store-box"));
}

TEST(Coordinates, ReportsEveryProblem) {
  TensorMap m = tiled_base();
  Diagnostics d = check(m, {-3, -1}, Direction::store);
  int negative = 0, align = 0;
  for (const auto& x : d) negative += x.rule == "coord.store-negative", align += x.rule == "coord.inner-align";
  EXPECT_EQ(negative, 2);
  EXPECT_EQ(align, 1);
}

}  // namespace
}  // namespace tmakit::tensor_map
