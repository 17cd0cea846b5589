#include "views/common/code_view.h"

namespace lathe::views {

CodeEditor* createCodeView(QWidget* parent, CodeLanguage language) {
  auto* view = new CodeEditor(parent);
  view->setLanguage(language);
  return view;
}

} // namespace lathe::views
