#include "views/graph/graph_image.h"

#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <algorithm>

namespace lathe::views {

QString saveSceneImage(QGraphicsScene& scene, const QString& path, const QString& title) {
  const QRectF source = scene.itemsBoundingRect().adjusted(-16, -16, 16, 16);
  if (source.isEmpty())
    return QObject::tr("there is no graph to save");
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(title);
    svg.setDescription(QObject::tr("Drawn by Lathe"));
    QPainter painter;
    if (!painter.begin(&svg))
      return QObject::tr("cannot write %1").arg(path);
    scene.render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    painter.end();
    return QFileInfo(path).size() > 0 ? QString() : QObject::tr("cannot write %1").arg(path);
  }
  if (suffix == QLatin1String("png")) {
    constexpr double kMaxSide = 16384;
    const double scale = std::min(2.0, kMaxSide / std::max(source.width(), source.height()));
    QImage image((source.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(scene.backgroundBrush().color());
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    scene.render(&painter, QRectF(QPointF(0, 0), image.size()), source);
    painter.end();
    return image.save(path, "PNG") ? QString() : QObject::tr("cannot write %1").arg(path);
  }
  return QObject::tr("%1: save the graph as .svg or .png").arg(QFileInfo(path).fileName());
}

} // namespace lathe::views
