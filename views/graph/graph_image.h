#pragma once
// A laid-out graph as a file: SVG (vectors, text stays text) or PNG (twice the screen's
// scale, at most 16384 pixels a side).

#include <QString>

class QGraphicsScene;

namespace lathe::views {

// Writes the whole of `scene` to `path`, its format from the suffix (.svg or .png). Returns
// an empty string, or why the file could not be written.
QString saveSceneImage(QGraphicsScene& scene, const QString& path, const QString& title = {});

} // namespace lathe::views
