// The recorded vectors of one folder of tests/vectors/, parsed, in file-name order.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

struct VectorFile {
  std::filesystem::path file;
  nlohmann::json j;
};

inline std::vector<VectorFile> load_vector_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<VectorFile> out;
  fs::path dir = fs::path(TMAKIT_SOURCE_DIR) / "tests" / "vectors" / folder;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") {
      std::ifstream in(e.path());
      out.push_back({e.path(), nlohmann::json::parse(in)});
    }
  std::sort(out.begin(), out.end(), [](const VectorFile& a, const VectorFile& b) { return a.file < b.file; });
  return out;
}
