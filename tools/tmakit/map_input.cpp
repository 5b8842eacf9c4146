// Reading a map from a JSON file and flags (map_input.hpp).
#include "map_input.hpp"

#include <fmt/format.h>

#include <map>

#include "call_log.hpp"
#include "numbers.hpp"
#include "tmakit/files.hpp"
#include "tmakit/tensor_map/json_input.hpp"
#include "tmakit/terminal_text.hpp"

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

// A map file holds one small JSON object; 1 MiB bounds what a wrong path can cost.
constexpr uint64_t kMaxMapFileBytes = uint64_t{1} << 20;

// Flags override (or supply) the keys of the map object. Numbers are converted
// exactly, in the range of the field they set (throws DiagnosticError).
void apply_flags(const MapInput& o, json& j) {
  auto set = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  auto set_list = [&](const char* key, const auto& v) {
    if (!v.empty()) j[key] = v;
  };
  set("encode", o.encode);
  set("data_type", o.type);
  // A byte count alone names its mode, as in Python: --swizzle 128 is 128b (docs/tensor-maps.md).
  auto bytes_name = [](const auto& v) {
    auto out = v;
    if (out && !out->empty() && out->find_first_not_of("0123456789") == std::string::npos) *out += "b";
    return out;
  };
  set("swizzle", bytes_name(o.swizzle));
  set("interleave", bytes_name(o.interleave));
  set("l2_promotion", bytes_name(o.l2));
  set("oob_fill", o.fill);
  set("global_address", o.address);
  set("mode", o.mode);
  set("channels_per_pixel", parse_integer<uint32_t>("--channels", o.channels));
  set("pixels_per_column", parse_integer<uint32_t>("--pixels", o.pixels));
  set("pixel_box_lower_w", parse_integer<int32_t>("--lower-w", o.lower_w));
  set("pixel_box_upper_w", parse_integer<int32_t>("--upper-w", o.upper_w));
  set_list("dims", parse_integers<uint64_t>("--dims", o.dims));
  set_list("strides", parse_integers<uint64_t>("--strides", o.strides));
  set_list("box", parse_integers<uint32_t>("--box", o.box));
  set_list("element_strides", parse_integers<uint32_t>("--element-strides", o.element_strides));
  set_list("pixel_box_lower", parse_integers<int32_t>("--lower", o.lower));
  set_list("pixel_box_upper", parse_integers<int32_t>("--upper", o.upper));
}

// The map object of the file or the logged call, before flags; nullopt after a
// message (unusable input).
std::optional<json> base_object(const MapInput& o) {
  if (!o.log.empty()) {
    if (!o.file.empty()) {
      fmt::print(stderr, "--from-log: error: give either a map file or --from-log, not both [cli.options]\n");
      return std::nullopt;
    }
    const std::optional<uint64_t> index = log_index(o);
    if (!index) {
      fmt::print(stderr, "--from-log: error: give --index N to choose the call of {} [cli.options]\n", o.log);
      return std::nullopt;
    }
    const LoggedCall call = select_call(o.log, *index, log_pid(o));
    if (call.map.is_null()) {
      fmt::print(stderr, "{}: error: call {} of pid {} has no map: its arguments could not be read: {} "
                 "[log.map-unreadable]\n", terminal_safe(call.where), call.index, call.pid, terminal_safe(call.map_error));
      return std::nullopt;
    }
    return call.map;
  }
  if (o.file.empty()) return json::object();
  const std::vector<uint8_t> text =
      read_regular_file(o.file, std::nullopt, kMaxMapFileBytes, o.file, "map file", "cli.file");
  json j;
  try {
    j = parse_json_input(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  } catch (const JsonInputError& e) {
    fmt::print(stderr, "{}: error: malformed JSON: {} [json.syntax]\n", terminal_safe(o.file), terminal_safe(e.what()));
    return std::nullopt;
  }
  if (!j.is_object()) {
    fmt::print(stderr, "{}: error: the file must hold one tensor-map object, got {} [json.type]\n", o.file,
               j.type_name());
    return std::nullopt;
  }
  return j;
}

}  // namespace

void add_map_input(CLI::App* cmd, MapInput& o) {
  cmd->add_option("file", o.file, "JSON file holding one map object (the scenario's tensor_maps form)");
  cmd->add_option("--encode", o.encode, "tiled (default), im2col or im2col_wide");
  cmd->add_option("--type", o.type, "data type: uint8 ... float32 ... 16u6_align16b");
  cmd->add_option("--dims", o.dims, "global dims in elements, dimension 0 first: 512,512");
  cmd->add_option("--strides", o.strides, "byte strides of dimensions 1..rank-1: 2048");
  cmd->add_option("--box", o.box, "box dims in elements: 32,16");
  cmd->add_option("--element-strides", o.element_strides, "traversal strides (default 1 each)");
  cmd->add_option("--swizzle", o.swizzle, "none 32b 64b 128b 128b_atom_32b 128b_atom_32b_flip_8b 128b_atom_64b");
  cmd->add_option("--interleave", o.interleave, "none 16b 32b");
  cmd->add_option("--l2", o.l2, "L2 promotion: none 64b 128b 256b");
  cmd->add_option("--fill", o.fill, "OOB fill: none nan_request_zero_fma");
  cmd->add_option("--address", o.address, "global address (decimal or 0x hex)");
  cmd->add_option("--lower", o.lower, "im2col pixel_box_lower, W first");
  cmd->add_option("--upper", o.upper, "im2col pixel_box_upper, W first");
  cmd->add_option("--channels", o.channels, "im2col channels_per_pixel");
  cmd->add_option("--pixels", o.pixels, "im2col pixels_per_column");
  cmd->add_option("--lower-w", o.lower_w, "im2col_wide pixel_box_lower_w");
  cmd->add_option("--upper-w", o.upper_w, "im2col_wide pixel_box_upper_w");
  cmd->add_option("--mode", o.mode, "im2col_wide mode: w or w128");
  cmd->add_option("--from-log", o.log, "a JSON Lines log of `tmakit watch`: the map of the call --index selects");
  cmd->add_option("--index", o.index, "with --from-log: the call's index (its number in its process)");
  cmd->add_option("--pid", o.pid, "with --from-log: the process, when calls of several share the index");
}

bool MapInput::has_flags() const {
  return encode || type || swizzle || interleave || l2 || fill || address || mode || channels || pixels || lower_w ||
         upper_w || !dims.empty() || !strides.empty() || !box.empty() || !element_strides.empty() || !lower.empty() ||
         !upper.empty();
}

std::optional<uint64_t> log_index(const MapInput& o) { return parse_integer<uint64_t>("--index", o.index); }
std::optional<int64_t> log_pid(const MapInput& o) { return parse_integer<int64_t>("--pid", o.pid); }

std::optional<tensor_map::MapSource> read_map_input(const MapInput& o, const std::string& command) {
  json j;
  try {
    std::optional<json> base = base_object(o);
    if (!base) return std::nullopt;
    j = std::move(*base);
    apply_flags(o, j);
  } catch (const DiagnosticError& e) {  // a bad number, an unreadable file or log line
    fmt::print(stderr, "{}\n", format(e.diagnostic()));
    return std::nullopt;
  }
  if (j.empty()) {
    fmt::print(stderr, "{}: error: give a map file, --from-log or flags (--type, --dims, --strides, --box, ...)\n",
               command);
    return std::nullopt;
  }
  try {
    return tensor_map::map_from_json(j, "");
  } catch (const DiagnosticError& e) {
    Diagnostic d = e.diagnostic();
    std::string key = d.where.substr(0, d.where.find('['));
    const std::string source = o.log.empty() ? o.file : o.log + " (call " + *o.index + ")";
    if (source.empty() && kFlagOf.count(key)) d.where = kFlagOf.at(key) + d.where.substr(key.size());
    else if (!source.empty()) d.where = source + (d.where.empty() ? "" : ": " + d.where);
    fmt::print(stderr, "{}\n", format(d));
    return std::nullopt;
  }
}

}  // namespace tmakit::cli
