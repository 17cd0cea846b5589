#pragma once
// One look for every QCustomPlot in the workbench, following the widget's palette so that a
// dark theme does not get a white box.

#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace lathe::views {

// Background, axes, ticks, labels and a faint dotted grid from `palette`. Returns the grid
// colour (text at 15 % opacity) for callers that draw more in it.
QColor applyPlotPalette(QCustomPlot* plot, const QPalette& palette);

} // namespace lathe::views
