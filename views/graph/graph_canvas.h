#pragma once
// The QGraphicsView under the graph view: wheel zoom anchored under the mouse, drag to pan,
// and hooks for double-clicks and context menus on items.

#include <QGraphicsView>
#include <functional>

namespace lathe::views {

class GraphCanvas : public QGraphicsView {
  Q_OBJECT

public:
  static constexpr double kMinZoom = 0.02, kMaxZoom = 4.0;

  explicit GraphCanvas(QWidget* parent = nullptr);

  double zoom() const { return transform().m11(); }
  // Clamped to [kMinZoom, kMaxZoom]; the point under the mouse stays put for wheel zooms.
  void setZoom(double zoom);
  void zoomBy(double factor);

  // `item` is the topmost item under the mouse, or nullptr.
  std::function<void(QGraphicsItem* item)> onDoubleClick;
  std::function<void(QGraphicsItem* item, const QPoint& globalPos)> onContextMenu;

signals:
  void zoomChanged(double zoom);

protected:
  void wheelEvent(QWheelEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
};

} // namespace lathe::views
