// The source location in force at each instruction and the inlining chain it lies in
// (inlining.hpp says how nvcc writes them).
#include "inlining.hpp"

#include <cctype>
#include <charconv>
#include <optional>

namespace tmakit::instrument::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A decimal (or 0x hexadecimal) number that fits an int; nullopt for anything else.
std::optional<int> integer(std::string_view w) {
  int base = 10;
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) base = 16, w.remove_prefix(2);
  int v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v, base);
  if (w.empty() || ec != std::errc() || end != w.data() + w.size() || v < 0) return std::nullopt;
  return v;
}

// Words separated by white space.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t k = 0; k < s.size();) {
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    const size_t b = k;
    while (k < s.size() && !std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    if (k > b) out.push_back(s.substr(b, k - b));
  }
  return out;
}

// `.loc FILE LINE [COL][, function_name LABEL[+N], inlined_at FILE2 LINE2 COL2]`.
struct LocText {
  int file = -1, line = 0, column = 0;
  std::string_view function;  // the label expression; empty when none
  std::optional<std::tuple<int, int, int>> inlined_at;
};

std::optional<LocText> parse_loc(std::string_view text) {
  std::vector<std::string_view> clauses;
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    clauses.push_back(trim(text.substr(at, comma - at)));
    at = comma + 1;
  }
  const auto head = words(clauses[0]);
  if (head.size() < 3 || head[0] != ".loc") return std::nullopt;
  LocText out;
  out.file = integer(head[1]).value_or(-1);
  out.line = integer(head[2]).value_or(0);
  out.column = head.size() >= 4 ? integer(head[3]).value_or(0) : 0;
  for (size_t i = 1; i < clauses.size(); ++i) {
    const auto w = words(clauses[i]);
    if (w.size() >= 2 && w[0] == "function_name") {
      out.function = trim(clauses[i].substr(clauses[i].find("function_name") + 13));
    } else if (w.size() == 4 && w[0] == "inlined_at") {
      auto f = integer(w[1]), l = integer(w[2]), c = integer(w[3]);
      if (f && l && c) out.inlined_at = std::tuple{*f, *l, *c};
    }
  }
  return out;
}

}  // namespace

SourceLocations::SourceLocations(const std::vector<ptx::Piece>& pieces) {
  for (const ptx::Piece& p : pieces) {
    const std::string_view text = p.text;
    if (p.kind == ptx::Piece::Kind::section) {
      const auto w = words(text.substr(0, text.find('{')));
      if (w.size() >= 2 && w[1] == ".debug_str") read_debug_str(text);
      continue;
    }
    if (p.kind != ptx::Piece::Kind::directive) continue;
    const auto w = words(text);
    if (w.size() < 3 || w[0] != ".file") continue;
    const auto index = integer(w[1]);
    // The name is quoted; anything after it (a timestamp, a size) is not ours.
    std::string_view name = trim(text.substr(static_cast<size_t>(w[1].data() - text.data()) + w[1].size()));
    if (!name.empty() && name.front() == '"') {
      const size_t close = name.find('"', 1);
      name = name.substr(1, (close == std::string_view::npos ? name.size() : close) - 1);
    } else {
      name = words(name).front();
    }
    if (index) files_[*index] = std::string(name);
  }
}

// `.section .debug_str { LABEL: .b8 95,90,...,0 ... }`: the bytes in order, each label at its offset.
void SourceLocations::read_debug_str(std::string_view section) {
  const size_t open = section.find('{');
  if (open == std::string_view::npos) return;
  bool bytes = false;  // reading a `.b8` list
  for (size_t at = open + 1; at < section.size();) {
    size_t eol = std::min(section.find('\n', at), section.size());
    std::string_view line = section.substr(at, eol - at);
    at = eol + 1;
    line = line.substr(0, line.find("//"));
    for (size_t k = 0; k < line.size();) {
      while (k < line.size() && (std::isspace(static_cast<unsigned char>(line[k])) || line[k] == ',')) ++k;
      const size_t b = k;
      while (k < line.size() && !std::isspace(static_cast<unsigned char>(line[k])) && line[k] != ',') ++k;
      std::string_view tok = line.substr(b, k - b);
      if (tok.empty() || tok == "}" || tok == "{") continue;
      if (tok.back() == ':') {
        labels_[std::string(tok.substr(0, tok.size() - 1))] = strings_.size();
        bytes = false;
      } else if (tok.front() == '.') {
        bytes = tok == ".b8" || tok == ".u8" || tok == ".s8";
      } else if (auto v = integer(tok); bytes && v && *v <= 255) {
        strings_.push_back(static_cast<unsigned char>(*v));
      }
    }
  }
}

// The name at `LABEL` or `LABEL+N` in .debug_str; -1 when the label is not there.
int SourceLocations::name_of(std::string_view expr) {
  std::string key;
  for (char c : expr)
    if (!std::isspace(static_cast<unsigned char>(c))) key += c;
  if (key.empty()) return -1;
  if (auto it = name_index_.find(key); it != name_index_.end()) return it->second;
  int index = -1;
  const size_t plus = key.find('+');
  const auto label = labels_.find(key.substr(0, plus));
  const std::optional<int> offset = plus == std::string::npos ? 0 : integer(key.substr(plus + 1));
  if (label != labels_.end() && offset && label->second + *offset < strings_.size()) {
    const size_t begin = label->second + *offset;
    size_t end = begin;
    while (end < strings_.size() && strings_[end] != 0) ++end;
    if (end > begin) {
      index = static_cast<int>(names_.size());
      names_.push_back(std::make_shared<const std::string>(strings_.begin() + begin, strings_.begin() + end));
    }
  }
  name_index_.emplace(std::move(key), index);
  return index;
}

int SourceLocations::node(const Place& at, int name, int parent) {
  // Past kMaxFrames, the frame just outside the new one goes (its parent's depth is one less).
  if (parent >= 0 && static_cast<size_t>(nodes_[parent].depth) + 1 >= kMaxFrames) parent = nodes_[parent].parent;
  const auto [file, line, column] = at;
  auto [it, fresh] = interned_.try_emplace({file, line, column, name, parent}, static_cast<int>(nodes_.size()));
  if (fresh) nodes_.push_back({file, line, column, name, parent, parent < 0 ? 0 : nodes_[parent].depth + 1});
  return it->second;
}

void SourceLocations::start_function() {
  current_ = -1;
  last_at_.clear();
}

void SourceLocations::directive(std::string_view text) {
  const auto loc = parse_loc(text);
  if (!loc) return;
  if (loc->line <= 0) {  // no line: nothing in force (as before the first .loc)
    current_ = -1;
    return;
  }
  int parent = -1;
  if (loc->inlined_at) {  // below the last location at that place (a frame of its own if none)
    const auto last = last_at_.find(*loc->inlined_at);
    parent = last != last_at_.end() ? last->second : node(*loc->inlined_at, -1, -1);
  }
  const Place at{loc->file, loc->line, loc->column};
  current_ = node(at, loc->inlined_at ? name_of(loc->function) : -1, parent);
  last_at_[at] = current_;
}

const std::string& SourceLocations::file_name(int index) const {
  static const std::string kNone;
  const auto it = files_.find(index);
  return it == files_.end() ? kNone : it->second;
}

void SourceLocations::fill(int at, Site& site) const {
  if (at < 0) return;
  for (int n = at; n >= 0; n = nodes_[n].parent) {
    const Node& x = nodes_[n];
    SourceFrame f{file_name(x.file), x.line, x.column, x.name >= 0 ? names_[x.name] : nullptr};
    if (n == at) {
      site.file = std::move(f.file), site.line = f.line, site.column = f.column, site.loc_function = f.function;
    } else {
      site.inlined_at.push_back(std::move(f));
    }
  }
}

}  // namespace tmakit::instrument::detail
