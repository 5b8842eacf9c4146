// Every site of every real compiler's module the corpus holds (nvcc, NVRTC, Triton, CuTe DSL;
// tests/corpus, the modules ptxas accepts) decodes: one record a site, each in a cluster of its
// own, replayed. Its operands are zero (tensor operations get an encoded map's bytes), so the
// model may refuse many; what must never happen is a site the replay cannot read (its text not
// parsing, an operand with no field in the record).
#include "trace_builder.hpp"

namespace {

using namespace check_test;

std::vector<std::pair<std::string, std::string>> accepted_modules() {  // file, target
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(read(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/verdicts.jsonl"));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["ptxas"] == 0) out.push_back({j["file"], j["target"]});
  }
  return out;
}

TEST(CheckCorpus, EverySiteOfEveryCorpusModuleDecodes) {
  const auto modules = accepted_modules();
  ASSERT_GE(modules.size(), 40u);
  size_t sites = 0, replayed = 0;
  std::map<std::string, int> rules;
  for (const auto& [file, target] : modules) {
    SCOPED_TRACE(file);
    const auto text = read(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus" / file);
    const auto inst = tmakit::instrument::instrument_module(text, file);
    ASSERT_EQ(inst.status, 0);
    const Map m;
    std::string records;
    uint32_t cluster = 0;
    auto put = [&](Record r) {
      r.clusterid_x = cluster;
      records.append(reinterpret_cast<const char*>(&r), sizeof r);
    };
    for (const Site& s : inst.sites) {
      const auto op = static_cast<uint16_t>(s.op);
      if (op >= 4 && op <= 7)  // a tensor operation: its map's bytes first
        for (uint16_t half = 0; half < 2; ++half) {
          Record c{};
          c.site = s.id;
          c.op = static_cast<uint16_t>(25 + half);
          std::memcpy(c.values, m.descriptor().data() + 64 * half, 64);
          put(c);
        }
      Record r{};
      r.site = s.id;
      r.op = op;
      r.flags = 1;
      put(r);
      ++cluster;
    }
    sites += inst.sites.size();
    nlohmann::json meta = {{"format", "tmakit-trace/1"}, {"kernel", file}, {"grid", {1, 1, 1}},
                           {"block", {128, 1, 1}}, {"outcome", "completed"}, {"records", records.size() / 128},
                           {"target", target}};
    std::string hex;
    for (uint8_t b : m.descriptor()) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
    const nlohmann::json line = {{"map", m.json()}, {"descriptor", hex}};
    auto trace = tmakit::check::parse_trace_dir(meta.dump(), records, tmakit::instrument::sites_json(inst.sites),
                                                line.dump());
    tmakit::check::ReplayOptions all;
    all.max_clusters = 1 << 20;
    auto report = tmakit::check::replay(trace, all);
    EXPECT_EQ(report.clusters_replayed, static_cast<int>(inst.sites.size()));
    for (const std::string& note : report.notes) {
      EXPECT_EQ(note.find("does not parse"), std::string::npos) << note;
      EXPECT_EQ(note.find("holds no value"), std::string::npos) << note;
      EXPECT_EQ(note.find("has no coordinates"), std::string::npos) << note;
    }
    // Rules that would mean the decoder built the instruction wrong: a symbol it did not set,
    // a value of the wrong kind, an address in the wrong space, a form the target lacks.
    for (const auto& f : report.findings)
      for (const char* wrong : {"check.map-unknown", "model.unknown-symbol", "model.operand", "model.address-space",
                                "model.internal", "ptx."})
        EXPECT_NE(f.rule.rfind(wrong, 0), 0u) << f.rule << ": " << f.message;
    replayed += report.replayed;
    for (const auto& f : report.findings) rules[f.rule] += f.count;
  }
  std::printf("%zu sites of %zu corpus modules decoded, %zu replayed on the model\n", sites, modules.size(), replayed);
  EXPECT_GT(sites, 300u);
  for (auto& [k, v] : rules) std::printf("%6d %s\n", v, k.c_str());  // what zero operands make the model say
  EXPECT_GT(replayed, 1000u);
}

}  // namespace
