#include "views/code/code_colors.h"

namespace lathe::views {

bool isDarkPalette(const QPalette& palette) {
  return palette.color(QPalette::Base).lightness() < 128;
}

CodeColors codeColors(const QPalette& palette) {
  CodeColors c;
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  // Blends keep tints related to the theme's own background instead of fixed pastels.
  const auto mix = [](const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                            static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                            static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
  };
  if (isDarkPalette(palette)) {
    c.keyword = QColor(0xc6, 0x78, 0xdd);
    c.type = QColor(0x56, 0xb6, 0xc2);
    c.number = QColor(0xd1, 0x9a, 0x66);
    c.string = QColor(0x98, 0xc3, 0x79);
    c.comment = QColor(0x7f, 0x84, 0x8e);
    c.value = QColor(0xe0, 0x6c, 0x75);
    c.symbol = QColor(0xe5, 0xc0, 0x7b);
    c.op = QColor(0x61, 0xaf, 0xef);
    c.label = QColor(0xe5, 0xc0, 0x7b);
    c.removedLine = mix(base, QColor(0xff, 0x50, 0x50), 0.18);
    c.removedSpan = mix(base, QColor(0xff, 0x50, 0x50), 0.38);
    c.addedLine = mix(base, QColor(0x40, 0xd0, 0x60), 0.16);
    c.addedSpan = mix(base, QColor(0x40, 0xd0, 0x60), 0.34);
    c.findMatch = mix(base, QColor(0xff, 0xc0, 0x30), 0.35);
    c.findCurrent = QColor(0xb0, 0x80, 0x10);
  } else {
    c.keyword = QColor(0x8a, 0x1b, 0xa8);
    c.type = QColor(0x00, 0x6e, 0x7a);
    c.number = QColor(0x9a, 0x52, 0x00);
    c.string = QColor(0x2e, 0x7d, 0x32);
    c.comment = QColor(0x6a, 0x73, 0x7d);
    c.value = QColor(0xb3, 0x1d, 0x28);
    c.symbol = QColor(0x7a, 0x5c, 0x00);
    c.op = QColor(0x00, 0x4f, 0xb3);
    c.label = QColor(0x7a, 0x5c, 0x00);
    c.removedLine = mix(base, QColor(0xff, 0x40, 0x40), 0.13);
    c.removedSpan = mix(base, QColor(0xff, 0x40, 0x40), 0.30);
    c.addedLine = mix(base, QColor(0x20, 0xc0, 0x40), 0.13);
    c.addedSpan = mix(base, QColor(0x20, 0xc0, 0x40), 0.30);
    c.findMatch = QColor(0xff, 0xe0, 0x80);
    c.findCurrent = QColor(0xff, 0xb0, 0x30);
  }
  c.fillerLine = mix(base, text, 0.05);
  c.fillerHatch = mix(base, text, 0.16);
  c.gutterText = mix(base, text, 0.45);
  c.gutterBackground = mix(base, text, 0.035);
  return c;
}

} // namespace lathe::views
