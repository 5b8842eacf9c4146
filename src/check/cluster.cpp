// One cluster's records replayed on one engine (cluster.hpp). The records' index order is a
// total order (the SM clock each record read, trace.hpp), and within a thread it is program order.
// A wait the hardware saw succeed is replayed as a blocking wait; when the model cannot
// satisfy it yet (its record can come before the arrive's, which is written after the
// arrive), that thread's later records wait behind it while the other threads go on.
#include <algorithm>
#include <cctype>

#include "cluster.hpp"

namespace tmakit::check::detail {

using instrument::TraceOp;

std::string site_place(const TraceDir& t, uint32_t site) {
  const Site& s = t.sites[site];
  if (s.line <= 0) return t.module_name + ".ptx:" + std::to_string(s.ptx_line);
  const auto frames = s.frames();
  const auto& user = frames[instrument::user_frame(frames)];  // where the finding itself is placed
  return user.file + ":" + std::to_string(user.line);
}

void FindingSink::add(const std::string& rule, Severity sev, const std::string& message, std::optional<size_t> record,
                      int count, const std::string& key) {
  const int64_t site = record ? static_cast<int64_t>(trace_->records[*record].site) : -1;
  auto [it, fresh] = index_.try_emplace({rule, site, key}, findings_.size());
  if (!fresh) {
    findings_[it->second].count += count;
    return;
  }
  Finding f;
  f.count = count;
  f.rule = rule;
  f.severity = to_string(sev);
  f.message = message;
  if (record) {
    const Record& r = trace_->records[*record];
    const Site& s = trace_->sites[r.site];
    const Who w = who(r, trace_->meta);
    f.site = r.site;
    f.frames = s.frames();
    f.frame = instrument::user_frame(f.frames);
    f.file = s.line > 0 ? f.frames[f.frame].file : trace_->module_name + ".ptx";
    f.line = s.line > 0 ? f.frames[f.frame].line : s.ptx_line;
    f.column = s.line > 0 ? f.frames[f.frame].column : 0;
    f.cta = w.cta;
    f.thread = w.thread;
    f.cluster = w.cluster;
  }
  findings_.push_back(std::move(f));
}

ClusterReplay::ClusterReplay(const TraceDir& t, std::vector<size_t> records, const ReplayOptions& opt,
                             FindingSink& sink, Report& report)
    : t_(t), records_(std::move(records)), opt_(opt), sink_(sink), report_(report) {
  ctas_ = static_cast<int>(t.meta.cluster[0] * t.meta.cluster[1] * t.meta.cluster[2]);
}

// The record a diagnostic's place names: where() ends in "record N)", and an operation's
// description starts with the place it was issued at.
std::optional<size_t> ClusterReplay::record_in(const std::string& place) const {
  const size_t k = place.find("record ");
  if (k == std::string::npos) return std::nullopt;
  size_t idx = 0, i = k + 7;
  if (i >= place.size() || !std::isdigit(static_cast<unsigned char>(place[i]))) return std::nullopt;
  for (; i < place.size() && std::isdigit(static_cast<unsigned char>(place[i])); ++i) idx = idx * 10 + (place[i] - '0');
  if (idx >= t_.records.size()) return std::nullopt;
  return idx;
}

std::string ClusterReplay::where(size_t idx) const {
  const Record& r = t_.records[idx];
  const Who w = who(r, t_.meta);
  // Every step is named by its place (millions a launch): each site's text is made once.
  if (places_.empty()) places_.resize(t_.sites.size());
  std::string& place = places_[r.site];
  if (place.empty()) place = site_place(t_, r.site);
  std::string out;
  out.reserve(place.size() + 48);
  out += place;
  out += " (cta ";
  out += std::to_string(w.cta);
  out += ", thread ";
  out += std::to_string(w.thread);
  out += ", record ";
  out += std::to_string(idx);
  out += ')';
  return out;
}

void ClusterReplay::run() {
  model::EngineConfig cfg;
  cfg.ctas = ctas_;
  cfg.shared_bytes = 232448;  // the largest window (sm_90): static shared memory is not in the trace
  if (auto target = spec::parse_target(t_.meta.target)) cfg.target = *target;
  engine_ = std::make_unique<model::Engine>(cfg);
  scan_maps();
  global_.allocate(engine_->global(), opt_.max_global_bytes, report_.notes);
  decoder_ = std::make_unique<Decoder>(t_, maps_, *engine_, global_, ranked_);
  try {
    for (size_t idx : records_) {
      const Who w = who(t_.records[idx], t_.meta);
      auto held = held_.find(w);
      if (held != held_.end()) {
        held->second.push_back(idx);
        continue;
      }
      if (!process(idx)) {
        held_[w].push_back(idx);
        continue;
      }
      // Only what changes a barrier or issues a copy can release a waiting thread.
      const auto op = static_cast<TraceOp>(t_.records[idx].op);
      const bool feeds = instrument::is_copy(op) ||
                         (op >= TraceOp::mbar_init && op <= TraceOp::mbar_complete_tx);
      if (!held_.empty() && feeds) retry();
    }
    end_of_trace();
  } catch (const DiagnosticError& e) {
    const Diagnostic& d = e.diagnostic();
    sink_.add(d.rule, d.severity, d.message, record_in(d.where));
    if (t_.meta.outcome == "timeout" && report_.outcome_explained.empty()) {
      const std::string cause = "the model stopped at an earlier error, the likely cause: " + d.message + " [" + d.rule + "]";
      report_.outcome_explained = "the kernel hung; " + cause;
      const auto waits = failing_last_waits();
      if (!waits.empty())
        sink_.add("check.hang", Severity::error, "the kernel did not finish" + timeout_text() + "; " + cause, waits.front());
    }
  }
  if (t_.meta.outcome == "fault") explain_fault();
}

void ClusterReplay::retry() {
  // held_ holds only threads that wait: a thread leaves it when its queue empties.
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto it = held_.begin(); it != held_.end();) {
      auto& held = it->second;
      while (!held.empty() && process(held.front())) held.pop_front(), progress = true;
      it = held.empty() ? held_.erase(it) : std::next(it);
    }
  }
}

bool ClusterReplay::step(const ptx::Step& step, size_t idx, bool hold) {
  const Who w = who(t_.records[idx], t_.meta);
  const std::string at = where(idx);
  if (w.cta >= ctas_)
    throw DiagnosticError({Severity::error, "check.cluster-rank",
                           "a record of CTA rank " + std::to_string(w.cta) + " in a launch whose clusters have " +
                               std::to_string(ctas_) + " CTAs (meta.json.cluster)",
                           at});
  if (hold) {
    engine_->step(step, w.cta, w.thread, at);
    return true;
  }
  return engine_->try_step(step, w.cta, w.thread, at);
}

bool ClusterReplay::process(size_t idx) {
  engine_->set_clock(idx + 1);
  if (!process_record(idx)) return false;
  previous_[thread_key(who(t_.records[idx], t_.meta))] = idx;
  return true;
}

bool ClusterReplay::process_record(size_t idx) {
  const Record& r = t_.records[idx];
  const auto op = static_cast<TraceOp>(r.op);
  const Who w = who(r, t_.meta);
  if (r.op == kOpTensorMapLo || r.op == kOpTensorMapHi) return true;  // read by scan_maps
  if (r.op == kOpSharedLoad) {
    shared_load(idx);
    return true;
  }
  switch (op) {
    case TraceOp::fence_proxy_other: case TraceOp::tensormap_replace: case TraceOp::tensormap_cp_fenceproxy:
      note_fence(idx);  // not the engine's (it does not model tensormap.*)
      return true;
    case TraceOp::shared_store:
      for (const auto& st : decoder_->shared_stores(r, "$s")) step(st, idx, false);
      report_.replayed++;
      return true;
    case TraceOp::fence_mbarrier_init: case TraceOp::cluster_arrive: case TraceOp::cluster_wait:
      note_fence(idx);
      break;
    default: break;
  }
  const bool wait = op == TraceOp::mbar_test_wait || op == TraceOp::mbar_try_wait;
  const bool succeeded = r.flags & instrument::kFlagWaitComplete;
  // A failed poll is a fact about the barrier at that moment (observe_failed_wait); it is
  // stepped as a blocking wait only where it is a hang's last word (end_of_trace).
  if (wait && !succeeded) {
    failed_poll(idx);
    return true;
  }
  if (instrument::is_copy(op)) before_copy(idx);
  std::optional<size_t> map;
  if (auto it = map_of_.find(idx); it != map_of_.end()) map = it->second;
  auto d = decoder_->decode(r, map, wait, "$" + std::to_string(static_cast<int>(r.op)) + "_");
  if (!d.step) {
    if (!d.skip_rule.empty()) sink_.add(d.skip_rule, Severity::error, "this operation's " + d.skip.substr(4), idx);
    else report_.notes.push_back(where(idx) + ": not replayed: " + d.skip);
    incomplete_ = true;
    return true;
  }
  if (wait) before_wait(idx, *d.step);
  const Site& site = t_.sites[r.site];
  if (op == TraceOp::mbar_expect_tx || (op == TraceOp::mbar_arrive && find_field(site, "txCount")))
    if (auto a = value_of(r, site, "addr"))
      arms_[{split_shared(*a, ranked_).rank.value_or(w.cta), split_shared(*a, ranked_).offset}] = idx;
  if (op == TraceOp::mbar_init) {
    if (auto a = value_of(r, t_.sites[r.site], "addr")) inits_[{w.cta, split_shared(*a, ranked_).offset}] = idx;
  }
  if (op == TraceOp::mbar_arrive || op == TraceOp::mbar_expect_tx || op == TraceOp::mbar_complete_tx) {
    if (auto a = value_of(r, t_.sites[r.site], "addr")) {
      const SharedAddress sa = split_shared(*a, ranked_);
      if (sa.rank) remote_use(idx, *sa.rank, sa.offset);
      // When this arrive took effect on the hardware is known only to follow its record: it was
      // recorded before it ran, or it travels to another CTA's barrier. failed_poll() does not
      // hold a phase it completed against a poll.
      if (op == TraceOp::mbar_arrive && (!site.after || (sa.rank && *sa.rank != w.cta)))
        uncertain_arrives_[{sa.rank.value_or(w.cta), sa.offset}].push_back(idx);
    }
  }
  if (!step(*d.step, idx, false)) return false;
  if (op == TraceOp::mbar_arrive) decoder_->note_token(r, "$" + std::to_string(static_cast<int>(r.op)) + "_");
  report_.replayed++;
  return true;
}

// The hardware's poll returned false: the phase its parity (or state token) names had not
// completed. Where the model would let the wait pass, the copies in flight to that barrier are
// the model's free choice: they land (in completion order) until the model agrees. When none
// is left to land and the model still lets the wait pass, no schedule of the model matches the
// hardware: check.wait-disagrees says where (a warning: an arrive recorded before its
// instruction ran can make the model run ahead of the hardware by one record).
void ClusterReplay::failed_poll(size_t idx) {
  const Record& r = t_.records[idx];
  auto d = decoder_->decode(r, std::nullopt, false, "$f_");
  if (!d.step) return;
  const Who w = who(r, t_.meta);
  if (w.cta >= ctas_) return;  // step() reports the rank when the thread's next step runs
  if (engine_->observe_failed_wait(*d.step, w.cta, where(idx))) return;
  // The poll ran after the thread's previous record was written and before its own: a phase
  // the model completed at a later record may have completed after the poll on the hardware
  // (a wait's record is written after it returns, an arrive without a result before it runs).
  // Only a phase complete before the thread's previous record contradicts the poll.
  std::string state;
  const auto prev = previous_.find(thread_key(w));
  if (auto a = value_of(r, t_.sites[r.site], "addr")) {
    const SharedAddress sa = split_shared(*a, ranked_);
    if (const model::MBarrier* b = engine_->find_barrier(sa.rank.value_or(w.cta), sa.offset)) {
      if (b->completed_at == 0 || prev == previous_.end() || b->completed_at - 1 >= prev->second) return;
      // An arrive of that phase whose effect may have come later than its record (above).
      if (auto u = uncertain_arrives_.find({sa.rank.value_or(w.cta), sa.offset}); u != uncertain_arrives_.end()) {
        // The phase's arrives: after the record that completed the phase before (clock - 1), up to
        // the one that completed it; previous_completed_at is 0 where none did.
        auto it = std::lower_bound(u->second.begin(), u->second.end(), b->previous_completed_at);
        if (it != u->second.end() && *it <= b->completed_at - 1) return;
      }
      state = ": on the model the barrier is in " + b->describe() + ", its last phase completed at record " +
              std::to_string(b->completed_at - 1) + ", before this thread's previous record (" +
              std::to_string(prev->second) + ")";
    }
  }
  const auto p = value_of(r, t_.sites[r.site], "phaseParity");
  sink_.add("check.wait-disagrees", Severity::warning,
            "the hardware's poll of this wait returned false" +
                (p ? " (phaseParity " + std::to_string(*p) + ")" : std::string()) +
                ", but every order of completions the model can choose lets it pass" + state +
                "; the trace lacks an operation on this barrier, or the model's order of events is not the "
                "hardware's",
            idx);
}

}  // namespace tmakit::check::detail
