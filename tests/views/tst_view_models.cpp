// The views/ item models over hand-built snapshots: structure checked by
// QAbstractItemModelTester, content by explicit assertions. No window, no engine.

#include "views/models/kernel_list_model.h"
#include "views/models/model_tree_model.h"
#include "views/models/model_tree_proxy.h"
#include "views/models/node_properties_model.h"
#include "views/models/pass_list_model.h"

#include <QAbstractItemModelTester>
#include <QIcon>
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace lathe;
using views::KernelListModel;
using views::ModelTreeModel;
using views::NodePropertiesModel;
using views::PassListModel;

namespace {

api::TensorSummary tensor(const std::string& name, const std::string& dims) {
  api::TensorSummary t;
  t.name = name;
  t.dtype = "f32";
  t.typeText = "f32[" + dims + "]";
  return t;
}

api::NodeSummary node(const std::string& name, const std::string& op, const std::string& category,
                      std::vector<std::string> inputs, std::vector<std::string> outputs) {
  api::NodeSummary n;
  n.name = name;
  n.opType = op;
  n.category = category;
  n.summary = op + " summary";
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.irLine = "%" + n.outputs.front() + " = " + op + "(...)";
  return n;
}

// image -> conv1 (Conv) -> relu1 (Relu) -> unnamed Flatten -> fc (Gemm, no bias) -> logits.
// With `fused`, conv1 and relu1 form kernel 0.
std::shared_ptr<api::GraphSnapshot> makeGraph(bool fused) {
  auto g = std::make_shared<api::GraphSnapshot>();
  g->name = "tiny";
  g->opset = 13;
  g->inputs = {tensor("image", "1,3,8,8")};
  g->outputs = {tensor("logits", "1,10")};
  g->constants = {
      {tensor("w", "4,3,3,3"), 432}, {tensor("b", "4"), 16}, {tensor("fc.w", "10,256"), 10240}};
  g->nodes = {node("conv1", "Conv", "convolution", {"image", "w", "b"}, {"c1"}),
              node("relu1", "Relu", "elementwise", {"c1"}, {"r1"}),
              node("", "Flatten", "data movement", {"r1"}, {"f"}),
              node("fc", "Gemm", "matmul", {"f", "fc.w", ""}, {"logits"})};
  g->nodes[0].attributes = {{"kernel_shape", "ints", "[3, 3]"}, {"pads", "ints", "[1, 1, 1, 1]"}};
  for (const auto& t : {tensor("image", "1,3,8,8"), tensor("w", "4,3,3,3"), tensor("b", "4"),
                        tensor("c1", "1,4,8,8"), tensor("r1", "1,4,8,8"), tensor("f", "1,256"),
                        tensor("fc.w", "10,256"), tensor("logits", "1,10")})
    g->values[t.name] = t;
  if (fused) {
    g->groups = {{"fused_conv_relu_0", "Conv+Relu", {0, 1}}};
    g->nodes[0].group = 0;
    g->nodes[1].group = 0;
  }
  g->irText = "graph tiny { ... }";
  return g;
}

QString text(const QAbstractItemModel& m, const QModelIndex& index, int column = 0) {
  return m.index(index.row(), column, index.parent()).data().toString();
}

// Value of the properties row whose Property column reads `property`.
QString propertyValue(const NodePropertiesModel& m, const QString& property) {
  for (int row = 0; row < m.rowCount(); ++row) {
    if (m.index(row, NodePropertiesModel::PropertyColumn).data().toString() == property)
      return m.index(row, NodePropertiesModel::ValueColumn).data().toString();
  }
  return QStringLiteral("<no row '%1'>").arg(property);
}

std::shared_ptr<std::vector<api::PassRecord>> makePasses() {
  auto passes = std::make_shared<std::vector<api::PassRecord>>(3);
  (*passes)[0] = {"infer-shapes", "infer every value's type", 10.5, false, "before0", "after0", {}};
  (*passes)[1] = {"fold-batchnorm", "fold BN into conv", 9.25, true, "before1", "after1", {}};
  (*passes)[2] = {"fuse", "fuse elementwise epilogues", 100.0, true, "before2", "after2", {}};
  return passes;
}

} // namespace

class TestViewModels : public QObject {
  Q_OBJECT

private slots:
  void treeIsEmptyWithoutSnapshot();
  void treeListsSectionsAndFlatNodes();
  void treeGroupsFusedNodes();
  void treeSurvivesResets();
  void treeSearchKeepsMatchesAndAncestors();
  void treeSortKeepsSectionsAndSortsSizesNumerically();
  void propertiesShowOneNode();
  void propertiesClearForInvalidNode();
  void passListShowsTimesAndChanges();
  void passListSortsTimeNumerically();
  void kernelListShowsKernels();
  void kernelListSortsLinesNumerically();
};

void TestViewModels::treeIsEmptyWithoutSnapshot() {
  ModelTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.columnCount(), int(ModelTreeModel::ColumnCount));
  QVERIFY(!model.indexForNode(0).isValid());
  QCOMPARE(model.headerData(ModelTreeModel::TypeColumn, Qt::Horizontal).toString(),
           QStringLiteral("Op / Type"));
}

void TestViewModels::treeListsSectionsAndFlatNodes() {
  ModelTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSnapshot(makeGraph(false));

  QCOMPARE(model.rowCount(), 4);
  QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("Inputs (1)"));
  QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("Outputs (1)"));
  QCOMPARE(model.index(2, 0).data().toString(), QStringLiteral("Nodes (4)"));
  QCOMPARE(model.index(3, 0).data().toString(), QStringLiteral("Constants (3)"));
  QVERIFY(model.index(0, 0).data(Qt::FontRole).value<QFont>().bold());

  const QModelIndex input = model.index(0, 0, model.sectionIndex(ModelTreeModel::InputsSection));
  QCOMPARE(text(model, input), QStringLiteral("image"));
  QCOMPARE(text(model, input, ModelTreeModel::TypeColumn), QStringLiteral("f32"));
  QCOMPARE(text(model, input, ModelTreeModel::ShapeColumn), QStringLiteral("f32[1,3,8,8]"));
  QCOMPARE(text(model, input, ModelTreeModel::DetailsColumn), QStringLiteral("\u2192 conv1"));
  const QModelIndex output = model.index(0, 0, model.sectionIndex(ModelTreeModel::OutputsSection));
  QCOMPARE(text(model, output, ModelTreeModel::DetailsColumn), QStringLiteral("\u2190 fc"));

  const QModelIndex nodes = model.sectionIndex(ModelTreeModel::NodesSection);
  QCOMPARE(model.rowCount(nodes), 4);
  const QModelIndex conv = model.index(0, 0, nodes);
  QCOMPARE(conv, model.indexForNode(0));
  QCOMPARE(conv.data(ModelTreeModel::NodeIndexRole).toInt(), 0);
  QCOMPARE(conv.data(ModelTreeModel::ItemKindRole).toInt(), int(ModelTreeModel::ItemKind::Node));
  QCOMPARE(conv.data(ModelTreeModel::CategoryRole).toString(), QStringLiteral("convolution"));
  QVERIFY(!conv.data(Qt::DecorationRole).value<QIcon>().isNull());
  QCOMPARE(text(model, conv), QStringLiteral("conv1"));
  QCOMPARE(text(model, conv, ModelTreeModel::TypeColumn), QStringLiteral("Conv"));
  QCOMPARE(text(model, conv, ModelTreeModel::ShapeColumn), QStringLiteral("f32[1,4,8,8]"));
  QCOMPARE(text(model, conv, ModelTreeModel::DetailsColumn),
           QStringLiteral("image, w, b \u2192 c1 \u00b7 convolution"));
  QVERIFY(conv.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Conv summary")));
  QCOMPARE(model.rowCount(conv), 0);

  // Unnamed nodes get a made-up label, in italics; absent optional inputs show a dash.
  const QModelIndex flatten = model.indexForNode(2);
  QCOMPARE(text(model, flatten), QStringLiteral("Flatten #2"));
  QVERIFY(flatten.data(Qt::FontRole).value<QFont>().italic());
  QCOMPARE(text(model, model.indexForNode(3), ModelTreeModel::DetailsColumn),
           QStringLiteral("f, fc.w, \u2014 \u2192 logits \u00b7 matmul"));

  const QModelIndex constants = model.sectionIndex(ModelTreeModel::ConstantsSection);
  QCOMPARE(model.rowCount(constants), 3);
  const QModelIndex weight = model.index(0, ModelTreeModel::DetailsColumn, constants);
  QCOMPARE(weight.data(ModelTreeModel::SortRole).toULongLong(), 432ull);
  QVERIFY(!weight.data().toString().isEmpty());
  QCOMPARE(model.index(0, 0, constants).data(ModelTreeModel::NodeIndexRole).toInt(), -1);
}

void TestViewModels::treeGroupsFusedNodes() {
  ModelTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSnapshot(makeGraph(true));

  const QModelIndex nodes = model.sectionIndex(ModelTreeModel::NodesSection);
  QCOMPARE(nodes.data().toString(), QStringLiteral("Nodes (4)")); // counts nodes, not rows
  QCOMPARE(model.rowCount(nodes), 3);                             // kernel, Flatten, fc

  const QModelIndex group = model.index(0, 0, nodes);
  QCOMPARE(group.data(ModelTreeModel::ItemKindRole).toInt(), int(ModelTreeModel::ItemKind::Group));
  QCOMPARE(group.data(ModelTreeModel::NodeIndexRole).toInt(), -1);
  QCOMPARE(text(model, group), QStringLiteral("fused_conv_relu_0"));
  QCOMPARE(text(model, group, ModelTreeModel::TypeColumn), QStringLiteral("Conv+Relu"));
  QCOMPARE(text(model, group, ModelTreeModel::ShapeColumn), QStringLiteral("f32[1,4,8,8]"));
  QCOMPARE(group.data(ModelTreeModel::CategoryRole).toString(), QStringLiteral("convolution"));
  QCOMPARE(model.rowCount(group), 2);
  QCOMPARE(model.index(0, 0, group).data(ModelTreeModel::NodeIndexRole).toInt(), 0);
  QCOMPARE(model.index(1, 0, group).data(ModelTreeModel::NodeIndexRole).toInt(), 1);

  QCOMPARE(model.indexForNode(1).parent(), group);
  QCOMPARE(model.indexForNode(2).parent(), nodes);
  QCOMPARE(model.indexForNode(2).row(), 1);
  QVERIFY(!model.indexForNode(4).isValid());
  QVERIFY(!model.indexForNode(-1).isValid());
}

void TestViewModels::treeSurvivesResets() {
  ModelTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSnapshot(makeGraph(true));
  model.setSnapshot(makeGraph(false));
  QCOMPARE(model.rowCount(model.sectionIndex(ModelTreeModel::NodesSection)), 4);
  model.setSnapshot(std::make_shared<api::GraphSnapshot>());
  QCOMPARE(model.rowCount(), 4);
  QCOMPARE(model.index(2, 0).data().toString(), QStringLiteral("Nodes (0)"));
  model.setSnapshot(nullptr);
  QCOMPARE(model.rowCount(), 0);
}

void TestViewModels::treeSearchKeepsMatchesAndAncestors() {
  ModelTreeModel model;
  views::ModelTreeProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSnapshot(makeGraph(true));
  QCOMPARE(proxy.rowCount(), 4);

  proxy.setSearchText(QStringLiteral("GEMM")); // case-insensitive, matches the op column
  QCOMPARE(proxy.rowCount(), 1);
  const QModelIndex nodes = proxy.index(0, 0);
  QCOMPARE(nodes.data().toString(), QStringLiteral("Nodes (4)"));
  QCOMPARE(proxy.rowCount(nodes), 1);
  QCOMPARE(proxy.index(0, 0, nodes).data(ModelTreeModel::NodeIndexRole).toInt(), 3);

  // A node inside a kernel keeps the kernel row as its ancestor.
  proxy.setSearchText(QStringLiteral("relu1"));
  const QModelIndex group = proxy.index(0, 0, proxy.index(0, 0));
  QCOMPARE(group.data().toString(), QStringLiteral("fused_conv_relu_0"));
  QCOMPARE(proxy.rowCount(group), 1);

  // A matching kernel shows all of its nodes.
  proxy.setSearchText(QStringLiteral("fused_conv"));
  QCOMPARE(proxy.rowCount(proxy.index(0, 0, proxy.index(0, 0))), 2);

  proxy.setSearchText(QStringLiteral("  "));
  QCOMPARE(proxy.rowCount(), 4);
  proxy.setSearchText(QStringLiteral("no-such-thing"));
  QCOMPARE(proxy.rowCount(), 0);
}

void TestViewModels::treeSortKeepsSectionsAndSortsSizesNumerically() {
  ModelTreeModel model;
  views::ModelTreeProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSnapshot(makeGraph(false));

  proxy.sort(ModelTreeModel::NameColumn, Qt::DescendingOrder);
  QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("Inputs (1)"));
  QCOMPARE(proxy.index(3, 0).data().toString(), QStringLiteral("Constants (3)"));
  const QModelIndex nodes = proxy.index(2, 0);
  QCOMPARE(proxy.index(0, 0, nodes).data().toString(), QStringLiteral("relu1"));

  // 16 B < 432 B < 10 KiB, though "10.0 KiB" < "16 bytes" < "432 bytes" as text.
  proxy.sort(ModelTreeModel::DetailsColumn, Qt::AscendingOrder);
  const QModelIndex constants = proxy.index(3, 0);
  QCOMPARE(proxy.index(0, 0, constants).data().toString(), QStringLiteral("b"));
  QCOMPARE(proxy.index(1, 0, constants).data().toString(), QStringLiteral("w"));
  QCOMPARE(proxy.index(2, 0, constants).data().toString(), QStringLiteral("fc.w"));
}

void TestViewModels::propertiesShowOneNode() {
  NodePropertiesModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model.rowCount(), 0);
  model.setNode(makeGraph(true), 0);

  QCOMPARE(model.columnCount(), 2);
  QCOMPARE(model.node(), 0);
  QCOMPARE(propertyValue(model, QStringLiteral("Name")), QStringLiteral("conv1"));
  QCOMPARE(propertyValue(model, QStringLiteral("Op")), QStringLiteral("Conv"));
  QCOMPARE(propertyValue(model, QStringLiteral("Category")), QStringLiteral("convolution"));
  QCOMPARE(propertyValue(model, QStringLiteral("Summary")), QStringLiteral("Conv summary"));
  QCOMPARE(propertyValue(model, QStringLiteral("Fused kernel")),
           QStringLiteral("fused_conv_relu_0 (Conv+Relu)"));
  QCOMPARE(propertyValue(model, QStringLiteral("IR")), QStringLiteral("%c1 = Conv(...)"));
  QCOMPARE(propertyValue(model, QStringLiteral("image")), QStringLiteral("f32[1,3,8,8]"));
  QCOMPARE(propertyValue(model, QStringLiteral("w")), QStringLiteral("f32[4,3,3,3]"));
  QCOMPARE(propertyValue(model, QStringLiteral("c1")), QStringLiteral("f32[1,4,8,8]"));
  QCOMPARE(propertyValue(model, QStringLiteral("kernel_shape")), QStringLiteral("[3, 3]"));
  QCOMPARE(propertyValue(model, QStringLiteral("pads")), QStringLiteral("[1, 1, 1, 1]"));

  QStringList sections;
  for (int row = 0; row < model.rowCount(); ++row) {
    const QModelIndex index = model.index(row, 0);
    if (index.data(NodePropertiesModel::RowKindRole).toInt() ==
        int(NodePropertiesModel::RowKind::Section)) {
      sections << index.data().toString();
      QVERIFY(index.data(Qt::FontRole).value<QFont>().bold());
    }
  }
  QCOMPARE(sections, (QStringList{"Inputs (3)", "Outputs (1)", "Attributes (2)"}));

  // Gemm without its optional bias; an unnamed node.
  model.setNode(makeGraph(false), 3);
  QCOMPARE(propertyValue(model, QStringLiteral("(absent)")), QStringLiteral("\u2014"));
  QCOMPARE(propertyValue(model, QStringLiteral("Fused kernel")),
           QStringLiteral("<no row 'Fused kernel'>"));
  model.setNode(makeGraph(false), 2);
  QCOMPARE(propertyValue(model, QStringLiteral("Name")), QStringLiteral("(unnamed, #2)"));
}

void TestViewModels::propertiesClearForInvalidNode() {
  NodePropertiesModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setNode(makeGraph(false), 1);
  QVERIFY(model.rowCount() > 0);
  model.setNode(makeGraph(false), 99);
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.node(), -1);
  model.setNode(makeGraph(false), 1);
  model.clear();
  QCOMPARE(model.rowCount(), 0);
  model.setNode(nullptr, 0);
  QCOMPARE(model.rowCount(), 0);
}

void TestViewModels::passListShowsTimesAndChanges() {
  PassListModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model.rowCount(), 0);
  model.setPasses(makePasses());

  QCOMPARE(model.rowCount(), 3);
  QCOMPARE(model.columnCount(), 3);
  QCOMPARE(model.headerData(PassListModel::TimeColumn, Qt::Horizontal).toString(),
           QStringLiteral("Time (ms)"));
  QCOMPARE(model.index(0, PassListModel::PassColumn).data().toString(),
           QStringLiteral("infer-shapes"));
  QCOMPARE(model.index(0, PassListModel::TimeColumn).data().toString(), QStringLiteral("10.50"));
  QCOMPARE(model.index(2, PassListModel::TimeColumn).data().toString(), QStringLiteral("100.00"));
  QCOMPARE(model.index(0, PassListModel::TimeColumn).data(Qt::TextAlignmentRole).toInt(),
           int(Qt::AlignRight | Qt::AlignVCenter));
  QCOMPARE(model.index(0, PassListModel::ChangedColumn).data().toString(), QStringLiteral("no"));
  QCOMPARE(model.index(1, PassListModel::ChangedColumn).data().toString(), QStringLiteral("yes"));
  QCOMPARE(model.index(1, 0).data(PassListModel::ChangedRole).toBool(), true);
  QCOMPARE(model.index(1, 0).data(Qt::ToolTipRole).toString(), QStringLiteral("fold BN into conv"));
  QCOMPARE(model.index(2, 1).data(PassListModel::PassIndexRole).toInt(), 2);
  QVERIFY(model.index(0, 0).data(Qt::ForegroundRole).isValid()); // unchanged passes fade
  QVERIFY(!model.index(1, 0).data(Qt::ForegroundRole).isValid());

  QCOMPARE(model.pass(1)->irAfter, std::string("after1"));
  QVERIFY(!model.pass(3));
  QVERIFY(!model.pass(-1));

  model.setPasses(nullptr);
  QCOMPARE(model.rowCount(), 0);
}

void TestViewModels::passListSortsTimeNumerically() {
  PassListModel model;
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model);
  proxy.setSortRole(PassListModel::SortRole);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setPasses(makePasses());

  // As text "100.00" < "10.50" < "9.25"; as numbers the other way round.
  proxy.sort(PassListModel::TimeColumn, Qt::AscendingOrder);
  QCOMPARE(proxy.index(0, PassListModel::TimeColumn).data().toString(), QStringLiteral("9.25"));
  QCOMPARE(proxy.index(1, PassListModel::TimeColumn).data().toString(), QStringLiteral("10.50"));
  QCOMPARE(proxy.index(2, PassListModel::TimeColumn).data().toString(), QStringLiteral("100.00"));

  // The Pass column sorts by pipeline position.
  proxy.sort(PassListModel::PassColumn, Qt::DescendingOrder);
  QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("fuse"));
  QCOMPARE(proxy.index(2, 0).data().toString(), QStringLiteral("infer-shapes"));

  proxy.setFilterRole(PassListModel::ChangedRole);
  proxy.setFilterFixedString(QStringLiteral("true"));
  QCOMPARE(proxy.rowCount(), 2);
}

namespace {

// Three kernels: a fused conv+relu (12 lines of loop IR), an unnamed node's copy (2 lines,
// no trailing newline) and a gemm (3 lines).
std::shared_ptr<api::CompileReport> makeCompileReport() {
  auto r = std::make_shared<api::CompileReport>();
  r->target = "llvm";
  r->lowerMilliseconds = 1.5;
  r->codegenMilliseconds = 20.25;
  r->arenaBytes = 4096;
  auto kernel = [](std::string name, std::vector<std::string> nodes, int lines) {
    api::KernelReport k;
    k.name = std::move(name);
    k.nodes = std::move(nodes);
    for (int i = 0; i < lines; ++i)
      k.loopIr += "line\n";
    k.llvmIr = "define void @" + k.name + "()";
    k.assembly = k.name + ":\n  ret\n";
    return k;
  };
  r->kernels = {kernel("fused_conv_relu_0", {"conv1", "relu1"}, 12), kernel("copy_1", {""}, 0),
                kernel("gemm_2", {"fc"}, 3)};
  r->kernels[1].loopIr = "kernel copy_1 {\n}";
  r->kernels[2].schedule = "split(n, 16)\nvectorize(n.i)\n";
  r->kernels[1].schedule = "vectorize(i)\n"; // from tuning records
  r->kernels[1].tunedTrials = 12;
  r->kernels[0].codeBytes = 1234;
  r->kernels[1].codeBytes = 20480;
  return r;
}

} // namespace

void TestViewModels::kernelListShowsKernels() {
  KernelListModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.kernelForNode("conv1"), -1);
  model.setReport(makeCompileReport());

  QCOMPARE(model.rowCount(), 3);
  QCOMPARE(model.columnCount(), 5);
  QCOMPARE(model.headerData(KernelListModel::CodeColumn, Qt::Horizontal).toString(),
           QStringLiteral("Code"));
  QCOMPARE(model.index(0, KernelListModel::CodeColumn).data().toString(),
           QLocale().toString(1234) + QStringLiteral(" B"));
  QCOMPARE(model.index(1, KernelListModel::CodeColumn).data().toString(),
           QStringLiteral("20.0 KiB"));
  QCOMPARE(model.index(2, KernelListModel::CodeColumn).data().toString(), QString());
  QCOMPARE(
      model.index(1, KernelListModel::CodeColumn).data(KernelListModel::SortRole).toULongLong(),
      20480ull);
  QCOMPARE(model.index(0, KernelListModel::ScheduleColumn).data().toString(),
           QStringLiteral("default"));
  QCOMPARE(model.index(2, KernelListModel::ScheduleColumn).data().toString(),
           QStringLiteral("2 step(s)"));
  QCOMPARE(model.index(2, KernelListModel::ScheduleColumn).data(Qt::ToolTipRole).toString(),
           QStringLiteral("split(n, 16)\nvectorize(n.i)"));
  QCOMPARE(model.index(1, KernelListModel::ScheduleColumn).data().toString(),
           QStringLiteral("tuned (12 trial(s))"));
  QCOMPARE(model.headerData(KernelListModel::NodesColumn, Qt::Horizontal).toString(),
           QStringLiteral("ONNX nodes"));
  QCOMPARE(model.index(0, KernelListModel::KernelColumn).data().toString(),
           QStringLiteral("fused_conv_relu_0"));
  QCOMPARE(model.index(0, KernelListModel::NodesColumn).data().toString(),
           QStringLiteral("conv1, relu1"));
  QCOMPARE(model.index(1, KernelListModel::NodesColumn).data().toString(),
           QStringLiteral("(unnamed)"));
  QCOMPARE(model.index(0, KernelListModel::LinesColumn).data().toInt(), 12);
  QCOMPARE(model.index(1, KernelListModel::LinesColumn).data().toInt(), 2);
  QCOMPARE(model.index(2, KernelListModel::LinesColumn).data().toInt(), 3);
  QCOMPARE(model.index(0, KernelListModel::LinesColumn).data(Qt::TextAlignmentRole).toInt(),
           int(Qt::AlignRight | Qt::AlignVCenter));
  QCOMPARE(model.index(0, 0).data(KernelListModel::NodeCountRole).toInt(), 2);
  QCOMPARE(model.index(2, 1).data(KernelListModel::KernelIndexRole).toInt(), 2);
  QCOMPARE(model.index(0, KernelListModel::NodesColumn).data(Qt::ToolTipRole).toString(),
           QStringLiteral("conv1\nrelu1"));

  QCOMPARE(model.kernelForNode("relu1"), 0);
  QCOMPARE(model.kernelForNode("fc"), 2);
  QCOMPARE(model.kernelForNode(""), -1); // unnamed nodes match nothing
  QCOMPARE(model.kernelForNode("nope"), -1);
  QCOMPARE(model.kernel(2)->assembly, std::string("gemm_2:\n  ret\n"));
  QVERIFY(!model.kernel(3));
  QVERIFY(!model.kernel(-1));

  QCOMPARE(KernelListModel::lineCount(""), 0);
  QCOMPARE(KernelListModel::lineCount("a"), 1);
  QCOMPARE(KernelListModel::lineCount("a\n"), 1);
  QCOMPARE(KernelListModel::lineCount("a\n\nb"), 3);

  model.setReport(makeCompileReport()); // a second reset keeps the tester happy
  QCOMPARE(model.rowCount(), 3);
  model.setReport(nullptr);
  QCOMPARE(model.rowCount(), 0);
  QVERIFY(!model.kernel(0));
}

void TestViewModels::kernelListSortsLinesNumerically() {
  KernelListModel model;
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model);
  proxy.setSortRole(KernelListModel::SortRole);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setReport(makeCompileReport());

  // As text "12" < "2" < "3"; as numbers 2 < 3 < 12.
  proxy.sort(KernelListModel::LinesColumn, Qt::AscendingOrder);
  QCOMPARE(proxy.index(0, KernelListModel::LinesColumn).data().toInt(), 2);
  QCOMPARE(proxy.index(1, KernelListModel::LinesColumn).data().toInt(), 3);
  QCOMPARE(proxy.index(2, KernelListModel::LinesColumn).data().toInt(), 12);

  // The Kernel column sorts by position in the plan.
  proxy.sort(KernelListModel::KernelColumn, Qt::DescendingOrder);
  QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("gemm_2"));
  QCOMPARE(proxy.index(2, 0).data().toString(), QStringLiteral("fused_conv_relu_0"));
}

QTEST_MAIN(TestViewModels)
#include "tst_view_models.moc"
