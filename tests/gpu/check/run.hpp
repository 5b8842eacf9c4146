// check_seeded's launches on the GPU (run.cpp) and what it reports of them (observe.cpp).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "seeded_cases.hpp"

namespace check_seeded {

// Bad arguments or an unusable machine: exit 2 with the message.
struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --self-capture: where the trace directory goes and what it holds besides the records.
struct Capture {
  std::string dir;
  std::string instrumented_ptx;
  std::string sites_json;
  size_t capacity = 8192;  // records; a hang fills any buffer with its failing waits
};

void write_file(const std::string& path, const std::string& text);

// Loads `ptx` (instrumented when `capture` is set), encodes the case's maps, launches the
// seeded kernel (or its clean twin), waits up to `timeout` seconds (0: forever), prints what it
// observed and, with `capture`, writes the trace directory. Returns the exit status.
int run_case(const Case& c, bool clean, double timeout, const std::string& ptx, const Capture* capture);

// The copy kernel from the plain and the instrumented module, same launch, timed with events.
int run_overhead(const std::string& plain_ptx, const std::string& instrumented_ptx, const std::string& label,
                 int iterations);

// What the case's output shows, in words: `out` is what the kernel copied out of shared
// memory (or the destination tensor for the store cases), `source` the tile it should hold.
std::string observe(const Case& c, bool clean, const std::vector<float>& out, const std::vector<float>& source,
                    const std::vector<float>& other);

}  // namespace check_seeded
