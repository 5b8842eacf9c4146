// Reading a map from a JSON file and flags (map_input.hpp).
#include "map_input.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

namespace tmakit::cli {
namespace {

using nlohmann::json;

// JSON key ← flag, so that a structural error found while reading names the flag.
const std::map<std::string, std::string> kFlagOf{
    {"encode", "--encode"},        {"data_type", "--type"},          {"dims", "--dims"},
    {"strides", "--strides"},      {"box", "--box"},                 {"element_strides", "--element-strides"},
    {"swizzle", "--swizzle"},      {"interleave", "--interleave"},   {"l2_promotion", "--l2"},
    {"oob_fill", "--fill"},        {"global_address", "--address"},  {"pixel_box_lower", "--lower"},
    {"pixel_box_upper", "--upper"}, {"channels_per_pixel", "--channels"}, {"pixels_per_column", "--pixels"},
    {"pixel_box_lower_w", "--lower-w"}, {"pixel_box_upper_w", "--upper-w"}, {"mode", "--mode"}};

// Flags override (or supply) the keys of the map object.
void apply_flags(const MapInput& o, json& j) {
  auto set = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  auto set_list = [&](const char* key, const auto& v) {
    if (!v.empty()) j[key] = v;
  };
  set("encode", o.encode);
  set("data_type", o.type);
  set("swizzle", o.swizzle);
  set("interleave", o.interleave);
  set("l2_promotion", o.l2);
  set("oob_fill", o.fill);
  set("global_address", o.address);
  set("mode", o.mode);
  set("channels_per_pixel", o.channels);
  set("pixels_per_column", o.pixels);
  set("pixel_box_lower_w", o.lower_w);
  set("pixel_box_upper_w", o.upper_w);
  set_list("dims", o.dims);
  set_list("strides", o.strides);
  set_list("box", o.box);
  set_list("element_strides", o.element_strides);
  set_list("pixel_box_lower", o.lower);
  set_list("pixel_box_upper", o.upper);
}

}  // namespace

void add_map_input(CLI::App* cmd, MapInput& o) {
  cmd->add_option("file", o.file, "JSON file holding one map object (the scenario's tensor_maps form)");
  cmd->add_option("--encode", o.encode, "tiled (default), im2col or im2col_wide");
  cmd->add_option("--type", o.type, "data type: uint8 ... float32 ... 16u6_align16b");
  cmd->add_option("--dims", o.dims, "global dims in elements, dimension 0 first: 512,512")->delimiter(',');
  cmd->add_option("--strides", o.strides, "byte strides of dimensions 1..rank-1: 2048")->delimiter(',');
  cmd->add_option("--box", o.box, "box dims in elements: 32,16")->delimiter(',');
  cmd->add_option("--element-strides", o.element_strides, "traversal strides (default 1 each)")->delimiter(',');
  cmd->add_option("--swizzle", o.swizzle, "none 32b 64b 128b 128b_atom_32b 128b_atom_32b_flip_8b 128b_atom_64b");
  cmd->add_option("--interleave", o.interleave, "none 16b 32b");
  cmd->add_option("--l2", o.l2, "L2 promotion: none 64b 128b 256b");
  cmd->add_option("--fill", o.fill, "OOB fill: none nan_request_zero_fma");
  cmd->add_option("--address", o.address, "global address (decimal or 0x hex)");
  cmd->add_option("--lower", o.lower, "im2col pixel_box_lower, W first")->delimiter(',');
  cmd->add_option("--upper", o.upper, "im2col pixel_box_upper, W first")->delimiter(',');
  cmd->add_option("--channels", o.channels, "im2col channels_per_pixel");
  cmd->add_option("--pixels", o.pixels, "im2col pixels_per_column");
  cmd->add_option("--lower-w", o.lower_w, "im2col_wide pixel_box_lower_w");
  cmd->add_option("--upper-w", o.upper_w, "im2col_wide pixel_box_upper_w");
  cmd->add_option("--mode", o.mode, "im2col_wide mode: w or w128");
}

std::optional<tensor_map::MapSource> read_map_input(const MapInput& o, const std::string& command) {
  json j = json::object();
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      fmt::print(stderr, "{}: error: cannot read the file\n", o.file);
      return std::nullopt;
    }
    try {
      j = json::parse(text.str());
    } catch (const json::exception& e) {
      fmt::print(stderr, "{}: error: malformed JSON: {} [json.syntax]\n", o.file, e.what());
      return std::nullopt;
    }
    if (!j.is_object()) {
      fmt::print(stderr, "{}: error: the file must hold one tensor-map object, got {} [json.type]\n", o.file,
                 j.type_name());
      return std::nullopt;
    }
  }
  apply_flags(o, j);
  if (j.empty()) {
    fmt::print(stderr, "{}: error: give a map file or flags (--type, --dims, --strides, --box, ...)\n", command);
    return std::nullopt;
  }
  try {
    return tensor_map::map_from_json(j, "");
  } catch (const DiagnosticError& e) {
    Diagnostic d = e.diagnostic();
    std::string key = d.where.substr(0, d.where.find('['));
    if (o.file.empty() && kFlagOf.count(key)) d.where = kFlagOf.at(key) + d.where.substr(key.size());
    else if (!o.file.empty()) d.where = o.file + (d.where.empty() ? "" : ": " + d.where);
    fmt::print(stderr, "{}\n", format(d));
    return std::nullopt;
  }
}

}  // namespace tmakit::cli
