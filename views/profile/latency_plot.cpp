#include "views/profile/latency_plot.h"

#include "views/common/plot_style.h"
#include "views/models/run_models.h"

#include <QEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace lathe::views {
namespace {

// Current run in the palette's highlight colour, the pinned one in a neutral amber.
QColor pinnedColor() {
  return QColor(0xd0, 0x8a, 0x1c);
}

struct Markers {
  double p10 = 0, median = 0, p90 = 0;
};

Markers markersOf(const std::vector<double>& values) {
  return {percentile(values, 10), percentile(values, 50), percentile(values, 90)};
}

} // namespace

LatencyPlot::LatencyPlot(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("latencyPlot"));
  plot_->setMinimumHeight(110);
  // No axis title: the median's tag and the panel say "ms", and a title line costs the short
  // plot too much height.
  plot_->yAxis->setLabel(tr("runs"));
  plot_->xAxis->ticker()->setTickCount(5);
  plot_->yAxis->ticker()->setTickCount(3);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->legend->setVisible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  rebuild();
}

void LatencyPlot::setLatencies(std::vector<double> current, std::vector<double> pinned) {
  current_ = std::move(current);
  pinned_ = std::move(pinned);
  rebuild();
}

void LatencyPlot::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange)
    rebuild();
}

void LatencyPlot::rebuild() {
  plot_->clearPlottables();
  plot_->clearItems();
  const QPalette p = palette();
  const QColor text = p.color(QPalette::Text);
  const QColor grid = applyPlotPalette(plot_, p);
  plot_->legend->setBrush(p.brush(QPalette::Base));
  plot_->legend->setTextColor(text);
  plot_->legend->setBorderPen(QPen(grid));

  if (current_.empty() && pinned_.empty()) {
    plot_->xAxis->setRange(0, 1);
    plot_->yAxis->setRange(0, 1);
    plot_->replot();
    return;
  }
  // Shared bins over both runs so the two histograms line up.
  double low = std::numeric_limits<double>::max(), high = 0;
  for (const auto* values : {&current_, &pinned_}) {
    for (double v : *values) {
      low = std::min(low, v);
      high = std::max(high, v);
    }
  }
  const std::size_t samples = std::max(current_.size(), pinned_.size());
  const int bins = std::clamp(static_cast<int>(std::ceil(std::sqrt(samples))) * 2, 5, 40);
  double width = (high - low) / bins;
  if (width <= 0) { // every run took the same time
    width = std::max(high * 0.01, 1e-3);
    low -= width * bins / 2.0;
  }
  double tallest = 0;
  const auto addHistogram = [&](const std::vector<double>& values, const QColor& color,
                                const QString& name) {
    if (values.empty())
      return;
    std::vector<double> counts(static_cast<std::size_t>(bins), 0);
    for (double v : values) {
      const int bin = std::clamp(static_cast<int>((v - low) / width), 0, bins - 1);
      counts[static_cast<std::size_t>(bin)] += 1;
    }
    QVector<double> keys, heights;
    for (int b = 0; b < bins; ++b) {
      keys << low + (b + 0.5) * width;
      heights << counts[static_cast<std::size_t>(b)];
      tallest = std::max(tallest, heights.back());
    }
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(name);
    bars->setWidth(width);
    bars->setData(keys, heights, true);
    bars->setPen(QPen(color.darker(120)));
    QColor fill = color;
    fill.setAlphaF(pinned_.empty() ? 0.7f : 0.45f);
    bars->setBrush(fill);
  };
  const QColor currentColor = p.color(QPalette::Highlight);
  addHistogram(pinned_, pinnedColor(), tr("pinned"));
  addHistogram(current_, currentColor, tr("current"));
  const double top = std::max(1.0, tallest * 1.45); // room for the marker labels

  // Median labelled on the top row; p10 and p90 on the row below, each on the outer side of
  // its line so that the three labels do not run into each other.
  const auto addMarkers = [&](const std::vector<double>& values, const QColor& color,
                              bool labelled) {
    if (values.empty())
      return;
    const Markers m = markersOf(values);
    struct Line {
      double x;
      QString label;
      bool median;
      Qt::Alignment align;
      double row;
    };
    const Line lines[] = {
        {m.p10, tr("p10 "), false, Qt::AlignRight, 0.88},
        {m.median, tr("median %1 ms").arg(m.median, 0, 'f', 3), true, Qt::AlignHCenter, 0.99},
        {m.p90, tr(" p90"), false, Qt::AlignLeft, 0.88}};
    for (const Line& l : lines) {
      auto* line = new QCPItemStraightLine(plot_);
      line->point1->setCoords(l.x, 0);
      line->point2->setCoords(l.x, 1);
      line->setPen(
          QPen(color.darker(110), l.median ? 2 : 1, l.median ? Qt::SolidLine : Qt::DashLine));
      if (!labelled)
        continue;
      auto* tag = new QCPItemText(plot_);
      tag->setText(l.label);
      tag->setColor(color.darker(115));
      tag->setClipToAxisRect(true);
      tag->position->setCoords(l.x, top * l.row);
      tag->setPositionAlignment(Qt::AlignTop | l.align);
      tag->setBrush(p.brush(QPalette::Base));
      tag->setPadding(QMargins(2, 0, 2, 0));
      QFont font = tag->font();
      font.setPointSizeF(font.pointSizeF() * 0.85);
      tag->setFont(font);
    }
  };
  addMarkers(current_, currentColor, true);
  addMarkers(pinned_, pinnedColor(), false); // the legend tells the colours apart

  plot_->legend->setVisible(!pinned_.empty());
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  const double margin = width;
  plot_->xAxis->setRange(low - margin, low + bins * width + margin);
  plot_->yAxis->setRange(0, top);
  plot_->replot();
}

} // namespace lathe::views
