// Shared memory's access history for the race check (race_memory.hpp).
#include <algorithm>

#include "race_memory.hpp"

namespace tmakit::check::detail {

// CTA `cta`'s ranges, split where [begin, end) begins and ends (end clipped to the window), or
// nullptr where the access lies outside what is followed (or the bound on ranges is reached).
SharedHistory::Map* SharedHistory::ranges(int cta, uint32_t begin, uint32_t& end) {
  if (cta < 0 || static_cast<size_t>(cta) >= ctas_.size() || begin >= kWindow) return nullptr;
  end = std::min(end, kWindow);
  if (begin >= end) return nullptr;
  if (ranges_ + 2 > max_ranges_) {
    bounded_ = true;
    return nullptr;
  }
  Map& m = ctas_[static_cast<size_t>(cta)];
  split(m, begin);
  split(m, end);
  return &m;
}

template <class Access>
void SharedHistory::keep_read(std::vector<Access>& reads, const Access& a) {
  if (reads_ >= max_reads_) {
    bounded_ = true;
    return;
  }
  reads.push_back(a);
  reads_++;
}

// The range holding byte `at` (not as its first byte) becomes two.
void SharedHistory::split(Map& m, uint32_t at) {
  auto it = m.upper_bound(at);
  if (it == m.begin()) return;
  --it;
  if (it->first >= at || at >= it->second.end) return;
  Range tail = it->second;
  it->second.end = at;
  reads_ += tail.cell.reads.size() + tail.cell.copy_reads.size();
  m.emplace(at, std::move(tail));
  ranges_++;
}

// [begin, end), split at both ends already, becomes one range holding `cell`.
void SharedHistory::replace(Map& m, uint32_t begin, uint32_t end, Cell cell) {
  auto first = m.lower_bound(begin), last = m.lower_bound(end);
  for (auto it = first; it != last; ++it) {
    ranges_--;
    reads_ -= it->second.cell.reads.size() + it->second.cell.copy_reads.size();
  }
  m.erase(first, last);
  m.emplace(begin, Range{end, std::move(cell)});
  ranges_++;
}

// `add` to every range of [begin, end), the gaps between them made ranges first.
template <class Add>
void SharedHistory::add_reads(Map& m, uint32_t begin, uint32_t end, Add add) {
  uint32_t at = begin;
  auto it = m.lower_bound(begin);
  while (at < end) {
    const uint32_t next = it != m.end() ? std::min(it->first, end) : end;
    if (at < next) {  // a gap: no access yet
      it = m.emplace_hint(it, at, Range{next, {}});
      ranges_++;
    }
    if (it == m.end() || it->first >= end) break;
    add(it->second.cell);
    at = it->second.end;
    ++it;
  }
}

// Conflicts of one access with one other access over ranges side by side are one.
void SharedHistory::note(std::vector<Conflict>& out, const Conflict& c) {
  if (!out.empty()) {
    Conflict& last = out.back();
    if (last.kind == c.kind && last.copy == c.copy && last.generic.record == c.generic.record && last.cta == c.cta &&
        last.end == c.begin) {
      last.end = c.end;
      return;
    }
  }
  out.push_back(c);
}

void SharedHistory::generic(int cta, uint32_t begin, uint32_t end, bool write, const GenericAccess& g,
                            const Clock& now, std::vector<Conflict>& out) {
  Map* ranges_of = ranges(cta, begin, end);
  if (!ranges_of) return;
  Map& m = *ranges_of;
  for (auto it = m.lower_bound(begin); it != m.end() && it->first < end; ++it) {
    const Cell& c = it->second.cell;
    auto before = [&](const CopyAccess& a) { return now.get(a.done.comp) >= a.done.value; };
    if (c.copy_write && !before(*c.copy_write))
      note(out, {write ? RaceKind::write_after_write : RaceKind::read_after_write, false, true, g, c.copy_write->copy,
                 cta, it->first, it->second.end});
    if (write)
      for (const CopyAccess& r : c.copy_reads)
        if (!before(r))
          note(out, {RaceKind::write_after_read, false, false, g, r.copy, cta, it->first, it->second.end});
  }
  if (write) {
    Cell cell;
    cell.generic_write = g;
    replace(m, begin, end, std::move(cell));
    return;
  }
  add_reads(m, begin, end, [&](Cell& c) {
    for (GenericAccess& r : c.reads)
      if (r.thread == g.thread) {
        r = g;  // the thread's later read stands for its earlier ones
        return;
      }
    keep_read(c.reads, g);
  });
}

void SharedHistory::copy(int cta, uint32_t begin, uint32_t end, bool write, const CopyAccess& a, const Clocks& issuer,
                         std::vector<Conflict>& out) {
  Map* ranges_of = ranges(cta, begin, end);
  if (!ranges_of) return;
  Map& m = *ranges_of;
  for (auto it = m.lower_bound(begin); it != m.end() && it->first < end; ++it) {
    const Cell& c = it->second.cell;
    if (const auto& w = c.generic_write; w && issuer.fenced.get(w->comp) < w->epoch) {
      const RaceKind k = issuer.hb.get(w->comp) >= w->epoch ? RaceKind::unfenced
                         : write                           ? RaceKind::write_after_write
                                                           : RaceKind::read_after_write;
      note(out, {k, true, write, *w, a.copy, cta, it->first, it->second.end});
    }
    if (write)
      for (const GenericAccess& r : c.reads)
        if (issuer.hb.get(r.comp) < r.epoch)
          note(out, {RaceKind::write_after_read, true, true, r, a.copy, cta, it->first, it->second.end});
  }
  if (write) {
    Cell cell;
    cell.copy_write = a;
    replace(m, begin, end, std::move(cell));
    return;
  }
  add_reads(m, begin, end, [&](Cell& c) { keep_read(c.copy_reads, a); });
}

}  // namespace tmakit::check::detail
