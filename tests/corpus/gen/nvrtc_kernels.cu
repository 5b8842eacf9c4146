// Kernels the corpus compiles with NVRTC (scripts/corpus.sh): bulk copies written as
// inline PTX, the way JIT users without CCCL write them, plus an ordinary kernel.
// Self-contained: NVRTC gets no include path for these.
#define DEV __device__ __forceinline__

DEV unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// A 1-D bulk copy global → shared with an mbarrier, then shared → global with a bulk group.
extern "C" __global__ void bulk_roundtrip(const float4* src, float4* dst, unsigned bytes) {
  __shared__ alignas(128) float4 buf[256];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)), "r"(bytes));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(smem_addr(buf)), "l"(src + blockIdx.x * 256), "r"(bytes), "r"(smem_addr(&bar)) : "memory");
  }
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "wait_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
      "@!done bra wait_%=;\n}" ::"r"(smem_addr(&bar)) : "memory");
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dst + blockIdx.x * 256), "r"(smem_addr(buf)), "r"(bytes) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 ::"l"(dst + blockIdx.x * 256), "r"(smem_addr(buf)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes));
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// A 2-D tensor tile load through a __grid_constant__ tensor map, with an L2 cache hint.
struct alignas(64) TensorMap { unsigned long long words[16]; };
extern "C" __global__ void tile_load(const __grid_constant__ TensorMap map, int x, int y, float* out) {
  __shared__ alignas(128) float tile[32 * 32];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" ::"r"(smem_addr(&bar)));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem_addr(tile)), "l"(&map), "r"(x), "r"(y), "r"(smem_addr(&bar)) : "memory");
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(&map), "r"(x + 32), "r"(y));
  }
  __syncthreads();
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "again_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t"
      "@!p bra again_%=;\n}" ::"r"(smem_addr(&bar)) : "memory");
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x];
}

// An ordinary kernel: no bulk copies.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
