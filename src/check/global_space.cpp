// Record fields and global addresses (decode.hpp).
#include <algorithm>
#include <cstring>

#include "decode.hpp"

namespace tmakit::check::detail {

Who who(const Record& r, const LaunchMeta& meta) {
  Who w;
  w.cluster = {r.clusterid_x, r.clusterid_y, r.clusterid_z};
  w.cta = r.cluster_ctarank;
  w.thread = static_cast<int>(r.tid_x + meta.block[0] * (r.tid_y + meta.block[1] * uint64_t{r.tid_z}));
  return w;
}

const instrument::Field* find_field(const Site& site, std::string_view name) {
  for (const auto& f : site.fields)
    if (f.name == name) return &f;
  return nullptr;
}

uint64_t element(const Record& r, const instrument::Field& f, uint32_t k) {
  // load_trace_dir checked that every element lies inside the record.
  const auto* bytes = reinterpret_cast<const uint8_t*>(&r);
  uint64_t v = 0;
  std::memcpy(&v, bytes + f.offset + uint64_t{f.stride} * k, f.bytes);  // little-endian
  return v;
}

int64_t signed_element(const Record& r, const instrument::Field& f, uint32_t k) {
  uint64_t v = element(r, f, k);
  const int bits = static_cast<int>(f.bytes * 8);
  if (bits < 64 && (v >> (bits - 1) & 1)) v |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(v);
}

std::optional<uint64_t> value_of(const Record& r, const Site& site, std::string_view name) {
  const instrument::Field* f = find_field(site, name);
  if (!f) return std::nullopt;
  return element(r, *f);
}

SharedAddress split_shared(uint64_t v, bool ranked) {
  if (v < (1u << 24) && !ranked) return {std::nullopt, static_cast<uint32_t>(v)};
  return {static_cast<int>(v >> 24), static_cast<uint32_t>(v & 0xffffff)};
}

model::Value shared_value(uint64_t v, bool ranked) {
  SharedAddress a = split_shared(v, ranked);
  if (!a.rank) return {model::Value::Kind::shared, a.offset};
  // Another CTA's address in a .shared::cta operand: the engine names the mismatch.
  return {model::Value::Kind::cluster, a.offset, *a.rank};
}

// ---- global memory ----

void GlobalSpace::add_range(uint64_t lo, uint64_t hi) {
  if (hi > lo) pending_.push_back({lo, hi, {}});
}

void GlobalSpace::add_map_range(size_t map, uint64_t lo, uint64_t hi) {
  if (hi <= lo) return;
  auto [it, fresh] = map_ranges_.try_emplace(map, lo, hi);
  if (!fresh) it->second = {std::min(it->second.first, lo), std::max(it->second.second, hi)};
}

void GlobalSpace::allocate(model::GlobalMemory& mem, uint64_t cap, std::vector<std::string>& notes) {
  std::vector<Interval> all = pending_;
  for (const auto& [map, r] : map_ranges_) all.push_back({r.first, r.second, {map}});
  std::sort(all.begin(), all.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  // Ranges closer than 64 KiB share one allocation, as they may share one real allocation.
  for (const Interval& i : all) {
    if (!merged_.empty() && i.lo <= merged_.back().hi + (1u << 16)) {
      merged_.back().hi = std::max(merged_.back().hi, i.hi);
      merged_.back().maps.insert(merged_.back().maps.end(), i.maps.begin(), i.maps.end());
    } else {
      merged_.push_back(i);
    }
  }
  uint64_t used = 0;
  for (Interval& i : merged_) {
    const uint64_t lo = i.lo & ~uint64_t{4095};  // the model keeps the low 12 address bits
    const uint64_t bytes = i.hi - lo;
    if (bytes > cap - std::min(cap, used)) {
      notes.push_back("global range [" + std::to_string(i.lo) + ", " + std::to_string(i.hi) + ") of " +
                      std::to_string(bytes) + " bytes is past the model's budget of " + std::to_string(cap) +
                      " bytes: operations on it are not replayed");
      continue;
    }
    used += bytes;
    i.model_base = mem.allocate("global@" + std::to_string(lo), bytes, 4096);
    i.allocated = true;
  }
}

std::optional<uint64_t> GlobalSpace::to_model(uint64_t real) const {
  for (const Interval& i : merged_) {
    const uint64_t lo = i.lo & ~uint64_t{4095};
    if (i.allocated && real >= lo && real <= i.hi) return i.model_base + (real - lo);
  }
  return std::nullopt;
}

std::optional<uint64_t> GlobalSpace::map_base(size_t map, uint64_t real_base) const {
  for (const Interval& i : merged_)
    if (std::find(i.maps.begin(), i.maps.end(), map) != i.maps.end()) {
      if (!i.allocated) return std::nullopt;
      return i.model_base + (real_base - (i.lo & ~uint64_t{4095}));  // mod 2^64: below the allocation is fine
    }
  return std::nullopt;
}

namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t saturating_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> touched(const tensor_map::TensorMap& m,
                                                     const std::vector<int64_t>& coords) {
  const uint64_t bits = static_cast<uint64_t>(tensor_map::bits_per_element(m.data_type));
  const bool sliced = m.slice_bytes() != 0;
  const uint64_t elem_bits = sliced ? uint64_t{m.slice_bytes()} * 8 : bits;
  uint64_t lo = m.global_address, hi = m.global_address;
  const bool tiled = m.encode == tensor_map::Encode::tiled && static_cast<int>(coords.size()) >= m.rank;
  for (int i = 0; i < m.rank; ++i) {
    if (m.dims[i] == 0) return std::nullopt;
    int64_t first = 0, last = static_cast<int64_t>(std::min<uint64_t>(m.dims[i], INT64_MAX)) - 1;
    if (tiled) {  // the box's in-bound elements only
      first = std::max<int64_t>(coords[i], 0);
      last = std::min<int64_t>(coords[i] + static_cast<int64_t>(m.elements(i) - 1) * m.traversal_stride(i), last);
      if (last < first) return std::nullopt;
    }
    if (i == 0) {
      lo = saturating_add(lo, saturating_mul(static_cast<uint64_t>(first), elem_bits) / 8);
      hi = saturating_add(hi, (saturating_mul(static_cast<uint64_t>(last) + 1, elem_bits) + 7) / 8);
    } else {
      lo = saturating_add(lo, saturating_mul(static_cast<uint64_t>(first), m.strides[i - 1]));
      hi = saturating_add(hi, saturating_mul(static_cast<uint64_t>(last), m.strides[i - 1]));
    }
  }
  return std::pair{lo & ~uint64_t{15}, saturating_add(hi, 15) & ~uint64_t{15}};
}

}  // namespace tmakit::check::detail
