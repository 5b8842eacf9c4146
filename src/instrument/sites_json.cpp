// The site table written beside an instrumented module (OUT.sites.json), and the names of
// the trace's operation codes (docs/check.md lists both).
#include <map>

#include <nlohmann/json.hpp>

#include "tmakit/instrument/instrument.hpp"

namespace tmakit::instrument {

std::string_view to_string(TraceOp op) {
  switch (op) {
    case TraceOp::none: return "none";
    case TraceOp::bulk_copy: return "bulk_copy";
    case TraceOp::bulk_reduce: return "bulk_reduce";
    case TraceOp::bulk_prefetch: return "bulk_prefetch";
    case TraceOp::tensor_load: return "tensor_load";
    case TraceOp::tensor_store: return "tensor_store";
    case TraceOp::tensor_reduce: return "tensor_reduce";
    case TraceOp::tensor_prefetch: return "tensor_prefetch";
    case TraceOp::commit_group: return "commit_group";
    case TraceOp::wait_group: return "wait_group";
    case TraceOp::mbar_init: return "mbar_init";
    case TraceOp::mbar_arrive: return "mbar_arrive";
    case TraceOp::mbar_expect_tx: return "mbar_expect_tx";
    case TraceOp::mbar_complete_tx: return "mbar_complete_tx";
    case TraceOp::mbar_test_wait: return "mbar_test_wait";
    case TraceOp::mbar_try_wait: return "mbar_try_wait";
    case TraceOp::mbar_inval: return "mbar_inval";
    case TraceOp::fence_proxy_async: return "fence_proxy_async";
    case TraceOp::fence_mbarrier_init: return "fence_mbarrier_init";
    case TraceOp::fence_proxy_other: return "fence_proxy_other";
    case TraceOp::tensormap_replace: return "tensormap_replace";
    case TraceOp::tensormap_cp_fenceproxy: return "tensormap_cp_fenceproxy";
    case TraceOp::cluster_arrive: return "cluster_arrive";
    case TraceOp::cluster_wait: return "cluster_wait";
    case TraceOp::shared_store: return "shared_store";
    case TraceOp::tensor_map_lo: return "tensor_map_lo";
    case TraceOp::tensor_map_hi: return "tensor_map_hi";
    case TraceOp::shared_load: return "shared_load";
    case TraceOp::bar_sync: return "bar_sync";
    case TraceOp::bar_arrive: return "bar_arrive";
    case TraceOp::bar_red: return "bar_red";
    case TraceOp::lane_ids: return "lane_ids";
  }
  return "unknown";
}

std::string sites_json(const std::vector<Site>& sites) {
  // Inlined functions' names are written once, in "inlined_functions", and named by their index
  // there: a CuTe name runs to kilobytes, and every frame of every site in it would repeat it.
  nlohmann::json names = nlohmann::json::array();
  std::map<std::string_view, size_t> name_index;
  auto frame = [&](const std::string& file, int line, int column, const std::shared_ptr<const std::string>& fn) {
    nlohmann::json j = {{"file", file}, {"line", line}, {"column", column}};
    if (fn) {
      auto [it, fresh] = name_index.try_emplace(*fn, names.size());
      if (fresh) names.push_back(*fn);
      j["function"] = it->second;
    }
    return j;
  };
  nlohmann::json list = nlohmann::json::array();
  for (const Site& s : sites) {
    nlohmann::json fields = nlohmann::json::array();
    for (const Field& f : s.fields)
      fields.push_back({{"name", f.name}, {"offset", f.offset}, {"stride", f.stride}, {"bytes", f.bytes},
                        {"count", f.count}});
    nlohmann::json j = {{"id", s.id},           {"op", to_string(s.op)}, {"op_code", static_cast<int>(s.op)},
                        {"form", s.form},       {"function", s.function}, {"ptx_line", s.ptx_line},
                        {"text", s.text},       {"after", s.after},       {"fields", fields}};
    if (s.lanes_at) j["lanes_at"] = s.lanes_at;
    if (s.warp_wide_line > 0) j["warp_wide"] = {{"ptx_line", s.warp_wide_line}, {"text", s.warp_wide_text}};
    if (s.line > 0) j["loc"] = frame(s.file, s.line, s.column, s.loc_function);
    if (s.line > 0 && !s.inlined_at.empty()) {
      nlohmann::json chain = nlohmann::json::array();
      for (const SourceFrame& f : s.inlined_at) chain.push_back(frame(f.file, f.line, f.column, f.function));
      j["inlined_at"] = std::move(chain);
    }
    list.push_back(std::move(j));
  }
  // "cta_barriers": this instrumenter records CTA barriers (bar_sync, …) wherever it records
  // ordinary shared accesses; the replay checks races between threads only in such traces.
  nlohmann::json out = {{"version", 1}, {"record_bytes", kRecordBytes}, {"trace_symbol", kTraceSymbol},
                        {"cta_barriers", true}, {"sites", list}};
  if (!names.empty()) out["inlined_functions"] = std::move(names);
  return out.dump(1) + "\n";
}

}  // namespace tmakit::instrument
