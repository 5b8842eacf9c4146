// The trace an instrumented kernel writes (`tmakit instrument`, docs/check.md): what the
// host side allocates, and the fixed-size records it decodes. The device side is PTX that
// src/instrument/emit.cpp writes; this header is the contract between the two.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tmakit::instrument {

// The module-scope variable every instrumented module declares (`.weak`, so modules linked
// together share one trace). Six 64-bit words, zero unless a host sets them:
//   [0] the address of the records (device or host-mapped memory); 0 = tracing off, nothing is
//       written
//   [1] capacity, in records
//   [2] the next record's index when [4] is 0: the lanes of a warp that record at a site take
//       theirs with one atom.global.add (the lowest reserves for all, in lane order); a value
//       past the capacity counts the records that were dropped
//   [3] the clusters traced (`tmakit check --ctas`): linear %clusterid in [low 32 bits, high 32
//       bits); 0 traces every cluster. A launch without clusters has one CTA a cluster.
//   [4] 0, or the address of one 64-bit counter a traced cluster (by linear %clusterid less the
//       first traced): each cluster then takes its indices from its own counter, in a region of
//       its own, records [k × [5], (k + 1) × [5]) for the k-th traced cluster; a count past [5]
//       counts that cluster's dropped records. A counter every warp of the GPU bumps was the
//       traced kernel's bottleneck; the replay needs the order of records within a cluster only.
//   [5] records a cluster's region holds (with [4])
inline constexpr std::string_view kTraceSymbol = "__tmakit_trace";
inline constexpr size_t kTraceWords = 6;
inline constexpr size_t kTraceRecordsWord = 0, kTraceCapacityWord = 1, kTraceNextWord = 2, kTraceClustersWord = 3,
                        kTraceCountersWord = 4, kTraceRegionWord = 5;

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
  // before it (one reservation of three), holding the 128 bytes of the map the instruction
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
};
// A CTA barrier's record (bar_sync, bar_arrive, bar_red).
constexpr bool is_cta_barrier(TraceOp op) { return op == TraceOp::bar_sync || op == TraceOp::bar_arrive || op == TraceOp::bar_red; }
std::string_view to_string(TraceOp op);

// `flags` bits.
inline constexpr uint16_t kFlagWaitComplete = 1;  // test_wait/try_wait: the predicate it returned
// A warp record: the lanes of a warp that recorded at the site together all had the same
// values (a wait, a fence, an arrive every thread makes), so one record stands for them all.
// Its ids are the lowest lane's; the 32-bit mask of the lanes it stands for is at byte
// `lanes_at` of the record (the site table's; a site whose values leave no room is never
// written this way). The reader expands it into one record a lane (each lane's linear %tid is
// the warp's first plus its lane number), so nothing after the reader sees warp records.
inline constexpr uint16_t kFlagWarp = 2;

// One record, as the device writes it (little-endian, 128 bytes, 128-byte aligned).
// The values are the instruction's operands in the order the table lists them; where each
// sits (offset, element size and count) is in the site table (`OUT.sites.json`), so the
// record needs no per-form decoding rules beyond that:
//   - a scalar operand takes 8 bytes, written with its register's width (16, 32 or 64 bits)
//     or the table's width for an immediate; the rest stays 0;
//   - an address operand (`[reg+imm]`, `[var]`) is the address the instruction uses, in its
//     state space (a shared address is the shared-window offset), 64 bits;
//   - a tensor operand is two entries: the tensor map's address (64 bits; a `.param` variable
//     gives its parameter-space address) and the coordinates, 4 bytes each;
//   - a vector operand (im2colInfo) takes 4 bytes an element, written with the element's width;
//   - an mbarrier arrive's returned state is written after the instruction.
struct Record {
  uint32_t site;            // index into the site table
  uint16_t op;              // TraceOp; written last (one 64-bit store with site and flags)
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
// Bytes of the tensor map each companion record (tensor_map_lo/hi) holds in `values`.
inline constexpr size_t kMapHalfBytes = 64;
inline constexpr size_t kMapBytes = 2 * kMapHalfBytes;

}  // namespace tmakit::instrument
