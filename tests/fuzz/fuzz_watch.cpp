// Fuzz target for the watch layer's plain part (include/tmakit/watch/call.hpp): the
// input is a call's arguments as a program might pass them (any rank, any enum, null
// or short arrays) followed by the bytes its arrays point to. capture() reads them
// through a reader that serves the input (and fails past its end, as an unreadable
// pointer does), then the judgement, the log line (which must parse back, its map
// readable by map_from_json) and the message are made. Nothing may crash or throw.
#include <cstdint>
#include <cstring>

#include "tmakit/tensor_map/json.hpp"
#include "tmakit/watch/call.hpp"

namespace {

const uint8_t* g_data = nullptr;
size_t g_size = 0;

// Pointers handed to capture() are offsets into the input, plus one (0 stays null).
bool read_input(void* dst, const void* src, size_t n) {
  const auto offset = reinterpret_cast<uintptr_t>(src) - 1;
  if (src == nullptr || offset > g_size || n > g_size - offset) return false;
  std::memcpy(dst, g_data + offset, n);
  return true;
}

template <class T>
T take(const uint8_t*& p, const uint8_t* end) {
  T v{};
  if (static_cast<size_t>(end - p) >= sizeof(T)) std::memcpy(&v, p, sizeof(T)), p += sizeof(T);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tmakit::watch;
  g_data = data, g_size = size;
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  EncodeArgs a;
  a.entry = static_cast<Entry>(take<uint8_t>(p, end) % 3);
  a.data_type = take<int8_t>(p, end);
  a.rank = take<uint8_t>(p, end) % 8;
  a.interleave = take<int8_t>(p, end) % 5, a.swizzle = take<int8_t>(p, end) % 9;
  a.l2_promotion = take<int8_t>(p, end) % 6, a.oob_fill = take<int8_t>(p, end) % 4, a.mode = take<int8_t>(p, end) % 3;
  a.channels = take<uint32_t>(p, end), a.pixels = take<uint32_t>(p, end);
  a.lower_w = take<int32_t>(p, end), a.upper_w = take<int32_t>(p, end);
  a.global_address = reinterpret_cast<const void*>(take<uint64_t>(p, end));
  a.tensor_map = reinterpret_cast<const void*>(uintptr_t(take<uint8_t>(p, end)) * 32);
  // Each array: an offset byte (0 = null) into the input.
  auto pointer = [&]() -> const void* {
    const uint8_t at = take<uint8_t>(p, end);
    return at == 0 ? nullptr : reinterpret_cast<const void*>(uintptr_t(at));
  };
  a.dims = static_cast<const uint64_t*>(pointer());
  a.strides = static_cast<const uint64_t*>(pointer());
  a.box = static_cast<const uint32_t*>(pointer());
  a.element_strides = static_cast<const uint32_t*>(pointer());
  a.lower = static_cast<const int*>(pointer());
  a.upper = static_cast<const int*>(pointer());
  (void)crash_risk(a);
  CallRecord r;
  r.entry = a.entry;
  r.capture = capture(a, read_input);
  r.driver_result = take<uint8_t>(p, end) % 3;
  r.judgement = judge(r.capture, r.driver_result, tmakit::spec::Target{90, tmakit::spec::Suffix::a}, size % 2);
  r.target = "sm_90a";
  const nlohmann::json j = to_json(r);  // throws (and so fails) if the line is not JSON
  if (!j["map"].is_null()) tmakit::tensor_map::map_from_json(j["map"], "fuzz");
  (void)explain(r, "log.jsonl");
  return 0;
}
