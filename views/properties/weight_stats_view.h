#pragma once
// One weight of the selected node: its type, min/max/mean/std and a value histogram
// (QCustomPlot). Shows "computing" until the statistics arrive from a worker.

#include "engine/api/session.h"

#include <QWidget>

class QCustomPlot;
class QLabel;

namespace lathe::views {

class WeightStatsView : public QWidget {
  Q_OBJECT

public:
  explicit WeightStatsView(QWidget* parent = nullptr);

  // Before the statistics exist: the name and type from the snapshot.
  void setPending(const QString& name, const QString& typeText);
  void setStats(const api::ConstantStats& stats);
  void setUnavailable(const QString& name, const QString& reason);

  QString name() const { return name_; }
  QString statsText() const; // "min … max … mean … std …" as shown
  bool hasStats() const { return hasStats_; }
  int barCount() const; // histogram bins drawn
  QCustomPlot* plot() const { return plot_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void applyPalette();

  QLabel* title_;
  QLabel* stats_;
  QCustomPlot* plot_;
  QString name_;
  bool hasStats_ = false;
};

// A number in at most `digits` significant digits, switching to exponent form for very
// large or small magnitudes (weights are often ~1e-3).
QString formatStat(double value, int digits = 4);

} // namespace lathe::views
