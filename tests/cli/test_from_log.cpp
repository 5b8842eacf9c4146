// `tmakit map --from-log FILE` and `tmakit layout --from-log FILE --index N`: maps
// recorded by `tmakit watch` as JSON Lines (call records: kind, index, pid, map or
// map_error; other keys and kinds ignored). The logs here are written by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../layout/run.hpp"

namespace tmakit::cli::test {
namespace {

namespace fs = std::filesystem;
using layout::test::kTmakit;
using layout::test::quote;
using layout::test::Ran;
using layout::test::TempDir;
using nlohmann::json;

// A valid float32 map with 128B swizzle, in map_to_json's form (global_address included).
json good_map(uint64_t dim1 = 64) {
  return {{"encode", "tiled"}, {"data_type", "float32"}, {"global_address", 4096}, {"dims", {64, dim1}},
          {"strides", {256}},  {"box", {32, 4}},           {"element_strides", {1, 1}}, {"interleave", "none"},
          {"swizzle", "128b"}, {"l2_promotion", "none"},   {"oob_fill", "none"}};
}

json call(int index, int pid, const json& map) {
  json j = {{"kind", "call"}, {"index", index}, {"pid", pid}, {"map", map}, {"thread", 7},
            {"time", "2025-01-01T00:00:00Z"}, {"call_site", "main+0x40"}, {"findings", json::array()},
            {"driver", {{"result", 0}}}};
  if (map.is_null()) j["map_error"] = "tensorMap is a null pointer";
  return j;
}

struct Log {
  TempDir dir{"log"};
  fs::path write(const std::vector<std::string>& lines, const std::string& name = "calls.jsonl") {
    std::ofstream out(dir.path / name);
    for (const auto& l : lines) out << l << "\n";
    return dir.path / name;
  }
};

// stdout and stderr apart: a failed command must print nothing to stdout.
struct Split {
  int status;
  std::string out, err;
};
Split tmakit(const std::string& args, const fs::path& scratch) {
  const fs::path err = scratch / "stderr";
  Ran r = layout::test::run("{ " + quote(kTmakit) + " " + args + " 2>" + quote(err.string()) + "; }");
  return {r.status, r.out, layout::test::read_file(err)};
}

json bad_box_map() {
  json m = good_map();
  m["box"] = {32, 300};
  return m;
}

TEST(FromLog, MapChecksEveryCallOneBlockEach) {
  Log log;
  const fs::path f = log.write({call(0, 100, good_map()).dump(), call(1, 100, nullptr).dump(),
                                call(2, 100, bad_box_map()).dump(),
                                R"({"kind":"summary","calls":3,"refused":1})", ""});
  Split r = tmakit("map --from-log " + quote(f.string()), log.dir.path);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const size_t c0 = r.out.find("call 0 (pid 100, " + f.string() + ":1):\n"),
               c1 = r.out.find("call 1 (pid 100, " + f.string() + ":2):\n"),
               c2 = r.out.find("call 2 (pid 100, " + f.string() + ":3):\n");
  ASSERT_NE(c0, std::string::npos) << r.out;
  ASSERT_NE(c1, std::string::npos) << r.out;
  ASSERT_NE(c2, std::string::npos) << r.out;
  EXPECT_LT(c0, c1);
  EXPECT_LT(c1, c2);
  const std::string b0 = r.out.substr(c0, c1 - c0), b1 = r.out.substr(c1, c2 - c1), b2 = r.out.substr(c2);
  EXPECT_NE(b0.find("valid for sm_90a"), std::string::npos) << b0;
  EXPECT_NE(b0.find("address 0x1000"), std::string::npos) << b0;
  EXPECT_NE(b0.find("bytes per box: 512"), std::string::npos) << b0;  // 32 × 4 floats
  EXPECT_NE(b1.find("tensorMap is a null pointer [log.map-unreadable]"), std::string::npos) << b1;
  EXPECT_NE(b2.find(f.string() + ":3: box[1]: error: box[1] = 300 is outside 1..256 [map.box-dim-range]"),
            std::string::npos)
      << b2;
  EXPECT_NE(r.out.find("3 calls checked: 1 valid, 2 invalid"), std::string::npos) << r.out;
  // All valid: exit 0.
  const fs::path ok = log.write({call(0, 1, good_map()).dump(), call(1, 1, good_map(8)).dump()}, "ok.jsonl");
  EXPECT_EQ(tmakit("map --from-log " + quote(ok.string()), log.dir.path).status, 0);
}

TEST(FromLog, IndexAndPidSelectOneCall) {
  Log log;
  const fs::path f = log.write({call(0, 100, good_map(64)).dump(), call(0, 200, good_map(48)).dump(),
                                call(1, 200, bad_box_map()).dump()});
  Split r = tmakit("map --from-log " + quote(f.string()) + " --index 0", log.dir.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--index: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pids 100, 200"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--pid"), std::string::npos) << r.err;
  r = tmakit("map --from-log " + quote(f.string()) + " --index 0 --pid 200", log.dir.path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("dims [64, 48]"), std::string::npos) << r.out;
  r = tmakit("map --from-log " + quote(f.string()) + " --index 1", log.dir.path);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("[map.box-dim-range]"), std::string::npos) << r.out;
  r = tmakit("map --from-log " + quote(f.string()) + " --index 5", log.dir.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no call with index 5"), std::string::npos) << r.err;
  // Flags override the recorded map's keys: the box fixed, the map is valid.
  r = tmakit("map --from-log " + quote(f.string()) + " --index 1 --box 32,8", log.dir.path);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // --pid alone narrows the every-call check.
  r = tmakit("map --from-log " + quote(f.string()) + " --pid 100", log.dir.path);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 call checked (pid 100): 1 valid, 0 invalid"), std::string::npos) << r.out;
}

TEST(FromLog, MalformedLinesExitTwoNamingFileAndLine) {
  Log log;
  json not_a_map = call(1, 1, good_map());
  not_a_map["map"]["swizzle"] = "96b";
  json no_index = call(1, 1, good_map());
  no_index.erase("index");
  struct Bad {
    std::string line, says;
    bool unreadable_log;  // the log cannot be read past it (a map of another call is only read when checked)
  };
  const Bad bad[] = {
      {"{not json", ":2: error: ", true},
      {"[1, 2]", ":2: error: expected a JSON object", true},
      {R"({"index":1,"pid":1,"map":null})", ":2: error: a record needs a string \"kind\"", true},
      {no_index.dump(), ":2: error: a call record needs \"index\"", true},
      {not_a_map.dump(), ":2: map.swizzle: error: ", false},
  };
  for (const auto& [line, says, unreadable_log] : bad) {
    SCOPED_TRACE(line);
    const fs::path f = log.write({call(0, 1, good_map()).dump(), line, call(2, 1, good_map()).dump()});
    Split r = tmakit("map --from-log " + quote(f.string()), log.dir.path);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.out, "");  // not even the good first call: no partial report
    EXPECT_NE(r.err.find(f.string() + says), std::string::npos) << r.err;
    if (!unreadable_log) continue;
    Split l = tmakit("layout --from-log " + quote(f.string()) + " --index 2 --format text", log.dir.path);
    EXPECT_EQ(l.status, 2) << l.err;
    EXPECT_EQ(l.out, "");
    EXPECT_NE(l.err.find(f.string() + says), std::string::npos) << l.err;
  }
  Split r = tmakit("map --from-log " + quote((log.dir.path / "none.jsonl").string()), log.dir.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
  r = tmakit("map --from-log /dev/zero", log.dir.path);  // never read forever
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

TEST(FromLog, LayoutDrawsTheSelectedCallAsTheFlagsWould) {
  Log log;
  const fs::path f = log.write({call(3, 9, good_map()).dump()});
  Split logged = tmakit("layout --from-log " + quote(f.string()) + " --index 3 --coords 0,8 --format json", log.dir.path);
  ASSERT_EQ(logged.status, 0) << logged.err;
  // The same map typed as flags.
  Split typed = tmakit("layout --type float32 --dims 64,64 --strides 256 --box 32,4 --swizzle 128b --address 4096 --coords 0,8 "
                       "--format json",
                       log.dir.path);
  ASSERT_EQ(typed.status, 0) << typed.err;
  EXPECT_EQ(json::parse(logged.out), json::parse(typed.out));
  Split r = tmakit("layout --from-log " + quote(f.string()) + " --coords 0,0", log.dir.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give --index"), std::string::npos) << r.err;
  const fs::path nul = log.write({call(0, 9, nullptr).dump()}, "null.jsonl");
  r = tmakit("layout --from-log " + quote(nul.string()) + " --index 0", log.dir.path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("[log.map-unreadable]"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tmakit::cli::test
