// The watch layer's plain part (include/tmakit/watch/call.hpp): what a call's
// arguments become, how the validator's findings meet the driver's answer, and
// the record and message that come out. Expectations come from the spec's rules
// (§1.3) and the driver's enum numbering in cuda.h, not from the code under test.
#include <gtest/gtest.h>

#include "tmakit/terminal_text.hpp"
#include <sys/mman.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tmakit/tensor_map/json.hpp"
#include "tmakit/watch/call.hpp"

namespace tmakit::watch {
namespace {

namespace tm = tmakit::tensor_map;
const spec::Target kSm90a{90, spec::Suffix::a};

// A valid 2-D float32 tiled map: 1024×512 elements, rows of 4096 bytes, a 64×32 box.
struct TiledArgs {
  alignas(64) unsigned char descriptor[128]{};
  uint64_t dims[2] = {1024, 512};
  uint64_t strides[1] = {4096};
  uint32_t box[2] = {64, 32};
  uint32_t estr[2] = {1, 1};
  EncodeArgs args() {
    return EncodeArgs{.entry = Entry::encode_tiled, .tensor_map = descriptor, .data_type = 7 /*FLOAT32*/,
                      .rank = 2, .global_address = reinterpret_cast<void*>(0x7f0000000000ull), .dims = dims,
                      .strides = strides, .box = box, .element_strides = estr};
  }
};

std::set<std::string> rules(const Diagnostics& ds) {
  std::set<std::string> out;
  for (const auto& d : ds) out.insert(d.rule);
  return out;
}

TEST(WatchCapture, ReadsEveryArgumentIntoTheMap) {
  TiledArgs t;
  Capture c = capture(t.args());
  ASSERT_TRUE(c.map.has_value());
  EXPECT_TRUE(c.problems.empty());
  const tm::TensorMap& m = *c.map;
  EXPECT_EQ(m.encode, tm::Encode::tiled);
  EXPECT_EQ(m.data_type, tm::DataType::float32);
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.global_address, 0x7f0000000000ull);
  EXPECT_EQ(m.dims[0], 1024u);
  EXPECT_EQ(m.dims[1], 512u);
  EXPECT_EQ(m.strides[0], 4096u);
  EXPECT_EQ(m.box[0], 64u);
  EXPECT_EQ(m.box[1], 32u);
}

TEST(WatchCapture, Im2colCornersAreReadPerSpatialDimension) {
  alignas(64) unsigned char descriptor[128]{};
  uint64_t dims[4] = {64, 32, 32, 8}, strides[3] = {128, 4096, 131072};
  int lower[2] = {-1, -2}, upper[2] = {1, 2};
  uint32_t estr[4] = {1, 1, 1, 1};
  EncodeArgs a{.entry = Entry::encode_im2col, .tensor_map = descriptor, .data_type = 6 /*FLOAT16*/, .rank = 4,
               .global_address = reinterpret_cast<void*>(0x10000), .dims = dims, .strides = strides,
               .element_strides = estr, .lower = lower, .upper = upper, .channels = 64, .pixels = 128};
  Capture c = capture(a);
  ASSERT_TRUE(c.map.has_value());
  EXPECT_EQ(c.map->encode, tm::Encode::im2col);
  EXPECT_EQ(c.map->pixel_box_lower[0], -1);
  EXPECT_EQ(c.map->pixel_box_lower[1], -2);
  EXPECT_EQ(c.map->pixel_box_upper[1], 2);
  EXPECT_EQ(c.map->channels_per_pixel, 64u);
  EXPECT_EQ(c.map->pixels_per_column, 128u);
}

TEST(WatchCapture, NullArraysAreNamedNotRead) {
  const std::pair<const char*, void (*)(EncodeArgs&)> cases[] = {
      {"globalDim", [](EncodeArgs& a) { a.dims = nullptr; }},
      {"globalStrides", [](EncodeArgs& a) { a.strides = nullptr; }},
      {"boxDim", [](EncodeArgs& a) { a.box = nullptr; }},
      {"elementStrides", [](EncodeArgs& a) { a.element_strides = nullptr; }},
      {"tensorMap", [](EncodeArgs& a) { a.tensor_map = nullptr; }},
  };
  for (const auto& [field, mutate] : cases) {
    TiledArgs t;
    EncodeArgs a = t.args();
    mutate(a);
    Capture c = capture(a);
    ASSERT_EQ(c.problems.size(), 1u) << field;
    EXPECT_EQ(c.problems[0].rule, "watch.null-argument") << field;
    EXPECT_EQ(c.problems[0].where, field);
  }
  // Rank 1 reads no strides: a null globalStrides is then fine.
  TiledArgs t;
  EncodeArgs a = t.args();
  a.rank = 1;
  a.strides = nullptr;
  EXPECT_TRUE(capture(a).problems.empty());
}

TEST(WatchCapture, UnreadableMemoryIsReportedInsteadOfFaulting) {
  void* guard = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(guard, MAP_FAILED);
  TiledArgs t;
  EncodeArgs a = t.args();
  a.box = static_cast<const uint32_t*>(guard);
  Capture c = capture(a);
  munmap(guard, 4096);
  EXPECT_FALSE(c.map.has_value());
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].rule, "watch.unreadable-argument");
  EXPECT_EQ(c.problems[0].where, "boxDim");
}

TEST(WatchCapture, EnumsOutsideTheDriversRangesAreNamed) {
  // cuda.h: data types 0..15, interleave 0..2, swizzle 0..6, L2 0..3, OOB fill 0..1.
  const std::tuple<const char*, int, void (*)(EncodeArgs&, int)> cases[] = {
      {"tensorDataType", 16, [](EncodeArgs& a, int v) { a.data_type = v; }},
      {"tensorDataType", -1, [](EncodeArgs& a, int v) { a.data_type = v; }},
      {"interleave", 3, [](EncodeArgs& a, int v) { a.interleave = v; }},
      {"swizzle", 7, [](EncodeArgs& a, int v) { a.swizzle = v; }},
      {"l2Promotion", 4, [](EncodeArgs& a, int v) { a.l2_promotion = v; }},
      {"oobFill", 2, [](EncodeArgs& a, int v) { a.oob_fill = v; }},
  };
  for (const auto& [field, value, set] : cases) {
    TiledArgs t;
    EncodeArgs a = t.args();
    set(a, value);
    Capture c = capture(a);
    EXPECT_FALSE(c.map.has_value()) << field;
    ASSERT_EQ(c.problems.size(), 1u) << field;
    EXPECT_EQ(c.problems[0].rule, "watch.enum-value");
    EXPECT_EQ(c.raw[field], value);
  }
  // The last value of each is fine.
  TiledArgs t;
  EncodeArgs a = t.args();
  a.data_type = 15, a.interleave = 2, a.swizzle = 6, a.l2_promotion = 3, a.oob_fill = 1;
  EXPECT_TRUE(capture(a).map.has_value());
}

TEST(WatchCapture, RanksOutsideOneToFiveReadNothingAndBreakTheRankRule) {
  for (uint32_t rank : {0u, 6u, 0xffffffffu}) {
    TiledArgs t;
    EncodeArgs a = t.args();
    a.rank = rank;
    a.dims = nullptr;  // never read for such a rank
    Capture c = capture(a);
    ASSERT_TRUE(c.map.has_value()) << rank;
    EXPECT_TRUE(c.problems.empty()) << rank;
    Judgement j = judge(c, 1, kSm90a, false);
    EXPECT_TRUE(rules(j.findings).count("map.rank-range")) << rank;
    EXPECT_EQ(j.verdict, Verdict::explained);
    CallRecord r{.capture = c, .judgement = j, .driver_result = 1};
    EXPECT_TRUE(to_json(r)["map"].is_null()) << "a rank the format cannot spell is not written as a map";
  }
}

TEST(WatchCapture, MisalignedDescriptorIsNamed) {
  alignas(64) unsigned char buffer[256]{};
  TiledArgs t;
  EncodeArgs a = t.args();
  a.tensor_map = buffer + 32;
  Capture c = capture(a);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].rule, "watch.tensor-map-align");
}

TEST(WatchJudge, EveryCombinationOfFindingsAndDriverAnswer) {
  TiledArgs clean;
  Capture ok = capture(clean.args());
  // Overlapping rows: a 4096-byte row with a 2048-byte stride (map.stride-overlap, a warning
  // the driver does not enforce).
  TiledArgs overlap;
  overlap.strides[0] = 2048;
  Capture warned = capture(overlap.args());
  // box[0] = 512 > 256: map.box-dim-range, enforced by the driver.
  TiledArgs big;
  big.box[0] = 512;
  Capture broken = capture(big.args());

  EXPECT_EQ(judge(ok, 0, kSm90a, false).verdict, Verdict::ok);
  EXPECT_FALSE(judge(ok, 0, kSm90a, true).strict_refused);
  Judgement w = judge(warned, 0, kSm90a, false);
  EXPECT_EQ(w.verdict, Verdict::flagged);
  EXPECT_TRUE(rules(w.findings).count("map.stride-overlap"));
  EXPECT_FALSE(w.strict_refused);
  EXPECT_TRUE(judge(warned, 0, kSm90a, true).strict_refused);
  Judgement b = judge(broken, 1, kSm90a, false);
  EXPECT_EQ(b.verdict, Verdict::explained);
  EXPECT_TRUE(rules(b.findings).count("map.box-dim-range"));
  EXPECT_EQ(judge(ok, 1, kSm90a, false).verdict, Verdict::unexplained_refusal);
  EXPECT_EQ(judge(broken, 0, kSm90a, false).verdict, Verdict::accepted_against_rule);
  EXPECT_EQ(judge(ok, 3 /*NOT_INITIALIZED*/, kSm90a, false).verdict, Verdict::driver_error);
  EXPECT_TRUE(is_disagreement(Verdict::unexplained_refusal));
  EXPECT_TRUE(is_disagreement(Verdict::accepted_against_rule));
  EXPECT_FALSE(is_disagreement(Verdict::explained));
}

TEST(WatchReplace, KnownMapGetsTheNewAddressUnknownOnlyTheAlignment) {
  TiledArgs t;
  std::optional<tm::TensorMap> known = capture(t.args()).map;
  Capture c = capture_replace(known, t.descriptor, reinterpret_cast<void*>(0x7f0000001008ull));
  ASSERT_TRUE(c.map.has_value());
  EXPECT_EQ(c.map->global_address, 0x7f0000001008ull);
  EXPECT_TRUE(rules(judge(c, 1, kSm90a, false).findings).count("map.global-address-align"));
  Capture unknown = capture_replace(std::nullopt, t.descriptor, reinterpret_cast<void*>(0x1008));
  EXPECT_FALSE(unknown.map.has_value());
  EXPECT_TRUE(rules(unknown.problems).count("watch.replace-unknown-map"));
  EXPECT_TRUE(rules(unknown.problems).count("map.global-address-align"));
  Capture aligned = capture_replace(std::nullopt, t.descriptor, reinterpret_cast<void*>(0x1000));
  EXPECT_FALSE(judge(aligned, 0, kSm90a, false).findings.has_errors());
}

// A refused call of a map with box[0] = 512 (map.box-dim-range), as the session records it.
CallRecord refused_box_512(uint64_t index, int pid) {
  TiledArgs t;
  t.box[0] = 512;
  CallRecord r;
  r.index = index;
  r.pid = pid;
  r.capture = capture(t.args());
  r.driver_result = 1;
  r.judgement = judge(r.capture, 1, kSm90a, false);
  r.returned = 1;
  r.target = "sm_90a";
  return r;
}

TEST(WatchRecord, MapReadsBackAndFindingsCarryTheirRules) {
  CallRecord r = refused_box_512(3, 42);
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["kind"], "call");
  EXPECT_EQ(j["index"], 3);
  EXPECT_EQ(j["driver"], "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(j["verdict"], "explained");
  tm::MapSource back = tm::map_from_json(j["map"], "log");
  EXPECT_EQ(back.map, *r.capture.map);
  bool named = false;
  for (const auto& f : j["findings"]) named |= f["rule"] == "map.box-dim-range" && f["driver_enforced"] == true;
  EXPECT_TRUE(named);
  r.descriptor = std::array<uint8_t, 128>{};
  EXPECT_EQ(to_json(r)["descriptor"].get<std::string>().size(), 256u);
}

TEST(WatchExplain, SaysTheRuleTheCallSiteAndHowToSeeItAgain) {
  CallRecord r = refused_box_512(7, 99);
  r.call_site = {{"python", {{{"file", "kernel.py"}, {"line", 12}, {"function", "launch"}}}}};
  std::string text = explain(r, "/tmp/w.jsonl");
  EXPECT_NE(text.find("cuTensorMapEncodeTiled returned CUDA_ERROR_INVALID_VALUE"), std::string::npos) << text;
  EXPECT_NE(text.find("[map.box-dim-range]"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel.py:12 in launch"), std::string::npos) << text;
  EXPECT_NE(text.find("tmakit map --from-log /tmp/w.jsonl --index 7 --pid 99"), std::string::npos) << text;
  CallRecord quiet;
  quiet.capture = capture(TiledArgs().args());
  quiet.judgement = judge(quiet.capture, 0, kSm90a, false);
  EXPECT_TRUE(explain(quiet, "").empty());
  r.judgement = judge(capture(TiledArgs().args()), 1, kSm90a, false);
  EXPECT_NE(explain(r, "").find("DISAGREEMENT"), std::string::npos);
}

TEST(WatchRules, EveryWatchRuleIsDocumented) {
  std::ifstream in(std::string(TMAKIT_SOURCE_DIR) + "/docs/watch.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const WatchRule& r : watch_rules())
    EXPECT_NE(text.str().find("`" + std::string(r.id) + "`"), std::string::npos) << r.id;
}

}  // namespace
}  // namespace tmakit::watch

namespace {

// What libtmakit_watch.so prints inside the user's program (its findings, with the program's own
// names, paths and Python frames) goes through terminal_lines: our newlines stay, any control
// character the program put in a name is escaped, so it cannot forge a line or colour the terminal.
TEST(TerminalText, LinesKeepTheirNewlinesAndEscapeTheRest) {
  EXPECT_EQ(tmakit::terminal_lines("tmakit watch: one\ntmakit watch: two\n"), "tmakit watch: one\ntmakit watch: two\n");
  EXPECT_EQ(tmakit::terminal_lines("tmakit watch: x.py\x1b[31m:3\n"), "tmakit watch: x.py\\x1b[31m:3\n");
  EXPECT_EQ(tmakit::terminal_lines("kernel name\rtmakit watch: forged"), "kernel name\\x0dtmakit watch: forged");
  EXPECT_EQ(tmakit::terminal_lines(std::string(400, 'a') + "\n").size() < 200, true);  // a token clipped
}

}  // namespace
