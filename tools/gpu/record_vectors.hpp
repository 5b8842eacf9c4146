// Internal to tools/gpu: what record_vectors.cu (the kernels, the launch of one case, main) and
// record_vector_cases.cpp (the random case generators) share.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "map_json.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools::record {

using namespace tmakit;
using namespace tmakit::gpu_tools;
using tensor_map::DataType;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;
using nlohmann::json;

enum Kind : int { kTileLoad, kTileStore, kTileReduce, kBulkLoad, kBulkStore, kMcastTile, kMcastBulk };

struct Job {
  int kind = 0;
  int form = 0;  // loads: 0 shared::cta, 1 shared::cluster, 2 shared::cluster + L2::cache_hint
  int32_t c[5] = {};
  uint32_t region_off = 0, region_bytes = 0;  // pre-filled and output shared region (window offsets)
  uint32_t data_off = 0;                      // box / bulk shared operand
  uint32_t bar_off = 0;
  uint32_t tx_bytes = 0;
  uint32_t bulk_size = 0;
  const uint8_t* gsrc = nullptr;
  uint8_t* gdst = nullptr;
  uint16_t mask = 0;
  const uint8_t* prefill = nullptr;  // region_bytes per CTA
  uint8_t* out = nullptr;            // region_bytes per CTA
};

inline const char* kOpNames[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};

inline std::mt19937_64 rng;  // seeded per case by main
inline int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
inline uint64_t urand64() { return rng(); }
inline bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
inline uint32_t round_up(uint64_t v, uint64_t a) { return uint32_t((v + a - 1) / a * a); }

// What one case needs besides the Job: its map, allocation, scenario text.
struct Case {
  std::string category, id;
  bool has_map = false;
  TensorMap map;        // global_address holds the offset into A until launch
  uint64_t map_offset = 0;
  std::vector<uint8_t> global;  // initial contents of A
  json global_init;             // {"random": S} or {"hex": ...}
  std::vector<uint8_t> prefill;  // per CTA
  json shared_init;
  int ctas = 1;
  int op = 0;
  uint32_t shared_bytes = 0;
  json symbols = json::object();
  json program = json::array();
  bool output_global = false;
  Job job;
  // reference checks (empty = none)
  std::vector<uint8_t> want;
};

inline json step(int cta, const std::string& ptx) { return json{{"cta", cta}, {"thread", 0}, {"ptx", ptx}}; }

inline std::string coords_text(int rank) {
  std::string s = "{";
  for (int i = 0; i < rank; ++i) s += (i ? ", c" : "c") + std::to_string(i);
  return s + "}";
}
inline std::string dim(int rank) { return "." + std::to_string(rank) + "d"; }

// The generators (record_vector_cases.cpp): one random valid case of each category.
Case make_tile_load(int idx, uint64_t seed);
Case make_tile_store(int idx, uint64_t seed, bool reduce);
Case make_bulk(int idx, uint64_t seed);
Case make_multicast(int idx, uint64_t seed);

}  // namespace tmakit::gpu_tools::record
