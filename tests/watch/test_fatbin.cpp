// The fatbin reader of `tmakit check` (src/watch/fatbin.cpp) on fatbins the CUDA 13.0
// toolkit's fatbinary made (tests/watch/fatbin/README.md), and on damaged ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "../../src/check/hooks/fatbin.hpp"
#include "check_test_files.hpp"

namespace {

using namespace tmakit::watch;
using check_test::read_file;

const std::string kDir = std::string(TMAKIT_SOURCE_DIR) + "/tests/watch/fatbin/";

TEST(Fatbin, ZstdAndPlainHoldTheSamePtxAndTheCubin) {
  const std::string zstd = read_file(kDir + "debug_wait.zstd.fatbin"), plain = read_file(kDir + "debug_wait.plain.fatbin");
  const Fatbin z = read_fatbin(zstd.data(), zstd.size()), p = read_fatbin(plain.data(), plain.size());
  ASSERT_TRUE(z.problem.empty()) << z.problem;
  ASSERT_EQ(z.entries.size(), 2u);
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(z.entries[0].kind, 2);  // the cubin first, as fatbinary was given them
  EXPECT_EQ(z.entries[1].kind, 1);
  EXPECT_EQ(z.entries[1].arch, 90u);
  EXPECT_TRUE(z.entries[1].compressed);
  EXPECT_FALSE(p.entries[1].compressed);
  ASSERT_TRUE(z.entries[1].problem.empty()) << z.entries[1].problem;
  EXPECT_EQ(z.entries[1].ptx, p.entries[1].ptx);
  // The text is the module's (fatbinary blanks its comment lines): every instruction line is there.
  const std::string original = read_file(check_test::kModule);
  for (const char* line : {".target sm_90a", ".visible .entry _Z10over_armedN6tmakit6device9MapHandleE",
                           "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64"})
    EXPECT_NE(z.entries[1].ptx.find(line), std::string::npos) << line;
  // Comment lines become empty lines: the same line count, so .loc-less sites keep their PTX lines.
  EXPECT_EQ(std::count(z.entries[1].ptx.begin(), z.entries[1].ptx.end(), '\n'),
            std::count(original.begin(), original.end(), '\n'));
  EXPECT_EQ(pick_ptx(z, 90), &z.entries[1]);
  EXPECT_EQ(pick_ptx(z, 0), &z.entries[1]);   // unknown GPU: the highest there is
  EXPECT_EQ(pick_ptx(z, 89), nullptr);        // compute_90a PTX cannot run on sm_89
}

TEST(Fatbin, CubinOnlyHasNoPtx) {
  const std::string c = read_file(kDir + "debug_wait.cubin.fatbin");
  const Fatbin f = read_fatbin(c.data(), c.size());
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].kind, 2);
  EXPECT_EQ(pick_ptx(f, 90), nullptr);
}

TEST(Fatbin, TheRuntimesWrapperIsFollowed) {
  const std::string zstd = read_file(kDir + "debug_wait.zstd.fatbin");
  struct Wrapper {  // __fatBinC_Wrapper_t
    uint32_t magic, version;
    const void* data;
    void* filename_or_fatbins;
  } w{kFatbinWrapperMagic, 1, zstd.data(), nullptr};
  EXPECT_TRUE(is_fatbin(&w));
  const Fatbin f = read_fatbin(&w);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_FALSE(f.entries[1].ptx.empty());
}

TEST(Fatbin, DamagedContainersAreRefusedWithinTheirBytes) {
  const std::string good = read_file(kDir + "debug_wait.zstd.fatbin");
  // Every truncation: never a read past the bytes given, and a named problem once the entries run short.
  for (size_t n = 0; n < good.size(); n += 7) {
    std::vector<unsigned char> cut(good.begin(), good.begin() + n);
    const Fatbin f = read_fatbin(cut.data(), cut.size());
    if (n >= 16) EXPECT_FALSE(f.problem.empty()) << "truncated at " << n;
  }
  // Random bytes in the headers: no crash, no entry past the container.
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::vector<unsigned char> b(good.begin(), good.end());
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % 160] = static_cast<unsigned char>(rng());
    const Fatbin f = read_fatbin(b.data(), b.size());
    for (const auto& e : f.entries) EXPECT_LE(e.ptx.size(), b.size() * 64);
  }
  // A compressed entry whose frame is damaged: the entry says why, no text.
  std::vector<unsigned char> b(good.begin(), good.end());
  const size_t frame = good.find("\x28\xb5\x2f\xfd");
  ASSERT_NE(frame, std::string::npos);
  for (size_t k = frame + 8; k < frame + 40; ++k) b[k] ^= 0x5a;
  const Fatbin f = read_fatbin(b.data(), b.size());
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_TRUE(f.entries[1].ptx.empty());
  EXPECT_NE(f.entries[1].problem, "");
}

}  // namespace
