// Instantiations of the relay kernels: the (stages, lag) pairs the sweeps use.
#include "relay.cuh"

namespace bench {

#define BENCH_RELAY_PAIRS(X) \
  X(2, 0) X(3, 0) X(3, 1) X(4, 1) X(4, 2) X(6, 1) X(6, 2) X(8, 1) X(8, 2) X(8, 4) X(12, 2) X(12, 4)

template <RelayOp Op>
bool launch_relay(int stages, int lag, int want, int per_cta, const dev::MapHandle& in, const dev::MapHandle& out,
                  RelayArgs a, int sms, std::function<void()>& launch, std::string& why) {
  if (per_cta > 0) a.order = 1;
  // A CTA with n items touches min(n, stages) slots; + 1024: room to align them.
  const int used = per_cta > 0 && per_cta < stages ? per_cta : stages;
  const size_t smem = size_t(used) * a.slot_bytes + 1024;
  bool found = false;
#define BENCH_TRY(S, L)                                                                \
  if (!found && stages == S && lag == L) {                                             \
    found = true;                                                                      \
    auto* k = relay_kernel<S, L, Op>;                                                  \
    const int fit = smem <= 227 * 1024 ? ctas_per_sm(k, int(a.threads), smem) : 0;     \
    if (fit < want) {                                                                  \
      why = fmt("%d CTAs/SM wanted, %d fit (%zu B smem)", want, fit, smem);            \
      return false;                                                                    \
    }                                                                                  \
    const int grid = per_cta > 0 ? int((a.items + per_cta - 1) / per_cta) : want * sms; \
    const int resident = std::min(fit, (grid + sms - 1) / sms);                        \
    why = fmt("%d CTAs/SM, <=%zu KiB loads in flight/SM", resident,                   \
              size_t(resident) * used * a.slot_bytes / 1024);                          \
    launch = [=] { k<<<grid, a.threads, smem>>>(in, out, a); };                        \
  }
  BENCH_RELAY_PAIRS(BENCH_TRY)
#undef BENCH_TRY
  if (!found) why = fmt("(stages %d, lag %d) not compiled", stages, lag);
  return found;
}

template bool launch_relay<RelayOp::copy2d>(int, int, int, int, const dev::MapHandle&, const dev::MapHandle&,
                                            RelayArgs, int, std::function<void()>&, std::string&);
template bool launch_relay<RelayOp::copy1d>(int, int, int, int, const dev::MapHandle&, const dev::MapHandle&,
                                            RelayArgs, int, std::function<void()>&, std::string&);
template bool launch_relay<RelayOp::reduce3d>(int, int, int, int, const dev::MapHandle&, const dev::MapHandle&,
                                              RelayArgs, int, std::function<void()>&, std::string&);

}  // namespace bench
