// The scenario's tensor_maps object form: round trips, malformed input, the example files.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "maps.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace tmakit::tensor_map {
namespace {

using namespace testing;
using nlohmann::json;

const std::string kWhere = "tensor_maps.t0";

json quickstart() {
  return json::parse(R"({
    "encode": "tiled", "data_type": "float32", "global": "A", "offset": 256,
    "dims": [512, 512], "strides": [2048], "box": [32, 16], "element_strides": [1, 1],
    "interleave": "none", "swizzle": "128b", "l2_promotion": "none", "oob_fill": "none"})");
}

TEST(Json, ReadsTheScenarioFormatExample) {
  MapSource s = map_from_json(quickstart(), kWhere);
  EXPECT_EQ(s.global, "A");
  EXPECT_EQ(s.offset, 256u);
  TensorMap want = tiled_base();
  want.global_address = 256;  // the offset: the caller adds the allocation's base
  want.swizzle = Swizzle::b128;
  EXPECT_EQ(s.map, want);
}

TEST(Json, DefaultsAndOptionalKeys) {
  MapSource s = map_from_json(json::parse(R"({"data_type": "uint8", "dims": [64], "box": [16]})"), kWhere);
  EXPECT_EQ(s.map.encode, Encode::tiled);
  EXPECT_EQ(s.map.rank, 1);
  EXPECT_EQ(s.map.global_address, 0u);
  EXPECT_TRUE(s.global.empty());
  EXPECT_EQ(s.map.element_strides[0], 1u);
  EXPECT_EQ(s.map.swizzle, Swizzle::none);
  EXPECT_EQ(s.map.oob_fill, OobFill::zero);
  // Hex-string addresses, as scenario symbols allow.
  s = map_from_json(json::parse(R"({"data_type": "uint8", "dims": [64], "box": [16], "global_address": "0x1f0"})"),
                    kWhere);
  EXPECT_EQ(s.map.global_address, 0x1f0u);
}

TEST(Json, ReadsIm2colMaps) {
  json j = json::parse(R"({"encode": "im2col", "data_type": "float16", "global_address": 65536,
    "dims": [64, 8, 8, 2], "strides": [128, 1024, 8192], "pixel_box_lower": [-1, -1], "pixel_box_upper": [-1, -1],
    "channels_per_pixel": 64, "pixels_per_column": 64, "swizzle": "128b"})");
  EXPECT_EQ(map_from_json(j, kWhere).map, im2col_base());
  j = json::parse(R"({"encode": "im2col_wide", "data_type": "float16", "global_address": 65536,
    "dims": [64, 32, 4], "strides": [128, 4096], "pixel_box_lower_w": -1, "pixel_box_upper_w": 0,
    "channels_per_pixel": 64, "pixels_per_column": 32, "swizzle": "128b", "mode": "w"})");
  EXPECT_EQ(map_from_json(j, kWhere).map, wide_base());
}

TensorMap random_map(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  TensorMap m;
  m.encode = static_cast<Encode>(pick(3));
  m.data_type = static_cast<DataType>(pick(16));
  m.rank = 1 + pick(5);
  m.global_address = rng();
  for (int i = 0; i < m.rank; ++i) {
    m.dims[i] = rng() >> pick(64);
    if (i > 0) m.strides[i - 1] = rng() >> pick(64);
    m.element_strides[i] = static_cast<uint32_t>(rng());
    if (m.encode == Encode::tiled) m.box[i] = static_cast<uint32_t>(rng() >> pick(33));
  }
  if (m.encode == Encode::im2col)
    for (int i = 0; i < std::clamp(m.rank - 2, 0, 3); ++i) {
      m.pixel_box_lower[i] = static_cast<int32_t>(rng());
      m.pixel_box_upper[i] = static_cast<int32_t>(rng());
    }
  if (m.encode == Encode::im2col_wide) {
    m.pixel_box_lower_w = static_cast<int32_t>(rng());
    m.pixel_box_upper_w = static_cast<int32_t>(rng());
    m.wide_mode = static_cast<WideMode>(pick(2));
  }
  if (m.encode != Encode::tiled) {
    m.channels_per_pixel = static_cast<uint32_t>(rng());
    m.pixels_per_column = static_cast<uint32_t>(rng());
  }
  m.interleave = static_cast<Interleave>(pick(3));
  m.swizzle = static_cast<Swizzle>(pick(7));
  m.l2_promotion = static_cast<L2Promotion>(pick(4));
  m.oob_fill = static_cast<OobFill>(pick(2));
  return m;
}

TEST(Json, RoundTripsRandomMaps) {
  std::mt19937_64 rng(2024);
  for (int iter = 0; iter < 2000; ++iter) {
    TensorMap m = random_map(rng);
    std::string text = map_to_json(m).dump();
    MapSource back = map_from_json(json::parse(text), kWhere);
    ASSERT_EQ(back.map, m) << text;
    EXPECT_TRUE(back.global.empty());
  }
}

struct Bad {
  const char* text;
  const char* rule;
  const char* where;
};

TEST(Json, MalformedInputNamesPlaceAndRule) {
  const Bad cases[] = {
      {R"([1, 2])", "json.type", ""},
      {R"("map")", "json.type", ""},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "colour": "red"})", "json.unknown-key", ".colour"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "channels_per_pixel": 4})", "json.unknown-key",
       ".channels_per_pixel"},
      {R"({"encode": "im2col", "data_type": "float32", "dims": [8, 8, 8], "strides": [32, 256], "box": [4, 4, 4],
          "channels_per_pixel": 8, "pixels_per_column": 8})", "json.unknown-key", ".box"},
      {R"({"dims": [8], "box": [4]})", "json.missing-key", ".data_type"},
      {R"({"data_type": "float32", "box": [4]})", "json.missing-key", ".dims"},
      {R"({"data_type": "float32", "dims": [8]})", "json.missing-key", ".box"},
      {R"({"data_type": "float32", "dims": [8, 8], "box": [4, 4]})", "json.missing-key", ".strides"},
      {R"({"encode": "im2col", "data_type": "float32", "dims": [8, 8, 8], "strides": [32, 256],
          "pixels_per_column": 8})", "json.missing-key", ".channels_per_pixel"},
      {R"({"encode": "im2col_wide", "data_type": "float16", "dims": [8, 8, 8], "strides": [32, 256],
          "channels_per_pixel": 8})", "json.missing-key", ".pixels_per_column"},
      {R"({"data_type": "float32", "dims": [], "box": []})", "json.array-length", ".dims"},
      {R"({"data_type": "float32", "dims": [1,1,1,1,1,1], "strides": [16,16,16,16,16], "box": [1,1,1,1,1,1]})",
       "json.array-length", ".dims"},
      {R"({"data_type": "float32", "dims": [8, 8], "strides": [32, 64], "box": [4, 4]})", "json.array-length",
       ".strides"},
      {R"({"data_type": "float32", "dims": [8], "strides": [32], "box": [4]})", "json.array-length", ".strides"},
      {R"({"data_type": "float32", "dims": [8, 8], "strides": [32], "box": [4]})", "json.array-length", ".box"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "element_strides": [1, 1]})", "json.array-length",
       ".element_strides"},
      {R"({"encode": "im2col", "data_type": "float32", "dims": [8, 8, 8, 2], "strides": [32, 256, 2048],
          "pixel_box_lower": [0], "channels_per_pixel": 8, "pixels_per_column": 8})", "json.array-length",
       ".pixel_box_lower"},
      {R"({"data_type": "float32", "dims": 8, "box": [4]})", "json.type", ".dims"},
      {R"({"data_type": "float32", "dims": [-8], "box": [4]})", "json.range", ".dims[0]"},
      {R"({"data_type": "float32", "dims": [8.5], "box": [4]})", "json.type", ".dims[0]"},
      {R"({"data_type": "float32", "dims": ["eight"], "box": [4]})", "json.type", ".dims[0]"},
      {R"({"data_type": "float32", "dims": [[8]], "box": [4]})", "json.type", ".dims[0]"},
      {R"({"data_type": "float32", "dims": [null], "box": [4]})", "json.type", ".dims[0]"},
      {R"({"data_type": "float32", "dims": [8], "box": [4294967296]})", "json.range", ".box[0]"},
      {R"({"data_type": "float32", "dims": [8], "box": [true]})", "json.type", ".box[0]"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "element_strides": [-1]})", "json.range",
       ".element_strides[0]"},
      {R"({"data_type": "float33", "dims": [8], "box": [4]})", "json.enum", ".data_type"},
      {R"({"data_type": 7, "dims": [8], "box": [4]})", "json.type", ".data_type"},
      {R"({"encode": "tile", "data_type": "float32", "dims": [8], "box": [4]})", "json.enum", ".encode"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "swizzle": "128B"})", "json.enum", ".swizzle"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "interleave": "8b"})", "json.enum", ".interleave"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "l2_promotion": "32b"})", "json.enum", ".l2_promotion"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "oob_fill": "nan"})", "json.enum", ".oob_fill"},
      {R"({"encode": "im2col_wide", "data_type": "float16", "dims": [8, 8, 8], "strides": [32, 256],
          "channels_per_pixel": 8, "pixels_per_column": 8, "mode": "w64"})", "json.enum", ".mode"},
      {R"({"encode": "im2col", "data_type": "float32", "dims": [8, 8, 2], "strides": [32, 256],
          "pixel_box_lower": [2147483648], "channels_per_pixel": 8, "pixels_per_column": 8})", "json.range",
       ".pixel_box_lower[0]"},
      {R"({"encode": "im2col_wide", "data_type": "float16", "dims": [8, 8, 8], "strides": [32, 256],
          "pixel_box_lower_w": -2147483649, "channels_per_pixel": 8, "pixels_per_column": 8})", "json.range",
       ".pixel_box_lower_w"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "global": "A", "global_address": 0})", "json.address",
       ".global_address"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "offset": 16})", "json.address", ".offset"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "global": 3})", "json.type", ".global"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "global": ""})", "json.type", ".global"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "global_address": "0xZZ"})", "json.type",
       ".global_address"},
      {R"({"data_type": "float32", "dims": [8], "box": [4], "global_address": -16})", "json.range",
       ".global_address"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      map_from_json(json::parse(c.text), kWhere);
      ADD_FAILURE() << "accepted";
    } catch (const DiagnosticError& e) {
      EXPECT_EQ(e.diagnostic().rule, c.rule) << e.what();
      EXPECT_EQ(e.diagnostic().where, kWhere + c.where) << e.what();
      EXPECT_EQ(e.diagnostic().severity, Severity::error);
    }
  }
}

TEST(Json, UnknownKeyMessageNamesTheKey) {
  try {
    map_from_json(json::parse(R"({"data_type": "float32", "dims": [8], "box": [4], "boxdim": [4]})"), "m");
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("\"boxdim\""), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostic().where, "m.boxdim");
  }
}

// Random edits of a valid map: only DiagnosticError may come out, never another exception.
TEST(Json, NeverThrowsAnythingElseOnMutatedInput) {
  std::mt19937_64 rng(77);
  const json values[] = {json(nullptr), json(true), json(-1), json(0), json(1.5), json("x"), json("0x10"),
                         json::array(), json::array({1, 2, 3}), json::array({-1}), json::object(),
                         json(UINT64_MAX), json(INT64_MIN), json::array({json::array()}), json("128b")};
  const char* keys[] = {"encode", "data_type", "global", "offset", "global_address", "dims", "strides", "box",
                        "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill", "pixel_box_lower",
                        "pixel_box_upper", "channels_per_pixel", "pixels_per_column", "pixel_box_lower_w",
                        "pixel_box_upper_w", "mode", "zzz"};
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    json j = iter % 2 ? quickstart() : map_to_json(im2col_base());
    for (int e = 0, n = 1 + static_cast<int>(rng() % 3); e < n; ++e) {
      const char* k = keys[rng() % std::size(keys)];
      if (rng() % 4 == 0) j.erase(k);
      else j[k] = values[rng() % std::size(values)];
    }
    try {
      map_from_json(j, kWhere);
      ++accepted;
    } catch (const DiagnosticError& e) {
      EXPECT_FALSE(e.diagnostic().rule.empty());
      EXPECT_TRUE(e.diagnostic().rule.starts_with("json.")) << e.what();
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what() << " on " << j.dump();
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

json read_example(const std::string& name) {
  std::ifstream in(std::string(TMAKIT_SOURCE_DIR) + "/examples/maps/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

TEST(Json, QuickstartExampleIsValid) {
  TensorMap m = map_from_json(read_example("quickstart.json"), "quickstart.json").map;
  EXPECT_FALSE(validate(m, kSm90a).has_errors());
  EXPECT_EQ(m.bytes_per_box(), 32u * 16u * 4u);
}

TEST(Json, BadExampleBreaksSeveralRules) {
  TensorMap m = map_from_json(read_example("bad.json"), "bad.json").map;
  std::set<std::string> errors;
  for (const auto& d : validate(m, kSm90a))
    if (d.severity == Severity::error) errors.insert(d.rule);
  EXPECT_EQ(errors, (std::set<std::string>{"map.global-address-align", "map.global-stride-align",
                                           "map.box-dim-range", "map.swizzle-span", "map.element-stride-range"}));
}

}  // namespace
}  // namespace tmakit::tensor_map

// Maps built in C++ hold positive integers as signed JSON numbers; they must load the same.
TEST(MapJson, AcceptsSignedPositiveIntegers) {
  nlohmann::json j = {{"encode", "tiled"}, {"data_type", "float32"}, {"global_address", int64_t{4096}},
                      {"dims", {int64_t{64}, int64_t{8}}}, {"strides", {int64_t{256}}}, {"box", {int64_t{32}, int64_t{8}}}};
  auto src = tmakit::tensor_map::map_from_json(j, "m");
  EXPECT_EQ(src.map.dims[0], 64u);
  EXPECT_EQ(src.map.global_address, 4096u);
  j["dims"][0] = int64_t{-1};
  EXPECT_THROW(tmakit::tensor_map::map_from_json(j, "m"), tmakit::DiagnosticError);
}
