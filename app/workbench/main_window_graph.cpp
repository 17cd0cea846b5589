// MainWindow's choice of graph in the central view and the model tree: the model as its ONNX
// file has it, the final graph (what compiles), or the graph after a pass.
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
#include "app/workbench/model_browser.h"
#include "app/workbench/properties_panel.h"
#include "app/workbench/workbench_document.h"
#include "views/graph/graph_view.h"

#include <QAction>
#include <QActionGroup>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>

namespace lathe::workbench {

void MainWindow::createGraphViewActions(QMenu* view) {
  auto* group = new QActionGroup(this);
  group->setExclusionPolicy(QActionGroup::ExclusionPolicy::ExclusiveOptional);
  authoredGraphAction_ = new QAction(tr("Graph as &Authored"), group);
  authoredGraphAction_->setObjectName(QStringLiteral("authoredGraphAction"));
  authoredGraphAction_->setCheckable(true);
  authoredGraphAction_->setStatusTip(
      tr("Show the model as its file has it, one node per operator, before any graph pass"));
  finalGraphAction_ = new QAction(tr("&Optimised Graph"), group);
  finalGraphAction_->setObjectName(QStringLiteral("finalGraphAction"));
  finalGraphAction_->setCheckable(true);
  finalGraphAction_->setChecked(true);
  finalGraphAction_->setStatusTip(tr("Show the graph after every pass: what is compiled"));
  connect(authoredGraphAction_, &QAction::triggered, this, &MainWindow::showAuthoredGraph);
  connect(finalGraphAction_, &QAction::triggered, this, &MainWindow::showFinalGraph);
  view->addAction(authoredGraphAction_);
  view->addAction(finalGraphAction_);
  view->addSeparator();
}

std::shared_ptr<const api::GraphSnapshot> MainWindow::shownGraph() const {
  const auto& model = doc_->model();
  if (!model)
    return nullptr;
  if (graphPass_ == kAuthoredGraph)
    return model->authored ? model->authored
                           : std::shared_ptr<const api::GraphSnapshot>(model, &model->imported);
  if (graphPass_ >= 0 && graphPass_ < static_cast<int>(model->passes.size()))
    return model->passes[graphPass_].graphAfter;
  return {model, &model->final};
}

void MainWindow::showAuthoredGraph() {
  const auto& model = doc_->model();
  if (!model)
    return;
  graphPass_ = kAuthoredGraph;
  authoredGraphAction_->setChecked(true);
  graph_->setSnapshot(shownGraph());
  graph_->highlightNodes({});
  std::size_t changed = 0;
  for (const api::PassRecord& p : model->passes)
    changed += p.changed ? 1 : 0;
  const QString file = QFileInfo(doc_->path()).fileName().toHtmlEscaped();
  const QString optimised =
      tr("<a href=\"final\">Show the optimised graph</a> (%1 nodes, what is compiled)")
          .arg(model->final.nodes.size());
  if (model->authored)
    graphBanner_->setText(
        tr("The model as authored: %1 operators as %2 has them, which Lathe imported as %3 "
           "graph IR nodes, before the %4 passes that change them \u2014 %5")
            .arg(model->authored->nodes.size())
            .arg(file)
            .arg(model->imported.nodes.size())
            .arg(changed)
            .arg(optimised));
  else
    graphBanner_->setText(
        tr("The model as authored: %1 nodes as %2 has them, before the %3 passes that change "
           "it \u2014 %4")
            .arg(model->imported.nodes.size())
            .arg(file)
            .arg(changed)
            .arg(optimised));
  graphBanner_->show();
  listShownGraph();
}

namespace {

// The node of `to` named like node `node` of `from`, or -1 (no such node, or no name).
int sameNode(const api::GraphSnapshot& from, int node, const api::GraphSnapshot& to) {
  if (node < 0 || node >= static_cast<int>(from.nodes.size()) || from.nodes[node].name.empty())
    return -1;
  for (int n = 0; n < static_cast<int>(to.nodes.size()); ++n)
    if (to.nodes[n].name == from.nodes[node].name)
      return n;
  return -1;
}

} // namespace

// The model tree lists the graph the graph view draws, so that a row and a drawn node are the
// same node; the selected node stays selected where the shown graph has it.
void MainWindow::listShownGraph() {
  const auto& model = doc_->model();
  const std::shared_ptr<const api::GraphSnapshot> shown = shownGraph();
  if (!model || !shown) {
    browser_->setSnapshot(nullptr);
    return;
  }
  QString caption;
  if (graphPass_ == kAuthoredGraph)
    caption =
        model->authored
            ? tr("<b>As authored</b> \u00b7 %1 %2 operators, before any pass")
                  .arg(shown->nodes.size())
                  .arg(qs(model->format))
            : tr("<b>As authored</b> \u00b7 %1 nodes, before any pass").arg(shown->nodes.size());
  else if (graphPass_ == kFinalGraph)
    caption = tr("<b>Optimised</b> \u00b7 %1 nodes, what is compiled").arg(shown->nodes.size());
  else
    caption = tr("<b>After pass %1</b> \u00b7 %2 \u00b7 %3 nodes")
                  .arg(graphPass_ + 1)
                  .arg(qs(model->passes[static_cast<std::size_t>(graphPass_)].name).toHtmlEscaped())
                  .arg(shown->nodes.size());
  const int selected = doc_->selectedNode(); // in the final graph
  listingGraph_ = true;                      // the tree's reset is not a selection by the user
  browser_->setSnapshot(shown, caption);
  listingGraph_ = false;
  const int same = graphPass_ == kFinalGraph ? selected : sameNode(model->final, selected, *shown);
  // The tree's nodeSelected selects it in the graph view too; what the search hides stays
  // hidden (and selected in the graph only).
  if (same < 0 || !browser_->selectNode(same, false))
    graph_->selectNode(same);
}

// A row of the tree: a node of the shown graph; the document keeps the final graph's node of
// that name (-1 if the passes removed it), which is what the Code panel follows.
void MainWindow::onTreeNodeSelected(int node) {
  if (!listingGraph_)
    applyNodeSelection(node);
}

void MainWindow::applyNodeSelection(int node) {
  const auto& model = doc_->model();
  if (!model)
    return;
  const std::shared_ptr<const api::GraphSnapshot> shown = browser_->snapshot();
  if (!shown)
    return;
  doc_->setSelectedNode(graphPass_ == kFinalGraph ? node : sameNode(*shown, node, model->final));
  properties_->setNode(shown, node);
  graph_->selectNode(node);
  syncKernelToNode();
}

void MainWindow::onGraphNodeSelected(int node) {
  if (node < 0 || !doc_->model())
    return; // a click on empty space keeps what the panels show
  // The tree's nodeSelected updates everything else; a node its search hides stays hidden
  // there (the search is the user's) and is selected everywhere else.
  if (!browser_->selectNode(node, false))
    applyNodeSelection(node);
  if (graphPass_ != kFinalGraph)
    showPanel(Panel::Properties);
}

// `node` indexes the final graph: selected where the shown graph has a node of its name,
// otherwise in the final graph.
bool MainWindow::selectNode(int node) {
  const auto& model = doc_->model();
  if (model && graphPass_ != kFinalGraph) {
    if (const auto shown = shownGraph()) {
      if (const int same = sameNode(model->final, node, *shown); same >= 0)
        return browser_->selectNode(same);
    }
    showFinalGraph();
  }
  return browser_->selectNode(node);
}

} // namespace lathe::workbench
