// The GPU engine: runs a scenario (scenario-format.md) on a real GPU, the second
// engine behind the same files as the reference model (docs/gpu-engine.md).
//
// The host translates every step into a compact record (one PTX variant plus
// resolved operands); one cluster launch then walks the list: the step's thread
// in the step's CTA executes it, and a sequencer keeps the program's order
// across CTAs. A blocking mbarrier.try_wait spins with a bound and reports a
// hang instead of hanging. Hardware faults (illegal instruction, misaligned
// address) are sticky CUDA errors, so run() executes the GPU part in a forked
// child process and the caller survives to report them.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tmakit/scenario/scenario.hpp"

namespace tmakit::gpu {

struct GpuRunOptions {
  double wait_bound_s = 1.0;      // a try_wait (or the sequencer) stuck this long is a hang
  int scenario_timeout_s = 60;    // the child is killed after this long (reported as a hang)
};

struct GpuOutcome {
  enum class Kind {
    ok,              // outputs hold the bytes read back
    fault,           // the launch died: `fault` is "illegal-instruction", "misaligned-address", ...
    hang,            // a wait never completed (the kernel gave up) or the child timed out
    driver_refused,  // cuTensorMapEncode* refused a map
    error,           // no device, out of memory, the child died, ...
  } kind = Kind::error;
  std::string fault;    // a short, stable name (see fault_name()); "hang" for hangs
  std::string message;  // details: CUDA error name, the step that hung, the map the driver refused
  std::string device;   // the GPU's name ("NVIDIA H100 80GB HBM3")
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
};

// Translates every step for the GPU. Throws scenario::InputError for unusable
// input and DiagnosticError (rule "gpu.unsupported") for a form the GPU engine
// does not implement, naming the step. Needs no GPU.
void check_supported(const scenario::Scenario& s);

// Runs each scenario on the GPU. The GPU work happens in a forked worker that
// runs scenarios one after another and is replaced after any fault or hang, so
// a sticky CUDA error never reaches the caller's process (and the caller must
// not have initialised CUDA itself). Translation errors are thrown as by
// check_supported() before anything runs.
std::vector<GpuOutcome> run(std::span<const scenario::Scenario> scenarios, const GpuRunOptions& opts = {});
GpuOutcome run(const scenario::Scenario& s, const GpuRunOptions& opts = {});

// "illegal-instruction" for cudaErrorIllegalInstruction, "misaligned-address",
// "illegal-address", "launch-failure", "trap", ...; the CUDA name otherwise.
std::string fault_name(int cuda_error);

}  // namespace tmakit::gpu
