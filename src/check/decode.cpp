// A record decoded into the engine's step (decode.hpp): the site's own text, parsed and decoded
// once (so the form and qualifiers are exactly the kernel's), with its operand slots filled
// with the values the record holds.
#include "decode.hpp"

namespace tmakit::check::detail {

std::string map_name(size_t map) { return "map" + std::to_string(map); }

Decoder::Decoder(const TraceDir& trace, const std::vector<EncodedMap>& maps, model::Engine& engine,
                 const GlobalSpace& global, bool ranked)
    : trace_(trace), maps_(maps), engine_(engine), global_(global), ranked_(ranked), map_defined_(maps.size(), false) {}

ptx::Step* Decoder::decoded(uint32_t site, bool as_blocking) {
  auto key = std::pair{site, as_blocking};
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    std::optional<ptx::Step> step;
    if (auto base = cache_.find({site, !as_blocking}); base != cache_.end()) {
      step = base->second;  // the site's other variant: decoded already (decode() rewrites every value slot)
    } else {
      Diagnostics d;
      if (auto inst = ptx::parse_instruction(trace_.sites[site].text, d, "site " + std::to_string(site))) {
        inst->guard.reset();  // a record is written only where the guard held
        step = ptx::decode(std::move(*inst));
      }
    }
    // A test_wait the hardware saw succeed is replayed as the blocking try_wait: the model
    // completes operations only when a wait needs them (same operands, §8.4).
    if (step)
      if (auto* w = std::get_if<ptx::MbarWait>(&step->body)) w->blocking = as_blocking || step->op() == spec::Op::mbar_try_wait;
    it = cache_.emplace(key, std::move(step)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// An address operand's value in the model: shared offsets (with the CTA rank where the trace
// carries it), or a global address mapped into the model's global memory.
std::optional<model::Value> Decoder::address_value(const ptx::OperandSlot& slot, uint64_t v, std::string& skip) const {
  if (slot.space != ptx::Space::global) return shared_value(v, ranked_);
  if (auto m = global_.to_model(v)) return model::Value{model::Value::Kind::global, static_cast<int64_t>(*m)};
  skip = std::string(slot.name) + " " + std::to_string(v) + " lies in a global range the model does not hold";
  return std::nullopt;
}

Decoder::Decoded Decoder::decode(const Record& r, std::optional<size_t> map, bool as_blocking,
                                 const std::string& prefix) {
  Decoded out;
  const Site& site = trace_.sites[r.site];
  ptx::Step* cached = decoded(r.site, as_blocking);
  if (!cached) {
    out.skip = "its instruction `" + site.text + "` does not parse";
    return out;
  }
  // The site's own step takes this record's values: every operand slot below is written again
  // for each record, so no value of an earlier record survives into this one.
  ptx::Step& step = *cached;
  int sym = 0;
  auto symbol = [&](model::Value v) {
    std::string name = prefix + std::to_string(sym++);
    engine_.set_symbol(name, v);
    return ptx::Expr{name, 0};
  };
  using Role = ptx::OperandSlot::Role;
  for (const ptx::OperandSlot& slot : ptx::operand_slots(step)) {
    ptx::Operand& o = *slot.operand;
    if (o.kind == ptx::Operand::Kind::sink) continue;
    if (slot.role == Role::destination) {  // the model's own outputs: a predicate or a state token
      o.expr = {prefix + (std::holds_alternative<ptx::MbarWait>(step.body) ? "p" : "state"), 0};
      continue;
    }
    if (slot.role == Role::tensor) {
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
    const instrument::Field* f = find_field(site, slot.name);
    if (!f) {
      out.skip = "its record holds no value for " + std::string(slot.name);
      return out;
    }
    if (slot.role == Role::vector) {
      for (uint32_t k = 0; k < o.elems.size() && k < f->count; ++k) o.elems[k] = {"", static_cast<int64_t>(element(r, *f, k))};
      continue;
    }
    const uint64_t v = element(r, *f);
    if (slot.role == Role::address) {
      auto value = address_value(slot, v, out.skip);
      if (!value) return out;
      o.expr = symbol(*value);
    } else if (slot.name == "state") {  // a state-form wait's token (outputs were handled above)
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
  out.step = &step;
  return out;
}

void Decoder::note_token(const Record& r, const std::string& prefix) {
  auto hw = value_of(r, trace_.sites[r.site], "state");
  auto model = engine_.symbol(prefix + "state");
  if (hw && model) tokens_[*hw] = model->v;
}

const ptx::Step& Decoder::store_step(int bytes) {
  auto it = stores_.find(bytes);
  if (it == stores_.end()) {
    // The table's st.shared form, decoded once per width; records fill in its address.
    Diagnostics d;
    auto inst = ptx::parse_instruction("st.shared.b" + std::to_string(8 * bytes) + " [addr], 0;", d);
    it = stores_.emplace(bytes, ptx::decode(std::move(*inst))).first;
  }
  return it->second;
}

std::vector<ptx::Step> Decoder::shared_stores(const Record& r, const std::string& prefix) {
  std::vector<ptx::Step> out;
  const Site& site = trace_.sites[r.site];
  auto addr = value_of(r, site, "addr");
  auto size = value_of(r, site, "size");
  if (!addr || !size || *size == 0 || *size > 256) return out;
  const SharedAddress a = split_shared(*addr, ranked_);
  for (uint64_t at = 0; at < *size;) {
    const uint64_t piece = std::min<uint64_t>(*size - at, *size >= 8 ? 8 : *size);
    const int bytes = piece >= 8 ? 8 : piece >= 4 ? 4 : piece >= 2 ? 2 : 1;
    const std::string name = prefix + "st" + std::to_string(at);
    model::Value v = a.rank ? model::Value{model::Value::Kind::cluster, a.offset + static_cast<int64_t>(at), *a.rank}
                            : model::Value{model::Value::Kind::shared, a.offset + static_cast<int64_t>(at)};
    engine_.set_symbol(name, v);
    ptx::Step st = store_step(bytes);
    st.as<ptx::Store>().addr.expr = {name, 0};
    out.push_back(std::move(st));
    at += static_cast<uint64_t>(bytes);
  }
  return out;
}

}  // namespace tmakit::check::detail
