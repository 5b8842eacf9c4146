// A trace directory read back (docs/check-replay.md): meta.json, trace.bin, sites.json and
// maps.jsonl, each checked before anything is replayed. Every error names the file, the record
// or line, and the field; whatever the input, memory and time stay bounded (the caps of
// replay.hpp, every field's offset checked against the 128-byte record).
#include <cstring>
#include <fstream>

#include "decode.hpp"  // detail::who: a record's linear %tid
#include "tmakit/check/replay.hpp"
#include "tmakit/tensor_map/json.hpp"
#include "tmakit/tensor_map/json_input.hpp"
#include "tmakit/spec/target.hpp"
#include "tmakit/terminal_text.hpp"

namespace tmakit::check {
namespace {

using nlohmann::json;
using instrument::TraceOp;

[[noreturn]] void bad(const std::string& where, const std::string& what) { throw TraceError(where + ": " + what); }

const json& field(const json& o, const char* key, const std::string& where) {
  if (!o.is_object()) bad(where, "must be a JSON object");
  auto it = o.find(key);
  if (it == o.end()) bad(where + "." + key, "missing");
  return *it;
}

uint64_t unsigned_field(const json& o, const char* key, const std::string& where, uint64_t max) {
  const json& v = field(o, key, where);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    bad(where + "." + key, "must be a non-negative integer, got " + v.dump());
  uint64_t x = v.get<uint64_t>();
  if (x > max) bad(where + "." + key, std::to_string(x) + " is above the limit " + std::to_string(max));
  return x;
}

std::string string_field(const json& o, const char* key, const std::string& where) {
  const json& v = field(o, key, where);
  if (!v.is_string()) bad(where + "." + key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

// [x, y, z] with each in [1, max].
std::array<uint32_t, 3> triple(const json& o, const char* key, const std::string& where, uint32_t max) {
  const json& v = field(o, key, where);
  if (!v.is_array() || v.size() != 3) bad(where + "." + key, "must be an array of 3 integers, got " + v.dump());
  std::array<uint32_t, 3> out{};
  for (int i = 0; i < 3; ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 1 || v[i].get<int64_t>() > max)
      bad(where + "." + key + "[" + std::to_string(i) + "]",
          "must be an integer in [1, " + std::to_string(max) + "], got " + v[i].dump());
    out[i] = v[i].get<uint32_t>();
  }
  return out;
}

json parse_json(std::string_view text, const std::string& file) {
  try {
    return parse_json_input(text);
  } catch (const JsonInputError& e) {
    bad(file, std::string("is not JSON: ") + e.what());
  }
}

LaunchMeta parse_meta(std::string_view text) {
  const std::string w = "meta.json";
  json j = parse_json(text, w);
  if (!j.is_object()) bad(w, "must be a JSON object");
  if (string_field(j, "format", w) != "tmakit-trace/1")
    bad(w + ".format", "must be \"tmakit-trace/1\", got " + j["format"].dump());
  LaunchMeta m;
  m.kernel = string_field(j, "kernel", w);
  m.grid = triple(j, "grid", w, 0x7fffffff);
  m.block = triple(j, "block", w, 1024);
  if (uint64_t{m.block[0]} * m.block[1] * m.block[2] > 1024)
    bad(w + ".block", "more than 1024 threads a block");
  m.cluster = j.contains("cluster") ? triple(j, "cluster", w, 16) : std::array<uint32_t, 3>{1, 1, 1};
  if (m.cluster[0] * m.cluster[1] * m.cluster[2] > 16) bad(w + ".cluster", "more than 16 CTAs a cluster");
  m.dynamic_smem = j.contains("dynamic_smem") ? unsigned_field(j, "dynamic_smem", w, 1u << 30) : 0;
  m.outcome = string_field(j, "outcome", w);
  if (m.outcome != "completed" && m.outcome != "timeout" && m.outcome != "fault" && m.outcome != "launch_error")
    bad(w + ".outcome", "must be completed, timeout, fault or launch_error, got \"" + m.outcome + "\"");
  m.driver_result = j.contains("driver_result") ? string_field(j, "driver_result", w) : "";
  m.records = unsigned_field(j, "records", w, kMaxRecords);
  if (j.contains("next") && !j["next"].is_null()) m.next = unsigned_field(j, "next", w, UINT64_MAX);
  m.capacity = j.contains("capacity") ? unsigned_field(j, "capacity", w, UINT64_MAX) : m.records;
  if (j.contains("clusters_traced")) {
    const json& c = j["clusters_traced"];
    if (!c.is_array() || c.size() != 2 || !c[0].is_number_unsigned() || !c[1].is_number_unsigned() ||
        c[0].get<uint64_t>() >= c[1].get<uint64_t>() || c[1].get<uint64_t>() > UINT32_MAX)
      bad(w + ".clusters_traced", "must be [first, end) with first < end <= 4294967295, got " + terminal_clip(c.dump(), 60));
    m.clusters_traced = std::array<uint32_t, 2>{c[0].get<uint32_t>(), c[1].get<uint32_t>()};
  }
  if (j.contains("dropped")) m.dropped = unsigned_field(j, "dropped", w, UINT64_MAX);
  if (j.contains("records_lost")) m.records_lost = string_field(j, "records_lost", w);
  if (j.contains("timeout_s")) {
    if (!j["timeout_s"].is_number()) bad(w + ".timeout_s", "must be a number, got " + j["timeout_s"].dump());
    m.timeout_s = j["timeout_s"].get<double>();
  }
  if (j.contains("target")) {
    m.target = string_field(j, "target", w);
    if (!spec::parse_target(m.target))
      bad(w + ".target", "\"" + terminal_clip(m.target, 40) + "\" is not a target tmakit knows (sm_90a, sm_100a, ...)");
  }
  return m;
}

instrument::Field parse_field(const json& f, const std::string& where) {
  instrument::Field out;
  out.name = string_field(f, "name", where);
  out.offset = static_cast<uint32_t>(unsigned_field(f, "offset", where, instrument::kRecordBytes));
  out.stride = static_cast<uint32_t>(unsigned_field(f, "stride", where, instrument::kRecordBytes));
  out.bytes = static_cast<uint32_t>(unsigned_field(f, "bytes", where, 8));
  out.count = static_cast<uint32_t>(unsigned_field(f, "count", where, instrument::kRecordBytes));
  if (out.bytes != 1 && out.bytes != 2 && out.bytes != 4 && out.bytes != 8)
    bad(where + ".bytes", "must be 1, 2, 4 or 8, got " + std::to_string(out.bytes));
  if (out.count == 0) bad(where + ".count", "must be at least 1");
  if (out.stride < out.bytes)
    bad(where + ".stride", std::to_string(out.stride) + " is below the element's " + std::to_string(out.bytes) + " bytes");
  // Every element must lie in the record's values (bytes 32..127).
  const uint64_t end = uint64_t{out.offset} + uint64_t{out.stride} * (out.count - 1) + out.bytes;
  if (out.offset < instrument::kValuesOffset || end > instrument::kRecordBytes)
    bad(where, "elements at bytes [" + std::to_string(out.offset) + ", " + std::to_string(end) +
                   ") leave the record's values [32, 128)");
  return out;
}

using Names = std::vector<std::shared_ptr<const std::string>>;

// "inlined_functions": the names of inlined functions, each written once and named by its index
// in the frames. Optional: tables written before inlining chains were recorded have none.
Names parse_names(const json& table, const std::string& w) {
  Names names;
  if (!table.contains("inlined_functions")) return names;
  const json& list = table["inlined_functions"];
  if (!list.is_array()) bad(w + ".inlined_functions", "must be an array of strings");
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      bad(w + ".inlined_functions[" + std::to_string(i) + "]", "must be a string, got " + terminal_clip(list[i].dump(), 40));
    names.push_back(std::make_shared<const std::string>(list[i].get<std::string>()));
  }
  return names;
}

// A source frame: {"file", "line", "column", "function": index in inlined_functions (optional)}.
instrument::SourceFrame parse_frame(const json& f, const std::string& where, const Names& names) {
  instrument::SourceFrame out;
  out.file = string_field(f, "file", where);
  out.line = static_cast<int>(unsigned_field(f, "line", where, INT32_MAX));
  out.column = static_cast<int>(unsigned_field(f, "column", where, INT32_MAX));
  if (f.contains("function")) {
    const uint64_t k = unsigned_field(f, "function", where, UINT32_MAX);
    if (k >= names.size())
      bad(where + ".function", std::to_string(k) + " is not an index of inlined_functions (" +
                                   std::to_string(names.size()) + " names)");
    out.function = names[k];
  }
  return out;
}

bool known_op(uint64_t op) {
  return (op >= 1 && op <= 24) || op == kOpSharedLoad || instrument::is_cta_barrier(static_cast<TraceOp>(op));
}

std::vector<instrument::Site> parse_sites(std::string_view text, bool& cta_barriers) {
  const std::string w = "sites.json";
  json j = parse_json(text, w);
  if (!j.is_object()) bad(w, "must be a JSON object");
  if (j.contains("cta_barriers") && !j["cta_barriers"].is_boolean()) bad(w + ".cta_barriers", "must be true or false");
  cta_barriers = j.value("cta_barriers", false);
  if (unsigned_field(j, "version", w, UINT64_MAX) != 1) bad(w + ".version", "must be 1, got " + j["version"].dump());
  if (j.contains("record_bytes") && unsigned_field(j, "record_bytes", w, UINT64_MAX) != instrument::kRecordBytes)
    bad(w + ".record_bytes", "must be 128, got " + j["record_bytes"].dump());
  const json& list = field(j, "sites", w);
  if (!list.is_array()) bad(w + ".sites", "must be an array");
  if (list.size() > kMaxSites) bad(w + ".sites", std::to_string(list.size()) + " sites, above the limit");
  const Names names = parse_names(j, w);
  std::vector<instrument::Site> sites;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = w + ".sites[" + std::to_string(i) + "]";
    const json& s = list[i];
    instrument::Site site;
    site.id = static_cast<uint32_t>(unsigned_field(s, "id", at, UINT32_MAX));
    if (site.id != i) bad(at + ".id", "must be " + std::to_string(i) + " (the site's index), got " + std::to_string(site.id));
    const uint64_t op = unsigned_field(s, "op_code", at, 0xffff);
    if (!known_op(op)) bad(at + ".op_code", "unknown operation code " + std::to_string(op));
    site.op = static_cast<TraceOp>(op);
    site.form = s.contains("form") ? string_field(s, "form", at) : "";
    site.function = s.contains("function") ? string_field(s, "function", at) : "";
    site.ptx_line = static_cast<int>(unsigned_field(s, "ptx_line", at, INT32_MAX));
    site.text = string_field(s, "text", at);
    if (s.contains("after") && !s["after"].is_boolean()) bad(at + ".after", "must be true or false");
    site.after = s.value("after", false);
    if (s.contains("lanes_at"))
      site.lanes_at = static_cast<uint32_t>(unsigned_field(s, "lanes_at", at, instrument::kRecordBytes - 4));
    if (site.lanes_at && site.lanes_at < instrument::kValuesOffset)
      bad(at + ".lanes_at", std::to_string(site.lanes_at) + " lies in the record's head and ids (below " +
                                std::to_string(instrument::kValuesOffset) + ")");
    if (s.contains("warp_wide")) {  // optional (docs/check.md, "The site table")
      const json& ww = s["warp_wide"];
      if (!ww.is_object()) bad(at + ".warp_wide", "must be an object");
      site.warp_wide_line = static_cast<int>(unsigned_field(ww, "ptx_line", at + ".warp_wide", INT32_MAX));
      site.warp_wide_text = string_field(ww, "text", at + ".warp_wide");
    }
    if (s.contains("loc")) {
      instrument::SourceFrame loc = parse_frame(s["loc"], at + ".loc", names);
      site.file = std::move(loc.file), site.line = loc.line, site.column = loc.column;
      site.loc_function = std::move(loc.function);
    }
    if (s.contains("inlined_at")) {  // optional: the frames outward of loc (docs/check.md)
      const json& chain = s["inlined_at"];
      if (site.line == 0) bad(at + ".inlined_at", "needs a loc with a line (the innermost frame)");
      if (!chain.is_array() || chain.size() >= instrument::kMaxFrames)
        bad(at + ".inlined_at", "must be an array of at most " + std::to_string(instrument::kMaxFrames - 1) + " frames");
      for (size_t k = 0; k < chain.size(); ++k)
        site.inlined_at.push_back(parse_frame(chain[k], at + ".inlined_at[" + std::to_string(k) + "]", names));
    }
    const json& fields = field(s, "fields", at);
    if (!fields.is_array() || fields.size() > 16) bad(at + ".fields", "must be an array of at most 16 fields");
    for (size_t k = 0; k < fields.size(); ++k)
      site.fields.push_back(parse_field(fields[k], at + ".fields[" + std::to_string(k) + "]"));
    sites.push_back(std::move(site));
  }
  return sites;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<EncodedMap> parse_maps(std::string_view text) {
  std::vector<EncodedMap> maps;
  int line_no = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string w = "maps.jsonl:" + std::to_string(line_no);
    json j = parse_json(line, w);
    if (!j.is_object()) bad(w, "must be a JSON object");
    // Refused encodes and records of other kinds carry no descriptor: nothing to match.
    if (!j.contains("descriptor") || j["descriptor"].is_null() || !j.contains("map") || j["map"].is_null()) continue;
    if (maps.size() >= kMaxMaps) bad(w, "more than " + std::to_string(kMaxMaps) + " maps");
    EncodedMap m;
    m.line = line_no;
    const std::string hex = string_field(j, "descriptor", w);
    if (hex.size() != 256) bad(w + ".descriptor", "must be 256 hex digits (128 bytes), got " + std::to_string(hex.size()));
    for (size_t i = 0; i < 128; ++i) {
      int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) bad(w + ".descriptor", "character " + std::to_string(2 * i) + " is not a hex digit");
      m.descriptor[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    try {
      tensor_map::MapSource src = tensor_map::map_from_json(j["map"], w + ".map");
      m.map = src.map;  // the log writes the real address as "global_address"
    } catch (const DiagnosticError& e) {
      bad(w + ".map", e.diagnostic().message + " [" + e.diagnostic().rule + "]");
    }
    maps.push_back(std::move(m));
  }
  return maps;
}

// A warp record's lane mask (trace.hpp, kFlagWarp), checked: its site has a place for it, it
// holds the recording lane, and every lane is a thread of the block. `w` names the record.
uint32_t warp_lanes(const instrument::Record& r, const instrument::Site& site, const LaunchMeta& meta,
                    const std::string& w) {
  if (site.lanes_at == 0 || site.lanes_at + 4 > instrument::kRecordBytes)
    bad(w + ".flags", "a warp record of site " + std::to_string(r.site) + ", whose sites.json entry has no lanes_at");
  uint32_t lanes = 0;
  std::memcpy(&lanes, reinterpret_cast<const uint8_t*>(&r) + site.lanes_at, 4);
  const uint64_t linear = static_cast<uint64_t>(detail::who(r, meta).thread);
  const uint64_t lane = linear % 32, first = linear - lane;
  if (!(lanes >> lane & 1))
    bad(w + ".lanes", "the lane mask " + std::to_string(lanes) + " does not hold the recording lane " + std::to_string(lane));
  const uint64_t threads = uint64_t{meta.block[0]} * meta.block[1] * meta.block[2];
  for (uint32_t k = 0; k < 32; ++k)
    if ((lanes >> k & 1) && first + k >= threads)
      bad(w + ".lanes", "lane " + std::to_string(k) + " of the warp is thread " + std::to_string(first + k) +
                            ", past the block's " + std::to_string(threads) + " threads");
  return lanes;
}

// A warp record as the records of the lanes it stands for, in lane order: each lane's linear
// %tid is the warp's first (the recording lane's, less its lane number) plus its own lane
// number; everything else is the recording lane's.
void expand_warp_record(const instrument::Record& r, const instrument::Site& site, const LaunchMeta& meta,
                        const std::string& w, std::vector<instrument::Record>& out) {
  const uint32_t lanes = warp_lanes(r, site, meta, w);
  const uint64_t bx = meta.block[0], by = meta.block[1];
  const uint64_t linear = static_cast<uint64_t>(detail::who(r, meta).thread), first = linear - linear % 32;
  for (uint32_t k = 0; k < 32; ++k) {
    if (!(lanes >> k & 1)) continue;
    instrument::Record x = r;
    x.flags = static_cast<uint16_t>(r.flags & ~instrument::kFlagWarp);
    std::memset(reinterpret_cast<uint8_t*>(&x) + site.lanes_at, 0, 4);
    const uint64_t t = first + k;
    x.tid_x = static_cast<uint16_t>(t % bx), x.tid_y = static_cast<uint16_t>(t / bx % by);
    x.tid_z = static_cast<uint16_t>(t / (bx * by));
    out.push_back(x);
  }
}

// trace.bin's records, each checked, and the records of threads they stand for (a warp record
// its lanes, any other record or a hole one). Expanded whole where those stay within the bound;
// past it, the warp records stay whole and the replay expands one cluster at a time
// (expand_cluster).
std::vector<instrument::Record> parse_records(std::string_view bin, LaunchMeta& meta, uint64_t max_lane_records,
                                              const std::vector<instrument::Site>& sites, bool& compact,
                                              uint64_t& lane_records) {
  if (bin.size() % instrument::kRecordBytes)
    bad("trace.bin", std::to_string(bin.size()) + " bytes is not a whole number of 128-byte records");
  const uint64_t n = bin.size() / instrument::kRecordBytes;
  if (n > kMaxRecords) bad("trace.bin", std::to_string(n) + " records, above the limit " + std::to_string(kMaxRecords));
  if (n != meta.records)
    bad("trace.bin", "holds " + std::to_string(n) + " records but meta.json.records says " + std::to_string(meta.records));
  std::vector<instrument::Record> raw(n);
  if (n) std::memcpy(raw.data(), bin.data(), bin.size());
  uint64_t lanes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const instrument::Record& r = raw[i];
    ++lanes;
    if (r.op == 0) continue;  // a hole: reserved, never written (kept)
    const std::string w = "trace.bin record " + std::to_string(i);
    if (!known_op(r.op) && r.op != kOpTensorMapLo && r.op != kOpTensorMapHi)
      bad(w + ".op", "unknown operation code " + std::to_string(r.op));
    if (r.site >= sites.size())
      bad(w + ".site", "site " + std::to_string(r.site) + " is not in sites.json (" + std::to_string(sites.size()) + " sites)");
    const uint16_t want = static_cast<uint16_t>(sites[r.site].op);
    if (r.op != want && r.op != kOpTensorMapLo && r.op != kOpTensorMapHi)
      bad(w + ".op", "operation " + std::to_string(r.op) + " but its site " + std::to_string(r.site) + " is operation " +
                         std::to_string(want) + " (" + std::string(instrument::to_string(sites[r.site].op)) + ")");
    if (r.flags & instrument::kFlagWarp) lanes += std::popcount(warp_lanes(r, sites[r.site], meta, w)) - 1;
  }
  compact = lanes > max_lane_records;
  lane_records = lanes;
  if (compact) return raw;
  std::vector<instrument::Record> records;
  records.reserve(lanes);
  for (uint64_t i = 0; i < n; ++i) {
    const instrument::Record& r = raw[i];
    if (r.op != 0 && (r.flags & instrument::kFlagWarp))
      expand_warp_record(r, sites[r.site], meta, "trace.bin record " + std::to_string(i), records);
    else
      records.push_back(r);
  }
  return records;
}

std::string read_file(const std::filesystem::path& p, bool optional, uint64_t max) {
  std::error_code ec;
  auto st = std::filesystem::status(p, ec);
  if (ec || !std::filesystem::exists(st)) {
    if (optional) return {};
    bad(p.filename().string(), "missing from " + p.parent_path().string());
  }
  if (!std::filesystem::is_regular_file(st)) bad(p.filename().string(), "is not a regular file");
  const auto size = std::filesystem::file_size(p, ec);
  if (ec || size > max)
    bad(p.filename().string(), "holds " + std::to_string(size) + " bytes, above the limit of " + std::to_string(max) +
                                   " bytes for this file (docs/check-replay.md)");
  std::ifstream in(p, std::ios::binary);
  std::string s(size, '\0');
  if (!in.read(s.data(), static_cast<std::streamsize>(size))) bad(p.filename().string(), "cannot be read");
  return s;
}

}  // namespace

TraceDir cluster_frame(const TraceDir& t) {
  TraceDir out;
  out.dir = t.dir;
  out.meta = t.meta;
  out.sites = t.sites;
  out.maps = t.maps;
  out.module_name = t.module_name;
  out.cta_barriers = t.cta_barriers;
  out.max_lane_records = t.max_lane_records;
  return out;
}

void expand_cluster(const TraceDir& t, const std::vector<size_t>& records, TraceDir& into) {
  into.records.clear();
  into.meta.not_expanded = 0;
  for (size_t k = 0; k < records.size(); ++k) {
    const instrument::Record& r = t.records[records[k]];
    const size_t before = into.records.size();
    if (r.flags & instrument::kFlagWarp)
      expand_warp_record(r, t.sites[r.site], t.meta, "trace.bin record " + std::to_string(records[k]), into.records);
    else
      into.records.push_back(r);
    // Past the bound on records of single threads, the rest of the cluster is not read: the
    // replay lists what that skips, as for records dropped past the capacity.
    if (into.records.size() > t.max_lane_records) {
      into.records.resize(before);
      into.meta.not_expanded = records.size() - k;
      break;
    }
  }
}

TraceDir parse_trace_dir(std::string_view meta_json, std::string_view trace_bin, std::string_view sites_json,
                         std::string_view maps_jsonl, uint64_t max_lane_records) {
  TraceDir t;
  t.meta = parse_meta(meta_json);
  t.sites = parse_sites(sites_json, t.cta_barriers);
  t.records = parse_records(trace_bin, t.meta, max_lane_records, t.sites, t.compact, t.lane_records);
  t.max_lane_records = max_lane_records;
  t.maps = parse_maps(maps_jsonl);
  return t;
}

TraceDir load_trace_dir(const std::filesystem::path& dir, uint64_t max_lane_records) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw TraceError(dir.string() + ": not a trace directory");
  // One file after the other, so the first missing one is the one named.
  const std::string meta = read_file(dir / "meta.json", false, kMaxMetaBytes);
  const std::string bin = read_file(dir / "trace.bin", false, kMaxFileBytes);
  const std::string sites = read_file(dir / "sites.json", false, kMaxSitesBytes);
  const std::string maps = read_file(dir / "maps.jsonl", true, kMaxMapsBytes);
  TraceDir t = parse_trace_dir(meta, bin, sites, maps, max_lane_records);
  t.dir = dir;
  return t;
}

}  // namespace tmakit::check
