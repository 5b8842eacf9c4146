// A kernel that faults after its barrier work: `tmakit check` on it shows what becomes of the
// records when the context dies. Records in device memory are unreadable after the fault, so
// `tmakit check` (--records auto) runs the program once more with host-mapped records, whose
// report names the last operation recorded before the fault: the arrive at the `at:arrive` line.
// `fault` exits 2 when the launch fails as it should (the CUDA error it got is printed), 0 if
// it somehow did not fault.
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace ptx = cuda::ptx;

__global__ void arrive_then_fault(int* bad) {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, blockDim.x);
  __syncthreads();
  ptx::mbarrier_arrive(&bar);  // at:arrive
  bad[threadIdx.x] = 1;        // an address no allocation holds: CUDA_ERROR_ILLEGAL_ADDRESS
}

int main() {
  arrive_then_fault<<<1, 32>>>(reinterpret_cast<int*>(uintptr_t{16}));
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("fault: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 2;
}
