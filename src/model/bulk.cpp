// Non-tensor bulk copies and reductions (§7, §6.2): cp.async.bulk in its four
// directions (with multicast and .cp_mask) and cp.reduce.async.bulk.
#include <cstring>
#include <memory>

#include "tmakit/model/engine.hpp"
#include "tmakit/model/reduce.hpp"

namespace tmakit::model {
namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// §7: size a multiple of 16, addresses 16-byte aligned (undefined otherwise).
void check_bulk_alignment(int64_t size, uint64_t dst, uint64_t src, const std::string& where) {
  if (size < 0 || size > 0xffffffffll) fail("bulk.size-range", "size " + std::to_string(size) + " is not a u32", where);
  if (size % 16) fail("bulk.size-align", "cp.async.bulk size " + std::to_string(size) + " is not a multiple of 16", where);
  if (dst % 16) fail("bulk.address-align", "dstMem " + hex(dst) + " is not 16-byte aligned", where);
  if (src % 16) fail("bulk.address-align", "srcMem " + hex(src) + " is not 16-byte aligned", where);
}

}  // namespace

void Engine::bulk_copy(const ptx::BulkCopy& s, const std::string& desc, int cta, int thread, const std::string& where) {
  using ptx::Space;
  const int64_t size = integer(s.size, "size", where);
  Op op;
  op.desc = desc;
  const uint64_t n = static_cast<uint64_t>(size);

  if (s.dst == Space::global) {  // shared::cta -> global, bulk_group
    uint32_t src = shared_cta_address(s.srcMem, cta, "srcMem", where);
    uint64_t dst = global_address(s.dstMem, "dstMem", where);
    check_bulk_alignment(size, dst, src, where);
    check_shared_range(cta, src, n, "srcMem", where);
    if (!global_.find(dst, n))
      fail("bulk.global-range", "dstMem range [" + hex(dst) + ", " + hex(dst + n) + ") is outside every global allocation", where);
    uint16_t mask = 0xffff;
    if (const auto& m = s.byteMask) {
      // .cp_mask (§7, sm_100): a 16-bit operand; bit i enables byte i of every 16-byte chunk.
      const int64_t v = integer(*m, "byteMask", where);
      if (v < 0 || v > 0xffff)
        fail("bulk.byte-mask-range", "byteMask " + std::to_string(v) + " is not a 16-bit value", where);
      mask = static_cast<uint16_t>(v);
    }
    auto captured = std::make_shared<std::vector<uint8_t>>();
    op.reads = {{Range::shared, cta, src, src + n}};
    op.writes = {{Range::global, 0, dst, dst + n}};
    op.read = [this, captured, cta, src, n] {
      captured->assign(smem_[cta].bytes.begin() + src, smem_[cta].bytes.begin() + src + n);
    };
    op.write = [this, captured, dst, n, mask] {
      uint8_t* out = global_.find(dst, n);
      for (uint64_t i = 0; i < n; ++i)
        if (mask >> (i % 16) & 1) out[i] = (*captured)[i];  // .cp_mask: bit i enables byte i of each chunk (§7)
    };
    issue(std::move(op), cta, thread, true);
    return;
  }

  // Copies into shared memory complete on an mbarrier in each destination CTA.
  const Landing land = landing(s.dstMem, *s.mbar, s.ctaMask, false, cta, s.dst == Space::shared_cta, "bulk.mbar-cta", where);
  const std::vector<int>& dests = land.ctas;
  const uint32_t dst_off = land.dst;
  const BarrierRef mbar{dests.front(), land.mbar};
  const bool from_shared = s.src == Space::shared_cta;
  if (from_shared && dests.front() == cta)
    fail("bulk.remote-self", "a .shared::cta → .shared::cluster copy must target another CTA, got the executing CTA " +
                                 std::to_string(cta) + "", where);
  uint64_t src = from_shared ? shared_cta_address(s.srcMem, cta, "srcMem", where)
                             : global_address(s.srcMem, "srcMem", where);
  check_bulk_alignment(size, dst_off, src, where);
  if (from_shared) {
    check_shared_range(cta, src, n, "srcMem", where);
    op.reads = {{Range::shared, cta, src, src + n}};
  } else {
    if (!global_.find(src, n))
      fail("bulk.global-range", "srcMem range [" + hex(src) + ", " + hex(src + n) + ") is outside every global allocation", where);
    op.reads = {{Range::global, 0, src, src + n}};
  }
  for (size_t i = 0; i < dests.size(); ++i) {
    const int d = dests[i], to = land.mbar_ctas[i];
    check_shared_range(d, dst_off, n, "dstMem", where);
    op.writes.push_back({Range::shared, d, dst_off, dst_off + n});
    op.signals.push_back({{to, mbar.offset}, n});
    if (!barrier(BarrierRef{to, mbar.offset}, where).valid)
      fail(dests.size() > 1 ? "multicast.barrier-missing" : "mbarrier.invalid",
           "no initialised mbarrier at shared offset " + std::to_string(mbar.offset) + " of destination CTA " +
               std::to_string(d) + (to != d ? "'s peer CTA " + std::to_string(to) + "" : "") + "", where);
  }
  op.write = [this, dests, dst_off, src, n, from_shared, cta] {
    const uint8_t* in = from_shared ? smem_[cta].bytes.data() + src : global_.find(src, n);
    for (int d : dests) std::memcpy(smem_[d].bytes.data() + dst_off, in, n);
  };
  issue(std::move(op), cta, thread, false);
}

void Engine::bulk_reduce(const ptx::BulkReduce& s, const std::string& desc, int cta, int thread,
                         const std::string& where) {
  const int64_t size = integer(s.size, "size", where);
  const uint64_t n = static_cast<uint64_t>(size);
  const spec::RedOp op_kind = s.red;
  const spec::RedType type = s.type;
  // The H100 keeps subnormal inputs and results of the non-tensor global .add.f32
  // (tests/vectors/questions/q17_bulk_add_f32), although §6.3 read PTX as flushing them.
  uint32_t src = shared_cta_address(s.srcMem, cta, "srcMem", where);
  Op op;
  op.desc = desc;
  op.atomic = true;  // per-element atomic updates (§6.3)
  const size_t count = n / static_cast<uint64_t>(spec::red_type_bytes(type));
  auto captured = std::make_shared<std::vector<uint8_t>>();
  op.read = [this, captured, cta, src, n] {
    captured->assign(smem_[cta].bytes.begin() + src, smem_[cta].bytes.begin() + src + n);
  };
  if (s.dst == ptx::Space::global) {
    uint64_t dst = global_address(s.dstMem, "dstMem", where);
    check_bulk_alignment(size, dst, src, where);
    check_shared_range(cta, src, n, "srcMem", where);
    if (!global_.find(dst, n))
      fail("bulk.global-range", "dstMem range [" + hex(dst) + ", " + hex(dst + n) + ") is outside every global allocation", where);
    op.reads = {{Range::shared, cta, src, src + n}};
    op.writes = {{Range::global, 0, dst, dst + n}};
    op.write = [this, captured, dst, n, op_kind, type, count] {
      reduce_elements(op_kind, type, global_.find(dst, n), captured->data(), count);
    };
    issue(std::move(op), cta, thread, true);
    return;
  }
  auto [rank, off] = cluster_address(s.dstMem, cta, "dstMem", where);
  auto [mrank, moff] = cluster_address(*s.mbar, cta, "mbar", where);
  check_bulk_alignment(size, off, src, where);
  check_shared_range(cta, src, n, "srcMem", where);
  check_shared_range(rank, off, n, "dstMem", where);
  if (mrank != rank)
    fail("bulk.mbar-cta", "mbar is in CTA " + std::to_string(mrank) + " but the destination is CTA " +
                              std::to_string(rank) + "; the barrier must be in the destination CTA", where);
  op.reads = {{Range::shared, cta, src, src + n}, {Range::shared, rank, off, off + n}};
  op.writes = {{Range::shared, rank, off, off + n}};
  op.signals = {{{rank, moff}, n}};
  op.write = [this, captured, rank = rank, off = off, op_kind, type, count] {
    reduce_elements(op_kind, type, smem_[rank].bytes.data() + off, captured->data(), count);
  };
  issue(std::move(op), cta, thread, false);
}

}  // namespace tmakit::model
