// What the device library claims of the table of forms (src/spec/forms_table.cpp), and the
// generated headers built from it: one written-out function per form, rank and variant.
// tools/gen_device/main.cpp writes the files; tests/gpu/coverage checks the claims against
// the table (every claimed row has its overload, every overload its row) and that the
// checked-in files are what the generator writes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/spec/forms.hpp"

namespace tmakit::gen_device {

// One generated device function.
struct DeviceFn {
  std::string file;      // the generated header it lives in: "tensor.cuh"
  std::string name;      // C++ name: "load_tile"
  std::string mnemonic;  // the PTX mnemonic, canonical (spec::canonical_mnemonic)
  std::string ptx;       // the instruction as the comment shows it: mnemonic and named operands
  bool cccl = false;     // emitted by CCCL's cuda::ptx (else inline PTX)
  std::string code;      // the whole C++ text (comment, template head, signature, body)
};

// A combination of a claimed row's qualifiers the device library has no function for.
struct Exclusion {
  std::string form_id;
  std::vector<std::string> qualifiers;  // every combination holding all of these
  std::string reason;
  std::string absent_slot = "";          // ... and leaving this slot out ("state_space": generic address)
};

// The table rows the device library claims (form ids).
std::vector<std::string_view> claimed_forms();
// Every generated function, in file order.
const std::vector<DeviceFn>& device_functions();
// Qualifier choices of claimed rows without a function, each with its reason.
const std::vector<Exclusion>& exclusions();

// The table's selection for a written mnemonic; throws when the table has no such form or
// refuses the combination.
spec::Selection select_form(const std::string& text);
// The mbarrier functions (generated/mbarrier.cuh, mbarrier_forms.cpp), appended to `out`.
void add_mbarrier_functions(std::vector<DeviceFn>& out);

// The table's op x type pairs of a bulk reduction row, the bitwise ones grouped by width (the
// order of the GPU engine's step codes).
std::vector<spec::ReductionPair> bulk_pairs(std::string_view form_id);
// The C++ element type of a reduction type (b32/b64: uint32_t/uint64_t).
std::string_view ctype_of(spec::RedType t);

// The GPU engine's step codes, each with the table rows it runs (engine_codes.cpp), and the
// rows it does not run, each with the reason.
struct EngineCode {
  std::string_view name;               // "kTensorLoadCta"
  std::vector<std::string_view> rows;  // form ids; none for the libcu++ calls
  std::string_view note;               // flags and operands, for the generated comment
};
const std::vector<EngineCode>& engine_codes();
const std::vector<std::pair<std::string_view, std::string_view>>& engine_rows_not_run();
std::string engine_codes_header(const char* first_line);

// A generated file: its path below the repository root and its text.
struct GeneratedFile {
  std::string path;
  std::string text;
};
std::vector<GeneratedFile> generated_files();

}  // namespace tmakit::gen_device
