// Internal to the instrument layer: one instrumented instruction, planned (site.cpp: which
// values its record holds and where they come from) and then written as PTX (emit.cpp), with
// the per-function state its record uses (lane.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/instrument/instrument.hpp"
#include "tmakit/instrument/trace.hpp"
#include "tmakit/ptx/module.hpp"

namespace tmakit::instrument::detail {

// Where one value of the record comes from.
struct Source {
  enum class Kind { reg, imm, address } kind = Kind::imm;
  std::string name;   // reg: the register; address: its base register or variable ("" for [imm])
  int bits = 32;      // reg: its declared width; imm: the width to write; address: the base register's width
  bool base_is_reg = false;  // address: `name` is a register (else a variable: its address is taken)
  int64_t value = 0;  // imm: the value; address: the offset added to the base
};

struct Entry {
  Field field;
  std::vector<Source> elems;  // one per element
  bool output = false;        // a register the instruction writes: read after it
};

// Where the 128 bytes of the tensor map an instruction reads are loaded from, for the two
// companion records before its own (trace.hpp: tensor_map_lo/hi).
struct MapRead {
  Source at;          // Kind::address: a register (generic or shared address) or a variable
  std::string space;  // the ld's state space: "" (generic), ".param", ".const", ".global", ".shared"
};

struct Plan {
  TraceOp op = TraceOp::none;
  std::string form;
  std::string guard;          // "" or the guard's predicate
  bool guard_negated = false;
  std::vector<Entry> entries;
  std::string wait_result;    // test_wait/try_wait: the predicate it writes
  bool after = false;         // the instruction has results, so its record follows it
  std::optional<MapRead> map; // a tensor operation: its map's bytes go in two records before its own
};

// The plan for an instruction piece, or nullopt when `ops` does not cover it. `regs` gives the
// declared widths of the function's registers. Errors (an instruction of the table's families
// that does not parse, which lint would have refused) go to `diags`.
std::optional<Plan> plan_site(const ptx::Piece& piece, const ptx::SymbolTable& regs, OpSet ops, Diagnostics& diags,
                              const std::string& where);

// Register banks a site uses, counted so the function can declare them once.
struct RegCounts {
  int d = 0, r = 0, h = 0, p = 0;  // .b64, .b32, .b16, .pred
  void at_least(const RegCounts& o);
};

// Fresh register names, `%<prefix>_d<i>` (.b64), `_r` (.b32), `_h` (.b16), `_p` (.pred), and how
// many of each bank the lines written with them use.
class Writer {
 public:
  Writer(const std::string& prefix) : x_("%" + prefix + "_") {}

  std::string d(int i) { return bank(x_ + "d", i, regs_.d); }
  std::string r(int i) { return bank(x_ + "r", i, regs_.r); }
  std::string h(int i) { return bank(x_ + "h", i, regs_.h); }
  std::string p(int i) { return bank(x_ + "p", i, regs_.p); }
  const RegCounts& regs() const { return regs_; }

 private:
  static std::string bank(const std::string& name, int i, int& count) {
    count = std::max(count, i + 1);
    return name + std::to_string(i);
  }
  std::string x_;
  RegCounts regs_;
};

// A trace word's address. The words live in the constant space: the device only reads them, and
// every lane of every warp reads the same few, which the constant cache answers at once (in
// global memory, the L1 that a kernel using all its shared memory leaves is a few KiB, and a
// word evicted from it cost each site a round trip to L2 before its vote).
inline std::string trace(size_t word) {
  return "[" + std::string(kTraceSymbol) + (word ? "+" + std::to_string(word * 8) : "") + "]";
}

struct Code {
  std::vector<std::string> before, after;  // lines, without indentation or newline
  RegCounts regs;
};

// Where a warp record of the plan's site keeps its lane mask (Site::lanes_at), 0 for none.
uint32_t lanes_at(const Plan& plan);

// Pieces of a record's stores (record_stores.cpp). `store`: the store of `v`, `bytes` wide, at
// `rec`+`offset`, under `on`. `ids`: a chunk header's ids (the special registers packed into
// three 64-bit words), with four 32-bit registers from `r` and three 64-bit ones from `d`.
// `map_records`: the map's 128 bytes as its two half records at `rec` and the next, leaving
// `rec` past them. `address_into`: `t` = the address `s` names, widened, plus its offset.
// `slot_address`: `rec` = the address of slot `slot` of the records at `records`.
std::string store(const std::string& on, const std::string& rec, uint32_t offset, uint32_t bytes, const std::string& v);
void ids(Writer& w, std::vector<std::string>& out, const std::string& on, const std::string& rec, int r, int d);
void map_records(std::vector<std::string>& out, const MapRead& m, uint32_t id, const std::string& on,
                 const std::string& rec, const std::string& tmp, const std::string& tmp2);
void address_into(std::vector<std::string>& out, const std::string& t, const Source& s);
void slot_address(std::vector<std::string>& out, const std::string& rec, const std::string& slot, const std::string& records);

// The lines that write the record of site `id`; `prefix` names the fresh registers ("__tmakit").
// `map_slot`: a tensor operation's entry in its function's map cache (writes_map_once), whose
// map halves are written only where the site's map address changed; -1: none (every record
// of a site with a map has its halves).
Code emit_site(const Plan& plan, uint32_t id, const std::string& prefix, int map_slot = -1);

// A tensor operation (load, store, reduction, prefetch) writes its map's halves once a lane,
// site and map address (trace.hpp), through an entry of its function's map cache.
bool writes_map_once(const Plan& plan);

// A function's lane words: a `.local` array of 64-bit words its prologue sets up. Word
// kLaneTraced: 1 where the lane's cluster is traced, 0 where it is not (`tmakit check --ctas`)
// or tracing is off; from kLaneMaps: the map cache, one map address an entry (0: none).
inline constexpr int kLaneTraced = 0, kLaneMaps = 1;
std::string lane_word(const std::string& prefix, int word);

// The map cache's entry `slot`, as an address operand.
std::string map_cache(const std::string& prefix, int slot);

// Lines that empty the function's map cache of `entries` entries (at its start, after a
// tensormap fence or change, after a call): the next tensor operation of each site writes its
// map's halves again.
std::vector<std::string> clear_map_cache(const std::string& prefix, int entries);

// Whether a line (or a part of one) holds only white space.
inline bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

// The plain copy (plain_copy.cpp): the declarations it leaves out, and the body's lines.
bool is_declaration(std::string_view word);
std::vector<std::string> plain_body(std::string_view text, size_t open, size_t close,
                                    const std::vector<std::pair<size_t, size_t>>& decls,
                                    const std::set<std::string>& labels, const std::string& prefix);

// What a function with sites begins with: `.reg` lines declaring the banks `regs` counts (and
// those it uses itself), the thread's failed-poll count (emit_site), set to 0, the lane
// register, and the lane words: the cluster's traced word looked up, the map cache of
// `map_entries` entries empty. `plain`: the label of the function's plain copy (plain_copy.cpp,
// placed by rewrite.cpp), where a call that records nothing goes once the prologue has looked its
// cluster up; empty: none.
std::vector<std::string> function_prologue(RegCounts regs, const std::string& prefix, int map_entries = 0,
                                           const std::string& plain = "");

// The failed-poll count: the thread's polls of waits that returned false since its last
// successful wait (emit_site). Only the kFailedPollRecorded-th is recorded.
std::string polls_register(const std::string& prefix);
inline constexpr uint32_t kFailedPollRecorded = 16;

// A lane's register for its records (trace.hpp): its next free slot (a multiple of
// kChunkRecords: its chunk is full, or it has none; kPastCapacity once its chunk lay past the
// capacity, or from the start where its cluster is not traced, so that its records take the
// rare lines, which count them where the cluster is traced).
std::string lane_slot(const std::string& prefix);
// A chunk's start above any capacity and any chunk the clamped chunk counter gives.
inline constexpr uint32_t kPastCapacity = UINT32_MAX / kChunkRecords * kChunkRecords;
static_assert(kPastCapacity % kChunkRecords == 0 && kPastCapacity > kMaxCapacity &&
                  kPastCapacity > (UINT32_MAX / kChunkRecords - 1) * kChunkRecords,
              "past the capacity and every chunk");

}  // namespace tmakit::instrument::detail
