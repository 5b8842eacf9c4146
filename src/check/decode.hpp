// Internal to the check layer: reading one trace record through its site's fields
// (decode.cpp), and the real program's global addresses mapped into the model's
// allocations (global_space.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/check/replay.hpp"
#include "tmakit/model/engine.hpp"
#include "tmakit/ptx/step.hpp"

namespace tmakit::check::detail {

using instrument::Record;
using instrument::Site;

// Who wrote a record: its cluster, the CTA's rank in it and the thread (linear %tid).
struct Who {
  std::array<uint32_t, 3> cluster{};
  int cta = 0, thread = 0;
  bool operator<(const Who& o) const {
    return cluster != o.cluster ? cluster < o.cluster : cta != o.cta ? cta < o.cta : thread < o.thread;
  }
};
Who who(const Record& r, const LaunchMeta& meta);

const instrument::Field* find_field(const Site& site, std::string_view name);
// Element k of a field, zero-extended from its width.
uint64_t element(const Record& r, const instrument::Field& f, uint32_t k = 0);
// The same, sign-extended (coordinates are .s32).
int64_t signed_element(const Record& r, const instrument::Field& f, uint32_t k = 0);
// A field's first element, or nullopt when the site has no such field.
std::optional<uint64_t> value_of(const Record& r, const Site& site, std::string_view name);

// A shared address as a .shared::cluster operand holds it: the CTA's rank in bits 24 and up
// (what mapa returns), the offset below. Where a trace's own-CTA addresses are small (`ranked`
// false) an address below 2^24 is the executing CTA's; where they carry the rank too (a CTA of
// rank r >= 1 initialises its barriers at r << 24 | offset), every address names its rank
// (docs/check-replay.md: the replay tells the two apart from the trace).
struct SharedAddress {
  std::optional<int> rank;  // nullopt: the executing CTA
  uint32_t offset = 0;
};
SharedAddress split_shared(uint64_t v, bool ranked);
// The engine's value for a shared address.
model::Value shared_value(uint64_t v, bool ranked);

// The global ranges of the real program, mapped into model allocations that keep each
// address's low 12 bits (alignment); contents zero. Maps get one allocation each over what
// their boxes touch, so a map's base and its boxes stay consistent.
class GlobalSpace {
 public:
  void add_range(uint64_t lo, uint64_t hi);
  void add_map_range(size_t map, uint64_t lo, uint64_t hi);
  // Allocates in `mem` up to `cap` bytes; ranges past the cap are left out (notes say so).
  void allocate(model::GlobalMemory& mem, uint64_t cap, std::vector<std::string>& notes);
  std::optional<uint64_t> to_model(uint64_t real) const;
  // The model address of map `map`'s base (it may lie outside its allocation: only the
  // bytes its boxes touch are there), or nullopt when its range was left out.
  std::optional<uint64_t> map_base(size_t map, uint64_t real_base) const;

 private:
  struct Interval {
    uint64_t lo, hi;
    std::vector<size_t> maps;
    uint64_t model_base = 0;
    bool allocated = false;
  };
  std::vector<Interval> pending_, merged_;
  std::map<size_t, std::pair<uint64_t, uint64_t>> map_ranges_;
};

// The global bytes [lo, hi) a tiled box at `coords` touches (the bounding range of its
// in-bound elements), or the whole tensor for im2col maps; nullopt when wholly out of bounds.
std::optional<std::pair<uint64_t, uint64_t>> touched(const tensor_map::TensorMap& m, const std::vector<int64_t>& coords);

// Builds the engine's step for one record: the site's text, parsed and decoded once, with each
// operand replaced by the record's runtime value (an immediate, or a symbol the engine is
// given: shared-window offsets, global addresses mapped by a GlobalSpace, tensor maps found
// by their descriptor bytes).
class Decoder {
 public:
  // `maps`: the program's maps and those the trace derived from them (tensormap.replace).
  Decoder(const TraceDir& trace, const std::vector<EncodedMap>& maps, model::Engine& engine, const GlobalSpace& global,
          bool ranked);

  struct Decoded {
    // The step, valid until the next decode of the same site (each site has one step the
    // records' values are written into: a replay decodes millions of records of a few sites).
    const ptx::Step* step = nullptr;
    std::string skip;       // why the record is not replayed (empty: it is)
    std::string skip_rule;  // a finding's rule when skipping is the user's problem (check.map-unknown)
  };
  // `map` is the index in the maps of the tensor operand's map (nullopt: none matched).
  // `as_blocking`: a test_wait becomes a try_wait (a wait the hardware saw succeed).
  // `symbol_prefix` names the symbols the instruction reads (unique for steps the engine holds).
  Decoded decode(const Record& r, std::optional<size_t> map, bool as_blocking, const std::string& symbol_prefix);
  // An ordinary shared store as the engine's st.shared pieces (8 bytes at most each).
  std::vector<ptx::Step> shared_stores(const Record& r, const std::string& symbol_prefix);
  // After an arrive: remember the model's token for the hardware's (a state-form wait names it).
  void note_token(const Record& r, const std::string& symbol_prefix);

 private:
  ptx::Step* decoded(uint32_t site, bool as_blocking);
  const ptx::Step& store_step(int bytes);  // st.shared.b<8*bytes>
  std::optional<model::Value> address_value(const ptx::OperandSlot& slot, uint64_t v, std::string& skip) const;

  const TraceDir& trace_;
  const std::vector<EncodedMap>& maps_;
  model::Engine& engine_;
  const GlobalSpace& global_;
  bool ranked_;  // shared addresses carry the CTA rank (split_shared)
  // Each site's step, decoded once; decode() fills its operand slots with each record's values.
  std::map<std::pair<uint32_t, bool>, std::optional<ptx::Step>> cache_;
  std::map<int, ptx::Step> stores_;
  std::map<uint64_t, int64_t> tokens_;  // hardware state token -> the model's
  std::vector<bool> map_defined_;
};

// The map's name in the engine ("map<N>", N its index in the maps).
std::string map_name(size_t map);

}  // namespace tmakit::check::detail
