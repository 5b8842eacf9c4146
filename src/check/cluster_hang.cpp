// The end of a cluster's replay (cluster.hpp): a hang explained from the trace (the barrier a
// hung wait stands on, who fed it and where each of those threads stands now), the hang's words.
#include <algorithm>
#include <cctype>

#include "cluster.hpp"
#include "tmakit/terminal_text.hpp"

namespace tmakit::check::detail {

using instrument::TraceOp;

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
