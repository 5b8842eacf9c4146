// libcu++'s bulk-copy layer (<cuda/barrier>, seed page 004, spec §12) on the model:
// cuda::device::memcpy_async_tx, barrier_arrive_tx, barrier_expect_tx and
// cuda::barrier<thread_scope_block> init / arrive / wait / arrive_and_wait.
//
// Each call is checked against the preconditions of the page and of §12 (rules
// `libcudacxx.*`), then lowered to the PTX that CCCL (CUDA 13.0) emits for sm_90 —
// the engine runs that PTX with its own rules, so a call can fail no other way
// than the instructions it compiles to. `T` being trivially copyable and
// `Alignment >= 16` are static assertions in C++; a scenario can still spell a
// small alignment, so that one is diagnosed here too.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/model/engine.hpp"
#include "tmakit/ptx/instruction.hpp"

namespace tmakit::model {

enum class CallKind : uint8_t {
  barrier_init,             // init(&bar, expected)
  memcpy_async_tx,          // cuda::device::memcpy_async_tx(dest, src, aligned_size_t<alignment>(size), bar)
  barrier_arrive_tx,        // token = cuda::device::barrier_arrive_tx(bar, arrive_count, tx_count)
  barrier_expect_tx,        // cuda::device::barrier_expect_tx(bar, tx_count)
  barrier_arrive,           // token = bar.arrive(count)
  barrier_wait,             // bar.wait(std::move(token))
  barrier_arrive_and_wait,  // bar.arrive_and_wait()
};

// One `call` step of a scenario (scenario-format.md, "libcu++ calls").
struct LibCall {
  CallKind kind = CallKind::barrier_init;
  // Operands by key ("barrier", "dest", "size", ...): a symbol, `sym+imm` or an integer.
  std::map<std::string, ptx::Expr> args;
  // arrive / barrier_arrive_tx: the symbol that receives the arrival token (empty: discarded);
  // wait: the symbol it reads.
  std::string token;
};

// The `call` name as the scenario writes it ("cuda::device::memcpy_async_tx"), and back.
std::optional<CallKind> call_kind(std::string_view name);
std::string_view call_name(CallKind kind);

// The keys a call takes (besides "call", "cta", "thread"); `required` false: optional.
struct CallKey {
  const char* name;
  bool required;
  bool is_token;  // names a symbol the call writes or reads (a plain identifier)
};
std::span<const CallKey> call_keys(CallKind kind);

// "name", "name+16" or an integer ("-3", "0x40"); nullopt for anything else, so
// a scenario cannot smuggle PTX text into the lowered instructions.
std::optional<ptx::Expr> parse_call_operand(std::string_view text);
bool is_call_identifier(std::string_view text);

// Checks the call's preconditions against the engine's symbols and memories as the
// executing CTA `cta` sees them, and returns the PTX instructions CCCL emits for it,
// in order (one or two). Throws DiagnosticError (`libcudacxx.*`) naming `where`.
std::vector<std::string> lower_call(const LibCall& call, Engine& engine, int cta, const std::string& where);

}  // namespace tmakit::model
