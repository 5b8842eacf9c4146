// Internal to the check layer: who touched which bytes of each CTA's shared memory, for the
// race check (race_memory.cpp). Byte ranges are kept in one interval map a CTA; each range holds
// its last write (a thread's ordinary store, or a copy) and the reads since it (one per thread,
// and the copies reading it). An access is checked against that history with the clocks of
// race_order.hpp: pairs of a thread's ordinary access and a copy's access of the same bytes that
// nothing orders come back as conflicts. Accesses of two threads, or of two copies, are not
// checked here (the model checks copies against copies).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "race_order.hpp"

namespace tmakit::check::detail {

struct GenericAccess {
  uint32_t thread = 0, comp = 0, epoch = 0;  // Order's thread index, its component, its epoch then
  size_t record = 0;
};
struct CopyAccess {
  uint32_t copy = 0;  // the walk's index of the copy
  Completion done;    // when its reads or writes of these bytes are over
};

enum class RaceKind : uint8_t {
  read_after_write,   // a thread reads bytes a copy writes, or a copy reads bytes a thread wrote
  write_after_read,   // a copy writes bytes a thread read, or a thread writes bytes a copy reads
  write_after_write,  // both write
  unfenced,           // a thread's store is ordered before the copy, but through no fence.proxy.async
};

struct Conflict {
  RaceKind kind;
  bool copy_later;  // the copy's issue met the thread's earlier access (else the thread's access met the copy)
  bool copy_writes;
  GenericAccess generic;
  uint32_t copy;
  int cta;
  uint32_t begin, end;  // the bytes, in CTA `cta`
};

class SharedHistory {
 public:
  static constexpr uint32_t kWindow = 232448;  // the largest shared window (sm_90)

  // Bounds on what is kept (memory stays bounded whatever the trace): byte ranges over all CTAs,
  // and thread or copy reads kept over all ranges. Past either, later accesses are not followed.
  SharedHistory(int ctas, size_t max_ranges, size_t max_reads)
      : max_ranges_(max_ranges), max_reads_(max_reads), ctas_(static_cast<size_t>(ctas)) {}

  // A thread's ordinary access of [begin, end) of CTA `cta`; `now` is its clock at the access.
  void generic(int cta, uint32_t begin, uint32_t end, bool write, const GenericAccess& g, const Clock& now,
               std::vector<Conflict>& out);
  // A copy's access; `issuer` holds its issuing thread's clocks at the issue.
  void copy(int cta, uint32_t begin, uint32_t end, bool write, const CopyAccess& a, const Clocks& issuer,
            std::vector<Conflict>& out);
  bool bounded() const { return bounded_; }  // a bound was reached

 private:
  struct Cell {
    std::optional<GenericAccess> generic_write;
    std::optional<CopyAccess> copy_write;
    std::vector<GenericAccess> reads;       // ordinary reads since the last write, the latest of each thread
    std::vector<CopyAccess> copy_reads;     // copies reading since the last write
  };
  struct Range {
    uint32_t end;
    Cell cell;
  };
  using Map = std::map<uint32_t, Range>;

  Map* ranges(int cta, uint32_t begin, uint32_t& end);
  void split(Map& m, uint32_t at);
  template <class Access> void keep_read(std::vector<Access>& reads, const Access& a);
  void replace(Map& m, uint32_t begin, uint32_t end, Cell cell);
  template <class Add> void add_reads(Map& m, uint32_t begin, uint32_t end, Add add);
  static void note(std::vector<Conflict>& out, const Conflict& c);

  size_t max_ranges_, max_reads_;
  std::vector<Map> ctas_;
  size_t ranges_ = 0, reads_ = 0;
  bool bounded_ = false;
};

}  // namespace tmakit::check::detail
