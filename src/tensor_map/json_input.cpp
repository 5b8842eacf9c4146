// parse_json_input (json_input.hpp): nlohmann's own DOM builder behind a SAX filter that
// counts depth and remembers each open object's keys, so the limits hold while parsing,
// before the value is built.
#include "tmakit/tensor_map/json_input.hpp"

#include <fmt/format.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace tmakit {
namespace {

using json = nlohmann::json;

// What an error message may quote of the input.
std::string clipped(std::string_view s, size_t most = 80) {
  std::string out;
  for (char c : s.substr(0, most)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > most) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

class StrictSax {
 public:
  StrictSax(json& root, size_t max_depth) : dom_(root, false), max_depth_(max_depth) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) { return value() && dom_.number_float(v, s); }
  bool string(std::string& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(size_t n) { return open(true) && dom_.start_object(n); }
  bool start_array(size_t n) { return open(false) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    f.key = k;  // the pointer names it, also in the message below
    if (!f.keys.insert(k).second) {
      error_ = fmt::format("at {}: the key \"{}\" appears twice in one object; write each key once",
                           pointer(), clipped(k));
      return false;
    }
    return dom_.key(k);
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = clipped(e.what(), 240);
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool object = false;
    size_t index = 0;  // arrays: the next element's index
    std::string key;   // objects: the current key
    std::unordered_set<std::string> keys;
  };

  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool open(bool object) {
    value();
    if (frames_.size() >= max_depth_) {
      error_ = fmt::format("at {}: arrays and objects nest deeper than {} levels; tmakit's inputs need far fewer",
                           pointer(), max_depth_);
      return false;
    }
    frames_.push_back({object, 0, {}, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  // The JSON pointer of the value being read, e.g. "/global/A/init".
  std::string pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += "/" + (f.object ? clipped(f.key, 40) : std::to_string(f.index == 0 ? 0 : f.index - 1));
      if (p.size() > 200) return p + "/...";
    }
    return p.empty() ? "the top level" : p;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t max_depth_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

json parse_json_input(std::string_view text, size_t max_depth) {
  json result;
  StrictSax sax(result, max_depth);
  if (!json::sax_parse(text.begin(), text.end(), &sax) || !sax.error().empty())
    throw JsonInputError(sax.error().empty() ? "malformed JSON" : sax.error());
  return result;
}

}  // namespace tmakit
