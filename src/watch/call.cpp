// One watched call: capture, judgement, record, message (include/tmakit/watch/call.hpp).
#include "tmakit/watch/call.hpp"
#include "tmakit/tensor_map/encode_names.hpp"

#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tmakit/tensor_map/json.hpp"

namespace tmakit::watch {
namespace tm = tmakit::tensor_map;
using nlohmann::json;

std::string_view entry_name(Entry e) {
  switch (e) {
    case Entry::encode_tiled: return tm::encode_call_name(tm::Encode::tiled);
    case Entry::encode_im2col: return tm::encode_call_name(tm::Encode::im2col);
    case Entry::encode_im2col_wide: return tm::encode_call_name(tm::Encode::im2col_wide);
    case Entry::replace_address: return "cuTensorMapReplaceAddress";
  }
  return "?";
}

std::string_view via_name(Via v) {
  switch (v) {
    case Via::linked: return "linked";
    case Via::dlsym: return "dlsym";
    case Via::get_proc_address: return "cuGetProcAddress";
    case Via::runtime: return "cudaGetDriverEntryPoint";
  }
  return "?";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::flagged: return "flagged";
    case Verdict::explained: return "explained";
    case Verdict::unexplained_refusal: return "unexplained-refusal";
    case Verdict::accepted_against_rule: return "accepted-against-rule";
    case Verdict::driver_error: return "driver-error";
  }
  return "?";
}

bool is_disagreement(Verdict v) {
  return v == Verdict::unexplained_refusal || v == Verdict::accepted_against_rule;
}

std::string_view result_name(int r) {
  switch (r) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 999: return "CUDA_ERROR_UNKNOWN";
  }
  return "CUresult";
}

// process_vm_readv on ourselves: the kernel copies, so an unmapped address is an
// EFAULT here rather than a SIGSEGV in the watched program.
bool read_program_memory(void* dst, const void* src, size_t n) {
  if (n == 0) return true;
  if (src == nullptr) return false;
  iovec local{dst, n};
  iovec remote{const_cast<void*>(src), n};
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == static_cast<ssize_t>(n)) return true;
  if (got < 0 && (errno == ENOSYS || errno == EPERM)) {  // the call is blocked here: read directly
    std::memcpy(dst, src, n);
    return true;
  }
  return false;
}

bool read_known_memory(void* dst, const void* src, size_t n) {
  if (n == 0) return true;
  if (src == nullptr) return false;
  std::memcpy(dst, src, n);
  return true;
}

namespace {

constexpr WatchRule kWatchRules[] = {
    {"watch.null-argument", "a pointer argument the driver reads (or writes) is null"},
    {"watch.unreadable-argument", "a pointer argument points to memory the process cannot read"},
    {"watch.enum-value", "an enum argument is not a value the driver defines"},
    {"watch.tensor-map-align", "the CUtensorMap the driver writes is not 64-byte aligned (a warning: the driver writes it)"},
    {"watch.replace-unknown-map", "cuTensorMapReplaceAddress on a descriptor the library did not see encoded"},
};

// Reads `count` entries of an array argument into `out`; a problem is recorded otherwise.
template <class T, size_t N>
bool read_array(const T* p, int count, std::array<T, N>& out, const char* arg, MemoryReader read, Capture& c) {
  if (count <= 0) return true;
  if (p == nullptr) {
    c.problems.error("watch.null-argument",
                     fmt::format("{} is a null pointer, but the driver reads {} entr{} of it", arg, count,
                                 count == 1 ? "y" : "ies"),
                     arg);
    return false;
  }
  std::array<T, N> tmp{};
  if (!read(tmp.data(), p, sizeof(T) * static_cast<size_t>(count))) {
    c.problems.error("watch.unreadable-argument",
                     fmt::format("{} = {} points to memory this process cannot read ({} bytes)", arg,
                                 static_cast<const void*>(p), sizeof(T) * static_cast<size_t>(count)),
                     arg);
    return false;
  }
  std::copy(tmp.begin(), tmp.begin() + count, out.begin());
  return true;
}

// An enum argument within 0..max, else a watch.enum-value problem naming the driver's enum.
bool enum_in_range(int v, int max, const char* arg, const char* type, Capture& c) {
  if (v >= 0 && v <= max) return true;
  c.problems.error("watch.enum-value",
                   fmt::format("{} = {} is not a {} value (the driver defines 0..{})", arg, v, type, max), arg);
  c.raw[arg] = v;
  return false;
}

void check_tensor_map_pointer(const void* p, Capture& c) {
  if (p == nullptr) {
    c.problems.error("watch.null-argument",
                     "tensorMap is a null pointer: the driver has nowhere to write the 128-byte descriptor",
                     "tensorMap");
  } else if (reinterpret_cast<uintptr_t>(p) % 64 != 0) {
    // The H100's driver writes it all the same (tests/vectors/watch/h100/defensive.txt);
    // a kernel takes the map as a 64-byte-aligned __grid_constant__ or global operand (§1.1).
    c.problems.warning("watch.tensor-map-align",
                       fmt::format("tensorMap = {} is not 64-byte aligned: the driver writes it, but a kernel "
                                   "needs the map 64-byte aligned (declare it alignas(64) or as a CUtensorMap)",
                                   p),
                       "tensorMap");
  }
}

}  // namespace

std::span<const WatchRule> watch_rules() { return kWatchRules; }

Capture capture(const EncodeArgs& a, MemoryReader read) {
  Capture c;
  tm::TensorMap m;
  m.encode = a.entry == Entry::encode_im2col        ? tm::Encode::im2col
             : a.entry == Entry::encode_im2col_wide ? tm::Encode::im2col_wide
                                                    : tm::Encode::tiled;
  check_tensor_map_pointer(a.tensor_map, c);
  bool ok = enum_in_range(a.data_type, 15, "tensorDataType", "CUtensorMapDataType", c);
  ok &= enum_in_range(a.interleave, 2, "interleave", "CUtensorMapInterleave", c);
  ok &= enum_in_range(a.swizzle, 6, "swizzle", "CUtensorMapSwizzle", c);
  ok &= enum_in_range(a.l2_promotion, 3, "l2Promotion", "CUtensorMapL2promotion", c);
  ok &= enum_in_range(a.oob_fill, 1, "oobFill", "CUtensorMapFloatOOBfill", c);
  if (m.encode == tm::Encode::im2col_wide) ok &= enum_in_range(a.mode, 1, "mode", "CUtensorMapIm2ColWideMode", c);
  if (ok) {
    m.data_type = static_cast<tm::DataType>(a.data_type);
    m.interleave = static_cast<tm::Interleave>(a.interleave);
    m.swizzle = static_cast<tm::Swizzle>(a.swizzle);
    m.l2_promotion = static_cast<tm::L2Promotion>(a.l2_promotion);
    m.oob_fill = static_cast<tm::OobFill>(a.oob_fill);
    m.wide_mode = static_cast<tm::WideMode>(a.mode);
  }
  // A rank outside 1..5 reads no arrays (the validator names the rank); it is kept
  // as passed, bounded so that it stays an int.
  m.rank = static_cast<int>(std::min<uint32_t>(a.rank, 1000));
  m.global_address = reinterpret_cast<uintptr_t>(a.global_address);
  const int n = (a.rank >= 1 && a.rank <= tm::kMaxRank) ? static_cast<int>(a.rank) : 0;
  if (n == 0) c.raw["rank"] = a.rank;
  ok &= read_array(a.dims, n, m.dims, "globalDim", read, c);
  ok &= read_array(a.strides, n - 1, m.strides, "globalStrides", read, c);
  ok &= read_array(a.element_strides, n, m.element_strides, "elementStrides", read, c);
  if (m.encode == tm::Encode::tiled) ok &= read_array(a.box, n, m.box, "boxDim", read, c);
  if (m.encode == tm::Encode::im2col) {
    ok &= read_array(a.lower, n - 2, m.pixel_box_lower, "pixelBoxLowerCorner", read, c);
    ok &= read_array(a.upper, n - 2, m.pixel_box_upper, "pixelBoxUpperCorner", read, c);
  }
  if (m.encode != tm::Encode::tiled) {
    m.channels_per_pixel = a.channels;
    m.pixels_per_column = a.pixels;
  }
  if (m.encode == tm::Encode::im2col_wide) {
    m.pixel_box_lower_w = a.lower_w;
    m.pixel_box_upper_w = a.upper_w;
  }
  if (ok) c.map = m;
  return c;
}

std::string crash_risk(const EncodeArgs& a) {
  const auto rank = static_cast<int64_t>(a.rank);
  if (rank < 1 || rank > tm::kMaxRank)
    return fmt::format("tensorRank = {} (the H100's driver reads that many entries when it is above 2^31)", a.rank);
  if (a.dims == nullptr) return "a null globalDim";
  if (a.element_strides == nullptr) return "a null elementStrides";
  if (rank > 1 && a.strides == nullptr) return "a null globalStrides";
  if (a.entry == Entry::encode_tiled && a.box == nullptr) return "a null boxDim";
  if (a.entry == Entry::encode_im2col && rank > 2 && (a.lower == nullptr || a.upper == nullptr))
    return "a null pixel box corner (the H100's driver reads it and crashes)";
  return {};
}

Capture capture_replace(const std::optional<tm::TensorMap>& known, const void* tensor_map, const void* address) {
  Capture c;
  check_tensor_map_pointer(tensor_map, c);
  if (known) {
    tm::TensorMap m = *known;
    m.global_address = reinterpret_cast<uintptr_t>(address);
    c.map = m;
    return c;
  }
  c.raw["global_address"] = reinterpret_cast<uintptr_t>(address);
  c.problems.note("watch.replace-unknown-map",
                  "this descriptor was not encoded while the library watched, so only the new address is checked",
                  "tensorMap");
  // The one rule that needs only the address (§1.3: 16 bytes; 32 with interleave 32b).
  if (reinterpret_cast<uintptr_t>(address) % 16 != 0)
    c.problems.error("map.global-address-align",
                     fmt::format("global address {} is not a multiple of 16 bytes", address), "globalAddress");
  return c;
}

bool driver_enforced(const Diagnostic& d) {
  if (d.rule.rfind("watch.", 0) == 0) return d.severity == Severity::error;
  const tm::MapRule* r = tm::find_map_rule(d.rule);
  return r != nullptr && r->driver_enforced && d.severity == Severity::error;
}

Judgement judge(const Capture& c, int driver_result, const spec::Target& target, bool strict) {
  Judgement j;
  j.findings = c.problems;
  if (c.map) {
    Diagnostics v = tm::validate(*c.map, target);
    j.findings.insert(j.findings.end(), v.begin(), v.end());
  }
  bool breaks_driver_rule = false, worth_saying = false;
  for (const auto& d : j.findings) {
    breaks_driver_rule |= driver_enforced(d);
    worth_saying |= d.severity != Severity::note;
  }
  if (driver_result == 0) {
    j.verdict = breaks_driver_rule ? Verdict::accepted_against_rule
                : worth_saying     ? Verdict::flagged
                                   : Verdict::ok;
    j.strict_refused = strict && worth_saying;
  } else if (driver_result == 1) {
    j.verdict = breaks_driver_rule ? Verdict::explained : Verdict::unexplained_refusal;
  } else {
    j.verdict = Verdict::driver_error;
  }
  return j;
}

namespace {

std::string hex(const std::array<uint8_t, 128>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) s[2 * i] = kDigits[bytes[i] >> 4], s[2 * i + 1] = kDigits[bytes[i] & 15];
  return s;
}

std::string pointer_text(uint64_t p) { return fmt::format("{:#x}", p); }

}  // namespace

std::string judged_fields(const CallRecord& r) {
  json j;
  // The map reads back with map_from_json only when its rank is one the format can spell.
  if (r.capture.map && r.capture.map->rank >= 1 && r.capture.map->rank <= tm::kMaxRank) {
    j["map"] = tm::map_to_json(*r.capture.map);
  } else {
    j["map"] = nullptr;
    j["map_error"] = r.capture.map ? fmt::format("rank {} cannot be written as a map", r.capture.map->rank)
                     : r.capture.problems.empty() ? "the map's arguments were not seen"
                                                  : r.capture.problems.front().message;
  }
  if (!r.capture.raw.empty()) j["raw"] = r.capture.raw;
  json findings = json::array();
  for (const auto& d : r.judgement.findings)
    findings.push_back({{"rule", d.rule},
                        {"severity", to_string(d.severity)},
                        {"field", d.where},
                        {"message", d.message},
                        {"driver_enforced", driver_enforced(d)}});
  j["findings"] = std::move(findings);
  j["verdict"] = verdict_name(r.judgement.verdict);
  if (r.judgement.strict_refused) j["strict_refused"] = true;
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.substr(1, text.size() - 2);  // without the braces
}

std::string to_line(const CallRecord& r, const std::string& judged, const std::string& call_site) {
  // Every field written here is a number or a name of ours (no character needs escaping).
  std::string s = fmt::format(
      R"({{"kind":"call","index":{},"pid":{},"thread":{},"time":"{}","call":"{}","via":"{}",)"
      R"("tensor_map_address":"{}","target":"{}","driver":"{}","driver_code":{},"returned":{},)",
      r.index, r.pid, r.thread, r.time, entry_name(r.entry), via_name(r.via), pointer_text(r.tensor_map_address),
      r.target, r.driver_name.empty() ? std::string(result_name(r.driver_result)) : r.driver_name, r.driver_result,
      r.returned);
  s += judged.empty() ? judged_fields(r) : judged;
  if (r.descriptor) s += R"(,"descriptor":")" + hex(*r.descriptor) + "\"";
  s += R"(,"call_site":)";
  s += call_site.empty() ? r.call_site.dump(-1, ' ', false, json::error_handler_t::replace) : call_site;
  return s + "}";
}

json to_json(const CallRecord& r) { return json::parse(to_line(r)); }

namespace {

// "  at file.py:42 in f (Python)" and "  at libx.so!symbol+0x1a" lines, innermost first.
std::string call_site_lines(const json& site) {
  std::string s;
  if (site.contains("python"))
    for (const auto& f : site["python"])
      s += fmt::format("    at {}:{} in {} (Python)\n", f.value("file", "?"), f.value("line", 0),
                       f.value("function", "?"));
  if (site.contains("python_unavailable"))
    s += fmt::format("    (no Python frame: {})\n", site["python_unavailable"].get<std::string>());
  if (site.contains("native")) {
    int shown = 0;
    for (const auto& f : site["native"]) {
      if (++shown > 4) break;
      std::string sym = f.value("symbol", "");
      s += fmt::format("    at {}{}{}\n", f.value("module", "?"), sym.empty() ? "" : "!" + sym,
                       f.contains("offset") ? "+" + f.value("offset", "") : "");
    }
  }
  return s.empty() ? "    at (call site unknown)\n" : s;
}

}  // namespace

std::string explain(const CallRecord& r, std::string_view log_path) {
  const Verdict v = r.judgement.verdict;
  if (v == Verdict::ok) return {};
  const std::string call = std::string(entry_name(r.entry));
  const std::string who = fmt::format("call {} of pid {}, thread {}", r.index, r.pid, r.thread);
  std::string head;
  switch (v) {
    case Verdict::flagged:
      head = fmt::format("tmakit watch: warning: {} accepted a map that tmakit flags ({})", call, who);
      break;
    case Verdict::explained:
      head = fmt::format("tmakit watch: {} returned {}: the map breaks the rule(s) below ({})", call,
                         result_name(r.driver_result), who);
      break;
    case Verdict::unexplained_refusal:
      head = fmt::format(
          "tmakit watch: DISAGREEMENT: {} returned {}, but tmakit's validator finds no rule the driver enforces "
          "broken ({}). This is a tmakit bug: please report it with this log record",
          call, result_name(r.driver_result), who);
      break;
    case Verdict::accepted_against_rule:
      head = fmt::format(
          "tmakit watch: DISAGREEMENT: the driver accepted this map, but tmakit's validator says the driver refuses "
          "it ({}). This is a tmakit bug: please report it with this log record",
          who);
      break;
    case Verdict::driver_error:
      head = fmt::format("tmakit watch: {} returned {} ({}): an error about the driver's state, not the map's "
                         "arguments ({})",
                         call, result_name(r.driver_result), r.driver_result, who);
      break;
    case Verdict::ok: break;
  }
  std::string s = head + "\n  called from:\n" + call_site_lines(r.call_site);
  if (r.capture.map && r.capture.map->rank >= 1 && r.capture.map->rank <= tm::kMaxRank)
    s += "  map: " + tm::map_to_json(*r.capture.map).dump() + "\n";
  else if (!r.capture.raw.empty())
    s += "  arguments: " + r.capture.raw.dump() + "\n";
  for (const auto& d : r.judgement.findings)
    if (d.severity != Severity::note || v != Verdict::flagged) s += "  " + format(d) + "\n";
  if (r.judgement.strict_refused)
    s += "  --strict: the program gets CUDA_ERROR_INVALID_VALUE for this call\n";
  s += "  rules: docs/tensor-maps.md (map.*), docs/watch.md (watch.*)";
  if (!log_path.empty()) s += fmt::format("; again: tmakit map --from-log {} --index {} --pid {}", log_path, r.index, r.pid);
  return s + "\n";
}

}  // namespace tmakit::watch
