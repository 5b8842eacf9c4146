// Host side: the launch configuration of one cluster of `ctas` CTAs (the whole
// grid), as the GPU engine and the hardware harnesses launch their kernels.
#pragma once
#include <cuda_runtime.h>

namespace tmakit::device {

struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attr[1]{};

  ClusterLaunch(unsigned ctas, unsigned threads, size_t dynamic_smem_bytes) {
    config.gridDim = dim3(ctas);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = dynamic_smem_bytes;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = ctas;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  // `config.attrs` points into this object.
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace tmakit::device
