// `tmakit instrument`: rewrites a PTX module so that beside every bulk-copy, mbarrier, fence
// and shared-store instruction a record of its runtime operands goes to the trace
// (trace.hpp). The original instructions stay unchanged and in place; what is inserted are
// whole lines (docs/check.md says where and why).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/instrument/trace.hpp"

namespace tmakit::instrument {

// Which instructions get records.
enum class OpSet {
  all,       // everything below and the ordinary shared stores
  copies,    // bulk and tensor copies, reductions, prefetches, commit_group/wait_group, tensormap.*
  barriers,  // mbarrier operations, fences, barrier.cluster
};

// Where an operand's value lies in Record::values.
struct Field {
  std::string name;  // the table's operand name ("dstMem", "tensorCoords"), "size" for a store's width
  uint32_t offset = 0;    // from the start of the record
  uint32_t stride = 8;    // bytes from one element to the next
  uint32_t bytes = 8;     // bytes written per element (the rest of the stride stays 0)
  uint32_t count = 1;     // elements
};

// One source location of a site: nvcc's `.loc FILE LINE COL` and, for code inlined from another
// function, `.loc ..., function_name NAME, inlined_at FILE2 LINE2 COL2` (docs/check.md).
struct SourceFrame {
  std::string file;
  int line = 0, column = 0;
  // The function the location lies in, as the compiler names it (mangled), where it is a function
  // inlined into the PTX function; null for the PTX function's own lines or where no name is
  // given. Shared: CuTe's names run to kilobytes and one name serves many frames.
  std::shared_ptr<const std::string> function;
};

// One instrumented instruction.
struct Site {
  uint32_t id = 0;
  TraceOp op = TraceOp::none;
  std::string form;       // the table's form id; empty for instructions outside the table
  std::string function;
  int ptx_line = 0;       // the instruction's line in the input module
  std::string file;       // the `.loc` in force, resolved through `.file`; empty when none
  int line = 0, column = 0;
  std::shared_ptr<const std::string> loc_function;  // the inlined function that location lies in (SourceFrame)
  // Where that function was inlined, and where the function holding that place was, outward to
  // the PTX function's own line; empty when the location is not in inlined code.
  std::vector<SourceFrame> inlined_at;
  std::string text;       // the instruction as written
  bool after = false;     // the record is written after the instruction (it has results)
  std::vector<Field> fields;
  // Where a warp record of this site keeps its lane mask (trace.hpp, kFlagWarp); 0: the site
  // writes one record a lane always (a tensor operation with its map records, shared loads and
  // stores, whose addresses differ by lane, or values that fill the record).
  uint32_t lanes_at = 0;
  // The first warp-wide instruction that waits for the lanes its mask names (elect.sync,
  // shfl.sync, vote.sync, match, redux.sync, bar.warp.sync) after this site in its function's
  // text and before the function's next site: its line in the input module (0: none) and text.
  // A hung lane whose last record is this site may have stopped there without its warp.
  int warp_wide_line = 0;
  std::string warp_wide_text;

  // The whole chain, innermost first: the location, then inlined_at; empty without a `.loc`.
  std::vector<SourceFrame> frames() const;
};

// The longest inlining chain kept (frames, the location included); past it the frames just
// outside the innermost are dropped (a CuTe TMA copy's chain holds 10 frames, cute::copy's 9 of them).
inline constexpr size_t kMaxFrames = 64;

// Whether a source file is a library header rather than the user's code: a CUDA toolkit's include
// folder (`…/cuda…/include/`, `…/targets/…/include/`), the headers of CCCL, CUB, Thrust, CuTe,
// CUTLASS and tmakit's device library wherever installed (`…/include/{cuda,cccl,cub,thrust,nv,cute,
// cutlass}/`, `…/include/tmakit/device/`), the system's and the host compiler's headers
// (`/usr/include/`, `/usr/lib/gcc/`), and Triton's own language modules (`…/triton/language/`).
// The path's folders decide; the file need not exist here (docs/check-replay.md, "Places").
bool library_file(std::string_view path);

// Which of `frames` (innermost first) a finding is placed at: the innermost frame outside library
// headers, the user's line that reached the library; where every frame is a library's, the
// outermost. 0 for an empty chain.
size_t user_frame(const std::vector<SourceFrame>& frames);

struct Result {
  std::string text;        // the instrumented module (empty when status != 0)
  std::vector<Site> sites;
  Diagnostics diags;       // lint's diagnostics, or why the module cannot be instrumented
  int status = 0;          // 0 ok, 1 lint errors, 2 unusable input
};

// The most a module may hold to be instrumented (docs/security.md): instrumenting keeps
// every statement of the module as a piece (about 100 bytes each on top of its text), so
// the statements are counted first: `;`, `{`, `}` and `:` together at most kMaxStatements
// (a compiler's largest modules hold a few hundred thousand), and at most kMaxModuleBytes.
// Past either: status 2, rule instrument.size, before anything is parsed.
inline constexpr size_t kMaxStatements = size_t{1} << 21;
inline constexpr size_t kMaxModuleBytes = size_t{64} << 20;

// `plain_copy`: each function with sites also keeps its body as compiled, run by a call that
// records nothing (no records address, or a cluster `tmakit check --ctas` leaves out; docs/check.md,
// "How the module is changed"). tmakit check asks for it where it leaves calls unrecorded
// (--launches, --ctas): the copy makes those run at the kernel's own speed, but ptxas compiles
// the sites' path beside it, which cost CUTLASS's traced GEMM 3 %.
Result instrument_module(std::string_view text, const std::string& file, OpSet ops = OpSet::all,
                         bool plain_copy = false);

// The site table as JSON (`OUT.sites.json`): {"version", "record_bytes", "sites": [...]}.
std::string sites_json(const std::vector<Site>& sites);

}  // namespace tmakit::instrument
