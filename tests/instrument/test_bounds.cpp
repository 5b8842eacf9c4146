// The bound on what tmakit instruments (docs/security.md, "A PTX module"): instrumenting keeps
// every statement, so 10 MB of empty statements once took 1.6 GB, inside the user's process
// under `tmakit check`. Past 2^21 statement marks or 64 MiB the module is refused before it
// is parsed; a module just inside the mark bound is instrumented.
#include <gtest/gtest.h>

#include <string>

#include "tmakit/instrument/instrument.hpp"

namespace tmakit::instrument {
namespace {

const std::string kHead = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n";

TEST(InstrumentBounds, TooManyStatementsAreRefusedBeforeParsing) {
  const std::string body(kMaxStatements, ';');  // with the closing `}`: one mark too many
  Result r = instrument_module(kHead + body + "\n}\n", "empty.ptx");
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].rule, "instrument.size");
  EXPECT_NE(r.diags[0].message.find(std::to_string(kMaxStatements + 2)), std::string::npos) << r.diags[0].message;
  EXPECT_TRUE(r.text.empty());
}

TEST(InstrumentBounds, TooManyBytesAreRefusedBeforeParsing) {
  const std::string comment = "// " + std::string(kMaxModuleBytes, 'x') + "\n";
  Result r = instrument_module(kHead + comment + "ret;\n}\n", "long.ptx");
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].rule, "instrument.size");
}

TEST(InstrumentBounds, AModuleInsideTheBoundIsInstrumented) {
  const std::string body(kMaxStatements / 4, ';');
  Result r = instrument_module(kHead + body + "\nret;\n}\n", "empty.ptx");
  EXPECT_EQ(r.status, 0) << (r.diags.empty() ? "" : r.diags[0].message);
}

}  // namespace
}  // namespace tmakit::instrument
