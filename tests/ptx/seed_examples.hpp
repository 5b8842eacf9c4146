// The instructions in the "Examples" blocks of the seed pages (tests/seeds, copied from the project's seed pages), shared by
// the parser, printer and lint tests.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

// The instructions in the "Examples" blocks of the seed pages (multi-line ones joined).
inline std::vector<std::string> seed_examples() {
  std::vector<std::string> out;
  auto dir = std::filesystem::path(TMAKIT_SOURCE_DIR) / "tests" / "seeds";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".txt") continue;  // the pages, not tests/seeds/README.md
    std::ifstream in(e.path());
    std::string line, cur;
    bool in_examples = false, in_code = false;
    while (std::getline(in, line)) {
      if (line.rfind("Examples", 0) == 0) in_examples = true;
      if (!in_examples) continue;
      if (line.rfind("```", 0) == 0) {
        in_code = !in_code;
        if (!in_code && !cur.empty()) out.push_back(cur), cur.clear();
        continue;
      }
      if (!in_code) continue;
      auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos) continue;
      std::string t = line.substr(first);
      if (t.rfind("//", 0) == 0 || t.rfind(".reg", 0) == 0) continue;
      cur += (cur.empty() ? "" : " ") + t;
      if (t.find(';') != std::string::npos) out.push_back(cur), cur.clear();
    }
  }
  return out;
}

