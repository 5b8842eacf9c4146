// The GPU engine's compact step records, shared by the host translator
// (engine.cpp, g++) and the kernel (engine_kernel.cu, nvcc). PTX qualifiers are
// compile-time, so each record names one instruction variant (`Code`) that the
// kernel's switch maps to one device-library call (the comments name the rows of the table of
// forms, src/spec/forms_table.cpp); the operands are resolved on
// the host (shared offsets, cluster ranks, device addresses, map indices).
// Plain C++ only: no CUDA or nlohmann headers here.
#pragma once
#include <cstdint>

#include "generated/bulk_reductions.hpp"
#include "generated/engine_codes.hpp"

namespace tmakit::gpu::detail {

// The step codes (`Code`, one per operation the kernel runs, each naming its rows of the table of
// forms) are generated: generated/engine_codes.hpp.

enum Flag : uint16_t {
  kHint = 1 << 0,          // .L2::cache_hint (policy operand)
  kMulticast = 1 << 1,     // .multicast::cluster (mask operand)
  kRemote = 1 << 2,        // mbarrier op on a .shared::cluster address
  kExpectTx = 1 << 3,
  kDrop = 1 << 4,          // arrive_drop
  kHasCount = 1 << 5,      // arrive with an explicit count
  kParity = 1 << 6,        // .parity wait
  kClusterScope = 1 << 7,  // .cluster scope (waits, arrives)
  kRead = 1 << 8,          // wait_group.read
  kSpaceCluster = 1 << 9,  // fence.proxy.async.shared::cluster
  kSpaceGlobal = 1 << 10,  // fence.proxy.async.global
  kRelaxed = 1 << 11,      // .relaxed semantics (arrive / waits)
  kIm2col = 1 << 12,       // tensor ops: .im2col (loads, prefetch; offsets in Step::off) or .im2col_no_offs
};

// Bulk reduction variants (§6.2): the table's op x type pairs of each direction, generated
// (generated/bulk_reductions.hpp: X(name, op, type, OPTAG, CTYPE) lists).
#define TMAKIT_GPU_ENUM_G(name, ...) kG_##name,
#define TMAKIT_GPU_ENUM_C(name, ...) kC_##name,
enum BulkRedGlobal : uint8_t { TMAKIT_GPU_BULK_RED_GLOBAL(TMAKIT_GPU_ENUM_G) kBulkRedGlobalCount };
enum BulkRedCluster : uint8_t { TMAKIT_GPU_BULK_RED_CLUSTER(TMAKIT_GPU_ENUM_C) kBulkRedClusterCount };
#undef TMAKIT_GPU_ENUM_G
#undef TMAKIT_GPU_ENUM_C

inline constexpr uint8_t kSelf = 0xff;  // rank field: the executing CTA
inline constexpr int kMaxCtas = 16;     // scenario-format.md: cluster.ctas 1..16
inline constexpr int kMaxRegs = 64;     // dynamic symbols (predicates, state tokens)

struct Step {
  uint16_t code = kNop;
  uint16_t flags = 0;
  uint8_t cta = 0, thread = 0;
  uint8_t dim = 0;            // tensor ops: 1..5
  uint8_t red = 0;            // tensor reduce: spec::RedOp order; bulk reduce: BulkRed* code
  int16_t guard_reg = -1;     // `@p`: register read at run time, -1 none
  uint8_t guard_negated = 0;
  uint8_t smem_rank = kSelf;  // rank of a .shared::cluster dstMem/addr
  int16_t dst_reg = -1;       // waitComplete / state destination, -1 = `_`
  int16_t src_reg = -1;       // waits: state / parity from a register, -1 = `value`
  uint8_t mbar_rank = kSelf;
  uint8_t pad = 0;
  uint16_t mask = 0;          // ctaMask
  uint32_t smem = 0;          // shared offset: dstMem / srcMem / addr
  uint32_t smem2 = 0;         // second shared offset (peer copy source)
  uint32_t mbar = 0;          // shared offset of the mbarrier operand
  uint32_t size = 0;          // bytes, txCount, count, N
  uint32_t map = 0;           // index into the map table
  uint64_t gaddr = 0;         // device address
  uint64_t value = 0;         // st value, parity, state
  uint64_t policy = 0;
  int32_t c[5] = {0, 0, 0, 0, 0};
  uint16_t off[3] = {0, 0, 0};  // .im2col: the im2colInfo offsets {offW, (offH), (offD)} (§4.1)
};

// What the kernel reports (one word per launch, first writer wins).
enum Status : uint32_t {
  kStatusOk = 0,
  kStatusHang = 1,    // an mbarrier wait did not complete within the bound
  kStatusStall = 2,   // the sequencer made no progress within the bound
  kStatusLayout = 3,  // the shared window does not fit after 1024-byte alignment
};

struct KernelStatus {
  uint32_t status;
  uint32_t step;
  uint32_t cta;
  uint32_t info0, info1;  // hang: mbarrier offset, parity/state
};

}  // namespace tmakit::gpu::detail
