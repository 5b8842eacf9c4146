// Text from inputs (names, paths, log fields) on its way to a terminal or a report: control
// characters and bytes that are not UTF-8 are written as escapes, so a name holding a
// newline cannot forge a diagnostic line and an escape sequence never reaches the terminal.
#pragma once
#include <string>
#include <string_view>

namespace tmakit {

// `text` with every C0/C1 control character but the tab (newline included), DEL, byte that is
// not part of valid UTF-8, and Unicode bidirectional control written as \xNN or \u{NNNN};
// a backslash stays as it is. Printable text, UTF-8 included, is unchanged.
std::string terminal_safe(std::string_view text);

// terminal_safe of at most the first `most` bytes of `text`, then "... (N bytes)" when there
// was more: what a message quotes of a value typed or read, whatever its length.
std::string terminal_clip(std::string_view text, size_t most = 80);

// A message or place for the terminal: terminal_safe, with every run of more than `most`
// bytes without a space (a token the input made as long as it liked) clipped as
// terminal_clip does, so a line stays short whatever the input held.
std::string terminal_line(std::string_view text, size_t most = 160);

// Several lines of our own text for the terminal, each made safe as terminal_line does: the
// newlines between them stay, any other control character in them (a name the program gave,
// a path, a Python frame) is escaped. What libtmakit_watch.so prints inside the user's program.
std::string terminal_lines(std::string_view text, size_t most = 160);

}  // namespace tmakit
