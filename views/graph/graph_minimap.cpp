#include "views/graph/graph_minimap.h"

#include <QEvent>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <algorithm>

namespace lathe::views {

namespace {
constexpr int kMaxSide = 180; // pixels: the longer side of the picture
constexpr int kMargin = 10;   // from the viewport's edges
constexpr int kFrame = 1;
constexpr int kMinSide = 72; // a tall, thin graph still gets a box one can aim at
} // namespace

GraphMinimap::GraphMinimap(QGraphicsView* view, QGraphicsScene* scene)
    : QWidget(view->viewport()), view_(view), scene_(scene) {
  setObjectName(QStringLiteral("graphMinimap"));
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("The whole graph: click or drag to move the view"));
  view->viewport()->installEventFilter(this);
  connect(view->horizontalScrollBar(), &QScrollBar::valueChanged, this, &GraphMinimap::updateFrame);
  connect(view->verticalScrollBar(), &QScrollBar::valueChanged, this, &GraphMinimap::updateFrame);
  hide();
}

void GraphMinimap::refresh() {
  source_ = scene_->itemsBoundingRect().adjusted(-8, -8, 8, 8);
  if (source_.isEmpty()) {
    picture_ = QPixmap();
    hide();
    return;
  }
  scale_ = kMaxSide / std::max(source_.width(), source_.height());
  const QSize size(std::max(24, qRound(source_.width() * scale_)),
                   std::max(24, qRound(source_.height() * scale_)));
  picture_ = QPixmap(size);
  picture_.fill(scene_->backgroundBrush().color());
  QPainter painter(&picture_);
  painter.setRenderHint(QPainter::Antialiasing);
  scene_->render(&painter, QRectF(QPointF(0, 0), size), source_);
  painter.end();
  const QSize box(std::max(kMinSide, size.width()) + 2 * kFrame,
                  std::max(kMinSide, size.height()) + 2 * kFrame);
  origin_ = QPointF((box.width() - size.width()) / 2.0, (box.height() - size.height()) / 2.0);
  resize(box);
  updateFrame();
}

QRectF GraphMinimap::visibleSceneRect() const {
  if (!view_)
    return {};
  return view_->mapToScene(view_->viewport()->rect()).boundingRect();
}

bool GraphMinimap::isNeeded() const {
  if (picture_.isNull())
    return false;
  const QRectF shown = visibleSceneRect();
  const QRectF graph = source_.adjusted(8, 8, -8, -8);
  return !shown.contains(graph);
}

QRectF GraphMinimap::visibleFrame() const {
  const QRectF shown = visibleSceneRect().intersected(source_);
  return QRectF((shown.left() - source_.left()) * scale_ + origin_.x(),
                (shown.top() - source_.top()) * scale_ + origin_.y(), shown.width() * scale_,
                shown.height() * scale_);
}

void GraphMinimap::updateFrame() {
  const bool needed = isNeeded();
  setVisible(needed);
  if (needed) {
    place();
    raise();
    update();
  }
}

void GraphMinimap::place() {
  if (QWidget* area = parentWidget())
    move(area->width() - width() - kMargin, area->height() - height() - kMargin);
}

void GraphMinimap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setOpacity(0.92);
  painter.fillRect(rect(), palette().window());
  painter.drawPixmap(origin_, picture_);
  painter.setOpacity(1.0);
  painter.setPen(QPen(palette().mid().color(), kFrame));
  painter.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
  const QColor accent = palette().highlight().color();
  QColor fill = accent;
  fill.setAlpha(40);
  painter.setBrush(fill);
  painter.setPen(QPen(accent, 1.5));
  painter.drawRect(visibleFrame());
}

void GraphMinimap::centreAt(const QPointF& point) {
  if (!view_ || picture_.isNull())
    return;
  view_->centerOn(QPointF(source_.left() + (point.x() - origin_.x()) / scale_,
                          source_.top() + (point.y() - origin_.y()) / scale_));
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
  centreAt(event->position());
  event->accept();
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton)
    centreAt(event->position());
  event->accept();
}

bool GraphMinimap::eventFilter(QObject* watched, QEvent* event) {
  if (view_ && watched == view_->viewport() && event->type() == QEvent::Resize)
    updateFrame();
  return QWidget::eventFilter(watched, event);
}

} // namespace lathe::views
