// Random interleaved (16B / 32B) tiled loads, stores and reductions for the recorded
// vectors (`engine_vectors record tile_load_interleave | tile_store_interleave`, Q26): every plain element type,
// ranks 3-5, both interleaves, every sm_90 swizzle (interleave 32B mostly with
// its required 32B), both fills, element strides on every dimension (dimension
// 0 included: honoured on slices), boxes on dimension rank-2 above 1 (walked
// once), coordinates inside, below and past every dimension, and the box at each
// 128-byte phase of the swizzle pattern. Maps are kept only when the validator
// (which agrees with the 2,750 recorded driver verdicts) has no error for them.
#include <algorithm>
#include <random>

#include "cases.hpp"
#include "tmakit/spec/target.hpp"
#include "vector_common.hpp"

namespace tmakit::gpu_tools {
namespace {

using tensor_map::DataType;
using tensor_map::Interleave;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;


// Bytes from the map's base to the end of its last slice.
uint64_t tensor_bytes(const TensorMap& m, uint32_t slice) {
  uint64_t last = m.dims[0] * slice;
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return (last + 31) / 32 * 32;
}

TensorMap random_map(DataType t, int rank, Interleave il) {
  static const spec::Target sm90 = *spec::parse_target("sm_90a");
  const uint32_t slice = il == Interleave::b16 ? 16 : 32;
  for (;;) {
    TensorMap m;
    m.data_type = t;
    m.rank = rank;
    m.interleave = il;
    m.swizzle = il == Interleave::b32 && chance(0.75) ? Swizzle::b32 : static_cast<Swizzle>(irand(0, 3));
    const int eb = elem_bytes(t), q = 16 / eb;  // box[0] × elemBytes a multiple of 16 (HW5)
    m.box[0] = q * irand(1, std::max(1, 24 / q));
    m.element_strides[0] = chance(0.25) ? irand(2, 3) : 1;
    const uint32_t n0 = (m.box[0] + m.element_strides[0] - 1) / m.element_strides[0];
    m.dims[0] = chance(0.2) ? irand(1, n0) : n0 + irand(0, 6);  // dims[0] counts slices
    for (int i = 1; i < rank; ++i) {
      m.dims[i] = irand(1, rank == 5 ? 4 : 6);
      m.box[i] = irand(1, rank == 5 ? 3 : 4);
      m.element_strides[i] = chance(0.2) ? irand(2, 3) : 1;
    }
    uint64_t prev = m.dims[0] * slice;
    for (int i = 0; i + 1 < rank; ++i) {
      m.strides[i] = (prev + slice - 1) / slice * slice + (chance(0.3) ? 32 * irand(1, 3) : 0);
      prev = m.strides[i] * m.dims[i + 1];
    }
    m.l2_promotion = static_cast<tensor_map::L2Promotion>(irand(0, 3));
    m.oob_fill = is_float_type(t) && chance(0.5) ? OobFill::nan_request_zero_fma : OobFill::zero;
    m.global_address = 256;
    if (m.smem_footprint() > 12288 || tensor_bytes(m, slice) > 16384) continue;
    if (!tensor_map::validate(m, sm90).has_errors()) return m;
  }
}

int32_t random_coord(uint64_t dim, uint32_t box) {
  const int d = int(dim);
  const int r = irand(0, 9);
  if (r < 6) return irand(0, std::max(0, d - 1));
  if (r < 8) return -irand(1, int(box));  // partly or wholly below 0
  return d - irand(0, 1) + (r == 9 ? int(box) : 0);  // at or past the end
}

// One CTA around one interleaved copy: A holds the tensor at a random 32-byte offset
// (random contents, slack after it); shared memory from 1024 holds random bytes
// (seed ^ shared_xor) with the box ("smem") at a random 128-byte phase of the swizzle
// pattern; `operand` is [map0, {c...}]. load_case() adds "mbar" at 0.
struct Frame {
  ScenarioJson s;
  std::string operand;
  uint32_t region;  // bytes of the shared output from 1024
};
Frame frame(const TensorMap& m, const std::vector<int32_t>& c, uint64_t seed, uint64_t shared_xor) {
  const uint32_t slice = m.slice_bytes();
  const uint64_t offset = 32 * irand(0, 3);
  const uint32_t box = 1024 + 128 * irand(0, 7);
  const uint32_t region = uint32_t((box + m.smem_footprint() + 127) / 128 * 128 + 128 - 1024);
  Frame f{ScenarioJson(1024 + region), "[map0, {", region};
  f.s.add_global("A", offset + tensor_bytes(m, slice) + 64, {{"random", seed}});
  f.s.add_map("map0", m, "A", offset);
  f.s.add_shared_init(0, 1024, region, {{"random", seed ^ shared_xor}});
  f.s.sym("smem", "shared:" + std::to_string(box));
  for (int i = 0; i < m.rank; ++i) f.operand += (i ? ", " : "") + std::to_string(c[i]);
  f.operand += "}]";
  return f;
}

// What case `idx` of a store/reduction category writes: 60% stores, 40% reductions (each
// (op, type) pair in turn), ranks 3-5, the two interleaves alternating.
struct WriteDraw {
  bool reduce;
  RedPair red;
  DataType t;
  int rank;
  Interleave il;
};
WriteDraw write_draw(int idx) {
  const bool reduce = idx % 5 >= 3;
  const RedPair red = kRed[idx % std::size(kRed)];
  return {reduce, red, reduce ? red.t : kPlainTypes[idx % std::size(kPlainTypes)], 3 + (idx / 5) % 3,
          idx % 2 ? Interleave::b32 : Interleave::b16};
}

// The program of one store (or reduction) in `mode` (".tile", ".im2col_no_offs") from
// "smem", then the whole allocation as the output.
Case write_case(Frame& f, int rank, const WriteDraw& w, const std::string& mode) {
  const std::string tail = mode + ".bulk_group " + f.operand + ", [smem];";
  f.s.step("fence.proxy.async.shared::cta;");
  if (w.reduce)
    f.s.step("cp.reduce.async.bulk.tensor" + dim_suffix(rank) + ".global.shared::cta." + w.red.op + tail);
  else
    f.s.step("cp.async.bulk.tensor" + dim_suffix(rank) + ".global.shared::cta" + tail);
  f.s.step("cp.async.bulk.commit_group;");
  f.s.step("cp.async.bulk.wait_group 0;");
  f.s.out_global("A", "A");
  return {"", "", "", f.s.json()};
}

// The program of one load `copy` (into "smem", completing on "mbar" at 0, armed with
// `bytes`), then the shared region as the output.
Case load_case(Frame& f, const std::string& copy, uint64_t bytes) {
  f.s.sym("mbar", "shared:0");
  load_steps(f.s, copy, bytes);
  f.s.out_shared("tile", 0, 1024, f.region);
  return {"", "", "", f.s.json()};
}

Case make_load(int idx, uint64_t seed) {
  const DataType t = kPlainTypes[idx % std::size(kPlainTypes)];
  const int rank = 3 + (idx / 13) % 3;
  const Interleave il = idx % 2 ? Interleave::b32 : Interleave::b16;
  const TensorMap m = random_map(t, rank, il);
  std::vector<int32_t> c(rank);
  for (int i = 0; i < rank; ++i) c[i] = chance(0.7) ? irand(0, int(m.dims[i]) - 1) : random_coord(m.dims[i], m.box[i]);

  Frame f = frame(m, c, seed, 0x5A5A);
  const bool cluster = chance(0.3);
  return load_case(f,
                   "cp.async.bulk.tensor" + dim_suffix(rank) + (cluster ? ".shared::cluster" : ".shared::cta") +
                       ".global.tile.mbarrier::complete_tx::bytes [smem], " + f.operand + ", [mbar];",
                   m.bytes_per_box());
}

// A store (60%) or reduction (40%) of an interleaved box: start coordinates >= 0
// (H14), boxes partly or wholly past the end, over random global contents; the
// whole allocation is the output (the slices written and nothing else).
Case make_store(int idx, uint64_t seed) {
  const WriteDraw w = write_draw(idx);
  const int rank = w.rank;
  const TensorMap m = random_map(w.t, rank, w.il);
  std::vector<int32_t> c(rank);
  for (int i = 0; i < rank; ++i) c[i] = std::max(0, chance(0.8) ? irand(0, int(m.dims[i]) - 1) : random_coord(m.dims[i], m.box[i]));

  Frame f = frame(m, c, seed, 0x3C3C);
  return write_case(f, rank, w, ".tile");
}

// An interleaved im2col map (Q26 item 9): one slice per shared row, the walk over
// dimensions 0..rank-3 (C in slices, W, H at rank 5) with corner pair k and
// elementStrides[k] on dimension k, dimension rank-2 fixed at its coordinate.
// `store`: the bounding box inside the tensor (§4.3: lower >= 0, upper <= 0).
TensorMap random_im2col_map(DataType t, int rank, Interleave il, bool store) {
  static const spec::Target sm90 = *spec::parse_target("sm_90a");
  const uint32_t slice = il == Interleave::b16 ? 16 : 32;
  for (;;) {
    TensorMap m;
    m.encode = tensor_map::Encode::im2col;
    m.data_type = t;
    m.rank = rank;
    m.interleave = il;
    m.swizzle = il == Interleave::b32 && chance(0.75) ? Swizzle::b32 : static_cast<Swizzle>(irand(0, 3));
    const int eb = elem_bytes(t);
    m.channels_per_pixel = uint32_t(std::max(1, int(slice) * irand(1, 2) / eb));  // ignored by the walk
    m.pixels_per_column = irand(1, 24);
    m.dims[0] = irand(1, 6);  // slices
    for (int i = 1; i + 1 < rank; ++i) m.dims[i] = irand(1, rank == 5 ? 4 : 6);
    m.dims[rank - 1] = irand(1, 3);
    for (int k = 0; k + 2 < rank; ++k) {
      m.pixel_box_lower[k] = store ? irand(0, 1) : irand(-2, 1);
      m.pixel_box_upper[k] = store ? -irand(0, 1) : irand(-2, 1);
      m.element_strides[k] = chance(0.25) ? irand(2, 3) : 1;
    }
    if (chance(0.15)) m.element_strides[rank - 1] = irand(2, 3);  // the carry into n
    uint64_t prev = m.dims[0] * slice;
    for (int i = 0; i + 1 < rank; ++i) {
      m.strides[i] = (prev + slice - 1) / slice * slice + (chance(0.3) ? 32 * irand(1, 2) : 0);
      prev = m.strides[i] * m.dims[i + 1];
    }
    m.l2_promotion = static_cast<tensor_map::L2Promotion>(irand(0, 3));
    m.oob_fill = is_float_type(t) && chance(0.5) ? OobFill::nan_request_zero_fma : OobFill::zero;
    m.global_address = 256;
    if (tensor_bytes(m, slice) > 16384) continue;
    bool empty_box = false;  // a base needs a place inside every walked dimension's box
    for (int k = 0; k + 2 < rank; ++k)
      empty_box = empty_box || m.pixel_box_lower[k] > int(m.dims[k]) - 1 + m.pixel_box_upper[k];
    if (!empty_box && !tensor_map::validate(m, sm90).has_errors()) return m;
  }
}

// An interleaved im2col load: the base of every walked dimension inside its box
// (outside faults, Q26 item 9), the fixed dimension anywhere near the tensor, n
// sometimes past the end, small offsets, shared destinations at every 128-byte phase.
Case make_im2col_load(int idx, uint64_t seed) {
  const DataType t = kPlainTypes[idx % std::size(kPlainTypes)];
  const int rank = 3 + (idx / 13) % 3;
  const Interleave il = idx % 2 ? Interleave::b32 : Interleave::b16;
  const TensorMap m = random_im2col_map(t, rank, il, false);
  std::vector<int32_t> c(rank);
  for (int k = 0; k + 2 < rank; ++k) {
    const int lo = m.pixel_box_lower[k], hi = int(m.dims[k]) - 1 + m.pixel_box_upper[k];
    c[k] = irand(lo, std::max(lo, hi));
  }
  c[rank - 2] = irand(-1, int(m.dims[rank - 2]));
  c[rank - 1] = chance(0.15) ? int(m.dims[rank - 1]) : irand(0, int(m.dims[rank - 1]) - 1);
  std::vector<int64_t> off(rank - 2);
  for (auto& o : off) o = chance(0.5) ? irand(0, 2) : 0;

  Frame f = frame(m, c, seed, 0x5A5A);
  return load_case(f,
                   "cp.async.bulk.tensor" + dim_suffix(rank) +
                       ".shared::cta.global.im2col.mbarrier::complete_tx::bytes [smem], " + f.operand + ", [mbar], " +
                       coord_list(off) + ";",
                   m.bytes_per_box());
}

// An interleaved .im2col_no_offs store (60%) or reduction (40%): the load's walk with
// offsets 0, every coordinate >= 0 (H14), n sometimes past the end, over random
// global contents; the whole allocation is the output.
Case make_im2col_store(int idx, uint64_t seed) {
  const WriteDraw w = write_draw(idx);
  const int rank = w.rank;
  const TensorMap m = random_im2col_map(w.t, rank, w.il, true);
  std::vector<int32_t> c(rank);
  for (int k = 0; k + 2 < rank; ++k) {
    const int lo = m.pixel_box_lower[k], hi = int(m.dims[k]) - 1 + m.pixel_box_upper[k];
    c[k] = irand(lo, std::max(lo, hi));
  }
  c[rank - 2] = irand(0, int(m.dims[rank - 2]));
  c[rank - 1] = chance(0.15) ? int(m.dims[rank - 1]) : irand(0, int(m.dims[rank - 1]) - 1);
  Frame f = frame(m, c, seed, 0x3C3C);
  return write_case(f, rank, w, ".im2col_no_offs");
}

}  // namespace

std::vector<Case> interleave_load_cases(int count, uint64_t seed) { return numbered_cases(count, seed, make_load); }
std::vector<Case> interleave_im2col_store_cases(int count, uint64_t seed) {
  return numbered_cases(count, seed, make_im2col_store);
}
std::vector<Case> interleave_im2col_load_cases(int count, uint64_t seed) {
  return numbered_cases(count, seed, make_im2col_load);
}
std::vector<Case> interleave_store_cases(int count, uint64_t seed) { return numbered_cases(count, seed, make_store); }

}  // namespace tmakit::gpu_tools
