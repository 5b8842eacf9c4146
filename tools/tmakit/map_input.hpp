// A tensor map given on the command line: a JSON file (the scenario's
// tensor_maps form), a call recorded by `tmakit watch` (--from-log), and/or flags
// that override its keys. Shared by `tmakit map` and `tmakit layout`, so both
// read maps alike and name the flag at fault.
#pragma once
#include <cstdint>
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tmakit/tensor_map/json.hpp"

namespace tmakit::cli {

struct MapInput {
  std::string file;
  std::optional<std::string> encode, type, swizzle, interleave, l2, fill, address, mode;
  // Numbers as typed: read_map_input converts them exactly (numbers.hpp).
  std::vector<std::string> dims, strides, box, element_strides, lower, upper;
  std::optional<std::string> channels, pixels, lower_w, upper_w;
  // --from-log FILE [--index N] [--pid P]: a map recorded by `tmakit watch`.
  std::string log;
  std::optional<std::string> index, pid;

  bool has_flags() const;  // any map flag (--type, --dims, ...) given
};

// The positional map file, the map flags (--type, --dims, ...) and --from-log.
void add_map_input(CLI::App* cmd, MapInput& in);

// The map, or nullopt after printing a located message to stderr (unusable
// input: exit 2). `command` names the subcommand in messages ("tmakit map").
// With --from-log it is the call --index selects, the flags overriding its keys.
std::optional<tensor_map::MapSource> read_map_input(const MapInput& in, const std::string& command);

// --index and --pid, checked (throws DiagnosticError, rule cli.number).
std::optional<uint64_t> log_index(const MapInput& in);
std::optional<int64_t> log_pid(const MapInput& in);

}  // namespace tmakit::cli
