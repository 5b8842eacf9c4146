// terminal_safe (terminal_text.hpp).
#include "tmakit/terminal_text.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace tmakit {
namespace {

// The length of the valid UTF-8 sequence at s[i] and its code point, or 0 when the bytes
// there are not one (overlong forms and surrogates included).
size_t utf8_at(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (b(k) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

bool bidi_control(uint32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
         cp == 0x061c;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    if ((c >= 0x20 && c < 0x7f) || c == '\t') {  // a tab moves the cursor, nothing more (PTX is full of them)
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = c >= 0x80 ? utf8_at(text, i, cp) : 0;
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else if (cp < 0xa0 || bidi_control(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", cp);
      out += buf;
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string terminal_clip(std::string_view text, size_t most) {
  if (text.size() <= most) return terminal_safe(text);
  while (most > 0 && (static_cast<uint8_t>(text[most]) & 0xc0) == 0x80) --most;  // not inside a character
  return terminal_safe(text.substr(0, most)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string terminal_line(std::string_view text, size_t most) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    out += terminal_clip(text.substr(i, end - i), most);
    if (end < text.size()) out += ' ';
    i = end + 1;
  }
  return out;
}

std::string terminal_lines(std::string_view text, size_t most) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    out += terminal_line(text.substr(i, end - i), most);
    if (end < text.size()) out += '\n';
    i = end + 1;
  }
  return out;
}

}  // namespace tmakit
