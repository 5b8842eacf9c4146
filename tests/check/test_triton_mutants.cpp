// The mutations of tests/gpu/check/triton_mutants.py (docs/check-seeded.md, "Triton") applied to
// the PTX Triton 3.6 emitted for its TMA copies (tests/corpus/triton/): each changes the one place
// it names, the result is still a module tmakit instruments, and a mutation with nothing to change
// refuses with a message instead of compiling the clean kernel. No GPU, no Triton: the script's
// `mutate` command needs only Python.
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "trace_builder.hpp"

namespace {

using namespace check_test;

const fs::path kCorpus = fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/triton";

struct Mutated {
  int status = -1;
  std::string output;  // stdout and stderr
  std::string before, after;
};

// `python3 triton_mutants.py mutate NAME COPY` on a copy of the corpus file.
Mutated mutate(const std::string& name, const std::string& corpus_file) {
  Mutated m;
  const fs::path dir = fs::temp_directory_path() / ("tmakit-mutant-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / (name + ".ptx"), out = dir / (name + ".out");
  fs::copy_file(kCorpus / corpus_file, copy, fs::copy_options::overwrite_existing);
  m.before = read(copy);
  const std::string cmd = "python3 '" + (fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/triton_mutants.py").string() +
                          "' mutate " + name + " '" + copy.string() + "' > '" + out.string() + "' 2>&1";
  const int st = std::system(cmd.c_str());
  m.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  m.output = read(out);
  m.after = read(copy);
  fs::remove_all(dir);
  return m;
}

int count(const std::string& text, const std::string& re) {
  const std::regex r(re);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

void expect_instruments(const Mutated& m) {
  const auto res = tmakit::instrument::instrument_module(m.after, "mutant.ptx");
  EXPECT_EQ(res.status, 0) << (res.diags.empty() ? "" : tmakit::format(res.diags.front()));
  EXPECT_FALSE(res.sites.empty());
}

TEST(CheckTritonMutants, ExpectTxShortAndLongChangeTheImmediateBy16) {
  for (const auto& [name, bytes] : {std::pair{"expect-short16", 8176}, std::pair{"expect-long16", 8208}}) {
    SCOPED_TRACE(name);
    const Mutated m = mutate(name, "tma_copy_host_desc.sm_90a.ptx");
    ASSERT_EQ(m.status, 0) << m.output;
    EXPECT_EQ(count(m.before, R"(expect_tx\.shared\.b64 _, \[%r1\], 8192;)"), 1);  // a 64x64 fp16 box
    EXPECT_EQ(count(m.after, R"(expect_tx\.shared\.b64 _, \[%r1\], 8192;)"), 0);
    EXPECT_EQ(count(m.after, R"(expect_tx\.shared\.b64 _, \[%r1\], )" + std::to_string(bytes) + ";"), 1);
    expect_instruments(m);
  }
}

TEST(CheckTritonMutants, ArrivalCountTwo) {
  const Mutated m = mutate("arrival-count2", "tma_copy_host_desc.sm_90a.ptx");
  ASSERT_EQ(m.status, 0) << m.output;
  EXPECT_EQ(count(m.after, R"(mbarrier\.init\.shared::cta\.b64 \[%r1\], 2;)"), 1);
  EXPECT_EQ(count(m.after, R"(mbarrier\.init\.shared::cta\.b64 \[%r1\], 1;)"), 0);
  expect_instruments(m);
}

TEST(CheckTritonMutants, ParityInvertedWaitsOnTheRegisterXorOne) {
  const Mutated m = mutate("parity-inverted", "tma_copy_host_desc.sm_90a.ptx");
  ASSERT_EQ(m.status, 0) << m.output;
  EXPECT_EQ(count(m.after, R"(\.reg \.b32\s+%parity_inverted;)"), 1);
  EXPECT_EQ(count(m.after, R"(xor\.b32\s+%parity_inverted, %r5, 1;\s*\n\s*mbarrier\.try_wait\.parity\.shared\.b64 complete, \[%r1\], %parity_inverted;)"), 1);
  expect_instruments(m);
}

TEST(CheckTritonMutants, RemovalsTakeOutOneInstruction) {
  struct Case { const char* name; const char* file; const char* re; };
  for (const Case c : {Case{"store-fence-removed", "tma_copy_device_desc.sm_90a.ptx", R"(fence\.proxy\.async\.shared::cta;)"},
                       Case{"wait-group-read-removed", "tma_copy_host_desc.sm_90a.ptx", R"(cp\.async\.bulk\.wait_group\.read\s+0\s*;)"},
                       Case{"tensormap-acquire-removed", "tma_copy_device_desc.sm_90a.ptx", R"(fence\.proxy\.tensormap::generic\.acquire)"}}) {
    SCOPED_TRACE(c.name);
    const Mutated m = mutate(c.name, c.file);
    ASSERT_EQ(m.status, 0) << m.output;
    EXPECT_EQ(count(m.after, c.re), count(m.before, c.re) - 1);
    EXPECT_EQ(std::count(m.after.begin(), m.after.end(), '\n'), std::count(m.before.begin(), m.before.end(), '\n') - 1);
    expect_instruments(m);
  }
  // The fence taken out is the one between the st.shared of the result and the TMA store.
  const Mutated m = mutate("store-fence-removed", "tma_copy_device_desc.sm_90a.ptx");
  EXPECT_EQ(count(m.after, R"(st\.shared\.v4\.b32[^\n]*\n(\s*(//|\.loc|bar\.sync|elect|and\.pred)[^\n]*\n|\s*\n)*\s*@%p\d+ cp\.async\.bulk\.tensor\.2d\.global\.shared::cta)"), 1)
      << m.after;
}

TEST(CheckTritonMutants, DestinationOffsetBy64) {
  const Mutated m = mutate("dst-offset64", "tma_copy_host_desc.sm_90a.ptx");
  ASSERT_EQ(m.status, 0) << m.output;
  EXPECT_EQ(count(m.after, R"(cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\S* \[%r2\+64\])"), 1);
  expect_instruments(m);
}

TEST(CheckTritonMutants, NothingToMutateRefusesAndLeavesThePtx) {
  const Mutated m = mutate("tensormap-acquire-removed", "tma_copy_host_desc.sm_90a.ptx");
  EXPECT_EQ(m.status, 1);
  EXPECT_NE(m.output.find("mutant tensormap-acquire-removed: no fence.proxy.tensormap::generic.acquire"), std::string::npos)
      << m.output;
  EXPECT_EQ(m.after, m.before);
}

}  // namespace
