// Helpers of the GPU suite: fills, checks, timing, the cudaMemcpy baseline, rows.
#include <cstdarg>

#include "common.cuh"

namespace bench {

__device__ inline uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// k in [-512, 511] \ {0} (or [-255, 255] \ {0} for bf16)
__device__ inline int small_int(uint64_t i, uint64_t seed, int range) {
  int k = int(mix(i ^ (seed << 1)) % uint64_t(2 * range)) - range;
  return k == 0 ? 1 : k;
}

__global__ void fill_f32_k(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = float(small_int(i, seed, 512)) / 256.0f;
}
__global__ void fill_bf16_k(uint16_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float f = float(small_int(i, seed, 255)) / 256.0f;  // exact in bf16 (8-bit significand)
    p[i] = uint16_t(__float_as_uint(f) >> 16);
  }
}
__global__ void fill_u32_k(uint32_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint32_t(mix(i ^ (seed << 1)));
}
__global__ void diff_u32_k(const uint32_t* a, const uint32_t* b, size_t n, unsigned long long* count) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    c += a[i] != b[i];
  if (c) atomicAdd(count, c);
}
template <class T>
__global__ void diff_transpose_k(const T* in, const T* out, uint32_t w, uint32_t h, unsigned long long* count) {
  unsigned long long c = 0;
  const size_t n = size_t(w) * h;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const size_t y = i / w, x = i % w;
    c += out[x * h + y] != in[i];
  }
  if (c) atomicAdd(count, c);
}

static unsigned long long* counter() {
  static unsigned long long* c = nullptr;
  if (!c) BENCH_CUDA(cudaMalloc(&c, sizeof(*c)));
  BENCH_CUDA(cudaMemset(c, 0, sizeof(*c)));
  return c;
}
static uint64_t read_counter(unsigned long long* c) {
  BENCH_CUDA(cudaGetLastError());
  unsigned long long v = 0;
  BENCH_CUDA(cudaMemcpy(&v, c, sizeof(v), cudaMemcpyDeviceToHost));
  return v;
}
constexpr int kFillGrid = 132 * 8, kFillBlock = 512;

void fill_f32(float* p, size_t n, uint64_t seed) { fill_f32_k<<<kFillGrid, kFillBlock>>>(p, n, seed); }
void fill_bf16(uint16_t* p, size_t n, uint64_t seed) { fill_bf16_k<<<kFillGrid, kFillBlock>>>(p, n, seed); }
void fill_u32(uint32_t* p, size_t n, uint64_t seed) { fill_u32_k<<<kFillGrid, kFillBlock>>>(p, n, seed); }
void poison(void* p, size_t bytes) { BENCH_CUDA(cudaMemset(p, 0xFF, bytes)); }

uint64_t count_diff_u32(const void* a, const void* b, size_t bytes) {
  auto* c = counter();
  diff_u32_k<<<kFillGrid, kFillBlock>>>(static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), bytes / 4, c);
  return read_counter(c);
}
uint64_t count_transpose_diff(const void* in, const void* out, uint32_t w, uint32_t h, int elem) {
  auto* c = counter();
  if (elem == 4)
    diff_transpose_k<<<kFillGrid, kFillBlock>>>(static_cast<const uint32_t*>(in), static_cast<const uint32_t*>(out), w, h, c);
  else
    diff_transpose_k<<<kFillGrid, kFillBlock>>>(static_cast<const uint16_t*>(in), static_cast<const uint16_t*>(out), w, h, c);
  return read_counter(c);
}

double median_ms(const std::function<void()>& launch, int reps, int warm) {
  for (int i = 0; i < warm; ++i) launch();
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) BENCH_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    BENCH_CUDA(cudaEventRecord(ev[2 * i]));
    launch();
    BENCH_CUDA(cudaEventRecord(ev[2 * i + 1]));
  }
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) BENCH_CUDA(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

double Suite::memcpy_gbs(double bytes) {
  const size_t half = (size_t(bytes / 2) + 255) & ~size_t(255);
  auto it = memcpy_cache.find(half);
  if (it != memcpy_cache.end()) return it->second;
  Buf a(half), b(half);
  fill_u32(a.as<uint32_t>(), half / 4, next_seed());
  const double ms = median_ms([&] { cudaMemcpyAsync(b.p, a.p, half, cudaMemcpyDeviceToDevice); }, reps);
  const double gbs = 2.0 * half / ms / 1e6;
  memcpy_cache[half] = gbs;
  std::printf("  [baseline] cudaMemcpy D2D %.1f MiB: %.3f ms, %.0f GB/s (read + write)\n", half / 1048576.0, ms, gbs);
  return gbs;
}

Row& Suite::add(Row r) {
  if (r.memcpy_gbs == 0) r.memcpy_gbs = memcpy_gbs(r.bytes);
  rows.push_back(r);
  std::printf("  %-28s %-26s %-44s %8.3f ms %7.0f GB/s %6.3fx %s%s\n", r.workload.c_str(), r.impl.c_str(),
              r.config.c_str(), r.ms, r.gbs(), r.ratio(), r.checked ? "ok" : "unchecked",
              r.note.empty() ? "" : (" " + r.note).c_str());
  std::fflush(stdout);
  return rows.back();
}

bool Suite::expect_zero(uint64_t mismatches, const std::string& workload, const std::string& impl,
                        const std::string& config) {
  if (mismatches == 0) return true;
  std::printf("  FAIL %s %s %s: %llu mismatching elements\n", workload.c_str(), impl.c_str(), config.c_str(),
              (unsigned long long)mismatches);
  Row r;
  r.workload = workload;
  r.impl = impl;
  r.config = config;
  r.note = fmt("FAIL: %llu mismatches", (unsigned long long)mismatches);
  rows.push_back(r);
  return false;
}

bool Suite::check_and_time(Row r, const std::function<void()>& prepare, const std::function<void()>& run,
                           const std::function<uint64_t()>& mismatches, const std::function<void()>& launch) {
  prepare();
  run();
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaDeviceSynchronize());
  if (!expect_zero(mismatches(), r.workload, r.impl, r.config)) return false;
  r.ms = median_ms(launch, reps);
  r.checked = true;
  add(r);
  return true;
}

TensorMap map_2d(const void* base, DataType t, uint64_t w, uint64_t h, uint32_t bw, uint32_t bh, Swizzle sw,
                 L2Promotion promo) {
  TensorMap m;
  m.data_type = t;
  m.rank = 2;
  m.global_address = reinterpret_cast<uint64_t>(base);
  m.dims = {w, h};
  m.strides = {w * uint64_t(tmakit::tensor_map::element_bytes(t))};
  m.box = {bw, bh};
  m.swizzle = sw;
  m.l2_promotion = promo;
  return m;
}

std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

}  // namespace bench
