// MainWindow's choice of graph in the central view: the final graph (what compiles, the one
// the model tree lists), the model as its ONNX file has it, or the graph after a pass.
#include "app/workbench/main_window.h"
#include "app/workbench/main_window_text.h"
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
      tr("Show the model as its ONNX file has it, before any graph pass"));
  finalGraphAction_ = new QAction(tr("&Optimised Graph"), group);
  finalGraphAction_->setObjectName(QStringLiteral("finalGraphAction"));
  finalGraphAction_->setCheckable(true);
  finalGraphAction_->setChecked(true);
  finalGraphAction_->setStatusTip(
      tr("Show the graph after every pass: what is compiled, and what the model tree lists"));
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
    return {model, &model->imported};
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
  graphBanner_->setText(
      tr("The model as authored: %1 nodes as %2 has them, before the %3 passes that change it "
         "\u2014 <a href=\"final\">Show the optimised graph</a> (%4 nodes, what is compiled)")
          .arg(model->imported.nodes.size())
          .arg(QFileInfo(doc_->path()).fileName().toHtmlEscaped())
          .arg(changed)
          .arg(model->final.nodes.size()));
  graphBanner_->show();
  // The selected node of the tree, if the file has a node of that name.
  if (const int selected = doc_->selectedNode();
      selected >= 0 && selected < static_cast<int>(model->final.nodes.size())) {
    const std::string& name = model->final.nodes[selected].name;
    for (int n = 0; n < static_cast<int>(model->imported.nodes.size()); ++n)
      if (!name.empty() && model->imported.nodes[n].name == name) {
        graph_->selectNode(n);
        break;
      }
  }
}

} // namespace lathe::workbench
