// Internal to the instrument layer: the source location in force at each instruction, with
// the chain of inlined functions it lies in (Site::inlined_at). nvcc 12/13 with -lineinfo
// writes, before the code of an inlined call, one `.loc` per level, outermost first:
//
//   .loc 1 24 5                                                    kernel's line
//   .loc 1 15 3, function_name $L__info_string1, inlined_at 1 24 5   stage(), inlined there
//   .loc 3 38 15, function_name $L__info_string3, inlined_at 1 15 3  cuda::ptx's header
//
// and later, within the same chain, only the levels that changed. Each `.loc` with
// `inlined_at` hangs below the function's last location at its `inlined_at` place: the outer
// levels come first, so that is its caller's line (and where CuTe's recursive templates bring
// the same place back at several levels, each level links to the one just written). The names
// are DWARF strings of `.section .debug_str` (`$L__info_string0: .b8 95,90,…,0`).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tmakit/instrument/instrument.hpp"
#include "tmakit/ptx/module.hpp"

namespace tmakit::instrument::detail {

class SourceLocations {
 public:
  // The `.file` table and the `.debug_str` names, read first: nvcc writes both after the functions.
  explicit SourceLocations(const std::vector<ptx::Piece>& pieces);

  void start_function();                  // a function body opens: no `.loc` in force
  void directive(std::string_view text);  // a directive of the body: a `.loc` is followed, the rest ignored
  int current() const { return current_; }  // the location in force, -1 when none

  // The site's file, line, column, loc_function and inlined_at from location `at` (a current()).
  void fill(int at, Site& site) const;

 private:
  struct Node {
    int file = 0, line = 0, column = 0;
    int name = -1;    // index in names_, -1 for none
    int parent = -1;  // the place it is inlined at; -1 for the PTX function's own line
    int depth = 0;    // frames outside it
  };
  using Place = std::tuple<int, int, int>;  // file index, line, column

  int node(const Place& at, int name, int parent);
  int name_of(std::string_view label_expr);
  void read_debug_str(std::string_view section);
  const std::string& file_name(int index) const;

  std::unordered_map<int, std::string> files_;
  std::vector<unsigned char> strings_;            // .debug_str's bytes
  std::unordered_map<std::string, size_t> labels_;  // label → offset in strings_
  std::vector<std::shared_ptr<const std::string>> names_;
  std::unordered_map<std::string, int> name_index_;  // "label+offset" → names_
  std::vector<Node> nodes_;
  std::map<std::tuple<int, int, int, int, int>, int> interned_;  // a node is made once
  std::map<Place, int> last_at_;  // this function's last location at each place
  int current_ = -1;
};

}  // namespace tmakit::instrument::detail
