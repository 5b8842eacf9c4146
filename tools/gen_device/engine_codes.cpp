// The GPU engine's step codes (src/gpu/generated/engine_codes.hpp): one code per operation the
// engine's kernel runs, each with the rows of the table of forms it stands for. The host picks a
// code from a decoded step (src/gpu/translate_steps.cpp) and the kernel's switch calls the device
// library for it (src/gpu/engine_kernel*.cu*). The rows are the table's: a code naming a row the
// table lacks stops the generator, and DeviceCoverage.EveryRowTheEngineRunsHasItsCode checks that
// every row is either run by a code or listed here as not run, with the reason.
#include <fmt/format.h>

#include <stdexcept>

#include "device_forms.hpp"

namespace tmakit::gen_device {

const std::vector<EngineCode>& engine_codes() {
  static const std::vector<EngineCode> codes = {
      {"kNop", {"barrier.cluster.arrive", "barrier.cluster.wait"},
       "the sequencer already orders every step (docs/gpu-engine.md)"},
      {"kTensorLoadCta", {"tensor.load.shared::cta"}, ".tile (flag kIm2col: .im2col)"},
      {"kTensorLoadCluster", {"tensor.load.shared::cluster"}, "flag kMulticast adds .multicast::cluster"},
      {"kTensorStore", {"tensor.store"}, ".tile (flag kIm2col: .im2col_no_offs)"},
      {"kTensorReduce", {"tensor.reduce"}, "red = spec::RedOp"},
      {"kTensorPrefetch", {"tensor.prefetch"}, ""},
      {"kBulkLoadCta", {"bulk.shared::cta.global"}, ""},
      {"kBulkLoadCluster", {"bulk.shared::cluster.global"}, "flag kMulticast adds .multicast::cluster"},
      {"kBulkCopyPeer", {"bulk.shared::cluster.shared::cta"}, ""},
      {"kBulkStore", {"bulk.global.shared::cta"}, ""},
      {"kBulkReduceGlobal", {"bulk-reduce.global.shared::cta"}, "red = a BulkRedGlobal code"},
      {"kBulkReduceCluster", {"bulk-reduce.shared::cluster.shared::cta"}, "red = a BulkRedCluster code"},
      {"kBulkPrefetch", {"bulk.prefetch"}, ""},
      {"kCommitGroup", {"bulk.commit_group"}, ""},
      {"kWaitGroup", {"bulk.wait_group"}, "size = N (0..7); flag kRead for .read"},
      {"kMbarInit", {"mbarrier.init"}, "size = count"},
      {"kMbarArrive",
       {"mbarrier.arrive.local", "mbarrier.arrive.remote", "mbarrier.arrive.expect_tx.local",
        "mbarrier.arrive.expect_tx.remote", "mbarrier.arrive_drop.local", "mbarrier.arrive_drop.remote",
        "mbarrier.arrive_drop.expect_tx.local", "mbarrier.arrive_drop.expect_tx.remote"},
       "flags: kRemote, kExpectTx (size = txCount), kDrop, kHasCount (size = count)"},
      {"kMbarExpectTx", {"mbarrier.expect_tx"}, "flag kRemote"},
      {"kMbarCompleteTx", {"mbarrier.complete_tx"}, "flag kRemote"},
      {"kMbarTestWait", {"mbarrier.test_wait", "mbarrier.test_wait.parity"},
       "flags: kParity, kClusterScope; value / src_reg = phaseParity or state"},
      {"kMbarTryWait", {"mbarrier.try_wait", "mbarrier.try_wait.parity"}, "the same, blocking with a bounded spin"},
      {"kMbarInval", {"mbarrier.inval"}, ""},
      {"kFenceProxyAsync", {"fence.proxy.async"}, "flags: kSpaceCluster, kSpaceGlobal (default shared::cta)"},
      {"kFenceMbarInit", {"fence.mbarrier_init"}, ""},
      {"kStShared", {"st.shared"}, "size = bytes (1, 2, 4, 8), value"},
      {"kStGlobal", {"st.global"}, ""},
      // libcu++ <cuda/barrier> calls (scenario `call` steps), run through the functions themselves.
      {"kLibBarrierInit", {}, "init(&bar, size); smem = the cuda::barrier"},
      {"kLibMemcpyAsyncTx", {}, "cuda::device::memcpy_async_tx(smem, gaddr, aligned_size_t<value>(size), bar at mbar)"},
      {"kLibArriveTx", {}, "dst_reg = cuda::device::barrier_arrive_tx(bar, value, size)"},
      {"kLibExpectTx", {}, "cuda::device::barrier_expect_tx(bar, size)"},
      {"kLibArrive", {}, "dst_reg = bar.arrive(size)"},
      {"kLibWait", {}, "bar.wait(token in src_reg), as a bounded loop of try_wait_for(token, 0 ns)"},
      {"kLibArriveAndWait", {}, "bar.arrive_and_wait(), the same way: arrive(), then the bounded wait"},
  };
  return codes;
}

const std::vector<std::pair<std::string_view, std::string_view>>& engine_rows_not_run() {
  static const std::vector<std::pair<std::string_view, std::string_view>> rows = {
      {"mbarrier.arrive.noComplete.local", "a phase that must not complete is the model's to judge"},
      {"mbarrier.arrive_drop.noComplete.local", "a phase that must not complete is the model's to judge"},
      {"mbarrier.pending_count", "reads a token back on the host; nothing for the GPU to show"},
      {"tensormap.replace", "scenarios hold their maps as data; the engine encodes them through the driver"},
      {"tensormap.cp_fenceproxy", "scenarios hold their maps as data; the engine encodes them through the driver"},
  };
  return rows;
}

std::string engine_codes_header(const char* first_line) {
  std::string s = std::string(first_line) +
                  "// The GPU engine's step codes: one per operation its kernel runs, with the rows of the\n"
                  "// table it stands for (tools/gen_device/engine_codes.cpp). Plain C++: the host translator\n"
                  "// and the kernel both include it through src/gpu/engine_steps.hpp.\n#pragma once\n#include <cstdint>\n\n"
                  "namespace tmakit::gpu::detail {\n\nenum Code : uint16_t {\n";
  for (const auto& c : engine_codes()) {
    for (auto row : c.rows)
      if (!spec::find_form(row)) throw std::runtime_error(fmt::format("{} names no row of the table: {}", c.name, row));
    std::string rows;
    for (auto row : c.rows) rows += (rows.empty() ? (c.rows.size() > 1 ? "rows " : "row ") : ", ") + std::string(row);
    const std::string what = rows.empty() ? std::string(c.note) : rows + (c.note.empty() ? "" : "; " + std::string(c.note));
    s += fmt::format("  {},  // {}\n", c.name, what);
  }
  s += "  kCodeCount\n};\n\n}  // namespace tmakit::gpu::detail\n";
  return s;
}

}  // namespace tmakit::gen_device
