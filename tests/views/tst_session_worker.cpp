// SessionWorker: jobs run one after another off the GUI thread; only the newest job of a tag
// reports; cancel() drops a queued job before it starts and a running one's result; a job
// that throws becomes its onError result.
#include "app/workbench/session_worker.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using lathe::workbench::SessionWorker;

class TestSessionWorker : public QObject {
  Q_OBJECT

private slots:
  void jobsRunInOrderOffTheGuiThread();
  void aNewerJobOfATagReplacesTheOlder();
  void cancelStopsARunningJobAndDropsItsResult();
  void aThrowingJobReportsThroughOnError();
};

namespace {

// A job that waits until `release` is set (or its cancel flag is), then reports `name`.
SessionWorker::Work gated(std::atomic<bool>& release, std::vector<QString>& delivered,
                          const QString& name, std::atomic<bool>* sawCancel = nullptr,
                          std::atomic<bool>* started = nullptr) {
  return [&release, &delivered, name, sawCancel, started](const SessionWorker::Context& context) {
    if (started)
      started->store(true);
    while (!release.load() && !context.cancel.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (sawCancel)
      sawCancel->store(context.cancel.load());
    return SessionWorker::Deliver([&delivered, name] { delivered.push_back(name); });
  };
}

} // namespace

void TestSessionWorker::jobsRunInOrderOffTheGuiThread() {
  SessionWorker worker;
  QSignalSpy idle(&worker, &SessionWorker::idle);
  std::vector<QString> delivered;
  std::mutex mutex;
  std::vector<int> order;
  const auto guiThread = QThread::currentThread();
  std::atomic<bool> offGuiThread{true};
  for (int i = 0; i < 3; ++i)
    worker.post(QStringLiteral("job%1").arg(i),
                [&, i](const SessionWorker::Context&) -> SessionWorker::Deliver {
                  if (QThread::currentThread() == guiThread)
                    offGuiThread = false;
                  {
                    std::lock_guard lock(mutex);
                    order.push_back(i);
                  }
                  return [&delivered, i] { delivered.push_back(QString::number(i)); };
                });
  QVERIFY(worker.isBusy(QStringLiteral("job0")));
  QTRY_COMPARE(delivered.size(), std::size_t{3});
  QCOMPARE(order, (std::vector<int>{0, 1, 2}));
  QCOMPARE(delivered, (std::vector<QString>{"0", "1", "2"}));
  QVERIFY(offGuiThread.load());
  QVERIFY(!worker.isBusy(QStringLiteral("job0")));
  QTRY_VERIFY(worker.isIdle());
  QVERIFY(idle.count() >= 1);
}

void TestSessionWorker::aNewerJobOfATagReplacesTheOlder() {
  SessionWorker worker;
  std::atomic<bool> release{false};
  std::vector<QString> delivered;
  std::atomic<bool> firstCancelled{false};
  // The first "run" occupies the worker; two more are queued behind it, and the newest
  // replaces the queued one before it starts.
  std::atomic<bool> firstStarted{false};
  worker.post(QStringLiteral("run"),
              gated(release, delivered, "first", &firstCancelled, &firstStarted));
  QTRY_VERIFY(firstStarted.load());
  worker.post(QStringLiteral("other"), gated(release, delivered, "other"));
  worker.post(QStringLiteral("run"), gated(release, delivered, "second"));
  worker.post(QStringLiteral("run"), gated(release, delivered, "third"));
  release = true;
  QTRY_VERIFY(worker.isIdle() && !worker.isBusy(QStringLiteral("run")));
  QTest::qWait(20); // anything still queued to the GUI thread arrives
  QCOMPARE(delivered, (std::vector<QString>{"other", "third"}));
  QVERIFY(firstCancelled.load()); // the running one was asked to stop
}

void TestSessionWorker::cancelStopsARunningJobAndDropsItsResult() {
  SessionWorker worker;
  std::atomic<bool> release{false};
  std::vector<QString> delivered;
  std::atomic<bool> sawCancel{false};
  QSignalSpy progress(&worker, &SessionWorker::progressChanged);
  worker.post(QStringLiteral("compile"),
              [&](const SessionWorker::Context& context) -> SessionWorker::Deliver {
                context.progress(50, "half way");
                while (!context.cancel.load())
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                sawCancel = true;
                return [&delivered] { delivered.push_back("compile"); };
              });
  QTRY_COMPARE(progress.count(), 1);
  QCOMPARE(progress.at(0).at(0).toString(), QStringLiteral("compile"));
  QCOMPARE(progress.at(0).at(1).toInt(), 50);
  QVERIFY(worker.cancel(QStringLiteral("compile")));
  QVERIFY(!worker.isBusy(QStringLiteral("compile")));
  QVERIFY(!worker.cancel(QStringLiteral("compile"))); // nothing current any more
  QTRY_VERIFY(sawCancel.load());
  QTRY_VERIFY(worker.isIdle());
  QTest::qWait(20);
  QVERIFY(delivered.empty());
  // The worker goes on with the next job.
  worker.post(QStringLiteral("compile"), gated(release, delivered, "again"));
  release = true;
  QTRY_COMPARE(delivered, (std::vector<QString>{"again"}));
}

void TestSessionWorker::aThrowingJobReportsThroughOnError() {
  SessionWorker worker;
  QString error;
  worker.post(
      QStringLiteral("run"),
      [](const SessionWorker::Context&) -> SessionWorker::Deliver {
        throw std::runtime_error("a bug in the engine");
      },
      [&error](const std::string& message) -> SessionWorker::Deliver {
        return [&error, message] { error = QString::fromStdString(message); };
      });
  QTRY_COMPARE(error, QStringLiteral("a bug in the engine"));
  QVERIFY(!worker.isBusy(QStringLiteral("run")));
}

QTEST_MAIN(TestSessionWorker)
#include "tst_session_worker.moc"
