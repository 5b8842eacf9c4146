// The example kernel of libcu++'s cuda::device::memcpy_async_tx page (tests/seeds/004_*),
// verbatim apart from the `barrier` alias it assumes (its Godbolt source has it). Its PTX
// for every target the project supports is kept beside it as a lint test
// (tests/ptx/test_lint_libcudacxx.cpp; ptxas verdicts in ../verdicts.jsonl, read by test_corpus.cpp):
//   nvcc -ptx -arch=sm_90a  memcpy_async_tx_example.cu -o memcpy_async_tx_example.sm_90a.ptx
//   nvcc -ptx -arch=sm_100a memcpy_async_tx_example.cu -o memcpy_async_tx_example.sm_100a.ptx
// (CUDA 13.0; run in this folder.)
#include <cuda/barrier>
using barrier = cuda::barrier<cuda::thread_scope_block>;

#include <cuda/barrier>
#include <cuda/std/utility> // cuda::std::move
#if defined(__CUDA_MINIMUM_ARCH__) && __CUDA_MINIMUM_ARCH__ < 900
static_assert(false, "Insufficient CUDA Compute Capability: cuda::device::memcpy_async_tx is not available.");
#endif // __CUDA_MINIMUM_ARCH__
__device__ alignas(16) int gmem_x[2048];
__global__ void example_kernel() {
__shared__ alignas(16) int smem_x[1024];
__shared__ cuda::barrier<cuda::thread_scope_block> bar;
if (threadIdx.x == 0) {
init(&bar, blockDim.x);
}
__syncthreads();
barrier::arrival_token token;
if (threadIdx.x == 0) {
cuda::device::memcpy_async_tx(smem_x, gmem_x, cuda::aligned_size_t<16>(sizeof(smem_x)), bar);
token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_x));
} else {
token = bar.arrive(1);
}
bar.wait(cuda::std::move(token));
// smem_x contains the contents of gmem_x[0], ..., gmem_x[1023]
smem_x[threadIdx.x] += 1;
}
