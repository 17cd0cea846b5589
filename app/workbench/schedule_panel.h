#pragma once
// The "Schedule" tab: the selected kernel's schedule as editable steps, one per line
// (split(x, 8), vectorize(x.i), ...), replayed on the nest as lowered with Apply (a kernel
// with a default trace starts from its steps). The result
// shows the loop IR against the default's, the assembly, and both timed side by side; a
// refused step is marked on its line with the reason. Undo returns to the previous steps;
// Keep hands the steps to the next compile; Save/Load write and read schedule set files that
// `lathe compile --schedule` replays.

#include "engine/api/session.h"

#include <QWidget>
#include <map>
#include <string>
#include <vector>

class QLabel;
class QPushButton;
class QTabWidget;
class QTimer;

namespace lathe::views {
class CodeEditor;
class IrDiffView;
} // namespace lathe::views

namespace lathe::workbench {

class ExplanationPopup;

class SchedulePanel : public QWidget {
  Q_OBJECT

public:
  explicit SchedulePanel(QWidget* parent = nullptr);

  // The kernel the steps apply to, with the loop IR of its nest as lowered (for the list of
  // loops); an empty name: no kernel is selected. Shows the kept steps of that kernel, else
  // its default trace (editable from its first step). `strategy`: how the default lowering
  // computes it (KernelReport::strategy).
  void setKernel(const std::string& kernel, const std::string& loopIr,
                 const std::string& strategy = {}, const std::string& defaultTrace = {});
  const std::string& kernel() const { return kernel_; }
  const QString& defaultTrace() const { return defaultTrace_; }
  // Whether Apply can start now (a host compile exists and the Session is free).
  void setAvailable(bool available, const QString& why = {});
  void setTrying(bool trying, bool timed = true);
  // The job in flight was dropped (its result will not come): says why, enables Apply.
  void stopTrying(const QString& why);
  void showResult(const QString& steps, const api::KernelScheduleResult& result);
  // A new model: no kernel, nothing kept.
  void reset();

  QString steps() const;
  void setSteps(const QString& steps);
  // The kept schedules as a schedule set text (empty when none), for compile().
  std::string keptScheduleText() const;
  const std::map<std::string, std::string>& kept() const { return kept_; }
  bool saveKept(const QString& path, QString* error);
  bool loadKept(const QString& path, QString* error);
  // Why? explains the primitive of the editor's current line (or what a schedule is); false
  // if nothing could be shown.
  bool explainStepAtCursor();
  ExplanationPopup* explanation() const { return popup_; }
  // Keeps the schedules of a schedule-set text (a saved session's), replacing those kept.
  bool setKeptText(const std::string& text, QString* error);

  views::CodeEditor* editor() const { return editor_; }
  views::IrDiffView* diffView() const { return diff_; }
  QLabel* resultLabel() const { return result_; }

signals:
  // `timed`: Apply (compile and time); otherwise a preview of the IR while typing.
  void applyRequested(const QString& kernel, const QString& steps, bool timed);
  void keptChanged();

public slots:
  void apply();
  void undo();
  void keep();

private:
  bool setKept(const api::ScheduleSetFile& file, QString* error);
  void updateButtons();
  void updateKeptLabel();
  void markFailedLine(int line);
  void preview();

  std::string kernel_;
  QString defaultTrace_; // the kernel's default trace: what Default puts back
  std::map<std::string, std::string> kept_;
  std::map<std::string, std::vector<QString>> history_; // applied steps, per kernel
  std::map<std::string, double> lastMs_;                // the last timed result, per kernel
  bool available_ = false, trying_ = false;
  QLabel* header_;
  QLabel* loops_;
  QLabel* strategy_;
  views::CodeEditor* editor_;
  QPushButton* applyButton_;
  QPushButton* undoButton_;
  QPushButton* defaultButton_;
  QPushButton* keepButton_;
  QPushButton* saveButton_;
  QPushButton* loadButton_;
  QLabel* keptLabel_;
  QLabel* result_;
  QTabWidget* tabs_;
  views::IrDiffView* diff_;
  views::CodeEditor* assembly_;
  QTimer* previewTimer_;
  ExplanationPopup* popup_ = nullptr;
};

} // namespace lathe::workbench
