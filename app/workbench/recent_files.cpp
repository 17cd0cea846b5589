#include "app/workbench/recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <utility>

namespace lathe::workbench {
namespace {} // namespace

RecentFiles::RecentFiles(QMenu* menu, QObject* parent, QString settingsKey)
    : QObject(parent), menu_(menu), key_(std::move(settingsKey)) {
  menu_->setToolTipsVisible(true);
  // Rebuilt on every show so that files deleted since are greyed out.
  connect(menu_, &QMenu::aboutToShow, this, &RecentFiles::rebuildMenu);
  rebuildMenu();
}

QStringList RecentFiles::files() const {
  QStringList files = QSettings().value(key_).toStringList();
  files.removeAll(QString());
  return files.mid(0, kMaxFiles);
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList list = files();
  list.removeAll(absolute);
  list.prepend(absolute);
  store(list.mid(0, kMaxFiles));
}

void RecentFiles::clear() {
  store({});
}

void RecentFiles::store(const QStringList& files) {
  QSettings().setValue(key_, files);
  // The entries are rebuilt on the next aboutToShow; rebuilding here could delete the very
  // action ("Clear Recent Files") whose signal is running.
  menu_->menuAction()->setEnabled(!files.isEmpty());
}

void RecentFiles::rebuildMenu() {
  menu_->clear();
  const QStringList list = files();
  menu_->menuAction()->setEnabled(!list.isEmpty());
  for (int i = 0; i < list.size(); ++i) {
    const QString& path = list[i];
    const QFileInfo info(path);
    // "&1 name" gives keyboard access; the folder is in the tooltip, names are usually enough.
    QAction* action = menu_->addAction(
        QStringLiteral("&%1  %2").arg(i + 1).arg(info.fileName().replace('&', "&&")));
    action->setToolTip(QDir::toNativeSeparators(path));
    action->setStatusTip(QDir::toNativeSeparators(path));
    action->setEnabled(info.exists());
    connect(action, &QAction::triggered, this, [this, path] { emit openRequested(path); });
  }
  if (list.isEmpty())
    return;
  menu_->addSeparator();
  connect(menu_->addAction(tr("Clear Recent Files")), &QAction::triggered, this,
          &RecentFiles::clear);
}

} // namespace lathe::workbench
