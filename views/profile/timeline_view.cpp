#include "views/profile/timeline_view.h"

#include "views/common/category_palette.h"
#include "views/common/plot_style.h"

#include <QEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace lathe::views {

// All bars of the timeline as one plottable: thousands of QCPItemRects would make every
// replot slow, and bars outside the visible time range cost nothing here.
class TimelineBars : public QCPAbstractPlottable {
public:
  struct Bar {
    double start = 0, end = 0; // ms
    int lane = 0;
    double top = -0.4, bottom = 0.4; // in lane units around the lane's centre
    QColor color;
    int event = -1;
    QString kernel;
  };

  TimelineBars(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {
    setSelectable(QCP::stNone);
  }

  void setBars(std::vector<Bar> bars) { bars_ = std::move(bars); }
  const std::vector<Bar>& bars() const { return bars_; }
  void setSelectedKernel(const QString& kernel) { selectedKernel_ = kernel; }
  void setOutline(const QColor& color) { outline_ = color; }

  // Hover and clicks are handled by the view, which knows the lanes.
  double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }

  QCPRange getKeyRange(bool& foundRange, QCP::SignDomain) const override {
    foundRange = !bars_.empty();
    QCPRange range(0, 0);
    for (const Bar& bar : bars_)
      range.upper = std::max(range.upper, bar.end);
    return range;
  }

  QCPRange getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const override {
    foundRange = !bars_.empty();
    int lanes = 0;
    for (const Bar& bar : bars_)
      lanes = std::max(lanes, bar.lane + 1);
    return QCPRange(-0.5, lanes - 0.5);
  }

  // The bar under `pixel`; later bars win, as they are drawn on top.
  int barAt(const QPointF& pixel) const {
    const QCPAxis* key = keyAxis();
    const QCPAxis* value = valueAxis();
    if (!key || !value)
      return -1;
    const double t = key->pixelToCoord(pixel.x());
    const double y = value->pixelToCoord(pixel.y());
    // A bar narrower than 3 px is still hoverable.
    const double slack = std::abs(key->pixelToCoord(pixel.x() + 1.5) - t);
    for (int i = static_cast<int>(bars_.size()) - 1; i >= 0; --i) {
      const Bar& bar = bars_[static_cast<std::size_t>(i)];
      if (y < bar.lane + bar.top || y > bar.lane + bar.bottom)
        continue;
      if (t >= bar.start - slack && t <= bar.end + slack)
        return i;
    }
    return -1;
  }

protected:
  void draw(QCPPainter* painter) override {
    const QCPAxis* key = keyAxis();
    const QCPAxis* value = valueAxis();
    if (!key || !value)
      return;
    const QRect clip = clipRect();
    painter->setAntialiasing(false);
    for (const Bar& bar : bars_) {
      const double x1 = key->coordToPixel(bar.start);
      double x2 = key->coordToPixel(bar.end);
      if (x2 < clip.left() || x1 > clip.right())
        continue;
      x2 = std::max(x2, x1 + 1); // sub-pixel calls stay visible
      const double y1 = value->coordToPixel(bar.lane + bar.top);
      const double y2 = value->coordToPixel(bar.lane + bar.bottom);
      const QRectF rect(QPointF(x1, std::min(y1, y2)), QPointF(x2, std::max(y1, y2)));
      const bool selected = !selectedKernel_.isEmpty() && bar.kernel == selectedKernel_;
      painter->setBrush(bar.color);
      if (selected)
        painter->setPen(QPen(outline_, 2));
      else if (rect.width() >= 4)
        painter->setPen(QPen(bar.color.darker(135), 1));
      else
        painter->setPen(Qt::NoPen);
      painter->drawRect(rect);
    }
  }

  void drawLegendIcon(QCPPainter*, const QRectF&) const override {}

private:
  std::vector<Bar> bars_;
  QString selectedKernel_;
  QColor outline_ = Qt::black;
};

namespace {

QString formatDuration(double us) {
  if (us >= 1000)
    return QStringLiteral("%1 ms").arg(us / 1000.0, 0, 'f', 3);
  return QStringLiteral("%1 \u00b5s").arg(us, 0, 'f', 1);
}

} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("timeline"));
  bars_ = new TimelineBars(plot_->xAxis, plot_->yAxis);
  plot_->setMinimumHeight(100);
  plot_->xAxis->setLabel(tr("time from the first timed run (ms)"));
  plot_->yAxis->setRangeReversed(true); // thread 0 on top
  plot_->yAxis->grid()->setVisible(false);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->setMouseTracking(true);
  connect(plot_, &QCustomPlot::mouseMove, this, &TimelineView::onMouseMove);
  connect(plot_, &QCustomPlot::mousePress, this,
          [this](QMouseEvent* event) { pressPos_ = event->pos(); });
  connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* event) {
    if ((event->pos() - pressPos_).manhattanLength() > 3)
      return; // a drag that panned
    const int event_ = eventAt(event->position());
    if (event_ < 0 || !report_)
      return;
    const api::TraceEvent& e = report_->profile->events[static_cast<std::size_t>(event_)];
    emit kernelClicked(QString::fromStdString(e.kernel));
    if (e.chunk)
      emit chunkClicked(event_);
  });
  // Never zoom out beyond the whole run.
  connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this](const QCPRange& range) {
            bool found = false;
            const QCPRange all = bars_->getKeyRange(found, QCP::sdBoth);
            if (!found)
              return;
            const double pad = all.size() * 0.02;
            const QCPRange limit(all.lower - pad, all.upper + pad);
            if (range.lower >= limit.lower && range.upper <= limit.upper)
              return;
            QCPRange bounded = range;
            if (bounded.size() > limit.size())
              bounded = limit;
            else if (bounded.lower < limit.lower)
              bounded = QCPRange(limit.lower, limit.lower + range.size());
            else
              bounded = QCPRange(limit.upper - range.size(), limit.upper);
            plot_->xAxis->setRange(bounded);
          });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  applyPalette();
}

void TimelineView::setReport(std::shared_ptr<const api::RunReport> report,
                             QHash<QString, QString> categories) {
  report_ = report && report->profile ? std::move(report) : nullptr;
  std::vector<TimelineBars::Bar> bars;
  int lanes = 0;
  if (report_) {
    const api::RunProfile& p = *report_->profile;
    lanes = std::max(1, p.threads);
    // Calls first, chunks on top of them.
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < p.events.size(); ++i) {
        const api::TraceEvent& e = p.events[i];
        if (e.chunk != (pass == 1))
          continue;
        TimelineBars::Bar bar;
        bar.start = e.startUs / 1000.0;
        bar.end = (e.startUs + e.durationUs) / 1000.0;
        bar.lane = e.thread;
        bar.kernel = QString::fromStdString(e.kernel);
        bar.event = static_cast<int>(i);
        QColor color = e.kernel.empty()
                           ? QColor(Qt::gray)
                           : categoryColor(categories.value(bar.kernel, QStringLiteral("other")));
        if (!e.chunk) {
          bar.top = -0.42; // the upper half of the calling thread's lane
          bar.bottom = -0.02;
        } else if (e.thread == 0) {
          bar.top = 0.02; // the calling thread's own chunks, below its calls
          bar.bottom = 0.42;
          color = color.lighter(115);
        } else {
          bar.top = -0.42;
          bar.bottom = 0.42;
        }
        bar.color = color;
        lanes = std::max(lanes, e.thread + 1);
        bars.push_back(std::move(bar));
      }
    }
  }
  bars_->setBars(std::move(bars));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int lane = 0; lane < lanes; ++lane)
    ticker->addTick(lane, lane == 0 ? tr("thread 0\n(caller)") : tr("thread %1").arg(lane));
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(-0.5, std::max(1, lanes) - 0.5);
  resetZoom();
}

void TimelineView::setSelectedKernel(const QString& kernel) {
  bars_->setSelectedKernel(kernel);
  plot_->replot();
}

int TimelineView::laneCount() const {
  return report_ ? std::max(1, report_->profile->threads) : 0;
}

std::vector<int> TimelineView::barsPerLane() const {
  std::vector<int> counts(static_cast<std::size_t>(laneCount()), 0);
  for (const TimelineBars::Bar& bar : bars_->bars()) {
    if (bar.lane >= static_cast<int>(counts.size()))
      counts.resize(static_cast<std::size_t>(bar.lane) + 1, 0);
    ++counts[static_cast<std::size_t>(bar.lane)];
  }
  return counts;
}

int TimelineView::eventAt(const QPointF& pixel) const {
  const int bar = bars_->barAt(pixel);
  return bar < 0 ? -1 : bars_->bars()[static_cast<std::size_t>(bar)].event;
}

QString TimelineView::toolTipForEvent(int event) const {
  if (!report_ || event < 0 || event >= static_cast<int>(report_->profile->events.size()))
    return {};
  const api::RunProfile& p = *report_->profile;
  const api::TraceEvent& e = p.events[static_cast<std::size_t>(event)];
  QString text = QStringLiteral("<b>%1</b>")
                     .arg(e.kernel.empty() ? tr("(outside every call)")
                                           : QString::fromStdString(e.kernel).toHtmlEscaped());
  if (e.chunk)
    text += tr(" \u00b7 chunk on thread %1").arg(e.thread);
  text += QStringLiteral("<br>%1 \u00b7 run %2").arg(formatDuration(e.durationUs)).arg(e.run + 1);
  if (e.chunk && e.iterations > 0)
    text += tr("<br>iterations %1\u2013%2 of the %3 of its <tt>parallel for</tt> (a click "
               "shows the loop in Code)")
                .arg(e.firstIteration)
                .arg(e.endIteration - 1)
                .arg(e.iterations);
  if (e.call >= 0 && e.call < static_cast<int>(p.calls.size())) {
    const auto& nodes = p.calls[static_cast<std::size_t>(e.call)].nodes;
    QStringList names;
    for (const std::string& n : nodes)
      names << QString::fromStdString(n).toHtmlEscaped();
    if (!names.isEmpty())
      text += QStringLiteral("<br>") + names.join(QStringLiteral("<br>"));
  }
  return text;
}

void TimelineView::resetZoom() {
  bool found = false;
  const QCPRange all = bars_->getKeyRange(found, QCP::sdBoth);
  plot_->xAxis->setRange(
      found ? QCPRange(all.lower - all.size() * 0.01, all.upper + all.size() * 0.01)
            : QCPRange(0, 1));
  plot_->replot();
}

void TimelineView::onMouseMove(QMouseEvent* event) {
  if (event->buttons() != Qt::NoButton)
    return; // panning
  const int e = eventAt(event->position());
  if (e < 0) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), toolTipForEvent(e), plot_);
}

void TimelineView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange)
    applyPalette();
}

void TimelineView::applyPalette() {
  const QPalette p = palette();
  const QColor text = p.color(QPalette::Text);
  applyPlotPalette(plot_, p);
  bars_->setOutline(text);
  plot_->replot();
}

} // namespace lathe::views
