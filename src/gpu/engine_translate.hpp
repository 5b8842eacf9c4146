// Program → step records for the GPU engine (translate.cpp). Needs no GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine_steps.hpp"
#include "tmakit/scenario/program.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::gpu::detail {

struct Plan {
  scenario::Program program;
  std::vector<Step> steps;
  std::vector<int> step_alloc;  // per step: global allocation whose base is added to gaddr, or -1
  std::vector<std::string> map_names;
  std::vector<tensor_map::TensorMap> maps;  // global_address = offset into map_alloc's allocation
  std::vector<int> map_alloc;
  std::vector<unsigned long long> reg_init;  // dynamic symbols (predicates, state tokens)
  uint32_t shared_need = 0;  // bytes of each CTA's window the scenario touches
  int threads = 32;
};

// Throws scenario::InputError / DiagnosticError ("gpu.unsupported", "gpu.operand"), naming the step.
Plan translate(scenario::Program program);
Plan translate(const scenario::Scenario& s);  // resolved first

}  // namespace tmakit::gpu::detail
