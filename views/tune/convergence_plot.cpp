#include "views/tune/convergence_plot.h"

#include "views/common/plot_style.h"

#include <QEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

namespace lathe::views {

ConvergencePlot::ConvergencePlot(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("convergencePlot"));
  plot_->setMinimumHeight(140);
  plot_->xAxis->setLabel(tr("trials"));
  plot_->yAxis->setLabel(tr("speed-up"));
  plot_->yAxis->ticker()->setTickCount(4);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  rebuild();
}

void ConvergencePlot::clear() {
  trials_.clear();
  best_.clear();
  default_.clear();
  rebuild();
}

void ConvergencePlot::addPoint(double trials, double bestMs, double defaultMs) {
  trials_.push_back(trials);
  best_.push_back(bestMs);
  default_.push_back(defaultMs);
  rebuild();
}

void ConvergencePlot::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange)
    rebuild();
}

void ConvergencePlot::rebuild() {
  plot_->clearGraphs();
  const QColor grid = applyPlotPalette(plot_, palette());
  plot_->legend->setBrush(palette().base());
  plot_->legend->setTextColor(palette().text().color());
  plot_->legend->setBorderPen(QPen(grid));
  const QVector<double> x(trials_.begin(), trials_.end());
  QVector<double> speedup, one;
  for (std::size_t i = 0; i < trials_.size(); ++i) {
    speedup.push_back(best_[i] > 0 ? default_[i] / best_[i] : 1.0);
    one.push_back(1.0);
  }
  QCPGraph* defaults = plot_->addGraph();
  defaults->setName(tr("default schedules"));
  defaults->setPen(QPen(palette().text().color(), 1.2, Qt::DashLine));
  defaults->setData(x, one, true);
  QCPGraph* best = plot_->addGraph();
  best->setName(tr("best found"));
  best->setPen(QPen(palette().highlight().color(), 2));
  best->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  best->setData(x, speedup, true);
  const double top = speedup.isEmpty() ? 1.0 : *std::max_element(speedup.begin(), speedup.end());
  const double lastTrial = trials_.empty() ? 10 : std::max(1.0, trials_.back());
  plot_->xAxis->setRange(0, lastTrial * 1.05);
  // Trials are whole: ticks at 1, 2 or 5 times a power of ten, about five of them.
  QSharedPointer<QCPAxisTickerFixed> trialTicks(new QCPAxisTickerFixed);
  double step = 1;
  while (lastTrial / step > 6)
    step *= (QString::number(step).startsWith(QLatin1Char('2')) ? 2.5 : 2);
  trialTicks->setTickStep(step);
  plot_->xAxis->setTicker(trialTicks);
  plot_->xAxis->setNumberFormat(QStringLiteral("f"));
  plot_->xAxis->setNumberPrecision(0);
  plot_->yAxis->setRange(0.95, std::max(1.1, top * 1.05));
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(top > 2 ? 0.5 : 0.05);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setNumberFormat(QStringLiteral("f"));
  plot_->yAxis->setNumberPrecision(2);
  plot_->replot();
}

} // namespace lathe::views
