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
#pragma once
#include <cstdint>

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
    wait_parity(&empty[s.stage], s.phase ^ 1, 0);
    arrive_expect_tx(&full[s.stage], m, loads);
    return &full[s.stage];
  }
  __device__ void consumer_wait(const PipeState& s, uint32_t armed_bytes = 0) {
    wait_parity(&full[s.stage], s.phase, armed_bytes);
  }
  __device__ void consumer_release(const PipeState& s) { arrive(&empty[s.stage]); }
};

}  // namespace tmakit::device
