// The GPU engine's host side (include/tmakit/gpu/engine.hpp): run translated
// scenarios (translate.cpp) in a forked worker, so that a sticky CUDA error dies
// with the worker, and read the outputs back.
#include "tmakit/gpu/engine.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "engine_launch.hpp"
#include "engine_translate.hpp"
#include "tmakit/gpu/encode.hpp"

namespace tmakit::gpu {

using detail::Plan;

std::string fault_name(int e) {
  switch (static_cast<cudaError_t>(e)) {
    case cudaErrorIllegalInstruction: return "illegal-instruction";
    case cudaErrorMisalignedAddress: return "misaligned-address";
    case cudaErrorIllegalAddress: return "illegal-address";
    case cudaErrorInvalidAddressSpace: return "invalid-address-space";
    case cudaErrorInvalidPc: return "invalid-pc";
    case cudaErrorLaunchFailure: return "launch-failure";
    case cudaErrorHardwareStackError: return "hardware-stack-error";
    case cudaErrorAssert: return "assert";
    case cudaErrorLaunchTimeout: return "launch-timeout";
    default: return cudaGetErrorName(static_cast<cudaError_t>(e));
  }
}

namespace {

// Device memory released when the worker's scenario ends.
struct DeviceBuffers {
  std::vector<void*> ptrs;
  ~DeviceBuffers() {
    for (void* p : ptrs) cudaFree(p);
  }
  template <class T>
  cudaError_t alloc(T** out, size_t bytes) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e == cudaSuccess) ptrs.push_back(p);
    *out = static_cast<T*>(p);
    return e;
  }
};

GpuOutcome cuda_failure(cudaError_t e, const std::string& what, const std::string& device) {
  GpuOutcome o;
  o.device = device;
  // Errors from a launch that died are faults; anything else (no memory, bad launch) is an error.
  const bool fault = e == cudaErrorIllegalInstruction || e == cudaErrorMisalignedAddress ||
                     e == cudaErrorIllegalAddress || e == cudaErrorInvalidAddressSpace || e == cudaErrorInvalidPc ||
                     e == cudaErrorLaunchFailure || e == cudaErrorHardwareStackError || e == cudaErrorAssert;
  o.kind = fault ? GpuOutcome::Kind::fault : GpuOutcome::Kind::error;
  o.fault = fault_name(e);
  o.message = what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return o;
}

#define TK_CUDA(call, what)                                   \
  do {                                                        \
    cudaError_t e_ = (call);                                  \
    if (e_ != cudaSuccess) return cuda_failure(e_, what, device); \
  } while (0)

// Runs one translated scenario in this process (the worker).
GpuOutcome execute(const Plan& p, const GpuRunOptions& opts) {
  const scenario::Program& s = p.program;
  std::string device;
  cudaDeviceProp prop{};
  TK_CUDA(cudaGetDeviceProperties(&prop, 0), "no CUDA device");
  device = prop.name;
  DeviceBuffers buf;

  // Global allocations at their alignment (cudaMalloc gives 256; larger ones are padded).
  std::vector<uint64_t> base(s.globals.size());
  std::vector<uint8_t*> raw(s.globals.size());
  for (size_t i = 0; i < s.globals.size(); ++i) {
    const auto& g = s.globals[i];
    const uint64_t align = g.align ? g.align : 256;
    TK_CUDA(buf.alloc(&raw[i], g.bytes + align), "cudaMalloc for global " + g.name);
    base[i] = (reinterpret_cast<uint64_t>(raw[i]) + align - 1) / align * align;
    std::vector<uint8_t> host(g.bytes);
    g.init.fill(host);
    TK_CUDA(cudaMemcpy(reinterpret_cast<void*>(base[i]), host.data(), g.bytes, cudaMemcpyHostToDevice),
            "initialising global " + g.name);
  }

  // Maps through the driver bridge: its verdict is the hardware's (§1.3).
  std::vector<CUtensorMap> maps(p.maps.size());
  for (size_t i = 0; i < p.maps.size(); ++i) {
    tensor_map::TensorMap m = p.maps[i];
    if (p.map_alloc[i] >= 0) m.global_address += base[p.map_alloc[i]];
    CUresult r = encode(m, &maps[i]);
    if (r != CUDA_SUCCESS) {
      GpuOutcome o;
      o.kind = GpuOutcome::Kind::driver_refused;
      o.device = device;
      o.fault = "driver-refused";
      o.message = "tensor_maps." + p.map_names[i] + ": the driver refused the map: " + result_name(r);
      return o;
    }
  }
  CUtensorMap* d_maps = nullptr;
  TK_CUDA(buf.alloc(&d_maps, maps.size() * sizeof(CUtensorMap)), "cudaMalloc for maps");
  TK_CUDA(cudaMemcpy(d_maps, maps.data(), maps.size() * sizeof(CUtensorMap), cudaMemcpyHostToDevice), "copying maps");

  std::vector<detail::Step> steps = p.steps;
  for (size_t i = 0; i < steps.size(); ++i)
    if (p.step_alloc[i] >= 0) steps[i].gaddr += base[p.step_alloc[i]];
  detail::Step* d_steps = nullptr;
  TK_CUDA(buf.alloc(&d_steps, steps.size() * sizeof(detail::Step)), "cudaMalloc for steps");
  TK_CUDA(cudaMemcpy(d_steps, steps.data(), steps.size() * sizeof(detail::Step), cudaMemcpyHostToDevice), "copying steps");

  // Sequencer: each CTA starts at its first step.
  std::vector<uint32_t> pos(s.ctas, static_cast<uint32_t>(steps.size()));
  for (size_t i = steps.size(); i-- > 0;) pos[steps[i].cta] = static_cast<uint32_t>(i);
  uint32_t* d_pos = nullptr;
  TK_CUDA(buf.alloc(&d_pos, pos.size() * 4), "cudaMalloc");
  TK_CUDA(cudaMemcpy(d_pos, pos.data(), pos.size() * 4, cudaMemcpyHostToDevice), "copying the sequencer");
  detail::KernelStatus* d_status = nullptr;
  TK_CUDA(buf.alloc(&d_status, sizeof(detail::KernelStatus)), "cudaMalloc");
  TK_CUDA(cudaMemset(d_status, 0, sizeof(detail::KernelStatus)), "cudaMemset");
  unsigned long long* d_regs = nullptr;
  TK_CUDA(buf.alloc(&d_regs, p.reg_init.size() * 8), "cudaMalloc");
  TK_CUDA(cudaMemcpy(d_regs, p.reg_init.data(), p.reg_init.size() * 8, cudaMemcpyHostToDevice), "copying registers");

  // Shared-memory initial contents and shared outputs go through staging buffers.
  std::vector<detail::SharedRegion> inits, outs;
  std::vector<uint8_t> init_data;
  for (const auto& si : s.shared_init) {
    inits.push_back({static_cast<uint32_t>(si.cta), static_cast<uint32_t>(si.offset), static_cast<uint32_t>(si.bytes),
                     init_data.size()});
    init_data.resize(init_data.size() + si.bytes);
    si.init.fill(std::span(init_data).subspan(inits.back().staging, si.bytes));
  }
  uint64_t out_bytes = 0;
  for (const auto& o : s.outputs)
    if (o.shared) {
      outs.push_back({static_cast<uint32_t>(o.cta), static_cast<uint32_t>(o.offset), static_cast<uint32_t>(o.bytes), out_bytes});
      out_bytes += o.bytes;
    }
  uint8_t *d_init = nullptr, *d_out = nullptr;
  detail::SharedRegion *d_inits = nullptr, *d_outs = nullptr;
  TK_CUDA(buf.alloc(&d_init, init_data.size()), "cudaMalloc");
  TK_CUDA(cudaMemcpy(d_init, init_data.data(), init_data.size(), cudaMemcpyHostToDevice), "copying shared_init");
  TK_CUDA(buf.alloc(&d_inits, inits.size() * sizeof(detail::SharedRegion)), "cudaMalloc");
  TK_CUDA(cudaMemcpy(d_inits, inits.data(), inits.size() * sizeof(detail::SharedRegion), cudaMemcpyHostToDevice), "copying");
  TK_CUDA(buf.alloc(&d_out, out_bytes), "cudaMalloc");
  TK_CUDA(buf.alloc(&d_outs, outs.size() * sizeof(detail::SharedRegion)), "cudaMalloc");
  TK_CUDA(cudaMemcpy(d_outs, outs.data(), outs.size() * sizeof(detail::SharedRegion), cudaMemcpyHostToDevice), "copying");

  // Dynamic shared memory: what the scenario uses plus room to align window offset 0 to 1024.
  int max_optin = 0;
  TK_CUDA(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), "querying shared memory");
  detail::KernelArgs a{};
  a.steps = d_steps;
  a.nsteps = static_cast<uint32_t>(steps.size());
  a.ctas = static_cast<uint32_t>(s.ctas);
  a.maps = d_maps;
  a.nmaps = static_cast<uint32_t>(maps.size());
  a.pos = d_pos;
  a.status = d_status;
  a.regs = d_regs;
  a.shared_need = p.shared_need;
  a.dyn_bytes = static_cast<uint32_t>(std::min<uint64_t>(p.shared_need + 1024ull, static_cast<uint64_t>(max_optin)));
  a.init_data = d_init;
  a.inits = d_inits;
  a.ninits = static_cast<uint32_t>(inits.size());
  a.out_data = d_out;
  a.outs = d_outs;
  a.nouts = static_cast<uint32_t>(outs.size());
  a.wait_bound_ns = static_cast<unsigned long long>(opts.wait_bound_s * 1e9);
  TK_CUDA(detail::launch_engine(a, p.threads), "the engine's launch");

  detail::KernelStatus st{};
  TK_CUDA(cudaMemcpy(&st, d_status, sizeof st, cudaMemcpyDeviceToHost), "reading the status");
  GpuOutcome o;
  o.device = device;
  if (st.status != detail::kStatusOk) {
    const std::string where = "program[" + std::to_string(st.step) + "] (cta " + std::to_string(st.cta) + ")";
    if (st.status == detail::kStatusHang) {
      o.kind = GpuOutcome::Kind::hang;
      o.fault = "hang";
      char bound[32];
      std::snprintf(bound, sizeof bound, "%g", opts.wait_bound_s);
      o.message = where + ": " + s.steps[st.step].source + " did not complete within " + bound +
                  " s (mbarrier at shared offset " + std::to_string(st.info0) +
                  ", waiting with parity/state " + std::to_string(st.info1) + ")";
    } else if (st.status == detail::kStatusStall) {
      o.kind = GpuOutcome::Kind::hang;
      o.fault = "hang";
      o.message = where + ": waited for CTA " + std::to_string(st.info0) + " (at step " +
                  std::to_string(st.info1 & ~detail::kBlocked) + "), which made no progress";
    } else {
      o.kind = GpuOutcome::Kind::error;
      o.fault = "shared-layout";
      o.message = "the shared window (" + std::to_string(p.shared_need) + " bytes) does not fit the " +
                  std::to_string(st.info1) + " bytes of dynamic shared memory after aligning it to 1024 (pad " +
                  std::to_string(st.info0) + ")";
    }
    return o;
  }
  std::vector<uint8_t> staged(out_bytes);
  TK_CUDA(cudaMemcpy(staged.data(), d_out, out_bytes, cudaMemcpyDeviceToHost), "reading shared outputs");
  size_t k = 0;
  for (const auto& out : s.outputs) {
    std::vector<uint8_t> bytes;
    if (out.shared) {
      const auto& r = outs[k++];
      bytes.assign(staged.begin() + r.staging, staged.begin() + r.staging + r.bytes);
    } else {
      size_t gi = 0;
      while (s.globals[gi].name != out.global) ++gi;  // the loader checked the name
      const uint64_t n = out.bytes ? out.bytes : s.globals[gi].bytes - out.offset;
      bytes.resize(n);
      TK_CUDA(cudaMemcpy(bytes.data(), reinterpret_cast<void*>(base[gi] + out.offset), n, cudaMemcpyDeviceToHost),
              "reading output " + out.name);
    }
    o.outputs.emplace_back(out.name, std::move(bytes));
  }
  o.kind = GpuOutcome::Kind::ok;
  return o;
}

// ---- the worker protocol: one record per scenario over a pipe ----

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::write(fd, c, n);
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}
std::string encode_outcome(const GpuOutcome& o) {
  std::string body;
  put_u64(body, static_cast<uint64_t>(o.kind));
  put_str(body, o.fault);
  put_str(body, o.message);
  put_str(body, o.device);
  put_u64(body, o.outputs.size());
  for (const auto& [name, bytes] : o.outputs) {
    put_str(body, name);
    put_str(body, std::string(bytes.begin(), bytes.end()));
  }
  std::string rec;
  put_u64(rec, body.size());
  return rec + body;
}

struct Reader {
  const std::string& s;
  size_t at = 0;
  bool ok = true;
  uint64_t u64() {
    uint64_t v = 0;
    if (at + 8 > s.size()) return ok = false, 0;
    std::memcpy(&v, s.data() + at, 8);
    at += 8;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || at + n > s.size()) return ok = false, std::string();
    std::string r = s.substr(at, n);
    at += n;
    return r;
  }
};
GpuOutcome decode_outcome(const std::string& body) {
  Reader r{body};
  GpuOutcome o;
  o.kind = static_cast<GpuOutcome::Kind>(r.u64());
  o.fault = r.str();
  o.message = r.str();
  o.device = r.str();
  uint64_t n = r.u64();
  for (uint64_t i = 0; r.ok && i < n; ++i) {
    std::string name = r.str();
    std::string bytes = r.str();
    o.outputs.emplace_back(name, std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  if (!r.ok) {
    o = {};
    o.kind = GpuOutcome::Kind::error;
    o.message = "the GPU worker sent a malformed result";
  }
  return o;
}

// Reads one length-prefixed record, waiting at most `timeout_ms`. 0: ok, 1: EOF/error, 2: timeout.
int read_record(int fd, std::string& body, int timeout_ms) {
  std::string buf;
  uint64_t want = 8;
  bool have_len = false;
  while (buf.size() < want) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, timeout_ms);
    if (r == 0) return 2;
    if (r < 0) return 1;
    char tmp[65536];
    ssize_t n = ::read(fd, tmp, std::min<uint64_t>(sizeof tmp, want - buf.size()));
    if (n <= 0) return 1;
    buf.append(tmp, static_cast<size_t>(n));
    if (!have_len && buf.size() == 8) {
      std::memcpy(&want, buf.data(), 8);
      want += 8;
      have_len = true;
    }
  }
  body = buf.substr(8);
  return 0;
}

bool must_restart(const GpuOutcome& o) {
  return o.kind == GpuOutcome::Kind::fault || o.kind == GpuOutcome::Kind::hang ||
         (o.kind == GpuOutcome::Kind::error && o.fault != "shared-layout");
}

}  // namespace

void check_supported(const scenario::Scenario& s) { (void)detail::translate(s); }

std::vector<GpuOutcome> run(std::span<const scenario::Scenario> scenarios, const GpuRunOptions& opts) {
  std::vector<Plan> plans;
  for (const auto& s : scenarios) plans.push_back(detail::translate(s));  // errors before any launch
  std::vector<GpuOutcome> out(plans.size());
  size_t next = 0;
  while (next < plans.size()) {
    int fds[2];
    if (::pipe(fds) != 0) {
      out[next].message = "pipe() failed";
      ++next;
      continue;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      for (; next < plans.size(); ++next) out[next].message = "fork() failed";
      break;
    }
    if (pid == 0) {  // the worker: runs until a fault or hang spoils its context
      ::close(fds[0]);
      for (size_t i = next; i < plans.size(); ++i) {
        GpuOutcome o = execute(plans[i], opts);
        const std::string rec = encode_outcome(o);
        if (!write_all(fds[1], rec.data(), rec.size())) ::_exit(1);
        if (must_restart(o)) ::_exit(0);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    while (next < plans.size()) {
      std::string body;
      int r = read_record(fds[0], body, opts.scenario_timeout_s * 1000);
      if (r == 2) {
        ::kill(pid, SIGKILL);
        out[next].kind = GpuOutcome::Kind::hang;
        out[next].fault = "hang";
        out[next].message = "the GPU run did not finish within " + std::to_string(opts.scenario_timeout_s) +
                            " s; the worker was killed";
        ++next;
        break;
      }
      if (r == 1) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
        // The worker left without a record: it died on this scenario.
        out[next].kind = GpuOutcome::Kind::error;
        out[next].message = WIFSIGNALED(status) ? "the GPU worker died (signal " + std::to_string(WTERMSIG(status)) + ")"
                                                : "the GPU worker exited without a result";
        ++next;
        break;
      }
      out[next] = decode_outcome(body);
      const bool restart = must_restart(out[next]);
      ++next;
      if (restart) break;
    }
    ::close(fds[0]);
    if (pid > 0) {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
  }
  return out;
}

GpuOutcome run(const scenario::Scenario& s, const GpuRunOptions& opts) {
  return run(std::span<const scenario::Scenario>(&s, 1), opts).front();
}

}  // namespace tmakit::gpu
