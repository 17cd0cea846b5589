#include "views/graph/graph_canvas.h"

#include <QContextMenuEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace lathe::views {

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
  setObjectName(QStringLiteral("graphCanvas"));
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag); // empty space pans; items still take clicks
  setTransformationAnchor(AnchorUnderMouse);
  setResizeAnchor(AnchorViewCenter);
  // Edges are long thin items: a full redraw is cheaper than tracking their dirty regions.
  setViewportUpdateMode(FullViewportUpdate);
  setFrameShape(QFrame::NoFrame);
}

void GraphCanvas::setZoom(double zoom) {
  const double clamped = std::clamp(zoom, kMinZoom, kMaxZoom);
  const double factor = clamped / this->zoom();
  if (std::abs(factor - 1.0) < 1e-9)
    return;
  scale(factor, factor);
  emit zoomChanged(clamped);
}

void GraphCanvas::zoomBy(double factor) {
  setZoom(zoom() * factor);
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) {
    QGraphicsView::wheelEvent(event);
    return;
  }
  // Anchored by hand at the event's position: AnchorUnderMouse follows the cursor, which
  // synthetic and touchpad events need not match.
  const QPointF at = event->position();
  const QPointF scenePoint = mapToScene(at.toPoint());
  const ViewportAnchor anchor = transformationAnchor();
  setTransformationAnchor(NoAnchor);
  zoomBy(std::pow(1.15, steps));
  setTransformationAnchor(anchor);
  const QPointF drift = mapFromScene(scenePoint) - at;
  horizontalScrollBar()->setValue(horizontalScrollBar()->value() + qRound(drift.x()));
  verticalScrollBar()->setValue(verticalScrollBar()->value() + qRound(drift.y()));
  event->accept();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (onDoubleClick && event->button() == Qt::LeftButton) {
    onDoubleClick(itemAt(event->position().toPoint()));
    event->accept();
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent* event) {
  if (!onContextMenu) {
    QGraphicsView::contextMenuEvent(event);
    return;
  }
  onContextMenu(itemAt(event->pos()), event->globalPos());
  event->accept();
}

} // namespace lathe::views
