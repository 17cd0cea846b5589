#pragma once
// The latency distribution of a run as a histogram (ms), with the median (solid) and the
// 10th/90th percentiles (dashed) marked; a pinned run's distribution on the same axes.

#include <QWidget>
#include <vector>

class QCustomPlot;

namespace lathe::views {

class LatencyPlot : public QWidget {
  Q_OBJECT

public:
  explicit LatencyPlot(QWidget* parent = nullptr);

  // Latencies in ms, one per timed run; `pinned` empty when nothing is pinned.
  void setLatencies(std::vector<double> current, std::vector<double> pinned = {});
  int sampleCount() const { return static_cast<int>(current_.size()); }
  int pinnedCount() const { return static_cast<int>(pinned_.size()); }
  QCustomPlot* plot() const { return plot_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void rebuild();

  QCustomPlot* plot_;
  std::vector<double> current_, pinned_;
};

} // namespace lathe::views
