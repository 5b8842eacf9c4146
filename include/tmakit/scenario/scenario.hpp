// Scenario files (shared/spec/scenario-format.md): JSON ⇄ Scenario, and the
// runner that executes one on the reference model.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tmakit/diag.hpp"
#include "tmakit/files.hpp"
#include "tmakit/model/libcudacxx.hpp"
#include "tmakit/spec/target.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace tmakit::scenario {

// Unusable input (files.hpp): `tmakit run` exits 2. Program errors (undefined behaviour,
// invalid maps, deadlocks) are plain DiagnosticErrors: exit 1.
using tmakit::InputError;

struct Init {
  enum class Kind { zero, file, byte, hex, random } kind = Kind::zero;
  std::vector<uint8_t> bytes;  // file and hex contents
  uint8_t byte = 0;
  uint64_t seed = 0;
  // Fill `out` as the scenario format says (random: splitmix64 of SEED + i/8).
  void fill(std::span<uint8_t> out) const;
};

struct GlobalAlloc {
  std::string name;
  uint64_t bytes = 0, align = 256;
  Init init;
};

struct SharedInit {
  int cta = 0;
  uint64_t offset = 0, bytes = 0;
  Init init;
};

struct Step {
  std::string ptx;                   // empty for a libcu++ call
  std::optional<model::LibCall> call;  // {"call": "cuda::device::memcpy_async_tx", ...}
  int cta = 0, thread = 0;
};

struct Output {
  std::string name;
  bool shared = false;
  int cta = 0;
  std::string global;
  uint64_t offset = 0, bytes = 0;  // global: bytes 0 = the whole allocation
};

struct Scenario {
  spec::Target target{90, spec::Suffix::a};
  spec::PtxVersion ptx_version = spec::kNewestPtx;
  int ctas = 1;
  uint32_t shared_bytes = 232448;
  std::vector<GlobalAlloc> globals;
  std::vector<SharedInit> shared_init;
  std::vector<std::pair<std::string, tensor_map::MapSource>> maps;
  std::vector<std::pair<std::string, nlohmann::json>> symbols;
  std::vector<Step> program;
  std::vector<Output> outputs;
};

uint64_t splitmix64(uint64_t x);

// A symbol's value as the scenario writes it (scenario-format.md `symbols`): an
// integer, "shared:OFF", "shared@R:OFF" or "global:NAME+OFF". The engines turn
// it into their own addresses. Throws InputError naming `where`.
struct SymbolValue {
  enum class Kind { integer, shared, cluster, global } kind = Kind::integer;
  int64_t v = 0;       // integer, shared offset, or offset into the allocation
  int rank = 0;        // cluster: the CTA rank
  std::string global;  // global: the allocation's name (it exists)
};
SymbolValue parse_symbol(const nlohmann::json& v, const std::string& where, const Scenario& s);

struct LoadOptions {
  // `init: {"file": F}` reads F only inside the scenario's folder (symlinks resolved,
  // no absolute paths, no `..` out of it); true lifts that (tmakit run
  // --allow-files-anywhere). Either way only regular files of the region's size are read.
  bool files_anywhere = false;
  // Whether a refusal may suggest --allow-files-anywhere: false for a command without
  // that flag (tmakit layout --scenario).
  bool offer_files_anywhere = true;
};

using tmakit::read_regular_file;  // files.hpp

// An output name as `outputs[].name` allows it: letters, digits and . _ -, not
// starting with "." (the file written is NAME.bin; docs/security.md).
bool portable_name(std::string_view name);

// Throws InputError naming the field ("scenario.global.A.init: ..."). `dir` is the
// folder `init` files are read from (and confined to); empty: the current folder.
Scenario from_json(const nlohmann::json& j, const std::filesystem::path& dir, const LoadOptions& options = {});
Scenario load_file(const std::filesystem::path& file, const LoadOptions& options = {});

struct RunOptions {
  std::optional<uint64_t> seed;
  std::function<void(const std::string&)> trace;
  std::optional<spec::Target> target;
  std::optional<spec::PtxVersion> ptx_version;
};

struct RunResult {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
  Diagnostics warnings;
};

// Runs on the reference model (resolved first: scenario/program.hpp). Throws
// DiagnosticError for a program error.
RunResult run(const Scenario& s, const RunOptions& opts = {});

}  // namespace tmakit::scenario
