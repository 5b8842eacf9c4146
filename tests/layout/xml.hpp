// A small strict XML reader for the tests: enough of XML 1.0 to say whether an
// SVG is well-formed (one root, tags nested and closed in order, attributes
// quoted and unique, only the five named entities and character references)
// and to walk its elements. Written here so the check does not share code with
// the writer it checks.
#pragma once
#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tmakit::layout::test {

struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<XmlNode> children;
  std::string text;  // character data directly inside, entities decoded

  std::string attr(const std::string& k) const {
    auto it = attrs.find(k);
    return it == attrs.end() ? std::string() : it->second;
  }
  // Every descendant (and this node) named `n` whose class is `cls` (any class when empty).
  void find_all(const std::string& n, const std::string& cls, std::vector<const XmlNode*>& out) const {
    if (name == n && (cls.empty() || attr("class") == cls)) out.push_back(this);
    for (const XmlNode& c : children) c.find_all(n, cls, out);
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view s) : s_(s) {}

  XmlNode document() {
    skip_misc();
    if (!starts("<")) error("no root element");
    XmlNode root = element();
    skip_misc();
    if (i_ != s_.size()) error("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw std::runtime_error("XML error at byte " + std::to_string(i_) + ": " + what);
  }
  bool starts(std::string_view t) const { return s_.substr(i_, t.size()) == t; }
  void expect(std::string_view t) {
    if (!starts(t)) error("expected '" + std::string(t) + "'");
    i_ += t.size();
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  // Whitespace, comments and processing instructions (the <?xml ...?> prolog).
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) {
        size_t e = s_.find("-->", i_ + 4);
        if (e == std::string_view::npos) error("unterminated comment");
        i_ = e + 3;
      } else if (starts("<?")) {
        size_t e = s_.find("?>", i_ + 2);
        if (e == std::string_view::npos) error("unterminated processing instruction");
        i_ = e + 2;
      } else {
        return;
      }
    }
  }
  std::string name() {
    size_t b = i_;
    auto ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.'; };
    if (i_ >= s_.size() || !(std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) error("bad name");
    while (i_ < s_.size() && ok(s_[i_])) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  // Character data up to `stop`, with references decoded; '<' and a bare '&' are errors.
  std::string chars(char stop) {
    std::string out;
    while (i_ < s_.size() && s_[i_] != stop) {
      char c = s_[i_];
      if (c == '<') {
        if (stop == '<') break;
        error("'<' in an attribute value");
      }
      if (c != '&') {
        out += c;
        ++i_;
        continue;
      }
      size_t e = s_.find(';', i_);
      if (e == std::string_view::npos) error("unterminated reference");
      std::string_view ref = s_.substr(i_ + 1, e - i_ - 1);
      if (ref == "amp") out += '&';
      else if (ref == "lt") out += '<';
      else if (ref == "gt") out += '>';
      else if (ref == "quot") out += '"';
      else if (ref == "apos") out += '\'';
      else if (ref.size() > 1 && ref[0] == '#') {
        const bool hex = ref[1] == 'x';
        const std::string digits(ref.substr(hex ? 2 : 1));
        if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
          error("bad character reference");
        const unsigned long cp = std::stoul(digits, nullptr, hex ? 16 : 10);
        if (cp < 0x80) out += char(cp);
        else out += "?";  // the tests compare ASCII labels only
      } else {
        error("unknown entity &" + std::string(ref) + ";");
      }
      i_ = e + 1;
    }
    return out;
  }
  XmlNode element() {
    XmlNode n;
    expect("<");
    n.name = name();
    for (;;) {
      const size_t before = i_;
      skip_space();
      if (starts("/>")) {
        i_ += 2;
        return n;
      }
      if (starts(">")) {
        ++i_;
        break;
      }
      if (i_ == before) error("expected whitespace before an attribute");
      std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) error("attribute " + key + " is not quoted");
      const char q = s_[i_++];
      std::string value = chars(q);
      expect(std::string_view(&q, 1));
      if (!n.attrs.emplace(key, value).second) error("duplicate attribute " + key);
    }
    for (;;) {
      n.text += chars('<');
      if (i_ >= s_.size()) error("element <" + n.name + "> is not closed");
      if (starts("</")) {
        i_ += 2;
        if (name() != n.name) error("closing tag does not match <" + n.name + ">");
        skip_space();
        expect(">");
        return n;
      }
      if (starts("<!--")) {
        skip_misc();
        continue;
      }
      n.children.push_back(element());
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

inline XmlNode parse_xml(std::string_view s) { return XmlReader(s).document(); }

}  // namespace tmakit::layout::test
