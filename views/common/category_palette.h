#pragma once
// The fixed colour of each op category, shared by every view that shows ops (tree, graph,
// timeline, charts) so a category looks the same everywhere.

#include <QColor>
#include <QIcon>
#include <QString>

namespace lathe::views {

// `category` is NodeSummary::category ("convolution", "data movement", ...); unknown
// categories get the colour of "other".
QColor categoryColor(const QString& category);
// A small rounded swatch of categoryColor() with a transparent margin, so swatches on
// adjacent rows stay apart. Needs a QGuiApplication.
QIcon categoryIcon(const QString& category);

} // namespace lathe::views
