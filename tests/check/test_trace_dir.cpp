// Unusable trace directories: each refused with a TraceError that names the file, the record
// or line, and the field; a directory that differs only in the broken part loads.
#include "trace_builder.hpp"

namespace {

using namespace check_test;
using tmakit::check::TraceError;

Trace good() {
  Map m;
  Trace t;
  t.encoded(m);
  t.rec(10, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  return t;
}

// The message of the TraceError parsing these files throws ("" when none is thrown).
std::string refusal(const std::string& meta, const std::string& bin, const std::string& sites, const std::string& maps) {
  try {
    tmakit::check::parse_trace_dir(meta, bin, sites, maps);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckTraceDir, AGoodDirectoryLoads) {
  Trace t = good();
  auto d = t.parsed();
  EXPECT_EQ(d.records.size(), 1u);
  EXPECT_EQ(d.maps.size(), 1u);
  EXPECT_EQ(d.maps[0].map.global_address, Map{}.address);
  EXPECT_EQ(d.meta.block[0], 128u);
}

TEST(CheckTraceDir, MetaErrorsNameTheField) {
  Trace t = good();
  const std::string bin = t.bin(), sites = t.sites_text(), maps = t.maps_text();
  auto meta = [&](auto edit) {
    nlohmann::json j = nlohmann::json::parse(t.meta_text());
    edit(j);
    return refusal(j.dump(), bin, sites, maps);
  };
  EXPECT_EQ(refusal("{", bin, sites, maps).rfind("meta.json: is not JSON: ", 0), 0u);
  // A key twice is refused (it used to take the last value), and so is a target tmakit does not know.
  EXPECT_EQ(refusal(t.meta_text().substr(0, t.meta_text().rfind('}')) + ", \"kernel\": \"other\"}", bin, sites, maps),
            "meta.json: is not JSON: at /kernel: the key \"kernel\" appears twice in one object; write each key once");
  EXPECT_EQ(meta([](auto& j) { j["target"] = "sm_9999"; }),
            "meta.json.target: \"sm_9999\" is not a target tmakit knows (sm_90a, sm_100a, ...)");
  EXPECT_EQ(meta([](auto& j) { j["format"] = "tmakit-trace/2"; }),
            "meta.json.format: must be \"tmakit-trace/1\", got \"tmakit-trace/2\"");
  EXPECT_EQ(meta([](auto& j) { j.erase("kernel"); }), "meta.json.kernel: missing");
  EXPECT_EQ(meta([](auto& j) { j["grid"] = {1, 0, 1}; }), "meta.json.grid[1]: must be an integer in [1, 2147483647], got 0");
  EXPECT_EQ(meta([](auto& j) { j["block"] = {64, 32, 1}; }), "meta.json.block: more than 1024 threads a block");
  EXPECT_EQ(meta([](auto& j) { j["cluster"] = {4, 4, 2}; }), "meta.json.cluster: more than 16 CTAs a cluster");
  EXPECT_EQ(meta([](auto& j) { j["outcome"] = "ok"; }),
            "meta.json.outcome: must be completed, timeout, fault or launch_error, got \"ok\"");
  EXPECT_EQ(meta([](auto& j) { j["records"] = 2; }), "trace.bin: holds 1 records but meta.json.records says 2");
  EXPECT_EQ(meta([](auto& j) { j["records"] = -1; }), "meta.json.records: must be a non-negative integer, got -1");
  EXPECT_EQ(meta([](auto& j) { j["clusters_traced"] = {3, 3}; }),
            "meta.json.clusters_traced: must be [first, end) with first < end <= 4294967295, got [3,3]");
  EXPECT_EQ(meta([](auto& j) { j["clusters_traced"] = {1}; }),
            "meta.json.clusters_traced: must be [first, end) with first < end <= 4294967295, got [1]");
}

// A trace of chosen clusters (tmakit check --ctas) says which were traced and how many were not.
TEST(CheckTraceDir, ClustersTracedAreSaid) {
  Trace t = good();
  t.meta()["grid"] = {16, 1, 1};
  t.meta()["clusters_traced"] = {2, 4};
  const auto r = t.replay();
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "only clusters 2 to 3 (by linear %clusterid) were traced (tmakit check --ctas); the launch's other 14 ran untraced");
  EXPECT_TRUE(r.skipped.empty());  // a choice, not a loss: the exit status stays 0
}

TEST(CheckTraceDir, TraceBinErrorsNameTheRecord) {
  Trace t = good();
  const std::string meta = t.meta_text(), sites = t.sites_text(), maps = t.maps_text();
  std::string bin = t.bin();
  EXPECT_EQ(refusal(meta, bin.substr(0, 100), sites, maps),
            "trace.bin: 100 bytes is not a whole number of 128-byte records");
  std::string wrong_site = bin;
  wrong_site[0] = 120;  // site 120 of a table that has fewer
  EXPECT_NE(refusal(meta, wrong_site, sites, maps).find("trace.bin record 0.site: site 120 is not in sites.json"),
            std::string::npos);
  std::string wrong_op = bin;
  wrong_op[4] = 4;  // tensor_load at the site of an mbarrier.init
  EXPECT_EQ(refusal(meta, wrong_op, sites, maps),
            "trace.bin record 0.op: operation 4 but its site 0 is operation 10 (mbar_init)");
  std::string unknown_op = bin;
  unknown_op[4] = 99;
  EXPECT_EQ(refusal(meta, unknown_op, sites, maps), "trace.bin record 0.op: unknown operation code 99");
}

TEST(CheckTraceDir, SiteTableErrorsNameTheSiteAndField) {
  Trace t = good();
  const std::string meta = t.meta_text(), bin = t.bin(), maps = t.maps_text();
  auto sites = [&](auto edit) {
    nlohmann::json j = nlohmann::json::parse(t.sites_text());
    edit(j);
    return refusal(meta, bin, j.dump(), maps);
  };
  EXPECT_EQ(sites([](auto& j) { j["version"] = 2; }), "sites.json.version: must be 1, got 2");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["id"] = 5; }), "sites.json.sites[0].id: must be 0 (the site's index), got 5");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["fields"][0]["offset"] = 124; }),
            "sites.json.sites[0].fields[0]: elements at bytes [124, 132) leave the record's values [32, 128)");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["fields"][0]["offset"] = 8; }),
            "sites.json.sites[0].fields[0]: elements at bytes [8, 16) leave the record's values [32, 128)");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["fields"][0]["count"] = 100; }),
            "sites.json.sites[0].fields[0]: elements at bytes [32, 832) leave the record's values [32, 128)");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["fields"][0]["bytes"] = 3; }),
            "sites.json.sites[0].fields[0].bytes: must be 1, 2, 4 or 8, got 3");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["op_code"] = 40; }), "sites.json.sites[0].op_code: unknown operation code 40");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0].erase("text"); }), "sites.json.sites[0].text: missing");
  EXPECT_EQ(sites([](auto& j) { j["cta_barriers"] = 1; }), "sites.json.cta_barriers: must be true or false");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["warp_wide"] = 46; }), "sites.json.sites[0].warp_wide: must be an object");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["warp_wide"] = {{"ptx_line", 46}}; }),
            "sites.json.sites[0].warp_wide.text: missing");
  EXPECT_EQ(sites([](auto& j) { j["sites"][0]["op_code"] = 31; }), "sites.json.sites[0].op_code: unknown operation code 31");
  // The CTA barriers' codes (28-30) are known; a site table says whether it records them.
  EXPECT_TRUE(t.parsed().cta_barriers);
  nlohmann::json older = nlohmann::json::parse(t.sites_text());
  older.erase("cta_barriers");
  older["sites"].back()["op_code"] = 30;
  EXPECT_FALSE(tmakit::check::parse_trace_dir(meta, bin, older.dump(), maps).cta_barriers);
}

TEST(CheckTraceDir, MapLogErrorsNameTheLine) {
  Trace t = good();
  const std::string meta = t.meta_text(), bin = t.bin(), sites = t.sites_text();
  EXPECT_EQ(refusal(meta, bin, sites, t.maps_text() + "not json\n").rfind("maps.jsonl:2: is not JSON: ", 0), 0u);
  nlohmann::json line = nlohmann::json::parse(t.maps_text());
  line["descriptor"] = "abcd";
  EXPECT_EQ(refusal(meta, bin, sites, line.dump()), "maps.jsonl:1.descriptor: must be 256 hex digits (128 bytes), got 4");
  line["descriptor"] = std::string(256, 'g');
  EXPECT_EQ(refusal(meta, bin, sites, line.dump()), "maps.jsonl:1.descriptor: character 0 is not a hex digit");
  line = nlohmann::json::parse(t.maps_text());
  line["map"]["dims"] = "x";
  EXPECT_NE(refusal(meta, bin, sites, line.dump()).find("maps.jsonl:1.map: "), std::string::npos);
  // Refused encodes (no descriptor) and blank lines are no maps, and no error.
  line = nlohmann::json::parse(t.maps_text());
  line["descriptor"] = nullptr;
  EXPECT_EQ(tmakit::check::parse_trace_dir(meta, bin, sites, "\n" + line.dump() + "\n\n").maps.size(), 0u);
}

TEST(CheckTraceDir, DirectoryFiles) {
  const fs::path dir = fs::path(TMAKIT_BINARY_DIR) / "test_check_dirs";
  fs::remove_all(dir);
  EXPECT_THROW(tmakit::check::load_trace_dir(dir / "absent"), TraceError);
  fs::create_directories(dir / "empty");
  try {
    tmakit::check::load_trace_dir(dir / "empty");
    ADD_FAILURE() << "an empty directory loaded";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "meta.json: missing from " + (dir / "empty").string());
  }
  Trace t = good();
  t.write(dir / "ok");
  EXPECT_EQ(tmakit::check::load_trace_dir(dir / "ok").records.size(), 1u);
  fs::remove(dir / "ok" / "maps.jsonl");  // optional: a program that encoded no map
  EXPECT_EQ(tmakit::check::load_trace_dir(dir / "ok").maps.size(), 0u);
  fs::remove(dir / "ok" / "trace.bin");
  fs::create_directory(dir / "ok" / "trace.bin");
  try {
    tmakit::check::load_trace_dir(dir / "ok");
    ADD_FAILURE() << "a folder read as trace.bin";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "trace.bin: is not a regular file");
  }
}

}  // namespace
