// `tmakit run --engine gpu|both` (docs/gpu-engine.md): the scenario on the GPU
// engine, or on the model and the GPU with the first differing byte of every
// output. Compiled into every tmakit; it does GPU work only in CUDA builds
// (TMAKIT_WITH_GPU), and says so otherwise.
#include <cstdio>
#include <optional>
#include <string>

#include "commands.hpp"
#include "output_files.hpp"
#include "tmakit/scenario/scenario.hpp"
#ifdef TMAKIT_WITH_GPU
#include "tmakit/gpu/engine.hpp"
#endif

namespace tmakit::cli {

#ifdef TMAKIT_WITH_GPU
namespace {

// Every output of the run as DIR/NAME + suffix, all or none (output_files.hpp).
void add_outputs(std::vector<OutputFile>& files,
                 const std::vector<std::pair<std::string, std::vector<uint8_t>>>& outs, const std::string& suffix) {
  for (const auto& [name, bytes] : outs) files.push_back({name + suffix, bytes});
}

bool write_outputs(const std::string& dir, const std::vector<OutputFile>& files) {
  if (auto err = write_output_folder(dir, files, "-o")) {
    std::fprintf(stderr, "%s\n", format(*err).c_str());
    return false;
  }
  return true;
}

// "gpu (NVIDIA H100 80GB HBM3)", or "gpu" alone where no device was found (no empty parentheses).
std::string gpu_label(const gpu::GpuOutcome& g) { return g.device.empty() ? "gpu" : "gpu (" + g.device + ")"; }

std::string describe(const gpu::GpuOutcome& g) {
  using K = gpu::GpuOutcome::Kind;
  switch (g.kind) {
    case K::ok: return "ok";
    case K::fault: return "fault " + g.fault + ": " + g.message;
    case K::hang: return "hang: " + g.message;
    case K::driver_refused: return "driver refused: " + g.message;
    case K::error: return "error: " + g.message;
  }
  return "?";
}

// The first byte where two outputs differ, as one line.
std::string compare(const std::string& name, const std::vector<uint8_t>& model, const std::vector<uint8_t>& gpu,
                    bool& same) {
  char buf[256];
  if (model.size() != gpu.size()) {
    same = false;
    std::snprintf(buf, sizeof buf, "%s: sizes differ: model %zu bytes, gpu %zu bytes", name.c_str(), model.size(),
                  gpu.size());
    return buf;
  }
  size_t diffs = 0, first = model.size();
  for (size_t i = 0; i < model.size(); ++i)
    if (model[i] != gpu[i]) {
      if (!diffs) first = i;
      ++diffs;
    }
  if (!diffs) {
    std::snprintf(buf, sizeof buf, "%s: %zu bytes identical", name.c_str(), model.size());
    return buf;
  }
  same = false;
  std::snprintf(buf, sizeof buf, "%s: first differing byte %zu of %zu: model 0x%02x, gpu 0x%02x (%zu bytes differ)",
                name.c_str(), first, model.size(), model[first], gpu[first], diffs);
  return buf;
}

}  // namespace
#endif

// engine: "gpu" or "both". Exit status: 0 ok / agree, 1 fault, hang or disagreement, 2 unusable input.
int run_on_gpu_engine(const scenario::Scenario& s, const std::string& engine, const std::string& file,
                      const std::string& out_dir, const scenario::RunOptions& opts) {
#ifndef TMAKIT_WITH_GPU
  (void)s, (void)out_dir, (void)opts;
  std::fprintf(stderr, "%s: --engine %s: this tmakit was built without CUDA\n", file.c_str(), engine.c_str());
  return 2;
#else
  // The model runs first, in this process; the GPU only in a forked child (engine.hpp).
  std::optional<scenario::RunResult> model;
  std::string model_error;
  if (engine == "both") {
    try {
      model = scenario::run(s, opts);
    } catch (const scenario::InputError& e) {
      std::fprintf(stderr, "%s\n", located(file, e.diagnostic()).c_str());
      return 2;
    } catch (const DiagnosticError& e) {
      model_error = format(e.diagnostic());
    }
  }
  gpu::GpuOutcome g;
  try {
    g = gpu::run(s);
  } catch (const scenario::InputError& e) {
    std::fprintf(stderr, "%s\n", located(file, e.diagnostic()).c_str());
    return 2;
  } catch (const DiagnosticError& e) {
    std::fprintf(stderr, "%s\n", located(file, e.diagnostic()).c_str());
    return 2;
  }
  const bool gpu_ok = g.kind == gpu::GpuOutcome::Kind::ok;
  if (engine == "gpu") {
    if (!gpu_ok) {
      std::fprintf(stderr, "%s: %s: %s\n", file.c_str(), gpu_label(g).c_str(), describe(g).c_str());
      return g.kind == gpu::GpuOutcome::Kind::error ? 2 : 1;
    }
    std::vector<OutputFile> files;
    add_outputs(files, g.outputs, ".bin");
    if (!out_dir.empty() && !write_outputs(out_dir, files)) return 2;
    std::printf("ok (gpu: %s): %zu steps, %zu outputs%s%s\n", g.device.c_str(), s.program.size(), g.outputs.size(),
                out_dir.empty() ? "" : " written to ", out_dir.c_str());
    return 0;
  }
  std::printf("model: %s\n", model ? "ok" : ("error: " + model_error).c_str());
  std::printf("%s: %s\n", gpu_label(g).c_str(), describe(g).c_str());
  if (!out_dir.empty()) {
    std::vector<OutputFile> files;
    if (model) add_outputs(files, model->outputs, ".bin");
    if (gpu_ok) add_outputs(files, g.outputs, ".gpu.bin");
    if (!files.empty() && !write_outputs(out_dir, files)) return 2;
  }
  if (g.kind == gpu::GpuOutcome::Kind::error) {  // no device, out of memory, ...: nothing to compare
    std::printf("both: not compared (the gpu could not run it)\n");
    return 2;
  }
  if (!model || !gpu_ok) {
    // Agreement on a refusal: the model names a rule where the hardware faults or hangs.
    const bool both_refuse = !model && (g.kind == gpu::GpuOutcome::Kind::fault || g.kind == gpu::GpuOutcome::Kind::hang ||
                                        g.kind == gpu::GpuOutcome::Kind::driver_refused);
    std::printf("both: %s\n", both_refuse ? "agree (both refuse)" : model ? "differ (only the gpu refused)"
                                                                           : "differ (only the model refused)");
    return both_refuse ? 0 : 1;
  }
  bool same = true;
  for (size_t i = 0; i < model->outputs.size() && i < g.outputs.size(); ++i)
    std::printf("  %s\n", compare(model->outputs[i].first, model->outputs[i].second, g.outputs[i].second, same).c_str());
  std::printf("both: %s\n", same ? "agree" : "differ");
  return same ? 0 : 1;
#endif
}

}  // namespace tmakit::cli
