#pragma once
// Tuning's convergence: the estimated speed-up of the kernels measured so far (their default
// times summed over their calls, over their best times) against trials, with 1x (the
// defaults) as a dashed line, growing as rounds finish.

#include <QWidget>
#include <vector>

class QCustomPlot;

namespace lathe::views {

class ConvergencePlot : public QWidget {
  Q_OBJECT

public:
  explicit ConvergencePlot(QWidget* parent = nullptr);

  void clear();
  // One round: trials so far, the estimate with the best schedules and with the defaults.
  void addPoint(double trials, double bestMs, double defaultMs);
  int pointCount() const { return static_cast<int>(trials_.size()); }
  QCustomPlot* plot() const { return plot_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void rebuild();

  QCustomPlot* plot_;
  std::vector<double> trials_, best_, default_;
};

} // namespace lathe::views
