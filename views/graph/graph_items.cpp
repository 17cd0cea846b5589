#include "views/graph/graph_items.h"

#include "views/common/category_palette.h"
#include "views/graph/heat_colors.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <algorithm>
#include <cmath>

namespace lathe::views {
namespace {

constexpr double kHeaderHeight = 20;
constexpr double kLineHeight = 14;
constexpr double kPadding = 8;
constexpr double kMinNodeWidth = 84;
constexpr double kMaxNodeWidth = 210;
constexpr double kTensorHeight = 34;
constexpr double kRadius = 5;
// Below this zoom, text is unreadable anyway: draw plain shapes (fast for thousands of nodes).
constexpr double kTextDetailFrom = 0.4;

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

// Black or white, whichever reads better on `fill`.
QColor textOn(const QColor& fill) {
  const double luma = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF();
  return luma > 0.6 ? QColor(0x20, 0x20, 0x20) : QColor(Qt::white);
}

double detail(const QStyleOptionGraphicsItem* option, const QPainter* painter) {
  return option->levelOfDetailFromTransform(painter->worldTransform());
}

} // namespace

GraphStyle GraphStyle::fromPalette(const QPalette& palette, const QFont& base) {
  GraphStyle s;
  s.background = palette.color(QPalette::Base);
  s.text = palette.color(QPalette::Text);
  s.mutedText = mix(s.text, s.background, 0.4);
  s.edge = mix(s.text, s.background, 0.5);
  s.selection = palette.color(QPalette::Highlight);
  s.highlight = QColor(0xe0, 0x3e, 0x8a); // magenta: apart from every category colour
  s.titleFont = base;
  s.titleFont.setPixelSize(12);
  s.titleFont.setBold(true);
  s.bodyFont = base;
  s.bodyFont.setPixelSize(10);
  s.edgeFont = base;
  s.edgeFont.setPixelSize(10);
  s.clusterFont = base;
  s.clusterFont.setPixelSize(11);
  s.clusterFont.setBold(true);
  return s;
}

QSizeF nodeSize(const VisibleNode& node, const GraphStyle& style) {
  const QFontMetricsF title(style.titleFont), body(style.bodyFont);
  // A few pixels of slack: hinting makes drawn text a little wider than measured.
  constexpr double kSlack = 6;
  if (node.kind == VisibleNode::Kind::Input || node.kind == VisibleNode::Kind::Output) {
    QFont bold = style.bodyFont;
    bold.setBold(true);
    const double text = std::max(QFontMetricsF(bold).horizontalAdvance(qs(node.title)),
                                 body.horizontalAdvance(qs(node.shape)));
    return {std::clamp(text + 2 * (kPadding + 4) + kSlack, kMinNodeWidth, kMaxNodeWidth),
            kTensorHeight};
  }
  const double text =
      std::max({title.horizontalAdvance(qs(node.title)), body.horizontalAdvance(qs(node.subtitle)),
                body.horizontalAdvance(qs(node.shape))});
  const double lines = node.hint.empty() ? 2 : 3;
  return {std::clamp(std::max(text, body.horizontalAdvance(qs(node.hint))) + 2 * kPadding + kSlack,
                     kMinNodeWidth, kMaxNodeWidth),
          kHeaderHeight + lines * kLineHeight + 6};
}

NodeItem::NodeItem(const VisibleNode& node, int visibleIndex, const QRectF& rect,
                   const GraphStyle* style)
    : node_(node), rect_(QPointF(-rect.width() / 2, -rect.height() / 2), rect.size()),
      style_(style) {
  setPos(rect.center());
  setData(kVisibleIndexKey, visibleIndex);
  setFlag(ItemIsSelectable);
  setAcceptHoverEvents(false);
  setZValue(2);
  QString tip = qs(node.title);
  if (!node.subtitle.empty())
    tip += QStringLiteral("\n") + qs(node.subtitle);
  if (!node.shape.empty())
    tip += QStringLiteral("\n") + qs(node.shape);
  if (!node.hint.empty())
    tip += QStringLiteral("\n") + qs(node.hint) +
           (node.owner < 0 ? QObject::tr(": double-click to expand or collapse")
                           : QObject::tr(" (nested subgraphs are not drawn)"));
  toolTip_ = tip;
  setToolTip(tip);
}

void NodeItem::setHeat(double t, double share) {
  const double heat = t < 0 ? -1 : std::min(t, 1.0);
  setToolTip(heat < 0 ? toolTip_
                      : toolTip_ + QStringLiteral("\n") +
                            QObject::tr("%1 % of run time").arg(share * 100, 0, 'f', 1));
  if (heat_ == heat)
    return;
  heat_ = heat;
  update();
}

QColor NodeItem::fillColor() const {
  return heat_ >= 0 ? heatColor(heat_) : categoryColor(qs(node_.category));
}

void NodeItem::setHighlighted(bool highlighted) {
  if (highlighted_ == highlighted)
    return;
  highlighted_ = highlighted;
  update();
}

QRectF NodeItem::boundingRect() const {
  return rect_.adjusted(-5, -5, 5, 5); // room for the selection and highlight outlines
}

QPainterPath NodeItem::shape() const {
  QPainterPath path;
  path.addRoundedRect(rect_, kRadius, kRadius);
  return path;
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemSelectedHasChanged)
    setZValue(value.toBool() ? 3 : 2);
  return QGraphicsItem::itemChange(change, value);
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const bool detailed = detail(option, painter) >= kTextDetailFrom;
  painter->setRenderHint(QPainter::Antialiasing, detailed);
  if (node_.kind == VisibleNode::Kind::Input || node_.kind == VisibleNode::Kind::Output)
    paintTensor(painter, detailed);
  else
    paintOp(painter, detailed);

  if (highlighted_) {
    QPen pen(style_->highlight, 2.5, Qt::DashLine);
    pen.setDashPattern({3, 2});
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(rect_.adjusted(-3.5, -3.5, 3.5, 3.5), kRadius + 2, kRadius + 2);
  }
  if (isSelected()) {
    painter->setPen(QPen(style_->selection, 3));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(rect_.adjusted(-1.5, -1.5, 1.5, 1.5), kRadius + 1, kRadius + 1);
  }
}

void NodeItem::paintOp(QPainter* painter, bool detailed) const {
  const QColor color = fillColor();
  // By category: a coloured header over a tinted body. By heat: the whole node in its heat
  // colour, the header a shade darker, every text dark or light to suit.
  const bool hot = heat_ >= 0;
  const QColor headerFill = hot ? color.darker(112) : color;
  const QColor body = hot ? color : mix(color, style_->background, 0.86);
  const QColor border = color.darker(hot ? 150 : 125);
  const QColor bodyText = hot ? readableTextOn(body) : style_->text;
  const QColor mutedText = hot ? mix(bodyText, body, 0.3) : style_->mutedText;
  const QColor hintText = hot ? bodyText : border;
  const double radius = detailed ? kRadius : 0;

  QPainterPath outline;
  outline.addRoundedRect(rect_, radius, radius);
  painter->fillPath(outline, body);
  if (!detailed) {
    painter->fillRect(QRectF(rect_.topLeft(), QSizeF(rect_.width(), kHeaderHeight)), headerFill);
    return;
  }
  // The header is the top of the rounded outline, filled with the category or heat colour.
  QPainterPath header;
  header.addRect(QRectF(rect_.topLeft(), QSizeF(rect_.width(), kHeaderHeight)));
  painter->fillPath(outline.intersected(header), headerFill);
  const bool group = node_.kind == VisibleNode::Kind::Group;
  painter->setPen(QPen(border, group ? 2.0 : 1.0));
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(outline);
  if (group) // a collapsed group: a second frame, like a stack of nodes
    painter->drawRoundedRect(rect_.adjusted(3, 3, -3, -3), kRadius - 2, kRadius - 2);

  const QRectF titleRect(rect_.left() + kPadding, rect_.top(), rect_.width() - 2 * kPadding,
                         kHeaderHeight);
  painter->setFont(style_->titleFont);
  painter->setPen(hot ? readableTextOn(headerFill) : textOn(color));
  const QFontMetricsF title(style_->titleFont);
  painter->drawText(titleRect, Qt::AlignCenter,
                    title.elidedText(qs(node_.title), Qt::ElideRight, titleRect.width()));

  painter->setFont(style_->bodyFont);
  const QFontMetricsF bodyMetrics(style_->bodyFont);
  QRectF line(rect_.left() + kPadding, rect_.top() + kHeaderHeight + 2,
              rect_.width() - 2 * kPadding, kLineHeight);
  painter->setPen(mutedText);
  painter->drawText(line, Qt::AlignCenter,
                    bodyMetrics.elidedText(qs(node_.subtitle), Qt::ElideMiddle, line.width()));
  line.translate(0, kLineHeight);
  painter->setPen(bodyText);
  painter->drawText(line, Qt::AlignCenter,
                    bodyMetrics.elidedText(qs(node_.shape), Qt::ElideRight, line.width()));
  if (node_.hint.empty())
    return;
  line.translate(0, kLineHeight);
  painter->setPen(hintText);
  painter->drawText(line, Qt::AlignCenter,
                    bodyMetrics.elidedText(qs(node_.hint), Qt::ElideRight, line.width()));
}

void NodeItem::paintTensor(QPainter* painter, bool detailed) const {
  const QColor fill = mix(style_->text, style_->background, 0.9);
  const double radius = rect_.height() / 2;
  painter->setPen(QPen(style_->mutedText, 1.0));
  painter->setBrush(fill);
  painter->drawRoundedRect(rect_, radius, radius);
  if (!detailed)
    return;
  const QRectF inner = rect_.adjusted(kPadding + 4, 3, -kPadding - 4, -3);
  const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() / 2);
  const QRectF bottom(inner.left(), inner.center().y(), inner.width(), inner.height() / 2);
  QFont name = style_->bodyFont;
  name.setBold(true);
  painter->setFont(name);
  painter->setPen(style_->text);
  painter->drawText(top, Qt::AlignCenter,
                    QFontMetricsF(name).elidedText(qs(node_.title), Qt::ElideMiddle, top.width()));
  painter->setFont(style_->bodyFont);
  painter->setPen(style_->mutedText);
  painter->drawText(
      bottom, Qt::AlignCenter,
      QFontMetricsF(style_->bodyFont).elidedText(qs(node_.shape), Qt::ElideRight, bottom.width()));
}

EdgeItem::EdgeItem(const std::vector<QPointF>& spline, bool hasArrow, QPointF arrowTip,
                   QString label, bool hasLabel, QPointF labelCenter, const GraphStyle* style,
                   VisibleEdge::Kind kind)
    : label_(std::move(label)), style_(style), kind_(kind) {
  setZValue(1);
  if (!spline.empty()) {
    path_.moveTo(spline.front());
    for (std::size_t i = 1; i + 2 < spline.size(); i += 3)
      path_.cubicTo(spline[i], spline[i + 1], spline[i + 2]);
  }
  if (hasArrow && !spline.empty()) {
    // A triangle from the spline's end (the arrow's base) to the tip Graphviz computed.
    const QPointF base = spline.back();
    const QPointF along = arrowTip - base;
    const double length = std::hypot(along.x(), along.y());
    if (length > 0.01) {
      const QPointF normal(-along.y() / length * 3.6, along.x() / length * 3.6);
      arrow_ << arrowTip << base + normal << base - normal;
    }
  }
  bounds_ = path_.boundingRect().united(arrow_.boundingRect());
  if (!label_.isEmpty() && !path_.isEmpty()) {
    const QFontMetricsF metrics(style_->edgeFont);
    const QSizeF size(metrics.horizontalAdvance(label_) + 6, metrics.height() + 1);
    // Without a place from Graphviz (big graphs), the label sits beside the edge's middle.
    const QPointF center =
        hasLabel ? labelCenter : path_.pointAtPercent(0.5) + QPointF(size.width() / 2 + 2, 0);
    labelRect_ = QRectF(center - QPointF(size.width() / 2, size.height() / 2), size);
    bounds_ = bounds_.united(labelRect_);
  }
  bounds_.adjust(-2, -2, 2, 2);
}

QRectF EdgeItem::boundingRect() const {
  return bounds_;
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const bool detailed = detail(option, painter) >= kTextDetailFrom;
  painter->setRenderHint(QPainter::Antialiasing, detailed);
  // Scope edges (into a subgraph) are dashed, captures dotted: neither is a tensor of its own.
  QPen pen(style_->edge, 1.2);
  if (kind_ == VisibleEdge::Kind::Scope)
    pen.setStyle(Qt::DashLine);
  else if (kind_ == VisibleEdge::Kind::Capture)
    pen.setStyle(Qt::DotLine);
  painter->setPen(pen);
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  if (!arrow_.isEmpty()) {
    painter->setPen(Qt::NoPen);
    painter->setBrush(style_->edge);
    painter->drawPolygon(arrow_);
  }
  if (!detailed || labelRect_.isEmpty())
    return;
  // A translucent backing keeps the label readable where it crosses an edge.
  QColor backing = style_->background;
  backing.setAlpha(210);
  painter->setPen(Qt::NoPen);
  painter->setBrush(backing);
  painter->drawRoundedRect(labelRect_, 3, 3);
  painter->setFont(style_->edgeFont);
  painter->setPen(style_->mutedText);
  painter->drawText(labelRect_, Qt::AlignCenter, label_);
}

ClusterItem::ClusterItem(int group, const QRectF& rect, QString label, QColor tint,
                         const GraphStyle* style, int owner)
    : group_(group), owner_(owner), rect_(rect), label_(std::move(label)), tint_(std::move(tint)),
      style_(style) {
  setZValue(0);
  setToolTip(
      owner_ >= 0
          ? QObject::tr("Subgraph %1\nDouble-click to collapse it into its node").arg(label_)
          : QObject::tr("Fused group %1\nDouble-click to collapse it into one node").arg(label_));
}

QRectF ClusterItem::boundingRect() const {
  return rect_.adjusted(-1, -1, 1, 1);
}

void ClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const bool detailed = detail(option, painter) >= kTextDetailFrom;
  painter->setRenderHint(QPainter::Antialiasing, detailed);
  // A fused group is dashed (one kernel, many ops); a subgraph solid (a scope of its own).
  QPen pen(mix(tint_, style_->background, 0.3), 1.2, owner_ >= 0 ? Qt::SolidLine : Qt::DashLine);
  painter->setPen(pen);
  painter->setBrush(mix(tint_, style_->background, 0.93));
  painter->drawRoundedRect(rect_, 8, 8);
  if (!detailed)
    return;
  painter->setFont(style_->clusterFont);
  painter->setPen(mix(tint_, style_->text, 0.45));
  const QRectF labelRect = rect_.adjusted(8, 3, -8, 0);
  painter->drawText(
      labelRect, Qt::AlignLeft | Qt::AlignTop,
      QFontMetricsF(style_->clusterFont).elidedText(label_, Qt::ElideRight, labelRect.width()));
}

} // namespace lathe::views
