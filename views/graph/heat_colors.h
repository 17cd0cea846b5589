#pragma once
// The graph's heat map: a sequential colour ramp for a node's share of the run time, from a pale
// neutral (no time) through amber and orange to a deep red (the hottest node), and the small
// legend that explains it in a corner of the graph.

#include <QColor>
#include <QWidget>

namespace lathe::views {

// `t` in [0, 1] (clamped): 0 for no time, 1 for the hottest node. Lightness falls monotonically
// along the ramp, so the order reads without hue and in greyscale.
QColor heatColor(double t);
// Near-black or white, whichever contrasts more with `fill` (by relative luminance).
QColor readableTextOn(const QColor& fill);

// "Heat map: share of run time" over the ramp, labelled 0 % to the hottest node's share. Floats
// over `anchor` (a widget beside it, e.g. a scroll area's viewport), in its bottom-left corner,
// and follows it when it is resized; lets mouse events through.
class HeatLegend : public QWidget {
  Q_OBJECT

public:
  HeatLegend(QWidget* anchor, QWidget* parent);

  // The hottest node's share of the run time, in [0, 1].
  void setMaximumShare(double share);
  // The legend's title; empty: "Heat map: share of run time".
  void setTitle(const QString& title);
  double maximumShare() const { return maximum_; }
  QString title() const;
  QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void place();

  QWidget* anchor_;
  double maximum_ = 0;
  QString title_;
};

} // namespace lathe::views
