#include <gtest/gtest.h>

#include "tmakit/spec/target.hpp"

using namespace tmakit::spec;

TEST(Target, ParsesAndPrintsEveryKnownTarget) {
  for (const auto& t : known_targets()) {
    auto p = parse_target(t.str());
    ASSERT_TRUE(p) << t.str();
    EXPECT_EQ(*p, t);
  }
  EXPECT_FALSE(parse_target("sm_90f"));
  EXPECT_FALSE(parse_target("sm_89"));
  EXPECT_FALSE(parse_target("compute_90"));
  EXPECT_FALSE(parse_target("sm_"));
  EXPECT_FALSE(parse_target("sm_90aa"));
}

TEST(Target, Families) {
  EXPECT_EQ(parse_target("sm_103a")->family(), 10);
  EXPECT_EQ(parse_target("sm_101a")->family(), 11);  // renamed sm_110a in PTX 9.0
  TargetAlt fam{TargetAlt::family, 100, {8, 8}};
  EXPECT_TRUE(fam.holds(*parse_target("sm_103f"), {8, 8}));
  EXPECT_FALSE(fam.holds(*parse_target("sm_103f"), {8, 7}));
  EXPECT_FALSE(fam.holds(*parse_target("sm_103"), {9, 0}));  // a plain target has no family features
  EXPECT_FALSE(fam.holds(*parse_target("sm_110f"), {9, 0}));
}

TEST(PtxVersion, Parses) {
  EXPECT_EQ(parse_ptx_version("8.7"), (PtxVersion{8, 7}));
  EXPECT_FALSE(parse_ptx_version("8"));
  EXPECT_FALSE(parse_ptx_version("8.x"));
  EXPECT_FALSE(parse_ptx_version(".7"));
  EXPECT_FALSE(parse_ptx_version("8.10"));
  EXPECT_LT((PtxVersion{8, 6}), (PtxVersion{9, 0}));
}
