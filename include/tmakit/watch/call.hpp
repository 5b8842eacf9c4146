// One tensor-map call of a watched program (docs/watch.md): what the program
// passed, what the library could read of it, the validator's findings next to the
// driver's verdict, and the JSON Lines record and the message that explain it.
// This part is plain C++ with no hooks, so that it is tested directly; the
// preload library (src/watch/hooks.cpp) fills it in from the real calls.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tmakit/diag.hpp"
#include "tmakit/spec/target.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::watch {

// The driver calls the library sees (the tensor-map calls of the CUDA 13 driver).
enum class Entry : uint8_t { encode_tiled, encode_im2col, encode_im2col_wide, replace_address };
std::string_view entry_name(Entry);  // "cuTensorMapEncodeTiled", ...

// How the program reached the driver's function: a call to the exported symbol
// (linked against libcuda), a pointer from dlsym (Triton's launcher), a pointer
// from cuGetProcAddress, or a pointer the CUDA runtime handed out through
// cudaGetDriverEntryPoint (the runtime asks the driver's cuGetProcAddress for
// cuGetProcAddress itself and uses that: the library tells it by this nesting).
enum class Via : uint8_t { linked, dlsym, get_proc_address, runtime };
std::string_view via_name(Via);  // "linked", "dlsym", "cuGetProcAddress", "cudaGetDriverEntryPoint"

// The arguments exactly as passed (pointers not yet read; enums as the raw ints).
struct EncodeArgs {
  Entry entry = Entry::encode_tiled;
  const void* tensor_map = nullptr;
  int data_type = 0;
  uint32_t rank = 0;
  const void* global_address = nullptr;
  const uint64_t* dims = nullptr;
  const uint64_t* strides = nullptr;
  const uint32_t* box = nullptr;              // tiled
  const uint32_t* element_strides = nullptr;
  const int* lower = nullptr;                 // im2col
  const int* upper = nullptr;
  int lower_w = 0, upper_w = 0;               // im2col_wide
  uint32_t channels = 0, pixels = 0;          // im2col, im2col_wide
  int interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0, mode = 0;
};

// Copies n bytes from the program's memory; false when they cannot be read
// (the default reader asks the kernel, so a bad pointer never faults the program).
using MemoryReader = bool (*)(void* dst, const void* src, size_t n);
bool read_program_memory(void* dst, const void* src, size_t n);
// A plain copy, for memory known to be readable: after the driver accepted a call it
// has read every array the call needs and written the descriptor (no system call).
bool read_known_memory(void* dst, const void* src, size_t n);

// What could be read of the arguments. `map` is empty when an argument is null,
// unreadable or an enum the driver does not define; `problems` then says which
// (watch.* rules, docs/watch.md), and `raw` keeps the values as passed.
struct Capture {
  std::optional<tensor_map::TensorMap> map;
  Diagnostics problems;
  nlohmann::json raw = nlohmann::json::object();
};
Capture capture(const EncodeArgs& args, MemoryReader read = read_program_memory);

// What in the arguments could crash the driver itself, said before it is called
// (no memory is read: pointers and the rank only); empty when nothing does.
std::string crash_risk(const EncodeArgs& args);

// cuTensorMapReplaceAddress: the map the descriptor was encoded from (when the
// library saw that encode), with the new address; else only the address is checked.
Capture capture_replace(const std::optional<tensor_map::TensorMap>& known, const void* tensor_map,
                        const void* global_address);

// The watch's own rules, about the arguments rather than the map (docs/watch.md).
struct WatchRule {
  std::string_view id;
  std::string_view summary;
};
std::span<const WatchRule> watch_rules();

// The validator's findings against the driver's answer.
enum class Verdict : uint8_t {
  ok,                     // accepted, nothing to say
  flagged,                // accepted, but the validator warns (a fault, a hang or lost bytes ahead)
  explained,              // refused, and the validator names the rule(s)
  unexplained_refusal,    // refused, and the validator finds no driver rule broken: a tmakit bug
  accepted_against_rule,  // accepted, though the validator says the driver refuses it: a tmakit bug
  driver_error,           // another driver error (not initialised, no entry point): not about the map
};
std::string_view verdict_name(Verdict);
bool is_disagreement(Verdict v);

struct Judgement {
  Verdict verdict = Verdict::ok;
  Diagnostics findings;       // argument problems, then the validator's diagnostics (notes included)
  bool strict_refused = false;  // --strict turned an accepted call into CUDA_ERROR_INVALID_VALUE
};
// `driver_result` is the driver's CUresult. Under `strict`, an accepted call with an
// error or warning finding is refused (returned as CUDA_ERROR_INVALID_VALUE).
Judgement judge(const Capture& c, int driver_result, const spec::Target& target, bool strict);
// True when the finding's rule is one the driver enforces (it refuses such maps).
bool driver_enforced(const Diagnostic& d);

// Everything one record of the log holds.
struct CallRecord {
  uint64_t index = 0;  // calls of this process, from 0
  int pid = 0;
  long thread = 0;
  std::string time;    // UTC, ISO 8601 with microseconds
  Entry entry = Entry::encode_tiled;
  Via via = Via::linked;
  uint64_t tensor_map_address = 0;
  Capture capture;
  Judgement judgement;
  int driver_result = 0;
  std::string driver_name;  // "CUDA_ERROR_INVALID_VALUE"
  int returned = 0;         // what the program got back (differs only under --strict)
  std::string target;       // "sm_90a"
  std::optional<std::array<uint8_t, 128>> descriptor;  // the 128 bytes written, when the call succeeded
  nlohmann::json call_site = nlohmann::json::object();
};

// One JSON Lines record ("kind": "call"), as one line without its newline; its
// "map" reads back with tensor_map::map_from_json (tmakit map/layout --from-log).
// `judged` (judged_fields of an earlier call with the same map and verdict) and
// `call_site` (JSON text) stand in for r's own when given: the log of a program
// that encodes the same maps again and again reuses their text.
std::string to_line(const CallRecord& r, const std::string& judged = {}, const std::string& call_site = {});
// The fields that depend on the map and the verdict only ("map", "findings", "verdict", ...).
std::string judged_fields(const CallRecord& r);
nlohmann::json to_json(const CallRecord& r);  // to_line, parsed
// The message for stderr: a refusal, a flag or a disagreement, with the call site,
// the map as JSON and every finding; empty when there is nothing to say.
std::string explain(const CallRecord& r, std::string_view log_path);
// "CUDA_ERROR_INVALID_VALUE" for the results the driver's tensor-map calls return.
std::string_view result_name(int result);

}  // namespace tmakit::watch
