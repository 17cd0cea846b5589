#include "views/properties/weight_stats_view.h"

#include "views/common/plot_style.h"

#include <QEvent>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

namespace lathe::views {

QString formatStat(double value, int digits) {
  const double magnitude = std::abs(value);
  if (value != 0 && (magnitude < 1e-3 || magnitude >= 1e6))
    return QString::number(value, 'e', digits - 1);
  return QString::number(value, 'g', digits);
}

WeightStatsView::WeightStatsView(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), stats_(new QLabel(this)),
      plot_(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("weightStats"));
  title_->setObjectName(QStringLiteral("weightTitle"));
  title_->setTextFormat(Qt::RichText);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->setObjectName(QStringLiteral("weightStatsText"));
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->setWordWrap(true);

  plot_->setObjectName(QStringLiteral("weightHistogram"));
  plot_->setMinimumHeight(130);
  plot_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  plot_->yAxis->setLabel(tr("count"));
  plot_->xAxis->ticker()->setTickCount(5);
  plot_->yAxis->ticker()->setTickCount(3);
  plot_->axisRect()->setAutoMargins(QCP::msLeft | QCP::msBottom);
  plot_->axisRect()->setMargins(QMargins(0, 6, 8, 0));
  plot_->setNoAntialiasingOnDrag(true);
  new QCPBars(plot_->xAxis, plot_->yAxis); // the one plottable

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 6, 0, 6);
  layout->setSpacing(2);
  layout->addWidget(title_);
  layout->addWidget(stats_);
  layout->addWidget(plot_, 1);
  applyPalette();
}

void WeightStatsView::setPending(const QString& name, const QString& typeText) {
  name_ = name;
  hasStats_ = false;
  title_->setText(
      QStringLiteral("<b>%1</b> &nbsp;%2").arg(name.toHtmlEscaped(), typeText.toHtmlEscaped()));
  stats_->setText(tr("Computing statistics\u2026"));
  plot_->plottable(0)->setVisible(false);
  plot_->hide();
}

void WeightStatsView::setUnavailable(const QString& name, const QString& reason) {
  name_ = name;
  hasStats_ = false;
  title_->setText(QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped()));
  stats_->setText(reason);
  plot_->hide();
}

void WeightStatsView::setStats(const api::ConstantStats& s) {
  name_ = QString::fromStdString(s.name);
  hasStats_ = true;
  QStringList dims;
  for (std::int64_t d : s.shape)
    dims << QString::number(d);
  title_->setText(
      QStringLiteral("<b>%1</b> &nbsp;%2[%3] &nbsp;\u00b7&nbsp; %4")
          .arg(name_.toHtmlEscaped(), QString::fromStdString(s.dtype), dims.join(QLatin1Char(',')),
               s.count == 1
                   ? tr("1 value")
                   : tr("%1 values").arg(QLocale().toString(static_cast<qlonglong>(s.count)))));
  QString text =
      tr("min %1 \u00b7 max %2 \u00b7 mean %3 \u00b7 std %4")
          .arg(formatStat(s.min), formatStat(s.max), formatStat(s.mean), formatStat(s.std));
  if (s.nonFinite > 0)
    text += tr(" \u00b7 %1 NaN/Inf left out").arg(s.nonFinite);
  stats_->setText(text);

  auto* bars = static_cast<QCPBars*>(plot_->plottable(0));
  const int bins = static_cast<int>(s.histogram.size());
  // The bins' range: the values' own, or one shared with another view (Numerics' two sides).
  const bool ranged = s.histogramMax > s.histogramMin;
  const double lo = ranged ? s.histogramMin : s.min, hi = ranged ? s.histogramMax : s.max;
  const double width = hi > lo ? (hi - lo) / bins : 1.0;
  QVector<double> keys, counts;
  double highest = 0;
  for (int i = 0; i < bins; ++i) {
    keys << lo + (i + 0.5) * width;
    counts << static_cast<double>(s.histogram[static_cast<std::size_t>(i)]);
    highest = std::max(highest, counts.back());
  }
  bars->setWidth(width);
  bars->setData(keys, counts, true);
  bars->setVisible(true);
  plot_->xAxis->setRange(lo - (hi > lo ? 0 : 0.5), hi + (hi > lo ? 0 : 0.5));
  plot_->yAxis->setRange(0, std::max(1.0, highest * 1.08));
  plot_->show();
  plot_->replot();
}

QString WeightStatsView::statsText() const {
  return stats_->text();
}

int WeightStatsView::barCount() const {
  const auto* bars = static_cast<const QCPBars*>(plot_->plottable(0));
  return bars->visible() ? bars->dataCount() : 0;
}

void WeightStatsView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange)
    applyPalette();
}

// The plot follows the palette so a dark theme does not get a white box.
void WeightStatsView::applyPalette() {
  const QPalette p = palette();
  applyPlotPalette(plot_, p);
  auto* bars = static_cast<QCPBars*>(plot_->plottable(0));
  QColor fill = p.color(QPalette::Highlight);
  bars->setPen(QPen(fill.darker(120)));
  fill.setAlphaF(0.75f);
  bars->setBrush(fill);
  plot_->replot();
}

} // namespace lathe::views
