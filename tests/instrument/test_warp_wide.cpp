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

const char* const kModule = R"(.version 8.6
.target sm_90a
.address_size 64

.visible .entry k()
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.shared .align 8 .b64 bar[1];
	mbarrier.init.shared::cta.b64 [bar], 1;
	elect.sync %r1|%p1, -1;
	mbarrier.arrive.shared::cta.b64 _, [bar];
	add.s32 %r2, %r2, 1;
	shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;
	vote.sync.any.pred %p2, %p1, -1;
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
	ret;
}

.visible .entry j()
{
	.reg .b32 %r<4>;
	.shared .align 8 .b64 bar2[1];
	mbarrier.arrive.shared::cta.b64 _, [bar2];
	ret;
}
)";

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
