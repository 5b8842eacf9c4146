// A record decoded into the engine's instruction (decode.hpp): the site's own text, parsed by
// the PTX front end (so the form and qualifiers are exactly the kernel's), with its operands
// replaced by the values the record holds.
#include "decode.hpp"

namespace tmakit::check::detail {

std::string map_name(size_t map) { return "map" + std::to_string(map); }

Decoder::Decoder(const TraceDir& trace, const std::vector<EncodedMap>& maps, model::Engine& engine,
                 const GlobalSpace& global, bool ranked)
    : trace_(trace), maps_(maps), engine_(engine), global_(global), ranked_(ranked), map_defined_(maps.size(), false) {}

const ptx::Instruction* Decoder::parsed(uint32_t site, bool as_blocking) {
  auto key = std::pair{site, as_blocking};
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    std::string text = trace_.sites[site].text;
    // A test_wait the hardware saw succeed is replayed as the blocking try_wait: the model
    // completes operations only when a wait needs them (same operands, §8.4).
    if (as_blocking)
      if (size_t k = text.find("mbarrier.test_wait"); k != std::string::npos) text.replace(k, 18, "mbarrier.try_wait");
    Diagnostics d;
    auto inst = ptx::parse_instruction(text, d, "site " + std::to_string(site));
    if (inst) inst->guard.reset();  // a record is written only where the guard held
    it = cache_.emplace(key, std::move(inst)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// The state space of an address operand, from the form's qualifiers: the slot that names the
// operand's space ("dst", "src", or "state_space" for mbarrier and tensormap operands).
std::optional<model::Value> Decoder::address_value(const ptx::Instruction& inst, std::string_view name, uint64_t v,
                                                   std::string& skip) const {
  std::string_view slot = name == "dstMem" || name == "dst" || name == "mbar" ? "dst"
                          : name == "srcMem" || name == "src"                 ? "src"
                                                                              : "state_space";
  std::string_view space = inst.sel.get(slot);
  if (space.empty()) space = inst.sel.get("state_space");
  const bool global = space.empty() ? v >= (1ull << 32) : space.substr(0, 7) == ".global";
  if (name == "mbar" || !global) return shared_value(v, ranked_);
  if (auto m = global_.to_model(v)) return model::Value{model::Value::Kind::global, static_cast<int64_t>(*m)};
  skip = std::string(name) + " " + std::to_string(v) + " lies in a global range the model does not hold";
  return std::nullopt;
}

Decoder::Decoded Decoder::decode(const Record& r, std::optional<size_t> map, bool as_blocking,
                                 const std::string& prefix) {
  Decoded out;
  const Site& site = trace_.sites[r.site];
  const ptx::Instruction* base = parsed(r.site, as_blocking);
  if (!base) {
    out.skip = "its instruction `" + site.text + "` does not parse";
    return out;
  }
  ptx::Instruction inst = *base;
  int sym = 0;
  auto symbol = [&](model::Value v) {
    std::string name = prefix + std::to_string(sym++);
    engine_.set_symbol(name, v);
    return ptx::Expr{name, 0};
  };
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    ptx::Operand& o = inst.operands[i];
    const spec::Operand& spec = *inst.operand_specs[i];
    if (o.kind == ptx::Operand::Kind::sink) continue;
    switch (spec.kind) {
      case spec::OperandKind::predicate: o.expr = {prefix + "p", 0}; continue;
      case spec::OperandKind::state:
      case spec::OperandKind::sink: o.expr = {prefix + "state", 0}; continue;
      default: break;
    }
    if (spec.kind == spec::OperandKind::tensor) {
      if (!map) {
        out.skip = "its tensor map is none the program encoded";
        out.skip_rule = "check.map-unknown";
        return out;
      }
      if (!map_defined_[*map]) {
        tensor_map::TensorMap m = maps_[*map].map;
        // The engine walks only maps the driver accepts; a log line the validator refuses
        // (a hand-edited or foreign log) is not replayed.
        for (const auto& d : tensor_map::validate(m, engine_.config().target))
          if (d.severity == Severity::error) {
            if (maps_[*map].built_at.empty()) {
              out.skip = "its map (maps.jsonl line " + std::to_string(maps_[*map].line) + ") breaks " + d.rule + ": " +
                         d.message;
            } else {  // the kernel's own map: a finding, by the rule the map breaks
              out.skip = "its map, built on the device by tensormap.replace (last at " + maps_[*map].built_at +
                         "), breaks " + d.rule + ": " + d.message;
              out.skip_rule = d.rule;
            }
            return out;
          }
        auto b = global_.map_base(*map, m.global_address);
        if (!b) {
          out.skip = "the tensor its map names lies in a global range the model does not hold";
          return out;
        }
        m.global_address = *b;
        engine_.define_map(map_name(*map), m);
        map_defined_[*map] = true;
      }
      o.map = map_name(*map);
      const instrument::Field* f = find_field(site, "tensorCoords");
      if (!f || f->count < o.elems.size()) {
        out.skip = "its record has no coordinates";
        return out;
      }
      for (uint32_t k = 0; k < o.elems.size(); ++k) o.elems[k] = {"", signed_element(r, *f, k)};
      continue;
    }
    const instrument::Field* f = find_field(site, spec.name);
    if (!f) {
      out.skip = "its record holds no value for " + std::string(spec.name);
      return out;
    }
    if (spec.kind == spec::OperandKind::vector) {
      for (uint32_t k = 0; k < o.elems.size() && k < f->count; ++k) o.elems[k] = {"", static_cast<int64_t>(element(r, *f, k))};
      continue;
    }
    const uint64_t v = element(r, *f);
    if (spec.kind == spec::OperandKind::address) {
      auto value = address_value(inst, spec.name, v, out.skip);
      if (!value) return out;
      o.expr = symbol(*value);
    } else if (spec.name == "state") {  // a state-form wait's token (outputs were handled above)
      auto t = tokens_.find(v);
      if (t == tokens_.end()) {
        out.skip = "its state token " + std::to_string(v) + " was returned by no arrive of the trace";
        return out;
      }
      o.expr = {"", t->second};
    } else {
      o.expr = {"", static_cast<int64_t>(v)};
    }
  }
  out.inst = std::move(inst);
  return out;
}

void Decoder::note_token(const Record& r, const std::string& prefix) {
  auto hw = value_of(r, trace_.sites[r.site], "state");
  auto model = engine_.symbol(prefix + "state");
  if (hw && model) tokens_[*hw] = model->v;
}

std::vector<ptx::Instruction> Decoder::shared_stores(const Record& r, const std::string& prefix) {
  std::vector<ptx::Instruction> out;
  const Site& site = trace_.sites[r.site];
  auto addr = value_of(r, site, "addr");
  auto size = value_of(r, site, "size");
  if (!addr || !size || *size == 0 || *size > 256) return out;
  const SharedAddress a = split_shared(*addr, ranked_);
  for (uint64_t at = 0; at < *size;) {
    const uint64_t piece = std::min<uint64_t>(*size - at, *size >= 8 ? 8 : *size);
    const int bits = piece >= 8 ? 64 : piece >= 4 ? 32 : piece >= 2 ? 16 : 8;
    const std::string name = prefix + "st" + std::to_string(at);
    model::Value v = a.rank ? model::Value{model::Value::Kind::cluster, a.offset + static_cast<int64_t>(at), *a.rank}
                            : model::Value{model::Value::Kind::shared, a.offset + static_cast<int64_t>(at)};
    engine_.set_symbol(name, v);
    Diagnostics d;
    auto inst = ptx::parse_instruction("st.shared.b" + std::to_string(bits) + " [" + name + "], 0;", d);
    if (inst) out.push_back(std::move(*inst));
    at += static_cast<uint64_t>(bits / 8);
  }
  return out;
}

}  // namespace tmakit::check::detail
