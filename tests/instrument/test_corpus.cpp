// Every corpus module that ptxas accepts (tests/corpus/) is instrumented, with and without the
// functions' plain copies; ptxas accepts the result (with them) for the module's own target; taking the inserted lines out gives back the original
// byte for byte; and there is one record for each instruction of the families, counted here
// by a regex over the original.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

struct Case {
  std::string set;
  instrument::OpSet ops;
};
const Case kCases[] = {{"all", instrument::OpSet::all},
                       {"copies", instrument::OpSet::copies},
                       {"barriers", instrument::OpSet::barriers}};

TEST(InstrumentCorpus, EveryAcceptedModuleIsInstrumentedAndGivesBackTheOriginal) {
  auto modules = accepted_modules();
  ASSERT_GE(modules.size(), 42u);
  size_t sites = 0;
  for (const auto& m : modules) {
    const std::string text = read(kCorpus / m.file);
    for (const Case& c : kCases) {
      SCOPED_TRACE(m.file + " --ops " + c.set);
      auto r = instrument::instrument_module(text, m.file, c.ops);
      ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
      EXPECT_EQ(strip_inserted(r.text), text);
      const size_t expected = count_families(text, c.set);
      EXPECT_EQ(r.sites.size(), expected);
      EXPECT_EQ(count_records(r.text), expected);
      for (size_t i = 0; i < r.sites.size(); ++i) EXPECT_EQ(r.sites[i].id, i);
      if (c.set == "all") sites += r.sites.size();
    }
    // With the functions' plain copies (tmakit check --launches, --ctas): the same sites, and the
    // copies' lines are inserted lines too.
    SCOPED_TRACE(m.file + " --plain-copy");
    auto r = instrument::instrument_module(text, m.file, instrument::OpSet::all, true);
    ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
    EXPECT_EQ(strip_inserted(r.text), text);
    EXPECT_EQ(r.sites.size(), count_families(text, "all"));
  }
  EXPECT_GT(sites, 3000u);  // the corpus is full of them: a reader that finds none fails here
}

TEST(InstrumentCorpus, PtxasAcceptsEveryInstrumentedModule) {
  if (!have_ptxas()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  const fs::path dir = fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "corpus";
  size_t failures = 0;
  for (const auto& m : accepted_modules()) {
    // With the plain copies: the larger text, the sites' path and the copy beside it.
    auto r = instrument::instrument_module(read(kCorpus / m.file), m.file, instrument::OpSet::all, true);
    ASSERT_EQ(r.status, 0) << m.file;
    std::string log;
    int rc = ptxas(r.text, m.target, dir, &log);
    EXPECT_EQ(rc, 0) << m.file << " (" << m.target << "):\n" << log;
    failures += rc != 0;
  }
  EXPECT_EQ(failures, 0u);
}

}  // namespace
