// JSON → Scenario, checking every field; nothing of the input is trusted.
// Files are read only as docs/security.md says: regular files, size checked first,
// `init` files confined to the scenario's folder.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "open_beneath.hpp"
#include "tmakit/scenario/scenario.hpp"
#include "tmakit/tensor_map/json_input.hpp"

namespace tmakit::scenario {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Where `init` files are looked for, and whether they may lie outside it.
struct Folder {
  fs::path dir;  // the scenario's folder; empty: the current folder
  bool files_anywhere = false;
  bool offer_files_anywhere = true;  // messages may suggest --allow-files-anywhere
};

[[noreturn]] void bad(const std::string& where, const std::string& message) {
  throw InputError({Severity::error, "scenario.field", message, where});
}

void only_keys(const json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) bad(where, "must be a JSON object");
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* key : keys) known |= k == key;
    if (!known) bad(where, "unknown key \"" + k + "\"");
  }
}

uint64_t get_uint(const json& j, const std::string& where, uint64_t max = UINT64_MAX) {
  if (!j.is_number_integer() || (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() < 0))
    bad(where, "must be a non-negative integer, got " + j.dump());
  uint64_t v = j.get<uint64_t>();
  if (v > max) bad(where, "must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

std::string get_string(const json& j, const std::string& where) {
  if (!j.is_string()) bad(where, "must be a string, got " + j.dump());
  return j.get<std::string>();
}

// The most a scenario file may hold: a scenario describes data, it does not carry
// it (large inputs come from "file" inits); 64 MiB keeps parsing bounded.
constexpr uint64_t kMaxScenarioBytes = uint64_t{64} << 20;
// The model keeps every global allocation in host memory: 4 GiB in all.
constexpr uint64_t kMaxGlobalBytes = uint64_t{1} << 32;
// The most steps a program may have. Each step's work is bounded by its operands (a bulk
// reduction of all of shared memory is the costliest, about 0.25 ms), so this bounds a
// run's time: the programs of recorded vectors and examples have at most a few dozen.
constexpr size_t kMaxSteps = 65536;

[[noreturn]] void bad_file(const std::string& rule, const std::string& where, const std::string& message) {
  throw InputError({Severity::error, rule, message, where});
}

}  // namespace

namespace {

// `init: {"file": F}` with the folder rule: F relative to the scenario's folder, opened
// beneath that folder's descriptor (open_beneath.hpp), so the check and the open are one
// step and a path component swapped for a symlink in between cannot lead out
// (docs/security.md). `tmakit run --allow-files-anywhere` reads by plain path instead.
std::vector<uint8_t> read_confined_file(const std::string& name, const Folder& f, std::optional<uint64_t> size,
                                        uint64_t max, const std::string& where) {
  const fs::path folder = f.dir.empty() ? fs::path(".") : f.dir;
  const fs::path shown = folder / name;
  const std::string lift = f.offer_files_anywhere ? " (or run with --allow-files-anywhere)" : "";
  auto outside = [&](const std::string& how) {
    bad_file("scenario.file-outside", where,
             fmt::format("\"{}\" {}, outside the scenario's folder {}; keep data files beside the scenario{}", name,
                         how, folder.string(), lift));
  };
  if (fs::path(name).is_absolute())
    bad_file("scenario.file-outside", where,
             fmt::format("\"{}\" is an absolute path; name the file relative to the scenario's folder {}{}", name,
                         folder.string(), lift));
  const int root = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    bad_file("scenario.file", where, fmt::format("cannot open the scenario's folder {}: {}", folder.string(),
                                                 std::strerror(errno)));
  // First without opening for reading (opening a device can have effects), then for
  // reading: both beneath the folder, and both must be the same file.
  struct stat first{}, second{};
  int fd = open_beneath(root, name, O_PATH);
  if (fd >= 0 && (::fstat(fd, &first) != 0 || !S_ISREG(first.st_mode))) {
    ::close(fd);
    ::close(root);
    bad_file("scenario.file-not-regular", where,
             fmt::format("file {} is not a regular file ({}); only regular files are read", shown.string(),
                         file_kind(first.st_mode)));
  }
  if (fd >= 0) {
    ::close(fd);
    fd = open_beneath(root, name, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0 && (::fstat(fd, &second) != 0 || second.st_dev != first.st_dev || second.st_ino != first.st_ino)) {
      ::close(fd);
      fd = -EAGAIN;
    }
  }
  ::close(root);
  if (fd == -EXDEV) {  // where it leads, as far as the name says now (for the message only)
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(shown, ec), ec);
    outside(ec ? "leads out of the folder (a .. too many, or a symlink that leaves it or is absolute)"
               : "resolves to " + resolved.string());
  }
  if (fd == -ELOOP) outside("passes through a symlink, which this system cannot follow safely (no openat2)");
  if (fd == -EAGAIN) bad_file("scenario.file", where, fmt::format("file {} changed while it was opened", shown.string()));
  if (fd < 0) bad_file("scenario.file", where, fmt::format("cannot read file {}: {}", shown.string(), std::strerror(-fd)));
  return read_open_file(fd, shown, size, max, where, "file", "scenario.file");
}

// `size`: the region's size when known (the file must hold exactly that); `max`: the
// most the region can hold otherwise.
Init parse_init(const json& j, const std::string& where, const Folder& folder, std::optional<uint64_t> size,
                uint64_t max) {
  Init init;
  if (!j.is_object() || j.size() != 1) bad(where, "must be one of {\"file\"}, {\"byte\"}, {\"hex\"}, {\"random\"}");
  const std::string key = j.begin().key();
  const json& v = j.begin().value();
  if (key == "file") {
    init.kind = Init::Kind::file;
    const std::string name = get_string(v, where + ".file");
    if (name.empty()) bad(where + ".file", "must name a file, got \"\"");
    if (folder.files_anywhere) {
      const fs::path p(name);
      init.bytes = read_regular_file(p.is_absolute() ? p : folder.dir / p, size, max, where + ".file", "file");
    } else {
      init.bytes = read_confined_file(name, folder, size, max, where + ".file");
    }
  } else if (key == "byte") {
    init.kind = Init::Kind::byte;
    init.byte = static_cast<uint8_t>(get_uint(v, where + ".byte", 255));
  } else if (key == "hex") {
    init.kind = Init::Kind::hex;
    std::string h = get_string(v, where + ".hex");
    if (h.size() % 2) bad(where + ".hex", "has an odd number of digits");
    for (size_t i = 0; i < h.size(); i += 2) {
      auto nib = [&](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        bad(where + ".hex", std::string("not a hex digit: '") + c + "'");
      };
      init.bytes.push_back(static_cast<uint8_t>(nib(h[i]) * 16 + nib(h[i + 1])));
    }
    if (size && init.bytes.size() > *size)
      bad(where + ".hex", std::to_string(init.bytes.size()) + " bytes do not fit the region of " + std::to_string(*size));
  } else if (key == "random") {
    init.kind = Init::Kind::random;
    init.seed = get_uint(v, where + ".random");
  } else {
    bad(where, "unknown init kind \"" + key + "\"");
  }
  return init;
}

}  // namespace

namespace {
// A libcu++ call step (scenario-format.md, "libcu++ calls"): the call's own keys,
// each a symbol, `sym+imm` or an integer; `token` a plain symbol name. Values are
// judged when the step runs (model/libcudacxx.cpp), since tokens are written by steps.
model::LibCall parse_call(const json& e, const std::string& w) {
  const std::string name = get_string(e["call"], w + ".call");
  auto kind = model::call_kind(name);
  if (!kind)
    bad(w + ".call", "unknown libcu++ call \"" + name + "\" (cuda::barrier::init, cuda::device::memcpy_async_tx, "
                     "cuda::device::barrier_arrive_tx, cuda::device::barrier_expect_tx, cuda::barrier::arrive, "
                     "cuda::barrier::wait, cuda::barrier::arrive_and_wait)");
  model::LibCall call;
  call.kind = *kind;
  for (const auto& [k, v] : e.items()) {
    if (k == "call" || k == "cta" || k == "thread") continue;
    const model::CallKey* key = nullptr;
    for (const auto& ck : model::call_keys(*kind))
      if (k == ck.name) key = &ck;
    if (!key) bad(w, "unknown key \"" + k + "\" for " + name);
    if (key->is_token) {
      if (!v.is_string() || !model::is_call_identifier(v.get<std::string>()))
        bad(w + "." + k, "must name a symbol (letters, digits, _), got " + v.dump());
      call.token = v.get<std::string>();
      continue;
    }
    std::optional<ptx::Expr> x;
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      x = ptx::Expr{"", v.get<int64_t>()};
    else if (v.is_string())
      x = model::parse_call_operand(v.get<std::string>());
    if (!x) bad(w + "." + k, "must be an integer, a symbol or symbol+offset, got " + v.dump());
    call.args[k] = *x;
  }
  for (const auto& ck : model::call_keys(*kind))
    if (ck.required && !e.contains(ck.name)) bad(w, name + " needs \"" + ck.name + "\"");
  return call;
}
}  // namespace

Scenario from_json(const json& j, const std::filesystem::path& dir, const LoadOptions& options) {
  const Folder folder{dir, options.files_anywhere, options.offer_files_anywhere};
  Scenario s;
  only_keys(j, "scenario", {"format", "target", "ptx_version", "cluster", "shared_bytes", "global", "shared_init",
                            "tensor_maps", "symbols", "program", "outputs", "comment"});
  if (!j.contains("format") || j["format"] != "tmakit-scenario/1")
    bad("scenario.format", "must be \"tmakit-scenario/1\"");
  if (j.contains("target")) {
    auto t = spec::parse_target(get_string(j["target"], "scenario.target"));
    if (!t) bad("scenario.target", "unknown target " + j["target"].dump());
    s.target = *t;
  }
  if (j.contains("ptx_version")) {
    auto v = spec::parse_ptx_version(get_string(j["ptx_version"], "scenario.ptx_version"));
    if (!v) bad("scenario.ptx_version", "must look like \"8.7\", got " + j["ptx_version"].dump());
    if (*v > spec::kNewestPtx) bad("scenario.ptx_version", "PTX ISA " + v->str() + " is newer than " + spec::kNewestPtx.str() + ", the newest tmakit knows");
    s.ptx_version = *v;
  }
  if (j.contains("cluster")) {
    only_keys(j["cluster"], "scenario.cluster", {"ctas"});
    if (j["cluster"].contains("ctas")) s.ctas = static_cast<int>(get_uint(j["cluster"]["ctas"], "scenario.cluster.ctas", 16));
    if (s.ctas < 1) bad("scenario.cluster.ctas", "must be 1 to 16");
  }
  if (j.contains("shared_bytes")) {
    // 227 KiB: the most shared memory one CTA of an H100 can have.
    s.shared_bytes = static_cast<uint32_t>(get_uint(j["shared_bytes"], "scenario.shared_bytes", 232448));
    if (s.shared_bytes < 16) bad("scenario.shared_bytes", "must be at least 16");
  }
  if (j.contains("global")) {
    if (!j["global"].is_object()) bad("scenario.global", "must be an object of allocations");
    uint64_t global_total = 0;
    for (const auto& [name, a] : j["global"].items()) {
      std::string w = "scenario.global." + name;
      only_keys(a, w, {"bytes", "align", "init"});
      GlobalAlloc g;
      g.name = name;
      if (!a.contains("bytes")) bad(w, "needs \"bytes\"");
      g.bytes = get_uint(a["bytes"], w + ".bytes", kMaxGlobalBytes);  // the model keeps memory on the host
      global_total += g.bytes;
      if (global_total > kMaxGlobalBytes)
        bad(w + ".bytes", fmt::format("the global allocations reach {} bytes in all; the model holds at most {} (4 GiB)",
                                      global_total, kMaxGlobalBytes));
      if (a.contains("align")) {
        g.align = get_uint(a["align"], w + ".align", 1ull << 20);
        if (g.align == 0 || (g.align & (g.align - 1))) bad(w + ".align", "must be a power of two");
      }
      if (a.contains("init")) g.init = parse_init(a["init"], w + ".init", folder, g.bytes, g.bytes);
      s.globals.push_back(std::move(g));
    }
  }
  if (j.contains("shared_init")) {
    if (!j["shared_init"].is_array()) bad("scenario.shared_init", "must be an array");
    for (size_t i = 0; i < j["shared_init"].size(); ++i) {
      const auto& e = j["shared_init"][i];
      std::string w = "scenario.shared_init[" + std::to_string(i) + "]";
      only_keys(e, w, {"cta", "offset", "bytes", "init"});
      SharedInit si;
      if (e.contains("cta")) si.cta = static_cast<int>(get_uint(e["cta"], w + ".cta", 15));
      if (si.cta >= s.ctas) bad(w + ".cta", "CTA " + std::to_string(si.cta) + " is not in a cluster of " + std::to_string(s.ctas));
      if (e.contains("offset")) si.offset = get_uint(e["offset"], w + ".offset", s.shared_bytes);
      if (!e.contains("init")) bad(w, "needs \"init\"");
      std::optional<uint64_t> size;
      if (e.contains("bytes")) size = get_uint(e["bytes"], w + ".bytes", s.shared_bytes);
      si.init = parse_init(e["init"], w + ".init", folder, size, s.shared_bytes - si.offset);
      si.bytes = size ? *size : si.init.bytes.size();
      if (!size && (si.init.kind == Init::Kind::byte || si.init.kind == Init::Kind::random))
        bad(w, "needs \"bytes\" for a byte or random init");
      if (si.offset + si.bytes > s.shared_bytes)
        bad(w, "region [" + std::to_string(si.offset) + ", " + std::to_string(si.offset + si.bytes) +
                   ") overflows shared_bytes " + std::to_string(s.shared_bytes));
      s.shared_init.push_back(std::move(si));
    }
  }
  if (j.contains("tensor_maps")) {
    if (!j["tensor_maps"].is_object()) bad("scenario.tensor_maps", "must be an object of maps");
    for (const auto& [name, m] : j["tensor_maps"].items()) {
      try {
        s.maps.emplace_back(name, tensor_map::map_from_json(m, "scenario.tensor_maps." + name));
      } catch (const InputError&) {
        throw;
      } catch (const DiagnosticError& e) {
        throw InputError(e.diagnostic());
      }
    }
  }
  if (j.contains("symbols")) {
    if (!j["symbols"].is_object()) bad("scenario.symbols", "must be an object");
    for (const auto& [name, v] : j["symbols"].items()) s.symbols.emplace_back(name, v);
  }
  if (!j.contains("program") || !j["program"].is_array()) bad("scenario.program", "must be an array of steps");
  if (j["program"].size() > kMaxSteps)
    throw InputError({Severity::error, "scenario.steps",
                      fmt::format("the program has {} steps; a scenario may have at most {} (each step's work is "
                                  "bounded, and so is a run's); split it into several scenarios",
                                  j["program"].size(), kMaxSteps),
                      "scenario.program"});
  for (size_t i = 0; i < j["program"].size(); ++i) {
    const auto& e = j["program"][i];
    std::string w = "scenario.program[" + std::to_string(i) + "]";
    Step st;
    if (e.is_string()) {
      st.ptx = e.get<std::string>();
    } else {
      if (e.is_object() && e.contains("call")) {
        st.call = parse_call(e, w);
      } else {
        only_keys(e, w, {"cta", "thread", "ptx"});
        if (!e.contains("ptx")) bad(w, "needs \"ptx\" or \"call\"");
        st.ptx = get_string(e["ptx"], w + ".ptx");
      }
      if (e.contains("cta")) st.cta = static_cast<int>(get_uint(e["cta"], w + ".cta", 15));
      if (e.contains("thread")) st.thread = static_cast<int>(get_uint(e["thread"], w + ".thread", 1023));
      if (st.cta >= s.ctas) bad(w + ".cta", "CTA " + std::to_string(st.cta) + " is not in a cluster of " + std::to_string(s.ctas));
    }
    s.program.push_back(std::move(st));
  }
  if (j.contains("outputs")) {
    if (!j["outputs"].is_array()) bad("scenario.outputs", "must be an array");
    // The outputs are copies the run holds beside the allocations: they share the budget.
    uint64_t held = 0;
    for (const auto& g : s.globals) held += g.bytes;
    for (size_t i = 0; i < j["outputs"].size(); ++i) {
      const auto& e = j["outputs"][i];
      std::string w = "scenario.outputs[" + std::to_string(i) + "]";
      only_keys(e, w, {"name", "shared", "global"});
      Output o;
      if (!e.contains("name")) bad(w, "needs \"name\"");
      o.name = get_string(e["name"], w + ".name");
      if (!portable_name(o.name))
        throw InputError({Severity::error, "scenario.output-name",
                          fmt::format("{} is not a portable file name: use letters, digits and . _ - (not first .), "
                                      "as in \"tile_0\"", json(o.name).dump()),
                          w + ".name"});
      if (e.contains("shared") == e.contains("global")) bad(w, "needs exactly one of \"shared\" and \"global\"");
      if (e.contains("shared")) {
        const auto& r = e["shared"];
        only_keys(r, w + ".shared", {"cta", "offset", "bytes"});
        o.shared = true;
        if (r.contains("cta")) o.cta = static_cast<int>(get_uint(r["cta"], w + ".shared.cta", 15));
        if (o.cta >= s.ctas) bad(w + ".shared.cta", "CTA " + std::to_string(o.cta) + " is not in a cluster of " + std::to_string(s.ctas));
        if (r.contains("offset")) o.offset = get_uint(r["offset"], w + ".shared.offset", s.shared_bytes);
        if (!r.contains("bytes")) bad(w + ".shared", "needs \"bytes\"");
        o.bytes = get_uint(r["bytes"], w + ".shared.bytes", s.shared_bytes);
        if (o.offset + o.bytes > s.shared_bytes) bad(w + ".shared", "region overflows shared_bytes " + std::to_string(s.shared_bytes));
      } else if (e["global"].is_string()) {
        o.global = e["global"].get<std::string>();
      } else {
        const auto& r = e["global"];
        only_keys(r, w + ".global", {"name", "offset", "bytes"});
        if (!r.contains("name")) bad(w + ".global", "needs \"name\"");
        o.global = get_string(r["name"], w + ".global.name");
        if (r.contains("offset")) o.offset = get_uint(r["offset"], w + ".global.offset");
        if (r.contains("bytes")) o.bytes = get_uint(r["bytes"], w + ".global.bytes");
      }
      if (!o.shared) {
        const GlobalAlloc* a = nullptr;
        for (const auto& g : s.globals)
          if (g.name == o.global) a = &g;
        if (!a) bad(w + ".global", "no global allocation named \"" + o.global + "\"");
        if (o.bytes == 0 && o.offset == 0) o.bytes = a->bytes;
        if (o.offset > a->bytes || o.bytes > a->bytes - o.offset) bad(w + ".global", "region overflows allocation " + o.global);
      }
      for (const auto& prev : s.outputs)
        if (prev.name == o.name) bad(w + ".name", "output \"" + o.name + "\" is named twice");
      held += o.bytes;
      if (held > kMaxGlobalBytes)
        throw InputError({Severity::error, "scenario.memory",
                          fmt::format("the global allocations and the outputs up to this one hold {} bytes; a run holds "
                                      "at most {} (4 GiB) in all; write fewer or smaller outputs", held,
                                      kMaxGlobalBytes),
                          w});
      s.outputs.push_back(std::move(o));
    }
  }
  return s;
}

Scenario load_file(const std::filesystem::path& file, const LoadOptions& options) {
  const std::vector<uint8_t> text = read_regular_file(file, std::nullopt, kMaxScenarioBytes, file.string(), "scenario");
  json j;
  try {
    j = parse_json_input(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  } catch (const JsonInputError& e) {
    throw InputError({Severity::error, "scenario.json", std::string("malformed JSON: ") + e.what(), file.string()});
  }
  try {
    return from_json(j, file.parent_path(), options);
  } catch (const InputError&) {
    throw;
  } catch (const json::exception& e) {
    throw InputError({Severity::error, "scenario.json", e.what(), file.string()});
  }
}

}  // namespace tmakit::scenario
