#include "views/common/plot_style.h"

#include <qcustomplot.h>

namespace lathe::views {

QColor applyPlotPalette(QCustomPlot* plot, const QPalette& palette) {
  plot->setBackground(palette.brush(QPalette::Base));
  const QColor text = palette.color(QPalette::Text);
  QColor grid = text;
  grid.setAlphaF(0.15f);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
  }
  return grid;
}

} // namespace lathe::views
