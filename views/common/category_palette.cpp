#include "views/common/category_palette.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>
#include <array>
#include <utility>

namespace lathe::views {

QColor categoryColor(const QString& category) {
  // Tableau 10: distinct on light and dark backgrounds and for common colour-vision deficiencies.
  static const std::array<std::pair<const char*, QRgb>, 7> colors = {{
      {"convolution", 0x4c78a8},
      {"matmul", 0xb279a2},
      {"elementwise", 0xf58518},
      {"normalization", 0x54a24b},
      {"reduction", 0x72b7b2},
      {"data movement", 0x9d755d},
      {"control flow", 0xeeca3b},
  }};
  for (const auto& [name, rgb] : colors) {
    if (category == QLatin1String(name))
      return QColor(rgb);
  }
  return QColor(0x8c8c8c);
}

QIcon categoryIcon(const QString& category) {
  static QHash<QString, QIcon> cache; // GUI thread only, like every caller
  const auto it = cache.constFind(category);
  if (it != cache.constEnd())
    return *it;
  QPixmap pixmap(16, 16);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  const QColor color = categoryColor(category);
  painter.setPen(color.darker(130));
  painter.setBrush(color);
  painter.drawRoundedRect(QRectF(2.5, 2.5, 11, 11), 2.5, 2.5);
  painter.end();
  return *cache.insert(category, QIcon(pixmap));
}

} // namespace lathe::views
