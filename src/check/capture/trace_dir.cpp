// A launch's trace directory (docs/check.md, "Trace directory"): meta.json, trace.bin,
// sites.json, maps.jsonl, module.ptx; written whole into a temporary folder and renamed into
// place, so a reader never sees half of one.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tmakit/check/capture.hpp"

namespace tmakit::check {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", p.string()));
}

nlohmann::json triple(const uint32_t (&v)[3]) { return nlohmann::json::array({v[0], v[1], v[2]}); }

}  // namespace

void write_trace_dir(const fs::path& dir, const LaunchInfo& info, const TraceBuffer& trace,
                     std::string_view sites_json, std::string_view maps_jsonl, std::string_view instrumented_ptx) {
  write_trace_dir(dir, info, trace.written(), trace.capacity(), sites_json, maps_jsonl, instrumented_ptx);
}

void write_trace_dir(const fs::path& dir, const LaunchInfo& info, const std::vector<instrument::Record>& records,
                     size_t capacity, std::string_view sites_json, std::string_view maps_jsonl,
                     std::string_view instrumented_ptx) {
  nlohmann::json meta = {{"format", "tmakit-trace/1"},
                         {"kernel", info.kernel},
                         {"grid", triple(info.grid)},
                         {"block", triple(info.block)},
                         {"cluster", triple(info.cluster)},
                         {"dynamic_smem", info.dynamic_smem},
                         {"outcome", info.outcome},
                         {"driver_result", info.driver_result},
                         {"records", records.size()},
                         {"next", info.next ? nlohmann::json(*info.next) : nlohmann::json(nullptr)},
                         {"capacity", capacity},
                         {"target", info.target}};
  if (info.outcome == "timeout") meta["timeout_s"] = info.timeout_s;
  if (info.clusters_traced[1]) meta["clusters_traced"] = {info.clusters_traced[0], info.clusters_traced[1]};
  meta["records_in"] = info.records_in;
  if (!info.records_lost.empty()) meta["records_lost"] = info.records_lost;
  if (info.dropped) meta["dropped"] = *info.dropped;

  fs::path tmp = dir;
  tmp += fmt::format(".tmp-{}", getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec) && ec)
    throw std::runtime_error(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  try {
    write_file(tmp / "meta.json", meta.dump(1) + "\n");
    write_file(tmp / "trace.bin", std::string_view(reinterpret_cast<const char*>(records.data()),
                                                   records.size() * instrument::kRecordBytes));
    write_file(tmp / "sites.json", sites_json);
    write_file(tmp / "maps.jsonl", maps_jsonl);
    if (!instrumented_ptx.empty()) write_file(tmp / "module.ptx", instrumented_ptx);
    fs::remove_all(dir, ec);
    fs::rename(tmp, dir, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", tmp.string(), dir.string(), ec.message()));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

uint64_t module_id_of(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits: offset basis, prime 0x100000001b3
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

std::optional<std::string> add_module_id(std::string_view text, uint64_t* id_out) {
  const std::string decl = fmt::format("{}[{}];", instrument::kTraceSymbol, instrument::kTraceWords);
  const size_t at = text.find(decl);
  if (at == std::string_view::npos) return std::nullopt;
  size_t eol = text.find('\n', at);
  eol = eol == std::string_view::npos ? text.size() : eol + 1;
  const uint64_t id = module_id_of(text);
  if (id_out) *id_out = id;
  std::string out(text.substr(0, eol));
  if (out.back() != '\n') out += '\n';
  out += fmt::format(".global .align 8 .u64 {} = {};\n", kModuleIdSymbol, id);
  out += text.substr(eol);
  return out;
}

}  // namespace tmakit::check
