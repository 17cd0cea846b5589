#pragma once
// `lathe-workbench MODEL --screenshot DIR`: open the model, save a PNG of the window and of
// each tab, compile it and save the Kernels tab, then quit. Used for docs and to review the look
// without a display.

#include <QObject>
#include <QString>

namespace lathe::workbench {

class MainWindow;

class ScreenshotSession : public QObject {
  Q_OBJECT

public:
  // Quits the application when done: exit code 0, or 1 if loading, compiling or saving
  // failed.
  ScreenshotSession(MainWindow* window, QString directory, QObject* parent = nullptr);

private:
  void capture();
  void captureKernels();
  bool save(QWidget* widget, const QString& fileName);

  MainWindow* window_;
  QString directory_;
};

} // namespace lathe::workbench
