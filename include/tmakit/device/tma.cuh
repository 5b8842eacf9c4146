// tmakit's device library (header-only CUDA, namespace tmakit::device):
// map handles, mbarrier helpers with a debug-mode bounded wait, typed wrappers
// for the bulk-copy forms (CCCL's cuda::ptx where it has them), the sm_100-only
// forms (sm100.cuh, compiled for sm_100a/f only), and a small multi-stage pipeline.
// Build with -gencode=arch=compute_90a,code=sm_90a (multicast needs sm_90a).
// docs/device-library.md describes it.
#pragma once
#include "tmakit/device/copy.cuh"
#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"
#include "tmakit/device/pipeline.cuh"
