// Each site's first warp-wide instruction (elect.sync, shfl.sync, vote.sync, match, redux.sync,
// bar.warp.sync) after it in its function and before the function's next site, in the site
// table (Site::warp_wide_line, sites.json "warp_wide"): what a hang names where a lane stopped
// recording while its warp waits elsewhere. Read here from a module written for it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;

namespace {

// Lines 10 to 16 of k; then a function j of its own.
const std::string kModule = instrument_test::small_kernel(
    "\tmbarrier.init.shared::cta.b64 [bar], 1;\n\telect.sync %r1|%p1, -1;\n\tmbarrier.arrive.shared::cta.b64 _, [bar];\n"
    "\tadd.s32 %r2, %r2, 1;\n\tshfl.sync.idx.b32 %r3, %r2, 0, 31, -1;\n\tvote.sync.any.pred %p2, %p1, -1;\n"
    "\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;\n\tret;\n",
    "\n.visible .entry j()\n{\n\t.shared .align 8 .b64 bar2[1];\n\tmbarrier.arrive.shared::cta.b64 _, [bar2];\n\tret;\n}\n");

TEST(InstrumentWarpWide, EachSiteNamesTheFirstWarpWideInstructionBeforeItsNextSite) {
  const auto r = instrument::instrument_module(kModule, "k.ptx");
  ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
  ASSERT_EQ(r.sites.size(), 4u);
  // init (line 10): the elect on line 11, before the arrive.
  EXPECT_EQ(r.sites[0].warp_wide_line, 11);
  EXPECT_EQ(r.sites[0].warp_wide_text, "elect.sync %r1|%p1, -1;");
  // arrive (line 12): the shfl on line 14, the first of the two before the wait.
  EXPECT_EQ(r.sites[1].warp_wide_line, 14);
  EXPECT_NE(r.sites[1].warp_wide_text.find("shfl.sync.idx.b32"), std::string::npos);
  // the wait: none after it in k; the next function's arrive is no follower of it.
  EXPECT_EQ(r.sites[2].warp_wide_line, 0);
  EXPECT_EQ(r.sites[3].warp_wide_line, 0);
  const auto j = nlohmann::json::parse(instrument::sites_json(r.sites));
  EXPECT_EQ(j["sites"][1]["warp_wide"]["ptx_line"], 14);
  EXPECT_FALSE(j["sites"][2].contains("warp_wide"));
}

}  // namespace
