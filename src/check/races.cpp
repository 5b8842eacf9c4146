// The happens-before race check (races.hpp). One walk over a cluster's records in index order
// (a total order; within a thread, program order) moves the clocks of race_order.hpp along the
// program's synchronisation and checks every ordinary shared access and every copy's shared
// bytes against what came before (race_memory.hpp). A wait's record is written after it returns
// and an arrive's after the arrive, so a waiter's record can come before the arrive it saw: that
// thread's records wait behind it until the walk has seen the phase complete (as the replay
// does); what is still held at the end goes on in index order, its waits taken as complete.
#include <algorithm>

#include "race_pass.hpp"
#include "tmakit/model/gather4.hpp"
#include "tmakit/model/im2col.hpp"

namespace tmakit::check::detail {
namespace {

using instrument::TraceOp;

using instrument::is_copy;
bool relaxed(const Site& s) { return s.text.find(".relaxed") != std::string::npos; }

// Records whose processing can let a held thread go on (they change a barrier's state).
bool may_release(TraceOp op) {
  return is_copy(op) || (op >= TraceOp::mbar_init && op <= TraceOp::mbar_inval) || instrument::is_cta_barrier(op) ||
         op == TraceOp::cluster_arrive || op == TraceOp::cluster_wait;
}

// One byte range a copy touches, and when it is done with it.
struct Part {
  int cta;
  uint32_t begin, end;
  bool write;
  Completion done;
};

}  // namespace

const ptx::Step* RacePass::step(uint32_t site) {
  auto [it, fresh] = steps_.try_emplace(site);
  if (fresh) {
    Diagnostics d;
    if (auto inst = ptx::parse_instruction(t_.sites[site].text, d, "site " + std::to_string(site))) {
      inst->guard.reset();
      it->second = ptx::decode(std::move(*inst));
    }
  }
  return it->second ? &*it->second : nullptr;
}

// (CTA, offset) of a shared address; a rank past the cluster gives a CTA that nothing tracks.
std::pair<int, uint32_t> RacePass::shared(uint64_t address, int own) const {
  const SharedAddress a = split_shared(address, replay_.ranked());
  if (!a.rank) return {own, a.offset};
  return {*a.rank >= 0 && *a.rank < ctas_ ? *a.rank : ctas_, a.offset};
}

void RacePass::run(const std::vector<size_t>& records) {
  // A pair needs an ordinary shared access and a copy in the same trace.
  bool generic = false, async = false;
  for (size_t idx : records) {
    const auto op = static_cast<TraceOp>(t_.records[idx].op);
    generic = generic || op == TraceOp::shared_store || op == TraceOp::shared_load;
    async = async || (is_copy(op) && op != TraceOp::bulk_prefetch && op != TraceOp::tensor_prefetch);
  }
  if (!generic || !async) return;
  if (!t_.cta_barriers) {
    const std::string note =
        "races between threads and the copy engine are not checked: this trace's site table does not record CTA "
        "barriers (bar.sync), so the order between threads is not known (a module instrumented by an older tmakit; "
        "instrument it again)";
    if (std::find(report_.notes.begin(), report_.notes.end(), note) == report_.notes.end()) report_.notes.push_back(note);
    return;
  }
  for (size_t idx : records) {
    if (order_.entries() > opt_.max_race_clock_entries) {
      report_.notes.push_back("the race check stopped at record " + std::to_string(idx) + ": its clocks would hold more "
                              "than " + std::to_string(opt_.max_race_clock_entries) + " entries (threads and "
                              "synchronisation objects times clock components); races after it are not checked");
      held_.clear();
      break;
    }
    const Who w = who(t_.records[idx], t_.meta);
    if (w.cta >= ctas_) continue;  // the replay reports it (check.cluster-rank)
    const uint32_t th = order_.thread(w.cta, w.thread);
    if (auto h = held_.find(th); h != held_.end()) {
      h->second.push_back(idx);
      continue;
    }
    if (!process(idx, th, false)) {
      hold(th, idx);
      continue;
    }
    if (!held_.empty() && may_release(static_cast<TraceOp>(t_.records[idx].op))) retry();
  }
  flush();
  if (memory_.bounded())
    report_.notes.push_back("the race check keeps at most " + std::to_string(opt_.max_race_ranges) +
                            " shared byte ranges and " + std::to_string(opt_.max_race_reads) +
                            " reads a cluster; this trace reached the bound, so some accesses were not followed "
                            "and races among them may be missed");
  emit();
}

void RacePass::hold(uint32_t th, size_t idx) {
  held_[th].push_back(idx);
  held_in_cta_[order_.cta_of(th)]++;
}

void RacePass::retry() {
  for (bool progress = true; progress;) {
    progress = false;
    for (auto it = held_.begin(); it != held_.end();) {
      auto& queue = it->second;
      while (!queue.empty() && process(queue.front(), it->first, false)) queue.pop_front(), progress = true;
      if (queue.empty()) {
        held_in_cta_[order_.cta_of(it->first)]--;
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

// The end of the walk: what is still held goes on in index order, its waits taken as complete
// (the hardware saw them return).
void RacePass::flush() {
  while (!held_.empty()) {
    auto first = std::min_element(held_.begin(), held_.end(),
                                  [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
    process(first->second.front(), first->first, true);
    first->second.pop_front();
    if (first->second.empty()) {
      held_in_cta_[order_.cta_of(first->first)]--;
      held_.erase(first);
    }
    retry();
  }
}

bool RacePass::process(size_t idx, uint32_t th, bool force) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const auto op = static_cast<TraceOp>(r.op);
  const int cta = order_.cta_of(th);
  const bool others_held = held_in_cta_[cta] - static_cast<int>(held_.count(th)) > 0;
  if (!order_.settle(th, force || !others_held)) return false;
  switch (op) {
    case TraceOp::shared_store: case TraceOp::shared_load:
      access(idx, th, op == TraceOp::shared_store);
      return true;
    case TraceOp::bar_sync: case TraceOp::bar_red: case TraceOp::bar_arrive: {
      const uint64_t count = value_of(r, site, "count").value_or(0);
      order_.cta_barrier(th, static_cast<uint32_t>(value_of(r, site, "id").value_or(0)),
                         static_cast<uint32_t>(std::min<uint64_t>(count, 1u << 16)), op != TraceOp::bar_arrive);
      return true;
    }
    case TraceOp::cluster_arrive: order_.cluster_arrive(th, !relaxed(site)); return true;
    case TraceOp::cluster_wait: order_.cluster_wait(th); return true;
    case TraceOp::fence_proxy_async:
      if (const ptx::Step* s = step(r.site))
        if (const auto* f = std::get_if<ptx::Fence>(&s->body))
          if (f->kind == ptx::Fence::Kind::proxy_async && f->space != ptx::Space::global) order_.proxy_fence(th);
      return true;
    case TraceOp::fence_proxy_other:
      // The one-way forms (fence.proxy.async::generic.release/acquire...) order the generic proxy
      // against the async one too: taken as fences, so that no store they fence is reported.
      if (site.text.find("fence.proxy.async") != std::string::npos && site.text.find(".global") == std::string::npos)
        order_.proxy_fence(th);
      return true;
    case TraceOp::commit_group: order_.commit_group(th); return true;
    case TraceOp::wait_group: order_.wait_group(th, value_of(r, site, "N").value_or(0)); return true;
    default: break;
  }
  if (is_copy(op)) {
    copy(idx, th, op);
    return true;
  }
  return mbarrier(idx, th, op, force);
}

bool RacePass::mbarrier(size_t idx, uint32_t th, TraceOp op, bool force) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const auto addr = value_of(r, site, "addr");
  if (!addr || op < TraceOp::mbar_init || op > TraceOp::mbar_inval) return true;
  const auto [cta, offset] = shared(*addr, order_.cta_of(th));
  const ptx::Step* s = step(r.site);
  switch (op) {
    case TraceOp::mbar_init:
      order_.mbar_init(cta, offset, static_cast<uint32_t>(value_of(r, site, "count").value_or(1)));
      return true;
    case TraceOp::mbar_inval: order_.mbar_inval(cta, offset); return true;
    case TraceOp::mbar_arrive: {
      Order::Arrive a;
      a.count = static_cast<uint32_t>(value_of(r, site, "count").value_or(1));
      a.tx = static_cast<int64_t>(value_of(r, site, "txCount").value_or(0));
      a.release = !relaxed(site);
      a.token = value_of(r, site, "state");
      if (const auto* m = s ? std::get_if<ptx::MbarArrive>(&s->body) : nullptr)
        a.drop = m->drop, a.no_complete = m->no_complete;
      order_.mbar_arrive(th, cta, offset, a);
      return true;
    }
    case TraceOp::mbar_expect_tx: case TraceOp::mbar_complete_tx:
      order_.mbar_tx(cta, offset, static_cast<int64_t>(value_of(r, site, "txCount").value_or(0)),
                     op == TraceOp::mbar_complete_tx);
      return true;
    case TraceOp::mbar_test_wait: case TraceOp::mbar_try_wait: {
      // A failed poll orders nothing; a .relaxed wait acquires nothing.
      if (!(r.flags & instrument::kFlagWaitComplete) || relaxed(site)) return true;
      const auto* w = s ? std::get_if<ptx::MbarWait>(&s->body) : nullptr;
      std::optional<uint32_t> parity;
      std::optional<uint64_t> token;
      if (w && w->parity) parity = static_cast<uint32_t>(value_of(r, site, "phaseParity").value_or(0));
      else token = value_of(r, site, "state");
      return order_.mbar_wait(th, cta, offset, parity, token, force);
    }
    default: return true;
  }
}

// A tensor copy's shared footprint and the bytes it delivers, by its map (nullopt: the map is
// not known, so neither is).
std::optional<std::pair<uint64_t, uint64_t>> RacePass::tensor_extent(size_t idx, const ptx::TensorCopy& tc) {
  auto m = replay_.tensor_maps().find(idx);
  if (m == replay_.tensor_maps().end()) return std::nullopt;
  const tensor_map::TensorMap& map = replay_.maps()[m->second].map;
  if (tc.mode == ptx::LoadMode::gather4 || tc.mode == ptx::LoadMode::scatter4)
    return std::pair{model::gather4_footprint(map), model::gather4_bytes(map)};
  const auto walk = model::im2col_mode_of(tc.mode);
  if (!walk) return std::pair{map.smem_footprint(), map.bytes_per_box()};
  // im2col: the rows depend on the instruction's im2colInfo (as the model reads it).
  model::Im2colInfo info;
  info.mode = *walk;
  const Record& r = t_.records[idx];
  if (const auto* f = find_field(t_.sites[r.site], "im2colInfo")) {
    std::vector<int64_t> v;
    for (uint32_t k = 0; k < f->count; ++k) v.push_back(static_cast<int64_t>(element(r, *f, k)));
    if (info.mode == model::Im2colMode::im2col) std::copy_n(v.begin(), std::min<size_t>(v.size(), 3), info.offsets.begin());
    else if (v.size() == 2) info.w_halo = v[0], info.w_offset = v[1];
  }
  try {
    return std::pair{model::im2col_footprint(map, info), model::im2col_bytes(map, info)};
  } catch (const DiagnosticError&) {
    return std::nullopt;  // the model refuses the walk (and says so in the replay)
  }
}

void RacePass::copy(size_t idx, uint32_t th, TraceOp op) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  const ptx::Step* s = step(r.site);
  const int own = order_.cta_of(th);
  if (!s || op == TraceOp::bulk_prefetch || op == TraceOp::tensor_prefetch) return;
  // What it reads and writes in shared memory, and where it completes: the destination's mbarrier
  // (in each CTA a multicast writes), or the issuing thread's next bulk group.
  bool dst_shared = false, src_shared = false, via_group = false;
  uint64_t footprint = 0, bytes = 0;
  bool known = true;
  if (const auto* tc = std::get_if<ptx::TensorCopy>(&s->body)) {
    dst_shared = tc->kind == ptx::TensorCopy::Kind::load;
    src_shared = !dst_shared;
    via_group = !dst_shared;
    if (auto e = tensor_extent(idx, *tc)) footprint = e->first, bytes = e->second;
    else known = false;
  } else if (const auto* bc = std::get_if<ptx::BulkCopy>(&s->body)) {
    dst_shared = bc->dst != ptx::Space::global;
    src_shared = bc->src != ptx::Space::global;
    via_group = !dst_shared;
    footprint = bytes = value_of(r, site, "size").value_or(0);
  } else if (const auto* br = std::get_if<ptx::BulkReduce>(&s->body)) {
    dst_shared = br->dst != ptx::Space::global;
    src_shared = true;
    via_group = !dst_shared;
    footprint = bytes = value_of(r, site, "size").value_or(0);
  } else {
    return;
  }
  footprint = std::min<uint64_t>(footprint, SharedHistory::kWindow);
  RaceCopy c{idx, {}};
  std::vector<Part> parts;
  std::optional<Completion> first;
  if (dst_shared) {
    const auto dst = shared(value_of(r, site, "dstMem").value_or(0), own);
    const auto mbar = shared(value_of(r, site, "mbar").value_or(0), own);
    std::vector<std::pair<int, int>> dests;  // (destination CTA, its barrier's CTA)
    if (auto mask = value_of(r, site, "ctaMask")) {
      for (int rank = 0; rank < ctas_ && rank < 16; ++rank)
        if (*mask >> rank & 1) dests.push_back({rank, rank});  // the same offsets in each CTA
    } else {
      dests.push_back({dst.first, mbar.first});
    }
    for (const auto& [d, b] : dests) {
      if (b < 0 || b >= ctas_) continue;
      const Completion done = order_.mbar_copy(th, b, mbar.second, known ? bytes : 0);
      if (!first) first = done;
      c.barriers.push_back({b, mbar.second});
      if (known) parts.push_back({d, dst.second, static_cast<uint32_t>(dst.second + footprint), true, done});
    }
  }
  if (src_shared && known) {
    const auto src = shared(value_of(r, site, "srcMem").value_or(0), own);
    const Completion done = via_group || !first ? order_.group_copy(th) : *first;
    parts.push_back({src.first, src.second, static_cast<uint32_t>(src.second + footprint), false, done});
  }
  const uint32_t id = static_cast<uint32_t>(copies_.size());
  copies_.push_back(std::move(c));
  for (const Part& p : parts) {
    conflicts_.clear();
    memory_.copy(p.cta, p.begin, std::max(p.end, p.begin), p.write, {id, p.done}, order_.clocks(th), conflicts_);
    found(conflicts_);
  }
  order_.issued(th);
}

void RacePass::access(size_t idx, uint32_t th, bool write) {
  const Record& r = t_.records[idx];
  const Site& site = t_.sites[r.site];
  auto addr = value_of(r, site, "addr");
  auto size = value_of(r, site, "size");
  if (!addr || !size || *size == 0) return;
  const auto [cta, offset] = shared(*addr, order_.cta_of(th));
  const GenericAccess g{th, order_.component(th), order_.epoch(th), idx};
  conflicts_.clear();
  const uint64_t end = std::min<uint64_t>(uint64_t{offset} + *size, SharedHistory::kWindow);
  memory_.generic(cta, offset, static_cast<uint32_t>(std::max<uint64_t>(end, offset)), write, g, order_.clocks(th).hb,
                  conflicts_);
  found(conflicts_);
}

void find_races(const TraceDir& t, const std::vector<size_t>& records, const ClusterReplay& replay,
                const ReplayOptions& options, FindingSink& sink, Report& report) {
  RacePass(t, replay, options, sink, report).run(records);
}

}  // namespace tmakit::check::detail
