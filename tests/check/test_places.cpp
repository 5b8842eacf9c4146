// Where findings are placed (docs/check-replay.md, "Places"): in tests/check/kernels/inlined.ptx
// (nvcc 13's PTX of inlined.cu) every bulk-copy and barrier instruction is inlined from CCCL's
// cuda::ptx headers through the user's helpers; a finding lands at the user's line that called
// cuda::ptx, with the header's line and the outer calls as notes. The user's lines are found
// here in inlined.cu by the text of each call. Site tables written before chains were recorded
// still load, and a broken chain is refused by name.
#include <functional>

#include "trace_builder.hpp"

namespace {

using namespace check_test;

constexpr int64_t kMapAddr = 0x7f1100000000;
const std::string kUser = "/tmp/src/inlined.cu";  // where inlined.ptx was compiled
const std::string kHeaders = "/usr/local/cuda-13.0/include/cccl/cuda/__ptx/instructions/generated/";

// "FILE:LINE:COL" of the one line of inlined.cu that holds `call`, at its first character.
std::string user_place(const std::string& call) {
  std::istringstream in(read(fs::path(TMAKIT_SOURCE_DIR) / "tests/check/kernels/inlined.cu"));
  std::string l, found;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find(call) != std::string::npos)
      found = kUser + ":" + std::to_string(n) + ":" + std::to_string(l.find_first_not_of(' ') + 1);
  EXPECT_FALSE(found.empty()) << call;
  return found;
}

std::string place(const tmakit::check::Finding& f) {
  return f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column);
}

// Thread 0: init, fence, arm with `expect` bytes, and load one box of `m` to `dst`.
Trace& produce_inlined(Trace& t, const Map& m, int64_t expect, int64_t dst = kBuf) {
  t.rec_at(t.site_with("mbarrier.init"), 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec_at(t.site_with("fence.mbarrier_init"), 0, 0, {});
  t.rec_at(t.site_with("mbarrier.arrive.expect_tx"), 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {expect}}});
  const uint32_t load = t.site_with("cp.async.bulk.tensor");
  t.map_bytes_at(load, 0, 0, m.descriptor());
  t.rec_at(load, 0, 0, {{"dstMem", {dst}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}});
  return t;
}

// The copy's shared destination 64 bytes off its 128-byte alignment: tensor.smem-align at the copy.
Trace misaligned_copy() {
  Map m;
  Trace t("inlined.ptx");
  t.encoded(m);
  produce_inlined(t, m, m.box_bytes(), /*dst=*/64);
  return t;
}

// The trace replayed with its site table changed by `edit`.
tmakit::check::Report replay_edited(Trace& t, const std::function<void(nlohmann::json&)>& edit) {
  auto sites = nlohmann::json::parse(t.sites_text());
  edit(sites);
  return tmakit::check::replay(tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), sites.dump(), t.maps_text()));
}

// The notes of frames after the text report's first finding (the report's own notes follow them).
std::vector<std::string> notes_after_first(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  std::getline(in, l);
  while (std::getline(in, l) && (l.rfind("note: inlined from ", 0) == 0 || l.rfind("note: called from ", 0) == 0 ||
                                 l.rfind("note: … ", 0) == 0))
    out.push_back(l);
  return out;
}

TEST(CheckPlaces, AHangInCudaPtxIsReportedAtTheUsersLine) {
  Map m;
  Trace t("inlined.ptx");
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  produce_inlined(t, m, m.box_bytes() - 16);
  t.rec_at(t.site_with("mbarrier.try_wait"), 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  const auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.hang"}) << tmakit::check::to_text(r);
  const auto& f = r.findings[0];
  // The user's wait loop, not mbarrier_try_wait_parity.h: wait_for's line that calls cuda::ptx.
  const std::string loop = user_place("while (!ptx::mbarrier_try_wait_parity(");
  EXPECT_EQ(place(f), loop);
  ASSERT_EQ(f.frames.size(), 3u);
  EXPECT_EQ(f.frame, 1u);
  EXPECT_EQ(f.frames[0].file, kHeaders + "mbarrier_try_wait_parity.h");
  const std::string text = tmakit::check::to_text(r);
  EXPECT_EQ(text.rfind(loop + ": error: ", 0), 0u) << text;
  EXPECT_EQ(notes_after_first(text),
            (std::vector<std::string>{
                "note: inlined from " + kHeaders + "mbarrier_try_wait_parity.h:26:13 (bool cuda::ptx::mbarrier_try_wait_parity<void>(…))",
                "note: called from " + user_place("wait_for(&bar, 0)")}))
      << text;
  // The messages that name a site use the same place (the hang's explanation names the waiter).
  const std::string loop_line = loop.substr(0, loop.rfind(':'));
  EXPECT_NE(r.outcome_explained.find("at " + loop_line), std::string::npos) << r.outcome_explained;
  EXPECT_EQ(r.outcome_explained.find(".h:"), std::string::npos) << r.outcome_explained;
}

TEST(CheckPlaces, AMisalignedCopyIsReportedAtTheHelpersLineWithItsCallers) {
  Trace t = misaligned_copy();
  const auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"tensor.smem-align"}) << tmakit::check::to_text(r);
  const auto& f = r.findings[0];
  EXPECT_EQ(place(f), user_place("ptx::cp_async_bulk_tensor("));
  const std::string text = tmakit::check::to_text(r);
  const auto notes = notes_after_first(text);
  ASSERT_EQ(notes.size(), 3u) << text;
  EXPECT_EQ(notes[0].rfind("note: inlined from " + kHeaders + "cp_async_bulk_tensor.h:209:13 (cuda::ptx::cp_async_bulk_tensor", 0),
            0u) << notes[0];
  EXPECT_EQ(notes[1], "note: called from " + user_place("load_tile(dst, map, x, 0") +
                          " (stage(void*, void const*, int, unsigned long*, unsigned int))");
  EXPECT_EQ(notes[2], "note: called from " + user_place("stage(tile, &map"));
  // JSON: the place, and every frame with whether it is a library's.
  const auto j = tmakit::check::to_json(r)["findings"][0];
  EXPECT_EQ(j["file"], kUser);
  EXPECT_EQ(j["frame"], 1);
  ASSERT_EQ(j["frames"].size(), 4u);
  std::vector<bool> library;
  for (const auto& x : j["frames"]) library.push_back(x["library"]);
  EXPECT_EQ(library, (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(j["frames"][0]["file"], kHeaders + "cp_async_bulk_tensor.h");
  EXPECT_EQ(j["frames"][1]["function"], "_Z9load_tilePvPKviiPm");  // as nvcc names it
  EXPECT_FALSE(j["frames"][3].contains("function"));               // the kernel's own line
}

// Past four library frames inside the user's line, the middle ones are counted, not listed.
TEST(CheckPlaces, DeepLibraryChainsAreShortenedInTheText) {
  Trace t = misaligned_copy();
  const auto r = replay_edited(t, [&](nlohmann::json& sites) {
    auto& chain = sites["sites"][t.site_with("cp.async.bulk.tensor")]["inlined_at"];
    for (int k = 5; k >= 1; --k) {  // five CuTe frames between the header and the user's helper
      const nlohmann::json frame = {{"file", "/opt/cutlass/include/cute/level" + std::to_string(k) + ".hpp"},
                                    {"line", k}, {"column", 1}};
      chain.insert(chain.begin(), frame);
    }
  });
  ASSERT_EQ(rules(r), std::vector<std::string>{"tensor.smem-align"});
  EXPECT_EQ(r.findings[0].frame, 6u);
  EXPECT_EQ(place(r.findings[0]), user_place("ptx::cp_async_bulk_tensor("));
  const auto notes = notes_after_first(tmakit::check::to_text(r));
  ASSERT_EQ(notes.size(), 7u);
  EXPECT_NE(notes[0].find("cp_async_bulk_tensor.h:209:13"), std::string::npos) << notes[0];
  EXPECT_EQ(notes[1], "note: inlined from /opt/cutlass/include/cute/level1.hpp:1:1");
  EXPECT_EQ(notes[2], "note: … 2 more inlined frames (the JSON report lists every frame)");
  EXPECT_EQ(notes[3], "note: inlined from /opt/cutlass/include/cute/level4.hpp:4:1");
  EXPECT_EQ(notes[4], "note: inlined from /opt/cutlass/include/cute/level5.hpp:5:1");
  EXPECT_EQ(tmakit::check::to_json(r)["findings"][0]["frames"].size(), 9u);
}

// A site table from before inlining chains (no inlined_at, no inlined_functions, as the recorded
// vectors of tests/vectors/check hold) loads; its findings stay at the innermost .loc.
TEST(CheckPlaces, SiteTablesWithoutChainsStillLoad) {
  Trace t = misaligned_copy();
  const auto r = replay_edited(t, [](nlohmann::json& sites) {
    EXPECT_TRUE(sites.contains("inlined_functions"));
    sites.erase("inlined_functions");
    for (auto& s : sites["sites"]) {
      s.erase("inlined_at");
      if (s.contains("loc")) s["loc"].erase("function");
    }
  });
  ASSERT_EQ(rules(r), std::vector<std::string>{"tensor.smem-align"});
  EXPECT_EQ(place(r.findings[0]), kHeaders + "cp_async_bulk_tensor.h:209:13");
  EXPECT_EQ(r.findings[0].frames.size(), 1u);
  EXPECT_TRUE(notes_after_first(tmakit::check::to_text(r)).empty());
}

TEST(CheckPlaces, BrokenChainsAreRefusedByName) {
  Trace t("inlined.ptx");
  const uint32_t load = t.site_with("cp.async.bulk.tensor");
  const std::string at = "sites.json.sites[" + std::to_string(load) + "]";
  auto expect_refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& message) {
    auto sites = nlohmann::json::parse(t.sites_text());
    edit(sites);
    try {
      tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), sites.dump(), "");
      ADD_FAILURE() << "accepted: " << message;
    } catch (const tmakit::check::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_refused([&](auto& j) { j["sites"][load]["inlined_at"][0]["function"] = 99; },
                 at + ".inlined_at[0].function: 99 is not an index of inlined_functions");
  expect_refused([&](auto& j) { j["sites"][load]["loc"]["function"] = -1; },
                 at + ".loc.function: must be a non-negative integer");
  expect_refused([&](auto& j) { j["sites"][load].erase("loc"); }, at + ".inlined_at: needs a loc");
  expect_refused([&](auto& j) { j["sites"][load]["inlined_at"] = "k.cu:3"; }, at + ".inlined_at: must be an array");
  expect_refused([&](auto& j) { j["sites"][load]["inlined_at"][1].erase("line"); }, at + ".inlined_at[1].line: missing");
  expect_refused(
      [&](auto& j) {
        auto& chain = j["sites"][load]["inlined_at"];
        while (chain.size() < tmakit::instrument::kMaxFrames) chain.push_back(chain.back());
      },
      at + ".inlined_at: must be an array of at most 63 frames");
  expect_refused([&](auto& j) { j["inlined_functions"][0] = 7; }, "sites.json.inlined_functions[0]: must be a string");
}

}  // namespace
