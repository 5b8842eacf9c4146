// Reading JSON that comes from outside (scenarios, map files, watch logs, saved traces):
// nesting is bounded before it costs memory, and a key written twice in one object is an
// error instead of silently taking the last value (docs/security.md).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace tmakit {

// The deepest nesting of arrays and objects any of tmakit's inputs needs is 6; 64 leaves room.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Why a text is not acceptable JSON: the message names the place (byte offset, or the key's
// JSON pointer) and is at most a few hundred bytes, whatever the input holds.
class JsonInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text`; throws JsonInputError on malformed JSON, nesting deeper than `max_depth`,
// or a key that appears twice in one object.
nlohmann::json parse_json_input(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

}  // namespace tmakit
