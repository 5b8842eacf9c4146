// One cluster's records replayed on one engine (cluster.hpp). The records' index order is a
// total order (each took its index with atom.add), and within a thread it is program order.
// A wait the hardware saw succeed is replayed as a blocking wait; when the model cannot
// satisfy it yet (its record can come before the arrive's, which is written after the
// arrive), that thread's later records wait behind it while the other threads go on.
#include <algorithm>
#include <cctype>

#include "cluster.hpp"
#include "tmakit/terminal_text.hpp"

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

// Why a hung barrier's phase never completes, from the trace: which threads arrived on it in
// its earlier phases, and where each of them stands now. A thread that fed the barrier and now
// waits itself (on this barrier or another) is the classic cycle: its next arrive, and the copy
// that brings the bytes, sit behind its wait.
std::string ClusterReplay::behind_the_wait(size_t wait_record, const std::vector<size_t>& final_waits) const {
  const Record& wr = t_.records[wait_record];
  const auto addr = value_of(wr, t_.sites[wr.site], "addr");
  if (!addr) return "";
  const SharedAddress sa = split_shared(*addr, ranked_);
  const std::pair<int, uint32_t> bar{sa.rank.value_or(who(wr, t_.meta).cta), sa.offset};
  std::string out;
  const model::MBarrier* state = engine_->find_barrier(bar.first, bar.second);
  if (auto p = value_of(wr, t_.sites[wr.site], "phaseParity")) {
    out += "; the waiters poll for parity " + std::to_string(*p);
    if (const model::MBarrier* b = state)
      out += *p == (b->phase & 1) ? ", the parity of the phase it is in (" + std::to_string(b->phase) + "), so they wait for that phase to complete"
                                  : ", the phase before the one it is in";
  }
  std::map<Who, size_t> arrivers;  // each thread's last arrive on the barrier
  for (size_t idx : records_) {
    const Record& r = t_.records[idx];
    if (static_cast<TraceOp>(r.op) != TraceOp::mbar_arrive) continue;
    auto a = value_of(r, t_.sites[r.site], "addr");
    if (!a) continue;
    const SharedAddress s = split_shared(*a, ranked_);
    if (std::pair<int, uint32_t>{s.rank.value_or(who(r, t_.meta).cta), s.offset} == bar) arrivers[who(r, t_.meta)] = idx;
  }
  if (arrivers.empty()) return out + "; no thread of the trace ever arrived on it";
  std::map<Who, size_t> waiting;
  for (size_t idx : final_waits) waiting[who(t_.records[idx], t_.meta)] = idx;
  int said = 0;
  for (const auto& [w, arrive] : arrivers) {
    if (said == 3) {
      out += "; and " + std::to_string(arrivers.size() - 3) + " more threads arrived on it";
      break;
    }
    const std::string thread = "cta " + std::to_string(w.cta) + " thread " + std::to_string(w.thread);
    if (auto it = waiting.find(w); it != waiting.end())
      // With every arrival in, the phase waits for bytes alone: a copy behind the wait may be what
      // was to bring them, or no copy brings them (armed too many: expect_tx 16 bytes long).
      out += "; " + thread + " arrived on it before (last at " + site_place(t_, t_.records[arrive].site) +
             ") and now waits itself at " + site_place(t_, t_.records[it->second].site) +
             (state && state->pending == 0
                  ? ": if a copy it has yet to issue was to bring the missing bytes, that copy sits behind the wait"
                  : ": its next arrive, and the copy that brings the bytes, sit behind that wait");
    else if (auto last = last_of_.find(thread_key(w)); last != last_of_.end())
      out += "; " + thread + " arrived on it before (last at " + site_place(t_, t_.records[arrive].site) +
             ") and did not arrive again: its last record is at " + site_place(t_, t_.records[last->second].site) +
             warp_wide_after(w, t_.records[last->second].site, waiting);
    ++said;
  }
  return out;
}

// A lane that stopped recording while lanes of its warp wait elsewhere for good: the first
// warp-wide instruction after its last site (Site::warp_wide_line) waits for every lane its mask
// names, so a lane that reached it alone waits there (CuTe DSL's TMA copy called by one thread:
// the copy's elect.sync over the whole warp). Said as what may be, with the instruction's text.
std::string ClusterReplay::warp_wide_after(const Who& w, uint32_t site, const std::map<Who, size_t>& waiting) const {
  const Site& s = t_.sites[site];
  if (s.warp_wide_line <= 0) return "";
  size_t mates = 0, first = 0;
  for (const auto& [o, idx] : waiting)
    if (o.cta == w.cta && o.thread / 32 == w.thread / 32 && o.thread != w.thread && mates++ == 0) first = idx;
  if (!mates) return "";
  std::string text;  // the instruction's words, one space between
  for (char c : s.warp_wide_text)
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
    else if (!text.empty() && text.back() != ' ') text += ' ';
  return "; the first warp-wide instruction after that record, " + t_.module_name + ".ptx:" +
         std::to_string(s.warp_wide_line) + " `" + terminal_line(text) +
         "`, waits for every lane its mask names, and " + std::to_string(mates) + " lanes of its warp wait at " +
         site_place(t_, t_.records[first].site) + " instead: if it reached that instruction without them, it waits "
         "there for good";
}

// Each thread's last record where it is a wait that failed: where a hung kernel stands.
std::vector<size_t> ClusterReplay::failing_last_waits() const {
  std::vector<size_t> out;
  for (const auto& [key, idx] : last_of_) {
    const Record& r = t_.records[idx];
    const auto op = static_cast<TraceOp>(r.op);
    if ((op == TraceOp::mbar_try_wait || op == TraceOp::mbar_test_wait) && !(r.flags & instrument::kFlagWaitComplete) &&
        !held_.count(who(r, t_.meta)))
      out.push_back(idx);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ClusterReplay::timeout_text() const {
  return t_.meta.timeout_s ? " within " + std::to_string(*t_.meta.timeout_s).substr(0, 5) + " s" : "";
}

// The end of the trace. A hang: each thread whose last record is a failed wait, and each still
// held behind a wait, waits for good on the model; the model's deadlock report names the
// barrier everyone waits on, its phase and what it was armed with (check.hang). Otherwise a
// wait the hardware passed and the model cannot is left out, and the model's end-of-program
// checks say why (an unbalanced transaction count, at the instruction that armed the barrier).
void ClusterReplay::end_of_trace() {
  const bool hang = t_.meta.outcome == "timeout";
  std::vector<size_t> passed;
  for (auto& [w, held] : held_) passed.push_back(held.front());
  // With an operation left out, what the end of the program would say (bytes never
  // delivered, a barrier never completing) may be that operation's absence: say nothing.
  if (incomplete_) {
    const auto& c = who(t_.records[records_.front()], t_.meta).cluster;
    report_.skipped.push_back("the end-of-program checks (deadlocks, unbalanced transaction counts) of cluster (" +
                              std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) +
                              "): operations of it could not be replayed (the notes say which)");
    return;
  }
  // Records dropped past the capacity (a completed kernel that wrote more than the buffer
  // holds): the copies that completed this cluster's barriers may be among them, so its end
  // says nothing (replay.cpp's note says so once). A hang keeps its analysis: there the
  // dropped records are the polls of the waits that never returned.
  if (!hang && (t_.meta.records_dropped() || t_.meta.not_expanded)) return;
  std::vector<size_t> final_waits = hang ? failing_last_waits() : std::vector<size_t>{};
  if (hang) final_waits.insert(final_waits.end(), passed.begin(), passed.end());
  std::sort(final_waits.begin(), final_waits.end());
  for (size_t idx : final_waits) {
    auto d = decoder_->decode(t_.records[idx], std::nullopt, true, "$w" + std::to_string(idx) + "_");
    if (d.step) step(*d.step, idx, true);
  }
  try {
    engine_->finish();
  } catch (const DiagnosticError& e) {
    Diagnostic d = e.diagnostic();
    std::optional<size_t> rec = record_in(d.where);
    if (d.rule == "model.deadlock" && hang) {
      std::string waiting;
      for (size_t i = 0; i < final_waits.size() && i < 8; ++i) {
        const Who w = who(t_.records[final_waits[i]], t_.meta);
        waiting += std::string(i ? "; " : "") + "cta " + std::to_string(w.cta) + " thread " + std::to_string(w.thread) +
                   " at " + site_place(t_, t_.records[final_waits[i]].site);
      }
      if (final_waits.size() > 8) waiting += "; and " + std::to_string(final_waits.size() - 8) + " more";
      if (rec) d.message += behind_the_wait(*rec, final_waits);
      report_.outcome_explained = "the kernel hung with " + std::to_string(final_waits.size()) +
                                  " threads in a wait that never completes (" + waiting + "); the model names the "
                                  "barrier above [check.hang]";
      sink_.add("check.hang", Severity::error, "the kernel did not finish" + timeout_text() + ": " + d.message, rec);
      return;
    }
    if (d.rule == "model.tx-mismatch")
      for (const auto& [bar, idx] : arms_)  // the first unbalanced barrier, as finish() reports it
        if (const model::MBarrier* b = engine_->find_barrier(bar.first, bar.second); b && b->valid && b->tx != 0) {
          rec = idx;
          break;
        }
    if (!passed.empty()) d.message += "; the hardware's wait at " + site_place(t_, t_.records[passed.front()].site) +
                                      " returned, the model's cannot";
    sink_.add(d.rule, d.severity, d.message, rec);
    return;
  }
  for (size_t idx : passed) {
    const Record& r = t_.records[idx];
    auto addr = value_of(r, t_.sites[r.site], "addr");
    const model::MBarrier* b = addr ? engine_->find_barrier(split_shared(*addr, ranked_).rank.value_or(who(r, t_.meta).cta),
                                                            split_shared(*addr, ranked_).offset)
                                    : nullptr;
    sink_.add("model.deadlock", Severity::error,
              "the hardware's wait returned, but the model cannot complete it" +
                  (b ? ": " + b->describe() : std::string()) +
                  " (the model and the hardware disagree, or the trace is incomplete)",
              idx);
  }
  if (hang && report_.outcome_explained.empty())
    report_.outcome_explained =
        "the kernel hung, but every wait of the trace completes on the model: the hang is in code the trace does not "
        "show (a loop without bulk-copy operations, or records dropped past the capacity)";
}

}  // namespace tmakit::check::detail
