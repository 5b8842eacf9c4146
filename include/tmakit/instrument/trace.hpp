// The trace an instrumented kernel writes (`tmakit instrument`, docs/check.md): what the
// host side allocates, and the fixed-size records it decodes. The device side is PTX that
// src/instrument/emit.cpp and lane.cpp write; this header is the contract between the two.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tmakit::instrument {

// The module-scope variable every instrumented module declares (`.weak .const`, so modules linked
// together share one trace). Six 64-bit words, zero unless a host sets them:
//   [0] the address of the records (device or host-mapped memory); 0 = tracing off, nothing is
//       written
//   [1] capacity, in records (a multiple of kChunkRecords)
//   [2] unused (0)
//   [3] the clusters traced (`tmakit check --ctas`): linear %clusterid in [low 32 bits, high 32
//       bits); 0 traces every cluster. A launch without clusters has one CTA a cluster.
//   [4] the address of the counters, 32-bit words: [0] the next chunk, [1] the records made
//       but not written (past the capacity)
//   [5] unused (0)
//
// Where a record goes and where it stands in the order are apart, so that writing one never
// waits on an atomic's answer (a global atomic's round trip before each record made a CUTLASS
// GEMM run eight times its time):
//   - Place: each lane that writes records owns a chunk of kChunkRecords slots at a time
//     (chunk c: slots [c × kChunkRecords, (c + 1) × kChunkRecords)), taken with one atom.add on
//     counter 0 when its chunk has no room for the site's records. The chunk's first slot is
//     its header (op lane_ids): the lane's ids, written once when the chunk is taken; the
//     records after it leave their id fields zero, and the host fills them from the header.
//     A lane's records fill its chunk in program order. Slots a chunk leaves unused stay zero
//     (op none). Chunks past the capacity are counted, their records not written.
//   - Order: each record holds the SM's cycle counter (%clock64), read where the record is
//     made: before the instruction for a record written before it, after it for one written
//     after it (a wait's), in bytes 8..15 of its slot (kClockAt: where a chunk's header has its
//     ids, which the records after it leave free). A map's halves hold none: they stand just
//     before their operation's record, in its chunk, and share its clock. The SMs of a cluster
//     read one clock (on the H200, within 7 cycles of each other after a cluster barrier:
//     tests/gpu/check/order_clock_probe.cu), and anything that orders one thread after another
//     takes far longer than that, so a record's clock is above those of every record that
//     happens before it. Records of one lane read it in program order. (Tickets from a counter
//     a cluster, the order before, cost a fifth of a traced CUTLASS GEMM's time.)
// The host orders a cluster's records by clock, ties by slot (in_clock_order); the replay needs
// the order within a cluster only. Counter 1 counts the records made past the capacity.
inline constexpr std::string_view kTraceSymbol = "__tmakit_trace";
inline constexpr size_t kTraceWords = 6;
inline constexpr size_t kTraceRecordsWord = 0, kTraceCapacityWord = 1, kTraceUnusedWord = 2, kTraceClustersWord = 3,
                        kTraceCountersWord = 4;
// 64: one record in 64 waits for the chunk counter's answer, a counter every writing lane of the
// GPU bumps (at 16 a chunk, its contention made a 4096³ CUTLASS GEMM slower than one atomic a
// record on per-cluster counters); a lane that records once still takes 8 KiB of the buffer.
inline constexpr uint32_t kChunkRecords = 64;
// The most record slots a trace buffer has (`tmakit check --capacity`): 8 GiB of records (one
// chunk less than 2^26 slots).
inline constexpr uint64_t kMaxCapacity = (uint64_t{1} << 26) - kChunkRecords;
// Where a record's clock is (Order, above): 8 bytes where a chunk's header has its ids.
inline constexpr size_t kClockAt = 8;
// The counters (word 4): the next chunk and the records dropped, in one 128-byte line.
inline constexpr size_t kDroppedCounter = 1, kCounterWords = 32;

// What a record reports. Numbered for good: recorded traces keep their meaning.
enum class TraceOp : uint16_t {
  none = 0,  // a record not (yet) written: the host zeroes the buffer, and `op` is written last
  bulk_copy = 1, bulk_reduce = 2, bulk_prefetch = 3,
  tensor_load = 4, tensor_store = 5, tensor_reduce = 6, tensor_prefetch = 7,
  commit_group = 8, wait_group = 9,
  mbar_init = 10, mbar_arrive = 11, mbar_expect_tx = 12, mbar_complete_tx = 13,
  mbar_test_wait = 14, mbar_try_wait = 15, mbar_inval = 16,
  fence_proxy_async = 17, fence_mbarrier_init = 18,
  fence_proxy_other = 19,  // fence.proxy.* outside the table of forms (.tensormap::generic, .alias)
  tensormap_replace = 20, tensormap_cp_fenceproxy = 21,
  cluster_arrive = 22, cluster_wait = 23,
  shared_store = 24,  // an ordinary st…shared… (generic proxy), for the proxy-fence check
  // Companions of a tensor operation's record (tensor_load/store/reduce/prefetch) and of
  // tensormap_replace/cp_fenceproxy: the same thread, the same site, the two records just
  // before it, in its chunk, holding the 128 bytes of the map the instruction
  // reads (its own address; tensormap.cp_fenceproxy: the source in shared memory, the bytes
  // it installs; tensormap.replace: the map before the change). values[0..63] = bytes 0..63
  // (tensor_map_lo) or 64..127 (tensor_map_hi). The replay tells maps apart by these bytes.
  tensor_map_lo = 25, tensor_map_hi = 26,
  // An ordinary ld…shared… (vectors too; not ldmatrix, ld.async): values[0..7] its address,
  // values[8..15] its byte count. `--ops all` only: "destination read before the wait".
  shared_load = 27,
  // CTA barriers (`--ops all`, where ordinary shared accesses are recorded): values[0..7] the
  // barrier's number (`id`), values[8..15] the thread count (`count`, absent where the
  // instruction names none: every thread of the CTA). Written before the instruction, so every
  // participant's record precedes every record after the barrier. bar_sync: bar{.cta}.sync,
  // barrier{.cta}.sync{.aligned} (`__syncthreads()` is `bar.sync 0`); bar_arrive:
  // bar{.cta}.arrive, barrier{.cta}.arrive{.aligned} (releases, does not wait); bar_red:
  // bar{.cta}.red…, barrier{.cta}.red… (waits, as bar_sync). For the happens-before race check.
  bar_sync = 28, bar_arrive = 29, bar_red = 30,
  // A chunk's header (its first slot): the ids of the lane that owns the chunk, for the records
  // after it, which leave theirs zero; site: the site that took the chunk. Never in trace.bin.
  lane_ids = 31,
};
// A CTA barrier's record (bar_sync, bar_arrive, bar_red).
constexpr bool is_cta_barrier(TraceOp op) { return op == TraceOp::bar_sync || op == TraceOp::bar_arrive || op == TraceOp::bar_red; }
// A bulk or tensor copy, reduction or prefetch (bulk_copy … tensor_prefetch).
constexpr bool is_copy(TraceOp op) { return op >= TraceOp::bulk_copy && op <= TraceOp::tensor_prefetch; }
// A tensor operation (tensor_load … tensor_prefetch): the ops that read a tensor map and carry its
// bytes beside them (tensor_map_lo/hi).
constexpr bool is_tensor_operation(TraceOp op) { return op >= TraceOp::tensor_load && op <= TraceOp::tensor_prefetch; }
std::string_view to_string(TraceOp op);

// `flags` bits.
inline constexpr uint16_t kFlagWaitComplete = 1;  // test_wait/try_wait: the predicate it returned
// A warp record: the lanes of a warp that recorded at the site together all had the same
// values (a wait, a fence, an arrive every thread makes), so one record stands for them all.
// Its ids are the highest lane's; the 32-bit mask of the lanes it stands for is at byte
// `lanes_at` of the record (the site table's; a site whose values leave no room is never
// written this way). The reader expands it into one record a lane (each lane's linear %tid is
// the warp's first plus its lane number), so nothing after the reader sees warp records.
inline constexpr uint16_t kFlagWarp = 2;
// A tensor operation's record whose map halves were not written (the lane wrote them at this
// site before, for the same map address): the host puts in copies of those it kept. Never in
// trace.bin.
inline constexpr uint16_t kFlagMapCached = 4;

// One record, as the device writes it (little-endian, 128 bytes, 128-byte aligned), and as
// trace.bin holds it. The ids (bytes 8..31) the device writes in a chunk's header only (op
// lane_ids); the records after it leave them zero but for their clock (bytes 8..15, kClockAt),
// and the host fills them in. The values are the
// instruction's operands in the order the table lists them; where each sits (offset, element
// size and count) is in the site table (`OUT.sites.json`), so the record needs no per-form
// decoding rules beyond that:
//   - a scalar operand takes 8 bytes, written with its register's width (16, 32 or 64 bits)
//     or the table's width for an immediate; the rest stays 0;
//   - an address operand (`[reg+imm]`, `[var]`) is the address the instruction uses, in its
//     state space (a shared address is the shared-window offset), 64 bits; on a 32-bit base
//     register the sum is formed in 32 bits, as the instruction forms it, and written with 32
//     bits (the rest stays 0);
//   - a tensor operand is two entries: the tensor map's address (64 bits; a `.param` variable
//     gives its parameter-space address) and the coordinates, 4 bytes each;
//   - a vector operand (im2colInfo) takes 4 bytes an element, written with the element's width;
//   - an mbarrier arrive's returned state is written after the instruction.
struct Record {
  uint32_t site;            // index into the site table
  uint16_t op;              // TraceOp; written last (one 16-byte store with site, flags and the clock)
  uint16_t flags;           // kFlag*
  uint32_t ctaid_x;         // %ctaid
  uint16_t ctaid_y, ctaid_z;
  uint16_t tid_x, tid_y, tid_z;  // %tid
  uint16_t cluster_ctarank;      // %cluster_ctarank
  uint32_t clusterid_x;          // %clusterid
  uint16_t clusterid_y, clusterid_z;
  uint8_t values[96];
};
static_assert(sizeof(Record) == 128);
inline constexpr size_t kRecordBytes = sizeof(Record);
inline constexpr size_t kValuesOffset = offsetof(Record, values);
static_assert(kClockAt == offsetof(Record, ctaid_x), "a record's clock is where its header has ctaid.x");
// Bytes of the tensor map each companion record (tensor_map_lo/hi) holds in `values`.
inline constexpr size_t kMapHalfBytes = 64;
inline constexpr size_t kMapBytes = 2 * kMapHalfBytes;

}  // namespace tmakit::instrument
