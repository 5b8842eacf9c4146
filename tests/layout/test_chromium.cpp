// End to end in a real browser: headless Chromium (Debian's chromium package,
// installed by scripts/setup.sh) renders a gallery SVG to PNG. The PNG must have
// the SVG's size, must not be blank, and a data chunk's pixels must have the
// colour its <rect> names. No Chromium is a failure, not a skip: setup installs it.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdlib>
#include <set>
#include <tuple>

#include "run.hpp"
#include "xml.hpp"

namespace tmakit::layout::test {
namespace {

namespace fs = std::filesystem;

struct Rgb {
  int r, g, b;
  bool operator<(const Rgb& o) const { return std::tie(r, g, b) < std::tie(o.r, o.g, o.b); }
};

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  Rgb at(uint32_t x, uint32_t y) const {
    const uint8_t* p = &rgb[(size_t(y) * width + x) * 3];
    return {p[0], p[1], p[2]};
  }
};

// libpng's simplified API (libpng-dev, a Debian package).
Image read_png(const fs::path& f) {
  Image img;
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, f.c_str())) return img;
  png.format = PNG_FORMAT_RGB;
  img.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, img.rgb.data(), 0, nullptr)) return {};
  img.width = png.width;
  img.height = png.height;
  return img;
}

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-headless-shell", "chromium-browser"}) {
    Ran r = run(std::string("command -v ") + name);
    if (r.status == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

Rgb parse_hex(const std::string& s) {
  return {std::stoi(s.substr(1, 2), nullptr, 16), std::stoi(s.substr(3, 2), nullptr, 16),
          std::stoi(s.substr(5, 2), nullptr, 16)};
}

TEST(Chromium, RendersAGallerySvgToANonBlankPngOfItsSize) {
  const std::string chromium = find_chromium();
  ASSERT_FALSE(chromium.empty()) << "no chromium on PATH: scripts/setup.sh installs Debian's chromium package";
  const fs::path svg = fs::path(kSource) / "docs/gallery/swizzle-128b-phase3.svg";
  const XmlNode root = parse_xml(read_file(svg));
  const int width = std::stoi(root.attr("width")), height = std::stoi(root.attr("height"));

  TempDir tmp("chromium");
  const fs::path png = tmp.path / "shot.png";
  // --user-data-dir: a profile of its own, so parallel test runs do not share one.
  Ran r = run("timeout 120 " + quote(chromium) +
              " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars"
              " --force-device-scale-factor=1 --user-data-dir=" + quote((tmp.path / "profile").string()) +
              " --window-size=" + std::to_string(width) + "," + std::to_string(height) +
              " --screenshot=" + quote(png.string()) + " " + quote("file://" + svg.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const Image img = read_png(png);
  ASSERT_EQ(img.width, uint32_t(width)) << "PNG header width";
  ASSERT_EQ(img.height, uint32_t(height)) << "PNG header height";

  // Not blank: many colours, and a good share of the page is not the white background.
  std::set<Rgb> colours;
  size_t ink = 0;
  for (uint32_t y = 0; y < img.height; ++y)
    for (uint32_t x = 0; x < img.width; ++x) {
      const Rgb c = img.at(x, y);
      colours.insert(c);
      ink += !(c.r == 255 && c.g == 255 && c.b == 255);
    }
  EXPECT_GT(colours.size(), 20u);
  EXPECT_GT(ink, size_t(img.width) * img.height / 5);

  // Drawn where the SVG says: inside each data chunk's rectangle, clear of its border
  // and label, the pixel has the rectangle's fill colour.
  std::vector<const XmlNode*> chunks;
  root.find_all("g", "chunk", chunks);
  int checked = 0;
  for (const XmlNode* c : chunks) {
    if (c->attr("data-kind") != "data") continue;
    std::vector<const XmlNode*> rects;
    c->find_all("rect", "", rects);
    ASSERT_FALSE(rects.empty());
    const int x = std::stoi(rects[0]->attr("x")) + 4, y = std::stoi(rects[0]->attr("y")) + 4;
    const Rgb want = parse_hex(rects[0]->attr("fill")), got = img.at(uint32_t(x), uint32_t(y));
    EXPECT_LE(std::abs(got.r - want.r) + std::abs(got.g - want.g) + std::abs(got.b - want.b), 6)
        << "chunk at " << c->attr("data-offset") << " pixel (" << x << "," << y << ")";
    ++checked;
  }
  EXPECT_EQ(checked, 64);  // 8 lines × 8 chunks of a 64 × 8 float16 box
}

}  // namespace
}  // namespace tmakit::layout::test
