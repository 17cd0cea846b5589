#pragma once
// The most recently opened models (or sessions), kept in QSettings and shown as a menu.

#include <QObject>
#include <QString>
#include <QStringList>

class QMenu;

namespace lathe::workbench {

class RecentFiles : public QObject {
  Q_OBJECT

public:
  static constexpr int kMaxFiles = 8;

  // Fills `menu` (owned by the caller) and keeps it current; the list is stored under
  // `settingsKey`.
  explicit RecentFiles(QMenu* menu, QObject* parent = nullptr,
                       QString settingsKey = QStringLiteral("recentFiles"));

  QStringList files() const;
  // Moves `path` to the top of the list.
  void add(const QString& path);
  void clear();

signals:
  void openRequested(const QString& path);

private:
  void store(const QStringList& files);
  void rebuildMenu();

  QMenu* menu_;
  QString key_;
};

} // namespace lathe::workbench
