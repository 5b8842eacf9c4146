// A tensor map in the scenario format's `tensor_maps` form (scenario-format.md).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {

struct MapSource {
  TensorMap map;
  std::string global;   // the allocation named by "global" (empty when "global_address" was given)
  uint64_t offset = 0;  // "offset" into that allocation
};

// Reads the JSON object; throws DiagnosticError naming `where` + field for
// malformed input (wrong types, unknown names, unknown keys, too many dims).
// The map's global_address is `offset` (the caller adds the allocation's base).
MapSource map_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json map_to_json(const TensorMap& map);

}  // namespace tmakit::tensor_map
