// Lines from the table, and their mutations: dropped, added, repeated and
// reordered qualifiers, a wrong .dim, a wrong vector length, wrong operand
// types and counts; every line gets a PTX version drawn from those the target has.
#include "generate.hpp"

#include <algorithm>

#include "tmakit/diag.hpp"
#include "tmakit/spec/forms.hpp"

namespace tmakit::lintfuzz {
namespace {

struct Line {
  std::string guard, opcode;
  std::vector<std::string> quals, ops;
  std::string text() const {
    std::string s = guard + opcode;
    for (const auto& q : quals) s += q;
    for (size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : " ") + ops[i];
    return s + ";";
  }
};

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {
    for (const auto& f : spec::forms())
      if (f.op != spec::Op::store) forms_.push_back(&f);
  }

  Case next(const spec::Target& target) {
    Case c;
    std::vector<std::string> versions;
    for (const char* v : {"7.8", "8.0", "8.1", "8.2", "8.3", "8.4", "8.5", "8.6", "8.7", "8.8", "9.0"})
      if (*spec::parse_ptx_version(v) >= target.min_ptx()) versions.push_back(v);
    c.version = versions[pick(versions.size())];
    const spec::Form& f = *forms_[pick(forms_.size())];
    Line l = valid(f);
    int n = coin(0.4) ? 0 : coin(0.7) ? 1 : 2;
    for (int i = 0; i < n; ++i) c.mutation += (c.mutation.empty() ? "" : "+") + mutate(l, f);
    if (c.mutation.empty()) c.mutation = "valid";
    c.line = l.text();
    return c;
  }

 private:
  size_t pick(size_t n) { return n ? rng_() % n : 0; }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string digit() { return std::to_string(pick(8)); }

  std::string reg(int bits) {
    switch (bits) {
      case 16: return "%rs" + digit();
      case 64: return "%rd" + digit();
      default: return "%r" + digit();
    }
  }

  std::string value(const spec::Operand& o) {
    if (o.immediate) return o.name == "size" ? "128" : std::to_string(pick(2));
    if (coin(0.2)) return std::to_string(16 * pick(4));
    return reg(o.bits);
  }

  std::string vec(int len, int bits) {
    std::string s = "{";
    for (int k = 0; k < len; ++k) s += (k ? ", " : "") + (coin(0.1) ? std::to_string(pick(4)) : reg(bits));
    return s + "}";
  }

  Line valid(const spec::Form& f) {
    Line l;
    if (coin(0.2)) l.guard = std::string("@") + (coin(0.5) ? "!" : "") + "%p" + digit() + " ";
    l.opcode = std::string(f.opcode);
    for (const auto& s : f.slots)
      if (s.required || coin(0.5)) l.quals.push_back(std::string(s.choices[pick(s.choices.size())].text));
    std::string mn = l.opcode;
    for (const auto& q : l.quals) mn += q;
    Diagnostics d;
    auto sel = spec::match(mn, d);
    if (!sel) return l;
    for (const spec::Operand* o : spec::operands_of(*sel)) {
      if (o->optional && coin(0.5)) break;
      const int len = spec::vector_length(*sel, *o);
      switch (o->kind) {
        case spec::OperandKind::address: l.ops.push_back(coin(0.5) ? "[" + reg(32) + "]" : "[" + reg(64) + "+16]"); break;
        case spec::OperandKind::tensor: l.ops.push_back("[" + reg(64) + ", " + vec(len, 32) + "]"); break;
        case spec::OperandKind::vector: l.ops.push_back(vec(len, o->bits)); break;
        case spec::OperandKind::value: l.ops.push_back(value(*o)); break;
        case spec::OperandKind::state: l.ops.push_back(coin(0.3) ? "_" : reg(o->bits)); break;
        case spec::OperandKind::sink: l.ops.push_back("_"); break;
        case spec::OperandKind::predicate: l.ops.push_back("%p" + digit()); break;
      }
    }
    return l;
  }

  // A qualifier from a form of the same opcode (mostly) or from anywhere in the table.
  std::string any_qualifier(const spec::Form& f) {
    const bool same = coin(0.7);
    std::vector<std::string_view> pool;
    for (const auto* g : forms_)
      if (!same || g->opcode == f.opcode)
        for (const auto& s : g->slots)
          for (const auto& q : s.choices) pool.push_back(q.text);
    return pool.empty() ? ".b64" : std::string(pool[pick(pool.size())]);
  }

  std::string mutate(Line& l, const spec::Form& f) {
    switch (pick(8)) {
      case 0:
        if (l.quals.empty()) break;
        l.quals.erase(l.quals.begin() + pick(l.quals.size()));
        return "drop-qualifier";
      case 1: l.quals.insert(l.quals.begin() + pick(l.quals.size() + 1), any_qualifier(f)); return "add-qualifier";
      case 2: {
        if (l.quals.empty()) break;
        std::string q = l.quals[pick(l.quals.size())];
        l.quals.insert(l.quals.begin() + pick(l.quals.size() + 1), q);
        return "repeat-qualifier";
      }
      case 3:
        if (l.quals.size() < 2) break;
        std::swap(l.quals[pick(l.quals.size())], l.quals[pick(l.quals.size())]);
        return "reorder";
      case 4:
        for (auto& q : l.quals)
          if (q.size() == 3 && q[2] == 'd' && q[1] >= '1' && q[1] <= '5') {
            q[1] = static_cast<char>('1' + pick(5));
            return "wrong-dim";
          }
        break;
      case 5:
        for (auto& o : l.ops) {
          size_t close = o.find('}');
          if (close == std::string::npos) continue;
          size_t comma = o.rfind(',', close);
          if (coin(0.5) && comma != std::string::npos && comma > o.find('{')) o.erase(comma, close - comma);
          else o.insert(close, ", %r" + digit());
          return "vector-length";
        }
        break;
      case 6: {
        if (l.ops.empty()) break;
        std::string& o = l.ops[pick(l.ops.size())];
        size_t p = o.find('%');
        if (p == std::string::npos) break;
        size_t e = p + 1;
        while (e < o.size() && std::isalnum(static_cast<unsigned char>(o[e]))) ++e;
        static const char* const regs[] = {"%rs3", "%r3", "%rd3", "%f3", "%fd3", "%p3", "5", "%r9"};
        o.replace(p, e - p, regs[pick(8)]);
        return "operand-type";
      }
      case 7:
        if (!l.ops.empty() && coin(0.5)) l.ops.pop_back();
        else l.ops.push_back(coin(0.5) ? reg(32) : coin(0.5) ? reg(64) : "[" + reg(32) + "]");
        return "operand-count";
    }
    l.quals.insert(l.quals.begin() + pick(l.quals.size() + 1), any_qualifier(f));
    return "add-qualifier";
  }

  std::mt19937 rng_;
  std::vector<const spec::Form*> forms_;
};

}  // namespace

std::vector<Case> generate(const spec::Target& target, int count, uint32_t seed) {
  Gen g(seed);
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) out.push_back(g.next(target));
  return out;
}

}  // namespace tmakit::lintfuzz
