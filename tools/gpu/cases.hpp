// Scenario generators for `engine_vectors record` (docs/hardware-notes.md): random
// im2col loads and stores/reductions (im2col_cases.cpp), interleaved tiled loads
// (interleave_cases.cpp), libcu++ bulk copies (memcpy_cases.cpp) and the §14 question
// scenarios (question_cases.cpp). Each case is a scenario (scenario-format.md)
// that the GPU engine runs; engine_vectors writes the hardware's answer next to it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::gpu_tools {

struct Case {
  std::string id;        // file stem
  std::string question;  // "Q13" etc. (question cases only)
  std::string title;     // what the case asks (question cases only)
  nlohmann::json scenario;
};

std::vector<Case> im2col_load_cases(int count, uint64_t seed);
std::vector<Case> im2col_store_cases(int count, uint64_t seed);
std::vector<Case> question_cases();
// Random interleaved tiled loads (interleave_cases.cpp, Q26).
std::vector<Case> interleave_load_cases(int count, uint64_t seed);
// Random interleaved tiled stores (60%) and reductions (40%) (interleave_cases.cpp, Q26).
std::vector<Case> interleave_store_cases(int count, uint64_t seed);
// Random interleaved im2col loads (interleave_cases.cpp, Q26 item 9).
std::vector<Case> interleave_im2col_load_cases(int count, uint64_t seed);
// Random interleaved .im2col_no_offs stores and reductions (interleave_cases.cpp).
std::vector<Case> interleave_im2col_store_cases(int count, uint64_t seed);
// Random libcu++ memcpy_async_tx / barrier_arrive_tx / cuda::barrier programs, mixed with
// tensor loads on the same barrier (memcpy_cases.cpp, seed page 004, §12).
std::vector<Case> memcpy_async_tx_cases(int count, uint64_t seed);
// The 13 unpacked data types, in the order the generators cycle through them.
inline constexpr tensor_map::DataType kPlainTypes[] = {
    tensor_map::DataType::uint8,       tensor_map::DataType::uint16,   tensor_map::DataType::uint32,
    tensor_map::DataType::int32,       tensor_map::DataType::uint64,   tensor_map::DataType::int64,
    tensor_map::DataType::float16,     tensor_map::DataType::float32,  tensor_map::DataType::float64,
    tensor_map::DataType::bfloat16,    tensor_map::DataType::float32_ftz, tensor_map::DataType::tfloat32,
    tensor_map::DataType::tfloat32_ftz};
// (op, map type) pairs of the random reductions: every op of §6.1 over the types it takes.
struct RedPair {
  const char* op;
  tensor_map::DataType t;
};
inline constexpr RedPair kRed[] = {
    {"add", tensor_map::DataType::uint32},   {"add", tensor_map::DataType::int32},
    {"add", tensor_map::DataType::uint64},   {"add", tensor_map::DataType::float32},
    {"add", tensor_map::DataType::float32_ftz}, {"add", tensor_map::DataType::float16},
    {"add", tensor_map::DataType::bfloat16}, {"min", tensor_map::DataType::int32},
    {"max", tensor_map::DataType::uint32},   {"min", tensor_map::DataType::int64},
    {"max", tensor_map::DataType::float16},  {"min", tensor_map::DataType::bfloat16},
    {"inc", tensor_map::DataType::uint32},   {"dec", tensor_map::DataType::uint32},
    {"and", tensor_map::DataType::uint32},   {"or", tensor_map::DataType::uint64},
    {"xor", tensor_map::DataType::int32}};
// The random draws of the generators; numbered_cases seeds the engine per case.
inline std::mt19937_64& case_rng() {
  static std::mt19937_64 rng;
  return rng;
}
inline int irand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(case_rng()); }
inline bool chance(double p) { return std::bernoulli_distribution(p)(case_rng()); }
// Cases 0..count-1 with ids "0000".., each drawn by make(i, case seed) after case_rng()
// is seeded for that case alone (so one case reproduces on its own).
std::vector<Case> numbered_cases(int count, uint64_t seed, Case (*make)(int, uint64_t));

// A scenario under construction: one global allocation per add_global, shared
// regions, symbols and steps, in the JSON form of scenario-format.md.
class ScenarioJson {
 public:
  explicit ScenarioJson(uint32_t shared_bytes, int ctas = 1);
  void add_global(const std::string& name, uint64_t bytes, nlohmann::json init);
  void add_map(const std::string& name, const tensor_map::TensorMap& m, const std::string& global, uint64_t offset = 0);
  void add_shared_init(int cta, uint32_t offset, uint32_t bytes, nlohmann::json init);
  void sym(const std::string& name, nlohmann::json v) { j_["symbols"][name] = std::move(v); }
  void step(const std::string& ptx) { j_["program"].push_back(ptx); }
  void step(int cta, int thread, const std::string& ptx) {
    j_["program"].push_back({{"cta", cta}, {"thread", thread}, {"ptx", ptx}});
  }
  void out_shared(const std::string& name, int cta, uint32_t offset, uint32_t bytes);
  void out_global(const std::string& name, const std::string& global);
  nlohmann::json json() const { return j_; }

 private:
  nlohmann::json j_;
};

// "{c0, c1, ...}" for symbols named PREFIX0.. (coordinates) or literal values.
std::string coord_list(const std::vector<int64_t>& v);
std::string dim_suffix(int rank);  // ".3d"
// The mbarrier program of a one-CTA load: init, fence, arrive.expect_tx(tx), COPY, try_wait.
void load_steps(ScenarioJson& s, const std::string& copy, uint64_t tx, const std::string& mbar = "mbar");

}  // namespace tmakit::gpu_tools
