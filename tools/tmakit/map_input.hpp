// A tensor map given on the command line: a JSON file (the scenario's
// tensor_maps form) and/or flags that override its keys. Shared by `tmakit map`
// and `tmakit layout`, so both read maps alike and name the flag at fault.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tmakit/tensor_map/json.hpp"

namespace tmakit::cli {

struct MapInput {
  std::string file;
  std::optional<std::string> encode, type, swizzle, interleave, l2, fill, address, mode;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box, element_strides;
  std::vector<int32_t> lower, upper;
  std::optional<uint32_t> channels, pixels;
  std::optional<int32_t> lower_w, upper_w;
};

// The positional map file and the map flags (--type, --dims, ...).
void add_map_input(CLI::App* cmd, MapInput& in);

// The map, or nullopt after printing a located message to stderr (unusable
// input: exit 2). `command` names the subcommand in messages ("tmakit map").
std::optional<tensor_map::MapSource> read_map_input(const MapInput& in, const std::string& command);

}  // namespace tmakit::cli
