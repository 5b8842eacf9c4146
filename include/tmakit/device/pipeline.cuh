// A small multi-stage load pipeline: `Stages` shared-memory slots, each guarded
// by a "full" barrier (one producer arrival + the copy's bytes) and an "empty"
// barrier (one arrival per consumer thread). The producer thread waits for a
// slot to be empty, arms its full barrier with the map's byte count and issues
// the load; consumers wait for full, read, then release the slot.
//
//   __shared__ tmakit::device::Pipeline<3> pipe;          // barriers only
//   if (threadIdx.x == 0) pipe.init(blockDim.x);          // then __syncthreads()
//   PipeState s;                                          // each thread keeps its own
//   producer: uint64_t* full = pipe.producer_acquire(s, map); load_tile(slot(s.stage), map, c, full); s.advance<3>();
//   consumer: pipe.consumer_wait(s); ... read slot ...; pipe.consumer_release(s); s.advance<3>();
//
// Relay<Stages, Lag>: the load -> store pipeline of one thread (copies, split-K
// reductions): item k is loaded into slot k % Stages and stored from that slot;
// a slot is reloaded once its store has finished reading shared memory
// (cp.async.bulk.wait_group.read, §9), so no consumer barriers are needed.
//
// cta_copy_bulk_load<Bytes>: one item per CTA, a bulk load into shared memory and
// 16-byte stores by every thread: the fastest copy measured on the H100.
#pragma once
#include <cstdint>

#include "tmakit/device/copy.cuh"
#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

struct PipeState {
  uint32_t stage = 0;
  uint32_t phase = 0;  // parity of the current round over the slots
  template <int Stages>
  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

template <int Stages>
struct Pipeline {
  static_assert(Stages >= 1, "at least one stage");
  uint64_t full[Stages];
  uint64_t empty[Stages];

  // One thread: consumers = threads that call consumer_release per stage.
  __device__ void init(uint32_t consumers) {
    for (int i = 0; i < Stages; ++i) {
      mbar_init(&full[i], 1);
      mbar_init(&empty[i], consumers);
    }
    fence_mbarrier_init();
  }

  // Waits until the slot is free (the first round passes at once: parity of the
  // phase before phase 0 counts as complete), arms the full barrier with the
  // map's bytes × loads, and returns the barrier to pass to the loads.
  __device__ uint64_t* producer_acquire(const PipeState& s, const MapHandle& m, uint32_t loads = 1) {
    return producer_acquire(s, m.box_bytes * loads);
  }
  // A stage filled by boxes of several maps (split-K parts and the output tile; a
  // GEMM stage's A and B tiles): armed with their total bytes.
  __device__ uint64_t* producer_acquire(const PipeState& s, uint32_t bytes) {
    wait_parity(&empty[s.stage], s.phase ^ 1, 0);
    arrive_expect_tx(&full[s.stage], bytes);
    return &full[s.stage];
  }
  __device__ void consumer_wait(const PipeState& s, uint32_t armed_bytes = 0) {
    wait_parity(&full[s.stage], s.phase, armed_bytes);
  }
  __device__ void consumer_release(const PipeState& s) { arrive(&empty[s.stage]); }
  // One arrival per warp instead of per thread (init(consumer_warps)): the whole
  // warp must call it. Fewer arrivals on the empty barrier; the H100 transpose
  // measurements (docs/benchmarks.md, GPU section) use this form.
  __device__ void consumer_release_warp(const PipeState& s) {
    __syncwarp();
    if ((threadIdx.x & 31) == 0) arrive(&empty[s.stage]);
  }
  // Multicast pipelines: this CTA's slot is written by the CTAs whose
  // %cluster_ctarank bits are set in `writers` (multicast slices, or a leader's
  // broadcast), so the slot goes back to each of them: each writer's empty
  // barrier is init(consumer warps × CTAs it writes to). The whole warp calls it;
  // lane w sends the arrival for the w-th writer with .release.cta, in parallel.
  // Measured on the H100 (docs/benchmarks.md, "Multicast"): one lane sending them
  // all with .release.cluster ran at 0.31-0.97x of every CTA loading for itself,
  // this form at 0.92-1.16x.
  __device__ void consumer_release_writers(const PipeState& s, uint16_t writers) {
    __syncwarp();
    uint32_t rest = writers;
    for (uint32_t w = threadIdx.x & 31; w > 0 && rest; --w) rest &= rest - 1;  // drop the first `lane` writers
    if (rest) {
      const uint32_t rank = __ffs(rest) - 1;
      arrive_cluster<Scope::cta>(static_cast<uint64_t*>(__cluster_map_shared_rank(&empty[s.stage], rank)));
    }
  }
};

// Defaults measured on the H100 (docs/benchmarks.md, "GPU (H100)"): with 8-32 KiB
// items, stage count (2-12) and lag (0-2) moved a relay copy by under 1%; what
// moved it was the grid. A persistent grid (1-3 CTAs per SM) stays at 0.955x
// cudaMemcpy; a non-persistent grid of items / kRelayItemsPerCta CTAs reaches
// 0.985-0.997x, one 8 KiB item per CTA ahead of two in both sets of four runs of
// 26 Nov 2026 (0.991-0.996x against 0.988-0.994x), and one tile per CTA was the
// best split-K reduction too. Fewer relays per SM do better still: 4 KiB items in
// 256-thread CTAs (8 per SM) 1.000-1.002x.
inline constexpr int kRelayStages = 4;
inline constexpr int kRelayLag = 1;
inline constexpr int kRelayItemsPerCta = 1;

template <int Stages = kRelayStages, int Lag = kRelayLag>
struct Relay {
  static_assert(Stages >= 2, "a relay needs two slots to overlap a load with a store");
  static_assert(Lag >= 0 && Lag < Stages, "Lag = stores still reading shared memory when a slot is reloaded");
  uint64_t full[Stages];

  // One thread (the one that calls run), before run.
  __device__ void init() {
    for (int i = 0; i < Stages; ++i) mbar_init(&full[i], 1);
    fence_mbarrier_init();
  }

  // Moves items 0..n-1: load(k, slot, bar) issues item k's loads into `slot` on
  // barrier `bar`, which run() has armed with `bytes` (the bytes those loads
  // deliver, §2.3); store(k, slot) issues item k's stores or reductions from
  // `slot`; run() commits each item's stores as one bulk group. Called once per
  // init() by one thread; returns when every store has completed (wait_group 0).
  template <class Load, class Store>
  __device__ void run(uint32_t n, uint32_t bytes, Load&& load, Store&& store) {
    const uint32_t pre = n < uint32_t(Stages) ? n : uint32_t(Stages);
    for (uint32_t k = 0; k < pre; ++k) {
      arrive_expect_tx(&full[k], bytes);
      load(k, k, &full[k]);
    }
    uint32_t s = 0, phase = 0, old = 0;  // old = slot of item k - Lag
    for (uint32_t k = 0; k < n; ++k) {
      wait_parity(&full[s], phase, bytes);
      store(k, s);
      commit_group();
      // Reload the slot of item j = k - Lag with item j + Stages once the store
      // of item j has read it: at most Lag later groups may still be reading.
      if (k + 1 > uint32_t(Lag)) {  // k >= Lag
        if (k - Lag + Stages < n) {
          wait_group_read<Lag>();
          arrive_expect_tx(&full[old], bytes);
          load(k - Lag + Stages, old, &full[old]);
        }
        if (++old == uint32_t(Stages)) old = 0;
      }
      if (++s == uint32_t(Stages)) {
        s = 0;
        phase ^= 1;
      }
    }
    wait_group<0>();
  }
  // The same with the byte count of `loads` boxes of `m` per item.
  template <class Load, class Store>
  __device__ void run(uint32_t n, const MapHandle& m, uint32_t loads, Load&& load, Store&& store) {
    run(n, m.box_bytes * loads, static_cast<Load&&>(load), static_cast<Store&&>(store));
  }
};

// One item per CTA through shared memory, the bulk-copy engine on the load side and
// every thread of the CTA on the store side (16-byte st.global each). On the H100
// this was the fastest copy measured: 4 KiB items in 256-thread CTAs, 1.008x
// cudaMemcpy, ahead of a 16-byte LDG/STG kernel (1.004x) and of a Relay doing both
// sides with the engine (1.000-1.002x; docs/benchmarks.md, "GPU (H100)").
// Every thread of a one-dimensional CTA calls it once: buf is Bytes of shared memory
// (16-byte aligned), bar an mbarrier in shared memory that this call initialises
// and completes once (phase 0), src and dst 16-byte aligned global addresses.
template <uint32_t Bytes>
__device__ inline void cta_copy_bulk_load(void* dst, const void* src, uint4* buf, uint64_t* bar) {
  static_assert(Bytes > 0 && Bytes % 16 == 0, "a bulk copy moves a positive multiple of 16 bytes");
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    fence_mbarrier_init();
    arrive_expect_tx(bar, Bytes);
    bulk_load(buf, src, Bytes, bar);
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  wait_parity(bar, 0, Bytes);
  uint4* d = static_cast<uint4*>(dst);
  for (uint32_t i = threadIdx.x; i < Bytes / 16; i += blockDim.x) d[i] = buf[i];
}

}  // namespace tmakit::device
