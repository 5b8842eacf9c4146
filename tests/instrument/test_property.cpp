// Random modules built from corpus pieces: a corpus module whose function bodies get
// instructions deleted, duplicated, wrapped in `{ }` scopes and joined onto one line. For every
// one: instrumenting succeeds, taking the inserted text out gives the mutated module back,
// there is one record per instruction of the families, and (a sample, where ptxas is
// installed) ptxas accepts the result wherever it accepts the mutated module.
#include <gtest/gtest.h>

#include <random>

#include "helpers.hpp"
#include "tmakit/instrument/instrument.hpp"
#include "tmakit/ptx/module.hpp"

using namespace tmakit;
using namespace instrument_test;

namespace {

using ptx::Piece;

// Mutates the instruction pieces of function bodies; declarations, labels and directives stay,
// so the module still declares everything it names.
// `*hidden` counts the statements the line regex of count_families cannot see (not first on their line).
std::string mutate(const std::string& text, std::mt19937& rng, size_t* hidden) {
  Diagnostics d;
  auto m = ptx::parse_module(text, "m.ptx", d);
  std::string out;
  int depth = 0;
  std::uniform_int_distribution<int> pick(0, 19);
  for (size_t i = 0; i < m.pieces.size(); ++i) {
    const Piece& p = m.pieces[i];
    depth += p.kind == Piece::Kind::open;
    depth -= p.kind == Piece::Kind::close;
    if (p.kind != Piece::Kind::instruction || depth == 0) {
      out += p.text;
      continue;
    }
    switch (pick(rng)) {
      case 0: break;                                          // deleted (its line's trivia stays)
      case 1: out += p.text + "\n\t" + p.text; break;          // duplicated
      case 2:  // in a scope of its own, on its line
        out += "{ " + p.text + " }";
        ++*hidden;
        break;
      case 3:                                                  // in a scope over several lines
        out += "{\n\t" + p.text + "\n\t}";
        break;
      case 4:  // joined with the next instruction onto one line
        if (i + 2 < m.pieces.size() && m.pieces[i + 1].kind == Piece::Kind::trivia &&
            m.pieces[i + 2].kind == Piece::Kind::instruction && m.pieces[i + 1].text.find("//") == std::string::npos) {
          out += p.text + " " + m.pieces[i + 2].text;
          ++i, ++i;
          ++*hidden;
          break;
        }
        [[fallthrough]];
      default: out += p.text;
    }
  }
  return out;
}

TEST(InstrumentProperty, RandomModulesFromCorpusPieces) {
  const char* bases[] = {"nvrtc/nvrtc_kernels.sm_90a.ptx", "triton/tma_copy_device_desc.sm_90a.ptx",
                         "cutedsl/tma_copy.sm_100a.ptx", "nvcc/test_group_membership.sm_90a.ptx",
                         "nvcc-G/test_multicast_clusters.sm_90a.ptx", "triton/matmul_tma.sm_100a.ptx"};
  const fs::path dir = fs::path(TMAKIT_BINARY_DIR) / "test_instrument" / "property";
  size_t modules = 0, assembled = 0, hidden = 0;
  for (const char* base : bases) {
    const std::string text = read(kCorpus / base);
    const std::string target = std::string(base).find("sm_100a") != std::string::npos ? "sm_100a" : "sm_90a";
    for (unsigned seed = 1; seed <= 12; ++seed) {
      std::mt19937 rng(seed);
      size_t j = 0;
      const std::string mutated = mutate(text, rng, &j);
      SCOPED_TRACE(std::string(base) + " seed " + std::to_string(seed));
      auto r = instrument::instrument_module(mutated, "m.ptx");
      ASSERT_EQ(r.status, 0) << (r.diags.empty() ? "" : format(r.diags[0]));
      ASSERT_EQ(strip_inserted(r.text), mutated);
      // Statements that are not first on their line are invisible to the line regex.
      EXPECT_LE(count_families(mutated, "all"), r.sites.size());
      EXPECT_LE(r.sites.size(), count_families(mutated, "all") + j);
      EXPECT_EQ(count_records(r.text), r.sites.size());
      hidden += j;
      ++modules;
      if (have_ptxas() && seed % 4 == 1 && ptxas(mutated, target, dir) == 0) {
        std::string log;
        EXPECT_EQ(ptxas(r.text, target, dir, &log), 0) << log;
        ++assembled;
      }
    }
  }
  EXPECT_EQ(modules, 72u);
  EXPECT_GT(hidden, 0u);  // the inline form was exercised
  if (have_ptxas()) EXPECT_GE(assembled, 12u);  // most mutants assemble (a -G module's may not)
}

}  // namespace
