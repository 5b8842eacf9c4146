// libcu++'s <cuda/barrier> bulk-copy calls (seed page 004, spec §12): the
// preconditions the page and CCCL state, checked by name, then the PTX that CCCL
// (CUDA 13.0, cccl/cuda/__memcpy_async/memcpy_async_tx.h, __barrier/*.h) emits
// for sm_90, which the engine runs as it runs any other step. Lowering instead
// of re-implementing keeps one state machine: a call can do nothing its PTX
// cannot, and the engine's own rules (mbarrier.*, bulk.*, use before completion,
// deadlocks) apply to it unchanged.
#include "tmakit/model/libcudacxx.hpp"

#include <charconv>

#include "tmakit/diag.hpp"

namespace tmakit::model {
namespace {

constexpr int64_t kMax20 = (1 << 20) - 1;  // cuda::barrier::max(), the mbarrier count ranges (§8.1, §12.2)

// The symbols a lowered call writes for itself: wait's predicate (CCCL's `p`) and
// arrive_and_wait's token, which C++ keeps in a register.
constexpr const char* kReady = "__tmakit_ready";
constexpr const char* kOwnToken = "__tmakit_token";

struct NamedKind {
  std::string_view name;
  CallKind kind;
};
constexpr NamedKind kNames[] = {
    {"cuda::barrier::init", CallKind::barrier_init},
    {"cuda::device::memcpy_async_tx", CallKind::memcpy_async_tx},
    {"cuda::device::barrier_arrive_tx", CallKind::barrier_arrive_tx},
    {"cuda::device::barrier_expect_tx", CallKind::barrier_expect_tx},
    {"cuda::barrier::arrive", CallKind::barrier_arrive},
    {"cuda::barrier::wait", CallKind::barrier_wait},
    {"cuda::barrier::arrive_and_wait", CallKind::barrier_arrive_and_wait},
};

constexpr CallKey kInitKeys[] = {{"barrier", true, false}, {"expected", true, false}};
constexpr CallKey kMemcpyKeys[] = {{"dest", true, false},      {"src", true, false}, {"size", true, false},
                                   {"alignment", true, false}, {"barrier", true, false}};
constexpr CallKey kArriveTxKeys[] = {{"barrier", true, false}, {"arrive_count", true, false},
                                     {"tx_count", true, false}, {"token", false, true}};
constexpr CallKey kExpectTxKeys[] = {{"barrier", true, false}, {"tx_count", true, false}};
constexpr CallKey kArriveKeys[] = {{"barrier", true, false}, {"count", false, false}, {"token", false, true}};
constexpr CallKey kWaitKeys[] = {{"barrier", true, false}, {"token", true, true}};
constexpr CallKey kArriveWaitKeys[] = {{"barrier", true, false}};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$'; }

std::optional<int64_t> parse_int(std::string_view s) {
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || v > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// One call being lowered: operand evaluation and the checks shared by the calls.
class Lowering {
 public:
  Lowering(const LibCall& call, Engine& engine, int cta, const std::string& where)
      : call_(call), e_(engine), cta_(cta), where_(where), name_(call_name(call.kind)) {}

  const ptx::Expr& expr(const char* key) const { return call_.args.at(key); }

  Value eval(const char* key) const {
    const ptx::Expr& x = expr(key);
    if (x.is_immediate()) return {Value::Kind::integer, x.offset};
    auto v = e_.symbol(x.symbol);
    if (!v) fail("model.unknown-symbol", std::string(name_) + ": " + key + " names unknown symbol `" + x.symbol + "`", where_);
    v->v += x.offset;
    return *v;
  }

  int64_t integer(const char* key) const {
    Value v = eval(key);
    if (v.kind != Value::Kind::integer)
      fail("libcudacxx.operand", std::string(name_) + ": " + key + " must be an integer, got " + v.str(), where_);
    return v.v;
  }

  // An integer count in [lo, 2^20 - 1] (CCCL's asserts, §12.2; cuda::barrier::max()).
  int64_t count(const char* key, int64_t lo, const char* rule, const std::string& why) const {
    const int64_t n = integer(key);
    if (n < lo || n > kMax20)
      fail(rule, std::string(name_) + ": " + key + " " + std::to_string(n) + " is outside " + std::to_string(lo) +
                     " .. 1048575 (2^20 - 1, " + why + "); pass a count in that range",
           where_);
    return n;
  }

  // A pointer operand: null and non-addresses are diagnosed the same way for every call.
  Value pointer(const char* key, const char* what) const {
    Value v = eval(key);
    if (v.kind == Value::Kind::integer) {
      if (v.v == 0)
        fail("libcudacxx.null-pointer", std::string(name_) + ": " + key + " is a null pointer; " + what +
                                            " must point to a live object, even when the size is 0",
             where_);
      fail("libcudacxx.invalid-pointer", std::string(name_) + ": " + key + " " + hex(static_cast<uint64_t>(v.v)) +
                                             " is an integer, not an address of the scenario; name a symbol such as "
                                             "\"shared:OFF\" or \"global:NAME+OFF\"",
           where_);
    }
    return v;
  }

  bool own_shared(const Value& v) const {
    return v.kind == Value::Kind::shared || (v.kind == Value::Kind::cluster && v.rank == cta_);
  }

  // A shared offset inside the window of the executing CTA (checked against the window even for size 0).
  uint64_t in_window(const char* key, const Value& v) const {
    if (v.v < 0 || v.v >= static_cast<int64_t>(e_.config().shared_bytes))
      fail("libcudacxx.invalid-pointer", std::string(name_) + ": " + key + " " + v.str() + " lies outside the " +
                                             std::to_string(e_.config().shared_bytes) +
                                             " bytes of shared memory, so it points to no object",
           where_);
    return static_cast<uint64_t>(v.v);
  }

  // The barrier operand: a cuda::barrier in the executing CTA's shared memory (§12.1, §12.2, §8.5).
  std::string barrier() const {
    Value v = pointer("barrier", "the barrier");
    if (!own_shared(v))
      fail("libcudacxx.barrier-space",
           std::string(name_) + ": the barrier is at " + v.str() + ", not in the shared memory of the calling CTA " +
               std::to_string(cta_) + "; libcu++ requires a cuda::barrier<thread_scope_block> in local shared memory "
               "(init and arrive trap on another CTA's barrier); declare it __shared__ in this CTA",
           where_);
    in_window("barrier", v);
    return expr("barrier").str();
  }

  std::string token_out() const { return call_.token.empty() ? "_" : call_.token; }

  const LibCall& call_;
  Engine& e_;
  int cta_;
  const std::string& where_;
  std::string_view name_;
};

std::vector<std::string> lower_memcpy(const Lowering& l) {
  const std::string name(l.name_);
  const int64_t align = l.integer("alignment");
  if (align < 16 || (align & (align - 1)))
    fail("libcudacxx.alignment", name + ": cuda::aligned_size_t<" + std::to_string(align) + ">: Alignment must be a " +
                                     "power of two of at least 16 (memcpy_async_tx static_asserts 16 <= Alignment, "
                                     "as CCCL writes it); use cuda::aligned_size_t<16> with 16-byte aligned pointers",
         l.where_);
  const int64_t size = l.integer("size");
  if (size < 0 || size % align)
    fail("libcudacxx.size-align", name + ": size " + std::to_string(size) + " is not a multiple of the alignment " +
                                      std::to_string(align) + " that cuda::aligned_size_t<" + std::to_string(align) +
                                      "> promises (seed 004: a multiple of 16); round the copy to " +
                                      std::to_string(align) + " bytes",
         l.where_);
  const uint64_t n = static_cast<uint64_t>(size);

  const Value dest = l.pointer("dest", "dest");
  if (!l.own_shared(dest))
    fail("libcudacxx.dest-space", name + ": dest " + dest.str() + " is not in the shared memory of the calling CTA " +
                                      std::to_string(l.cta_) + "; memcpy_async_tx copies global to the caller's shared "
                                      "memory only (CCCL leaves any other space unreachable)",
         l.where_);
  const uint64_t d = l.in_window("dest", dest);
  const Value src = l.pointer("src", "src");
  if (src.kind != Value::Kind::global)
    fail("libcudacxx.src-space", name + ": src " + src.str() + " is not global memory; memcpy_async_tx reads global " +
                                     "memory only; copy shared data with cp.async.bulk instead",
         l.where_);
  const uint64_t s = static_cast<uint64_t>(src.v);
  if (!l.e_.global().find(s, 1))  // a valid pointer points at a byte of an allocation
    fail("libcudacxx.invalid-pointer", name + ": src " + hex(s) + " lies in no global allocation, so it points to no " +
                                           "object (undefined even for size 0, seed 004)",
         l.where_);
  if (d % static_cast<uint64_t>(align) || s % static_cast<uint64_t>(align))
    fail("libcudacxx.pointer-align", name + ": " + (d % static_cast<uint64_t>(align) ? "dest " + dest.str() : "src " + hex(s)) +
                                         " is not " + std::to_string(align) + "-byte aligned, as cuda::aligned_size_t<" +
                                         std::to_string(align) + "> promises for both pointers (seed 004)",
         l.where_);
  if (n > l.e_.config().shared_bytes - d)
    fail("libcudacxx.dest-range", name + ": dest [" + std::to_string(d) + ", " + std::to_string(d + n) +
                                      ") overflows the " + std::to_string(l.e_.config().shared_bytes) +
                                      " bytes of shared memory; dest must be at least size bytes wide (seed 004)",
         l.where_);
  if (!l.e_.global().find(s, n))
    fail("libcudacxx.src-range", name + ": src [" + hex(s) + ", " + hex(s + n) + ") runs past the end of its global " +
                                     "allocation; src must be at least size bytes wide (seed 004)",
         l.where_);
  const std::string bar = l.barrier();
  // cp_async_bulk(space_cluster, space_global, dest, src, size, bar): the shared::cta
  // address of dest used in the .shared::cluster window (§12.1).
  return {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [" + l.expr("dest").str() + "], [" +
          l.expr("src").str() + "], " + std::to_string(size) + ", [" + bar + "];"};
}

}  // namespace

std::optional<CallKind> call_kind(std::string_view name) {
  for (const auto& n : kNames)
    if (n.name == name) return n.kind;
  return std::nullopt;
}

std::string_view call_name(CallKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.name;
  return "?";
}

std::span<const CallKey> call_keys(CallKind kind) {
  switch (kind) {
    case CallKind::barrier_init: return kInitKeys;
    case CallKind::memcpy_async_tx: return kMemcpyKeys;
    case CallKind::barrier_arrive_tx: return kArriveTxKeys;
    case CallKind::barrier_expect_tx: return kExpectTxKeys;
    case CallKind::barrier_arrive: return kArriveKeys;
    case CallKind::barrier_wait: return kWaitKeys;
    case CallKind::barrier_arrive_and_wait: return kArriveWaitKeys;
  }
  return {};
}

bool is_call_identifier(std::string_view t) {
  if (t.empty() || !ident_start(t[0])) return false;
  for (char c : t)
    if (!ident_char(c)) return false;
  return true;
}

std::optional<ptx::Expr> parse_call_operand(std::string_view text) {
  if (auto n = parse_int(text)) return ptx::Expr{"", *n};
  const size_t plus = text.find('+');
  const std::string_view name = text.substr(0, plus);
  if (!is_call_identifier(name)) return std::nullopt;
  int64_t off = 0;
  if (plus != std::string_view::npos) {
    auto n = parse_int(text.substr(plus + 1));
    if (!n || *n < 0) return std::nullopt;
    off = *n;
  }
  return ptx::Expr{std::string(name), off};
}

std::vector<std::string> lower_call(const LibCall& call, Engine& engine, int cta, const std::string& where) {
  const Lowering l(call, engine, cta, where);
  switch (call.kind) {
    case CallKind::barrier_init: {
      // std::barrier: 0 <= expected <= max(); an mbarrier needs at least one arrival (§8.1).
      const int64_t n = l.count("expected", 1, "libcudacxx.expected-range", "cuda::barrier::max() and the mbarrier's range");
      return {"mbarrier.init.shared.b64 [" + l.barrier() + "], " + std::to_string(n) + ";"};
    }
    case CallKind::memcpy_async_tx: return lower_memcpy(l);
    case CallKind::barrier_arrive_tx: {
      const std::string bar = l.barrier();
      const int64_t arrive = l.count("arrive_count", 1, "libcudacxx.arrive-count-range", "CCCL asserts it");
      const int64_t tx = l.count("tx_count", 0, "libcudacxx.tx-count-range", "CCCL asserts it");
      // §12.2, exactly as barrier_arrive_tx.h: one arrive.expect_tx for a single arrival,
      // else expect_tx (relaxed) then an arrive with the count.
      if (arrive == 1)
        return {"mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 " + l.token_out() + ", [" + bar + "], " +
                std::to_string(tx) + ";"};
      return {"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [" + bar + "], " + std::to_string(tx) + ";",
              "mbarrier.arrive.release.cta.shared::cta.b64 " + l.token_out() + ", [" + bar + "], " +
                  std::to_string(arrive) + ";"};
    }
    case CallKind::barrier_expect_tx: {
      const std::string bar = l.barrier();
      const int64_t tx = l.count("tx_count", 0, "libcudacxx.tx-count-range", "CCCL asserts it");
      return {"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [" + bar + "], " + std::to_string(tx) + ";"};
    }
    case CallKind::barrier_arrive: {
      const std::string bar = l.barrier();
      // CCCL asserts update >= 0; an mbarrier arrive-on needs 1 .. 2^20 - 1 (§8.1).
      const int64_t n = call.args.count("count") ? l.count("count", 1, "libcudacxx.arrive-count-range", "the mbarrier's arrival count range") : 1;
      return {"mbarrier.arrive.shared::cta.b64 " + l.token_out() + ", [" + bar + "], " + std::to_string(n) + ";"};
    }
    case CallKind::barrier_wait:
      // wait polls __try_wait, one mbarrier.try_wait.shared.b64 per round; the engine's
      // try_wait blocks the CTA instead of spinning, and reports a deadlock.
      return {"mbarrier.try_wait.shared.b64 " + std::string(kReady) + ", [" + l.barrier() + "], " + call.token + ";"};
    case CallKind::barrier_arrive_and_wait: {
      const std::string bar = l.barrier();  // wait(arrive()): arrive(1), then the wait on its token
      return {"mbarrier.arrive.shared::cta.b64 " + std::string(kOwnToken) + ", [" + bar + "], 1;",
              "mbarrier.try_wait.shared.b64 " + std::string(kReady) + ", [" + bar + "], " + kOwnToken + ";"};
    }
  }
  fail("model.internal", "unknown libcu++ call", where);
}

}  // namespace tmakit::model
