// Tensor copies: cp.async.bulk.tensor loads and stores, cp.reduce.async.bulk.tensor
// and cp.async.bulk.prefetch.tensor. This file checks the instruction against its
// map (§2.1, §13, the [H] faults) and hands the element walk to the mode's file
// (tile.cpp, im2col.cpp, gather4.cpp).
#include <algorithm>
#include <memory>

#include "tmakit/model/engine.hpp"
#include "tmakit/model/gather4.hpp"
#include "tmakit/model/im2col.hpp"
#include "tmakit/model/reduce.hpp"
#include "tmakit/model/tile.hpp"

namespace tmakit::model {
namespace {

using tensor_map::TensorMap;

// [lo, hi) global bytes a box can touch: the bounding range of its in-bound
// coordinates, widened to 16-byte chunks (H6). Used for in-flight overlap checks.
std::pair<uint64_t, uint64_t> global_extent(const TensorMap& m, const std::vector<int32_t>& c) {
  uint64_t lo = m.global_address, hi = m.global_address;
  for (int i = 0; i < m.rank; ++i) {
    int64_t first = std::max<int64_t>(c[i], 0);
    int64_t last = std::min<int64_t>(c[i] + static_cast<int64_t>(m.elements(i) - 1) * m.traversal_stride(i),
                                     static_cast<int64_t>(m.dims[i]) - 1);
    if (last < first) return {0, 0};  // the box is wholly out of bounds
    // Dimension 0 in bits: packed types (§2.5) have 4- and 6-bit elements.
    // Interleaved tiled maps: an element of dimension 0 is a 16/32-byte slice (Q26).
    const bool sliced = m.encode == tensor_map::Encode::tiled && m.slice_bytes();
    const uint64_t bits = sliced ? uint64_t{m.slice_bytes()} * 8
                                 : static_cast<uint64_t>(tensor_map::bits_per_element(m.data_type));
    lo += i ? static_cast<uint64_t>(first) * m.stride_bytes(i) : static_cast<uint64_t>(first) * bits / 8;
    hi += i ? static_cast<uint64_t>(last) * m.stride_bytes(i) : ((static_cast<uint64_t>(last) + 1) * bits + 7) / 8;
  }
  return {lo & ~15ull, (hi + 15) & ~15ull};
}

// The element type of a tensor reduction: bitwise ops name .b32/.b64 (§6.1).
spec::RedType reduction_type(spec::RedOp op, const TensorMap& m) {
  using spec::RedOp;
  if (op == RedOp::and_ || op == RedOp::or_ || op == RedOp::xor_) {
    switch (m.data_type) {
      case tensor_map::DataType::uint32: case tensor_map::DataType::int32: return spec::RedType::b32;
      case tensor_map::DataType::uint64: case tensor_map::DataType::int64: return spec::RedType::b64;
      default: return spec::RedType::f32;  // no bitwise type: rejected by the pair table
    }
  }
  return red_type_for_map(m.data_type);
}

}  // namespace

void Engine::tensor_op(const ptx::TensorCopy& s, const std::string& desc, int cta, int thread,
                       const std::string& where) {
  using Kind = ptx::TensorCopy::Kind;
  using ptx::LoadMode;
  const ptx::Operand& tref = s.tensor;
  auto it = maps_.find(tref.map);
  if (it == maps_.end()) fail("tensor.unknown-map", "`" + tref.map + "` is not a tensor map of the scenario", where);
  const TensorMap& map = it->second;
  const LoadMode mode = s.mode;
  const Kind kind = s.kind;

  // §2.1 item 8: the load mode must match the map's kind.
  const bool tile_mode = mode == LoadMode::tile || mode == LoadMode::gather4 || mode == LoadMode::scatter4;
  const bool im2col_mode = mode == LoadMode::im2col || mode == LoadMode::im2col_no_offs;
  if ((tile_mode && map.encode != tensor_map::Encode::tiled) ||
      (im2col_mode && map.encode != tensor_map::Encode::im2col) ||
      (!tile_mode && !im2col_mode && map.encode != tensor_map::Encode::im2col_wide))
    fail("tensor.map-kind", std::string(ptx::name(mode)) + " needs a " +
                                (tile_mode ? "tiled" : im2col_mode ? "im2col" : "im2col_wide") + " map, but `" + tref.map +
                                "` is " + std::string(tensor_map::name(map.encode)), where);
  if (s.dim != map.rank)
    fail("tensor.dim-rank", "." + std::to_string(s.dim) + "d does not match the rank " +
                                std::to_string(map.rank) + " of `" + tref.map + "`", where);
  const bool four = mode == LoadMode::gather4 || mode == LoadMode::scatter4;  // §5: {col, row0..row3}

  std::vector<int32_t> coords;
  for (size_t i = 0; i < tref.elems.size(); ++i) {
    Value v = eval(tref.elems[i], where);
    if (v.kind != Value::Kind::integer || v.v < INT32_MIN || v.v > INT32_MAX)
      fail("tensor.coord-range", "tensorCoords[" + std::to_string(i) + "] = " + v.str() + " is not an .s32 value", where);
    coords.push_back(static_cast<int32_t>(v.v));
  }
  using tensor_map::Direction;
  Direction dir = kind == Kind::load ? Direction::load
                  : kind == Kind::store ? Direction::store
                  : kind == Kind::reduce ? Direction::reduce : Direction::prefetch;
  for (const auto& d : four ? gather4_check(map, coords, dir, cfg_.target)
                            : tensor_map::check_coordinates(map, coords, dir, cfg_.target))
    if (d.severity == Severity::error) throw DiagnosticError({d.severity, d.rule, d.message, where});
  // im2col modes (§4): the im2colInfo operand, then the walk's own preconditions (prefetches too).
  Im2colInfo info;
  const std::optional<Im2colMode> walk = im2col_mode_of(mode);
  const bool im2col = walk.has_value();
  if (walk) info.mode = *walk;
  if (im2col) {
    if (const auto& i2c = s.im2colInfo) {
      std::vector<int64_t> v;
      for (const ptx::Expr& e : i2c->elems) {
        Value x = eval(e, where);
        if (x.kind != Value::Kind::integer) fail("model.operand", "im2colInfo element must be an integer, got " + x.str(), where);
        v.push_back(x.v);
      }
      if (info.mode == Im2colMode::im2col) std::copy_n(v.begin(), std::min<size_t>(v.size(), 3), info.offsets.begin());
      else if (v.size() == 2) info.w_halo = v[0], info.w_offset = v[1];
    }
    try {
      im2col_check(map, coords, info);
    } catch (const DiagnosticError& e) {
      Diagnostic d = e.diagnostic();
      d.where = where;
      throw DiagnosticError(d);
    }
  }

  if (kind == Kind::prefetch) {
    log(where + ": prefetch (no effect on the model's memory)");
    return;
  }
  const uint64_t footprint = im2col ? im2col_footprint(map, info) : four ? gather4_footprint(map) : map.smem_footprint();
  const uint32_t align = map.smem_alignment();
  auto check_smem = [&](uint32_t off, int in_cta, const char* what) {
    // H15: 16-, 32-, 48- and 64-byte aligned shared operands fault; the minimum is 128.
    if (off % align)
      fail("tensor.smem-align", std::string(what) + " at shared offset " + std::to_string(off) + " is not " +
                                    std::to_string(align) + "-byte aligned (the H100 raises a misaligned-address fault below 128)", where);
    check_shared_range(in_cta, off, footprint, what, where);
  };
  Op op;
  op.desc = desc;
  // A named pair, not a structured binding: clang before 16 cannot capture those in a lambda.
  const std::pair<uint64_t, uint64_t> extent = im2col ? im2col_global_extent(map, coords, info)
                                               : four   ? gather4_global_extent(map, coords)
                                                        : global_extent(map, coords);
  // A tiled box's rows: boxes side by side share their bounding range but no byte.
  auto global_range = [&] {
    Range r{Range::global, 0, extent.first, extent.second};
    if (!im2col && !four)
      if (auto spans = tile_global_spans(map, coords))
        r.spans = std::make_shared<const std::vector<std::pair<uint64_t, uint64_t>>>(std::move(*spans));
    return r;
  };

  if (kind == Kind::load) {
    const Landing land = landing(*s.dstMem, *s.mbar, s.ctaMask, s.cta_group == 2, cta, s.dst == ptx::Space::shared_cta,
                                 "tensor.mbar-cta", where);
    const std::vector<int>& dests = land.ctas;
    const uint32_t dst = land.dst;
    const BarrierRef mbar{dests.front(), land.mbar};
    // §2.3, H: the full box, OOB included; im2col: every row, halo rows too (§4.2).
    const uint64_t bytes = im2col ? im2col_bytes(map, info) : four ? gather4_bytes(map) : map.bytes_per_box();
    for (size_t i = 0; i < dests.size(); ++i) {
      const int d = dests[i], to = land.mbar_ctas[i];  // to: d, or its peer under .cta_group::2 (§10.2)
      check_smem(dst, d, "dstMem");
      op.writes.push_back({Range::shared, d, dst, dst + footprint});
      op.signals.push_back({{to, mbar.offset}, bytes});
      if (!barrier(BarrierRef{to, mbar.offset}, where).valid)
        fail(dests.size() > 1 ? "multicast.barrier-missing" : "mbarrier.invalid",
             "no initialised mbarrier at shared offset " + std::to_string(mbar.offset) + " of destination CTA " +
                 std::to_string(d) + (to != d ? "'s peer CTA " + std::to_string(to) + "" : "") + "",
             where);
    }
    if (extent.second > extent.first) op.reads = {global_range()};
    op.write = [this, map, coords, dests, dst, im2col, info, four] {
      for (int d : dests) {
        if (im2col) im2col_load(map, coords, info, global_, smem_[d].span(), dst);
        else if (four) gather4_load(map, coords, global_, smem_[d].span(), dst);
        else tile_load(map, coords, global_, smem_[d].span(), dst);
      }
    };
    issue(std::move(op), cta, thread, false);
    return;
  }

  // Stores and reductions read the executing CTA's shared memory and write global memory.
  const uint32_t src = shared_cta_address(*s.srcMem, cta, "srcMem", where);
  check_smem(src, cta, "srcMem");
  std::optional<spec::RedOp> red;
  if (kind == Kind::reduce) {
    red = *s.red;
    spec::RedType type = reduction_type(*red, map);
    if (!spec::reduction_allowed("tensor.reduce", *red, type) ||
        map.data_type == tensor_map::DataType::float64 || map.data_type == tensor_map::DataType::uint8 ||
        map.data_type == tensor_map::DataType::uint16)
      fail("tensor.reduce-type", "." + std::string(spec::name(*red)) + " is not defined for a " +
                                     std::string(tensor_map::name(map.data_type)) + " map", where);
    if (map.data_type == tensor_map::DataType::int64 && spec::RedType::b64 == type && cfg_.target.arch == 90)
      fail("tensor.reduce-int64-bitwise", "." + std::string(spec::name(*red)) +
                                              " on an int64 map raises an illegal instruction on sm_90", where);
  }
  op.atomic = red.has_value();
  // The engine captures the source at read time; swizzle follows absolute address bits,
  // so the capture keeps the 1024-byte phase of the source offset.
  const uint32_t base = src & ~1023u;
  auto captured = std::make_shared<std::vector<uint8_t>>();
  op.reads = {{Range::shared, cta, src, src + footprint}};
  if (extent.second > extent.first) op.writes = {global_range()};
  op.read = [this, captured, cta, base, src, footprint] {
    captured->assign(smem_[cta].bytes.begin() + base, smem_[cta].bytes.begin() + src + footprint);
  };
  op.write = [this, captured, map, coords, src, base, red, im2col, four] {
    if (im2col && red) im2col_reduce(map, coords, *red, *captured, src - base, global_);
    else if (im2col) im2col_store(map, coords, *captured, src - base, global_);
    else if (four) scatter4_store(map, coords, *captured, src - base, global_);
    else if (red) tile_reduce(map, coords, *red, *captured, src - base, global_);
    else tile_store(map, coords, *captured, src - base, global_);
  };
  issue(std::move(op), cta, thread, true);
}

}  // namespace tmakit::model
