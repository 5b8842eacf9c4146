// Drives the GPU engine (include/tmakit/gpu/engine.hpp) over recorded vectors
// and records fault vectors (docs/gpu-engine.md).
//
//   engine_vectors replay VECTOR.json...
//     Runs each vector's scenario on the model and on the GPU engine (one worker
//     process for the batch, replaced after a fault) and compares three ways:
//     GPU vs the bytes recorded by tools/gpu/record_vectors, model vs GPU.
//   engine_vectors faults OUTDIR PER_KIND SEED
//     Builds scenarios that break one settled hardware rule each (H9 innermost
//     coordinate × elemBytes not a multiple of 16, H14 negative store/reduce
//     start, H15 shared operand aligned to 16..112 but not 128, H7 INT64
//     and/or/xor reductions), runs them on the GPU and writes every one the
//     hardware answers with a fault as OUTDIR/<id>.json =
//     {"format": "tmakit-vector/1", "device", "hazard", "scenario", "expected_fault", "gpu_message"}.
//   engine_vectors record KIND OUTDIR [COUNT SEED]
//     KIND im2col_load, im2col_store, memcpy_async_tx, tile_load_interleave, tile_store_interleave, im2col_load_interleave, im2col_store_interleave (COUNT random cases from
//     SEED, cases.hpp) or questions (the §14 scenarios; questions:q26 only those whose
//     id starts with q26): runs them on the GPU engine and writes
//     OUTDIR/<id>.json = {"format", "device", ("question", "title",) "scenario",
//     "expected" (hex per output)} or, when the GPU faulted or hung,
//     "expected_fault" + "gpu_message"; prints how the model compares.
//     ENGINE_VECTORS_DRY=1 (no GPU): the model's answer stands in (tests the generators).
// The parent never initialises CUDA: all GPU work is in the engine's forked worker.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <optional>

#include "cases.hpp"
#include "map_json.hpp"
#include "tmakit/gpu/engine.hpp"
#include "vector_common.hpp"

using namespace tmakit;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return out;
}
// -1 when equal, else the first differing index (or the shorter size).
long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return a.size() == b.size() ? -1 : static_cast<long>(n);
}

int replay(const std::vector<std::string>& files) {
  struct Item {
    std::string name, category;
    json expected;
    scenario::Scenario s;
    std::optional<scenario::RunResult> model;
    std::string model_error;
  };
  std::vector<Item> items;
  for (const auto& f : files) {
    Item it;
    fs::path p(f);
    it.name = p.parent_path().filename().string() + "/" + p.stem().string();
    it.category = p.parent_path().filename().string();
    std::ifstream in(f);
    json j = json::parse(in);
    it.expected = j.value("expected", json::object());
    try {
      it.s = scenario::from_json(j.at("scenario"), p.parent_path());
      gpu::check_supported(it.s);
    } catch (const DiagnosticError& e) {
      std::printf("%s: not run: %s\n", it.name.c_str(), format(e.diagnostic()).c_str());
      continue;
    }
    try {
      it.model = scenario::run(it.s);
    } catch (const DiagnosticError& e) {
      it.model_error = format(e.diagnostic());
    }
    items.push_back(std::move(it));
  }
  std::vector<scenario::Scenario> batch;
  for (const auto& it : items) batch.push_back(it.s);
  std::vector<gpu::GpuOutcome> out = gpu::run(batch);

  struct Count { int n = 0, gpu_ok = 0, gpu_eq_recorded = 0, model_eq_gpu = 0; };
  std::map<std::string, Count> counts;
  std::string device;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const gpu::GpuOutcome& g = out[i];
    if (!g.device.empty()) device = g.device;
    Count& c = counts[it.category];
    ++c.n;
    if (g.kind != gpu::GpuOutcome::Kind::ok) {
      std::printf("%s: gpu %s %s: %s\n", it.name.c_str(), g.fault.c_str(), g.kind == gpu::GpuOutcome::Kind::hang ? "(hang)" : "",
                  g.message.c_str());
      continue;
    }
    ++c.gpu_ok;
    bool rec_same = true, model_same = it.model.has_value();
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const auto& [name, bytes] = g.outputs[k];
      if (it.expected.contains(name)) {
        long d = first_diff(from_hex(it.expected[name].get<std::string>()), bytes);
        if (d >= 0) {
          rec_same = false;
          std::printf("%s: output %s: gpu differs from the recorded bytes at byte %ld\n", it.name.c_str(), name.c_str(), d);
        }
      }
      if (it.model) {
        long d = first_diff(it.model->outputs[k].second, bytes);
        if (d >= 0) {
          model_same = false;
          std::printf("%s: output %s: model and gpu differ first at byte %ld\n", it.name.c_str(), name.c_str(), d);
        }
      }
    }
    if (!it.model) std::printf("%s: the model refused it: %s\n", it.name.c_str(), it.model_error.c_str());
    c.gpu_eq_recorded += rec_same;
    c.model_eq_gpu += model_same;
  }
  std::printf("device: %s\n", device.c_str());
  std::printf("%-12s %5s %7s %16s %12s\n", "category", "run", "gpu ok", "gpu = recorded", "model = gpu");
  Count total;
  for (const auto& [cat, c] : counts) {
    std::printf("%-12s %5d %7d %16d %12d\n", cat.c_str(), c.n, c.gpu_ok, c.gpu_eq_recorded, c.model_eq_gpu);
    total.n += c.n, total.gpu_ok += c.gpu_ok, total.gpu_eq_recorded += c.gpu_eq_recorded, total.model_eq_gpu += c.model_eq_gpu;
  }
  std::printf("%-12s %5d %7d %16d %12d\n", "total", total.n, total.gpu_ok, total.gpu_eq_recorded, total.model_eq_gpu);
  return total.gpu_eq_recorded == total.n && total.model_eq_gpu == total.n ? 0 : 1;
}

// ---- fault candidates ----

std::mt19937_64 rng;
int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

using tensor_map::DataType;
using tensor_map::TensorMap;

// A small dense tiled map of `t`: inner box a multiple of 16 bytes (§1.3), no swizzle
// (so that H15's 128-byte rule is the only alignment in play), rank 1..3.
TensorMap small_map(DataType t) {
  TensorMap m;
  m.encode = tensor_map::Encode::tiled;
  m.data_type = t;
  m.rank = irand(1, 3);
  const int eb = gpu_tools::elem_bytes(t), q = 16 / eb;
  m.box[0] = static_cast<uint32_t>(q * irand(1, 4));
  m.dims[0] = m.box[0] * 2 + q * irand(0, 3);
  for (int i = 1; i < m.rank; ++i) {
    m.box[i] = static_cast<uint32_t>(irand(1, 4));
    m.dims[i] = static_cast<uint64_t>(irand(4, 8));
  }
  uint64_t prev = round_up(m.dims[0] * eb, 16);
  for (int i = 0; i + 1 < m.rank; ++i) {
    m.strides[i] = prev;
    prev = m.strides[i] * m.dims[i + 1];
  }
  return m;
}
uint64_t tensor_bytes(const TensorMap& m) {
  uint64_t last = m.dims[0] * gpu_tools::elem_bytes(m.data_type);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return round_up(last, 16);
}
std::string coords_text(int rank) {
  std::string s = "{";
  for (int i = 0; i < rank; ++i) s += (i ? ", c" : "c") + std::to_string(i);
  return s + "}";
}

struct Candidate {
  std::string id, hazard;
  json scenario;
};

// One load or store/reduce of `m` at coordinates c with the box at shared offset `smem`.
json scenario_for(const TensorMap& m, const int32_t* c, uint32_t smem, const std::string& op, uint64_t seed) {
  const uint64_t footprint = m.smem_footprint();
  const uint32_t region = 1024, region_bytes = static_cast<uint32_t>(round_up(smem + footprint, 128) + 128 - region);
  json sc;
  sc["format"] = "tmakit-scenario/1";
  sc["target"] = "sm_90a";
  sc["ptx_version"] = "8.7";
  sc["shared_bytes"] = region + region_bytes;
  sc["global"] = {{"A", {{"bytes", tensor_bytes(m) + 256}, {"init", {{"random", seed}}}}}};
  sc["shared_init"] = json::array({{{"cta", 0}, {"offset", region}, {"bytes", region_bytes}, {"init", {{"random", seed + 1}}}}});
  sc["tensor_maps"] = {{"map0", gpu_tools::map_json(m, "A", 0)}};
  json sym = {{"smem", "shared:" + std::to_string(smem)}, {"mbar", "shared:0"}};
  for (int i = 0; i < m.rank; ++i) sym["c" + std::to_string(i)] = c[i];
  sc["symbols"] = sym;
  const std::string d = "." + std::to_string(m.rank) + "d";
  json prog = json::array();
  if (op == "load") {
    prog.push_back("mbarrier.init.shared::cta.b64 [mbar], 1;");
    prog.push_back("fence.mbarrier_init.release.cluster;");
    prog.push_back("mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(m.bytes_per_box()) + ";");
    prog.push_back("cp.async.bulk.tensor" + d + ".shared::cta.global.tile.mbarrier::complete_tx::bytes [smem], [map0, " +
                   coords_text(m.rank) + "], [mbar];");
    prog.push_back("mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;");
    sc["outputs"] = json::array({{{"name", "tile"}, {"shared", {{"cta", 0}, {"offset", region}, {"bytes", region_bytes}}}}});
  } else {
    prog.push_back("fence.proxy.async.shared::cta;");
    if (op == "store")
      prog.push_back("cp.async.bulk.tensor" + d + ".global.shared::cta.tile.bulk_group [map0, " + coords_text(m.rank) +
                     "], [smem];");
    else
      prog.push_back("cp.reduce.async.bulk.tensor" + d + ".global.shared::cta." + op + ".tile.bulk_group [map0, " +
                     coords_text(m.rank) + "], [smem];");
    prog.push_back("cp.async.bulk.commit_group;");
    prog.push_back("cp.async.bulk.wait_group 0;");
    sc["outputs"] = json::array({{{"name", "A"}, {"global", "A"}}});
  }
  sc["program"] = prog;
  return sc;
}

const DataType kPlain[] = {DataType::uint8,   DataType::uint16,  DataType::uint32,   DataType::int32,
                           DataType::uint64,  DataType::int64,   DataType::float16,  DataType::float32,
                           DataType::float64, DataType::bfloat16};
// Valid tensor reductions (§6.1) on types whose in-bound coordinates are easy to pick.
const std::pair<const char*, DataType> kReductions[] = {
    {"add", DataType::uint32}, {"add", DataType::int32}, {"add", DataType::float32}, {"min", DataType::int32},
    {"max", DataType::uint64}, {"and", DataType::uint32}, {"inc", DataType::uint32}, {"add", DataType::float16}};

std::vector<Candidate> candidates(int per_kind, uint64_t seed) {
  std::vector<Candidate> out;
  auto add = [&](const std::string& hazard, int i, json sc) {
    char id[32];
    std::snprintf(id, sizeof id, "%s_%02d", hazard.c_str(), i);
    for (char& ch : id) ch = static_cast<char>(std::tolower(ch));
    out.push_back({id, hazard, std::move(sc)});
  };
  for (int i = 0; i < per_kind; ++i) {  // H9: c[0] × elemBytes not a multiple of 16 (loads; a few stores)
    rng.seed(seed * 7919 + i);
    DataType t = kPlain[irand(0, 9)];
    if (gpu_tools::elem_bytes(t) == 16) t = DataType::uint8;
    TensorMap m = small_map(t);
    const int q = 16 / gpu_tools::elem_bytes(t);
    int32_t c[5] = {q * irand(0, 2) + irand(1, q - 1), 0, 0, 0, 0};
    for (int k = 1; k < m.rank; ++k) c[k] = irand(0, 2);
    add("H9", i, scenario_for(m, c, 1024, i % 4 == 3 ? "store" : "load", seed + i));
  }
  for (int i = 0; i < per_kind; ++i) {  // H14: a negative start coordinate on a store or reduction
    rng.seed(seed * 104729 + i);
    const bool reduce = i % 2 == 1;
    auto [op, t] = kReductions[irand(0, 7)];
    if (!reduce) t = kPlain[irand(0, 9)];
    TensorMap m = small_map(t);
    const int q = 16 / gpu_tools::elem_bytes(t);
    int32_t c[5] = {q * irand(0, 1), 0, 0, 0, 0};
    for (int k = 1; k < m.rank; ++k) c[k] = irand(0, 2);
    const int d = irand(0, m.rank - 1);
    c[d] = d == 0 ? -q * irand(1, 2) : -irand(1, 3);
    add("H14", i, scenario_for(m, c, 1024, reduce ? op : "store", seed + 100 + i));
  }
  for (int i = 0; i < per_kind; ++i) {  // H15: shared operand 16..112 bytes past a 128-byte boundary
    rng.seed(seed * 1299709 + i);
    DataType t = kPlain[irand(0, 9)];
    TensorMap m = small_map(t);
    int32_t c[5] = {0, 0, 0, 0, 0};
    static const uint32_t offs[] = {16, 32, 48, 64, 80, 96, 112};
    const uint32_t smem = 1024 + 128 * irand(0, 3) + offs[i % 7];
    add("H15", i, scenario_for(m, c, smem, i % 3 == 2 ? "store" : "load", seed + 200 + i));
  }
  for (int i = 0; i < per_kind; ++i) {  // H7: .and/.or/.xor on an INT64 map
    rng.seed(seed * 15485863 + i);
    TensorMap m = small_map(DataType::int64);
    int32_t c[5] = {2 * irand(0, 1), 0, 0, 0, 0};
    for (int k = 1; k < m.rank; ++k) c[k] = irand(0, 2);
    static const char* ops[] = {"and", "or", "xor"};
    add("H7", i, scenario_for(m, c, 1024, ops[i % 3], seed + 300 + i));
  }
  return out;
}

int faults(const std::string& outdir, int per_kind, uint64_t seed) {
  std::vector<Candidate> cs = candidates(per_kind, seed);
  std::vector<scenario::Scenario> batch;
  for (const auto& c : cs) batch.push_back(scenario::from_json(c.scenario, "."));
  std::vector<gpu::GpuOutcome> out = gpu::run(batch);
  fs::create_directories(outdir);
  std::map<std::string, std::map<std::string, int>> table;  // hazard -> outcome -> count
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto& g = out[i];
    std::string model = "model accepted it";
    try {
      scenario::run(batch[i]);
    } catch (const DiagnosticError& e) {
      model = "model: [" + e.diagnostic().rule + "]";
    }
    const std::string verdict = g.kind == gpu::GpuOutcome::Kind::ok ? "no fault" : g.fault;
    ++table[cs[i].hazard][verdict];
    std::printf("%s: gpu %s; %s\n", cs[i].id.c_str(), verdict.c_str(), model.c_str());
    // ENGINE_VECTORS_DRY=1 (no GPU): write every candidate with the fault §0 predicts,
    // to check the generator against tests/scenario/test_fault_vectors.cpp.
    const bool dry = std::getenv("ENGINE_VECTORS_DRY") != nullptr;
    if (g.kind != gpu::GpuOutcome::Kind::fault && !dry) continue;
    const std::string fault = dry ? (cs[i].hazard == "H15" ? "misaligned-address" : "illegal-instruction") : g.fault;
    json v = {{"format", "tmakit-vector/1"}, {"device", dry ? "dry run" : g.device}, {"hazard", cs[i].hazard},
              {"scenario", cs[i].scenario}, {"expected_fault", fault}, {"gpu_message", g.message}};
    std::ofstream(fs::path(outdir) / (cs[i].id + ".json")) << v.dump(1) << "\n";
  }
  for (const auto& [hazard, verdicts] : table)
    for (const auto& [verdict, n] : verdicts) std::printf("summary %s: %s x%d\n", hazard.c_str(), verdict.c_str(), n);
  return 0;
}

std::string hex_of(const std::vector<uint8_t>& b) { return gpu_tools::hex(b); }

int record(const std::string& kind, const std::string& outdir, int count, uint64_t seed) {
  std::vector<gpu_tools::Case> cases;
  if (kind == "questions") cases = gpu_tools::question_cases();
  else if (kind.starts_with("questions:")) {  // questions:q26 records the cases whose id starts with q26
    for (auto& c : gpu_tools::question_cases())
      if (c.id.starts_with(kind.substr(10))) cases.push_back(std::move(c));
  } else if (kind == "tile_load_interleave") cases = gpu_tools::interleave_load_cases(count, seed);
  else if (kind == "tile_store_interleave") cases = gpu_tools::interleave_store_cases(count, seed);
  else if (kind == "im2col_load_interleave") cases = gpu_tools::interleave_im2col_load_cases(count, seed);
  else if (kind == "im2col_store_interleave") cases = gpu_tools::interleave_im2col_store_cases(count, seed);
  else if (kind == "im2col_load") cases = gpu_tools::im2col_load_cases(count, seed);
  else if (kind == "im2col_store") cases = gpu_tools::im2col_store_cases(count, seed);
  else if (kind == "memcpy_async_tx") cases = gpu_tools::memcpy_async_tx_cases(count, seed);
  else {
    std::fprintf(stderr, "record: unknown kind %s (im2col_load, im2col_store, memcpy_async_tx, tile_load_interleave, tile_store_interleave, im2col_load_interleave, im2col_store_interleave, questions, questions:PREFIX)\n", kind.c_str());
    return 2;
  }
  const bool dry = std::getenv("ENGINE_VECTORS_DRY") != nullptr;
  struct Item {
    const gpu_tools::Case* c;
    scenario::Scenario s;
    std::optional<scenario::RunResult> model;
    std::string model_rule;
  };
  std::vector<Item> items;
  for (const auto& c : cases) {
    Item it{&c, {}, {}, {}};
    try {
      it.s = scenario::from_json(c.scenario, ".");
      gpu::check_supported(it.s);
    } catch (const DiagnosticError& e) {
      std::printf("%s: not run: %s\n", c.id.c_str(), format(e.diagnostic()).c_str());
      continue;
    }
    try {
      it.model = scenario::run(it.s);
    } catch (const DiagnosticError& e) {
      it.model_rule = e.diagnostic().rule + ": " + e.diagnostic().message;
    }
    items.push_back(std::move(it));
  }
  std::vector<gpu::GpuOutcome> out;
  if (dry) {
    for (const auto& it : items) {
      gpu::GpuOutcome g;
      g.device = "dry run (the model's bytes)";
      if (it.model) g.kind = gpu::GpuOutcome::Kind::ok, g.outputs = it.model->outputs;
      else g.kind = gpu::GpuOutcome::Kind::fault, g.fault = "dry-run-model-refused", g.message = it.model_rule;
      out.push_back(g);
    }
  } else {
    std::vector<scenario::Scenario> batch;
    for (const auto& it : items) batch.push_back(it.s);
    out = gpu::run(batch);
  }
  fs::create_directories(outdir);
  std::map<std::string, int> tally;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const gpu::GpuOutcome& g = out[i];
    json v = {{"format", "tmakit-vector/1"}, {"device", g.device}};
    if (!it.c->question.empty()) v["question"] = it.c->question, v["title"] = it.c->title;
    v["scenario"] = it.c->scenario;
    std::string gpu_says, model_says;
    if (g.kind == gpu::GpuOutcome::Kind::ok) {
      json expected = json::object();
      for (const auto& [name, bytes] : g.outputs) expected[name] = hex_of(bytes);
      v["expected"] = expected;
      gpu_says = "ok";
      if (!it.model) {
        model_says = "model refused: " + it.model_rule;
      } else {
        long d = -1;
        std::string where;
        for (size_t k = 0; k < g.outputs.size() && d < 0; ++k)
          if ((d = first_diff(it.model->outputs[k].second, g.outputs[k].second)) >= 0) where = g.outputs[k].first;
        model_says = d < 0 ? "model agrees" : "model differs: output " + where + " byte " + std::to_string(d);
      }
    } else {
      const std::string fault = g.kind == gpu::GpuOutcome::Kind::hang ? "hang"
                                : g.kind == gpu::GpuOutcome::Kind::driver_refused ? "driver-refused"
                                : g.kind == gpu::GpuOutcome::Kind::error ? "error" : g.fault;
      v["expected_fault"] = fault;
      v["gpu_message"] = g.message;
      gpu_says = fault;
      model_says = it.model ? "model ran it" : "model refused: " + it.model_rule;
    }
    ++tally[gpu_says + " / " + model_says.substr(0, model_says.find(':'))];
    std::printf("%s: gpu %s; %s\n", it.c->id.c_str(), gpu_says.c_str(), model_says.c_str());
    std::ofstream(fs::path(outdir) / (it.c->id + ".json")) << v.dump(1) << "\n";
  }
  for (const auto& [k, n] : tally) std::printf("summary %s: %s x%d\n", kind.c_str(), k.c_str(), n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "replay" && argc > 2) return replay(std::vector<std::string>(argv + 2, argv + argc));
  if (cmd == "faults" && argc == 5) return faults(argv[2], std::atoi(argv[3]), std::strtoull(argv[4], nullptr, 0));
  if (cmd == "record" && (argc == 4 || argc == 6))
    return record(argv[2], argv[3], argc == 6 ? std::atoi(argv[4]) : 0, argc == 6 ? std::strtoull(argv[5], nullptr, 0) : 0);
  std::fprintf(stderr, "usage: %s replay VECTOR.json... | faults OUTDIR PER_KIND SEED | record KIND OUTDIR [COUNT SEED]\n",
               argv[0]);
  return 2;
}
