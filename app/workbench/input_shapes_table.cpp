#include "app/workbench/input_shapes_table.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QStyle>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace lathe::workbench {
namespace {

enum Column { NameColumn, TypeColumn, ShapeColumn };

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

bool isNumber(const std::string& dim) {
  return !dim.empty() &&
         std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isSymbolic(const api::TensorSummary& t) {
  return !t.rankKnown || !std::all_of(t.dims.begin(), t.dims.end(), isNumber);
}

QString joinDims(const std::vector<std::string>& dims) {
  QStringList parts;
  for (const std::string& d : dims)
    parts << qs(d);
  return parts.join(QStringLiteral(", "));
}

// The largest dim accepted from the table: far beyond any real input, far below overflow.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;

} // namespace

InputShapesTable::InputShapesTable(QWidget* parent)
    : QWidget(parent), table_(new QTableWidget(0, 3, this)), note_(new QLabel(this)) {
  setObjectName(QStringLiteral("inputShapes"));
  table_->setObjectName(QStringLiteral("inputShapesTable"));
  table_->setHorizontalHeaderLabels({tr("Input"), tr("Type"), tr("Shape")});
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->horizontalHeader()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(TypeColumn, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
  table_->setWordWrap(false);
  table_->setShowGrid(false);
  table_->setToolTip(tr("Each input's shape. A named dim (N) is symbolic in the model: give it a "
                        "number (double-click the shape). With an input file, its arrays' "
                        "shapes are used."));
  connect(table_, &QTableWidget::cellChanged, this, &InputShapesTable::onItemChanged);
  note_->setObjectName(QStringLiteral("inputShapesNote"));
  note_->setWordWrap(true);
  note_->setTextFormat(Qt::PlainText);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(table_);
  layout->addWidget(note_);
  rebuild();
}

void InputShapesTable::setModelInputs(const std::vector<api::TensorSummary>& inputs) {
  std::vector<Row> rows;
  for (const api::TensorSummary& in : inputs) {
    Row row;
    row.input = in;
    row.text = joinDims(in.dims);
    // The same input again (the model reopened): keep what was typed for it.
    for (const Row& old : rows_)
      if (old.input.name == in.name && old.input.dims == in.dims && isSymbolic(in))
        row.text = old.text;
    rows.push_back(std::move(row));
  }
  rows_ = std::move(rows);
  rebuild();
}

void InputShapesTable::setInputFile(const QString& path) {
  inputFile_ = path.trimmed();
  arrays_.clear();
  fileProblem_.clear();
  if (!inputFile_.isEmpty()) {
    if (!QFileInfo(inputFile_).isFile()) {
      fileProblem_ = tr("%1 is not a file").arg(QFileInfo(inputFile_).fileName());
    } else {
      api::InputFileSummary described = api::describeInputFile(inputFile_.toStdString());
      if (described.ok())
        arrays_ = std::move(described.arrays);
      else
        fileProblem_ = qs(described.failure->message);
    }
  }
  rebuild();
}

bool InputShapesTable::hasSymbolicInputs() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return isSymbolic(r.input); });
}

std::map<std::string, std::vector<std::int64_t>> InputShapesTable::givenShapes() const {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  if (!inputFile_.isEmpty())
    return shapes;
  for (const Row& r : rows_)
    if (isSymbolic(r.input) && r.problem.isEmpty())
      shapes[r.input.name] = r.shape;
  return shapes;
}

QString InputShapesTable::problem() const {
  if (!fileProblem_.isEmpty())
    return fileProblem_;
  QStringList problems;
  for (const Row& r : rows_)
    if (!r.problem.isEmpty())
      problems << r.problem;
  if (problems.isEmpty())
    return {};
  return problems.size() == 1
             ? problems.front()
             : tr("%1 (and %n more)", nullptr, problems.size() - 1).arg(problems.front());
}

bool InputShapesTable::setShapeText(const QString& name, const QString& text) {
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    QTableWidgetItem* item = table_->item(r, ShapeColumn);
    if (qs(rows_[r].input.name) == name && item && (item->flags() & Qt::ItemIsEditable)) {
      item->setText(text); // through onItemChanged, as typing does
      return true;
    }
  }
  return false;
}

QString InputShapesTable::shapeText(const QString& name) const {
  for (const Row& r : rows_)
    if (qs(r.input.name) == name)
      return r.text;
  return {};
}

// Fills row.shape and row.problem from the file's array or the typed text.
void InputShapesTable::check(Row& row) const {
  const api::TensorSummary& in = row.input;
  const QString name = qs(in.name);
  row.shape.clear();
  row.problem.clear();
  QStringList tokens;
  if (!inputFile_.isEmpty()) {
    const auto array = std::find_if(arrays_.begin(), arrays_.end(),
                                    [&](const api::TensorSummary& a) { return a.name == in.name; });
    if (array == arrays_.end()) {
      row.text = tr("not in the file");
      row.problem = fileProblem_.isEmpty() ? tr("'%1' is not in the input file").arg(name) : "";
      return;
    }
    row.text = joinDims(array->dims);
    if (array->dtype != in.dtype && in.dtype != "?") {
      row.problem = tr("the file gives '%1' as %2, the model takes %3")
                        .arg(name, qs(array->dtype), qs(in.dtype));
      return;
    }
    for (const std::string& d : array->dims)
      tokens << qs(d);
  } else {
    tokens = row.text.split(QRegularExpression(QStringLiteral("[\\s,x\u00d7\\[\\]()]+")),
                            Qt::SkipEmptyParts);
  }
  if (in.rankKnown && tokens.size() != static_cast<int>(in.dims.size())) {
    row.problem =
        tr("'%1' has %n dims in the model", nullptr, static_cast<int>(in.dims.size())).arg(name) +
        tr(", not %1").arg(tokens.size());
    return;
  }
  for (int i = 0; i < tokens.size(); ++i) {
    bool ok = false;
    const qlonglong value = tokens[i].toLongLong(&ok);
    if (!ok || value < 0 || value > kMaxDim) {
      const bool named = in.rankKnown && tokens[i] == qs(in.dims[i]);
      row.problem = named ? tr("give a number for %1 in '%2'").arg(tokens[i], name)
                          : tr("'%1' in the shape of '%2' is not a dim size").arg(tokens[i], name);
      row.shape.clear();
      return;
    }
    if (in.rankKnown && isNumber(in.dims[i]) && qs(in.dims[i]) != QString::number(value)) {
      row.problem = tr("dim %1 of '%2' is %3 in the model, not %4")
                        .arg(i)
                        .arg(name, qs(in.dims[i]))
                        .arg(value);
      row.shape.clear();
      return;
    }
    row.shape.push_back(value);
  }
}

void InputShapesTable::rebuild() {
  rebuilding_ = true;
  table_->setRowCount(static_cast<int>(rows_.size()));
  const QColor warning = palette().color(QPalette::Highlight).lighter(170);
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    Row& row = rows_[r];
    check(row);
    const bool editable = inputFile_.isEmpty() && isSymbolic(row.input);
    // Items are updated in place: this runs inside the table's own cellChanged.
    const auto itemAt = [&](int column) {
      QTableWidgetItem* item = table_->item(r, column);
      if (!item) {
        item = new QTableWidgetItem;
        table_->setItem(r, column, item);
      }
      return item;
    };
    QTableWidgetItem* name = itemAt(NameColumn);
    QTableWidgetItem* type = itemAt(TypeColumn);
    QTableWidgetItem* shape = itemAt(ShapeColumn);
    name->setText(qs(row.input.name));
    type->setText(qs(row.input.dtype));
    shape->setText(row.text);
    for (QTableWidgetItem* item : {name, type})
      item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    shape->setFlags(editable ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable
                             : Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    name->setToolTip(qs(row.input.typeText));
    shape->setToolTip(!row.problem.isEmpty() ? row.problem
                      : editable
                          ? tr("Model: %1. Double-click to change.").arg(qs(row.input.typeText))
                      : inputFile_.isEmpty() ? tr("Fixed by the model")
                                             : tr("From the input file"));
    shape->setBackground(row.problem.isEmpty() ? QBrush() : QBrush(warning));
    shape->setIcon(row.problem.isEmpty() ? QIcon()
                                         : style()->standardIcon(QStyle::SP_MessageBoxWarning));
    shape->setForeground(row.problem.isEmpty() && !editable
                             ? QBrush(palette().color(QPalette::PlaceholderText))
                             : QBrush());
  }
  // Every row when there are few; a scroll bar beyond five.
  const int shown = std::clamp(static_cast<int>(rows_.size()), 1, 5);
  table_->setFixedHeight(table_->horizontalHeader()->sizeHint().height() +
                         shown * table_->verticalHeader()->defaultSectionSize() +
                         2 * table_->frameWidth());
  const QString problem = this->problem();
  note_->setText(problem.isEmpty() ? QString() : tr("To run: %1.").arg(problem));
  note_->setVisible(!problem.isEmpty());
  rebuilding_ = false;
  emit changed();
}

void InputShapesTable::onItemChanged(int row, int column) {
  if (rebuilding_ || column != ShapeColumn || row < 0 || row >= static_cast<int>(rows_.size()))
    return;
  rows_[row].text = table_->item(row, column)->text();
  rebuild();
}

} // namespace lathe::workbench
