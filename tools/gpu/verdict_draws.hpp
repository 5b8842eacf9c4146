// What the two modes of record_driver_verdicts share (record_driver_verdicts.cpp: the
// general sets; im2col_verdicts.cpp: the im2col and im2col_wide sets): one seeded
// generator, the draw helpers, the valid-map and break-one-rule draws, and the writer
// that encodes each set with the driver and writes it as one JSON line.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "map_json.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::gpu_tools::verdicts {

using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::Interleave;
using tensor_map::L2Promotion;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;
using tensor_map::WideMode;

inline constexpr uint64_t kMaxBoxBytes = 233472;  // H17: one instruction delivers at most 228 KiB
inline constexpr uint64_t kTwo32 = 1ull << 32;    // §1.3 globalDim upper bound (inclusive)
inline constexpr uint64_t kTwo40 = 1ull << 40;    // §1.3 stride upper bound (exclusive)

// One generator for the whole run: every set follows from the seed alone.
inline std::mt19937_64 rng;
inline uint64_t base_address = 0;  // a real device allocation, 1024-aligned

inline uint64_t urand(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); }
inline int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
inline bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
inline uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline int span_of(tensor_map::Swizzle s) {
  switch (s) {
    case tensor_map::Swizzle::b32: return 32;
    case tensor_map::Swizzle::b64: return 64;
    case tensor_map::Swizzle::none: return 0;
    default: return 128;
  }
}

// §1.4: the corners of an im2col map share 16 bits between the spatial dimensions.
inline int corner_limit(int rank) { return rank == 3 ? 32768 : (rank == 4 ? 128 : 16); }

// The bytes the recorder keeps under the 233,472-byte limit (the ceil reading, H17).
uint64_t box_bytes(const tensor_map::TensorMap& m);
// Global dims and strides, strides multiples of `align` (H17 oddities included).
void random_extents(tensor_map::TensorMap& m, uint64_t align);
// Shrinks outer box dims until the map fits the 233,472-byte limit.
void fit_box_limit(tensor_map::TensorMap& m);
// A valid tiled map within the box limit.
tensor_map::TensorMap valid_tiled();
// A map whose box is exactly at (over = false) or one row past (over = true) the byte limit.
tensor_map::TensorMap limit_case(bool over);
// A valid im2col map (§1.4); with `interleave`, interleave 16b/32b in a quarter of the draws.
tensor_map::TensorMap valid_im2col(bool interleave = false);
// Breaks exactly one rule (0..18) of a valid map; returns the rule's id, or "" when the
// rule does not apply to the map (the caller draws again).
std::string break_one(tensor_map::TensorMap& m, int rule);
constexpr int kRules = 19;

// Encodes each set with the driver (or not, in a dry run) and writes it as one line:
// the map in the scenario `tensor_maps` form plus "driver" and "intended_rule".
class Recorder {
 public:
  Recorder(const char* path, bool dry) : out_(path), dry_(dry) {}
  bool ok() const { return out_.good(); }
  void emit(const tensor_map::TensorMap& m, const std::string& rule);
  int written() const { return written_; }
  // The per-rule tally (sets, refused) on stdout, headed by `what`.
  void print_tally(const char* what, const char* path) const;

 private:
  std::ofstream out_;
  bool dry_;
  int written_ = 0;
  std::map<std::string, std::pair<int, int>> tally_;  // rule -> (sets, refused)
};

// The im2col mode: COUNT_IM2COL im2col and COUNT_WIDE im2col_wide sets (im2col_verdicts.cpp).
void record_im2col(Recorder& rec, int count_im2col, int count_wide);

}  // namespace tmakit::gpu_tools::verdicts
