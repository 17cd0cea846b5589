#include "views/graph/layout_engine.h"

#include "views/graph/dot_layout.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

namespace lathe::views {
namespace {

std::atomic<quint64> nextJob{0};

// Lives on the layout thread and owns the only DotLayouter.
class LayoutWorker : public QObject {
  Q_OBJECT

public:
  void run(quint64 job, const std::shared_ptr<const LayoutInput>& input,
           const std::shared_ptr<std::atomic<quint64>>& latest, quintptr engine) {
    if (latest->load() != job) { // superseded before it started
      emit done(job, nullptr, engine);
      return;
    }
    if (!layouter_)
      layouter_ = std::make_unique<DotLayouter>();
    auto result = std::make_shared<const LayoutResult>(layouter_->layout(*input));
    emit done(job, std::move(result), engine);
  }

signals:
  void done(quint64 job, std::shared_ptr<const lathe::views::LayoutResult> result, quintptr engine);

private:
  std::unique_ptr<DotLayouter> layouter_;
};

// The process's layout thread. A child of the application, so it stops (after the running
// job) before the application object goes away.
class LayoutThread : public QObject {
public:
  static LayoutThread* instance() {
    static QPointer<LayoutThread> thread;
    if (!thread)
      thread = new LayoutThread(QCoreApplication::instance());
    return thread;
  }

  LayoutWorker* worker() const { return worker_; }

  ~LayoutThread() override {
    thread_.quit();
    thread_.wait();
  }

private:
  explicit LayoutThread(QObject* parent) : QObject(parent), worker_(new LayoutWorker) {
    thread_.setObjectName(QStringLiteral("graph layout"));
    worker_->moveToThread(&thread_);
    // The worker (and Graphviz's context) is destroyed on the thread that used it, as the
    // thread finishes: a deleteLater posted then would never run (its event loop has
    // stopped), and LeakSanitizer reported the worker at exit.
    connect(&thread_, &QThread::finished, [worker = worker_] { delete worker; });
    thread_.start();
  }

  QThread thread_;
  LayoutWorker* worker_;
};

} // namespace

LayoutEngine::LayoutEngine(QObject* parent)
    : QObject(parent), latest_(std::make_shared<std::atomic<quint64>>(0)) {
  qRegisterMetaType<std::shared_ptr<const LayoutResult>>();
  // Results of every engine arrive on one signal; each engine keeps its own.
  connect(LayoutThread::instance()->worker(), &LayoutWorker::done, this, &LayoutEngine::receive,
          Qt::QueuedConnection);
}

LayoutEngine::~LayoutEngine() {
  latest_->store(0); // queued jobs of this engine are skipped
}

quint64 LayoutEngine::request(LayoutInput input) {
  const quint64 job = ++nextJob;
  latest_->store(job);
  busy_ = true;
  auto shared = std::make_shared<const LayoutInput>(std::move(input));
  LayoutWorker* worker = LayoutThread::instance()->worker();
  QMetaObject::invokeMethod(
      worker,
      [worker, job, shared, latest = latest_, engine = reinterpret_cast<quintptr>(this)] {
        worker->run(job, shared, latest, engine);
      },
      Qt::QueuedConnection);
  return job;
}

void LayoutEngine::cancel() {
  latest_->store(0);
  busy_ = false;
}

void LayoutEngine::receive(quint64 job, std::shared_ptr<const LayoutResult> result,
                           quintptr engine) {
  if (engine != reinterpret_cast<quintptr>(this))
    return;
  if (job != latest_->load() || !result) {
    ++stale_;
    return;
  }
  busy_ = false;
  emit finished(job, std::move(result));
}

} // namespace lathe::views

#include "layout_engine.moc"
