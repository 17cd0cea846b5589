#pragma once
// The Run panel's table of the model's inputs: name, type and shape. Shapes come from the
// model, or from the chosen input file (read-only then); a dim the model leaves symbolic
// ("N") is asked for: its cell is editable and Run waits until every one is a number.

#include "engine/api/session.h"

#include <QWidget>
#include <map>
#include <string>
#include <vector>

class QLabel;
class QTableWidget;

namespace lathe::workbench {

class InputShapesTable : public QWidget {
  Q_OBJECT

public:
  explicit InputShapesTable(QWidget* parent = nullptr);

  // The open model's inputs (none: no model). Shapes typed for a model are kept while the
  // same inputs come back (the model opened again).
  void setModelInputs(const std::vector<api::TensorSummary>& inputs);
  // An .npz whose arrays give the shapes (read from the members' headers); empty: the
  // shapes typed in the table.
  void setInputFile(const QString& path);

  // Whether some input has symbolic or unknown dims.
  bool hasSymbolicInputs() const;
  // The full shapes typed for inputs with symbolic dims (none while an input file is set).
  std::map<std::string, std::vector<std::int64_t>> givenShapes() const;
  // What keeps the model from running with these shapes, one sentence; empty if nothing.
  QString problem() const;
  // Types `text` into the shape cell of input `name`; false if it is not editable.
  bool setShapeText(const QString& name, const QString& text);
  QString shapeText(const QString& name) const;

  QTableWidget* table() const { return table_; }

signals:
  void changed();

private:
  struct Row {
    api::TensorSummary input;
    QString text;    // what the Shape cell shows
    QString problem; // empty when the shape is known and fits the model
    std::vector<std::int64_t> shape;
  };
  void rebuild();
  void check(Row& row) const;
  void onItemChanged(int row, int column);

  std::vector<Row> rows_;
  QString inputFile_;
  QString fileProblem_;                    // the file cannot be read
  std::vector<api::TensorSummary> arrays_; // the file's arrays
  bool rebuilding_ = false;
  QTableWidget* table_;
  QLabel* note_;
};

} // namespace lathe::workbench
