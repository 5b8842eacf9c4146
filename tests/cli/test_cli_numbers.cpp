// Numbers on the command line of `tmakit map` and `tmakit layout` are read exactly:
// a value outside the flag's range exits 2 naming the flag, the text typed and the
// range (CLI11 used to wrap -3 to 2^64 − 3 silently). The ranges expected here are
// the C++ types' limits, written out independently of the tool. Also: sizes past
// 64 bits printed exactly or as "more than", and no advice derived from a field
// that is already in error.
#include <gtest/gtest.h>

#include <limits>

#include "../layout/run.hpp"

namespace tmakit::cli::test {
namespace {

using layout::test::kTmakit;
using layout::test::quote;
using layout::test::Ran;

Ran tmakit(const std::string& args) { return layout::test::run(quote(kTmakit) + " " + args); }
// Only what tmakit writes to stderr (stdout discarded).
Ran tmakit_stderr(const std::string& args) {
  return layout::test::run("{ " + quote(kTmakit) + " " + args + " 2>&1 >/dev/null; }");
}

template <class T>
std::string range() {
  return std::to_string(std::numeric_limits<T>::min()) + ".." + std::to_string(std::numeric_limits<T>::max());
}

const std::string kMap = "--type float32 --dims 64,64 --strides 256 --box 32,4";

struct Case {
  std::string command, args, flag, typed, range;
};

TEST(CliNumbers, EveryNumericFlagRefusesWhatItCannotHoldByName) {
  const std::string u64 = range<uint64_t>(), u32 = range<uint32_t>(), i32 = range<int32_t>(),
                    i64 = range<int64_t>();
  const std::string two64 = "18446744073709551616", two32 = "4294967296";
  const Case cases[] = {
      {"map", "--dims " + two64 + ",4", "--dims", two64, u64},
      {"map", "--dims -3,4", "--dims", "-3", u64},
      {"map", "--type float32 --dims 64,64 --strides -16 --box 32,4", "--strides", "-16", u64},
      {"map", "--type float32 --dims 64,64 --strides 256 --box 32," + two32, "--box", two32, u32},
      {"map", kMap + " --element-strides 1,-1", "--element-strides", "-1", u32},
      {"map", kMap + " --channels " + two32, "--channels", two32, u32},
      {"map", kMap + " --pixels -1", "--pixels", "-1", u32},
      {"map", kMap + " --lower 2147483648", "--lower", "2147483648", i32},
      {"map", kMap + " --upper -2147483649", "--upper", "-2147483649", i32},
      {"map", kMap + " --lower-w 99999999999", "--lower-w", "99999999999", i32},
      {"map", kMap + " --upper-w 2147483648", "--upper-w", "2147483648", i32},
      {"map", kMap + " --layout --layout-lines 0", "--layout-lines", "0", "1..4096"},
      {"map", kMap + " --layout --layout-lines 4097", "--layout-lines", "4097", "1..4096"},
      {"map", kMap + " --base -128", "--base", "-128", u64},
      {"map", kMap + " --dims 64,abc", "--dims", "abc", u64},
      {"map", kMap + " --dims 64,1e3", "--dims", "1e3", u64},
      {"layout", kMap + " --coords 0," + two32, "--coords", two32, i32},
      {"layout", kMap + " --smem-offset -1024", "--smem-offset", "-1024", u32},
      {"layout", kMap + " --smem-offset " + two32, "--smem-offset", two32, u32},
      {"layout", kMap + " --offsets 1,2147483648", "--offsets", "2147483648", i32},
      {"layout", kMap + " --w-halo 9223372036854775808", "--w-halo", "9223372036854775808", i64},
      {"layout", kMap + " --w-offset -9223372036854775809", "--w-offset", "-9223372036854775809", i64},
      {"layout", kMap + " --max-lines 0", "--max-lines", "0", "1..4096"},
      {"layout", "--scenario x.json --step -1", "--step", "-1", "0..2147483647"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command + " " + c.args);
    Ran r = tmakit_stderr(c.command + " " + c.args);
    EXPECT_EQ(r.status, 2) << r.out;
    const std::string want = c.flag + ": error: \"" + c.typed + "\" ";
    EXPECT_EQ(r.out.rfind(want, 0), 0u) << r.out;
    EXPECT_NE(r.out.find(" " + c.range), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[cli.number]"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

TEST(CliNumbers, ValuesAtTheEdgesOfTheirRangeReachTheValidator) {
  // 2^64 − 1 fits --dims: the validator, not the flag reader, refuses it (exit 1, map rule).
  Ran r = tmakit("map --type float32 --dims 18446744073709551615,64 --strides 256 --box 32,4");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("dims[0] = 18446744073709551615 is outside"), std::string::npos) << r.out;
  r = tmakit("map --type float32 --dims 0x40,64 --strides 256 --box 32,4");  // hex, as --address takes it
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("dims [64, 64]"), std::string::npos) << r.out;
  r = tmakit("layout " + kMap + " --coords -2147483648,0 --format json");
  EXPECT_NE(r.status, 2) << r.out;  // drawn, or a coordinate rule: not a flag error
  EXPECT_EQ(r.out.find("[cli.number]"), std::string::npos) << r.out;
}

TEST(CliNumbers, SizesPast64BitsArePrintedExactly) {
  // dimension 1: 2^32 elements 2^30 bytes apart span 2^62 bytes, more than dimension 2's
  // stride of 2^31: the overlap warning states the span exactly.
  Ran r = tmakit("map --type uint8 --dims 2,4294967296,4294967296 --strides 1073741824,2147483648 --box 16,4,2");
  const uint64_t span = (uint64_t{1} << 30) * (uint64_t{1} << 32);
  EXPECT_NE(r.out.find("less than the " + std::to_string(span) + " bytes of dimension 1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("bits bytes"), std::string::npos) << r.out;
  // A box of 3 × (2^32 − 1) floats: the product passes 2^64; it is said, not wrapped.
  r = tmakit("map --type float32 --dims 64,64,64 --strides 256,16384 --box 4294967295,4294967295,4294967295");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("the driver counts more than 2^64 − 1 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bytes per box: more than 2^64 − 1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(std::to_string(std::numeric_limits<uint64_t>::max())), std::string::npos) << r.out;
}

TEST(CliNumbers, NoAdviceDerivedFromAFieldInError) {
  // dims[0] = 4294967297000 is past 2^32 (an error): the stride overlap it would imply is not reported.
  Ran r = tmakit("map --type uint8 --dims 4294967297000,4 --strides 16 --box 16,4");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("[map.global-dim-range]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[map.stride-overlap]"), std::string::npos) << r.out;
  // The same overlap from valid fields is reported: 64 one-byte elements, then a stride of 16.
  r = tmakit("map --type uint8 --dims 64,4 --strides 16 --box 16,4");
  EXPECT_NE(r.out.find("[map.stride-overlap]"), std::string::npos) << r.out;
  // A box in error draws no "box exceeds the tensor" note about it.
  r = tmakit("map --type float32 --dims 64,64 --strides 256 --box 32,300");
  EXPECT_NE(r.out.find("box[1] = 300 is outside 1..256"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[map.box-exceeds-tensor]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tmakit::cli::test
