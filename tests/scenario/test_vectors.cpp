// Recorded hardware vectors (tests/vectors/<category>/*.json): each is a scenario
// plus the bytes an H100 produced for its outputs. The model must agree byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

void replay(const std::string& category, size_t at_least) {
  fs::path dir = fs::path(TMAKIT_SOURCE_DIR) / "tests" / "vectors" / category;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), at_least);
  size_t agreed = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    auto j = nlohmann::json::parse(in);
    ASSERT_EQ(j.at("format"), "tmakit-vector/1") << f;
    scenario::RunResult r;
    try {
      r = scenario::run(scenario::from_json(j.at("scenario"), f.parent_path()));
    } catch (const DiagnosticError& e) {
      ADD_FAILURE() << f.filename() << ": the model refused a case the hardware ran: " << e.what();
      continue;
    }
    bool all = true;
    for (const auto& [name, bytes] : r.outputs) {
      auto want = from_hex(j.at("expected").at(name).get<std::string>());
      ASSERT_EQ(want.size(), bytes.size()) << f.filename() << " output " << name;
      for (size_t i = 0; i < want.size(); ++i)
        if (want[i] != bytes[i]) {
          ADD_FAILURE() << f.filename() << " output " << name << ": first difference at byte " << i << ": hardware 0x"
                        << std::hex << int(want[i]) << ", model 0x" << int(bytes[i]) << std::dec;
          all = false;
          break;
        }
    }
    agreed += all;
  }
  EXPECT_EQ(agreed, files.size());
  std::printf("%s: %zu of %zu hardware vectors agree byte for byte\n", category.c_str(), agreed, files.size());
}

}  // namespace

TEST(HardwareVectors, TileLoad) { replay("tile_load", 600); }
TEST(HardwareVectors, TileStore) { replay("tile_store", 250); }
TEST(HardwareVectors, TileReduce) { replay("tile_reduce", 300); }
TEST(HardwareVectors, BulkCopy) { replay("bulk_copy", 100); }
TEST(HardwareVectors, Multicast) { replay("multicast", 100); }
// im2col loads (ranks 3-5, every plain type, .shared::cta/.shared::cluster/hinted/multicast)
// and .im2col_no_offs stores and reductions, recorded through the GPU engine.
TEST(HardwareVectors, Im2colLoad) { replay("im2col_load", 150); }
TEST(HardwareVectors, Im2colStore) { replay("im2col_store", 60); }
// Interleaved (16B / 32B) tiled loads, ranks 3-5, every plain type and swizzle (Q26).
TEST(HardwareVectors, TileLoadInterleave) { replay("tile_load_interleave", 100); }
// Interleaved tiled stores (60%) and reductions (40%, every op of §6.1), the same maps.
TEST(HardwareVectors, TileStoreInterleave) { replay("tile_store_interleave", 100); }
// Interleaved im2col loads: one slice per row, the walk over C (in slices), W (and H) (Q26 item 9).
TEST(HardwareVectors, Im2colLoadInterleave) { replay("im2col_load_interleave", 80); }
// Interleaved .im2col_no_offs stores and reductions: the load walk with offsets 0, whole slices.
TEST(HardwareVectors, Im2colStoreInterleave) { replay("im2col_store_interleave", 60); }
// libcu++'s memcpy_async_tx / barrier_arrive_tx / cuda::barrier, run on the H100 through the
// real <cuda/barrier> calls (engine_vectors record memcpy_async_tx), mixed with tensor loads.
TEST(HardwareVectors, MemcpyAsyncTx) { replay("memcpy_async_tx", 100); }
