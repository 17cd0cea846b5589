#pragma once
// A profiled run on a time axis, one lane per thread: kernel calls (thread 0, upper half of
// its lane) and the chunks of parallel loops (on the thread that ran them) as bars coloured by
// op category. The wheel zooms and dragging pans the time axis; hovering a bar tells its
// kernel, ONNX nodes, duration and (chunks) the iterations it ran; clicking one emits
// kernelClicked, and chunkClicked for a chunk.

#include "engine/api/session.h"

#include <QColor>
#include <QHash>
#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

class QCustomPlot;
class QMouseEvent;

namespace lathe::views {

class TimelineBars;

class TimelineView : public QWidget {
  Q_OBJECT

public:
  explicit TimelineView(QWidget* parent = nullptr);

  // `categories`: kernel name -> op category for the bar colours. nullptr or a report
  // without a profile clears the view.
  void setReport(std::shared_ptr<const api::RunReport> report,
                 QHash<QString, QString> categories = {});
  // Outlines the bars of this kernel ("" for none).
  void setSelectedKernel(const QString& kernel);

  int laneCount() const;
  // Bars drawn per lane (index = thread).
  std::vector<int> barsPerLane() const;
  // The index into RunProfile::events of the bar under a point of the plot, or -1.
  int eventAt(const QPointF& pixel) const;
  QString toolTipForEvent(int event) const;
  void resetZoom();
  QCustomPlot* plot() const { return plot_; }

signals:
  void kernelClicked(const QString& kernel);
  // After kernelClicked, for a chunk: the index into RunProfile::events.
  void chunkClicked(int event);

protected:
  void changeEvent(QEvent* event) override;

private:
  void applyPalette();
  void onMouseMove(QMouseEvent* event);

  QCustomPlot* plot_;
  TimelineBars* bars_;
  std::shared_ptr<const api::RunReport> report_;
  QPoint pressPos_;
};

} // namespace lathe::views
