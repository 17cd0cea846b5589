#pragma once
// `lathe-workbench MODEL --screenshot DIR`: open the model, wait for the graph's layout, save
// a PNG of the window, the graph and each panel (and the graph after the first pass that
// changed something), compile it and save the Code panel, run it with profiling and save the
// Run and Profile panels, then quit. Used for docs and to review
// the look without a display.

#include <QObject>
#include <QString>

namespace lathe::workbench {

class MainWindow;

class ScreenshotSession : public QObject {
  Q_OBJECT

public:
  // Quits the application when done: exit code 0, or 1 if loading, compiling, running or
  // saving failed.
  ScreenshotSession(MainWindow* window, QString directory, QObject* parent = nullptr);

private:
  // Calls `next` once the graph view has shown its layout.
  void afterLayout(void (ScreenshotSession::*next)());
  void capture();
  void capturePass();
  void captureKernels();
  void captureRun();
  void captureSchedule();
  bool save(QWidget* widget, const QString& fileName);
  QWidget* dock(const char* name) const;

  MainWindow* window_;
  QString directory_;
  bool ok_ = true; // every PNG so far was written
};

} // namespace lathe::workbench
