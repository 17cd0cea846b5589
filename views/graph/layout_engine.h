#pragma once
// Runs Graphviz layouts off the GUI thread. Every LayoutEngine in the process shares ONE
// layout thread (Graphviz is not thread-safe), so jobs from all views run one after another.
// A newer request supersedes an older one: a job not started yet is skipped, and the result
// of one already running is dropped when it arrives.

#include "views/graph/graph_layout.h"

#include <QObject>
#include <atomic>
#include <memory>

namespace lathe::views {

class LayoutEngine : public QObject {
  Q_OBJECT

public:
  explicit LayoutEngine(QObject* parent = nullptr);
  ~LayoutEngine() override;

  // Queues a layout and returns its job id; ids grow across all engines.
  quint64 request(LayoutInput input);
  // Forgets the job in flight: no finished() for it.
  void cancel();
  bool isBusy() const { return busy_; }
  quint64 latestJob() const { return *latest_; }
  // Jobs that were skipped or whose result was dropped because a newer one was requested.
  int staleJobs() const { return stale_; }

signals:
  // On the GUI thread, for the latest job only.
  void finished(quint64 job, std::shared_ptr<const lathe::views::LayoutResult> result);

private:
  void receive(quint64 job, std::shared_ptr<const LayoutResult> result, quintptr engine);

  // Shared with the layout thread, which reads it to skip superseded jobs.
  std::shared_ptr<std::atomic<quint64>> latest_;
  bool busy_ = false;
  int stale_ = 0;
};

} // namespace lathe::views
