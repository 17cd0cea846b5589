#pragma once
// File > Export…: the open model as a folder for the standalone C runtime (what `lathe export`
// writes) for a target and CPU, then optionally built with the target's toolchain. The dialog
// asks; MainWindow runs the export as a worker job and hands the result back.

#include "app/workbench/engine_jobs.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace lathe::workbench {

class ExportDialog : public QDialog {
  Q_OBJECT

public:
  // `modelPath`: the model on display; `target`: the toolbar's pick, preselected.
  ExportDialog(const QString& modelPath, const QString& target, QWidget* parent = nullptr);

  // The request the form describes; an empty folder means the form is not complete.
  ExportRequest request() const;
  void setTarget(const QString& target);
  void setFolder(const QString& folder);
  void setBuild(bool build);
  // Starts an export: the form locks and shows progress until showOutcome().
  bool startExport();
  void setProgress(const QString& stage);
  void showOutcome(const ExportOutcome& outcome);
  bool isExporting() const { return exporting_; }
  // The last outcome's text, as shown (for tests and logs).
  QString resultText() const;

signals:
  void exportRequested(const ExportRequest& request);
  void cancelRequested();

private:
  void chooseFolder();
  void updateForm();
  void setExporting(bool exporting);

  QString modelPath_;
  QComboBox* target_;
  QLineEdit* cpu_;
  QLineEdit* folder_;
  QLineEdit* name_;
  QCheckBox* build_;
  QLabel* writes_;
  QLabel* status_;
  QProgressBar* progress_;
  QLabel* summary_;
  QTableWidget* files_;
  QTableWidget* kernels_;
  QLabel* buildResult_;
  QPushButton* exportButton_;
  QPushButton* cancelButton_;
  QDialogButtonBox* buttons_;
  bool exporting_ = false;
};

} // namespace lathe::workbench
