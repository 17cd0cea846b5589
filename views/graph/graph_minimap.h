#pragma once
// The whole graph in small in a corner of the canvas, with the part the canvas shows framed:
// a click or a drag there moves the canvas. Drawn from a picture of the scene taken once per
// layout, so a large graph costs nothing while panning. Shown only while the canvas does not
// show the whole graph.

#include <QPixmap>
#include <QPointer>
#include <QWidget>

class QGraphicsScene;
class QGraphicsView;

namespace lathe::views {

class GraphMinimap : public QWidget {
  Q_OBJECT

public:
  // Floats over `view`'s viewport (its parent), bottom right.
  GraphMinimap(QGraphicsView* view, QGraphicsScene* scene);

  // Takes a new picture of the scene (after a layout) and decides whether to show it.
  void refresh();
  // The canvas moved or zoomed: the frame follows, and the minimap shows or hides.
  void updateFrame();
  // The framed part: the canvas's visible scene rectangle, in the minimap's pixels.
  QRectF visibleFrame() const;
  // Whether the canvas shows less than the whole graph (the minimap is shown then).
  bool isNeeded() const;

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void place();
  void centreAt(const QPointF& point);
  QRectF visibleSceneRect() const;

  QPointer<QGraphicsView> view_;
  QGraphicsScene* scene_;
  QPixmap picture_;
  QRectF source_;    // the scene rectangle the picture shows
  double scale_ = 1; // picture pixels per scene unit
  QPointF origin_;   // where the picture starts in the widget (centred in a minimum size)
};

} // namespace lathe::views
