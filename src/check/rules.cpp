// What only the trace can say (docs/diagnostics.md, "tmakit check"): the tensor map each
// tensor operation used, a remote use of a barrier whose init was never fenced, a tensor map
// rewritten and used without the tensormap acquire fence, a swizzled box landing at another
// swizzle phase, shared memory read before the wait that completes the copy writing it (and
// the wrong parity that let the wait return early), and the last operations before a fault.
#include <algorithm>

#include "cluster.hpp"
#include "device_maps.hpp"

namespace tmakit::check::detail {

using instrument::TraceOp;

namespace {

using instrument::is_copy;
using instrument::is_tensor_operation;

// The bytes a swizzle pattern repeats after: 8 rows of its span (§3.2).
uint32_t swizzle_atom(tensor_map::Swizzle s) {
  using S = tensor_map::Swizzle;
  switch (s) {
    case S::none: return 0;
    case S::b32: return 256;
    case S::b64: return 512;
    default: return 1024;
  }
}

}  // namespace

// tensormap.replace: the map edited at its address starts from the map there before (a
// program's map, found by the companions' bytes; a zeroed copy: blank_device_map) or from
// what earlier replaces made there; each replace sets one field. A map edited in place in
// global memory is used from its address at once.
void ClusterReplay::follow_replace(size_t idx, std::optional<size_t> before, bool blank, Building& building,
                                   std::map<uint64_t, size_t>& replaced) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  auto addr = value_of(r, site, "addr"), value = value_of(r, site, "new_val");
  if (!addr || !value) return;
  const bool global = site.text.find(".global.") != std::string::npos || *addr >= (1ull << 32);
  const std::pair<int, uint64_t> key{global ? -1 : who(r, t_.meta).cta, *addr};
  auto it = building.find(key);
  if (it == building.end()) {
    if (before) it = building.emplace(key, maps_[*before].map).first;
    else if (blank) it = building.emplace(key, blank_device_map()).first;
    else return;  // bytes of no map the trace knows: its loads stay check.map-unknown
  }
  const std::string_view field = replaced_field(site.text);
  if (auto why = apply_replace(it->second, field, value_of(r, site, "ord").value_or(0), *value)) {
    report_.notes.push_back(where(idx) + ": " + *why + "; the map edited there is not followed");
    building.erase(it);
    return;
  }
  if (!global) return;
  EncodedMap changed;
  changed.map = it->second;
  if (before) changed.descriptor = maps_[*before].descriptor;
  changed.built_at = site_place(t_, r.site);
  replaced[*addr] = maps_.size();
  maps_.push_back(std::move(changed));
}

// tensormap.cp_fenceproxy: the map built in shared memory is installed at its global address;
// its companions hold the bytes installed, by which the tensor operations that read it find it.
void ClusterReplay::follow_install(size_t idx, std::optional<size_t> source, const std::array<uint8_t, 128>& bytes,
                                   Building& building, std::map<uint64_t, size_t>& replaced,
                                   std::map<std::array<uint8_t, 128>, size_t>& by_bytes) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  auto src = value_of(r, site, "src"), dst = value_of(r, site, "dst");
  if (!src || !dst) return;
  auto it = building.find({who(r, t_.meta).cta, *src});
  if (it == building.end()) {
    if (source) replaced[*dst] = *source;  // a program's map copied as it is
    return;
  }
  // The copy is warp-wide (.sync.aligned): every lane records it with the same bytes.
  if (auto same = by_bytes.find(bytes); same != by_bytes.end() && !maps_[same->second].built_at.empty()) {
    replaced[*dst] = same->second;
    return;
  }
  EncodedMap built;
  built.map = it->second;
  built.descriptor = bytes;
  built.built_at = site_place(t_, r.site);
  replaced[*dst] = maps_.size();
  by_bytes[bytes] = maps_.size();
  maps_.push_back(std::move(built));
}

void ClusterReplay::scan_maps() {
  maps_ = t_.maps;
  std::map<std::array<uint8_t, 128>, size_t> by_bytes;
  for (size_t k = 0; k < maps_.size(); ++k) by_bytes.emplace(maps_[k].descriptor, k);
  std::map<uint64_t, size_t> replaced;  // a global map's address -> the map the kernel made there
  std::map<std::pair<int, uint64_t>, tensor_map::TensorMap> building;  // (CTA or -1, address) -> the map edited there
  std::map<Who, std::pair<std::array<uint8_t, 128>, int>> companion;  // bytes, halves seen (bit 0 lo, bit 1 hi)
  for (size_t idx : records_) {
    const Record& r = t_.records[idx];
    const Who w = who(r, t_.meta);
    last_of_[thread_key(w)] = idx;
    // Shared addresses that carry the rank: a CTA of rank r >= 1 initialises a barrier at r << 24 | offset.
    if (static_cast<TraceOp>(r.op) == TraceOp::mbar_init && w.cta >= 1)
      if (auto a = value_of(r, t_.sites[r.site], "addr"); a && (*a >> 24) == static_cast<uint64_t>(w.cta)) ranked_ = true;
    const auto op = static_cast<TraceOp>(r.op);
    const bool companion_op = r.op == kOpTensorMapLo || r.op == kOpTensorMapHi;
    if (!companion_op && !is_tensor_operation(op) && op != TraceOp::tensormap_replace && op != TraceOp::tensormap_cp_fenceproxy &&
        op != TraceOp::bulk_copy && op != TraceOp::bulk_reduce && op != TraceOp::bulk_prefetch)
      continue;  // most records (waits, arrives, fences) name no map or global range
    auto& [bytes, seen] = companion[w];
    if (companion_op) {
      const int half = r.op == kOpTensorMapHi;
      std::copy(r.values, r.values + 64, bytes.begin() + 64 * half);
      seen |= 1 << half;
      continue;
    }
    const Site& site = t_.sites[r.site];
    if (is_tensor_operation(op) || op == TraceOp::tensormap_replace || op == TraceOp::tensormap_cp_fenceproxy) {
      auto hit = seen == 3 ? by_bytes.find(bytes) : by_bytes.end();
      const bool blank = seen == 3 && std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
      seen = 0;
      std::optional<size_t> map;
      if (hit != by_bytes.end()) map = hit->second;
      if (op == TraceOp::tensormap_replace) {
        follow_replace(idx, map, blank, building, replaced);
        continue;
      }
      if (op == TraceOp::tensormap_cp_fenceproxy) {
        follow_install(idx, map, bytes, building, replaced, by_bytes);
        continue;
      }
      if (!is_tensor_operation(op)) continue;
      if (auto a = value_of(r, site, "tensorMap"); !map && a && replaced.count(*a)) map = replaced.at(*a);
      if (!map) continue;
      map_of_[idx] = *map;
      std::vector<int64_t> coords;
      if (const auto* f = find_field(site, "tensorCoords"))
        for (uint32_t k = 0; k < f->count; ++k) coords.push_back(signed_element(r, *f, k));
      if (!valid(*map)) continue;  // not replayed (the decoder says why): no memory for it
      if (auto range = touched(maps_[*map].map, coords)) global_.add_map_range(*map, range->first, range->second);
    } else if (op == TraceOp::bulk_copy || op == TraceOp::bulk_reduce || op == TraceOp::bulk_prefetch) {
      const uint64_t size = value_of(r, site, "size").value_or(0);
      for (const char* name : {"srcMem", "dstMem"})
        if (auto a = value_of(r, site, name); a && *a >= (1ull << 32))  // shared-window offsets are small
          global_.add_range(*a, *a + std::min<uint64_t>(size, 1ull << 32));
    }
  }
}

// A map the validator accepts for the launch's target (the engine walks no other).
bool ClusterReplay::valid(size_t map) {
  auto [it, fresh] = valid_.try_emplace(map, true);
  if (fresh) {
    const auto target = spec::parse_target(t_.meta.target).value_or(spec::Target{90, spec::Suffix::a});
    for (const auto& d : tensor_map::validate(maps_[map].map, target)) it->second = it->second && d.severity != Severity::error;
  }
  return it->second;
}

void ClusterReplay::remote_use(size_t idx, int barrier_cta, uint32_t offset) {
  const Who w = who(t_.records[idx], t_.meta);
  if (barrier_cta == w.cta) return;
  auto init = inits_.find({barrier_cta, offset});
  if (init == inits_.end()) return;  // never initialised: the model says so (mbarrier.invalid)
  auto after = [&](const std::map<int, size_t>& m, int cta, size_t than) {
    auto it = m.find(cta);
    return it != m.end() && it->second > than;
  };
  const bool fenced = after(init_fence_, barrier_cta, init->second);
  const bool synced = after(cluster_arrive_, barrier_cta, init->second) &&
                      after(cluster_wait_, w.cta, cluster_arrive_.at(barrier_cta));
  if (fenced || synced) return;
  sink_.add("check.init-fence-missing", Severity::error,
            "CTA " + std::to_string(w.cta) + " uses the mbarrier at shared offset " + std::to_string(offset) + " of CTA " +
                std::to_string(barrier_cta) + ", initialised at " + site_place(t_, t_.records[init->second].site) +
                " with no fence.mbarrier_init (or barrier.cluster.arrive/wait) after the init: the other CTA may see "
                "the barrier uninitialised",
            idx);
}

void ClusterReplay::before_copy(size_t idx) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const auto op = static_cast<TraceOp>(r.op);
  const Who w = who(r, t_.meta);
  if (is_tensor_operation(op)) {
    // A tensor map rewritten in memory must be acquired by the tensormap proxy before use.
    if (auto a = value_of(r, site, "tensorMap")) {
      auto written = map_written_.find(*a);
      // Acquired by any thread of the CTA before the use, in the trace's order: Triton 3.6 has
      // one warp acquire a map it built and the CTA barrier order the other warps' copies after
      // it (its persistent matmul with device descriptors verifies on the H100).
      auto acquired = map_acquired_.find({w.cta, *a});
      if (written != map_written_.end() && (acquired == map_acquired_.end() || acquired->second < written->second))
        sink_.add("check.tensormap-fence-missing", Severity::error,
                  "the tensor map at address " + std::to_string(*a) + " was changed at " +
                      site_place(t_, t_.records[written->second].site) +
                      " and is used here with no fence.proxy.tensormap::generic.acquire on it by a thread of this "
                      "CTA in between: the copy may read the old map",
                  idx);
    }
    auto m = map_of_.find(idx);
    auto dst = value_of(r, site, "dstMem");
    if (op == TraceOp::tensor_load && m != map_of_.end() && dst) {
      const tensor_map::TensorMap& map = maps_[m->second].map;
      const uint32_t atom = swizzle_atom(map.swizzle);
      const SharedAddress d = split_shared(*dst, ranked_);
      if (atom && d.offset % 128 == 0 && d.offset % atom) {
        const auto end = static_cast<uint32_t>(d.offset + map.smem_footprint());
        std::vector<int> ctas{d.rank.value_or(w.cta)};
        if (auto mask = value_of(r, site, "ctaMask")) {  // multicast: the same offset in each CTA
          ctas.clear();
          for (int rank = 0; rank < 16 && rank < ctas_; ++rank)
            if (*mask >> rank & 1) ctas.push_back(rank);
        }
        for (int c : ctas) misphased_[{c, static_cast<uint32_t>(d.offset)}] = {end, atom, idx};
      }
    }
  }
  // Copies into shared memory signal barriers: a remote one must have its init fenced.
  auto mbar = value_of(r, site, "mbar");
  if (!mbar) return;
  const SharedAddress b = split_shared(*mbar, ranked_);
  if (auto mask = value_of(r, site, "ctaMask")) {
    for (int rank = 0; rank < 16 && rank < ctas_; ++rank)
      if (*mask >> rank & 1) remote_use(idx, rank, b.offset);
  } else if (b.rank) {
    remote_use(idx, *b.rank, b.offset);
  }
}

void ClusterReplay::note_fence(size_t idx) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const Who w = who(r, t_.meta);
  switch (static_cast<TraceOp>(r.op)) {
    case TraceOp::fence_mbarrier_init: init_fence_[w.cta] = idx; break;
    case TraceOp::cluster_arrive:
      if (site.text.find(".relaxed") == std::string::npos) cluster_arrive_[w.cta] = idx;
      break;
    case TraceOp::cluster_wait: cluster_wait_[w.cta] = idx; break;
    case TraceOp::fence_proxy_other:
      if (site.text.find("tensormap::generic.acquire") != std::string::npos)
        if (auto a = value_of(r, site, "addr")) map_acquired_[{w.cta, *a}] = idx;
      break;
    case TraceOp::tensormap_replace:
      if (auto a = value_of(r, site, "addr")) map_written_[*a] = idx;
      break;
    case TraceOp::tensormap_cp_fenceproxy:
      if (auto a = value_of(r, site, "dst")) map_written_[*a] = idx;
      break;
    default: break;
  }
}

void ClusterReplay::before_wait(size_t idx, const ptx::Step& step) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  auto addr = value_of(r, site, "addr");
  auto parity = value_of(r, site, "phaseParity");
  if (!addr || !parity || !step.as<ptx::MbarWait>().parity) return;
  const Who w = who(r, t_.meta);
  const SharedAddress a = split_shared(*addr, ranked_);
  const int cta = a.rank.value_or(w.cta);
  const model::MBarrier* b = engine_->find_barrier(cta, a.offset);
  if (!b || !b->valid) return;
  last_wait_[{w, cta, a.offset}] = {idx, static_cast<int64_t>(*parity), b->phase,
                                    static_cast<int64_t>(b->phase & 1) != static_cast<int64_t>(*parity)};
}

void ClusterReplay::shared_load(size_t idx) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const Who w = who(r, t_.meta);
  auto addr = value_of(r, site, "addr");
  auto size = value_of(r, site, "size");
  if (!addr || !size) return;
  const SharedAddress a = split_shared(*addr, ranked_);
  const int cta = a.rank.value_or(w.cta);
  if (cta >= ctas_) return;
  generic_read_of_misphased(idx, cta, static_cast<uint32_t>(a.offset), static_cast<uint32_t>(a.offset + *size));
  auto writer = engine_->in_flight_writer(cta, a.offset, a.offset + *size);
  if (!writer) return;
  const std::string bytes = "shared bytes [" + std::to_string(a.offset) + ", " + std::to_string(a.offset + *size) +
                            ") of CTA " + std::to_string(cta);
  for (const auto& [bcta, boff] : writer->barriers) {
    auto it = last_wait_.find({w, bcta, boff});
    if (it == last_wait_.end() || !it->second.at_once) continue;
    const Wait& wt = it->second;
    sink_.add("check.wrong-parity", Severity::error,
              "reads " + bytes + " that " + writer->desc + " is still writing: the wait at " +
                  site_place(t_, t_.records[wt.record].site) + " on the mbarrier at shared offset " +
                  std::to_string(boff) + " waited on parity " + std::to_string(wt.parity) + " while the barrier was in phase " +
                  std::to_string(wt.phase) + " (parity " + std::to_string(wt.phase & 1) +
                  "), so it returned at once, before the data arrived; wait on parity " + std::to_string(wt.phase & 1),
              idx);
    return;
  }
  std::string on;
  for (const auto& [bcta, boff] : writer->barriers)
    on += (on.empty() ? "" : ", ") + ("offset " + std::to_string(boff) + " of CTA " + std::to_string(bcta));
  sink_.add("check.read-before-wait", Severity::error,
            "reads " + bytes + " that " + writer->desc + " is still writing: no wait completed its mbarrier's phase (" +
                (on.empty() ? "none" : on) + ") before this read",
            idx);
}

void ClusterReplay::generic_read_of_misphased(size_t idx, int cta, uint32_t begin, uint32_t end) {
  // The box starting at or before the read's first byte, if the read reaches into it.
  auto it = misphased_.upper_bound({cta, begin});
  if (it == misphased_.begin()) return;
  --it;
  auto& [key, box] = *it;
  if (key.first != cta || box.end <= begin || box.warned) return;
  box.warned = true;
  sink_.add("check.swizzle-phase", Severity::warning,
            "the swizzled box lands at shared offset " + std::to_string(key.second) + ", 128- but not " +
                std::to_string(box.atom) + "-byte aligned, and an ordinary load at " +
                site_place(t_, t_.records[idx].site) + " reads it (shared bytes [" + std::to_string(begin) + ", " +
                std::to_string(end) + ") of CTA " + std::to_string(cta) +
                "): the swizzle pattern follows the address bits, so its rows start at another phase than a "
                "reader that assumes an aligned buffer expects (no fault); swizzle with the absolute address bits "
                "as wgmma does, or align the buffer to " + std::to_string(box.atom) + " bytes",
            box.copy);
}

void ClusterReplay::explain_fault() {
  std::string last;
  int listed = 0;
  bool copy_found = false;
  for (const auto& [key, idx] : last_of_) {
    const Record& r = t_.records[idx];
    const Who w = who(r, t_.meta);
    const auto op = static_cast<TraceOp>(r.op);
    if (listed++ < 16)
      last += std::string(last.empty() ? "" : "; ") + "cta " + std::to_string(w.cta) + " thread " +
              std::to_string(w.thread) + ": " + std::string(instrument::to_string(op)) + " at " + site_place(t_, r.site);
    if (!is_copy(op)) continue;
    copy_found = true;
    sink_.add("check.fault", Severity::error,
              "the kernel faulted (" + t_.meta.driver_result + "); this " + std::string(instrument::to_string(op)) +
                  " is the last operation its thread recorded, so the fault is among these copies",
              idx);
  }
  if (!copy_found && !last_of_.empty())
    sink_.add("check.fault", Severity::error,
              "the kernel faulted (" + t_.meta.driver_result + ") after the last operation the trace holds; no copy "
              "was the last operation of a thread",
              last_of_.rbegin()->second);
  if (listed > 16) last += "; and " + std::to_string(listed - 16) + " more threads";
  report_.outcome_explained += (report_.outcome_explained.empty() ? "" : "\n") +
                               ("the kernel faulted (" + t_.meta.driver_result + "); the last operation each thread "
                                "recorded: " + last);
}

}  // namespace tmakit::check::detail
